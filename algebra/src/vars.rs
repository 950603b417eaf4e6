//! Variables of terms, written once for every crate: which variables a term's nodes bind
//! and where, free variables (a memoised walk over the hash-consed DAG), `mentions`,
//! capture-avoiding simultaneous substitution, and freshening of bound variables.
//!
//! Scoping rule (see `Node` in `term`): a node that binds one variable binds it in its
//! last child only (`x <~ m; k` binds x in k, not in m; `summate i from lo to hi: e` binds
//! i in e, not in the bounds), and a `match` binds each pattern's variables in that arm's
//! body. Everything here reads the scopes from [`bound_in`], so no pass spells the rule
//! out again.
//!
//! Elaborated terms bind each variable once, but terms that passes build (inlining,
//! substitution, copies) may not, so nothing here assumes it: substitution renames a
//! binder that would capture a free variable of a substituted value, and an inner binder
//! of a substituted variable shadows it. Unchanged subterms keep their id. Recursion
//! follows term nesting inside [`stack::grow`].

use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::stack;
use crate::term::{Node, Store, TermId, VarId};

/// The index (in [`Node::children`] order) of the child that a single-variable binder
/// scopes over: always the last child.
fn scope_child(node: &Node) -> Option<usize> {
    use Node::*;
    match node {
        Lam(..) => Some(0),
        Let(..) | Array(..) | Bind(..) | Plate(..) => Some(1),
        Summate(..) | Product(..) | Integrate(..) | Bucket(..) | RIndex(..) | Chain(..) => Some(2),
        _ => None,
    }
}

/// The variables `node` binds in its child number `i` (in [`Node::children`] order),
/// appended to `out`.
pub fn bound_in(node: &Node, i: usize, out: &mut Vec<VarId>) {
    match node {
        Node::Match(_, arms) if i >= 1 => {
            if let Some((p, _)) = arms.get(i - 1) {
                p.vars(out);
            }
        }
        _ => {
            if scope_child(node) == Some(i) {
                out.extend(node.binder());
            }
        }
    }
}

/// Does `node` bind `v` in its child number `i`?
pub fn binds_in(node: &Node, i: usize, v: VarId) -> bool {
    match node {
        Node::Match(_, arms) if i >= 1 => arms.get(i - 1).is_some_and(|(p, _)| {
            let mut vs = Vec::new();
            p.vars(&mut vs);
            vs.contains(&v)
        }),
        _ => scope_child(node) == Some(i) && node.binder() == Some(v),
    }
}

/// Every variable `node` itself binds (its binder, or its match patterns' variables),
/// appended to `out`.
pub fn binders(node: &Node, out: &mut Vec<VarId>) {
    out.extend(node.binder());
    if let Node::Match(_, arms) = node {
        for (p, _) in arms {
            p.vars(out);
        }
    }
}

/// Does `t` bind any variable anywhere (so that copying it twice into one scope needs
/// [`freshen`])?
pub fn has_binders(store: &Store, t: TermId) -> bool {
    store.subterms(t).any(|x| {
        let node = store.node(x);
        node.binder().is_some() || matches!(node, Node::Match(..))
    })
}

/// Free variables of terms, memoised per term: each subterm of a DAG is visited once, and
/// a cache kept across queries answers for shared subterms at once. Sets are sorted by
/// id and shared between a node and its child when they are equal.
#[derive(Default)]
pub struct FreeVars {
    memo: FxHashMap<TermId, Rc<[VarId]>>,
}

impl FreeVars {
    pub fn new() -> FreeVars {
        FreeVars::default()
    }

    /// The free variables of `t`, sorted by id.
    pub fn of(&mut self, store: &Store, t: TermId) -> Rc<[VarId]> {
        if let Some(r) = self.memo.get(&t) {
            return r.clone();
        }
        let r = stack::grow(|| self.compute(store, t));
        self.memo.insert(t, r.clone());
        r
    }

    /// Is `v` free in `t`?
    pub fn contains(&mut self, store: &Store, t: TermId, v: VarId) -> bool {
        self.of(store, t).binary_search(&v).is_ok()
    }

    fn compute(&mut self, store: &Store, t: TermId) -> Rc<[VarId]> {
        let node = store.node(t);
        if let Node::Var(v) = node {
            return Rc::from([*v]);
        }
        let mut parts: Vec<Rc<[VarId]>> = Vec::new();
        let mut filtered = false;
        let mut bound = Vec::new();
        for (i, c) in node.children().into_iter().enumerate() {
            let f = self.of(store, c);
            if f.is_empty() {
                continue;
            }
            bound.clear();
            bound_in(node, i, &mut bound);
            if bound.iter().any(|b| f.binary_search(b).is_ok()) {
                filtered = true;
                let kept: Vec<VarId> = f.iter().filter(|v| !bound.contains(v)).copied().collect();
                parts.push(Rc::from(kept));
            } else {
                parts.push(f);
            }
        }
        match parts.len() {
            0 => Rc::from([]),
            1 if !filtered => parts.swap_remove(0),
            _ => {
                let mut all: Vec<VarId> = parts.iter().flat_map(|p| p.iter().copied()).collect();
                all.sort_unstable();
                all.dedup();
                Rc::from(all)
            }
        }
    }
}

/// The free variables of `t` (occurring outside every binder of them), sorted by id.
pub fn free_vars(store: &Store, t: TermId) -> Vec<VarId> {
    FreeVars::new().of(store, t).to_vec()
}

/// The free variables of `t` that are not standard-library variables (whose closed
/// definitions the store holds): what must be empty for a closed program.
pub fn open_vars(store: &Store, t: TermId) -> Vec<VarId> {
    let mut vs = free_vars(store, t);
    vs.retain(|v| store.library_def(*v).is_none());
    vs
}

/// Every variable occurring in `t`, free or bound (the names a program uses, for
/// callers that ask "is this one of the program's own variables?").
pub fn occurring(store: &Store, t: TermId) -> FxHashSet<VarId> {
    store
        .subterms(t)
        .filter_map(|x| match store.node(x) {
            Node::Var(v) => Some(*v),
            _ => None,
        })
        .collect()
}

/// Does `v` occur free in `t`?
pub fn mentions(store: &Store, t: TermId, v: VarId) -> bool {
    fn walk(store: &Store, t: TermId, v: VarId, memo: &mut FxHashMap<TermId, bool>) -> bool {
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let r = stack::grow(|| {
            let node = store.node(t);
            match node {
                Node::Var(u) => *u == v,
                _ => node
                    .children()
                    .into_iter()
                    .enumerate()
                    .any(|(i, c)| !binds_in(node, i, v) && walk(store, c, v, memo)),
            }
        });
        memo.insert(t, r);
        r
    }
    walk(store, t, v, &mut FxHashMap::default())
}

/// Does any of `vs` occur free in `t`?
pub fn mentions_any(store: &Store, t: TermId, vs: &[VarId]) -> bool {
    match vs {
        [] => false,
        [v] => mentions(store, t, *v),
        _ => FreeVars::new().of(store, t).iter().any(|v| vs.contains(v)),
    }
}

/// `t` with the free occurrences of the variables of `map` replaced simultaneously by
/// their values (each of its variable's type). A binder inside `t` that would capture a
/// free variable of a value is renamed to a fresh variable; a binder of a variable of
/// `map` shadows it.
pub fn substitute(store: &mut Store, t: TermId, map: &FxHashMap<VarId, TermId>) -> TermId {
    if map.is_empty() {
        return t;
    }
    let mut fv = FreeVars::new();
    let mut avoid = FxHashSet::default();
    for &value in map.values() {
        avoid.extend(fv.of(store, value).iter().copied());
    }
    let mut walker = Walker {
        map: map.clone(),
        renames: FxHashMap::default(),
        avoid,
        whole: false,
        fv,
        memo: FxHashMap::default(),
        scope: 0,
        scopes: 0,
    };
    walker.go(store, t)
}

/// `t` with the free occurrences of `var` replaced by `value` (see [`substitute`]).
pub fn substitute1(store: &mut Store, t: TermId, var: VarId, value: TermId) -> TermId {
    let mut map = FxHashMap::default();
    map.insert(var, value);
    substitute(store, t, &map)
}

/// `t` with the subterm `target` replaced by `with` wherever no enclosing binder inside
/// `t` captures a free variable of `target` (there it means something else): what
/// deciding one `if` of a term (a case split, a point of a loop) writes. Subterms that do
/// not mention a free variable of `target` are left without a look.
pub fn replace_free(store: &mut Store, t: TermId, target: TermId, with: TermId) -> TermId {
    let key = free_vars(store, target).first().copied();
    replace_in(store, t, target, with, key, &mut Vec::new())
}

fn replace_in(
    store: &mut Store,
    t: TermId,
    target: TermId,
    with: TermId,
    key: Option<VarId>,
    bound: &mut Vec<VarId>,
) -> TermId {
    if t == target && !bound.iter().any(|&v| mentions(store, t, v)) {
        return with;
    }
    if key.is_some_and(|v| !mentions(store, t, v)) {
        return t;
    }
    let node = store.node(t).clone();
    let ch = node.children();
    if ch.is_empty() {
        return t;
    }
    let mut binds = Vec::new();
    binders(&node, &mut binds);
    let before = bound.len();
    bound.extend(binds);
    let new: Vec<TermId> = ch
        .iter()
        .map(|&c| stack::grow(|| replace_in(store, c, target, with, key, bound)))
        .collect();
    bound.truncate(before);
    if new == ch {
        return t;
    }
    let ty = store.ty(t).clone();
    store.intern(node.with_children(&new), ty)
}

/// An alpha-equivalent copy of `t` in which every variable bound inside `t` is a new one
/// (same name hint and type), so that inlining the copy never binds a variable that is
/// already bound around it. A variable bound at several places in `t` gets one new
/// variable when it is not also free in `t`, and a new one per binder otherwise.
pub fn freshen(store: &mut Store, t: TermId) -> TermId {
    let mut bound = Vec::new();
    for x in store.subterms(t) {
        binders(store.node(x), &mut bound);
    }
    if bound.is_empty() {
        return t;
    }
    let mut fv = FreeVars::new();
    let free = fv.of(store, t);
    let mut renames = FxHashMap::default();
    let mut map = FxHashMap::default();
    let mut avoid = FxHashSet::default();
    for v in bound {
        if free.binary_search(&v).is_ok() {
            // bound here and free elsewhere in `t`: renamed binder by binder
            avoid.insert(v);
        } else if let std::collections::hash_map::Entry::Vacant(e) = renames.entry(v) {
            let info = store.var(v).clone();
            let w = store.fresh_var(&info.name, info.ty);
            e.insert(w);
            map.insert(v, store.var_term(w));
        }
    }
    let mut walker = Walker {
        map,
        renames,
        avoid,
        whole: true,
        fv,
        memo: FxHashMap::default(),
        scope: 0,
        scopes: 0,
    };
    walker.go(store, t)
}

/// The one walker behind [`substitute`] and [`freshen`].
struct Walker {
    /// The current substitution; it changes under binders that shadow or rename one of
    /// its variables, and is restored on the way out.
    map: FxHashMap<VarId, TermId>,
    /// Binders renamed everywhere in the term (their variables occur only under them, and
    /// `map` sends them to the new variables).
    renames: FxHashMap<VarId, VarId>,
    /// Binders renamed scope by scope: the free variables of the values (capture), and in
    /// [`freshen`] the bound variables that are also free.
    avoid: FxHashSet<VarId>,
    /// Visit every subterm (freshening renames binders even where `map` does not reach).
    whole: bool,
    fv: FreeVars,
    /// Results per term and state of `map` (the state changes only under binders).
    memo: FxHashMap<(TermId, u32), TermId>,
    scope: u32,
    scopes: u32,
}

impl Walker {
    fn go(&mut self, store: &mut Store, t: TermId) -> TermId {
        let key = (t, self.scope);
        if let Some(&r) = self.memo.get(&key) {
            return r;
        }
        let r = stack::grow(|| self.here(store, t));
        self.memo.insert(key, r);
        r
    }

    /// Does substitution change `t` (some free variable of it is in `map`), leaving out
    /// the variables `except`?
    fn touches(&mut self, store: &Store, t: TermId, except: &[VarId]) -> bool {
        let fv = self.fv.of(store, t);
        fv.iter()
            .any(|v| !except.contains(v) && self.map.contains_key(v))
    }

    fn here(&mut self, store: &mut Store, t: TermId) -> TermId {
        if !self.whole && !self.touches(store, t, &[]) {
            return t;
        }
        let node = store.node(t).clone();
        if let Node::Var(v) = node {
            return self.map.get(&v).copied().unwrap_or(t);
        }
        let ch = node.children();
        let mut bs = Vec::new();
        binders(&node, &mut bs);
        // per child, the variables bound in it
        let scopes: Vec<Vec<VarId>> = (0..ch.len())
            .map(|i| {
                let mut b = Vec::new();
                bound_in(&node, i, &mut b);
                b
            })
            .collect();
        // binders renamed at this node, one new variable each
        let mut renamed: Vec<(VarId, VarId)> = Vec::new();
        for &b in &bs {
            if renamed.iter().any(|&(old, _)| old == b) {
                continue;
            }
            if let Some(&w) = self.renames.get(&b) {
                renamed.push((b, w));
            } else if self.avoid.contains(&b) {
                // rename only if the substitution reaches into a scope of b
                let needed = self.whole
                    || ch.iter().zip(&scopes).any(|(&c, s)| {
                        s.contains(&b) && {
                            let except = s.clone();
                            self.touches(store, c, &except)
                        }
                    });
                if needed {
                    let info = store.var(b).clone();
                    renamed.push((b, store.fresh_var(&info.name, info.ty)));
                }
            }
        }
        let mut new = Vec::with_capacity(ch.len());
        for (&c, s) in ch.iter().zip(&scopes) {
            // changes to `map` inside this child: renamed binders send their variable to
            // the new one, other binders of a variable of `map` shadow it
            let mut changes: Vec<(VarId, Option<TermId>)> = Vec::new();
            for &b in s {
                if self.renames.contains_key(&b) {
                    continue;
                }
                if let Some(&(_, w)) = renamed.iter().find(|&&(old, _)| old == b) {
                    let wt = store.var_term(w);
                    changes.push((b, Some(wt)));
                } else if self.map.contains_key(&b) {
                    changes.push((b, None));
                }
            }
            if changes.is_empty() {
                new.push(self.go(store, c));
                continue;
            }
            let saved: Vec<(VarId, Option<TermId>)> = changes
                .iter()
                .map(|&(b, _)| (b, self.map.get(&b).copied()))
                .collect();
            for &(b, value) in &changes {
                match value {
                    Some(v) => self.map.insert(b, v),
                    None => self.map.remove(&b),
                };
            }
            let outer = self.scope;
            self.scopes += 1;
            self.scope = self.scopes;
            new.push(self.go(store, c));
            self.scope = outer;
            for (b, value) in saved {
                match value {
                    Some(v) => self.map.insert(b, v),
                    None => self.map.remove(&b),
                };
            }
        }
        let rn = |v: VarId| {
            renamed
                .iter()
                .find(|&&(old, _)| old == v)
                .map_or(v, |&(_, w)| w)
        };
        let rebuilt = node.with_children_renamed(&new, &rn);
        if rebuilt == node {
            t
        } else {
            let ty = store.ty(t).clone();
            store.intern(rebuilt, ty)
        }
    }
}

#[cfg(test)]
mod tests;
