//! Recognition of discrete factors: recurrence, then the family whose recurrence has the
//! same ratio on the same support (or a finite range: categorical), then the weight.
//!
//! On a ray `lo <= k` (map `k = lo + u`; a ray `k < hi` is reflected, `k = hi - 1 - u`),
//! `f(lo + u + 1) / f(lo + u) = ρ(u)` is read off [`crate::recurrence`]: `ρ(u) (u + 1)`
//! free of `u` is a poisson rate `λ`, linear in `u`
//! as `q (u + r)` a negative binomial with `p = 1 - q` (geometric for `r = 1`). As the
//! recurrence's denominator `u + 1` never vanishes on nat, `f(lo + u) = f(lo) K(u)` for
//! the family's kernel `K` with `K(0) = 1`, so the weight is `f(lo)` times the kernel's
//! sum (`e^λ`; `Σ Γ(u+r)/(u! Γ(r)) q^u = (1-q)^(-r)`). On a finite range `lo <= k < hi`
//! the factor is a categorical over its values (no recurrence needed), unrolled to a
//! literal array for a short literal range, with the exact sum as weight.
//!
//! Parameters are accepted only when proved valid (`λ > 0`, `0 < q < 1`, `r > 0`):
//! prob-typed variables are taken as strictly positive (a zero rate or probability is
//! outside every family's parameter space), anything else must follow from the signs of
//! the coefficients or from the context (`cond::decide`). Unproved parameters give
//! [`Miss::Unproved`], never a guess. This file must not match formula shapes: every
//! decision is made on the ratio.

use slic_algebra::assume::{Context, Tri};
use slic_algebra::canon::{Canon, Kernel, Normal};
use slic_algebra::poly::Poly;
use slic_algebra::{cond, eval};
use slic_algebra::{Coercion, Node, Prim, Rational, Store, TermId, Type, VarId};

use super::Miss;
use crate::family::{Affine, Family, Recognised};
use crate::recurrence::{budget_miss, canon_miss, ratio, renormal, vars_of, write_canonical};
use crate::support::{is_infinite, Support};

/// The longest literal range written out as a literal array of weights.
pub const MAX_UNROLL: i64 = 32;

pub(super) fn recognise(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    x: VarId,
    support: &Support,
) -> Result<Recognised, Miss> {
    let Support::Int { lo, hi } = *support else {
        return Err(Miss::NoFamily);
    };
    let lo = lo.filter(|&t| !is_infinite(store, t));
    let hi = hi.filter(|&t| !is_infinite(store, t));
    let mut cx = Canon::new(store, ctx.clone());
    let f = as_prob(&mut cx, f)?;
    match (lo, hi) {
        (Some(lo), Some(hi)) => categorical(&mut cx, f, x, lo, hi),
        (Some(lo), None) => {
            let origin = cx.normal(lo).map_err(canon_miss)?;
            on_ray(&mut cx, f, x, origin, Direction::Up)
        }
        // `k <= hi - 1`, reflected: `k = hi - 1 - u`
        (None, Some(hi)) => {
            let h = cx.normal(hi).map_err(canon_miss)?;
            let origin = h.sub(&Normal::one(), max_terms()).map_err(budget_miss)?;
            on_ray(&mut cx, f, x, origin, Direction::Down)
        }
        // no family of the table lives on all the integers
        (None, None) => Err(Miss::NoFamily),
    }
}

/// Which way a ray runs from its end point.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// `lo <= k`: `k = lo + u`.
    Up,
    /// `k < hi`: `k = (hi - 1) - u`.
    Down,
}

/// `f` as a prob term (written in prob arithmetic when its canonical form allows).
fn as_prob(cx: &mut Canon, f: TermId) -> Result<TermId, Miss> {
    if *cx.store().ty(f) == Type::Prob {
        return Ok(f);
    }
    let n = cx.normal(f).map_err(canon_miss)?;
    cx.to_term(&n, &Type::Prob).map_err(canon_miss)
}

/// The term `origin + offset` in the type of the variable `x`.
fn point(cx: &mut Canon, x: VarId, origin: &Normal, offset: &Normal) -> Result<TermId, Miss> {
    let ty = cx.store().var_type(x).clone();
    let at = origin.add(offset, max_terms()).map_err(budget_miss)?;
    cx.to_term(&at, &ty).map_err(canon_miss)
}

/// `f` at `x = origin + offset`, canonical, with closed factorials and binomials
/// evaluated.
fn value_at(
    cx: &mut Canon,
    f: TermId,
    x: VarId,
    origin: &Normal,
    offset: &Normal,
) -> Result<Normal, Miss> {
    let at = point(cx, x, origin, offset)?;
    let g = slic_algebra::vars::substitute1(cx.store_mut(), f, x, at);
    let n = cx.normal(g).map_err(canon_miss)?;
    Ok(fold_constants(cx, n))
}

/// Poisson or negative binomial on the ray from `origin` (`x = origin ± u`), by the
/// ratio of `f(origin ± u)`.
fn on_ray(
    cx: &mut Canon,
    f: TermId,
    x: VarId,
    origin: Normal,
    direction: Direction,
) -> Result<Recognised, Miss> {
    let u = cx.store_mut().fresh_var("u", Type::Nat);
    let ut = cx.store_mut().var_term(u);
    let un = cx.normal(ut).map_err(canon_miss)?;
    let step = match direction {
        Direction::Up => un,
        Direction::Down => un.neg(),
    };
    let at = point(cx, x, &origin, &step)?;
    let g = slic_algebra::vars::substitute1(cx.store_mut(), f, x, at);
    let r = ratio(cx, g, u)?;
    let ku = r.k;
    let max = max_terms();
    // L(u) = ρ(u) (u + 1)
    let u1 = Normal::from_poly(Poly::var(ku).add(&Poly::one()));
    let l = r.value.mul(&u1, max).map_err(budget_miss)?;
    let l = renormal(cx, &l)?;
    let f0 = value_at(cx, f, x, &origin, &Normal::zero())?;
    let (family, sum) = if !vars_of(&l).contains(&ku) {
        poisson(cx, &l)?
    } else {
        negative_binomial(cx, &l, ku)?
    };
    let w = cx.mul(&f0, &sum).map_err(budget_miss)?;
    let weight = write_canonical(cx, w, &Type::Prob)?;
    let shift = if origin.is_zero() {
        None
    } else {
        Some(write_canonical(cx, origin, &Type::Int)?)
    };
    let scale = match direction {
        Direction::Up => None,
        Direction::Down => Some(cx.store_mut().int_lit(-1, Type::Int)),
    };
    Ok(Recognised {
        weight,
        family,
        map: Affine { shift, scale },
    })
}

/// `ρ(u) = λ / (u + 1)`: `poisson(λ)`, whose kernel `λ^u / u!` sums to `e^λ`.
fn poisson(cx: &mut Canon, l: &Normal) -> Result<(Family, Normal), Miss> {
    let l = fold_constants(cx, l.clone());
    require(&[positive(cx, &l)?])?;
    let rate = write_canonical(cx, l.clone(), &Type::Prob)?;
    let sum = cx.exp(&l).map_err(budget_miss)?;
    Ok((Family::Poisson { rate }, sum))
}

/// `ρ(u) = q (u + r) / (u + 1)`: the negative binomial with `p = 1 - q`, whose kernel
/// `Γ(u+r) / (u! Γ(r)) q^u` sums to `(1 - q)^(-r)`.
fn negative_binomial(cx: &mut Canon, l: &Normal, ku: u32) -> Result<(Family, Normal), Miss> {
    if l.den().degree_in(ku) > 0 || l.num().degree_in(ku) != 1 {
        return Err(Miss::NoFamily);
    }
    let mut slope = Poly::zero();
    let mut constant = Poly::zero();
    for (d, c) in l.num().coefficients_in(ku) {
        if d == 1 {
            slope = c;
        } else {
            constant = c;
        }
    }
    let q = Normal::from_parts(slope.clone(), l.den().clone()).ok_or(Miss::NoFamily)?;
    let r = Normal::from_parts(constant, slope).ok_or(Miss::NoFamily)?;
    let (q, r) = (fold_constants(cx, q), fold_constants(cx, r));
    let max = max_terms();
    let p = Normal::one().sub(&q, max).map_err(budget_miss)?;
    let p = renormal(cx, &p)?;
    require(&[positive(cx, &q)?, positive(cx, &p)?, positive(cx, &r)?])?;
    let rt = write_canonical(cx, r.clone(), &Type::Prob)?;
    let pt = write_canonical(cx, p, &Type::Prob)?;
    // p ** (-r)
    let rr = cx.to_term(&r.neg(), &Type::Real).map_err(canon_miss)?;
    let pw = cx.store_mut().prim(Prim::RealPow, vec![pt, rr], Type::Prob);
    let sum = cx.normal(pw).map_err(canon_miss)?;
    Ok((Family::NegBinomial { r: rt, p: pt }, sum))
}

/// The categorical of `f`'s values on `lo <= x < hi`, weighted by their sum.
fn categorical(
    cx: &mut Canon,
    f: TermId,
    x: VarId,
    lo: TermId,
    hi: TermId,
) -> Result<Recognised, Miss> {
    let max = max_terms();
    let lo_n = cx.normal(lo).map_err(canon_miss)?;
    let hi_n = cx.normal(hi).map_err(canon_miss)?;
    let count = hi_n.sub(&lo_n, max).map_err(budget_miss)?;
    let parray = Type::array(Type::Prob);
    let shift = match cx.store().node(lo) {
        Node::Lit(v) if v.is_zero() => None,
        _ => Some(cx.canonicalize(lo)),
    };
    let map = Affine { shift, scale: None };
    let literal = count
        .as_constant()
        .filter(Rational::is_integer)
        .and_then(|c| c.to_i64());
    if let Some(m) = literal.filter(|&m| m <= MAX_UNROLL) {
        let mut elems = Vec::new();
        let mut total = Normal::zero();
        for i in 0..m.max(0) {
            let offset = Normal::constant(Rational::from_integer(i));
            let v = value_at(cx, f, x, &lo_n, &offset)?;
            total = total.add(&v, max).map_err(budget_miss)?;
            elems.push(write_canonical(cx, v, &Type::Prob)?);
        }
        let weights = cx.store_mut().intern(Node::ArrayLit(elems), parray);
        let weight = write_canonical(cx, total, &Type::Prob)?;
        return Ok(Recognised {
            weight,
            family: Family::Categorical { weights },
            map,
        });
    }
    // a symbolic (or long) range: it must not be empty-and-reversed
    if literal.is_none() {
        let (lt, ht) = (cx.canonicalize(lo), cx.canonicalize(hi));
        let ty = common_type(cx.store(), lt, ht);
        let (lt, ht) = (coerce_to(cx, lt, &ty), coerce_to(cx, ht, &ty));
        let le = cx.store_mut().prim(Prim::Le, vec![lt, ht], Type::Bool);
        let ctx = cx.context().clone();
        if cond::decide(cx.store_mut(), &ctx, le) != Tri::True {
            return Err(Miss::Unproved);
        }
    }
    let size = write_canonical(cx, count, &Type::Nat)?;
    let loop_over = |cx: &mut Canon, name: &str| -> Result<(VarId, TermId), Miss> {
        let i = cx.store_mut().fresh_var(name, Type::Nat);
        let it = cx.store_mut().var_term(i);
        let inn = cx.normal(it).map_err(canon_miss)?;
        let at = point(cx, x, &lo_n, &inn)?;
        Ok((i, slic_algebra::vars::substitute1(cx.store_mut(), f, x, at)))
    };
    let (i, body) = loop_over(cx, "i")?;
    let array = cx
        .store_mut()
        .intern(Node::Array(i, size, body), parray.clone());
    let weights = cx.canonicalize(array);
    let (j, body) = loop_over(cx, "j")?;
    let zero = cx.store_mut().int_lit(0, Type::Nat);
    let total = cx
        .store_mut()
        .intern(Node::Summate(j, zero, size, body), Type::Prob);
    let weight = cx.canonicalize(total);
    Ok(Recognised {
        weight,
        family: Family::Categorical { weights },
        map,
    })
}

/// The join of two numeric types (int for nat and int bounds).
fn common_type(store: &Store, a: TermId, b: TermId) -> Type {
    store.ty(a).numeric_join(store.ty(b)).unwrap_or(Type::Real)
}

/// `t` in type `ty` by a safe coercion (the identity when it already has it).
fn coerce_to(cx: &mut Canon, t: TermId, ty: &Type) -> TermId {
    let from = cx.store().ty(t).clone();
    match Coercion::safe(&from, ty) {
        Some(c) if from != *ty => cx.store_mut().intern(Node::Coerce(c, t), ty.clone()),
        _ => t,
    }
}

/// The session budget for plain field arithmetic.
fn max_terms() -> usize {
    slic_algebra::canon::CanonConfig::default().max_terms
}

/// `n` with closed `gammaFunc`, `choose` and `betaFunc` kernels replaced by their exact
/// values (`gammaFunc(3) = 2`): the values at literal points of factorial masses.
fn fold_constants(cx: &mut Canon, n: Normal) -> Normal {
    let mut n = n;
    for v in vars_of(&n) {
        let Some(Kernel::Atom(t)) = cx.kernels().get(v).map(|i| i.kernel.clone()) else {
            continue;
        };
        let closed = matches!(
            cx.store().node(t),
            Node::Prim(Prim::GammaFunc | Prim::Choose | Prim::BetaFunc, _)
        );
        if !closed {
            continue;
        }
        let Some(c) = eval::eval_exact(cx.store(), t) else {
            continue;
        };
        let value = Poly::constant(c);
        let (num, den) = (n.num().substitute(v, &value), n.den().substitute(v, &value));
        if let Some(m) = Normal::from_parts(num, den) {
            n = m;
        }
    }
    n
}

/// Every parameter condition must be proved: one proved false means no family of the
/// table fits (`q >= 1` diverges), one unknown that it could not be proved.
fn require(conditions: &[Tri]) -> Result<(), Miss> {
    if conditions.contains(&Tri::False) {
        Err(Miss::NoFamily)
    } else if conditions.contains(&Tri::Unknown) {
        Err(Miss::Unproved)
    } else {
        Ok(())
    }
}

/// Is `n > 0`? By the signs of its coefficients over kernels known positive, else by
/// deciding `0 < n` in the session's context.
fn positive(cx: &mut Canon, n: &Normal) -> Result<Tri, Miss> {
    if let Some(c) = n.as_constant() {
        return Ok(Tri::from_bool(c.is_positive()));
    }
    if let (Some(a), Some(b)) = (poly_sign(cx, n.num()), poly_sign(cx, n.den())) {
        return Ok(Tri::from_bool(a == b));
    }
    let t = cx.to_term(n, &Type::Real).map_err(canon_miss)?;
    let zero = cx.store_mut().int_lit(0, Type::Real);
    let lt = cx.store_mut().prim(Prim::Lt, vec![zero, t], Type::Bool);
    let ctx = cx.context().clone();
    Ok(cond::decide(cx.store_mut(), &ctx, lt))
}

/// `Some(true)` when `p > 0` for every value of its kernels (coefficients all positive,
/// kernels non-negative, and one monomial of strictly positive kernels), `Some(false)`
/// when `-p` is, `None` when the signs do not tell.
fn poly_sign(cx: &Canon, p: &Poly) -> Option<bool> {
    let first = p.terms().first()?.1.is_positive();
    let same_sign = p.terms().iter().all(|(_, c)| c.is_positive() == first);
    let nonneg = p.terms().iter().all(|(m, _)| {
        m.pairs()
            .iter()
            .all(|&(k, _)| cx.kernels().get(k).is_some_and(|i| i.nonneg))
    });
    let strict = p
        .terms()
        .iter()
        .any(|(m, _)| m.pairs().iter().all(|&(k, _)| strictly_positive(cx, k)));
    (same_sign && nonneg && strict).then_some(first)
}

/// Kernels that are `> 0` for every allowed value: `e^s`, `pi`, radicals and powers of
/// such, and prob-typed variables and array entries (by the documented assumption that a
/// prob parameter is not zero).
fn strictly_positive(cx: &Canon, k: u32) -> bool {
    let Some(info) = cx.kernels().get(k) else {
        return false;
    };
    match &info.kernel {
        Kernel::Exp(_) | Kernel::Pi => true,
        Kernel::Pow(b, _) => positive_term(cx.store(), *b),
        Kernel::Atom(t) => positive_term(cx.store(), *t),
    }
}

/// A prob parameter (a variable or an array entry) or a positive literal.
fn positive_term(store: &Store, t: TermId) -> bool {
    match store.node(t) {
        Node::Lit(v) => v.is_positive(),
        Node::Var(_) | Node::Index(..) => *store.ty(t) == Type::Prob,
        Node::Prim(Prim::Exp | Prim::Pi, _) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
