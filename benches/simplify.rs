//! Simplifier speed (issue 5: each corpus case in < 50 ms, most < 1 ms): simplifying every
//! scalar case (CASES.md 1-10 and `corpus/simplify/`), each beside a canonicalise-only
//! baseline of the same program in the same run, on a fresh copy of the loaded store each
//! time; loading is not timed.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use slic_algebra::assume::Context;
use slic_algebra::{canon, front, Store, TermId};
use slic_simplify::SimplifyConfig;

// The allocator the `slic-cas` binary ships with, so these numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The inputs of `tests/simplify.rs`: cases 1-10 and `corpus/simplify/`, not the
/// expected forms or golden outputs.
fn inputs() -> Vec<(String, Store, TermId)> {
    let is_input = |p: &std::path::PathBuf| {
        let n = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        !n.ends_with(".expected.hk") && !n.ends_with(".simplified.hk")
    };
    let scalar_case = |p: &std::path::PathBuf| {
        p.file_name()
            .and_then(|n| n.to_string_lossy().get(..2).map(str::to_string))
            .and_then(|d| d.parse::<u32>().ok())
            .is_some_and(|n| (1..=10).contains(&n))
    };
    let mut out = Vec::new();
    let files = slic_suite::corpus_files("cases")
        .into_iter()
        .filter(scalar_case)
        .chain(slic_suite::corpus_files("simplify"))
        .filter(is_input);
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let mut store = Store::new();
        let Ok(t) = front::load(&mut store, &text) else {
            continue;
        };
        let dir = f
            .parent()
            .and_then(|d| d.file_name())
            .map_or_else(String::new, |d| d.to_string_lossy().into_owned());
        let stem = f
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        out.push((format!("{dir}/{stem}"), store, t));
    }
    out
}

fn simplify(c: &mut Criterion) {
    let mut g = c.benchmark_group("simplify");
    g.warm_up_time(std::time::Duration::from_millis(300));
    g.measurement_time(std::time::Duration::from_millis(800));
    g.sample_size(20);
    for (name, store, t) in inputs() {
        g.bench_function(format!("{name}/canonicalize baseline"), |b| {
            b.iter_batched(
                || store.clone(),
                |mut s| canon::canonicalize(&mut s, &Context::new(), t),
                BatchSize::SmallInput,
            )
        });
        g.bench_function(format!("{name}/simplify"), |b| {
            b.iter_batched(
                || store.clone(),
                |mut s| slic_simplify::simplify(&mut s, t, &SimplifyConfig::default()).term,
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, simplify);
criterion_main!(benches);
