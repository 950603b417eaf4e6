//! Recognition speed (issue 4, "done when"): the posterior of a normal mean under 50
//! normal observation factors `exp(-(y_i - mu)^2 / 2)` (the `y_i` free) and a normal
//! prior, recognised as a normal with its exact weight; must stay well under 5 ms. The
//! paper's eq. (7) factor is timed beside it as a small baseline. Loading is not timed;
//! each iteration works on a fresh copy of the loaded store.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use slic_algebra::assume::Context;
use slic_algebra::{front, Node, Store, TermId, VarId};
use slic_holonomic::{recognise, Support};

// The allocator the `slic-cas` binary ships with, so these numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The body under the `fn`s and the last parameter (the variable).
fn load(src: &str) -> (Store, TermId, VarId) {
    let mut store = Store::new();
    let mut t = match front::load(&mut store, src) {
        Ok(t) => t,
        Err(e) => panic!("{src}: {e:?}"),
    };
    let mut var = None;
    while let Node::Lam(v, b) = store.node(t) {
        var = Some(*v);
        t = *b;
    }
    match var {
        Some(v) => (store, t, v),
        None => panic!("{src}: no parameter"),
    }
}

fn posterior(n: usize) -> String {
    let mut src = String::new();
    for i in 0..n {
        src.push_str(&format!("fn y{i} real: "));
    }
    src.push_str("fn mu real: exp(-mu^2/2)");
    for i in 0..n {
        src.push_str(&format!(" * exp(-(y{i} - mu)^2/2)"));
    }
    src
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Times `recognise` on the factor `src` (over the reals) on a fresh store copy.
fn bench(g: &mut Group<'_>, name: &str, src: &str) {
    let (store, f, x) = load(src);
    assert!(recognise(&mut store.clone(), &Context::new(), f, x, &Support::REALS).is_ok());
    g.bench_function(name, |b| {
        b.iter_batched_ref(
            || store.clone(),
            |s| recognise(s, &Context::new(), f, x, &Support::REALS),
            BatchSize::SmallInput,
        )
    });
}

fn normal_posterior(c: &mut Criterion) {
    let eq7 = "fn mu real: fn y real: fn z real: exp(-1/3*mu^2) * exp(-1/3*y^2) * exp(1/3*mu*y) \
               * exp(-1/3*z^2) * exp(1/3*mu*z) * exp(1/3*y*z) / (2 * sqrt(3) * pi)";
    let big = posterior(50);
    let mut g = c.benchmark_group("recognise");
    g.sample_size(30);
    bench(&mut g, "eq. (7) factor in z", eq7);
    bench(&mut g, "normal mean, 50 observations", &big);
    g.finish();
}

criterion_group!(benches, normal_posterior);
criterion_main!(benches);
