//! The holonomic representation of a continuous factor: a linear ODE with polynomial
//! coefficients, computed compositionally (log-derivatives of products, quotients,
//! powers, `exp` of rational functions; sums of two such terms give order 2).
//!
//! The factor is read into its canonical form (a rational function over kernels, see
//! `slic_algebra::canon`) and split into *hyperexponential parts*: the terms of its
//! numerator grouped by the transcendental kernels that mention the variable (`e^s`,
//! `b^r`), each part's log-derivative computed kernel by kernel ([`crate::diff`]). One
//! part (after merging parts with equal log-derivatives) gives the first-order operator
//! `a1 f' = a0 f` with `a0 / a1` that log-derivative; two parts give order 2; more is an
//! honest [`Miss::Order`]. A denominator must be a single hyperexponential part
//! (`1 / (1 + e^x)` is not holonomic). Recognition uses [`first_order`] (the
//! session-local log-derivative) and never the printed [`Ode`].

use slic_algebra::assume::Context;
use slic_algebra::canon::{Canon, Normal};
use slic_algebra::poly::{lcm, Monomial, Poly};
use slic_algebra::{Rational, Store, TermId, Type, VarId};

use crate::diff::{self, Calculus, Role, MAX_TERMS};
use crate::recognise::Miss;

/// `Σ_k coeffs[k] · f^(k)(x) = 0`; coefficients are terms polynomial in `x` over
/// Q(other symbols), with no common factor, the highest one with a positive leading
/// rational coefficient. Order 1 is `coeffs = [-a0, a1]` for `a1 f' = a0 f`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ode {
    pub coeffs: Vec<TermId>,
}

impl Ode {
    pub fn order(&self) -> usize {
        self.coeffs.len().saturating_sub(1)
    }
}

/// The structure of a factor in one `canon` session (its `Normal`s are session-local).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Analysis {
    /// `f' = r f` with `r` rational in the variable.
    Order1 { r: Normal },
    /// `f = g1 + g2` with `g_i' = r_i g_i`, `r1 != r2` rational in the variable.
    Order2 { r1: Normal, r2: Normal },
}

/// A first-order operator in one `canon` session: `f' = r f`, and `a1 f' = a0 f` with
/// `a0 / a1 = r` polynomials over the session's kernels (normalised as in [`Ode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstOrder {
    /// The session's kernel index of the variable.
    pub x: u32,
    /// The log-derivative `f'/f`, a rational function of kernel `x` over kernels free of
    /// the variable.
    pub r: Normal,
    pub a1: Poly,
    pub a0: Poly,
    /// The factor's canonical form.
    pub f: Normal,
}

/// One hyperexponential part of a polynomial, by its log-derivative.
struct Part {
    ld: Normal,
}

/// The hyperexponential parts of `p` (see the module doc), before merging.
fn parts(calc: &mut Calculus, p: &Poly) -> Result<Vec<Part>, Miss> {
    // group the terms by their transcendental monomial
    let mut groups: Vec<(Monomial, Vec<(Monomial, Rational)>)> = Vec::new();
    for (m, c) in p.terms() {
        let mut trans = Vec::new();
        let mut rest = Vec::new();
        for &(k, e) in m.pairs() {
            match calc.role(k)? {
                Role::Hyper(_) | Role::Log(_) => trans.push((k, e)),
                _ => rest.push((k, e)),
            }
        }
        let t = Monomial::from_pairs(trans);
        let r = (Monomial::from_pairs(rest), c.clone());
        match groups.iter_mut().find(|g| g.0 == t) {
            Some(g) => g.1.push(r),
            None => groups.push((t, vec![r])),
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for (t, rest) in groups {
        let mut ld = Normal::zero();
        for &(k, e) in t.pairs() {
            let l = calc.kernel_log_derivative(k)?;
            ld = diff::add(&ld, &l.scale(&Rational::from_integer(i64::from(e))))?;
        }
        let r = Poly::from_terms(rest);
        let lr = calc.poly_log_derivative(&r)?;
        ld = diff::add(&ld, &lr)?;
        out.push(Part { ld });
    }
    Ok(out)
}

/// The structure of the canonical form `f` in the calculus's variable (see the module
/// doc). A zero factor has no operator worth reporting: [`Miss::NoFamily`].
pub fn analyse(calc: &mut Calculus, f: &Normal) -> Result<Analysis, Miss> {
    if f.is_zero() {
        return Err(Miss::NoFamily);
    }
    let den = parts(calc, f.den())?;
    let ld_den = match den.as_slice() {
        [d] => d.ld.clone(),
        _ => return Err(Miss::NotHolonomic),
    };
    let mut rs: Vec<Normal> = Vec::new();
    for part in parts(calc, f.num())? {
        let r = diff::sub(&part.ld, &ld_den)?;
        let r = calc.algebraic(&r)?;
        if !calc.is_rational_in_var(&r)? {
            return Err(Miss::NotHolonomic);
        }
        // parts with one log-derivative add up to one hyperexponential term
        if !rs.contains(&r) {
            rs.push(r);
        }
    }
    match rs.len() {
        0 => Err(Miss::NoFamily),
        1 => Ok(Analysis::Order1 { r: rs.remove(0) }),
        2 => {
            let r2 = rs.remove(1);
            let r1 = rs.remove(0);
            Ok(Analysis::Order2 { r1, r2 })
        }
        n => Err(Miss::Order(n)),
    }
}

/// The first-order operator of `f` in `x` within `canon`'s session; a mixture of two
/// hyperexponential terms gives [`Miss::Order`]`(2)`.
pub fn first_order(canon: &mut Canon, f: TermId, x: VarId) -> Result<FirstOrder, Miss> {
    let fnorm = canon.normal(f).map_err(|_| Miss::NotHolonomic)?;
    let mut calc = Calculus::new(canon, x)?;
    let xk = calc.var_kernel();
    match analyse(&mut calc, &fnorm)? {
        Analysis::Order1 { r } => {
            let mut cs = clear(&[r.neg(), Normal::one()], xk)?;
            let a1 = cs.pop().unwrap_or_else(Poly::one);
            let a0 = cs.pop().map(|p| p.neg()).unwrap_or_else(Poly::zero);
            Ok(FirstOrder {
                x: xk,
                r,
                a1,
                a0,
                f: fnorm,
            })
        }
        Analysis::Order2 { .. } => Err(Miss::Order(2)),
    }
}

/// Polynomial coefficients proportional to `cs` (rational functions): denominators
/// cleared, the common polynomial factor and rational content removed, the last one's
/// leading coefficient in `x` positive.
fn clear(cs: &[Normal], x: u32) -> Result<Vec<Poly>, Miss> {
    let mut l = Poly::one();
    for c in cs {
        l = lcm(&l, c.den());
    }
    let mut out = Vec::with_capacity(cs.len());
    for c in cs {
        let k = l.div_exact(c.den()).ok_or(Miss::Budget)?;
        let p = c.num().mul(&k);
        if p.terms().len() > MAX_TERMS {
            return Err(Miss::Budget);
        }
        out.push(p);
    }
    let mut g = Poly::zero();
    for p in &out {
        g = slic_algebra::poly::gcd(&g, p);
    }
    if !g.is_zero() && g.as_constant().is_none() {
        for p in out.iter_mut() {
            *p = p.div_exact(&g).ok_or(Miss::Budget)?;
        }
    }
    // rational content of all coefficients together, sign from the last one
    let mut content: Option<Rational> = None;
    for p in &out {
        if p.is_zero() {
            continue;
        }
        let c = p.rational_content().abs();
        content = Some(match content {
            Some(d) => d.gcd(&c),
            None => c,
        });
    }
    let mut k = content
        .and_then(|c| c.recip())
        .unwrap_or_else(Rational::one);
    if let Some(last) = out.last() {
        let lead = last.leading_coefficient_in(x);
        if lead.leading_coefficient().is_some_and(|c| c.is_negative()) {
            k = -k;
        }
    }
    Ok(out.into_iter().map(|p| p.scale(&k)).collect())
}

/// The operator of `f` (a prob term) in the variable `x`: order 1 when `f` is a product
/// of hyperexponential factors, order 2 for a sum of two, [`Miss`] otherwise.
pub fn operator(store: &mut Store, ctx: &Context, f: TermId, x: VarId) -> Result<Ode, Miss> {
    let mut canon = Canon::new(store, ctx.clone());
    let fnorm = canon.normal(f).map_err(|_| Miss::NotHolonomic)?;
    let mut calc = Calculus::new(&mut canon, x)?;
    let xk = calc.var_kernel();
    let cs = match analyse(&mut calc, &fnorm)? {
        Analysis::Order1 { r } => vec![r.neg(), Normal::one()],
        Analysis::Order2 { r1, r2 } => {
            // g'' = s g with s = r' + r^2 for each part; eliminating g1, g2 from f, f',
            // f'' gives (r1 - r2) f'' = (s1 - s2) f' + (r1 s2 - r2 s1) f
            let s1 = second(&mut calc, &r1)?;
            let s2 = second(&mut calc, &r2)?;
            let a = diff::sub(&r1, &r2)?;
            let b = diff::sub(&s2, &s1)?;
            let c1 = diff::mul(&r2, &s1)?;
            let c2 = diff::mul(&r1, &s2)?;
            let c = diff::sub(&c1, &c2)?;
            vec![c, b, a]
        }
    };
    let polys = clear(&cs, xk)?;
    let mut coeffs = Vec::with_capacity(polys.len());
    for p in polys {
        let t = canon
            .to_term(&Normal::from_poly(p), &Type::Real)
            .map_err(|_| Miss::NotHolonomic)?;
        coeffs.push(t);
    }
    Ok(Ode { coeffs })
}

/// `r' + r^2`: `g''/g` for `g' = r g`.
fn second(calc: &mut Calculus, r: &Normal) -> Result<Normal, Miss> {
    let d = calc.derivative(r)?;
    let sq = diff::mul(r, r)?;
    diff::add(&d, &sq)
}
