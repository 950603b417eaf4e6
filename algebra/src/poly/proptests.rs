//! Property tests for the polynomial layer (issue 3 asks for them): ring axioms, exact
//! division, the gcd (divides both, maximal, normalised), rational-function normal forms,
//! and rational-function arithmetic against `f64` evaluation at random points.
//!
//! Polynomials are small (three variables, degree <= 2 per variable, few terms) and case
//! counts modest, so the whole file runs in well under a second.

use proptest::prelude::*;

use super::gcd::{gcd_with, Method};
use super::{gcd, lcm, Monomial, Poly, RatFun};
use crate::num::Rational;

/// A coefficient: a small integer, sometimes halved or thirded.
fn coefficient() -> impl Strategy<Value = Rational> {
    (
        -4i64..=4,
        prop_oneof![Just(1i64), Just(1), Just(2), Just(3)],
    )
        .prop_map(|(n, d)| {
            Rational::from_integer(n) * Rational::from_integer(d).recip().unwrap_or(Rational::one())
        })
}

/// A polynomial in `x0, x1, x2` with up to `n` terms.
fn poly(n: usize) -> impl Strategy<Value = Poly> {
    prop::collection::vec((coefficient(), 0u32..3, 0u32..3, 0u32..3), 0..=n).prop_map(|ts| {
        Poly::from_terms(
            ts.into_iter()
                .map(|(c, a, b, d)| (Monomial::from_pairs([(0, a), (1, b), (2, d)]), c)),
        )
    })
}

/// A polynomial with integer coefficients in four variables, higher degrees.
fn wide(n: usize) -> impl Strategy<Value = Poly> {
    let term = (-5i64..=5, 0u32..4, 0u32..4, 0u32..3, 0u32..2);
    prop::collection::vec(term, 1..=n).prop_map(|ts| {
        Poly::from_terms(ts.into_iter().map(|(c, a, b, d, e)| {
            let m = Monomial::from_pairs([(0, a), (1, b), (2, d), (3, e)]);
            (m, Rational::from_integer(c))
        }))
    })
}

fn nonzero(n: usize) -> impl Strategy<Value = Poly> {
    poly(n).prop_filter("non-zero", |p| !p.is_zero())
}

fn point() -> impl Strategy<Value = [f64; 3]> {
    [-2.0f64..2.0, -2.0f64..2.0, -2.0f64..2.0]
}

fn at(x: [f64; 3]) -> impl Fn(u32) -> f64 {
    move |v| x.get(v as usize).copied().unwrap_or(0.0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ring_axioms(a in poly(4), b in poly(4), c in poly(4)) {
        prop_assert_eq!(a.add(&b), b.add(&a));
        prop_assert_eq!(a.mul(&b), b.mul(&a));
        prop_assert_eq!(a.add(&b).add(&c), a.add(&b.add(&c)));
        prop_assert_eq!(a.mul(&b).mul(&c), a.mul(&b.mul(&c)));
        prop_assert_eq!(a.mul(&b.add(&c)), a.mul(&b).add(&a.mul(&c)));
        prop_assert!(a.sub(&a).is_zero());
        prop_assert_eq!(a.mul(&Poly::one()), a.clone());
        prop_assert_eq!(a.pow(3), a.mul(&a).mul(&a));
        // the sorted, zero-free representation is kept by every operation
        for r in [a.add(&b), a.mul(&b), a.sub(&c)] {
            prop_assert!(r.terms().windows(2).all(|w| super::lex(&w[0].0, &w[1].0).is_gt()));
            prop_assert!(r.terms().iter().all(|t| !t.1.is_zero()));
        }
    }

    #[test]
    fn exact_division_inverts_multiplication(a in poly(4), b in nonzero(4)) {
        prop_assert_eq!(a.mul(&b).div_exact(&b), Some(a.clone()));
        // and a non-multiple is refused
        let off = a.mul(&b).add(&Poly::one());
        if b.as_constant().is_none() {
            prop_assert_eq!(off.div_exact(&b), None);
        }
    }

    #[test]
    fn gcd_divides_both_and_is_normalised(a in poly(4), b in poly(4)) {
        let g = gcd(&a, &b);
        prop_assert_eq!(g.normalize(), g.clone());
        prop_assert_eq!(gcd(&b, &a), g.clone());
        if !g.is_zero() {
            prop_assert!(a.div_exact(&g).is_some(), "{} does not divide {}", g, a);
            prop_assert!(b.div_exact(&g).is_some(), "{} does not divide {}", g, b);
        }
    }

    #[test]
    fn gcd_is_maximal(a in poly(3), b in poly(3), c in nonzero(3)) {
        // gcd(ac, bc) = c gcd(a, b) up to a constant: maximality and exactness at once
        let g = gcd(&a.mul(&c), &b.mul(&c));
        prop_assert!(g.div_exact(&c.normalize()).is_some(), "{} not in {}", c, g);
        if !(a.is_zero() && b.is_zero()) {
            prop_assert_eq!(g, c.mul(&gcd(&a, &b)).normalize());
        }
    }

    #[test]
    fn heuristic_gcd_agrees_with_the_prs(a in wide(5), b in wide(5), c in wide(4)) {
        // the heuristic (tried first) and the subresultant/primitive PRS are independent
        let (a, b) = (a.mul(&c), b.mul(&c));
        prop_assert_eq!(gcd(&a, &b), gcd_with(&a, &b, Method::Prs));
    }

    #[test]
    fn lcm_is_a_common_multiple(a in nonzero(3), b in nonzero(3)) {
        let l = lcm(&a, &b);
        prop_assert!(l.div_exact(&a).is_some());
        prop_assert!(l.div_exact(&b).is_some());
        prop_assert_eq!(l.mul(&gcd(&a, &b)), a.mul(&b).normalize());
    }

    #[test]
    fn pseudo_division_identity(a in poly(4), d in nonzero(3), v in 0u32..3) {
        let (q, r) = a.pseudo_div_rem_in(&d, v).unwrap_or_default();
        let e = (a.degree_in(v) + 1).saturating_sub(d.degree_in(v));
        let l = d.leading_coefficient_in(v).pow(e);
        prop_assert_eq!(l.mul(&a), q.mul(&d).add(&r));
        prop_assert!(r.is_zero() || r.degree_in(v) < d.degree_in(v));
    }

    #[test]
    fn ratfun_normal_forms_are_unique(a in poly(3), b in nonzero(3), c in nonzero(3)) {
        let x = RatFun::new(a.clone(), b.clone());
        let y = RatFun::new(a.mul(&c), b.mul(&c));
        prop_assert_eq!(&x, &y);
        let x = x.unwrap_or_else(RatFun::zero);
        prop_assert!(x.den().leading_coefficient().is_some_and(Rational::is_one));
        prop_assert!(gcd(x.num(), x.den()).as_constant().is_some() || x.is_zero());
    }

    #[test]
    fn ratfun_arithmetic_agrees_with_f64(
        a in poly(3), b in nonzero(2), c in nonzero(3), d in nonzero(2), pt in point(),
    ) {
        let (x, y) = (RatFun::new(a.clone(), b.clone()), RatFun::new(c.clone(), d.clone()));
        let (Some(x), Some(y)) = (x, y) else { return Err(TestCaseError::fail("zero den")) };
        let e = at(pt);
        let (fa, fb, fc, fd) = (a.eval_f64(&e), b.eval_f64(&e), c.eval_f64(&e), d.eval_f64(&e));
        // skip points near a pole of either operand or of `x / y`
        prop_assume!(fb.abs() > 1e-3 && fd.abs() > 1e-3 && fc.abs() > 1e-3);
        let (fx, fy) = (fa / fb, fc / fd);
        prop_assert!(close(x.eval_f64(&e), fx));
        prop_assert!(close(x.add(&y).eval_f64(&e), fx + fy));
        prop_assert!(close(x.sub(&y).eval_f64(&e), fx - fy));
        prop_assert!(close(x.mul(&y).eval_f64(&e), fx * fy));
        let q = x.div(&y);
        prop_assert!(q.is_some());
        prop_assert!(q.is_some_and(|q| close(q.eval_f64(&e), fx / fy)));
        prop_assert!(close(x.neg().eval_f64(&e), -fx));
        prop_assert!(x.pow(2).is_some_and(|p| close(p.eval_f64(&e), fx * fx)));
        // and the exact identities
        prop_assert_eq!(x.add(&y).sub(&y), x.clone());
        prop_assert_eq!(x.mul(&y).div(&y), Some(x.clone()));
    }

    #[test]
    fn calculus_rules(a in poly(3), b in poly(3), s in poly(2), v in 0u32..3) {
        // product rule, and substitution is a ring homomorphism
        let lhs = a.mul(&b).derivative(v);
        prop_assert_eq!(lhs, a.derivative(v).mul(&b).add(&a.mul(&b.derivative(v))));
        prop_assert_eq!(
            a.mul(&b).substitute(v, &s),
            a.substitute(v, &s).mul(&b.substitute(v, &s))
        );
    }
}
