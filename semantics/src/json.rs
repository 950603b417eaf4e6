//! Values to and from JSON, for data files and results.
//!
//! The encoding (both directions):
//! - nat, int: JSON integers; prob, real: JSON numbers (prob on the linear scale).
//!   Non-finite numbers, which JSON lacks, are the strings `"inf"`, `"-inf"`, `"nan"`.
//!   On input a nat or int may also be written as an integral float (`3.0`).
//! - bool: `true`/`false`; unit: `[]`.
//! - pair: a 2-element array `[a, b]`; array: a JSON array.
//! - either: `{"left": v}` or `{"right": v}`; maybe: `{"just": v}` or `null` (nothing).
//! - functions and measures have no data encoding: they are written as the strings
//!   `"<function>"` and `"<measure>"`, and reading one is an error.
//!
//! Reading checks the value against the expected [`Type`] and reports a mismatch with a
//! message naming the expected type and the path to the offending element.

use serde_json::{Map, Number, Value as Json};
use slic_algebra::Type;

use crate::value::Value;

fn number(x: f64) -> Json {
    match Number::from_f64(x) {
        Some(n) => Json::Number(n),
        None => Json::String(
            if x.is_nan() {
                "nan"
            } else if x > 0.0 {
                "inf"
            } else {
                "-inf"
            }
            .to_string(),
        ),
    }
}

fn tagged(tag: &str, v: &Value) -> Json {
    let mut m = Map::new();
    m.insert(tag.to_string(), value_to_json(v));
    Json::Object(m)
}

/// The JSON encoding of a value (see the module doc).
pub fn value_to_json(v: &Value) -> Json {
    match v {
        Value::Nat(n) => Json::Number(Number::from(*n)),
        Value::Int(i) => Json::Number(Number::from(*i)),
        Value::Prob(l) => number(l.exp()),
        Value::Real(x) => number(*x),
        Value::Bool(b) => Json::Bool(*b),
        Value::Unit => Json::Array(Vec::new()),
        Value::Pair(p) => Json::Array(vec![value_to_json(&p.0), value_to_json(&p.1)]),
        Value::Left(x) => tagged("left", x),
        Value::Right(x) => tagged("right", x),
        Value::Just(x) => tagged("just", x),
        Value::Nothing => Json::Null,
        Value::Array(xs) => Json::Array(xs.iter().map(value_to_json).collect()),
        Value::Closure(_) => Json::String("<function>".to_string()),
        Value::Measure(_) => Json::String("<measure>".to_string()),
    }
}

fn short(j: &Json) -> String {
    let s = j.to_string();
    if s.chars().count() > 40 {
        let head: String = s.chars().take(37).collect();
        format!("{head}...")
    } else {
        s
    }
}

fn float_of(j: &Json) -> Option<f64> {
    match j {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "inf" | "+inf" | "∞" => Some(f64::INFINITY),
            "-inf" | "-∞" => Some(f64::NEG_INFINITY),
            "nan" => Some(f64::NAN),
            _ => None,
        },
        _ => None,
    }
}

/// Reads a value of type `ty` (see the module doc for the encoding).
pub fn value_from_json(j: &Json, ty: &Type) -> Result<Value, String> {
    read(j, ty, "")
}

fn read(j: &Json, ty: &Type, path: &str) -> Result<Value, String> {
    let fail = |what: &str| {
        let at = if path.is_empty() {
            String::new()
        } else {
            format!(" at {path}")
        };
        Err(format!("expected {what}{at}, found {}", short(j)))
    };
    match ty {
        Type::Nat => {
            if let Some(n) = j.as_u64() {
                return Ok(Value::Nat(n));
            }
            match j.as_f64() {
                Some(x) if x >= 0.0 && x.fract() == 0.0 && x < 1.8446744073709552e19 => {
                    Ok(Value::Nat(x as u64))
                }
                _ => fail("nat (a non-negative integer)"),
            }
        }
        Type::Int => {
            if let Some(i) = j.as_i64() {
                return Ok(Value::Int(i));
            }
            match j.as_f64() {
                Some(x) if x.fract() == 0.0 && (-9.2e18..9.2e18).contains(&x) => {
                    Ok(Value::Int(x as i64))
                }
                _ => fail("int (an integer)"),
            }
        }
        Type::Prob => match float_of(j) {
            Some(x) if x >= 0.0 => Ok(Value::Prob(x.ln())),
            _ => fail("prob (a non-negative number)"),
        },
        Type::Real => match float_of(j) {
            Some(x) => Ok(Value::Real(x)),
            None => fail("real (a number)"),
        },
        Type::Bool => match j {
            Json::Bool(b) => Ok(Value::Bool(*b)),
            _ => fail("bool (true or false)"),
        },
        Type::Unit => match j {
            Json::Array(xs) if xs.is_empty() => Ok(Value::Unit),
            _ => fail("unit ([])"),
        },
        Type::Array(t) => match j {
            Json::Array(xs) => {
                let mut out = Vec::with_capacity(xs.len());
                for (i, x) in xs.iter().enumerate() {
                    out.push(read(x, t, &format!("{path}[{i}]"))?);
                }
                Ok(Value::array(out))
            }
            _ => fail(&format!("{ty} (a JSON array)")),
        },
        Type::Pair(a, b) => match j {
            Json::Array(xs) if xs.len() == 2 => Ok(Value::pair(
                read(&xs[0], a, &format!("{path}[0]"))?,
                read(&xs[1], b, &format!("{path}[1]"))?,
            )),
            _ => fail(&format!("{ty} (a 2-element array)")),
        },
        Type::Either(a, b) => match j {
            Json::Object(m) if m.len() == 1 => {
                if let Some(x) = m.get("left") {
                    Ok(Value::Left(read(x, a, &format!("{path}.left"))?.into()))
                } else if let Some(x) = m.get("right") {
                    Ok(Value::Right(read(x, b, &format!("{path}.right"))?.into()))
                } else {
                    fail(&format!("{ty} ({{\"left\": v}} or {{\"right\": v}})"))
                }
            }
            _ => fail(&format!("{ty} ({{\"left\": v}} or {{\"right\": v}})")),
        },
        Type::Maybe(t) => match j {
            Json::Null => Ok(Value::Nothing),
            Json::Object(m) if m.len() == 1 && m.contains_key("just") => match m.get("just") {
                Some(x) => Ok(Value::Just(read(x, t, &format!("{path}.just"))?.into())),
                None => fail(&format!("{ty} ({{\"just\": v}} or null)")),
            },
            _ => fail(&format!("{ty} ({{\"just\": v}} or null)")),
        },
        Type::Measure(_) | Type::Fun(..) => Err(format!(
            "cannot read a value of type {ty} from JSON: only data values can be given as input"
        )),
    }
}

/// The arguments of a program of type `program` (`T1 -> T2 -> ... -> R`), read from the
/// JSON array `text` (what `--args` and a corpus file's `# args:` header hold): one value
/// per parameter, each read at its type. `origin` names where the text came from in the
/// message of an error. The one decoder of argument lists: the commands, the tests and
/// the benchmarks all call it.
pub fn args_from_json(text: &str, origin: &str, program: &Type) -> Result<Vec<Value>, String> {
    let items = match serde_json::from_str::<Json>(text) {
        Ok(Json::Array(items)) => items,
        Ok(_) => {
            return Err(format!(
                "{origin} must be a JSON array of the program's arguments"
            ))
        }
        Err(e) => return Err(format!("{origin} is not valid JSON: {e}")),
    };
    args_from_values(&items, program)
}

/// [`args_from_json`] on an array already parsed.
pub fn args_from_values(items: &[Json], program: &Type) -> Result<Vec<Value>, String> {
    let (params, _) = program.parameter_types();
    if items.len() != params.len() {
        let want = params.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        return Err(format!(
            "the program takes {} argument{} ({}), {} given",
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            want.join(", "),
            items.len()
        ));
    }
    items
        .iter()
        .zip(&params)
        .enumerate()
        .map(|(i, (j, t))| value_from_json(j, t).map_err(|e| format!("argument {}: {e}", i + 1)))
        .collect()
}

/// Argument values as one JSON array, as `--args` takes them.
pub fn args_to_json(values: &[Value]) -> String {
    Json::Array(values.iter().map(value_to_json).collect()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(j: Json, ty: Type, expect: Result<&str, &str>) {
        match (value_from_json(&j, &ty), expect) {
            (Ok(v), Ok(text)) => {
                assert_eq!(value_to_json(&v).to_string(), text, "{j} : {ty}");
            }
            (Err(e), Err(msg)) => assert!(e.contains(msg), "{e:?} lacks {msg:?}"),
            (got, want) => panic!("{j} : {ty}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn round_trips_and_rejections() {
        use Type::*;
        check(json!(3), Nat, Ok("3"));
        check(json!(3.0), Nat, Ok("3"));
        check(json!(-3), Nat, Err("expected nat"));
        check(json!(1.5), Int, Err("expected int"));
        check(json!(-3), Int, Ok("-3"));
        check(json!(0.25), Prob, Ok("0.25"));
        check(json!(-0.25), Prob, Err("expected prob"));
        check(json!("inf"), Prob, Ok("\"inf\""));
        check(json!(-1.5), Real, Ok("-1.5"));
        check(json!(true), Bool, Ok("true"));
        check(json!(1), Bool, Err("expected bool"));
        check(json!([]), Unit, Ok("[]"));
        check(json!([1, 2]), Type::array(Nat), Ok("[1,2]"));
        check(json!([1, -2]), Type::array(Nat), Err("at [1]"));
        check(json!([1, 2.5]), Type::pair(Nat, Real), Ok("[1,2.5]"));
        check(json!([1]), Type::pair(Nat, Real), Err("2-element"));
        check(
            json!({"left": 1}),
            Type::either(Nat, Bool),
            Ok("{\"left\":1}"),
        );
        check(
            json!({"right": true}),
            Type::either(Nat, Bool),
            Ok("{\"right\":true}"),
        );
        check(
            json!({"up": 1}),
            Type::either(Nat, Bool),
            Err("expected either"),
        );
        check(json!(null), Type::maybe(Nat), Ok("null"));
        check(json!({"just": 2}), Type::maybe(Nat), Ok("{\"just\":2}"));
        check(json!(1), Type::measure(Nat), Err("cannot read"));
        check(json!("x"), Type::fun(Nat, Nat), Err("cannot read"));
    }
}
