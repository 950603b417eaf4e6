//! Holonomic representations of densities (first-order linear ODEs with polynomial
//! coefficients for continuous variables, recurrences for discrete ones), the table of
//! primitive distributions, and recognition of a density from its representation: the
//! conjugacy engine of the simplifier (paper section 3.1, around eq. (7)).
//!
//! Given a factor `f(x)` of an integrand, its variable and its support, [`recognise`]
//! decides which distribution of the table `f` is a multiple of, reading the parameters
//! off the coefficients of `f`'s operator ([`ode::operator`] or
//! [`recurrence::recurrence`]), which is computed compositionally from the expression and
//! not by matching its shape. [`integrate`] and [`sum`] then give `∫ f` and `Σ f` over
//! the support exactly.
//!
//! Architecture invariant: every answer is exact or absent. An expression whose operator
//! cannot be computed, whose operator matches no family, or whose parameters cannot be
//! proved valid (a positive variance, a shape above zero) gives a [`Miss`], never a guess.
//! This crate depends only on `slic-algebra` and must never depend on `slic-semantics` or `slic-simplify`.

pub mod diff;
pub mod family;
pub mod ode;
pub mod recognise;
pub mod recurrence;
pub mod support;
mod terms;

pub use family::{Affine, Family, Recognised};
pub use ode::Ode;
pub use recognise::{integrate, recognise, sum, Miss};
pub use recurrence::Recurrence;
pub use support::Support;
