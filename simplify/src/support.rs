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
    /// The guard holds on the whole interval (`0 < 1/x` for positive `x`).
    Always,
    /// The guard holds nowhere on the interval.
    Never,
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
            let b = bound_of(store, part, x, iv.discrete)
                .or_else(|| scaled_bound(store, ctx, part, x, &iv));
            match b {
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
                Some(Bound::Always) => {}
                Some(Bound::Never) => possible = false,
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

/// The bound a comparison puts on a continuous `x` that is not linear in it but is once
/// multiplied by `x` (`t < 1/x` is `t·x < 1`, then `x < 1/t`): with `x`'s interval
/// proved positive, multiplying by `x` keeps the comparison's direction; the product
/// must be `A·x + B` with `A` and `B` free of `x`, and the sign of `A` proved under
/// `ctx` (dividing by a positive `A` keeps the direction, by a negative one turns it).
/// Also the plain `A·x + B REL 0` with a symbolic `A` of proved sign, and a product free
/// of `x` whose comparison with 0 is decided (the guard holds everywhere or nowhere).
/// `None` otherwise.
fn scaled_bound(
    store: &mut Store,
    ctx: &Context,
    g: TermId,
    x: VarId,
    iv: &Interval,
) -> Option<Bound> {
    if iv.discrete {
        return None;
    }
    let cmp = Comparison::of_term(store, g)?.ok()?;
    let upper_rel = match cmp.rel {
        Rel::Lt | Rel::Le => true,
        Rel::Eq | Rel::Ne => return None,
    };
    // x as a real kernel (`prob2real(x)` for a prob x)
    let xt = store.var_term(x);
    let xt = terms::coerce(store, xt, &Type::Real);
    let lin = cmp.lin.to_term(store, &Type::Real);
    let lin = slic_algebra::canon::canonicalize(store, &Context::new(), lin);
    // A·x + B of `lin` itself, or of `lin · x` when x > 0 on its interval (B absent is 0)
    let affine = |store: &mut Store, t: TermId| {
        let (a, b) = terms::affine_in(store, t, xt)?;
        Some((a, b.unwrap_or_else(|| terms::int(store, 0, &Type::Real))))
    };
    let direct = affine(store, lin);
    let (a, b) = match direct {
        Some(ab) => ab,
        None => {
            let zero = terms::int(store, 0, &Type::Real);
            let positive = iv.lo.is_some_and(|lo| {
                let c = terms::compare(store, Prim::Le, zero, lo);
                cond::decide(store, ctx, c) == Tri::True
            });
            if !positive {
                return None;
            }
            let times_x = store.prim(Prim::Mul, vec![lin, xt], Type::Real);
            let times_x = slic_algebra::canon::canonicalize(store, &Context::new(), times_x);
            affine(store, times_x)?
        }
    };
    if a.is_some_and(|a| vars::mentions(store, a, x)) || vars::mentions(store, b, x) {
        return None;
    }
    let Some(a) = a else {
        // `B REL 0` with B free of x: decided for the whole interval, or left alone
        let c = match cmp.rel {
            Rel::Lt => Prim::Lt,
            _ => Prim::Le,
        };
        let zero = terms::int(store, 0, &Type::Real);
        let holds = terms::compare(store, c, b, zero);
        return match cond::decide(store, ctx, holds) {
            Tri::True => Some(Bound::Always),
            Tri::False => Some(Bound::Never),
            Tri::Unknown => None,
        };
    };
    let zero = terms::int(store, 0, &Type::Real);
    let a_pos = terms::compare(store, Prim::Lt, zero, a);
    let a_neg = terms::compare(store, Prim::Lt, a, zero);
    let positive = match cond::decide(store, ctx, a_pos) {
        Tri::True => true,
        _ if cond::decide(store, ctx, a_neg) == Tri::True => false,
        _ => return None,
    };
    // A·x + B REL 0  ⇔  x REL -B/A (A > 0), x REL' -B/A (A < 0)
    let neg_b = store.prim(Prim::Neg, vec![b], Type::Real);
    let inv_a = store.prim(Prim::Recip, vec![a], Type::Real);
    let value = store.prim(Prim::Mul, vec![neg_b, inv_a], Type::Real);
    let value = slic_algebra::canon::canonicalize(store, &Context::new(), value);
    Some(if upper_rel == positive {
        Bound::Upper(value)
    } else {
        Bound::Lower(value)
    })
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
    match decide_le(store, ctx, new, old) {
        Tri::True => Some(if lower { old } else { new }),
        Tri::False => Some(if lower { new } else { old }),
        Tri::Unknown => match decide_le(store, ctx, old, new) {
            Tri::True => Some(if lower { new } else { old }),
            _ => None,
        },
    }
}

/// `a <= b` decided under `ctx`; where the comparison cannot be decided as written, the
/// difference `a - b` written as one quotient `n / u` with `0 < u` proved is decided by
/// the sign of `n` (`1 <= 1 / t` is `t <= 1` for positive `t`).
fn decide_le(store: &mut Store, ctx: &Context, a: TermId, b: TermId) -> Tri {
    let le = terms::compare(store, Prim::Le, a, b);
    let direct = cond::decide(store, ctx, le);
    if direct != Tri::Unknown {
        return direct;
    }
    let a = terms::coerce(store, a, &Type::Real);
    let b = terms::coerce(store, b, &Type::Real);
    let nb = store.prim(Prim::Neg, vec![b], Type::Real);
    let d = store.prim(Prim::Add, vec![a, nb], Type::Real);
    let d = slic_algebra::canon::canonicalize(store, &Context::new(), d);
    // `-(n / u)` is `(-n) / u`
    let (negated, d) = match store.node(d) {
        Node::Prim(Prim::Neg, x) if x.len() == 1 => (true, x[0]),
        _ => (false, d),
    };
    let Node::Prim(Prim::Mul, xs) = store.node(d).clone() else {
        return Tri::Unknown;
    };
    let zero = terms::int(store, 0, &Type::Real);
    let mut numerator = Vec::new();
    let mut divided = false;
    for x in xs {
        if let Node::Prim(Prim::Recip, u) = store.node(x).clone() {
            let u = terms::coerce(store, u[0], &Type::Real);
            let pos = terms::compare(store, Prim::Lt, zero, u);
            if cond::decide(store, ctx, pos) == Tri::True {
                divided = true;
                continue;
            }
        }
        numerator.push(x);
    }
    if !divided {
        return Tri::Unknown;
    }
    let n = match numerator.len() {
        0 => terms::int(store, 1, &Type::Real),
        1 => numerator[0],
        _ => store.prim(Prim::Mul, numerator, Type::Real),
    };
    let n = if negated {
        store.prim(Prim::Neg, vec![n], Type::Real)
    } else {
        n
    };
    let le = terms::compare(store, Prim::Le, n, zero);
    cond::decide(store, ctx, le)
}
