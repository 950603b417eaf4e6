//! A-normal form, loop-invariant code motion and common subexpressions (issue 11,
//! deliverable 2), on core terms, so every stage stays a `.hk` program the reference
//! interpreter can check and `slic-cas lower --dump anf` can print.
//!
//! **A-normal form.** Every computation of a value (a loop: `summate`, `product`,
//! `array`, `bucket`; an arithmetic primitive, an index, a value `if` or `match`) is
//! let-bound to a fresh name, so its operands are names and literals.
//!
//! **Floating (LICM).** Each binding then floats outward, as far as its free variables
//! allow: past strict positions (operands, which are evaluated anyway), and out of a loop
//! body when it does not mention the loop's index or anything bound inside: a histogram
//! or a per-class table is computed once per update, not once per class. A binding that
//! leaves a place that is not always evaluated is guarded so that it is evaluated exactly
//! when the original would have been, or is total:
//! - out of a branch of `if c` (or the right operand of `&&`, `||`): `h = if c: e else: 0`
//!   (the zero of `e`'s type), and only inside loops, where it pays; elsewhere a branch
//!   keeps its bindings. Where `c` reads the loop's index, only what cannot fail leaves,
//!   unguarded, and only to leave the loop as well: a cheap term, or a loop whose only
//!   reads are of its own index below its array's size (`Σ_k topic_prior[k]` under `if
//!   l /= doc[u]` in a loop over documents: once per update, not once per document);
//! - out of a loop body that may run zero times: unguarded when `e` cannot fail
//!   (`split::total`) or the range is known not empty (an enclosing `if 1 <= n`, an
//!   enclosing loop over the same range), else `h = if lo < hi: e else: 0`;
//! - an array (a histogram, a table) is never chosen between, since the loop IR gives each
//!   array one allocation: a `bucket` or `array` is guarded by emptying its range
//!   (`bucket j from lo to (if c: hi else: lo)`), so it is still one allocation and
//!   computes nothing where the original would not have; another term holding an array
//!   leaves only where it needs no guard;
//! - out of the continuation of a draw (`x <~ m; k`): only when `e` cannot fail.
//!
//! Nothing leaves a `fn`, a `match` with several branches, `<|>`, a `bucket`'s reducers or
//! an integral.
//!
//! **Common subexpressions.** Then, top down, a binding whose right-hand side equals (up
//! to the names of bound variables) one already in scope is replaced by that one's name,
//! and a binding of a name to a name is inlined. A bucket guarded by emptying its range
//! (`bucket j from lo to (if c: hi else: lo)`) is read only where `c` holds, where it
//! equals the bucket over `lo..hi`: that one, in scope, serves it.
//!
//! With LICM off (`slic-cas lower --no-licm`), nothing floats out of a binder or a
//! branch; A-normal form and sharing are still done.

use crate::split::total;
use rustc_hash::FxHashMap;
use slic_algebra::vars::{self, FreeVars};
use slic_algebra::{alpha, stack, Node, Pattern, Prim, Store, TermId, Type, VarId};

/// What [`normalize`] did.
#[derive(Clone, Debug)]
pub struct Normalized {
    /// The term in A-normal form (same type and meaning).
    pub term: TermId,
    /// Bindings made.
    pub bindings: usize,
    /// Bindings that floated out of at least one loop or binder.
    pub hoisted: usize,
    /// Bindings replaced by an equal one in scope.
    pub shared: usize,
}

/// A-normal form of `t` (a program: `fn`s around a body), with loop-invariant bindings
/// hoisted when `licm`, and common subexpressions shared.
pub fn normalize(store: &mut Store, t: TermId, licm: bool) -> Normalized {
    let mut params = Vec::new();
    let mut body = t;
    while let Node::Lam(x, b) = *store.node(body) {
        params.push((x, body));
        body = b;
    }
    let mut n = Anf {
        store,
        fv: FreeVars::new(),
        licm,
        defs: FxHashMap::default(),
        facts: Vec::new(),
        indices: Vec::new(),
        variant_memo: FxHashMap::default(),
        bindings: 0,
        hoisted: 0,
    };
    let (b, binds) = n.float(body, None);
    let b = n.wrap(b, &binds);
    let mut c = Cse {
        avail: Vec::new(),
        rename: FxHashMap::default(),
        shared: 0,
    };
    let b = c.go(n.store, b);
    let mut out = b;
    for &(x, lam) in params.iter().rev() {
        let ty = n.store.ty(lam).clone();
        out = n.store.intern(Node::Lam(x, out), ty);
    }
    Normalized {
        term: out,
        bindings: n.bindings,
        hoisted: n.hoisted,
        shared: c.shared,
    }
}

/// A binding `var = rhs`, and whether it has left a binder (for the count).
#[derive(Clone, Copy)]
struct Binding {
    var: VarId,
    rhs: TermId,
    moved: bool,
}

/// How a child of a node is evaluated, for what may float out of it.
enum Ctx {
    /// Always, whenever the node is: bindings float out as they are.
    Strict,
    /// Only when the guard holds (a branch, a short-circuit operand).
    Cond(TermId),
    /// Once per value of the binder(s) (a loop body, a draw's continuation): bindings that
    /// mention them stay; others leave guarded by `range` when they can fail, or stay
    /// (no `range`: a draw's continuation).
    Scoped(Vec<VarId>, Option<TermId>),
    /// Nothing leaves but what the other branch computes too (the alternatives of `<|>`).
    Branch,
    /// Nothing leaves.
    Opaque,
    /// Kept as it is, not even named inside (a `bucket`'s reducers, which are not values).
    Untouched,
}

struct Anf<'s> {
    store: &'s mut Store,
    fv: FreeVars,
    licm: bool,
    /// Every binding made so far, by name (names are never reused).
    defs: FxHashMap<VarId, TermId>,
    /// The guards and loop ranges in force where the walk is (innermost last).
    facts: Vec<TermId>,
    /// The loop indices in scope with their bounds `lo <= i < hi` (innermost last).
    indices: Vec<(VarId, TermId, TermId)>,
    /// Whether a binding depends on the loop whose index is the key's second part.
    variant_memo: FxHashMap<(VarId, Option<VarId>), bool>,
    bindings: usize,
    hoisted: usize,
}

/// Types a binding may have: what the loop IR holds at run time (pairs of them are taken
/// apart when lowered).
fn is_value_type(t: &Type) -> bool {
    match t {
        Type::Nat | Type::Int | Type::Real | Type::Prob | Type::Bool | Type::Unit => true,
        Type::Array(e) => is_value_type(e),
        Type::Pair(a, b) => is_value_type(a) && is_value_type(b),
        _ => false,
    }
}

impl Anf<'_> {
    /// `t` with its computations named: the term that remains (an atom when `t` is a
    /// value) and the bindings it needs, in order, each free of the binders between here
    /// and where it was made.
    /// `scope`: inside a loop, the variables bound from the innermost loop's index down
    /// to here (what a binding must not read to leave a branch); `None` outside loops.
    fn float(&mut self, t: TermId, scope: Option<&[VarId]>) -> (TermId, Vec<Binding>) {
        stack::grow(|| self.float_inner(t, scope))
    }

    fn float_inner(&mut self, t: TermId, scope: Option<&[VarId]>) -> (TermId, Vec<Binding>) {
        let node = self.store.node(t).clone();
        let ty = self.store.ty(t).clone();
        // a user's `let` of a value is a binding like any other
        if let Node::Let(x, e, body) = node {
            if is_value_type(self.store.var_type(x)) {
                let (e1, mut binds) = self.float(e, scope);
                self.defs.insert(x, e1);
                binds.push(Binding {
                    var: x,
                    rhs: e1,
                    moved: false,
                });
                let (b1, more) = self.float(body, scope);
                binds.extend(more);
                return (b1, binds);
            }
        }
        // a test the enclosing tests and loop ranges decide (a histogram's range guard
        // inside `if 1 <= K`) is its branch
        if let Node::If(c, a, _) = node {
            if self.implied(c) {
                return self.float(a, scope);
            }
        }
        let children = node.children();
        if children.is_empty() {
            return (t, Vec::new());
        }
        let loop_body = matches!(
            node,
            Node::Summate(..) | Node::Product(..) | Node::Array(..) | Node::Plate(..)
        );
        let mut binds = Vec::new();
        let mut new = Vec::with_capacity(children.len());
        let mut then_branch: Option<(TermId, Vec<Binding>)> = None;
        for (i, &c) in children.iter().enumerate() {
            // the guards read the children already done (atoms, in A-normal form)
            let ctx = self.context(&node, i, &new);
            match &ctx {
                Ctx::Untouched => {
                    new.push(c);
                    continue;
                }
                Ctx::Opaque => {
                    let (c1, bs) = self.float(c, None);
                    new.push(self.wrap(c1, &bs));
                    continue;
                }
                _ => {}
            }
            // the scope the child is in: a loop body starts one, other binders extend it
            let inner: Option<Vec<VarId>> = match &ctx {
                Ctx::Scoped(vs, _) if loop_body => Some(vs.clone()),
                Ctx::Scoped(vs, _) => scope.map(|s| s.iter().chain(vs).copied().collect()),
                _ => scope.map(<[VarId]>::to_vec),
            };
            // what holds while the child is evaluated: its guard, its loop's range
            let fact = match &ctx {
                Ctx::Cond(g) | Ctx::Scoped(_, Some(g)) => Some(*g),
                _ => None,
            };
            self.facts.extend(fact);
            let index = match (&node, i) {
                (Node::Summate(j, ..) | Node::Product(j, ..), 2) => Some((*j, new[0], new[1])),
                (Node::Array(x, ..) | Node::Plate(x, ..), 1) => {
                    Some((*x, self.store.int_lit(0, Type::Nat), new[0]))
                }
                _ => None,
            };
            self.indices.extend(index);
            let (c1, bs) = self.float(c, inner.as_deref());
            if fact.is_some() {
                self.facts.pop();
            }
            if index.is_some() {
                self.indices.pop();
            }
            let (stay, leave) = self.partition(bs, &ctx, scope);
            binds.extend(leave);
            let two_way = matches!(node, Node::If(..)) || matches!(&ctx, Ctx::Branch);
            let (first, second) = if matches!(node, Node::If(..)) {
                (1, 2)
            } else {
                (0, 1)
            };
            if two_way && i == first {
                // the then branch waits for the else branch: what both compute goes up
                then_branch = Some((c1, stay));
                new.push(c1);
                continue;
            }
            if let (true, Some((c_then, stay_then))) = (two_way && i == second, then_branch.take())
            {
                let (common, kept_then, c_else, kept_else) =
                    self.common_bindings(stay_then, c1, stay);
                new[first] = self.wrap(c_then, &kept_then);
                new.push(self.wrap(c_else, &kept_else));
                binds.extend(common);
                continue;
            }
            new.push(self.wrap(c1, &stay));
        }
        let t1 = if new == children {
            t
        } else {
            self.store.intern(node.with_children(&new), ty.clone())
        };
        if self.nameable(t1) {
            let hint = match self.store.node(t1) {
                Node::Summate(..) => "sum",
                Node::Product(..) => "prod",
                Node::Array(..) => "arr",
                Node::Bucket(..) => "hist",
                _ => "v",
            };
            let v = self.store.fresh_var(hint, ty);
            self.bindings += 1;
            self.defs.insert(v, t1);
            binds.push(Binding {
                var: v,
                rhs: t1,
                moved: false,
            });
            return (self.store.var_term(v), binds);
        }
        (t1, binds)
    }

    /// Is `t` a computation to name (a value that is not a name or literal)?
    fn nameable(&self, t: TermId) -> bool {
        if !is_value_type(self.store.ty(t)) {
            return false;
        }
        match self.store.node(t) {
            Node::Var(_) | Node::Lit(_) | Node::Bool(_) | Node::Unit => false,
            Node::Prim(_, args) => !args.is_empty(),
            Node::Coerce(_, e) => !self.is_atom(*e),
            Node::Pair(..) => false,
            _ => true,
        }
    }

    fn is_atom(&self, t: TermId) -> bool {
        matches!(
            self.store.node(t),
            Node::Var(_) | Node::Lit(_) | Node::Bool(_) | Node::Unit
        )
    }

    /// The context of child `i` of `node`, given the children before it as rewritten.
    fn context(&mut self, node: &Node, i: usize, done: &[TermId]) -> Ctx {
        use Node::*;
        match node {
            If(..) => match i {
                0 => Ctx::Strict,
                1 => Ctx::Cond(done[0]),
                _ => Ctx::Cond(self.store.prim(self::Prim::Not, vec![done[0]], Type::Bool)),
            },
            Prim(p @ (self::Prim::And | self::Prim::Or), _) if i > 0 => {
                let before = if i == 1 {
                    done[0]
                } else {
                    self.store.prim(*p, done[..i].to_vec(), Type::Bool)
                };
                if *p == self::Prim::And {
                    Ctx::Cond(before)
                } else {
                    Ctx::Cond(self.store.prim(self::Prim::Not, vec![before], Type::Bool))
                }
            }
            Summate(j, ..) | Product(j, ..) if i == 2 => {
                let range = self
                    .store
                    .prim(self::Prim::Lt, vec![done[0], done[1]], Type::Bool);
                Ctx::Scoped(vec![*j], Some(range))
            }
            Array(x, ..) | Plate(x, ..) if i == 1 => {
                let zero = self.store.int_lit(0, Type::Nat);
                let range = self
                    .store
                    .prim(self::Prim::Lt, vec![zero, done[0]], Type::Bool);
                Ctx::Scoped(vec![*x], Some(range))
            }
            Bucket(..) if i == 2 => Ctx::Untouched,
            Bind(x, ..) | Let(x, ..) if i == 1 => Ctx::Scoped(vec![*x], None),
            Match(_, branches) if i > 0 => {
                if branches.len() == 1 && irrefutable(&branches[0].0) {
                    let mut vs = Vec::new();
                    branches[0].0.vars(&mut vs);
                    Ctx::Scoped(vs, None)
                } else {
                    Ctx::Opaque
                }
            }
            RAdd(_) | RIndex(..) | RSplit(..) | RFanout(..) => Ctx::Untouched,
            Superpose(ms) if ms.len() == 2 => Ctx::Branch,
            Lam(..) | Superpose(_) | Integrate(..) | Chain(..) | Transform(..) => Ctx::Opaque,
            _ => Ctx::Strict,
        }
    }

    /// The bindings of a child that stay in it, and those that leave (guarded as needed).
    fn partition(
        &mut self,
        bs: Vec<Binding>,
        ctx: &Ctx,
        scope: Option<&[VarId]>,
    ) -> (Vec<Binding>, Vec<Binding>) {
        let mut stay: Vec<Binding> = Vec::new();
        let mut leave = Vec::new();
        for b in bs {
            let free = self.fv.of(self.store, b.rhs);
            let needs_inner = stay.iter().any(|s| free.contains(&s.var));
            let out = match ctx {
                Ctx::Strict => Some(b),
                // a loop over `l` inside a loop it does not depend on: a table over `l`
                // computed once leaves, the body reads it
                Ctx::Scoped(vs, range)
                    if self.licm && (needs_inner || vs.iter().any(|v| free.contains(v))) =>
                {
                    if let Some((table, read)) = self.tabulate(b, &stay, vs, *range, scope) {
                        stay.push(read);
                        self.hoisted += 1;
                        leave.push(table);
                        continue;
                    }
                    None
                }
                _ if needs_inner || !self.licm => None,
                Ctx::Opaque | Ctx::Untouched | Ctx::Branch => None,
                // out of a branch only what will leave the loop it is in
                Ctx::Cond(g) => match scope {
                    // cheap and total: evaluated whatever the test says
                    Some(sc) if !self.variant(b.rhs, sc) && self.cheap_total(b.rhs) => Some(b),
                    // a test the loop does not change guards what leaves: it runs once,
                    // and only where the branch would have run (a sum over a range
                    // emptied where the test fails, not a pass over the whole range)
                    Some(sc) if !self.variant(b.rhs, sc) && !self.variant(*g, sc) => {
                        self.guarded(b, *g).inspect(|gb| {
                            self.defs.insert(gb.var, gb.rhs);
                        })
                    }
                    // a loop that cannot fail under a test the loop changes
                    // (`Σ_j topic_prior[j]` inside `if l /= d` in a loop over documents):
                    // it leaves the branch and then the loop, so it runs once where it ran
                    // once per iteration taking the branch
                    Some(sc) if !self.variant(b.rhs, sc) && self.total_reads(b.rhs) => Some(b),
                    _ => None,
                },
                Ctx::Scoped(vs, range) => {
                    if vs.iter().any(|v| free.contains(v)) {
                        None
                    } else if total(self.store, b.rhs) || range.is_some_and(|g| self.implied(g)) {
                        Some(Binding { moved: true, ..b })
                    } else {
                        range.and_then(|g| {
                            let gb = self.guarded(b, g)?;
                            self.defs.insert(gb.var, gb.rhs);
                            Some(Binding { moved: true, ..gb })
                        })
                    }
                }
            };
            match out {
                Some(b) => {
                    if b.moved && !matches!(ctx, Ctx::Strict | Ctx::Cond(_)) {
                        self.hoisted += 1;
                    }
                    leave.push(b);
                }
                None => stay.push(b),
            }
        }
        (stay, leave)
    }

    /// The bindings both branches of an `if` compute (equal right-hand sides, up to the
    /// names of the bindings they read that are common too): computed once before the
    /// `if`, since one branch or the other computes them anyway. Returns them, the then
    /// branch's others, and the else branch and its others with the common names read
    /// in place of its own.
    fn common_bindings(
        &mut self,
        stay_then: Vec<Binding>,
        c_else: TermId,
        stay_else: Vec<Binding>,
    ) -> (Vec<Binding>, Vec<Binding>, TermId, Vec<Binding>) {
        let mut matched = vec![false; stay_then.len()];
        let mut rename: FxHashMap<VarId, TermId> = FxHashMap::default();
        let mut kept_else = Vec::new();
        for b2 in stay_else {
            let rhs2 = vars::substitute(self.store, b2.rhs, &rename);
            let free2 = self.fv.of(self.store, rhs2);
            let needs_kept_else = kept_else.iter().any(|k: &Binding| free2.contains(&k.var));
            let mut found = None;
            if !needs_kept_else {
                for (k, b1) in stay_then.iter().enumerate() {
                    if matched[k] {
                        continue;
                    }
                    let same = b1.rhs == rhs2
                        || (vars::has_binders(self.store, rhs2)
                            && alpha::alpha_eq(self.store, b1.rhs, rhs2));
                    if !same {
                        continue;
                    }
                    // its reads in the then branch must be common too
                    let free1 = self.fv.of(self.store, b1.rhs);
                    let reads_unmatched = stay_then
                        .iter()
                        .zip(&matched)
                        .any(|(o, &m)| !m && free1.contains(&o.var));
                    if !reads_unmatched {
                        found = Some(k);
                        break;
                    }
                }
            }
            match found {
                Some(k) => {
                    matched[k] = true;
                    let to = self.store.var_term(stay_then[k].var);
                    rename.insert(b2.var, to);
                }
                None => kept_else.push(Binding { rhs: rhs2, ..b2 }),
            }
        }
        let c_else = vars::substitute(self.store, c_else, &rename);
        let mut common = Vec::new();
        let mut kept_then = Vec::new();
        for (b, m) in stay_then.into_iter().zip(matched) {
            if m {
                common.push(b);
            } else {
                kept_then.push(b);
            }
        }
        (common, kept_then, c_else, kept_else)
    }

    /// Can `t` never fail, and has it no loop (so evaluating it when it is not needed
    /// costs one operation)?
    fn cheap_total(&self, t: TermId) -> bool {
        total(self.store, t) && !vars::has_binders(self.store, t)
    }

    /// Can `t` never fail? As [`total`], and a read `a[j]` is allowed where `a` is a name
    /// and `j` the index of an enclosing `summate`, `product` or `array` of `t` whose range
    /// ends at `size(a)` (directly or through a name bound to it) and starts at a `nat`:
    /// then `0 <= j < size(a)`. Neither `j` nor `a` may be rebound in between.
    fn total_reads(&self, t: TermId) -> bool {
        let mut scope = Vec::new();
        self.total_in(t, &mut scope)
    }

    /// [`Self::total_reads`] under `scope`: the binders entered, innermost last, each a
    /// loop index with the array its range ends at the size of (`Some`), or another bound
    /// name (`None`).
    fn total_in(&self, t: TermId, scope: &mut Vec<(VarId, Option<VarId>)>) -> bool {
        let node = self.store.node(t);
        match node {
            Node::Index(a, i) => {
                let (Node::Var(a), Node::Var(i)) = (self.store.node(*a), self.store.node(*i))
                else {
                    return false;
                };
                // the innermost binding of `i` must be a loop over `0..size(a)` with `a`
                // not rebound inside it
                for &(v, arr) in scope.iter().rev() {
                    if v == *i {
                        return arr == Some(*a);
                    }
                    if v == *a {
                        return false;
                    }
                }
                false
            }
            Node::Bucket(..) | Node::RIndex(..) | Node::Match(..) => false,
            Node::Coerce(c, _) if !c.is_safe() => false,
            Node::Prim(Prim::Reduce, _) => false,
            _ => {
                let ch = node.children();
                let loop_of = |v: VarId, lo: Option<TermId>, hi: TermId| {
                    let from_nat = lo.is_none_or(|lo| self.store.ty(lo) == &Type::Nat);
                    match self.store.node(self.resolve(hi)) {
                        Node::Prim(Prim::Size, xs) if from_nat && xs.len() == 1 => {
                            match self.store.node(xs[0]) {
                                Node::Var(a) => (v, Some(*a)),
                                _ => (v, None),
                            }
                        }
                        _ => (v, None),
                    }
                };
                let body_scope = match *node {
                    Node::Summate(v, lo, hi, _) | Node::Product(v, lo, hi, _) => {
                        Some(loop_of(v, Some(lo), hi))
                    }
                    Node::Array(v, n, _) => Some(loop_of(v, None, n)),
                    _ => None,
                };
                ch.iter().enumerate().all(|(k, &c)| {
                    let mut bound = Vec::new();
                    vars::bound_in(node, k, &mut bound);
                    let depth = scope.len();
                    for v in bound {
                        match body_scope {
                            Some(entry) if entry.0 == v => scope.push(entry),
                            _ => scope.push((v, None)),
                        }
                    }
                    let ok = stack::grow(|| self.total_in(c, scope));
                    scope.truncate(depth);
                    ok
                })
            }
        }
    }

    /// The definition of `t` when it is a name bound to a computation without binders
    /// (so that two names of `size(as)` compare equal), else `t`.
    fn resolve(&self, t: TermId) -> TermId {
        match self.store.node(t) {
            Node::Var(v) => match self.defs.get(v) {
                Some(&d) if !vars::has_binders(self.store, d) => d,
                _ => t,
            },
            _ => t,
        }
    }

    /// Does a fact in force imply the range test `g` (`lo < hi`)? The same test, or
    /// `1 <= hi` for `0 < hi`, with operands compared through their definitions; or a
    /// bound of a loop index in scope (`i < hi`, `i + 1 <= hi`, `lo <= i`).
    fn implied(&self, g: TermId) -> bool {
        let rg = self.resolve(g);
        if self.facts.iter().any(|&f| f == g || self.resolve(f) == rg) {
            return true;
        }
        if self.index_bound(g) {
            return true;
        }
        let Node::Prim(Prim::Lt, args) = self.store.node(g) else {
            return false;
        };
        let (lo, hi) = (self.resolve(args[0]), self.resolve(args[1]));
        let lo_zero = matches!(self.store.node(lo), Node::Lit(v) if v.is_zero());
        self.facts.iter().any(|&f| {
            let f = self.resolve(f);
            match self.store.node(f) {
                Node::Prim(Prim::Lt, fa) => self.resolve(fa[0]) == lo && self.resolve(fa[1]) == hi,
                Node::Prim(Prim::Le, fa) => {
                    lo_zero
                        && matches!(self.store.node(fa[0]), Node::Lit(v) if v.is_one())
                        && self.resolve(fa[1]) == hi
                }
                _ => false,
            }
        })
    }

    /// Is `g` a bound of a loop index in scope: `i < hi`, `i + 1 <= hi` or `lo <= i` for
    /// `i` running over `lo..hi` (bounds compared through their definitions)?
    fn index_bound(&self, g: TermId) -> bool {
        let Node::Prim(p @ (Prim::Lt | Prim::Le), args) = self.store.node(g) else {
            return false;
        };
        let (a, b) = (self.resolve(args[0]), self.resolve(args[1]));
        let var_of = |t: TermId| match self.store.node(t) {
            Node::Var(v) => Some(*v),
            _ => None,
        };
        // `i + 1`, either way round
        let succ_of = |t: TermId| match self.store.node(t) {
            Node::Prim(Prim::Add, xs) if xs.len() == 2 => {
                let one = |x: TermId| matches!(self.store.node(x), Node::Lit(v) if v.is_one());
                if one(xs[1]) {
                    var_of(xs[0])
                } else if one(xs[0]) {
                    var_of(xs[1])
                } else {
                    None
                }
            }
            _ => None,
        };
        self.indices.iter().rev().any(|&(i, lo, hi)| {
            let below = |x: TermId| self.resolve(x) == self.resolve(hi);
            match p {
                Prim::Lt => var_of(a) == Some(i) && below(b),
                _ => {
                    (succ_of(a) == Some(i) && below(b))
                        || (var_of(b) == Some(i) && self.resolve(lo) == a)
                }
            }
        })
    }

    /// Does `t` depend on a variable of `scope`, directly or through the bindings it
    /// reads?
    fn variant(&mut self, t: TermId, scope: &[VarId]) -> bool {
        let free = self.fv.of(self.store, t);
        free.iter().any(|v| {
            scope.contains(v)
                || match self.defs.get(v).copied() {
                    Some(rhs) => {
                        let key = (*v, scope.first().copied());
                        if let Some(&r) = self.variant_memo.get(&key) {
                            return r;
                        }
                        // a binding's value is fixed once made: safe to memoise per loop
                        let r = self.variant(rhs, scope);
                        self.variant_memo.insert(key, r);
                        r
                    }
                    None => false,
                }
        })
    }

    /// A binding `x = e(l)` of the body of a loop over `l` in `0..n` (`range` its test
    /// `0 < n`) as a table computed outside it and a read: `tab = array l of n: e(l)`,
    /// `x = tab[l]`, when `e` holds a loop (a read is then cheaper than the
    /// computation) and does not depend on the enclosing loop (`scope`), which the table
    /// can then leave: a per-document product computed once per update, not once per
    /// proposal. The table computes `e` at every `l` of `0..n`, exactly what the loop
    /// did, so it needs no guard to leave the loop. The bindings of the body it reads
    /// (`stay`, such as `l * M`) are computed inside the table. Only scalars (the loop IR
    /// allocates arrays of scalars).
    fn tabulate(
        &mut self,
        b: Binding,
        stay: &[Binding],
        vs: &[VarId],
        range: Option<TermId>,
        scope: Option<&[VarId]>,
    ) -> Option<(Binding, Binding)> {
        let (&[l], Some(range), Some(outer)) = (vs, range, scope) else {
            return None;
        };
        let Node::Prim(Prim::Lt, ends) = self.store.node(range).clone() else {
            return None;
        };
        let (lo, n) = (self.resolve(ends[0]), ends[1]);
        let ty = self.store.ty(b.rhs).clone();
        let scalar = is_value_type(&ty) && !holds_array(&ty);
        let holds_loop = self.store.subterms(b.rhs).any(|x| {
            matches!(
                self.store.node(x),
                Node::Summate(..) | Node::Product(..) | Node::Array(..) | Node::Bucket(..)
            )
        });
        let starts_at_zero = matches!(self.store.node(lo), Node::Lit(v) if v.is_zero());
        if !scalar || !holds_loop || !starts_at_zero {
            return None;
        }
        // the body's bindings it reads, transitively, in their order
        let mut need: Vec<VarId> = self.fv.of(self.store, b.rhs).iter().copied().collect();
        let mut used = Vec::new();
        for s in stay.iter().rev() {
            if need.contains(&s.var) {
                used.push(*s);
                need.extend(self.fv.of(self.store, s.rhs).iter().copied());
            }
        }
        used.reverse();
        let body = self.wrap(b.rhs, &used);
        if self.variant(body, outer) {
            return None;
        }
        let l2 = self.store.fresh_var("l", Type::Nat);
        let l2_term = self.store.var_term(l2);
        let mut map = FxHashMap::default();
        map.insert(l, l2_term);
        let at_l2 = vars::substitute(self.store, body, &map);
        let arr_ty = Type::array(ty.clone());
        let arr = self.store.intern(Node::Array(l2, n, at_l2), arr_ty.clone());
        let tab = self.store.fresh_var("tab", arr_ty);
        self.defs.insert(tab, arr);
        let tab_term = self.store.var_term(tab);
        let l_term = self.store.var_term(l);
        let read = self.store.intern(Node::Index(tab_term, l_term), ty);
        self.defs.insert(b.var, read);
        self.bindings += 1;
        let table = Binding {
            var: tab,
            rhs: arr,
            moved: true,
        };
        Some((table, Binding { rhs: read, ..b }))
    }

    /// The binding evaluated only where `g` holds: `var = if g: rhs else: 0` (0 the zero
    /// of the type; a sum or product over a range emptied instead, its value where `g`
    /// fails being read by nobody). An array is not chosen between (the loop IR allocates one array per
    /// name): a `bucket` or `array` keeps its one allocation and its loop runs only where
    /// `g` holds (`bucket j from lo to (if g: hi else: lo)`, `array i of (if g: n else:
    /// 0)`), so nothing in it is evaluated otherwise; another term holding an array stays
    /// (`None`).
    fn guarded(&mut self, b: Binding, g: TermId) -> Option<Binding> {
        let ty = self.store.ty(b.rhs).clone();
        let rhs = match self.store.node(b.rhs).clone() {
            Node::Bucket(j, lo, hi, r) => {
                let hi_ty = self.store.ty(hi).clone();
                let hi = self.store.intern(Node::If(g, hi, lo), hi_ty);
                self.store.intern(Node::Bucket(j, lo, hi, r), ty)
            }
            Node::Array(i, n, e) => {
                let zero = self.store.int_lit(0, Type::Nat);
                let n = self.store.intern(Node::If(g, n, zero), Type::Nat);
                self.store.intern(Node::Array(i, n, e), ty)
            }
            // a sum or product over a range emptied where `g` fails is 0 or 1 there, read
            // by nobody; as a loop it can join a loop over the full range (fusion), where
            // `if g: loop else: 0` would stay a pass of its own
            Node::Summate(j, lo, hi, e) if crate::split::total(self.store, lo) => {
                let hi_ty = self.store.ty(hi).clone();
                let hi = self.store.intern(Node::If(g, hi, lo), hi_ty);
                self.store.intern(Node::Summate(j, lo, hi, e), ty)
            }
            Node::Product(j, lo, hi, e) if crate::split::total(self.store, lo) => {
                let hi_ty = self.store.ty(hi).clone();
                let hi = self.store.intern(Node::If(g, hi, lo), hi_ty);
                self.store.intern(Node::Product(j, lo, hi, e), ty)
            }
            _ if holds_array(&ty) => return None,
            _ => {
                let zero = zero_of(self.store, &ty);
                self.store.intern(Node::If(g, b.rhs, zero), ty)
            }
        };
        Some(Binding { rhs, ..b })
    }

    /// `let b1 = .. in let b2 = .. in t`.
    fn wrap(&mut self, t: TermId, bs: &[Binding]) -> TermId {
        let ty = self.store.ty(t).clone();
        let mut out = t;
        for b in bs.iter().rev() {
            out = self.store.intern(Node::Let(b.var, b.rhs, out), ty.clone());
        }
        out
    }
}

/// Does a value of type `t` hold an array (so that guarding it would choose between
/// arrays, which the loop IR does not express)?
fn holds_array(t: &Type) -> bool {
    match t {
        Type::Array(_) => true,
        Type::Pair(a, b) => holds_array(a) || holds_array(b),
        _ => false,
    }
}

/// Does `p` match every value of its type?
fn irrefutable(p: &Pattern) -> bool {
    match p {
        Pattern::Var(_) | Pattern::Wild => true,
        Pattern::Pair(a, b) => irrefutable(a) && irrefutable(b),
        _ => false,
    }
}

/// The zero of a value type: 0, false, unit, pairs of zeros, the empty array.
fn zero_of(store: &mut Store, ty: &Type) -> TermId {
    match ty {
        Type::Bool => store.intern(Node::Bool(false), Type::Bool),
        Type::Unit => store.intern(Node::Unit, Type::Unit),
        Type::Pair(a, b) => {
            let (za, zb) = (zero_of(store, a), zero_of(store, b));
            store.intern(Node::Pair(za, zb), ty.clone())
        }
        Type::Array(e) => {
            let i = store.fresh_var("i", Type::Nat);
            let n = store.int_lit(0, Type::Nat);
            let z = zero_of(store, e);
            store.intern(Node::Array(i, n, z), ty.clone())
        }
        _ => store.int_lit(0, ty.clone()),
    }
}

/// Common subexpressions, top down over the let chains: a binding equal to one in scope
/// is replaced by its name; a binding of a name to a name is inlined.
struct Cse {
    /// The bindings in scope: right-hand side and name.
    avail: Vec<(TermId, VarId)>,
    rename: FxHashMap<VarId, TermId>,
    shared: usize,
}

impl Cse {
    /// The name of a binding in scope equal to `e` (up to the names of bound variables).
    /// A histogram guarded by emptying its range (`bucket j from lo to h`, `h` being or
    /// naming `if c: hi else: lo`, as A-normal form and the histogram transform guard one)
    /// is read only where its guards hold, and there it equals the bucket over `lo..hi`:
    /// so a bucket in scope over `lo..hi` (its bounds compared through the names they are
    /// bound to) serves it.
    fn available(&self, store: &mut Store, e: TermId) -> Option<VarId> {
        let same = self.avail.iter().rev().find(|&&(r, _)| {
            r == e
                || (std::mem::discriminant(store.node(r)) == std::mem::discriminant(store.node(e))
                    && store.ty(r) == store.ty(e)
                    && vars::has_binders(store, e)
                    && alpha::alpha_eq(store, r, e))
        });
        if let Some(&(_, y)) = same {
            return Some(y);
        }
        let Node::Bucket(j, lo, hi, r) = *store.node(e) else {
            return None;
        };
        let lo = self.resolve(store, lo, 0);
        // the ranges this bucket equals where it is read: its own, then with each guard
        // peeled off
        let mut ranges = Vec::new();
        let mut h = self.resolve(store, hi, 0);
        loop {
            ranges.push(h);
            match *store.node(h) {
                Node::If(_, full, empty) if empty == lo => h = full,
                _ => break,
            }
        }
        let ty = store.ty(e).clone();
        let buckets: Vec<(TermId, VarId)> = self
            .avail
            .iter()
            .rev()
            .filter(|&&(r2, _)| matches!(store.node(r2), Node::Bucket(..)) && store.ty(r2) == &ty)
            .copied()
            .collect();
        for (b, y) in buckets {
            let Node::Bucket(j2, lo2, hi2, r2) = *store.node(b) else {
                continue;
            };
            if self.resolve(store, lo2, 0) != lo {
                continue;
            }
            let hi2 = self.resolve(store, hi2, 0);
            if !ranges.contains(&hi2) {
                continue;
            }
            let mine = store.intern(Node::Bucket(j, lo, hi2, r), ty.clone());
            let theirs = store.intern(Node::Bucket(j2, lo, hi2, r2), ty.clone());
            if alpha::alpha_eq(store, mine, theirs) {
                return Some(y);
            }
        }
        None
    }

    /// `t` (a range's bound) with the names in scope replaced by what they are bound to,
    /// and `x = e; x` read as `e`: so two bounds computed by different names compare
    /// equal. Only a few levels deep, and only through terms without binders.
    fn resolve(&self, store: &mut Store, t: TermId, depth: usize) -> TermId {
        if depth > 6 {
            return t;
        }
        let node = store.node(t).clone();
        match node {
            Node::Var(v) => match self.avail.iter().rev().find(|&&(_, x)| x == v) {
                Some(&(def, _)) => self.resolve(store, def, depth + 1),
                None => t,
            },
            Node::Let(x, e, b) if matches!(*store.node(b), Node::Var(y) if y == x) => {
                self.resolve(store, e, depth + 1)
            }
            _ => {
                let mut bound = Vec::new();
                vars::binders(&node, &mut bound);
                if !bound.is_empty() {
                    return t;
                }
                let ch = node.children();
                if ch.is_empty() {
                    return t;
                }
                let new: Vec<TermId> = ch
                    .iter()
                    .map(|&c| self.resolve(store, c, depth + 1))
                    .collect();
                if new == ch {
                    return t;
                }
                let ty = store.ty(t).clone();
                store.intern(node.with_children(&new), ty)
            }
        }
    }

    fn go(&mut self, store: &mut Store, t: TermId) -> TermId {
        stack::grow(|| self.go_inner(store, t))
    }

    fn go_inner(&mut self, store: &mut Store, t: TermId) -> TermId {
        let node = store.node(t).clone();
        match node {
            Node::Var(v) => return self.rename.get(&v).copied().unwrap_or(t),
            Node::Let(x, e, body) if is_value_type(store.var_type(x)) => {
                let e1 = self.go(store, e);
                if matches!(store.node(e1), Node::Var(_)) {
                    self.rename.insert(x, e1);
                    self.shared += 1;
                    return self.go(store, body);
                }
                if let Some(y) = self.available(store, e1) {
                    let y_term = store.var_term(y);
                    self.rename.insert(x, y_term);
                    self.shared += 1;
                    return self.go(store, body);
                }
                self.avail.push((e1, x));
                let b1 = self.go(store, body);
                self.avail.pop();
                let ty = store.ty(t).clone();
                return store.intern(Node::Let(x, e1, b1), ty);
            }
            _ => {}
        }
        let ch = node.children();
        if ch.is_empty() {
            return t;
        }
        let depth = self.avail.len();
        let new: Vec<TermId> = ch.iter().map(|&c| self.go(store, c)).collect();
        self.avail.truncate(depth);
        if new == ch {
            return t;
        }
        let ty = store.ty(t).clone();
        store.intern(node.with_children(&new), ty)
    }
}
