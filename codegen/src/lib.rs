//! Code generation for slic-cas (issue 11): the loop IR that simplified terms are lowered
//! into, its verifier and its interpreter; later the histogram transform (paper Fig. 7),
//! A-normal form, loop-invariant code motion, loop fusion, C and Rust kernel templates and
//! run-time compilation.
//!
//! Today: [`ir`] (programs of typed parameters, imperative statements over mutable
//! accumulators and zero-filled arrays, pure expressions over the algebra's primitives,
//! `prob` in log space; a printer), [`verify`] (types, scopes, arrays, no read before
//! write; run after every pass) and [`interp`] (runs a verified program in `f64`, counting
//! loop iterations, array reads and allocations). This is the only crate that will ever
//! spawn a C compiler.

pub mod interp;
pub mod ir;
pub mod verify;

pub use interp::{run, RunError, Stats, Val};
pub use ir::{AssignOp, Expr, Lit, Program, Stmt};
pub use verify::{verify, VerifyError};
