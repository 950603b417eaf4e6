//! `slic-cas gibbs`: collapsed Gibbs sampling over an update program (issue 12,
//! deliverable 5). This file is glue: it lowers the program, reads the data through
//! `slic_data`, hands both to `slic_codegen::gibbs` (which validates, binds and sweeps),
//! shows a progress bar when stderr is a terminal, and writes the result JSON, the trace
//! CSV and the plot (`plot.rs`). No sampling, matching or data conversion happens here.
//!
//! `--backend c|rust` compiles the update once, specialised on the data (everything but
//! the state and the index baked in), and sweeps with it. The statistics of the loops
//! over the points are kept between updates where `slic_codegen::incremental` derives
//! how (unless `--recompute`), checked after every update with `--check-incremental`.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::Path;

use serde_json::{json, Map, Value as Json};
use slic_codegen::gibbs::{
    self, Checking, CompiledKernel, GibbsConfig, GibbsRun, Init, InterpKernel, Update, UpdateKernel,
};
use slic_codegen::incremental::derive;
use slic_codegen::{CompileOptions, Target};

use crate::args::{Backend, GibbsArgs};
use crate::commands::{json_number, load_runnable, passes, pipeline_failure, Failure};
use crate::run::kernel_failure;

/// Paths one update's enumeration may follow (it forks once per label).
const MAX_PATHS: u64 = 1 << 20;

pub fn gibbs(a: &GibbsArgs) -> Result<(), Failure> {
    let name = a.file.display().to_string();
    let user = |msg: String| Failure::User(format!("error: {msg}"));
    let sweeps = usize::try_from(a.sweeps).map_err(|_| user("too many sweeps".into()))?;
    let warmup = usize::try_from(a.warmup).map_err(|_| user("too many warmup sweeps".into()))?;
    let init = match a.init.as_str() {
        "data" => Init::Data,
        "random" => Init::Random,
        file => {
            let entry = slic_data::dataset::read_array_file(Path::new(file))
                .map_err(|e| user(format!("--init {file}: {e}")))?;
            Init::Given(gibbs::nats(file, &entry).map_err(|e| user(format!("--init {file}: {e}")))?)
        }
    };
    let mut l = load_runnable(&a.file)?;
    let ty = l.store.ty(l.term).clone();
    let lowered = slic_codegen::lower_program(&mut l.store, l.term, passes(a.passes))
        .map_err(|e| pipeline_failure(&name, e))?;
    let update = Update::new(&lowered.program, &ty, &a.state, &a.index)
        .map_err(|e| user(format!("{name}: {e}")))?;
    let data_name = a.data.display().to_string();
    let data =
        slic_data::dataset::read_file(&a.data).map_err(|e| user(format!("{data_name}: {e}")))?;
    let bound = update
        .bind(&data, a.truth.as_deref())
        .map_err(|e| user(format!("{data_name}: {e}")))?;
    let config = GibbsConfig {
        sweeps,
        warmup,
        seed: a.seed,
        init,
        classes: a.classes,
    };
    let inc = match derive(&lowered.program, &a.state, &a.index) {
        _ if a.recompute => None,
        Ok(inc) => Some(inc),
        Err(e) if a.check_incremental => {
            return Err(user(format!(
                "{name}: --check-incremental: nothing to check: {e}"
            )))
        }
        Err(e) => {
            eprintln!("note: every statistic is rebuilt at every update: {e}");
            None
        }
    };
    let checking = if a.check_incremental {
        Checking::Every
    } else {
        Checking::Never
    };
    let bar = progress_bar((sweeps + warmup) as u64);
    let result = match (a.backend, &inc) {
        (Backend::Interp, Some(inc)) => {
            let mut kernel = InterpKernel::incremental(inc, MAX_PATHS, &update, checking);
            sweep(&mut kernel, &update, bound, &config, &bar)
        }
        (Backend::Interp, None) => {
            let mut kernel = InterpKernel::new(lowered.program, MAX_PATHS, &update);
            sweep(&mut kernel, &update, bound, &config, &bar)
        }
        (Backend::C | Backend::Rust, _) => {
            let target = if a.backend == Backend::C {
                Target::C
            } else {
                Target::Rust
            };
            let opts = CompileOptions::default();
            let mut kernel = match &inc {
                Some(inc) => CompiledKernel::build_incremental(
                    inc,
                    target,
                    &update,
                    &bound.args,
                    MAX_PATHS,
                    &opts,
                    checking,
                ),
                None => CompiledKernel::build(
                    &lowered.program,
                    target,
                    &update,
                    &bound.args,
                    MAX_PATHS,
                    &opts,
                ),
            }
            .map_err(|e| kernel_failure(&name, e))?;
            sweep(&mut kernel, &update, bound, &config, &bar)
        }
    };
    bar.finish_and_clear();
    let run = result.map_err(|e| user(format!("{name}: {e}")))?;
    if let Some(path) = &a.trace {
        write_file(path, trace_csv(&run).as_bytes())?;
    }
    if let Some(path) = &a.plot {
        let svg = crate::plot::trace_svg(&run.records)
            .map_err(|e| Failure::Internal(anyhow::anyhow!("drawing the plot: {e}")))?;
        write_file(path, svg.as_bytes())?;
    }
    let mut json = result_json(&run, &config, backend_name(a.backend));
    if let (Some(inc), Json::Object(obj)) = (&inc, &mut json) {
        let loops: Vec<String> = inc.loops.iter().map(ToString::to_string).collect();
        obj.insert("incremental".into(), json!(loops));
    }
    let text = format!("{json}\n");
    match &a.out {
        Some(path) => write_file(path, text.as_bytes())?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}

/// The sweeps, each reported to the progress bar.
fn sweep(
    kernel: &mut impl UpdateKernel,
    update: &Update,
    bound: gibbs::Bound,
    config: &GibbsConfig,
    bar: &indicatif::ProgressBar,
) -> Result<GibbsRun, gibbs::GibbsError> {
    gibbs::run_gibbs(kernel, update, bound, config, |rec| {
        if let Some(acc) = rec.accuracy {
            bar.set_message(format!("accuracy {acc:.3}"));
        }
        bar.inc(1);
    })
}

/// A progress bar on stderr when it is a terminal, else one that draws nothing.
fn progress_bar(total: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} sweeps {msg}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// A file the user named: failing to write it is the user's to fix (a missing folder,
/// no permission), exit 1.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes)
        .map_err(|e| Failure::User(format!("error: cannot write {}: {e}", path.display())))
}

/// The result: final state, sweeps, ms per sweep, and the last accuracy if scored.
fn result_json(run: &GibbsRun, config: &GibbsConfig, backend: &str) -> Json {
    let mut obj = Map::new();
    obj.insert("state".into(), json!(run.state));
    obj.insert("sweeps".into(), json!(run.sweeps));
    obj.insert("warmup".into(), json!(run.warmup));
    obj.insert("seed".into(), json!(config.seed));
    obj.insert("backend".into(), json!(backend));
    let t = run.ms_per_sweep;
    obj.insert(
        "ms_per_sweep".into(),
        json!({
            "median": json_number(t.median),
            "min": json_number(t.min),
            "max": json_number(t.max),
        }),
    );
    if let Some(acc) = run.records.last().and_then(|r| r.accuracy) {
        obj.insert("accuracy".into(), json_number(acc));
    }
    Json::Object(obj)
}

/// One line per sweep: `sweep,warmup,seconds,changed,accuracy` (accuracy empty without a
/// truth).
fn trace_csv(run: &GibbsRun) -> String {
    let mut s = String::from("sweep,warmup,seconds,changed,accuracy\n");
    for r in &run.records {
        let acc = r.accuracy.map_or_else(String::new, |a| format!("{a}"));
        // writing to a String cannot fail
        let _ = writeln!(
            s,
            "{},{},{},{},{}",
            r.sweep, r.warmup, r.seconds, r.changed, acc
        );
    }
    s
}

/// The backend's name as the user wrote it.
fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Interp => "interp",
        Backend::C => "c",
        Backend::Rust => "rust",
    }
}
