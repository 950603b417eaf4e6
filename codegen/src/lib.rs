//! Code generation for slic-cas (issue 11): the histogram transform (paper Fig. 7), the
//! loop IR that simplified terms are lowered into, its verifier and its interpreter; later
//! A-normal form, loop-invariant code motion, loop fusion, C and Rust kernel templates and
//! run-time compilation.
//!
//! Today: [`histogram`] (the histogram transform of Fig. 7: per-class sums that test the
//! class against an index become one `bucket` with `r_index`, let-bound outside the loop
//! over classes; what `slic-cas summarize` prints), [`ir`] (programs of typed parameters, imperative statements over mutable
//! accumulators and zero-filled arrays, pure expressions over the algebra's primitives,
//! `prob` in log space; a printer), [`verify`] (types, scopes, arrays, no read before
//! write; run after every pass) and [`interp`] (runs a verified program in `f64`, counting
//! loop iterations, array reads and allocations; a measure program by exact enumeration
//! of its categorical draws or by sampling, over [`sampler`]'s seeded laws). This is the
//! only crate that will ever spawn a C compiler.
//!
//! ```
//! use slic_algebra::Type;
//! use slic_codegen::{run, verify, AssignOp, Expr, Program, Stats, Stmt, Val};
//!
//! // s = Σ_i x[i]
//! let p = Program {
//!     params: vec![("x".into(), Type::array(Type::Real))],
//!     body: vec![
//!         Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
//!         Stmt::for_("i", Expr::nat(0), Expr::size(Expr::var("x")), vec![
//!             Stmt::assign("s", AssignOp::Add, Expr::index(Expr::var("x"), Expr::var("i"))),
//!         ]),
//!     ],
//!     result: Expr::var("s"),
//!     measure: false,
//! };
//! assert_eq!(verify(&p), Ok(()));
//! let x = Val::array(vec![Val::Real(1.0), Val::Real(2.5)]);
//! let (s, stats) = run(&p, &[x]).expect("runs");
//! assert_eq!(s, Val::Real(3.5));
//! assert_eq!(stats, Stats { iterations: 2, array_reads: 2, allocations: 0 });
//! assert!(p.to_string().contains("for i in 0..size(x) {"));
//! ```

pub mod histogram;
pub mod interp;
pub mod ir;
pub mod sampler;
pub mod verify;

pub use histogram::{summarize, Summarized};
pub use interp::{
    enumerable, run, run_measure, Enumerated, Mode, Outcome, RunError, Sample, Sampled, Stats, Val,
};
pub use ir::{AssignOp, Expr, Lit, Program, Stmt};
pub use verify::{verify, VerifyError};
