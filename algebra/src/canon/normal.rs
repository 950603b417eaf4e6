//! [`Normal`]: a rational function over kernel indices, the value a numeric term
//! canonicalises to, with arithmetic under a size budget.
//!
//! It exists so the canonical-form layer has one small type to compute with while the
//! polynomial layer grows (multivariate gcd lives in `poly`): a numerator and a
//! denominator [`Poly`], the denominator never zero. Kept invariants: a zero numerator
//! has denominator 1; common monomial factors and common constants are cancelled (the
//! denominator's leading coefficient in [`crate::poly::lex`] order is 1). What the
//! kernels mean, and every law beyond field arithmetic (`exp`, powers, ...), is the
//! session's business (`canon::Canon`); this file must not look at terms.

use std::cmp::Ordering;

use crate::num::Rational;
use crate::poly::{Monomial, Poly};

/// An expansion would exceed the session's term budget (`CanonConfig::max_terms`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// How many coefficient products one multiplication may compute, per allowed term: a
/// product of two polynomials costs `len(a) * len(b)` even when it collapses to few
/// terms, and that work is what the budget must bound.
const WORK_PER_TERM: usize = 16;

/// A rational function `num / den` over kernel indices (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Normal {
    num: Poly,
    den: Poly,
}

impl Normal {
    pub fn zero() -> Normal {
        Normal::constant(Rational::zero())
    }

    pub fn one() -> Normal {
        Normal::constant(Rational::one())
    }

    pub fn constant(c: Rational) -> Normal {
        Normal {
            num: Poly::constant(c),
            den: Poly::one(),
        }
    }

    /// The kernel with index `k`.
    pub fn kernel(k: u32) -> Normal {
        Normal {
            num: Poly::var(k),
            den: Poly::one(),
        }
    }

    pub fn from_poly(p: Poly) -> Normal {
        Normal {
            num: p,
            den: Poly::one(),
        }
    }

    /// `num / den`, normalised; `None` when `den` is zero.
    pub fn from_parts(num: Poly, den: Poly) -> Option<Normal> {
        if den.is_zero() {
            return None;
        }
        Some(reduce(num, den))
    }

    pub fn num(&self) -> &Poly {
        &self.num
    }

    pub fn den(&self) -> &Poly {
        &self.den
    }

    pub fn into_parts(self) -> (Poly, Poly) {
        (self.num, self.den)
    }

    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    /// Is the denominator 1?
    pub fn is_polynomial(&self) -> bool {
        is_one(&self.den)
    }

    /// The value, when the function is a constant.
    pub fn as_constant(&self) -> Option<Rational> {
        let n = self.num.as_constant()?;
        let d = self.den.as_constant()?;
        Some(&n * &d.recip()?)
    }

    /// When the function is `c * x_k` for one kernel: `(k, c)`.
    pub fn as_scaled_kernel(&self) -> Option<(u32, Rational)> {
        if !self.is_polynomial() {
            return None;
        }
        match self.num.terms() {
            [(m, c)] => match m.pairs() {
                [(k, 1)] => Some((*k, c.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// Number of terms of numerator and denominator (a size measure for budgets).
    pub fn size(&self) -> usize {
        self.num.terms().len() + self.den.terms().len()
    }

    pub fn neg(&self) -> Normal {
        Normal {
            num: self.num.neg(),
            den: self.den.clone(),
        }
    }

    pub fn scale(&self, k: &Rational) -> Normal {
        if k.is_zero() {
            return Normal::zero();
        }
        Normal {
            num: self.num.scale(k),
            den: self.den.clone(),
        }
    }

    pub fn add(&self, other: &Normal, max: usize) -> Result<Normal, Overflow> {
        if self.is_zero() {
            return Ok(other.clone());
        }
        if other.is_zero() {
            return Ok(self.clone());
        }
        if self.den == other.den {
            let num = self.num.add(&other.num);
            check_size(&num, max)?;
            return Ok(reduce(num, self.den.clone()));
        }
        let a = mul_poly(&self.num, &other.den, max)?;
        let b = mul_poly(&other.num, &self.den, max)?;
        let num = a.add(&b);
        check_size(&num, max)?;
        let den = mul_poly(&self.den, &other.den, max)?;
        Ok(reduce(num, den))
    }

    pub fn sub(&self, other: &Normal, max: usize) -> Result<Normal, Overflow> {
        self.add(&other.neg(), max)
    }

    pub fn mul(&self, other: &Normal, max: usize) -> Result<Normal, Overflow> {
        if self.is_zero() || other.is_zero() {
            return Ok(Normal::zero());
        }
        let num = mul_poly(&self.num, &other.num, max)?;
        if self.is_polynomial() && other.is_polynomial() {
            return Ok(Normal {
                num,
                den: Poly::one(),
            });
        }
        let den = mul_poly(&self.den, &other.den, max)?;
        Ok(reduce(num, den))
    }

    /// `1 / self`; `None` for zero.
    pub fn recip(&self) -> Option<Normal> {
        Normal::from_parts(self.den.clone(), self.num.clone())
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
        let num = pow_poly(&base.num, e, max)?;
        let den = pow_poly(&base.den, e, max)?;
        // powers of a reduced fraction are reduced
        Ok(Some(Normal { num, den }))
    }
}

fn is_one(p: &Poly) -> bool {
    matches!(p.terms(), [(m, c)] if m.is_one() && c.is_one())
}

fn check_size(p: &Poly, max: usize) -> Result<(), Overflow> {
    if p.terms().len() > max {
        Err(Overflow)
    } else {
        Ok(())
    }
}

/// `a * b`, refusing work or results over the budget.
pub(crate) fn mul_poly(a: &Poly, b: &Poly, max: usize) -> Result<Poly, Overflow> {
    let work = a.terms().len().saturating_mul(b.terms().len());
    if work > max.saturating_mul(WORK_PER_TERM) {
        return Err(Overflow);
    }
    let p = a.mul(b);
    check_size(&p, max)?;
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
            pairs.push((v, d.checked_mul(e32).ok_or(Overflow)?));
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

/// Cancel the monomial content common to `num` and `den` and make the denominator's
/// leading coefficient 1.
fn reduce(num: Poly, den: Poly) -> Normal {
    if num.is_zero() {
        return Normal::zero();
    }
    if is_one(&den) {
        return Normal { num, den };
    }
    // the common monomial factor: for each variable, the least exponent over all terms
    let mut common: Option<Vec<(u32, u32)>> = None;
    for (m, _) in num.terms().iter().chain(den.terms()) {
        common = Some(match common {
            None => m.pairs().to_vec(),
            Some(acc) => intersect_min(&acc, m.pairs()),
        });
        if matches!(&common, Some(c) if c.is_empty()) {
            break;
        }
    }
    let common = Monomial::from_pairs(common.unwrap_or_default());
    let lc = den
        .leading()
        .map(|(_, c)| c.clone())
        .unwrap_or_else(Rational::one);
    if common.is_one() && lc.is_one() {
        return Normal { num, den };
    }
    let k = lc.recip().unwrap_or_else(Rational::one);
    let divide = |p: &Poly| {
        if common.is_one() {
            p.scale(&k)
        } else {
            Poly::from_terms(
                p.terms()
                    .iter()
                    .map(|(m, c)| (m.div(&common).unwrap_or_else(|| m.clone()), c * &k)),
            )
        }
    };
    Normal {
        num: divide(&num),
        den: divide(&den),
    }
}

/// Pairwise minimum of exponents of the variables present in both sorted lists.
fn intersect_min(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                out.push((a[i].0, a[i].1.min(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out
}
