//! The commands: each reads its input, calls the library, and prints. User mistakes come
//! back as [`Failure::User`] with a rendered message (exit 1); anything else is a bug
//! ([`Failure::Internal`], exit 2).

use std::io::Write;
use std::path::Path;

use slic_algebra::{front, print, Store, TermId};

use crate::args::{Cli, Command, EquivArgs, FmtArgs, SampleArgs, SimplifyArgs};
use crate::report;

/// Why a command did not succeed.
pub enum Failure {
    /// The input or the arguments are wrong; the message is ready to print.
    User(String),
    /// A bug in slic-cas.
    Internal(anyhow::Error),
    /// The command has printed its answer and ends with this exit code (`equiv`:
    /// 1 different, 3 unknown).
    Exit(u8),
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        // writing to stdout failed (e.g. a closed pipe): not the input's fault
        Failure::Internal(e.into())
    }
}

pub fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Check(a) => check(&a.file),
        Command::Fmt(a) => fmt(&a),
        Command::Simplify(a) => simplify(&a),
        Command::Sample(a) => sample(&a),
        Command::Equiv(a) => equiv(&a),
    }
}

/// A program read from a file and elaborated into `store`.
struct Loaded {
    store: Store,
    term: TermId,
}

fn load(path: &Path) -> Result<Loaded, Failure> {
    let mut store = Store::new();
    let term = load_into(&mut store, path)?;
    Ok(Loaded { store, term })
}

/// Reads and elaborates a program into an existing store (so that two programs can be
/// compared); errors are rendered `file:line:col` diagnostics.
fn load_into(store: &mut Store, path: &Path) -> Result<TermId, Failure> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::User(format!("error: cannot read {name}: {e}")))?;
    front::load_bytes(store, &bytes).map_err(|diagnostics| {
        let text = String::from_utf8_lossy(&bytes);
        Failure::User(report::render(&name, &text, &diagnostics))
    })
}

fn check(path: &Path) -> Result<(), Failure> {
    let l = load(path)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", l.store.ty(l.term))?;
    Ok(())
}

fn fmt(a: &FmtArgs) -> Result<(), Failure> {
    let l = load(&a.file)?;
    let options = print::PrintOptions {
        ascii: a.ascii,
        ..print::PrintOptions::default()
    };
    let text = print::print_with(&l.store, l.term, &options);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

fn simplify(a: &SimplifyArgs) -> Result<(), Failure> {
    let mut l = load(&a.file)?;
    let config = slic_measure::SimplifyConfig {
        deadline: a
            .timeout
            .and_then(|d| std::time::Instant::now().checked_add(d)),
    };
    let result = slic_measure::simplify(&mut l.store, l.term, &config);
    for note in &result.notes {
        eprintln!("note: {note}");
    }
    let simplified = result.term;
    // the output must be a well-typed term of the input's type: anything else is a bug
    if let Err(e) = slic_algebra::verify::verify(&l.store, simplified) {
        return Err(Failure::Internal(anyhow::anyhow!(
            "simplify produced an ill-typed term: {e}"
        )));
    }
    if l.store.ty(simplified) != l.store.ty(l.term) {
        return Err(Failure::Internal(anyhow::anyhow!(
            "simplify changed the type from {} to {}",
            l.store.ty(l.term),
            l.store.ty(simplified)
        )));
    }
    let options = print::PrintOptions {
        ascii: a.ascii,
        ..print::PrintOptions::default()
    };
    let text = print::print_with(&l.store, simplified, &options);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// The interpreter's recursion depth on the worker thread's 512 MiB stack (the library
/// default suits a 2 MiB test thread).
const SAMPLE_MAX_DEPTH: usize = 50_000;

fn sample(a: &SampleArgs) -> Result<(), Failure> {
    let l = load(&a.file)?;
    let name = a.file.display().to_string();
    let user = |msg: String| Failure::User(format!("error: {name}: {msg}"));
    let args = read_args(a.args.as_deref()).map_err(user)?;
    let params = parameter_types(l.store.ty(l.term));
    let values = argument_values(&args, &params).map_err(user)?;

    let config = slic_measure::EvalConfig {
        max_depth: SAMPLE_MAX_DEPTH,
        ..slic_measure::EvalConfig::default()
    };
    let mut interp = slic_measure::Interp::new(&l.store, config);
    let eval_error = |e: slic_measure::EvalError| user(e.to_string());
    let program = interp
        .eval(l.term, &slic_measure::Env::new())
        .map_err(eval_error)?;
    let measure = interp.apply_args(&program, &values).map_err(eval_error)?;
    if !matches!(measure, slic_measure::Value::Measure(_)) {
        let mut t = l.store.ty(l.term);
        for _ in &params {
            if let slic_algebra::Type::Fun(_, r) = t {
                t = r;
            }
        }
        return Err(user(format!(
            "only measures can be sampled; the program's result has type {t}"
        )));
    }

    let mut rng = slic_measure::Rng::seed_from_u64(a.seed);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if a.summary {
        let mut draws = Vec::with_capacity(usize::try_from(a.samples).unwrap_or(0).min(1 << 24));
        for _ in 0..a.samples {
            draws.push(interp.sample(&measure, &mut rng).map_err(eval_error)?);
        }
        let summary = slic_measure::Summary::from_samples(&draws);
        writeln!(out, "{}", summary.to_json())?;
    } else {
        for _ in 0..a.samples {
            let (v, lw) = interp.sample(&measure, &mut rng).map_err(eval_error)?;
            let line = serde_json::json!({
                "value": slic_measure::value_to_json(&v),
                "log_weight": json_number(lw),
            });
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// How long `equiv` lets the simplifier work on each program.
const EQUIV_SIMPLIFY_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// The exit code of `equiv` when the programs differ.
const EXIT_DIFFERENT: u8 = 1;
/// The exit code of `equiv` when neither method could decide.
const EXIT_UNKNOWN: u8 = 3;

/// `slic-cas equiv A B`: symbolic first (same type, then both simplify to alpha-equivalent
/// terms), else `slic_measure::compare` on `--args` and on `--trials` random argument
/// tuples. Prints the evidence of every comparison and a final verdict line.
fn equiv(a: &EquivArgs) -> Result<(), Failure> {
    let mut store = Store::new();
    let first = load_into(&mut store, &a.first)?;
    let second = load_into(&mut store, &a.second)?;
    let (na, nb) = (a.first.display(), a.second.display());
    let (ta, tb) = (store.ty(first).clone(), store.ty(second).clone());
    if ta != tb {
        return Err(Failure::User(format!(
            "error: the programs have different types, so they cannot be equal:\n  {na}: {ta}\n  {nb}: {tb}"
        )));
    }
    let mut out = std::io::stdout().lock();
    // each side's simplification is bounded, so the symbolic phase cannot hold up the
    // numeric one (a stopped simplification is still equivalent, only less simplified)
    let budget = || slic_measure::SimplifyConfig {
        deadline: std::time::Instant::now().checked_add(EQUIV_SIMPLIFY_BUDGET),
    };
    let sa = slic_measure::simplify(&mut store, first, &budget());
    let sb = slic_measure::simplify(&mut store, second, &budget());
    for note in sa.notes.iter().chain(&sb.notes) {
        eprintln!("note: {note}");
    }
    if slic_algebra::alpha::alpha_eq(&store, sa.term, sb.term) {
        writeln!(out, "equal (symbolic: both simplify to the same term)")?;
        return Ok(());
    }

    let user = |msg: String| Failure::User(format!("error: {msg}"));
    let params = parameter_types(&ta);
    // (where from, as shown, the values): `--args` is shown as the user wrote it, since
    // a prob read into log space does not print back digit for digit
    let mut inputs: Vec<(&str, String, Vec<slic_measure::Value>)> = Vec::new();
    if a.args.is_some() {
        let raw = read_args(a.args.as_deref()).map_err(user)?;
        let values = argument_values(&raw, &params).map_err(user)?;
        inputs.push(("--args", serde_json::Value::Array(raw).to_string(), values));
    }
    // a program without parameters has one input: random tuples would all be empty
    let trials = if params.is_empty() && inputs.is_empty() {
        1
    } else if params.is_empty() {
        0
    } else {
        a.trials
    };
    let mut rng = slic_measure::Rng::seed_from_u64(a.seed);
    let mut no_random = None;
    let origin = if params.is_empty() {
        "no parameters"
    } else {
        "random"
    };
    for _ in 0..trials {
        match slic_measure::random_args(&ta, &mut rng) {
            Ok(values) => inputs.push((origin, args_json(&values), values)),
            Err(why) => {
                no_random = Some(why);
                break;
            }
        }
    }
    if let Some(why) = &no_random {
        writeln!(out, "no random inputs: {why}")?;
    }
    let compare = slic_measure::CompareConfig {
        seed: a.seed,
        max_depth: SAMPLE_MAX_DEPTH,
        ..slic_measure::CompareConfig::default()
    };
    let (mut equal, mut unknown) = (0usize, 0usize);
    for (origin, shown, values) in &inputs {
        let verdict = slic_measure::compare(&store, first, second, values, &compare);
        writeln!(out, "input {shown} ({origin}): {verdict}")?;
        match verdict {
            slic_measure::Verdict::Equal { .. } => equal += 1,
            slic_measure::Verdict::Unknown { .. } => unknown += 1,
            slic_measure::Verdict::Different { .. } => {
                writeln!(out, "different: distinguishing input {shown}")?;
                out.flush()?;
                return Err(Failure::Exit(EXIT_DIFFERENT));
            }
        }
    }
    if equal > 0 {
        let also = if unknown > 0 {
            format!("; {unknown} undecided")
        } else {
            String::new()
        };
        writeln!(
            out,
            "equal (numeric: {equal} of {} input{} agree{also})",
            inputs.len(),
            if inputs.len() == 1 { "" } else { "s" }
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "unknown: no input could be compared (give --args, or see the reasons above)"
    )?;
    out.flush()?;
    Err(Failure::Exit(EXIT_UNKNOWN))
}

/// Argument values as one JSON array, as `--args` takes them.
fn args_json(values: &[slic_measure::Value]) -> String {
    serde_json::Value::Array(values.iter().map(slic_measure::value_to_json).collect()).to_string()
}

/// The JSON array given to `--args` (inline, or `@FILE`); no `--args` means no arguments.
fn read_args(arg: Option<&str>) -> Result<Vec<serde_json::Value>, String> {
    let Some(arg) = arg else {
        return Ok(Vec::new());
    };
    let (text, origin) = match arg.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read --args file {path}: {e}"))?,
            path.to_string(),
        ),
        None => (arg.to_string(), "--args".to_string()),
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(items)) => Ok(items),
        Ok(_) => Err(format!(
            "{origin} must be a JSON array of the program's arguments"
        )),
        Err(e) => Err(format!("{origin} is not valid JSON: {e}")),
    }
}

/// The parameter types of a program `fn x1 T1: fn x2 T2: ...`, outermost first.
fn parameter_types(t: &slic_algebra::Type) -> Vec<slic_algebra::Type> {
    slic_measure::compare::parameter_types(t).0
}

/// The values of `--args` for parameters of types `params`: one per parameter, each read
/// at its type.
fn argument_values(
    args: &[serde_json::Value],
    params: &[slic_algebra::Type],
) -> Result<Vec<slic_measure::Value>, String> {
    if args.len() != params.len() {
        let want = params.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        return Err(format!(
            "the program takes {} argument{} ({}), --args gave {}",
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            want.join(", "),
            args.len()
        ));
    }
    args.iter()
        .zip(params)
        .enumerate()
        .map(|(i, (j, t))| {
            slic_measure::value_from_json(j, t).map_err(|e| format!("argument {}: {e}", i + 1))
        })
        .collect()
}

/// A log weight as JSON: a number, or the string `"-inf"` / `"inf"` / `"nan"` (JSON has
/// no infinities), as `value_to_json` writes non-finite numbers.
fn json_number(x: f64) -> serde_json::Value {
    serde_json::Number::from_f64(x).map_or_else(
        || {
            serde_json::Value::String(if x.is_nan() {
                "nan".into()
            } else if x > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            })
        },
        serde_json::Value::Number,
    )
}
