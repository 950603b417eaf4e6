//! The distribution table: the families recognition can return, each with its density,
//! its normalising constant and (where the language has one) its primitive measure term.
//!
//! Every family's density is written once, as `.hk` text, in `family/table.rs` (which
//! the simplifier's primitive densities read too); primitive terms and the normalising
//! kernels recognition divides by are in `family/continuous.rs` and
//! `family/discrete.rs`; this file holds the shared types. Parameters are terms of the
//! types the language gives them (mean real, sd prob, shape/scale prob, ...); a
//! [`Recognised`] value says `f(x) dx = weight · law(shift + scale · u)` with `u` drawn
//! from the family, so a beta on `(lo, hi)` or a categorical over `lo..hi` is a standard
//! family plus an affine map.

pub(crate) mod continuous;
mod discrete;
pub mod table;

use crate::terms;
use slic_algebra::assume::Context;
use slic_algebra::{canon, stdlib, Node, Rational, Store, TermId, Type};

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
    /// The language has no such primitive: [`Family::dist_term`] gives `None` and
    /// [`Family::measure_term`] the standard library's `t` (or `cauchy`).
    StudentT {
        nu: TermId,
        loc: TermId,
        scale: TermId,
    },
    /// `poisson(rate)` on nat: mass `rate^u exp(-rate) / u!`.
    Poisson { rate: TermId },
    /// Negative binomial on nat (failures before the `r`-th success, success probability
    /// `p`): mass `Γ(u+r) / (u! Γ(r)) p^r (1-p)^u`; the geometric law is `r = 1`. No
    /// primitive in the language: the standard library's `pascal` (or `geometric`).
    NegBinomial { r: TermId, p: TermId },
    /// `categorical(weights)` on `0..size(weights)` (`weights`: an array(prob) term, not
    /// necessarily normalised).
    Categorical { weights: TermId },
    /// Weibull of whole shape `k >= 2` and scale `lambda` on `(0, ∞)`: density
    /// `k/lambda (u/lambda)^(k-1) exp(-(u/lambda)^k)`. No primitive: the standard
    /// library's `weibull(k, lambda)`, or `rayleigh(lambda / sqrt(2))` when `k` is 2.
    Weibull { k: TermId, lambda: TermId },
    /// Pareto of least value `xm > 0` and shape `alpha` on `(xm, ∞)`: density
    /// `alpha xm^alpha / u^(alpha + 1)`. No primitive: the standard library's `pareto`.
    Pareto { xm: TermId, alpha: TermId },
    /// The power `u^k` (a rational `k`) on `(lo, hi)`, `0 < lo`, normalised: no law of the
    /// language or its library is this, so it is integrated out but never named (the
    /// product of two uniforms has its log density through it).
    Power { k: TermId, lo: TermId, hi: TermId },
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

    /// The measure term of the family: its primitive (`normal(mean, sd)`, ...) or, for a
    /// family the language has no primitive for, the call of its standard-library
    /// definition (`t(nu, loc, scale)`, `cauchy(loc, scale)` when `nu` is 1,
    /// `pascal(r, p)`, `geometric(p)` when `r` is 1), which prints by name, reads back
    /// and samples. `None` only if the library lacks the name (a bug the tests rule out).
    pub fn measure_term(&self, store: &mut Store) -> Option<TermId> {
        if let Some(d) = self.dist_term(store) {
            return Some(d);
        }
        let one = |store: &Store, t: TermId| matches!(store.node(t), Node::Lit(r) if *r == Rational::from_integer(1));
        let (name, args) = match *self {
            Family::StudentT { nu, loc, scale } if one(store, nu) => (
                "cauchy",
                vec![terms::real(store, loc), terms::prob(store, scale)],
            ),
            Family::StudentT { nu, loc, scale } => {
                let nu = terms::prob(store, nu);
                let loc = terms::real(store, loc);
                ("t", vec![nu, loc, terms::prob(store, scale)])
            }
            Family::NegBinomial { r, p } if one(store, r) => {
                ("geometric", vec![terms::prob(store, p)])
            }
            Family::NegBinomial { r, p } => {
                ("pascal", vec![terms::prob(store, r), terms::prob(store, p)])
            }
            Family::Weibull { k, lambda } if terms::is_literal(store, k, 2) => {
                let two = terms::int(store, 2, Type::Prob);
                let root = terms::sqrt(store, two);
                let sigma = terms::div(store, lambda, root, &Type::Prob);
                let sigma = canon::canonicalize(store, &Context::new(), sigma);
                ("rayleigh", vec![sigma])
            }
            Family::Weibull { k, lambda } => (
                "weibull",
                vec![terms::prob(store, k), terms::prob(store, lambda)],
            ),
            Family::Pareto { xm, alpha } => (
                "pareto",
                vec![terms::prob(store, xm), terms::prob(store, alpha)],
            ),
            _ => return None,
        };
        let v = stdlib::var(store, name).ok()??;
        let mut t = store.var_term(v);
        for a in args {
            let Type::Fun(_, res) = store.ty(t).clone() else {
                return None;
            };
            t = store.intern(Node::App(t, a), (*res).clone());
        }
        Some(t)
    }

    /// The density (w.r.t. lebesgue or counting) at `u`, a canonical prob term, from the
    /// one density table (`family/table.rs`). `None` only if the table's row fails to
    /// load, which its tests rule out.
    pub fn density(&self, store: &mut Store, u: TermId) -> Option<TermId> {
        let (row, args) = match *self {
            Family::Normal { mean, sd } => ("normal", vec![mean, sd]),
            Family::Gamma { shape, scale } => ("gamma", vec![shape, scale]),
            Family::Beta { a, b } => ("beta", vec![a, b]),
            Family::Uniform { lo, hi } => ("uniform", vec![lo, hi]),
            Family::StudentT { nu, loc, scale } => ("studentT", vec![nu, loc, scale]),
            Family::Poisson { rate } => ("poisson", vec![rate]),
            Family::NegBinomial { r, p } => ("negBinomial", vec![r, p]),
            Family::Categorical { weights } => ("categorical", vec![weights]),
            Family::Weibull { k, lambda } => ("weibull", vec![k, lambda]),
            Family::Pareto { xm, alpha } => ("pareto", vec![xm, alpha]),
            Family::Power { .. } => return None,
        };
        let t = table::at(store, row, u, &args)?;
        Some(canon::canonicalize(store, &Context::new(), t))
    }

    /// Is this a family over the integers?
    pub fn is_discrete(&self) -> bool {
        matches!(
            self,
            Family::Poisson { .. } | Family::NegBinomial { .. } | Family::Categorical { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::print::print_term;

    /// Families without a primitive are named by their standard-library calls, which
    /// read back to the same term.
    #[test]
    fn library_calls_name_families_without_primitives() {
        let mut store = Store::new();
        let lit = |store: &mut Store, n: i64, ty: Type| terms::int(store, n, ty);
        let (three, zero, one) = (
            lit(&mut store, 3, Type::Prob),
            lit(&mut store, 0, Type::Real),
            lit(&mut store, 1, Type::Prob),
        );
        let half = terms::ratio(&mut store, 1, 2, Type::Prob);
        let cases = [
            (
                Family::StudentT {
                    nu: three,
                    loc: zero,
                    scale: one,
                },
                "t(3, 0, 1)\n",
            ),
            (
                Family::StudentT {
                    nu: one,
                    loc: zero,
                    scale: three,
                },
                "cauchy(0, 3)\n",
            ),
            (
                Family::NegBinomial { r: three, p: half },
                "pascal(3, 1/2)\n",
            ),
            (Family::NegBinomial { r: one, p: half }, "geometric(1/2)\n"),
            (
                Family::Weibull {
                    k: three,
                    lambda: three,
                },
                "weibull(3, 3)\n",
            ),
            (
                Family::Pareto {
                    xm: three,
                    alpha: half,
                },
                "pareto(3, 1/2)\n",
            ),
            (
                Family::Gamma {
                    shape: three,
                    scale: half,
                },
                "gamma(3, 1/2)\n",
            ),
        ];
        // a Weibull of shape 2 is the library's rayleigh, its scale over sqrt(2)
        let two = lit(&mut store, 2, Type::Prob);
        let root2 = terms::sqrt(&mut store, two);
        let cases = cases.into_iter().chain([(
            Family::Weibull {
                k: two,
                lambda: root2,
            },
            "rayleigh(1)\n",
        )]);
        for (family, want) in cases {
            let t = family.measure_term(&mut store).expect("a measure term");
            let text = print_term(&store, t);
            assert_eq!(text, want);
            let back = slic_algebra::front::load(&mut store, &text).expect("reads back");
            assert!(slic_algebra::alpha::alpha_eq(&store, t, back), "{text}");
        }
    }
}
