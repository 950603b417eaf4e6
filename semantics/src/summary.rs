//! Summaries of weighted samples: total mass, weighted moments and probabilities.
//!
//! [`Summary::from_samples`] turns importance-sampling draws `(value, log weight)` into
//! what tests and the CLI report: `n`, `mass` (the mean weight, an unbiased estimate of
//! the measure's total mass) with its standard error `mass_se`, the effective sample size
//! `ess`, the self-normalised weighted `mean` and `sd` of the value, and `probs`, the
//! normalised weight of each distinct value (keyed by its JSON text) when there are at
//! most [`MAX_DISTINCT`] of them. Weights are handled in log space (log-sum-exp), so
//! very large or small weights lose no precision.
//!
//! The printed summary ([`Summary`]'s `Display`, what `slic-cas sample --summary` shows)
//! lists `probs` in the order of the values, not of their text: `2` before `10`, `-1`
//! before `0`, pairs and arrays lexicographically by their numbers ([`value_order`]).
//! A `serde_json` object always sorts its keys as strings, so that text is written here
//! rather than by [`Summary::to_json`].
//!
//! Numeric features: numbers are themselves (prob on the linear scale), booleans are 0/1,
//! arrays and pairs are element-wise lists (nested as the value is). A value with another
//! shape (unit, either, maybe, functions), samples of differing shapes, or zero total
//! weight give `null` moments. Only draws with positive weight are summarised.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{json, Map, Value as Json};

use crate::json::value_to_json;
use crate::rng::log_sum_exp;
use crate::value::Value;

/// At most this many distinct values get a `probs` table.
pub const MAX_DISTINCT: usize = 200;

/// A numeric feature of a value: a number or a list of features.
#[derive(Clone, Debug, PartialEq)]
pub enum Moment {
    Scalar(f64),
    List(Vec<Moment>),
}

impl Moment {
    fn of(v: &Value) -> Option<Moment> {
        match v {
            Value::Bool(b) => Some(Moment::Scalar(if *b { 1.0 } else { 0.0 })),
            Value::Pair(p) => Some(Moment::List(vec![Moment::of(&p.0)?, Moment::of(&p.1)?])),
            Value::Array(xs) => xs
                .iter()
                .map(Moment::of)
                .collect::<Option<Vec<_>>>()
                .map(Moment::List),
            other => other.as_f64().map(Moment::Scalar),
        }
    }

    fn zeros_like(&self) -> Moment {
        match self {
            Moment::Scalar(_) => Moment::Scalar(0.0),
            Moment::List(xs) => Moment::List(xs.iter().map(Moment::zeros_like).collect()),
        }
    }

    fn same_shape(&self, other: &Moment) -> bool {
        match (self, other) {
            (Moment::Scalar(_), Moment::Scalar(_)) => true,
            (Moment::List(a), Moment::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_shape(y))
            }
            _ => false,
        }
    }

    /// `self += w * f(x)` element-wise, where `f` sees the element of `x` and of `mean`.
    fn accumulate(&mut self, x: &Moment, mean: Option<&Moment>, w: f64) {
        match (self, x) {
            (Moment::Scalar(acc), Moment::Scalar(v)) => {
                let d = match mean {
                    Some(Moment::Scalar(m)) => (v - m) * (v - m),
                    _ => *v,
                };
                *acc += w * d;
            }
            (Moment::List(acc), Moment::List(vs)) => {
                for (i, (a, v)) in acc.iter_mut().zip(vs).enumerate() {
                    let m = match mean {
                        Some(Moment::List(ms)) => ms.get(i),
                        _ => None,
                    };
                    a.accumulate(v, m, w);
                }
            }
            _ => {}
        }
    }

    fn sqrt(&self) -> Moment {
        match self {
            Moment::Scalar(x) => Moment::Scalar(x.max(0.0).sqrt()),
            Moment::List(xs) => Moment::List(xs.iter().map(Moment::sqrt).collect()),
        }
    }

    pub fn to_json(&self) -> Json {
        match self {
            Moment::Scalar(x) => json!(x),
            Moment::List(xs) => Json::Array(xs.iter().map(Moment::to_json).collect()),
        }
    }
}

/// The summary of a set of weighted draws (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mass: f64,
    pub mass_se: f64,
    pub ess: f64,
    pub mean: Option<Moment>,
    pub sd: Option<Moment>,
    pub probs: Option<BTreeMap<String, f64>>,
}

impl Summary {
    pub fn from_samples(samples: &[(Value, f64)]) -> Summary {
        let n = samples.len();
        let lws: Vec<f64> = samples.iter().map(|s| s.1).collect();
        let lse = log_sum_exp(&lws);
        let nf = n as f64;
        let (mass, mass_se, ess) = if n == 0 || lse == f64::NEG_INFINITY || lse.is_nan() {
            (
                if n == 0 { f64::NAN } else { 0.0 },
                if n == 0 { f64::NAN } else { 0.0 },
                0.0,
            )
        } else {
            // Normalised weights p_i = w_i / Σ w; mass = Σw / n.
            let ps: Vec<f64> = lws.iter().map(|l| (l - lse).exp()).collect();
            let mass = (lse - nf.ln()).exp();
            // Sample variance of w_i = mass * n * p_i, computed on the p scale.
            let mean_p = 1.0 / nf;
            let var_p = if n > 1 {
                ps.iter().map(|p| (p - mean_p) * (p - mean_p)).sum::<f64>() / (nf - 1.0)
            } else {
                f64::NAN
            };
            let se = (lse + 0.5 * (var_p / nf).ln()).exp();
            let ess = 1.0 / ps.iter().map(|p| p * p).sum::<f64>();
            (mass, se, ess)
        };

        let positive: Vec<(&Value, f64)> = samples
            .iter()
            .filter(|s| s.1 > f64::NEG_INFINITY && !s.1.is_nan())
            .map(|s| (&s.0, (s.1 - lse).exp()))
            .collect();

        let (mean, sd) = moments(&positive);

        let mut probs = None;
        if !positive.is_empty() {
            let mut table: BTreeMap<String, f64> = BTreeMap::new();
            let mut ok = true;
            for (v, p) in &positive {
                let key = value_to_json(v).to_string();
                if !table.contains_key(&key) && table.len() >= MAX_DISTINCT {
                    ok = false;
                    break;
                }
                *table.entry(key).or_insert(0.0) += p;
            }
            if ok {
                probs = Some(table);
            }
        }
        Summary {
            n,
            mass,
            mass_se,
            ess,
            mean,
            sd,
            probs,
        }
    }

    /// The JSON object with fields `n`, `mass`, `mass_se`, `ess`, `mean`, `sd`, `probs`
    /// (non-finite numbers become `null`).
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("n".into(), json!(self.n));
        m.insert("mass".into(), json!(self.mass));
        m.insert("mass_se".into(), json!(self.mass_se));
        m.insert("ess".into(), json!(self.ess));
        m.insert(
            "mean".into(),
            self.mean.as_ref().map_or(Json::Null, Moment::to_json),
        );
        m.insert(
            "sd".into(),
            self.sd.as_ref().map_or(Json::Null, Moment::to_json),
        );
        m.insert(
            "probs".into(),
            match &self.probs {
                Some(t) => Json::Object(t.iter().map(|(k, v)| (k.clone(), json!(v))).collect()),
                None => Json::Null,
            },
        );
        Json::Object(m)
    }
}

/// The summary as one line of JSON, like `to_json().to_string()` but with the `probs`
/// table in the order of its values ([`value_order`]).
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = self.to_json();
        let Json::Object(fields) = &json else {
            return write!(f, "{json}");
        };
        f.write_str("{")?;
        for (i, (key, value)) in fields.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}:", Json::String(key.clone()))?;
            match (key.as_str(), &self.probs) {
                ("probs", Some(table)) => {
                    let mut entries: Vec<(&String, &f64)> = table.iter().collect();
                    entries.sort_by(|a, b| value_order(a.0, b.0));
                    f.write_str("{")?;
                    for (j, (k, p)) in entries.into_iter().enumerate() {
                        if j > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{}:{}", Json::String(k.clone()), json!(p))?;
                    }
                    f.write_str("}")?;
                }
                _ => write!(f, "{value}")?,
            }
        }
        f.write_str("}")
    }
}

/// The order of two `probs` keys (JSON texts of values) by what they denote: numbers
/// (and the strings `"-inf"`, `"inf"`, `"nan"` that stand for non-finite ones) by value,
/// booleans `false` first, arrays (arrays and pairs) lexicographically, element by element
/// and then by length; values of different kinds, or text that is not JSON, by kind and
/// then by text, so that the order is total and deterministic.
pub fn value_order(a: &str, b: &str) -> Ordering {
    match (
        serde_json::from_str::<Json>(a),
        serde_json::from_str::<Json>(b),
    ) {
        (Ok(x), Ok(y)) => json_order(&x, &y).then_with(|| a.cmp(b)),
        _ => a.cmp(b),
    }
}

fn json_order(a: &Json, b: &Json) -> Ordering {
    match (a, b) {
        (Json::Array(xs), Json::Array(ys)) => xs
            .iter()
            .zip(ys)
            .map(|(x, y)| json_order(x, y))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| xs.len().cmp(&ys.len())),
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => kind_rank(a).cmp(&kind_rank(b)),
        },
    }
}

/// A JSON value as the number it stands for, if it is one (booleans are 0 and 1).
fn as_number(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::Bool(b) => Some(f64::from(u8::from(*b))),
        Json::String(s) => match s.as_str() {
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            "nan" => Some(f64::NAN),
            _ => None,
        },
        _ => None,
    }
}

fn kind_rank(v: &Json) -> u8 {
    match v {
        Json::Null => 0,
        Json::Bool(_) => 1,
        Json::Number(_) => 2,
        Json::String(_) => 3,
        Json::Array(_) => 4,
        Json::Object(_) => 5,
    }
}

/// Self-normalised weighted mean and (population) standard deviation.
fn moments(samples: &[(&Value, f64)]) -> (Option<Moment>, Option<Moment>) {
    let mut feats = Vec::with_capacity(samples.len());
    for (v, p) in samples {
        let Some(f) = Moment::of(v) else {
            return (None, None);
        };
        feats.push((f, *p));
    }
    let Some((first, _)) = feats.first() else {
        return (None, None);
    };
    if !feats.iter().all(|(f, _)| f.same_shape(first)) {
        return (None, None);
    }
    let mut mean = first.zeros_like();
    for (f, p) in &feats {
        mean.accumulate(f, None, *p);
    }
    let mut var = first.zeros_like();
    for (f, p) in &feats {
        var.accumulate(f, Some(&mean), *p);
    }
    let sd = var.sqrt();
    (Some(mean), Some(sd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_moments_and_mass() {
        let s = Summary::from_samples(&[
            (Value::Real(1.0), 0.0),
            (Value::Real(3.0), 0.0),
            (Value::Real(100.0), f64::NEG_INFINITY),
        ]);
        assert_eq!(s.n, 3);
        assert!((s.mass - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(s.mean, Some(Moment::Scalar(2.0)));
        assert_eq!(s.sd, Some(Moment::Scalar(1.0)));
        let probs = s.probs.unwrap_or_default();
        assert_eq!(probs.get("1.0"), Some(&0.5));
        assert_eq!(probs.len(), 2);
    }

    #[test]
    fn huge_log_weights_do_not_overflow() {
        let s = Summary::from_samples(&[
            (Value::Bool(true), 1000.0),
            (Value::Bool(false), 1000.0 + 3f64.ln()),
        ]);
        let Some(Moment::Scalar(m)) = s.mean else {
            panic!("no mean: {s:?}");
        };
        assert!((m - 0.25).abs() < 1e-12, "{m}");
        assert!(s.mass.is_infinite());
    }

    /// The keys of `probs` in the order the printed summary lists them (read with a small
    /// scanner: a JSON parser would sort them).
    fn printed_keys(samples: &[(Value, f64)]) -> Vec<String> {
        let text = Summary::from_samples(samples).to_string();
        let Some(start) = text.find("\"probs\":{") else {
            return Vec::new();
        };
        let mut keys = Vec::new();
        let mut chars = text[start + 9..].chars();
        while let Some(c) = chars.next() {
            match c {
                '}' => break,
                '"' => {
                    // a key: a JSON string, escapes included
                    let mut raw = String::from('"');
                    let mut escaped = false;
                    for k in chars.by_ref() {
                        raw.push(k);
                        if k == '"' && !escaped {
                            break;
                        }
                        escaped = k == '\\' && !escaped;
                    }
                    keys.push(serde_json::from_str::<String>(&raw).unwrap_or(raw));
                    // skip `:` and the number up to `,` or `}`
                    for k in chars.by_ref() {
                        match k {
                            ',' => break,
                            '}' => return keys,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        keys
    }

    #[test]
    fn printed_probs_sort_by_value() {
        let nat = |k: u64| (Value::Nat(k), 0.0);
        let keys = printed_keys(&[nat(10), nat(2), nat(1), nat(2), nat(0)]);
        assert_eq!(keys, ["0", "1", "2", "10"]);
        let real = |x: f64| (Value::Real(x), 0.0);
        let keys = printed_keys(&[real(10.5), real(-2.0), real(9.0), real(f64::INFINITY)]);
        assert_eq!(keys, ["-2.0", "9.0", "10.5", "\"inf\""]);
        let pair = |a: u64, b: u64| (Value::pair(Value::Nat(a), Value::Nat(b)), 0.0);
        let keys = printed_keys(&[pair(10, 1), pair(2, 30), pair(2, 4)]);
        assert_eq!(keys, ["[2,4]", "[2,30]", "[10,1]"]);
        let arr = |xs: &[u64]| {
            (
                Value::array(xs.iter().map(|&x| Value::Nat(x)).collect()),
                0.0,
            )
        };
        let keys = printed_keys(&[arr(&[3, 1]), arr(&[3]), arr(&[11]), arr(&[2, 100])]);
        assert_eq!(keys, ["[2,100]", "[3]", "[3,1]", "[11]"]);
    }

    #[test]
    fn printed_summary_is_the_json_object() {
        let s = Summary::from_samples(&[(Value::Nat(10), 0.0), (Value::Nat(9), 0.5)]);
        let reread: Json = serde_json::from_str(&s.to_string()).unwrap_or(Json::Null);
        assert_eq!(reread, s.to_json());
    }

    #[test]
    fn arrays_pairs_and_shapes() {
        let a = |x: f64, y: f64| Value::array(vec![Value::Real(x), Value::Real(y)]);
        let s = Summary::from_samples(&[(a(1.0, 2.0), 0.0), (a(3.0, 6.0), 0.0)]);
        assert_eq!(
            s.mean,
            Some(Moment::List(vec![Moment::Scalar(2.0), Moment::Scalar(4.0)]))
        );
        let ragged = Summary::from_samples(&[(a(1.0, 2.0), 0.0), (Value::array(vec![]), 0.0)]);
        assert_eq!(ragged.mean, None);
        let zero = Summary::from_samples(&[(Value::Real(1.0), f64::NEG_INFINITY)]);
        assert_eq!(zero.mass, 0.0);
        assert_eq!(zero.mean, None);
        assert_eq!(zero.to_json()["mean"], Json::Null);
        let units = Summary::from_samples(&[(Value::Unit, 0.0)]);
        assert_eq!(units.mean, None);
        assert_eq!(units.probs.map(|p| p.len()), Some(1));
    }
}
