//! The continuous rows of the distribution table: primitive terms of normal, gamma, beta
//! and uniform, and the unnormalised kernels (normal, gamma, beta, uniform, Student-t)
//! with their exact normalising constants that recognition divides by. The densities
//! themselves are in `table.rs`.
//!
//! Each kernel `K` here is the family's density up to a factor free of the variable,
//! written in the parameters recognition reads off the operator (not in the family's
//! own parameters), with its integral `Z` over the family's support:
//! - normal: `K(x) = exp(c1 x^2/2 + c0 x)` (`c1 < 0`), `Z = sqrt(2 pi / -c1) exp(-c0^2 / (2 c1))`;
//! - gamma: `K(u) = u^c0 exp(c1 u)` on `(0, ∞)` (`c0 > -1`, `c1 < 0`),
//!   `Z = Γ(c0 + 1) (-1/c1)^(c0 + 1)`;
//! - beta: `K(u) = u^(a-1) (1-u)^(b-1)` on `(0, 1)`, `Z = B(a, b)`;
//! - Student-t: `K(x) = ((x - m)^2 + q)^(-c/2)` (`c > 1`, `q > 0`),
//!   `Z = q^(-(c-1)/2) B(1/2, (c-1)/2)`.
//!
//! Terms built here are well typed but not canonical; callers canonicalise. This file
//! decides nothing (no proofs, no recognition).

use super::Family;
use crate::terms::{self, add, mul, pow, prob, ratio, real, real_pow, sqrt, sub};
use slic_algebra::{Dist, Node, Store, TermId, Type};

pub(super) fn dist_term(family: &Family, store: &mut Store) -> Option<TermId> {
    let (d, args) = match *family {
        Family::Normal { mean, sd } => (Dist::Normal, vec![real(store, mean), prob(store, sd)]),
        Family::Gamma { shape, scale } => {
            (Dist::Gamma, vec![prob(store, shape), prob(store, scale)])
        }
        Family::Beta { a, b } => (Dist::Beta, vec![prob(store, a), prob(store, b)]),
        Family::Uniform { lo, hi } => (Dist::Uniform, vec![real(store, lo), real(store, hi)]),
        _ => return None,
    };
    let ty = Type::measure(d.support_type());
    Some(store.intern(Node::Dist(d, args), ty))
}

/// `B(1/2, nu/2)` (prob).
fn student_constant(store: &mut Store, nu: TermId) -> TermId {
    let half = ratio(store, 1, 2, Type::Prob);
    let h = mul(store, vec![half, nu], &Type::Prob);
    terms::beta_func(store, half, h)
}

/// An unnormalised kernel `K = factor · exp(exponent)` and its integral
/// `Z = z · exp(z_exponent)` over the family's support (prob factors, real exponents,
/// `None` for 0). The exponential parts are kept apart so that recognition can merge
/// them with the factor's own exponent in one step (the normal posterior under many
/// observations has a long exponent, and each extra `exp` kernel costs its length).
pub(crate) struct Unnormalised {
    pub(crate) factor: TermId,
    pub(crate) exponent: Option<TermId>,
    pub(crate) z: TermId,
    pub(crate) z_exponent: Option<TermId>,
}

/// The normal kernel `exp(c1 x^2/2 + c0 x)` at the real term `x` (`c1`, `c0` real),
/// and its integral over the reals `sqrt(2 pi · var) exp(-c0^2 / (2 c1))` where
/// `var = -1/c1` (a prob term).
pub(crate) fn normal_kernel(
    store: &mut Store,
    x: TermId,
    c1: TermId,
    c0: TermId,
    var: TermId,
) -> Unnormalised {
    let half = ratio(store, 1, 2, Type::Real);
    let x2 = pow(store, x, 2);
    let quad = mul(store, vec![half, c1, x2], &Type::Real);
    let lin = mul(store, vec![c0, x], &Type::Real);
    let s = add(store, vec![quad, lin], &Type::Real);
    let two = terms::int(store, 2, Type::Prob);
    let pi = terms::pi(store);
    let root = mul(store, vec![two, pi, var], &Type::Prob);
    let root = sqrt(store, root);
    // the exponent is written with the real `-1/c1`, not the prob `var`: `var` is a
    // `real2prob` of `-1/c1` where its sign is not evident by form, an atom to the
    // canonical form, and the weight's exponent would then mix that atom with the
    // polynomial it stands for (issue 10: the rate of a regression's noise precision
    // was no longer a rational function of the sufficient statistics)
    let c02 = pow(store, c0, 2);
    let neg_c1 = terms::neg(store, c1);
    let inv = terms::recip(store, neg_c1, &Type::Real);
    let e = mul(store, vec![half, c02, inv], &Type::Real);
    let one = terms::int(store, 1, Type::Prob);
    Unnormalised {
        factor: one,
        exponent: Some(s),
        z: root,
        z_exponent: Some(e),
    }
}

/// The gamma kernel `u^c0 exp(c1 u)` at the real term `u` (`u > 0` on the support), and
/// its integral over `(0, ∞)`: `Γ(shape) scale^shape` (`shape = c0 + 1`, `scale = -1/c1`,
/// prob terms).
pub(crate) fn gamma_kernel(
    store: &mut Store,
    u: TermId,
    c1: TermId,
    c0: TermId,
    shape: TermId,
    scale: TermId,
) -> Unnormalised {
    let p = real_pow(store, u, c0);
    let l = mul(store, vec![c1, u], &Type::Real);
    let g = terms::gamma_func(store, shape);
    let s = real_pow(store, scale, shape);
    let z = mul(store, vec![g, s], &Type::Prob);
    Unnormalised {
        factor: p,
        exponent: Some(l),
        z,
        z_exponent: None,
    }
}

/// The beta kernel `u^(a-1) (1-u)^(b-1)` at the real term `u` (`0 < u < 1` on the
/// support) for real terms `am1 = a - 1`, `bm1 = b - 1`, and its integral `B(a, b)`.
pub(crate) fn beta_kernel(
    store: &mut Store,
    u: TermId,
    am1: TermId,
    bm1: TermId,
    a: TermId,
    b: TermId,
) -> Unnormalised {
    let one = terms::int(store, 1, Type::Real);
    let p = real_pow(store, u, am1);
    let v = sub(store, one, u);
    let q = real_pow(store, v, bm1);
    let k = mul(store, vec![p, q], &Type::Prob);
    let z = terms::beta_func(store, a, b);
    Unnormalised {
        factor: k,
        exponent: None,
        z,
        z_exponent: None,
    }
}

/// The Student-t kernel `((x - m)^2 + q)^(-c/2)` at the real term `x` (real `m`, `c`;
/// prob `q`), and its integral over the reals `q^(-nu/2) B(1/2, nu/2)` with `nu = c - 1`
/// (a prob term).
pub(crate) fn student_kernel(
    store: &mut Store,
    x: TermId,
    m: TermId,
    q: TermId,
    c: TermId,
    nu: TermId,
) -> Unnormalised {
    let d = sub(store, x, m);
    let d2 = pow(store, d, 2);
    let base = add(store, vec![d2, q], &Type::Real);
    let half = ratio(store, -1, 2, Type::Real);
    let e = mul(store, vec![half, c], &Type::Real);
    let k = real_pow(store, base, e);
    let en = mul(store, vec![half, nu], &Type::Real);
    let qp = real_pow(store, q, en);
    let b = student_constant(store, nu);
    let z = mul(store, vec![qp, b], &Type::Prob);
    Unnormalised {
        factor: k,
        exponent: None,
        z,
        z_exponent: None,
    }
}

/// The uniform kernel `1` on an interval of width `w` (prob), integral `w`.
pub(crate) fn uniform_kernel(store: &mut Store, w: TermId) -> Unnormalised {
    let one = terms::int(store, 1, Type::Prob);
    Unnormalised {
        factor: one,
        exponent: None,
        z: w,
        z_exponent: None,
    }
}
