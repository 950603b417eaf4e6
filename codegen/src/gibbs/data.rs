//! A dataset's entries bound to an update program's parameters (issue 12, deliverable 5):
//! each parameter's value from the entry of its name, converted to the interpreter's
//! [`Val`] by the parameter's type; the true labels, when asked for, from their entry.
//!
//! Reading files is `slic_data`'s job (this crate does no IO); here the untyped entries
//! meet the program's types. A key that names no parameter, a parameter without a key,
//! and a value that does not fit its type are [`GibbsError`]s naming the key, never
//! panics. Conversion is a tight loop per array (2.6 million tokens in a few milliseconds
//! in release), because it is the start-up cost of every run on a large corpus.

use std::rc::Rc;

use slic_algebra::Type;
use slic_data::{Dataset, Entry, NpyArray};

use super::{GibbsError, Update};
use crate::interp::Val;

/// A dataset bound to an update's parameters.
#[derive(Clone, Debug)]
pub struct Bound {
    /// Every parameter's value in order; the index's is `0` (each update sets it), the
    /// state's the data's (an empty array when the data has none).
    pub args: Vec<Val>,
    /// The state as the data gives it, if it does.
    pub state: Option<Vec<u64>>,
    /// The true labels, when a truth field was named.
    pub truth: Option<Vec<u64>>,
}

impl Update {
    /// Binds `data` to the parameters: every parameter but the index must have a key
    /// (the state may be missing, for an `--init FILE` to give it), every key must be a
    /// parameter or `truth`, the name of the true labels' field.
    pub fn bind(&self, data: &Dataset, truth: Option<&str>) -> Result<Bound, GibbsError> {
        for (key, _) in &data.entries {
            let known = self.params.iter().any(|(p, _)| p == key) || Some(key.as_str()) == truth;
            if !known {
                return Err(GibbsError::UnknownKey {
                    key: key.clone(),
                    params: self.params.iter().map(|(p, _)| p.clone()).collect(),
                });
            }
        }
        let mut args = Vec::with_capacity(self.params.len());
        let mut state = None;
        for (i, (name, ty)) in self.params.iter().enumerate() {
            let entry = data.get(name);
            let v = if i == self.index {
                Val::Nat(0)
            } else if i == self.state {
                match entry {
                    Some(e) => {
                        let labels = nats(name, e)?;
                        let v = labels_val(&labels);
                        state = Some(labels);
                        v
                    }
                    None => Val::array(Vec::new()),
                }
            } else {
                let e = entry.ok_or_else(|| GibbsError::MissingKey { key: name.clone() })?;
                to_val(name, e, ty)?
            };
            args.push(v);
        }
        let truth = match truth {
            None => None,
            Some(key) => {
                let e = data
                    .get(key)
                    .ok_or_else(|| GibbsError::MissingKey { key: key.into() })?;
                Some(nats(key, e)?)
            }
        };
        Ok(Bound { args, state, truth })
    }
}

/// Labels as the interpreter's array of nats.
pub(super) fn labels_val(labels: &[u64]) -> Val {
    Val::Array(labels.iter().map(|&k| Val::Nat(k)).collect::<Rc<[Val]>>())
}

fn wrong(key: &str, expected: &Type, e: &Entry) -> GibbsError {
    GibbsError::WrongType {
        key: key.into(),
        expected: expected.to_string(),
        found: e.describe(),
    }
}

fn out_of_range(key: &str, why: String) -> GibbsError {
    GibbsError::OutOfRange {
        key: key.into(),
        why,
    }
}

/// An array of nats (the state, the truth, an initial state file's labels), `key` naming
/// it in errors.
pub fn nats(key: &str, e: &Entry) -> Result<Vec<u64>, GibbsError> {
    let ty = Type::array(Type::Nat);
    match e {
        Entry::Array(NpyArray::U64(v)) => Ok(v.clone()),
        Entry::Array(NpyArray::I64(v)) => v
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                u64::try_from(x)
                    .map_err(|_| out_of_range(key, format!("element {i} is {x}, not a nat")))
            })
            .collect(),
        _ => Err(wrong(key, &ty, e)),
    }
}

/// A scalar entry as a value of type `ty` (`None` when it does not fit the type).
fn scalar(e: &Entry, ty: &Type) -> Option<Result<Val, String>> {
    Some(match (e, ty) {
        (Entry::Int(i), Type::Nat) => u64::try_from(*i)
            .map(Val::Nat)
            .map_err(|_| format!("{i} is not a nat")),
        (Entry::UInt(u), Type::Nat) => Ok(Val::Nat(*u)),
        (Entry::Int(i), Type::Int) => Ok(Val::Int(*i)),
        (Entry::Int(i), Type::Real) => Ok(Val::Real(*i as f64)),
        (Entry::UInt(u), Type::Real) => Ok(Val::Real(*u as f64)),
        (Entry::Real(x), Type::Real) => Ok(Val::Real(*x)),
        (Entry::Int(i), Type::Prob) => prob(*i as f64),
        (Entry::UInt(u), Type::Prob) => prob(*u as f64),
        (Entry::Real(x), Type::Prob) => prob(*x),
        (Entry::Bool(b), Type::Bool) => Ok(Val::Bool(*b)),
        _ => return None,
    })
}

/// A prob from its linear value (non-negative; `ln` taken here, as the interpreter holds
/// probs in log space).
fn prob(x: f64) -> Result<Val, String> {
    if x >= 0.0 {
        Ok(Val::Prob(x.ln()))
    } else {
        Err(format!("{x} is not a prob (negative or NaN)"))
    }
}

/// An entry as a value of type `ty`.
pub(crate) fn to_val(key: &str, e: &Entry, ty: &Type) -> Result<Val, GibbsError> {
    if let Some(v) = scalar(e, ty) {
        return v.map_err(|why| out_of_range(key, why));
    }
    let Type::Array(elem) = ty else {
        return Err(wrong(key, ty, e));
    };
    let items: Result<Rc<[Val]>, String> = match (e, &**elem) {
        (Entry::List(xs), Type::Array(_)) => {
            let mut out = Vec::with_capacity(xs.len());
            for x in xs {
                out.push(to_val(key, x, elem)?);
            }
            Ok(out.into())
        }
        // the fast paths of large arrays: one pass, no per-element dispatch on the type
        (Entry::Array(NpyArray::U64(v)), Type::Nat) => Ok(v.iter().map(|&x| Val::Nat(x)).collect()),
        (Entry::Array(NpyArray::F64(v)), Type::Real) => {
            Ok(v.iter().map(|&x| Val::Real(x)).collect())
        }
        (Entry::Array(NpyArray::I64(v)), Type::Int) => Ok(v.iter().map(|&x| Val::Int(x)).collect()),
        (Entry::Array(NpyArray::Bool(v)), Type::Bool) => {
            Ok(v.iter().map(|&x| Val::Bool(x)).collect())
        }
        (Entry::Array(a), t) if t.is_numeric_scalar() => {
            let one = |x: Entry| match scalar(&x, t) {
                Some(r) => r,
                None => Err(format!("{} is not a {t}", x.describe())),
            };
            match a {
                NpyArray::U64(v) => v.iter().map(|&x| one(Entry::UInt(x))).collect(),
                NpyArray::I64(v) => v.iter().map(|&x| one(Entry::Int(x))).collect(),
                NpyArray::F64(v) => v.iter().map(|&x| one(Entry::Real(x))).collect(),
                NpyArray::Bool(_) => return Err(wrong(key, ty, e)),
            }
        }
        // an empty inline array is an array of any type
        (Entry::Array(NpyArray::I64(v)), _) if v.is_empty() => Ok(Rc::from(Vec::new())),
        _ => return Err(wrong(key, ty, e)),
    };
    items
        .map(Val::Array)
        .map_err(|why| out_of_range(key, format!("an element: {why}")))
}

/// Is this `nat`, `int`, `real` or `prob`?
trait NumericScalar {
    fn is_numeric_scalar(&self) -> bool;
}

impl NumericScalar for Type {
    fn is_numeric_scalar(&self) -> bool {
        matches!(self, Type::Nat | Type::Int | Type::Real | Type::Prob)
    }
}
