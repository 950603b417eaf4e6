//! The loop IR's interpreter (issue 11, deliverable 5): runs a verified [`Program`] on
//! concrete arguments, in `f64` with `prob` in log space (a `prob` value is `ln p`, so
//! `+` on probs is a log-sum-exp and `*` a sum of logarithms), and counts the work done
//! ([`Stats`]: loop iterations summed over all loops, array element reads, allocations),
//! which is how the passes' asymptotic win is measured before any kernel is compiled.
//!
//! [`run`] evaluates a program that is not a measure; [`run_measure`] runs a measure
//! program in one of two [`Mode`]s. `Exact` enumerates: at each `categorical` draw the
//! run forks, one branch per value of non-zero probability, each carrying its log weight,
//! and the branches' results are merged by value into the exact distribution (any other
//! draw is an error naming it, so a caller can fall back to sampling). `Sample` makes `n`
//! independent runs, drawing from `sampler.rs`'s laws over its seeded generator.
//!
//! The machine is small-step so that a fork is a copy of its state, never a re-run of
//! the statements before the draw: the state is the environment (arrays behind `Rc`,
//! copied on the first store after a fork), an explicit stack of the blocks being
//! executed with their positions and loop counters, and the run's log weight. The
//! counters live outside the state, so the work of every branch is counted once.
//!
//! It is an oracle for lowered programs, checked itself against direct Rust computations
//! (tests) and against the reference interpreter: it must not share code with
//! `slic-semantics` (a dev-dependency only), and its primitives are written here, on log
//! space where the type is `prob`. Run-time failures (an index out of bounds, an unsafe
//! coercion of a negative number, integer overflow, a parameter out of its
//! distribution's range) are [`RunError`]s, never panics; a program that fails
//! `verify::verify` is refused before it runs.

use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};
use crate::sampler::{self, Law, Rng};
use crate::verify::{verify, VerifyError};
use slic_algebra::{Coercion, Dist, Prim, Type};
use std::cmp::Ordering;
use std::fmt;
use std::rc::Rc;

/// A run-time value. `Prob` holds `ln p`. Arrays are shared, immutable.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Nat(u64),
    Int(i64),
    Real(f64),
    /// `ln p` of a probability or weight `p >= 0`.
    Prob(f64),
    Bool(bool),
    Array(Rc<[Val]>),
    /// A pair: only as a measure program's result.
    Pair(Rc<(Val, Val)>),
    /// `()`: only as a measure program's result.
    Unit,
}

impl Val {
    /// The prob value of a linear `p >= 0`.
    pub fn prob(p: f64) -> Val {
        Val::Prob(p.ln())
    }

    /// An array of values.
    pub fn array(items: Vec<Val>) -> Val {
        Val::Array(items.into())
    }

    /// A pair of values.
    pub fn pair(a: Val, b: Val) -> Val {
        Val::Pair(Rc::new((a, b)))
    }

    /// The linear value of a number (`exp` of a prob's logarithm), `None` for the rest.
    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Val::Nat(n) => Some(*n as f64),
            Val::Int(n) => Some(*n as f64),
            Val::Real(x) => Some(*x),
            Val::Prob(l) => Some(l.exp()),
            Val::Bool(_) | Val::Array(_) | Val::Pair(_) | Val::Unit => None,
        }
    }

    /// The natural order of values, total: numbers by value (probs by their logarithms,
    /// `-0.0` equal to `0.0`, NaNs after everything), `false < true`, arrays
    /// lexicographically; values of different kinds (never two results of one program)
    /// by kind. Exact distributions list their values in this order.
    pub fn total_cmp(&self, other: &Val) -> Ordering {
        fn rank(v: &Val) -> u8 {
            match v {
                Val::Nat(_) => 0,
                Val::Int(_) => 1,
                Val::Real(_) => 2,
                Val::Prob(_) => 3,
                Val::Bool(_) => 4,
                Val::Array(_) => 5,
                Val::Pair(_) => 6,
                Val::Unit => 7,
            }
        }
        // `+ 0.0` turns `-0.0` into `0.0`, so the two compare equal
        let float = |x: f64, y: f64| (x + 0.0).total_cmp(&(y + 0.0));
        match (self, other) {
            (Val::Nat(x), Val::Nat(y)) => x.cmp(y),
            (Val::Int(x), Val::Int(y)) => x.cmp(y),
            (Val::Real(x), Val::Real(y)) | (Val::Prob(x), Val::Prob(y)) => float(*x, *y),
            (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
            (Val::Array(xs), Val::Array(ys)) => {
                for (x, y) in xs.iter().zip(ys.iter()) {
                    let o = x.total_cmp(y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                xs.len().cmp(&ys.len())
            }
            (Val::Pair(p), Val::Pair(q)) => p.0.total_cmp(&q.0).then_with(|| p.1.total_cmp(&q.1)),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

/// The work a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Loop bodies entered, summed over all loops (and over all branches and runs of a
    /// measure program).
    pub iterations: u64,
    /// Array elements read by expressions (an element of an array of arrays counts once
    /// per `[ ]`; `size` reads none, and the update `a[i] += e` is a write, not a read).
    /// A `categorical` draw reads each of its weights once.
    pub array_reads: u64,
    /// `alloc` statements executed.
    pub allocations: u64,
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The program is ill formed.
    Verify(VerifyError),
    /// The arguments do not match the parameters in number.
    ArgCount { expected: usize, found: usize },
    /// An argument's value does not have its parameter's type.
    ArgType { name: String, expected: String },
    /// An array index outside `0..size`.
    OutOfBounds {
        array: String,
        index: i128,
        size: usize,
        at: String,
    },
    /// An arithmetic failure: overflow, a negative `int2nat`/`real2prob`, a loop bound or
    /// size out of range, `choose` of a huge argument.
    Arith { what: String, at: String },
    /// [`run`] was given a measure program, which only [`run_measure`] runs.
    IsAMeasure,
    /// Exact enumeration met a draw that is not finite (only `categorical` is): sample
    /// the program instead.
    NotFinite { dist: &'static str, at: String },
    /// Exact enumeration would follow more than `max_paths` paths.
    TooManyPaths { max_paths: u64, at: String },
    /// A draw's parameter outside its distribution's range (a standard deviation of 0,
    /// unordered uniform bounds, an infinite weight, ...), or a sampler that gave up.
    BadDraw { what: String, at: String },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Verify(e) => write!(f, "ill-formed program: {e}"),
            RunError::ArgCount { expected, found } => {
                write!(f, "expected {expected} arguments, found {found}")
            }
            RunError::ArgType { name, expected } => {
                write!(f, "argument `{name}` is not a value of type {expected}")
            }
            RunError::OutOfBounds {
                array,
                index,
                size,
                at,
            } => {
                write!(
                    f,
                    "index {index} out of bounds for `{array}` of size {size}, in `{at}`"
                )
            }
            RunError::Arith { what, at } => write!(f, "{what}, in `{at}`"),
            RunError::IsAMeasure => {
                write!(f, "the program is a measure: run it with `run_measure`")
            }
            RunError::NotFinite { dist, at } => write!(
                f,
                "`{at}` draws from {dist}, which exact enumeration cannot: sample instead"
            ),
            RunError::TooManyPaths { max_paths, at } => write!(
                f,
                "exact enumeration needs more than {max_paths} paths, at `{at}`"
            ),
            RunError::BadDraw { what, at } => write!(f, "{what}, in `{at}`"),
        }
    }
}

impl std::error::Error for RunError {}

/// How [`run_measure`] runs a measure program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Enumerate every path (all draws must be `categorical`), following at most
    /// `max_paths` of them (a program without draws follows one, whatever the budget).
    Exact { max_paths: u64 },
    /// `n` independent runs over the generator seeded with `seed`.
    Sample { n: usize, seed: u64 },
}

/// What [`run_measure`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Exact(Enumerated),
    Sampled(Sampled),
}

impl Outcome {
    /// The work done, summed over every branch or run.
    pub fn stats(&self) -> Stats {
        match self {
            Outcome::Exact(e) => e.stats,
            Outcome::Sampled(s) => s.stats,
        }
    }
}

/// The exact distribution of a finite measure program.
#[derive(Clone, Debug, PartialEq)]
pub struct Enumerated {
    /// `ln` of the total mass.
    pub ln_mass: f64,
    /// Each result value of non-zero weight with `ln` of its weight (the measure of the
    /// value, not normalised), one entry per distinct value, in [`Val::total_cmp`] order.
    pub weights: Vec<(Val, f64)>,
    /// Paths followed: 1, plus `b - 1` for each fork into `b` branches.
    pub paths: u64,
    pub stats: Stats,
}

impl Enumerated {
    /// The distribution of the runs `leaves` (each a value and the log weight of its
    /// path): equal values merged by log-sum-exp, in the order of `Val::total_cmp`; what
    /// the interpreter's exact mode and the compiled kernels' replay both end with.
    pub(crate) fn from_leaves(mut leaves: Vec<(Val, f64)>, paths: u64, stats: Stats) -> Enumerated {
        leaves.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut weights: Vec<(Val, f64)> = Vec::new();
        let mut k = 0;
        while k < leaves.len() {
            let mut j = k;
            while j < leaves.len() && leaves[j].0.total_cmp(&leaves[k].0) == Ordering::Equal {
                j += 1;
            }
            // one leaf per value is the common case (a categorical's outcomes): no sum
            let l = if j == k + 1 && !leaves[k].1.is_nan() {
                leaves[k].1
            } else {
                let ls: Vec<f64> = leaves[k..j].iter().map(|(_, l)| *l).collect();
                log_sum_exp(&ls)
            };
            weights.push((leaves[k].0.clone(), l));
            k = j;
        }
        let all: Vec<f64> = weights.iter().map(|(_, l)| *l).collect();
        Enumerated {
            ln_mass: log_sum_exp(&all),
            weights,
            paths,
            stats,
        }
    }

    /// The total mass.
    pub fn mass(&self) -> f64 {
        self.ln_mass.exp()
    }

    /// Each value's probability, the weights divided by the mass; empty for the zero
    /// measure (which has no distribution to normalise).
    pub fn probabilities(&self) -> Vec<(Val, f64)> {
        if self.ln_mass == f64::NEG_INFINITY {
            return Vec::new();
        }
        self.weights
            .iter()
            .map(|(v, l)| (v.clone(), (l - self.ln_mass).exp()))
            .collect()
    }
}

/// The runs of a sampled measure program.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    pub samples: Vec<Sample>,
    pub stats: Stats,
}

impl Sampled {
    /// The logarithm of the mean weight (the estimate of the measure's mass), computed
    /// in log space, so a mass beyond `f64` (a posterior's evidence of `e^-2000`) keeps
    /// its value; `-inf` with no samples or none of positive weight, NaN if a weight is.
    pub fn ln_mass(&self) -> f64 {
        let m = self
            .samples
            .iter()
            .map(|d| d.ln_w)
            .fold(f64::NEG_INFINITY, f64::max);
        if self.samples.iter().any(|d| d.ln_w.is_nan()) {
            return f64::NAN;
        }
        if m.is_infinite() {
            return m;
        }
        let s: f64 = self.samples.iter().map(|d| (d.ln_w - m).exp()).sum();
        m + s.ln() - (self.samples.len() as f64).ln()
    }
}

/// One run: its result, `None` when the run has weight 0 (a `reject`, a `factor` of 0, a
/// categorical of all-zero weights), and its log weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub value: Option<Val>,
    pub ln_w: f64,
}

/// Verifies `p`, a program that is not a measure, then runs it on `args` (one per
/// parameter, in order).
pub fn run(p: &Program, args: &[Val]) -> Result<(Val, Stats), RunError> {
    execute(p, args).map(|(_, v, stats)| (v, stats))
}

/// Runs a program that is not a measure: its final state (for `inout` parameters), its
/// result and its counts.
fn execute<'p>(p: &'p Program, args: &[Val]) -> Result<(State<'p>, Val, Stats), RunError> {
    if p.measure {
        return Err(RunError::IsAMeasure);
    }
    let mut st = start(p, args)?;
    let mut ex = Exec::default();
    match ex.advance(&mut st)? {
        Event::Done => {}
        // the verifier admits no measure statement outside a measure program
        Event::Draw { at, .. } => return Err(arith("a draw outside a measure program", at)),
        Event::Zero => return Err(RunError::IsAMeasure),
    }
    let v = ex.result(&st, p)?;
    Ok((st, v, ex.stats))
}

/// [`run`], reading instead the final values of scalars the body declares at its top
/// level (`names`, in order): what a pass that evaluates part of a program once reads
/// (`crate::precompute`). A name not bound to a scalar when the body ends is an error.
pub(crate) fn run_scalars(
    p: &Program,
    args: &[Val],
    names: &[String],
) -> Result<Vec<Val>, RunError> {
    let (st, _, _) = execute(p, args)?;
    names
        .iter()
        .map(|x| match lookup(&st.env, x) {
            Some(Slot::Val(v)) => Ok(v.clone()),
            _ => Err(arith(
                "a value read back that is not a scalar",
                At::Return(&p.result),
            )),
        })
        .collect()
}

/// For the rewrites' unit tests: `p` on `pa` and its rewrite `q` on `qa` agree, the same
/// value or both an error of the same kind; `what` names the case in a failure.
#[cfg(test)]
pub(crate) fn assert_same_run(p: &Program, pa: &[Val], q: &Program, qa: &[Val], what: &str) {
    match (run(p, pa), run(q, qa)) {
        (Ok(w), Ok(g)) => assert_eq!(w.0, g.0, "{what}: {q}"),
        (Err(w), Err(g)) => assert_eq!(
            std::mem::discriminant(&w),
            std::mem::discriminant(&g),
            "{what}: {w} against {g}"
        ),
        (w, g) => panic!("{what}: {w:?} against {g:?} in {q}"),
    }
}

/// [`run`], then each `inout` parameter's final contents written back into `args`
/// (nothing is written when the run fails).
pub fn run_inout(p: &Program, args: &mut [Val]) -> Result<(Val, Stats), RunError> {
    let (st, v, stats) = execute(p, args)?;
    for (k, (name, _)) in p.params.iter().enumerate() {
        if let (true, Some((_, Slot::Buf(buf)))) = (p.inout.contains(name), st.env.get(k)) {
            args[k] = Val::Array(buf.as_slice().into());
        }
    }
    Ok((v, stats))
}

/// Verifies `p`, then runs it as a measure on `args` in `mode`. A program that is not a
/// measure is the point mass at its result. Weights are in log space throughout.
///
/// ```
/// use slic_algebra::{Dist, Type};
/// use slic_codegen::{run_measure, Expr, Mode, Outcome, Program, Stmt, Val};
///
/// // k ~ categorical(w); return k
/// let p = Program {
///     params: vec![("w".into(), Type::array(Type::Prob))],
///     body: vec![Stmt::draw("k", Type::Nat, Dist::Categorical, vec![Expr::var("w")])],
///     result: Expr::var("k"),
///     measure: true,
///     inout: Vec::new(),
/// };
/// let w = Val::array(vec![Val::prob(1.0), Val::prob(0.0), Val::prob(3.0)]);
/// let Ok(Outcome::Exact(e)) = run_measure(&p, &[w.clone()], Mode::Exact { max_paths: 10 })
/// else {
///     panic!("a categorical is finite")
/// };
/// let probs = e.probabilities();
/// assert_eq!((probs[0].0.clone(), probs[1].0.clone()), (Val::Nat(0), Val::Nat(2)));
/// assert!((probs[0].1 - 0.25).abs() < 1e-15 && (e.mass() - 1.0).abs() < 1e-15);
/// assert_eq!(e.paths, 2); // the value of weight 0 is never a branch
///
/// let Ok(Outcome::Sampled(s)) = run_measure(&p, &[w], Mode::Sample { n: 100, seed: 1 })
/// else {
///     panic!("sampling needs no finiteness")
/// };
/// assert!(s.samples.iter().all(|x| x.value.is_some() && x.ln_w == 0.0));
/// ```
pub fn run_measure(p: &Program, args: &[Val], mode: Mode) -> Result<Outcome, RunError> {
    let st = start(p, args)?;
    let mut ex = Exec::default();
    match mode {
        Mode::Exact { max_paths } => ex.enumerate(p, st, max_paths).map(Outcome::Exact),
        Mode::Sample { n, seed } => {
            let mut rng = Rng::seed_from_u64(seed);
            // `n` comes from the user: grow as runs finish rather than reserve it up front
            let mut samples = Vec::new();
            for _ in 0..n {
                samples.push(ex.sample_once(p, st.clone(), &mut rng)?);
            }
            Ok(Outcome::Sampled(Sampled {
                samples,
                stats: ex.stats,
            }))
        }
    }
}

/// One run of measure program `p` on `args`, drawing from `rng` (advanced): one sample
/// of [`Mode::Sample`], from a generator the caller keeps (a Markov chain's steps).
pub fn sample_with(p: &Program, args: &[Val], rng: &mut Rng) -> Result<Sample, RunError> {
    let st = start(p, args)?;
    Exec::default().sample_once(p, st, rng)
}

/// Can [`Mode::Exact`] run `p`: are all its draws finite? (A caller picks the mode by
/// this; a draw never reached is no obstacle to enumeration, so it is conservative.)
pub fn enumerable(p: &Program) -> bool {
    fn block(body: &[Stmt]) -> bool {
        body.iter().all(|s| match s {
            Stmt::Draw { dist, .. } => sampler::is_finite(*dist),
            Stmt::For { body, .. } => block(body),
            Stmt::If {
                then, otherwise, ..
            } => block(then) && block(otherwise),
            _ => true,
        })
    }
    block(&p.body)
}

/// The machine's state before the first statement: `p` verified, the arguments checked
/// and bound.
fn start<'p>(p: &'p Program, args: &[Val]) -> Result<State<'p>, RunError> {
    verify(p).map_err(RunError::Verify)?;
    if args.len() != p.params.len() {
        return Err(RunError::ArgCount {
            expected: p.params.len(),
            found: args.len(),
        });
    }
    let mut env = Vec::with_capacity(p.params.len() + 8);
    for ((name, ty), v) in p.params.iter().zip(args) {
        if !has_type(v, ty) {
            return Err(RunError::ArgType {
                name: name.clone(),
                expected: ty.to_string(),
            });
        }
        let slot = match v {
            // an inout array is a buffer the body stores into, as an allocation is
            Val::Array(items) if p.inout.contains(name) => Slot::Buf(Rc::new(items.to_vec())),
            _ => Slot::Val(v.clone()),
        };
        env.push((name.as_str(), slot));
    }
    Ok(State {
        stack: vec![Frame {
            body: &p.body,
            pos: 0,
            mark: env.len(),
            lp: None,
        }],
        env,
        ln_w: 0.0,
    })
}

fn has_type(v: &Val, t: &Type) -> bool {
    match (v, t) {
        (Val::Nat(_), Type::Nat)
        | (Val::Int(_), Type::Int)
        | (Val::Real(_), Type::Real)
        | (Val::Prob(_), Type::Prob)
        | (Val::Bool(_), Type::Bool) => true,
        (Val::Array(items), Type::Array(e)) => items.iter().all(|x| has_type(x, e)),
        _ => false,
    }
}

/// What a name holds: an immutable value (parameters, lets, draws, loop indices), an
/// accumulator, or an allocated array (shared between the branches of a fork until one
/// of them stores into it).
#[derive(Clone, Debug)]
enum Slot {
    Val(Val),
    Buf(Rc<Vec<Val>>),
}

/// A block being executed: the next statement, the environment's length when the block
/// (or the loop's current iteration) began, and for a loop body its counter.
#[derive(Clone, Debug)]
struct Frame<'p> {
    body: &'p [Stmt],
    pos: usize,
    mark: usize,
    lp: Option<LoopPos<'p>>,
}

#[derive(Clone, Debug)]
struct LoopPos<'p> {
    var: &'p str,
    /// The next iteration's index and the exclusive bound.
    next: i128,
    hi: i128,
    /// Is the index a nat (else an int)?
    nat: bool,
}

impl LoopPos<'_> {
    fn index(&self, k: i128) -> Val {
        // the bounds fit their type, so every index between them does too
        if self.nat {
            Val::Nat(k as u64)
        } else {
            Val::Int(k as i64)
        }
    }
}

/// One run's state, everything a fork copies. Names borrow the program's text.
#[derive(Clone, Debug)]
struct State<'p> {
    /// Innermost binding last; a block's end truncates it back, so shadowing works.
    env: Vec<(&'p str, Slot)>,
    /// The blocks being executed, innermost last; the program's body at the bottom.
    stack: Vec<Frame<'p>>,
    /// `ln` of the run's weight.
    ln_w: f64,
}

/// Where a run stopped.
enum Event<'p> {
    /// The body finished: the result may be read.
    Done,
    /// A draw: bind `name` to a value of `law` (from `dist`) and continue.
    Draw {
        name: &'p str,
        dist: Dist,
        law: Law,
        at: At<'p>,
    },
    /// The run's weight is 0 (a `reject`, a `factor` of 0): it adds nothing.
    Zero,
}

/// The place an error names: a statement or the result. Its text is made only when an
/// error is, so a run formats nothing.
#[derive(Clone, Copy, Debug)]
enum At<'p> {
    Stmt(&'p Stmt),
    Return(&'p Expr),
}

impl At<'_> {
    fn text(self) -> String {
        match self {
            At::Stmt(s) => s.head(),
            At::Return(e) => format!("return {e}"),
        }
    }
}

/// The executor: the counters every state's work is added to.
#[derive(Default)]
struct Exec {
    stats: Stats,
}

fn arith(what: impl Into<String>, at: At<'_>) -> RunError {
    RunError::Arith {
        what: what.into(),
        at: at.text(),
    }
}

/// `ln(e^a + e^b)` without overflow; `-∞` is the zero of probs.
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m.is_infinite() {
        return m;
    }
    // the larger term is e^0 = 1: one exp and ln_1p of the smaller (as the kernels do)
    m + (-(a - b).abs()).exp().ln_1p()
}

/// `ln Σ e^(l_i)`, scaled by the largest term so that nothing overflows; `-∞` when empty.
pub(crate) fn log_sum_exp(ls: &[f64]) -> f64 {
    let m = ls.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m.is_infinite() {
        return m;
    }
    let s: f64 = ls.iter().map(|l| (l - m).exp()).sum();
    m + s.ln()
}

/// `ln(e^a · e^b)`, with measure theory's `0 · ∞ = 0`.
fn log_mul(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY || b == f64::NEG_INFINITY {
        f64::NEG_INFINITY
    } else {
        a + b
    }
}

/// The zero of a scalar type: what `alloc` fills arrays with.
pub(crate) fn zero(t: &Type) -> Val {
    match t {
        Type::Nat => Val::Nat(0),
        Type::Int => Val::Int(0),
        Type::Prob => Val::Prob(f64::NEG_INFINITY),
        Type::Bool => Val::Bool(false),
        _ => Val::Real(0.0),
    }
}

fn lookup<'a>(env: &'a [(&str, Slot)], name: &str) -> Option<&'a Slot> {
    env.iter().rev().find(|(n, _)| *n == name).map(|(_, s)| s)
}

fn lookup_mut<'a>(env: &'a mut [(&str, Slot)], name: &str) -> Option<&'a mut Slot> {
    env.iter_mut()
        .rev()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s)
}

impl Exec {
    /// Every path of a measure program, forked at its categorical draws, merged by value.
    fn enumerate<'p>(
        &mut self,
        p: &'p Program,
        st: State<'p>,
        max_paths: u64,
    ) -> Result<Enumerated, RunError> {
        let mut work = vec![st];
        let mut paths: u64 = 1;
        let mut leaves: Vec<(Val, f64)> = Vec::new();
        while let Some(mut st) = work.pop() {
            match self.advance(&mut st)? {
                Event::Done => {
                    let v = self.result(&st, p)?;
                    leaves.push((v, st.ln_w));
                }
                Event::Zero => {}
                Event::Draw {
                    name,
                    dist,
                    law,
                    at,
                } => {
                    let Law::Categorical { ln_p } = law else {
                        return Err(RunError::NotFinite {
                            dist: dist.name(),
                            at: at.text(),
                        });
                    };
                    let live: Vec<(usize, f64)> = ln_p
                        .iter()
                        .copied()
                        .enumerate()
                        .filter(|(_, l)| *l > f64::NEG_INFINITY)
                        .collect();
                    // all-zero weights: the zero measure, this path ends with nothing
                    let Some(((last_k, last_l), rest)) = live.split_last() else {
                        continue;
                    };
                    paths = paths.saturating_add(rest.len() as u64);
                    if paths > max_paths {
                        return Err(RunError::TooManyPaths {
                            max_paths,
                            at: at.text(),
                        });
                    }
                    // each branch is a copy of the state at the draw: nothing before it
                    // runs again
                    for &(k, l) in rest {
                        let mut b = st.clone();
                        b.env.push((name, Slot::Val(Val::Nat(k as u64))));
                        b.ln_w = log_mul(b.ln_w, l);
                        work.push(b);
                    }
                    st.env.push((name, Slot::Val(Val::Nat(*last_k as u64))));
                    st.ln_w = log_mul(st.ln_w, *last_l);
                    work.push(st);
                }
            }
        }
        Ok(Enumerated::from_leaves(leaves, paths, self.stats))
    }

    /// One independent run of a measure program, drawing from `rng`.
    fn sample_once<'p>(
        &mut self,
        p: &'p Program,
        mut st: State<'p>,
        rng: &mut Rng,
    ) -> Result<Sample, RunError> {
        let zero = Sample {
            value: None,
            ln_w: f64::NEG_INFINITY,
        };
        loop {
            match self.advance(&mut st)? {
                Event::Done => {
                    let v = self.result(&st, p)?;
                    return Ok(Sample {
                        value: Some(v),
                        ln_w: st.ln_w,
                    });
                }
                Event::Zero => return Ok(zero),
                Event::Draw { name, law, at, .. } => match law.sample(rng) {
                    Ok(Some(v)) => st.env.push((name, Slot::Val(v))),
                    Ok(None) => return Ok(zero),
                    Err(what) => {
                        return Err(RunError::BadDraw {
                            what,
                            at: at.text(),
                        })
                    }
                },
            }
        }
    }

    /// The result expression in a finished state.
    fn result(&mut self, st: &State<'_>, p: &Program) -> Result<Val, RunError> {
        self.result_of(st, &p.result, At::Return(&p.result))
    }

    /// A result: an expression's value, where an allocated array (a plate's draws) is
    /// taken whole, inside pairs too.
    fn result_of(&mut self, st: &State<'_>, e: &Expr, at: At<'_>) -> Result<Val, RunError> {
        match e {
            Expr::Var(x) => match lookup(&st.env, x) {
                Some(Slot::Buf(items)) => Ok(Val::Array(items.as_slice().into())),
                _ => self.expr(st, e, at),
            },
            Expr::Pair(a, b) => {
                let a = self.result_of(st, a, at)?;
                let b = self.result_of(st, b, at)?;
                Ok(Val::pair(a, b))
            }
            _ => self.expr(st, e, at),
        }
    }

    /// Runs `st` until its body finishes, it draws, or its weight is 0.
    fn advance<'p>(&mut self, st: &mut State<'p>) -> Result<Event<'p>, RunError> {
        loop {
            let depth = st.stack.len();
            let Some(top) = st.stack.last_mut() else {
                return Ok(Event::Done);
            };
            let body = top.body;
            if top.pos == body.len() {
                // the program's own body keeps its bindings: the result reads them
                if depth == 1 {
                    return Ok(Event::Done);
                }
                st.env.truncate(top.mark);
                if let Some(lp) = &mut top.lp {
                    if lp.next < lp.hi {
                        self.stats.iterations += 1;
                        st.env.push((lp.var, Slot::Val(lp.index(lp.next))));
                        lp.next += 1;
                        top.pos = 0;
                        continue;
                    }
                }
                st.stack.pop();
                continue;
            }
            let s = &body[top.pos];
            top.pos += 1;
            if let Some(ev) = self.stmt(st, s)? {
                return Ok(ev);
            }
        }
    }

    /// One statement; an event when the run must stop here.
    fn stmt<'p>(&mut self, st: &mut State<'p>, s: &'p Stmt) -> Result<Option<Event<'p>>, RunError> {
        let at = At::Stmt(s);
        match s {
            Stmt::Let { name, value, .. } => {
                let v = self.expr(st, value, at)?;
                st.env.push((name, Slot::Val(v)));
            }
            Stmt::Var { name, ty, init } => {
                // an accumulator without an initial value is never read before a write
                // (verified), so any placeholder of its type will do
                let v = match init {
                    Some(e) => self.expr(st, e, at)?,
                    None => zero(ty),
                };
                st.env.push((name, Slot::Val(v)));
            }
            Stmt::Assign { name, op, value } => {
                let v = self.expr(st, value, at)?;
                let Some(Slot::Val(old)) = lookup_mut(&mut st.env, name) else {
                    return Err(arith(format!("`{name}` is not an accumulator"), at));
                };
                let new = combine(*op, old.clone(), v, at)?;
                *old = new;
            }
            Stmt::Alloc { name, elem, size } => {
                let n = match self.expr(st, size, at)? {
                    Val::Nat(n) => usize::try_from(n).map_err(|_| arith("size too large", at))?,
                    _ => return Err(arith("size is not a nat", at)),
                };
                self.stats.allocations += 1;
                st.env.push((name, Slot::Buf(Rc::new(vec![zero(elem); n]))));
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let i = self.expr(st, index, at)?;
                let v = self.expr(st, value, at)?;
                let Some(Slot::Buf(buf)) = lookup_mut(&mut st.env, array) else {
                    return Err(arith(format!("`{array}` is not an allocated array"), at));
                };
                let k = in_bounds(&i, buf.len(), array, at)?;
                // copy on write: a forked branch gets its own array at its first store
                let buf = Rc::make_mut(buf);
                let old = buf[k].clone();
                buf[k] = combine(*op, old, v, at)?;
            }
            Stmt::For { var, lo, hi, body } => {
                let lo = self.expr(st, lo, at)?;
                let hi = self.expr(st, hi, at)?;
                let (lo, hi, nat) = match (lo, hi) {
                    (Val::Nat(a), Val::Nat(b)) => (i128::from(a), i128::from(b), true),
                    (Val::Int(a), Val::Int(b)) => (i128::from(a), i128::from(b), false),
                    _ => return Err(arith("loop bounds are not integers", at)),
                };
                if lo < hi {
                    self.stats.iterations += 1;
                    let lp = LoopPos {
                        var,
                        next: lo + 1,
                        hi,
                        nat,
                    };
                    let mark = st.env.len();
                    st.env.push((var, Slot::Val(lp.index(lo))));
                    st.stack.push(Frame {
                        body,
                        pos: 0,
                        mark,
                        lp: Some(lp),
                    });
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let branch = match self.expr(st, cond, at)? {
                    Val::Bool(true) => then,
                    Val::Bool(false) => otherwise,
                    _ => return Err(arith("condition is not a bool", at)),
                };
                st.stack.push(Frame {
                    body: branch,
                    pos: 0,
                    mark: st.env.len(),
                    lp: None,
                });
            }
            Stmt::Draw {
                name, dist, args, ..
            } => {
                let law = self.law(st, *dist, args, at)?;
                return Ok(Some(Event::Draw {
                    name,
                    dist: *dist,
                    law,
                    at,
                }));
            }
            Stmt::Observe { dist, args, value } => {
                let law = self.law(st, *dist, args, at)?;
                let v = self.expr(st, value, at)?;
                st.ln_w = log_mul(st.ln_w, law.log_density(&v));
                if st.ln_w == f64::NEG_INFINITY {
                    return Ok(Some(Event::Zero));
                }
            }
            Stmt::Factor(w) => match self.expr(st, w, at)? {
                Val::Prob(l) => {
                    st.ln_w = log_mul(st.ln_w, l);
                    if st.ln_w == f64::NEG_INFINITY {
                        return Ok(Some(Event::Zero));
                    }
                }
                _ => return Err(arith("factor of a value that is not a prob", at)),
            },
            Stmt::Reject => return Ok(Some(Event::Zero)),
        }
        Ok(None)
    }

    /// The law of `dist(args)`, its arguments evaluated (a draw's or an observation's).
    fn law(
        &mut self,
        st: &State<'_>,
        dist: Dist,
        args: &[Expr],
        at: At<'_>,
    ) -> Result<Law, RunError> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.draw_arg(st, a, at)?);
        }
        Law::new(dist, &vals).map_err(|what| RunError::BadDraw {
            what,
            at: at.text(),
        })
    }

    /// A draw's argument: a scalar, or a whole array (categorical's weights), each of
    /// whose elements is a read. The verifier decided which by the parameter's type; here
    /// the value says it (an element of an array of arrays is itself an array).
    fn draw_arg(&mut self, st: &State<'_>, a: &Expr, at: At<'_>) -> Result<Val, RunError> {
        let items: Rc<[Val]> = match a {
            Expr::Var(x) => match lookup(&st.env, x) {
                Some(Slot::Val(Val::Array(items))) => Rc::clone(items),
                Some(Slot::Buf(b)) => b.as_slice().into(),
                _ => return self.expr(st, a, at),
            },
            _ => match self.expr(st, a, at)? {
                Val::Array(items) => items,
                scalar => return Ok(scalar),
            },
        };
        self.stats.array_reads += items.len() as u64;
        Ok(Val::Array(items))
    }

    fn expr(&mut self, st: &State<'_>, e: &Expr, at: At<'_>) -> Result<Val, RunError> {
        match e {
            Expr::Lit(l) => Ok(match *l {
                Lit::Nat(n) => Val::Nat(n),
                Lit::Int(n) => Val::Int(n),
                Lit::Real(x) => Val::Real(x),
                Lit::Prob(l) => Val::Prob(l),
                Lit::Bool(b) => Val::Bool(b),
                Lit::Unit => Val::Unit,
            }),
            Expr::Var(x) => match lookup(&st.env, x) {
                Some(Slot::Val(v)) => Ok(v.clone()),
                // an allocated array is read element by element, never as a whole
                _ => Err(arith(format!("`{x}` is not a scalar"), at)),
            },
            Expr::Index(a, i) => {
                let i = self.expr(st, i, at)?;
                self.stats.array_reads += 1;
                self.with_array(st, a, at, |items| {
                    let k = in_bounds(&i, items.len(), &a.to_string(), at)?;
                    Ok(items[k].clone())
                })
            }
            Expr::Convert(c, x) => {
                let v = self.expr(st, x, at)?;
                convert(*c, v, at)
            }
            Expr::Pair(a, b) => {
                let a = self.expr(st, a, at)?;
                let b = self.expr(st, b, at)?;
                Ok(Val::pair(a, b))
            }
            Expr::Prim(Prim::Size, args) => {
                let a = args.first().ok_or_else(|| arith("size of nothing", at))?;
                let n = self.with_array(st, a, at, |items| Ok(items.len()))?;
                Ok(Val::Nat(n as u64))
            }
            Expr::Prim(p, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.expr(st, a, at)?);
                }
                prim(*p, &vals, at)
            }
        }
    }

    /// `f` of the elements of an array expression (a parameter, an allocation, or an
    /// element of an array of arrays, which counts as one read), borrowed: an allocated
    /// array is never copied to be read.
    fn with_array<R>(
        &mut self,
        st: &State<'_>,
        a: &Expr,
        at: At<'_>,
        f: impl FnOnce(&[Val]) -> Result<R, RunError>,
    ) -> Result<R, RunError> {
        if let Expr::Var(x) = a {
            return match lookup(&st.env, x) {
                Some(Slot::Buf(b)) => f(b),
                Some(Slot::Val(Val::Array(items))) => f(items),
                _ => Err(arith(format!("`{x}` is not an array"), at)),
            };
        }
        match self.expr(st, a, at)? {
            Val::Array(items) => f(&items),
            _ => Err(arith(format!("`{a}` is not an array"), at)),
        }
    }
}

fn in_bounds(i: &Val, size: usize, array: &str, at: At<'_>) -> Result<usize, RunError> {
    let k: i128 = match i {
        Val::Nat(n) => i128::from(*n),
        Val::Int(n) => i128::from(*n),
        _ => return Err(arith("index is not an integer", at)),
    };
    if k < 0 || k >= size as i128 {
        return Err(RunError::OutOfBounds {
            array: array.into(),
            index: k,
            size,
            at: at.text(),
        });
    }
    Ok(k as usize)
}

fn combine(op: AssignOp, old: Val, v: Val, at: At<'_>) -> Result<Val, RunError> {
    match op {
        AssignOp::Set => Ok(v),
        AssignOp::Add => prim(Prim::Add, &[old, v], at),
        AssignOp::Mul => prim(Prim::Mul, &[old, v], at),
        AssignOp::Max => prim(Prim::Max, &[old, v], at),
    }
}

fn convert(c: Coercion, v: Val, at: At<'_>) -> Result<Val, RunError> {
    Ok(match (c, v) {
        (Coercion::Nat2Int, Val::Nat(n)) => {
            Val::Int(i64::try_from(n).map_err(|_| arith("nat2int overflows", at))?)
        }
        (Coercion::Nat2Prob, Val::Nat(n)) => Val::Prob((n as f64).ln()),
        (Coercion::Nat2Real, Val::Nat(n)) => Val::Real(n as f64),
        (Coercion::Int2Real, Val::Int(n)) => Val::Real(n as f64),
        (Coercion::Prob2Real, Val::Prob(l)) => Val::Real(l.exp()),
        (Coercion::Int2Nat, Val::Int(n)) => {
            Val::Nat(u64::try_from(n).map_err(|_| arith(format!("int2nat of {n}"), at))?)
        }
        (Coercion::Real2Prob, Val::Real(x)) => {
            if x >= 0.0 {
                Val::Prob(x.ln())
            } else {
                return Err(arith(format!("real2prob of {x}"), at));
            }
        }
        (Coercion::Real2Int, Val::Real(x)) => {
            let f = x.floor();
            if f.is_finite() && f >= i64::MIN as f64 && f < i64::MAX as f64 {
                Val::Int(f as i64)
            } else {
                return Err(arith(format!("real2int of {x}"), at));
            }
        }
        (c, v) => return Err(arith(format!("{} of {v:?}", c.name()), at)),
    })
}

fn overflow(p: Prim, at: At<'_>) -> RunError {
    arith(format!("{p:?} overflows"), at)
}

/// `choose(n, k)` exactly, or an error when it does not fit a nat.
fn choose(n: u64, k: u64, at: At<'_>) -> Result<u64, RunError> {
    if k > n {
        return Ok(0);
    }
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for j in 0..k {
        // c·(n-j)/(j+1) stays an integer: it is choose(n, j+1)
        c = c
            .checked_mul(u128::from(n - j))
            .ok_or_else(|| overflow(Prim::Choose, at))?
            / u128::from(j + 1);
        if c > u128::from(u64::MAX) {
            return Err(overflow(Prim::Choose, at));
        }
    }
    Ok(c as u64)
}

/// `ln Γ(x)` where `Γ(x) >= 0` (a prob), an error where it is negative.
fn ln_gamma(x: f64, at: At<'_>) -> Result<f64, RunError> {
    if x <= 0.0 && x == x.floor() {
        return Ok(f64::INFINITY); // a pole
    }
    let (l, sign) = libm::lgamma_r(x);
    if sign < 0 {
        return Err(arith(format!("gammaFunc({x}) is negative, not a prob"), at));
    }
    Ok(l)
}

/// One primitive on values of the verified types.
fn prim(p: Prim, args: &[Val], at: At<'_>) -> Result<Val, RunError> {
    use Val::*;
    let bad = || arith(format!("{p:?} of {args:?}"), at);
    Ok(match (p, args) {
        (Prim::Add | Prim::Mul | Prim::Min | Prim::Max, [first, rest @ ..]) => {
            let mut acc = first.clone();
            for x in rest {
                acc = binary(p, &acc, x).ok_or_else(|| overflow(p, at))?;
            }
            acc
        }
        (Prim::Neg, [Int(n)]) => Int(n.checked_neg().ok_or_else(|| overflow(p, at))?),
        (Prim::Neg, [Real(x)]) => Real(-x),
        (Prim::Recip, [Real(x)]) => Real(1.0 / x),
        (Prim::Recip, [Prob(l)]) => Prob(-l),
        (Prim::Pow, [x, Nat(n)]) => match x {
            Nat(a) => Nat(u32::try_from(*n)
                .ok()
                .and_then(|n| a.checked_pow(n))
                .ok_or_else(|| overflow(p, at))?),
            Int(a) => Int(u32::try_from(*n)
                .ok()
                .and_then(|n| a.checked_pow(n))
                .ok_or_else(|| overflow(p, at))?),
            Real(a) => Real(libm::pow(*a, *n as f64)),
            Prob(l) => Prob(if *n == 0 { 0.0 } else { *n as f64 * l }),
            _ => return Err(bad()),
        },
        (Prim::RealPow, [Prob(l), Real(y)]) => Prob(if *y == 0.0 { 0.0 } else { y * l }),
        (Prim::NatRoot, [Prob(l), Nat(n)]) => {
            if *n == 0 {
                return Err(arith("natroot of degree 0", at));
            }
            Prob(l / *n as f64)
        }
        (Prim::Exp, [Real(x)]) => Prob(*x),
        (Prim::Log, [Prob(l)]) => Real(*l),
        (Prim::Sqrt, [Prob(l)]) => Prob(l / 2.0),
        (Prim::Pi, []) => Prob(std::f64::consts::PI.ln()),
        (Prim::Infinity, []) => Prob(f64::INFINITY),
        (Prim::Abs, [Int(n)]) => Nat(n.unsigned_abs()),
        (Prim::Abs, [Real(x)]) => Prob(x.abs().ln()),
        (Prim::Signum, [Int(n)]) => Int(n.signum()),
        (Prim::Signum, [Real(x)]) => Real(if *x > 0.0 {
            1.0
        } else if *x < 0.0 {
            -1.0
        } else {
            *x
        }),
        (Prim::Floor, [Prob(l)]) => {
            let f = l.exp().floor();
            if f < u64::MAX as f64 {
                Nat(f as u64)
            } else {
                return Err(overflow(p, at));
            }
        }
        (Prim::Floor, [Real(x)]) => convert(Coercion::Real2Int, Real(*x), at)?,
        (Prim::Erf, [Real(x)]) => Real(libm::erf(*x)),
        (Prim::Erf, [Prob(l)]) => Prob(libm::erf(l.exp()).ln()),
        (Prim::Choose, [Nat(n), Nat(k)]) => Nat(choose(*n, *k, at)?),
        (Prim::GammaFunc, [Real(x)]) => Prob(ln_gamma(*x, at)?),
        (Prim::BetaFunc, [Prob(a), Prob(b)]) => {
            let (a, b) = (a.exp(), b.exp());
            Prob(ln_gamma(a, at)? + ln_gamma(b, at)? - ln_gamma(a + b, at)?)
        }
        (Prim::Sin, [Real(x)]) => Real(libm::sin(*x)),
        (Prim::Cos, [Real(x)]) => Real(libm::cos(*x)),
        (Prim::Tan, [Real(x)]) => Real(libm::tan(*x)),
        (Prim::Asin, [Real(x)]) => Real(libm::asin(*x)),
        (Prim::Acos, [Real(x)]) => Real(libm::acos(*x)),
        (Prim::Atan, [Real(x)]) => Real(libm::atan(*x)),
        (Prim::Sinh, [Real(x)]) => Real(libm::sinh(*x)),
        (Prim::Cosh, [Real(x)]) => Real(libm::cosh(*x)),
        (Prim::Tanh, [Real(x)]) => Real(libm::tanh(*x)),
        (Prim::Asinh, [Real(x)]) => Real(libm::asinh(*x)),
        (Prim::Acosh, [Real(x)]) => Real(libm::acosh(*x)),
        (Prim::Atanh, [Real(x)]) => Real(libm::atanh(*x)),
        (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne, [a, b]) => {
            let o = compare(a, b).ok_or_else(bad)?;
            Bool(match p {
                Prim::Lt => o == Some(std::cmp::Ordering::Less),
                Prim::Le => matches!(
                    o,
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                ),
                Prim::Eq => o == Some(std::cmp::Ordering::Equal),
                _ => o != Some(std::cmp::Ordering::Equal),
            })
        }
        (Prim::And, _) | (Prim::Or, _) => {
            let mut acc = p == Prim::And;
            for x in args {
                match x {
                    Bool(b) if p == Prim::And => acc &= *b,
                    Bool(b) => acc |= *b,
                    _ => return Err(bad()),
                }
            }
            Bool(acc)
        }
        (Prim::Not, [Bool(a)]) => Bool(!a),
        (Prim::Xor, [Bool(a), Bool(b)]) => Bool(a != b),
        (Prim::Iff, [Bool(a), Bool(b)]) => Bool(a == b),
        (Prim::Impl, [Bool(a), Bool(b)]) => Bool(!a || *b),
        (Prim::Nand, [Bool(a), Bool(b)]) => Bool(!(*a && *b)),
        (Prim::Nor, [Bool(a), Bool(b)]) => Bool(!(*a || *b)),
        _ => return Err(bad()),
    })
}

/// Two values of one numeric type (or bools) compared; the outer `None` for a type
/// mismatch, the inner for an unordered (NaN) pair. Probs compare by their logarithms.
fn compare(a: &Val, b: &Val) -> Option<Option<std::cmp::Ordering>> {
    Some(match (a, b) {
        (Val::Nat(x), Val::Nat(y)) => Some(x.cmp(y)),
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(y)),
        (Val::Real(x), Val::Real(y)) | (Val::Prob(x), Val::Prob(y)) => x.partial_cmp(y),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        _ => return None,
    })
}

/// `+`, `*`, `min`, `max` of two values of one type; `None` on integer overflow or a
/// type mismatch.
fn binary(p: Prim, a: &Val, b: &Val) -> Option<Val> {
    use Val::*;
    Some(match (p, a, b) {
        (Prim::Add, Nat(x), Nat(y)) => Nat(x.checked_add(*y)?),
        (Prim::Add, Int(x), Int(y)) => Int(x.checked_add(*y)?),
        (Prim::Add, Real(x), Real(y)) => Real(x + y),
        (Prim::Add, Prob(x), Prob(y)) => Prob(log_add(*x, *y)),
        (Prim::Mul, Nat(x), Nat(y)) => Nat(x.checked_mul(*y)?),
        (Prim::Mul, Int(x), Int(y)) => Int(x.checked_mul(*y)?),
        (Prim::Mul, Real(x), Real(y)) => Real(x * y),
        (Prim::Mul, Prob(x), Prob(y)) => Prob(log_mul(*x, *y)),
        (Prim::Min, Nat(x), Nat(y)) => Nat(*x.min(y)),
        (Prim::Min, Int(x), Int(y)) => Int(*x.min(y)),
        (Prim::Max, Nat(x), Nat(y)) => Nat(*x.max(y)),
        (Prim::Max, Int(x), Int(y)) => Int(*x.max(y)),
        // NaN wins, as in the algebra's float evaluation: a NaN is never hidden
        (Prim::Min | Prim::Max, Real(x), Real(y)) => Real(float_minmax(p, *x, *y)),
        (Prim::Min | Prim::Max, Prob(x), Prob(y)) => Prob(float_minmax(p, *x, *y)),
        _ => return None,
    })
}

fn float_minmax(p: Prim, x: f64, y: f64) -> f64 {
    if x.is_nan() {
        x
    } else if y.is_nan() {
        y
    } else if p == Prim::Min {
        x.min(y)
    } else {
        x.max(y)
    }
}
