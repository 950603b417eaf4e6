//! The commands: each reads its input, calls the library, and prints. User mistakes come
//! back as [`Failure::User`] with a rendered message (exit 1); anything else is a bug
//! ([`Failure::Internal`], exit 2). The commands that give a program a meaning
//! (`simplify`, `sample`, `equiv`) refuse a transform that is not implemented yet
//! (`slic_algebra::unsupported`) and expand `disint` and `density` (`slic_simplify::
//! expand_transforms`); `sample` renders a run-time error at the term where it
//! happened, through the span map the front end returns.

use std::io::Write;
use std::path::Path;

use slic_algebra::{front, print, unsupported, Diagnostic, SpanMap, Store, TermId};

use crate::args::{
    Cli, Command, EquivArgs, FmtArgs, LowerArgs, PassFlags, SampleArgs, SimplifyArgs, Stage,
};
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
        Command::Summarize(a) => summarize(&a),
        Command::Lower(a) => lower(&a),
        Command::Emit(a) => crate::run::emit(&a),
        Command::Run(a) => crate::run::run(&a),
        Command::Gibbs(a) => crate::gibbs::gibbs(&a),
        Command::Chain(a) => crate::chain::chain(&a),
        Command::Sample(a) => sample(&a),
        Command::Equiv(a) => equiv(&a),
    }
}

/// A program read from a file and elaborated into `store`, with what is needed to point
/// into its source later (run-time errors of `sample`).
pub(crate) struct Loaded {
    pub(crate) store: Store,
    pub(crate) term: TermId,
    source: Source,
}

/// A file's name and contents, and where each of its terms came from.
struct Source {
    name: String,
    bytes: Vec<u8>,
    spans: SpanMap,
    /// The data types the program declares or imports, so that outputs can show their
    /// constructors by name.
    data: Vec<slic_algebra::elab::DataType>,
}

impl Source {
    /// One diagnostic rendered `file:line:col` with the source line.
    fn render(&self, d: &Diagnostic) -> Failure {
        Failure::User(report::render_bytes(
            &self.name,
            &self.bytes,
            std::slice::from_ref(d),
        ))
    }
}

/// Reads and elaborates a program for the commands that only read it (`check`, `fmt`).
fn load(path: &Path) -> Result<Loaded, Failure> {
    let mut store = Store::new();
    let (term, source) = read_into(&mut store, path)?;
    Ok(Loaded {
        store,
        term,
        source,
    })
}

/// Like [`load`], for the commands that give the program a meaning (`simplify`,
/// `sample`): a transform slic-cas does not implement yet is an error, not skipped.
pub(crate) fn load_runnable(path: &Path) -> Result<Loaded, Failure> {
    let mut l = load(path)?;
    refuse_unimplemented(&l.store, l.term, &l.source)?;
    l.term = expand(&mut l.store, l.term, &l.source)?;
    Ok(l)
}

/// Reads and elaborates a program into an existing store (so that two programs can be
/// compared), refusing unimplemented transforms; errors are rendered `file:line:col`
/// diagnostics.
fn load_into(store: &mut Store, path: &Path) -> Result<TermId, Failure> {
    let (term, source) = read_into(store, path)?;
    refuse_unimplemented(store, term, &source)?;
    expand(store, term, &source)
}

/// `disint(m)` and `density(m)` replaced by what they compute (issue 15), an error at the
/// call that cannot be computed.
fn expand(store: &mut Store, term: TermId, source: &Source) -> Result<TermId, Failure> {
    slic_simplify::expand_transforms(store, term, &source.spans).map_err(|d| source.render(&d))
}

fn refuse_unimplemented(store: &Store, term: TermId, source: &Source) -> Result<(), Failure> {
    match unsupported::first_unimplemented(store, term, &source.spans) {
        Some(d) => Err(source.render(&d)),
        None => Ok(()),
    }
}

/// A file's name (for messages) and bytes; a file that cannot be read is a user error.
fn read_file(path: &Path) -> Result<(String, Vec<u8>), Failure> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::User(format!("error: cannot read {name}: {e}")))?;
    Ok((name, bytes))
}

fn read_into(store: &mut Store, path: &Path) -> Result<(TermId, Source), Failure> {
    let (name, bytes, program) = read_program(store, path)?;
    Ok((
        program.term,
        Source {
            name,
            bytes,
            spans: program.spans,
            data: program.comments.prelude.data,
        },
    ))
}

/// Reads a program and the modules it imports (from the file system, beside it) into
/// `store`; errors are rendered `file:line:col` diagnostics, in the imported file they
/// are about.
fn read_program(
    store: &mut Store,
    path: &Path,
) -> Result<(String, Vec<u8>, front::FileProgram), Failure> {
    let (name, bytes) = read_file(path)?;
    let mut read = |p: &Path| std::fs::read(p);
    match front::load_file(store, path, &bytes, &mut read) {
        Ok(program) => Ok((name, bytes, program)),
        Err(diagnostics) => Err(Failure::User(report::render_all(
            &name,
            &bytes,
            &diagnostics,
        ))),
    }
}

/// `slic-cas check`: the program's type, data types by their declared names.
fn check(path: &Path) -> Result<(), Failure> {
    let mut store = Store::new();
    let (_, _, program) = read_program(&mut store, path)?;
    let ty = program.comments.prelude.type_text(store.ty(program.term));
    let mut out = std::io::stdout().lock();
    writeln!(out, "{ty}")?;
    Ok(())
}

/// `slic-cas fmt`: the program as written, comments included (see
/// `front::load_with_comments`), in canonical layout.
fn fmt(a: &FmtArgs) -> Result<(), Failure> {
    let mut store = Store::new();
    let (_, _, program) = read_program(&mut store, &a.file)?;
    let (term, comments) = (program.term, program.comments);
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
    let mut l = load_runnable(&a.file)?;
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
    // the program's data types print by name, their declarations first (the imports'
    // too: the simplified term has no import lines to bring them in)
    let comments = print::Comments {
        prelude: print::Prelude {
            data: l.source.data.clone(),
            ..print::Prelude::default()
        },
        ..print::Comments::default()
    };
    let text = print::print_with_comments(&l.store, simplified, &options, comments);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// `summarize`: the histogram transform of slic-codegen. The file may contain
/// `summarize(e)` markers (which the other commands refuse), so it is loaded as `fmt`
/// loads it; the output is checked to have the input's type.
fn summarize(a: &FmtArgs) -> Result<(), Failure> {
    let mut l = load(&a.file)?;
    let result = slic_codegen::summarize(&mut l.store, l.term);
    let out_term = result.term;
    if let Err(e) = slic_algebra::verify::verify(&l.store, out_term) {
        return Err(Failure::Internal(anyhow::anyhow!(
            "summarize produced an ill-typed term: {e}"
        )));
    }
    if l.store.ty(out_term) != l.store.ty(l.term) {
        return Err(Failure::Internal(anyhow::anyhow!(
            "summarize changed the type from {} to {}",
            l.store.ty(l.term),
            l.store.ty(out_term)
        )));
    }
    eprintln!(
        "note: {} histogram(s), read by {} sum(s)",
        result.histograms, result.sums_replaced
    );
    let options = print::PrintOptions {
        ascii: a.ascii,
        ..print::PrintOptions::default()
    };
    let text = print::print_with(&l.store, out_term, &options);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

pub(crate) fn passes(f: PassFlags) -> slic_codegen::Passes {
    slic_codegen::Passes {
        histogram: !f.no_histogram,
        licm: !f.no_licm,
        fusion: !f.no_fusion,
        draw_only: !f.no_draw_only,
    }
}

/// What `data` (a `gibbs --data` file) tells the update of `l` whose state and index
/// `names` names (`STATE,INDEX`).
fn data_facts(
    l: &mut Loaded,
    data: &Path,
    names: &str,
) -> Result<slic_codegen::data_facts::DataFacts, Failure> {
    let user = |msg: String| Failure::User(format!("error: {msg}"));
    let name = l.source.name.clone();
    let Some((state, index)) = names.split_once(',') else {
        return Err(user(format!("--update {names}: expected STATE,INDEX")));
    };
    let ty = l.store.ty(l.term).clone();
    let lowered = slic_codegen::lower_program(&mut l.store, l.term, Default::default())
        .map_err(|e| pipeline_failure(&name, e))?;
    let update = slic_codegen::Update::new(&lowered.program, &ty, state, index)
        .map_err(|e| user(format!("{name}: {e}")))?;
    let data_name = data.display().to_string();
    let set = slic_data::dataset::read_file(data).map_err(|e| user(format!("{data_name}: {e}")))?;
    // a key that is no parameter is taken as the true labels, as `gibbs --truth` names it
    let truth = set
        .entries
        .iter()
        .map(|(k, _)| k.as_str())
        .find(|k| !lowered.program.params.iter().any(|(p, _)| p == k));
    let bound = update
        .bind(&set, truth)
        .map_err(|e| user(format!("{data_name}: {e}")))?;
    Ok(update.data_facts(&bound.args))
}

/// `lower`: the stages of slic-codegen's pipeline, one printed.
fn lower(a: &LowerArgs) -> Result<(), Failure> {
    let mut l = load_runnable(&a.file)?;
    let name = a.file.display().to_string();
    let options = print::PrintOptions {
        ascii: a.ascii,
        ..print::PrintOptions::default()
    };
    let facts = match (&a.data, &a.update) {
        (Some(data), Some(names)) if a.draw_only => Some(data_facts(&mut l, data, names)?),
        (Some(_), _) => return Err(Failure::User("error: --data needs --draw-only".to_string())),
        _ => None,
    };
    let (stages, ir) = if a.draw_only {
        let d =
            slic_codegen::lower_draw_only(&mut l.store, l.term, passes(a.passes), facts.as_ref())
                .map_err(|e| pipeline_failure(&name, e))?
                .ok_or_else(|| {
                    Failure::User(format!(
                    "error: {name}: --draw-only: no product common to every label can be dropped"
                ))
                })?;
        if facts.is_some() {
            eprintln!(
                "note: {} comparison(s) decided by the data{}",
                d.decided,
                d.labels.map_or(String::new(), |k| format!(
                    ", for states whose labels are below {k}"
                ))
            );
            eprintln!(
                "note: {} value(s) the data alone define computed once",
                d.precomputed
            );
        }
        eprintln!(
            "note: {} common product(s) or sum(s) dropped where this holds:\n{}",
            d.dropped, d.condition
        );
        let ir = (a.dump == Stage::Ir).then_some(d.lowered.program);
        (d.lowered.stages, ir)
    } else if a.dump == Stage::Ir {
        let lowered = slic_codegen::lower_program(&mut l.store, l.term, passes(a.passes))
            .map_err(|e| pipeline_failure(&name, e))?;
        (lowered.stages, Some(lowered.program))
    } else {
        let stages = slic_codegen::term_stages(&mut l.store, l.term, passes(a.passes))
            .map_err(|e| Failure::Internal(anyhow::anyhow!("{e}")))?;
        (stages, None)
    };
    let text = match (a.dump, ir, &a.incremental) {
        (Stage::Ir, Some(p), Some(names)) => incremental_text(&name, &p, names)?,
        (_, _, Some(_)) => {
            return Err(Failure::User(
                "error: --incremental needs --dump ir".to_string(),
            ))
        }
        (Stage::Summarized, _, _) => print::print_with(&l.store, stages.summarized, &options),
        (_, Some(p), _) => p.to_string(),
        (_, None, _) => print::print_with(&l.store, stages.anf, &options),
    };
    eprintln!(
        "note: {} histogram(s) read by {} sum(s); {} binding(s), {} hoisted out of a loop or binder, {} shared",
        stages.histograms, stages.sums_replaced, stages.bindings, stages.hoisted, stages.shared
    );
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// `lower --incremental STATE,INDEX`: which loops keep their statistics (notes on
/// stderr), then the derived programs.
fn incremental_text(name: &str, p: &slic_codegen::Program, names: &str) -> Result<String, Failure> {
    let user = |m: String| Failure::User(format!("error: {name}: --incremental {names}: {m}"));
    let Some((state, index)) = names.split_once(',') else {
        return Err(user(
            "expected the state and the index parameters, as z,u".into(),
        ));
    };
    for who in [state, index] {
        if !p.params.iter().any(|(x, _)| x == who) {
            return Err(user(format!("the program has no parameter `{who}`")));
        }
    }
    let inc =
        slic_codegen::incremental::derive(p, state, index).map_err(|e| user(e.to_string()))?;
    for l in &inc.loops {
        eprintln!("note: {l}");
    }
    for s in &inc.stats {
        if s.kind == slic_codegen::incremental::StatKind::Scratch {
            eprintln!("note: kept from one update to the next: {}", s.of);
        }
    }
    let sweep = match slic_codegen::incremental::sweep_program(&inc, state, index) {
        Some(p) => format!("\n# sweep (compiled backends)\n{p}"),
        None => {
            eprintln!(
                "note: no sweep kernel: the update does not draw once, outside its loops, \
                 with nothing weighed after the draw"
            );
            String::new()
        }
    };
    Ok(format!(
        "# update\n{}\n# init\n{}\n# remove\n{}\n# add\n{}{sweep}",
        inc.update, inc.init, inc.remove, inc.add
    ))
}

/// A program the pipeline cannot lower is the user's to know (exit 1); a broken pass is a
/// bug.
pub(crate) fn pipeline_failure(name: &str, e: slic_codegen::PipelineError) -> Failure {
    match e {
        slic_codegen::PipelineError::Unsupported(_) => Failure::User(format!("error: {name}: {e}")),
        slic_codegen::PipelineError::Bug(b) => Failure::Internal(anyhow::anyhow!("{b}")),
    }
}

/// The interpreter's recursion depth on the worker thread's 512 MiB stack (the library
/// default suits a 2 MiB test thread).
const SAMPLE_MAX_DEPTH: usize = 50_000;

fn sample(a: &SampleArgs) -> Result<(), Failure> {
    let l = load_runnable(&a.file)?;
    let name = a.file.display().to_string();
    let user = |msg: String| Failure::User(format!("error: {name}: {msg}"));
    let values = match a.args.as_deref() {
        None => slic_semantics::args_from_values(&[], l.store.ty(l.term)),
        Some(arg) => args_text(arg).and_then(|(text, origin)| {
            slic_semantics::args_from_json(&text, &origin, l.store.ty(l.term))
        }),
    }
    .map_err(user)?;
    let params = l.store.ty(l.term).parameter_types().0;

    let config = slic_semantics::EvalConfig {
        max_depth: SAMPLE_MAX_DEPTH,
        ..slic_semantics::EvalConfig::default()
    };
    let mut interp = slic_semantics::Interp::new(&l.store, config);
    // a run-time error points at the term where it happened, when the term has a span
    let eval_error =
        |interp: &slic_semantics::Interp<'_>, e: slic_semantics::EvalError| match interp
            .error_site(&e)
            .and_then(|t| l.source.spans.get(t))
        {
            Some(span) => l.source.render(&Diagnostic::new(span, e.to_string())),
            None => user(e.to_string()),
        };
    let program = interp
        .eval(l.term, &slic_semantics::Env::new())
        .map_err(|e| eval_error(&interp, e))?;
    let measure = interp
        .apply_args(&program, &values)
        .map_err(|e| eval_error(&interp, e))?;
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
            let draw = interp.sample(&measure, &mut rng);
            draws.push(draw.map_err(|e| eval_error(&interp, e))?);
        }
        let summary = slic_semantics::Summary::from_samples(&draws);
        writeln!(out, "{summary}")?;
    } else {
        for _ in 0..a.samples {
            let draw = interp.sample(&measure, &mut rng);
            let (v, lw) = draw.map_err(|e| eval_error(&interp, e))?;
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
/// The exit code of `equiv` when it cannot decide, or found no difference only by sampling.
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
    let defaults = slic_equiv::EquivConfig::default();
    let config = slic_equiv::EquivConfig {
        trials: a.trials,
        seed: a.seed,
        compare: slic_semantics::CompareConfig {
            max_depth: SAMPLE_MAX_DEPTH,
            ..defaults.compare.clone()
        },
        ..defaults
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
    let random = &report.random;
    if report.no_random.is_none() && (random.distinct as u64) < random.asked {
        writeln!(
            out,
            "only {} distinct random input{} found in {} draws ({} asked)",
            random.distinct,
            plural(random.distinct),
            random.draws,
            random.asked
        )?;
    }
    for t in &report.trials {
        writeln!(out, "input {} ({}): {}", t.shown, t.origin, t.verdict)?;
    }
    let inputs = |n: usize, undecided: usize| {
        let also = if undecided > 0 {
            format!(", {undecided} undecided")
        } else {
            String::new()
        };
        format!("{n} distinct input{}{also}", plural(n))
    };
    match &report.conclusion {
        slic_equiv::Conclusion::Equal(slic_equiv::Proof::Symbolic) => {
            writeln!(out, "equal (symbolic: both simplify to the same term)")?;
            Ok(())
        }
        slic_equiv::Conclusion::Equal(slic_equiv::Proof::Quadrature {
            agreed,
            undecided,
            tight,
        }) => {
            writeln!(
                out,
                "equal (quadrature: every probe agrees on {}; every integral's error estimate is within {tight:e} of its value plus the mass)",
                inputs(*agreed, *undecided)
            )?;
            Ok(())
        }
        slic_equiv::Conclusion::Equal(slic_equiv::Proof::Values {
            agreed,
            undecided,
            rel_tol,
        }) => {
            writeln!(
                out,
                "equal (values: the same on {}, within relative {rel_tol:e})",
                inputs(*agreed, *undecided)
            )?;
            Ok(())
        }
        slic_equiv::Conclusion::NoDifferenceFound {
            agreed,
            sampled,
            undecided,
            smallest,
            largest,
        } => {
            writeln!(
                out,
                "no difference found (sampling: differences below {} to {} could not be detected; agreement on {}, {sampled} of them sampled)",
                detectable(smallest),
                detectable(largest),
                inputs(*agreed, *undecided)
            )?;
            out.flush()?;
            Err(Failure::Exit(EXIT_UNKNOWN))
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

/// `1.20e-2 (E[f], 1.5% of its value)`: a difference sampling could have missed.
fn detectable(d: &slic_equiv::Detectable) -> String {
    match d.relative.map(|r| 100.0 * r) {
        // percentages too small for one decimal keep their digits in exponent form
        Some(pct) if pct >= 0.1 => format!("{:.2e} ({}, {pct:.1}% of its value)", d.below, d.probe),
        Some(pct) => format!("{:.2e} ({}, {pct:.1e}% of its value)", d.below, d.probe),
        None => format!("{:.2e} ({})", d.below, d.probe),
    }
}

/// "s" for a count other than 1.
fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The text of `--args` (inline, or `@FILE`) and a name for it in messages.
pub(crate) fn args_text(arg: &str) -> Result<(String, String), String> {
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
pub(crate) fn json_number(x: f64) -> serde_json::Value {
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
