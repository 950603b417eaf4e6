//! [`Normal`]: a rational function over kernel indices, the value a numeric term
//! canonicalises to, with arithmetic under a size budget.
//!
//! A thin layer over [`RatFun`] (numerator and denominator coprime, denominator monic in
//! lex order, so equal values have equal representations for a fixed kernel numbering):
//! every operation first estimates its work and refuses with [`Overflow`] when it would
//! exceed the session's budget, so canonicalisation never hangs on an expansion like
//! `(x1 + ... + x20)^20`. What the kernels mean, and every law beyond field arithmetic
//! (`exp`, powers, ...), is the session's business (`canon::Canon`); this file must not
//! look at terms.

use crate::num::Rational;
use crate::poly::ratfun::RatFun;
use crate::poly::{Monomial, Poly};

/// An expansion would exceed the session's term budget (`CanonConfig::max_terms`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// How many coefficient products one multiplication may compute, per allowed term: a
/// product of two polynomials costs `len(a) * len(b)` even when it collapses to few
/// terms, and that work is what the budget must bound.
const WORK_PER_TERM: usize = 16;

/// The largest exponent of a kernel a canonical form may hold. Exponents are `u32` in
/// `Poly` and add when polynomials multiply; a power beyond this stays an atom (a budget
/// hit), so exponent arithmetic can never overflow (`x^3000000000 * x^3000000000` once
/// wrapped around to a wrong answer).
pub const MAX_EXPONENT: u32 = 1 << 30;

/// The largest exponent in a polynomial.
fn max_exponent(p: &Poly) -> u32 {
    p.terms()
        .iter()
        .flat_map(|(m, _)| m.pairs().iter().map(|&(_, e)| e))
        .max()
        .unwrap_or(0)
}

/// Multiplying polynomials with these largest exponents keeps every exponent in bounds.
fn exponents_fit(a: u32, b: u32) -> Result<(), Overflow> {
    match a.checked_add(b) {
        Some(e) if e <= MAX_EXPONENT => Ok(()),
        _ => Err(Overflow),
    }
}

/// The largest exponent in a canonical form (numerator or denominator).
fn normal_exponent(n: &Normal) -> u32 {
    max_exponent(n.num()).max(max_exponent(n.den()))
}

/// A rational function `num / den` over kernel indices (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Normal {
    rf: RatFun,
}

impl Normal {
    pub fn zero() -> Normal {
        Normal { rf: RatFun::zero() }
    }

    pub fn one() -> Normal {
        Normal { rf: RatFun::one() }
    }

    pub fn constant(c: Rational) -> Normal {
        Normal {
            rf: RatFun::constant(c),
        }
    }

    /// The kernel with index `k`.
    pub fn kernel(k: u32) -> Normal {
        Normal { rf: RatFun::var(k) }
    }

    pub fn from_poly(p: Poly) -> Normal {
        Normal {
            rf: RatFun::from_poly(p),
        }
    }

    /// `num / den` in lowest terms; `None` when `den` is zero.
    pub fn from_parts(num: Poly, den: Poly) -> Option<Normal> {
        RatFun::new(num, den).map(|rf| Normal { rf })
    }

    pub fn num(&self) -> &Poly {
        self.rf.num()
    }

    pub fn den(&self) -> &Poly {
        self.rf.den()
    }

    pub fn into_parts(self) -> (Poly, Poly) {
        self.rf.into_parts()
    }

    pub fn as_ratfun(&self) -> &RatFun {
        &self.rf
    }

    pub fn is_zero(&self) -> bool {
        self.rf.is_zero()
    }

    /// Is the denominator 1?
    pub fn is_polynomial(&self) -> bool {
        self.rf.is_polynomial()
    }

    /// The value, when the function is a constant.
    pub fn as_constant(&self) -> Option<Rational> {
        self.rf.as_constant()
    }

    /// When the function is `c * x_k` for one kernel: `(k, c)`.
    pub fn as_scaled_kernel(&self) -> Option<(u32, Rational)> {
        if !self.is_polynomial() {
            return None;
        }
        match self.num().terms() {
            [(m, c)] => match m.pairs() {
                [(k, 1)] => Some((*k, c.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// Number of terms of numerator and denominator (a size measure for budgets).
    pub fn size(&self) -> usize {
        self.num().terms().len() + self.den().terms().len()
    }

    pub fn neg(&self) -> Normal {
        Normal { rf: self.rf.neg() }
    }

    pub fn scale(&self, k: &Rational) -> Normal {
        if k.is_zero() {
            return Normal::zero();
        }
        if k.is_one() {
            return self.clone();
        }
        let (n, d) = (self.num().scale(k), self.den().clone());
        // scaling the numerator keeps num and den coprime and den monic
        Normal::from_parts(n, d).unwrap_or_else(Normal::zero)
    }

    pub fn add(&self, other: &Normal, max: usize) -> Result<Normal, Overflow> {
        let (a, b) = (self, other);
        let work = if a.den() == b.den() {
            a.num().terms().len() + b.num().terms().len()
        } else {
            let l = |p: &Poly| p.terms().len();
            l(a.num()) * l(b.den()) + l(b.num()) * l(a.den()) + l(a.den()) * l(b.den())
        };
        budget(work, max)?;
        exponents_fit(normal_exponent(a), normal_exponent(b))?;
        let r = Normal {
            rf: self.rf.add(&other.rf),
        };
        check_size(r, max)
    }

    pub fn sub(&self, other: &Normal, max: usize) -> Result<Normal, Overflow> {
        self.add(&other.neg(), max)
    }

    pub fn mul(&self, other: &Normal, max: usize) -> Result<Normal, Overflow> {
        let l = |p: &Poly| p.terms().len();
        let work = l(self.num()) * l(other.num()) + l(self.den()) * l(other.den());
        budget(work, max)?;
        exponents_fit(normal_exponent(self), normal_exponent(other))?;
        let r = Normal {
            rf: self.rf.mul(&other.rf),
        };
        check_size(r, max)
    }

    /// `1 / self`; `None` for zero.
    pub fn recip(&self) -> Option<Normal> {
        self.rf.recip().map(|rf| Normal { rf })
    }

    pub fn div(&self, other: &Normal, max: usize) -> Result<Option<Normal>, Overflow> {
        match other.recip() {
            Some(r) => self.mul(&r, max).map(Some),
            None => Ok(None),
        }
    }

    /// `self^n` for any integer `n`; `None` for `0^n` with negative `n`.
    pub fn pow(&self, n: i64, max: usize) -> Result<Option<Normal>, Overflow> {
        let base = if n < 0 {
            match self.recip() {
                Some(r) => r,
                None => return Ok(None),
            }
        } else {
            self.clone()
        };
        let e = n.unsigned_abs();
        let num = pow_poly(base.num(), e, max)?;
        let den = pow_poly(base.den(), e, max)?;
        // powers of coprime polynomials are coprime, of a monic one monic
        Ok(Normal::from_parts(num, den))
    }
}

fn budget(work: usize, max: usize) -> Result<(), Overflow> {
    if work > max.saturating_mul(WORK_PER_TERM) {
        Err(Overflow)
    } else {
        Ok(())
    }
}

fn check_size(n: Normal, max: usize) -> Result<Normal, Overflow> {
    if n.num().terms().len() > max || n.den().terms().len() > max {
        Err(Overflow)
    } else {
        Ok(n)
    }
}

/// `a * b`, refusing work or results over the budget.
pub(crate) fn mul_poly(a: &Poly, b: &Poly, max: usize) -> Result<Poly, Overflow> {
    budget(a.terms().len().saturating_mul(b.terms().len()), max)?;
    exponents_fit(max_exponent(a), max_exponent(b))?;
    let p = a.mul(b);
    if p.terms().len() > max {
        return Err(Overflow);
    }
    Ok(p)
}

/// `p^e` by repeated squaring under the budget.
pub(crate) fn pow_poly(p: &Poly, e: u64, max: usize) -> Result<Poly, Overflow> {
    if e == 0 {
        return Ok(Poly::one());
    }
    if let [(m, c)] = p.terms() {
        // a single term: exponents scale, no expansion
        let e32 = u32::try_from(e).map_err(|_| Overflow)?;
        let k = c.pow(i64::from(e32)).ok_or(Overflow)?;
        let mut pairs = Vec::with_capacity(m.pairs().len());
        for &(v, d) in m.pairs() {
            let scaled = d.checked_mul(e32).filter(|&x| x <= MAX_EXPONENT);
            pairs.push((v, scaled.ok_or(Overflow)?));
        }
        return Ok(Poly::term(Monomial::from_pairs(pairs), k));
    }
    if e > max as u64 {
        // a sum of at least two terms to a power above the budget has more terms than it
        return Err(Overflow);
    }
    let mut result = Poly::one();
    let mut base = p.clone();
    let mut n = e;
    loop {
        if n & 1 == 1 {
            result = mul_poly(&result, &base, max)?;
        }
        n >>= 1;
        if n == 0 {
            return Ok(result);
        }
        base = mul_poly(&base, &base, max)?;
    }
}
