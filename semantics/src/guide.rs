//! The importance proposal of the adaptive sampler: a multivariate Student-t over a run's
//! continuous draws, in unconstrained coordinates, fitted to weighted draws.
//!
//! A run's continuous draws (normal, gamma, beta, uniform), in the order they are made,
//! form its *trace*. Each draw gets an unconstrained coordinate `z` ([`Coord`]): a normal
//! its value, a gamma its log, a beta the logit of its value, a uniform the logit of its
//! position in the interval. [`Guide`] is a multivariate t with `nu` degrees of freedom
//! over the first `kinds.len()` coordinates, held as its mean and the Cholesky factor `L`
//! of its scale, so that it can be drawn and evaluated *one coordinate at a time*, each
//! conditional on the coordinates before it (the conditional of a multivariate t is a t
//! whose degrees of freedom grow by one per coordinate seen and whose scale grows with
//! the Mahalanobis distance seen so far). That is what lets the proposal act on a run
//! whose later draws depend on its earlier ones: the program decides, draw by draw, what
//! comes next, and the proposal is consulted only for the draw at hand. Heavy tails (a t,
//! not a normal) keep the importance weights bounded where the fit is too narrow.
//!
//! [`fit`] is one step of the cross-entropy method (population Monte Carlo): the weighted
//! mean and covariance of the traces of the last round, with the weights tempered
//! (`w^beta`, the largest `beta <= 1` whose effective sample size is a quarter of the
//! draws) so that a round whose weights are degenerate still moves the proposal toward
//! the target without collapsing onto a few draws.
//!
//! This module only proposes; whether a weight is right is the walk's business
//! (`enumerate.rs`): the weight of a path is target density over proposal density in the
//! same coordinates, so a poor fit costs efficiency, never correctness.

use crate::dist::{lgamma, ln_beta, PrimMeasure};
use crate::rng::{log_sum_exp, Rng};
use crate::value::Value;

/// How a continuous draw maps to the real line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coord {
    /// A normal: the value itself.
    Real,
    /// A gamma: the log of the value.
    Positive,
    /// A beta: the logit of the value.
    Unit,
    /// A uniform on `(lo, hi)`: the logit of `(x - lo) / (hi - lo)`.
    Interval,
}

/// `ln(1 + e^x)` without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// A continuous draw located on the real line: its coordinate, its value and the log of
/// its prior density *in that coordinate* (the density of the value times `|dx/dz|`).
#[derive(Clone, Debug)]
pub struct Located {
    pub z: f64,
    pub value: Value,
    pub ln_prior_z: f64,
}

impl Coord {
    /// The coordinate of a sampleable continuous primitive; `None` for the others.
    pub fn of(pm: &PrimMeasure) -> Option<Coord> {
        match pm {
            PrimMeasure::Normal { .. } => Some(Coord::Real),
            PrimMeasure::Gamma { .. } => Some(Coord::Positive),
            PrimMeasure::Beta { .. } => Some(Coord::Unit),
            PrimMeasure::Uniform { .. } => Some(Coord::Interval),
            _ => None,
        }
    }

    /// The draw of `pm` whose coordinate is `z`, with its prior density in `z`, computed
    /// in `z` itself: a beta near 1 has `ln(1 - x) = -softplus(z)` to full precision, where
    /// going through `x` would round it to `ln 0` (with `beta(0.1, 0.1)` that is a few
    /// percent of the draws, whose loss would bias the judge's estimates).
    pub fn from_z(self, pm: &PrimMeasure, z: f64) -> Option<Located> {
        if !z.is_finite() {
            return None;
        }
        let (value, ln_prior_z) = match (self, pm) {
            (Coord::Real, PrimMeasure::Normal { mean, sd }) => {
                (Value::Real(z), crate::dist::normal_ln_pdf(*mean, *sd, z))
            }
            (Coord::Positive, PrimMeasure::Gamma { shape, scale }) => {
                // x^k e^(-x/θ) / (Γ(k) θ^k): the gamma density times the Jacobian x
                let lp = shape * z - z.exp() / scale - lgamma(*shape) - shape * scale.ln();
                (Value::Prob(z), lp)
            }
            (Coord::Unit, PrimMeasure::Beta { a, b }) => {
                // ln x = -softplus(-z), ln(1 - x) = -softplus(z); x^a (1-x)^b / B(a, b)
                let (lx, l1x) = (-softplus(-z), -softplus(z));
                (Value::Prob(lx), a * lx + b * l1x - ln_beta(*a, *b))
            }
            (Coord::Interval, PrimMeasure::Uniform { lo, hi }) => {
                // the uniform density 1/(hi - lo) times the Jacobian (hi - lo) u (1 - u)
                let (lu, l1u) = (-softplus(-z), -softplus(z));
                let x = lo + (hi - lo) * lu.exp();
                (Value::Real(x.min(*hi)), lu + l1u)
            }
            _ => return None,
        };
        Some(Located {
            z,
            value,
            ln_prior_z,
        })
    }

    /// A draw of `pm` from its prior, made in the coordinate (a beta as the log-ratio of
    /// two gamma variates, a uniform as the logit of an open uniform), so that it is
    /// never on the boundary; `None` when a sampler gives up.
    pub fn prior_draw(self, pm: &PrimMeasure, rng: &mut Rng) -> Option<Located> {
        let z = match (self, pm) {
            (Coord::Real, PrimMeasure::Normal { mean, sd }) => mean + sd * rng.normal(),
            (Coord::Positive, PrimMeasure::Gamma { shape, scale }) => {
                rng.ln_gamma_variate(*shape)? + scale.ln()
            }
            (Coord::Unit, PrimMeasure::Beta { a, b }) => {
                rng.ln_gamma_variate(*a)? - rng.ln_gamma_variate(*b)?
            }
            (Coord::Interval, PrimMeasure::Uniform { .. }) => {
                let u = rng.uniform_open();
                u.ln() - (-u).ln_1p()
            }
            _ => return None,
        };
        self.from_z(pm, z)
    }
}

/// The log density of Student's t with `dof` degrees of freedom at `t`.
fn t_ln_pdf(dof: f64, t: f64) -> f64 {
    lgamma(0.5 * (dof + 1.0))
        - lgamma(0.5 * dof)
        - 0.5 * (dof * std::f64::consts::PI).ln()
        - 0.5 * (dof + 1.0) * (t * t / dof).ln_1p()
}

/// A Student-t variate with `dof` degrees of freedom.
fn t_variate(rng: &mut Rng, dof: f64) -> Option<f64> {
    let n = rng.normal();
    let chi2 = 2.0 * rng.ln_gamma_variate(0.5 * dof)?.exp();
    if chi2 <= 0.0 {
        return None;
    }
    Some(n / (chi2 / dof).sqrt())
}

/// A multivariate Student-t over the first `kinds.len()` coordinates of a trace.
#[derive(Clone, Debug)]
pub struct Guide {
    /// The coordinate kind expected at each position; a run whose draw at a position is
    /// of another kind (or beyond the last) is drawn from its prior from there on.
    pub kinds: Vec<Coord>,
    pub mean: Vec<f64>,
    /// Lower-triangular Cholesky factor of the scale matrix, row by row.
    pub chol: Vec<Vec<f64>>,
    /// Degrees of freedom.
    pub nu: f64,
}

/// Where a run stands in the guide: the standardised coordinates so far.
#[derive(Clone, Debug, Default)]
pub struct Cursor {
    /// `ε_j = (z_j - μ_j) / L_jj` for the coordinates drawn so far, `μ_j` conditional.
    pub eps: Vec<f64>,
    /// `Σ ε_j²`, the squared Mahalanobis distance of the prefix.
    pub dist2: f64,
}

impl Guide {
    /// Degrees of freedom of the proposal: heavy tails, finite variance.
    pub const NU: f64 = 5.0;

    pub fn dim(&self) -> usize {
        self.kinds.len()
    }

    /// The conditional t of coordinate `k` given the cursor: (location, scale, dof).
    fn conditional(&self, cur: &Cursor) -> Option<(f64, f64, f64)> {
        let k = cur.eps.len();
        let row = self.chol.get(k)?;
        let loc = self.mean[k] + row.iter().zip(&cur.eps).map(|(l, e)| l * e).sum::<f64>();
        let kf = k as f64;
        let scale = row[k] * ((self.nu + cur.dist2) / (self.nu + kf)).sqrt();
        Some((loc, scale, self.nu + kf))
    }

    /// A draw of the next coordinate: `(z, ln q(z))`.
    pub fn draw(&self, cur: &Cursor, rng: &mut Rng) -> Option<(f64, f64)> {
        let (loc, scale, dof) = self.conditional(cur)?;
        let t = t_variate(rng, dof)?;
        Some((loc + scale * t, t_ln_pdf(dof, t) - scale.ln()))
    }

    /// The log density of the next coordinate at `z`, and the cursor advanced past it.
    pub fn density(&self, cur: &Cursor, z: f64) -> Option<(f64, Cursor)> {
        let (loc, scale, dof) = self.conditional(cur)?;
        let k = cur.eps.len();
        let t = (z - loc) / scale;
        let eps = (z - loc) / self.chol[k][k];
        let mut next = cur.clone();
        next.eps.push(eps);
        next.dist2 += eps * eps;
        Some((t_ln_pdf(dof, t) - scale.ln(), next))
    }
}

/// One weighted trace for fitting: its coordinates and the log of its weight.
#[derive(Clone, Debug)]
pub struct Trace {
    pub kinds: Vec<Coord>,
    pub z: Vec<f64>,
    pub ln_w: f64,
}

/// The effective sample size `(Σw)² / Σw²` of log weights.
pub fn ess(ln_w: &[f64]) -> f64 {
    let a = log_sum_exp(ln_w);
    if a == f64::NEG_INFINITY || a.is_nan() {
        return 0.0;
    }
    let twice: Vec<f64> = ln_w.iter().map(|l| 2.0 * l).collect();
    (2.0 * a - log_sum_exp(&twice)).exp()
}

/// Fit a guide to weighted traces (see the module doc): the traces of the most common
/// shape (sequence of coordinate kinds) by weight, weights tempered to an effective
/// sample size of a quarter of them. `None` when there is nothing with weight to fit.
pub fn fit(traces: &[Trace]) -> Option<Guide> {
    // the shape carrying the most weight
    let mut shapes: Vec<(&[Coord], Vec<f64>)> = Vec::new();
    for t in traces {
        if t.ln_w == f64::NEG_INFINITY || t.ln_w.is_nan() || t.z.is_empty() {
            continue;
        }
        match shapes.iter_mut().find(|(k, _)| *k == t.kinds.as_slice()) {
            Some((_, ws)) => ws.push(t.ln_w),
            None => shapes.push((&t.kinds, vec![t.ln_w])),
        }
    }
    let (kinds, _) = shapes
        .into_iter()
        .max_by(|a, b| log_sum_exp(&a.1).total_cmp(&log_sum_exp(&b.1)))?;
    let chosen: Vec<&Trace> = traces
        .iter()
        .filter(|t| t.kinds == kinds && t.ln_w > f64::NEG_INFINITY && !t.ln_w.is_nan())
        .collect();
    let ln_w: Vec<f64> = chosen.iter().map(|t| t.ln_w).collect();
    // the largest beta in (0, 1] whose tempered ESS reaches a quarter of the traces
    let want = (chosen.len() as f64 / 4.0).max(1.0);
    let tempered = |beta: f64| -> Vec<f64> { ln_w.iter().map(|l| beta * l).collect() };
    let beta = if ess(&ln_w) >= want {
        1.0
    } else {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..40 {
            let mid = 0.5 * (lo + hi);
            if ess(&tempered(mid)) >= want {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let lw = tempered(beta);
    let total = log_sum_exp(&lw);
    let w: Vec<f64> = lw.iter().map(|l| (l - total).exp()).collect();
    let d = kinds.len();
    let mut mean = vec![0.0; d];
    for (t, wi) in chosen.iter().zip(&w) {
        for (m, z) in mean.iter_mut().zip(&t.z) {
            *m += wi * z;
        }
    }
    let mut cov = vec![vec![0.0; d]; d];
    for (t, wi) in chosen.iter().zip(&w) {
        for i in 0..d {
            for j in 0..=i {
                cov[i][j] += wi * (t.z[i] - mean[i]) * (t.z[j] - mean[j]);
            }
        }
    }
    // a ridge keeps the factor positive definite when the weighted draws span fewer
    // dimensions than there are coordinates (a round with an ESS of 2 in 5 dimensions)
    let avg_var = (0..d).map(|i| cov[i][i]).sum::<f64>() / d as f64;
    let ridge = 1e-3 * avg_var.max(1e-6);
    for (i, row) in cov.iter_mut().enumerate() {
        row[i] += ridge;
    }
    let chol = cholesky(&cov)?;
    if !mean.iter().all(|m| m.is_finite()) {
        return None;
    }
    Some(Guide {
        kinds: kinds.to_vec(),
        mean,
        chol,
        nu: Guide::NU,
    })
}

/// The lower Cholesky factor of a symmetric matrix given by its lower triangle; `None`
/// when it is not (numerically) positive definite.
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let d = a.len();
    let mut l = vec![vec![0.0; d]; d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let v = a[i][i] - s;
                if !(v > 0.0 && v.is_finite()) {
                    return None;
                }
                l[i][j] = v.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guide_is_a_density_coordinate_by_coordinate() {
        // ∫∫ q(z1) q(z2 | z1) dz1 dz2 = 1 on a grid, for a correlated 2-d guide
        let g = Guide {
            kinds: vec![Coord::Real, Coord::Real],
            mean: vec![1.0, -2.0],
            chol: vec![vec![0.5, 0.0], vec![0.3, 0.8]],
            nu: Guide::NU,
        };
        let h = 0.05;
        let mut total = 0.0;
        for i in -400..400 {
            let z1 = 1.0 + f64::from(i) * h;
            let (l1, c1) = g.density(&Cursor::default(), z1).expect("first");
            for j in -400..400 {
                let z2 = -2.0 + f64::from(j) * h;
                let (l2, _) = g.density(&c1, z2).expect("second");
                total += (l1 + l2).exp() * h * h;
            }
        }
        assert!((total - 1.0).abs() < 2e-3, "{total}");
    }

    #[test]
    fn prior_densities_in_the_coordinates_integrate_to_one() {
        let h = 0.01;
        for pm in [
            PrimMeasure::Beta { a: 2.0, b: 3.0 },
            PrimMeasure::Beta { a: 0.2, b: 0.1 },
            PrimMeasure::Uniform { lo: 2.0, hi: 5.0 },
            PrimMeasure::Gamma {
                shape: 1.5,
                scale: 2.0,
            },
            PrimMeasure::Normal { mean: 1.0, sd: 2.0 },
        ] {
            let c = Coord::of(&pm).expect("continuous");
            let total: f64 = (-40_000..40_000)
                .map(|i| {
                    c.from_z(&pm, f64::from(i) * h)
                        .map_or(0.0, |l| l.ln_prior_z.exp() * h)
                })
                .sum();
            assert!((total - 1.0).abs() < 1e-6, "{pm:?}: {total}");
        }
    }

    #[test]
    fn prior_draws_near_the_boundary_are_kept() {
        // beta(0.2, 0.1) puts a few percent of its draws within rounding of 1
        let pm = PrimMeasure::Beta { a: 0.2, b: 0.1 };
        let mut rng = Rng::seed_from_u64(7);
        let n = 40_000;
        let mut mean = 0.0;
        for _ in 0..n {
            let l = Coord::Unit.prior_draw(&pm, &mut rng).expect("a draw");
            assert!(l.ln_prior_z.is_finite(), "{l:?}");
            mean += l.value.as_f64().expect("a number") / f64::from(n);
        }
        // the mean is a / (a + b) = 2/3, with standard deviation about 0.0022 here
        assert!((mean - 2.0 / 3.0).abs() < 0.01, "{mean}");
    }

    #[test]
    fn fitting_recovers_a_weighted_mean() {
        let traces: Vec<Trace> = (0..200)
            .map(|i| {
                let z = f64::from(i) / 20.0 - 5.0;
                Trace {
                    kinds: vec![Coord::Real],
                    z: vec![z],
                    ln_w: -(z - 2.0) * (z - 2.0) / 2.0,
                }
            })
            .collect();
        let g = fit(&traces).expect("fits");
        assert!((g.mean[0] - 2.0).abs() < 0.05, "{:?}", g.mean);
        assert!((g.chol[0][0] - 1.0).abs() < 0.1, "{:?}", g.chol);
    }
}
