//! Deterministic numeric integration of measures: `integrate(m, h)` as a number with an
//! error estimate.
//!
//! This is the oracle for terms that cannot be sampled (`lebesgue`, `counting` binders)
//! and a noise-free check for those that can. [`Interp::expect`] walks the measure term
//! in continuation-passing style, following the linear-functional semantics (HAKARU.md,
//! "Semantics"; the arrays paper, Fig. 4): `return e` applies the continuation, `weight`
//! scales, `<|>` adds, `reject` is 0, `x <~ m; k` nests, `observe` weights by the density.
//! Primitive measures integrate their density against the continuation:
//! - continuous ones by adaptive Gauss-Kronrod quadrature (`quad`), in coordinates that
//!   suit them (normal in standard units; gamma and beta with a power substitution near
//!   an integrable singularity at 0 or 1; infinite ranges mapped to finite ones);
//! - `categorical` by its exact finite sum;
//! - `poisson` and `counting` by summing outward (poisson from its mode, counting from 0)
//!   until the rest is negligible: for poisson a bound on the remaining probability mass
//!   times the largest recent |term| (the truncation error, reported); for counting a
//!   geometric-decay bound on the rest, or a run of 64 exact zeros. A counting sum whose
//!   terms vanish near 0 but not further out is outside what this can see.
//!
//! A bound measure that needs no randomness (`x <~ return e`, observations) is stepped
//! over in a loop rather than nested, so long deterministic chains cost no stack.
//! `plate` and `chain` whose elements need no randomness (observations, weighted diracs)
//! are computed directly, at any size; with random elements they are integrated by
//! nesting, only up to `max_plate_nesting` elements. Budgets (nested continuous
//! dimensions, integrand evaluations, series terms) make blow-ups an
//! [`EvalError::Budget`] with a message, never a hang.

use slic_algebra::{Node, Store, TermId, VarId};

use crate::dist::{lgamma, PrimMeasure};
use crate::error::{bad_arg, budget, EvalResult};
use crate::eval::{EvalConfig, Interp};
use crate::quad::{self, Estimate};
use crate::value::{Env, Value};

/// A continuation: what to integrate against the outcome of a measure.
type Cont<'c, 's> = dyn Fn(&mut Interp<'s>, Value) -> EvalResult<Estimate> + 'c;

/// Run of exact zeros after which a counting series is taken to have ended.
const ZERO_RUN: u32 = 64;

impl<'s> Interp<'s> {
    /// `integrate(m, h)` for a measure value `m` and a numeric function `h` of its
    /// outcomes, with an estimate of the absolute error.
    pub fn expect(
        &mut self,
        m: &Value,
        h: &dyn Fn(&mut Interp<'s>, &Value) -> EvalResult<f64>,
    ) -> EvalResult<Estimate> {
        self.begin();
        let Value::Measure(mv) = m else {
            return Err(bad_arg(
                "expect",
                format!("expected a measure, found {}", m.kind()),
            ));
        };
        let k = |s: &mut Interp<'s>, v: Value| -> EvalResult<Estimate> {
            Ok(Estimate::exact(h(s, &v)?))
        };
        self.ex(mv.term, &mv.env, &k)
    }

    /// `integrate(m, h)` where `h` is a function value (a closure returning a number).
    pub fn expect_apply(&mut self, m: &Value, h: &Value) -> EvalResult<Estimate> {
        let h = h.clone();
        self.expect(m, &move |s, v| {
            let r = s.app(&h, v.clone())?;
            r.as_f64()
                .ok_or_else(|| bad_arg("expect", format!("the integrand returned {}", r.kind())))
        })
    }

    fn ex(&mut self, t: TermId, env: &Env, k: &Cont<'_, 's>) -> EvalResult<Estimate> {
        self.enter()?;
        let r = self.ex_inner(t, env, k);
        self.leave();
        r
    }

    fn ex_inner(&mut self, term: TermId, env: &Env, k: &Cont<'_, 's>) -> EvalResult<Estimate> {
        let store = self.store;
        let mut t = term;
        let mut env = env.clone();
        let mut scale = 1.0f64;
        let scaled = |e: Estimate, c: f64| {
            if e.value == 0.0 && e.error == 0.0 {
                Estimate::ZERO
            } else {
                e.scale(c)
            }
        };
        loop {
            match store.node(t) {
                Node::Dirac(e) => {
                    let v = self.ev(*e, &env)?;
                    return Ok(scaled(k(self, v)?, scale));
                }
                Node::Weight(w, m) => {
                    let l = self.ln_prob(*w, &env, "weight")?;
                    if l == f64::NEG_INFINITY {
                        return Ok(Estimate::ZERO);
                    }
                    scale *= l.exp();
                    t = *m;
                }
                Node::Reject => return Ok(Estimate::ZERO),
                Node::Superpose(ms) => {
                    let mut acc = Estimate::ZERO;
                    for mi in ms {
                        acc = acc.plus(self.ex(*mi, &env, k)?);
                    }
                    return Ok(scaled(acc, scale));
                }
                Node::Bind(x, m, body) => {
                    // A bound measure that needs no randomness (a weighted dirac) is
                    // stepped over in this loop, so long deterministic chains use no stack.
                    if let Some((v, lw)) = self.draw(*m, &env, None)? {
                        if lw == f64::NEG_INFINITY {
                            return Ok(Estimate::ZERO);
                        }
                        scale *= lw.exp();
                        env = env.bind(*x, v);
                        t = *body;
                        continue;
                    }
                    let (x, body) = (*x, *body);
                    let outer = env.clone();
                    let r = self.ex(*m, &env, &|s: &mut Interp<'s>, v: Value| {
                        s.ex(body, &outer.bind(x, v), k)
                    })?;
                    return Ok(scaled(r, scale));
                }
                Node::Dist(d, args) => {
                    let mut vals = Vec::with_capacity(args.len());
                    for a in args {
                        vals.push(self.ev(*a, &env)?);
                    }
                    let pm = PrimMeasure::new(*d, &vals)?;
                    let r = self.ex_prim(&pm, k)?;
                    return Ok(scaled(r, scale));
                }
                Node::Observe(m, v) => {
                    let val = self.ev(*v, &env)?;
                    let ld = self.observe_density(*m, &env, &val)?;
                    if ld == f64::NEG_INFINITY {
                        return Ok(Estimate::ZERO);
                    }
                    return Ok(scaled(k(self, val)?, scale * ld.exp()));
                }
                Node::Plate(i, n, m) => {
                    let r = self.ex_plate(t, *i, *n, *m, &env, k)?;
                    return Ok(scaled(r, scale));
                }
                Node::Chain(s, s0, n, m) => {
                    let r = self.ex_chain(t, *s, *s0, *n, *m, &env, k)?;
                    return Ok(scaled(r, scale));
                }
                Node::Transform(_, m) => t = *m,
                _ => {
                    let (e2, t2) = self.as_measure(t, &env)?;
                    env = e2;
                    t = t2;
                }
            }
        }
    }

    /// A plate: computed directly when no element needs randomness, else by nesting.
    fn ex_plate(
        &mut self,
        whole: TermId,
        i: VarId,
        n: TermId,
        body: TermId,
        env: &Env,
        k: &Cont<'_, 's>,
    ) -> EvalResult<Estimate> {
        if let Some((v, lw)) = self.draw(whole, env, None)? {
            return weighted(self, k, v, lw);
        }
        let n = self.nat(n, env, "plate")?;
        self.nesting_ok(n, "plate")?;
        self.plate_nest(i, body, env, n, Vec::new(), k)
    }

    fn nesting_ok(&self, n: u64, what: &str) -> EvalResult<()> {
        if n > self.config.max_plate_nesting {
            return Err(budget(format!(
                "a {what} of {n} random elements is too large to integrate numerically (limit {})",
                self.config.max_plate_nesting
            )));
        }
        Ok(())
    }

    fn plate_nest(
        &mut self,
        i: VarId,
        body: TermId,
        env: &Env,
        n: u64,
        acc: Vec<Value>,
        k: &Cont<'_, 's>,
    ) -> EvalResult<Estimate> {
        let j = acc.len() as u64;
        if j >= n {
            return k(self, Value::array(acc));
        }
        let envj = self.bind_index(env, i, j)?;
        self.ex(body, &envj, &|s: &mut Interp<'s>, v: Value| {
            let mut next = acc.clone();
            next.push(v);
            s.plate_nest(i, body, env, n, next, k)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn ex_chain(
        &mut self,
        whole: TermId,
        s: VarId,
        s0: TermId,
        n: TermId,
        body: TermId,
        env: &Env,
        k: &Cont<'_, 's>,
    ) -> EvalResult<Estimate> {
        if let Some((v, lw)) = self.draw(whole, env, None)? {
            return weighted(self, k, v, lw);
        }
        let n = self.nat(n, env, "chain")?;
        self.nesting_ok(n, "chain")?;
        let state = self.ev(s0, env)?;
        self.chain_nest(s, body, env, n, Vec::new(), state, k)
    }

    #[allow(clippy::too_many_arguments)]
    fn chain_nest(
        &mut self,
        s: VarId,
        body: TermId,
        env: &Env,
        n: u64,
        acc: Vec<Value>,
        state: Value,
        k: &Cont<'_, 's>,
    ) -> EvalResult<Estimate> {
        if acc.len() as u64 >= n {
            return k(self, Value::pair(Value::array(acc), state));
        }
        let envs = env.bind(s, state);
        self.ex(body, &envs, &|it: &mut Interp<'s>, v: Value| {
            let Value::Pair(p) = v else {
                return Err(bad_arg(
                    "chain",
                    format!("a step gave {}, not a pair", v.kind()),
                ));
            };
            let mut next = acc.clone();
            next.push(p.0.clone());
            it.chain_nest(s, body, env, n, next, p.1.clone(), k)
        })
    }

    fn enter_dimension(&mut self) -> EvalResult<()> {
        if self.dims >= self.config.max_dimensions {
            return Err(budget(format!(
                "more than {} nested continuous integrals",
                self.config.max_dimensions
            )));
        }
        self.dims += 1;
        Ok(())
    }

    /// ∫ g(x) f(x) dx over the primitive measure's density f.
    fn ex_prim(&mut self, pm: &PrimMeasure, k: &Cont<'_, 's>) -> EvalResult<Estimate> {
        match pm {
            PrimMeasure::Categorical { ln_w, ln_total } => {
                if *ln_total == f64::NEG_INFINITY {
                    return Ok(Estimate::ZERO);
                }
                let mut acc = Estimate::ZERO;
                for (i, l) in ln_w.iter().enumerate() {
                    if *l == f64::NEG_INFINITY {
                        continue;
                    }
                    self.tick()?;
                    let g = k(self, Value::Nat(i as u64))?;
                    acc = acc.plus(g.scale((l - ln_total).exp()));
                }
                Ok(acc)
            }
            PrimMeasure::Poisson { rate } => self.ex_poisson(*rate, k),
            PrimMeasure::Counting => self.ex_counting(k),
            _ => {
                self.enter_dimension()?;
                let r = self.ex_continuous(pm, k);
                self.dims -= 1;
                r
            }
        }
    }

    fn quad(
        &mut self,
        a: f64,
        b: f64,
        breaks: &[f64],
        f: &mut dyn FnMut(&mut Interp<'s>, f64) -> EvalResult<Estimate>,
    ) -> EvalResult<Estimate> {
        let cfg = self.config.quad;
        let r = quad::integrate(a, b, breaks, &cfg, &mut |x| {
            self.tick()?;
            f(self, x)
        })?;
        Ok(r.estimate)
    }

    fn ex_continuous(&mut self, pm: &PrimMeasure, k: &Cont<'_, 's>) -> EvalResult<Estimate> {
        let ninf = f64::NEG_INFINITY;
        match *pm {
            PrimMeasure::Lebesgue { lo, hi } => {
                let breaks = crate::eval::lebesgue_breaks(lo, hi);
                self.quad(lo, hi, &breaks, &mut |s, x| k(s, Value::Real(x)))
            }
            PrimMeasure::Uniform { lo, hi } => {
                let r = self.quad(lo, hi, &[], &mut |s, x| k(s, Value::Real(x)))?;
                Ok(r.scale(1.0 / (hi - lo)))
            }
            PrimMeasure::Normal { mean, sd } => {
                // Standard units: x = mean + sd z, density φ(z); φ underflows beyond |z| ≈ 38.6.
                let breaks = [-38.6, -8.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0, 38.6];
                let c = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
                self.quad(ninf, f64::INFINITY, &breaks, &mut |s, z| {
                    let phi = c * (-0.5 * z * z).exp();
                    if phi == 0.0 {
                        return Ok(Estimate::ZERO);
                    }
                    Ok(k(s, Value::Real(mean + sd * z))?.scale(phi))
                })
            }
            PrimMeasure::Gamma { shape, scale } => {
                // y = x / scale has density y^(shape-1) e^(-y) / Γ(shape).
                let ln_scale = scale.ln();
                let lg = lgamma(shape);
                let mut acc = Estimate::ZERO;
                let mut start = 0.0;
                if shape < 1.0 {
                    // On [0, 1]: y = u^(1/shape) removes the singularity at 0;
                    // ∫_0^1 y^(a-1) e^-y g dy / Γ(a) = ∫_0^1 e^-y g du / Γ(a+1).
                    let lg1 = lgamma(shape + 1.0);
                    acc = acc.plus(self.quad(0.0, 1.0, &[], &mut |s, u| {
                        let ln_y = u.ln() / shape;
                        let w = (-(ln_y.exp()) - lg1).exp();
                        if w == 0.0 {
                            return Ok(Estimate::ZERO);
                        }
                        Ok(k(s, Value::Prob(ln_y + ln_scale))?.scale(w))
                    })?);
                    start = 1.0;
                }
                let sd = shape.sqrt();
                let breaks: Vec<f64> =
                    [-8.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
                        .iter()
                        .map(|c| shape + c * sd)
                        .chain([1.0, 8.0, 64.0, 750.0 + shape])
                        .collect();
                acc = acc.plus(self.quad(start, f64::INFINITY, &breaks, &mut |s, y| {
                    let ln_y = y.ln();
                    let ld = if shape == 1.0 {
                        0.0
                    } else {
                        (shape - 1.0) * ln_y
                    } - y
                        - lg;
                    let w = ld.exp();
                    if w == 0.0 || w.is_nan() {
                        return Ok(Estimate::ZERO);
                    }
                    Ok(k(s, Value::Prob(ln_y + ln_scale))?.scale(w))
                })?);
                Ok(acc)
            }
            PrimMeasure::Beta { a, b } => {
                let lb = crate::dist::ln_beta(a, b);
                let mean = a / (a + b);
                let sd = (a * b / ((a + b) * (a + b) * (a + b + 1.0))).sqrt();
                let breaks: Vec<f64> = [-8.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0]
                    .iter()
                    .map(|c| mean + c * sd)
                    .collect();
                let mut acc = Estimate::ZERO;
                // Left half: x = u^(1/a) when a < 1, so ∫ x^(a-1) (..) dx = ∫ (..) du / a.
                if a < 1.0 {
                    let top = 0.5f64.powf(a);
                    let bk: Vec<f64> = breaks
                        .iter()
                        .filter(|&&x| x > 0.0 && x < 0.5)
                        .map(|x| x.powf(a))
                        .collect();
                    acc = acc.plus(self.quad(0.0, top, &bk, &mut |s, u| {
                        let ln_x = u.ln() / a;
                        let ln_1mx = (-(ln_x.exp())).ln_1p();
                        let w = ((b - 1.0) * ln_1mx - lb).exp() / a;
                        if w == 0.0 || !w.is_finite() {
                            return Ok(Estimate::ZERO);
                        }
                        Ok(k(s, Value::Prob(ln_x))?.scale(w))
                    })?);
                } else {
                    acc = acc.plus(self.quad(0.0, 0.5, &breaks, &mut |s, x| {
                        let w = crate::dist::beta_ln_pdf(a, b, x.ln()).exp();
                        if w == 0.0 || !w.is_finite() {
                            return Ok(Estimate::ZERO);
                        }
                        Ok(k(s, Value::Prob(x.ln()))?.scale(w))
                    })?);
                }
                // Right half in v = 1 - x: v = w^(1/b) when b < 1.
                if b < 1.0 {
                    let top = 0.5f64.powf(b);
                    let bk: Vec<f64> = breaks
                        .iter()
                        .filter(|&&x| x > 0.5 && x < 1.0)
                        .map(|x| (1.0 - x).powf(b))
                        .collect();
                    acc = acc.plus(self.quad(0.0, top, &bk, &mut |s, u| {
                        let ln_v = u.ln() / b;
                        let ln_x = (-(ln_v.exp())).ln_1p();
                        let w = ((a - 1.0) * ln_x - lb).exp() / b;
                        if w == 0.0 || !w.is_finite() {
                            return Ok(Estimate::ZERO);
                        }
                        Ok(k(s, Value::Prob(ln_x))?.scale(w))
                    })?);
                } else {
                    let bk: Vec<f64> = breaks.iter().map(|x| 1.0 - x).collect();
                    acc = acc.plus(self.quad(0.0, 0.5, &bk, &mut |s, v| {
                        let ln_x = (-v).ln_1p();
                        let w = crate::dist::beta_ln_pdf(a, b, ln_x).exp();
                        if w == 0.0 || !w.is_finite() {
                            return Ok(Estimate::ZERO);
                        }
                        Ok(k(s, Value::Prob(ln_x))?.scale(w))
                    })?);
                }
                Ok(acc)
            }
            // Discrete measures are handled by the caller.
            PrimMeasure::Counting
            | PrimMeasure::Poisson { .. }
            | PrimMeasure::Categorical { .. } => Err(bad_arg(
                "expect",
                "internal: a discrete measure reached quadrature",
            )),
        }
    }

    /// Σ_k pmf(k) g(k), outward from the mode until the remaining mass, times the largest
    /// recent |g|, is negligible.
    fn ex_poisson(&mut self, rate: f64, k: &Cont<'_, 's>) -> EvalResult<Estimate> {
        let mode = rate.floor();
        if mode >= 9.0e15 {
            return Err(budget(format!(
                "poisson({rate}) is too wide to sum numerically"
            )));
        }
        let mode = mode as u64;
        let mut total = Estimate::ZERO;
        let mut terms = 0u64;
        // Upward from the mode (inclusive).
        let mut gmax = 0.0f64;
        let mut n = mode;
        loop {
            terms += 1;
            self.series_budget(terms, "poisson")?;
            let lp = crate::dist::poisson_ln_pmf(rate, n);
            let p = lp.exp();
            let g = if p == 0.0 {
                Estimate::ZERO
            } else {
                k(self, Value::Nat(n))?
            };
            gmax = gmax.max(g.value.abs());
            total = total.plus(g.scale(p));
            // P(X > n) <= pmf(n) r / (1 - r') with r = rate/(n+1), r' = rate/(n+2).
            let nf = n as f64;
            if nf + 1.0 > rate {
                let r = rate / (nf + 1.0);
                let r2 = rate / (nf + 2.0);
                let tail = p * r / (1.0 - r2);
                let bound = tail * gmax.max(1e-300);
                if bound <= 1e-15 * total.value.abs() || tail < 1e-300 {
                    total.error += bound;
                    break;
                }
            }
            n = match n.checked_add(1) {
                Some(n) => n,
                None => break,
            };
        }
        // Downward from mode - 1.
        let mut gmax = 0.0f64;
        let mut n = mode;
        while n > 0 {
            n -= 1;
            terms += 1;
            self.series_budget(terms, "poisson")?;
            let p = crate::dist::poisson_ln_pmf(rate, n).exp();
            let g = if p == 0.0 {
                Estimate::ZERO
            } else {
                k(self, Value::Nat(n))?
            };
            gmax = gmax.max(g.value.abs());
            total = total.plus(g.scale(p));
            // P(X < n) <= pmf(n) r / (1 - r) with r = n / rate < 1.
            let r = n as f64 / rate;
            if r < 1.0 {
                let tail = p * r / (1.0 - r);
                let bound = tail * gmax.max(1e-300);
                if bound <= 1e-15 * total.value.abs() || tail < 1e-300 {
                    total.error += bound;
                    break;
                }
            }
        }
        Ok(total)
    }

    fn series_budget(&mut self, terms: u64, what: &str) -> EvalResult<()> {
        self.tick()?;
        if terms > self.config.max_series_terms {
            return Err(budget(format!(
                "the series over {what} did not converge within {} terms",
                self.config.max_series_terms
            )));
        }
        Ok(())
    }

    /// Σ_n g(n) over all integers, outward from 0 in both directions.
    fn ex_counting(&mut self, k: &Cont<'_, 's>) -> EvalResult<Estimate> {
        let mut total = Estimate::ZERO;
        let mut terms = 0u64;
        for dir in [1i64, -1] {
            let mut n: i64 = if dir == 1 { 0 } else { -1 };
            let mut zeros = 0u32;
            let mut prev = f64::NAN;
            let mut decreasing = 0u32;
            loop {
                terms += 1;
                self.series_budget(terms, "counting")?;
                let g = k(self, Value::Int(n))?;
                total = total.plus(g);
                let a = g.value.abs();
                if g.value.is_nan() {
                    return Ok(Estimate {
                        value: f64::NAN,
                        error: f64::NAN,
                    });
                }
                if a == 0.0 {
                    zeros += 1;
                    if zeros >= ZERO_RUN {
                        break;
                    }
                } else {
                    zeros = 0;
                }
                if a > 0.0 && prev > 0.0 && a < prev {
                    decreasing += 1;
                    let r = a / prev;
                    let tail = a * r / (1.0 - r);
                    if decreasing >= 3 && r < 0.999 && tail <= 1e-15 * total.value.abs() {
                        total.error += tail;
                        break;
                    }
                } else if a > 0.0 {
                    decreasing = 0;
                }
                prev = a;
                n = match n.checked_add(dir) {
                    Some(n) => n,
                    None => break,
                };
            }
        }
        Ok(total)
    }
}

fn weighted<'s>(s: &mut Interp<'s>, k: &Cont<'_, 's>, v: Value, lw: f64) -> EvalResult<Estimate> {
    if lw == f64::NEG_INFINITY {
        return Ok(Estimate::ZERO);
    }
    let g = k(s, v)?;
    if g.value == 0.0 && g.error == 0.0 {
        return Ok(Estimate::ZERO);
    }
    Ok(g.scale(lw.exp()))
}

/// `integrate(m, h)` with the default configuration, for a Rust function `h`.
pub fn expect(
    store: &Store,
    m: &Value,
    h: &dyn Fn(&Value) -> EvalResult<f64>,
) -> EvalResult<Estimate> {
    Interp::new(store, EvalConfig::default()).expect(m, &|_, v| h(v))
}

/// The total mass `integrate(m, 1)` with the default configuration.
pub fn mass(store: &Store, m: &Value) -> EvalResult<Estimate> {
    expect(store, m, &|_| Ok(1.0))
}

/// `integrate(m, h)` for a function value `h`, with the default configuration.
pub fn expect_apply(store: &Store, m: &Value, h: &Value) -> EvalResult<Estimate> {
    Interp::new(store, EvalConfig::default()).expect_apply(m, h)
}
