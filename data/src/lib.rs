//! Data files for slic-cas (issue 12, deliverables 5 and 6): the NumPy `.npy` format for
//! the large arrays of a Gibbs run's data (a corpus of millions of tokens), written by the
//! seeded data generator and read by `slic-cas gibbs` and the benchmarks; and
//! [`dataset`], the JSON file that names a run's values and refers to those arrays.
//!
//! A crate of its own because the readers of data (the CLI, the benchmarks, the
//! generator) should not need the compiler (`slic-codegen`) or the reference semantics to
//! load an array, and because it does IO, which the pipeline crates do not. It knows
//! nothing of Hakaru types or programs: it moves flat arrays of numbers between bytes and
//! memory, and every malformed input is an [`NpyError`], never a panic.
//!
//! ```
//! use slic_data::npy::{self, NpyArray};
//! let mut bytes = Vec::new();
//! npy::write(&mut bytes, &NpyArray::I64(vec![3, 1, 4])).unwrap();
//! assert_eq!(npy::read(&bytes).unwrap(), NpyArray::I64(vec![3, 1, 4]));
//! ```

pub mod dataset;
pub mod npy;

pub use dataset::{DataError, Dataset, Entry};
pub use npy::{NpyArray, NpyError};
