//! Holonomic recognition speed (issue 4, "done when"): recognising the posterior of a
//! normal mean `mu` under 50 normal observation factors, `normal(m0, s0)`'s density in
//! `mu` times `Π_i exp(-(y_i - mu)^2/2)` with free real `y_i`, must take under 5 ms. The
//! baseline in the same run canonicalises the same product without recognising it, the
//! work recognition cannot avoid.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use slic_algebra::assume::Context;
use slic_algebra::{canon, front, Node, Store, TermId, VarId};
use slic_holonomic::{recognise, Family, Support};

// The allocator the `slic-cas` binary ships with, so these numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How many observation factors the posterior has.
const OBSERVATIONS: usize = 50;

/// `fn m0 real: fn s0 prob: fn y0 real: ... fn mu real: prior(mu) * Π_i obs_i(mu)`,
/// loaded: the store, the factor and `mu`.
fn posterior() -> (Store, TermId, VarId) {
    let mut src = String::from("fn m0 real: fn s0 prob: ");
    for i in 0..OBSERVATIONS {
        src += &format!("fn y{i} real: ");
    }
    src += "fn mu real: exp(-(mu - m0)^2 / (2 * s0^2)) / (sqrt(2 * pi) * s0)";
    for i in 0..OBSERVATIONS {
        src += &format!(" * exp(-(y{i} - mu)^2 / 2)");
    }
    let mut store = Store::new();
    let mut t = match front::load(&mut store, &src) {
        Ok(t) => t,
        Err(e) => panic!("the benchmark's program does not load: {e:?}"),
    };
    let mut var = None;
    while let Node::Lam(v, b) = store.node(t) {
        var = Some(*v);
        t = *b;
    }
    match var {
        Some(mu) => (store, t, mu),
        None => panic!("the benchmark's program has no parameter"),
    }
}

fn normal_mean_posterior(c: &mut Criterion) {
    let (store, f, mu) = posterior();
    let ctx = Context::new();
    // what is timed must be the real answer: a normal in mu
    let once = recognise(&mut store.clone(), &ctx, f, mu, &Support::REALS);
    assert!(
        matches!(&once, Ok(r) if matches!(r.family, Family::Normal { .. })),
        "the posterior is not recognised as a normal: {once:?}"
    );
    let mut g = c.benchmark_group("holonomic");
    g.bench_function("canonicalize posterior of 50 normals (baseline)", |b| {
        b.iter_batched(
            || store.clone(),
            |mut s| canon::canonicalize(&mut s, &ctx, f),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("recognise posterior of 50 normals", |b| {
        b.iter_batched(
            || store.clone(),
            |mut s| recognise(&mut s, &ctx, f, mu, &Support::REALS),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, normal_mean_posterior);
criterion_main!(benches);
