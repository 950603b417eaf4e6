//! The stick-breaking sum (eq. (12) of the arrays paper): the pieces of a stick broken
//! by the fractions `q[0], q[1], ...` sum to the whole stick,
//!
//! `Σ_{i=0}^{K-1} (Π_{k=0}^{i-1} q[k]) · (if i + 1 < K: 1 - q[i] else: 1) = [0 < K]`,
//!
//! because piece `i` is `P(i) - P(i+1)` with `P(i) = Π_{k<i} q[k]`, the sum telescopes to
//! `P(0) - P(K-1) + P(K-1) = 1`. A Dirichlet written by stick-breaking gives a vector
//! `θ` with this sum, and `categorical(θ)` divides by `Σ θ`: closing it to 1 is what
//! lets the simplifier integrate the stick fractions out one by one.
//!
//! The body is recognised by meaning, not spelling: the product factor is found by
//! shape, and the rest is checked by canonical equality against `1 - q[i]` on the
//! range `i + 1 < K` and against `1` at `i = K - 1`, so any canonical spelling of the
//! condition (`i + 1 == K`, `K <= i + 1`, ...) is met.

use crate::assume::{Context, Tri};
use crate::canon::{self, Canon, Normal};
use crate::cond;
use crate::num::Rational;
use crate::term::{Node, Prim, Store, TermId, VarId};
use crate::types::{Coercion, Type};
use crate::vars;

/// `summate var from lo to hi: body` closed when it is a stick-breaking sum (`lo` = 0):
/// `if 0 < hi: 1 else: 0` as a canonical form of `cx`.
pub(crate) fn stick_breaking(
    cx: &mut Canon,
    var: VarId,
    lo: TermId,
    hi: TermId,
    body: TermId,
) -> Option<Normal> {
    if !is_zero(cx.store(), lo) || *cx.store().ty(body) != Type::Prob {
        return None;
    }
    let ctx = cx.context().clone();
    let closed = check(cx.store_mut(), &ctx, var, hi, body)?;
    cx.normal(closed).ok()
}

fn is_zero(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(q) if q.is_zero())
}

fn check(store: &mut Store, ctx: &Context, i: VarId, hi: TermId, body: TermId) -> Option<TermId> {
    let factors = match store.node(body) {
        Node::Prim(Prim::Mul, xs) => xs.clone(),
        _ => vec![body],
    };
    // the product Π_{k=0}^{i-1} q(k), the one factor that is a product up to i
    let it = store.var_term(i);
    let (pos, k, q) = factors
        .iter()
        .enumerate()
        .find_map(|(n, &f)| match *store.node(f) {
            Node::Product(k, plo, phi, q) if is_zero(store, plo) && phi == it => Some((n, k, q)),
            _ => None,
        })?;
    let rest: Vec<TermId> = factors
        .iter()
        .enumerate()
        .filter(|&(n, _)| n != pos)
        .map(|(_, &f)| f)
        .collect();
    let one = store.intern(Node::Lit(Rational::one()), Type::Prob);
    let rest = match rest.len() {
        0 => one,
        1 => rest[0],
        _ => store.prim(Prim::Mul, rest, Type::Prob),
    };
    let nty = store.ty(hi).clone();
    let inside = ctx.with_range(
        i,
        store.intern(Node::Lit(Rational::zero()), nty.clone()),
        hi,
    );
    // on i + 1 < hi the rest is 1 - q(i)
    let one_n = store.intern(Node::Lit(Rational::one()), nty.clone());
    let next = store.prim(Prim::Add, vec![it, one_n], nty.clone());
    let below = store.prim(Prim::Lt, vec![next, hi], Type::Bool);
    let regular = inside.with_condition(below, true);
    let qi = vars::substitute1(store, q, k, it);
    let qr = store.intern(Node::Coerce(Coercion::Prob2Real, qi), Type::Real);
    let one_r = store.intern(Node::Lit(Rational::one()), Type::Real);
    let neg = store.prim(Prim::Neg, vec![qr], Type::Real);
    let diff = store.prim(Prim::Add, vec![one_r, neg], Type::Real);
    let piece = store.intern(Node::Coerce(Coercion::Real2Prob, diff), Type::Prob);
    if !same(store, &regular, rest, piece) {
        return None;
    }
    // at i + 1 == hi the rest is 1
    let last = inside.with_condition(below, false);
    if !same(store, &last, rest, one) {
        return None;
    }
    // hi >= 1 gives 1, an empty range 0
    let zero_n = store.intern(Node::Lit(Rational::zero()), nty);
    let nonempty = store.prim(Prim::Lt, vec![zero_n, hi], Type::Bool);
    let zero = store.intern(Node::Lit(Rational::zero()), Type::Prob);
    let r = match cond::decide(store, ctx, nonempty) {
        Tri::True => one,
        Tri::False => zero,
        Tri::Unknown => store.intern(Node::If(nonempty, one, zero), Type::Prob),
    };
    Some(r)
}

/// Are `a` and `b` canonically equal under `ctx`?
fn same(store: &mut Store, ctx: &Context, a: TermId, b: TermId) -> bool {
    let ca = canon::canonicalize(store, ctx, a);
    let cb = canon::canonicalize(store, ctx, b);
    ca == cb
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front;

    fn closes(src: &str) -> Option<String> {
        let mut store = Store::new();
        let mut t = front::load(&mut store, src).ok()?;
        while let Node::Lam(_, b) = *store.node(t) {
            t = b;
        }
        let Node::Summate(v, lo, hi, body) = *store.node(t) else {
            return None;
        };
        let ctx = Context::new();
        let lo = canon::canonicalize(&mut store, &ctx, lo);
        let hi = canon::canonicalize(&mut store, &ctx, hi);
        let inside = ctx.with_range(v, lo, hi);
        let body = canon::canonicalize(&mut store, &inside, body);
        let mut cx = Canon::new(&mut store, ctx);
        let n = stick_breaking(&mut cx, v, lo, hi, body)?;
        let t = cx.to_term(&n, &Type::Prob).ok()?;
        Some(crate::print::print_term(&store, t).trim().to_string())
    }

    #[test]
    fn the_pieces_of_a_stick_sum_to_one() {
        let r = closes(
            "fn q array(prob): fn n nat: summate i from 0 to n: \
             (product k from 0 to i: q[k]) * (if i + 1 < n: real2prob(1 - q[i]) else: 1)",
        );
        assert_eq!(r.as_deref(), Some("if 1 <= n: 1. prob else: 0. prob"));
    }

    #[test]
    fn other_sums_are_left_alone() {
        // the last piece is not 1: no telescoping
        let r = closes(
            "fn q array(prob): fn n nat: summate i from 0 to n: \
             (product k from 0 to i: q[k]) * real2prob(1 - q[i])",
        );
        assert!(r.is_none());
    }
}
