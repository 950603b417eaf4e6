//! `slic-cas run` and `slic-cas emit`: a program through slic-codegen's pipeline, then run
//! by the loop IR's interpreter or by a compiled C or Rust kernel (specialised on the
//! arguments unless `--no-specialise`), or written out as a kernel's source. This file is
//! glue: arguments are read by the reference semantics' JSON reader and converted to the
//! IR's values, results are converted back to be printed by the same JSON writer, so
//! `run` and `sample` spell values alike; emission, compilation, exact enumeration over
//! kernels and the timing of `--bench` are slic-codegen's.

use std::io::Write;
use std::time::Instant;

use serde_json::{json, Map, Value as Json};
use slic_codegen::{
    Bench, CompileError, CompileOptions, Compiled, EmitError, KernelError, Mode, Outcome,
    Specialise, Stats, Target, Val,
};
use slic_semantics::Value;

use crate::args::{Backend, EmitArgs, EmitTarget, RunArgs};
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
    let lowered = slic_codegen::lower_program(&mut l.store, l.term, passes(a.passes))
        .map_err(|e| pipeline_failure(&name, e))?;
    let p = &lowered.program;
    let args: Vec<Val> = values
        .iter()
        .map(to_val)
        .collect::<Option<_>>()
        .ok_or_else(|| user("an argument has a type the loop IR does not hold".into()))?;
    // a measure that is sampled is also shown as what is left to sample: its parameters
    // evaluated (issue 12: LinearRegression's posterior, a gamma and two normals)
    let residual = (p.measure && !slic_codegen::enumerable(p))
        .then(|| slic_semantics::residual(&mut l.store, l.term, &values))
        .flatten()
        .map(|r| {
            let opts = slic_algebra::print::PrintOptions {
                decimals: true,
                ..Default::default()
            };
            slic_algebra::print::print_with(&l.store, r, &opts)
        });
    let target = match a.backend {
        Backend::Interp => None,
        Backend::C => Some(Target::C),
        Backend::Rust => Some(Target::Rust),
    };
    let kernel = match target {
        None => None,
        Some(t) => {
            let spec = if a.no_specialise {
                Specialise::default()
            } else {
                Specialise::all(args.len())
            };
            let k = Compiled::build(p, t, &spec, Some(&args), &CompileOptions::default())
                .map_err(|e| kernel_failure(&name, e))?;
            Some(k)
        }
    };
    let solve = || -> Result<Ran, Failure> {
        if let Some(k) = &kernel {
            return if p.measure && slic_codegen::enumerable(p) {
                k.enumerate(&args, MAX_PATHS)
                    .map(|e| Ran::Measure(Outcome::Exact(e)))
                    .map_err(|e| kernel_failure(&name, e))
            } else if p.measure {
                let n = usize::try_from(a.samples).map_err(|_| user("too many samples".into()))?;
                k.sample(&args, n, a.seed)
                    .map(|s| Ran::Measure(Outcome::Sampled(s)))
                    .map_err(|e| kernel_failure(&name, e))
            } else {
                k.run(&args)
                    .map(|v| Ran::Value(v, Stats::default()))
                    .map_err(|e| kernel_failure(&name, e))
            };
        }
        if !p.measure {
            let (v, stats) = slic_codegen::run(p, &args).map_err(|e| user(e.to_string()))?;
            return Ok(Ran::Value(v, stats));
        }
        let mode = if slic_codegen::enumerable(p) {
            Mode::Exact {
                max_paths: MAX_PATHS,
            }
        } else {
            let n = usize::try_from(a.samples).map_err(|_| user("too many samples".into()))?;
            Mode::Sample { n, seed: a.seed }
        };
        slic_codegen::run_measure(p, &args, mode)
            .map(Ran::Measure)
            .map_err(|e| user(e.to_string()))
    };
    let started = Instant::now();
    let outcome = solve()?;
    let seconds = started.elapsed().as_secs_f64();
    let mut obj = Map::new();
    match &outcome {
        Ran::Value(v, _) => {
            obj.insert("value".into(), to_json(v));
        }
        Ran::Measure(Outcome::Exact(e)) => {
            obj.insert("mass".into(), json_number(e.mass()));
            obj.insert("log_mass".into(), json_number(e.ln_mass));
            let mut probs = Map::new();
            for (v, p) in e.probabilities() {
                probs.insert(to_json(&v).to_string(), json_number(p));
            }
            obj.insert("probs".into(), Json::Object(probs));
        }
        Ran::Measure(Outcome::Sampled(s)) => {
            let ln_mass = s.ln_mass();
            obj.insert("mass".into(), json_number(ln_mass.exp()));
            obj.insert("log_mass".into(), json_number(ln_mass));
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
            if let Some(r) = &residual {
                obj.insert("residual".into(), Json::String(r.trim_end().to_string()));
            }
        }
    }
    if a.stats && kernel.is_some() {
        // a kernel counts no work: only its time
        obj.insert("stats".into(), json!({ "seconds": json_number(seconds) }));
    } else if a.stats {
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
    if let Some(n) = a.bench {
        let b = Bench::measure(n, || solve().map(|_| ()))?;
        obj.insert(
            "bench".into(),
            json!({
                "solves": b.solves,
                "median_us": json_number(b.median_us),
                "min_us": json_number(b.min_us),
                "max_us": json_number(b.max_us),
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

/// The human-readable form: a sampled measure's residual, one line per probability or
/// sample, then the mass, then the work counted.
fn print_plain(out: &mut impl Write, obj: &Map<String, Json>) -> std::io::Result<()> {
    if let Some(Json::String(r)) = obj.get("residual") {
        writeln!(
            out,
            "residual (the parameters evaluated; reals to {} significant digits):",
            slic_semantics::residual::SIGNIFICANT
        )?;
        writeln!(out, "{r}")?;
        writeln!(out, "samples:")?;
    }
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
        // a mass beyond f64 (0 or infinite from a finite logarithm) as the residual writes
        // it: exp(l)
        let beyond = match (m.as_f64(), obj.get("log_mass").and_then(Json::as_f64)) {
            (Some(v), Some(l)) if v == 0.0 || v.is_infinite() => {
                slic_semantics::residual::number_text(&Value::Prob(l), &slic_algebra::Type::Prob)
            }
            _ => None,
        };
        match beyond {
            Some(text) => writeln!(out, "mass: {text}")?,
            None => writeln!(out, "mass: {m}")?,
        }
    }
    if let Some(Json::Object(st)) = obj.get("stats") {
        let field = |k: &str| st.get(k).map_or_else(String::new, ToString::to_string);
        if st.contains_key("iterations") {
            writeln!(
                out,
                "iterations: {}, array reads: {}, allocations: {}, seconds: {}",
                field("iterations"),
                field("array_reads"),
                field("allocations"),
                field("seconds")
            )?;
        } else {
            writeln!(out, "seconds: {}", field("seconds"))?;
        }
    }
    if let Some(Json::Object(b)) = obj.get("bench") {
        let field = |k: &str| b.get(k).map_or_else(String::new, ToString::to_string);
        writeln!(
            out,
            "bench: {} solves, median {} us, min {} us, max {} us",
            field("solves"),
            field("median_us"),
            field("min_us"),
            field("max_us")
        )?;
    }
    Ok(())
}

/// `emit`: the lowered program as a C or Rust kernel, to stdout or `-o FILE`.
pub fn emit(a: &EmitArgs) -> Result<(), Failure> {
    let mut l = load_runnable(&a.file)?;
    let name = a.file.display().to_string();
    let lowered = slic_codegen::lower_program(&mut l.store, l.term, passes(a.passes))
        .map_err(|e| pipeline_failure(&name, e))?;
    let target = match a.target {
        EmitTarget::C => Target::C,
        EmitTarget::Rust => Target::Rust,
    };
    let emitted = slic_codegen::emit(&lowered.program, target)
        .map_err(|e| kernel_failure(&name, KernelError::Emit(e)))?;
    match &a.output {
        Some(path) => std::fs::write(path, &emitted.source)
            .map_err(|e| Failure::User(format!("error: cannot write {}: {e}", path.display())))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(emitted.source.as_bytes())?;
        }
    }
    Ok(())
}

/// A kernel's failure: the user's to know (exit 1) unless slic-codegen broke its own
/// output (a template that does not render, a kernel the compiler rejects).
pub(crate) fn kernel_failure(name: &str, e: KernelError) -> Failure {
    match &e {
        KernelError::Emit(EmitError::Internal(_))
        | KernelError::Compile(CompileError::Failed { .. }) => {
            Failure::Internal(anyhow::anyhow!("{name}: {e}"))
        }
        _ => Failure::User(format!("error: {name}: {e}")),
    }
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
