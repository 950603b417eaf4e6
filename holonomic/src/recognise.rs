//! Recognition: from a factor, its variable and its support to `(weight, family)`, and
//! the exact integrals and sums that follow from it. Continuous variables are handled in
//! `recognise/continuous.rs`, discrete ones in `recognise/discrete.rs`.

mod continuous;
mod discrete;

use slic_algebra::assume::Context;
use slic_algebra::{Store, TermId, VarId};

use crate::family::Recognised;
use crate::support::Support;

/// Why a factor was not recognised (for the simplifier's report; never an error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Miss {
    /// Some subterm mentions the variable in a way with no holonomic rule (`erf(x)`,
    /// `a[x]`, `x ** x`, `floor(x)`, ...).
    NotHolonomic,
    /// The operator has this order (a mixture), and no family of that order exists.
    Order(usize),
    /// The operator is first order but its coefficients fit no family on this support.
    NoFamily,
    /// A family fits but a parameter could not be proved valid (a positive variance, a
    /// shape above zero, a ratio below one for convergence).
    Unproved,
    /// The work exceeded a size budget.
    Budget,
}

/// In user words, as what the density is: the simplifier writes "its density (...) is
/// {miss}" (issue: notes in a user's words, no internal names).
impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Miss::NotHolonomic => f.write_str(
                "not holonomic (no linear differential or recurrence equation with polynomial \
                 coefficients could be derived for it)",
            ),
            Miss::Order(n) => write!(
                f,
                "a mixture or other form whose equation has order {n}, and no known family has \
                 one of that order"
            ),
            Miss::NoFamily => f.write_str("not one of the known families"),
            Miss::Unproved => f.write_str(
                "of a known family, but a condition on its parameters (such as a positive \
                 variance or shape, or a ratio below one) could not be proved",
            ),
            Miss::Budget => f.write_str("too large to analyse within the size budget"),
        }
    }
}

/// `f(x) dx = weight · law` for the variable `x` ranging over `support`, exactly, or why
/// not. `f` is a prob term; the answer's terms are free of `x`.
pub fn recognise(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    x: VarId,
    support: &Support,
) -> Result<Recognised, Miss> {
    match support {
        Support::Real { .. } => continuous::recognise(store, ctx, f, x, support),
        Support::Int { .. } => discrete::recognise(store, ctx, f, x, support),
    }
}

/// `∫ f(x) dx` over a real support, exactly (the weight of [`recognise`]).
pub fn integrate(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    x: VarId,
    support: &Support,
) -> Result<TermId, Miss> {
    recognise(store, ctx, f, x, support).map(|r| r.weight)
}

/// `Σ_k f(k)` over an integer support, exactly (the weight of [`recognise`]).
pub fn sum(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    k: VarId,
    support: &Support,
) -> Result<TermId, Miss> {
    recognise(store, ctx, f, k, support).map(|r| r.weight)
}
