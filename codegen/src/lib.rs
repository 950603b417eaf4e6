//! Histogram transform (paper Fig. 7), A-normal form, loop-invariant code motion, loop
//! fusion, the loop IR, C and Rust kernel templates and run-time compilation.
//!
//! This crate is part of the pipeline's shape from the start but has no contents yet: code
//! generation arrives with its own issue. It is the only crate that will ever spawn a C
//! compiler.

pub mod histogram;

pub use histogram::{summarize, Summarized};
