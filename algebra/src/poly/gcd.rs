//! The multivariate polynomial gcd over Q, and the lcm built on it.
//!
//! Why: rational functions stay in lowest terms by dividing numerator and denominator by
//! their gcd, so canonical forms of quotients depend on this being right.
//!
//! How (the classical recursive algorithm, tuned for the small degrees that dominate):
//! 1. trivial cases: a zero or constant operand, equal operands;
//! 2. the monomial content (the largest monomial dividing every term) is split off both
//!    operands, and the gcd of the two monomials taken directly;
//! 3. a variable that occurs in one operand only: the gcd divides each coefficient of that
//!    operand in that variable, so fold the gcd over those coefficients (fewer variables);
//! 4. variables that univariate images modulo a prime prove absent from the gcd
//!    (`prune.rs`): fold the gcd over the coefficients in those variables; then the
//!    heuristic gcd (`heu.rs`: evaluation at large integers, checked by division);
//! 5. when it gives up, choose a common main variable `v` of least degree, take contents in `v`
//!    (recursively: gcd of the coefficients), and run a pseudo-remainder sequence on the
//!    primitive parts: the primitive PRS with integer content removal when the
//!    coefficients are rationals (univariate), the subresultant PRS otherwise; the
//!    primitive part of its last non-zero element times the gcd of the contents is the gcd.
//!
//! Every recursive call has strictly fewer variables in the union of its operands, and
//! every PRS step lowers the degree in `v`, so the algorithm terminates; recursion runs on a
//! growing stack. Degrees (in any variable) above [`MAX_PRS_DEGREE`] are not fed to a PRS
//! (its dense representation, step count and coefficient exponents grow with them): there
//! only trial division is tried (up to [`TRIAL_DIVISION_TERMS`] quotient terms), and the gcd
//! reported is 1 when it fails. A result of 1 is always safe (a fraction that is merely not
//! fully reduced); the same fallback covers a division that is exact in
//! theory but fails (which would be a bug: the proptests check divisibility).
//!
//! Results are normalised ([`Poly::normalize`]): coprime integer coefficients, positive
//! leading coefficient in lex order; `gcd(0, 0) = 0`, `gcd(a, 0) = normalize(a)`.

use super::div::{dense_degree, integer_content, pseudo_div_dense, Dense};
use super::heu::gcd_heuristic;
use super::prune;
use super::{Monomial, Poly};
use crate::num::Rational;

/// The largest degree (in any variable) a pseudo-remainder sequence is run on.
pub const MAX_PRS_DEGREE: u32 = 2000;

/// The most quotient terms a trial division (beyond [`MAX_PRS_DEGREE`]) may produce.
pub const TRIAL_DIVISION_TERMS: usize = 10_000;

/// The normalised greatest common divisor of `a` and `b` over Q (see the module doc).
pub fn gcd(a: &Poly, b: &Poly) -> Poly {
    gcd_with(a, b, Method::Heuristic)
}

/// Whether to try the heuristic gcd (`heu.rs`) before a PRS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    Heuristic,
    /// PRS only: the reference the heuristic is tested against.
    #[cfg_attr(not(test), allow(dead_code))]
    Prs,
}

pub(super) fn gcd_with(a: &Poly, b: &Poly, method: Method) -> Poly {
    gcd_rec(a, b, method).unwrap_or_else(Poly::one)
}

/// The normalised least common multiple (0 when either operand is 0).
pub fn lcm(a: &Poly, b: &Poly) -> Poly {
    if a.is_zero() || b.is_zero() {
        return Poly::zero();
    }
    let g = gcd(a, b);
    match a.div_exact(&g) {
        Some(q) => q.mul(b).normalize(),
        None => a.mul(b).normalize(),
    }
}

fn gcd_rec(a: &Poly, b: &Poly, method: Method) -> Option<Poly> {
    crate::stack::grow(|| gcd_inner(a, b, method))
}

fn gcd_inner(a: &Poly, b: &Poly, method: Method) -> Option<Poly> {
    if a.is_zero() {
        return Some(b.normalize());
    }
    if b.is_zero() {
        return Some(a.normalize());
    }
    if a.as_constant().is_some() || b.as_constant().is_some() {
        return Some(Poly::one());
    }
    let (a, b) = (a.normalize(), b.normalize());
    if a == b {
        return Some(a);
    }
    let (ma, a1) = split_monomial_content(&a)?;
    let (mb, b1) = split_monomial_content(&b)?;
    let m = monomial_gcd(&ma, &mb);
    let g = if a1.as_constant().is_some() || b1.as_constant().is_some() {
        Poly::one()
    } else {
        gcd_no_monomial(&a1, &b1, method)?
    };
    Some(g.mul_term(&m, &Rational::one()))
}

/// The largest monomial dividing every term, and the quotient.
fn split_monomial_content(a: &Poly) -> Option<(Monomial, Poly)> {
    let mut terms = a.terms.iter();
    let mut m = terms.next()?.0.clone();
    for (n, _) in terms {
        if m.is_one() {
            break;
        }
        m = monomial_gcd(&m, n);
    }
    if m.is_one() {
        return Some((m, a.clone()));
    }
    let q = a.div_exact(&Poly::term(m.clone(), Rational::one()))?;
    Some((m, q))
}

/// The gcd of two monomials: common variables with the smaller exponent.
fn monomial_gcd(a: &Monomial, b: &Monomial) -> Monomial {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let (a, b) = (a.pairs(), b.pairs());
    while let (Some(&(va, ea)), Some(&(vb, eb))) = (a.get(i), b.get(j)) {
        match va.cmp(&vb) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push((va, ea.min(eb)));
                i += 1;
                j += 1;
            }
        }
    }
    Monomial(out)
}

/// The gcd of normalised, non-constant operands without monomial content.
fn gcd_no_monomial(a: &Poly, b: &Poly, method: Method) -> Option<Poly> {
    if a == b {
        return Some(a.clone());
    }
    // normalised operands have integer coefficients, as the heuristic and the modular
    // pruning need
    if method == Method::Heuristic {
        if let Some(g) = gcd_in_fewer_variables(a, b, method) {
            return g;
        }
        if let Some(g) = gcd_heuristic(a, b) {
            return Some(g.normalize());
        }
    }
    let (da, db) = (a.degrees(), b.degrees());
    let has = |ds: &[(u32, u32)], v: u32| ds.binary_search_by_key(&v, |p| p.0).ok();
    if let Some(&(v, _)) = da.iter().find(|p| has(&db, p.0).is_none()) {
        return gcd_with_coefficients(b, a, v, method);
    }
    if let Some(&(v, _)) = db.iter().find(|p| has(&da, p.0).is_none()) {
        return gcd_with_coefficients(a, b, v, method);
    }
    // same variables on both sides: the main variable is a common one of least degree
    let (_, v) = da
        .iter()
        .filter_map(|&(v, ea)| has(&db, v).map(|j| (ea.max(db[j].1), v)))
        .min()?;
    // PRS coefficients multiply, so every variable's degree counts, not only v's
    let highest = da.iter().chain(&db).map(|p| p.1).max().unwrap_or(0);
    if highest > MAX_PRS_DEGREE {
        return trial_division(a, b);
    }
    let (pa, pb) = (a.dense_in(v), b.dense_in(v));
    let (ca, cb) = (content_dense(&pa, method)?, content_dense(&pb, method)?);
    let c = gcd_rec(&ca, &cb, method)?;
    let (pa, pb) = (divide_dense(pa, &ca)?, divide_dense(pb, &cb)?);
    let (pa, pb) = if pa.len() >= pb.len() {
        (pa, pb)
    } else {
        (pb, pa)
    };
    let rational = |p: &Dense| p.iter().all(|k| k.as_constant().is_some());
    let g = if rational(&pa) && rational(&pb) {
        primitive_prs(pa, pb)?
    } else {
        subresultant_prs(pa, pb)?
    };
    let gc = content_dense(&g, method)?;
    let g = divide_dense(g, &gc)?;
    Some(Poly::from_dense_in(&g, v).mul(&c).normalize())
}

/// Step 3b: when univariate images prove that the gcd involves only some of the
/// variables (`prune.rs`), it is the gcd of the operands' coefficients in the others:
/// `Some(answer)`; `None` when no variable could be ruled out. Only worth it with several
/// variables (the images cost a pass over both operands per common variable).
fn gcd_in_fewer_variables(a: &Poly, b: &Poly, method: Method) -> Option<Option<Poly>> {
    let mut all = a.vars();
    all.extend(b.vars());
    all.sort_unstable();
    all.dedup();
    if all.len() < 3 {
        return None;
    }
    let keep = prune::gcd_variables(a, b);
    if keep.is_empty() {
        return Some(Some(Poly::one()));
    }
    if keep.len() == all.len() {
        return None;
    }
    let mut cs = prune::coefficients_outside(a, &keep);
    cs.extend(prune::coefficients_outside(b, &keep));
    cs.sort_by_key(|c| c.terms.len());
    let mut g = Poly::zero();
    for c in &cs {
        g = match gcd_rec(&g, c, method) {
            Some(g) => g,
            None => return Some(None),
        };
        if g.as_constant().is_some() {
            return Some(Some(Poly::one()));
        }
    }
    Some(Some(g))
}

/// The gcd when one operand divides the other, else 1 (the fallback for large degrees).
fn trial_division(a: &Poly, b: &Poly) -> Option<Poly> {
    // a wrong guess fails on the degree bounds before any work
    if a.div_exact_within(b, TRIAL_DIVISION_TERMS).is_some() {
        Some(b.clone())
    } else {
        b.div_exact_within(a, TRIAL_DIVISION_TERMS)
            .map(|_| a.clone())
    }
}

/// `gcd(g, a)` where `v` occurs in `a` but not in `g`: the gcd divides every coefficient
/// of `a` in `v`, so fold it over them.
fn gcd_with_coefficients(g: &Poly, a: &Poly, v: u32, method: Method) -> Option<Poly> {
    let mut cs: Vec<Poly> = a.coefficients_in(v).into_iter().map(|p| p.1).collect();
    cs.sort_by_key(|c| c.terms.len());
    let mut g = g.clone();
    for c in &cs {
        g = gcd_rec(&g, c, method)?;
        if g.as_constant().is_some() {
            break;
        }
    }
    Some(g)
}

/// The gcd of the coefficients (normalised; 1 when one of them is a constant).
fn content_dense(p: &Dense, method: Method) -> Option<Poly> {
    let mut cs: Vec<&Poly> = p.iter().filter(|c| !c.is_zero()).collect();
    cs.sort_by_key(|c| c.terms.len());
    let mut g = Poly::zero();
    for c in cs {
        g = gcd_rec(&g, c, method)?;
        if g.as_constant().is_some() {
            return Some(Poly::one());
        }
    }
    Some(g)
}

/// Each coefficient divided (exactly) by `c`.
fn divide_dense(p: Dense, c: &Poly) -> Option<Dense> {
    if c.as_constant().is_some() {
        return Some(p);
    }
    p.iter().map(|k| k.div_exact(c)).collect()
}

/// The primitive PRS for rational coefficients: each remainder is scaled to coprime
/// integers. `a` and `b` non-zero, `deg a >= deg b`; returns the last non-zero remainder.
fn primitive_prs(mut a: Dense, mut b: Dense) -> Option<Dense> {
    loop {
        if dense_degree(&b)? == 0 {
            return Some(vec![Poly::one()]);
        }
        let (_, r) = pseudo_div_dense(&a, &b, false);
        match dense_degree(&r) {
            None => return Some(b),
            Some(0) => return Some(vec![Poly::one()]),
            Some(_) => {}
        }
        let k = integer_content(r.iter().flat_map(|c| c.terms.iter().map(|t| &t.1)))?;
        let k = k.recip()?;
        a = b;
        b = r.iter().map(|c| c.scale(&k)).collect();
    }
}

/// The subresultant PRS (Collins, Brown): remainders divided by `g h^delta`, an exact
/// division that keeps coefficient growth polynomial without computing contents.
/// `a` and `b` non-zero, `deg a >= deg b`; returns the last non-zero remainder.
fn subresultant_prs(mut a: Dense, mut b: Dense) -> Option<Dense> {
    let mut g = Poly::one();
    let mut h = Poly::one();
    loop {
        let (m, n) = (dense_degree(&a)?, dense_degree(&b)?);
        if n == 0 {
            return Some(vec![Poly::one()]);
        }
        let delta = u32::try_from(m.checked_sub(n)?).ok()?;
        let (_, r) = pseudo_div_dense(&a, &b, false);
        match dense_degree(&r) {
            None => return Some(b),
            Some(0) => return Some(vec![Poly::one()]),
            Some(_) => {}
        }
        let divisor = g.mul(&h.pow(delta));
        a = b;
        b = r
            .iter()
            .map(|c| c.div_exact(&divisor))
            .collect::<Option<Dense>>()?;
        g = a.last()?.clone();
        h = match delta {
            0 => h,
            1 => g.clone(),
            _ => g.pow(delta).div_exact(&h.pow(delta - 1))?,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::testing::p;

    /// `gcd(a, b) == expect` exactly (so normalised), both ways round.
    fn check(a: &str, b: &str, expect: &str) {
        let g = gcd(&p(a), &p(b));
        assert_eq!(g, p(expect), "gcd({a}, {b}) = {g}, expected {expect}");
        assert_eq!(gcd(&p(b), &p(a)), g, "gcd({b}, {a}) differs");
    }

    #[rustfmt::skip]
    const GCDS: &[(&str, &str, &str)] = &[
        // zero and constants
        ("0", "0", "0"),
        ("0", "-2*x - 4", "x + 2"),
        ("-1/2*x*y", "0", "x*y"),
        ("6", "4", "1"),
        ("3", "x + 1", "1"),
        ("0", "7", "1"),
        // univariate
        ("x^2 - 1", "x^2 - 2*x + 1", "x - 1"),
        ("x^3 - 1", "x^2 - 1", "x - 1"),
        ("x^4 - 1", "x^6 - 1", "x^2 - 1"),
        ("x^2 + 1", "x^2 - 1", "1"),
        ("(x + 1)^3*(x - 2)", "(x + 1)^2*(x + 3)", "x^2 + 2*x + 1"),
        ("(x^5 + 3*x + 1)*(x^3 - 2)", "(x^5 + 3*x + 1)*(x^4 + 1)", "x^5 + 3*x + 1"),
        ("-x + 1", "x^2 - 1", "x - 1"),
        ("(2*x - 1)^10", "(2*x - 1)^7*(x + 5)^3", "(2*x - 1)^7"),
        // rational coefficients
        ("1/2*x^2 - 1/2", "1/3*x + 1/3", "x + 1"),
        ("x - 1/2", "4*x^2 - 1", "2*x - 1"),
        ("2/3*x + 4/3*y", "-5*x - 10*y", "x + 2*y"),
        // content only, monomials
        ("6*x^2 + 12*x", "4*x + 8", "x + 2"),
        ("2*x*y + 2*y", "y^2", "y"),
        ("x*y + y", "x*z + z", "x + 1"),
        ("x^3*y", "x*y^2*z", "x*y"),
        ("x^2*y + x^2", "x*y", "x"),
        // bivariate
        ("x^2 - y^2", "x^2 + 2*x*y + y^2", "x + y"),
        ("(x + y)*(x - 2*y)^2", "(x - 2*y)*(x + 3*y)", "x - 2*y"),
        ("(x*y^3 + y + 1)*(x^2 + y^2)", "(x*y^3 + y + 1)*(x - y)^3", "x*y^3 + y + 1"),
        ("x^2 + y^2", "x + y", "1"),
        ("(x*y - 1)^2*(x + y)", "(x*y - 1)*(x - y)", "x*y - 1"),
        // a variable on one side only
        ("(y + 1)*(x + 1)", "(y + 1)*(z + 2)", "y + 1"),
        ("(x + 1)*(y + 1)", "z + 1", "1"),
        // trivariate and more
        ("(x + y + z)*(x*y - z)", "(x + y + z)*(x - z)^2", "x + y + z"),
        ("(x*y + z)^2*(y - z)", "(x*y + z)*(y - z)^2*(x + 1)", "(x*y + z)*(y - z)"),
        ("(x*z - y^2)*(x + y*z + 1)^2", "(x + y*z + 1)*(x*z - y^2)^3*(z - 1)", "(x*z - y^2)*(x + y*z + 1)"),
        ("(x + y)*(z + w)", "(x + y)*(z - w)", "x + y"),
        ("(x^2*w - y*z)*(w + 1)", "(x^2*w - y*z)*(x + z)*(y - w)", "x^2*w - y*z"),
        // larger: the heuristic answers these in milliseconds where a PRS took a second
        ("(x + y + z + 1)^5*(x - y*z + 2)^2", "(x + y + z + 1)^5*(x*y - z + 3)^3", "(x + y + z + 1)^5"),
        ("(x^3*y - 2*z^2 + x + 1)^3*(x + y^2)", "(x^3*y - 2*z^2 + x + 1)^2*(y - z)^4", "(x^3*y - 2*z^2 + x + 1)^2"),
        ("(x + y)^10 + 1", "(x - y)^10 + 3", "1"),
        // equal up to a constant
        ("2*x + 2*y", "-3*x - 3*y", "x + y"),
    ];

    #[test]
    fn gcd_table() {
        for &(a, b, e) in GCDS {
            check(a, b, e);
        }
    }

    #[rustfmt::skip]
    const LCMS: &[(&str, &str, &str)] = &[
        ("x^2 - 1", "x - 1", "x^2 - 1"),
        ("x", "y", "x*y"),
        ("0", "x", "0"),
        ("2*x + 2", "3*x - 3", "x^2 - 1"),
        ("x^2*y", "x*y^3", "x^2*y^3"),
        ("6", "4", "1"),
    ];

    #[test]
    fn lcm_table() {
        for &(a, b, e) in LCMS {
            assert_eq!(lcm(&p(a), &p(b)), p(e), "lcm({a}, {b})");
        }
    }

    #[test]
    fn high_degrees_fall_back_to_trial_division() {
        // beyond MAX_PRS_DEGREE no PRS runs: one dividing the other is still found
        let big = format!("x^{} - 1", MAX_PRS_DEGREE + 2);
        check(&big, "x - 1", "x - 1");
        check(&big, &format!("x^{} - 1", MAX_PRS_DEGREE + 2), &big);
        // and huge degrees stop before any dense work (here the true gcd is 1 as well):
        // a dense step on degree 4e9 would exhaust memory rather than return
        check("x^4000000000 + 1", "x^3 + 1", "1");
        check("x^4000000000*y + 1", "x^3*y^2 + x + y", "1");
    }
}
