//! Command-line syntax of `slic-cas` (clap), and its validation into the plain data the
//! commands take. Validation happens here, once; commands never see raw strings.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "slic-cas",
    version,
    about = "Exact computer algebra and compilation for Hakaru probabilistic programs",
    long_about = "slic-cas reads Hakaru measure terms (.hk files), checks their types, prints \
                  them in canonical layout, and samples from them with the reference \
                  interpreter."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Type-check a program and print its type (e.g. `nat -> measure(real)`).
    Check(FileArg),
    /// Print a program in canonical layout.
    Fmt(FmtArgs),
    /// Print an equivalent program that makes fewer random choices: latent variables
    /// integrated out, conjugate densities recognised, every expression canonical.
    Simplify(SimplifyArgs),
    /// Print the program with its per-class sums turned into histograms (`bucket`), each
    /// computed once outside the loop over classes (the histogram transform, paper Fig. 7).
    Summarize(FmtArgs),
    /// Lower a program towards the loop IR and print a stage: the histogram transform
    /// (`summarized`), A-normal form with loop-invariant code hoisted and common
    /// subexpressions shared (`anf`), or the loop IR (`ir`, the default).
    Lower(LowerArgs),
    /// Write the lowered program as a self-contained C or Rust kernel whose header
    /// documents its ABI.
    Emit(EmitArgs),
    /// Run a program through the lowering pipeline and the loop IR's interpreter or a
    /// compiled kernel: a finite discrete measure's exact probabilities and mass, samples
    /// of any other measure (interpreter only), or the value of an expression; `--stats`
    /// counts the work, `--bench N` times N solves.
    Run(RunArgs),
    /// Collapsed Gibbs sampling: sweep an update program `fn ... fn z array(nat) ... fn u
    /// nat: measure(nat)` over a dataset, drawing each `z[u]` in turn from its exact
    /// conditional distribution, the state updated in place.
    Gibbs(GibbsArgs),
    /// Run Markov chains of a kernel `fn ... fn x T: measure(T)` (a Metropolis-Hastings
    /// step, any transition): each state drawn from the kernel at the one before, the
    /// draws written as CSV, with acceptance, effective sample size per second and
    /// split-R-hat.
    Chain(ChainArgs),
    /// Draw weighted samples from a measure with the reference interpreter.
    Sample(SampleArgs),
    /// Decide whether two programs mean the same: symbolically (both simplify to the same
    /// term), else numerically on given and distinct random arguments. "equal" (exit 0)
    /// only with a proof: the same term, or every test integral agreeing by quadrature
    /// with tight error estimates. Agreement found by sampling is "no difference found"
    /// (exit 3), with the smallest differences it could have detected. Exit 1 different,
    /// 3 unknown.
    Equiv(EquivArgs),
}

#[derive(Args, Debug)]
pub struct FileArg {
    /// The .hk file to read.
    pub file: PathBuf,
}

#[derive(Args, Debug)]
pub struct FmtArgs {
    /// The .hk file to read.
    pub file: PathBuf,
    /// Print `inf` instead of `∞` (plain ASCII output).
    #[arg(long)]
    pub ascii: bool,
}

#[derive(Args, Debug)]
pub struct SimplifyArgs {
    /// The .hk file to read.
    pub file: PathBuf,
    /// Print `inf` instead of `∞` (plain ASCII output).
    #[arg(long)]
    pub ascii: bool,
    /// Stop improving after this many seconds (the output is still an equivalent, partly
    /// simplified program; stderr says where it stopped).
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Option<std::time::Duration>,
}

/// A `--timeout` value: a non-negative, finite number of seconds.
fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(secs)
        .map_err(|_| format!("'{s}' is not a non-negative, finite number of seconds"))
}

/// The stage `slic-cas lower --dump` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Summarized,
    Anf,
    Ir,
}

/// The ablation switches of the lowering pipeline.
#[derive(Args, Debug, Clone, Copy)]
pub struct PassFlags {
    /// Leave per-class sums as loops (no point split, no histograms).
    #[arg(long)]
    pub no_histogram: bool,
    /// Hoist nothing out of loops or branches.
    #[arg(long)]
    pub no_licm: bool,
    /// Keep every loop its own pass over its range.
    #[arg(long)]
    pub no_fusion: bool,
    /// `gibbs`: evaluate the products every label's weight shares (the update's mass),
    /// which a draw needs only to be positive and finite, and the tests the data decide.
    #[arg(long)]
    pub no_draw_only: bool,
}

#[derive(Args, Debug)]
pub struct LowerArgs {
    /// The .hk file to read (a program: `fn`s around an expression or a measure).
    pub file: PathBuf,
    /// The stage to print.
    #[arg(long, value_enum, default_value_t = Stage::Ir)]
    pub dump: Stage,
    #[command(flatten)]
    pub passes: PassFlags,
    /// Print `inf` instead of `∞` (plain ASCII output).
    #[arg(long)]
    pub ascii: bool,
    /// With `--dump ir`: the update's incremental statistics, for the state and index
    /// parameters named `STATE,INDEX` (which loops keep them, on stderr; the update,
    /// init, remove and add programs, on stdout).
    #[arg(long, value_name = "STATE,INDEX")]
    pub incremental: Option<String>,
    /// The update's draw-only form: its products common to every proposed label dropped
    /// (the condition on the parameters under which that is exact, on stderr).
    #[arg(long)]
    pub draw_only: bool,
    /// With `--draw-only`: the update specialised to this data (a `gibbs --data` file) as
    /// `gibbs` runs it, the comparisons its values decide decided; needs `--update`.
    #[arg(long, value_name = "DATA", requires = "update")]
    pub data: Option<std::path::PathBuf>,
    /// With `--data`: the update's state and index parameters.
    #[arg(long, value_name = "STATE,INDEX", requires = "data")]
    pub update: Option<String>,
}

/// Where `slic-cas run` executes the lowered program.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The loop IR's interpreter (f64, prob in log space, counting its work).
    Interp,
    /// A C kernel compiled with the system C compiler (cached).
    C,
    /// A Rust kernel compiled with rustc (cached).
    Rust,
}

/// The language `slic-cas emit` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitTarget {
    /// C11, linked with -lm only.
    C,
    /// Rust for plain rustc (no cargo, no crates).
    Rust,
}

#[derive(Args, Debug)]
pub struct EmitArgs {
    /// The .hk file to read (a program: `fn`s around an expression or a measure).
    pub file: PathBuf,
    /// The kernel's language.
    #[arg(long, value_enum)]
    pub target: EmitTarget,
    /// Write the kernel to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub passes: PassFlags,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The .hk file to read: a program (`fn`s around an expression or a measure).
    pub file: PathBuf,
    /// The program's arguments as a JSON array, in order; `@FILE` reads it from a file.
    #[arg(long)]
    pub args: Option<String>,
    /// What runs the lowered program.
    #[arg(long, value_enum, default_value_t = Backend::Interp)]
    pub backend: Backend,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Add the work done: loop iterations, array reads, allocations, seconds.
    #[arg(long)]
    pub stats: bool,
    /// How many samples to draw from a measure that is not finite and discrete.
    #[arg(short = 'n', long = "samples", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub samples: u64,
    /// Seed of the sampler (equal seeds give equal output).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Solve N times and print the median, min and max microseconds per solve.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub bench: Option<u64>,
    /// Compile the kernel for any data (by default the arguments' sizes and scalar
    /// values are baked in: run-time specialisation).
    #[arg(long)]
    pub no_specialise: bool,
    #[command(flatten)]
    pub passes: PassFlags,
}

#[derive(Args, Debug)]
pub struct GibbsArgs {
    /// The update program (.hk): a function returning `measure(nat)`.
    pub file: PathBuf,
    /// The data: a JSON object whose keys are the update's parameter names; values are
    /// numbers, arrays, or {"npy": "PATH"} (relative to the JSON file's folder).
    #[arg(long)]
    pub data: PathBuf,
    /// The parameter holding the labels, an array(nat).
    #[arg(long)]
    pub state: String,
    /// The parameter naming the label to update, a nat.
    #[arg(long)]
    pub index: String,
    /// Sweeps to run and time after the warmup.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(0..=10_000_000))]
    pub sweeps: u64,
    /// Sweeps to run first, not timed.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=10_000_000))]
    pub warmup: u64,
    /// Seed of the draws and of a random initial state (equal seeds give equal runs).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// What computes the updates.
    #[arg(long, value_enum, default_value_t = Backend::Interp)]
    pub backend: Backend,
    /// The initial state: `data` (the state in the data), `random` (uniform labels), or
    /// a FILE of labels (.npy, a JSON array, or a result JSON's `state`).
    #[arg(long, default_value = "data")]
    pub init: String,
    /// The number of classes K a random initial state draws from (default: one more
    /// than the largest label of the state in the data).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub classes: Option<u64>,
    /// Write the result (final state, ms per sweep) to this JSON file instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write one CSV line per sweep: seconds, labels changed, accuracy.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// The data's key holding the true labels: the trace and the result add the accuracy
    /// up to relabelling.
    #[arg(long)]
    pub truth: Option<String>,
    /// Draw accuracy (or labels changed) against time as an SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Rebuild every statistic at every update (by default the statistics of the loops
    /// over the points that allow it are kept between updates and moved with each label;
    /// `slic-cas lower --incremental` shows which).
    #[arg(long)]
    pub recompute: bool,
    /// Recompute the kept statistics after every update and stop at the first difference
    /// from the kept ones (slow: for testing, and for users who doubt them).
    #[arg(long, conflicts_with = "recompute")]
    pub check_incremental: bool,
    /// With kept statistics and a compiled backend: run each update through the driver's
    /// protocol (three kernel calls, the draw made by the driver) instead of a whole
    /// sweep in one kernel call, to compare the two.
    #[arg(long, conflicts_with = "recompute")]
    pub per_update: bool,
    /// Independent chains to run in parallel, each with a seed drawn from --seed and its
    /// number (chain 0's is --seed itself); with more than one, the result lists every
    /// chain and the split-R-hat of accuracy (or labels changed) over the timed sweeps.
    #[arg(long, value_name = "C", default_value_t = 1, value_parser = parse_chains)]
    pub chains: usize,
    #[command(flatten)]
    pub passes: PassFlags,
}

#[derive(Args, Debug)]
pub struct ChainArgs {
    /// The kernel (.hk): a function whose last parameter is the state, returning a
    /// measure over the state's type (a scalar or an array of scalars).
    pub file: PathBuf,
    /// The kernel's other parameters: a JSON object keyed by their names (as `gibbs`
    /// reads its data: numbers, arrays, {"npy": "PATH"}).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// The initial state, as JSON (a number, or an array of numbers).
    #[arg(long)]
    pub init: String,
    /// Steps kept after the burn-in.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub steps: u64,
    /// Steps run first and not kept.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000_000))]
    pub burn: u64,
    /// Seed of chain 1; chain c draws from seed + c - 1.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Independent chains from the same initial state.
    #[arg(long, value_name = "C", default_value_t = 1, value_parser = parse_chains)]
    pub chains: usize,
    /// What draws each step.
    #[arg(long, value_enum, default_value_t = Backend::Interp)]
    pub backend: Backend,
    /// Write the draws here as CSV: `chain,step` then one column per scalar of the state.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub passes: PassFlags,
}

/// The most chains one run may ask for: each binds its own copy of the data.
const MAX_CHAINS: usize = 4096;

/// A `--chains` value: from 1 to [`MAX_CHAINS`].
fn parse_chains(s: &str) -> Result<usize, String> {
    let c: usize = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of chains"))?;
    if c == 0 {
        return Err("there must be at least 1 chain".into());
    }
    if c > MAX_CHAINS {
        return Err(format!("at most {MAX_CHAINS} chains"));
    }
    Ok(c)
}

#[derive(Args, Debug)]
pub struct SampleArgs {
    /// The .hk file to read: a measure, or a function (`fn x T: ...`) returning one.
    pub file: PathBuf,
    /// The function's arguments as a JSON array, in order (`[0.5, [1, 2]]`); `@FILE`
    /// reads the array from a file.
    #[arg(long)]
    pub args: Option<String>,
    /// How many weighted samples to draw.
    #[arg(short = 'n', long = "samples", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub samples: u64,
    /// Seed of the random number generator (equal seeds give equal output).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON summary (mass, mean, sd, probabilities) instead of the samples.
    #[arg(long)]
    pub summary: bool,
}

#[derive(Args, Debug)]
pub struct EquivArgs {
    /// The first .hk file.
    pub first: PathBuf,
    /// The second .hk file (same type as the first).
    pub second: PathBuf,
    /// Arguments to compare on, as a JSON array in parameter order (`[0.5, [1, 2]]`);
    /// `@FILE` reads the array from a file.
    #[arg(long)]
    pub args: Option<String>,
    /// How many distinct random argument tuples to compare on besides `--args` (fewer if
    /// the parameter types have fewer values: a single bool has 2).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub trials: u64,
    /// Seed of the random arguments and of the sampler (equal seeds give equal output).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// What a command-line parse failure means for the process: `--help` and `--version` are
/// answers (stdout, exit 0); everything else (an unknown flag, a missing or bad value, no
/// subcommand) is the user's mistake, exit 1 like any other user error (the README
/// reserves 2 for bugs, and clap's own `exit()` would use 2).
pub fn exit_for(e: &clap::Error) -> std::process::ExitCode {
    // clap prints help and version to stdout and errors to stderr; if even that fails
    // there is nowhere left to report it
    let _ = e.print();
    if e.use_stderr() {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    }
}
