//! Shared helpers for the end-to-end tests and benchmarks.

pub mod gen;
