//! Adaptive Gauss-Kronrod quadrature (7-point Gauss, 15-point Kronrod) on finite and
//! infinite intervals, for integrands that may themselves be numeric estimates.
//!
//! The interpreter needs deterministic integrals in two places: `integrate x from a to b`
//! expressions and the numeric expectation of measures (`expect`). Both call
//! [`integrate`], which splits `[a, b]` at the given breakpoints, maps infinite end
//! panels to finite ones (`x = a + t/(1-t)` on `[a, ∞)`, `x = b - (1-t)/t` on `(-∞, b]`),
//! and then repeatedly bisects the panel with the largest error estimate until the total
//! error is below the tolerance or the panel budget is spent (globally adaptive, as in
//! QUADPACK's QAG). The integrand returns an [`Estimate`]; its own error is integrated
//! alongside and added to the reported error, so nested integrals report honest totals,
//! and bisection stops once the quadrature error is below it (an integrand known to ±e
//! cannot be integrated more accurately than ∫e).
//!
//! This module knows nothing of terms; it never panics (NaN integrands give NaN results).

use crate::error::EvalResult;

/// A numeric result with an estimate of its absolute error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub error: f64,
}

impl Estimate {
    pub fn exact(value: f64) -> Estimate {
        Estimate { value, error: 0.0 }
    }

    pub const ZERO: Estimate = Estimate {
        value: 0.0,
        error: 0.0,
    };

    /// `c * self` for a constant `c` (the error scales by `|c|`).
    pub fn scale(self, c: f64) -> Estimate {
        Estimate {
            value: c * self.value,
            error: c.abs() * self.error,
        }
    }

    pub fn plus(self, other: Estimate) -> Estimate {
        Estimate {
            value: self.value + other.value,
            error: self.error + other.error,
        }
    }
}

/// Tolerances and budget of one adaptive integral.
#[derive(Clone, Copy, Debug)]
pub struct QuadConfig {
    /// Stop when the quadrature error is below `rel_tol * |integral|`...
    pub rel_tol: f64,
    /// ...or below `abs_tol_scale * ∫|f|` (the level of rounding noise).
    pub abs_tol_scale: f64,
    /// The most panels one integral may be split into.
    pub max_panels: usize,
}

impl Default for QuadConfig {
    fn default() -> QuadConfig {
        QuadConfig {
            rel_tol: 1e-10,
            abs_tol_scale: 1e-13,
            max_panels: 400,
        }
    }
}

/// The outcome of [`integrate`]: the estimate and whether the tolerance was met.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuadResult {
    pub estimate: Estimate,
    pub converged: bool,
    /// Integrand evaluations used.
    pub evals: u64,
}

// Kronrod nodes (positive half, descending; the last is 0) and weights of the 15-point
// rule, and the weights of the embedded 7-point Gauss rule, whose nodes are the odd
// entries XGK[1], XGK[3], XGK[5], XGK[7]. Written with all published digits.
#[allow(clippy::excessive_precision)]
const XGK: [f64; 8] = [
    0.991_455_371_120_812_639_206_854_697_526_329,
    0.949_107_912_342_758_524_526_189_684_047_851,
    0.864_864_423_359_769_072_789_712_788_640_926,
    0.741_531_185_599_394_439_863_864_773_280_788,
    0.586_087_235_467_691_130_294_144_845_693_013,
    0.405_845_151_377_397_166_906_606_412_076_961,
    0.207_784_955_007_898_467_600_689_403_773_245,
    0.0,
];
#[allow(clippy::excessive_precision)]
const WGK: [f64; 8] = [
    0.022_935_322_010_529_224_963_732_008_058_970,
    0.063_092_092_629_978_553_290_700_663_189_204,
    0.104_790_010_322_250_183_839_876_322_541_518,
    0.140_653_259_715_525_918_745_189_590_510_238,
    0.169_004_726_639_267_902_826_583_426_598_550,
    0.190_350_578_064_785_409_913_256_402_421_014,
    0.204_432_940_075_298_892_414_161_999_234_649,
    0.209_482_141_084_727_828_012_999_174_891_714,
];
#[allow(clippy::excessive_precision)]
const WG: [f64; 4] = [
    0.129_484_966_168_869_693_270_611_432_679_082,
    0.279_705_391_489_276_667_901_467_771_423_780,
    0.381_830_050_505_118_944_950_369_775_488_975,
    0.417_959_183_673_469_387_755_102_040_816_327,
];

/// How a panel's variable `t` maps to the integration variable `x`.
#[derive(Clone, Copy, Debug)]
enum Map {
    /// `x = t`.
    Id,
    /// `x = a + t/(1-t)`, `t ∈ [0, 1)`: the panel `[a, ∞)`.
    Upper(f64),
    /// `x = b - (1-t)/t`, `t ∈ (0, 1]`: the panel `(-∞, b]`.
    Lower(f64),
}

impl Map {
    /// `(x, dx/dt)` at `t`.
    fn apply(self, t: f64) -> (f64, f64) {
        match self {
            Map::Id => (t, 1.0),
            Map::Upper(a) => {
                let s = 1.0 - t;
                (a + t / s, 1.0 / (s * s))
            }
            Map::Lower(b) => (b - (1.0 - t) / t, 1.0 / (t * t)),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Panel {
    a: f64,
    b: f64,
    map: Map,
    value: f64,
    /// The quadrature error estimate (what bisection reduces).
    error: f64,
    /// The integral of the integrand's own error estimate.
    inner_error: f64,
    /// ∫|f| over the panel (the rounding-noise scale).
    abs: f64,
    /// Too narrow to bisect further.
    frozen: bool,
}

/// The 15-point Kronrod estimate on one panel, with the error heuristic of QUADPACK
/// (the Gauss-Kronrod difference, sharpened when the integrand is smooth, floored at the
/// rounding level).
fn gk15(
    a: f64,
    b: f64,
    map: Map,
    f: &mut dyn FnMut(f64) -> EvalResult<Estimate>,
    evals: &mut u64,
) -> EvalResult<Panel> {
    let c = 0.5 * (a + b);
    let h = 0.5 * (b - a);
    let mut fv = [0.0f64; 15];
    let mut ev = [0.0f64; 15];
    let mut eval = |t: f64| -> EvalResult<(f64, f64)> {
        *evals += 1;
        let (x, jac) = map.apply(t);
        let e = f(x)?;
        // A zero integrand stays zero even where the Jacobian blows up at an infinite end.
        if e.value == 0.0 && e.error == 0.0 {
            return Ok((0.0, 0.0));
        }
        Ok((e.value * jac, e.error * jac.abs()))
    };
    for j in 0..7 {
        let dx = h * XGK[j];
        let (v1, e1) = eval(c - dx)?;
        let (v2, e2) = eval(c + dx)?;
        fv[2 * j] = v1;
        fv[2 * j + 1] = v2;
        ev[2 * j] = e1;
        ev[2 * j + 1] = e2;
    }
    let (vc, ec) = eval(c)?;
    fv[14] = vc;
    ev[14] = ec;

    let mut kron = WGK[7] * vc;
    let mut gauss = WG[3] * vc;
    let mut abs = WGK[7] * vc.abs();
    let mut inner = WGK[7] * ec;
    for j in 0..7 {
        let pair = fv[2 * j] + fv[2 * j + 1];
        kron += WGK[j] * pair;
        abs += WGK[j] * (fv[2 * j].abs() + fv[2 * j + 1].abs());
        inner += WGK[j] * (ev[2 * j] + ev[2 * j + 1]);
        if j % 2 == 1 {
            gauss += WG[j / 2] * pair;
        }
    }
    let mean = 0.5 * kron;
    let mut asc = WGK[7] * (vc - mean).abs();
    for j in 0..7 {
        asc += WGK[j] * ((fv[2 * j] - mean).abs() + (fv[2 * j + 1] - mean).abs());
    }
    let hw = h.abs();
    let value = kron * h;
    let abs = abs * hw;
    let asc = asc * hw;
    let mut err = ((kron - gauss) * h).abs();
    if asc != 0.0 && err != 0.0 {
        err = asc * (200.0 * err / asc).powf(1.5).min(1.0);
    }
    if abs > f64::MIN_POSITIVE / (50.0 * f64::EPSILON) {
        err = err.max(50.0 * f64::EPSILON * abs);
    }
    if !value.is_finite() || err.is_nan() {
        err = f64::INFINITY;
    }
    let width_floor = 4.0 * f64::EPSILON * (a.abs().max(b.abs())).max(f64::MIN_POSITIVE);
    Ok(Panel {
        a,
        b,
        map,
        value,
        error: err,
        inner_error: inner * hw,
        abs,
        frozen: (b - a).abs() <= width_floor,
    })
}

/// `∫_a^b f(x) dx` (with `a <= b`, either may be infinite), first split at `breaks`
/// (points outside `(a, b)` are ignored). A NaN bound gives a NaN result.
pub fn integrate(
    a: f64,
    b: f64,
    breaks: &[f64],
    config: &QuadConfig,
    f: &mut dyn FnMut(f64) -> EvalResult<Estimate>,
) -> EvalResult<QuadResult> {
    if a.is_nan() || b.is_nan() {
        return Ok(QuadResult {
            estimate: Estimate {
                value: f64::NAN,
                error: f64::NAN,
            },
            converged: false,
            evals: 0,
        });
    }
    if a >= b {
        return Ok(QuadResult {
            estimate: Estimate::ZERO,
            converged: true,
            evals: 0,
        });
    }
    let mut pts: Vec<f64> = vec![a];
    let mut inner: Vec<f64> = breaks
        .iter()
        .copied()
        .filter(|&x| x > a && x < b && x.is_finite())
        .collect();
    inner.sort_by(f64::total_cmp);
    inner.dedup();
    if inner.is_empty() && a == f64::NEG_INFINITY && b == f64::INFINITY {
        inner.push(0.0);
    }
    pts.extend(inner);
    pts.push(b);

    let mut evals = 0u64;
    let mut panels: Vec<Panel> = Vec::new();
    for w in pts.windows(2) {
        let (p, q) = (w[0], w[1]);
        let panel = if p == f64::NEG_INFINITY {
            gk15(0.0, 1.0, Map::Lower(q), f, &mut evals)?
        } else if q == f64::INFINITY {
            gk15(0.0, 1.0, Map::Upper(p), f, &mut evals)?
        } else {
            gk15(p, q, Map::Id, f, &mut evals)?
        };
        panels.push(panel);
    }

    let max_panels = config.max_panels.max(panels.len());
    loop {
        let total: f64 = panels.iter().map(|p| p.value).sum();
        let err: f64 = panels.iter().map(|p| p.error).sum();
        let abs: f64 = panels.iter().map(|p| p.abs).sum();
        let inner_err: f64 = panels.iter().map(|p| p.inner_error).sum();
        // An integrand known only to within its own error cannot be integrated more
        // accurately than the integral of that error: bisecting further only resolves
        // the inner integrals' noise. Without this floor, an outer integral whose true
        // value is 0 (∫∫ x y φ(x) φ(y), issue "Trustworthy verdicts") chases rounding
        // noise of its inner integrals until the budget runs out. The reported error
        // still adds `inner_err`, so the total stays honest.
        let tol = (config.rel_tol * total.abs())
            .max(config.abs_tol_scale * abs)
            .max(inner_err);
        let done = |converged: bool| QuadResult {
            estimate: Estimate {
                value: total,
                error: err + inner_err,
            },
            converged,
            evals,
        };
        if err <= tol {
            return Ok(done(true));
        }
        if total.is_nan() || panels.len() >= max_panels {
            return Ok(done(false));
        }
        let worst = panels
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.frozen)
            .max_by(|x, y| x.1.error.total_cmp(&y.1.error))
            .map(|(i, _)| i);
        let Some(i) = worst else {
            return Ok(done(false));
        };
        let p = panels.swap_remove(i);
        let mid = 0.5 * (p.a + p.b);
        let left = gk15(p.a, mid, p.map, f, &mut evals)?;
        let right = gk15(mid, p.b, p.map, f, &mut evals)?;
        panels.push(left);
        panels.push(right);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad(a: f64, b: f64, f: impl Fn(f64) -> f64) -> QuadResult {
        let mut g = |x: f64| Ok(Estimate::exact(f(x)));
        match integrate(a, b, &[], &QuadConfig::default(), &mut g) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    fn check(a: f64, b: f64, f: impl Fn(f64) -> f64, expect: f64, tol: f64) {
        let r = quad(a, b, f);
        assert!(
            (r.estimate.value - expect).abs() <= tol,
            "∫ on [{a}, {b}] gave {:?}, expected {expect}",
            r
        );
        assert!(r.converged, "{r:?}");
        assert!(r.estimate.error <= tol.max(1e-9 * expect.abs()), "{r:?}");
    }

    #[test]
    fn weights_are_consistent() {
        let k: f64 = WGK[7] + 2.0 * WGK[..7].iter().sum::<f64>();
        let g: f64 = WG[3] + 2.0 * WG[..3].iter().sum::<f64>();
        assert!((k - 2.0).abs() < 1e-15);
        assert!((g - 2.0).abs() < 1e-15);
    }

    #[test]
    fn single_panel_is_exact_for_polynomials() {
        // Kronrod-15 integrates degree 22, Gauss-7 degree 13; so both agree on x^12.
        for deg in [0, 1, 5, 12, 13] {
            let mut evals = 0;
            let mut f = |x: f64| Ok(Estimate::exact(x.powi(deg)));
            let p = gk15(0.0, 1.0, Map::Id, &mut f, &mut evals).unwrap_or_else(|e| panic!("{e}"));
            let exact = 1.0 / (deg as f64 + 1.0);
            assert!((p.value - exact).abs() < 1e-15, "deg {deg}: {}", p.value);
        }
    }

    #[test]
    fn classic_integrals() {
        check(0.0, 1.0, |x| x * x, 1.0 / 3.0, 1e-14);
        check(0.0, std::f64::consts::PI, f64::sin, 2.0, 1e-13);
        check(0.0, 1.0, |x| 1.0 / x.sqrt(), 2.0, 1e-8);
        check(0.0, 1.0, |x| x.ln(), -1.0, 1e-9);
        let sqrt2pi = (2.0 * std::f64::consts::PI).sqrt();
        check(
            f64::NEG_INFINITY,
            f64::INFINITY,
            |x| (-x * x / 2.0).exp(),
            sqrt2pi,
            1e-12,
        );
        check(0.0, f64::INFINITY, |x| (-x).exp(), 1.0, 1e-12);
        check(f64::NEG_INFINITY, 0.0, |x| x.exp(), 1.0, 1e-12);
        check(
            f64::NEG_INFINITY,
            f64::INFINITY,
            |x| 1.0 / (1.0 + x * x),
            std::f64::consts::PI,
            1e-9,
        );
        check(2.0, 2.0, |x| x, 0.0, 0.0);
    }

    #[test]
    fn an_integrand_is_not_resolved_below_its_own_error() {
        // an inner integral whose true value is 0 returns rounding noise with an honest
        // error bound; the outer integral must stop at that bound instead of bisecting
        // the noise until its panels run out
        let mut f = |x: f64| {
            Ok(Estimate {
                value: 1e-17 * (1e6 * x).sin(),
                error: 1e-15,
            })
        };
        let r = integrate(0.0, 1.0, &[], &QuadConfig::default(), &mut f)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(r.converged, "{r:?}");
        assert!(r.evals <= 15, "{r:?}");
        assert!(
            r.estimate.error >= 1e-15,
            "the inner error is still reported: {r:?}"
        );
    }

    #[test]
    fn nan_bounds_and_integrands_give_nan() {
        assert!(quad(f64::NAN, 1.0, |x| x).estimate.value.is_nan());
        assert!(quad(0.0, 1.0, |_| f64::NAN).estimate.value.is_nan());
    }
}
