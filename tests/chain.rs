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
//!   are not kernels are errors naming the step or the type.

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
    let _ = m.state();
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
