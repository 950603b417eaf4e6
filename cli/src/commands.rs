//! The commands: each reads its input, calls the library, and prints. User mistakes come
//! back as [`Failure::User`] with a rendered message (exit 1); anything else is a bug
//! ([`Failure::Internal`], exit 2).

use std::io::Write;
use std::path::Path;

use slic_algebra::{front, print, Store, TermId};

use crate::args::{Cli, Command, FmtArgs, SampleArgs, SimplifyArgs};
use crate::report;

/// Why a command did not succeed.
pub enum Failure {
    /// The input or the arguments are wrong; the message is ready to print.
    User(String),
    /// A bug in slic-cas.
    Internal(anyhow::Error),
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
    }
}

/// A program read from a file and elaborated into `store`.
struct Loaded {
    store: Store,
    term: TermId,
}

fn load(path: &Path) -> Result<Loaded, Failure> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::User(format!("error: cannot read {name}: {e}")))?;
    let mut store = Store::new();
    match front::load_bytes(&mut store, &bytes) {
        Ok(term) => Ok(Loaded { store, term }),
        Err(diagnostics) => {
            let text = String::from_utf8_lossy(&bytes);
            Err(Failure::User(report::render(&name, &text, &diagnostics)))
        }
    }
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
    if args.len() != params.len() {
        let want = params.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        return Err(user(format!(
            "the program takes {} argument{} ({}), --args gave {}",
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            want.join(", "),
            args.len()
        )));
    }
    let values = args
        .iter()
        .zip(&params)
        .enumerate()
        .map(|(i, (j, t))| {
            slic_measure::value_from_json(j, t)
                .map_err(|e| user(format!("argument {}: {e}", i + 1)))
        })
        .collect::<Result<Vec<_>, _>>()?;

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
fn parameter_types(mut t: &slic_algebra::Type) -> Vec<slic_algebra::Type> {
    let mut out = Vec::new();
    while let slic_algebra::Type::Fun(a, r) = t {
        out.push((**a).clone());
        t = r;
    }
    out
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
