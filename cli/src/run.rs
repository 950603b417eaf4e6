//! `slic-cas run`: a program evaluated through slic-codegen's pipeline and the loop IR's
//! interpreter (the only backend until kernels exist). This file is glue: arguments are
//! read by the reference semantics' JSON reader and converted to the IR's values, results
//! are converted back to be printed by the same JSON writer, so `run` and `sample` spell
//! values alike.

use std::io::Write;
use std::time::Instant;

use serde_json::{json, Map, Value as Json};
use slic_codegen::{Mode, Outcome, Stats, Val};
use slic_semantics::Value;

use crate::args::{Backend, RunArgs};
use crate::commands::{args_text, json_number, load_runnable, passes, pipeline_failure, Failure};

/// How many paths exact enumeration may follow before the program counts as too large.
const MAX_PATHS: u64 = 1 << 20;

pub fn run(a: &RunArgs) -> Result<(), Failure> {
    let mut l = load_runnable(&a.file)?;
    let name = a.file.display().to_string();
    let user = |msg: String| Failure::User(format!("error: {name}: {msg}"));
    let ty = l.store.ty(l.term).clone();
    let values = match a.args.as_deref() {
        None => slic_semantics::args_from_values(&[], &ty),
        Some(arg) => args_text(arg)
            .and_then(|(text, origin)| slic_semantics::args_from_json(&text, &origin, &ty)),
    }
    .map_err(user)?;
    // the IR's interpreter is the only backend until compiled kernels exist (issue 12)
    let Backend::Interp = a.backend;
    let lowered = slic_codegen::lower_program(&mut l.store, l.term, passes(a.passes))
        .map_err(|e| pipeline_failure(&name, e))?;
    let p = &lowered.program;
    let args: Vec<Val> = values
        .iter()
        .map(to_val)
        .collect::<Option<_>>()
        .ok_or_else(|| user("an argument has a type the loop IR does not hold".into()))?;
    let started = Instant::now();
    let outcome = if !p.measure {
        let (v, stats) = slic_codegen::run(p, &args).map_err(|e| user(e.to_string()))?;
        Ran::Value(v, stats)
    } else if slic_codegen::enumerable(p) {
        let mode = Mode::Exact {
            max_paths: MAX_PATHS,
        };
        Ran::Measure(slic_codegen::run_measure(p, &args, mode).map_err(|e| user(e.to_string()))?)
    } else {
        let n = usize::try_from(a.samples).map_err(|_| user("too many samples".into()))?;
        let mode = Mode::Sample { n, seed: a.seed };
        Ran::Measure(slic_codegen::run_measure(p, &args, mode).map_err(|e| user(e.to_string()))?)
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut obj = Map::new();
    match &outcome {
        Ran::Value(v, _) => {
            obj.insert("value".into(), to_json(v));
        }
        Ran::Measure(Outcome::Exact(e)) => {
            obj.insert("mass".into(), json_number(e.mass()));
            let mut probs = Map::new();
            for (v, p) in e.probabilities() {
                probs.insert(to_json(&v).to_string(), json_number(p));
            }
            obj.insert("probs".into(), Json::Object(probs));
        }
        Ran::Measure(Outcome::Sampled(s)) => {
            let n = s.samples.len().max(1) as f64;
            let mass = s.samples.iter().map(|d| d.ln_w.exp()).sum::<f64>() / n;
            obj.insert("mass".into(), json_number(mass));
            let samples = s
                .samples
                .iter()
                .map(|d| {
                    json!({
                        "value": d.value.as_ref().map_or(Json::Null, to_json),
                        "log_weight": json_number(d.ln_w),
                    })
                })
                .collect();
            obj.insert("samples".into(), Json::Array(samples));
        }
    }
    if a.stats {
        let st = match &outcome {
            Ran::Value(_, st) => *st,
            Ran::Measure(o) => o.stats(),
        };
        obj.insert(
            "stats".into(),
            json!({
                "iterations": st.iterations,
                "array_reads": st.array_reads,
                "allocations": st.allocations,
                "seconds": json_number(seconds),
            }),
        );
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if a.json {
        writeln!(out, "{}", Json::Object(obj))?;
    } else {
        print_plain(&mut out, &obj)?;
    }
    out.flush()?;
    Ok(())
}

/// What the interpreter gave: a value, or a measure's distribution or samples.
enum Ran {
    Value(Val, Stats),
    Measure(Outcome),
}

/// The human-readable form: one line per probability or sample, then the mass, then the
/// work counted.
fn print_plain(out: &mut impl Write, obj: &Map<String, Json>) -> std::io::Result<()> {
    if let Some(v) = obj.get("value") {
        writeln!(out, "{v}")?;
    }
    if let Some(Json::Object(probs)) = obj.get("probs") {
        for (k, p) in probs {
            writeln!(out, "{k}: {p}")?;
        }
    }
    if let Some(Json::Array(samples)) = obj.get("samples") {
        for s in samples {
            writeln!(out, "{s}")?;
        }
    }
    if let Some(m) = obj.get("mass") {
        writeln!(out, "mass: {m}")?;
    }
    if let Some(Json::Object(st)) = obj.get("stats") {
        let field = |k: &str| st.get(k).map_or_else(String::new, ToString::to_string);
        writeln!(
            out,
            "iterations: {}, array reads: {}, allocations: {}, seconds: {}",
            field("iterations"),
            field("array_reads"),
            field("allocations"),
            field("seconds")
        )?;
    }
    Ok(())
}

/// An argument as the IR's value (`None` for kinds the IR does not hold).
fn to_val(v: &Value) -> Option<Val> {
    Some(match v {
        Value::Nat(n) => Val::Nat(*n),
        Value::Int(n) => Val::Int(*n),
        Value::Real(x) => Val::Real(*x),
        Value::Prob(l) => Val::Prob(*l),
        Value::Bool(b) => Val::Bool(*b),
        Value::Array(xs) => Val::array(xs.iter().map(to_val).collect::<Option<_>>()?),
        Value::Pair(p) => Val::pair(to_val(&p.0)?, to_val(&p.1)?),
        _ => return None,
    })
}

/// A result as the reference semantics' value, for its JSON writer.
fn to_value(v: &Val) -> Value {
    match v {
        Val::Nat(n) => Value::Nat(*n),
        Val::Int(n) => Value::Int(*n),
        Val::Real(x) => Value::Real(*x),
        Val::Prob(l) => Value::Prob(*l),
        Val::Bool(b) => Value::Bool(*b),
        Val::Array(xs) => Value::Array(xs.iter().map(to_value).collect()),
        Val::Pair(p) => Value::pair(to_value(&p.0), to_value(&p.1)),
        Val::Unit => Value::Unit,
    }
}

fn to_json(v: &Val) -> Json {
    slic_semantics::value_to_json(&to_value(v))
}
