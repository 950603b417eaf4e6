//! The collapsed Gibbs driver (`slic_codegen::gibbs`, issue 12 deliverable 5) on the GMM
//! update of `corpus/cases/18-gmm-gibbs.simplified.hk`:
//! - the driver's draws of one `z[u]` follow the exact categorical of `run_measure`
//!   (chi-square, fixed seed), through the interpreter and through the compiled C and
//!   Rust kernels, and the same counts are rejected against a distribution made wrong on
//!   purpose;
//! - on well-separated generated data, 20 sweeps reach accuracy above 0.95 up to
//!   relabelling;
//! - both with the update's statistics recomputed and kept between updates (issue 13;
//!   the draws checked against a recomputation after every commit);
//! - the Hungarian matching equals brute force over all permutations (K <= 6);
//! - bad data (missing and unknown keys, a bad `.npy` path, wrong types) and bad update
//!   programs are typed errors, not panics;
//! - many chains (issue 13, deliverable 4): chain 0 is the one-chain run of the seed,
//!   other chains differ, a seed repeats, compiled chains sharing one library draw the
//!   interpreter's, and split-R-hat is near 1 once chains mix (undefined, with the
//!   reason, when they stop moving).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use slic_algebra::Type;
use slic_codegen::gibbs::{self, accuracy, best_matching, Chain, Checking};
use slic_codegen::incremental::derive;
use slic_codegen::{
    run_chains, run_gibbs, run_measure, ChainsError, ChainsRun, CompileOptions, CompiledKernel,
    GibbsConfig, GibbsError, GibbsRun, Init, InterpKernel, Mode, Outcome, Program, Target, Update,
    UpdateKernel, Val,
};
use slic_data::dataset;
use slic_suite::datagen::{Gmm, Means};
use slic_suite::lowered;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn gmm_update() -> (Program, Type) {
    let path = root().join("corpus/cases/18-gmm-gibbs.simplified.hk");
    lowered(&std::fs::read_to_string(path).expect("case 18 is in the corpus"))
}

/// A folder of its own under cargo's temporary folder for integration tests.
fn temp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gibbs-{name}"));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Pearson's chi-square of observed counts against expected probabilities.
fn chi_square(counts: &[u64], probs: &[f64]) -> f64 {
    let n: u64 = counts.iter().sum();
    counts
        .iter()
        .zip(probs)
        .map(|(&c, &p)| {
            let e = n as f64 * p;
            (c as f64 - e).powi(2) / e
        })
        .sum()
}

/// The 0.999 quantile of chi-square with 2 degrees of freedom: `-2 ln(0.001)`.
const CHI2_2DF_999: f64 = 13.815510557964274;

#[test]
fn draws_of_one_label_follow_the_exact_categorical() {
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    // overlapping classes, so every label has a visible probability
    let text = r#"{"s": 2.0, "as": [1.0, 1.0, 1.0], "z": [0, 1, 2, 0, 1, 2],
                   "t": [-1.0, 0.0, 1.0, 0.5, -0.5, 0.2], "u": 0}"#;
    let data = dataset::from_json(text, Path::new(".")).expect("the data reads");
    let bound = update.bind(&data, None).expect("the data binds");
    let u = 5;
    let mut args = bound.args.clone();
    args[4] = Val::Nat(u as u64);
    let Ok(Outcome::Exact(e)) = run_measure(&p, &args, Mode::Exact { max_paths: 1000 }) else {
        panic!("the update enumerates")
    };
    let probs: Vec<f64> = e.probabilities().iter().map(|(_, q)| *q).collect();
    assert_eq!(probs.len(), 3);
    assert!(
        probs.iter().all(|&q| q > 0.05),
        "a spread distribution: {probs:?}"
    );

    // the interpreter, and the compiled C and Rust kernels (specialised on the data)
    let mut interp = InterpKernel::new(p.clone(), 1000, &update);
    let counts = draws_of(&mut interp, &update, &bound.args, u);
    let x2 = chi_square(&counts, &probs);
    assert!(
        x2 < CHI2_2DF_999,
        "chi-square {x2}: {counts:?} against {probs:?}"
    );
    for target in [Target::C, Target::Rust] {
        let mut k = CompiledKernel::build(&p, target, &update, &bound.args, 1000, &opts())
            .expect("the update compiles");
        let compiled = draws_of(&mut k, &update, &bound.args, u);
        let x2 = chi_square(&compiled, &probs);
        assert!(
            x2 < CHI2_2DF_999,
            "{target:?}: chi-square {x2}: {compiled:?} against {probs:?}"
        );
    }

    // with incremental statistics (issue 13), checked after every draw
    let inc = derive(&p, "z", "u").expect("the GMM update keeps its statistics");
    let mut k = InterpKernel::incremental(&inc, 1000, &update, Checking::Every);
    let counts_inc = draws_of(&mut k, &update, &bound.args, u);
    let x2 = chi_square(&counts_inc, &probs);
    assert!(
        x2 < CHI2_2DF_999,
        "incremental: chi-square {x2}: {counts_inc:?} against {probs:?}"
    );
    for target in [Target::C, Target::Rust] {
        let mut k = CompiledKernel::build_incremental(
            &inc,
            target,
            &update,
            &bound.args,
            1000,
            &opts(),
            Checking::Every,
        )
        .expect("the incremental update compiles");
        let compiled = draws_of(&mut k, &update, &bound.args, u);
        let x2 = chi_square(&compiled, &probs);
        assert!(
            x2 < CHI2_2DF_999,
            "{target:?} incremental: chi-square {x2}: {compiled:?} against {probs:?}"
        );
    }

    // the test can fail: the same draws against a distribution 0.06 off are rejected
    let mut wrong = probs.clone();
    let (hi, lo) = if probs[0] > probs[1] { (0, 1) } else { (1, 0) };
    wrong[hi] -= 0.06;
    wrong[lo] += 0.06;
    let x2_wrong = chi_square(&counts, &wrong);
    assert!(
        x2_wrong > CHI2_2DF_999,
        "chi-square {x2_wrong} against {wrong:?}"
    );
}

/// The compiled kernels' weights of every label (one call each: the update's categorical
/// is its last choice) equal the interpreter's enumeration at every point, also after
/// labels have changed in place.
#[test]
fn compiled_update_weights_equal_the_interpreters() {
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    let text = r#"{"s": 2.0, "as": [1.0, 0.5, 2.0], "z": [0, 1, 2, 0, 1, 2, 3],
                   "t": [-1.0, 0.0, 1.0, 0.5, -0.5, 0.2, 7.0], "u": 0}"#;
    let data = dataset::from_json(text, Path::new(".")).expect("the data reads");
    let bound = update.bind(&data, None).expect("the data binds");
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    for target in [Target::C, Target::Rust] {
        let mut interp = InterpKernel::new(p.clone(), 1000, &update);
        interp.start(&bound.args).expect("the interpreter starts");
        let mut k = CompiledKernel::build(&p, target, &update, &bound.args, 1000, &opts())
            .expect("the update compiles");
        k.start(&bound.args).expect("the kernel starts");
        for round in 0..2 {
            for u in 0..7 {
                let a = interp.distribution(u).expect("the interpreter's weights");
                let b = k.distribution(u).expect("the kernel's weights");
                assert_eq!(a.len(), b.len(), "{target:?} u = {u}: {a:?} {b:?}");
                for ((ka, la), (kb, lb)) in a.iter().zip(&b) {
                    assert!(
                        ka == kb && close(*la, *lb),
                        "{target:?} u = {u}: {a:?} {b:?}"
                    );
                }
            }
            // move a label (the last point's 3 is out of range, so weights are 0 then)
            let (u, label) = if round == 0 { (6, 1) } else { (0, 2) };
            interp.commit(u, label).expect("commit");
            k.commit(u, label).expect("commit");
        }
    }
}

/// 6,000 draws of label `u` from `kernel` (the state otherwise as in `args`), counted.
fn draws_of(kernel: &mut impl UpdateKernel, update: &Update, args: &[Val], u: usize) -> [u64; 3] {
    let mut chain = Chain::new(update, args, 7, kernel).expect("the chain starts");
    let mut counts = [0u64; 3];
    for _ in 0..6000 {
        let (k, _) = chain.update(kernel, u).expect("the update runs");
        counts[k as usize] += 1;
    }
    counts
}

/// Compile options for the tests: a cache of their own.
fn opts() -> CompileOptions {
    CompileOptions {
        cache_dir: Some(std::env::temp_dir().join("slic-gibbs-test-cache")),
        ..CompileOptions::default()
    }
}

#[test]
fn twenty_sweeps_recover_well_separated_classes() {
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    let dir = temp_dir("separated");
    Gmm::generate(120, 3, Means::Separated, 11)
        .dataset()
        .write(&dir)
        .expect("the generator writes");
    let data = dataset::read_file(&dir.join("data.json")).expect("the data reads");
    let bound = update.bind(&data, Some("truth")).expect("the data binds");
    let config = GibbsConfig {
        sweeps: 20,
        warmup: 0,
        seed: 3,
        init: Init::Random,
        classes: None,
    };
    // the same seed with statistics kept between updates (issue 13) draws the same chain
    // up to rounding; it is scored alike
    let inc = derive(&p, "z", "u").expect("the GMM update keeps its statistics");
    let mut kernel = InterpKernel::incremental(&inc, 1000, &update, Checking::Never);
    let kept = run_gibbs(&mut kernel, &update, bound.clone(), &config, |_| {}).expect("runs");
    let mut kernel = InterpKernel::new(p, 1000, &update);
    let mut seen = 0;
    let run = run_gibbs(&mut kernel, &update, bound, &config, |_| seen += 1).expect("runs");
    assert_eq!((seen, run.records.len(), run.state.len()), (20, 20, 120));
    let first = run.records[0].accuracy.expect("scored");
    let last = run.records[19].accuracy.expect("scored");
    assert!(
        last > 0.95,
        "accuracy {first} after one sweep, {last} after 20"
    );
    let last_kept = kept.records[19].accuracy.expect("scored");
    assert!(
        last_kept > 0.95,
        "incremental: accuracy {last_kept} after 20"
    );
    let t = run.ms_per_sweep;
    assert!(
        t.min <= t.median && t.median <= t.max && t.min > 0.0,
        "{t:?}"
    );
}

/// The largest total weight of a one-to-one matching, by trying every permutation.
fn brute_force(w: &[Vec<u64>]) -> u64 {
    fn go(w: &[Vec<u64>], row: usize, used: &mut Vec<bool>) -> u64 {
        if row == w.len() {
            return 0;
        }
        let mut best = 0;
        for j in 0..w.len() {
            if !used[j] {
                used[j] = true;
                best = best.max(w[row][j] + go(w, row + 1, used));
                used[j] = false;
            }
        }
        best
    }
    go(w, 0, &mut vec![false; w.len()])
}

fn matrix() -> impl Strategy<Value = Vec<Vec<u64>>> {
    (1usize..=6).prop_flat_map(|k| prop::collection::vec(prop::collection::vec(0u64..30, k), k))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn hungarian_matching_equals_brute_force(w in matrix()) {
        let m = best_matching(&w);
        let mut cols = m.clone();
        cols.sort_unstable();
        prop_assert_eq!(cols, (0..w.len()).collect::<Vec<_>>(), "a permutation");
        let total: u64 = m.iter().enumerate().map(|(i, &j)| w[i][j]).sum();
        prop_assert_eq!(total, brute_force(&w));
    }

    #[test]
    fn accuracy_ignores_the_names_of_labels(
        truth in prop::collection::vec(0u64..5, 0..40),
        perm in Just(vec![3u64, 0, 4, 1, 2]).prop_shuffle(),
    ) {
        let renamed: Vec<u64> = truth.iter().map(|&k| perm[k as usize] + 100).collect();
        prop_assert_eq!(accuracy(&renamed, &truth), Ok(1.0));
    }
}

/// The error binding `text` (with `.npy` paths relative to `dir`) to case 18.
fn bind_error(text: &str, dir: &Path, truth: Option<&str>) -> String {
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    match dataset::from_json(text, dir) {
        Err(e) => e.to_string(),
        Ok(d) => match update.bind(&d, truth) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{text} binds"),
        },
    }
}

#[test]
fn bad_data_are_errors_naming_the_key() {
    let dir = temp_dir("bad-data");
    std::fs::write(dir.join("broken.npy"), b"\x93NUMPY but not really").expect("write");
    let ok = r#""s": 2.0, "as": [1.0, 1.0], "z": [0, 1], "t": [0.5, 1.5]"#;
    for (text, truth, says) in [
        (
            r#"{"s": 2.0, "as": [1.0], "z": [0]}"#.to_string(),
            None,
            "no key `t`",
        ),
        (
            format!("{{{ok}, \"extra\": 1}}"),
            None,
            "`extra` is not a parameter",
        ),
        (format!("{{{ok}}}"), Some("truth"), "no key `truth`"),
        (
            r#"{"s": 2.0, "as": [1.0], "z": [0], "t": {"npy": "missing.npy"}}"#.into(),
            None,
            "`t`",
        ),
        (
            r#"{"s": 2.0, "as": [1.0], "z": [0], "t": {"npy": "broken.npy"}}"#.into(),
            None,
            "`t`",
        ),
        (
            r#"{"s": [2.0], "as": [1.0], "z": [0], "t": [0.5]}"#.into(),
            None,
            "`s` must be prob",
        ),
        (
            r#"{"s": 2.0, "as": [1.0], "z": [0.5], "t": [0.5]}"#.into(),
            None,
            "`z` must be array(nat)",
        ),
        (
            r#"{"s": 2.0, "as": [1.0], "z": [-1], "t": [0.5]}"#.into(),
            None,
            "`z`",
        ),
        (
            r#"{"s": -2.0, "as": [1.0], "z": [0], "t": [0.5]}"#.into(),
            None,
            "`s`",
        ),
        (
            r#"{"s": 2.0, "as": [1.0], "z": [0], "t": [true]}"#.into(),
            None,
            "`t` must be array(real)",
        ),
        (
            r#"{"s": 2.0, "as": [1.0], "z": [0], "t": "x"}"#.into(),
            None,
            "`t`",
        ),
        ("[1, 2]".into(), None, "JSON object"),
    ] {
        let e = bind_error(&text, &dir, truth);
        assert!(e.contains(says), "{text}: {e}");
    }
}

#[test]
fn programs_that_are_not_updates_are_refused() {
    let (p, ty) = gmm_update();
    let e = |state: &str, index: &str| Update::new(&p, &ty, state, index).unwrap_err();
    assert!(matches!(
        e("zz", "u"),
        GibbsError::NoSuchParameter { role: "state", .. }
    ));
    assert!(matches!(e("t", "u"), GibbsError::StateType { .. }));
    assert!(matches!(e("z", "s"), GibbsError::IndexType { .. }));
    assert!(matches!(e("z", "z"), GibbsError::SameParameter(_)));
    // a measure over reals, and a measure that only sampling can run
    let (p, ty) = lowered("fn z array(nat):\nfn u nat:\nnormal(0, 1)\n");
    assert!(matches!(
        Update::new(&p, &ty, "z", "u"),
        Err(GibbsError::NotAnUpdate { .. })
    ));
    let (p, ty) = lowered("fn z array(nat):\nfn u nat:\nk <~ poisson(3)\nreturn k\n");
    assert_eq!(
        Update::new(&p, &ty, "z", "u").unwrap_err(),
        GibbsError::NotEnumerable
    );
}

#[test]
fn a_random_start_needs_classes_and_a_state_with_labels() {
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    let text = r#"{"s": 2.0, "as": [1.0, 1.0], "z": [], "t": []}"#;
    let data = dataset::from_json(text, Path::new(".")).expect("reads");
    let bound = update.bind(&data, None).expect("binds");
    let mut config = GibbsConfig {
        sweeps: 1,
        warmup: 0,
        seed: 0,
        init: Init::Random,
        classes: None,
    };
    let mut kernel = InterpKernel::new(p, 1000, &update);
    let r = run_gibbs(&mut kernel, &update, bound.clone(), &config, |_| {});
    assert_eq!(r.unwrap_err(), GibbsError::NoClasses);
    config.classes = Some(2);
    let r = run_gibbs(&mut kernel, &update, bound.clone(), &config, |_| {});
    assert_eq!(r.expect("an empty state sweeps").state, Vec::<u64>::new());
    config.init = Init::Given(vec![0]);
    let r = run_gibbs(&mut kernel, &update, bound, &config, |_| {});
    assert!(matches!(r, Err(GibbsError::Length { .. })));
}

// ---- many chains (issue 13, deliverable 4) ----

/// Generated GMM data of `n` points in `k` classes, written and read back as a run reads it.
fn gmm_data(name: &str, n: usize, k: usize, means: Means, seed: u64) -> dataset::Dataset {
    let dir = temp_dir(name);
    Gmm::generate(n, k, means, seed)
        .dataset()
        .write(&dir)
        .expect("the generator writes");
    dataset::read_file(&dir.join("data.json")).expect("the data reads")
}

/// What a chain drew, without its timings: the final state and each sweep's number,
/// warmup flag, labels changed and accuracy.
type Draws = (Vec<u64>, Vec<(usize, bool, usize, Option<f64>)>);

fn draws(run: &GibbsRun) -> Draws {
    let records = run
        .records
        .iter()
        .map(|r| (r.sweep, r.warmup, r.changed, r.accuracy))
        .collect();
    (run.state.clone(), records)
}

/// `chains` chains of case 18 over `data` through the interpreter.
fn interp_chains(
    data: &dataset::Dataset,
    config: &GibbsConfig,
    chains: usize,
) -> Result<ChainsRun, ChainsError> {
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    let kernel = |_| InterpKernel::new(p.clone(), 1000, &update);
    run_chains(
        &update,
        data,
        Some("truth"),
        config,
        chains,
        kernel,
        |_, _| {},
    )
}

fn random_start(sweeps: usize, warmup: usize, seed: u64) -> GibbsConfig {
    GibbsConfig {
        sweeps,
        warmup,
        seed,
        init: Init::Random,
        classes: None,
    }
}

/// Chain 0 of any run is the single-chain run of the seed, draw for draw, so `--chains`
/// changes no existing output; the other chains draw other labels; a seed gives the same
/// chains twice, whatever thread ran each.
#[test]
fn chains_have_their_own_seeds_and_chain_zero_is_the_one_chain_run() {
    let data = gmm_data("chains-seeds", 60, 3, Means::Paper, 4);
    let config = random_start(4, 1, 17);
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    let bound = update.bind(&data, Some("truth")).expect("the data binds");
    let mut kernel = InterpKernel::new(p.clone(), 1000, &update);
    let alone = run_gibbs(&mut kernel, &update, bound, &config, |_| {}).expect("runs");

    let one = interp_chains(&data, &config, 1).expect("one chain runs");
    assert_eq!(one.chains.len(), 1);
    assert_eq!((one.chains[0].chain, one.chains[0].seed), (0, 17));
    assert_eq!(draws(&one.chains[0].run), draws(&alone));

    let three = interp_chains(&data, &config, 3).expect("three chains run");
    let runs: Vec<_> = three.chains.iter().map(|c| draws(&c.run)).collect();
    assert_eq!(runs[0], draws(&alone), "chain 0 of three");
    assert!(
        runs[0].0 != runs[1].0 && runs[1].0 != runs[2].0 && runs[0].0 != runs[2].0,
        "each chain draws its own labels"
    );
    let again = interp_chains(&data, &config, 3).expect("three chains run again");
    let runs_again: Vec<_> = again.chains.iter().map(|c| draws(&c.run)).collect();
    assert_eq!(runs_again, runs, "a seed gives the same chains");
    assert_eq!(again.r_hat, three.r_hat);
    assert_eq!(three.r_hat.of, gibbs::Statistic::Accuracy);
    assert!(three.sweeps_per_second > 0.0 && three.seconds > 0.0);
    // 4 timed sweeps of 5 are the fewest split-R-hat takes
    assert!(three.r_hat.value.is_ok(), "{:?}", three.r_hat);

    // without a truth the summary is labels changed
    let untruthed = dataset::Dataset {
        entries: data
            .entries
            .iter()
            .filter(|(k, _)| k != "truth")
            .cloned()
            .collect(),
    };
    let kernel = |_| InterpKernel::new(p.clone(), 1000, &update);
    let untruthed = run_chains(&update, &untruthed, None, &config, 2, kernel, |_, _| {})
        .expect("two chains run");
    assert_eq!(untruthed.r_hat.of, gibbs::Statistic::Changed);
}

/// Chains of the compiled C kernel share one library across threads and draw the
/// interpreter's chains (the same weights up to rounding, the same generator).
#[test]
fn compiled_chains_share_a_library_and_draw_the_interpreters_chains() {
    let data = gmm_data("chains-compiled", 80, 3, Means::Paper, 6);
    let config = random_start(5, 0, 2);
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    let bound = update.bind(&data, Some("truth")).expect("the data binds");
    let library = CompiledKernel::build(&p, Target::C, &update, &bound.args, 1000, &opts())
        .expect("the update compiles")
        .library();
    let kernel = |_| CompiledKernel::new(std::sync::Arc::clone(&library), 1000, &update);
    let compiled = run_chains(&update, &data, Some("truth"), &config, 4, kernel, |_, _| {})
        .expect("four compiled chains run");
    let interp = interp_chains(&data, &config, 4).expect("four chains run");
    for (c, i) in compiled.chains.iter().zip(&interp.chains) {
        assert_eq!(draws(&c.run), draws(&i.run), "chain {}", c.chain);
    }
}

/// `chains` chains of case 18 over `data` through one compiled C library.
fn c_chains(data: &dataset::Dataset, config: &GibbsConfig, chains: usize) -> ChainsRun {
    let (p, ty) = gmm_update();
    let update = Update::new(&p, &ty, "z", "u").expect("case 18 is an update");
    let bound = update.bind(data, Some("truth")).expect("the data binds");
    let library = CompiledKernel::build(&p, Target::C, &update, &bound.args, 1000, &opts())
        .expect("the update compiles")
        .library();
    let kernel = |_| CompiledKernel::new(std::sync::Arc::clone(&library), 1000, &update);
    run_chains(
        &update,
        data,
        Some("truth"),
        config,
        chains,
        kernel,
        |_, _| {},
    )
    .expect("the chains run")
}

/// `n` points, alternately of class 0 around -2 and class 1 around 2 (unit noise): classes
/// 4 standard deviations apart, so points between them keep changing class.
fn two_close_classes(n: usize, seed: u64) -> dataset::Dataset {
    let mut rng = slic_codegen::sampler::Rng::seed_from_u64(seed);
    let truth: Vec<u64> = (0..n as u64).map(|i| i % 2).collect();
    let t: Vec<f64> = truth
        .iter()
        .map(|&c| if c == 0 { -2.0 } else { 2.0 } + rng.normal())
        .collect();
    let text = serde_json::json!({
        "s": 3.0, "as": [1.0, 1.0], "z": vec![0; n], "t": t, "truth": truth,
    });
    dataset::from_json(&text.to_string(), Path::new(".")).expect("the data reads")
}

/// R-hat near 1 once the chains mix: two close classes, where every chain keeps moving
/// about the one posterior; on well-separated classes every chain finds the classes and
/// then no label moves, so R-hat of accuracy has no within-chain variance and says so
/// (never NaN); and chains stuck in different modes (two of three classes merged in some)
/// are caught, far above 1.
#[test]
fn r_hat_is_near_one_once_the_chains_mix() {
    let close = two_close_classes(100, 1);
    let run = c_chains(&close, &random_start(40, 10, 1), 4);
    let r = run
        .r_hat
        .value
        .clone()
        .expect("moving chains have an R-hat");
    assert!((r - 1.0).abs() < 0.05, "R-hat {r}");

    let separated = gmm_data("chains-separated", 120, 3, Means::Separated, 11);
    let run = c_chains(&separated, &random_start(8, 12, 3), 4);
    for c in &run.chains {
        let last = c.run.records.last().and_then(|r| r.accuracy);
        assert!(last > Some(0.95), "chain {}: {last:?}", c.chain);
    }
    match &run.r_hat.value {
        Ok(r) => assert!((r - 1.0).abs() < 0.05, "{r}"),
        Err(why) => assert_eq!(*why, gibbs::RHatUndefined::ZeroWithinVariance),
    }

    // with these seeds, chains 1 and 3 merge two classes and stay so for 60 sweeps
    let stuck = gmm_data("chains-stuck", 150, 3, Means::Separated, 4);
    let run = c_chains(&stuck, &random_start(40, 20, 5), 4);
    let r = run
        .r_hat
        .value
        .clone()
        .expect("moving chains have an R-hat");
    assert!(r > 1.5, "R-hat {r}");

    // two timed sweeps are too few; no chains is an error
    let run = c_chains(&close, &random_start(2, 1, 5), 2);
    assert_eq!(
        run.r_hat.value,
        Err(gibbs::RHatUndefined::TooFewDraws { draws: 2 })
    );
    assert!(matches!(
        interp_chains(&close, &random_start(2, 1, 5), 0),
        Err(ChainsError::NoChains)
    ));
}
