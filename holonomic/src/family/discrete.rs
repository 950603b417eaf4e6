//! The discrete rows of the distribution table: primitive terms and masses of poisson,
//! negative binomial and categorical (owned by the discrete-recognition work).
//!
//! Masses are written as the language would (`rate ^ u * exp(-rate) / gammaFunc(u + 1)`)
//! and returned canonical, so that a recognised factor and `weight * density` compare
//! by their canonical forms. Nothing here decides a family; continuous rows are in
//! `continuous.rs`.

use slic_algebra::assume::Context;
use slic_algebra::canon;
use slic_algebra::{Coercion, Dist, Node, Prim, Store, TermId, Type};

use super::Family;

pub(super) fn dist_term(family: &Family, store: &mut Store) -> Option<TermId> {
    let measure = Type::measure(Type::Nat);
    match family {
        Family::Poisson { rate } => {
            Some(store.intern(Node::Dist(Dist::Poisson, vec![*rate]), measure))
        }
        Family::Categorical { weights } => {
            Some(store.intern(Node::Dist(Dist::Categorical, vec![*weights]), measure))
        }
        // the language has no negative binomial primitive
        _ => None,
    }
}

pub(super) fn density(family: &Family, store: &mut Store, u: TermId) -> TermId {
    let t = match family {
        Family::Poisson { rate } => poisson(store, *rate, u),
        Family::NegBinomial { r, p } => negative_binomial(store, *r, *p, u),
        Family::Categorical { weights } => categorical(store, *weights, u),
        // continuous rows are answered by `continuous.rs`; keep the argument
        _ => return u,
    };
    canon::canonicalize(store, &Context::new(), t)
}

/// `rate ^ u * exp(-rate) / gammaFunc(u + 1)`.
fn poisson(store: &mut Store, rate: TermId, u: TermId) -> TermId {
    let pow = power(store, rate, u);
    let rr = to_real(store, rate);
    let neg = store.prim(Prim::Neg, vec![rr], Type::Real);
    let e = store.prim(Prim::Exp, vec![neg], Type::Prob);
    let fact = factorial(store, u);
    let inv = store.prim(Prim::Recip, vec![fact], Type::Prob);
    store.prim(Prim::Mul, vec![pow, e, inv], Type::Prob)
}

/// `gammaFunc(u + r) / (gammaFunc(u + 1) * gammaFunc(r)) * p ** r * (1 - p) ** u`.
fn negative_binomial(store: &mut Store, r: TermId, p: TermId, u: TermId) -> TermId {
    let ur = to_real(store, u);
    let rr = to_real(store, r);
    let s = store.prim(Prim::Add, vec![ur, rr], Type::Real);
    let top = store.prim(Prim::GammaFunc, vec![s], Type::Prob);
    let fact = factorial(store, u);
    let gr = store.prim(Prim::GammaFunc, vec![rr], Type::Prob);
    let bottom = store.prim(Prim::Mul, vec![fact, gr], Type::Prob);
    let inv = store.prim(Prim::Recip, vec![bottom], Type::Prob);
    let pr = store.prim(Prim::RealPow, vec![p, rr], Type::Prob);
    let one = store.int_lit(1, Type::Real);
    let preal = to_real(store, p);
    let np = store.prim(Prim::Neg, vec![preal], Type::Real);
    let q = store.prim(Prim::Add, vec![one, np], Type::Real);
    let q = store.intern(Node::Coerce(Coercion::Real2Prob, q), Type::Prob);
    let qu = store.prim(Prim::RealPow, vec![q, ur], Type::Prob);
    store.prim(Prim::Mul, vec![top, inv, pr, qu], Type::Prob)
}

/// `weights[u] / summate i from 0 to size(weights): weights[i]`.
fn categorical(store: &mut Store, weights: TermId, u: TermId) -> TermId {
    let un = to_nat(store, u);
    let at = store.intern(Node::Index(weights, un), Type::Prob);
    let i = store.fresh_var("i", Type::Nat);
    let it = store.var_term(i);
    let wi = store.intern(Node::Index(weights, it), Type::Prob);
    let zero = store.int_lit(0, Type::Nat);
    let n = store.prim(Prim::Size, vec![weights], Type::Nat);
    let total = store.intern(Node::Summate(i, zero, n, wi), Type::Prob);
    let inv = store.prim(Prim::Recip, vec![total], Type::Prob);
    store.prim(Prim::Mul, vec![at, inv], Type::Prob)
}

/// `base ^ u` for a nat `u`, `base ** u` otherwise.
fn power(store: &mut Store, base: TermId, u: TermId) -> TermId {
    if *store.ty(u) == Type::Nat {
        store.prim(Prim::Pow, vec![base, u], Type::Prob)
    } else {
        let ur = to_real(store, u);
        store.prim(Prim::RealPow, vec![base, ur], Type::Prob)
    }
}

/// `gammaFunc(u + 1)`.
fn factorial(store: &mut Store, u: TermId) -> TermId {
    let ur = to_real(store, u);
    let one = store.int_lit(1, Type::Real);
    let s = store.prim(Prim::Add, vec![ur, one], Type::Real);
    store.prim(Prim::GammaFunc, vec![s], Type::Prob)
}

/// A numeric term as a real (a safe coercion, or itself).
fn to_real(store: &mut Store, t: TermId) -> TermId {
    let ty = store.ty(t).clone();
    match Coercion::safe(&ty, &Type::Real) {
        Some(c) => store.intern(Node::Coerce(c, t), Type::Real),
        None => t,
    }
}

/// A numeric term as a nat index: itself, `int2nat(u)`, or `int2nat(real2int(u))`.
fn to_nat(store: &mut Store, t: TermId) -> TermId {
    match store.ty(t).clone() {
        Type::Nat => t,
        Type::Int => store.intern(Node::Coerce(Coercion::Int2Nat, t), Type::Nat),
        _ => {
            let r = to_real(store, t);
            let i = store.intern(Node::Coerce(Coercion::Real2Int, r), Type::Int);
            store.intern(Node::Coerce(Coercion::Int2Nat, i), Type::Nat)
        }
    }
}
