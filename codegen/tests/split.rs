//! Tests of the point split and of A-normal form with LICM (issue 11): Gibbs-update shapes
//! (a proposed label `l` read at point `u` as `if j == u: l else: z[j]`, inside loops over
//! classes and proposals; a label read through a document, `if doc[j] == u`; products of
//! support guards and of per-class factors) are rewritten by `split_points` and by the
//! whole term pipeline (`term_stages`, with and without LICM), and each output must
//! verify, print to text that reads back, and mean the input: the reference interpreter
//! on random labels (some out of range), data, class counts and points `u` in and out of
//! range (proptest). A mutant shows the comparison can fail.

use proptest::prelude::*;
use slic_algebra::{alpha, front, print, verify, Store, TermId};
use slic_codegen::{split_points, term_stages, Passes};
use slic_semantics::{apply_args, args_from_json, eval, Env, EvalResult, Value};

const PARAMS: &str =
    "fn z array(nat):\nfn t array(real):\nfn doc array(nat):\nfn K nat:\nfn u nat:\n";

fn program(body: &str) -> String {
    format!("{PARAMS}{body}\n")
}

/// Shapes of a Gibbs update's loops: per-class counts and sums with the proposed label at
/// `u`, a sum over classes of them, products over classes (split with a division, or a
/// loop where the point's factor is 0), support guards over the points, and the label of
/// a point's document.
const SHAPES: &[&str] = &[
    // counts per proposed label
    "array l of K: summate j from 0 to size(t): if l == (if j == u: l else: z[j]): 1 else: 0",
    // per-class sums inside a loop over proposals
    "array l of K: summate k from 0 to K: \
         (summate j from 0 to size(t): if k == (if j == u: l else: z[j]): t[j] else: 0) ^ 2",
    // a smooth function of counts and sums, as in the GMM
    "array l of K: summate k from 0 to K: \
         (summate j from 0 to size(t): if k == (if j == u: l else: z[j]): t[j] else: 0) ^ 2 \
         / (nat2real(summate j from 0 to size(t): if k == (if j == u: l else: z[j]): 1 else: 0) + 1)",
    // a product over classes of a positive factor
    "array l of K: product k from 0 to K: \
         sqrt(1 / (nat2prob(summate j from 0 to size(t): if k == (if j == u: l else: z[j]): 1 else: 0) + 1))",
    // a product over classes of a factor that can be 0 at the proposal
    "array l of K: product k from 0 to K: \
         nat2prob(summate j from 0 to size(t): if k == (if j == u: l else: z[j]): 1 else: 0)",
    // a support guard over the points
    "array l of K: product j from 0 to size(t): \
         if K <= (if j == u: l else: z[j]): 0. prob else: 1. prob",
    // a squared-data sum guarded by the label's range
    "array l of K: summate j from 0 to size(t): \
         if (if j == u: l else: z[j]) + 1 <= K: t[j] ^ 2 else: 0",
    // the label of a point's document (Naive Bayes)
    "array l of K: summate k from 0 to K: \
         (summate j from 0 to size(doc): \
              if k == (if doc[j] == u: l else: z[doc[j]]): t[j] else: 0) ^ 2",
    // a product of a choice between a factor and 1 (a power of a count)
    "array l of K: product k from 0 to K: product j from 0 to size(t): \
         if k == (if j == u: l else: z[j]): 1/2 else: 1",
    // a product over classes of a product over words of the class's word counts: the
    // proposal reaches the words' loop as `m == l` (Naive Bayes' Dirichlet evidence)
    NESTED_PROPOSAL,
    // a point read from the data, which may be out of range (LDA's document of the
    // updated word): split only where it is defined
    "array l of K: summate d from 0 to size(z): \
         if d == doc[u]: t[d] * nat2real(l) else: nat2real(d)",
    "array l of K: product d from 0 to size(z): \
         nat2prob((summate j from 0 to size(doc): \
                       if (if j == u: l else: z[j]) == 1 && d == doc[j]: 1 else: 0) + 1)",
    // a product of prob factors, only one of which tests the proposal: that one is
    // split on, the other kept whole
    "array l of K: product m from 0 to K: \
         (nat2prob(m) + 1/2) * (if m == l: 2 else: nat2prob(m + 1))",
    // a choice on a test free of the loop, each branch's loop split on its own
    "array l of K: product m from 0 to K: \
         if u < size(z): (if m == l: nat2prob(z[u]) else: 1/2) else: nat2prob(m)",
    // the Dirichlet's gamma functions of counts over every class, and over a range that
    // is not the proposal's (the quotient at the point closes, guarded by the range)
    GAMMA_ALL_CLASSES,
    "array l of K: product k from 0 to size(doc): \
         gammaFunc(nat2real(summate j from 0 to size(t): \
                                if k == (if j == u: l else: z[j]): 1 else: 0) + 1/2)",
    // a product over classes of a product over words of gamma functions of the class's
    // word counts, the point's words added to its proposed class (Naive Bayes' Dirichlet
    // evidence): the quotient closes over the words, guarded by every argument positive
    WORD_GAMMAS,
    // the same with the label read through the point's document, and a prior that may be
    // 0, negative or out of range (the guard fails, or the reads do)
    WORD_GAMMAS_BY_DOC,
    // and a prior that is 0 or positive
    WORD_GAMMAS_BY_DOC_SQUARED,
    // stick-breaking beta functions of a class's counts, one argument shifted by 1 on
    // either side of the proposal (`ratios::shift_betas`), at 0 where the count is 0
    "array l of K: product k from 0 to K: \
         if l == k: \
             betaFunc(nat2prob(summate j from 0 to size(z): \
                                   if k == (if j == u: l else: z[j]): 1 else: 0), \
                      real2prob(t[k] ^ 2) + 1) \
         else: \
             if k < l: \
                 betaFunc(nat2prob(summate j from 0 to size(z): \
                                       if k == (if j == u: l else: z[j]): 1 else: 0) + 1, \
                          real2prob(t[k] ^ 2)) \
             else: \
                 betaFunc(nat2prob(summate j from 0 to size(z): \
                                       if k == (if j == u: l else: z[j]): 1 else: 0), \
                          real2prob(t[k] ^ 2))",
    // a sum over classes but the proposal's of logs that are -∞ at a count of 0: the sum
    // over all classes less the proposal's term only where that term is finite (over the
    // classes of `z`: the sum over all reads every class, see `a_sum_less_..`)
    "array l of K: summate k from 0 to size(z): log(nat2prob(if k == l: 1 else: z[k]))",
    // the same in a sum of squares (a per-class, per-word statistic)
    "array l of K: summate m from 0 to K: summate k from 0 to K: \
         (summate j from 0 to size(t): \
              if k == z[j] && m == (if j == u: l else: z[j]): t[j] else: 0) ^ 2",
];

/// A product over classes of gamma functions of counts (the Dirichlet's evidence).
const GAMMA_ALL_CLASSES: &str = "array l of K: product k from 0 to K: \
     gammaFunc(nat2real(summate j from 0 to size(t): \
                            if k == (if j == u: l else: z[j]): 1 else: 0) + 1/2)";

/// Gamma functions of a class's counts of each word (`doc[j]` the word of point `j`).
const WORD_GAMMAS: &str = "array l of K: product m from 0 to K: product k from 0 to K: \
     gammaFunc(nat2real(summate j from 0 to size(t): \
                            if k == doc[j] && m == (if j == u: l else: z[j]): 1 else: 0) + 1/2)";

/// Gamma functions of a class's counts of each word (`z[j]` the word of token `j`, the
/// class of its document `doc[j]` its label), from a prior `t[k]`.
const WORD_GAMMAS_BY_DOC: &str = "array l of K: product m from 0 to K: product k from 0 to K: \
     gammaFunc(t[k] + nat2real(summate j from 0 to size(doc): \
                                   if k == z[j] && m == (if doc[j] == u: l else: z[doc[j]]): \
                                       1 \
                                   else: \
                                       0))";

/// The same from a prior `t[k]^2`, evidently non-negative: the split's `all` evaluates
/// `Γ` of the proposed class's counts without the point, which cannot fail then (with the
/// prior `t[k]` it may be negative, an error the original never meets).
const WORD_GAMMAS_BY_DOC_SQUARED: &str = "array l of K: product m from 0 to K: \
     product k from 0 to K: \
     gammaFunc(t[k] ^ 2 + nat2real(summate j from 0 to size(doc): \
                                       if k == z[j] && m == (if doc[j] == u: l else: z[doc[j]]): \
                                           1 \
                                       else: \
                                           0))";

/// The proposed label inside a loop nested in the loop over classes.
const NESTED_PROPOSAL: &str = "array l of K: product m from 0 to K: product k from 0 to K: \
     nat2prob((summate j from 0 to size(doc): \
                   if k == z[j] && m == (if doc[j] == u: l else: z[doc[j]]): 1 else: 0) + 1)";

fn run(store: &Store, term: TermId, args: &str) -> EvalResult<Value> {
    let values = args_from_json(args, "test", store.ty(term)).expect("test arguments");
    let f = eval(store, term, &Env::new())?;
    apply_args(store, &f, &values)
}

fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // NaN (an undefined value, such as ∞ · 0 at a pole of Γ) is the same only as NaN
        (Value::Real(x), Value::Real(y)) => {
            x == y
                || (x.is_nan() && y.is_nan())
                || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Prob(x), Value::Prob(y)) => {
            x == y
                || (x.is_nan() && y.is_nan())
                || (x.exp() - y.exp()).abs() <= 1e-9 * x.exp().max(y.exp())
        }
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| close(x, y))
        }
        _ => a == b,
    }
}

/// The input and each rewrite of `src` (the split alone, the term pipeline with and
/// without LICM), each verified and read back; `Err` names the first that differs from
/// the input on `args` (a value against a value, or one failing where the other does
/// not).
fn rewrites_agree(src: &str, args: &str) -> Result<usize, String> {
    let mut store = Store::new();
    let input = front::load(&mut store, src).expect("test program elaborates");
    let split = split_points(&mut store, input);
    let all = term_stages(&mut store, input, Passes::default()).map_err(|e| e.to_string())?;
    let no_licm = Passes {
        licm: false,
        ..Passes::default()
    };
    let plain = term_stages(&mut store, input, no_licm).map_err(|e| e.to_string())?;
    let want = run(&store, input, args);
    for (what, t) in [
        ("split", split.term),
        ("summarized", all.summarized),
        ("anf", all.anf),
        ("anf without licm", plain.anf),
    ] {
        verify::verify(&store, t).map_err(|e| format!("{what}: {e}"))?;
        let text = print::print_term(&store, t);
        let back = front::load(&mut store, &text).map_err(|e| format!("{what}: {e:?}"))?;
        if !alpha::alpha_eq(&store, back, t) {
            return Err(format!("{what} does not read back:\n{text}"));
        }
        let same = match (&want, run(&store, t, args)) {
            (Ok(x), Ok(y)) => close(x, &y),
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if !same {
            return Err(format!("{what} changed the meaning on {args}:\n{text}"));
        }
    }
    Ok(split.splits)
}

/// The arguments `[z, t, doc, K, u]` of the proptests: labels, data (quarters) and
/// documents from `rows`.
fn args_of(rows: &[(u64, i32, u64)], k: u64, u: u64) -> String {
    let z: Vec<u64> = rows.iter().map(|r| r.0).collect();
    let t: Vec<String> = rows
        .iter()
        .map(|r| format!("{:.2}", f64::from(r.1) / 4.0))
        .collect();
    let doc: Vec<u64> = rows.iter().map(|r| r.2).collect();
    format!(
        "[{}, {}, {}, {k}, {u}]",
        json_list(&z),
        json_list(&t),
        json_list(&doc)
    )
}

fn json_list<T: ToString>(xs: &[T]) -> String {
    let items: Vec<String> = xs.iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(", "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn splits_and_anf_keep_meaning(
        shape in 0..SHAPES.len(),
        rows in proptest::collection::vec((0u64..5, -8i32..8, 0u64..5), 0..7),
        k in 0u64..=4,
        u in 0u64..8,
    ) {
        let args = args_of(&rows, k, u);
        let r = rewrites_agree(&program(SHAPES[shape]), &args);
        prop_assert!(r.is_ok(), "{}", r.err().unwrap_or_default());
    }
}

/// Loops inside a loop over proposals whose bodies hold work that does not depend on the
/// proposal: a per-document product (LDA's), a guarded one, one that can fail. A-normal
/// form computes each as a table over documents once (`tab = array ..`), outside the loop
/// over proposals.
const TABLE_SHAPES: &[&str] = &[
    "array l of K: product d from 0 to size(doc): \
         (product k from 0 to K: \
              nat2prob(summate j from 0 to size(z): if d == doc[j] && k == z[j]: 1 else: 0) + 1) \
         * (if d == u: nat2prob(l) + 1 else: 1)",
    "array l of K: summate d from 0 to size(doc): \
         (if 1 < d: (summate k from 0 to K: nat2real(k * d)) else: real2prob(1) ^ 2) * nat2real(l)",
    "array l of K: summate d from 0 to size(doc): \
         nat2real(summate k from 0 to K: z[k + d]) * nat2real(l + 1)",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    #[test]
    fn tables_keep_meaning(
        shape in 0..TABLE_SHAPES.len(),
        rows in proptest::collection::vec((0u64..5, -8i32..8, 0u64..5), 0..7),
        k in 0u64..=4,
        u in 0u64..8,
    ) {
        let args = args_of(&rows, k, u);
        let r = rewrites_agree(&program(TABLE_SHAPES[shape]), &args);
        prop_assert!(r.is_ok(), "{}", r.err().unwrap_or_default());
    }
}

/// Each table shape is computed as a table, outside the loop over proposals.
#[test]
fn per_document_work_is_a_table() {
    for shape in TABLE_SHAPES {
        let mut store = Store::new();
        let input = front::load(&mut store, &program(shape)).expect("elaborates");
        let all = term_stages(&mut store, input, Passes::default()).expect("stages");
        let text = print::print_term(&store, all.anf);
        let table = text.find("tab = array").unwrap_or(usize::MAX);
        let proposals = text.find("array l of").unwrap_or(0);
        assert!(
            table < proposals,
            "no table before the loop over proposals:\n{text}"
        );
    }
}

/// The loop over classes is split on the proposal even where it is only tested inside
/// the loop over words: the product over every class (`all`) no longer mentions the
/// proposal, so it is computed once outside the loop over proposals, and one class's
/// product is divided out and the proposal's multiplied in.
#[test]
fn a_proposal_tested_inside_an_inner_loop_is_split() {
    let mut store = Store::new();
    let input = front::load(&mut store, &program(NESTED_PROPOSAL)).expect("elaborates");
    let all = term_stages(&mut store, input, Passes::default()).expect("stages");
    let text = print::print_term(&store, all.anf);
    let hoisted = text.find("product m from 0 to").unwrap_or(usize::MAX);
    let proposals = text.find("= array l of K").unwrap_or(0);
    assert!(
        hoisted < proposals,
        "the product over classes is not hoisted out of the proposals:\n{text}"
    );
}

/// The gamma quotient at the point is closed (`codegen::ratios`): the proposals' loop
/// reads `real2prob` of the count where two gamma functions were, over every class (the
/// point's range test decided) and over a range of its own (the test kept).
#[test]
fn the_gamma_quotient_at_the_point_is_closed() {
    let guarded = SHAPES
        .iter()
        .find(|s| s.contains("product k from 0 to size(doc)"))
        .expect("the guarded gamma shape");
    for shape in [GAMMA_ALL_CLASSES, guarded] {
        let mut store = Store::new();
        let input = front::load(&mut store, &program(shape)).expect("elaborates");
        let all = term_stages(&mut store, input, Passes::default()).expect("stages");
        let text = print::print_term(&store, all.summarized);
        assert!(text.contains("real2prob"), "not closed: {shape}\n{text}");
        assert_eq!(quotients_closed(shape), 1, "{shape}");
    }
}

/// How many quotients the ratios pass alone closes in `shape`, after the stages before it.
fn quotients_closed(shape: &str) -> usize {
    let mut store = Store::new();
    let input = front::load(&mut store, &program(shape)).expect("elaborates");
    let summarized = slic_codegen::summarize(&mut store, input).term;
    let decided = slic_codegen::ranges::decide_ranges(&mut store, summarized).term;
    slic_codegen::ratios::close_ratios(&mut store, decided).closed
}

/// The gamma quotient over a class's words is closed: the proposals' loop tests each
/// word's count at the point where it evaluated two gamma functions per word.
#[test]
fn the_gamma_quotient_over_the_words_is_closed() {
    for shape in [WORD_GAMMAS, WORD_GAMMAS_BY_DOC_SQUARED] {
        assert_eq!(quotients_closed(shape), 1, "{shape}");
    }
    // a prior that may be negative: the classes but the proposal's stay a loop, since
    // the product over all of them would take `Γ` where the original does not (and fail
    // where that is negative)
    assert_eq!(quotients_closed(WORD_GAMMAS_BY_DOC), 0);
}

/// A beta function of an argument plus one is written through the unshifted one, so the
/// three forms of a stick-breaking factor read one beta function (`shift_betas`).
#[test]
fn beta_functions_of_shifted_arguments_read_the_unshifted_one() {
    let src = program(
        "array l of K: betaFunc(nat2prob(l) + 1, real2prob(t[0] ^ 2)) \
             * betaFunc(nat2prob(l), real2prob(t[0] ^ 2) + 1) \
             * betaFunc(nat2prob(l), real2prob(t[0] ^ 2))",
    );
    let mut store = Store::new();
    let input = front::load(&mut store, &src).expect("elaborates");
    let out = slic_codegen::ratios::shift_betas(&mut store, input);
    use slic_algebra::{Node, Prim};
    let plus_one = |a: TermId| {
        matches!(store.node(a), Node::Prim(Prim::Add, xs)
            if xs.iter().any(|&x| matches!(store.node(x), Node::Lit(v) if v.is_one())))
    };
    let shifted = store
        .subterms(out)
        .filter(|&x| {
            matches!(store.node(x), Node::Prim(Prim::BetaFunc, args)
                if args.iter().any(|&a| plus_one(a)))
        })
        .count();
    let all = store
        .subterms(out)
        .filter(|&x| matches!(store.node(x), Node::Prim(Prim::BetaFunc, _)))
        .count();
    // the shifted ones kept only where the unshifted argument is 0 (two), and the one
    // unshifted beta function the three read
    assert_eq!((shifted, all), (2, 3), "{}", print::print_term(&store, out));
    for args in [
        "[[0, 1], [0.5, -1.25], [0, 1], 3, 0]",
        "[[], [0.0], [], 2, 0]",
        "[[2], [1.75, 0.25], [0], 1, 0]",
    ] {
        let want = run(&store, input, args);
        let got = run(&store, out, args);
        match (&want, &got) {
            (Ok(x), Ok(y)) => assert!(close(x, y), "{args}: {x:?} against {y:?}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{args}: {want:?} against {got:?}"),
        }
    }
}

/// At a pole of Γ neither the point split's quotient nor the words' closure divides: the
/// prior of word 0 is 0 and class 0 has none of it but the point's, so `Γ(0)` is a
/// factor of the product over all classes and of proposal 0's row without the point,
/// while proposal 0's weight is finite (the point's word lifts its row off the pole).
/// Dividing by the row would give `∞ · 0`; a closure without its guard, `∞`.
#[test]
fn the_words_quotient_keeps_the_poles_of_gamma() {
    // tokens 0, 1, 2 of words z[j] = 0, 1, 0 in documents 0, 1, 1; document 0 (the
    // point) labelled 0, document 1 labelled 1
    let args = "[[0, 1, 0], [0.0, 0.5, 1.0], [0, 1, 1], 2, 0]";
    let mut store = Store::new();
    let input = front::load(&mut store, &program(WORD_GAMMAS_BY_DOC_SQUARED)).expect("elaborates");
    let Ok(Value::Array(want)) = run(&store, input, args) else {
        panic!("the input evaluates to an array");
    };
    assert!(
        matches!(want[0], Value::Prob(x) if x.is_finite()),
        "the case is a pole: {want:?}"
    );
    rewrites_agree(&program(WORD_GAMMAS_BY_DOC_SQUARED), args).expect("meaning kept at the pole");
}

/// The sum over the classes but the proposal's is not the sum over all less the
/// proposal's term where that term is infinite: `log(z[0])` is -∞ for proposal 0, and
/// the others' sum is finite. (The sum over all evaluates the proposal's term, which the
/// input did not: where that term cannot be evaluated, here with fewer than `K` entries
/// in `z`, the rewrite fails where the input had a value; the proptest's shape loops
/// over `size(z)` classes.)
#[test]
fn a_sum_less_an_infinite_term_is_looped() {
    let src =
        program("array l of K: summate k from 0 to K: log(nat2prob(if k == l: 1 else: z[k]))");
    let args = "[[0, 1, 2, 1, 3], [1.5, -2.0, 3.25, 0.5, -1.0], [0, 0, 1, 1, 2], 3, 0]";
    rewrites_agree(&src, args).expect("meaning kept where a term is -∞");
}

/// Every shape is split (the rewrite fires), on the arguments where the nested loop is
/// defined.
#[test]
fn every_shape_is_split() {
    let args = "[[0, 1, 2, 1, 0], [1.5, -2.0, 3.25, 0.5, -1.0], [0, 0, 1, 1, 2], 3, 2]";
    for shape in SHAPES {
        match rewrites_agree(&program(shape), args) {
            Ok(n) => assert!(n >= 1, "not split: {shape}"),
            Err(e) => panic!("{shape}: {e}"),
        }
    }
}

/// A wrong point split (the point's summand left out) is caught by the comparison the
/// tests use.
#[test]
fn a_wrong_split_is_caught() {
    let args = "[[0, 1, 2, 1, 0], [1.5, -2.0, 3.25, 0.5, -1.0], [0, 0, 1, 1, 2], 3, 2]";
    let src = program(SHAPES[1]);
    let mut store = Store::new();
    let input = front::load(&mut store, &src).expect("elaborates");
    // the mutant: u's own summand dropped, every label read as z[j]
    let wrong = program(
        "array l of K: summate k from 0 to K: \
             (summate j from 0 to size(t): if j /= u && k == z[j]: t[j] else: 0) ^ 2",
    );
    let mutant = front::load(&mut store, &wrong).expect("elaborates");
    let (a, b) = (run(&store, input, args), run(&store, mutant, args));
    assert!(!close(&a.expect("runs"), &b.expect("runs")));
}
