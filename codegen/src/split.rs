//! The point split and loop unswitching (issue 11): the rewrites that run before the
//! histogram transform so that the histograms of a Gibbs update do not depend on the
//! label being proposed, and can be hoisted out of the loop over it.
//!
//! A simplified Gibbs update reads the labels as `if j == u: l else: z[j]` (point `u`
//! takes the proposed label `l`, every other point keeps its own). A per-class sum over
//! the points that reads it depends on `l`, so its histogram would be rebuilt once per
//! proposed label. The point split takes the one point out:
//!
//! `Σ_{j=lo}^{hi-1} f(j, if j == u: a else: b(j))`
//! `= (Σ_j if j /= u: f(j, b(j)) else: 0) + (if lo <= u && u < hi: f(u, a) else: 0)`
//!
//! (products alike, with 1 and `*`), where `u` and `a` do not mention `j`. The loop on the
//! left no longer mentions `a`; the point on the right costs one evaluation. Where the
//! test is not an equation of `j` with a point (`if doc[j] == u: a else: b(j)`), the loop
//! is split in two on the test, `Σ_j [not c] f(j, b(j)) + Σ_j [c] f(j, a)`, and the second
//! loop's conjuncts that do not mention `j` (such as `k == a`) are unswitched out of it:
//! `Σ_j (if A && B(j): t else: 0) = if A: Σ_j (if B(j): t else: 0) else: 0`.
//!
//! Meaning is kept exactly, partiality included: every summand the original evaluates is
//! evaluated (at `j = u` with `a`, elsewhere with `b(j)`) and nothing else. An unswitched
//! condition is evaluated once even when the loop is empty, so only conditions that
//! cannot fail ([`total`]: no array read, no unsafe coercion) are unswitched. Only
//! additions are reordered (the point's summand last).

use rustc_hash::{FxHashMap, FxHashSet};
use slic_algebra::vars::{self, FreeVars};
use slic_algebra::{stack, Coercion, Node, Prim, Store, TermId, Type, VarId};

/// What [`split_points`] did.
#[derive(Clone, Debug)]
pub struct Split {
    /// The rewritten term (same type and meaning).
    pub term: TermId,
    /// How many loops were split on a point or a test.
    pub splits: usize,
    /// How many conditions were unswitched out of a loop.
    pub unswitched: usize,
}

/// The point split and unswitching everywhere in `t`, innermost loops first.
pub fn split_points(store: &mut Store, t: TermId) -> Split {
    let mut params = FxHashSet::default();
    let mut body = t;
    while let Node::Lam(x, b) = *store.node(body) {
        params.insert(x);
        body = b;
    }
    let mut s = Splitter {
        store,
        fv: FreeVars::new(),
        memo: FxHashMap::default(),
        params,
        splits: 0,
        unswitched: 0,
    };
    let term = s.go(t);
    Split {
        term,
        splits: s.splits,
        unswitched: s.unswitched,
    }
}

/// How many splits one loop may take before the rest is left alone (each removes one
/// test from the loop's body, so this only bounds pathological inputs).
const MAX_SPLITS_PER_LOOP: usize = 16;

struct Splitter<'s> {
    store: &'s mut Store,
    fv: FreeVars,
    memo: FxHashMap<TermId, TermId>,
    /// The program's parameters (its top-level `fn`s): points that are given, not looped.
    params: FxHashSet<VarId>,
    splits: usize,
    unswitched: usize,
}

/// A loop `summate`/`product j from lo to hi: body`.
#[derive(Clone, Copy)]
struct Loop {
    product: bool,
    j: VarId,
    lo: TermId,
    hi: TermId,
    body: TermId,
}

impl Splitter<'_> {
    fn go(&mut self, t: TermId) -> TermId {
        if let Some(&r) = self.memo.get(&t) {
            return r;
        }
        let r = stack::grow(|| self.go_inner(t));
        self.memo.insert(t, r);
        r
    }

    fn go_inner(&mut self, t: TermId) -> TermId {
        let children = self.store.node(t).children();
        let new: Vec<TermId> = children.iter().map(|&c| self.go(c)).collect();
        let t1 = with_children(self.store, t, &new);
        self.loop_rewrite(t1, MAX_SPLITS_PER_LOOP)
    }

    fn as_loop(&self, t: TermId) -> Option<Loop> {
        match *self.store.node(t) {
            Node::Summate(j, lo, hi, body) => Some(Loop {
                product: false,
                j,
                lo,
                hi,
                body,
            }),
            Node::Product(j, lo, hi, body) => Some(Loop {
                product: true,
                j,
                lo,
                hi,
                body,
            }),
            _ => None,
        }
    }

    /// `t` split or unswitched if it is a loop with something to split, else `t`.
    fn loop_rewrite(&mut self, t: TermId, fuel: usize) -> TermId {
        let Some(lp) = self.as_loop(t) else {
            return t;
        };
        if fuel == 0 {
            return t;
        }
        if let Some(r) = self.unswitch(t, lp, fuel) {
            return r;
        }
        if let Some(r) = self.unswitch_choice(t, lp, fuel) {
            return r;
        }
        if let Some(r) = self.delta(t, lp) {
            return r;
        }
        if let Some(r) = self.power(t, lp, fuel) {
            return r;
        }
        // the first test whose split removes a variable from the loop where it fails
        let mut tests = Vec::new();
        self.tests_in(lp.body, lp.j, false, &mut Vec::new(), &mut tests);
        let body_free = self.fv.of(self.store, lp.body);
        let mut chosen = None;
        for test in tests {
            let body_else = self.decide(lp.body, lp.j, test, false, &mut FxHashMap::default());
            if self.fv.of(self.store, body_else).len() < body_free.len() {
                chosen = Some((test, body_else));
                break;
            }
        }
        let Some((test, body_else)) = chosen else {
            return t;
        };
        if let Some(r) = self.factor_out(t, lp, test, fuel) {
            return r;
        }
        self.splits += 1;
        let ty = self.store.ty(t).clone();
        let op = if lp.product { Prim::Mul } else { Prim::Add };
        let body_at = self.decide(lp.body, lp.j, test, true, &mut FxHashMap::default());
        let (e, u) = test;
        if !self.is_point(test, lp.j) {
            // Σ_j [e /= u] f(j, b(j)) + Σ_j [e == u] f(j, a)
            let ne = self.store.prim(Prim::Ne, vec![e, u], Type::Bool);
            let rest_body = self.guard(ne, body_else, lp.product);
            let rest = self.rebuild(lp, rest_body);
            let rest = self.loop_rewrite(rest, fuel - 1);
            let eq = self.store.prim(Prim::Eq, vec![e, u], Type::Bool);
            let sub_body = self.guard(eq, body_at, lp.product);
            let sub = self.rebuild(lp, sub_body);
            let sub = self.loop_rewrite(sub, fuel - 1);
            return self.store.prim(op, vec![rest, sub], ty);
        }
        // a point that can fail is evaluated only where it is defined; elsewhere the loop
        // is left as it was (the original fails there or never reads the point)
        let defined = if total(self.store, u) {
            None
        } else {
            match defined_cond(self.store, u) {
                Some(ok) => Some(ok),
                None => return t,
            }
        };
        // the point u itself: each such `if` decided on its other conjuncts, at j = u
        let at_u = vars::substitute1(self.store, body_at, lp.j, u);
        let at_u = tidy(self.store, at_u);
        let at_u = self.go(at_u);
        let in_range = self.in_range(lp, u);
        let point = self.guard(in_range, at_u, lp.product);
        let rest = match self.complement(lp, u, body_else, fuel) {
            Some(r) => r,
            None => {
                let j_term = self.store.var_term(lp.j);
                let ne = self.store.prim(Prim::Ne, vec![j_term, u], Type::Bool);
                let rest_body = self.guard(ne, body_else, lp.product);
                let rest = self.rebuild(lp, rest_body);
                self.loop_rewrite(rest, fuel - 1)
            }
        };
        let split = self.store.prim(op, vec![rest, point], ty.clone());
        match defined {
            Some(ok) => self.store.intern(Node::If(ok, split, t), ty),
            None => split,
        }
    }

    /// `t` with every `if c: a else: b` whose test has the conjunct `e == u` (`test`,
    /// after conjuncts that cannot fail) decided: as `b` (`holds` false), or as
    /// `if rest: a else: b` with `rest` the other conjuncts (`holds`). Not inside binders
    /// that capture a variable of `u`.
    fn decide(
        &mut self,
        t: TermId,
        j: VarId,
        test: (TermId, TermId),
        at_point: bool,
        memo: &mut FxHashMap<TermId, TermId>,
    ) -> TermId {
        if !self.fv.contains(self.store, t, j) {
            return t;
        }
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let node = self.store.node(t).clone();
        let mut binds = Vec::new();
        vars::binders(&node, &mut binds);
        let u_free = self.fv.of(self.store, test.1);
        if binds.iter().any(|v| *v == j || u_free.contains(v)) {
            memo.insert(t, t);
            return t;
        }
        let ch = node.children();
        let new: Vec<TermId> = ch
            .iter()
            .map(|&c| stack::grow(|| self.decide(c, j, test, at_point, memo)))
            .collect();
        let ty = self.store.ty(t).clone();
        let node = if new == ch {
            node
        } else {
            node.with_children(&new)
        };
        let r = match node {
            Node::If(c, a, b) if self.test_conjunct(c, j) == Some(test) => {
                if !at_point {
                    b
                } else {
                    let mut cs = Vec::new();
                    conjuncts_of(self.store, c, &mut cs);
                    let rest: Vec<TermId> = cs
                        .into_iter()
                        .filter(|&x| self.test_of(x, j) != Some(test))
                        .collect();
                    if rest.is_empty() {
                        a
                    } else {
                        let r = self.and(rest);
                        self.store.intern(Node::If(r, a, b), ty)
                    }
                }
            }
            node => self.store.intern(node, ty),
        };
        memo.insert(t, r);
        r
    }

    /// `lo <= u && u < hi` (the first conjunct left out where it is evident).
    fn in_range(&mut self, lp: Loop, u: TermId) -> TermId {
        let mut in_range = Vec::new();
        if !(is_zero(self.store, lp.lo) && self.store.ty(u) == &Type::Nat) {
            in_range.push(self.store.prim(Prim::Le, vec![lp.lo, u], Type::Bool));
        }
        in_range.push(self.store.prim(Prim::Lt, vec![u, lp.hi], Type::Bool));
        self.and(in_range)
    }

    /// The loop over every point but `u` as the loop over all points without the point,
    /// when that loop does not mention `u` (so it can be hoisted out of a loop over `u`)
    /// and `u` is not a parameter (a loop over all points but a given one keeps its
    /// split, which costs nothing):
    /// `Σ_{j /= u} f(j) = Σ_j f(j) - [lo <= u < hi] f(u)` for integer sums, and for real
    /// sums where `f(u)` is finite; `Π_{j /= u} f(j) = Π_j f(j) / f(u)` where `f(u)` is
    /// finite and not 0; the loop over the other points otherwise (decided at run time).
    fn complement(&mut self, lp: Loop, u: TermId, f: TermId, fuel: usize) -> Option<TermId> {
        let Node::Var(uv) = *self.store.node(u) else {
            return None;
        };
        if self.params.contains(&uv) || self.fv.contains(self.store, f, uv) {
            return None;
        }
        // `all` evaluates `f` at the point, which the original did not (it evaluated the
        // point's own body there): only where that cannot fail by its values
        if !values_cannot_fail(self.store, f, lp.j) {
            return None;
        }
        let ty = self.store.ty(f).clone();
        let all = self.rebuild(lp, f);
        let all = self.loop_rewrite(all, fuel - 1);
        let f_u = vars::substitute1(self.store, f, lp.j, u);
        let f_u = tidy(self.store, f_u);
        let f_u = self.go(f_u);
        let in_range = self.in_range(lp, u);
        if !lp.product {
            if !matches!(ty, Type::Real | Type::Int) {
                return None;
            }
            let point = self.guard(in_range, f_u, false);
            if ty == Type::Int {
                let minus = self.store.prim(Prim::Neg, vec![point], ty.clone());
                return Some(self.store.prim(Prim::Add, vec![all, minus], ty));
            }
            // a real point may be ±∞ (a log of 0) or undefined, and then so is the sum
            // of all: where it is finite the others' sum is all - q, elsewhere it is looped
            let all_v = self.store.fresh_var("all", ty.clone());
            let q_v = self.store.fresh_var("q", ty.clone());
            let all_t = self.store.var_term(all_v);
            let q_t = self.store.var_term(q_v);
            let finite = real_finite(self.store, q_t);
            let minus = self.store.prim(Prim::Neg, vec![q_t], ty.clone());
            let difference = self.store.prim(Prim::Add, vec![all_t, minus], ty.clone());
            let others = self.others(lp, u, f);
            let pick = self
                .store
                .intern(Node::If(finite, difference, others), ty.clone());
            let inner = self.store.intern(Node::Let(q_v, point, pick), ty.clone());
            return Some(self.store.intern(Node::Let(all_v, all, inner), ty));
        }
        if !matches!(ty, Type::Real | Type::Prob) {
            return None;
        }
        // all = Π_j f(j); q = [lo <= u < hi] f(u); where q is finite and not 0 the product
        // over the others is all / q, elsewhere (0, a pole such as Γ(0) = ∞, or undefined)
        // it is looped. `all` is bound outside the test, so that it is evaluated whatever q
        // is and can be hoisted out of a loop over u.
        let q = self.guard(in_range, f_u, true);
        let all_v = self.store.fresh_var("all", ty.clone());
        let q_v = self.store.fresh_var("q", ty.clone());
        let all_t = self.store.var_term(all_v);
        let q_t = self.store.var_term(q_v);
        let divisible = divisor_test(self.store, q_t);
        let others = self.others(lp, u, f);
        let inv = self.store.prim(Prim::Recip, vec![q_t], ty.clone());
        let quotient = self.store.prim(Prim::Mul, vec![all_t, inv], ty.clone());
        let pick = self
            .store
            .intern(Node::If(divisible, quotient, others), ty.clone());
        let inner = self.store.intern(Node::Let(q_v, q, pick), ty.clone());
        Some(self.store.intern(Node::Let(all_v, all, inner), ty))
    }

    /// The loop over every point but `u`: `f(j)` where `j /= u`, the unit elsewhere.
    fn others(&mut self, lp: Loop, u: TermId, f: TermId) -> TermId {
        let j_term = self.store.var_term(lp.j);
        let ne = self.store.prim(Prim::Ne, vec![j_term, u], Type::Bool);
        let body = self.guard(ne, f, lp.product);
        self.rebuild(lp, body)
    }

    /// A product of a choice between a factor free of `j` and 1 is a power of a count:
    /// `Π_j (if c: A else: 1) = A ^ (Σ_j if c: 1 else: 0)` (and `if c: 1 else: A` counts
    /// `not c`), where `A` cannot fail (it is evaluated once, even for an empty count).
    /// The count is a sum, which the histogram transform can read from a histogram.
    fn power(&mut self, t: TermId, lp: Loop, fuel: usize) -> Option<TermId> {
        if !lp.product {
            return None;
        }
        let Node::If(c, x, y) = self.store.node(lp.body).clone() else {
            return None;
        };
        let (a, when) = if self.is_unit(y, true) {
            (x, true)
        } else if self.is_unit(x, true) {
            (y, false)
        } else {
            return None;
        };
        if self.fv.contains(self.store, a, lp.j) || !total(self.store, a) || self.is_unit(a, true) {
            return None;
        }
        let one = self.store.int_lit(1, Type::Nat);
        let zero = self.store.int_lit(0, Type::Nat);
        let (hit, miss) = if when { (one, zero) } else { (zero, one) };
        let body = self.store.intern(Node::If(c, hit, miss), Type::Nat);
        let count = self
            .store
            .intern(Node::Summate(lp.j, lp.lo, lp.hi, body), Type::Nat);
        let count = self.loop_rewrite(count, fuel - 1);
        self.splits += 1;
        let ty = self.store.ty(t).clone();
        Some(self.store.prim(Prim::Pow, vec![a, count], ty))
    }

    /// A loop whose body is a single point, `Σ_j (if A && j == u && B: t else: 0)` with
    /// `A` total and `u` free of `j`, is `if lo <= u < hi && A' && B': t' else: 0` (primes:
    /// at `j = u`); products alike.
    fn delta(&mut self, t: TermId, lp: Loop) -> Option<TermId> {
        let Node::If(cond, then, other) = self.store.node(lp.body).clone() else {
            return None;
        };
        if !self.is_unit(other, lp.product) {
            return None;
        }
        let test = self.test_conjunct(cond, lp.j)?;
        if !self.is_point(test, lp.j) {
            return None;
        }
        let u = test.1;
        let defined = if total(self.store, u) {
            None
        } else {
            Some(defined_cond(self.store, u)?)
        };
        let at_u_cond = vars::substitute1(self.store, cond, lp.j, u);
        let at_u_cond = tidy(self.store, at_u_cond);
        let at_u = vars::substitute1(self.store, then, lp.j, u);
        let at_u = tidy(self.store, at_u);
        let in_range = self.in_range(lp, u);
        let c = self.and(vec![in_range, at_u_cond]);
        let ty = self.store.ty(t).clone();
        let r = self.store.intern(Node::If(c, at_u, other), ty.clone());
        self.splits += 1;
        let r = self.go(r);
        Some(match defined {
            Some(ok) => self.store.intern(Node::If(ok, r, t), ty),
            None => r,
        })
    }

    /// The first conjunct of `c` that is a test `e == u` of `j` ([`Self::test_of`]), when
    /// every conjunct before it cannot fail where it is evaluated, that is after the ones
    /// before it held ([`total_given`]: `i < size(a) && a[i] == 3`); the rewrite
    /// evaluates the test first and the others, in their order, only where it holds.
    fn test_conjunct(&mut self, c: TermId, j: VarId) -> Option<(TermId, TermId)> {
        let mut cs = Vec::new();
        conjuncts_of(self.store, c, &mut cs);
        for (n, &x) in cs.iter().enumerate() {
            if let Some(test) = self.test_of(x, j) {
                return Some(test);
            }
            if !total_given(self.store, x, &cs[..n]) {
                return None;
            }
        }
        None
    }

    /// A loop whose body chooses on a test free of `j` that cannot fail is a choice of
    /// loops: `Σ_j (if c: a(j) else: b(j)) = if c: Σ_j a(j) else: Σ_j b(j)` (products
    /// alike; `c` is evaluated once, even for an empty loop, so it must be total), so that
    /// each branch's loop can be split on its own (a point split guarded by where its
    /// point is defined leaves such a choice).
    fn unswitch_choice(&mut self, t: TermId, lp: Loop, fuel: usize) -> Option<TermId> {
        let Node::If(c, a, b) = self.store.node(lp.body).clone() else {
            return None;
        };
        if self.fv.contains(self.store, c, lp.j)
            || !total(self.store, c)
            || self.is_unit(a, lp.product)
            || self.is_unit(b, lp.product)
        {
            return None;
        }
        self.unswitched += 1;
        let (la, lb) = (self.rebuild(lp, a), self.rebuild(lp, b));
        let la = self.loop_rewrite(la, fuel - 1);
        let lb = self.loop_rewrite(lb, fuel - 1);
        let ty = self.store.ty(t).clone();
        Some(self.store.intern(Node::If(c, la, lb), ty))
    }

    /// A product of prob factors only some of which hold the point test: `Π_j (r(j) ·
    /// d(j)) = Π_j r(j) · Π_j d(j)`, so that only the factors that hold the test are
    /// split on the point (the others, free of it, leave a loop over the point whole,
    /// and are not divided and multiplied back at the point). Every factor is still
    /// evaluated at every `j`; prob products are sums of logarithms, so regrouping them
    /// cannot overflow where the original did not.
    fn factor_out(
        &mut self,
        t: TermId,
        lp: Loop,
        test: (TermId, TermId),
        fuel: usize,
    ) -> Option<TermId> {
        if !lp.product || self.store.ty(t) != &Type::Prob {
            return None;
        }
        let Node::Prim(Prim::Mul, fs) = self.store.node(lp.body).clone() else {
            return None;
        };
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for f in fs {
            let decided = self.decide(f, lp.j, test, false, &mut FxHashMap::default());
            if decided == f {
                without.push(f);
            } else {
                with.push(f);
            }
        }
        if with.is_empty() || without.is_empty() {
            return None;
        }
        let mut loops = Vec::new();
        for part in [without, with] {
            let body = if part.len() == 1 {
                part[0]
            } else {
                self.store.prim(Prim::Mul, part, Type::Prob)
            };
            let l = self.rebuild(lp, body);
            loops.push(self.loop_rewrite(l, fuel - 1));
        }
        self.splits += 1;
        Some(self.store.prim(Prim::Mul, loops, Type::Prob))
    }

    /// `Σ_j (if A && B(j): t else: 0)` with `A` the conjuncts free of `j` becomes
    /// `if A: Σ_j (if B(j): t else: 0) else: 0` (products with 1).
    fn unswitch(&mut self, t: TermId, lp: Loop, fuel: usize) -> Option<TermId> {
        let Node::If(cond, then, other) = self.store.node(lp.body).clone() else {
            return None;
        };
        if !self.is_unit(other, lp.product) {
            return None;
        }
        let mut cs = Vec::new();
        conjuncts_of(self.store, cond, &mut cs);
        let (outer, inner): (Vec<TermId>, Vec<TermId>) = cs
            .into_iter()
            .partition(|&c| !self.fv.contains(self.store, c, lp.j) && total(self.store, c));
        if outer.is_empty() {
            return None;
        }
        self.unswitched += 1;
        let body = if inner.is_empty() {
            then
        } else {
            let c = self.and(inner);
            self.guard(c, then, lp.product)
        };
        let inner_loop = self.rebuild(lp, body);
        let inner_loop = self.loop_rewrite(inner_loop, fuel - 1);
        let a = self.and(outer);
        let ty = self.store.ty(t).clone();
        let unit = self.unit(&ty, lp.product);
        Some(self.store.intern(Node::If(a, inner_loop, unit), ty))
    }

    /// The points `u` of the `if`s in `t` whose test has a conjunct `j == u` after
    /// conjuncts that cannot fail, in order, without repeats. Inner loops are searched
    /// too (their own tests were split first; what is left there tests `j`, as the
    /// proposed label's `l == j3` inside a product over words does), but not functions,
    /// and only tests none of whose variables is bound between the loop and the `if`.
    fn tests_in(
        &mut self,
        t: TermId,
        j: VarId,
        inner: bool,
        bound: &mut Vec<VarId>,
        out: &mut Vec<(TermId, TermId)>,
    ) {
        if !self.fv.contains(self.store, t, j) {
            return;
        }
        let node = self.store.node(t).clone();
        if let Node::If(c, a, b) = node {
            if let Some(test) = self.test_conjunct(c, j) {
                // the test must mean the same at every place it is decided: none of its
                // variables bound between the loop and the `if`. A split evaluates the
                // test at every point of the loop, where the original may have evaluated
                // it at fewer (after conjuncts that can be false, inside an inner loop
                // that can be empty): a point that can fail (`k == z[u]`) is not split
                // on, nor is a test inside an inner loop that can fail.
                let binds_test = bound.iter().any(|&v| {
                    self.fv.contains(self.store, test.0, v)
                        || self.fv.contains(self.store, test.1, v)
                });
                let can_fail = defined_cond(self.store, test.1).is_none()
                    || (inner && !total(self.store, test.0));
                if !binds_test && !can_fail {
                    // a test of another expression than `j` splits the loop in two: only
                    // where the `if` chooses between a value free of `j` (a proposed label)
                    // and another (`if doc[j] == u: l else: z[doc[j]]`)
                    let worth = self.is_point(test, j)
                        || (a != b
                            && !self.fv.contains(self.store, a, j)
                            && !self.fv.of(self.store, a).is_empty());
                    if worth && !out.contains(&test) {
                        out.push(test);
                    }
                }
            }
        }
        if matches!(node, Node::Lam(..)) {
            return;
        }
        let inner = inner
            || matches!(
                node,
                Node::Summate(..) | Node::Product(..) | Node::Bucket(..)
            );
        for (i, c) in node.children().into_iter().enumerate() {
            let depth = bound.len();
            vars::bound_in(&node, i, bound);
            stack::grow(|| self.tests_in(c, j, inner, bound, out));
            bound.truncate(depth);
        }
    }

    /// `(e, u)` if `c` is `e == u` or `u == e` with `e` mentioning `j` and `u` not (a
    /// point test when `e` is `j` itself).
    fn test_of(&mut self, c: TermId, j: VarId) -> Option<(TermId, TermId)> {
        let Node::Prim(Prim::Eq, args) = self.store.node(c).clone() else {
            return None;
        };
        let [x, y] = args.as_slice() else {
            return None;
        };
        let (x, y) = (*x, *y);
        let (xj, yj) = (
            self.fv.contains(self.store, x, j),
            self.fv.contains(self.store, y, j),
        );
        match (xj, yj) {
            (true, false) => Some((x, y)),
            (false, true) => Some((y, x)),
            _ => None,
        }
    }

    /// Is `(e, u)` the point test `j == u`?
    fn is_point(&self, test: (TermId, TermId), j: VarId) -> bool {
        matches!(self.store.node(test.0), Node::Var(v) if *v == j)
    }

    fn rebuild(&mut self, lp: Loop, body: TermId) -> TermId {
        let ty = self.store.ty(body).clone();
        let node = if lp.product {
            Node::Product(lp.j, lp.lo, lp.hi, body)
        } else {
            Node::Summate(lp.j, lp.lo, lp.hi, body)
        };
        self.store.intern(node, ty)
    }

    /// `if c: x else: unit`, merged with `x = if c2: y else: unit` into `if c && c2: y`.
    fn guard(&mut self, c: TermId, x: TermId, product: bool) -> TermId {
        let ty = self.store.ty(x).clone();
        if let Node::If(c2, y, other) = self.store.node(x).clone() {
            if self.is_unit(other, product) {
                let both = self.and(vec![c, c2]);
                return self.store.intern(Node::If(both, y, other), ty);
            }
        }
        let unit = self.unit(&ty, product);
        self.store.intern(Node::If(c, x, unit), ty)
    }

    /// The conjunction of `cs` (flattened; one conjunct is itself).
    fn and(&mut self, cs: Vec<TermId>) -> TermId {
        let mut flat = Vec::new();
        for c in cs {
            conjuncts_of(self.store, c, &mut flat);
        }
        if flat.len() == 1 {
            return flat[0];
        }
        self.store.prim(Prim::And, flat, Type::Bool)
    }

    /// 0 for sums, 1 for products, of type `ty`.
    fn unit(&mut self, ty: &Type, product: bool) -> TermId {
        self.store.int_lit(i64::from(product), ty.clone())
    }

    fn is_unit(&self, t: TermId, product: bool) -> bool {
        match self.store.node(t) {
            Node::Lit(v) => {
                if product {
                    v.is_one()
                } else {
                    v.is_zero()
                }
            }
            _ => false,
        }
    }
}

/// `t` with its children replaced by `new` (in the order of `Node::children`), `t` itself
/// when none changed: the rebuilding step of the bottom-up passes.
pub(crate) fn with_children(store: &mut Store, t: TermId, new: &[TermId]) -> TermId {
    let node = store.node(t);
    if node.children() == new {
        return t;
    }
    let node = node.with_children(new);
    let ty = store.ty(t).clone();
    store.intern(node, ty)
}

/// Is `t` the literal 0?
pub(crate) fn is_zero(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(v) if v.is_zero())
}

/// Is `t` the literal 1?
pub(crate) fn is_one(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(v) if v.is_one())
}

/// The conjuncts of `c` (`a && b && ...`, nested or n-ary), in order.
pub(crate) fn conjuncts_of(store: &Store, c: TermId, out: &mut Vec<TermId>) {
    match store.node(c) {
        Node::Prim(Prim::And, args) => {
            for &a in args {
                conjuncts_of(store, a, out);
            }
        }
        _ => out.push(c),
    }
}

/// Can evaluating `t` never fail? No array read, no bucket (it reads its index), no
/// unsafe coercion (`int2nat`, `real2prob`, `real2int` of a value out of range), no
/// `size` of a measure... only arithmetic, comparisons and safe coercions of variables
/// and literals, and loops of those. What hoisting a computation out of a loop that may
/// run zero times, or out of a branch that may not be taken, needs to know.
pub(crate) fn total(store: &Store, t: TermId) -> bool {
    store.subterms(t).all(|x| match store.node(x) {
        Node::Index(..) | Node::Bucket(..) | Node::RIndex(..) | Node::Match(..) => false,
        Node::Coerce(c, _) => c.is_safe(),
        Node::Prim(p, _) => !matches!(p, Prim::Reduce),
        _ => true,
    })
}

/// Can no operation of `t` that reads `j` fail by the value it is given? `gammaFunc`
/// (prob-valued: a negative value is an error) only of an argument evidently
/// non-negative, unsafe coercions only `real2prob` of such an argument, no `choose`.
/// Operations that do not read `j` are evaluated alike at every point; array reads are
/// not this test's concern (their indices are).
pub(crate) fn values_cannot_fail(store: &Store, t: TermId, j: VarId) -> bool {
    let nonneg = |a: TermId| slic_algebra::assume::evidently_nonnegative(store, a);
    store.subterms(t).all(|x| match store.node(x) {
        Node::Prim(Prim::GammaFunc, args) => args
            .iter()
            .all(|&a| !vars::mentions(store, a, j) || nonneg(a)),
        Node::Prim(Prim::Choose, args) => !args.iter().any(|&a| vars::mentions(store, a, j)),
        Node::Coerce(c, a) => {
            c.is_safe()
                || !vars::mentions(store, *a, j)
                || (*c == Coercion::Real2Prob && nonneg(*a))
        }
        _ => true,
    })
}

/// Can evaluating `t` never fail where every condition of `facts` holds? As [`total`],
/// and an array read `a[i]` is allowed where a fact bounds it: `i < size(a)` or
/// `i + 1 <= size(a)` (as the conditions of a simplified term guard a read of a given
/// point: `wordUpdate < size(w) && w[wordUpdate] + 1 <= size(word_prior)`). Inside a
/// binder of `t` the facts are not used (a bound name may shadow one of theirs).
pub(crate) fn total_given(store: &Store, t: TermId, facts: &[TermId]) -> bool {
    let node = store.node(t);
    let mut binds = Vec::new();
    vars::binders(node, &mut binds);
    if !binds.is_empty() {
        return total(store, t);
    }
    match node {
        Node::Index(a, i) => {
            in_bounds(store, *a, *i, facts)
                && total_given(store, *a, facts)
                && total_given(store, *i, facts)
        }
        Node::Bucket(..) | Node::RIndex(..) | Node::Match(..) => false,
        Node::Coerce(c, x) => c.is_safe() && total_given(store, *x, facts),
        Node::Prim(Prim::Reduce, _) => false,
        _ => node
            .children()
            .into_iter()
            .all(|c| stack::grow(|| total_given(store, c, facts))),
    }
}

/// Where is `u` defined? A condition that cannot fail and holds exactly where evaluating
/// `u` does not fail, when `u`'s only partiality is array reads (`doc[wordUpdate]`:
/// `wordUpdate < size(doc)`; a read's index is checked before the read) and `int2nat`
/// (`0 <= x`); `None` for anything else that can fail (other unsafe coercions, binders,
/// histograms). `true` for a total `u`.
pub(crate) fn defined_cond(store: &mut Store, u: TermId) -> Option<TermId> {
    let mut conds = Vec::new();
    defined_in(store, u, &mut conds)?;
    let mut flat = Vec::new();
    for c in conds {
        conjuncts_of(store, c, &mut flat);
    }
    Some(match flat.len() {
        0 => store.intern(Node::Bool(true), Type::Bool),
        1 => flat[0],
        _ => store.prim(Prim::And, flat, Type::Bool),
    })
}

fn defined_in(store: &mut Store, t: TermId, out: &mut Vec<TermId>) -> Option<()> {
    let node = store.node(t).clone();
    let mut binds = Vec::new();
    vars::binders(&node, &mut binds);
    if !binds.is_empty() {
        return total(store, t).then_some(());
    }
    match node {
        Node::Index(a, i) => {
            defined_in(store, a, out)?;
            defined_in(store, i, out)?;
            if store.ty(i) != &Type::Nat {
                return None;
            }
            let size = store.prim(Prim::Size, vec![a], Type::Nat);
            out.push(store.prim(Prim::Lt, vec![i, size], Type::Bool));
            Some(())
        }
        Node::Bucket(..) | Node::RIndex(..) | Node::Match(..) => None,
        Node::Coerce(Coercion::Int2Nat, x) => {
            defined_in(store, x, out)?;
            let zero = store.int_lit(0, Type::Int);
            out.push(store.prim(Prim::Le, vec![zero, x], Type::Bool));
            Some(())
        }
        Node::Coerce(c, x) => {
            if !c.is_safe() {
                return None;
            }
            defined_in(store, x, out)
        }
        Node::Prim(Prim::Reduce, _) => None,
        node => {
            for c in node.children() {
                stack::grow(|| defined_in(store, c, out))?;
            }
            Some(())
        }
    }
}

/// Does one of `facts` say `i < size(a)` (or `i + 1 <= size(a)`)?
fn in_bounds(store: &Store, a: TermId, i: TermId, facts: &[TermId]) -> bool {
    let is_size_of_a =
        |t: TermId| matches!(store.node(t), Node::Prim(Prim::Size, args) if args.as_slice() == [a]);
    let is_i_plus_one = |t: TermId| match store.node(t) {
        Node::Prim(Prim::Add, args) if args.len() == 2 => {
            let one = |x: TermId| matches!(store.node(x), Node::Lit(v) if v.is_one());
            (args[0] == i && one(args[1])) || (args[1] == i && one(args[0]))
        }
        _ => false,
    };
    facts.iter().any(|&f| match store.node(f) {
        Node::Prim(Prim::Lt, args) if args.len() == 2 => args[0] == i && is_size_of_a(args[1]),
        Node::Prim(Prim::Le, args) if args.len() == 2 => {
            is_i_plus_one(args[0]) && is_size_of_a(args[1])
        }
        _ => false,
    })
}

/// `t` with the tests a substitution `j := u` decided folded: `x == x` is true, `x /= x`
/// false, `if true: a else: b` is `a`, conjunctions drop `true` and are false with a
/// `false`. Only what is decided syntactically; everything else is kept as it is.
fn tidy(store: &mut Store, t: TermId) -> TermId {
    store.rebuild(t, &mut |store, _, node| {
        Some(match node {
            Node::Prim(Prim::Eq, args) if args.len() == 2 && args[0] == args[1] => {
                store.intern(Node::Bool(true), Type::Bool)
            }
            Node::Prim(Prim::Ne, args) if args.len() == 2 && args[0] == args[1] => {
                store.intern(Node::Bool(false), Type::Bool)
            }
            Node::Prim(Prim::And, args) => {
                if args
                    .iter()
                    .any(|&a| matches!(store.node(a), Node::Bool(false)))
                {
                    store.intern(Node::Bool(false), Type::Bool)
                } else {
                    let kept: Vec<TermId> = args
                        .iter()
                        .copied()
                        .filter(|&a| !matches!(store.node(a), Node::Bool(true)))
                        .collect();
                    match kept.len() {
                        0 => store.intern(Node::Bool(true), Type::Bool),
                        1 => kept[0],
                        _ if kept.len() == args.len() => return None,
                        _ => store.prim(Prim::And, kept, Type::Bool),
                    }
                }
            }
            Node::If(_, a, b) if a == b => *a,
            Node::If(c, a, b) => match store.node(*c) {
                Node::Bool(true) => *a,
                Node::Bool(false) => *b,
                _ => return None,
            },
            _ => return None,
        })
    })
}

/// `0 < |q| && |q| < ∞` for a prob or real `q`: where it holds, `all / q` is the product
/// over the others; it fails at 0, at ±∞ and where `q` is undefined (NaN compares
/// false). A real is compared as a real (no logarithm of its magnitude).
pub(crate) fn divisor_test(store: &mut Store, q: TermId) -> TermId {
    if *store.ty(q) == Type::Prob {
        let zero = store.int_lit(0, Type::Prob);
        let inf = store.prim(Prim::Infinity, vec![], Type::Prob);
        let pos = store.prim(Prim::Lt, vec![zero, q], Type::Bool);
        let finite = store.prim(Prim::Lt, vec![q, inf], Type::Bool);
        return store.prim(Prim::And, vec![pos, finite], Type::Bool);
    }
    let zero = store.int_lit(0, Type::Real);
    let neg = store.prim(Prim::Lt, vec![q, zero], Type::Bool);
    let pos = store.prim(Prim::Lt, vec![zero, q], Type::Bool);
    let nonzero = store.prim(Prim::Or, vec![neg, pos], Type::Bool);
    let finite = real_finite(store, q);
    store.prim(Prim::And, vec![nonzero, finite], Type::Bool)
}

/// `-∞ < q && q < ∞` for a real `q` (false where `q` is undefined).
pub(crate) fn real_finite(store: &mut Store, q: TermId) -> TermId {
    let inf_p = store.prim(Prim::Infinity, vec![], Type::Prob);
    let inf = store.intern(Node::Coerce(Coercion::Prob2Real, inf_p), Type::Real);
    let minus_inf = store.prim(Prim::Neg, vec![inf], Type::Real);
    let above = store.prim(Prim::Lt, vec![minus_inf, q], Type::Bool);
    let below = store.prim(Prim::Lt, vec![q, inf], Type::Bool);
    store.prim(Prim::And, vec![above, below], Type::Bool)
}
