//! The heuristic polynomial gcd (GCDHEU, Char, Geddes and Gonnet 1989) for polynomials
//! with integer coefficients: a fast first attempt before the pseudo-remainder sequences
//! of `gcd.rs`.
//!
//! Why: subresultant sequences over Q[y, z] build large intermediate coefficients (a
//! trivariate gcd of degree 8 took a second); evaluating one variable at a large integer
//! `xi`, taking the gcd of the images recursively (down to integer gcds) and rebuilding the
//! candidate from its `xi`-adic digits is usually far cheaper.
//!
//! Correctness does not rest on the heuristic: with `xi > 2 min(|a|, |b|) + 2` (max-norms),
//! a primitive candidate that divides both operands is their gcd (the paper's theorem), and
//! every candidate is checked by exact division. When the checks fail a few times, or
//! `xi` grows past [`MAX_XI_BITS`] or the images past [`MAX_IMAGE_BITS`] (many variables or
//! high degrees make them huge), the caller falls back to the PRS. It must not be used on non-integer coefficients.

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use super::{Monomial, Poly};
use crate::num::Rational;

/// The largest evaluation point tried, in bits.
pub const MAX_XI_BITS: u64 = 4096;

/// The largest image size tried: bits of the evaluation point times the degree.
pub const MAX_IMAGE_BITS: u64 = 1 << 18;

/// Evaluation points tried per variable before giving up.
const ATTEMPTS: usize = 6;

/// The gcd over Z of two non-zero polynomials with integer coefficients (the gcd of their
/// integer contents times the primitive gcd, sign unspecified), or `None` when the
/// heuristic gives up.
pub(super) fn gcd_heuristic(a: &Poly, b: &Poly) -> Option<Poly> {
    crate::stack::grow(|| heu(a, b))
}

fn int(c: &Rational) -> Option<BigInt> {
    let big = c.as_big();
    big.is_integer().then(|| big.numer().clone())
}

fn rational(n: BigInt) -> Rational {
    Rational::new(BigRational::from_integer(n))
}

/// The positive gcd of the coefficients (`None` if one is not an integer).
fn integer_content(p: &Poly) -> Option<BigInt> {
    let mut g = BigInt::zero();
    for (_, c) in p.terms() {
        g = g.gcd(&int(c)?);
        if g.is_one() {
            break;
        }
    }
    Some(g)
}

/// The largest absolute value of a coefficient.
fn max_norm(p: &Poly) -> Option<BigInt> {
    let mut m = BigInt::zero();
    for (_, c) in p.terms() {
        let a = int(c)?.abs();
        if a > m {
            m = a;
        }
    }
    Some(m)
}

fn heu(a: &Poly, b: &Poly) -> Option<Poly> {
    if a.is_zero() || b.is_zero() {
        return None;
    }
    let (ca, cb) = (integer_content(a)?, integer_content(b)?);
    let c = ca.gcd(&cb);
    if a.as_constant().is_some() || b.as_constant().is_some() {
        return Some(Poly::constant(rational(c)));
    }
    let k = Rational::new(BigRational::new(BigInt::one(), c.clone()));
    let (a, b) = (a.scale(&k), b.scale(&k));
    // evaluate the highest variable that occurs
    let v = a.vars().last().copied().max(b.vars().last().copied())?;
    let bound = a.degree_in(v).min(b.degree_in(v));
    let mut xi: BigInt = max_norm(&a)?.min(max_norm(&b)?) * 2 + 29;
    for _ in 0..ATTEMPTS {
        let degree = u64::from(a.degree_in(v).max(b.degree_in(v)));
        if xi.bits() > MAX_XI_BITS || xi.bits().saturating_mul(degree) > MAX_IMAGE_BITS {
            return None;
        }
        let at = Poly::constant(rational(xi.clone()));
        let (ea, eb) = (a.substitute(v, &at), b.substitute(v, &at));
        if !ea.is_zero() && !eb.is_zero() {
            let gamma = gcd_heuristic(&ea, &eb)?;
            if let Some(g) = reconstruct(gamma, &xi, v, bound) {
                let g = primitive(&g)?;
                if a.div_exact(&g).is_some() && b.div_exact(&g).is_some() {
                    return Some(g.scale(&rational(c)));
                }
            }
        }
        xi = xi * 73794 / 27011;
    }
    None
}

/// `p` divided by its integer content.
fn primitive(p: &Poly) -> Option<Poly> {
    let c = integer_content(p)?;
    if c.is_zero() {
        return None;
    }
    Some(p.scale(&Rational::new(BigRational::new(BigInt::one(), c))))
}

/// The polynomial whose `xi`-adic digits (symmetric remainders) in `v` are the
/// coefficients of `gamma`; `None` when it would exceed degree `max_degree` in `v`.
fn reconstruct(mut gamma: Poly, xi: &BigInt, v: u32, max_degree: u32) -> Option<Poly> {
    let half = xi / 2;
    let inv = Rational::new(BigRational::new(BigInt::one(), xi.clone()));
    let mut terms = Vec::new();
    let mut i = 0u32;
    while !gamma.is_zero() {
        if i > max_degree {
            return None;
        }
        let mut digit = Vec::new();
        for (m, c) in gamma.terms() {
            let mut r = int(c)?.mod_floor(xi);
            if r > half {
                r -= xi;
            }
            if !r.is_zero() {
                digit.push((m.clone(), rational(r)));
            }
        }
        let digit = Poly::from_terms(digit);
        for (m, c) in digit.terms() {
            terms.push((m.mul(&Monomial::var(v, i)), c.clone()));
        }
        gamma = gamma.sub(&digit).scale(&inv);
        i += 1;
    }
    Some(Poly::from_terms(terms))
}
