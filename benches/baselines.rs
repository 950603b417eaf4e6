//! The hand-written C baselines (issue 12, deliverable 6; issue 13): what generated kernels
//! are measured against, on seeded data of the arrays paper's shapes generated in process
//! (`slic_suite::datagen`, the same generator as `gen-data`):
//! - GMM sweep (n = 10,000, K = 50 and n = 5,000, K = 25), recomputing and incremental;
//! - Naive Bayes update (20 Newsgroups shape: 19,997 documents, 50,000 words, about 2.6
//!   million tokens, 20 topics), recomputing and incremental, one document per iteration in
//!   turn;
//! - LDA (KOS shape, K = 50): the incremental sweep, and the recomputing update (a
//!   recomputing sweep is O(tokens^2), minutes: its sweep is the update times the tokens);
//! - ClinicalTrial and LinearRegression solves at n = 10,000.
//!
//! The baselines are compiled with the system C compiler when the benchmark starts
//! (`slic_suite::baselines`). Quick with `-- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, Criterion};
use slic_codegen::sampler::Rng;
use slic_suite::baselines::{self, Baseline, Gibbs};
use slic_suite::datagen::{Clinical, Gmm, Lda, LinReg, Means, NaiveBayes, KOS, NEWSGROUPS};

fn compiled(name: &str) -> Baseline {
    baselines::compile(name).unwrap_or_else(|e| panic!("{e}"))
}

fn uniforms(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.uniform()).collect()
}

fn gmm(c: &mut Criterion) {
    // no timing settings here but the sample size: the group's would override the command
    // line's (`-- --warm-up-time 1 --measurement-time 3`)
    let mut g = c.benchmark_group("baselines/gmm-sweep");
    g.sample_size(10);
    for (n, k) in [(10_000, 50), (5_000, 25)] {
        let d = Gmm::generate(n, k, Means::Paper, 1);
        let order: Vec<i64> = (0..n as i64).collect();
        let us = uniforms(n, 2);
        for version in ["recompute", "incremental"] {
            let lib = compiled(&format!("gmm_{version}"));
            let mut s = Gibbs::gmm(&lib, d.s, &d.as_, &d.z, &d.t).expect("gmm_new");
            g.bench_function(format!("n={n} K={k}/{version}"), |b| {
                b.iter(|| s.sweep(&order, &us))
            });
        }
    }
    g.finish();
}

fn naive_bayes(c: &mut Criterion) {
    let mut g = c.benchmark_group("baselines/naive-bayes-update");
    let (docs, vocab, tokens, topics) = NEWSGROUPS;
    let d = NaiveBayes::generate(docs, vocab, tokens, topics, 1);
    let us = uniforms(docs, 2);
    for version in ["recompute", "incremental"] {
        let lib = compiled(&format!("nb_{version}"));
        let mut s = Gibbs::naive_bayes(&lib, &d.topic_prior, &d.word_prior, &d.z, &d.w, &d.doc)
            .expect("nb_new");
        let mut u = 0usize;
        g.bench_function(format!("20news/{version}"), |b| {
            b.iter(|| {
                s.sweep(&[u as i64], &us[u..=u]);
                u = (u + 1) % docs;
            })
        });
    }
    g.finish();
}

fn lda(c: &mut Criterion) {
    let (docs, vocab, tokens, topics) = KOS;
    let d = Lda::generate(docs, vocab, tokens, topics, 1);
    let n = d.w.len();
    let us = uniforms(n, 2);
    let mut g = c.benchmark_group("baselines/lda");
    g.sample_size(10);
    let inc = compiled("lda_incremental");
    let mut s = Gibbs::lda_of(&inc, &d).expect("lda_new");
    let order: Vec<i64> = (0..n as i64).collect();
    g.bench_function("kos-sweep/incremental", |b| b.iter(|| s.sweep(&order, &us)));
    let rec = compiled("lda_recompute");
    let mut s = Gibbs::lda_of(&rec, &d).expect("lda_new");
    let mut u = 0usize;
    g.bench_function("kos-update/recompute", |b| {
        b.iter(|| {
            s.sweep(&[u as i64], &us[u..=u]);
            u = (u + 1) % n;
        })
    });
    g.finish();
}

fn exact(c: &mut Criterion) {
    let mut g = c.benchmark_group("baselines/solve");
    let n = 10_000;
    let ct = Clinical::generate(n, 1);
    let bytes = |v: &[bool]| v.iter().map(|&b| u8::from(b)).collect::<Vec<u8>>();
    let (control, treated) = (bytes(&ct.control), bytes(&ct.treated));
    let lib = compiled("clinical");
    let solver = baselines::ClinicalSolver::new(&lib).expect("clinical_solve");
    g.bench_function("clinical-trial n=10000", |b| {
        b.iter(|| solver.solve(&control, &treated))
    });
    let lr = LinReg::generate(n, 1);
    let lib = compiled("linreg");
    let solver = baselines::LinRegSolver::new(&lib).expect("linreg_solve");
    g.bench_function("linear-regression n=10000", |b| {
        b.iter(|| solver.solve(&lr.x, &lr.y))
    });
    g.finish();
}

criterion_group!(benches, gmm, naive_bayes, lda, exact);
criterion_main!(benches);
