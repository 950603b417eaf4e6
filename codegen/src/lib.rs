//! Code generation for slic-cas (issue 11): the point split and the histogram transform
//! (paper Fig. 7), A-normal form with loop-invariant code motion and sharing, the loop IR
//! that simplified terms are lowered into, its verifier and its interpreter, lowering and
//! loop fusion; later C and Rust kernel templates and run-time compilation.
//!
//! Today: [`split`] (the point split: per-class sums that read a proposed label at one
//! point become sums over the other points plus the point), [`anf`] (A-normal form,
//! LICM, common subexpressions, on core terms), [`pipeline`] (the term-level stages in
//! order, with the ablation switches), [`histogram`] (the histogram transform of Fig. 7: per-class sums that test the
//! class against an index become one `bucket` with `r_index`, let-bound outside the loop
//! over classes; what `slic-cas summarize` prints), [`ir`] (programs of typed parameters, imperative statements over mutable
//! accumulators and zero-filled arrays, pure expressions over the algebra's primitives,
//! `prob` in log space; a printer), [`verify`] (types, scopes, arrays, no read before
//! write; run after every pass), [`interp`] (runs a verified program in `f64`, counting
//! loop iterations, array reads and allocations; a measure program by exact enumeration
//! of its categorical draws or by sampling, over [`sampler`]'s seeded laws), [`lower`]
//! (core terms to IR programs, each loop where the term uses it) and [`fuse`] (loops over
//! one range in one pass). Kernels (issue 12): [`emit`] writes a program as C or Rust
//! from tera templates, [`compile`] (the only module that spawns a compiler) builds and
//! caches shared libraries, [`kernel`] calls them with the interpreter's meaning (exact
//! enumeration by replaying choice scripts). [`gibbs`] is the collapsed Gibbs driver over
//! an [`UpdateKernel`] (the interpreter's or a compiled kernel), one chain or many in
//! parallel ([`run_chains`]), with the statistics of the point loops kept between
//! updates where [`incremental`] derives how (issue 13). This is the only crate that
//! spawns a C compiler.
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
//!     inout: Vec::new(),
//! };
//! assert_eq!(verify(&p), Ok(()));
//! let x = Val::array(vec![Val::Real(1.0), Val::Real(2.5)]);
//! let (s, stats) = run(&p, &[x]).expect("runs");
//! assert_eq!(s, Val::Real(3.5));
//! assert_eq!(stats, Stats { iterations: 2, array_reads: 2, allocations: 0 });
//! assert!(p.to_string().contains("for i in 0..size(x) {"));
//! ```

pub mod anf;
pub mod chain;
pub mod compile;
pub mod constants;
pub mod data_facts;
pub mod dce;
pub mod draw_only;
pub mod emit;
pub mod forward;
pub mod fuse;
pub mod gibbs;
pub mod histogram;
pub mod hoist;
pub mod incremental;
pub mod interp;
pub mod ir;
pub mod kernel;
pub mod lift;
pub mod logs;
pub mod lower;
pub mod memo;
pub mod peel;
pub mod pipeline;
pub mod precompute;
pub mod ranges;
pub mod ratios;
pub mod sampler;
pub mod share;
pub mod sparse;
pub mod split;
pub mod touched;
pub mod verify;

pub use anf::{normalize, Normalized};
pub use compile::{CompileError, CompileOptions};
pub use emit::{emit, EmitError, Emitted, Specialise, Target};
pub use fuse::fuse;
pub use gibbs::{
    run_chains, run_gibbs, Chain, ChainsError, ChainsRun, CompiledKernel, GibbsConfig, GibbsError,
    GibbsRun, Init, InterpKernel, SweepRecord, Update, UpdateError, UpdateKernel,
};
pub use histogram::{summarize, Summarized};
pub use interp::{
    enumerable, run, run_inout, run_measure, sample_with, Enumerated, Mode, Outcome, RunError,
    Sample, Sampled, Stats, Val,
};
pub use ir::{AssignOp, Expr, Lit, Program, Stmt};
pub use kernel::{Bench, Compiled, KernelError, Prepared};
pub use lower::{lower, LowerError};
pub use pipeline::{
    lower_draw_only, lower_program, term_stages, DrawOnlyLowered, Lowered, PassBug, Passes,
    PipelineError, TermStages,
};
pub use share::{share_tables, Shared};
pub use split::{split_points, Split};
pub use verify::{verify, VerifyError};
