//! The primitive measures: parameter validation, log densities and draws.
//!
//! Densities are with respect to lebesgue measure for the continuous primitives (uniform,
//! normal, gamma, beta, and lebesgue itself, whose density is the indicator of its
//! interval) and counting measure for the discrete ones (poisson, categorical, counting).
//! A value outside the support has log density `-inf`; parameters that define no measure
//! (`normal(0, 0)`, `uniform(2, 1)`, a NaN anywhere) are an [`EvalError::BadParameter`].
//! `categorical(v)` is normalised: index `i` has probability `v[i] / Σ v`, and with
//! `Σ v = 0` it is the zero measure.
//!
//! Parameters arrive as [`Value`]s (prob in log space) and leave as plain `f64`s here, so
//! the samplers and integrators need not know the value representation. Nothing in this
//! module evaluates terms.

use slic_algebra::Dist;

use crate::error::{EvalError, EvalResult};
use crate::rng::{log_sum_exp, Rng};
use crate::value::Value;

/// A primitive measure with validated parameters (linear scale unless named `ln_`).
#[derive(Clone, Debug, PartialEq)]
pub enum PrimMeasure {
    /// Lebesgue measure on `[lo, hi]` (`lo <= hi`, either may be infinite).
    Lebesgue {
        lo: f64,
        hi: f64,
    },
    /// Counting measure on the integers.
    Counting,
    Uniform {
        lo: f64,
        hi: f64,
    },
    Normal {
        mean: f64,
        sd: f64,
    },
    Gamma {
        shape: f64,
        scale: f64,
    },
    Beta {
        a: f64,
        b: f64,
    },
    Poisson {
        rate: f64,
    },
    /// Log weights (not normalised) and their log-sum (`-inf`: the zero measure).
    Categorical {
        ln_w: Vec<f64>,
        ln_total: f64,
    },
}

fn real_arg(d: Dist, v: &Value) -> EvalResult<f64> {
    v.as_f64().ok_or_else(|| EvalError::BadParameter {
        dist: d.name(),
        reason: format!("expected a number, found {}", v.kind()),
    })
}

fn bad(d: Dist, reason: String) -> EvalError {
    EvalError::BadParameter {
        dist: d.name(),
        reason,
    }
}

impl PrimMeasure {
    /// Validates the evaluated arguments of `d(args...)`.
    pub fn new(d: Dist, args: &[Value]) -> EvalResult<PrimMeasure> {
        let want = d.param_types().len();
        if args.len() != want {
            return Err(bad(
                d,
                format!("expected {want} arguments, found {}", args.len()),
            ));
        }
        match d {
            Dist::Counting => Ok(PrimMeasure::Counting),
            Dist::Lebesgue | Dist::Uniform => {
                let lo = real_arg(d, &args[0])?;
                let hi = real_arg(d, &args[1])?;
                if lo.is_nan() || hi.is_nan() || lo > hi {
                    return Err(bad(d, format!("the bounds ({lo}, {hi}) are not ordered")));
                }
                if d == Dist::Lebesgue {
                    return Ok(PrimMeasure::Lebesgue { lo, hi });
                }
                if !(lo.is_finite() && hi.is_finite()) || lo >= hi {
                    return Err(bad(
                        d,
                        format!("the bounds ({lo}, {hi}) must be finite with lo < hi"),
                    ));
                }
                Ok(PrimMeasure::Uniform { lo, hi })
            }
            Dist::Normal => {
                let mean = real_arg(d, &args[0])?;
                let sd = real_arg(d, &args[1])?;
                if !mean.is_finite() {
                    return Err(bad(d, format!("the mean {mean} is not finite")));
                }
                if !(sd > 0.0 && sd.is_finite()) {
                    return Err(bad(
                        d,
                        format!("the standard deviation {sd} is not positive and finite"),
                    ));
                }
                Ok(PrimMeasure::Normal { mean, sd })
            }
            Dist::Gamma | Dist::Beta => {
                let p = real_arg(d, &args[0])?;
                let q = real_arg(d, &args[1])?;
                for (name, x) in [("first", p), ("second", q)] {
                    if !(x > 0.0 && x.is_finite()) {
                        return Err(bad(
                            d,
                            format!("the {name} parameter {x} is not positive and finite"),
                        ));
                    }
                }
                Ok(if d == Dist::Gamma {
                    PrimMeasure::Gamma { shape: p, scale: q }
                } else {
                    PrimMeasure::Beta { a: p, b: q }
                })
            }
            Dist::Poisson => {
                let rate = real_arg(d, &args[0])?;
                if !(rate >= 0.0 && rate.is_finite()) {
                    return Err(bad(
                        d,
                        format!("the rate {rate} is not finite and non-negative"),
                    ));
                }
                Ok(PrimMeasure::Poisson { rate })
            }
            Dist::Categorical => {
                let Value::Array(items) = &args[0] else {
                    return Err(bad(
                        d,
                        format!("expected an array, found {}", args[0].kind()),
                    ));
                };
                let mut ln_w = Vec::with_capacity(items.len());
                for it in items.iter() {
                    let l = match it {
                        Value::Prob(l) => *l,
                        other => {
                            let x = real_arg(d, other)?;
                            if x < 0.0 {
                                return Err(bad(d, format!("the weight {x} is negative")));
                            }
                            x.ln()
                        }
                    };
                    if l.is_nan() || l == f64::INFINITY {
                        return Err(bad(d, format!("the weight {} is not finite", l.exp())));
                    }
                    ln_w.push(l);
                }
                let ln_total = log_sum_exp(&ln_w);
                if ln_total == f64::INFINITY {
                    return Err(bad(d, "the weights sum to infinity".to_string()));
                }
                Ok(PrimMeasure::Categorical { ln_w, ln_total })
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            PrimMeasure::Lebesgue { .. } => "lebesgue",
            PrimMeasure::Counting => "counting",
            PrimMeasure::Uniform { .. } => "uniform",
            PrimMeasure::Normal { .. } => "normal",
            PrimMeasure::Gamma { .. } => "gamma",
            PrimMeasure::Beta { .. } => "beta",
            PrimMeasure::Poisson { .. } => "poisson",
            PrimMeasure::Categorical { .. } => "categorical",
        }
    }

    /// Is this measure over a discrete set (nat or int)?
    pub fn is_discrete(&self) -> bool {
        matches!(
            self,
            PrimMeasure::Counting | PrimMeasure::Poisson { .. } | PrimMeasure::Categorical { .. }
        )
    }

    /// The log density at `v` (a value of the measure's support type), `-inf` outside
    /// the support.
    pub fn log_density(&self, v: &Value) -> EvalResult<f64> {
        let ninf = f64::NEG_INFINITY;
        let mismatch = || EvalError::BadArgument {
            op: format!("observe({})", self.name()),
            reason: format!("cannot observe {} here", v.kind()),
        };
        Ok(match self {
            PrimMeasure::Counting => match v {
                Value::Int(_) | Value::Nat(_) => 0.0,
                _ => return Err(mismatch()),
            },
            PrimMeasure::Poisson { rate } => {
                let Value::Nat(k) = v else {
                    return Err(mismatch());
                };
                poisson_ln_pmf(*rate, *k)
            }
            PrimMeasure::Categorical { ln_w, ln_total } => {
                let Value::Nat(k) = v else {
                    return Err(mismatch());
                };
                if *ln_total == ninf {
                    return Ok(ninf);
                }
                match usize::try_from(*k).ok().and_then(|k| ln_w.get(k)) {
                    Some(l) => l - ln_total,
                    None => ninf,
                }
            }
            PrimMeasure::Gamma { shape, scale } => {
                let ln_x = ln_of(v).ok_or_else(mismatch)?;
                gamma_ln_pdf(*shape, *scale, ln_x)
            }
            PrimMeasure::Beta { a, b } => {
                let ln_x = ln_of(v).ok_or_else(mismatch)?;
                beta_ln_pdf(*a, *b, ln_x)
            }
            PrimMeasure::Lebesgue { lo, hi } => {
                let x = v.as_f64().ok_or_else(mismatch)?;
                if x >= *lo && x <= *hi {
                    0.0
                } else {
                    ninf
                }
            }
            PrimMeasure::Uniform { lo, hi } => {
                let x = v.as_f64().ok_or_else(mismatch)?;
                if x >= *lo && x <= *hi {
                    -(hi - lo).ln()
                } else {
                    ninf
                }
            }
            PrimMeasure::Normal { mean, sd } => {
                let x = v.as_f64().ok_or_else(mismatch)?;
                if !x.is_finite() {
                    return Ok(ninf);
                }
                normal_ln_pdf(*mean, *sd, x)
            }
        })
    }

    /// One draw (always with weight 1: every sampleable primitive is a probability
    /// measure, except a categorical with zero total weight, which gives `None`).
    pub fn sample(&self, rng: &mut Rng) -> EvalResult<Option<Value>> {
        let stuck = || EvalError::Budget {
            what: format!("the {} sampler did not accept a draw", self.name()),
        };
        Ok(Some(match self {
            PrimMeasure::Lebesgue { .. } | PrimMeasure::Counting => {
                return Err(EvalError::Unsampleable {
                    measure: self.name(),
                })
            }
            PrimMeasure::Uniform { lo, hi } => Value::Real(lo + (hi - lo) * rng.uniform()),
            PrimMeasure::Normal { mean, sd } => Value::Real(mean + sd * rng.normal()),
            PrimMeasure::Gamma { shape, scale } => {
                Value::Prob(rng.ln_gamma_variate(*shape).ok_or_else(stuck)? + scale.ln())
            }
            PrimMeasure::Beta { a, b } => {
                Value::Prob(rng.ln_beta_variate(*a, *b).ok_or_else(stuck)?)
            }
            PrimMeasure::Poisson { rate } => Value::Nat(rng.poisson(*rate).ok_or_else(stuck)?),
            PrimMeasure::Categorical { ln_w, .. } => match rng.categorical(ln_w) {
                Some(i) => Value::Nat(i as u64),
                None => return Ok(None),
            },
        }))
    }
}

/// The natural log of a non-negative number value (prob directly; nat, real by `ln`).
fn ln_of(v: &Value) -> Option<f64> {
    match v {
        Value::Prob(l) => Some(*l),
        other => {
            let x = other.as_f64()?;
            Some(if x < 0.0 { f64::NAN } else { x.ln() })
        }
    }
}

pub fn lgamma(x: f64) -> f64 {
    libm::lgamma_r(x).0
}

pub fn normal_ln_pdf(mean: f64, sd: f64, x: f64) -> f64 {
    let z = (x - mean) / sd;
    -0.5 * z * z - sd.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
}

pub fn poisson_ln_pmf(rate: f64, k: u64) -> f64 {
    if rate == 0.0 {
        return if k == 0 { 0.0 } else { f64::NEG_INFINITY };
    }
    let kf = k as f64;
    kf * rate.ln() - rate - lgamma(kf + 1.0)
}

/// `(c - 1) * ln_x`, with the convention `0 * ln 0 = 0` (so `x^0 = 1` at `x = 0`).
fn pow_term(c: f64, ln_x: f64) -> f64 {
    if c == 1.0 {
        0.0
    } else {
        (c - 1.0) * ln_x
    }
}

pub fn gamma_ln_pdf(shape: f64, scale: f64, ln_x: f64) -> f64 {
    if ln_x.is_nan() {
        return f64::NEG_INFINITY;
    }
    let x = ln_x.exp();
    if x == f64::INFINITY {
        return f64::NEG_INFINITY;
    }
    pow_term(shape, ln_x) - x / scale - lgamma(shape) - shape * scale.ln()
}

pub fn beta_ln_pdf(a: f64, b: f64, ln_x: f64) -> f64 {
    if ln_x.is_nan() || ln_x > 0.0 {
        return f64::NEG_INFINITY;
    }
    // ln(1 - x) from ln x, accurately for x near 0 and near 1.
    let ln_1mx = if ln_x < -std::f64::consts::LN_2 {
        (-ln_x.exp()).ln_1p()
    } else {
        (-ln_x.exp_m1()).ln()
    };
    pow_term(a, ln_x) + pow_term(b, ln_1mx) - ln_beta(a, b)
}

pub fn ln_beta(a: f64, b: f64) -> f64 {
    lgamma(a) + lgamma(b) - lgamma(a + b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * (1.0 + b.abs())
    }

    #[test]
    fn densities_match_closed_forms() {
        let n = PrimMeasure::new(Dist::Normal, &[Value::Real(0.0), Value::prob(1.0)]).unwrap();
        let want = (-0.5f64).exp() / (2.0 * std::f64::consts::PI).sqrt();
        assert!(close(n.log_density(&Value::Real(1.0)).unwrap(), want.ln()));
        let g = PrimMeasure::new(Dist::Gamma, &[Value::prob(2.0), Value::prob(3.0)]).unwrap();
        // x e^{-x/3} / 9 at x = 1
        assert!(close(
            g.log_density(&Value::prob(1.0)).unwrap(),
            (-1.0f64 / 3.0).exp().ln() - 9f64.ln()
        ));
        let e = PrimMeasure::new(Dist::Gamma, &[Value::prob(1.0), Value::prob(2.0)]).unwrap();
        assert!(close(
            e.log_density(&Value::prob(0.0)).unwrap(),
            -(2f64.ln())
        ));
        let b = PrimMeasure::new(Dist::Beta, &[Value::prob(2.0), Value::prob(3.0)]).unwrap();
        // 12 x (1-x)^2 at x = 1/2
        assert!(close(
            b.log_density(&Value::prob(0.5)).unwrap(),
            1.5f64.ln()
        ));
        assert_eq!(b.log_density(&Value::prob(1.5)).unwrap(), f64::NEG_INFINITY);
        let p = PrimMeasure::new(Dist::Poisson, &[Value::prob(2.0)]).unwrap();
        assert!(close(
            p.log_density(&Value::Nat(3)).unwrap(),
            (8.0 * (-2f64).exp() / 6.0).ln()
        ));
        let c = PrimMeasure::new(
            Dist::Categorical,
            &[Value::array(vec![Value::prob(1.0), Value::prob(3.0)])],
        )
        .unwrap();
        assert!(close(c.log_density(&Value::Nat(1)).unwrap(), 0.75f64.ln()));
        assert_eq!(c.log_density(&Value::Nat(2)).unwrap(), f64::NEG_INFINITY);
        let u = PrimMeasure::new(Dist::Uniform, &[Value::Real(3.0), Value::Real(7.0)]).unwrap();
        assert!(close(
            u.log_density(&Value::Real(4.0)).unwrap(),
            0.25f64.ln()
        ));
        assert_eq!(u.log_density(&Value::Real(8.0)).unwrap(), f64::NEG_INFINITY);
    }

    #[test]
    fn bad_parameters_are_errors() {
        for (d, args) in [
            (Dist::Normal, vec![Value::Real(0.0), Value::prob(0.0)]),
            (Dist::Normal, vec![Value::Real(f64::NAN), Value::prob(1.0)]),
            (Dist::Uniform, vec![Value::Real(2.0), Value::Real(1.0)]),
            (
                Dist::Uniform,
                vec![Value::Real(0.0), Value::Real(f64::INFINITY)],
            ),
            (Dist::Gamma, vec![Value::prob(0.0), Value::prob(1.0)]),
            (
                Dist::Beta,
                vec![Value::prob(1.0), Value::Prob(f64::INFINITY)],
            ),
            (Dist::Poisson, vec![Value::Prob(f64::INFINITY)]),
            (Dist::Lebesgue, vec![Value::Real(1.0), Value::Real(0.0)]),
            (Dist::Normal, vec![Value::Real(0.0)]),
        ] {
            assert!(
                matches!(
                    PrimMeasure::new(d, &args),
                    Err(EvalError::BadParameter { .. })
                ),
                "{d:?} {args:?}"
            );
        }
    }
}
