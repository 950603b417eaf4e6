//! A dataset file of a Gibbs run (issue 12, deliverable 5): a JSON object whose keys name
//! the update program's parameters and whose values are numbers, booleans, arrays, or
//! `{"npy": "relative/path.npy"}`, an array kept in a `.npy` file beside the JSON (the
//! path is relative to the JSON file's folder), so a corpus of millions of tokens loads
//! at the speed of a memory copy rather than of a JSON parser.
//!
//! What it reads is untyped: [`Entry`] is a number, a boolean, a flat array (an
//! [`NpyArray`], whether it came from a file or from the JSON) or a list of entries (an
//! array of arrays). Matching entries to a program's parameters and types is the
//! reader's job (`slic_codegen::gibbs`): this crate knows nothing of Hakaru. Every
//! malformed input (unreadable files, bad JSON, a bad `.npy`, a value of no supported
//! shape) is a [`DataError`] naming the key, never a panic.
//!
//! ```
//! use slic_data::dataset::{self, Entry};
//! use slic_data::NpyArray;
//! let d = dataset::from_json(r#"{"u": 0, "t": [1.5, -2], "z": [0, 1]}"#, ".".as_ref()).unwrap();
//! assert_eq!(d.get("t"), Some(&Entry::Array(NpyArray::F64(vec![1.5, -2.0]))));
//! assert_eq!(d.get("z"), Some(&Entry::Array(NpyArray::I64(vec![0, 1]))));
//! assert_eq!(d.get("u"), Some(&Entry::Int(0)));
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::npy::{self, NpyArray, NpyError};

/// One value of a dataset, as written (no types of the program attached).
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// A JSON integer that fits an `i64`.
    Int(i64),
    /// A JSON integer above `i64::MAX`.
    UInt(u64),
    /// Any other JSON number, or `"inf"`, `"-inf"`, `"nan"` (JSON has no infinities).
    Real(f64),
    Bool(bool),
    /// A flat array: `{"npy": ..}`, or an inline JSON array of numbers (integers only:
    /// `I64`, or `U64` when one is above `i64::MAX`; any other number makes it `F64`) or
    /// of booleans. An empty inline array is an empty `I64`.
    Array(NpyArray),
    /// An inline JSON array whose elements are arrays.
    List(Vec<Entry>),
}

impl Entry {
    /// What kind of value this is, for messages ("an integer", "an array of 3 reals").
    pub fn describe(&self) -> String {
        match self {
            Entry::Int(_) | Entry::UInt(_) => "an integer".into(),
            Entry::Real(_) => "a real number".into(),
            Entry::Bool(_) => "a boolean".into(),
            Entry::Array(a) => {
                let what = match a {
                    NpyArray::F64(_) => "reals",
                    NpyArray::I64(_) | NpyArray::U64(_) => "integers",
                    NpyArray::Bool(_) => "booleans",
                };
                format!("an array of {} {what}", a.len())
            }
            Entry::List(xs) => format!("an array of {} arrays", xs.len()),
        }
    }

    /// The elements of an array as entries (a list's entries; a flat array's numbers or
    /// booleans one by one); nothing for a scalar. A reader that expects a tuple (a
    /// chain's initial state `[4.5, 2]` for a pair) takes it apart with this.
    pub fn items(&self) -> Vec<Entry> {
        match self {
            Entry::List(xs) => xs.clone(),
            Entry::Array(NpyArray::F64(v)) => v.iter().map(|&x| Entry::Real(x)).collect(),
            Entry::Array(NpyArray::I64(v)) => v.iter().map(|&x| Entry::Int(x)).collect(),
            Entry::Array(NpyArray::U64(v)) => v.iter().map(|&x| Entry::UInt(x)).collect(),
            Entry::Array(NpyArray::Bool(v)) => v.iter().map(|&x| Entry::Bool(x)).collect(),
            _ => Vec::new(),
        }
    }
}

/// The entries of a dataset file, in the file's key order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    pub entries: Vec<(String, Entry)>,
}

impl Dataset {
    /// The entry of `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, e)| e)
    }
}

/// Why a dataset could not be read.
#[derive(Debug)]
pub enum DataError {
    /// The JSON file could not be read.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The file is not JSON (serde_json's message, with line and column).
    Json { message: String },
    /// The JSON is not an object of named values.
    NotAnObject,
    /// The `.npy` file of `key` could not be read or is malformed.
    Npy {
        key: String,
        path: PathBuf,
        error: NpyError,
    },
    /// The value of `key` has no supported shape (a string, a mixed array, an object
    /// other than `{"npy": "PATH"}`, ...).
    BadValue { key: String, why: String },
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataError::Io { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            DataError::Json { message } => write!(f, "not valid JSON: {message}"),
            DataError::NotAnObject => write!(
                f,
                "the data must be a JSON object whose keys are the program's parameter names"
            ),
            DataError::Npy { key, path, error } => {
                write!(f, "`{key}`: {}: {error}", path.display())
            }
            DataError::BadValue { key, why } => write!(f, "`{key}`: {why}"),
        }
    }
}

impl std::error::Error for DataError {}

/// Reads the dataset file at `path`; `.npy` paths are relative to its folder.
pub fn read_file(path: &Path) -> Result<Dataset, DataError> {
    let text = std::fs::read_to_string(path).map_err(|error| DataError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    from_json(&text, dir)
}

/// Reads one array of labels from a file: a `.npy` file, or JSON that is an array or an
/// object whose `state` key holds one (the result file of a previous `gibbs` run).
pub fn read_array_file(path: &Path) -> Result<Entry, DataError> {
    let key = path.display().to_string();
    if path.extension().is_some_and(|e| e == "npy") {
        return npy::read_file(path)
            .map(Entry::Array)
            .map_err(|error| DataError::Npy {
                key,
                path: path.to_path_buf(),
                error,
            });
    }
    let text = std::fs::read_to_string(path).map_err(|error| DataError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let json: Json = serde_json::from_str(&text).map_err(|e| DataError::Json {
        message: e.to_string(),
    })?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    match json {
        Json::Object(mut map) => match map.remove("state") {
            Some(state) => entry(&key, state, dir),
            None => Err(bad(&key, "a JSON object of labels must have a `state` key")),
        },
        other => entry(&key, other, dir),
    }
}

/// Reads a dataset from JSON text; `.npy` paths are relative to `dir`.
pub fn from_json(text: &str, dir: &Path) -> Result<Dataset, DataError> {
    let json: Json = serde_json::from_str(text).map_err(|e| DataError::Json {
        message: e.to_string(),
    })?;
    let Json::Object(map) = json else {
        return Err(DataError::NotAnObject);
    };
    let mut entries = Vec::with_capacity(map.len());
    for (key, value) in map {
        let entry = entry(&key, value, dir)?;
        entries.push((key, entry));
    }
    Ok(Dataset { entries })
}

fn bad(key: &str, why: impl Into<String>) -> DataError {
    DataError::BadValue {
        key: key.to_string(),
        why: why.into(),
    }
}

/// A number as written: an integer when JSON has it as one.
fn number(key: &str, v: &Json) -> Result<Entry, DataError> {
    match v {
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(Entry::Int(i))
            } else if let Some(u) = n.as_u64() {
                Ok(Entry::UInt(u))
            } else {
                n.as_f64()
                    .map(Entry::Real)
                    .ok_or_else(|| bad(key, format!("the number {n} is not representable")))
            }
        }
        Json::String(s) => match s.as_str() {
            "inf" => Ok(Entry::Real(f64::INFINITY)),
            "-inf" => Ok(Entry::Real(f64::NEG_INFINITY)),
            "nan" => Ok(Entry::Real(f64::NAN)),
            _ => Err(bad(
                key,
                format!("the string \"{s}\" is not a value (numbers, booleans, arrays or {{\"npy\": \"FILE\"}})"),
            )),
        },
        Json::Bool(b) => Ok(Entry::Bool(*b)),
        other => Err(bad(key, format!("{other} is not a number or a boolean"))),
    }
}

fn entry(key: &str, value: Json, dir: &Path) -> Result<Entry, DataError> {
    match value {
        Json::Object(map) => {
            let file = match (map.len(), map.get("npy")) {
                (1, Some(Json::String(file))) => file,
                _ => {
                    return Err(bad(
                        key,
                        "an object value must be {\"npy\": \"relative/path.npy\"}",
                    ))
                }
            };
            let path = dir.join(file);
            let array = npy::read_file(&path).map_err(|error| DataError::Npy {
                key: key.to_string(),
                path,
                error,
            })?;
            Ok(Entry::Array(array))
        }
        Json::Array(items) => array(key, items, dir),
        Json::Null => Err(bad(key, "null is not a value")),
        other => number(key, &other),
    }
}

/// An inline JSON array: flat (numbers or booleans) or a list of arrays.
fn array(key: &str, items: Vec<Json>, dir: &Path) -> Result<Entry, DataError> {
    let Some(first) = items.first() else {
        return Ok(Entry::Array(NpyArray::I64(Vec::new())));
    };
    match first {
        Json::Array(_) | Json::Object(_) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if !matches!(item, Json::Array(_) | Json::Object(_)) {
                    return Err(bad(key, "an array mixes arrays and scalars"));
                }
                out.push(entry(key, item, dir)?);
            }
            Ok(Entry::List(out))
        }
        Json::Bool(_) => {
            let mut out = Vec::with_capacity(items.len());
            for item in &items {
                match item {
                    Json::Bool(b) => out.push(*b),
                    _ => return Err(bad(key, "an array mixes booleans and other values")),
                }
            }
            Ok(Entry::Array(NpyArray::Bool(out)))
        }
        _ => {
            let mut scalars = Vec::with_capacity(items.len());
            for item in &items {
                match number(key, item)? {
                    Entry::Bool(_) => {
                        return Err(bad(key, "an array mixes numbers and booleans"));
                    }
                    e => scalars.push(e),
                }
            }
            Ok(Entry::Array(flat(scalars)))
        }
    }
}

/// Scalars as one array: integers stay integers, one real makes all reals.
fn flat(scalars: Vec<Entry>) -> NpyArray {
    let all_int = scalars.iter().all(|e| matches!(e, Entry::Int(_)));
    let all_whole = scalars
        .iter()
        .all(|e| matches!(e, Entry::Int(_) | Entry::UInt(_)));
    let all_nonneg = scalars.iter().all(|e| match e {
        Entry::Int(i) => *i >= 0,
        _ => true,
    });
    let value = |e: &Entry| match *e {
        Entry::Int(i) => i as f64,
        Entry::UInt(u) => u as f64,
        Entry::Real(x) => x,
        _ => f64::NAN,
    };
    if all_int {
        NpyArray::I64(
            scalars
                .iter()
                .map(|e| if let Entry::Int(i) = e { *i } else { 0 })
                .collect(),
        )
    } else if all_whole && all_nonneg {
        NpyArray::U64(
            scalars
                .iter()
                .map(|e| match *e {
                    Entry::Int(i) => i as u64,
                    Entry::UInt(u) => u,
                    _ => 0,
                })
                .collect(),
        )
    } else {
        NpyArray::F64(scalars.iter().map(value).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Dataset, DataError> {
        from_json(text, Path::new("."))
    }

    #[test]
    fn inline_values_keep_their_kinds() {
        let d = read(r#"{"a": 1.5, "b": [true, false], "c": [[1, 2], [3.5]], "d": [], "e": 18446744073709551615}"#)
            .unwrap();
        assert_eq!(d.get("a"), Some(&Entry::Real(1.5)));
        assert_eq!(
            d.get("b"),
            Some(&Entry::Array(NpyArray::Bool(vec![true, false])))
        );
        assert_eq!(
            d.get("c"),
            Some(&Entry::List(vec![
                Entry::Array(NpyArray::I64(vec![1, 2])),
                Entry::Array(NpyArray::F64(vec![3.5]))
            ]))
        );
        assert_eq!(d.get("d"), Some(&Entry::Array(NpyArray::I64(vec![]))));
        assert_eq!(d.get("e"), Some(&Entry::UInt(u64::MAX)));
    }

    #[test]
    fn malformed_values_are_errors_naming_the_key() {
        for (text, key) in [
            (r#"{"x": "hello"}"#, "x"),
            (r#"{"y": [1, true]}"#, "y"),
            (r#"{"z": {"npy": "no/such/file.npy"}}"#, "z"),
            (r#"{"w": {"file": "a.npy"}}"#, "w"),
            (r#"{"v": null}"#, "v"),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.to_string().contains(&format!("`{key}`")), "{e}");
        }
        assert!(matches!(read("[1, 2]"), Err(DataError::NotAnObject)));
        assert!(matches!(read("{"), Err(DataError::Json { .. })));
    }
}
