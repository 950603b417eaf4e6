//! Many independent Gibbs chains at once (issue 13, deliverable 4): [`run_chains`] runs
//! `C` chains of one update over one dataset in parallel on a `rayon` work-stealing pool,
//! each chain [`run_gibbs`] with a seed of its own ([`chain_seed`]: chain 0's is the run's
//! seed, so chain 0 of any run is the single-chain run of that seed, draw for draw), and
//! reports every chain's sweeps, the split-R-hat ([`split_r_hat`]) of a scalar summary per
//! timed sweep (accuracy up to relabelling when the truth is known, else labels changed),
//! and sweeps per second over all chains.
//!
//! A chain's kernel and arguments are made in the thread that uses them, never sent: the
//! interpreter's values are `Rc`s and a compiled kernel's laid-out arguments raw pointers
//! into buffers it owns, so neither is `Send`, and no `unsafe impl` is needed. What
//! threads share is read-only: the update, the dataset (each chain binds it itself), the
//! configuration and whatever the caller's kernel factory captures: for a compiled kernel
//! its library (`Arc<Compiled>`, `Sync`, built once). Sharing a library between threads
//! is sound because a kernel call keeps all its state in its own control record and
//! arena (the templates define no mutable globals); the one global a C kernel can touch
//! is libm's `signgam`, which `lgamma` writes and nothing reads.
//!
//! Like the rest of the driver, this module does no IO and draws nothing itself; an
//! undefined R-hat is a reason, never a NaN.

use std::fmt;
use std::time::Instant;

use rayon::prelude::*;
use slic_data::Dataset;

use super::{run_gibbs, GibbsConfig, GibbsError, GibbsRun, SweepRecord, Update, UpdateKernel};
use crate::sampler::splitmix64;

/// The stack of a chain's thread: the CLI lowers programs on a large stack of its own,
/// but a chain only runs the kernel, whose depth is the loop IR's nesting (shallow after
/// A-normal form); 64 MiB leaves a wide margin and is only reserved, not touched.
const CHAIN_STACK_BYTES: usize = 64 * 1024 * 1024;

/// The seed of chain `chain` in a run seeded `seed`: `seed` itself for chain 0 (so a
/// one-chain run keeps the stream it always had), else splitmix64's output started from
/// `seed` xor `chain` times an odd constant, so that chains `1, 2, ...` of a seed are
/// unrelated to each other and to the seeds a user types (`seed + 1`, ...).
pub fn chain_seed(seed: u64, chain: usize) -> u64 {
    if chain == 0 {
        return seed;
    }
    // Steele et al.'s second splitmix constant, to spread small chain numbers
    let mut x = seed ^ (chain as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    splitmix64(&mut x)
}

/// The scalar summary of a sweep whose R-hat is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// Accuracy up to relabelling against the truth (every sweep was scored).
    Accuracy,
    /// Labels whose draw changed them in the sweep.
    Changed,
}

impl Statistic {
    /// Its name in the CLI's output.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Accuracy => "accuracy",
            Statistic::Changed => "changed",
        }
    }

    /// Its value in one sweep's record (`Accuracy` of an unscored sweep: NaN, which
    /// [`split_r_hat`] refuses).
    fn of(self, r: &SweepRecord) -> f64 {
        match self {
            Statistic::Accuracy => r.accuracy.unwrap_or(f64::NAN),
            Statistic::Changed => r.changed as f64,
        }
    }
}

/// Why split-R-hat has no value.
#[derive(Clone, Debug, PartialEq)]
pub enum RHatUndefined {
    /// No chain.
    NoChains,
    /// Chains of different lengths.
    UnequalLengths,
    /// Fewer than 4 draws per chain: a half needs 2 for a variance.
    TooFewDraws { draws: usize },
    /// A draw is NaN or infinite.
    NotFinite,
    /// Every half chain is constant, so the within-chain variance W is 0 and R-hat 0/0
    /// or infinite (chains that agree and stopped moving, or that disagree and each
    /// stopped moving).
    ZeroWithinVariance,
}

impl fmt::Display for RHatUndefined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RHatUndefined::NoChains => write!(f, "no chains"),
            RHatUndefined::UnequalLengths => write!(f, "the chains have different lengths"),
            RHatUndefined::TooFewDraws { draws } => write!(
                f,
                "{draws} timed sweeps per chain: split-R-hat needs at least 4"
            ),
            RHatUndefined::NotFinite => write!(f, "a sweep's summary is not a finite number"),
            RHatUndefined::ZeroWithinVariance => write!(
                f,
                "every half chain is constant (zero within-chain variance)"
            ),
        }
    }
}

/// Split-R-hat (Gelman et al., Bayesian Data Analysis, 3rd ed., section 11.4) of `chains`,
/// each a sequence of draws of one scalar: every chain is split into halves (of an odd
/// length the middle draw is left out), giving `M` sequences of `n` draws; with `B` `n`
/// times the variance of the sequences' means and `W` the mean of their variances (both
/// with the `1/(k - 1)` normalisation), `var_plus = (n - 1)/n W + B/n` and R-hat is
/// `sqrt(var_plus / W)`. Near 1 when the chains mix; above 1.01 to 1.1, they have not.
pub fn split_r_hat(chains: &[Vec<f64>]) -> Result<f64, RHatUndefined> {
    let len = chains.first().ok_or(RHatUndefined::NoChains)?.len();
    if chains.iter().any(|c| c.len() != len) {
        return Err(RHatUndefined::UnequalLengths);
    }
    if len < 4 {
        return Err(RHatUndefined::TooFewDraws { draws: len });
    }
    if chains.iter().flatten().any(|x| !x.is_finite()) {
        return Err(RHatUndefined::NotFinite);
    }
    let n = len / 2;
    let halves: Vec<&[f64]> = chains
        .iter()
        .flat_map(|c| [&c[..n], &c[len - n..]])
        .collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let variance = |xs: &[f64], m: f64| {
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
    };
    let means: Vec<f64> = halves.iter().map(|h| mean(h)).collect();
    let w = mean(
        &halves
            .iter()
            .zip(&means)
            .map(|(h, &m)| variance(h, m))
            .collect::<Vec<_>>(),
    );
    if w <= 0.0 {
        return Err(RHatUndefined::ZeroWithinVariance);
    }
    let nf = n as f64;
    let b = nf * variance(&means, mean(&means));
    let var_plus = (nf - 1.0) / nf * w + b / nf;
    Ok((var_plus / w).sqrt())
}

/// The split-R-hat of a run: of which summary, and its value or why it has none.
#[derive(Clone, Debug, PartialEq)]
pub struct RHat {
    pub of: Statistic,
    pub value: Result<f64, RHatUndefined>,
}

/// One chain of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainRun {
    /// Its number, `0..C`.
    pub chain: usize,
    /// Its seed ([`chain_seed`]).
    pub seed: u64,
    pub run: GibbsRun,
}

/// What [`run_chains`] gives.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainsRun {
    /// Every chain, in chain order.
    pub chains: Vec<ChainRun>,
    /// Over the timed (non-warmup) sweeps of all chains.
    pub r_hat: RHat,
    /// Wall-clock seconds of the whole run: every chain bound, started and swept.
    pub seconds: f64,
    /// Every chain's sweeps (warmup included) over [`Self::seconds`].
    pub sweeps_per_second: f64,
}

/// Why [`run_chains`] gave no result.
#[derive(Clone, Debug, PartialEq)]
pub enum ChainsError {
    /// No chains were asked for.
    NoChains,
    /// The pool of threads could not be made.
    Pool(String),
    /// A chain failed (the first failed chain in chain order); boxed, as a `GibbsError`
    /// is large and this is returned by value.
    Chain {
        chain: usize,
        error: Box<GibbsError>,
    },
}

impl fmt::Display for ChainsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainsError::NoChains => write!(f, "the number of chains must be at least 1"),
            ChainsError::Pool(e) => write!(f, "cannot start the chains' threads: {e}"),
            ChainsError::Chain { chain, error } => write!(f, "chain {chain}: {error}"),
        }
    }
}

impl std::error::Error for ChainsError {}

/// Runs `chains` independent chains of `update` over `data` (each binding it, with the
/// true labels of `truth`), chain `c` with `config` but seeded [`chain_seed`]`(config.seed,
/// c)` and swept by the kernel `make_kernel(c)` builds in the chain's thread; `on_sweep`
/// hears of every sweep of every chain, with the chain's number, from the chains' threads.
/// As many threads as chains, at most one per core; a chain that fails does not stop the
/// others, and the first failure in chain order is the error.
pub fn run_chains<K: UpdateKernel>(
    update: &Update,
    data: &Dataset,
    truth: Option<&str>,
    config: &GibbsConfig,
    chains: usize,
    make_kernel: impl Fn(usize) -> K + Sync,
    on_sweep: impl Fn(usize, &SweepRecord) + Sync,
) -> Result<ChainsRun, ChainsError> {
    if chains == 0 {
        return Err(ChainsError::NoChains);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(chains.min(cores))
        .stack_size(CHAIN_STACK_BYTES)
        .thread_name(|i| format!("gibbs-chain-{i}"))
        .build()
        .map_err(|e| ChainsError::Pool(e.to_string()))?;
    let one = |chain: usize| -> Result<ChainRun, GibbsError> {
        let bound = update.bind(data, truth)?;
        let mut kernel = make_kernel(chain);
        let seed = chain_seed(config.seed, chain);
        let config = GibbsConfig {
            seed,
            ..config.clone()
        };
        let run = run_gibbs(&mut kernel, update, bound, &config, |r| on_sweep(chain, r))?;
        Ok(ChainRun { chain, seed, run })
    };
    let start = Instant::now();
    let results: Vec<Result<ChainRun, GibbsError>> =
        pool.install(|| (0..chains).into_par_iter().map(one).collect());
    let seconds = start.elapsed().as_secs_f64();
    let runs = results
        .into_iter()
        .enumerate()
        .map(|(chain, r)| {
            r.map_err(|error| ChainsError::Chain {
                chain,
                error: Box::new(error),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let total: usize = runs.iter().map(|c| c.run.records.len()).sum();
    Ok(ChainsRun {
        r_hat: r_hat_of(&runs),
        sweeps_per_second: if seconds > 0.0 {
            total as f64 / seconds
        } else {
            0.0
        },
        seconds,
        chains: runs,
    })
}

/// The split-R-hat of the chains' timed sweeps: of accuracy when every sweep was scored,
/// else of labels changed.
fn r_hat_of(runs: &[ChainRun]) -> RHat {
    let scored = runs
        .iter()
        .all(|c| c.run.records.iter().all(|r| r.accuracy.is_some()));
    let of = if scored {
        Statistic::Accuracy
    } else {
        Statistic::Changed
    };
    let draws: Vec<Vec<f64>> = runs
        .iter()
        .map(|c| {
            let timed = c.run.records.iter().filter(|r| !r.warmup);
            timed.map(|r| of.of(r)).collect()
        })
        .collect();
    RHat {
        of,
        value: split_r_hat(&draws),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::Rng;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    /// Halves [1,2] [3,4] [2,3] [4,5]: means 1.5 3.5 2.5 4.5 (grand mean 3), each half's
    /// variance 1/2 so W = 1/2; B = 2/3 (2.25 + 0.25 + 0.25 + 2.25) = 10/3; var_plus =
    /// 1/2 W + B/2 = 23/12; R-hat = sqrt(23/6).
    #[test]
    fn r_hat_of_a_hand_computed_example() {
        let r = split_r_hat(&[vec![1.0, 2.0, 3.0, 4.0], vec![2.0, 3.0, 4.0, 5.0]]);
        assert!(
            close(r.clone().unwrap_or(0.0), (23.0f64 / 6.0).sqrt()),
            "{r:?}"
        );
    }

    /// An odd chain loses its middle draw: halves [1,2] [3,4], B = 2 (1 + 1) = 4, W = 1/2,
    /// var_plus = 1/4 + 2 = 9/4, R-hat = sqrt(9/2).
    #[test]
    fn r_hat_leaves_out_the_middle_of_an_odd_chain() {
        let r = split_r_hat(&[vec![1.0, 2.0, 100.0, 3.0, 4.0]]);
        assert!(close(r.clone().unwrap_or(0.0), 4.5f64.sqrt()), "{r:?}");
    }

    /// Chains of one stationary sequence (independent normal draws) are mixed: R-hat
    /// within a percent of 1; shifting one chain by 3 standard deviations is caught.
    #[test]
    fn r_hat_of_identical_chains_is_near_one() {
        let mut rng = Rng::seed_from_u64(9);
        let x: Vec<f64> = (0..2000).map(|_| rng.normal()).collect();
        let r = split_r_hat(&[x.clone(), x.clone(), x.clone()]).unwrap_or(f64::NAN);
        assert!((r - 1.0).abs() < 0.01, "{r}");
        let shifted: Vec<f64> = x.iter().map(|v| v + 3.0).collect();
        let r = split_r_hat(&[x, shifted]).unwrap_or(f64::NAN);
        assert!(r > 1.5, "{r}");
    }

    #[test]
    fn r_hat_says_why_it_is_undefined() {
        let four = vec![0.0, 1.0, 0.0, 1.0];
        for (chains, why) in [
            (vec![], RHatUndefined::NoChains),
            (
                vec![vec![1.0, 2.0, 3.0]],
                RHatUndefined::TooFewDraws { draws: 3 },
            ),
            (
                vec![four.clone(), vec![1.0; 5]],
                RHatUndefined::UnequalLengths,
            ),
            (
                vec![vec![1.0, f64::NAN, 0.0, 2.0]],
                RHatUndefined::NotFinite,
            ),
            // constant halves: equal (0/0) or not (infinite), W is 0 either way
            (
                vec![vec![1.0; 4], vec![1.0; 4]],
                RHatUndefined::ZeroWithinVariance,
            ),
            (
                vec![vec![1.0; 6], vec![0.0; 6]],
                RHatUndefined::ZeroWithinVariance,
            ),
        ] {
            assert_eq!(split_r_hat(&chains), Err(why));
        }
        assert!(split_r_hat(&[four]).is_ok());
    }

    #[test]
    fn chain_zero_keeps_the_seed_and_the_others_differ() {
        assert_eq!(chain_seed(42, 0), 42);
        let seeds: Vec<u64> = (0..64).map(|c| chain_seed(7, c)).collect();
        let mut distinct = seeds.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), seeds.len(), "{seeds:?}");
        // not the seeds a user would type next
        assert!(seeds[1..].iter().all(|&s| s > 1 << 20), "{seeds:?}");
        assert_ne!(chain_seed(7, 1), chain_seed(8, 1));
    }
}
