//! Draw-only updates (`slic_codegen::draw_only`, `lower_draw_only`):
//! - the GMM, Naive Bayes and LDA updates and the two mixtures of `corpus/gibbs/` drop
//!   their products common to every label;
//! - proptest: on random data (random priors, labels, points, documents and tokens), at
//!   every index, the draw-only program's condition holds and its exact distribution of
//!   the label is the full program's (1e-9 relative, the reference being the IR
//!   interpreter on the full program), with the same labels of zero weight;
//! - the compiled C and Rust draw-only kernels (with incremental statistics where the
//!   update keeps them) follow the interpreter on the full program through random moves;
//! - the condition fails where a dropped product may be 0 or ∞ (a prior of 0, a point
//!   beyond 10^30);
//! - a product read other than as a factor of every weight (`Π_k Γ(..) + 1`) is refused,
//!   and its factor form accepted;
//! - LDA's priors at the edges of the condition (`10^±29`), where its topic weight's
//!   merged logarithm runs untested, draw as the full program; beyond them the condition
//!   fails;
//! - a gamma function shifted by one at a label (`Γ(x + [i == 0])`) is written `Γ(x)`
//!   times `x` or 1, and `Γ(x)` dropped: no gamma function is left, the distribution is
//!   the full one's, the condition fails where `x` may be a pole, and `Γ(..) + 1` stays;
//! - specialised to its data (`slic_codegen::data_facts`): proptest: on random data, the
//!   program the data decided draws as the full one at every index and for random states
//!   whose labels are below the update's number of labels; its compiled C kernel too; and
//!   a chain refuses an initial state with a label outside them.

use proptest::prelude::*;
use slic_algebra::{front, Store, TermId};
use slic_codegen::gibbs::{pick_program, Checking};
use slic_codegen::incremental::derive;
use slic_codegen::sampler::Rng;
use slic_codegen::{
    lower_draw_only, lower_program, run, run_measure, CompileOptions, CompiledKernel,
    DrawOnlyLowered, InterpKernel, Mode, Outcome, Passes, Program, Target, Update, UpdateKernel,
    Val,
};
use slic_simplify::SimplifyConfig;
use slic_suite::gibbs_args::{self, below, Args};
use slic_suite::root;

const GMM: &str = "corpus/cases/18-gmm-gibbs.simplified.hk";
const NB: &str = "corpus/cases/19-naive-bayes-gibbs.simplified.hk";
const LDA: &str = "corpus/cases/20-lda-gibbs.simplified.hk";
const POISSON: &str = "corpus/gibbs/poisson-mixture-gibbs.hk";
const EXPONENTIAL: &str = "corpus/gibbs/exponential-mixture-gibbs.hk";

/// A program, simplified first unless it is already.
fn load(store: &mut Store, text: &str, simplified: bool) -> TermId {
    let t = front::load(store, text).expect("the program loads");
    if simplified {
        t
    } else {
        slic_simplify::simplify(store, t, &SimplifyConfig::default()).term
    }
}

/// The full program and its draw-only form.
fn both_of(text: &str, simplified: bool) -> (Program, Option<DrawOnlyLowered>) {
    let mut store = Store::new();
    let t = load(&mut store, text, simplified);
    let full = lower_program(&mut store, t, Passes::default()).expect("the program lowers");
    let draw = lower_draw_only(&mut store, t, Passes::default(), None).expect("draw-only lowers");
    (full.program, draw)
}

fn both(rel: &str) -> (Program, DrawOnlyLowered) {
    let text = std::fs::read_to_string(root().join(rel)).expect("the corpus file");
    let (full, draw) = both_of(&text, rel.ends_with(".simplified.hk"));
    (
        full,
        draw.unwrap_or_else(|| panic!("{rel}: no draw-only form")),
    )
}

/// The label's normalised distribution (`None` for a measure of mass 0).
fn distribution(p: &Program, args: &[Val]) -> Result<Option<Vec<(u64, f64)>>, String> {
    let out = run_measure(p, args, Mode::Exact { max_paths: 1000 }).map_err(|e| e.to_string())?;
    let Outcome::Exact(e) = out else {
        return Err("not enumerated".into());
    };
    if e.ln_mass == f64::NEG_INFINITY || e.weights.is_empty() {
        return Ok(None);
    }
    let mut d = Vec::new();
    for (v, l) in e.weights {
        let Val::Nat(k) = v else {
            return Err(format!("not a label: {v:?}"));
        };
        d.push((k, (l - e.ln_mass).exp()));
    }
    Ok(Some(d))
}

fn holds(cond: &Program, args: &[Val]) -> bool {
    matches!(run(cond, args), Ok((Val::Bool(true), _)))
}

/// The draw-only program agrees with the full one at every index `u < points`.
fn agrees(
    full: &Program,
    draw: &DrawOnlyLowered,
    mut args: Vec<Val>,
    index: usize,
    points: usize,
) -> Result<(), String> {
    if !holds(&draw.condition, &args) {
        return Err("the condition fails on tame data".into());
    }
    for u in 0..points {
        args[index] = Val::Nat(u as u64);
        let a = distribution(full, &args)?;
        let b = distribution(&draw.lowered.program, &args)?;
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                if a.len() != b.len() {
                    return Err(format!("u = {u}: labels {a:?} against {b:?}"));
                }
                for ((ka, pa), (kb, pb)) in a.iter().zip(&b) {
                    let close = (pa - pb).abs() <= 1e-9 * pa.abs().max(pb.abs()).max(1e-300);
                    if ka != kb || !close {
                        return Err(format!("u = {u}: {a:?} against {b:?}"));
                    }
                }
            }
            (a, b) => return Err(format!("u = {u}: mass {a:?} against {b:?}")),
        }
    }
    Ok(())
}

/// Each case: the program, its random arguments, the index's position among them.
const CASES: [(&str, Args, usize); 5] = [
    (GMM, gibbs_args::gmm, 4),
    (NB, gibbs_args::naive_bayes, 5),
    (LDA, gibbs_args::lda, 6),
    (POISSON, gibbs_args::poisson, 5),
    (EXPONENTIAL, gibbs_args::exponential, 5),
];

/// The state's position among each case's parameters (as [`CASES`]).
const STATES: [usize; 5] = [2, 2, 5, 3, 3];

/// The full program of `rel` and its form specialised to `args` (the state at `state`,
/// the index at `index`).
fn specialised(rel: &str, args: &[Val], state: usize, index: usize) -> (Program, DrawOnlyLowered) {
    let text = std::fs::read_to_string(root().join(rel)).expect("the corpus file");
    let mut store = Store::new();
    let t = load(&mut store, &text, rel.ends_with(".simplified.hk"));
    let full = lower_program(&mut store, t, Passes::default()).expect("the program lowers");
    let facts = slic_codegen::data_facts::DataFacts::new(args, state, index);
    let draw = lower_draw_only(&mut store, t, Passes::default(), Some(&facts))
        .expect("the specialised form lowers")
        .unwrap_or_else(|| panic!("{rel}: no specialised form"));
    (full.program, draw)
}

#[test]
fn every_update_drops_its_common_products() {
    for (rel, _, _) in CASES {
        let (_, d) = both(rel);
        assert!(d.dropped >= 1, "{rel}");
    }
    // the GMM's: at least the Dirichlet's Π_k Γ, the Π_k sqrt, and the sum inside its exp
    let (_, gmm) = both(GMM);
    assert!(gmm.dropped >= 3, "{}", gmm.dropped);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn draw_only_updates_draw_as_the_full_ones(
        n in 1usize..7,
        k in 1usize..4,
        seed in any::<u64>(),
    ) {
        thread_local! {
            static BUILT: Vec<(Program, DrawOnlyLowered, Args, usize)> = CASES
                .iter()
                .map(|&(rel, args, index)| {
                    let (full, draw) = both(rel);
                    (full, draw, args, index)
                })
                .collect();
        }
        BUILT.with(|built| -> Result<(), TestCaseError> {
            for (i, (full, draw, args, index)) in built.iter().enumerate() {
                let mut rng = Rng::seed_from_u64(seed);
                let a = args(n, k, &mut rng);
                let r = agrees(full, draw, a, *index, n);
                prop_assert!(r.is_ok(), "{}: n = {n}, k = {k}: {}", CASES[i].0, r.unwrap_err());
            }
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn programs_the_data_decided_draw_as_the_full_ones(
        n in 1usize..6,
        k in 1usize..4,
        seed in any::<u64>(),
    ) {
        for (i, &(rel, args, index)) in CASES.iter().enumerate() {
            let mut rng = Rng::seed_from_u64(seed);
            let mut a = args(n, k, &mut rng);
            let (full, draw) = specialised(rel, &a, STATES[i], index);
            // the labels below the update's number of them, which the chain keeps
            let labels = draw.labels.map_or(k, |l| l as usize);
            prop_assert!(labels >= 1, "{rel}: no labels");
            for _ in 0..3 {
                let r = agrees(&full, &draw, a.clone(), index, n);
                prop_assert!(r.is_ok(), "{rel}: n = {n}, k = {k}: {}", r.unwrap_err());
                let Val::Array(state) = &a[STATES[i]] else {
                    panic!("{rel}: the state is an array");
                };
                let len = state.len();
                a[STATES[i]] = gibbs_args::nats(len, labels, &mut rng);
            }
        }
    }
}

#[test]
fn the_data_decide_the_validity_tests_and_a_chain_keeps_to_their_labels() {
    let mut rng = Rng::seed_from_u64(13);
    let a = gibbs_args::lda(6, 3, &mut rng);
    let (full, draw) = specialised(LDA, &a, 5, 6);
    assert!(draw.decided >= 10, "{}", draw.decided);
    assert_eq!(draw.labels, Some(3));
    // fewer loops than the program for any data
    let loops = |p: &Program| p.to_string().matches("for ").count();
    let (_, plain) = both(LDA);
    assert!(
        loops(&draw.lowered.program) < loops(&plain.lowered.program),
        "{} against {}",
        loops(&draw.lowered.program),
        loops(&plain.lowered.program)
    );
    // the document-by-topic table is read at the updated token's document alone: one
    // row of it is built
    let text = draw.lowered.program.to_string();
    assert!(!text.contains("* numDocs)"), "{text}");
    // Σ word_prior and the Gamma functions of the priors computed once for the chain,
    // the updated token's document and word read once, not at every token
    assert!(draw.precomputed >= 2, "{}: {text}", draw.precomputed);
    assert!(text.contains("= doc[wordUpdate]"), "{text}");
    // data the model excludes (a word beyond the vocabulary, a document beyond
    // numDocs): fewer tests decided, the same distributions (all of mass 0 here)
    for (at, odd) in [(3, 9), (4, 7)] {
        let mut b = a.clone();
        let Val::Array(items) = &b[at] else {
            panic!("an array");
        };
        let mut items = items.to_vec();
        items[2] = Val::Nat(odd);
        b[at] = Val::array(items);
        let (full, d) = specialised(LDA, &b, 5, 6);
        assert!(
            d.decided < draw.decided,
            "{} against {}",
            d.decided,
            draw.decided
        );
        agrees(&full, &d, b, 6, 6).unwrap_or_else(|e| panic!("{e}"));
    }
    // a chain whose initial state has a label the update never draws is refused
    let ty = {
        let text = std::fs::read_to_string(root().join(LDA)).expect("the corpus file");
        let mut store = Store::new();
        let t = load(&mut store, &text, true);
        store.ty(t).clone()
    };
    let update = Update::new(&draw.lowered.program, &ty, "z", "wordUpdate")
        .expect("an update")
        .with_labels(draw.labels);
    let mut bad = a.clone();
    bad[5] = Val::array(vec![
        Val::Nat(0),
        Val::Nat(3),
        Val::Nat(1),
        Val::Nat(0),
        Val::Nat(2),
        Val::Nat(1),
    ]);
    let mut k = InterpKernel::new(draw.lowered.program.clone(), 1000, &update);
    let err = slic_codegen::Chain::new(&update, &bad, 1, &mut k).expect_err("the state is refused");
    assert!(err.to_string().contains("label 3 at index 1"), "{err}");
    // the compiled C kernel of the specialised program follows the full one
    let opts = CompileOptions {
        cache_dir: Some(std::env::temp_dir().join("slic-draw-only-test-cache")),
        ..CompileOptions::default()
    };
    let full_update = Update::new(&full, &ty, "z", "wordUpdate").expect("an update");
    let mut reference = InterpKernel::new(full.clone(), 1000, &full_update);
    reference.start(&a).expect("the interpreter starts");
    let mut c = CompiledKernel::build(&draw.lowered.program, Target::C, &update, &a, 1000, &opts)
        .expect("the kernel compiles");
    c.start(&a).expect("the kernel starts");
    for step in 0..18 {
        let u = below(&mut rng, 6) as usize;
        let want = normalised(&reference.distribution(u).expect("the reference runs"));
        let got = normalised(&c.distribution(u).expect("the kernel runs"));
        assert_eq!(want.len(), got.len(), "step {step}");
        for ((ka, pa), (kb, pb)) in want.iter().zip(&got) {
            assert!(
                ka == kb && (pa - pb).abs() <= 1e-9 * pa.max(*pb),
                "step {step}, u = {u}: {want:?} against {got:?}"
            );
        }
        let label = below(&mut rng, 3);
        reference.commit(u, label).expect("commits");
        c.commit(u, label).expect("commits");
    }
}

#[test]
fn the_condition_fails_where_a_product_may_vanish_or_overflow() {
    let mut rng = Rng::seed_from_u64(7);
    let (_, nb) = both(NB);
    let mut a = gibbs_args::naive_bayes(4, 2, &mut rng);
    assert!(holds(&nb.condition, &a));
    // a word prior of 0: Γ(0 + 0) = ∞ for a word no topic has
    a[1] = Val::array(vec![Val::prob(0.0), Val::prob(0.5), Val::prob(0.5)]);
    assert!(!holds(&nb.condition, &a));
    let (_, gmm) = both(GMM);
    let mut a = gibbs_args::gmm(4, 2, &mut rng);
    assert!(holds(&gmm.condition, &a));
    a[3] = Val::array(vec![
        Val::Real(1.0),
        Val::Real(1e31),
        Val::Real(0.0),
        Val::Real(2.0),
    ]);
    assert!(!holds(&gmm.condition, &a));
    // and the driver then runs the full program
    let (full, gmm) = both(GMM);
    let (picked, drawn) = pick_program(&full, Some(&gmm), &a);
    assert!(!drawn && *picked == full);
    let tame = gibbs_args::gmm(4, 2, &mut rng);
    let (picked, drawn) = pick_program(&full, Some(&gmm), &tame);
    assert!(drawn && *picked == gmm.lowered.program);
}

#[test]
fn a_label_out_of_range_leaves_both_programs_without_mass() {
    // a point's label beyond the classes: the full update's mass is 0 (its guard
    // `0 ^ #invalid`), and the draw-only one, which keeps that guard, is 0 too
    for (rel, args, index, state) in [
        (GMM, gibbs_args::gmm as Args, 4, 2),
        (NB, gibbs_args::naive_bayes, 5, 2),
    ] {
        let (full, draw) = both(rel);
        let mut rng = Rng::seed_from_u64(5);
        let mut a = args(4, 2, &mut rng);
        let Val::Array(labels) = &a[state] else {
            panic!("{rel}: the state is an array");
        };
        let mut labels = labels.to_vec();
        labels[3] = Val::Nat(7);
        a[state] = Val::array(labels);
        // at u = 0..2 the bad label is another point's
        agrees(&full, &draw, a.clone(), index, 3).unwrap_or_else(|e| panic!("{rel}: {e}"));
        a[index] = Val::Nat(0);
        assert_eq!(distribution(&full, &a), Ok(None), "{rel}");
    }
}

/// A Gibbs-shaped update whose weight of label `i` reads a product over classes of the
/// classes' counts with point `u` moved to `i`, as a factor or inside a sum (lowered as
/// written: the simplifier would write the counts otherwise).
fn class_product(extra: &str) -> String {
    format!(
        "fn as array(prob):
fn z array(nat):
fn u nat:
zNew <~ categorical(array i of size(as): (product k from 0 to size(as): \
gammaFunc(prob2real(as[k]) + nat2real(summate j from 0 to size(z): \
if k == (if j == u: i else: z[j]): 1 else: 0))){extra})
return zNew
"
    )
}

#[test]
fn a_product_read_other_than_as_a_factor_is_refused() {
    let (full, draw) = both_of(&class_product(""), true);
    let draw = draw.expect("the factor form drops its product");
    let mut rng = Rng::seed_from_u64(3);
    for _ in 0..8 {
        let args = vec![
            gibbs_args::probs(3, 0.2, 1.0, &mut rng),
            gibbs_args::nats(5, 3, &mut rng),
            Val::Nat(0),
        ];
        agrees(&full, &draw, args, 2, 5).expect("the factor form agrees");
    }
    // with `+ 1` the weights are not a constant times themselves without the product
    let (_, draw) = both_of(&class_product(" + 1"), true);
    assert!(draw.is_none(), "dropped a product added to 1");
}

/// A weight that reads the label only in a gamma function's count, shifted by one at
/// label 0 (the last class of a Dirichlet's stick-breaking form), with `extra` after it.
fn shifted_gamma(extra: &str) -> String {
    format!(
        "fn a prob:
fn z array(nat):
fn u nat:
zNew <~ categorical(array i of size(z): gammaFunc(prob2real(a) + nat2real(summate j from 0 \
to size(z): if j /= u && z[j] == 0: 1 else: 0) + (if i == 0: 1 else: 0)){extra})
return zNew
"
    )
}

#[test]
fn a_gamma_function_shifted_at_one_label_is_dropped() {
    // `Γ(x + [i == 0])` is `Γ(x) · (if i == 0: x else: 1)`: `Γ(x)`, which every label
    // shares, goes, and the update evaluates no gamma function
    let (full, draw) = both_of(&shifted_gamma(""), true);
    let draw = draw.expect("the shifted gamma function is dropped");
    assert_eq!(draw.dropped, 1);
    let text = draw.lowered.program.to_string();
    assert!(!text.contains("gammaFunc"), "{text}");
    let mut rng = Rng::seed_from_u64(11);
    for _ in 0..12 {
        let a = gibbs_args::probs(1, 0.05, 40.0, &mut rng);
        let Val::Array(a) = a else {
            panic!("an array of one prior");
        };
        let args = vec![a[0].clone(), gibbs_args::nats(5, 3, &mut rng), Val::Nat(0)];
        agrees(&full, &draw, args, 2, 5).expect("the shifted form agrees");
    }
    // a prior of 0 where no other point has label 0: `Γ(0)` is a pole, so the condition
    // fails and the driver runs the full program
    let at_pole = vec![
        Val::prob(0.0),
        Val::array(vec![Val::Nat(0), Val::Nat(1), Val::Nat(2)]),
        Val::Nat(0),
    ];
    assert!(!holds(&draw.condition, &at_pole));
    // added to 1 it is not a factor of every weight, and stays
    let (_, draw) = both_of(&shifted_gamma(" + 1"), true);
    assert!(draw.is_none(), "dropped a gamma function added to 1");
}

#[test]
fn priors_at_the_conditions_edges_draw_as_the_full_program() {
    // the draw-only LDA takes its topic weight's logarithm once, untested, because its
    // condition keeps every prior within 10^±30: at those edges (and counts beside them)
    // the product of the factors still draws as the full program
    let mut rng = Rng::seed_from_u64(17);
    for (tp, wp) in [(1e-29, 1e29), (1e29, 1e-29), (1e-29, 1e-29), (1e29, 1e29)] {
        let mut a = gibbs_args::lda(6, 3, &mut rng);
        a[0] = Val::array(vec![Val::prob(tp), Val::prob(1.0), Val::prob(tp)]);
        a[1] = Val::array(vec![
            Val::prob(wp),
            Val::prob(wp),
            Val::prob(0.5),
            Val::prob(wp),
        ]);
        let (full, draw) = specialised(LDA, &a, 5, 6);
        agrees(&full, &draw, a.clone(), 6, 6).unwrap_or_else(|e| panic!("{tp}, {wp}: {e}"));
    }
    // beyond them the condition fails, and the driver runs the full program
    let mut a = gibbs_args::lda(6, 3, &mut rng);
    a[0] = Val::array(vec![Val::prob(1e-31), Val::prob(1.0), Val::prob(1.0)]);
    let (_, draw) = specialised(LDA, &a, 5, 6);
    assert!(!holds(&draw.condition, &a));
}

/// Normalised `(label, probability)` pairs of a kernel's log weights.
fn normalised(d: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let m = d.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = d.iter().map(|p| (p.1 - m).exp()).sum();
    let mut out: Vec<(u64, f64)> = d.iter().map(|&(k, l)| (k, (l - m).exp() / z)).collect();
    out.sort_by_key(|p| p.0);
    out
}

#[test]
fn compiled_draw_only_kernels_follow_the_interpreter() {
    let opts = CompileOptions {
        cache_dir: Some(std::env::temp_dir().join("slic-draw-only-test-cache")),
        ..CompileOptions::default()
    };
    let cases: [(&str, Args, &str, &str); 3] = [
        (GMM, gibbs_args::gmm, "z", "u"),
        (NB, gibbs_args::naive_bayes, "z", "u"),
        (LDA, gibbs_args::lda, "z", "wordUpdate"),
    ];
    for (rel, args, state, ix) in cases {
        let text = std::fs::read_to_string(root().join(rel)).expect("the corpus file");
        let mut store = Store::new();
        let t = load(&mut store, &text, true);
        let ty = store.ty(t).clone();
        let full = lower_program(&mut store, t, Passes::default()).expect("lowers");
        let draw = lower_draw_only(&mut store, t, Passes::default(), None)
            .expect("lowers")
            .expect("a draw-only form");
        let full_update = Update::new(&full.program, &ty, state, ix).expect("an update");
        let update = Update::new(&draw.lowered.program, &ty, state, ix).expect("an update");
        let mut rng = Rng::seed_from_u64(11);
        let n = 6;
        let a = args(n, 3, &mut rng);
        assert!(holds(&draw.condition, &a), "{rel}");
        let moves: Vec<(usize, u64)> = (0..3 * n)
            .map(|_| (below(&mut rng, n) as usize, below(&mut rng, 3)))
            .collect();
        let inc = derive(&draw.lowered.program, state, ix).ok();
        for target in [Target::C, Target::Rust] {
            let mut reference = InterpKernel::new(full.program.clone(), 1000, &full_update);
            reference.start(&a).expect("the interpreter starts");
            let mut k = match &inc {
                Some(inc) => CompiledKernel::build_incremental(
                    inc,
                    target,
                    &update,
                    &a,
                    1000,
                    &opts,
                    Checking::Every,
                ),
                None => {
                    CompiledKernel::build(&draw.lowered.program, target, &update, &a, 1000, &opts)
                }
            }
            .expect("the kernel compiles");
            k.start(&a).expect("the kernel starts");
            for (step, &(u, label)) in moves.iter().enumerate() {
                let want = normalised(&reference.distribution(u).expect("the reference runs"));
                let got = normalised(&k.distribution(u).expect("the kernel runs"));
                assert_eq!(want.len(), got.len(), "{rel} {target:?} step {step}");
                for ((ka, pa), (kb, pb)) in want.iter().zip(&got) {
                    assert!(
                        ka == kb && (pa - pb).abs() <= 1e-9 * pa.max(*pb),
                        "{rel} {target:?} step {step}, u = {u}: {want:?} against {got:?}"
                    );
                }
                reference.commit(u, label).expect("commits");
                k.commit(u, label).expect("commits");
            }
        }
    }
}
