//! Markov chains of kernel programs (`slic_codegen::chain`, issue 15 deliverable 4) on
//! Metropolis-Hastings kernels written by hand in Hakaru:
//! - invariance: from exact draws of the target (the loop IR's sampler), 20 steps of the
//!   kernel leave the distribution unchanged (two-sample Kolmogorov-Smirnov against fresh
//!   exact draws, fixed seeds), for continuous, positive and discrete targets, through
//!   the interpreter and the compiled C kernel; a kernel whose acceptance ratio is that
//!   of another target, and one that forgets its proposal's Jacobian, are rejected by the
//!   same test;
//! - long chains' means are the target's within five Monte Carlo standard errors (by
//!   their effective sample size);
//! - kernels that are not probability measures (weighted, rejecting) and programs that
//!   are not kernels are errors naming the step or the type;
//! - `mcmc(proposal, target)` (issue 15): the simplified kernels of 12 target/proposal
//!   pairs (continuous, positive, bounded and discrete targets; random-walk,
//!   log-normal and independent proposals) leave their targets invariant by the same
//!   test, a chain on a posterior computed by `disint` finds its mean, and `mh` gives the
//!   proposal with its exact ratio;
//! - a pair state (issue 15's thermometer): an `mcmc` kernel over pairs leaves its target
//!   invariant, the interpreter and the C kernel draw the same chain, and the
//!   thermometer workflow finds its posterior means (by quadrature).

use slic_codegen::chain::{
    self, columns, diagnostics, ChainError, CompiledStepper, InterpStepper, Markov, Stepper,
};
use slic_codegen::{run_measure, CompileOptions, Mode, Outcome, Target, Val};
use slic_suite::lowered;

/// `n` exact draws of a measure program without parameters.
fn exact(target: &str, n: usize, seed: u64) -> Vec<Val> {
    let (p, _) = lowered(target);
    let Ok(Outcome::Sampled(s)) = run_measure(&p, &[], Mode::Sample { n, seed }) else {
        panic!("the target samples")
    };
    s.samples
        .into_iter()
        .map(|x| {
            assert_eq!(x.ln_w, 0.0, "the target is drawn exactly");
            x.value.expect("a draw")
        })
        .collect()
}

/// The two-sample Kolmogorov-Smirnov statistic.
fn ks(a: &[f64], b: &[f64]) -> f64 {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The KS statistic's critical value at level 0.001 for samples of sizes n and m.
fn ks_critical(n: usize, m: usize) -> f64 {
    1.949 * ((n + m) as f64 / (n * m) as f64).sqrt()
}

/// A random-walk Metropolis kernel for N(0, 1).
const NORMAL: (&str, &str) = (
    "normal(0, 1)",
    "fn x real:\n    y <~ normal(x, 1)\n    b <~ bernoulli(min(1, exp((x * x - y * y) / 2)))\n    return if b: y else: x\n",
);

/// Gamma(3, 1) by a multiplicative (log-normal) random walk: the ratio includes the
/// proposal's Jacobian y / x.
const GAMMA: (&str, &str) = (
    "gamma(3, 1)",
    "fn x prob:\n    e <~ normal(0, 0.5)\n    y = x * exp(e)\n    b <~ bernoulli(min(1, (y / x) ^ 3 * exp(prob2real(x) - prob2real(y))))\n    return if b: y else: x\n",
);

/// Poisson(3) by a +-1 random walk on the naturals (0 proposes -1 half the time, which is
/// refused).
const POISSON: (&str, &str) = (
    "poisson(3)",
    "fn x nat:\n    s <~ bernoulli(0.5)\n    if s:\n        b <~ bernoulli(min(1, 3 / nat2prob(x + 1)))\n        return if b: x + 1 else: x\n    else:\n        if x == 0:\n            return x\n        else:\n            b <~ bernoulli(min(1, nat2prob(x) / 3))\n            return if b: int2nat(x - 1) else: x\n",
);

/// Beta(2, 5) by an independence sampler proposing uniforms: the ratio of the target's
/// densities.
const BETA: (&str, &str) = (
    "beta(2, 5)",
    "fn x prob:\n    y <~ uniform(0, 1)\n    b <~ bernoulli(min(1, real2prob(y) * real2prob(1 - y) ^ 4 / (x * real2prob(1 - prob2real(x)) ^ 4)))\n    return if b: real2prob(y) else: x\n",
);

/// `steps` steps of `kernel` from each state of `starts`, each chain its own seed.
fn stepped(
    kernel: &str,
    starts: &[Val],
    steps: usize,
    compiled: Option<Target>,
) -> Result<Vec<f64>, ChainError> {
    let (p, ty) = lowered(kernel);
    let m = Markov::new(&p, &ty)?;
    let _ = m.state_type();
    let mut out = Vec::with_capacity(starts.len());
    let make = |seed: u64, x: &Val| -> Result<Box<dyn Stepper>, ChainError> {
        Ok(match compiled {
            None => Box::new(InterpStepper::new(p.clone(), seed)),
            Some(t) => Box::new(
                CompiledStepper::build(&p, t, std::slice::from_ref(x), seed, &opts())
                    .map_err(|e| ChainError::Build(e.to_string()))?,
            ),
        })
    };
    // one compiled kernel serves every chain (the state is not specialised)
    let mut shared = make(1, &starts[0])?;
    for (i, x) in starts.iter().enumerate() {
        let mut own;
        let s: &mut dyn Stepper = if compiled.is_some() {
            shared.as_mut()
        } else {
            own = make(1000 + i as u64, x)?;
            own.as_mut()
        };
        let run = chain::run_chain(&mut Dyn(s), std::slice::from_ref(x), steps, 0)?;
        out.push(columns(&run.last)[0]);
    }
    Ok(out)
}

/// A `&mut dyn Stepper` as a `Stepper`.
struct Dyn<'a>(&'a mut dyn Stepper);

impl Stepper for Dyn<'_> {
    fn start(&mut self, args: &[Val]) -> Result<(), ChainError> {
        self.0.start(args)
    }
    fn step(&mut self, x: &Val) -> Result<slic_codegen::Sample, ChainError> {
        self.0.step(x)
    }
}

fn opts() -> CompileOptions {
    CompileOptions {
        cache_dir: Some(std::env::temp_dir().join("slic-chain-test-cache")),
        ..CompileOptions::default()
    }
}

fn reals(v: &[Val]) -> Vec<f64> {
    v.iter().map(|x| columns(x)[0]).collect()
}

#[test]
fn metropolis_hastings_kernels_leave_their_targets_invariant() {
    let n = 3000;
    for (target, kernel) in [NORMAL, GAMMA, POISSON, BETA] {
        let starts = exact(target, n, 7);
        let fresh = reals(&exact(target, n, 8));
        for backend in [None, Some(Target::C)] {
            let after = stepped(kernel, &starts, 20, backend).expect("the chains run");
            let d = ks(&after, &fresh);
            assert!(
                d < ks_critical(n, n),
                "{target} {backend:?}: KS {d} >= {}",
                ks_critical(n, n)
            );
        }
    }
}

#[test]
fn a_kernel_for_another_target_is_caught() {
    // the acceptance ratio of N(0, 2^2), started from exact N(0, 1) draws
    let wrong = "fn x real:\n    y <~ normal(x, 1)\n    b <~ bernoulli(min(1, exp((x * x - y * y) / 8)))\n    return if b: y else: x\n";
    let n = 3000;
    let starts = exact("normal(0, 1)", n, 7);
    let fresh = reals(&exact("normal(0, 1)", n, 8));
    let after = stepped(wrong, &starts, 20, None).expect("the chains run");
    let d = ks(&after, &fresh);
    assert!(d > ks_critical(n, n), "KS {d}");
    // the gamma kernel without its proposal's Jacobian (y / x)
    let no_jacobian = GAMMA.1.replace("(y / x) ^ 3", "(y / x) ^ 2");
    let starts = exact(GAMMA.0, n, 7);
    let fresh = reals(&exact(GAMMA.0, n, 8));
    let after = stepped(&no_jacobian, &starts, 20, None).expect("the chains run");
    let d = ks(&after, &fresh);
    assert!(d > ks_critical(n, n), "without the Jacobian: KS {d}");
}

#[test]
fn long_chains_find_the_targets_mean() {
    for ((target, kernel), mean) in [
        (NORMAL, 0.0),
        (GAMMA, 3.0),
        (POISSON, 3.0),
        (BETA, 2.0 / 7.0),
    ] {
        let (p, ty) = lowered(kernel);
        Markov::new(&p, &ty).expect("a kernel");
        let start = exact(target, 1, 3).remove(0);
        let mut s = CompiledStepper::build(&p, Target::C, std::slice::from_ref(&start), 5, &opts())
            .expect("the kernel compiles");
        let run = chain::run_chain(&mut s, &[start], 40_000, 500).expect("the chain runs");
        let xs: Vec<f64> = run.draws.iter().map(|r| r[0]).collect();
        let (m, sd) = diagnostics::mean_sd(&xs).expect("draws");
        let ess = diagnostics::ess(&xs).expect("ess");
        let se = sd / ess.sqrt();
        assert!(
            (m - mean).abs() < 5.0 * se,
            "{target}: mean {m} vs {mean} (se {se}, ess {ess})"
        );
        assert!(run.moved > 0 && run.moved < xs.len());
    }
}

#[test]
fn kernels_that_are_not_probability_measures_are_errors() {
    let weighted = "fn x real:\n    weight(0.5, return x)\n";
    let (p, ty) = lowered(weighted);
    Markov::new(&p, &ty).expect("the type of a kernel");
    let mut s = InterpStepper::new(p, 1);
    let e = chain::run_chain(&mut s, &[Val::Real(0.0)], 3, 0).expect_err("weighted");
    assert!(matches!(e, ChainError::Weighted { step: 1, .. }), "{e}");
    assert!(e.to_string().contains("not 1"), "{e}");

    let rejecting = "fn x real:\n    if x < 1: return x + 1 else: reject. measure(real)\n";
    let (p, ty) = lowered(rejecting);
    let mut s = InterpStepper::new(p.clone(), 1);
    Markov::new(&p, &ty).expect("the type of a kernel");
    let e = chain::run_chain(&mut s, &[Val::Real(0.5)], 3, 0).expect_err("rejects");
    assert_eq!(e, ChainError::Rejected { step: 2 });

    // the value returned is not of the state's type
    for not_a_kernel in [
        "fn x nat:\n    normal(0, 1)\n",
        "fn x real:\n    return x > 0\n",
    ] {
        let (p, ty) = lowered(not_a_kernel);
        let e = Markov::new(&p, &ty).expect_err("not a kernel");
        assert!(matches!(e, ChainError::NotAKernel { .. }), "{e}");
    }
}

/// `text` (a program whose transforms `mcmc`, `disint`, `density` are computed by the
/// simplifier), simplified and lowered.
fn simplified(text: &str) -> (slic_codegen::Program, slic_algebra::Type) {
    let mut store = slic_algebra::Store::new();
    let t = slic_algebra::front::load(&mut store, text).expect("the program loads");
    let s = slic_simplify::simplify(&mut store, t, &slic_simplify::SimplifyConfig::default());
    assert!(
        !s.notes.iter().any(|n| n.starts_with("stopped")),
        "{text}: {:?}",
        s.notes
    );
    let ty = store.ty(s.term).clone();
    let l = slic_codegen::lower_program(&mut store, s.term, slic_codegen::Passes::default())
        .expect("the kernel lowers");
    (l.program, ty)
}

/// 20 steps of a kernel program from each state of `starts` through the interpreter.
fn stepped_program(p: &slic_codegen::Program, starts: &[Val]) -> Vec<f64> {
    starts
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let mut s = InterpStepper::new(p.clone(), 2000 + i as u64);
            let run = chain::run_chain(&mut s, std::slice::from_ref(x), 20, 0).expect("runs");
            columns(&run.last)[0]
        })
        .collect()
}

/// (target, proposal) pairs for `mcmc`.
const MCMC_PAIRS: [(&str, &str); 12] = [
    ("normal(0, 1)", "fn x real: normal(x, 1)"),
    ("normal(2, 1/2)", "fn x real: normal(x, 3/10)"),
    ("normal(0, 1)", "fn x real: normal(0, 2)"),
    ("normal(-1, 2)", "fn x real: normal(x / 2, 2)"),
    ("gamma(3, 1)", "fn x prob: lognormal(log(x), 1/2)"),
    ("gamma(2, 2)", "fn x prob: exponential(4)"),
    ("beta(2, 5)", "fn x prob: beta(1, 1)"),
    (
        "beta(2, 2)",
        "def prop(x prob) measure(prob):\n    lognormal(log(x), 1/4)\n",
    ),
    ("uniform(0, 1)", "fn x real: normal(x, 1/2)"),
    ("poisson(3)", "fn x nat: poisson(5)"),
    ("poisson(3)", "fn x nat: poisson(x + 1)"),
    ("categorical([1, 2, 3])", "fn x nat: categorical([1, 1, 1])"),
];

#[test]
fn mcmc_kernels_leave_their_targets_invariant() {
    let n = 2000;
    for (target, proposal) in MCMC_PAIRS {
        // a proposal of several statements is a `def prop` before the call
        let text = match proposal.strip_prefix("def ") {
            Some(_) => format!("{proposal}mcmc(prop, {target})\n"),
            None => format!("mcmc({proposal}, {target})\n"),
        };
        let (p, ty) = simplified(&text);
        Markov::new(&p, &ty).unwrap_or_else(|e| panic!("{text}: {e}"));
        let starts = exact(target, n, 17);
        let fresh = reals(&exact(target, n, 18));
        let after = stepped_program(&p, &starts);
        let d = ks(&after, &fresh);
        assert!(
            d < ks_critical(n, n),
            "{text}: KS {d} >= {}",
            ks_critical(n, n)
        );
    }
}

#[test]
fn an_mcmc_chain_finds_a_posterior_mean_from_disint() {
    // mu ~ normal(0, 1), y ~ normal(mu, 1), y = 3/2 observed: mu | y ~ normal(3/4, sqrt(1/2))
    let post = "post = disint(mu <~ normal(0, 1)\n              y <~ normal(mu, 1)\n              return (y, mu))\n";
    let (p, ty) = simplified(&format!("{post}mcmc(fn x real: normal(x, 1), post(3/2))\n"));
    Markov::new(&p, &ty).expect("a kernel");
    let start = [Val::Real(0.0)];
    let mut s = CompiledStepper::build(&p, Target::C, &start, 9, &opts()).expect("compiles");
    let run = chain::run_chain(&mut s, &start, 60_000, 1000).expect("the chain runs");
    let xs: Vec<f64> = run.draws.iter().map(|r| r[0]).collect();
    let (m, sd) = diagnostics::mean_sd(&xs).expect("draws");
    let se = sd / diagnostics::ess(&xs).expect("ess").sqrt();
    // the exact posterior is what `simplify` makes of `post(3/2)`: a weighted normal,
    // whose exact draws (the loop IR's sampler) give the reference moments
    let (q, _) = simplified(&format!("{post}post(3/2)\n"));
    let Ok(Outcome::Sampled(exact)) = run_measure(
        &q,
        &[],
        Mode::Sample {
            n: 200_000,
            seed: 4,
        },
    ) else {
        panic!("the simplified posterior samples")
    };
    let ys: Vec<f64> = exact
        .samples
        .iter()
        .filter_map(|x| x.value.as_ref().map(|v| columns(v)[0]))
        .collect();
    let (em, esd) = diagnostics::mean_sd(&ys).expect("exact draws");
    assert!(
        (em - 0.75).abs() < 0.01 && (esd - 0.5f64.sqrt()).abs() < 0.01,
        "{em} {esd}"
    );
    assert!((m - em).abs() < 5.0 * se, "mean {m} vs {em} (se {se})");
    assert!((sd - esd).abs() < 0.05, "sd {sd} vs {esd}");
}

#[test]
fn mh_gives_the_proposal_and_its_exact_ratio() {
    // a symmetric proposal: the ratio is the target's, exp((x^2 - y^2) / 2) for normal(0, 1)
    let text = "mh(fn x real: normal(x, 1), normal(0, 1))\n";
    let mut store = slic_algebra::Store::new();
    let t = slic_algebra::front::load(&mut store, text).expect("loads");
    let s = slic_simplify::simplify(&mut store, t, &slic_simplify::SimplifyConfig::default());
    let printed = slic_algebra::print::print_term(&store, s.term);
    assert!(printed.contains("exp(x ^ 2 / 2 - y ^ 2 / 2)"), "{printed}");
}

#[test]
fn the_burglary_workflow_samples_its_exact_posterior() {
    // corpus/mcmc/01: disint on the alarm, simplify, mcmc with a fair-coin proposal
    let text = std::fs::read_to_string(slic_suite::root().join("corpus/mcmc/01-burglary-alarm.hk"))
        .expect("the workflow file");
    let (p, ty) = simplified(&text);
    Markov::new(&p, &ty).expect("a kernel over bool");
    let start = [Val::Bool(true)];
    let mut s = CompiledStepper::build(&p, Target::C, &start, 3, &opts()).expect("compiles");
    let run = chain::run_chain(&mut s, &start, 100_000, 100).expect("the chain runs");
    let xs: Vec<f64> = run.draws.iter().map(|r| r[0]).collect();
    let (m, sd) = diagnostics::mean_sd(&xs).expect("draws");
    let se = sd / diagnostics::ess(&xs).expect("ess").sqrt();
    // P(b | alarm) = 0.01 * 0.9402 / (0.01 * 0.9402 + 0.99 * 0.00678)
    let exact = 0.009402 / (0.009402 + 0.99 * 0.00678);
    assert!(
        (m - exact).abs() < 5.0 * se,
        "mean {m} vs {exact} (se {se})"
    );
}

#[test]
fn a_pair_state_mcmc_kernel_leaves_its_target_invariant() {
    // independent components of different kinds; a random walk on both at once
    let target = "a <~ normal(1, 1)\nb <~ gamma(2, 1)\nreturn (a, prob2real(b))";
    let text = format!(
        "prop = fn s pair(real, real):\n    match s:\n        (a, b):\n            a2 <~ normal(a, 1/2)\n            b2 <~ normal(b, 1/2)\n            return (a2, b2)\ntarget = {}\nmcmc(prop, target)\n",
        target.replace('\n', "\n         ")
    );
    let (p, ty) = simplified(&text);
    let m = Markov::new(&p, &ty).expect("a kernel over pairs");
    assert_eq!(m.column_names(&pair(0.0, 1.0)), ["a", "b"]);
    let n = 2000;
    let starts = exact(target, n, 21);
    let fresh = exact(target, n, 22);
    let after: Vec<Vec<f64>> = starts
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let mut s = InterpStepper::new(p.clone(), 3000 + i as u64);
            let run = chain::run_chain(&mut s, std::slice::from_ref(x), 20, 0).expect("runs");
            columns(&run.last)
        })
        .collect();
    for k in 0..2 {
        let a: Vec<f64> = after.iter().map(|c| c[k]).collect();
        let b: Vec<f64> = fresh.iter().map(|x| columns(x)[k]).collect();
        let d = ks(&a, &b);
        assert!(d < ks_critical(n, n), "component {k}: KS {d}");
    }
}

fn pair(a: f64, b: f64) -> Val {
    Val::Pair(std::rc::Rc::new((Val::Real(a), Val::Real(b))))
}

/// The thermometer's posterior means of (nT, nM) at the readings (29, 26), by the
/// midpoint rule on (3, 8) x (1, 4): the readings are normal with mean (21, 21) and
/// covariance [[nT^2 + nM^2, nT^2], [nT^2, 2 nT^2 + nM^2]] given the noise levels.
fn thermometer_means() -> (f64, f64) {
    let (d1, d2) = (29.0 - 21.0, 26.0 - 21.0);
    let (nt, nm) = (600, 400);
    let (mut z, mut st, mut sm) = (0.0, 0.0, 0.0);
    for i in 0..nt {
        let t = 3.0 + 5.0 * (i as f64 + 0.5) / nt as f64;
        for j in 0..nm {
            let e = 1.0 + 3.0 * (j as f64 + 0.5) / nm as f64;
            let (a, b, c) = (t * t + e * e, t * t, 2.0 * t * t + e * e);
            let det = a * c - b * b;
            let q = (c * d1 * d1 - 2.0 * b * d1 * d2 + a * d2 * d2) / det;
            let w = (-0.5 * q).exp() / det.sqrt();
            z += w;
            st += w * t;
            sm += w * e;
        }
    }
    (st / z, sm / z)
}

#[test]
fn the_thermometer_workflow_samples_its_posterior() {
    // corpus/mcmc/02: disint on both readings, simplify, mcmc with a random walk on the pair
    let text = std::fs::read_to_string(slic_suite::root().join("corpus/mcmc/02-thermometer.hk"))
        .expect("the workflow file");
    let (p, ty) = simplified(&text);
    let m = Markov::new(&p, &ty).expect("a kernel over pairs");
    let start = [pair(5.0, 2.0)];
    assert_eq!(m.column_names(&start[0]), ["nT", "nM"]);
    // the interpreter and the C kernel draw the same chain from one seed
    let mut i = InterpStepper::new(p.clone(), 3);
    let mut c = CompiledStepper::build(&p, Target::C, &start, 3, &opts()).expect("compiles");
    let short_i = chain::run_chain(&mut i, &start, 200, 0).expect("runs");
    let short_c = chain::run_chain(&mut c, &start, 200, 0).expect("runs");
    for (a, b) in short_i.draws.iter().zip(&short_c.draws) {
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{a:?} vs {b:?}");
        }
    }
    let run = chain::run_chain(&mut c, &start, 200_000, 1000).expect("the chain runs");
    let (mt, mm) = thermometer_means();
    for (k, exact) in [(0, mt), (1, mm)] {
        let xs: Vec<f64> = run.draws.iter().map(|r| r[k]).collect();
        let (mean, sd) = diagnostics::mean_sd(&xs).expect("draws");
        let se = sd / diagnostics::ess(&xs).expect("ess").sqrt();
        assert!(
            (mean - exact).abs() < 5.0 * se,
            "column {k}: mean {mean} vs {exact} (se {se})"
        );
    }
}
