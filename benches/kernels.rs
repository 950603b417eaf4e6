//! Generated kernels beside the hand-written C baselines (issue 12's "Done when"), in one
//! run, on the same seeded data of the arrays paper's shapes (`slic_suite::datagen`):
//! - GMM sweep (n = 10,000, K = 50): `slic-cas gibbs`'s chain over the compiled C and Rust
//!   kernels of `corpus/cases/18-gmm-gibbs.simplified.hk`, recomputing and with
//!   incremental statistics (issue 13), against `gmm_recompute.c` (what the paper's
//!   generated code does) and `gmm_incremental.c`;
//! - Naive Bayes update (20 Newsgroups shape) and LDA update (KOS shape, K = 50): one
//!   update of the compiled kernels of cases 19 and 20 against one of the recomputing
//!   baselines (the documents, or tokens, taken in turn); and the Naive Bayes update with
//!   incremental statistics (issue 13) against `nb_incremental.c`;
//! - LDA sweep (KOS shape, K = 50, issue 13): every token once with the statistics kept per
//!   document and per word, against `lda_incremental.c`;
//! - the ablation table of the GMM update (every pass; no histograms, LICM, fusion or
//!   run-time specialisation), per update of the C kernel;
//! - ClinicalTrial (exact enumeration of case 21) and LinearRegression (one run of case
//!   22: its evidence, the residual measure's parameters, and one draw from it) at
//!   n = 10,000, against `clinical.c` and `linreg.c`;
//! - many chains (issue 13, deliverable 4): GMM sweeps per second (n = 2,000, K = 20, so a
//!   sweep is short) of one chain and of two in parallel over the one C library, side by
//!   side (the issue asks for at least 1.8 times one chain's rate with two on two cores).
//!
//! - Metropolis-Hastings steps (issue 15): `slic-cas chain`'s steps of a random-walk
//!   kernel and of the thermometer workflow's kernel (a pair state), compiled C and Rust
//!   against the interpreter.
//!
//! Every kernel is specialised on the data (run-time specialisation), as `gibbs` and `run`
//! build it. Quick with `-- --warm-up-time 1 --measurement-time 3`; the GMM sweeps take
//! about 0.7 s each, so that group alone takes about half a minute.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use slic_algebra::{front, Store, TermId, Type};
use slic_codegen::chain::{run_chain, CompiledStepper, InterpStepper};
use slic_codegen::gibbs::{pick_program, Chain, Checking};
use slic_codegen::incremental::{derive, Incremental};
use slic_codegen::sampler::Rng;
use slic_codegen::{
    lower_draw_only, lower_program, run_chains, CompileOptions, Compiled, CompiledKernel,
    GibbsConfig, Init, Passes, Program, Specialise, Target, Update, Val,
};
use slic_suite::baselines::{self, Baseline, Gibbs};
use slic_suite::datagen::{
    Clinical, Dataset, Gmm, Lda, LinReg, Means, NaiveBayes, KOS, NEWSGROUPS,
};

/// Paths one update's enumeration may follow.
const MAX_PATHS: u64 = 1 << 20;

const TARGETS: [(Target, &str); 2] = [(Target::C, "c"), (Target::Rust, "rust")];

fn compiled(name: &str) -> Baseline {
    baselines::compile(name).unwrap_or_else(|e| panic!("{e}"))
}

fn uniforms(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.uniform()).collect()
}

/// A corpus case lowered with every pass, and its type.
fn lowered(case: &str) -> (Program, Type) {
    lowered_with(case, Passes::default())
}

/// A corpus case loaded: its store, term and type.
fn load_case(case: &str) -> (Store, TermId, Type) {
    let path = slic_suite::root().join("corpus/cases").join(case);
    let text = std::fs::read_to_string(&path).expect("the corpus file");
    let mut store = Store::new();
    let t = front::load(&mut store, &text).expect("the case loads");
    let ty = store.ty(t).clone();
    (store, t, ty)
}

/// A corpus case lowered with `passes`, and its type.
fn lowered_with(case: &str, passes: Passes) -> (Program, Type) {
    let (mut store, t, ty) = load_case(case);
    let l = lower_program(&mut store, t, passes).expect("the case lowers");
    (l.program, ty)
}

/// The update of `case` bound to `data` (written and read back as `gibbs` reads it).
fn bound(case: &str, data: &Dataset, state: &str, index: &str) -> (Program, Update, Vec<Val>) {
    bound_with(case, data, state, index, Passes::default())
}

/// [`bound`] with the program lowered with `passes`: its draw-only form where the data
/// allow, as `slic-cas gibbs` runs it.
fn bound_with(
    case: &str,
    data: &Dataset,
    state: &str,
    index: &str,
    passes: Passes,
) -> (Program, Update, Vec<Val>) {
    let (mut store, t, ty) = load_case(case);
    let full = lower_program(&mut store, t, passes).expect("the case lowers");
    let update = Update::new(&full.program, &ty, state, index).expect("an update");
    let dir = std::env::temp_dir().join(format!("slic-bench-{}-{case}", std::process::id()));
    data.write(&dir).expect("the data writes");
    let read = slic_data::dataset::read_file(&dir.join("data.json")).expect("the data reads");
    let b = update.bind(&read, Some("truth")).expect("the data binds");
    let _ = std::fs::remove_dir_all(&dir);
    let facts = update.data_facts(&b.args);
    let draw_only =
        lower_draw_only(&mut store, t, passes, Some(&facts)).expect("the draw-only form lowers");
    let (p, drawn) = pick_program(&full.program, draw_only.as_ref(), &b.args);
    let labels = draw_only.as_ref().filter(|_| drawn).and_then(|d| d.labels);
    let update = Update::new(p, &ty, state, index)
        .expect("an update")
        .with_labels(labels);
    (p.clone(), update, b.args)
}

fn kernel(p: &Program, target: Target, update: &Update, args: &[Val]) -> CompiledKernel {
    CompiledKernel::build(
        p,
        target,
        update,
        args,
        MAX_PATHS,
        &CompileOptions::default(),
    )
    .expect("the update compiles")
}

/// Sweeps of the incremental kernels of `inc`, C and Rust, as `slic-cas gibbs` runs them.
fn incremental_sweeps(
    g: &mut BenchmarkGroup<'_, WallTime>,
    inc: &Incremental,
    update: &Update,
    args: &[Val],
) {
    for (target, name) in TARGETS {
        let mut kern = CompiledKernel::build_incremental(
            inc,
            target,
            update,
            args,
            MAX_PATHS,
            &CompileOptions::default(),
            Checking::Never,
        )
        .expect("the incremental update compiles");
        let mut chain = Chain::new(update, args, 1, &mut kern).expect("the chain starts");
        g.bench_function(format!("slic-cas {name} incremental"), |b| {
            b.iter(|| chain.sweep(&mut kern).expect("the sweep runs"))
        });
    }
}

fn gmm(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernels/gmm-sweep n=10000 K=50");
    g.sample_size(10);
    let (n, k) = (10_000, 50);
    let d = Gmm::generate(n, k, Means::Paper, 1);
    let (p, update, args) = bound("18-gmm-gibbs.simplified.hk", &d.dataset(), "z", "u");
    for (target, name) in TARGETS {
        let mut kern = kernel(&p, target, &update, &args);
        let mut chain = Chain::new(&update, &args, 1, &mut kern).expect("the chain starts");
        g.bench_function(format!("slic-cas {name}"), |b| {
            b.iter(|| chain.sweep(&mut kern).expect("the sweep runs"))
        });
    }
    // issue 13: the statistics of the point loop kept between updates
    let inc = derive(&p, "z", "u").expect("the GMM update keeps its statistics");
    incremental_sweeps(&mut g, &inc, &update, &args);
    let order: Vec<i64> = (0..n as i64).collect();
    let us = uniforms(n, 2);
    for version in ["recompute", "incremental"] {
        let lib = compiled(&format!("gmm_{version}"));
        let mut s = Gibbs::gmm(&lib, d.s, &d.as_, &d.z, &d.t).expect("gmm_new");
        g.bench_function(format!("hand-written C {version}"), |b| {
            b.iter(|| s.sweep(&order, &us))
        });
    }
    g.finish();
}

/// Sweeps per second of `--chains 1` and `--chains 2` over the C kernel of case 18 (issue
/// 13, deliverable 4): each iteration runs the chains as `slic-cas gibbs` does (each
/// chain binds the data, starts a kernel over the one library and sweeps
/// [`CHAIN_SWEEPS`] times), so the throughput is sweeps over all chains per second.
fn gmm_chains(c: &mut Criterion) {
    const CHAIN_SWEEPS: usize = 10;
    let mut g = c.benchmark_group("kernels/gmm-chains n=2000 K=20 (c)");
    g.sample_size(10);
    let d = Gmm::generate(2_000, 20, Means::Paper, 1);
    let case = "18-gmm-gibbs.simplified.hk";
    let (p, update, args) = bound(case, &d.dataset(), "z", "u");
    let dir = std::env::temp_dir().join(format!("slic-bench-{}-chains", std::process::id()));
    d.dataset().write(&dir).expect("the data writes");
    let data = slic_data::dataset::read_file(&dir.join("data.json")).expect("the data reads");
    let _ = std::fs::remove_dir_all(&dir);
    let library = kernel(&p, Target::C, &update, &args).library();
    let config = GibbsConfig {
        sweeps: CHAIN_SWEEPS,
        warmup: 0,
        seed: 1,
        init: Init::Data,
        classes: None,
    };
    for chains in [1usize, 2] {
        g.throughput(Throughput::Elements((chains * CHAIN_SWEEPS) as u64));
        g.bench_function(format!("{chains} chain(s)"), |b| {
            b.iter(|| {
                let k =
                    |_| CompiledKernel::new(std::sync::Arc::clone(&library), MAX_PATHS, &update);
                run_chains(&update, &data, Some("truth"), &config, chains, k, |_, _| {})
                    .expect("the chains run")
            })
        });
    }
    g.finish();
}

/// The ablation table (the paper's Table 2): one GMM update (n = 10,000, K = 50)
/// of the C kernel with every pass, without the histogram transform, without LICM,
/// without fusion, and without run-time specialisation (a sweep is n updates). Per update,
/// since a sweep without histograms would take minutes.
fn gmm_ablation(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernels/gmm-update-ablation n=10000 K=50 (c)");
    g.sample_size(10);
    let (n, k) = (10_000, 50);
    let d = Gmm::generate(n, k, Means::Paper, 1);
    let all = Passes::default();
    let settings = [
        ("all passes", all, true),
        (
            "--no-histogram",
            Passes {
                histogram: false,
                ..all
            },
            true,
        ),
        ("--no-licm", Passes { licm: false, ..all }, true),
        (
            "--no-fusion",
            Passes {
                fusion: false,
                ..all
            },
            true,
        ),
        (
            "--no-draw-only",
            Passes {
                draw_only: false,
                ..all
            },
            true,
        ),
        ("--no-specialise", all, false),
    ];
    for (name, passes, specialise) in settings {
        let (p, update, args) =
            bound_with("18-gmm-gibbs.simplified.hk", &d.dataset(), "z", "u", passes);
        let mut kern = if specialise {
            kernel(&p, Target::C, &update, &args)
        } else {
            let k = Compiled::build(
                &p,
                Target::C,
                &Specialise::default(),
                None,
                &CompileOptions::default(),
            )
            .expect("the update compiles");
            CompiledKernel::new(k, MAX_PATHS, &update)
        };
        let mut chain = Chain::new(&update, &args, 1, &mut kern).expect("the chain starts");
        let mut u = 0usize;
        g.bench_function(name, |b| {
            b.iter(|| {
                chain.update(&mut kern, u).expect("the update runs");
                u = (u + 1) % n;
            })
        });
    }
    g.finish();
}

/// One update of a topic model's compiled kernel and of its recomputing baseline, the
/// points taken in turn.
fn topic_update(
    c: &mut Criterion,
    group: &str,
    (case, state, index): (&str, &str, &str),
    data: &Dataset,
    points: usize,
    mut baseline: Gibbs,
) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    let (p, update, args) = bound(case, data, state, index);
    for (target, name) in TARGETS {
        let mut kern = kernel(&p, target, &update, &args);
        let mut chain = Chain::new(&update, &args, 1, &mut kern).expect("the chain starts");
        let mut u = 0usize;
        g.bench_function(format!("slic-cas {name}"), |b| {
            b.iter(|| {
                chain.update(&mut kern, u).expect("the update runs");
                u = (u + 1) % points;
            })
        });
    }
    let us = uniforms(points, 2);
    let mut u = 0usize;
    g.bench_function("hand-written C recompute", |b| {
        b.iter(|| {
            baseline.sweep(&[u as i64], &us[u..=u]);
            u = (u + 1) % points;
        })
    });
    g.finish();
}

fn naive_bayes(c: &mut Criterion) {
    let (docs, vocab, tokens, topics) = NEWSGROUPS;
    let d = NaiveBayes::generate(docs, vocab, tokens, topics, 1);
    let lib = compiled("nb_recompute");
    let base = Gibbs::naive_bayes(&lib, &d.topic_prior, &d.word_prior, &d.z, &d.w, &d.doc)
        .expect("nb_new");
    let case = ("19-naive-bayes-gibbs.simplified.hk", "z", "u");
    topic_update(
        c,
        "kernels/naive-bayes-update 20news",
        case,
        &d.dataset(),
        docs,
        base,
    );
    // issue 13: the statistics kept between updates (the topic-by-word table over the
    // tokens, each document's tokens found through an index of `doc`), one update of
    // each document in turn (remove, weights, draw, add), against `nb_incremental.c`
    let mut g = c.benchmark_group("kernels/naive-bayes-update-incremental 20news");
    g.sample_size(10);
    let (p, update, args) = bound(case.0, &d.dataset(), case.1, case.2);
    let inc = derive(&p, "z", "u").expect("the Naive Bayes update keeps its statistics");
    for (target, name) in TARGETS {
        let mut kern = CompiledKernel::build_incremental(
            &inc,
            target,
            &update,
            &args,
            MAX_PATHS,
            &CompileOptions::default(),
            Checking::Never,
        )
        .expect("the incremental update compiles");
        let mut chain = Chain::new(&update, &args, 1, &mut kern).expect("the chain starts");
        let mut u = 0usize;
        g.bench_function(format!("slic-cas {name} incremental"), |b| {
            b.iter(|| {
                chain.update(&mut kern, u).expect("the update runs");
                u = (u + 1) % docs;
            })
        });
    }
    let lib = compiled("nb_incremental");
    let mut s = Gibbs::naive_bayes(&lib, &d.topic_prior, &d.word_prior, &d.z, &d.w, &d.doc)
        .expect("nb_new");
    let us = uniforms(docs, 2);
    let mut u = 0usize;
    g.bench_function("hand-written C incremental", |b| {
        b.iter(|| {
            s.sweep(&[u as i64], &us[u..=u]);
            u = (u + 1) % docs;
        })
    });
    g.finish();
    // the same updates as `slic-cas gibbs` runs them: a whole sweep, every document in
    // turn inside one kernel (`codegen::incremental::sweep_program`), against
    // `nb_incremental.c` sweeping the same documents in the same order
    let mut g = c.benchmark_group("kernels/naive-bayes-sweep 20news");
    g.sample_size(10);
    incremental_sweeps(&mut g, &inc, &update, &args);
    let order: Vec<i64> = (0..docs as i64).collect();
    let us = uniforms(docs, 3);
    let mut s = Gibbs::naive_bayes(&lib, &d.topic_prior, &d.word_prior, &d.z, &d.w, &d.doc)
        .expect("nb_new");
    g.bench_function("hand-written C incremental", |b| {
        b.iter(|| s.sweep(&order, &us))
    });
    g.finish();
}

fn lda(c: &mut Criterion) {
    let (docs, vocab, tokens, topics) = KOS;
    let d = Lda::generate(docs, vocab, tokens, topics, 1);
    let lib = compiled("lda_recompute");
    let base = Gibbs::lda_of(&lib, &d).expect("lda_new");
    topic_update(
        c,
        "kernels/lda-update kos K=50",
        ("20-lda-gibbs.simplified.hk", "z", "wordUpdate"),
        &d.dataset(),
        d.w.len(),
        base,
    );
}

/// Whole LDA sweeps (issue 13): every token updated once, the statistics kept between
/// updates (document-by-topic and word-by-topic rows per key, `codegen::incremental`),
/// against `lda_incremental.c` on the same data. A recomputing sweep is the update's time
/// (the group above) times the tokens: minutes, so not run here.
fn lda_sweep(c: &mut Criterion) {
    let (docs, vocab, tokens, topics) = KOS;
    let d = Lda::generate(docs, vocab, tokens, topics, 1);
    let mut g = c.benchmark_group("kernels/lda-sweep kos K=50");
    g.sample_size(10);
    let (p, update, args) = bound(
        "20-lda-gibbs.simplified.hk",
        &d.dataset(),
        "z",
        "wordUpdate",
    );
    let inc = derive(&p, "z", "wordUpdate").expect("the LDA update keeps its statistics");
    incremental_sweeps(&mut g, &inc, &update, &args);
    let n = d.w.len();
    let order: Vec<i64> = (0..n as i64).collect();
    let us = uniforms(n, 2);
    let lib = compiled("lda_incremental");
    let mut s = Gibbs::lda_of(&lib, &d).expect("lda_new");
    g.bench_function("hand-written C incremental", |b| {
        b.iter(|| s.sweep(&order, &us))
    });
    g.finish();
}

fn solves(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernels/solve n=10000");
    let n = 10_000;
    let ct = Clinical::generate(n, 1);
    let bools = |v: &[bool]| Val::array(v.iter().map(|&b| Val::Bool(b)).collect());
    let args = vec![Val::Nat(n as u64), bools(&ct.control), bools(&ct.treated)];
    let (p, _) = lowered("21-clinical-trial.simplified.hk");
    for (target, name) in TARGETS {
        let spec = Specialise::all(p.params.len());
        let k = Compiled::build(&p, target, &spec, Some(&args), &CompileOptions::default())
            .expect("compiles");
        let prepared = k.prepare(&args).expect("the arguments fit");
        g.bench_function(format!("clinical-trial/slic-cas {name}"), |b| {
            b.iter(|| k.enumerate_prepared(&prepared, MAX_PATHS).expect("solves"))
        });
    }
    let bytes = |v: &[bool]| v.iter().map(|&b| u8::from(b)).collect::<Vec<u8>>();
    let (control, treated) = (bytes(&ct.control), bytes(&ct.treated));
    let lib = compiled("clinical");
    let solver = baselines::ClinicalSolver::new(&lib).expect("clinical_solve");
    g.bench_function("clinical-trial/hand-written C", |b| {
        b.iter(|| solver.solve(&control, &treated))
    });

    let lr = LinReg::generate(n, 1);
    let reals = |v: &[f64]| Val::array(v.iter().map(|&x| Val::Real(x)).collect());
    let args = vec![reals(&lr.x), reals(&lr.y)];
    let (p, _) = lowered("22-linear-regression.simplified.hk");
    for (target, name) in TARGETS {
        let spec = Specialise::all(p.params.len());
        let k = Compiled::build(&p, target, &spec, Some(&args), &CompileOptions::default())
            .expect("compiles");
        let prepared = k.prepare(&args).expect("the arguments fit");
        let mut seed = 0;
        g.bench_function(format!("linear-regression/slic-cas {name}"), |b| {
            b.iter(|| {
                seed += 1;
                k.sample_prepared(&prepared, 1, seed).expect("solves")
            })
        });
    }
    let lib = compiled("linreg");
    let solver = baselines::LinRegSolver::new(&lib).expect("linreg_solve");
    g.bench_function("linear-regression/hand-written C", |b| {
        b.iter(|| solver.solve(&lr.x, &lr.y))
    });
    g.finish();
}

/// Issue 15: Metropolis-Hastings steps of a compiled kernel against the interpreter, in
/// one run, 1,000 steps per iteration (the throughput `slic-cas chain` reports as steps
/// per second): a random-walk kernel for normal(0, 1) from 0.5, and the thermometer
/// workflow (`corpus/mcmc/02-thermometer.hk`: disint, simplify, mcmc with a random walk
/// on the two noise levels, a pair state) from (5, 2).
fn mh_steps(c: &mut Criterion) {
    let text = "fn x real:\n    y <~ normal(x, 1)\n    b <~ bernoulli(min(1, exp((x * x - y * y) / 2)))\n    return if b: y else: x\n";
    let mut store = Store::new();
    let t = front::load(&mut store, text).expect("the kernel loads");
    let p = lower_program(&mut store, t, Passes::default())
        .expect("the kernel lowers")
        .program;
    mh_group(c, "random walk, normal target", &p, Val::Real(0.5));

    let path = slic_suite::root().join("corpus/mcmc/02-thermometer.hk");
    let text = std::fs::read_to_string(path).expect("the workflow file");
    let mut store = Store::new();
    let t = front::load(&mut store, &text).expect("the workflow loads");
    let s = slic_simplify::simplify(&mut store, t, &slic_simplify::SimplifyConfig::default());
    let p = lower_program(&mut store, s.term, Passes::default())
        .expect("the kernel lowers")
        .program;
    let start = Val::Pair(std::rc::Rc::new((Val::Real(5.0), Val::Real(2.0))));
    mh_group(c, "thermometer workflow", &p, start);
}

/// One group of [`mh_steps`]: the kernel `p` from `start` through the interpreter and
/// both compiled targets.
fn mh_group(c: &mut Criterion, what: &str, p: &slic_codegen::Program, start: Val) {
    let mut g = c.benchmark_group(format!("kernels/mh-steps 1000 ({what})"));
    let start = [start];
    let mut interp = InterpStepper::new(p.clone(), 1);
    g.bench_function("slic-cas interp", |b| {
        b.iter(|| run_chain(&mut interp, &start, 1000, 0).expect("the chain runs"))
    });
    for (target, name) in TARGETS {
        let mut s = CompiledStepper::build(p, target, &start, 1, &CompileOptions::default())
            .expect("the kernel compiles");
        g.bench_function(format!("slic-cas {name}"), |b| {
            b.iter(|| run_chain(&mut s, &start, 1000, 0).expect("the chain runs"))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    solves,
    gmm,
    gmm_chains,
    gmm_ablation,
    naive_bayes,
    lda,
    lda_sweep,
    mh_steps
);
criterion_main!(benches);
