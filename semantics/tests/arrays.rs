//! The judge on array programs (issue 10, deliverable 7): the Gibbs updates of the
//! arrays paper's benchmarks (corpus cases 18 and 19) at their example sizes (n <= 5
//! points or documents, K <= 3 classes) are judged to mean their simplified forms, and
//! small mutants of those forms (a count off by one, a weight 5% off, a prior
//! concentration 5% off) are judged Different: the oracle can fail on arrays.
//!
//! The sampled side sums over the labels (`categorical`) and draws the Dirichlet and
//! normal parameters from an adapted proposal (`enumerate.rs`, `guide.rs`); prior
//! sampling had an effective sample size of about 3 in 20,000 draws on case 18.

use slic_algebra::{front, Store};
use slic_semantics::{args_from_json, compare, CompareConfig, Verdict};

fn corpus(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/cases")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `# args:` header of a corpus file.
fn args_of(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("# args:"))
        .expect("an args header")
        .trim()
        .to_string()
}

/// The judge's verdict on `a` and `b` at `args`, with the corpus test's configuration
/// (on a big stack: array programs nest deeply in the interpreter).
fn judge(a: &str, b: &str, args: &str) -> Verdict {
    judge_with(a, b, args, CompareConfig::default())
}

/// [`judge`] with other budgets and tolerances (the depth is the corpus test's).
fn judge_with(a: &str, b: &str, args: &str, config: CompareConfig) -> Verdict {
    let (a, b, args) = (a.to_string(), b.to_string(), args.to_string());
    std::thread::Builder::new()
        .stack_size(512 * 1024 * 1024)
        .spawn(move || {
            let mut store = Store::new();
            let ta = front::load(&mut store, &a).expect("the first program loads");
            let tb = front::load(&mut store, &b).expect("the second program loads");
            let values = args_from_json(&args, "args", store.ty(ta)).expect("arguments");
            let config = CompareConfig {
                max_depth: 20_000,
                ..config
            };
            compare(&store, ta, tb, &values, &config)
        })
        .expect("spawn")
        .join()
        .expect("the judge does not panic")
}

/// `text` with `from` replaced by `to`, exactly once.
fn mutate(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} occurs once");
    text.replacen(from, to, 1)
}

#[test]
fn case_18_means_its_expected_form_and_mutants_differ() {
    let input = corpus("18-gmm-gibbs.hk");
    let expected = corpus("18-gmm-gibbs.expected.hk");
    let args = args_of(&input);
    let v = judge(&input, &expected, &args);
    println!("18 vs expected: {v}");
    assert!(v.agrees(), "{v}");
    // a count off by one: class k's count in its weight
    let off_by_one = mutate(
        &expected,
        "w = array k of nClass: (as[k] + cnt[k])",
        "w = array k of nClass: (as[k] + cnt[k] + 1)",
    );
    let v = judge(&input, &off_by_one, &args);
    println!("18 vs count off by one: {v}");
    assert!(v.is_different(), "{v}");
    // the weight of the update 5% too large
    let heavier = mutate(
        &expected,
        "zNew <~ weight(wDir * wNorm * wSum / (nClass * (total + nOther)),",
        "zNew <~ weight(wDir * wNorm * wSum / (nClass * (total + nOther)) * 21/20,",
    );
    let v = judge(&input, &heavier, &args);
    println!("18 vs weight 5% off: {v}");
    assert!(v.is_different(), "{v}");
}

/// Case 19 against itself (two independent samplers) and against its word prior 5% too
/// large, which changes the evidence by about 6%. Both sides are sampled, so the judge
/// is given `equiv`'s budget and half the default standard-error target: at the default
/// resolution (differences of about 5% of a probe's scale seen) the verdict would rest
/// on the luck of the draws.
#[test]
fn case_19_is_judged_and_a_changed_prior_differs() {
    let input = corpus("19-naive-bayes-gibbs.hk");
    let args = args_of(&input);
    let fine = || CompareConfig {
        samples: 100_000,
        target_rel_se: 0.002,
        ..CompareConfig::default()
    };
    let v = judge_with(&input, &input, &args, fine());
    println!("19 vs itself: {v}");
    assert!(v.agrees(), "{v}");
    let mutant = mutate(
        &input,
        "phi <~ plate k of size(topic_prior): dirichlet(word_prior)",
        "phi <~ plate k of size(topic_prior): dirichlet(array j of size(word_prior): word_prior[j] * 21/20)",
    );
    let v = judge_with(&input, &mutant, &args, fine());
    println!("19 vs word prior 5% off: {v}");
    assert!(v.is_different(), "{v}");
}

/// Case 18 at every label array of three points in two classes: the expected form means
/// the input, and the expected form with its weight 5% off does not. With two classes the
/// input has three continuous draws, which nested quadrature would try (and give up on
/// after its budget): a small budget sends the input to sampling at once, while the
/// expected form (a categorical) is still integrated exactly.
#[test]
fn case_18_is_judged_at_every_label_array_of_a_small_size() {
    let input = corpus("18-gmm-gibbs.hk");
    let expected = corpus("18-gmm-gibbs.expected.hk");
    let heavier = mutate(
        &expected,
        "zNew <~ weight(wDir * wNorm * wSum / (nClass * (total + nOther)),",
        "zNew <~ weight(wDir * wNorm * wSum / (nClass * (total + nOther)) * 21/20,",
    );
    for labels in 0..8u32 {
        let z: Vec<u32> = (0..3).map(|i| (labels >> i) & 1).collect();
        let args = format!("[2.0, [1.0, 1.0], {z:?}, [-1.5, 0.5, 2.0], 1]");
        let small_quad = || CompareConfig {
            quad_evals: 20_000,
            ..CompareConfig::default()
        };
        let v = judge_with(&input, &expected, &args, small_quad());
        assert!(v.agrees(), "{args}: {v}");
        let v = judge_with(&input, &heavier, &args, small_quad());
        assert!(v.is_different(), "{args}: {v}");
    }
}
