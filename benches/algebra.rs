//! Exact algebra speed (issue 3): expanding `(x1 + ... + x8)^4` (330 terms) beside a
//! baseline in the same run (squaring the 8-term sum, 36 terms), and canonicalising every
//! corpus case.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use slic_algebra::assume::Context;
use slic_algebra::poly::Poly;
use slic_algebra::{canon, front, Store};

// The allocator the `slic-cas` binary ships with, so these numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn eight_term_sum() -> Poly {
    (0..8).fold(Poly::zero(), |acc, v| acc.add(&Poly::var(v)))
}

fn expansion(c: &mut Criterion) {
    let s = eight_term_sum();
    assert_eq!(s.pow(4).terms().len(), 330);
    let mut g = c.benchmark_group("expand");
    g.bench_function("(x1+..+x8)^2 baseline", |b| {
        b.iter(|| std::hint::black_box(&s).pow(2))
    });
    g.bench_function("(x1+..+x8)^4", |b| {
        b.iter(|| std::hint::black_box(&s).pow(4))
    });
    g.finish();
}

/// Canonicalising each corpus case (every weight, density argument and other numeric
/// expression in it), on a fresh copy of the loaded store each time; loading is not timed.
fn corpus_cases(c: &mut Criterion) {
    let mut g = c.benchmark_group("canonicalize");
    g.warm_up_time(std::time::Duration::from_millis(300));
    g.measurement_time(std::time::Duration::from_millis(800));
    g.sample_size(20);
    let files = slic_suite::corpus_files("cases");
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let mut store = Store::new();
        let Ok(t) = front::load(&mut store, &text) else {
            continue;
        };
        let name = f
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        g.bench_function(name, |b| {
            b.iter_batched(
                || store.clone(),
                |mut s| canon::canonicalize(&mut s, &Context::new(), t),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, expansion, corpus_cases);
criterion_main!(benches);
