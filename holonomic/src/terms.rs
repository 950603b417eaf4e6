//! Small typed constructors for the terms the distribution table and recognition write
//! (densities, normalisers, parameters): each one interns a well-typed node, inserting the
//! coercion its operands need (`prob2real` up the lattice, `real2prob` down, the latter
//! only where the caller vouches that the value is non-negative).
//!
//! Why: building `exp(-(u - mean)^2 / (2 * sd^2))` node by node with the right operand
//! types is noisy and easy to get wrong; these keep every built term verifiable. They do
//! no simplification: callers canonicalise what they build when the output must be
//! canonical.

use slic_algebra::{Coercion, Node, Prim, Rational, Store, TermId, Type};

/// A numeric literal of type `ty`.
pub fn lit(store: &mut Store, v: Rational, ty: Type) -> TermId {
    store.intern(Node::Lit(v), ty)
}

/// An integer literal of type `ty`.
pub fn int(store: &mut Store, v: i64, ty: Type) -> TermId {
    lit(store, Rational::from_integer(v), ty)
}

/// `p / q` as a literal of type `ty` (`q` non-zero).
pub fn ratio(store: &mut Store, p: i64, q: i64, ty: Type) -> TermId {
    let v = Rational::ratio(p, q).unwrap_or_else(Rational::zero);
    lit(store, v, ty)
}

/// `t` as a term of type `to` (numeric types): itself, a safe coercion, or `real2prob`
/// / `int2nat` for a value the caller knows to be non-negative.
pub fn coerce(store: &mut Store, t: TermId, to: &Type) -> TermId {
    let from = store.ty(t).clone();
    if &from == to {
        return t;
    }
    if let Some(c) = Coercion::safe(&from, to) {
        return store.intern(Node::Coerce(c, t), to.clone());
    }
    match (&from, to) {
        (Type::Real, Type::Prob) => store.intern(Node::Coerce(Coercion::Real2Prob, t), Type::Prob),
        (Type::Int, Type::Prob) => {
            let r = store.intern(Node::Coerce(Coercion::Int2Real, t), Type::Real);
            store.intern(Node::Coerce(Coercion::Real2Prob, r), Type::Prob)
        }
        (Type::Int, Type::Nat) => store.intern(Node::Coerce(Coercion::Int2Nat, t), Type::Nat),
        // the tables never ask for a real or prob value at an integral type
        _ => t,
    }
}

pub fn real(store: &mut Store, t: TermId) -> TermId {
    coerce(store, t, &Type::Real)
}

pub fn prob(store: &mut Store, t: TermId) -> TermId {
    coerce(store, t, &Type::Prob)
}

/// The n-ary sum of `xs` at type `ty` (operands coerced); 0 when empty.
pub fn add(store: &mut Store, xs: Vec<TermId>, ty: &Type) -> TermId {
    nary(store, Prim::Add, xs, ty, 0)
}

/// The n-ary product of `xs` at type `ty` (operands coerced); 1 when empty.
pub fn mul(store: &mut Store, xs: Vec<TermId>, ty: &Type) -> TermId {
    nary(store, Prim::Mul, xs, ty, 1)
}

fn nary(store: &mut Store, p: Prim, xs: Vec<TermId>, ty: &Type, unit: i64) -> TermId {
    let xs: Vec<TermId> = xs.into_iter().map(|x| coerce(store, x, ty)).collect();
    match xs.len() {
        0 => int(store, unit, ty.clone()),
        1 => xs[0],
        _ => store.prim(p, xs, ty.clone()),
    }
}

/// `-t` (real).
pub fn neg(store: &mut Store, t: TermId) -> TermId {
    let r = real(store, t);
    store.prim(Prim::Neg, vec![r], Type::Real)
}

/// `a - b` (real).
pub fn sub(store: &mut Store, a: TermId, b: TermId) -> TermId {
    let nb = neg(store, b);
    add(store, vec![a, nb], &Type::Real)
}

/// `1 / t` at type `ty` (prob or real).
pub fn recip(store: &mut Store, t: TermId, ty: &Type) -> TermId {
    let c = coerce(store, t, ty);
    store.prim(Prim::Recip, vec![c], ty.clone())
}

/// `a / b` at type `ty`.
pub fn div(store: &mut Store, a: TermId, b: TermId, ty: &Type) -> TermId {
    let r = recip(store, b, ty);
    mul(store, vec![a, r], ty)
}

/// `t ^ n` for a nat `n`, at `t`'s type.
pub fn pow(store: &mut Store, t: TermId, n: i64) -> TermId {
    let ty = store.ty(t).clone();
    let e = int(store, n, Type::Nat);
    store.prim(Prim::Pow, vec![t, e], ty)
}

/// `exp(t)` (prob).
pub fn exp(store: &mut Store, t: TermId) -> TermId {
    let r = real(store, t);
    store.prim(Prim::Exp, vec![r], Type::Prob)
}

/// `sqrt(t)` (prob; `t` coerced to prob).
pub fn sqrt(store: &mut Store, t: TermId) -> TermId {
    let p = prob(store, t);
    store.prim(Prim::Sqrt, vec![p], Type::Prob)
}

/// `b ** e` (prob base, real exponent).
pub fn real_pow(store: &mut Store, b: TermId, e: TermId) -> TermId {
    let (b, e) = (prob(store, b), real(store, e));
    store.prim(Prim::RealPow, vec![b, e], Type::Prob)
}

/// `pi`.
pub fn pi(store: &mut Store) -> TermId {
    store.prim(Prim::Pi, vec![], Type::Prob)
}

/// `gammaFunc(t)` (real argument); exact (`(n-1)!`, or a rational times `sqrt(pi)` at
/// a half-integer) when `t` is closed and a small positive integer or half-integer.
pub fn gamma_func(store: &mut Store, t: TermId) -> TermId {
    if let Some((c, k)) = literal(store, t).and_then(|v| gamma_exact(&v)) {
        return pi_power(store, c, k);
    }
    let r = real(store, t);
    store.prim(Prim::GammaFunc, vec![r], Type::Prob)
}

/// `betaFunc(a, b)` (prob arguments); exact when `a`, `b` are closed and small positive
/// integers or half-integers (`B(1/2, 1/2) = pi`, `B(2, 2) = 1/6`).
pub fn beta_func(store: &mut Store, a: TermId, b: TermId) -> TermId {
    if let (Some(x), Some(y)) = (literal(store, a), literal(store, b)) {
        let s = &x + &y;
        if let (Some((ca, ka)), Some((cb, kb)), Some((cs, ks))) =
            (gamma_exact(&x), gamma_exact(&y), gamma_exact(&s))
        {
            if let Some(c) = (&ca * &cb).checked_div(&cs) {
                return pi_power(store, c, ka + kb - ks);
            }
        }
    }
    let (a, b) = (prob(store, a), prob(store, b));
    store.prim(Prim::BetaFunc, vec![a, b], Type::Prob)
}

/// The largest argument [`gamma_exact`] evaluates (beyond it the factorials are long).
const MAX_EXACT_GAMMA: i64 = 200;

/// `Γ(v) = c · sqrt(pi)^k` for a positive integer or half-integer `v` up to
/// [`MAX_EXACT_GAMMA`]: `Γ(n) = (n-1)!`, `Γ(n + 1/2) = (2n)! / (4^n n!) · sqrt(pi)`.
fn gamma_exact(v: &Rational) -> Option<(Rational, i32)> {
    if !v.is_positive() {
        return None;
    }
    let twice = v * &Rational::from_integer(2);
    let t = twice.to_i64().filter(|_| twice.is_integer())?;
    if t > 2 * MAX_EXACT_GAMMA {
        return None;
    }
    if t % 2 == 0 {
        // Γ(n) = (n-1)!
        let mut c = Rational::one();
        for i in 1..t / 2 {
            c = &c * &Rational::from_integer(i);
        }
        return Some((c, 0));
    }
    // v = n + 1/2: Γ(v) = Π_{i=1..n} (i - 1/2) · sqrt(pi)
    let n = (t - 1) / 2;
    let mut c = Rational::one();
    for i in 1..=n {
        c = &c * &Rational::ratio(2 * i - 1, 2)?;
    }
    Some((c, 1))
}

/// `c · sqrt(pi)^k` (prob; `c` positive).
fn pi_power(store: &mut Store, c: Rational, k: i32) -> TermId {
    let ct = lit(store, c, Type::Prob);
    if k == 0 {
        return ct;
    }
    let p = pi(store);
    let root = store.prim(Prim::Sqrt, vec![p], Type::Prob);
    let powered = pow(store, root, i64::from(k.abs()));
    let factor = if k < 0 {
        recip(store, powered, &Type::Prob)
    } else {
        powered
    };
    mul(store, vec![ct, factor], &Type::Prob)
}

/// The exact value of a closed rational term (`1/2 * 3`), if it has one.
fn literal(store: &Store, t: TermId) -> Option<Rational> {
    slic_algebra::eval::eval_exact(store, t)
}

/// Is `t` the literal `v` (of any numeric type, under safe coercions)?
pub fn is_literal(store: &Store, t: TermId, v: i64) -> bool {
    let t = slic_algebra::cond::strip_safe(store, t);
    matches!(store.node(t), Node::Lit(q) if *q == Rational::from_integer(v))
}
