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
    load_with(path, |bytes| front::load_bytes(store, bytes))
}

/// Reads a file and runs `front` (a loader of the front end) on its bytes; errors are
/// rendered `file:line:col` diagnostics.
fn load_with<T>(
    path: &Path,
    front: impl FnOnce(&[u8]) -> Result<T, Vec<slic_algebra::Diagnostic>>,
) -> Result<T, Failure> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::User(format!("error: cannot read {name}: {e}")))?;
    front(&bytes).map_err(|diagnostics| {
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

/// `slic-cas fmt`: the program as written, comments included (see
/// `front::load_with_comments`), in canonical layout.
fn fmt(a: &FmtArgs) -> Result<(), Failure> {
    let mut store = Store::new();
    let (term, comments) = load_with(&a.file, |bytes| {
        front::load_bytes_with_comments(&mut store, bytes)
    })?;
    let options = print::PrintOptions {
        ascii: a.ascii,
        ..print::PrintOptions::default()
    };
    let text = print::print_with_comments(&store, term, &options, comments);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

fn simplify(a: &SimplifyArgs) -> Result<(), Failure> {
    let mut l = load(&a.file)?;
    let config = slic_simplify::SimplifyConfig {
        deadline: a
            .timeout
            .and_then(|d| std::time::Instant::now().checked_add(d)),
    };
    let result = slic_simplify::simplify(&mut l.store, l.term, &config);
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
    let values = match a.args.as_deref() {
        None => slic_semantics::args_from_values(&[], l.store.ty(l.term)),
        Some(arg) => args_text(arg).and_then(|(text, origin)| {
            slic_semantics::args_from_json(&text, &origin, l.store.ty(l.term))
        }),
    }
    .map_err(user)?;
    let params = slic_semantics::compare::parameter_types(l.store.ty(l.term)).0;

    let config = slic_semantics::EvalConfig {
        max_depth: SAMPLE_MAX_DEPTH,
        ..slic_semantics::EvalConfig::default()
    };
    let mut interp = slic_semantics::Interp::new(&l.store, config);
    let eval_error = |e: slic_semantics::EvalError| user(e.to_string());
    let program = interp
        .eval(l.term, &slic_semantics::Env::new())
        .map_err(eval_error)?;
    let measure = interp.apply_args(&program, &values).map_err(eval_error)?;
    if !matches!(measure, slic_semantics::Value::Measure(_)) {
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

    let mut rng = slic_semantics::Rng::seed_from_u64(a.seed);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if a.summary {
        let mut draws = Vec::with_capacity(usize::try_from(a.samples).unwrap_or(0).min(1 << 24));
        for _ in 0..a.samples {
            draws.push(interp.sample(&measure, &mut rng).map_err(eval_error)?);
        }
        let summary = slic_semantics::Summary::from_samples(&draws);
        writeln!(out, "{summary}")?;
    } else {
        for _ in 0..a.samples {
            let (v, lw) = interp.sample(&measure, &mut rng).map_err(eval_error)?;
            let line = serde_json::json!({
                "value": slic_semantics::value_to_json(&v),
                "log_weight": json_number(lw),
            });
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The exit code of `equiv` when the programs differ.
const EXIT_DIFFERENT: u8 = 1;
/// The exit code of `equiv` when it cannot decide.
const EXIT_UNKNOWN: u8 = 3;

/// `slic-cas equiv A B`: `slic_equiv::equiv` decides; this prints its evidence and the
/// verdict line, and maps the conclusion to the exit code.
fn equiv(a: &EquivArgs) -> Result<(), Failure> {
    let mut store = Store::new();
    let first = load_into(&mut store, &a.first)?;
    let second = load_into(&mut store, &a.second)?;
    let user = |msg: String| Failure::User(format!("error: {msg}"));
    let given = match a.args.as_deref() {
        None => None,
        Some(arg) => {
            let (text, origin) = args_text(arg).map_err(user)?;
            let values =
                slic_semantics::args_from_json(&text, &origin, store.ty(first)).map_err(user)?;
            Some((values, text.trim().to_string()))
        }
    };
    let config = slic_equiv::EquivConfig {
        trials: a.trials,
        seed: a.seed,
        compare: slic_semantics::CompareConfig {
            max_depth: SAMPLE_MAX_DEPTH,
            ..slic_semantics::CompareConfig::default()
        },
        ..slic_equiv::EquivConfig::default()
    };
    let report = slic_equiv::equiv(&mut store, first, second, given, &config).map_err(|e| {
        user(format!(
            "{e}\n  {}\n  {}",
            a.first.display(),
            a.second.display()
        ))
    })?;
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    let mut out = std::io::stdout().lock();
    if let Some(why) = &report.no_random {
        writeln!(out, "no random inputs: {why}")?;
    }
    for t in &report.trials {
        writeln!(out, "input {} ({}): {}", t.shown, t.origin, t.verdict)?;
    }
    match &report.conclusion {
        slic_equiv::Conclusion::Equal(slic_equiv::Proof::Symbolic) => {
            writeln!(out, "equal (symbolic: both simplify to the same term)")?;
            Ok(())
        }
        slic_equiv::Conclusion::Equal(slic_equiv::Proof::Numeric { agreed, tried }) => {
            let undecided = tried - agreed;
            let also = if undecided > 0 {
                format!("; {undecided} undecided")
            } else {
                String::new()
            };
            writeln!(
                out,
                "equal (numeric: {agreed} of {tried} input{} agree{also})",
                if *tried == 1 { "" } else { "s" }
            )?;
            Ok(())
        }
        slic_equiv::Conclusion::Different { shown } => {
            writeln!(out, "different: distinguishing input {shown}")?;
            out.flush()?;
            Err(Failure::Exit(EXIT_DIFFERENT))
        }
        slic_equiv::Conclusion::Unknown => {
            writeln!(
                out,
                "unknown: no input could be compared (give --args, or see the reasons above)"
            )?;
            out.flush()?;
            Err(Failure::Exit(EXIT_UNKNOWN))
        }
    }
}

/// The text of `--args` (inline, or `@FILE`) and a name for it in messages.
fn args_text(arg: &str) -> Result<(String, String), String> {
    match arg.strip_prefix('@') {
        Some(path) => Ok((
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read --args file {path}: {e}"))?,
            path.to_string(),
        )),
        None => Ok((arg.to_string(), "--args".to_string())),
    }
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
