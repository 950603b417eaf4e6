//! `slic-cas chain`: Markov chains of a kernel program (issue 15, deliverable 4). Glue:
//! it lowers the kernel, reads the data and the initial state through `slic_data`, hands
//! them to `slic_codegen::chain` (which checks the kernel, binds, steps and summarises),
//! and writes the draws as CSV and the summary as JSON. No sampling or statistics here.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use serde_json::{json, Map, Value as Json};
use slic_codegen::chain::{self, diagnostics, ChainRun, CompiledStepper, InterpStepper, Markov};
use slic_codegen::{CompileOptions, Target};

use crate::args::{Backend, ChainArgs};
use crate::commands::{json_number, load_runnable, passes, pipeline_failure, Failure};
use crate::run::kernel_failure;

pub fn chain(a: &ChainArgs) -> Result<(), Failure> {
    let name = a.file.display().to_string();
    let user = |msg: String| Failure::User(format!("error: {msg}"));
    let count = |n: u64, what: &str| {
        usize::try_from(n).map_err(|_| Failure::User(format!("error: too many {what}")))
    };
    let (steps, burn, chains) = (
        count(a.steps, "steps")?,
        count(a.burn, "burn-in steps")?,
        a.chains,
    );
    let mut l = load_runnable(&a.file)?;
    let ty = l.store.ty(l.term).clone();
    let lowered = slic_codegen::lower_program(&mut l.store, l.term, passes(a.passes))
        .map_err(|e| pipeline_failure(&name, e))?;
    let markov = Markov::new(&lowered.program, &ty).map_err(|e| user(format!("{name}: {e}")))?;
    let data = match &a.data {
        Some(path) => slic_data::dataset::read_file(path)
            .map_err(|e| user(format!("{}: {e}", path.display())))?,
        None => slic_data::Dataset::default(),
    };
    let init_text = format!("{{\"init\": {}}}", a.init);
    let init = slic_data::dataset::from_json(&init_text, Path::new("."))
        .ok()
        .and_then(|d| d.get("init").cloned())
        .ok_or_else(|| {
            user(format!(
                "--init {}: not a JSON number or array (a pair state is a list of two)",
                a.init
            ))
        })?;
    let args = markov
        .bind(&data, &init)
        .map_err(|e| user(format!("{name}: {e}")))?;
    let mut runs = Vec::with_capacity(chains);
    for c in 0..chains {
        let seed = a.seed.wrapping_add(c as u64);
        let run = match a.backend {
            Backend::Interp => {
                let mut s = InterpStepper::new(lowered.program.clone(), seed);
                chain::run_chain(&mut s, &args, steps, burn)
            }
            Backend::C | Backend::Rust => {
                let target = if a.backend == Backend::C {
                    Target::C
                } else {
                    Target::Rust
                };
                let mut s = CompiledStepper::build(
                    &lowered.program,
                    target,
                    &args,
                    seed,
                    &CompileOptions::default(),
                )
                .map_err(|e| kernel_failure(&name, e))?;
                chain::run_chain(&mut s, &args, steps, burn)
            }
        };
        runs.push(run.map_err(|e| user(format!("{name}: chain {}: {e}", c + 1)))?);
    }
    let last = args.last().cloned().unwrap_or(slic_codegen::Val::Unit);
    let names = markov.column_names(&last);
    if let Some(path) = &a.out {
        std::fs::write(path, draws_csv(&names, &runs, burn))
            .map_err(|e| user(format!("cannot write {}: {e}", path.display())))?;
    }
    let text = format!("{}\n", summary(a, &names, &runs, steps + burn));
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `chain,step,<columns>`: one line per kept step of every chain (steps counted from 1,
/// the burn-in included).
fn draws_csv(names: &[String], runs: &[ChainRun], burn: usize) -> String {
    let mut s = format!("chain,step,{}\n", names.join(","));
    for (c, run) in runs.iter().enumerate() {
        for (k, row) in run.draws.iter().enumerate() {
            let cells: Vec<String> = row.iter().map(|x| format!("{x}")).collect();
            // writing to a String cannot fail
            let _ = writeln!(s, "{},{},{}", c + 1, burn + k + 1, cells.join(","));
        }
    }
    s
}

/// The run's summary: per chain its acceptance (the fraction of kept steps that moved
/// the state) and final state; per column the mean, standard deviation, ESS, ESS per
/// second and split-R-hat over the chains.
fn summary(a: &ChainArgs, names: &[String], runs: &[ChainRun], per_chain: usize) -> Json {
    let seconds: f64 = runs.iter().map(|r| r.seconds).sum();
    let mut cols = Map::new();
    for (i, name) in names.iter().enumerate() {
        let per: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| r.draws.iter().map(|row| row[i]).collect())
            .collect();
        let all: Vec<f64> = per.iter().flatten().copied().collect();
        let ess: Option<f64> = per.iter().map(|c| diagnostics::ess(c)).sum::<Option<f64>>();
        let slices: Vec<&[f64]> = per.iter().map(Vec::as_slice).collect();
        let (mean, sd) =
            diagnostics::mean_sd(&all).map_or((None, None), |(m, s)| (Some(m), Some(s)));
        let opt = |x: Option<f64>| x.map_or(Json::Null, json_number);
        cols.insert(
            name.clone(),
            json!({
                "mean": opt(mean),
                "sd": opt(sd),
                "ess": opt(ess),
                "ess_per_second": opt(ess.filter(|_| seconds > 0.0).map(|e| e / seconds)),
                "r_hat": opt(if runs.len() > 1 { diagnostics::split_rhat(&slices) } else { None }),
            }),
        );
    }
    let acceptance: Vec<Json> = runs
        .iter()
        .map(|r| json_number(r.moved as f64 / r.draws.len().max(1) as f64))
        .collect();
    json!({
        "backend": match a.backend {
            Backend::Interp => "interp",
            Backend::C => "c",
            Backend::Rust => "rust",
        },
        "chains": runs.len(),
        "steps": a.steps,
        "burn": a.burn,
        "seed": a.seed,
        "acceptance": acceptance,
        "seconds": json_number(seconds),
        "steps_per_second": json_number(if seconds > 0.0 { (per_chain * runs.len()) as f64 / seconds } else { 0.0 }),
        "columns": cols,
    })
}
