//! `slic-semantics`: the meaning of measure terms.
//!
//! This crate is the **reference interpreter**, the semantic oracle every
//! transformation of slic-cas is tested against:
//! - [`eval`] computes any term to a [`Value`] (measure terms to measure values);
//! - [`sample`] draws `(value, log weight)` by importance sampling, unbiased for
//!   `integrate(m, h)`;
//! - [`expect`] integrates `integrate(m, h)` deterministically by nested quadrature and
//!   summation, with an error estimate (this is what checks terms with `lebesgue` or
//!   `counting` binders);
//! - [`compare()`] judges two terms by probes of their measures: quadrature, exact sums
//!   over finite choices, or adaptive importance sampling (`enumerate`: runs that sum
//!   over finite choices and draw continuous ones from a proposal; `guide`: that
//!   proposal, fitted to the measure);
//! - [`Summary`] condenses weighted draws; [`value_from_json`] / [`value_to_json`] move
//!   data in and out;
//! - [`residual()`] writes a program at its arguments with what they fix evaluated (a
//!   continuous posterior as what is left to sample, for `slic-cas run`).
//!
//! Randomness comes only from [`Rng`] (xoshiro256** and samplers written here), so a seed
//! gives the same stream forever. Every limit is in [`EvalConfig`]; nothing here panics,
//! hangs or overflows the stack on bad input.
//!
//! ```
//! use slic_algebra::{Dist, Node, Store, Type};
//! use slic_semantics::{eval, expect, sample, Env, Rng, Summary, Value};
//! let mut s = Store::new();
//! let lo = s.int_lit(3, Type::Real);
//! let hi = s.int_lit(7, Type::Real);
//! let m = s.intern(Node::Dist(Dist::Uniform, vec![lo, hi]), Type::measure(Type::Real));
//! let mv = eval(&s, m, &Env::new()).unwrap();
//! let mean = expect(&s, &mv, &|v| Ok(v.as_f64().unwrap_or(f64::NAN))).unwrap();
//! assert!((mean.value - 5.0).abs() < 1e-12);
//! let mut rng = Rng::seed_from_u64(1);
//! let draws: Vec<(Value, f64)> = (0..1000).map(|_| sample(&s, &mv, &mut rng).unwrap()).collect();
//! assert_eq!(Summary::from_samples(&draws).mass, 1.0);
//! ```
//!
//! Architecture invariant: the interpreter is independent of the simplifier (it must be,
//! to judge it): this crate does not depend on `slic-simplify`, so the judge's
//! independence is a fact of the dependency graph (`cargo tree -p slic-semantics`). It
//! reads terms and never rewrites them; the one term it writes is a residual, made of
//! values it computed.

pub mod compare;
pub mod dist;
pub mod enumerate;
pub mod error;
pub mod eval;
pub mod expect;
pub mod guide;
pub mod json;
pub mod prim;
pub mod quad;
pub mod residual;
pub mod rng;
pub mod sample;
pub mod summary;
pub mod value;

pub use compare::{compare, random_args, CompareConfig, Method, Verdict, TIGHT_QUAD_REL_ERR};
pub use error::{EvalError, EvalResult};
pub use eval::{apply_args, eval, EvalConfig, Interp};
pub use expect::{expect, expect_apply, mass};
pub use json::{args_from_json, args_from_values, args_to_json, value_from_json, value_to_json};
pub use quad::Estimate;
pub use residual::residual;
pub use rng::Rng;
pub use sample::{sample, sample_n};
pub use summary::{Moment, Summary};
pub use value::{Closure, Env, MeasureVal, Value};
