//! The one error type of the reference interpreter: everything that can go wrong while
//! evaluating, sampling or integrating a term.
//!
//! Every failure a user's term or data can cause is a variant here (never a panic), and
//! every message is one lower-case line that names the offending value, so the CLI can
//! print it next to the program's position. This module holds no logic beyond display.

use std::fmt;

/// Why evaluation, sampling or numeric integration of a term failed.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// A measure that is not a probability measure (lebesgue, counting) was to be sampled.
    Unsampleable { measure: &'static str },
    /// `a[i]` (or a reducer's bucket, a categorical draw...) with `i` outside `0..size`.
    IndexOutOfBounds { index: i128, size: usize },
    /// `int2nat` (or another nat-valued operation) of a negative number.
    NegativeToNat { value: i128 },
    /// `real2prob` (or another prob-valued operation) of a negative number.
    NegativeToProb { value: f64 },
    /// A variable with no value in the environment (a term that is not closed).
    UnboundVariable { name: String },
    /// An integer result that does not fit its type (nat: u64, int: i64).
    Overflow { what: String },
    /// A configured limit (iterations, depth, integrand evaluations, dimensions) was hit.
    Budget { what: String },
    /// Application of a value that is not a function (or too many arguments).
    NotAFunction { found: String },
    /// A primitive got an argument outside its domain or of the wrong shape.
    BadArgument { op: String, reason: String },
    /// A primitive measure got parameters that define no measure (e.g. `normal(0, 0)`).
    BadParameter { dist: &'static str, reason: String },
    /// A `match` with no branch matching its scrutinee.
    NoMatch { value: String },
    /// `observe(m, v)` where `m` has no density (a bind or dirac, for instance).
    Unobservable { what: String },
    /// A numeric integral (an `integrate` expression) that did not reach its tolerance.
    NoConvergence { what: String },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unsampleable { measure } => write!(
                f,
                "cannot sample from {measure}: it is not a probability measure; use numeric integration"
            ),
            EvalError::IndexOutOfBounds { index, size } => {
                write!(f, "index {index} is out of bounds for an array of size {size}")
            }
            EvalError::NegativeToNat { value } => {
                write!(f, "cannot convert the negative number {value} to nat")
            }
            EvalError::NegativeToProb { value } => {
                write!(f, "cannot convert the negative number {value} to prob")
            }
            EvalError::UnboundVariable { name } => write!(f, "variable {name} has no value"),
            EvalError::Overflow { what } => write!(f, "integer overflow in {what}"),
            EvalError::Budget { what } => write!(f, "evaluation budget exceeded: {what}"),
            EvalError::NotAFunction { found } => {
                write!(f, "cannot apply {found}: it is not a function")
            }
            EvalError::BadArgument { op, reason } => write!(f, "bad argument to {op}: {reason}"),
            EvalError::BadParameter { dist, reason } => {
                write!(f, "bad parameter for {dist}: {reason}")
            }
            EvalError::NoMatch { value } => write!(f, "no match branch accepts {value}"),
            EvalError::Unobservable { what } => {
                write!(f, "cannot observe {what}: it has no density")
            }
            EvalError::NoConvergence { what } => write!(f, "numeric integration failed: {what}"),
        }
    }
}

impl std::error::Error for EvalError {}

/// Shorthand for results of this crate's interpreter.
pub type EvalResult<T> = Result<T, EvalError>;

pub(crate) fn bad_arg(op: &str, reason: impl Into<String>) -> EvalError {
    EvalError::BadArgument {
        op: op.to_string(),
        reason: reason.into(),
    }
}

pub(crate) fn budget(what: impl Into<String>) -> EvalError {
    EvalError::Budget { what: what.into() }
}

pub(crate) fn overflow(what: impl Into<String>) -> EvalError {
    EvalError::Overflow { what: what.into() }
}
