//! Sparse multivariate polynomials over Q.
//!
//! Variables are plain `u32` indices; what they stand for (a program variable, `exp(..)`,
//! an array element, ...) is the caller's business (the canonical-form layer keeps that
//! table). A [`Poly`] is a list of terms `coefficient * monomial`, no zero coefficients, sorted
//! by [`lex`] order descending, so equal polynomials have equal representations and
//! `==`/`Hash` are structural.
//!
//! This file holds the representation and ring operations. Division, contents and calculus
//! (`div.rs`), the multivariate gcd (`gcd.rs`), rational functions (`ratfun.rs`) and the
//! backend trait (`ring.rs`) build on it in sibling modules. Nothing here knows about terms,
//! and nothing here uses floating point except [`Poly::eval_f64`].

use std::cmp::Ordering;
use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use crate::num::Rational;

mod div;
mod gcd;
mod heu;
mod prune;
pub mod ratfun;
pub mod ring;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod testing;

pub use gcd::{gcd, lcm, MAX_PRS_DEGREE, TRIAL_DIVISION_TERMS};
pub use ratfun::RatFun;
pub use ring::PolyRing;

/// A power product `x_v1^e1 * x_v2^e2 * ...`: `(variable, exponent)` pairs with strictly
/// increasing variables and positive exponents. The empty monomial is 1.
///
/// Exponents are `u32` and add under multiplication without a check (this is the hot
/// loop): callers keep them below 2^31 so sums cannot wrap. The canonical-form layer caps
/// them at `MAX_EXPONENT` (2^30, in `canon`) and keeps larger powers as atoms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Monomial(Vec<(u32, u32)>);

impl Monomial {
    pub fn one() -> Monomial {
        Monomial(Vec::new())
    }

    /// `x_v^e` (`1` when `e == 0`).
    pub fn var(v: u32, e: u32) -> Monomial {
        if e == 0 {
            Monomial::one()
        } else {
            Monomial(vec![(v, e)])
        }
    }

    /// From `(variable, exponent)` pairs in any order; repeated variables add exponents,
    /// zero exponents vanish.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (u32, u32)>) -> Monomial {
        let mut v: Vec<(u32, u32)> = pairs.into_iter().filter(|p| p.1 > 0).collect();
        v.sort_unstable_by_key(|p| p.0);
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(v.len());
        for (x, e) in v {
            match out.last_mut() {
                Some(last) if last.0 == x => last.1 += e,
                _ => out.push((x, e)),
            }
        }
        Monomial(out)
    }

    pub fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    /// The `(variable, exponent)` pairs, variables increasing.
    pub fn pairs(&self) -> &[(u32, u32)] {
        &self.0
    }

    pub fn degree_in(&self, v: u32) -> u32 {
        self.0.iter().find(|p| p.0 == v).map_or(0, |p| p.1)
    }

    pub fn total_degree(&self) -> u32 {
        self.0.iter().map(|p| p.1).sum()
    }

    pub fn mul(&self, other: &Monomial) -> Monomial {
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                Ordering::Less => {
                    out.push(a[i]);
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(b[j]);
                    j += 1;
                }
                Ordering::Equal => {
                    out.push((a[i].0, a[i].1 + b[j].1));
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        Monomial(out)
    }

    /// `self / other` if `other` divides `self`.
    pub fn div(&self, other: &Monomial) -> Option<Monomial> {
        let mut out = Vec::with_capacity(self.0.len());
        let mut j = 0;
        for &(v, e) in &self.0 {
            if j < other.0.len() && other.0[j].0 == v {
                let f = other.0[j].1;
                j += 1;
                match e.cmp(&f) {
                    Ordering::Less => return None,
                    Ordering::Equal => {}
                    Ordering::Greater => out.push((v, e - f)),
                }
            } else if j < other.0.len() && other.0[j].0 < v {
                return None;
            } else {
                out.push((v, e));
            }
        }
        (j == other.0.len()).then_some(Monomial(out))
    }
}

/// Lexicographic order with variable 0 most significant: compare the exponents of the
/// smallest variable first.
pub fn lex(a: &Monomial, b: &Monomial) -> Ordering {
    let (a, b) = (&a.0, &b.0);
    let mut i = 0;
    loop {
        match (a.get(i), b.get(i)) {
            (None, None) => return Ordering::Equal,
            (Some(_), None) => return Ordering::Greater,
            (None, Some(_)) => return Ordering::Less,
            (Some(&(va, ea)), Some(&(vb, eb))) => {
                if va != vb {
                    // the one that has the smaller variable has a positive exponent where
                    // the other has 0
                    return if va < vb {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    };
                }
                match ea.cmp(&eb) {
                    Ordering::Equal => i += 1,
                    o => return o,
                }
            }
        }
    }
}

/// A polynomial over Q: terms with non-zero coefficients, monomials strictly decreasing in
/// [`lex`] order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Poly {
    terms: Vec<(Monomial, Rational)>,
}

impl Poly {
    pub fn zero() -> Poly {
        Poly { terms: Vec::new() }
    }

    pub fn one() -> Poly {
        Poly::constant(Rational::one())
    }

    pub fn constant(c: Rational) -> Poly {
        if c.is_zero() {
            Poly::zero()
        } else {
            Poly {
                terms: vec![(Monomial::one(), c)],
            }
        }
    }

    /// The polynomial `x_v`.
    pub fn var(v: u32) -> Poly {
        Poly {
            terms: vec![(Monomial::var(v, 1), Rational::one())],
        }
    }

    /// `c * m`.
    pub fn term(m: Monomial, c: Rational) -> Poly {
        if c.is_zero() {
            Poly::zero()
        } else {
            Poly {
                terms: vec![(m, c)],
            }
        }
    }

    /// From terms in any order; like monomials are added, zeros dropped.
    pub fn from_terms(terms: impl IntoIterator<Item = (Monomial, Rational)>) -> Poly {
        let mut acc: FxHashMap<Monomial, Rational> = FxHashMap::default();
        for (m, c) in terms {
            match acc.get_mut(&m) {
                Some(d) => *d = &*d + &c,
                None => {
                    acc.insert(m, c);
                }
            }
        }
        let mut terms: Vec<(Monomial, Rational)> =
            acc.into_iter().filter(|(_, c)| !c.is_zero()).collect();
        terms.sort_unstable_by(|a, b| lex(&b.0, &a.0));
        Poly { terms }
    }

    /// From terms whose monomials are pairwise distinct and whose coefficients are non-zero,
    /// in any order (cheaper than [`Poly::from_terms`]: no hashing).
    fn from_distinct_terms(mut terms: Vec<(Monomial, Rational)>) -> Poly {
        terms.sort_unstable_by(|a, b| lex(&b.0, &a.0));
        Poly { terms }
    }

    /// `self + c * m * other` in one merge.
    fn add_mul_term(&self, other: &Poly, m: &Monomial, c: &Rational) -> Poly {
        if c.is_zero() || other.is_zero() {
            return self.clone();
        }
        let a = &self.terms;
        let mut out = Vec::with_capacity(a.len() + other.terms.len());
        let mut i = 0;
        for (n, d) in &other.terms {
            // multiplying by one monomial keeps lex order
            let nm = n.mul(m);
            let nc = d * c;
            while i < a.len() && lex(&a[i].0, &nm) == Ordering::Greater {
                out.push(a[i].clone());
                i += 1;
            }
            if i < a.len() && a[i].0 == nm {
                let s = &a[i].1 + &nc;
                if !s.is_zero() {
                    out.push((nm, s));
                }
                i += 1;
            } else {
                out.push((nm, nc));
            }
        }
        out.extend_from_slice(&a[i..]);
        Poly { terms: out }
    }

    /// The terms, monomials strictly decreasing in [`lex`] order.
    pub fn terms(&self) -> &[(Monomial, Rational)] {
        &self.terms
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value if the polynomial is a constant (zero included).
    pub fn as_constant(&self) -> Option<Rational> {
        match self.terms.as_slice() {
            [] => Some(Rational::zero()),
            [(m, c)] if m.is_one() => Some(c.clone()),
            _ => None,
        }
    }

    /// The leading term in [`lex`] order.
    pub fn leading(&self) -> Option<&(Monomial, Rational)> {
        self.terms.first()
    }

    pub fn degree_in(&self, v: u32) -> u32 {
        self.terms
            .iter()
            .map(|(m, _)| m.degree_in(v))
            .max()
            .unwrap_or(0)
    }

    pub fn total_degree(&self) -> u32 {
        self.terms
            .iter()
            .map(|(m, _)| m.total_degree())
            .max()
            .unwrap_or(0)
    }

    /// The variables that occur, increasing.
    pub fn vars(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .terms
            .iter()
            .flat_map(|(m, _)| m.pairs().iter().map(|p| p.0))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    pub fn add(&self, other: &Poly) -> Poly {
        let (a, b) = (&self.terms, &other.terms);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match lex(&a[i].0, &b[j].0) {
                Ordering::Greater => {
                    out.push(a[i].clone());
                    i += 1;
                }
                Ordering::Less => {
                    out.push(b[j].clone());
                    j += 1;
                }
                Ordering::Equal => {
                    let c = &a[i].1 + &b[j].1;
                    if !c.is_zero() {
                        out.push((a[i].0.clone(), c));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        Poly { terms: out }
    }

    pub fn neg(&self) -> Poly {
        Poly {
            terms: self.terms.iter().map(|(m, c)| (m.clone(), -c)).collect(),
        }
    }

    pub fn sub(&self, other: &Poly) -> Poly {
        self.add(&other.neg())
    }

    pub fn scale(&self, k: &Rational) -> Poly {
        if k.is_zero() {
            return Poly::zero();
        }
        Poly {
            terms: self.terms.iter().map(|(m, c)| (m.clone(), c * k)).collect(),
        }
    }

    /// `self * c * m` for one term.
    pub fn mul_term(&self, m: &Monomial, c: &Rational) -> Poly {
        if c.is_zero() {
            return Poly::zero();
        }
        // multiplying every monomial by the same one keeps lex order
        Poly {
            terms: self.terms.iter().map(|(n, d)| (n.mul(m), d * c)).collect(),
        }
    }

    pub fn mul(&self, other: &Poly) -> Poly {
        if self.is_zero() || other.is_zero() {
            return Poly::zero();
        }
        let (small, large) = if self.terms.len() <= other.terms.len() {
            (self, other)
        } else {
            (other, self)
        };
        if small.terms.len() == 1 {
            let (m, c) = &small.terms[0];
            return large.mul_term(m, c);
        }
        if let (Some(ia), Some(ib)) = (small_integers(self), small_integers(other)) {
            if let Some(p) = self.mul_integers(&ia, other, &ib) {
                return p;
            }
        }
        let mut acc: FxHashMap<Monomial, Rational> = FxHashMap::with_capacity_and_hasher(
            self.terms.len() * other.terms.len(),
            Default::default(),
        );
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                let c = ca * cb;
                // one hash per product: the entry API instead of a lookup then an insert
                match acc.entry(ma.mul(mb)) {
                    Entry::Occupied(mut e) => {
                        let s = e.get() + &c;
                        *e.get_mut() = s;
                    }
                    Entry::Vacant(e) => {
                        e.insert(c);
                    }
                }
            }
        }
        let mut terms: Vec<(Monomial, Rational)> =
            acc.into_iter().filter(|(_, c)| !c.is_zero()).collect();
        terms.sort_unstable_by(|a, b| lex(&b.0, &a.0));
        Poly { terms }
    }

    /// [`Poly::mul`] when every coefficient is an `i64` (`ia`, `ib`, in term order):
    /// accumulates in `i128` without rational normalisation; `None` on overflow (the caller
    /// then takes the general path, which gives the same result).
    fn mul_integers(&self, ia: &[i64], other: &Poly, ib: &[i64]) -> Option<Poly> {
        let mut acc: FxHashMap<Monomial, i128> = FxHashMap::with_capacity_and_hasher(
            self.terms.len() * other.terms.len(),
            Default::default(),
        );
        for ((ma, _), &ca) in self.terms.iter().zip(ia) {
            for ((mb, _), &cb) in other.terms.iter().zip(ib) {
                // |ca * cb| <= 2^126 always fits; only the sums can overflow
                let c = i128::from(ca) * i128::from(cb);
                match acc.entry(ma.mul(mb)) {
                    Entry::Occupied(mut e) => {
                        let s = e.get().checked_add(c)?;
                        *e.get_mut() = s;
                    }
                    Entry::Vacant(e) => {
                        e.insert(c);
                    }
                }
            }
        }
        let mut terms: Vec<(Monomial, Rational)> = acc
            .into_iter()
            .filter(|(_, c)| *c != 0)
            .map(|(m, c)| {
                let q = match i64::try_from(c) {
                    Ok(small) => Rational::from_integer(small),
                    Err(_) => Rational::new(num_rational::BigRational::from_integer(
                        num_bigint::BigInt::from(c),
                    )),
                };
                (m, q)
            })
            .collect();
        terms.sort_unstable_by(|a, b| lex(&b.0, &a.0));
        Some(Poly { terms })
    }

    /// `self^n` by repeated squaring.
    pub fn pow(&self, n: u32) -> Poly {
        let mut result = Poly::one();
        let mut base = self.clone();
        let mut n = n;
        while n > 0 {
            if n & 1 == 1 {
                result = result.mul(&base);
            }
            n >>= 1;
            if n > 0 {
                base = base.mul(&base);
            }
        }
        result
    }

    /// The coefficients of `self` as a polynomial in `v`: `(degree, coefficient)` pairs,
    /// degree decreasing, coefficients free of `v` (the `Q(others)[v]` view).
    pub fn coefficients_in(&self, v: u32) -> Vec<(u32, Poly)> {
        let mut by_degree: FxHashMap<u32, Vec<(Monomial, Rational)>> = FxHashMap::default();
        for (m, c) in &self.terms {
            let d = m.degree_in(v);
            let rest = Monomial::from_pairs(m.pairs().iter().copied().filter(|p| p.0 != v));
            by_degree.entry(d).or_default().push((rest, c.clone()));
        }
        let mut out: Vec<(u32, Poly)> = by_degree
            .into_iter()
            .map(|(d, ts)| (d, Poly::from_terms(ts)))
            .collect();
        out.sort_unstable_by_key(|p| std::cmp::Reverse(p.0));
        out
    }

    /// Evaluate with `f64` values for the variables.
    pub fn eval_f64(&self, value: &dyn Fn(u32) -> f64) -> f64 {
        self.terms
            .iter()
            .map(|(m, c)| {
                m.pairs()
                    .iter()
                    .fold(c.to_f64(), |acc, &(v, e)| acc * value(v).powi(e as i32))
            })
            .sum()
    }
}

/// The coefficients as `i64`s when all are integers of that size.
fn small_integers(p: &Poly) -> Option<Vec<i64>> {
    p.terms
        .iter()
        .map(|(_, c)| {
            let big = c.as_big();
            if big.is_integer() {
                num_traits::ToPrimitive::to_i64(big.numer())
            } else {
                None
            }
        })
        .collect()
}

/// `x0^2*x1 - 3/2*x2` style, terms in lex order (for messages and debugging; the
/// canonical layer prints through terms instead).
impl std::fmt::Display for Poly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("0");
        }
        for (i, (m, c)) in self.terms.iter().enumerate() {
            let (neg, abs) = if c.is_negative() {
                (true, -c)
            } else {
                (false, c.clone())
            };
            match (i, neg) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            let mut first = true;
            if !abs.is_one() || m.is_one() {
                write!(f, "{abs}")?;
                first = false;
            }
            for &(v, e) in m.pairs() {
                if !first {
                    f.write_str("*")?;
                }
                first = false;
                write!(f, "x{v}")?;
                if e > 1 {
                    write!(f, "^{e}")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(v: u32) -> Poly {
        Poly::var(v)
    }

    fn c(n: i64) -> Poly {
        Poly::constant(Rational::from_integer(n))
    }

    #[test]
    fn ring_operations() {
        // (x + 1)^2 = x^2 + 2x + 1
        let p = x(0).add(&c(1)).pow(2);
        let q = x(0)
            .mul(&x(0))
            .add(&x(0).scale(&Rational::from_integer(2)))
            .add(&c(1));
        assert_eq!(p, q);
        // (x + y)(x - y) = x^2 - y^2
        let d = x(0).add(&x(1)).mul(&x(0).sub(&x(1)));
        assert_eq!(d, x(0).pow(2).sub(&x(1).pow(2)));
        assert!(x(0).sub(&x(0)).is_zero());
        assert_eq!(
            c(3).mul(&c(4)).as_constant(),
            Some(Rational::from_integer(12))
        );
    }

    #[test]
    fn expanding_a_sum_of_eight_to_the_fourth_gives_330_terms() {
        let s = (0..8).fold(Poly::zero(), |acc, v| acc.add(&x(v)));
        assert_eq!(s.pow(4).terms().len(), 330);
    }

    #[test]
    fn monomial_division_and_order() {
        let a = Monomial::from_pairs([(0, 2), (2, 1)]);
        let b = Monomial::from_pairs([(0, 1)]);
        assert_eq!(a.div(&b), Some(Monomial::from_pairs([(0, 1), (2, 1)])));
        assert_eq!(b.div(&a), None);
        assert_eq!(lex(&a, &b), Ordering::Greater);
        assert_eq!(
            lex(&Monomial::var(1, 5), &Monomial::var(0, 1)),
            Ordering::Less
        );
    }

    #[test]
    fn coefficients_in_a_variable() {
        // x^2 y + 3x + y  in x: [(2, y), (1, 3), (0, y)]
        let p = x(0)
            .pow(2)
            .mul(&x(1))
            .add(&x(0).scale(&Rational::from_integer(3)))
            .add(&x(1));
        let cs = p.coefficients_in(0);
        assert_eq!(cs.len(), 3);
        assert_eq!(cs[0], (2, x(1)));
        assert_eq!(cs[1], (1, c(3)));
        assert_eq!(cs[2], (0, x(1)));
    }
}
