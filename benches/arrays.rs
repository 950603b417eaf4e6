//! Array-case speed (issue 10, "Done when": the paper's benchmarks simplified in
//! milliseconds): for the GMM, Naive Bayes and LDA Gibbs updates and the ClinicalTrial and
//! LinearRegression models (CASES.md 18-22), the time to simplify each
//! (`slic_simplify::simplify` on a fresh copy of the loaded store, as `benches/simplify.rs`
//! does), side by side with the time to parse and type-check the same file
//! (`front::load` into a fresh store) in the same run. The file is read once, outside the
//! timing.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use slic_algebra::{front, Store};
use slic_simplify::SimplifyConfig;

// The allocator the `slic-cas` binary ships with, so these numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The benchmark programs of the arrays paper's section 6 in `corpus/cases/`.
const CASES: [&str; 5] = [
    "18-gmm-gibbs",
    "19-naive-bayes-gibbs",
    "20-lda-gibbs",
    "21-clinical-trial",
    "22-linear-regression",
];

fn arrays(c: &mut Criterion) {
    // no timing settings here: the group's would override the command line's
    // (`-- --warm-up-time 1 --measurement-time 3`)
    let mut g = c.benchmark_group("arrays");
    for case in CASES {
        let path = slic_suite::root()
            .join("corpus/cases")
            .join(format!("{case}.hk"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut store = Store::new();
        let t = front::load(&mut store, &text).unwrap_or_else(|_| panic!("{case} does not load"));
        g.bench_function(format!("{case}/parse+typecheck"), |b| {
            b.iter(|| {
                let mut s = Store::new();
                front::load(&mut s, std::hint::black_box(&text)).is_ok()
            })
        });
        g.bench_function(format!("{case}/simplify"), |b| {
            b.iter_batched(
                || store.clone(),
                |mut s| slic_simplify::simplify(&mut s, t, &SimplifyConfig::default()).term,
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, arrays);
criterion_main!(benches);
