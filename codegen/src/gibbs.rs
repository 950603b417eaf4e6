//! The collapsed Gibbs driver (issue 12, deliverable 5): an update program `fn ... fn z
//! array(nat) ... fn u nat: measure(nat)` gives the exact conditional distribution of
//! `z[u]` given every other label; a sweep draws each `z[u]` in turn, `u = 0..size(z)`,
//! from it, storing each draw in place before the next update reads the state.
//!
//! What computes one update's distribution is an [`UpdateKernel`], started once on the
//! chain's arguments and told of every label that changes: the loop IR's interpreter
//! ([`InterpKernel`], exact enumeration by [`run_measure`]) or a compiled C or Rust kernel
//! ([`CompiledKernel`]: its arguments laid out once, the index and the changed label
//! written in place between calls, so an update costs the kernel's work alone). The driver draws with the project's
//! seeded [`Rng`], so a seed gives the same chain on every machine. [`Update::new`]
//! validates the program and names its state and index; [`Update::bind`] (in `data.rs`)
//! binds a dataset's entries to its parameters; [`run_gibbs`] runs the sweeps, reporting
//! each to a callback, and times them; `matching.rs` scores a labelling against true
//! labels up to relabelling (the Hungarian algorithm); `chains.rs` runs many chains in
//! parallel, each with a seed of its own, and reports their split-R-hat.
//!
//! This module does no IO and draws nothing: files are read by `slic_data` and written by
//! the CLI, plots are the CLI's. It must not approximate: a draw is from the kernel's
//! exact weights, and a kernel that cannot give them is an error, never a fallback to
//! sampling.
//!
//! The random initial state draws labels uniformly from `0..K`, `K` from
//! [`GibbsConfig::classes`] if given, else one more than the largest label of the state
//! in the data (so the number of distinct labels when the data uses every label of
//! `0..K`), else an error.

mod chains;
mod data;
pub(crate) mod incremental;
mod matching;

pub use chains::{
    chain_seed, run_chains, split_r_hat, ChainRun, ChainsError, ChainsRun, RHat, RHatUndefined,
    Statistic,
};
pub(crate) use data::to_val;
pub use data::{nats, Bound};
pub use incremental::Checking;
pub use matching::{accuracy, best_matching, MatchError, MAX_LABELS};

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use slic_algebra::Type;

use crate::compile::CompileOptions;
use crate::data_facts::DataFacts;
use crate::emit::{Specialise, Target};
use crate::incremental::Incremental;
use crate::interp::{enumerable, run_measure, Mode, Outcome, RunError, Val};
use crate::ir::Program;
use crate::kernel::{Compiled, Prepared};
use crate::sampler::Rng;
use incremental::{CompiledStats, InterpStats};

/// What computes the exact conditional distribution of one label.
///
/// [`Self::start`] takes the update program's arguments in parameter order (the state
/// array holding the chain's first labels) once; [`Self::distribution`] answers for the
/// label at `u` given the others: each label of non-zero weight with the natural
/// logarithm of its weight, not necessarily normalised, in any order (labels of weight
/// zero may be left out); [`Self::commit`], called after every distribution of `u`,
/// records that the label at `u` is now `k` (which may be the label it had). The
/// interpreter is the reference; a compiled backend must give the same weights up to
/// rounding.
pub trait UpdateKernel {
    fn start(&mut self, args: &[Val]) -> Result<(), UpdateError>;
    fn distribution(&mut self, u: usize) -> Result<Vec<(u64, f64)>, UpdateError>;
    fn commit(&mut self, u: usize, k: u64) -> Result<(), UpdateError>;
    /// A whole sweep (every position in turn, each drawn as [`Chain::update`] draws it,
    /// one uniform of `rng` each) done by the kernel itself: the labels after it and
    /// how many changed. `None` (the default) where the kernel has no sweep of its own;
    /// the chain then updates position by position.
    fn sweep(&mut self, rng: &mut Rng) -> Option<Result<(Vec<u64>, usize), UpdateError>> {
        let _ = rng;
        None
    }
}

/// Why a kernel gave no distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateError {
    /// The interpreter failed (an index out of bounds, too many paths, ...).
    Interp(RunError),
    /// The program's value is not a nat label (the interpreter's printed value).
    NotALabel(String),
    /// A compiled backend failed, with its message.
    Backend(String),
    /// An incremental statistic differs from its recomputation (`--check-incremental`).
    Drift {
        statistic: String,
        element: usize,
        kept: String,
        recomputed: String,
    },
}

impl fmt::Display for UpdateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpdateError::Interp(e) => write!(f, "{e}"),
            UpdateError::NotALabel(v) => write!(f, "the update returned {v}, not a nat label"),
            UpdateError::Backend(m) => write!(f, "{m}"),
            UpdateError::Drift {
                statistic,
                element,
                kept,
                recomputed,
            } => write!(
                f,
                "the incremental statistic `{statistic}` differs from its recomputation at \
                 element {element}: {kept} kept, {recomputed} recomputed"
            ),
        }
    }
}

/// The loop IR's interpreter as an [`UpdateKernel`]: each update is one exact enumeration
/// of the program ([`Mode::Exact`]).
#[derive(Clone, Debug)]
pub struct InterpKernel {
    program: Program,
    max_paths: u64,
    state: usize,
    index: usize,
    args: Vec<Val>,
    /// Incremental statistics, when the program is an update with them.
    stats: Option<InterpStats>,
}

impl InterpKernel {
    /// The kernel of a lowered update program; enumeration follows at most `max_paths`
    /// paths per update (the update forks once per label, so K paths suffice).
    pub fn new(program: Program, max_paths: u64, update: &Update) -> InterpKernel {
        InterpKernel {
            program,
            max_paths,
            state: update.state,
            index: update.index,
            args: Vec::new(),
            stats: None,
        }
    }

    /// The kernel of an update with incremental statistics (`inc.update`, its statistics
    /// kept between updates by `inc`'s programs), checked as `checking` asks.
    pub fn incremental(
        inc: &Incremental,
        max_paths: u64,
        update: &Update,
        checking: Checking,
    ) -> InterpKernel {
        InterpKernel {
            stats: Some(InterpStats {
                inc: inc.clone(),
                checking,
            }),
            ..InterpKernel::new(inc.update.clone(), max_paths, update)
        }
    }
}

impl UpdateKernel for InterpKernel {
    fn start(&mut self, args: &[Val]) -> Result<(), UpdateError> {
        self.args = match &self.stats {
            Some(st) => st.start(args)?,
            None => args.to_vec(),
        };
        Ok(())
    }

    fn commit(&mut self, u: usize, k: u64) -> Result<(), UpdateError> {
        self.set_label(u, k);
        if let Some(st) = &self.stats {
            st.add(&mut self.args)?;
        }
        Ok(())
    }

    fn distribution(&mut self, u: usize) -> Result<Vec<(u64, f64)>, UpdateError> {
        let mode = Mode::Exact {
            max_paths: self.max_paths,
        };
        if let Some(slot) = self.args.get_mut(self.index) {
            *slot = Val::Nat(u as u64);
        }
        if let Some(st) = &self.stats {
            st.remove(&mut self.args)?;
        }
        match run_measure(&self.program, &self.args, mode).map_err(UpdateError::Interp)? {
            Outcome::Exact(e) => e
                .weights
                .into_iter()
                .map(|(v, l)| match v {
                    Val::Nat(k) => Ok((k, l)),
                    other => Err(UpdateError::NotALabel(format!("{other:?}"))),
                })
                .collect(),
            Outcome::Sampled(_) => Err(UpdateError::Interp(RunError::BadDraw {
                what: "exact enumeration sampled instead".into(),
                at: "the update".into(),
            })),
        }
    }
}

impl InterpKernel {
    /// Stores label `k` at `u` in the state argument.
    fn set_label(&mut self, u: usize, k: u64) {
        if let Some(Val::Array(items)) = self.args.get_mut(self.state) {
            // in place when no run kept a reference to the state (none does), else a copy
            match Rc::get_mut(items) {
                Some(slice) => slice[u] = Val::Nat(k),
                None => {
                    let mut copy = items.to_vec();
                    copy[u] = Val::Nat(k);
                    *items = copy.into();
                }
            }
        }
    }
}

/// A compiled C or Rust kernel as an [`UpdateKernel`]: the arguments are laid out once
/// ([`Compiled::prepare`]); each update writes the index, each commit the changed label,
/// in place, and the kernel enumerates the update's labels (a tail draw: one call). The
/// library is shared ([`Self::library`]): chains in parallel each make a kernel over it.
pub struct CompiledKernel {
    kernel: Arc<Compiled>,
    max_paths: u64,
    state: usize,
    index: usize,
    prepared: Option<Prepared>,
    /// Set when an update's first call did not stop at a choice in tail position (or
    /// weigh 0): from then on every update is enumerated, not read off one call
    /// ([`Compiled::tail_weights_prepared`]).
    enumerate_only: bool,
    /// Incremental statistics, when the kernel is an update with them.
    stats: Option<CompiledStats>,
    /// The incremental programs, whose sizes program sizes the statistics at [`UpdateKernel::start`].
    inc: Option<Incremental>,
}

impl CompiledKernel {
    /// The update program's compiled kernel (built for the chain's data), owned or shared.
    pub fn new(
        kernel: impl Into<Arc<Compiled>>,
        max_paths: u64,
        update: &Update,
    ) -> CompiledKernel {
        CompiledKernel {
            kernel: kernel.into(),
            max_paths,
            state: update.state,
            index: update.index,
            prepared: None,
            enumerate_only: false,
            stats: None,
            inc: None,
        }
    }

    /// Compiles `program` for `target` for a chain over `args`: every parameter's value
    /// (an array's length) baked in (run-time specialisation) but the index's and the
    /// state's, which change at every update.
    pub fn build(
        program: &Program,
        target: Target,
        update: &Update,
        args: &[Val],
        max_paths: u64,
        opts: &CompileOptions,
    ) -> Result<CompiledKernel, crate::kernel::KernelError> {
        // everything but the index baked in: the state's length too (its elements change
        // in place, its length never), so reads of it at a point's index need no check
        let mut spec = Specialise::all(program.params.len());
        if let Some(f) = spec.fixed.get_mut(update.index) {
            *f = false;
        }
        let kernel = Compiled::build(program, target, &spec, Some(args), opts)?;
        Ok(CompiledKernel::new(kernel, max_paths, update))
    }

    /// [`Self::build`] for an update with incremental statistics: `inc.update` and the
    /// statistics' programs compiled alike (the statistics' lengths baked in too, from
    /// `args`), the statistics kept between updates and checked as `checking` asks.
    pub fn build_incremental(
        inc: &Incremental,
        target: Target,
        update: &Update,
        args: &[Val],
        max_paths: u64,
        opts: &CompileOptions,
        checking: Checking,
    ) -> Result<CompiledKernel, crate::kernel::KernelError> {
        let all = incremental::with_stats(inc, args)
            .map_err(|e| crate::kernel::KernelError::Run(run_error(e)))?;
        let mut spec = Specialise::all(inc.update.params.len());
        if let Some(f) = spec.fixed.get_mut(update.index) {
            *f = false;
        }
        spec.narrow = narrow_stats(inc, &all);
        let names = |k: usize| inc.update.params.get(k).map_or("", |(x, _)| x.as_str());
        let (kernel, mut stats) = CompiledStats::build(
            inc,
            target,
            &spec,
            &all,
            opts,
            (names(update.state), names(update.index)),
        )?;
        stats.checking = checking;
        Ok(CompiledKernel {
            stats: Some(stats),
            inc: Some(inc.clone()),
            ..CompiledKernel::new(kernel, max_paths, update)
        })
    }

    /// The kernel with its updates made through the driver's protocol (three calls and
    /// the driver's draw each) even where the statistics have a sweep kernel.
    pub fn without_sweep(mut self) -> CompiledKernel {
        if let Some(st) = &mut self.stats {
            st.drop_sweep();
        }
        self
    }

    /// What another chain needs to make a kernel over the same compiled libraries (the
    /// update's and, with incremental statistics, theirs): [`Sibling::kernel`].
    pub fn sibling(&self) -> Sibling {
        Sibling {
            kernel: Arc::clone(&self.kernel),
            stats: self.stats.clone(),
            inc: self.inc.clone(),
            max_paths: self.max_paths,
            state: self.state,
            index: self.index,
        }
    }

    /// The compiled library, for another chain's kernel ([`Self::new`]).
    pub fn library(&self) -> Arc<Compiled> {
        Arc::clone(&self.kernel)
    }

    fn prepared(&mut self) -> Result<&mut Prepared, UpdateError> {
        self.prepared
            .as_mut()
            .ok_or_else(|| UpdateError::Backend("the kernel was not started".into()))
    }
}

/// A compiled kernel's shareable parts (libraries behind `Arc`s, the incremental
/// programs), from [`CompiledKernel::sibling`]: each chain makes its own kernel from it,
/// with arguments of its own.
#[derive(Clone)]
pub struct Sibling {
    kernel: Arc<Compiled>,
    stats: Option<CompiledStats>,
    inc: Option<Incremental>,
    max_paths: u64,
    state: usize,
    index: usize,
}

impl Sibling {
    /// A kernel over the shared libraries, not started.
    pub fn kernel(&self) -> CompiledKernel {
        CompiledKernel {
            kernel: Arc::clone(&self.kernel),
            max_paths: self.max_paths,
            state: self.state,
            index: self.index,
            prepared: None,
            enumerate_only: false,
            stats: self.stats.clone(),
            inc: self.inc.clone(),
        }
    }
}

impl UpdateKernel for CompiledKernel {
    fn start(&mut self, args: &[Val]) -> Result<(), UpdateError> {
        let mut p = match &self.inc {
            Some(inc) => self
                .kernel
                .prepare(&incremental::with_stats(inc, args)?)
                .map_err(backend)?,
            None => self.kernel.prepare(args).map_err(backend)?,
        };
        if let Some(st) = &self.stats {
            if !st.accepts(&p) {
                return Err(UpdateError::Backend(
                    "the statistics' kernels were built for other parameters".into(),
                ));
            }
            st.init(&mut p).map_err(backend)?;
        }
        self.prepared = Some(p);
        Ok(())
    }

    fn commit(&mut self, u: usize, k: u64) -> Result<(), UpdateError> {
        let state = self.state;
        let p = self
            .prepared
            .as_mut()
            .ok_or_else(|| UpdateError::Backend("the kernel was not started".into()))?;
        p.set_element(state, u, k).map_err(backend)?;
        if let Some(st) = &self.stats {
            st.add(p)?;
        }
        Ok(())
    }

    fn sweep(&mut self, rng: &mut Rng) -> Option<Result<(Vec<u64>, usize), UpdateError>> {
        let state = self.state;
        let st = self.stats.as_ref()?;
        let p = self.prepared.as_mut()?;
        let mut s = rng.state();
        let changed = match st.sweep(p, &mut s)? {
            Ok(Some(n)) => n,
            failed => {
                // the update stopped before its draw: its working tables start again
                if let Err(e) = st.clear_scratch(p) {
                    return Some(Err(backend(e)));
                }
                return Some(Err(match failed {
                    Err(e) => backend(e),
                    _ => {
                        UpdateError::Backend("a point's update had no mass during the sweep".into())
                    }
                }));
            }
        };
        *rng = Rng::from_state(s);
        Some(match p.nats(state) {
            Some(labels) => Ok((labels.to_vec(), changed as usize)),
            None => Err(UpdateError::Backend("the sweep lost the state".into())),
        })
    }

    fn distribution(&mut self, u: usize) -> Result<Vec<(u64, f64)>, UpdateError> {
        let out = self.weights(u);
        if !matches!(&out, Ok(w) if !w.is_empty()) {
            self.clear_scratch()?;
        }
        out
    }
}

impl CompiledKernel {
    /// The weights of the labels at `u`: point `u` removed from the statistics, then the
    /// update's one call (or its enumeration).
    fn weights(&mut self, u: usize) -> Result<Vec<(u64, f64)>, UpdateError> {
        let (index, max_paths) = (self.index, self.max_paths);
        self.prepared()?.set_nat(index, u as u64).map_err(backend)?;
        if let Some(st) = &self.stats {
            let p = self
                .prepared
                .as_mut()
                .ok_or_else(|| UpdateError::Backend("the kernel was not started".into()))?;
            st.remove(p).map_err(backend)?;
        }
        let p = self
            .prepared
            .as_ref()
            .ok_or_else(|| UpdateError::Backend("the kernel was not started".into()))?;
        if !self.enumerate_only {
            match self
                .kernel
                .tail_weights_prepared(p, max_paths)
                .map_err(backend)?
            {
                Some(weights) => return Ok(weights),
                None => self.enumerate_only = true,
            }
        }
        let e = self
            .kernel
            .enumerate_prepared(p, max_paths)
            .map_err(backend)?;
        e.weights
            .into_iter()
            .map(|(v, l)| match v {
                Val::Nat(k) => Ok((k, l)),
                other => Err(UpdateError::NotALabel(format!("{other:?}"))),
            })
            .collect()
    }

    /// After an update that stopped before its draw: its working tables as the chain's
    /// start made them ([`CompiledStats::clear_scratch`]).
    fn clear_scratch(&mut self) -> Result<(), UpdateError> {
        if let (Some(st), Some(p)) = (&self.stats, self.prepared.as_mut()) {
            st.clear_scratch(p).map_err(backend)?;
        }
        Ok(())
    }
}

fn backend(e: crate::kernel::KernelError) -> UpdateError {
    UpdateError::Backend(e.to_string())
}

/// An update error as a run error (the statistics' sizes failed while building).
fn run_error(e: UpdateError) -> RunError {
    match e {
        UpdateError::Interp(r) => r,
        other => RunError::Arith {
            what: other.to_string(),
            at: "the statistics' sizes".into(),
        },
    }
}

/// Why a Gibbs run could not start or stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum GibbsError {
    /// `--state` or `--index` names no parameter of the program.
    NoSuchParameter {
        role: &'static str,
        name: String,
        params: Vec<String>,
    },
    /// The state and the index are one parameter.
    SameParameter(String),
    /// The state parameter is not an `array(nat)`.
    StateType { name: String, found: String },
    /// The index parameter is not a `nat`.
    IndexType { name: String, found: String },
    /// The program is not a function returning `measure(nat)`.
    NotAnUpdate { found: String },
    /// The program draws from a distribution exact enumeration cannot follow.
    NotEnumerable,
    /// A parameter (or the truth field) has no key in the data.
    MissingKey { key: String },
    /// A key of the data names no parameter (nor the truth field).
    UnknownKey { key: String, params: Vec<String> },
    /// A value does not have its parameter's type.
    WrongType {
        key: String,
        expected: String,
        found: String,
    },
    /// A value of the right shape outside its type (a negative nat, ...).
    OutOfRange { key: String, why: String },
    /// No state: neither the data nor an initial state file gives one.
    NoState { key: String },
    /// A random initial state with no number of classes to draw from.
    NoClasses,
    /// `--classes 0`.
    ZeroClasses,
    /// An array of labels whose length is not the state's.
    Length {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// The kernel failed at this index.
    Kernel { index: usize, error: UpdateError },
    /// A sweep done by the kernel itself ([`UpdateKernel::sweep`]) failed, at a point it
    /// does not name.
    Sweep(UpdateError),
    /// Every label has weight zero at this index (a label outside the program's classes
    /// in the state, or data the model excludes).
    ZeroMass { index: usize },
    /// A label of the state at this index is not below the number of labels the update
    /// draws, which the program run was specialised for ([`Update::with_labels`]).
    LabelRange {
        index: usize,
        label: u64,
        labels: u64,
    },
    /// The accuracy could not be computed.
    Accuracy(MatchError),
}

impl fmt::Display for GibbsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GibbsError::NoSuchParameter { role, name, params } => write!(
                f,
                "--{role} {name}: the program has no parameter `{name}` (its parameters: {})",
                params.join(", ")
            ),
            GibbsError::SameParameter(n) => {
                write!(f, "the state and the index are both `{n}`")
            }
            GibbsError::StateType { name, found } => {
                write!(f, "the state `{name}` has type {found}, not array(nat)")
            }
            GibbsError::IndexType { name, found } => {
                write!(f, "the index `{name}` has type {found}, not nat")
            }
            GibbsError::NotAnUpdate { found } => write!(
                f,
                "the program has type {found}: an update is a function returning measure(nat)"
            ),
            GibbsError::NotEnumerable => write!(
                f,
                "the update draws from a distribution that is not finite (only categorical \
                 is): its distribution cannot be enumerated exactly"
            ),
            GibbsError::MissingKey { key } => write!(f, "the data has no key `{key}`"),
            GibbsError::UnknownKey { key, params } => write!(
                f,
                "the data's key `{key}` is not a parameter of the update ({}); name true \
                 labels with --truth {key}",
                params.join(", ")
            ),
            GibbsError::WrongType {
                key,
                expected,
                found,
            } => write!(f, "`{key}` must be {expected}, but the data has {found}"),
            GibbsError::OutOfRange { key, why } => write!(f, "`{key}`: {why}"),
            GibbsError::NoState { key } => write!(
                f,
                "the data has no key `{key}` (the state) and no --init FILE gives it"
            ),
            GibbsError::NoClasses => write!(
                f,
                "a random initial state needs the number of classes: give --classes K, or \
                 a state in the data"
            ),
            GibbsError::ZeroClasses => write!(f, "--classes must be at least 1"),
            GibbsError::Length {
                what,
                expected,
                found,
            } => write!(f, "{what} has {found} labels, but the state has {expected}"),
            GibbsError::Kernel { index, error } => {
                write!(f, "the update of label {index} failed: {error}")
            }
            GibbsError::Sweep(error) => write!(f, "a sweep in the kernel failed: {error}"),
            GibbsError::ZeroMass { index } => write!(
                f,
                "every label has weight zero at index {index} (a label outside the model's \
                 classes in the state?)"
            ),
            GibbsError::LabelRange {
                index,
                label,
                labels,
            } => write!(
                f,
                "the state's label {label} at index {index} is not one the update draws \
                 (0 to {})",
                labels.saturating_sub(1)
            ),
            GibbsError::Accuracy(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GibbsError {}

/// An update program checked for Gibbs sampling: its parameters, and which of them are
/// the state and the index.
#[derive(Clone, Debug)]
pub struct Update {
    params: Vec<(String, Type)>,
    state: usize,
    index: usize,
    /// Every label of the state must be below this (see [`Update::with_labels`]).
    labels: Option<u64>,
}

impl Update {
    /// Checks that `program` (lowered from a term of type `ty`) is an update: a measure
    /// over nat whose exact distribution can be enumerated, whose parameter `state` is an
    /// `array(nat)` and whose parameter `index` a `nat`.
    pub fn new(
        program: &Program,
        ty: &Type,
        state: &str,
        index: &str,
    ) -> Result<Update, GibbsError> {
        let (_, result) = ty.parameter_types();
        if result.measure_of() != Some(&Type::Nat) || !program.measure {
            return Err(GibbsError::NotAnUpdate {
                found: ty.to_string(),
            });
        }
        let names = || program.params.iter().map(|(n, _)| n.clone()).collect();
        let find = |role: &'static str, name: &str| {
            program
                .params
                .iter()
                .position(|(n, _)| n == name)
                .ok_or_else(|| GibbsError::NoSuchParameter {
                    role,
                    name: name.into(),
                    params: names(),
                })
        };
        let s = find("state", state)?;
        let i = find("index", index)?;
        if s == i {
            return Err(GibbsError::SameParameter(state.into()));
        }
        let st = &program.params[s].1;
        if st.array_of() != Some(&Type::Nat) {
            return Err(GibbsError::StateType {
                name: state.into(),
                found: st.to_string(),
            });
        }
        let it = &program.params[i].1;
        if *it != Type::Nat {
            return Err(GibbsError::IndexType {
                name: index.into(),
                found: it.to_string(),
            });
        }
        if !enumerable(program) {
            return Err(GibbsError::NotEnumerable);
        }
        Ok(Update {
            params: program.params.clone(),
            state: s,
            index: i,
            labels: None,
        })
    }

    /// The update whose program is exact only while every label of the state is below
    /// `labels` (a program the chain's data decided, [`crate::data_facts`]): a chain
    /// checks its initial state, and every label it draws, against it.
    pub fn with_labels(self, labels: Option<u64>) -> Update {
        Update { labels, ..self }
    }

    /// What `args` (the update's arguments) tell a program specialised to them: the
    /// input of [`crate::lower_draw_only`] for this chain.
    pub fn data_facts(&self, args: &[Val]) -> DataFacts {
        DataFacts::new(args, self.state, self.index)
    }

    /// The first label (index and label) outside [`Self::with_labels`]'s range.
    fn out_of_labels(&self, labels: &[u64]) -> Option<(usize, u64)> {
        let k = self.labels?;
        labels.iter().position(|&l| l >= k).map(|i| (i, labels[i]))
    }

    /// The state parameter's name.
    pub fn state_name(&self) -> &str {
        &self.params[self.state].0
    }
}

/// Where the chain starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Init {
    /// The state given in the data.
    Data,
    /// Labels drawn uniformly from `0..K` with the run's seed (see the module doc for K).
    Random,
    /// These labels (an initial state file).
    Given(Vec<u64>),
}

/// How to run the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GibbsConfig {
    /// Sweeps timed and reported after the warmup.
    pub sweeps: usize,
    /// Sweeps run first, reported as warmup, not timed in [`GibbsRun::ms_per_sweep`].
    pub warmup: usize,
    /// The seed of the draws (and of a random initial state).
    pub seed: u64,
    pub init: Init,
    /// The number of classes of a random initial state.
    pub classes: Option<u64>,
}

/// One sweep's report.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRecord {
    /// 1-based, warmup sweeps included.
    pub sweep: usize,
    pub warmup: bool,
    /// Seconds since the first sweep began, at the end of this one.
    pub seconds: f64,
    /// This sweep's seconds.
    pub sweep_seconds: f64,
    /// Labels whose draw differed from their previous value.
    pub changed: usize,
    /// Accuracy up to relabelling against the truth, if there is one.
    pub accuracy: Option<f64>,
}

/// Milliseconds per sweep over the timed (non-warmup) sweeps; all 0 when there were none.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Timing {
    /// The median, min and max of `ms` (the median of an even count is the mean of the
    /// middle two).
    pub fn of(ms: &[f64]) -> Timing {
        if ms.is_empty() {
            return Timing::default();
        }
        let mut v = ms.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Timing {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

/// What a run gives.
#[derive(Clone, Debug, PartialEq)]
pub struct GibbsRun {
    /// The final state.
    pub state: Vec<u64>,
    /// Every sweep, warmup first.
    pub records: Vec<SweepRecord>,
    pub ms_per_sweep: Timing,
    pub sweeps: usize,
    pub warmup: usize,
}

/// The chain's state: the labels and the generator (the kernel holds the update's
/// arguments, told of every change).
#[derive(Clone, Debug)]
pub struct Chain {
    labels: Vec<u64>,
    rng: Rng,
    /// Every label written must be below this ([`Update::with_labels`]).
    bound: Option<u64>,
}

impl Chain {
    /// A chain over `args` (the update's arguments with the state set), drawing from the
    /// generator seeded with `seed`; `kernel` is started on `args`.
    pub fn new(
        update: &Update,
        args: &[Val],
        seed: u64,
        kernel: &mut impl UpdateKernel,
    ) -> Result<Chain, GibbsError> {
        Chain::with_rng(update, args, Rng::seed_from_u64(seed), kernel)
    }

    fn with_rng(
        update: &Update,
        args: &[Val],
        rng: Rng,
        kernel: &mut impl UpdateKernel,
    ) -> Result<Chain, GibbsError> {
        let labels = match args.get(update.state) {
            Some(Val::Array(items)) => items
                .iter()
                .map(|v| if let Val::Nat(k) = v { *k } else { 0 })
                .collect(),
            _ => Vec::new(),
        };
        if let Some((index, label)) = update.out_of_labels(&labels) {
            return Err(GibbsError::LabelRange {
                index,
                label,
                labels: update.labels.unwrap_or(0),
            });
        }
        kernel
            .start(args)
            .map_err(|error| GibbsError::Kernel { index: 0, error })?;
        Ok(Chain {
            labels,
            rng,
            bound: update.labels,
        })
    }

    /// The number of labels.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The current labels.
    pub fn state(&self) -> Vec<u64> {
        self.labels.clone()
    }

    /// Draws `z[u]` from the kernel's distribution given the rest of the state, stores
    /// it (and tells the kernel), and returns it with whether it changed.
    pub fn update(
        &mut self,
        kernel: &mut impl UpdateKernel,
        u: usize,
    ) -> Result<(u64, bool), GibbsError> {
        let fail = |error| GibbsError::Kernel { index: u, error };
        let dist = kernel.distribution(u).map_err(fail)?;
        let k = draw(&dist, &mut self.rng).ok_or(GibbsError::ZeroMass { index: u })?;
        if let Some(labels) = self.bound.filter(|&b| k >= b) {
            return Err(GibbsError::LabelRange {
                index: u,
                label: k,
                labels,
            });
        }
        let Some(slot) = self.labels.get_mut(u) else {
            return Err(GibbsError::ZeroMass { index: u });
        };
        let changed = *slot != k;
        *slot = k;
        kernel.commit(u, k).map_err(fail)?;
        Ok((k, changed))
    }

    /// One sweep: every label updated in turn, `u = 0..len`; returns how many changed.
    /// A kernel with a sweep of its own ([`UpdateKernel::sweep`]) does it in one call,
    /// its labels checked against the update's as the chain's own draws are.
    pub fn sweep(&mut self, kernel: &mut impl UpdateKernel) -> Result<usize, GibbsError> {
        if let Some(r) = kernel.sweep(&mut self.rng) {
            let (labels, changed) = r.map_err(GibbsError::Sweep)?;
            if labels.len() != self.labels.len() {
                return Err(GibbsError::Length {
                    what: "the state after a sweep",
                    expected: self.labels.len(),
                    found: labels.len(),
                });
            }
            if let Some(bound) = self.bound {
                if let Some((index, &label)) = labels.iter().enumerate().find(|(_, &k)| k >= bound)
                {
                    return Err(GibbsError::LabelRange {
                        index,
                        label,
                        labels: bound,
                    });
                }
            }
            self.labels = labels;
            return Ok(changed);
        }
        let mut changed = 0;
        for u in 0..self.labels.len() {
            if self.update(kernel, u)?.1 {
                changed += 1;
            }
        }
        Ok(changed)
    }
}

/// The program a Gibbs driver runs on `args` (the update's arguments in parameter order):
/// the draw-only form ([`crate::lower_draw_only`]) where its condition holds on them,
/// the full program elsewhere; and whether it is the draw-only one. The condition reads
/// neither the state nor the index, so it holds for a whole chain or for none of it.
pub fn pick_program<'a>(
    full: &'a Program,
    draw_only: Option<&'a crate::DrawOnlyLowered>,
    args: &[Val],
) -> (&'a Program, bool) {
    match draw_only {
        Some(d)
            if matches!(
                crate::interp::run(&d.condition, args),
                Ok((Val::Bool(true), _))
            ) =>
        {
            (&d.lowered.program, true)
        }
        _ => (full, false),
    }
}

/// A label drawn with probability proportional to `exp` of its log weight; `None` when
/// every weight is zero (or there are none).
pub fn draw(dist: &[(u64, f64)], rng: &mut Rng) -> Option<u64> {
    let ln_w: Vec<f64> = dist.iter().map(|(_, l)| *l).collect();
    rng.categorical(&ln_w).map(|i| dist[i].0)
}

/// The initial labels `config` asks for, checked against the state's length.
fn initial_state(
    bound: &Bound,
    config: &GibbsConfig,
    update: &Update,
    rng: &mut Rng,
) -> Result<Vec<u64>, GibbsError> {
    let key = update.state_name().to_string();
    match &config.init {
        Init::Data => bound.state.clone().ok_or(GibbsError::NoState { key }),
        Init::Given(labels) => {
            if let Some(s) = &bound.state {
                if s.len() != labels.len() {
                    return Err(GibbsError::Length {
                        what: "the initial state",
                        expected: s.len(),
                        found: labels.len(),
                    });
                }
            }
            Ok(labels.clone())
        }
        Init::Random => {
            let s = bound.state.as_ref().ok_or(GibbsError::NoState { key })?;
            let k = match config.classes {
                Some(0) => return Err(GibbsError::ZeroClasses),
                Some(k) => k,
                None => s.iter().max().map(|m| m + 1).ok_or(GibbsError::NoClasses)?,
            };
            Ok((0..s.len())
                .map(|_| ((rng.uniform() * k as f64) as u64).min(k - 1))
                .collect())
        }
    }
}

/// Runs `config.warmup` then `config.sweeps` sweeps of the update over `bound`'s data,
/// calling `on_sweep` after each.
pub fn run_gibbs(
    kernel: &mut impl UpdateKernel,
    update: &Update,
    bound: Bound,
    config: &GibbsConfig,
    mut on_sweep: impl FnMut(&SweepRecord),
) -> Result<GibbsRun, GibbsError> {
    let mut rng = Rng::seed_from_u64(config.seed);
    let labels = initial_state(&bound, config, update, &mut rng)?;
    if let Some(t) = &bound.truth {
        if t.len() != labels.len() {
            return Err(GibbsError::Length {
                what: "the truth",
                expected: labels.len(),
                found: t.len(),
            });
        }
    }
    let mut args = bound.args;
    args[update.state] = data::labels_val(&labels);
    let mut chain = Chain::with_rng(update, &args, rng, kernel)?;
    let mut records = Vec::with_capacity(config.warmup + config.sweeps);
    let mut timed = Vec::with_capacity(config.sweeps);
    let start = Instant::now();
    for sweep in 1..=config.warmup + config.sweeps {
        let t0 = Instant::now();
        let changed = chain.sweep(kernel)?;
        let sweep_seconds = t0.elapsed().as_secs_f64();
        let warmup = sweep <= config.warmup;
        if !warmup {
            timed.push(sweep_seconds * 1e3);
        }
        // scored outside the sweep's time: it is reporting, not sampling
        let accuracy = match &bound.truth {
            Some(t) => Some(accuracy(&chain.state(), t).map_err(GibbsError::Accuracy)?),
            None => None,
        };
        let rec = SweepRecord {
            sweep,
            warmup,
            seconds: start.elapsed().as_secs_f64(),
            sweep_seconds,
            changed,
            accuracy,
        };
        on_sweep(&rec);
        records.push(rec);
    }
    Ok(GibbsRun {
        state: chain.state(),
        records,
        ms_per_sweep: Timing::of(&timed),
        sweeps: config.sweeps,
        warmup: config.warmup,
    })
}

/// Per parameter of `inc`'s programs: is it a `nat` statistic as long as the tables
/// `emit/safe.rs` narrows (a shorter one sits in the first-level cache either way) whose
/// elements stay below `2^32` ([`incremental::Statistic::most`])? Those are laid out as
/// 32-bit elements: half the memory the update's reads of them cross (Naive Bayes's
/// topic by word table: 8 MB as 64-bit counts). `all` holds the statistics as
/// `with_stats` sized them.
fn narrow_stats(inc: &Incremental, all: &[Val]) -> Vec<bool> {
    let first = inc.first_stat();
    let mut narrow = vec![false; first];
    for (k, s) in inc.stats.iter().enumerate() {
        let long = matches!(all.get(first + k), Some(Val::Array(xs)) if xs.len() as u128 >= crate::emit::NARROW_MIN_LEN);
        let fits = s.most.is_some_and(|m| m <= u64::from(u32::MAX));
        narrow.push(s.elem == slic_algebra::Type::Nat && long && fits);
    }
    narrow
}
