//! Rational functions over Q: [`RatFun`], a quotient of polynomials kept in lowest terms.
//!
//! Why: the canonical form of a numeric expression is a rational function over kernels
//! (see the module doc of `canon`), and two equal expressions must get equal forms. Every constructor and
//! operation therefore returns the normal form: numerator and denominator coprime (divided
//! by their gcd) and the denominator's leading coefficient in the backend's term order
//! (lex for [`Poly`]) equal to 1, constants moved into the numerator. So structural
//! equality (`==`, `Hash`) is mathematical equality. The denominator is never zero:
//! constructors and `div`/`recip`/`pow` return `None` instead.
//!
//! ```
//! use slic_algebra::poly::{Poly, RatFun};
//! let (x, one) = (Poly::var(0), Poly::one());
//! // (x^2 - 1) / (x - 1) = x + 1
//! let r = RatFun::new(x.mul(&x).sub(&one), x.sub(&one));
//! assert_eq!(r, Some(RatFun::from_poly(x.add(&one))));
//! ```
//!
//! Generic over the [`PolyRing`] backend (default [`Poly`]); nothing here depends on how
//! polynomials are stored. No floating point except [`RatFun::eval_f64`].

use super::{Poly, PolyRing};
use crate::num::Rational;

/// `num / den` in lowest terms with a monic denominator (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RatFun<P = Poly> {
    num: P,
    den: P,
}

fn is_one<P: PolyRing>(p: &P) -> bool {
    p.as_constant().is_some_and(|c| c.is_one())
}

impl<P: PolyRing> RatFun<P> {
    /// `num / den` reduced to lowest terms; `None` when `den` is zero.
    pub fn new(num: P, den: P) -> Option<RatFun<P>> {
        if den.is_zero() {
            return None;
        }
        Some(RatFun::reduce(num, den))
    }

    /// Reduces `num / den` for a non-zero `den`.
    fn reduce(num: P, den: P) -> RatFun<P> {
        if num.is_zero() {
            return RatFun::zero();
        }
        let g = num.gcd(&den);
        if is_one(&g) {
            return RatFun::monic(num, den);
        }
        match (num.div_exact(&g), den.div_exact(&g)) {
            (Some(n), Some(d)) => RatFun::monic(n, d),
            // a gcd divides both by definition; keeping the fraction unreduced is the
            // meaning-preserving answer should a backend ever break that
            _ => RatFun::monic(num, den),
        }
    }

    /// Scales so that the denominator's leading coefficient is 1 (`den` coprime to `num`
    /// and non-zero).
    fn monic(num: P, den: P) -> RatFun<P> {
        match den.leading_coefficient().and_then(|c| c.recip()) {
            Some(k) if !k.is_one() => RatFun {
                num: num.scale(&k),
                den: den.scale(&k),
            },
            _ => RatFun { num, den },
        }
    }

    pub fn from_poly(p: P) -> RatFun<P> {
        RatFun {
            num: p,
            den: P::one(),
        }
    }

    pub fn constant(c: Rational) -> RatFun<P> {
        RatFun::from_poly(P::constant(c))
    }

    pub fn zero() -> RatFun<P> {
        RatFun::from_poly(P::zero())
    }

    pub fn one() -> RatFun<P> {
        RatFun::from_poly(P::one())
    }

    /// The variable `x_v`.
    pub fn var(v: u32) -> RatFun<P> {
        RatFun::from_poly(P::var(v))
    }

    pub fn num(&self) -> &P {
        &self.num
    }

    pub fn den(&self) -> &P {
        &self.den
    }

    /// `(numerator, denominator)`.
    pub fn into_parts(self) -> (P, P) {
        (self.num, self.den)
    }

    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    /// Whether the denominator is 1.
    pub fn is_polynomial(&self) -> bool {
        is_one(&self.den)
    }

    /// The numerator when the denominator is 1.
    pub fn as_polynomial(&self) -> Option<&P> {
        self.is_polynomial().then_some(&self.num)
    }

    /// The value when this is a constant.
    pub fn as_constant(&self) -> Option<Rational> {
        if self.is_polynomial() {
            self.num.as_constant()
        } else {
            None
        }
    }

    pub fn add(&self, other: &RatFun<P>) -> RatFun<P> {
        if self.is_zero() {
            return other.clone();
        }
        if other.is_zero() {
            return self.clone();
        }
        let (a, b, c, d) = (&self.num, &self.den, &other.num, &other.den);
        if is_one(b) && is_one(d) {
            return RatFun::from_poly(a.add(c));
        }
        if b == d {
            // (a + c) / b: only b's factors can cancel
            return RatFun::reduce(a.add(c), b.clone());
        }
        let g = b.gcd(d);
        if is_one(&g) {
            // b, d coprime and each coprime to its numerator: (ad + cb) / bd is reduced,
            // and bd is monic as b and d are
            return RatFun {
                num: a.mul(d).add(&c.mul(b)),
                den: b.mul(d),
            };
        }
        // Henrici: with b = g b', d = g d', only factors of g can cancel from a d' + c b'
        match (b.div_exact(&g), d.div_exact(&g)) {
            (Some(b1), Some(d1)) => {
                let t = a.mul(&d1).add(&c.mul(&b1));
                if t.is_zero() {
                    return RatFun::zero();
                }
                let g2 = t.gcd(&g);
                match (t.div_exact(&g2), d.div_exact(&g2)) {
                    (Some(n), Some(d2)) if !is_one(&g2) => RatFun::monic(n, b1.mul(&d2)),
                    _ => RatFun::monic(t, b1.mul(d)),
                }
            }
            _ => RatFun::reduce(a.mul(d).add(&c.mul(b)), b.mul(d)),
        }
    }

    pub fn neg(&self) -> RatFun<P> {
        RatFun {
            num: self.num.neg(),
            den: self.den.clone(),
        }
    }

    pub fn sub(&self, other: &RatFun<P>) -> RatFun<P> {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &RatFun<P>) -> RatFun<P> {
        if self.is_zero() || other.is_zero() {
            return RatFun::zero();
        }
        let (a, b, c, d) = (&self.num, &self.den, &other.num, &other.den);
        if is_one(b) && is_one(d) {
            return RatFun::from_poly(a.mul(c));
        }
        // cross-cancel: gcd(a, d) and gcd(c, b); the rest is coprime already
        let (a, d) = cancel(a, d);
        let (c, b) = cancel(c, b);
        RatFun::monic(a.mul(&c), b.mul(&d))
    }

    /// `self / other`; `None` when `other` is zero.
    pub fn div(&self, other: &RatFun<P>) -> Option<RatFun<P>> {
        Some(self.mul(&other.recip()?))
    }

    /// `1 / self`; `None` for zero.
    pub fn recip(&self) -> Option<RatFun<P>> {
        if self.is_zero() {
            return None;
        }
        Some(RatFun::monic(self.den.clone(), self.num.clone()))
    }

    /// `self^n` for any integer `n`; `None` for a negative power of zero. The cost grows
    /// with `|n|`: callers bound exponents (the canonical layer's expansion budget).
    pub fn pow(&self, n: i32) -> Option<RatFun<P>> {
        let base = if n < 0 { self.recip()? } else { self.clone() };
        let e = n.unsigned_abs();
        // coprime stays coprime and a monic denominator stays monic under powers
        Some(RatFun {
            num: base.num.pow(e),
            den: base.den.pow(e),
        })
    }

    /// The value with `f64` values for the variables (±inf or NaN at a pole).
    pub fn eval_f64(&self, value: &dyn Fn(u32) -> f64) -> f64 {
        self.num.eval_f64(value) / self.den.eval_f64(value)
    }
}

/// `(x / gcd(x, y), y / gcd(x, y))`.
fn cancel<P: PolyRing>(x: &P, y: &P) -> (P, P) {
    if is_one(y) || is_one(x) {
        return (x.clone(), y.clone());
    }
    let g = x.gcd(y);
    if is_one(&g) {
        return (x.clone(), y.clone());
    }
    match (x.div_exact(&g), y.div_exact(&g)) {
        (Some(a), Some(b)) => (a, b),
        _ => (x.clone(), y.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::testing::{p, q};

    fn rf(num: &str, den: &str) -> RatFun {
        RatFun::new(p(num), p(den)).expect("non-zero denominator")
    }

    /// `num / den` normalises to `expect_num / expect_den` (`None`: rejected).
    fn check(num: &str, den: &str, expect: Option<(&str, &str)>) {
        let got = RatFun::new(p(num), p(den)).map(RatFun::into_parts);
        assert_eq!(got, expect.map(|(n, d)| (p(n), p(d))), "({num}) / ({den})");
    }

    #[rustfmt::skip]
    #[test]
    fn normalisation() {
        check("x^2 - 1", "x - 1", Some(("x + 1", "1")));
        check("2*x + 2", "4*x + 4", Some(("1/2", "1")));
        check("1", "2*x", Some(("1/2", "x")));
        check("x", "-x^2 + x", Some(("-1", "x - 1")));
        check("0", "x + 1", Some(("0", "1")));
        check("x", "0", None);
        check("x*y + y", "x^2*y - y", Some(("1", "x - 1")));
        check("3*x + 1", "2*y - 1", Some(("3/2*x + 1/2", "y - 1/2")));
        check("(x + y)^2*(x - z)", "(x - z)*(x*y + 3)*3", Some(("1/3*x^2 + 2/3*x*y + 1/3*y^2", "x*y + 3")));
    }

    /// `op(a, b) == expect` where fractions are written `"num | den"`.
    fn r(s: &str) -> RatFun {
        match s.split_once('|') {
            Some((n, d)) => rf(n, d),
            None => rf(s, "1"),
        }
    }

    #[rustfmt::skip]
    #[test]
    fn arithmetic() {
        assert_eq!(r("1 | x + 1").add(&r("1 | x - 1")), r("2*x | x^2 - 1"));
        assert_eq!(r("x | x - 1").sub(&r("1 | x - 1")), r("1"));
        assert_eq!(r("x^2 - 1 | x").mul(&r("x | x + 1")), r("x - 1"));
        assert_eq!(r("x | x*y + y").add(&r("1 | y")), r("2*x + 1 | x*y + y"));
        assert_eq!(r("1 | x*(x + 1)").add(&r("1 | (x + 1)*(x + 2)")), r("2 | x*(x + 2)"));
        assert_eq!(r("1 | x - 1").sub(&r("1 | x - 1")), r("0"));
        assert_eq!(r("x | y").div(&r("x^2 | y^2")), Some(r("y | x")));
        assert_eq!(r("x").div(&r("0")), None);
        assert_eq!(r("x | x + 1").pow(-2), Some(r("(x + 1)^2 | x^2")));
        assert_eq!(r("2*x | 3").pow(3), Some(r("8/27*x^3")));
        assert_eq!(r("x").pow(0), Some(r("1")));
        assert_eq!(r("0").pow(-1), None);
        assert_eq!(r("0").recip(), None);
        assert_eq!(r("2*x + 1 | 3").recip(), Some(r("3/2 | x + 1/2")));
        assert_eq!(r("x | y").neg(), r("-x | y"));
        assert_eq!(RatFun::var(1).mul(&RatFun::constant(q("2"))), r("2*y"));
    }

    #[rustfmt::skip]
    #[test]
    fn views() {
        assert_eq!(r("2*x + 2 | 4*x + 4").as_constant(), Some(q("1/2")));
        assert_eq!(r("x | 2").as_constant(), None);
        assert!(r("x^2 - 1 | x - 1").is_polynomial());
        assert!(!r("1 | x").is_polynomial());
        assert_eq!(r("x | 2").as_polynomial(), Some(&p("1/2*x")));
        assert!(RatFun::<Poly>::zero().is_zero());
        assert_eq!(RatFun::<Poly>::one(), r("x | x"));
        let v = r("x^2 + y | x - y").eval_f64(&|v| if v == 0 { 3.0 } else { 1.0 });
        assert!((v - 5.0).abs() < 1e-12);
    }
}
