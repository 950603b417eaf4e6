//! The semantic judge: do two terms denote the same thing, on given arguments?
//!
//! Every rewrite slic-cas makes must keep `integrate(m, h)` unchanged for every `h`
//! (HAKARU.md, "Semantics"). [`compare`] tests that with the reference interpreter: both
//! terms are applied to the same arguments, and their measures are integrated against
//! several *probes*, test functions of the outcome through two fixed linear projections
//! `f` and `g` of its numeric leaves (see [`Probe`]): the mass, `E[f]`, `E[f²]`,
//! `E[cos f]`, `E[1/(1+f²)]` and `E[cos g + sin g]`. Mass and mean alone would call
//! `normal(0, 1)` and `normal(0, 2)` equal; the second moment, the bounded probes and a
//! point of the characteristic function of a second projection separate spreads, shapes
//! and the joint law of tuples.
//!
//! Each side is integrated by deterministic quadrature when the interpreter's budget
//! allows (`expect`: nested adaptive quadrature and summation) and every probe's error
//! estimate is *tight* (at most [`TIGHT_QUAD_REL_ERR`] of the probe's value plus the
//! mass), else by importance sampling with a fixed seed (each side its own stream).
//! The sampler's runs (`enumerate.rs`) sum over finite choices (`categorical`, `<|>`)
//! within a budget of paths, so a measure whose only randomness is such choices is
//! summed exactly (and counts as deterministic, like quadrature); its continuous draws
//! come from the prior, or, when the prior's weights are uneven, from a Student-t
//! proposal fitted to the measure in a few rounds (`guide.rs`; issue 10: prior sampling
//! of the GMM Gibbs update had an effective sample size of 3 in 20,000). A sampled side
//! whose effective sample size is below [`CompareConfig::min_ess`] (1,000) is not judged.
//! Sampling draws in batches until every probe's standard error is within
//! [`CompareConfig::target_rel_se`] of the probe's scale or the draw budget is spent.
//! Quadrature results must agree within a relative tolerance plus their error estimates;
//! sampled ones within a number of standard errors (5 by default). Terms that are not
//! measures (a program computing a number) are compared as values. A side that neither
//! method can evaluate (infinite mass, an unsampleable binder beyond the quadrature
//! budget, an evaluation error) makes the verdict [`Verdict::Unknown`], with the reason:
//! never a guess.
//!
//! Only deterministic agreement (tight quadrature on both sides, or values) is
//! [`Verdict::Equal`]. Agreement where a side was sampled is
//! [`Verdict::NoDifferenceFound`]: sampling cannot see a difference below its noise, and
//! each check's `allowed` says how large a difference could have gone unseen (issue
//! "Trustworthy verdicts": `x*y` and `x*y + 0.03` once agreed within noise).
//!
//! [`random_args`] draws arguments of a program's parameter types, so that callers can
//! check equality beyond the examples they were given.
//!
//! This module judges; it never rewrites terms, and it must not depend on the simplifier
//! it is used to test.

use std::fmt;

use slic_algebra::{Store, TermId, Type};

use crate::enumerate::RunState;
use crate::error::{EvalError, EvalResult};
use crate::eval::{EvalConfig, Interp};
use crate::guide::Guide;
use crate::quad::QuadConfig;
use crate::rng::{log_sum_exp, Rng};
use crate::value::{Env, Value};

/// Budgets and tolerances of one comparison.
#[derive(Clone, Debug)]
pub struct CompareConfig {
    /// Integrand evaluations one quadrature of one probe may use before that side falls
    /// back to sampling; 0 disables quadrature.
    pub quad_evals: u64,
    /// The most importance-sampling draws per side (the budget); 0 disables sampling.
    pub samples: u64,
    /// Draws per batch of the adaptive sampler: it draws at least one batch (or the
    /// whole budget, if smaller) and checks its standard errors after each.
    pub batch: u64,
    /// Sampling stops once every probe's standard error is at most this fraction of the
    /// probe's scale (its estimated value in absolute value plus the mass).
    pub target_rel_se: f64,
    /// Seed of the sampler: side `a` uses `seed`, side `b` a stream derived from it.
    pub seed: u64,
    /// Relative tolerance between quadrature results (on top of their error estimates).
    pub rel_tol: f64,
    /// How many standard errors apart sampled results may be.
    pub sigmas: f64,
    /// A sampled side whose effective sample size (`(Σw)² / Σw²`) is below this, while
    /// its mass is not zero, is too degenerate to judge.
    pub min_ess: f64,
    /// The interpreter's recursion depth limit (raise it on a big stack).
    pub max_depth: usize,
    /// The sampler enumerates finite choices (`categorical`, `<|>`) while a run has at
    /// most this many paths, and draws them beyond (see `enumerate.rs`): this bounds the
    /// exact sum; a run that also draws continuous values enumerates at most
    /// `samples / (10 · min_ess)` paths, so that enough runs fit the budget.
    pub max_paths: u64,
    /// Runs per adaptation round of the importance proposal (see `guide.rs`); at most
    /// `samples`.
    pub adapt_draws: u64,
    /// Most adaptation rounds; 0 samples from the prior only.
    pub adapt_rounds: u32,
    /// Tolerances of each adaptive integral. The absolute part is looser than the
    /// interpreter's default: a probe whose integral is near 0 (`E[cos f]` of a wide
    /// law) need only be accurate relative to the integral of its absolute value, and
    /// nested integrals cost the product of their panels.
    pub quad: QuadConfig,
}

impl Default for CompareConfig {
    fn default() -> CompareConfig {
        CompareConfig {
            quad_evals: 300_000,
            // the judge of the test suites' oracles, which run it on every corpus case:
            // a law whose weights are even stops after one batch, a hard one costs at
            // most 50,000 draws (`slic-equiv` allows more)
            samples: 50_000,
            batch: 10_000,
            // with 5 sigmas and two sampled sides, differences above about
            // 5·√2·0.004 ≈ 3% of a probe's scale are seen once the target is met
            target_rel_se: 0.004,
            seed: 0,
            rel_tol: 1e-6,
            sigmas: 5.0,
            // issue 10: a thousand effective draws, or no verdict from sampling
            min_ess: 1_000.0,
            max_depth: EvalConfig::default().max_depth,
            max_paths: 4_096,
            adapt_draws: 2_000,
            adapt_rounds: 8,
            quad: QuadConfig {
                abs_tol_scale: 1e-10,
                ..QuadConfig::default()
            },
        }
    }
}

/// How a verdict was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Both sides integrated by deterministic quadrature and summation.
    Quadrature,
    /// Both sides estimated by importance sampling.
    Sampling,
    /// One side by quadrature, the other by sampling.
    QuadratureAndSampling,
    /// Neither side is a measure: the values themselves were compared.
    Value,
}

impl Method {
    /// Deterministic: no side was sampled, so agreement is a proof (on these arguments,
    /// up to the stated tolerances), not a failure to see a difference.
    pub fn is_deterministic(self) -> bool {
        matches!(self, Method::Quadrature | Method::Value)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Quadrature => "quadrature",
            Method::Sampling => "sampling",
            Method::QuadratureAndSampling => "quadrature and sampling",
            Method::Value => "value",
        })
    }
}

/// A test function of a measure's outcome, through the projections `f` and `g` of the
/// outcome's numeric leaves (see [`fingerprints`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The constant 1: the total mass.
    Mass,
    /// `f`.
    Mean,
    /// `f²`: separates spreads with equal means.
    Square,
    /// `cos f`: bounded, so it is finite where moments are not.
    Cos,
    /// `1/(1+f²)`: bounded, sensitive near 0.
    Cauchy,
    /// `cos g + sin g`: a point of the characteristic function of a second projection,
    /// which sees the joint law of tuples differently from `f`.
    Wave,
}

/// The probes in the order they are checked (mass first: it is the cheapest to fail).
pub const PROBES: [Probe; 6] = [
    Probe::Mass,
    Probe::Mean,
    Probe::Square,
    Probe::Cos,
    Probe::Cauchy,
    Probe::Wave,
];

impl Probe {
    /// The probe's value at an outcome whose projections are `f` and `g`.
    pub fn at(self, f: f64, g: f64) -> f64 {
        match self {
            Probe::Mass => 1.0,
            Probe::Mean => f,
            Probe::Square => f * f,
            Probe::Cos => f.cos(),
            Probe::Cauchy => 1.0 / (1.0 + f * f),
            Probe::Wave => g.cos() + g.sin(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Probe::Mass => "mass",
            Probe::Mean => "E[f]",
            Probe::Square => "E[f^2]",
            Probe::Cos => "E[cos f]",
            Probe::Cauchy => "E[1/(1+f^2)]",
            Probe::Wave => "E[cos g + sin g]",
        }
    }
}

/// One number compared: the probe's value on each side, each with its uncertainty (a
/// quadrature error estimate or a standard error), and the difference allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub probe: &'static str,
    pub a: f64,
    pub a_err: f64,
    pub b: f64,
    pub b_err: f64,
    pub allowed: f64,
}

impl Check {
    pub fn passed(&self) -> bool {
        (self.a - self.b).abs() <= self.allowed
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<17} {:>14.7e} ±{:<9.2e} vs {:>14.7e} ±{:<9.2e} |diff| {:.2e} {} {:.2e}",
            self.probe,
            self.a,
            self.a_err,
            self.b,
            self.b_err,
            (self.a - self.b).abs(),
            if self.passed() { "<=" } else { ">" },
            self.allowed
        )
    }
}

/// The judgement of [`compare`].
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Every probe agreed, and no side was sampled: `method` is
    /// [`Method::Quadrature`] (every probe's error estimate tight) or [`Method::Value`].
    Equal {
        method: Method,
        checks: Vec<Check>,
        notes: Vec<String>,
    },
    /// Every probe agreed within its tolerance, but a side was sampled, so a difference
    /// below a check's `allowed` could have gone unseen. `notes` say why a side was
    /// sampled and how many draws it took.
    NoDifferenceFound {
        method: Method,
        checks: Vec<Check>,
        notes: Vec<String>,
    },
    /// Some probe disagreed beyond its tolerance (the failing checks print `>`).
    Different {
        method: Method,
        checks: Vec<Check>,
        notes: Vec<String>,
    },
    /// Neither method could judge; `why` says what stopped it.
    Unknown { why: String },
}

impl Verdict {
    /// Proved equal on these arguments (no side sampled).
    pub fn is_equal(&self) -> bool {
        matches!(self, Verdict::Equal { .. })
    }

    /// Equal, or no difference found by sampling: nothing contradicts equality.
    pub fn agrees(&self) -> bool {
        matches!(
            self,
            Verdict::Equal { .. } | Verdict::NoDifferenceFound { .. }
        )
    }

    pub fn is_different(&self) -> bool {
        matches!(self, Verdict::Different { .. })
    }

    /// A short name: `equal`, `no difference found`, `different` or `unknown`.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Equal { .. } => "equal",
            Verdict::NoDifferenceFound { .. } => "no difference found",
            Verdict::Different { .. } => "different",
            Verdict::Unknown { .. } => "unknown",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Equal {
                method,
                checks,
                notes,
            }
            | Verdict::NoDifferenceFound {
                method,
                checks,
                notes,
            }
            | Verdict::Different {
                method,
                checks,
                notes,
            } => {
                write!(f, "{} (by {method})", self.kind())?;
                for c in checks {
                    write!(f, "\n  {c}")?;
                }
                for n in notes {
                    write!(f, "\n  note: {n}")?;
                }
                Ok(())
            }
            Verdict::Unknown { why } => write!(f, "unknown: {why}"),
        }
    }
}

/// Random arguments for a program of type `ty` (`T1 -> T2 -> ... -> R`), one per
/// parameter: real from normal(0, 2), prob uniform in (0.1, 4), nat in 0..6, int in
/// -5..=5, bool and unit, arrays of 0 to 4 such elements, pairs, either and maybe.
/// `Err` names a parameter type that has no random values (functions, measures).
pub fn random_args(ty: &Type, rng: &mut Rng) -> Result<Vec<Value>, String> {
    let (params, _) = ty.parameter_types();
    params
        .iter()
        .enumerate()
        .map(|(i, t)| {
            random_value(t, rng, 0).ok_or_else(|| {
                format!(
                    "parameter {} has type {t}, which has no random values",
                    i + 1
                )
            })
        })
        .collect()
}

/// Nesting of random values beyond which arrays are empty (types are finite, but a type
/// can be deep).
const MAX_VALUE_DEPTH: usize = 8;

/// A random value of type `t` (see [`random_args`]); `None` for function and measure types.
pub fn random_value(t: &Type, rng: &mut Rng, depth: usize) -> Option<Value> {
    Some(match t {
        Type::Real => Value::Real(2.0 * rng.normal()),
        Type::Prob => Value::prob(0.1 + 3.9 * rng.uniform_open()),
        Type::Nat => Value::Nat(rng.below(6)),
        // below(11) < 11, so the cast and the shift stay in range
        Type::Int => Value::Int(rng.below(11) as i64 - 5),
        Type::Bool => Value::Bool(rng.below(2) == 1),
        Type::Unit => Value::Unit,
        Type::Array(e) => {
            let n = if depth >= MAX_VALUE_DEPTH {
                0
            } else {
                rng.below(5)
            };
            let mut xs = Vec::new();
            for _ in 0..n {
                xs.push(random_value(e, rng, depth + 1)?);
            }
            Value::array(xs)
        }
        Type::Pair(a, b) => Value::pair(
            random_value(a, rng, depth + 1)?,
            random_value(b, rng, depth + 1)?,
        ),
        Type::Either(a, b) => {
            if rng.below(2) == 0 {
                Value::Left(random_value(a, rng, depth + 1)?.into())
            } else {
                Value::Right(random_value(b, rng, depth + 1)?.into())
            }
        }
        Type::Maybe(a) => {
            if rng.below(3) == 0 {
                Value::Nothing
            } else {
                Value::Just(random_value(a, rng, depth + 1)?.into())
            }
        }
        Type::Measure(_) | Type::Fun(..) => return None,
    })
}

/// The two projections `(f, g)` of a data value: weighted sums of its numeric leaves in
/// order (booleans and the tags of `either`/`maybe` count 0/1, an array's size is a leaf
/// before its elements), leaf `k` (from 1) weighing `k` in `f` and `(-1)^k / k` in `g`,
/// so that no two leaves weigh alike in both and the means of different components cannot
/// cancel out in both. `None` for a value holding functions or measures.
pub fn fingerprints(v: &Value) -> Option<(f64, f64)> {
    struct Acc {
        k: f64,
        f: f64,
        g: f64,
    }
    impl Acc {
        fn leaf(&mut self, x: f64) {
            self.f += self.k * x;
            let sign = if self.k % 2.0 == 0.0 { 1.0 } else { -1.0 };
            self.g += sign * x / self.k;
            self.k += 1.0;
        }
    }
    // an explicit stack: values may be deep (arrays of arrays of pairs...)
    let mut acc = Acc {
        k: 1.0,
        f: 0.0,
        g: 0.0,
    };
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Nat(_) | Value::Int(_) | Value::Prob(_) | Value::Real(_) => {
                acc.leaf(v.as_f64()?);
            }
            Value::Bool(b) => acc.leaf(f64::from(u8::from(*b))),
            Value::Unit => {}
            Value::Pair(p) => {
                stack.push(&p.1);
                stack.push(&p.0);
            }
            Value::Left(x) => {
                acc.leaf(0.0);
                stack.push(x);
            }
            Value::Right(x) => {
                acc.leaf(1.0);
                stack.push(x);
            }
            Value::Just(x) => {
                acc.leaf(1.0);
                stack.push(x);
            }
            Value::Nothing => acc.leaf(0.0),
            Value::Array(xs) => {
                acc.leaf(xs.len() as f64);
                stack.extend(xs.iter().rev());
            }
            Value::Closure(_) | Value::Measure(_) => return None,
        }
    }
    Some((acc.f, acc.g))
}

/// An outcome the probes cannot see (a function or measure inside it).
fn opaque_outcome() -> EvalError {
    EvalError::BadArgument {
        op: "compare".to_string(),
        reason: "an outcome holds a function or a measure, which the probes cannot see".to_string(),
    }
}

fn probe_value(p: Probe, v: &Value) -> EvalResult<f64> {
    if p == Probe::Mass {
        return Ok(1.0);
    }
    let (f, g) = fingerprints(v).ok_or_else(opaque_outcome)?;
    Ok(p.at(f, g))
}

/// What one side's measure integrated to: per probe, a value and its uncertainty.
struct Side {
    /// `None` for quadrature (exact up to `err`); for sampling (`err` is a standard
    /// error), how it went.
    sampled: Option<Sampled>,
    values: Vec<(f64, f64)>,
    /// Why quadrature was not used, if it was not.
    note: Option<String>,
}

/// How an adaptive sampling run ended.
#[derive(Clone, Debug)]
struct Sampled {
    draws: u64,
    /// Every standard error reached the target (else the budget ran out first).
    target_met: bool,
    /// The effective sample size of the run weights, `(Σw)² / Σw²`.
    ess: f64,
    /// What the draws came from (the prior, or a fitted proposal) and what was summed.
    proposal: String,
}

/// Does `a` equal `b` on `args` (one value per `fn` parameter of both terms)? See the
/// module doc for the method. Terms of different types are [`Verdict::Different`] with no
/// checks.
pub fn compare(
    store: &Store,
    a: TermId,
    b: TermId,
    args: &[Value],
    config: &CompareConfig,
) -> Verdict {
    let (ta, tb) = (store.ty(a), store.ty(b));
    if ta != tb {
        return Verdict::Different {
            method: Method::Value,
            checks: Vec::new(),
            notes: vec![format!("the types differ: {ta} and {tb}")],
        };
    }
    let (params, _) = ta.parameter_types();
    if params.len() != args.len() {
        return Verdict::Unknown {
            why: format!(
                "the programs take {} arguments, {} were given",
                params.len(),
                args.len()
            ),
        };
    }
    let eval_config = EvalConfig {
        max_depth: config.max_depth,
        ..EvalConfig::default()
    };
    let apply = |t: TermId| -> EvalResult<Value> {
        let mut it = Interp::new(store, eval_config.clone());
        let f = it.eval(t, &Env::new())?;
        it.apply_args(&f, args)
    };
    let va = match apply(a) {
        Ok(v) => v,
        Err(e) => return unknown("the first program", &e),
    };
    let vb = match apply(b) {
        Ok(v) => v,
        Err(e) => return unknown("the second program", &e),
    };
    compare_values(store, &va, &vb, config)
}

fn unknown(which: &str, e: &EvalError) -> Verdict {
    Verdict::Unknown {
        why: format!("{which} could not be evaluated: {e}"),
    }
}

/// [`compare`] on two values already computed (measures, or plain data).
pub fn compare_values(store: &Store, va: &Value, vb: &Value, config: &CompareConfig) -> Verdict {
    match (va, vb) {
        (Value::Measure(_), Value::Measure(_)) => {}
        (Value::Measure(_), _) | (_, Value::Measure(_)) => {
            return Verdict::Different {
                method: Method::Value,
                checks: Vec::new(),
                notes: vec!["one is a measure, the other is not".to_string()],
            }
        }
        _ => return compare_data(va, vb, config),
    }
    let sa = match integrate_side(store, va, config, config.seed) {
        Ok(s) => s,
        Err(why) => {
            return Verdict::Unknown {
                why: format!("the first measure: {why}"),
            }
        }
    };
    let sb = match integrate_side(store, vb, config, stream_for_b(config.seed)) {
        Ok(s) => s,
        Err(why) => {
            return Verdict::Unknown {
                why: format!("the second measure: {why}"),
            }
        }
    };
    judge(&sa, &sb, config)
}

/// The seed of side `b`'s sampler: a different stream from side `a`'s, so that a term
/// compared with itself is judged on independent draws.
fn stream_for_b(seed: u64) -> u64 {
    let mut s = seed ^ 0x5851_f42d_4c95_7f2d;
    crate::rng::splitmix64(&mut s)
}

/// Two data values (not measures): equal in shape, numbers within `rel_tol`.
fn compare_data(va: &Value, vb: &Value, config: &CompareConfig) -> Verdict {
    let (Some((fa, ga)), Some((fb, gb))) = (fingerprints(va), fingerprints(vb)) else {
        return Verdict::Unknown {
            why: "the values are functions (or hold functions or measures)".to_string(),
        };
    };
    let close = |x: f64, y: f64| {
        x == y || (x - y).abs() <= config.rel_tol * x.abs().max(y.abs()).max(1e-300)
    };
    let check = |probe, x: f64, y: f64| Check {
        probe,
        a: x,
        a_err: 0.0,
        b: y,
        b_err: 0.0,
        allowed: if x == y {
            0.0
        } else {
            config.rel_tol * x.abs().max(y.abs())
        },
    };
    let checks = vec![check("f", fa, fb), check("g", ga, gb)];
    let notes = Vec::new();
    if same_shape(va, vb, &close) {
        Verdict::Equal {
            method: Method::Value,
            checks,
            notes,
        }
    } else {
        Verdict::Different {
            method: Method::Value,
            checks,
            notes,
        }
    }
}

/// Structural equality of data values with numbers compared by `close` (iterative: values
/// may be deep).
fn same_shape(a: &Value, b: &Value, close: &dyn Fn(f64, f64) -> bool) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Nat(_), Value::Nat(_))
            | (Value::Int(_), Value::Int(_))
            | (Value::Prob(_), Value::Prob(_))
            | (Value::Real(_), Value::Real(_)) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) if close(x, y) => {}
                _ => return false,
            },
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Unit, Value::Unit) | (Value::Nothing, Value::Nothing) => {}
            (Value::Pair(p), Value::Pair(q)) => {
                stack.push((&p.0, &q.0));
                stack.push((&p.1, &q.1));
            }
            (Value::Left(x), Value::Left(y))
            | (Value::Right(x), Value::Right(y))
            | (Value::Just(x), Value::Just(y)) => stack.push((x, y)),
            (Value::Array(xs), Value::Array(ys)) if xs.len() == ys.len() => {
                stack.extend(xs.iter().zip(ys.iter()));
            }
            _ => return false,
        }
    }
    true
}

/// Integrate every probe against one measure: by quadrature if its budget allows, else by
/// sampling. `Err` says why neither worked.
fn integrate_side(
    store: &Store,
    m: &Value,
    config: &CompareConfig,
    seed: u64,
) -> Result<Side, String> {
    let quad_why = if config.quad_evals == 0 {
        "quadrature disabled".to_string()
    } else {
        match quadrature(store, m, config) {
            Ok(side) => return Ok(side),
            Err(e) => format!("quadrature: {e}"),
        }
    };
    if config.samples == 0 {
        return Err(format!("{quad_why}; sampling disabled"));
    }
    let mut side =
        sampling(store, m, config, seed).map_err(|e| format!("{quad_why}; sampling: {e}"))?;
    side.note = Some(match side.note.take() {
        // summed exactly by enumeration: say so, and why quadrature did not do it
        Some(exact) => format!("{exact} ({quad_why})"),
        None => quad_why,
    });
    Ok(side)
}

/// The largest error estimate of a probe's quadrature, relative to its value plus the mass,
/// that counts as *tight*: a side whose every probe is this tight is integrated, and only
/// such sides (or plain values) make a verdict [`Verdict::Equal`]; a looser one is sampled.
pub const TIGHT_QUAD_REL_ERR: f64 = 1e-5;

fn quadrature(store: &Store, m: &Value, config: &CompareConfig) -> Result<Side, String> {
    let eval_config = EvalConfig {
        max_depth: config.max_depth,
        max_integrand_evals: config.quad_evals,
        quad: config.quad,
        ..EvalConfig::default()
    };
    let mut values = Vec::with_capacity(PROBES.len());
    for p in PROBES {
        let mut it = Interp::new(store, eval_config.clone());
        let e = it
            .expect(m, &|_, v| probe_value(p, v))
            .map_err(|e| e.to_string())?;
        if !(e.value.is_finite() && e.error.is_finite()) {
            return Err(format!("{} is not finite ({})", p.name(), e.value));
        }
        // an integral that did not converge reports a large error, which would widen the
        // tolerance until anything passes: sample instead
        let mass = values.first().map_or(e.value, |m: &(f64, f64)| m.0);
        if e.error > TIGHT_QUAD_REL_ERR * (e.value.abs() + mass.abs()) {
            return Err(format!(
                "{} did not converge ({:e} ± {:e})",
                p.name(),
                e.value,
                e.error
            ));
        }
        values.push((e.value, e.error));
    }
    Ok(Side {
        sampled: None,
        values,
        note: None,
    })
}

/// Running weighted-probe moments of one sampling run (Welford's update, which keeps the
/// variance accurate when it is small against the mean, as for a constant weight).
struct Moments {
    n: f64,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

impl Moments {
    fn new(k: usize) -> Moments {
        Moments {
            n: 0.0,
            mean: vec![0.0; k],
            m2: vec![0.0; k],
        }
    }

    /// Add one draw: `xs[i]` is the weighted value of probe `i` (0 for a rejected draw).
    fn add(&mut self, xs: impl Iterator<Item = f64>) {
        self.n += 1.0;
        for (i, x) in xs.enumerate() {
            let d = x - self.mean[i];
            self.mean[i] += d / self.n;
            self.m2[i] += d * (x - self.mean[i]);
        }
    }

    /// Per probe, the estimate and its standard error (with `n - 1` for an unbiased
    /// variance).
    fn estimates(&self) -> Vec<(f64, f64)> {
        let n = self.n.max(1.0);
        self.mean
            .iter()
            .zip(&self.m2)
            .map(|(&mean, &m2)| {
                let var = (m2 / (n - 1.0).max(1.0)).max(0.0);
                (mean, (var / n).sqrt())
            })
            .collect()
    }
}

/// Estimate every probe by importance sampling, in batches, until each standard error is
/// within `target_rel_se` of the probe's scale (its value plus the mass: a probe whose
/// value is 0, an even law's mean, is held to the mass's scale) or the budget is spent.
///
/// The runs sum over finite choices and draw continuous ones from a proposal adapted to
/// the measure ([`adaptive_sampling`]); a measure the enumerating walk cannot run (a
/// plate of more random elements than it nests) is sampled from its prior
/// ([`prior_sampling`]). Either way a side whose effective sample size is below
/// `min_ess` is not judged.
fn sampling(store: &Store, m: &Value, config: &CompareConfig, seed: u64) -> Result<Side, String> {
    match adaptive_sampling(store, m, config, seed) {
        Ok(side) => Ok(side),
        Err(Adaptive::Failed(why)) => Err(why),
        Err(Adaptive::CannotWalk(why)) => {
            let mut side = prior_sampling(store, m, config, seed)?;
            if let Some(run) = side.sampled.as_mut() {
                run.proposal = format!("the prior, without enumeration: {why}");
            }
            Ok(side)
        }
    }
}

/// Why [`adaptive_sampling`] gave no estimate.
enum Adaptive {
    /// The enumerating walk cannot run this measure: sample it the plain way.
    CannotWalk(String),
    /// It ran, and the result cannot be trusted (or the measure fails to evaluate).
    Failed(String),
}

/// Probability that a run proposes from the prior once there is a fitted proposal (the
/// defensive part of the mixture: weights stay within ten times the program's own).
const DEFENSIVE_PRIOR: f64 = 0.1;

/// An adaptation round whose effective sample size is at least this fraction of its
/// runs ends the adaptation: the proposal is as good as it needs to be.
const GOOD_ESS_FRACTION: f64 = 0.5;

/// A sampled side's budget of draws must allow this many runs per effective draw
/// required, which bounds the paths a sampled run may enumerate.
const RUNS_PER_ESS: f64 = 10.0;

/// The seed of a derived stream (adaptation round `r`, or the final phase).
fn substream(seed: u64, r: u64) -> u64 {
    let mut s = seed ^ r.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    crate::rng::splitmix64(&mut s)
}

/// The work of the current run, in draws: its paths (at least one).
fn paths_of(st: &RunState) -> u64 {
    (st.leaves.len() as u64).max(1)
}

/// One run's probe sums `Σ_leaves w · probe(v)` and its total weight.
fn run_sums(st: &RunState) -> Result<(Vec<f64>, f64), String> {
    let mut sums = vec![0.0; PROBES.len()];
    let mut total = 0.0;
    for (v, lw) in &st.leaves {
        let w = lw.exp();
        if !w.is_finite() {
            return Err(format!("a draw has weight {w}"));
        }
        if w == 0.0 {
            continue;
        }
        let (f, g) = fingerprints(v).ok_or_else(|| opaque_outcome().to_string())?;
        for (s, p) in sums.iter_mut().zip(PROBES) {
            *s += w * p.at(f, g);
        }
        total += w;
    }
    Ok((sums, total))
}

/// Adaptive importance sampling with enumeration (issue 10): runs of `enumerate.rs`,
/// first from the prior; while a round's effective sample size is under half its runs,
/// a multivariate t over the continuous draws is fitted to the round's weighted traces
/// (`guide.rs`) and the next round proposes from it (mixed with the prior). The best
/// proposal seen is then used for the estimate, whose draws are fresh: the adaptation
/// rounds only choose the proposal, so the estimate is plain importance sampling from a
/// fixed density, unbiased, with honest standard errors. A run that draws nothing at
/// random is exact, and so is the side.
fn adaptive_sampling(
    store: &Store,
    m: &Value,
    config: &CompareConfig,
    seed: u64,
) -> Result<Side, Adaptive> {
    let eval_config = EvalConfig {
        max_depth: config.max_depth,
        ..EvalConfig::default()
    };
    let mut it = Interp::new(store, eval_config);
    let cannot = |e: EvalError| match e {
        EvalError::Budget { .. } => Adaptive::CannotWalk(e.to_string()),
        other => Adaptive::Failed(other.to_string()),
    };
    let failed = Adaptive::Failed;
    // one run from the prior: if it drew nothing, it is the exact answer
    let mut st = RunState::new(seed, None, 1.0, config.max_paths);
    it.run_paths(m, &mut st).map_err(cannot)?;
    if !st.random {
        let (sums, _) = run_sums(&st).map_err(failed)?;
        return Ok(Side {
            sampled: None,
            values: sums.into_iter().map(|v| (v, 0.0)).collect(),
            note: Some(format!(
                "summed exactly over its {} finite paths",
                st.leaves.len()
            )),
        });
    }
    // Sampled runs enumerate fewer paths than the exact attempt: a run of P paths costs P
    // draws of the budget, and the budget must leave room for RUNS_PER_ESS times the
    // effective sample size required (twenty binary labels enumerated 4,096 ways would
    // leave a dozen runs of a 50,000-draw budget, where prior sampling judges easily).
    let needed_runs = RUNS_PER_ESS * config.min_ess.max(1.0);
    let sample_paths = ((config.samples as f64 / needed_runs) as u64).clamp(1, config.max_paths);
    // adaptation: each round evaluates a proposal (the prior first) and fits the next
    let per_round = config.adapt_draws.min(config.samples).max(1);
    let mut guide: Option<Guide> = None;
    let mut best: (f64, Option<Guide>) = (-1.0, None);
    let mut rounds = 0u32;
    for r in 0..=config.adapt_rounds {
        let alpha = if guide.is_some() {
            DEFENSIVE_PRIOR
        } else {
            1.0
        };
        let mut st = RunState::new(
            substream(seed, u64::from(r) + 1),
            guide.clone(),
            alpha,
            sample_paths,
        );
        let mut traces = Vec::new();
        let mut run_lw = Vec::new();
        // a round is `per_round` paths (a run of many leaves costs as many draws)
        let mut paths = 0u64;
        while paths < per_round {
            it.run_paths(m, &mut st).map_err(cannot)?;
            paths += paths_of(&st);
            let lws: Vec<f64> = st.leaves.iter().map(|(_, l)| *l).collect();
            run_lw.push(log_sum_exp(&lws));
            if let Some(t) = st.trace() {
                traces.push(t);
            }
        }
        let frac = crate::guide::ess(&run_lw) / run_lw.len() as f64;
        if frac > best.0 {
            best = (frac, guide.clone());
            rounds = r;
        }
        if frac >= GOOD_ESS_FRACTION || r == config.adapt_rounds {
            break;
        }
        match crate::guide::fit(&traces) {
            Some(g) => guide = Some(g),
            None => break,
        }
    }
    let guide = best.1;
    let proposal = match &guide {
        None => "the prior".to_string(),
        Some(g) => format!(
            "a Student-t over {} continuous draws fitted in {rounds} round(s) of {per_round} draws, mixed with the prior",
            g.dim()
        ),
    };
    let alpha = if guide.is_some() {
        DEFENSIVE_PRIOR
    } else {
        1.0
    };
    let mut st = RunState::new(substream(seed, 0), guide, alpha, sample_paths);
    let mut acc = Moments::new(PROBES.len());
    let (mut w_sum, mut w2_sum) = (0.0f64, 0.0f64);
    let mut max_leaves = 0usize;
    let batch = config.batch.max(1);
    // the budget and the batches count paths, the work done; the statistics count runs
    let (mut draws, mut paths) = (0u64, 0u64);
    let (values, target_met) = loop {
        let end = paths.saturating_add(batch).min(config.samples);
        while paths < end {
            it.run_paths(m, &mut st).map_err(cannot)?;
            let (sums, w) = run_sums(&st).map_err(failed)?;
            max_leaves = max_leaves.max(st.leaves.len());
            paths += paths_of(&st);
            draws += 1;
            w_sum += w;
            w2_sum += w * w;
            acc.add(sums.into_iter());
        }
        let values = acc.estimates();
        let mass = values[0].0.abs();
        let target_met = values
            .iter()
            .all(|(v, e)| *e <= config.target_rel_se * (v.abs() + mass));
        if target_met || paths >= config.samples {
            break (values, target_met);
        }
    };
    if values
        .iter()
        .any(|(v, e)| !(v.is_finite() && e.is_finite()))
    {
        return Err(failed("an estimate is not finite".to_string()));
    }
    let ess = if w2_sum > 0.0 {
        w_sum * w_sum / w2_sum
    } else {
        0.0
    };
    if w_sum > 0.0 && ess < config.min_ess {
        return Err(failed(format!(
            "the weights are too uneven to judge (effective sample size {ess:.1} of {draws} draws from {proposal}; {} needed)",
            config.min_ess
        )));
    }
    let proposal = if max_leaves > 1 {
        format!("{proposal}, finite choices summed ({paths} paths, up to {max_leaves} a draw)")
    } else {
        proposal
    };
    Ok(Side {
        sampled: Some(Sampled {
            draws,
            target_met,
            ess,
            proposal,
        }),
        values,
        note: None,
    })
}

/// Importance sampling from the prior, one outcome a draw (the interpreter's `sample`):
/// for measures the enumerating walk cannot run.
fn prior_sampling(
    store: &Store,
    m: &Value,
    config: &CompareConfig,
    seed: u64,
) -> Result<Side, String> {
    let eval_config = EvalConfig {
        max_depth: config.max_depth,
        ..EvalConfig::default()
    };
    let mut it = Interp::new(store, eval_config);
    let mut rng = Rng::seed_from_u64(seed);
    let mut acc = Moments::new(PROBES.len());
    let (mut w_sum, mut w2_sum) = (0.0f64, 0.0f64);
    let batch = config.batch.max(1);
    let mut draws = 0u64;
    let (values, target_met) = loop {
        let take = batch.min(config.samples - draws);
        for _ in 0..take {
            let (v, lw) = it.sample(m, &mut rng).map_err(|e| e.to_string())?;
            if lw == f64::NEG_INFINITY {
                acc.add(PROBES.iter().map(|_| 0.0));
                continue;
            }
            let w = lw.exp();
            if !w.is_finite() {
                return Err(format!("a draw has weight {w}"));
            }
            w_sum += w;
            w2_sum += w * w;
            let (f, g) = fingerprints(&v).ok_or_else(|| opaque_outcome().to_string())?;
            acc.add(PROBES.iter().map(|p| w * p.at(f, g)));
        }
        draws += take;
        let values = acc.estimates();
        let mass = values[0].0.abs();
        let target_met = values
            .iter()
            .all(|(v, e)| *e <= config.target_rel_se * (v.abs() + mass));
        if target_met || draws >= config.samples {
            break (values, target_met);
        }
    };
    if values
        .iter()
        .any(|(v, e)| !(v.is_finite() && e.is_finite()))
    {
        return Err("an estimate is not finite".to_string());
    }
    let ess = if w2_sum > 0.0 {
        w_sum * w_sum / w2_sum
    } else {
        0.0
    };
    if w_sum > 0.0 && ess < config.min_ess {
        return Err(format!(
            "the weights are too uneven to judge (effective sample size {ess:.1} of {draws} draws from the prior; {} needed)",
            config.min_ess
        ));
    }
    Ok(Side {
        sampled: Some(Sampled {
            draws,
            target_met,
            ess,
            proposal: "the prior".to_string(),
        }),
        values,
        note: None,
    })
}

/// Compare two integrated sides probe by probe.
fn judge(a: &Side, b: &Side, config: &CompareConfig) -> Verdict {
    let method = match (a.sampled.is_some(), b.sampled.is_some()) {
        (false, false) => Method::Quadrature,
        (true, true) => Method::Sampling,
        _ => Method::QuadratureAndSampling,
    };
    // quadrature errors are estimates, not bounds: allow ten times them
    let quad_slack = |s: &Side, e: f64| if s.sampled.is_some() { 0.0 } else { 10.0 * e };
    let mass = a.values[0].0.abs().max(b.values[0].0.abs());
    let mut checks = Vec::with_capacity(PROBES.len());
    for (i, p) in PROBES.iter().enumerate() {
        let ((x, ex), (y, ey)) = (a.values[i], b.values[i]);
        let se = |s: &Side, e: f64| if s.sampled.is_some() { e } else { 0.0 };
        let (sa, sb) = (se(a, ex), se(b, ey));
        let sampled = config.sigmas * (sa * sa + sb * sb).sqrt();
        // relative to the larger value, with a floor relative to the mass so that a probe
        // whose value is 0 (an even function's mean) is not held to 0 exactly; it also
        // absorbs rounding where a sampled side is deterministic (standard error 0)
        let exact = config.rel_tol * (x.abs().max(y.abs()) + 1e-3 * mass);
        let allowed = sampled + exact + quad_slack(a, ex) + quad_slack(b, ey);
        checks.push(Check {
            probe: p.name(),
            a: x,
            a_err: ex,
            b: y,
            b_err: ey,
            allowed,
        });
    }
    let notes = [("first", a), ("second", b)]
        .iter()
        .filter_map(|(which, s)| {
            let Some(run) = s.sampled.as_ref() else {
                return s.note.as_ref().map(|n| format!("the {which} measure was {n}"));
            };
            let how = if run.target_met {
                format!(
                    "standard errors within {} of each probe's scale",
                    config.target_rel_se
                )
            } else {
                format!(
                    "the draw budget ran out before the standard errors reached {} of each probe's scale",
                    config.target_rel_se
                )
            };
            let why = s.note.as_deref().unwrap_or("sampling chosen");
            Some(format!(
                "the {which} measure was sampled: {} draws, {how} ({why}); effective sample size {:.0}, drawn from {}",
                run.draws, run.ess, run.proposal
            ))
        })
        .collect();
    if !checks.iter().all(Check::passed) {
        Verdict::Different {
            method,
            checks,
            notes,
        }
    } else if method.is_deterministic() {
        Verdict::Equal {
            method,
            checks,
            notes,
        }
    } else {
        Verdict::NoDifferenceFound {
            method,
            checks,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::front;

    /// The expected kind of verdict, and for agreement the method.
    #[derive(Debug)]
    enum Want {
        /// Proved equal (no side sampled) by this method.
        Equal(Method),
        /// Agreement by this method with a sampled side: no difference found.
        NoDifference(Method),
        /// Equal or no difference found, by whichever method the budgets allow.
        Same,
        Different,
        Unknown,
    }

    fn run(a: &str, b: &str, args: &str, config: &CompareConfig) -> Verdict {
        let mut store = Store::new();
        let ta = front::load(&mut store, a).expect("a loads");
        let tb = front::load(&mut store, b).expect("b loads");
        let j: serde_json::Value = serde_json::from_str(args).expect("json args");
        let (params, _) = store.ty(ta).parameter_types();
        let vals = match j {
            serde_json::Value::Array(xs) => xs
                .iter()
                .zip(&params)
                .map(|(x, t)| crate::json::value_from_json(x, t).expect("arg"))
                .collect::<Vec<_>>(),
            _ => panic!("args must be an array"),
        };
        compare(&store, ta, tb, &vals, config)
    }

    fn check_with(a: &str, b: &str, args: &str, config: &CompareConfig, want: Want) {
        let v = run(a, b, args, config);
        let ok = match (&want, &v) {
            (Want::Equal(m), Verdict::Equal { method, .. }) => m == method,
            (Want::NoDifference(m), Verdict::NoDifferenceFound { method, .. }) => m == method,
            (Want::Same, v) => v.agrees(),
            (Want::Different, Verdict::Different { .. }) => true,
            (Want::Unknown, Verdict::Unknown { .. }) => true,
            _ => false,
        };
        assert!(ok, "{a}\n  vs\n{b}\nwant {want:?}, got {v}");
    }

    fn check(a: &str, b: &str, args: &str, want: Want) {
        check_with(a, b, args, &CompareConfig::default(), want);
    }

    fn sampling_only() -> CompareConfig {
        CompareConfig {
            quad_evals: 0,
            ..CompareConfig::default()
        }
    }

    use Method::{Quadrature, QuadratureAndSampling, Sampling};

    #[test]
    fn spreads_weights_and_means_are_told_apart_by_quadrature() {
        check("normal(0, 1)", "normal(0, 2)", "[]", Want::Different);
        check(
            "normal(0, 1)",
            "normal(0, 1)",
            "[]",
            Want::Equal(Quadrature),
        );
        check(
            "fn m real: weight(1/2, normal(m, 1))",
            "fn m real: weight(1/3, normal(m, 1))",
            "[0.5]",
            Want::Different,
        );
        check(
            "fn m real: normal(m, 1)",
            "fn m real: normal(m + 1/1000, 1)",
            "[0.5]",
            Want::Different,
        );
        // the same law written differently
        check(
            "x <~ normal(0, 1)\nreturn 2 * x + 1",
            "normal(1, 2)",
            "[]",
            Want::Equal(Quadrature),
        );
        check(
            "weight(2, uniform(3, 7))",
            "x <~ lebesgue(-∞, ∞)\nweight(if 3 < x && x < 7: 1/2 else: 0, return x)",
            "[]",
            Want::Equal(Quadrature),
        );
        check(
            "categorical([1/4, 3/4])",
            "categorical([1, 3])",
            "[]",
            Want::Equal(Quadrature),
        );
        check(
            "categorical([1/4, 3/4])",
            "categorical([3, 1])",
            "[]",
            Want::Different,
        );
    }

    #[test]
    fn spreads_and_weights_are_told_apart_by_sampling() {
        let s = sampling_only();
        check_with("normal(0, 1)", "normal(0, 2)", "[]", &s, Want::Different);
        check_with(
            "normal(0, 1)",
            "normal(0, 1)",
            "[]",
            &s,
            Want::NoDifference(Sampling),
        );
        check_with(
            "fn m real: weight(1/2, normal(m, 1))",
            "fn m real: weight(1/3, normal(m, 1))",
            "[0.5]",
            &s,
            Want::Different,
        );
        check_with(
            "x <~ gamma(2, 1)\nreturn x",
            "x <~ gamma(1, 2)\nreturn x",
            "[]",
            &s,
            Want::Different,
        );
    }

    /// The notes of an agreeing verdict.
    fn notes_of(v: &Verdict) -> Vec<String> {
        match v {
            Verdict::Equal { notes, .. }
            | Verdict::NoDifferenceFound { notes, .. }
            | Verdict::Different { notes, .. } => notes.clone(),
            Verdict::Unknown { .. } => Vec::new(),
        }
    }

    #[test]
    fn sampling_draws_until_its_standard_errors_reach_the_target() {
        let s = sampling_only();
        // a standard normal's mean needs (1/0.004)² = 62,500 draws: seven batches
        let wide = CompareConfig {
            samples: 100_000,
            ..sampling_only()
        };
        let v = run("normal(0, 1)", "normal(0, 1)", "[]", &wide);
        let notes = notes_of(&v);
        assert!(
            notes
                .iter()
                .all(|n| n.contains(": 70000 draws, standard errors within")),
            "{notes:?}"
        );
        // a law with no spread meets the target in its first batch
        let v = run(
            "x <~ normal(0, 1)\nreturn 3",
            "x <~ normal(0, 1)\nreturn 3",
            "[]",
            &s,
        );
        assert!(matches!(v, Verdict::NoDifferenceFound { .. }), "{v}");
        let notes = notes_of(&v);
        assert!(
            notes
                .iter()
                .all(|n| n.contains(": 10000 draws, standard errors within")),
            "{notes:?}"
        );
        // a tiny budget runs out and says so
        let tiny = CompareConfig {
            samples: 1_000,
            ..sampling_only()
        };
        let v = run("normal(0, 1)", "normal(0, 1)", "[]", &tiny);
        let notes = notes_of(&v);
        assert!(
            notes
                .iter()
                .all(|n| n.contains(": 1000 draws, the draw budget ran out")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_plate_beyond_quadrature_is_sampled() {
        let a = "fn n nat:\nxs <~ plate i of n: normal(0, 1)\nweight(exp(xs[0]), return xs)";
        let b = "fn n nat:\nxs <~ plate i of n: normal(0, 1)\nweight(exp(xs[0]) * 6/5, return xs)";
        check(a, a, "[6]", Want::NoDifference(Sampling));
        check(a, b, "[6]", Want::Different);
    }

    #[test]
    fn a_quadrature_side_meets_a_sampled_side() {
        // the lebesgue side can only be integrated, the plate side only sampled
        let a = "x <~ lebesgue(-∞, ∞)\nweight(exp(-x * x / 2) / sqrt(2 * pi), return (x, x))";
        let b = "xs <~ plate i of 6: normal(0, 1)\nreturn (xs[0], xs[0])";
        check(a, b, "[]", Want::NoDifference(QuadratureAndSampling));
        let c = "xs <~ plate i of 6: normal(0, 3/2)\nreturn (xs[0], xs[0])";
        check(a, c, "[]", Want::Different);
    }

    #[test]
    fn joint_laws_with_equal_marginals_are_told_apart() {
        // case 1: y and z share the latent x (covariance 1); independent draws do not
        let shared =
            "fn mu real:\nx <~ normal(mu, 1)\ny <~ normal(x, 1)\nz <~ normal(x, 1)\nreturn [y, z]";
        let solved = "fn mu real:\ny <~ normal(mu, sqrt(2))\nz <~ normal((mu + y) / 2, sqrt(6) / 2)\nreturn [y, z]";
        let independent =
            "fn mu real:\ny <~ normal(mu, sqrt(2))\nz <~ normal(mu, sqrt(2))\nreturn [y, z]";
        check(shared, solved, "[0.5]", Want::Same);
        check(shared, independent, "[0.5]", Want::Different);
        // the same pair in the other order
        let swapped =
            "fn mu real:\nx <~ normal(mu, 1)\ny <~ normal(x, 1)\nz <~ normal(x, 2)\nreturn (y, z)";
        let swapped2 =
            "fn mu real:\nx <~ normal(mu, 1)\ny <~ normal(x, 2)\nz <~ normal(x, 1)\nreturn (y, z)";
        check(swapped, swapped2, "[0.5]", Want::Different);
    }

    #[test]
    fn mixtures_compare_as_sums() {
        check(
            "normal(0, 1) <|> weight(2, normal(3, 1))",
            "weight(2, normal(3, 1)) <|> normal(0, 1)",
            "[]",
            Want::Equal(Quadrature),
        );
        check(
            "normal(0, 1) <|> normal(3, 1)",
            "weight(2, normal(3/2, 1))",
            "[]",
            Want::Different,
        );
        check(
            "reject. measure(real)",
            "weight(0, normal(0, 1))",
            "[]",
            Want::Equal(Quadrature),
        );
    }

    #[test]
    fn values_are_compared_as_values() {
        check(
            "fn x real: x * 2",
            "fn x real: x + x",
            "[1.5]",
            Want::Equal(Method::Value),
        );
        check(
            "fn x real: x * 2",
            "fn x real: x + 1",
            "[1.5]",
            Want::Different,
        );
        check(
            "fn x real: (x, [x, 1])",
            "fn x real: (x, [x])",
            "[1.5]",
            Want::Different,
        );
        check(
            "fn x real: x * 2",
            "fn x real: x + x",
            "[2]",
            Want::Equal(Method::Value),
        );
    }

    #[test]
    fn what_cannot_be_judged_is_unknown() {
        // infinite mass: neither quadrature nor sampling
        check("lebesgue(-∞, ∞)", "lebesgue(-∞, ∞)", "[]", Want::Unknown);
        // a failing evaluation
        check(
            "fn x real: return real2prob(x)",
            "fn x real: return real2prob(x)",
            "[-1]",
            Want::Unknown,
        );
        // wrong number of arguments
        check(
            "fn x real: normal(x, 1)",
            "fn x real: normal(x, 1)",
            "[]",
            Want::Unknown,
        );
        // functions as values
        check(
            "fn x real: fn y real: x + y",
            "fn x real: fn y real: y + x",
            "[1]",
            Want::Unknown,
        );
    }

    #[test]
    fn degenerate_importance_weights_are_not_trusted() {
        // a narrow likelihood far in the prior's tail: a handful of the 50,000 draws carry
        // all the weight, so standard errors would mean nothing
        let peaked = "x <~ normal(0, 1)\nweight(exp(-(x - 4) ^ 2 * 5000), return x)";
        let prior_only = CompareConfig {
            adapt_rounds: 0,
            ..sampling_only()
        };
        let v = run(peaked, peaked, "[]", &prior_only);
        assert!(
            matches!(&v, Verdict::Unknown { why } if why.contains("1000 needed")),
            "{v}"
        );
        // quadrature handles it, and so does a proposal adapted to it (issue 10)
        check(peaked, peaked, "[]", Want::Equal(Quadrature));
        check_with(
            peaked,
            peaked,
            "[]",
            &sampling_only(),
            Want::NoDifference(Sampling),
        );
        let shifted = "x <~ normal(0, 1)\nweight(exp(-(x - 4) ^ 2 * 5000) * 21/20, return x)";
        check_with(peaked, shifted, "[]", &sampling_only(), Want::Different);
    }

    #[test]
    fn finite_choices_beyond_quadrature_are_summed_exactly() {
        // six labels of three values: 729 paths, beyond quadrature's nesting of plates
        let a = "xs <~ plate i of 6: categorical([1/6, 2/6, 3/6])\nreturn xs";
        let b = "xs <~ plate i of 6: categorical([1, 2, 3])\nreturn xs";
        let c = "xs <~ plate i of 6: categorical([1, 2, 4])\nreturn xs";
        check(a, b, "[]", Want::Equal(Quadrature));
        check(a, c, "[]", Want::Different);
        let v = run(a, b, "[]", &CompareConfig::default());
        assert!(
            notes_of(&v)
                .iter()
                .any(|n| n.contains("summed exactly over its 729 finite paths")),
            "{v}"
        );
        // past the budget of paths the labels are drawn: agreement is not a proof
        let few = CompareConfig {
            max_paths: 10,
            ..CompareConfig::default()
        };
        check_with(a, b, "[]", &few, Want::NoDifference(Sampling));
        check_with(a, c, "[]", &few, Want::Different);
    }

    #[test]
    fn runs_whose_draws_vary_in_number_are_estimated_without_bias() {
        // the number of normal draws is random (1 + poisson(2)); only the first is
        // weighted, by a likelihood in the prior's tail, so the proposal is adapted to
        // runs of the commonest length and must stay exact on the others
        let a = "n <~ poisson(2)\nxs <~ plate i of n + 1: normal(0, 1)\nweight(exp(-(xs[0] - 3) ^ 2 * 4), return n)";
        // ∫ N(x; 0, 1) exp(-4 (x - 3)²) dx = exp(-4 · 9 / 9) / 3
        let b = "weight(exp(-4) / 3, poisson(2))";
        let c = "weight(exp(-4) / 3 * 21/20, poisson(2))";
        let v = run(a, b, "[]", &sampling_only());
        assert!(matches!(v, Verdict::NoDifferenceFound { .. }), "{v}");
        assert!(
            notes_of(&v).iter().any(|n| n.contains("a Student-t over")),
            "{v}"
        );
        check_with(a, c, "[]", &sampling_only(), Want::Different);
    }

    #[test]
    fn labels_are_summed_while_parameters_are_sampled() {
        // a two-class mixture of two points: the means are sampled, the labels summed
        let a = "fn t array(real):\nmu <~ plate k of 2: normal(0, 3)\nzs <~ plate i of size(t):\n    z <~ categorical([1, 1])\n    observe(normal(mu[z], 1), t[i])\nreturn mu[0] + mu[1]";
        let b = "fn t array(real):\nmu <~ plate k of 2: normal(0, 3)\nzs <~ plate i of size(t):\n    z <~ categorical([1, 1])\n    observe(normal(mu[z], 1), t[i])\nreturn mu[0] + mu[1] + 1/5";
        let args = "[[-2.5, 3.0]]";
        let v = run(a, a, args, &sampling_only());
        assert!(matches!(v, Verdict::NoDifferenceFound { .. }), "{v}");
        assert!(
            notes_of(&v)
                .iter()
                .all(|n| n.contains("effective sample size") && n.contains("up to 4 a draw)")),
            "{v}"
        );
        check_with(a, b, args, &sampling_only(), Want::Different);
    }

    #[test]
    fn an_integral_that_did_not_converge_is_not_trusted() {
        // ∫ x^-0.99 over (0, 1) is 100; quadrature stops near 94 with a large error
        // estimate, which must not become a tolerance wide enough to call these equal
        check(
            "x <~ lebesgue(0, 1)\nweight(real2prob(x) ** (-99/100), return x)",
            "x <~ lebesgue(0, 1)\nweight(real2prob(x) ** (-99/100) * 101/100, return x)",
            "[]",
            Want::Unknown,
        );
    }

    #[test]
    fn different_types_are_different() {
        check("normal(0, 1)", "return 1", "[]", Want::Different);
    }

    #[test]
    fn random_args_have_the_parameter_types() {
        let ty = Type::fun(
            Type::Real,
            Type::fun(
                Type::Prob,
                Type::fun(
                    Type::Nat,
                    Type::fun(
                        Type::array(Type::pair(Type::Int, Type::Bool)),
                        Type::measure(Type::Real),
                    ),
                ),
            ),
        );
        let mut rng = Rng::seed_from_u64(3);
        let mut sizes = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let args = random_args(&ty, &mut rng).expect("data types");
            assert_eq!(args.len(), 4);
            assert!(matches!(args[0], Value::Real(_)));
            let Value::Prob(l) = args[1] else {
                panic!("prob")
            };
            assert!((0.1..4.0).contains(&l.exp()), "{}", l.exp());
            let Value::Nat(n) = args[2] else {
                panic!("nat")
            };
            assert!(n < 6);
            let Value::Array(xs) = &args[3] else {
                panic!("array")
            };
            sizes.insert(xs.len());
            for x in xs.iter() {
                let Value::Pair(p) = x else { panic!("pair") };
                assert!(matches!(p.0, Value::Int(i) if (-5..=5).contains(&i)));
                assert!(matches!(p.1, Value::Bool(_)));
            }
        }
        assert_eq!(sizes.len(), 5, "array sizes 0..5 all occur: {sizes:?}");
        let f = Type::fun(Type::fun(Type::Nat, Type::Nat), Type::measure(Type::Nat));
        assert!(random_args(&f, &mut rng).is_err());
    }

    #[test]
    fn fingerprints_weigh_leaves_apart() {
        let v = |a: f64, b: f64| Value::pair(Value::Real(a), Value::Real(b));
        let (f1, g1) = fingerprints(&v(1.0, 2.0)).expect("data");
        let (f2, g2) = fingerprints(&v(2.0, 1.0)).expect("data");
        assert_eq!((f1, f2), (5.0, 4.0));
        assert!(g1 != g2);
        // an array's size is a leaf
        let e = fingerprints(&Value::array(vec![])).expect("data");
        let z = fingerprints(&Value::array(vec![Value::Real(0.0)])).expect("data");
        assert!(e != z);
    }
}
