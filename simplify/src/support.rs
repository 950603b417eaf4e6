//! Where a variable ranges, from its base measure and the guards on it: guards linear in
//! the variable (`3 < x`, `x <= y + 1`) become the bounds of one interval; what is left
//! (non-linear guards, guards whose bounds cannot be ordered) stays as indicators.
//!
//! Continuous variables range over open intervals (whether a bound is strict changes a
//! lebesgue integral by nothing); integer ones over `lo <= k < hi`. When the bounds
//! involve other variables, the interval may be empty: [`Interval::nonempty`] is the
//! condition the caller must keep as a guard.
//!
//! This decides nothing it cannot prove: two candidate bounds are combined only when
//! `cond::decide` orders them.

use slic_algebra::assume::{Context, Tri};
use slic_algebra::cond::{self, Comparison, Linear, Rel};
use slic_algebra::num::Rational;
use slic_algebra::vars;
use slic_algebra::{Node, Prim, Store, TermId, Type, VarId};

use crate::terms;

/// An interval of the reals (open) or integers (`lo <= k < hi`); `None` bounds are
/// infinite. Bounds are real terms (continuous) or int terms (discrete).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Interval {
    pub discrete: bool,
    pub lo: Option<TermId>,
    pub hi: Option<TermId>,
}

/// The result of [`restrict`].
pub(crate) struct Restricted {
    pub interval: Interval,
    /// Guards on the variable that could not become bounds (kept as indicators).
    pub rest: Vec<TermId>,
    /// False when some guard makes the set of values empty or of measure zero (an
    /// equality on a continuous variable): the integral is 0.
    pub possible: bool,
    /// Two bounds on one side that could not be ordered (the first that met): the
    /// caller may split on `a <= b` to make them so.
    pub unordered: Option<(TermId, TermId)>,
}

/// One bound read off a guard.
enum Bound {
    Lower(TermId),
    Upper(TermId),
    /// The guard pins the variable to a value (`x == e`).
    Point,
}

impl Interval {
    /// The condition that the interval is non-empty (`lo < hi`), unless `ctx` proves it
    /// (`None`).
    pub(crate) fn nonempty(&self, store: &mut Store, ctx: &Context) -> Option<TermId> {
        let (lo, hi) = (self.lo?, self.hi?);
        let c = terms::compare(store, Prim::Lt, lo, hi);
        let c = cond::canonical(store, ctx, c);
        match store.node(c) {
            Node::Bool(true) => None,
            _ => Some(c),
        }
    }

    /// The holonomic layer's view.
    pub(crate) fn to_support(&self) -> slic_holonomic::Support {
        if self.discrete {
            slic_holonomic::Support::Int {
                lo: self.lo,
                hi: self.hi,
            }
        } else {
            slic_holonomic::Support::Real {
                lo: self.lo,
                hi: self.hi,
            }
        }
    }
}

/// The interval of `x` from its base bounds and the guards mentioning it.
pub(crate) fn restrict(
    store: &mut Store,
    ctx: &Context,
    x: VarId,
    base: Interval,
    guards: &[TermId],
) -> Restricted {
    let mut iv = base;
    let mut rest = Vec::new();
    let mut possible = true;
    let mut unordered = None;
    for &g in guards {
        for part in conjuncts(store, g) {
            match bound_of(store, part, x, iv.discrete) {
                Some(Bound::Lower(b)) => match tighter(store, ctx, iv.lo, b, true) {
                    Some(lo) => iv.lo = Some(lo),
                    None => {
                        unordered = unordered.or(iv.lo.map(|old| (old, b)));
                        rest.push(part)
                    }
                },
                Some(Bound::Upper(b)) => match tighter(store, ctx, iv.hi, b, false) {
                    Some(hi) => iv.hi = Some(hi),
                    None => {
                        unordered = unordered.or(iv.hi.map(|old| (old, b)));
                        rest.push(part)
                    }
                },
                Some(Bound::Point) if !iv.discrete => possible = false,
                _ => rest.push(part),
            }
        }
    }
    Restricted {
        interval: iv,
        rest,
        possible,
        unordered,
    }
}

/// The operands of a top-level `&&` (or the condition itself).
fn conjuncts(store: &Store, g: TermId) -> Vec<TermId> {
    match store.node(g) {
        Node::Prim(Prim::And, xs) => xs.clone(),
        _ => vec![g],
    }
}

/// The bound a comparison puts on `x`, when it is linear in `x` with the rest free of it.
fn bound_of(store: &mut Store, g: TermId, x: VarId, discrete: bool) -> Option<Bound> {
    let cmp: Comparison = match Comparison::of_term(store, g)? {
        Ok(c) => c,
        Err(_) => return None,
    };
    let xt = store.var_term(x);
    let c = cmp.lin.coeff(xt);
    if c.is_zero() {
        return None;
    }
    let others = Linear {
        constant: cmp.lin.constant.clone(),
        terms: cmp
            .lin
            .terms
            .iter()
            .filter(|(a, _)| *a != xt)
            .cloned()
            .collect(),
    };
    if others
        .terms
        .iter()
        .any(|(a, _)| vars::mentions(store, *a, x))
    {
        return None;
    }
    // c·x + others REL 0  ⇔  x REL' -others / c
    let inv = c.recip()?;
    let value = others.scale(&-inv);
    let ty = if discrete { Type::Int } else { Type::Real };
    let upper = c.is_positive();
    match cmp.rel {
        Rel::Eq => Some(Bound::Point),
        Rel::Ne => None,
        Rel::Lt | Rel::Le => {
            if discrete {
                // integers: x <= v (v integral after normalisation) is x < v + 1
                if !value.is_integral(store) || !value.constant.is_integer() {
                    return None;
                }
                let strict = matches!(cmp.rel, Rel::Lt);
                let v = if upper {
                    if strict {
                        value
                    } else {
                        value.add_scaled(
                            store,
                            &Linear::constant(Rational::one()),
                            &Rational::one(),
                        )
                    }
                } else if strict {
                    value.add_scaled(store, &Linear::constant(Rational::one()), &Rational::one())
                } else {
                    value
                };
                let t = v.to_term(store, &ty);
                Some(if upper {
                    Bound::Upper(t)
                } else {
                    Bound::Lower(t)
                })
            } else {
                let t = value.to_term(store, &ty);
                Some(if upper {
                    Bound::Upper(t)
                } else {
                    Bound::Lower(t)
                })
            }
        }
    }
}

/// The tighter of an existing bound and a new one (`lower`: the larger), when `ctx`
/// orders them; `None` when it cannot.
fn tighter(
    store: &mut Store,
    ctx: &Context,
    old: Option<TermId>,
    new: TermId,
    lower: bool,
) -> Option<TermId> {
    let Some(old) = old else {
        return Some(new);
    };
    if old == new {
        return Some(old);
    }
    // is new <= old?
    let le = terms::compare(store, Prim::Le, new, old);
    match cond::decide(store, ctx, le) {
        Tri::True => Some(if lower { old } else { new }),
        Tri::False => Some(if lower { new } else { old }),
        Tri::Unknown => {
            let ge = terms::compare(store, Prim::Le, old, new);
            match cond::decide(store, ctx, ge) {
                Tri::True => Some(if lower { new } else { old }),
                _ => None,
            }
        }
    }
}
