//! Piecewise terms (`if`): normalisation under a context, and the one canonical shape of
//! guarded terms (indicators and guarded sums).
//!
//! `canon` treats a numeric `if` as an atom whose parts it canonicalises; this module is
//! where the `if` itself is simplified: decided conditions drop the dead branch, a
//! branch is simplified knowing its condition's value, equal branches merge, and the
//! condition is kept in positive polarity. It only looks at nested `if`s at the top of
//! the branches, never deeper into them (that is `canon`'s traversal, which passes the
//! extended context down), and it never distributes an `if` over arithmetic.
//!
//! # Guarded shape
//! A term guarded by a condition is `if COND: BODY else: 0` with COND canonical
//! ([`guarded`]); the indicator `[COND]` is `if COND: 1 else: 0` ([`indicator`]); a sum
//! over a guard is `summate j from lo to hi: if COND: BODY else: 0` ([`guarded_sum`]),
//! which is the shape `Σ_j [i == y[j]] s[j]` keeps (histograms are recognised from it).

use crate::assume::{Context, Tri};
use crate::cond::{self, is_negative_form};
use crate::num::Rational;
use crate::term::{Node, Store, TermId, VarId};
use crate::types::Type;

/// The simplified `if cond: then else: els` of type `ty` under `ctx`:
/// - the condition is made canonical under `ctx` ([`cond::canonical`]); a decided one
///   gives its branch;
/// - a negative condition (`not x`, `a /= b`) is negated and the branches swapped;
/// - each branch that is itself an `if` is simplified under `ctx` extended with the
///   condition's value (so `if c: (if c: a else: b) else: d` is `if c: a else: d`);
/// - equal branches merge (`if c: a else: a` is `a`);
/// - at type bool, the result is a canonical condition (`if c: true else: false` is c).
pub fn simplify_if(
    store: &mut Store,
    ctx: &Context,
    cond: TermId,
    then: TermId,
    els: TermId,
    ty: &Type,
) -> TermId {
    let mut budget = IF_BUDGET;
    simplify_if_in(store, ctx, cond, then, els, ty, &mut budget)
}

/// How many nested `if`s one [`simplify_if`] call simplifies; deeper ones are kept as
/// they are. Branches are simplified under different contexts, so a shared subterm is
/// visited once per path: without a budget, a chain of `if`s whose branches share one
/// `if` would take exponential time.
pub const IF_BUDGET: usize = 4096;

fn simplify_if_in(
    store: &mut Store,
    ctx: &Context,
    cond: TermId,
    then: TermId,
    els: TermId,
    ty: &Type,
    budget: &mut usize,
) -> TermId {
    crate::stack::grow(|| simplify_if_here(store, ctx, cond, then, els, ty, budget))
}

fn simplify_if_here(
    store: &mut Store,
    ctx: &Context,
    cond: TermId,
    then: TermId,
    els: TermId,
    ty: &Type,
    budget: &mut usize,
) -> TermId {
    let mut c = cond::canonical(store, ctx, cond);
    let (mut a, mut b) = (then, els);
    match store.node(c) {
        Node::Bool(true) => return branch(store, ctx, a, budget),
        Node::Bool(false) => return branch(store, ctx, b, budget),
        _ => {}
    }
    if is_negative_form(store, c) {
        c = cond::negate(store, c);
        std::mem::swap(&mut a, &mut b);
    }
    let a = branch(store, &ctx.with_condition(c, true), a, budget);
    let b = branch(store, &ctx.with_condition(c, false), b, budget);
    if a == b {
        return a;
    }
    let t = store.intern(Node::If(c, a, b), ty.clone());
    if *ty == Type::Bool {
        return cond::canonical(store, ctx, t);
    }
    t
}

/// A branch: simplified if it is an `if` (and the budget allows), else left as it is.
fn branch(store: &mut Store, ctx: &Context, t: TermId, budget: &mut usize) -> TermId {
    match store.node(t) {
        &Node::If(c, a, b) if *budget > 0 => {
            *budget -= 1;
            let ty = store.ty(t).clone();
            simplify_if_in(store, ctx, c, a, b, &ty, budget)
        }
        _ => t,
    }
}

/// Decides `cond` under `ctx` (a convenience for callers that branch on it).
pub fn decide(store: &mut Store, ctx: &Context, cond: TermId) -> Tri {
    cond::decide(store, ctx, cond)
}

/// `if COND: body else: 0` (of `body`'s numeric type) with COND canonical: the guarded
/// shape. A decided condition gives `body` or `0`.
pub fn guarded(store: &mut Store, cond: TermId, body: TermId) -> TermId {
    let ty = store.ty(body).clone();
    let c = cond::canonical(store, &Context::new(), cond);
    let zero = store.intern(Node::Lit(Rational::zero()), ty.clone());
    match store.node(c) {
        Node::Bool(true) => body,
        Node::Bool(false) => zero,
        _ => store.intern(Node::If(c, body, zero), ty),
    }
}

/// The indicator `[COND]` of numeric type `ty`: `if COND: 1 else: 0`, COND canonical.
pub fn indicator(store: &mut Store, cond: TermId, ty: &Type) -> TermId {
    let one = store.intern(Node::Lit(Rational::one()), ty.clone());
    guarded(store, cond, one)
}

/// `summate j from lo to hi: if COND: body else: 0`, the canonical guarded sum.
pub fn guarded_sum(
    store: &mut Store,
    j: VarId,
    lo: TermId,
    hi: TermId,
    cond: TermId,
    body: TermId,
) -> TermId {
    let g = guarded(store, cond, body);
    let ty = store.ty(body).clone();
    store.intern(Node::Summate(j, lo, hi, g), ty)
}

#[cfg(test)]
mod tests;
