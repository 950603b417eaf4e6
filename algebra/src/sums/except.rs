//! "Every point except u" (issue 10 §3, the paper's GMM and LDA updates): a sum whose
//! body reads `if i == u: a else: b(i)` is the loop over every point with `b(i)` plus a
//! correction at u,
//!
//! `Σ_{lo<=i<hi} f(if i == u: a else: b(i)) = Σ_{lo<=i<hi} f(b(i)) + [lo <= u < hi] (f(a) - f(b(u)))`,
//!
//! which turns the counts of a Gibbs update (`Σ_i [k == (if i == u: zNew else: z[i])]`)
//! into the count over all points, shared by every update, minus u's own term. The
//! condition is the one `solve::solve_linear` gives for the equation (its range part
//! keeps u out of range correct: then nothing is corrected). Reads of a literal array
//! `(array d of n: e)[i]` whose index the loop's range keeps below `n` are reduced to
//! `e[d := i]` first, so the pattern is met through an array built with `if d == u`.
//!
//! The loop over every point reads `f(b(i))` at u as well, where the original read
//! `f(a)`: the rewrite is made only when `f(b(i))` is defined at every point of the
//! range (total operations, and array reads that the range keeps in bounds, as in
//! `summate i from 0 to size(z): .. z[i] ..`); `if i + 1 == n: 1 else: 1 - ps[i]`, whose
//! else branch guards a read past the end of `ps`, is left alone (corpus case 14's
//! stick-breaking weights). This file only rewrites; closing the two parts is the
//! ordinary `sum` of the parent module.

use super::{Loop, Parts};
use crate::assume::{Context, Tri};
use crate::canon::{Normal, Overflow};
use crate::cond;
use crate::solve::solve_linear;
use crate::term::{Node, Prim, Store, TermId, VarId};
use crate::types::{Coercion, Type};
use crate::vars::{self, mentions};

/// The deepest subterm the search below follows (terms are hash-consed DAGs; this
/// bounds the walk, not its correctness: a deeper pattern is simply not found).
const MAX_SEARCH_DEPTH: u32 = 64;

impl Loop<'_, '_> {
    /// `Σ_i [∧guard] n` split at the point where an `if i == u` in it is decided, or
    /// with its literal-array reads reduced; `None` when neither applies.
    pub(super) fn except_point(
        &mut self,
        n: &Normal,
        guard: &[TermId],
        depth: u32,
    ) -> Result<Option<Parts>, Overflow> {
        if !self.has_point(n, guard) {
            return Ok(None);
        }
        let ty = self.sum_ty.clone();
        let mut t = self.cx.write(n, &ty);
        if !guard.is_empty() {
            let g = self.conjunction(guard);
            let zero = self.lit(0, &ty);
            t = self.store().intern(Node::If(g, t, zero), ty.clone());
        }
        let reduced = self.reduce_reads(t, &mut Vec::new(), 0);
        let Some((target, sol, a, b)) = self.find_point(reduced, &mut Vec::new(), 0) else {
            if reduced == t {
                return Ok(None);
            }
            self.changed = true;
            let rn = self.cx.normal_of(reduced);
            return self.sum(&rn, Vec::new(), depth + 1).map(Some);
        };
        let var = self.var;
        let tb = vars::replace_free(self.store(), reduced, target, b);
        if !self.defined_everywhere(tb) {
            // `b` may be undefined at u (`if i + 1 == n: 1 else: 1 - ps[i]` with `ps` one
            // shorter): the loop over every point would read it there
            if reduced == t {
                return Ok(None);
            }
            self.changed = true;
            let rn = self.cx.normal_of(reduced);
            return self.sum(&rn, Vec::new(), depth + 1).map(Some);
        }
        self.changed = true;
        let ta = vars::replace_free(self.store(), reduced, target, a);
        let bn = self.cx.normal_of(tb);
        let mut parts = self.sum(&bn, Vec::new(), depth + 1)?;
        // the correction f(a) - f(b(u)), counted when u is in the range
        let at_a = vars::substitute1(self.store(), ta, var, sol.0);
        let at_b = vars::substitute1(self.store(), tb, var, sol.0);
        let na = self.cx.normal_of(at_a);
        let nb = self.cx.normal_of(at_b);
        let diff = self.cx.add(&na, &nb.neg())?;
        // at int for a nat sum: the correction may be negative (the total is not)
        let cty = if ty == Type::Nat { Type::Int } else { ty };
        let dt = self.cx.write(&diff, &cty);
        let zero = self.lit(0, &cty);
        let corr = self.store().intern(Node::If(sol.1, dt, zero), cty);
        let corr = self.cx.normal_of(corr);
        parts.free = self.cx.add(&parts.free, &corr)?;
        Ok(Some(parts))
    }

    /// Is there anything for [`Self::except_point`] in the kernels of `n` that depend on
    /// the index or in `guard` (looked for there first: writing `n` out costs more)?
    fn has_point(&mut self, n: &Normal, guard: &[TermId]) -> bool {
        let mut terms: Vec<TermId> = guard.to_vec();
        let ks: Vec<u32> = n.num().vars().into_iter().chain(n.den().vars()).collect();
        for k in ks {
            if self.depends(k) {
                terms.extend(self.cx.natural_term(k));
            }
        }
        terms.into_iter().any(|t| {
            self.reduce_reads(t, &mut Vec::new(), 0) != t
                || self.find_point(t, &mut Vec::new(), 0).is_some()
        })
    }

    /// `t` with every `(array d of m: e)[x]` whose index the loop's context keeps in
    /// `0 <= x < m` (outside binders that capture its variables) read as `e[d := x]`.
    fn reduce_reads(&mut self, t: TermId, bound: &mut Vec<VarId>, depth: u32) -> TermId {
        if depth > MAX_SEARCH_DEPTH || !mentions(self.cx.store(), t, self.var) {
            return t;
        }
        let node = self.cx.store().node(t).clone();
        if let Node::Index(arr, x) = node {
            if let Node::Array(d, m, e) = *self.cx.store().node(arr) {
                let free_of_bound = !bound.iter().any(|&v| mentions(self.cx.store(), t, v));
                let inside = self.inside.clone();
                if free_of_bound && super::point::in_bounds(self.store(), &inside, x, m) {
                    let r = vars::substitute1(self.store(), e, d, x);
                    return self.reduce_reads(r, bound, depth + 1);
                }
            }
        }
        let mut binds = Vec::new();
        vars::binders(&node, &mut binds);
        let before = bound.len();
        bound.extend(binds);
        let ch = node.children();
        let new: Vec<TermId> = ch
            .iter()
            .map(|&c| crate::stack::grow(|| self.reduce_reads(c, bound, depth + 1)))
            .collect();
        bound.truncate(before);
        if new == ch {
            return t;
        }
        let ty = self.cx.store().ty(t).clone();
        self.store().intern(node.with_children(&new), ty)
    }

    /// [`defined_everywhere`] under the loop's context.
    pub(super) fn defined_everywhere(&mut self, t: TermId) -> bool {
        let inside = self.inside.clone();
        defined_everywhere(self.store(), &inside, t)
    }

    /// The first `if c: a else: b` in `t` (outside binders that capture its variables)
    /// whose condition is an equation that solves for the index: the node, the solution
    /// (value, condition) and the branches.
    #[allow(clippy::type_complexity)]
    fn find_point(
        &mut self,
        t: TermId,
        bound: &mut Vec<VarId>,
        depth: u32,
    ) -> Option<(TermId, (TermId, TermId), TermId, TermId)> {
        if depth > MAX_SEARCH_DEPTH || !mentions(self.cx.store(), t, self.var) {
            return None;
        }
        let node = self.cx.store().node(t).clone();
        if let Node::If(c, a, b) = node {
            let free_of_bound = !bound.iter().any(|&v| mentions(self.cx.store(), t, v));
            let is_eq = matches!(self.cx.store().node(c), Node::Prim(Prim::Eq, _));
            if free_of_bound && is_eq {
                let inside = self.inside.clone();
                let var = self.var;
                if let Some(sol) = solve_linear(self.store(), &inside, c, var) {
                    return Some((t, (sol.value, sol.condition), a, b));
                }
            }
        }
        let mut binds = Vec::new();
        vars::binders(&node, &mut binds);
        let before = bound.len();
        bound.extend(binds);
        let mut found = None;
        for c in node.children() {
            found = crate::stack::grow(|| self.find_point(c, bound, depth + 1));
            if found.is_some() {
                break;
            }
        }
        bound.truncate(before);
        found
    }
}

/// Is `t` (a loop body) defined at every point allowed by `ctx`, whatever the values of
/// the arrays it reads? Only total operations (arithmetic without division, `exp`, `^`
/// with a nat exponent, comparisons, logic, `if`, safe coercions), reads `a[x]` whose
/// index the context keeps below `size(a)` (a loop ranging over `a`), and
/// `real2prob(e)`/`int2nat(e)` where the context decides `0 <= e` (the coin's
/// `real2prob(1 - z)` under `z <~ beta(..)`, read by `chain.rs`). Shared with
/// `unproduct`, which lifts a choice only where both branches are defined.
pub(crate) fn defined_everywhere(store: &mut Store, ctx: &Context, t: TermId) -> bool {
    let subterms: Vec<TermId> = store.subterms(t).collect();
    subterms.into_iter().all(|x| match store.node(x).clone() {
        Node::Var(_) | Node::Lit(_) | Node::Bool(_) | Node::If(..) => true,
        Node::Coerce(c @ (Coercion::Int2Nat | Coercion::Real2Prob), e) => {
            let ty = if c == Coercion::Int2Nat {
                Type::Int
            } else {
                Type::Real
            };
            let zero = store.intern(Node::Lit(crate::num::Rational::zero()), ty);
            let c = store.prim(Prim::Le, vec![zero, e], Type::Bool);
            cond::decide(store, ctx, c) == Tri::True
        }
        Node::Coerce(c, _) => c != Coercion::Real2Int,
        Node::Prim(p, _) => is_total(p),
        Node::Index(arr, i) => {
            let size = match *store.node(arr) {
                Node::Array(_, m, _) => m,
                _ => store.prim(Prim::Size, vec![arr], Type::Nat),
            };
            super::point::in_bounds(store, ctx, i, size)
        }
        _ => false,
    })
}

/// Is the primitive `p` defined wherever its arguments are (arithmetic without division,
/// `exp`, `^` with a nat exponent, `pi`, comparisons, logic, `size`)? The one list that
/// `defined_everywhere` and the one-point rule (`point.rs`) read.
pub(super) fn is_total(p: Prim) -> bool {
    matches!(
        p,
        Prim::Add
            | Prim::Mul
            | Prim::Neg
            | Prim::Pow
            | Prim::Exp
            | Prim::Pi
            | Prim::Abs
            | Prim::Signum
            | Prim::Min
            | Prim::Max
            | Prim::Lt
            | Prim::Le
            | Prim::Eq
            | Prim::Ne
            | Prim::And
            | Prim::Or
            | Prim::Not
            | Prim::Size
    )
}
