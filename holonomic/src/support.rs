//! Where a variable ranges: an open interval of the reals or a range of integers, either
//! end possibly unbounded. The simplifier builds a [`Support`] from a `lebesgue` or
//! `counting` binder and the indicator conditions on the variable; recognition only
//! accepts a family whose support is exactly this one (after an affine change of
//! variable), so `f` on `(0, 1)` is never read as a normal density.
//!
//! [`split_indicators`] moves indicator factors `if a < x && x < b: g else: 0` of a
//! factor into its support when their bounds combine decidably with the support's, so
//! `weight(1/2 if 3 < x < 7 else 0)` over the reals becomes `1/2` over `(3, 7)`. It only
//! moves conditions it can read exactly; anything else stays in the factor.

use slic_algebra::assume::{Context, Tri};
use slic_algebra::cond::{self, Comparison, Linear, Rel};
use slic_algebra::vars::mentions;
use slic_algebra::{canon, piecewise, Node, Prim, Rational, Store, TermId, Type, VarId};

use crate::terms;

/// The support of a variable. Bounds are terms free of the variable; `None` is infinite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// The open interval `(lo, hi)` of the reals (`lo`, `hi`: real terms).
    Real {
        lo: Option<TermId>,
        hi: Option<TermId>,
    },
    /// The integers `lo <= k < hi` (`lo`, `hi`: int terms; `hi` exclusive, as in
    /// `summate`). `nat` is `Int { lo: Some(0), hi: None }`.
    Int {
        lo: Option<TermId>,
        hi: Option<TermId>,
    },
}

impl Support {
    /// The whole real line.
    pub const REALS: Support = Support::Real { lo: None, hi: None };

    /// The interval between two bound terms as `lebesgue(lo, hi)` has them: a bound that
    /// is `∞` or `-∞` is `None`.
    pub fn real(store: &Store, lo: TermId, hi: TermId) -> Support {
        let bound = |t: TermId| (!is_infinite(store, t)).then_some(t);
        Support::Real {
            lo: bound(lo),
            hi: bound(hi),
        }
    }

    /// The bounds `(lo, hi)`, whichever kind of support this is.
    pub fn bounds(&self) -> (Option<TermId>, Option<TermId>) {
        match *self {
            Support::Real { lo, hi } | Support::Int { lo, hi } => (lo, hi),
        }
    }

    fn with_bounds(&self, lo: Option<TermId>, hi: Option<TermId>) -> Support {
        match self {
            Support::Real { .. } => Support::Real { lo, hi },
            Support::Int { .. } => Support::Int { lo, hi },
        }
    }
}

/// Is `t` the term `∞` or `-∞` (under coercions and negation)?
pub fn is_infinite(store: &Store, t: TermId) -> bool {
    let mut t = t;
    // `-∞` is `Neg[Coerce(prob2real, ∞)]`; a few wrappers at most
    for _ in 0..8 {
        match store.node(t) {
            Node::Prim(Prim::Infinity, _) => return true,
            Node::Prim(Prim::Neg, xs) if xs.len() == 1 => t = xs[0],
            Node::Coerce(_, a) => t = *a,
            _ => return false,
        }
    }
    false
}

/// How many factors and nested guards [`split_indicators`] looks at (beyond them the
/// rest of the factor is kept as it is).
const MAX_FACTORS: usize = 4096;

/// Moves the indicator factors of `f` (a prob term) whose conditions bound `x` linearly
/// into `base`: returns the narrowed support and what is left of `f`, whose product over
/// the new support equals `f` over `base`.
///
/// Top-level factors `if c: g else: 0` (and `if c: 0 else: g`) are split into the
/// conjuncts of `c` (canonical under `ctx`); a conjunct `a·x + rest REL 0` with `rest`
/// free of `x` bounds `x` on one side, and it moves into the support when it decidably
/// tightens the bound there or is decidably implied by it. For an integer support the
/// coefficient of `x` must be ±1. Equalities, disequalities, and conditions that compare
/// undecidably with the current bound stay in the factor (`if rest: g else: 0`), as do
/// guards nested anywhere but at the top of the product. When nothing moves, `f` comes
/// back unchanged; otherwise the factor left is the product of the remaining factors
/// (not canonicalised again: the caller's canonicalisation or recognition does that).
pub fn split_indicators(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    x: VarId,
    base: Support,
) -> (Support, TermId) {
    let mut support = base;
    let mut moved = false;
    let mut kept: Vec<TermId> = Vec::new();
    let mut work = vec![f];
    let mut seen = 0usize;
    while let Some(t) = work.pop() {
        seen += 1;
        if seen > MAX_FACTORS {
            kept.push(t);
            continue;
        }
        match store.node(t).clone() {
            Node::Prim(Prim::Mul, xs) => work.extend(xs.into_iter().rev()),
            Node::If(c, a, b) if is_zero(store, b) || is_zero(store, a) => {
                let (c, g) = if is_zero(store, b) {
                    (c, a)
                } else {
                    (cond::negate(store, c), b)
                };
                let c = cond::canonical(store, ctx, c);
                let conjuncts = match store.node(c) {
                    Node::Prim(Prim::And, xs) => xs.clone(),
                    Node::Bool(true) => Vec::new(),
                    _ => vec![c],
                };
                let mut rest = Vec::new();
                for k in conjuncts {
                    match narrow(store, ctx, k, x, &support) {
                        Some(s) => {
                            support = s;
                            moved = true;
                        }
                        None => rest.push(k),
                    }
                }
                if rest.is_empty() {
                    work.push(g);
                } else {
                    let c = cond::and(store, ctx, rest);
                    kept.push(piecewise::guarded(store, c, g));
                }
            }
            _ => kept.push(t),
        }
    }
    if !moved {
        return (base, f);
    }
    let f = terms::mul(store, kept, &Type::Prob);
    (support, f)
}

/// Is `t` the literal zero (under safe coercions)?
fn is_zero(store: &Store, t: TermId) -> bool {
    terms::is_literal(store, t, 0)
}

/// Which end of the support a condition bounds.
enum Side {
    Lower,
    Upper,
}

/// The support narrowed by the condition `c`, or `None` when `c` is not a linear bound
/// on `x` that combines decidably with the current one.
fn narrow(
    store: &mut Store,
    ctx: &Context,
    c: TermId,
    x: VarId,
    support: &Support,
) -> Option<Support> {
    let cmp = Comparison::of_term(store, c)?.ok()?;
    let xt = store.var_term(x);
    let a = cmp.lin.coeff(xt);
    if a.is_zero() {
        return None;
    }
    let rest = Linear {
        constant: cmp.lin.constant.clone(),
        terms: cmp
            .lin
            .terms
            .iter()
            .filter(|(t, _)| *t != xt)
            .cloned()
            .collect(),
    };
    if rest.terms.iter().any(|(t, _)| mentions(store, *t, x)) {
        return None;
    }
    let integral = matches!(support, Support::Int { .. });
    // a·x + rest REL 0  <=>  x REL' -rest/a
    let side = if a.is_positive() {
        Side::Upper
    } else {
        Side::Lower
    };
    let (ty, value) = match (cmp.rel, integral) {
        (Rel::Lt | Rel::Le, false) => (Type::Real, rest.scale(&-a.recip()?)),
        (Rel::Le, true) if a.abs().is_one() => {
            // x <= v means hi = v + 1 (exclusive); -x + rest <= 0 means lo = rest
            let v = rest.scale(&-a.recip()?);
            match side {
                Side::Upper => {
                    let one = Linear::constant(Rational::one());
                    (Type::Int, v.add_scaled(store, &one, &Rational::one()))
                }
                Side::Lower => (Type::Int, v),
            }
        }
        _ => return None,
    };
    let v = value.to_term(store, &ty);
    let v = canon::canonicalize(store, ctx, v);
    let (lo, hi) = support.bounds();
    match side {
        Side::Lower => {
            let lo = tighter(store, ctx, lo, v, &ty, true)?;
            Some(support.with_bounds(Some(lo), hi))
        }
        Side::Upper => {
            let hi = tighter(store, ctx, hi, v, &ty, false)?;
            Some(support.with_bounds(lo, Some(hi)))
        }
    }
}

/// The tighter of the current bound `cur` and `new` (the larger for a lower bound), when
/// that is decided under `ctx`.
fn tighter(
    store: &mut Store,
    ctx: &Context,
    cur: Option<TermId>,
    new: TermId,
    ty: &Type,
    lower: bool,
) -> Option<TermId> {
    let Some(cur) = cur else {
        return Some(new);
    };
    let (small, large) = if lower { (cur, new) } else { (new, cur) };
    // is the new bound at least as tight as the current one?
    let (s, l) = (
        terms::coerce(store, small, ty),
        terms::coerce(store, large, ty),
    );
    let le = store.prim(Prim::Le, vec![s, l], Type::Bool);
    if cond::decide(store, ctx, le) == Tri::True {
        return Some(new);
    }
    let ge = store.prim(Prim::Le, vec![l, s], Type::Bool);
    if cond::decide(store, ctx, ge) == Tri::True {
        return Some(cur);
    }
    None
}
