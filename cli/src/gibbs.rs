//! `slic-cas gibbs`: collapsed Gibbs sampling over an update program (issue 12,
//! deliverable 5). This file is glue: it lowers the program, reads the data through
//! `slic_data`, hands both to `slic_codegen::gibbs` (which validates, binds and sweeps),
//! shows a progress bar when stderr is a terminal, and writes the result JSON, the trace
//! CSV and the plot (`plot.rs`). No sampling, matching, statistics or data conversion
//! happens here.
//!
//! `--backend c|rust` compiles the update once, specialised on the data (everything but
//! the state and the index baked in), and sweeps with it. The statistics of the loops
//! over the points are kept between updates where `slic_codegen::incremental` derives
//! how (unless `--recompute`), checked after every update with `--check-incremental`.
//! The update runs specialised to the data (the comparisons their values decide
//! decided, `slic_codegen::data_facts`) and without the products every label shares
//! where the data meet their condition (`slic_codegen::lower_draw_only`, unless
//! `--no-draw-only`); the result's `draw_only` says how many were dropped.
//! `--chains C` runs C chains in parallel (`gibbs::run_chains`), every chain's kernel
//! over the one compiled library;
//! with C = 1 the result and the trace have the one-chain format they always had, with
//! C > 1 the result lists the chains and their split-R-hat and the trace adds a `chain`
//! column.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::Path;

use serde_json::{json, Map, Value as Json};
use slic_codegen::gibbs::{
    self, run_chains, ChainsError, ChainsRun, Checking, CompiledKernel, GibbsConfig, GibbsRun,
    Init, InterpKernel, Update,
};
use slic_codegen::incremental::derive;
use slic_codegen::{CompileOptions, SweepRecord, Target};

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
    // the update specialised to the data: the comparisons they decide decided, the
    // products common to every label dropped where the data allow (same parameters, the
    // same distribution of every label)
    let facts = update.data_facts(&bound.args);
    let draw_only =
        slic_codegen::lower_draw_only(&mut l.store, l.term, passes(a.passes), Some(&facts))
            .map_err(|e| pipeline_failure(&name, e))?;
    let (program, drawn) = gibbs::pick_program(&lowered.program, draw_only.as_ref(), &bound.args);
    let picked = draw_only.as_ref().filter(|_| drawn);
    let dropped = picked.map(|d| d.dropped);
    let update = Update::new(program, &ty, &a.state, &a.index)
        .map_err(|e| user(format!("{name}: {e}")))?
        .with_labels(picked.and_then(|d| d.labels));
    let config = GibbsConfig {
        sweeps,
        warmup,
        seed: a.seed,
        init,
        classes: a.classes,
    };
    let inc = match derive(program, &a.state, &a.index) {
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
    let total = (sweeps + warmup).saturating_mul(a.chains);
    let bar = progress_bar(total as u64);
    let on_sweep = |_chain: usize, rec: &SweepRecord| {
        if let Some(acc) = rec.accuracy {
            bar.set_message(format!("accuracy {acc:.3}"));
        }
        bar.inc(1);
    };
    let truth = a.truth.as_deref();
    let result = match (a.backend, &inc) {
        (Backend::Interp, Some(inc)) => {
            let kernel = |_| InterpKernel::incremental(inc, MAX_PATHS, &update, checking);
            run_chains(&update, &data, truth, &config, a.chains, kernel, on_sweep)
        }
        (Backend::Interp, None) => {
            let kernel = |_| InterpKernel::new(program.clone(), MAX_PATHS, &update);
            run_chains(&update, &data, truth, &config, a.chains, kernel, on_sweep)
        }
        (Backend::C | Backend::Rust, _) => {
            let target = if a.backend == Backend::C {
                Target::C
            } else {
                Target::Rust
            };
            // built once here (its errors reported as `run`'s are); every chain's kernel
            // shares the libraries
            let opts = CompileOptions::default();
            let built = match &inc {
                Some(inc) => CompiledKernel::build_incremental(
                    inc,
                    target,
                    &update,
                    &bound.args,
                    MAX_PATHS,
                    &opts,
                    checking,
                ),
                None => {
                    CompiledKernel::build(program, target, &update, &bound.args, MAX_PATHS, &opts)
                }
            }
            .map_err(|e| kernel_failure(&name, e))?;
            let built = if a.per_update {
                built.without_sweep()
            } else {
                built
            };
            let sibling = built.sibling();
            let kernel = |_| sibling.kernel();
            run_chains(&update, &data, truth, &config, a.chains, kernel, on_sweep)
        }
    };
    bar.finish_and_clear();
    let run = result.map_err(|e| match e {
        // one chain's errors read as they always have
        ChainsError::Chain { error, .. } if a.chains == 1 => user(format!("{name}: {error}")),
        ChainsError::Pool(e) => Failure::Internal(anyhow::anyhow!("starting the chains: {e}")),
        e => user(format!("{name}: {e}")),
    })?;
    let backend = backend_name(a.backend);
    let (text, csv) = match run.chains.as_slice() {
        [one] => (result_json(&one.run, &config, backend), trace_csv(&one.run)),
        _ => (chains_json(&run, &config, backend), chains_csv(&run)),
    };
    if let Some(path) = &a.trace {
        write_file(path, csv.as_bytes())?;
    }
    if let Some(path) = &a.plot {
        let traces: Vec<&[SweepRecord]> = run
            .chains
            .iter()
            .map(|c| c.run.records.as_slice())
            .collect();
        let svg = crate::plot::trace_svg(&traces)
            .map_err(|e| Failure::Internal(anyhow::anyhow!("drawing the plot: {e}")))?;
        write_file(path, svg.as_bytes())?;
    }
    let mut text = text;
    if let (Some(inc), Json::Object(obj)) = (&inc, &mut text) {
        let loops: Vec<String> = inc.loops.iter().map(ToString::to_string).collect();
        obj.insert("incremental".into(), json!(loops));
    }
    if let (Some(n), Json::Object(obj)) = (dropped, &mut text) {
        obj.insert("draw_only".into(), json!(n));
    }
    let text = format!("{text}\n");
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
    obj.insert("ms_per_sweep".into(), timing_json(run));
    if let Some(acc) = run.records.last().and_then(|r| r.accuracy) {
        obj.insert("accuracy".into(), json_number(acc));
    }
    Json::Object(obj)
}

/// The median, min and max milliseconds of a chain's timed sweeps.
fn timing_json(run: &GibbsRun) -> Json {
    let t = run.ms_per_sweep;
    json!({
        "median": json_number(t.median),
        "min": json_number(t.min),
        "max": json_number(t.max),
    })
}

/// The result of many chains: the run's sweeps, warmup, seed and backend; each chain's
/// number, seed, final state and accuracy, ms per sweep and every sweep's record; the
/// split-R-hat (`null` with the reason when it is undefined); wall-clock seconds and
/// sweeps per second over all chains.
fn chains_json(run: &ChainsRun, config: &GibbsConfig, backend: &str) -> Json {
    let chains: Vec<Json> = run
        .chains
        .iter()
        .map(|c| {
            let mut obj = Map::new();
            obj.insert("chain".into(), json!(c.chain));
            obj.insert("seed".into(), json!(c.seed));
            obj.insert("state".into(), json!(c.run.state));
            obj.insert("ms_per_sweep".into(), timing_json(&c.run));
            if let Some(acc) = c.run.records.last().and_then(|r| r.accuracy) {
                obj.insert("accuracy".into(), json_number(acc));
            }
            let trace: Vec<Json> = c.run.records.iter().map(record_json).collect();
            obj.insert("trace".into(), Json::Array(trace));
            Json::Object(obj)
        })
        .collect();
    let mut r_hat = Map::new();
    r_hat.insert("of".into(), json!(run.r_hat.of.name()));
    match &run.r_hat.value {
        Ok(v) => {
            r_hat.insert("value".into(), json_number(*v));
        }
        Err(why) => {
            r_hat.insert("value".into(), Json::Null);
            r_hat.insert("reason".into(), json!(why.to_string()));
        }
    }
    let mut obj = Map::new();
    obj.insert("chains".into(), Json::Array(chains));
    obj.insert("r_hat".into(), Json::Object(r_hat));
    obj.insert("sweeps".into(), json!(config.sweeps));
    obj.insert("warmup".into(), json!(config.warmup));
    obj.insert("seed".into(), json!(config.seed));
    obj.insert("backend".into(), json!(backend));
    obj.insert("seconds".into(), json_number(run.seconds));
    obj.insert(
        "sweeps_per_second".into(),
        json_number(run.sweeps_per_second),
    );
    Json::Object(obj)
}

/// One sweep of a chain: its number, whether it was warmup, labels changed, accuracy
/// (with a truth) and milliseconds.
fn record_json(r: &SweepRecord) -> Json {
    let mut obj = Map::new();
    obj.insert("sweep".into(), json!(r.sweep));
    obj.insert("warmup".into(), json!(r.warmup));
    obj.insert("changed".into(), json!(r.changed));
    if let Some(acc) = r.accuracy {
        obj.insert("accuracy".into(), json_number(acc));
    }
    obj.insert("ms".into(), json_number(r.sweep_seconds * 1e3));
    Json::Object(obj)
}

/// One line per sweep: `sweep,warmup,seconds,changed,accuracy` (accuracy empty without a
/// truth).
fn trace_csv(run: &GibbsRun) -> String {
    let mut s = String::from("sweep,warmup,seconds,changed,accuracy\n");
    for r in &run.records {
        s.push_str(&csv_line(r));
    }
    s
}

/// Many chains' trace: the one-chain columns after a `chain` column, chain by chain.
fn chains_csv(run: &ChainsRun) -> String {
    let mut s = String::from("chain,sweep,warmup,seconds,changed,accuracy\n");
    for c in &run.chains {
        for r in &c.run.records {
            s.push_str(&format!("{},{}", c.chain, csv_line(r)));
        }
    }
    s
}

/// A sweep's line of the trace, `sweep,warmup,seconds,changed,accuracy`.
fn csv_line(r: &SweepRecord) -> String {
    let acc = r.accuracy.map_or_else(String::new, |a| format!("{a}"));
    let mut s = String::new();
    // writing to a String cannot fail
    let _ = writeln!(
        s,
        "{},{},{},{},{}",
        r.sweep, r.warmup, r.seconds, r.changed, acc
    );
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
