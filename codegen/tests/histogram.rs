//! Tests of the histogram transform (issue 11, deliverable 1): each shape is summarized,
//! its output type-checked, printed and read back (alpha-equal), and evaluated by the
//! reference interpreter against the nested loop it came from; a proptest does the same
//! over random label and data arrays, and a mutant shows the comparison can fail.

use proptest::prelude::*;
use slic_algebra::{alpha, front, print, verify, Store, TermId};
use slic_codegen::summarize;
use slic_semantics::{apply_args, args_from_json, eval, Env, EvalResult, Value};

/// The parameters every program here takes: labels, real data, nat data, class count.
const PARAMS: &str = "fn y array(nat):\nfn t array(real):\nfn w array(nat):\nfn K nat:\n";

/// The program `PARAMS` + `body`.
fn program(body: &str) -> String {
    format!("{PARAMS}{body}\n")
}

fn run(store: &Store, term: TermId, args: &str) -> EvalResult<Value> {
    let values = args_from_json(args, "test", store.ty(term)).expect("test arguments");
    let f = eval(store, term, &Env::new())?;
    apply_args(store, &f, &values)
}

/// Equal up to rounding (the histogram adds in the same order, so it is usually exact).
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Real(x), Value::Real(y)) | (Value::Prob(x), Value::Prob(y)) => {
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| close(x, y))
        }
        (Value::Pair(p), Value::Pair(q)) => close(&p.0, &q.0) && close(&p.1, &q.1),
        _ => a == b,
    }
}

/// What summarizing `body` gives: the printed output, and whether it means the same as
/// the input on `args`.
struct Outcome {
    text: String,
    histograms: usize,
    same: bool,
}

fn summarize_and_compare(src: &str, args: &[&str]) -> Outcome {
    let mut store = Store::new();
    let input = front::load(&mut store, src).expect("test program elaborates");
    let out = summarize(&mut store, input);
    verify::verify(&store, out.term).expect("summarized term is well typed");
    assert_eq!(store.ty(out.term), store.ty(input));
    // round trip: print, parse, alpha-equal
    let text = print::print_term(&store, out.term);
    let back = front::load(&mut store, &text).expect("summarized text reads back");
    assert!(
        alpha::alpha_eq(&store, back, out.term),
        "round trip of\n{text}"
    );
    let same = args.iter().all(
        |a| match (run(&store, input, a), run(&store, out.term, a)) {
            (Ok(x), Ok(y)) => close(&x, &y),
            (Err(_), Err(_)) => true,
            _ => false,
        },
    );
    Outcome {
        text,
        histograms: out.histograms,
        same,
    }
}

/// Arguments with labels out of range (5 with K = 3) and an empty case.
const ARGS: &[&str] = &[
    "[[0, 1, 2, 1, 0, 5], [1.5, -2.0, 3.25, 0.5, -1.0, 7.0], [1, 2, 3, 4, 5, 6], 3]",
    "[[2, 2, 2], [1.0, 2.0, 3.0], [0, 0, 1], 4]",
    "[[], [], [], 2]",
    "[[1, 0], [1.0, 2.0], [3, 4], 0]",
];

/// Summarizes `body`, checks its meaning on [`ARGS`], the number of histograms made and
/// that the output text holds each of `expect`.
fn check(body: &str, histograms: usize, expect: &[&str]) {
    let o = summarize_and_compare(&program(body), ARGS);
    assert!(o.same, "meaning changed:\n{}", o.text);
    assert_eq!(o.histograms, histograms, "histograms in\n{}", o.text);
    for e in expect {
        assert!(o.text.contains(e), "{e:?} not in\n{}", o.text);
    }
}

#[test]
fn counts() {
    check(
        "array k of K: summate j from 0 to size(y): if k == y[j]: 1 else: 0",
        1,
        &["bucket", "r_index", "of y[", "r_add 1"],
    );
}

#[test]
fn class_sums_either_side_of_the_test() {
    check(
        "array k of K: summate j from 0 to size(y): if y[j] == k: t[j] else: 0",
        1,
        &["r_add t["],
    );
}

#[test]
fn square_sums_in_a_sum_over_classes() {
    check(
        "summate k from 0 to K: (summate j from 0 to size(y): if k == y[j]: t[j] ^ 2 else: 0) * nat2real(k)",
        1,
        &["r_add t[", "^ 2"],
    );
}

#[test]
fn fanout_of_three() {
    check(
        "array k of K: (summate j from 0 to size(y): if k == y[j]: t[j] else: 0) \
         + (summate j from 0 to size(y): if k == y[j]: t[j] ^ 2 else: 0) \
           * nat2real(summate j from 0 to size(y): if k == y[j]: w[j] else: 0)",
        1,
        &["r_fanout", "|| (r_fanout", "(_, (_, x)): x"],
    );
}

#[test]
fn split_on_a_condition_that_is_not_an_index() {
    check(
        "array k of K: summate j from 0 to size(y): if t[j] < 0 && k == y[j]: t[j] else: 0",
        1,
        &["r_split", "r_nop"],
    );
}

#[test]
fn summand_that_mentions_the_class() {
    // the class variable becomes the bucket's own index inside the reducer
    check(
        "array k of K: summate j from 0 to size(y): if k == y[j]: nat2real(k) * t[j] else: 0",
        1,
        &["r_index"],
    );
}

#[test]
fn no_index_no_histogram() {
    // Fig. 7: a reducer without an index is not profitable
    check(
        "array k of K: summate j from 0 to size(y): if k < y[j]: t[j] else: 0",
        0,
        &["summate j"],
    );
}

#[test]
fn not_hoisted_past_a_binder_it_needs() {
    // the condition needs i, bound inside the loop over classes: left as a sum
    check(
        "array k of K: array i of 3: summate j from 0 to size(y): if i < w[j] && k == y[j]: t[j] else: 0",
        0,
        &["summate j"],
    );
}

#[test]
fn two_classes_one_histogram() {
    // Fig. 7's r_index in r_index: the per-(l, k) counts in one pass, outside both loops
    check(
        "summate l from 0 to K: summate k from 0 to 3: \
         (summate j from 0 to size(y): if l == y[j] && k == w[j]: t[j] else: 0) ^ 2",
        2,
        &["r_index b = K * 3 of", "l * 3 + k"],
    );
}

#[test]
fn range_test_reads_a_run_of_buckets() {
    check(
        "summate k from 0 to K: (summate j from 0 to size(y): \
         if k + 1 <= y[j] && y[j] + 1 <= K: t[j] else: 0) ^ 2",
        1,
        &["r_index b = K of y[j]", "summate c from k + 1 to K"],
    );
}

#[test]
fn summarize_marker_in_a_file() {
    check(
        "summarize(array k of K: summate j from 0 to size(w): if w[j] == k: w[j] else: 0)",
        1,
        &["bucket"],
    );
}

#[test]
fn a_wrong_histogram_is_caught() {
    // the mutant: each class sum one too large per point
    let src = program("array k of K: summate j from 0 to size(y): if k == y[j]: t[j] else: 0");
    let mut store = Store::new();
    let input = front::load(&mut store, &src).expect("elaborates");
    let out = summarize(&mut store, input);
    let text = print::print_term(&store, out.term);
    assert!(text.contains("r_add t[j]"), "{text}");
    let mutant = text.replace("r_add t[j]", "r_add t[j] + 1");
    let m = front::load(&mut store, &mutant).expect("mutant elaborates");
    let differs = ARGS
        .iter()
        .any(|a| match (run(&store, input, a), run(&store, m, a)) {
            (Ok(x), Ok(y)) => !close(&x, &y),
            _ => true,
        });
    assert!(differs, "the mutant was not caught:\n{mutant}");
}

/// The bodies the proptest draws from: counts, class sums of real and nat data, square
/// sums, a fanout, a split, and a sum over classes around the histogram.
const SHAPES: &[&str] = &[
    "array k of K: summate j from 0 to size(y): if k == y[j]: 1 else: 0",
    "array k of K: summate j from 0 to size(y): if k == y[j]: t[j] else: 0",
    "array k of K: summate j from 0 to size(y): if y[j] == k: w[j] else: 0",
    "array k of K: summate j from 0 to size(y): if k == y[j]: t[j] ^ 2 else: 0",
    "array k of K: (summate j from 0 to size(y): if k == y[j]: t[j] else: 0) \
     * nat2real(summate j from 0 to size(y): if k == y[j]: w[j] else: 0) \
     + (summate j from 0 to size(y): if k == y[j]: 1 else: 0)",
    "array k of K: summate j from 0 to size(y): if 1 < w[j] && k == y[j]: t[j] else: 0",
    "summate k from 0 to K: (summate j from 0 to size(y): if k == y[j]: t[j] else: 0) ^ 2",
    // two classes: the inner histogram nested in the outer loop's (flat, `l * 3 + k`)
    "summate l from 0 to K: summate k from 0 to 3: \
     (summate j from 0 to size(y): if l == y[j] && k == w[j]: t[j] else: 0) ^ 2",
    "summate l from 0 to K: summate k from 0 to 3: \
     (summate j from 0 to size(y): if k == w[j] && 1 < w[j] && l == y[j]: t[j] else: 0) \
     * nat2real(k + l)",
    // a class index that can fail (y[w[j]] out of range), read only where it did before
    "summate l from 0 to K: summate k from 0 to 3: \
     nat2real(summate j from 0 to size(w): if 1 < w[j] && l == y[w[j]] && k == w[j]: 1 else: 0) \
     * nat2real(l + 1)",
    // range tests: the prefix counts of a stick-breaking Dirichlet
    "summate k from 0 to K: (summate j from 0 to size(y): if k + 1 <= y[j] && y[j] + 1 <= K: t[j] else: 0) ^ 2",
    "array k of K: summate j from 0 to size(y): if 1 < w[j] && k < y[j] && y[j] < K: t[j] else: 0",
    // a test that the index is in range, which r_index makes already (dropped, so the sum
    // shares the bucket of the plain count), before and after the index test, and before
    // a read that must stay guarded by it
    // a sum of a test of the labels cut off at K, read from the counts' bucket
    "nat2real(product k from 0 to K: (summate j from 0 to size(y): if k == y[j]: 1 else: 0) + 1) \
     + nat2real(summate j from 0 to size(y): if y[j] + 1 <= K && 1 <= y[j]: 1 else: 0)",
    // the same with a test that can fail (int2nat(K - 2) when K < 2)
    "nat2real(product k from 0 to K: (summate j from 0 to size(y): if k == y[j]: 1 else: 0) + 1) \
     + nat2real(summate j from 0 to size(y): if y[j] + 1 <= K && int2nat(K - 2) <= y[j]: 1 else: 0)",
    // a loop over K - 1 classes whose sums test `y[j] + 1 <= K`: the bucket of K classes
    "nat2real(product k from 0 to K: (summate j from 0 to size(y): if k == y[j]: 1 else: 0) + 1) \
     * nat2real(product k from 0 to int2nat(K - 1): \
         (summate j from 0 to size(y): if y[j] + 1 <= K && k == y[j]: 1 else: 0) + 2)",
    // two loops over the classes, one bucket: the counts' bucket also sums t (total on
    // the range 0..size(t)), so the two buckets are one term
    "(summate k from 0 to K: (summate j from 0 to size(t): if k == y[j]: t[j] else: 0) ^ 2) \
     + nat2real(product k from 0 to K: (summate j from 0 to size(t): if k == y[j]: 1 else: 0) + 1)",
    "array k of K: (summate j from 0 to size(y): if y[j] + 1 <= K && k == y[j]: 1 else: 0) \
     * (summate j from 0 to size(y): if k == y[j]: 1 else: 0) \
     + (summate j from 0 to size(y): if k == y[j] && y[j] < K: 2 else: 0)",
    "array k of K: summate j from 0 to size(w): \
     if w[j] + 1 <= K && t[w[j]] < 1 && k == w[j]: 1 else: 0",
];

fn json_list<T: ToString>(xs: &[T]) -> String {
    let items: Vec<String> = xs.iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(", "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The histogram form equals the nested loop on random labels (some at or above K),
    /// real and nat data, K up to 4, arrays of length 0 to 7.
    #[test]
    fn histogram_equals_nested_loop(
        shape in 0..SHAPES.len(),
        rows in proptest::collection::vec((0u64..6, -8i32..8, 0u64..4), 0..8),
        k in 0u64..=4,
    ) {
        let y: Vec<u64> = rows.iter().map(|r| r.0).collect();
        let t: Vec<String> = rows.iter().map(|r| format!("{:.2}", f64::from(r.1) / 4.0)).collect();
        let w: Vec<u64> = rows.iter().map(|r| r.2).collect();
        let args = format!("[{}, {}, {}, {k}]", json_list(&y), json_list(&t), json_list(&w));
        let o = summarize_and_compare(&program(SHAPES[shape]), &[&args]);
        prop_assert!(o.histograms >= 1, "no histogram in\n{}", o.text);
        prop_assert!(o.same, "meaning changed on {}:\n{}", args, o.text);
    }
}

/// An index's own range test is dropped, so the three counts of one index share one
/// bucket.
#[test]
fn an_in_range_test_of_the_index_shares_the_bucket() {
    let o = summarize_and_compare(
        &program(SHAPES[SHAPES.len() - 2]),
        &["[[0, 1, 5], [0.5, 1.0, 2.0], [0, 1, 1], 2]"],
    );
    assert!(o.same, "{}", o.text);
    assert_eq!(o.histograms, 1, "{}", o.text);
}

/// Two loops over the classes with buckets of one range and index: both buckets get the
/// union of their reducers (one term, which A-normal form computes once) where the added
/// reducer cannot fail on the range; where it can (`t[j]` for `j < size(y)`: `t` may be
/// shorter), the count stays alone.
#[test]
fn buckets_of_one_index_share_their_reducers() {
    let body = |n: &str| {
        format!(
            "(summate k from 0 to K: (summate j from 0 to size({n}): if k == y[j]: t[j] else: 0) ^ 2) \
             + nat2real(product k from 0 to K: (summate j from 0 to size({n}): if k == y[j]: 1 else: 0) + 1)"
        )
    };
    let uneven = [
        "[[0, 1, 2, 1], [1.5, -2.0], [0, 0, 0, 0], 3]",
        "[[0, 1], [1.5, -2.0, 3.0, 4.0], [0, 0], 3]",
    ];
    let args: Vec<&str> = ARGS.iter().copied().chain(uneven).collect();
    let shared = summarize_and_compare(&program(&body("t")), &args);
    assert!(shared.same, "{}", shared.text);
    assert_eq!(shared.histograms, 2, "{}", shared.text);
    assert_eq!(
        shared.text.matches("r_add t[").count(),
        2,
        "{}",
        shared.text
    );
    assert_eq!(
        shared.text.matches("r_fanout").count(),
        2,
        "{}",
        shared.text
    );
    let apart = summarize_and_compare(&program(&body("y")), &args);
    assert!(apart.same, "{}", apart.text);
    assert_eq!(apart.text.matches("r_add t[").count(), 1, "{}", apart.text);
    // (the count is total, so the sums' bucket takes it: one fanout)
    assert_eq!(apart.text.matches("r_fanout").count(), 1, "{}", apart.text);
}

/// A sum over the points of a test of their labels cut off at `K` reads the bucket of
/// counts another loop makes (O(K) instead of a pass), under `if 0 < K` (and where its
/// tests are defined); without such a bucket, or with a summand that may fail, it stays.
#[test]
fn label_sums_read_the_labels_bucket() {
    // the counts of a loop over the classes beside a sum over the points
    let beside_counts = |sum: &str, args: &[&str]| {
        let counts = "nat2real(product k from 0 to K: (summate j from 0 to size(y): if k == y[j]: 1 else: 0) + 1)";
        summarize_and_compare(&program(&format!("{counts} + nat2real({sum})")), args)
    };
    let read = beside_counts(
        "summate j from 0 to size(y): if y[j] + 1 <= K && 1 <= y[j]: 1 else: 0",
        ARGS,
    );
    assert!(read.same, "{}", read.text);
    assert_eq!(read.histograms, 2, "{}", read.text);
    assert!(read.text.contains("if 0 < K:"), "{}", read.text);
    assert!(read.text.contains("if 1 <= v"), "{}", read.text);
    let partial = beside_counts(
        "summate j from 0 to size(y): if y[j] + 1 <= K && int2nat(K - 2) <= y[j]: 1 else: 0",
        &[ARGS, &["[[0, 0, 1], [1.0, 2.0, 3.0], [0, 0, 1], 1]"]].concat(),
    );
    assert!(partial.same, "{}", partial.text);
    assert!(partial.text.contains("0 <= K - 2"), "{}", partial.text);
    // no bucket of the labels elsewhere: the sum stays a pass over the points
    let alone = summarize_and_compare(
        &program("summate j from 0 to size(y): if y[j] + 1 <= K && 1 <= y[j]: 1 else: 0"),
        ARGS,
    );
    assert!(alone.same, "{}", alone.text);
    assert_eq!(alone.histograms, 0, "{}", alone.text);
    // a summand that may fail (w[y[j]]) would run for every class: the sum stays
    let unsafe_summand = beside_counts(
        "summate j from 0 to size(y): if y[j] + 1 <= K: w[y[j]] else: 0",
        ARGS,
    );
    assert!(unsafe_summand.same, "{}", unsafe_summand.text);
    assert_eq!(unsafe_summand.histograms, 1, "{}", unsafe_summand.text);
}

/// A loop over `K - 1` classes whose sums test `y[j] + 1 <= K` gets a bucket of `K`
/// classes, the same term as the loop over `K` makes.
#[test]
fn a_shorter_loop_of_classes_shares_the_longer_bucket() {
    let o = summarize_and_compare(
        &program(
            "nat2real(product k from 0 to K: (summate j from 0 to size(y): if k == y[j]: 1 else: 0) + 1) \
             * nat2real(product k from 0 to int2nat(K - 1): \
                 (summate j from 0 to size(y): if y[j] + 1 <= K && k == y[j]: 1 else: 0) + 2)",
        ),
        ARGS,
    );
    assert!(o.same, "{}", o.text);
    assert_eq!(o.text.matches("r_index b = K of").count(), 2, "{}", o.text);
    assert!(!o.text.contains("r_index b = int2nat"), "{}", o.text);
}

/// The simplified GMM Gibbs update of the corpus (issue 11's input): its per-class counts
/// and sums become histograms, and the update's probabilities and mass are unchanged.
#[test]
fn gmm_gibbs_update() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/cases/18-gmm-gibbs.simplified.hk"
    );
    let src = std::fs::read_to_string(path).expect("the corpus file");
    let mut store = Store::new();
    let input = front::load(&mut store, &src).expect("elaborates");
    let out = summarize(&mut store, input);
    verify::verify(&store, out.term).expect("well typed");
    assert!(out.histograms >= 4, "{} histograms", out.histograms);
    let text = print::print_term(&store, out.term);
    let back = front::load(&mut store, &text).expect("reads back");
    assert!(alpha::alpha_eq(&store, back, out.term));
    for args in [
        "[14.0, [1.0, 1.0, 1.0], [0, 1, 2, 1, 0], [-10.5, 3.0, 20.25, 4.5, -12.0], 3]",
        "[0.5, [2.0, 1.0], [1, 1, 0, 5], [0.25, -0.5, 1.5, 2.0], 1]",
        "[1.0, [1.0], [], [], 0]",
    ] {
        let (a, b) = (run(&store, input, args), run(&store, out.term, args));
        let (a, b) = (a.expect("input runs"), b.expect("output runs"));
        for class in 0..4u64 {
            let pick = |v: &Value| Ok(if *v == Value::Nat(class) { 1.0 } else { 0.0 });
            let pa = slic_semantics::expect(&store, &a, &pick).expect("exact");
            let pb = slic_semantics::expect(&store, &b, &pick).expect("exact");
            let tol = 1e-12 * pa.value.abs().max(1e-300);
            assert!(
                (pa.value - pb.value).abs() <= tol,
                "{args}: {pa:?} vs {pb:?}"
            );
        }
    }
}
