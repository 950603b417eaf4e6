//! Markov chains of a kernel program (issue 15, deliverable 4): a program
//! `fn ... fn x T: measure(T)` is a Markov kernel (a Metropolis-Hastings step, a Gibbs
//! scan, any transition written in Hakaru); a chain starts at a given state and draws
//! each next state from the kernel at the current one, through the loop IR's interpreter
//! ([`InterpStepper`]) or a compiled C or Rust kernel specialised on the data
//! ([`CompiledStepper`]: its arguments laid out once, the state written in place).
//!
//! A step must be a draw from a probability measure: a run of weight other than 1 (a
//! kernel written with `weight` and `<|>`, which sampling would only weigh, not draw
//! exactly) or of weight 0 (a `reject`) is an error at that step, never a weighted state
//! passed off as a draw. The chain's state is a scalar, a flat array of scalars, or a
//! pair of these (the thermometer's two noise levels): the lowering gives a pair one IR
//! parameter per component, and the steppers write each in place. Its draws are read as
//! columns of reals (a prob on the linear scale, a bool as 0 or 1).
//!
//! [`diagnostics`] summarises columns: mean, standard deviation, effective sample size
//! (Geyer's initial monotone sequence) and split-R-hat over chains.

pub mod diagnostics;

use std::fmt;
use std::time::Instant;

use slic_algebra::Type;
use slic_data::Dataset;

use crate::compile::CompileOptions;
use crate::emit::{Specialise, Target};
use crate::gibbs::GibbsError;
use crate::interp::{sample_with, RunError, Sample, Val};
use crate::ir::Program;
use crate::kernel::{Compiled, KernelError, Prepared};
use crate::sampler::Rng;

/// Why a chain could not run.
#[derive(Clone, Debug, PartialEq)]
pub enum ChainError {
    /// The program is not a function of the state returning a measure over its type.
    NotAKernel { found: String },
    /// The state's type is not a scalar, an array of scalars, or a pair of these.
    StateType { found: String },
    /// A data key names no parameter (or names the state, which `--init` gives).
    UnknownKey { key: String, params: Vec<String> },
    /// Binding the data failed (a missing key, a value of the wrong type).
    Data(String),
    /// The interpreter failed at a step.
    Run { step: usize, error: String },
    /// A step's run had weight 0 (a reject, a factor of 0).
    Rejected { step: usize },
    /// A step's run had a weight other than 1.
    Weighted { step: usize, ln_w: f64 },
    /// A compiled kernel failed to build.
    Build(String),
}

impl fmt::Display for ChainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainError::NotAKernel { found } => write!(
                f,
                "the program has type {found}: a Markov kernel is a function of the state \
                 `fn x T` returning measure(T)"
            ),
            ChainError::StateType { found } => write!(
                f,
                "the state has type {found}: a chain's state is a scalar, an array of \
                 scalars, or a pair of these"
            ),
            ChainError::UnknownKey { key, params } => write!(
                f,
                "the data's key `{key}` is not a parameter of the kernel other than its \
                 state ({}); the state comes from --init",
                params.join(", ")
            ),
            ChainError::Data(m) => write!(f, "{m}"),
            ChainError::Run { step, error } => write!(f, "step {step} failed: {error}"),
            ChainError::Rejected { step } => write!(
                f,
                "step {step} has weight 0 (a reject): a Markov kernel must be a \
                 probability measure"
            ),
            ChainError::Weighted { step, ln_w } => write!(
                f,
                "step {step} has weight {:e}, not 1: a Markov kernel must be a probability \
                 measure (draw an acceptance with bernoulli rather than weighing the \
                 branches of <|>)",
                ln_w.exp()
            ),
            ChainError::Build(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for ChainError {}

/// A kernel program checked: its parameters, the last ones (one per component of a pair)
/// the state.
#[derive(Clone, Debug)]
pub struct Markov {
    params: Vec<(String, Type)>,
    /// The first of the state's IR parameters.
    state: usize,
    state_ty: Type,
}

impl Markov {
    /// Checks that `program` (lowered from a term of type `ty`) is a Markov kernel: a
    /// measure program whose last parameter has the type of the values it returns, a
    /// scalar, an array of scalars, or a pair of these.
    pub fn new(program: &Program, ty: &Type) -> Result<Markov, ChainError> {
        let (params, result) = ty.parameter_types();
        let not = || ChainError::NotAKernel {
            found: ty.to_string(),
        };
        let state_ty = params.last().ok_or_else(not)?;
        if !program.measure || result.measure_of() != Some(state_ty) {
            return Err(not());
        }
        let scalar = |t: &Type| {
            matches!(
                t,
                Type::Nat | Type::Int | Type::Real | Type::Prob | Type::Bool
            )
        };
        fn components(t: &Type, scalar: &dyn Fn(&Type) -> bool) -> Option<usize> {
            match t {
                Type::Pair(a, b) => Some(components(a, scalar)? + components(b, scalar)?),
                t if scalar(t) || t.array_of().is_some_and(scalar) => Some(1),
                _ => None,
            }
        }
        let bad = || ChainError::StateType {
            found: state_ty.to_string(),
        };
        let k = components(state_ty, &scalar).ok_or_else(bad)?;
        let state = program.params.len().checked_sub(k).ok_or_else(not)?;
        Ok(Markov {
            params: program.params.clone(),
            state,
            state_ty: state_ty.clone(),
        })
    }

    /// The state's type.
    pub fn state_type(&self) -> &Type {
        &self.state_ty
    }

    /// The names of the state's columns in the draws (see [`columns`]) for a state like
    /// `x`: a component's parameter name (`nT`, or `x1` for a pair's first), with `[i]`
    /// for each element of an array.
    pub fn column_names(&self, x: &Val) -> Vec<String> {
        let mut leaves = Vec::new();
        flatten(x, &mut leaves);
        let mut out = Vec::new();
        for ((name, _), v) in self.params[self.state..].iter().zip(&leaves) {
            match v {
                Val::Array(items) => out.extend((0..items.len()).map(|i| format!("{name}[{i}]"))),
                _ => out.push(name.clone()),
            }
        }
        out
    }

    /// The kernel's arguments: every parameter but the state from `data`, the state from
    /// `init` (the initial state's entry, under any key; a pair's is a list of its
    /// components), last, as one value.
    pub fn bind(&self, data: &Dataset, init: &slic_data::Entry) -> Result<Vec<Val>, ChainError> {
        let others: Vec<String> = self.params[..self.state]
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        for (key, _) in &data.entries {
            if !others.contains(key) {
                return Err(ChainError::UnknownKey {
                    key: key.clone(),
                    params: others,
                });
            }
        }
        let data_err = |e: GibbsError| ChainError::Data(e.to_string());
        let mut args = Vec::with_capacity(self.params.len());
        for (name, ty) in &self.params[..self.state] {
            let e = data
                .get(name)
                .ok_or_else(|| ChainError::Data(format!("the data has no key `{name}`")))?;
            args.push(crate::gibbs::to_val(name, e, ty).map_err(data_err)?);
        }
        let mut leaves = self.params[self.state..].iter();
        args.push(state_val(init, &self.state_ty, &mut leaves)?);
        Ok(args)
    }
}

/// The state of type `ty` from its entry, its components' parameters read from `leaves`.
fn state_val<'a>(
    e: &slic_data::Entry,
    ty: &Type,
    leaves: &mut impl Iterator<Item = &'a (String, Type)>,
) -> Result<Val, ChainError> {
    let data_err = |e: GibbsError| ChainError::Data(e.to_string());
    if let Type::Pair(a, b) = ty {
        let parts = e.items();
        let [ea, eb] = parts.as_slice() else {
            return Err(ChainError::Data(format!(
                "the initial state is a pair: give it as a list of two, found {}",
                e.describe()
            )));
        };
        let va = state_val(ea, a, leaves)?;
        let vb = state_val(eb, b, leaves)?;
        return Ok(Val::Pair(std::rc::Rc::new((va, vb))));
    }
    let (name, ty) = leaves
        .next()
        .ok_or_else(|| ChainError::Data("the state has more components than parameters".into()))?;
    crate::gibbs::to_val(name, e, ty).map_err(data_err)
}

/// The leaves of a value: a pair's components in order (nested pairs in turn), any other
/// value itself. A pair state's IR parameters are these.
fn flatten(v: &Val, out: &mut Vec<Val>) {
    match v {
        Val::Pair(p) => {
            flatten(&p.0, out);
            flatten(&p.1, out);
        }
        v => out.push(v.clone()),
    }
}

/// `args` (the state last, as one value) as the IR's arguments: the state's leaves.
fn ir_args(args: &[Val]) -> Vec<Val> {
    let mut out = args.to_vec();
    if let Some(x) = out.pop() {
        flatten(&x, &mut out);
    }
    out
}

/// What draws a chain's next state.
pub trait Stepper {
    /// Lays out the arguments (the state last, as one value: a pair state is one
    /// [`Val::Pair`], which the stepper takes apart into the IR's parameters).
    fn start(&mut self, args: &[Val]) -> Result<(), ChainError>;
    /// One run of the kernel at state `x`, drawing from the stepper's generator.
    fn step(&mut self, x: &Val) -> Result<Sample, ChainError>;
}

/// The interpreter as a [`Stepper`].
pub struct InterpStepper {
    program: Program,
    args: Vec<Val>,
    rng: Rng,
}

impl InterpStepper {
    pub fn new(program: Program, seed: u64) -> InterpStepper {
        InterpStepper {
            program,
            args: Vec::new(),
            rng: Rng::seed_from_u64(seed),
        }
    }
}

impl Stepper for InterpStepper {
    fn start(&mut self, args: &[Val]) -> Result<(), ChainError> {
        self.args = ir_args(args);
        Ok(())
    }

    fn step(&mut self, x: &Val) -> Result<Sample, ChainError> {
        let mut leaves = Vec::new();
        flatten(x, &mut leaves);
        let first = self.args.len().saturating_sub(leaves.len());
        self.args.truncate(first);
        self.args.extend(leaves);
        sample_with(&self.program, &self.args, &mut self.rng).map_err(|e: RunError| {
            ChainError::Run {
                step: 0,
                error: e.to_string(),
            }
        })
    }
}

/// A compiled kernel as a [`Stepper`]: specialised on everything but the state (an
/// array state's length baked in), its generator the kernel's own xoshiro256** seeded as
/// the interpreter's.
pub struct CompiledStepper {
    kernel: Compiled,
    prepared: Option<Prepared>,
    /// The first of the state's IR parameters.
    state: usize,
    rng: [u64; 4],
}

impl CompiledStepper {
    pub fn build(
        program: &Program,
        target: Target,
        args: &[Val],
        seed: u64,
        opts: &CompileOptions,
    ) -> Result<CompiledStepper, KernelError> {
        let mut leaves = Vec::new();
        if let Some(x) = args.last() {
            flatten(x, &mut leaves);
        }
        let args = ir_args(args);
        let state = program.params.len().saturating_sub(leaves.len());
        let mut spec = Specialise::all(program.params.len());
        // a scalar state changes at every step; an array state's length is baked in
        for (f, a) in spec.fixed.iter_mut().zip(&args).skip(state) {
            *f = matches!(a, Val::Array(_));
        }
        let kernel = Compiled::build(program, target, &spec, Some(&args), opts)?;
        Ok(CompiledStepper {
            kernel,
            prepared: None,
            state,
            rng: Rng::seed_from_u64(seed).state(),
        })
    }
}

impl Stepper for CompiledStepper {
    fn start(&mut self, args: &[Val]) -> Result<(), ChainError> {
        let p = self
            .kernel
            .prepare(&ir_args(args))
            .map_err(|e| ChainError::Build(e.to_string()))?;
        self.prepared = Some(p);
        Ok(())
    }

    fn step(&mut self, x: &Val) -> Result<Sample, ChainError> {
        let fail = |e: KernelError| ChainError::Run {
            step: 0,
            error: e.to_string(),
        };
        let p = self.prepared.as_mut().ok_or_else(|| ChainError::Run {
            step: 0,
            error: "the kernel was not started".into(),
        })?;
        let mut leaves = Vec::new();
        flatten(x, &mut leaves);
        for (k, v) in leaves.iter().enumerate() {
            p.set(self.state + k, v).map_err(fail)?;
        }
        self.kernel.sample_step(p, &mut self.rng).map_err(fail)
    }
}

/// One chain's draws.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainRun {
    /// The states after the burn-in, one per step, as columns of reals.
    pub draws: Vec<Vec<f64>>,
    /// The final state.
    pub last: Val,
    /// Steps (after the burn-in) whose draw differed from the state before it.
    pub moved: usize,
    /// Seconds for every step, burn-in included.
    pub seconds: f64,
}

/// Runs `burn + steps` steps of `stepper` from the state in `args` (its last element),
/// keeping the draws after the burn-in.
pub fn run_chain(
    stepper: &mut impl Stepper,
    args: &[Val],
    steps: usize,
    burn: usize,
) -> Result<ChainRun, ChainError> {
    stepper.start(args)?;
    let mut x = args.last().cloned().unwrap_or(Val::Unit);
    let mut draws = Vec::with_capacity(steps);
    let mut moved = 0;
    let t0 = Instant::now();
    for step in 1..=burn + steps {
        let s = stepper.step(&x).map_err(|e| match e {
            ChainError::Run { error, .. } => ChainError::Run { step, error },
            e => e,
        })?;
        let Some(next) = s.value else {
            return Err(ChainError::Rejected { step });
        };
        if s.ln_w.abs() > 1e-9 {
            return Err(ChainError::Weighted { step, ln_w: s.ln_w });
        }
        if step > burn {
            if next != x {
                moved += 1;
            }
            draws.push(columns(&next));
        }
        x = next;
    }
    Ok(ChainRun {
        draws,
        last: x,
        moved,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// A state as reals: a scalar's one value, an array's elements, a pair's components' in
/// turn (a prob on the linear scale, a bool as 0 or 1).
pub fn columns(v: &Val) -> Vec<f64> {
    fn real(v: &Val) -> f64 {
        match v {
            Val::Nat(n) => *n as f64,
            Val::Int(n) => *n as f64,
            Val::Real(x) => *x,
            Val::Prob(l) => l.exp(),
            Val::Bool(b) => f64::from(u8::from(*b)),
            _ => f64::NAN,
        }
    }
    match v {
        Val::Array(items) => items.iter().map(real).collect(),
        Val::Pair(p) => {
            let mut out = columns(&p.0);
            out.extend(columns(&p.1));
            out
        }
        v => vec![real(v)],
    }
}
