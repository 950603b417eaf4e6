//! [`PolyRing`]: what the canonical-form layer needs from a polynomial backend, so that a
//! stronger one could replace [`Poly`] without touching its callers (issue 3: "behind a
//! trait so a stronger backend could be swapped in").
//!
//! The trait only names operations; it holds no algorithm. [`Poly`] implements it by
//! delegating to its inherent methods.

use std::fmt::Debug;
use std::hash::Hash;

use super::{Monomial, Poly};
use crate::num::Rational;

/// Multivariate polynomials over Q in variables numbered by `u32`.
///
/// A backend must guarantee:
/// - **Canonical representation**: two values are `==` (and hash alike) exactly when they
///   are the same polynomial. Canonical forms and [`super::RatFun`] rely on structural
///   equality meaning mathematical equality.
/// - **Exactness**: arithmetic is exact over Q (no floating point, no truncation); `div_exact`
///   returns `Some` exactly when the divisor divides, and then the true quotient.
/// - **Normalised gcd**: `gcd` returns a greatest common divisor scaled to coprime integer
///   coefficients with a positive leading coefficient in the backend's term order
///   (`gcd(0, 0) = 0`, `gcd(a, 0) = normalize(a)`), so the same pair always gives the same
///   value; it may return 1 only where documented as a resource fallback.
/// - **Determinism**: results, including `to_terms` order (decreasing in the backend's
///   term order, fixed for the backend) do not depend on hashing, threads or history.
/// - **No panics and bounded work** on any input the caller can build; in particular
///   `leading_coefficient` is `None` only for zero.
pub trait PolyRing: Clone + Debug + Eq + Hash + Sized {
    fn zero() -> Self;
    fn one() -> Self;
    fn constant(c: Rational) -> Self;
    /// The polynomial `x_v`.
    fn var(v: u32) -> Self;
    fn add(&self, other: &Self) -> Self;
    fn sub(&self, other: &Self) -> Self;
    fn mul(&self, other: &Self) -> Self;
    fn neg(&self) -> Self;
    /// `k * self`.
    fn scale(&self, k: &Rational) -> Self;
    fn pow(&self, n: u32) -> Self;
    /// `self / d` when `d` divides `self` exactly, else `None` (also for `d = 0`).
    fn div_exact(&self, d: &Self) -> Option<Self>;
    /// The normalised gcd (see the trait doc).
    fn gcd(&self, other: &Self) -> Self;
    fn is_zero(&self) -> bool;
    /// The value if the polynomial is a constant (zero included).
    fn as_constant(&self) -> Option<Rational>;
    /// The coefficient of the leading term in the backend's term order (`None` for 0).
    fn leading_coefficient(&self) -> Option<Rational>;
    /// The terms, monomials decreasing in the backend's term order.
    fn to_terms(&self) -> Vec<(Monomial, Rational)>;
    fn degree_in(&self, v: u32) -> u32;
    fn total_degree(&self) -> u32;
    /// The `Q(others)[v]` view: `(degree, coefficient)` pairs, degree decreasing,
    /// coefficients free of `v`.
    fn coefficients_in(&self, v: u32) -> Vec<(u32, Self)>;
    /// The value with `f64` values for the variables.
    fn eval_f64(&self, value: &dyn Fn(u32) -> f64) -> f64;
}

impl PolyRing for Poly {
    fn zero() -> Self {
        Poly::zero()
    }
    fn one() -> Self {
        Poly::one()
    }
    fn constant(c: Rational) -> Self {
        Poly::constant(c)
    }
    fn var(v: u32) -> Self {
        Poly::var(v)
    }
    fn add(&self, other: &Self) -> Self {
        Poly::add(self, other)
    }
    fn sub(&self, other: &Self) -> Self {
        Poly::sub(self, other)
    }
    fn mul(&self, other: &Self) -> Self {
        Poly::mul(self, other)
    }
    fn neg(&self) -> Self {
        Poly::neg(self)
    }
    fn scale(&self, k: &Rational) -> Self {
        Poly::scale(self, k)
    }
    fn pow(&self, n: u32) -> Self {
        Poly::pow(self, n)
    }
    fn div_exact(&self, d: &Self) -> Option<Self> {
        Poly::div_exact(self, d)
    }
    fn gcd(&self, other: &Self) -> Self {
        super::gcd(self, other)
    }
    fn is_zero(&self) -> bool {
        Poly::is_zero(self)
    }
    fn as_constant(&self) -> Option<Rational> {
        Poly::as_constant(self)
    }
    fn leading_coefficient(&self) -> Option<Rational> {
        Poly::leading_coefficient(self).cloned()
    }
    fn to_terms(&self) -> Vec<(Monomial, Rational)> {
        self.terms().to_vec()
    }
    fn degree_in(&self, v: u32) -> u32 {
        Poly::degree_in(self, v)
    }
    fn total_degree(&self) -> u32 {
        Poly::total_degree(self)
    }
    fn coefficients_in(&self, v: u32) -> Vec<(u32, Self)> {
        Poly::coefficients_in(self, v)
    }
    fn eval_f64(&self, value: &dyn Fn(u32) -> f64) -> f64 {
        Poly::eval_f64(self, value)
    }
}
