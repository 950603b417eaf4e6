//! Incremental statistics of Gibbs updates (issue 13, `slic_codegen::incremental` and the
//! kernels of `slic_codegen::gibbs`):
//! - which loops of the GMM update (case 18) and of the two mixtures of `corpus/gibbs/`
//!   keep their statistics, the LDA update's (case 20) kept per document and per word,
//!   and what the Naive Bayes update still recomputes;
//! - proptest: on random data, random labels and random sequences of label moves (the
//!   three mixtures and LDA), the
//!   interpreter's incremental kernel gives the plain kernel's distribution at every
//!   update, and its statistics equal a full recomputation after every commit (checked
//!   by `Checking::Every`: exactly for counts, 1e-12 relative for sums);
//! - the compiled C and Rust incremental kernels (the LDA's among them) give the
//!   interpreter's distributions through sweeps of moves, checking their statistics after every commit;
//! - a `remove` made wrong on purpose is caught by the check;
//! - a compiled sweep kernel (`incremental::sweep_program`) draws a sweep's first point
//!   from its conditional (chi-square against the interpreter's categorical) and leaves
//!   statistics that give every point the plain program's distribution.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use slic_algebra::{front, Store, Type};
use slic_codegen::gibbs::{pick_program, Checking};
use slic_codegen::incremental::{derive, sweep_program, Incremental, StatKind};
use slic_codegen::sampler::Rng;
use slic_codegen::{
    lower_draw_only, lower_program, Chain, CompileOptions, CompiledKernel, InterpKernel, Passes,
    Program, Target, Update, UpdateKernel,
};
use slic_simplify::SimplifyConfig;
use slic_suite::gibbs_args::{self, below, Args};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// A corpus program, simplified first unless it is already, lowered with every pass.
fn lowered(rel: &str) -> (Program, Type) {
    let text = std::fs::read_to_string(root().join(rel)).expect("the corpus file");
    let mut store = Store::new();
    let mut t = front::load(&mut store, &text).expect("the program loads");
    if !rel.ends_with(".simplified.hk") {
        t = slic_simplify::simplify(&mut store, t, &SimplifyConfig::default()).term;
    }
    let ty = store.ty(t).clone();
    let l = lower_program(&mut store, t, Passes::default()).expect("the program lowers");
    (l.program, ty)
}

struct Case {
    program: Program,
    inc: Incremental,
    update: Update,
}

fn case(rel: &str, state: &str, index: &str) -> Case {
    let (program, ty) = lowered(rel);
    let update = Update::new(&program, &ty, state, index).expect("an update");
    let inc = derive(&program, state, index).unwrap_or_else(|e| panic!("{rel}: {e}"));
    Case {
        program,
        inc,
        update,
    }
}

/// A corpus update as `slic-cas gibbs` runs it on the arguments `a`: its draw-only form,
/// specialised to them (`lower_draw_only` with their facts), where they allow it; and its
/// incremental form. (The LDA's key tests compare with the data's last word, a literal
/// only once the data fix the vocabulary's size.)
fn specialised(rel: &str, state: &str, index: &str, a: &[slic_codegen::Val]) -> Case {
    try_specialised(rel, state, index, a).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// [`specialised`], or why the specialised update keeps no statistics.
fn try_specialised(
    rel: &str,
    state: &str,
    index: &str,
    a: &[slic_codegen::Val],
) -> Result<Case, slic_codegen::incremental::NotIncremental> {
    let text = std::fs::read_to_string(root().join(rel)).expect("the corpus file");
    let mut store = Store::new();
    let t = front::load(&mut store, &text).expect("the program loads");
    let ty = store.ty(t).clone();
    let full = lower_program(&mut store, t, Passes::default()).expect("the program lowers");
    let update = Update::new(&full.program, &ty, state, index).expect("an update");
    let facts = update.data_facts(a);
    let draw_only = lower_draw_only(&mut store, t, Passes::default(), Some(&facts))
        .expect("the draw-only form lowers");
    let (p, drawn) = pick_program(&full.program, draw_only.as_ref(), a);
    let labels = draw_only.as_ref().filter(|_| drawn).and_then(|d| d.labels);
    let update = Update::new(p, &ty, state, index)
        .expect("an update")
        .with_labels(labels);
    let inc = derive(p, state, index)?;
    Ok(Case {
        program: p.clone(),
        inc,
        update,
    })
}

const GMM: &str = "corpus/cases/18-gmm-gibbs.simplified.hk";
const POISSON: &str = "corpus/gibbs/poisson-mixture-gibbs.hk";
const EXPONENTIAL: &str = "corpus/gibbs/exponential-mixture-gibbs.hk";
const LDA: &str = "corpus/cases/20-lda-gibbs.simplified.hk";
const NAIVE_BAYES: &str = "corpus/cases/19-naive-bayes-gibbs.simplified.hk";

fn kept(inc: &Incremental) -> Vec<(String, StatKind)> {
    inc.stats.iter().map(|s| (s.of.clone(), s.kind)).collect()
}

#[test]
fn the_point_loops_keep_their_statistics() {
    use slic_codegen::AssignOp;
    let gmm = case(GMM, "z", "u");
    // per class: the sums of the points and their counts; the sum of squares of the
    // points with a valid label, and the count of invalid labels; and, split off the
    // loops over classes that fusion made, the Dirichlet's `Σ_k as[k]` and `Π_k Γ(as[k])`
    // (no label reaches them: computed once); and the prior's `prob2real(as[k])`, which
    // the loop over classes takes at every update, and its suffix sums, which the
    // general form's stick-breaking factors sum per class, as tables built once
    assert_eq!(
        kept(&gmm.inc),
        [
            ("hist".to_string(), StatKind::Moving),
            ("hist_1".to_string(), StatKind::Moving),
            ("sum".to_string(), StatKind::Moving),
            ("sum_2".to_string(), StatKind::Moving),
            ("sum_8".to_string(), StatKind::Constant(AssignOp::Add)),
            ("prod_5".to_string(), StatKind::Constant(AssignOp::Mul)),
            ("prob2real of as".to_string(), StatKind::Table),
            ("suffix sums of as".to_string(), StatKind::Table),
        ]
    );
    // the Poisson mixture's product of the x[i]! reads no label: computed once
    let poisson = case(POISSON, "z", "u");
    let constant = StatKind::Constant(AssignOp::Mul);
    assert!(
        kept(&poisson.inc).iter().any(|(_, k)| *k == constant),
        "{:?}",
        kept(&poisson.inc)
    );
    assert!(
        poisson
            .inc
            .stats
            .iter()
            .filter(|s| s.kind == StatKind::Moving)
            .count()
            >= 2
    );
    let exponential = case(EXPONENTIAL, "z", "u");
    assert!(exponential
        .inc
        .stats
        .iter()
        .any(|s| s.kind == StatKind::Moving));
    // the update reads the statistics in O(classes): no loop over the points is left
    // that runs for valid data (the two left sum only when the last class is empty of
    // classes, `0 < K - 1` false)
    for c in [&gmm, &poisson, &exponential] {
        let recomputed: Vec<_> = c.inc.loops.iter().filter(|l| l.verdict.is_err()).collect();
        assert!(recomputed.len() <= 2, "{recomputed:?}");
    }
}

#[test]
fn lda_keeps_its_counts_per_document_and_per_word() {
    // the update's token loop counts the topics of its own document's tokens and of its
    // own word's: rows of a document-by-topic and a word-by-topic table (`keyed.rs`)
    let a = gibbs_args::lda(30, 4, &mut Rng::seed_from_u64(5));
    let lda = specialised(LDA, "z", "wordUpdate", &a);
    let keyed: Vec<(String, String)> = lda
        .inc
        .stats
        .iter()
        .filter_map(|s| s.key.as_ref().map(|k| (s.of.clone(), k.array.clone())))
        .collect();
    assert!(
        keyed.iter().any(|(_, a)| a == "doc") && keyed.iter().any(|(_, a)| a == "w"),
        "{keyed:?}"
    );
    // no loop over the tokens is left in the update
    let recomputed: Vec<_> = lda
        .inc
        .loops
        .iter()
        .filter(|l| l.verdict.is_err())
        .collect();
    assert!(recomputed.is_empty(), "{recomputed:?}");
}

#[test]
fn naive_bayes_keeps_its_statistics_over_each_documents_tokens() {
    // its loop over tokens reads the label of each token's document, `z[doc[j]]`: a point
    // of the state is a document, and the loop runs over its members; as `gibbs` runs it
    // (specialised to the data), the topic-by-word counts are kept, with the index of
    // each document's tokens
    let mut rng = Rng::seed_from_u64(3);
    let a = gibbs_args::naive_bayes(8, 3, &mut rng);
    let c = specialised(NAIVE_BAYES, "z", "u", &a);
    let grouped = c
        .inc
        .loops
        .iter()
        .filter(|l| {
            l.verdict
                .as_ref()
                .is_ok_and(|accs| accs.iter().any(|x| x.contains("members of each doc")))
        })
        .count();
    assert_eq!(grouped, 1, "{:?}", c.inc.loops);
    let index: Vec<_> = c
        .inc
        .stats
        .iter()
        .filter(|s| s.kind == StatKind::Index)
        .map(|s| s.of.as_str())
        .collect();
    assert_eq!(index, ["starts of doc", "members of doc"]);
    // the word prior, converted out of log space for every class and word of the moved
    // document, is a table built once by init
    assert!(c
        .inc
        .stats
        .iter()
        .any(|s| s.kind == StatKind::Table && s.of == "prob2real of word_prior"));
    // the document's histogram and its list of words are kept from one update to the
    // next, and only the words listed are set back to 0, just before the draw; neither
    // is filled whole, by the update or by the sweep
    let listed: Vec<&str> = c
        .inc
        .stats
        .iter()
        .filter(|s| s.kind == StatKind::Scratch && s.of.contains("zeros again before the draw"))
        .map(|s| s.param.as_str())
        .collect();
    assert_eq!(listed.len(), 2, "{:?}", c.inc.stats);
    let text = c.inc.update.to_string();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let draw = lines
        .iter()
        .position(|l| l.starts_with("draw "))
        .expect("the draw");
    // `for t in 0..n { hist[ks[t]] = 0; ks[t] = 0 }`: the table, then the list
    assert!(lines[draw - 4].starts_with("for "), "{text}");
    let table = lines[draw - 3].split('[').next().unwrap_or_default();
    let list = lines[draw - 2].split('[').next().unwrap_or_default();
    assert!(lines[draw - 3].ends_with("] = 0") && lines[draw - 2].ends_with("] = 0"));
    let mut both = [table, list];
    both.sort();
    let mut want = [listed[0], listed[1]];
    want.sort();
    assert_eq!(both, want);
    let sweep = sweep_program(&c.inc, "z", "u")
        .expect("a sweep")
        .to_string();
    for name in [table, list] {
        assert!(!text.contains(&format!("{name}[c")), "{name}: {text}");
        assert!(
            !sweep.contains(&format!("{name}[sweep_c")),
            "{name}: {sweep}"
        );
    }
    // the general program (not specialised) keeps that loop under a test the update
    // computes in a `var`: refused, with the reason, never guessed
    let (program, _) = lowered(NAIVE_BAYES);
    let e = derive(&program, "z", "u").expect_err("the general form recomputes");
    assert!(!e.loops.is_empty() && e.invalid.is_none(), "{e}");
}

/// The distributions of two kernels at `u` agree: the same labels, log weights within
/// 1e-9 relative.
fn same_distribution(a: &[(u64, f64)], b: &[(u64, f64)]) -> Result<(), String> {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_by_key(|x| x.0);
    b.sort_by_key(|x| x.0);
    let close = |x: f64, y: f64| x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0);
    if a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.0 == y.0 && close(x.1, y.1)) {
        Ok(())
    } else {
        Err(format!("{a:?} vs {b:?}"))
    }
}

/// Updates `moves` in turn on both kernels (each update's distribution compared, then
/// the move's label committed to both).
fn follow(
    plain: &mut impl UpdateKernel,
    inc: &mut impl UpdateKernel,
    moves: &[(usize, u64)],
) -> Result<(), String> {
    for (step, &(u, k)) in moves.iter().enumerate() {
        let a = plain.distribution(u).map_err(|e| format!("plain: {e}"))?;
        let b = inc
            .distribution(u)
            .map_err(|e| format!("incremental: {e}"))?;
        same_distribution(&a, &b).map_err(|e| format!("step {step}, u = {u}: {e}"))?;
        plain.commit(u, k).map_err(|e| e.to_string())?;
        inc.commit(u, k)
            .map_err(|e| format!("step {step}, u = {u}: {e}"))?;
    }
    Ok(())
}

/// Moves of random points to random labels below `k` (points outside `0..n` too, which
/// every kernel must treat as the program does).
fn moves(n: usize, k: usize, m: usize, rng: &mut Rng) -> Vec<(usize, u64)> {
    (0..m)
        .map(|_| (below(rng, n) as usize, below(rng, k)))
        .collect()
}

fn interp_follows(c: &Case, args: Args, n: usize, k: usize, seed: u64) -> Result<(), String> {
    let mut rng = Rng::seed_from_u64(seed);
    let a = args(n, k, &mut rng);
    follows_on(c, &a, n, k, &mut rng)
}

/// The case's interpreter kernel, incremental and checked after every commit, against
/// the plain one on `a` through `3 n` random moves.
fn follows_on(
    c: &Case,
    a: &[slic_codegen::Val],
    n: usize,
    k: usize,
    rng: &mut Rng,
) -> Result<(), String> {
    let mut plain = InterpKernel::new(c.program.clone(), 1000, &c.update);
    let mut inc = InterpKernel::incremental(&c.inc, 1000, &c.update, Checking::Every);
    plain.start(a).map_err(|e| e.to_string())?;
    inc.start(a).map_err(|e| e.to_string())?;
    follow(&mut plain, &mut inc, &moves(n, k, 3 * n, rng))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn incremental_statistics_follow_random_moves(
        n in 1usize..9,
        k in 1usize..5,
        seed in any::<u64>(),
    ) {
        thread_local! {
            static CASES: Vec<(Case, Args)> = vec![
                (case(GMM, "z", "u"), gibbs_args::gmm as Args),
                (case(POISSON, "z", "u"), gibbs_args::poisson as Args),
                (case(EXPONENTIAL, "z", "u"), gibbs_args::exponential as Args),
            ];
        }
        CASES.with(|cases| -> Result<(), TestCaseError> {
            for (c, args) in cases {
                let r = interp_follows(c, *args, n, k, seed);
                prop_assert!(r.is_ok(), "n = {n}, k = {k}: {}", r.unwrap_err());
            }
            Ok(())
        })?;
    }
}

proptest! {
    // each case specialises and lowers the LDA update anew (a few seconds)
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// The LDA's statistics kept per document and per word (specialised to each case's
    /// data, as `gibbs` runs it) follow random moves.
    #[test]
    fn lda_statistics_follow_random_moves(n in 4usize..12, k in 2usize..5, seed in any::<u64>()) {
        let mut rng = Rng::seed_from_u64(seed);
        let a = gibbs_args::lda(n, k, &mut rng);
        // where the data decide every test on the other tokens, no loop is left to keep
        let c = match try_specialised(LDA, "z", "wordUpdate", &a) {
            Ok(c) => c,
            Err(e) if e.loops.is_empty() && e.invalid.is_none() => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("n = {n}, k = {k}: {e}"))),
        };
        let r = follows_on(&c, &a, n, k, &mut rng);
        prop_assert!(r.is_ok(), "n = {n}, k = {k}: {}", r.unwrap_err());
    }
}

proptest! {
    // each case specialises and lowers the Naive Bayes update anew
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// The Naive Bayes statistics over each document's tokens (specialised to each case's
    /// data, as `gibbs` runs it) follow random moves.
    #[test]
    fn naive_bayes_statistics_follow_random_moves(
        n in 2usize..10,
        k in 2usize..5,
        seed in any::<u64>(),
    ) {
        let mut rng = Rng::seed_from_u64(seed);
        let a = gibbs_args::naive_bayes(n, k, &mut rng);
        let c = match try_specialised(NAIVE_BAYES, "z", "u", &a) {
            Ok(c) => c,
            Err(e) => return Err(TestCaseError::fail(format!("n = {n}, k = {k}: {e}"))),
        };
        let r = follows_on(&c, &a, n, k, &mut rng);
        prop_assert!(r.is_ok(), "n = {n}, k = {k}: {}", r.unwrap_err());
    }
}

/// The updates the compiled kernels are checked on: their index and arguments.
const UPDATES: [(&str, &str, Args); 5] = [
    (GMM, "u", gibbs_args::gmm),
    (POISSON, "u", gibbs_args::poisson),
    (EXPONENTIAL, "u", gibbs_args::exponential),
    (LDA, "wordUpdate", gibbs_args::lda),
    (NAIVE_BAYES, "u", gibbs_args::naive_bayes),
];

/// The case of `rel` for the arguments `a`: LDA and Naive Bayes specialised to them (as
/// `gibbs` runs them: LDA's keys need it), the others as lowered.
fn case_on(rel: &str, index: &str, a: &[slic_codegen::Val]) -> Case {
    if rel == LDA || rel == NAIVE_BAYES {
        specialised(rel, "z", index, a)
    } else {
        case(rel, "z", index)
    }
}

fn opts() -> CompileOptions {
    CompileOptions {
        cache_dir: Some(std::env::temp_dir().join("slic-incremental-test-cache")),
        ..CompileOptions::default()
    }
}

/// The case's update compiled for `target` with its statistics, over the arguments `a`.
fn compiled(
    c: &Case,
    target: Target,
    a: &[slic_codegen::Val],
    checking: Checking,
) -> CompiledKernel {
    CompiledKernel::build_incremental(&c.inc, target, &c.update, a, 1000, &opts(), checking)
        .expect("the kernels compile")
}

#[test]
fn compiled_incremental_kernels_follow_the_interpreter() {
    let (n, k) = (40, 4);
    for (rel, index, args) in UPDATES {
        let mut rng = Rng::seed_from_u64(11);
        let a = args(n, k, &mut rng);
        let c = case_on(rel, index, &a);
        let ms = moves(n, k, 4 * n, &mut rng);
        for target in [Target::C, Target::Rust] {
            let mut plain = InterpKernel::new(c.program.clone(), 1000, &c.update);
            plain.start(&a).expect("the interpreter starts");
            let mut inc = compiled(&c, target, &a, Checking::Every);
            inc.start(&a).expect("the kernel starts");
            if let Err(e) = follow(&mut plain, &mut inc, &ms) {
                panic!("{rel} {target:?}: {e}");
            }
        }
    }
}

/// Naive Bayes over a vocabulary of `v` words: its topic-by-word table `k * (v - 1)`.
fn naive_bayes_wide(n: usize, k: usize, v: usize, rng: &mut Rng) -> Vec<slic_codegen::Val> {
    let tokens = 4 * n;
    vec![
        gibbs_args::probs(k, 0.2, 1.0, rng),
        gibbs_args::probs(v, 0.05, 0.5, rng),
        gibbs_args::nats(n, k, rng),
        gibbs_args::nats(tokens, v, rng),
        gibbs_args::nats(tokens, n, rng),
        slic_codegen::Val::Nat(0),
    ]
}

#[test]
fn large_count_tables_are_kept_in_32_bits_and_follow_the_interpreter() {
    // 3 topics by 2,999 words: a table long enough to be laid out as 32-bit counts,
    // which never exceed the 120 tokens
    let (n, k) = (30, 3);
    let mut rng = Rng::seed_from_u64(17);
    let a = naive_bayes_wide(n, k, 3000, &mut rng);
    let c = specialised(NAIVE_BAYES, "z", "u", &a);
    let table = c
        .inc
        .stats
        .iter()
        .find(|s| s.of == "hist")
        .expect("the topic-by-word table is kept");
    assert_eq!(table.most, Some(4 * n as u64), "{:?}", c.inc.stats);
    let ms = moves(n, k, 4 * n, &mut rng);
    for target in [Target::C, Target::Rust] {
        let mut plain = InterpKernel::new(c.program.clone(), 1000, &c.update);
        plain.start(&a).expect("the interpreter starts");
        let mut inc = compiled(&c, target, &a, Checking::Every);
        let narrow = match target {
            Target::C => "(const uint32_t *)P[",
            Target::Rust => ": &[u32] =",
        };
        let source = inc.library().source().to_string();
        assert!(source.contains(narrow), "{target:?}: {source}");
        inc.start(&a).expect("the kernel starts");
        if let Err(e) = follow(&mut plain, &mut inc, &ms) {
            panic!("{target:?}: {e}");
        }
    }
}

#[test]
fn a_wrong_remove_is_caught_by_the_check() {
    let mut c = case(GMM, "z", "u");
    // the mutant forgets to take point u out: its statistics count u twice after a move
    c.inc.remove.body.clear();
    let mut rng = Rng::seed_from_u64(5);
    let a = gibbs_args::gmm(6, 3, &mut rng);
    let mut inc = InterpKernel::incremental(&c.inc, 1000, &c.update, Checking::Every);
    inc.start(&a).expect("starts");
    inc.distribution(2).expect("weights");
    let e = inc.commit(2, 1).expect_err("the check catches the mutant");
    assert!(
        e.to_string().contains("differs from its recomputation"),
        "{e}"
    );
}

/// `ln_w` (log weights by label) normalised to probabilities, by label below `k`.
fn probabilities(ln_w: &[(u64, f64)], k: usize) -> Vec<f64> {
    let m = ln_w.iter().map(|w| w.1).fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = ln_w.iter().map(|w| (w.1 - m).exp()).sum();
    let mut p = vec![0.0; k];
    for &(label, l) in ln_w {
        p[label as usize] = (l - m).exp() / total;
    }
    p
}

#[test]
fn a_compiled_sweep_draws_each_point_from_its_conditional() {
    // the first point of a sweep is drawn from its conditional given the start: over
    // many sweeps from one start, its new labels follow the interpreter's categorical
    // (chi-square, 3 degrees of freedom, 16.27 at p = 0.001), for each mixture and LDA
    let (n, k, sweeps) = (12, 4, 4000);
    for (rel, index, args) in UPDATES {
        let mut rng = Rng::seed_from_u64(17);
        let a = args(n, k, &mut rng);
        let c = case_on(rel, index, &a);
        let mut plain = InterpKernel::new(c.program.clone(), 1000, &c.update);
        plain.start(&a).expect("the interpreter starts");
        let exact = probabilities(&plain.distribution(0).expect("a distribution"), k);
        for target in [Target::C, Target::Rust] {
            let mut kernel = compiled(&c, target, &a, Checking::Never);
            let mut counts = vec![0u64; k];
            for _ in 0..sweeps {
                kernel.start(&a).expect("the kernel starts");
                let (labels, _) = kernel
                    .sweep(&mut rng)
                    .expect("the update has a sweep kernel")
                    .expect("the sweep runs");
                counts[labels[0] as usize] += 1;
            }
            let chi: f64 = counts
                .iter()
                .zip(&exact)
                .filter(|(_, p)| **p > 0.0)
                .map(|(&o, p)| {
                    let e = p * sweeps as f64;
                    (o as f64 - e).powi(2) / e
                })
                .sum();
            let impossible = counts.iter().zip(&exact).any(|(&o, p)| o > 0 && *p == 0.0);
            assert!(
                chi < 16.27 && !impossible,
                "{rel} {target:?}: counts {counts:?} against {exact:?} (chi-square {chi})"
            );
        }
    }
}

#[test]
fn a_sweep_kernel_leaves_the_labels_the_driver_leaves() {
    // the sweep kernel (one call a sweep, its scratch tables made once and reset between
    // points) against the driver's protocol per point (remove, update, draw, add: each
    // update's tables fresh), both drawing from one seed: the same labels after each of
    // several sweeps, for every update program
    let (n, k) = (24, 4);
    for (rel, index, args) in UPDATES {
        let mut rng = Rng::seed_from_u64(29);
        let a = args(n, k, &mut rng);
        let c = case_on(rel, index, &a);
        for target in [Target::C, Target::Rust] {
            let mut whole = compiled(&c, target, &a, Checking::Never);
            let mut each = compiled(&c, target, &a, Checking::Every);
            let mut chain = Chain::new(&c.update, &a, 5, &mut whole).expect("starts");
            let mut driven = Chain::new(&c.update, &a, 5, &mut each).expect("starts");
            for sweep in 0..3 {
                chain.sweep(&mut whole).expect("the sweep kernel runs");
                driven.sweep(&mut each).expect("the driver runs");
                assert_eq!(
                    chain.state(),
                    driven.state(),
                    "{rel} {target:?}, sweep {sweep}"
                );
            }
        }
    }
}

#[test]
fn the_statistics_a_sweep_leaves_are_those_of_its_state() {
    // after sweeps by the kernel, every point's distribution from the kept statistics
    // equals the plain program's on the state the sweeps left
    let (n, k) = (30, 3);
    for (rel, args) in [
        (GMM, gibbs_args::gmm as Args),
        (POISSON, gibbs_args::poisson as Args),
    ] {
        let c = case(rel, "z", "u");
        let mut rng = Rng::seed_from_u64(23);
        let mut a = args(n, k, &mut rng);
        for target in [Target::C, Target::Rust] {
            let mut kernel = compiled(&c, target, &a, Checking::Never);
            kernel.start(&a).expect("the kernel starts");
            let mut labels = Vec::new();
            for _ in 0..3 {
                labels = kernel
                    .sweep(&mut rng)
                    .expect("a sweep kernel")
                    .expect("runs")
                    .0;
            }
            let state = c
                .program
                .params
                .iter()
                .position(|(x, _)| x == "z")
                .expect("a state parameter");
            a[state] = slic_codegen::Val::array(
                labels.iter().map(|&l| slic_codegen::Val::Nat(l)).collect(),
            );
            let mut plain = InterpKernel::new(c.program.clone(), 1000, &c.update);
            plain.start(&a).expect("the interpreter starts");
            for (u, &label) in labels.iter().enumerate() {
                let want = plain.distribution(u).expect("plain");
                let got = kernel.distribution(u).expect("kept");
                if let Err(e) = same_distribution(&want, &got) {
                    panic!("{rel} {target:?}, u = {u}: {e}");
                }
                kernel.commit(u, label).expect("commits");
            }
        }
    }
}
