//! Holonomic representations of densities (first-order linear ODEs with polynomial
//! coefficients for continuous variables, recurrences for discrete ones), the table of
//! primitive distributions, and recognition of a density from its representation.
//!
//! This crate is part of the pipeline's shape from the start but has no contents yet: the
//! recognition algorithm arrives with issue 4 ("Holonomic recognition of densities").
//! It depends only on `slic-algebra` and must never depend on `slic-measure`.
