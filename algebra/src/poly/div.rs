//! Division, contents and calculus on [`Poly`]: exact division, (pseudo-)division with
//! remainder in a main variable, contents and primitive parts (over Q and with respect to a
//! variable), normalisation, derivatives and substitution.
//!
//! These are the building blocks of the gcd (`gcd.rs`) and of rational functions
//! (`ratfun.rs`). Every operation is exact; none panics, and every loop is bounded by a
//! degree (exact division checks the quotient's degree bounds before each step, so it also
//! stops quickly when the divisor does not divide).

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Zero};

use super::gcd::{gcd, MAX_PRS_DEGREE};
use super::{Monomial, Poly};
use crate::num::Rational;

/// A polynomial in a main variable `v` as a dense vector: the coefficient of `v^i` (free of
/// `v`) at index `i`, the last entry non-zero; empty for 0.
pub(super) type Dense = Vec<Poly>;

/// Drops the zero coefficients at the top of a dense polynomial.
pub(super) fn trim(a: &mut Dense) {
    while a.last().is_some_and(Poly::is_zero) {
        a.pop();
    }
}

/// The dense degree (`None` for zero).
pub(super) fn dense_degree(a: &Dense) -> Option<usize> {
    a.len().checked_sub(1)
}

/// Pseudo-division of dense polynomials in one variable (Knuth's algorithm R): with `n`
/// the degree of `b`, `m >= n` the degree of `a` and `l` the leading coefficient of `b`,
/// `l^(m-n+1) a = q b + r` with `deg r < n`. Returns `(q, r)`; `q` is only computed when
/// `want_q` (else empty). `b` must be non-zero; when `deg a < deg b` the result is `(0, a)`.
pub(super) fn pseudo_div_dense(a: &Dense, b: &Dense, want_q: bool) -> (Dense, Dense) {
    let (Some(m), Some(n)) = (dense_degree(a), dense_degree(b)) else {
        return (Vec::new(), a.clone());
    };
    if m < n {
        return (Vec::new(), a.clone());
    }
    let lb = &b[n];
    let lb_is_one = lb.as_constant().is_some_and(|c| c.is_one());
    let mut u = a.clone();
    let mut q = if want_q {
        vec![Poly::zero(); m - n + 1]
    } else {
        Vec::new()
    };
    for k in (0..=m - n).rev() {
        let top = std::mem::take(&mut u[n + k]);
        if want_q {
            q[k] = top.mul(&lb.pow(k as u32));
        }
        for j in (0..n + k).rev() {
            if !lb_is_one {
                u[j] = u[j].mul(lb);
            }
            if j >= k {
                u[j] = u[j].sub(&top.mul(&b[j - k]));
            }
        }
    }
    u.truncate(n);
    trim(&mut u);
    trim(&mut q);
    (q, u)
}

/// The gcd and lcm of the numerators and denominators of some rationals (`None` when all
/// are zero): `g / l` is the positive rational content.
pub(super) fn integer_content<'a>(cs: impl IntoIterator<Item = &'a Rational>) -> Option<Rational> {
    let mut g = BigInt::zero();
    let mut l = BigInt::one();
    for c in cs {
        if c.is_zero() {
            continue;
        }
        let big = c.as_big();
        if !g.is_one() {
            g = g.gcd(big.numer());
        }
        if !big.denom().is_one() {
            l = l.lcm(big.denom());
        }
    }
    (!g.is_zero()).then(|| Rational::new(BigRational::new(g, l)))
}

impl Poly {
    /// The dense view in `v` (see [`Dense`]).
    pub(super) fn dense_in(&self, v: u32) -> Dense {
        let mut buckets: Vec<Vec<(Monomial, Rational)>> = Vec::new();
        for (m, c) in &self.terms {
            let d = m.degree_in(v) as usize;
            if buckets.len() <= d {
                buckets.resize_with(d + 1, Vec::new);
            }
            let rest = if d == 0 {
                m.clone()
            } else {
                Monomial(m.0.iter().copied().filter(|p| p.0 != v).collect())
            };
            buckets[d].push((rest, c.clone()));
        }
        buckets.into_iter().map(Poly::from_distinct_terms).collect()
    }

    /// The inverse of [`Poly::dense_in`] (coefficients must be free of `v`).
    pub(super) fn from_dense_in(cs: &[Poly], v: u32) -> Poly {
        let mut terms = Vec::with_capacity(cs.iter().map(|c| c.terms.len()).sum());
        for (i, c) in cs.iter().enumerate() {
            let vm = Monomial::var(v, i as u32);
            for (m, k) in &c.terms {
                terms.push((m.mul(&vm), k.clone()));
            }
        }
        Poly::from_distinct_terms(terms)
    }

    /// `self / d` when `d` divides `self` exactly in Q[x..], else `None` (also for `d = 0`).
    ///
    /// Repeatedly divides the leading term in [`super::lex`] order by the leading term of
    /// `d`. Each quotient term must stay within the quotient's degree bounds (per variable
    /// and total), so a divisor that does not divide is rejected after few steps.
    ///
    /// Cost: one step per quotient term, so at most the number of monomials within those
    /// bounds; callers that only probe use [`Poly::div_exact_within`].
    pub fn div_exact(&self, d: &Poly) -> Option<Poly> {
        self.div_exact_within(d, usize::MAX)
    }

    /// [`Poly::div_exact`], giving up (`None`) after `max_terms` quotient terms.
    pub fn div_exact_within(&self, d: &Poly, max_terms: usize) -> Option<Poly> {
        let (dm, dc) = d.leading()?;
        if self.is_zero() {
            return Some(Poly::zero());
        }
        let dinv = dc.recip()?;
        if d.terms.len() == 1 {
            // dividing by one term keeps lex order
            let mut terms = Vec::with_capacity(self.terms.len());
            for (m, c) in &self.terms {
                terms.push((m.div(dm)?, c * &dinv));
            }
            return Some(Poly { terms });
        }
        // degree bounds of the quotient: deg_v(q) = deg_v(self) - deg_v(d), likewise total
        let total = self.total_degree().checked_sub(d.total_degree())?;
        let mut bound = self.degrees();
        for (v, e) in d.degrees() {
            let i = bound.binary_search_by_key(&v, |p| p.0).ok()?;
            bound[i].1 = bound[i].1.checked_sub(e)?;
        }
        let mut r = self.clone();
        let mut q = Vec::new();
        while let Some((rm, rc)) = r.leading() {
            if q.len() >= max_terms {
                return None;
            }
            let qm = rm.div(dm)?;
            if qm.total_degree() > total {
                return None;
            }
            for &(v, e) in qm.pairs() {
                let i = bound.binary_search_by_key(&v, |p| p.0).ok()?;
                if e > bound[i].1 {
                    return None;
                }
            }
            let qc = -(rc * &dinv);
            r = r.add_mul_term(d, &qm, &qc);
            q.push((qm, -qc));
        }
        // quotient monomials come out strictly decreasing, as the remainder's leading ones do
        Some(Poly { terms: q })
    }

    /// Pseudo-division in the main variable `v`: with `l` the leading coefficient of `d` in
    /// `v` and `e = max(deg_v self - deg_v d + 1, 0)`, returns `(q, r)` with
    /// `l^e * self = q * d + r` and `deg_v r < deg_v d`. `None` when `d` is zero.
    ///
    /// The work is linear in the degree: `None` too above [`super::MAX_PRS_DEGREE`].
    pub fn pseudo_div_rem_in(&self, d: &Poly, v: u32) -> Option<(Poly, Poly)> {
        if d.is_zero() || self.degree_in(v).max(d.degree_in(v)) > MAX_PRS_DEGREE {
            return None;
        }
        let (q, r) = pseudo_div_dense(&self.dense_in(v), &d.dense_in(v), true);
        Some((Poly::from_dense_in(&q, v), Poly::from_dense_in(&r, v)))
    }

    /// The pseudo-remainder in `v` (see [`Poly::pseudo_div_rem_in`]).
    pub fn pseudo_rem_in(&self, d: &Poly, v: u32) -> Option<Poly> {
        if d.is_zero() || self.degree_in(v).max(d.degree_in(v)) > MAX_PRS_DEGREE {
            return None;
        }
        let (_, r) = pseudo_div_dense(&self.dense_in(v), &d.dense_in(v), false);
        Some(Poly::from_dense_in(&r, v))
    }

    /// Division with remainder in the main variable `v`: `(q, r)` with `self = q * d + r`
    /// and `deg_v r < deg_v d`, when every step's division by the leading coefficient of `d`
    /// in `v` is exact (always when that coefficient is a constant, e.g. univariate over
    /// Q). `None` when `d` is zero or a step is not exact, or when a degree in `v` exceeds
    /// [`super::MAX_PRS_DEGREE`] (the work is linear in the degree).
    pub fn div_rem_in(&self, d: &Poly, v: u32) -> Option<(Poly, Poly)> {
        if self.degree_in(v).max(d.degree_in(v)) > MAX_PRS_DEGREE {
            return None;
        }
        let b = d.dense_in(v);
        let n = dense_degree(&b)?;
        let lb = &b[n];
        let mut u = self.dense_in(v);
        let mut q: Dense = Vec::new();
        while let Some(m) = dense_degree(&u).filter(|&m| m >= n) {
            let t = u[m].div_exact(lb)?;
            let k = m - n;
            for j in 0..n {
                u[j + k] = u[j + k].sub(&t.mul(&b[j]));
            }
            u[m] = Poly::zero();
            trim(&mut u);
            if q.len() <= k {
                q.resize(k + 1, Poly::zero());
            }
            q[k] = t;
        }
        Some((Poly::from_dense_in(&q, v), Poly::from_dense_in(&u, v)))
    }

    /// Each variable that occurs with its highest exponent, variables increasing.
    pub fn degrees(&self) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (m, _) in &self.terms {
            for &(v, e) in m.pairs() {
                match out.binary_search_by_key(&v, |p| p.0) {
                    Ok(i) => out[i].1 = out[i].1.max(e),
                    Err(i) => out.insert(i, (v, e)),
                }
            }
        }
        out
    }

    /// The coefficient of the highest power of `v` (a polynomial free of `v`; 0 for 0).
    pub fn leading_coefficient_in(&self, v: u32) -> Poly {
        let d = self.degree_in(v);
        let terms = self
            .terms
            .iter()
            .filter(|(m, _)| m.degree_in(v) == d)
            .map(|(m, c)| {
                let rest = Monomial(m.0.iter().copied().filter(|p| p.0 != v).collect());
                (rest, c.clone())
            })
            .collect();
        Poly::from_distinct_terms(terms)
    }

    /// The leading coefficient in [`super::lex`] order (`None` for 0).
    pub fn leading_coefficient(&self) -> Option<&Rational> {
        self.leading().map(|t| &t.1)
    }

    /// The rational `c` such that `self / c` has coprime integer coefficients and a positive
    /// leading coefficient in [`super::lex`] order (1 for the zero polynomial, so that
    /// `self == c * self.normalize()` always holds).
    pub fn rational_content(&self) -> Rational {
        let Some(c) = integer_content(self.terms.iter().map(|t| &t.1)) else {
            return Rational::one();
        };
        match self.leading_coefficient() {
            Some(l) if l.is_negative() => -c,
            _ => c,
        }
    }

    /// `self` divided by its [`Poly::rational_content`]: coprime integer coefficients,
    /// positive leading coefficient in lex order (0 stays 0). Two polynomials differ by a
    /// non-zero rational factor exactly when their normal forms are equal.
    pub fn normalize(&self) -> Poly {
        match self.rational_content().recip() {
            Some(k) if !k.is_one() => self.scale(&k),
            _ => self.clone(),
        }
    }

    /// The content in `v`: the normalised gcd of the coefficients of `self` as a polynomial
    /// in `v` (polynomials in the other variables); 0 for 0. Rational factors are units
    /// here, so the content of a polynomial with a constant coefficient is 1.
    pub fn content_in(&self, v: u32) -> Poly {
        let mut cs: Vec<Poly> = self.coefficients_in(v).into_iter().map(|p| p.1).collect();
        // small coefficients first: the gcd collapses to 1 sooner
        cs.sort_by_key(|c| c.terms.len());
        let mut g = Poly::zero();
        for c in &cs {
            g = gcd(&g, c);
            if g.as_constant().is_some() {
                break;
            }
        }
        g
    }

    /// `self` divided by its [`Poly::content_in`] `v` (0 for 0).
    pub fn primitive_part_in(&self, v: u32) -> Poly {
        let c = self.content_in(v);
        if c.is_zero() || c.as_constant().is_some() {
            return self.clone();
        }
        // the content divides every coefficient, so this division is exact
        self.div_exact(&c).unwrap_or_else(|| self.clone())
    }

    /// The partial derivative in `v`.
    pub fn derivative(&self, v: u32) -> Poly {
        // lowering the exponent of v in every monomial that has it keeps lex order
        let terms = self
            .terms
            .iter()
            .filter_map(|(m, c)| {
                let e = m.degree_in(v);
                (e > 0).then(|| {
                    let rest =
                        m.0.iter()
                            .filter_map(|&(w, f)| match w == v {
                                true => (f > 1).then_some((w, f - 1)),
                                false => Some((w, f)),
                            })
                            .collect();
                    (Monomial(rest), c * &Rational::from_integer(i64::from(e)))
                })
            })
            .collect();
        Poly { terms }
    }

    /// `self` with the variable `v` replaced by `p` (Horner's scheme over the powers of
    /// `v` that occur).
    pub fn substitute(&self, v: u32, p: &Poly) -> Poly {
        let cs = self.coefficients_in(v);
        let mut acc = Poly::zero();
        let mut iter = cs.iter().peekable();
        while let Some((d, c)) = iter.next() {
            acc = acc.add(c);
            let next = iter.peek().map_or(0, |n| n.0);
            acc = acc.mul(&p.pow(d - next));
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use crate::poly::testing::{p, q};
    use crate::poly::Poly;

    fn check_div(a: &str, d: &str, expect: Option<&str>) {
        let got = p(a).div_exact(&p(d));
        assert_eq!(got, expect.map(p), "({a}) / ({d})");
    }

    #[rustfmt::skip]
    #[test]
    fn exact_division() {
        check_div("x^2 - 1", "x - 1", Some("x + 1"));
        check_div("x^2 - 1", "x - 2", None);
        check_div("x^2*y + x*y^2", "x*y", Some("x + y"));
        check_div("x^2*y + x*y^2", "x*z", None);
        check_div("0", "x", Some("0"));
        check_div("x", "0", None);
        check_div("x^3 - y^3", "x - y", Some("x^2 + x*y + y^2"));
        check_div("1/2*x + 1", "2*x + 4", Some("1/4"));
        check_div("x", "x^2", None);
        check_div("x + y", "y", None);
        check_div("(x + y + z)^3*(x*y - 1)", "(x*y - 1)*(x + y + z)", Some("(x + y + z)^2"));
        check_div("x^5 - y^10", "x - y^2", Some("x^4 + x^3*y^2 + x^2*y^4 + x*y^6 + y^8"));
        check_div("x^5 - y^10 + 1", "x - y^2", None);
        check_div("3", "6", Some("1/2"));
    }

    /// `l^e a = q d + r` with `deg_v r < deg_v d`, and `r` as expected.
    fn check_pseudo(a: &str, d: &str, v: u32, rem: &str) {
        let (a, d) = (p(a), p(d));
        let (qu, r) = a.pseudo_div_rem_in(&d, v).expect("non-zero divisor");
        let e = (a.degree_in(v) + 1).saturating_sub(d.degree_in(v));
        let l = d.leading_coefficient_in(v).pow(e);
        assert_eq!(l.mul(&a), qu.mul(&d).add(&r), "{a} by {d}");
        assert!(r.is_zero() || r.degree_in(v) < d.degree_in(v));
        assert_eq!(r, p(rem));
        assert_eq!(a.pseudo_rem_in(&d, v), Some(r));
    }

    #[rustfmt::skip]
    #[test]
    fn pseudo_division() {
        check_pseudo("x^2 + y", "y*x + 1", 0, "y^3 + 1");
        check_pseudo("x^3 + 2*x + 1", "x - 1", 0, "4");
        check_pseudo("x^2 + y", "y*x + 1", 1, "x^3 - 1");
        check_pseudo("x + 1", "x^2", 0, "x + 1");
        check_pseudo("y^2 + 1", "x*y + 1", 1, "x^2 + 1");
        assert_eq!(p("x").pseudo_div_rem_in(&Poly::zero(), 0), None);
    }

    fn check_div_rem(a: &str, d: &str, v: u32, expect: Option<(&str, &str)>) {
        let got = p(a).div_rem_in(&p(d), v);
        assert_eq!(
            got,
            expect.map(|(qq, r)| (p(qq), p(r))),
            "({a}) divrem ({d})"
        );
    }

    #[rustfmt::skip]
    #[test]
    fn division_with_remainder() {
        check_div_rem("x^3 + 2*x + 1", "x - 1", 0, Some(("x^2 + x + 3", "4")));
        check_div_rem("x^3 + 2*x + 1", "2*x - 1", 0, Some(("1/2*x^2 + 1/4*x + 9/8", "17/8")));
        check_div_rem("x^2*y + 1", "x*y + 1", 0, None);
        check_div_rem("x^2*y + x + y", "x*y + 1", 0, Some(("x", "y")));
        check_div_rem("x + 1", "x^2", 0, Some(("0", "x + 1")));
        check_div_rem("x", "0", 0, None);
    }

    #[rustfmt::skip]
    #[test]
    fn contents_and_normal_forms() {
        assert_eq!(p("x*y + y").content_in(0), p("y"));
        assert_eq!(p("2*x*y + 4*y^2").content_in(0), p("y"));
        assert_eq!(p("2*x*y + 4*y^2").primitive_part_in(0), p("2*x + 4*y"));
        assert_eq!(p("x*y + x + 1").content_in(0), p("1"));
        assert_eq!(p("(y^2 - 1)*x^2 + (y + 1)*z").content_in(0), p("y + 1"));
        assert_eq!(p("(y^2 - 1)*x^2 + (y + 1)*z").primitive_part_in(0), p("(y - 1)*x^2 + z"));
        assert_eq!(p("0").content_in(0), p("0"));
        assert_eq!(p("-2/3*x + 4/9").rational_content(), q("-2/9"));
        assert_eq!(p("-2/3*x + 4/9").normalize(), p("3*x - 2"));
        assert_eq!(p("-y + x").normalize(), p("x - y"));
        assert_eq!(p("-5").normalize(), p("1"));
        assert_eq!(p("0").normalize(), p("0"));
        assert_eq!(p("0").rational_content(), q("1"));
    }

    #[rustfmt::skip]
    #[test]
    fn calculus_and_views() {
        assert_eq!(p("x^3*y + 2*x*y^2 + y").derivative(0), p("3*x^2*y + 2*y^2"));
        assert_eq!(p("x^3*y + 2*x*y^2 + y").derivative(1), p("x^3 + 4*x*y + 1"));
        assert_eq!(p("x^3*y").derivative(2), p("0"));
        assert_eq!(p("x^2 + y").substitute(0, &p("y + 1")), p("y^2 + 3*y + 1"));
        assert_eq!(p("x*y").substitute(1, &p("x")), p("x^2"));
        assert_eq!(p("x^5 + x^2*z + 1").substitute(0, &p("2")), p("4*z + 33"));
        assert_eq!(p("x^2*y + x^2 + x*y").leading_coefficient_in(0), p("y + 1"));
        assert_eq!(p("x^2*y + z").leading_coefficient_in(1), p("x^2"));
        assert_eq!(p("x^2*y + y^3*z").degrees(), vec![(0, 2), (1, 3), (2, 1)]);
        assert_eq!(p("-3*x + 1").leading_coefficient(), Some(&q("-3")));
    }
}
