//! Small term utilities the simplifier's steps share: simultaneous substitution,
//! renaming every binder of a copied term (so inlining a definition twice never binds one
//! variable twice in one scope), free-variable tests, and builders for the few term
//! shapes the steps write (literals, coercions, products, conditions).
//!
//! Nothing here decides meaning: these are syntactic operations that keep every term
//! well typed. Recursion follows term nesting and grows the stack on demand.

use rustc_hash::{FxHashMap, FxHashSet};

use slic_algebra::num::Rational;
use slic_algebra::{Coercion, Node, Prim, Store, TermId, Type, VarId};

/// Stack headroom for recursion over term nesting (grown on demand).
const RED_ZONE: usize = 256 << 10;
const STACK_SEGMENT: usize = 4 << 20;

/// The variables bound anywhere in `node` itself (its binder and pattern variables).
fn node_binders(node: &Node, out: &mut Vec<VarId>) {
    if let Some(v) = node.binder() {
        out.push(v);
    }
    if let Node::Match(_, arms) = node {
        for (p, _) in arms {
            p.vars(out);
        }
    }
}

/// `t` with the variables of `map` replaced simultaneously by their values. The values'
/// free variables must not be bound inside `t` (binders are unique in the terms the
/// simplifier builds, which [`freshen`] maintains).
pub(crate) fn subst(store: &mut Store, t: TermId, map: &FxHashMap<VarId, TermId>) -> TermId {
    if map.is_empty() {
        return t;
    }
    let mut memo = FxHashMap::default();
    replace_in(store, t, map, &FxHashMap::default(), &mut memo)
}

/// `t` with one variable replaced.
pub(crate) fn subst1(store: &mut Store, t: TermId, var: VarId, value: TermId) -> TermId {
    let mut map = FxHashMap::default();
    map.insert(var, value);
    subst(store, t, &map)
}

/// The one walker behind [`subst`] and [`freshen`]: free occurrences of the variables of
/// `values` replaced by their values, and binders renamed by `binders` (whose targets are
/// also in `values`, as variable terms). Unchanged subterms keep their id.
fn replace_in(
    store: &mut Store,
    t: TermId,
    values: &FxHashMap<VarId, TermId>,
    binders: &FxHashMap<VarId, VarId>,
    memo: &mut FxHashMap<TermId, TermId>,
) -> TermId {
    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let node = store.node(t).clone();
        let r = match node {
            Node::Var(v) => values.get(&v).copied().unwrap_or(t),
            _ => {
                let ch = node.children();
                let new: Vec<TermId> = ch
                    .iter()
                    .map(|&c| replace_in(store, c, values, binders, memo))
                    .collect();
                let rn = |v: VarId| binders.get(&v).copied().unwrap_or(v);
                let rebuilt = node.with_children_renamed(&new, &rn);
                if rebuilt == node {
                    t
                } else {
                    let ty = store.ty(t).clone();
                    store.intern(rebuilt, ty)
                }
            }
        };
        memo.insert(t, r);
        r
    })
}

/// A copy of `t` in which every variable bound inside `t` is replaced by a new one (same
/// name hint and type): inlining the copy cannot bind a variable that is already bound
/// around it.
pub(crate) fn freshen(store: &mut Store, t: TermId) -> TermId {
    let mut bound = Vec::new();
    let mut seen = FxHashSet::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = store.node(x);
        node_binders(node, &mut bound);
        work.extend(node.children());
    }
    if bound.is_empty() {
        return t;
    }
    let mut renames: FxHashMap<VarId, VarId> = FxHashMap::default();
    for v in bound {
        if let std::collections::hash_map::Entry::Vacant(e) = renames.entry(v) {
            let info = store.var(v).clone();
            e.insert(store.fresh_var(&info.name, info.ty));
        }
    }
    let values: FxHashMap<VarId, TermId> = renames
        .iter()
        .map(|(&v, &w)| (v, store.var_term(w)))
        .collect();
    let mut memo = FxHashMap::default();
    replace_in(store, t, &values, &renames, &mut memo)
}

/// Does `t` bind any variable (so that copying it needs [`freshen`])?
pub(crate) fn has_binders(store: &Store, t: TermId) -> bool {
    let mut seen = FxHashSet::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = store.node(x);
        if node.binder().is_some() || matches!(node, Node::Match(..)) {
            return true;
        }
        work.extend(node.children());
    }
    false
}

/// The variables occurring in `t` (free or bound; binders are unique, so for variables
/// bound outside `t` this is "occurs free").
pub(crate) fn vars_of(store: &Store, t: TermId) -> FxHashSet<VarId> {
    let mut out = FxHashSet::default();
    let mut seen = FxHashSet::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = store.node(x);
        if let Node::Var(v) = node {
            out.insert(*v);
        }
        work.extend(node.children());
    }
    out
}

/// Does `t` contain the subterm `sub`?
pub(crate) fn contains(store: &Store, t: TermId, sub: TermId) -> bool {
    let mut seen = FxHashSet::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        if x == sub {
            return true;
        }
        if seen.insert(x) {
            work.extend(store.node(x).children());
        }
    }
    false
}

/// Does `t` mention `v`?
pub(crate) fn mentions(store: &Store, t: TermId, v: VarId) -> bool {
    slic_algebra::assume::mentions(store, t, v)
}

/// Does `t` mention any of `vs`?
pub(crate) fn mentions_any(store: &Store, t: TermId, vs: &[VarId]) -> bool {
    if vs.is_empty() {
        return false;
    }
    let found = vars_of(store, t);
    vs.iter().any(|v| found.contains(v))
}

/// An integer literal of numeric type `ty`.
pub(crate) fn int(store: &mut Store, n: i64, ty: &Type) -> TermId {
    store.int_lit(n, ty.clone())
}

/// A rational literal of numeric type `ty`.
pub(crate) fn lit(store: &mut Store, r: &Rational, ty: &Type) -> TermId {
    store.intern(Node::Lit(r.clone()), ty.clone())
}

/// The literal value of `t`, if it is one.
pub(crate) fn lit_value(store: &Store, t: TermId) -> Option<Rational> {
    match store.node(t) {
        Node::Lit(r) => Some(r.clone()),
        _ => None,
    }
}

/// `t` converted to numeric type `to`: a safe coercion upward, an unsafe one (`real2prob`,
/// `int2nat`) downward; literals are retyped when their value fits.
pub(crate) fn coerce(store: &mut Store, t: TermId, to: &Type) -> TermId {
    let from = store.ty(t).clone();
    if from == *to {
        return t;
    }
    if let Node::Lit(r) = store.node(t) {
        let fits = match to {
            Type::Nat => r.is_integer() && !r.is_negative(),
            Type::Int => r.is_integer(),
            Type::Prob => !r.is_negative(),
            _ => true,
        };
        if fits {
            let r = r.clone();
            return store.intern(Node::Lit(r), to.clone());
        }
    }
    // undo a coercion that went the other way (`real2prob(prob2real(p))` is `p`)
    if let Node::Coerce(c, inner) = store.node(t) {
        if c.from_type() == *to && c.is_safe() {
            return *inner;
        }
    }
    if let Some(c) = Coercion::safe(&from, to) {
        return store.intern(Node::Coerce(c, t), to.clone());
    }
    let step =
        |store: &mut Store, c: Coercion, t: TermId| store.intern(Node::Coerce(c, t), c.to_type());
    match (&from, to) {
        (Type::Real, Type::Prob) => step(store, Coercion::Real2Prob, t),
        (Type::Int, Type::Nat) => step(store, Coercion::Int2Nat, t),
        (Type::Prob, Type::Int) | (Type::Prob, Type::Nat) | (Type::Real, Type::Nat) => {
            let r = coerce(store, t, &Type::Real);
            let i = step(store, Coercion::Real2Int, r);
            coerce(store, i, to)
        }
        (Type::Real, Type::Int) => step(store, Coercion::Real2Int, t),
        (Type::Int, Type::Prob) => {
            let r = coerce(store, t, &Type::Real);
            step(store, Coercion::Real2Prob, r)
        }
        _ => t,
    }
}

/// The product of prob terms (`1` when empty).
pub(crate) fn product(store: &mut Store, mut fs: Vec<TermId>) -> TermId {
    match fs.len() {
        0 => int(store, 1, &Type::Prob),
        1 => fs.remove(0),
        _ => store.prim(Prim::Mul, fs, Type::Prob),
    }
}

/// `a OP b` for numeric terms of one type and a comparison `OP`.
pub(crate) fn compare(store: &mut Store, op: Prim, a: TermId, b: TermId) -> TermId {
    let ta = store.ty(a).clone();
    let tb = store.ty(b).clone();
    let ty = ta.numeric_join(&tb).unwrap_or(Type::Real);
    let a = coerce(store, a, &ty);
    let b = coerce(store, b, &ty);
    store.prim(op, vec![a, b], Type::Bool)
}

/// `if c: 1 else: 0` as a prob term (an indicator factor).
pub(crate) fn indicator(store: &mut Store, c: TermId) -> TermId {
    let one = int(store, 1, &Type::Prob);
    let zero = int(store, 0, &Type::Prob);
    store.intern(Node::If(c, one, zero), Type::Prob)
}

/// `not c`.
pub(crate) fn not(store: &mut Store, c: TermId) -> TermId {
    store.prim(Prim::Not, vec![c], Type::Bool)
}

/// The element type of a measure type (`T` of `measure(T)`), or unit for anything else.
pub(crate) fn measure_elem(store: &Store, m: TermId) -> Type {
    store.ty(m).measure_of().cloned().unwrap_or(Type::Unit)
}
