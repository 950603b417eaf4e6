//! Alpha-equivalence of core terms: equal up to the names of bound variables.
//!
//! Two terms are alpha-equivalent when they have the same shape, the same payloads
//! (literal values, primitives, distributions, coercions), the same types at every node
//! and every binder, bound variables that correspond by binding position, and the same
//! free variables (by identity). `match` patterns must have the same shape; their
//! variables correspond left to right.
//!
//! It exists for round-trip tests (print, parse, elaborate and compare) and for passes that
//! want to know whether a rewrite changed anything. It compares structure only, never
//! meaning (`x + 0` is not alpha-equivalent to `x`). The walk uses an explicit work stack,
//! so 10,000-statement chains compare without recursion.

use rustc_hash::FxHashMap;

use crate::term::{Node, Pattern, Store, TermId, VarId};

/// Are `a` and `b` equal up to renaming of bound variables (types included)?
pub fn alpha_eq(store: &Store, a: TermId, b: TermId) -> bool {
    if a == b {
        return true;
    }
    Alpha::default().run(store, a, b)
}

enum Work {
    Cmp(TermId, TermId),
    /// Enter the scope of a binder: `x` (left) corresponds to `y` (right).
    Bind(VarId, VarId),
    /// Leave that scope.
    Unbind(VarId, VarId),
}

#[derive(Default)]
struct Alpha {
    /// For each bound variable of the left term, the right variables it is paired with,
    /// innermost last (a variable may be re-bound inside its own scope).
    left: FxHashMap<VarId, Vec<VarId>>,
    right: FxHashMap<VarId, Vec<VarId>>,
    /// How many active pairs bind two different variables. While it is zero, identical
    /// subterms are equivalent (every variable means the same on both sides).
    renamed: usize,
    stack: Vec<Work>,
}

impl Alpha {
    fn run(&mut self, s: &Store, a: TermId, b: TermId) -> bool {
        self.stack.push(Work::Cmp(a, b));
        while let Some(w) = self.stack.pop() {
            match w {
                Work::Bind(x, y) => {
                    self.left.entry(x).or_default().push(y);
                    self.right.entry(y).or_default().push(x);
                    if x != y {
                        self.renamed += 1;
                    }
                }
                Work::Unbind(x, y) => {
                    if let Some(v) = self.left.get_mut(&x) {
                        v.pop();
                    }
                    if let Some(v) = self.right.get_mut(&y) {
                        v.pop();
                    }
                    if x != y {
                        self.renamed -= 1;
                    }
                }
                Work::Cmp(a, b) => {
                    if !self.step(s, a, b) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Do `x` (left) and `y` (right) refer to corresponding variables here?
    fn same_var(&self, x: VarId, y: VarId) -> bool {
        let lx = self.left.get(&x).and_then(|v| v.last());
        let ry = self.right.get(&y).and_then(|v| v.last());
        match (lx, ry) {
            (Some(&lx), Some(&ry)) => lx == y && ry == x,
            (None, None) => x == y,
            _ => false,
        }
    }

    /// Push the comparison of the children `xs`/`ys` in order.
    fn children(&mut self, xs: &[TermId], ys: &[TermId]) -> bool {
        if xs.len() != ys.len() {
            return false;
        }
        for (&x, &y) in xs.iter().zip(ys).rev() {
            self.stack.push(Work::Cmp(x, y));
        }
        true
    }

    /// Push: the children `outside` (not in the binder's scope), then `inside` with `x`
    /// and `y` bound to each other.
    fn binder(
        &mut self,
        s: &Store,
        (x, y): (VarId, VarId),
        outside: &[(TermId, TermId)],
        inside: &[(TermId, TermId)],
    ) -> bool {
        if s.var_type(x) != s.var_type(y) {
            return false;
        }
        // Work pops last-pushed first: push the scoped part inside Bind/Unbind first, so
        // it runs with the pair bound, then the unscoped children.
        for &(a, b) in outside.iter().rev() {
            self.stack.push(Work::Cmp(a, b));
        }
        self.stack.push(Work::Unbind(x, y));
        for &(a, b) in inside.iter().rev() {
            self.stack.push(Work::Cmp(a, b));
        }
        self.stack.push(Work::Bind(x, y));
        true
    }

    fn step(&mut self, s: &Store, a: TermId, b: TermId) -> bool {
        if a == b && self.renamed == 0 {
            return true;
        }
        if s.ty(a) != s.ty(b) {
            return false;
        }
        use Node::*;
        match (s.node(a), s.node(b)) {
            (Var(x), Var(y)) => self.same_var(*x, *y),
            (Lit(p), Lit(q)) => p == q,
            (Bool(p), Bool(q)) => p == q,
            (Unit, Unit) | (Nothing, Nothing) | (RNop, RNop) | (Reject, Reject) => true,
            (Pair(a1, a2), Pair(b1, b2))
            | (App(a1, a2), App(b1, b2))
            | (Index(a1, a2), Index(b1, b2))
            | (RFanout(a1, a2), RFanout(b1, b2))
            | (Weight(a1, a2), Weight(b1, b2))
            | (Observe(a1, a2), Observe(b1, b2)) => self.children(&[*a1, *a2], &[*b1, *b2]),
            (Left(x), Left(y))
            | (Right(x), Right(y))
            | (Just(x), Just(y))
            | (RAdd(x), RAdd(y))
            | (Dirac(x), Dirac(y)) => self.children(&[*x], &[*y]),
            (Prim(p, xs), Prim(q, ys)) => p == q && self.children(xs, ys),
            (Dist(p, xs), Dist(q, ys)) => p == q && self.children(xs, ys),
            (Coerce(c, x), Coerce(d, y)) => c == d && self.children(&[*x], &[*y]),
            (Transform(c, x), Transform(d, y)) => c == d && self.children(&[*x], &[*y]),
            (ArrayLit(xs), ArrayLit(ys)) | (Superpose(xs), Superpose(ys)) => self.children(xs, ys),
            (If(a1, a2, a3), If(b1, b2, b3)) | (RSplit(a1, a2, a3), RSplit(b1, b2, b3)) => {
                self.children(&[*a1, *a2, *a3], &[*b1, *b2, *b3])
            }
            (Let(x, e1, e2), Let(y, f1, f2))
            | (Bind(x, e1, e2), Bind(y, f1, f2))
            | (Array(x, e1, e2), Array(y, f1, f2))
            | (Plate(x, e1, e2), Plate(y, f1, f2)) => {
                self.binder(s, (*x, *y), &[(*e1, *f1)], &[(*e2, *f2)])
            }
            (Lam(x, e), Lam(y, f)) => self.binder(s, (*x, *y), &[], &[(*e, *f)]),
            (Summate(x, a1, a2, a3), Summate(y, b1, b2, b3))
            | (Product(x, a1, a2, a3), Product(y, b1, b2, b3))
            | (Integrate(x, a1, a2, a3), Integrate(y, b1, b2, b3))
            | (Bucket(x, a1, a2, a3), Bucket(y, b1, b2, b3))
            | (RIndex(x, a1, a2, a3), RIndex(y, b1, b2, b3))
            | (Chain(x, a1, a2, a3), Chain(y, b1, b2, b3)) => {
                self.binder(s, (*x, *y), &[(*a1, *b1), (*a2, *b2)], &[(*a3, *b3)])
            }
            (Match(e, arms), Match(f, brms)) => {
                if arms.len() != brms.len() {
                    return false;
                }
                // Each arm: its pattern variables bound pairwise around its body.
                for ((p, x), (q, y)) in arms.iter().zip(brms).rev() {
                    let mut pairs = Vec::new();
                    if !same_pattern(s, p, q, &mut pairs) {
                        return false;
                    }
                    for &(u, v) in pairs.iter().rev() {
                        self.stack.push(Work::Unbind(u, v));
                    }
                    self.stack.push(Work::Cmp(*x, *y));
                    for &(u, v) in &pairs {
                        self.stack.push(Work::Bind(u, v));
                    }
                }
                self.stack.push(Work::Cmp(*e, *f));
                true
            }
            _ => false,
        }
    }
}

/// Do two patterns have the same shape (and variables of the same types)? Collects the
/// corresponding variable pairs, left to right.
fn same_pattern(s: &Store, p: &Pattern, q: &Pattern, pairs: &mut Vec<(VarId, VarId)>) -> bool {
    match (p, q) {
        (Pattern::Wild, Pattern::Wild)
        | (Pattern::Unit, Pattern::Unit)
        | (Pattern::Nothing, Pattern::Nothing) => true,
        (Pattern::Bool(a), Pattern::Bool(b)) => a == b,
        (Pattern::Var(x), Pattern::Var(y)) => {
            pairs.push((*x, *y));
            s.var_type(*x) == s.var_type(*y)
        }
        (Pattern::Pair(a1, a2), Pattern::Pair(b1, b2)) => {
            same_pattern(s, a1, b1, pairs) && same_pattern(s, a2, b2, pairs)
        }
        (Pattern::Left(a), Pattern::Left(b))
        | (Pattern::Right(a), Pattern::Right(b))
        | (Pattern::Just(a), Pattern::Just(b)) => same_pattern(s, a, b, pairs),
        _ => false,
    }
}

#[cfg(test)]
#[rustfmt::skip]
mod tests;
