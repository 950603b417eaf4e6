//! The distribution table: the families recognition can return, each with its density,
//! its normalising constant and (where the language has one) its primitive measure term.
//!
//! Continuous rows live in `family/continuous.rs`, discrete rows in
//! `family/discrete.rs`; this file holds the shared types. Parameters are terms of the
//! types the language gives them (mean real, sd prob, shape/scale prob, ...); a
//! [`Recognised`] value says `f(x) dx = weight · law(shift + scale · u)` with `u` drawn
//! from the family, so a beta on `(lo, hi)` or a categorical over `lo..hi` is a standard
//! family plus an affine map.

pub(crate) mod continuous;
mod discrete;

use slic_algebra::{Store, TermId};

/// A recognised distribution with its parameters (terms free of the variable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Family {
    /// `normal(mean, sd)` on the reals: density `exp(-(u-mean)^2/(2 sd^2)) / (sqrt(2 pi) sd)`.
    Normal { mean: TermId, sd: TermId },
    /// `gamma(shape, scale)` on `(0, ∞)`: density `u^(shape-1) exp(-u/scale) / (Γ(shape) scale^shape)`
    /// (exponential and chi-square are gammas).
    Gamma { shape: TermId, scale: TermId },
    /// `beta(a, b)` on `(0, 1)`: density `u^(a-1) (1-u)^(b-1) / B(a, b)`.
    Beta { a: TermId, b: TermId },
    /// `uniform(lo, hi)` on `(lo, hi)` (real bounds): density `1 / (hi - lo)`.
    Uniform { lo: TermId, hi: TermId },
    /// Student-t with `nu` degrees of freedom, location and scale, on the reals (Cauchy is
    /// `nu = 1`): density `(1 + ((u-loc)/scale)^2/nu)^(-(nu+1)/2) / (scale sqrt(nu) B(1/2, nu/2))`.
    /// The language has no such primitive: [`Family::dist_term`] gives `None`.
    StudentT {
        nu: TermId,
        loc: TermId,
        scale: TermId,
    },
    /// `poisson(rate)` on nat: mass `rate^u exp(-rate) / u!`.
    Poisson { rate: TermId },
    /// Negative binomial on nat (failures before the `r`-th success, success probability
    /// `p`): mass `Γ(u+r) / (u! Γ(r)) p^r (1-p)^u`; the geometric law is `r = 1`. No
    /// primitive in the language.
    NegBinomial { r: TermId, p: TermId },
    /// `categorical(weights)` on `0..size(weights)` (`weights`: an array(prob) term, not
    /// necessarily normalised).
    Categorical { weights: TermId },
}

/// The affine map `x = shift + scale · u` from the family's variable `u` to the
/// recognised variable `x`; `None` parts are 0 and 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    pub shift: Option<TermId>,
    pub scale: Option<TermId>,
}

/// `f(x) dx = weight · law(map(u))`, `u ~ family`: the answer of recognition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recognised {
    /// A prob term free of the variable: `∫ f` (or `Σ f`) over the support.
    pub weight: TermId,
    pub family: Family,
    pub map: Affine,
}

impl Family {
    /// The primitive measure term (`normal(mean, sd)`, ...) of the family, or `None` when
    /// the language has no primitive for it (Student-t, negative binomial).
    pub fn dist_term(&self, store: &mut Store) -> Option<TermId> {
        match self {
            Family::Poisson { .. } | Family::NegBinomial { .. } | Family::Categorical { .. } => {
                discrete::dist_term(self, store)
            }
            _ => continuous::dist_term(self, store),
        }
    }

    /// The density (w.r.t. lebesgue or counting) at `u`, a prob term.
    pub fn density(&self, store: &mut Store, u: TermId) -> TermId {
        match self {
            Family::Poisson { .. } | Family::NegBinomial { .. } | Family::Categorical { .. } => {
                discrete::density(self, store, u)
            }
            _ => continuous::density(self, store, u),
        }
    }

    /// Is this a family over the integers?
    pub fn is_discrete(&self) -> bool {
        matches!(
            self,
            Family::Poisson { .. } | Family::NegBinomial { .. } | Family::Categorical { .. }
        )
    }
}
