//! Telescoping products equal their explicit loops (issue 10, deliverable 4): the
//! stick-breaking Dirichlet's Beta products with categorical counts (the evidence of
//! eq. (14) of the arrays paper, closed into gammas of counts), the predictive weight of
//! a new label (`Π_{k<l} B(α'_k + 1, β'_k)/B(α'_k, β'_k)` times the stick's piece at `l`,
//! which closes to `(as[l] + cnt_l)/(A + n)`), and plain telescopes `Π F(k+1)/F(k)` of
//! gammas, polynomials and array reads. Random prob arrays (length 0..6), label arrays
//! (length 0..6, labels up to `size(as)`, so some out of range) and a label `l`; each
//! program is closed by `sums::simplify_loops` and both sides, applied to the same
//! literal arguments, are evaluated by `eval` (exactly when rational, else in `f64`).
//! Draws where the input itself is undefined (`int2nat` of a negative size, a read out of
//! range) are skipped; a test fails if too few draws compare. Wrong closures (an end off
//! by one, the Dirichlet-multinomial normaliser off by one count) are caught by the same
//! comparison.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use slic_algebra::assume::Context;
use slic_algebra::num::Rational;
use slic_algebra::{canon, eval, front, print, sums, verify, Node, Store, TermId, Type};

/// The parameters of every shape, in order.
const PARAMS: &str = "fn as array(prob): fn y array(nat): fn l nat: fn p prob:\n";

/// `α_k + #{k < y[j] < m}` (the stick's remainder after `k`, updated by the labels) and
/// `β_k + #{y[j] == k}` (the stick's piece `k`, updated), as the simplifier writes them;
/// `K` is the index, `M` is `size(as)`.
const ALPHA: &str = "(summate j from K + 1 to M: as[j]) \
                     + (summate j from 0 to size(y): if K + 1 <= y[j] && y[j] + 1 <= M: 1 else: 0)";
const BETA: &str =
    "as[K] + (summate j from 0 to size(y): if y[j] + 1 <= M && K == y[j]: 1 else: 0)";

/// `text` with `A`/`B` the updated stick parameters at index `k`, `AL`/`BL` at `l`.
fn stick(text: &str) -> String {
    let a = |i: &str| ALPHA.replace('K', i);
    let b = |i: &str| BETA.replace('K', i);
    text.replace("AL", &a("l"))
        .replace("BL", &b("l"))
        .replace("A0", "(summate j from K + 1 to M: as[j])")
        .replace('A', &a("k"))
        .replace('B', &b("k"))
        .replace('K', "k")
        .replace('M', "size(as)")
}

/// The shapes (before [`stick`]).
const SHAPES: &[&str] = &[
    // the Dirichlet-categorical evidence (eq. (14)): Beta products over the sticks
    "product k from 0 to int2nat(M - 1): betaFunc(A, B) / betaFunc(A0, as[k])",
    // the same where the context knows there is a stick
    "if 1 <= M: (product k from 0 to int2nat(M - 1): betaFunc(A, B) / betaFunc(A0, as[k])) else: 1",
    // the predictive weight of label l (not the last): l sticks passed, then l's piece
    "if l + 1 < M: (product k from 0 to l: betaFunc(A + 1, B) / betaFunc(A, B)) * betaFunc(AL, BL + 1) / betaFunc(AL, BL) else: 1",
    // gammas of the stick's remainders
    "product k from 0 to M: gammaFunc((summate j from k + 1 to M: as[j]) + 1) / gammaFunc((summate j from k to M: as[j]) + 1)",
    // a polynomial quotient
    "product k from 0 to l: (nat2prob(k) + p + 1) / (nat2prob(k) + p)",
    // array reads (undefined where l >= size(as): skipped)
    "product k from 0 to l: as[k + 1] / as[k]",
    // the reverse direction, squared
    "product k from 0 to l: (nat2prob(k) + p) ^ 2 / (nat2prob(k) + p + 1) ^ 2",
];

/// One draw: the arrays, the label and the scalar.
#[derive(Clone, Debug)]
struct Draw {
    a: Vec<i64>,
    y: Vec<u32>,
    l: u32,
    p: i64,
}

fn draws() -> impl Strategy<Value = Draw> {
    (0usize..6, 0usize..6).prop_flat_map(|(m, n)| {
        (
            proptest::collection::vec(1i64..60, m),
            // labels below size(as), and sometimes size(as) itself (out of range)
            proptest::collection::vec(0..=m as u32, n),
            0u32..7,
            1i64..60,
        )
            .prop_map(|(a, y, l, p)| Draw { a, y, l, p })
    })
}

fn lit(store: &mut Store, num: i64, den: i64, ty: Type) -> TermId {
    let q = Rational::new(num_rational::BigRational::new(num.into(), den.into()));
    store.intern(Node::Lit(q), ty)
}

/// The body of `f` with its parameters bound to the draw's values (in `PARAMS` order).
fn apply(store: &mut Store, f: TermId, d: &Draw) -> TermId {
    let xs = d.a.iter().map(|&v| lit(store, v, 10, Type::Prob)).collect();
    let ys =
        d.y.iter()
            .map(|&v| lit(store, i64::from(v), 1, Type::Nat))
            .collect();
    let args = vec![
        store.intern(Node::ArrayLit(xs), Type::Array(Type::Prob.into())),
        store.intern(Node::ArrayLit(ys), Type::Array(Type::Nat.into())),
        lit(store, i64::from(d.l), 1, Type::Nat),
        lit(store, d.p, 10, Type::Prob),
    ];
    let mut body = f;
    for a in args {
        let Node::Lam(v, b) = *store.node(body) else {
            return body;
        };
        body = slic_algebra::vars::substitute1(store, b, v, a);
    }
    body
}

fn value(store: &Store, t: TermId) -> Option<f64> {
    match eval::eval_exact(store, t) {
        Some(q) => Some(q.to_f64()),
        None => eval::eval_f64(store, t, &|_| None),
    }
}

fn agree(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs()))
}

/// `Some(true)` when both sides evaluate alike at the draw, `Some(false)` when they
/// differ (or only the input evaluates), `None` when the input is undefined there.
fn same_at(store: &mut Store, input: TermId, output: TermId, d: &Draw) -> Option<bool> {
    let (ai, bi) = (apply(store, input, d), apply(store, output, d));
    let x = value(store, ai)?;
    Some(matches!(value(store, bi), Some(y) if agree(x, y)))
}

/// Loads shape `body` and closes its loops (then the gamma shifts a simplified weight
/// gets): (input, output).
fn closed(store: &mut Store, body: &str) -> (TermId, TermId) {
    let src = format!("{PARAMS}{}", stick(body));
    let t = front::load(store, &src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
    let r = sums::simplify_loops(store, &Context::new(), t);
    let r = canon::shift_gammas(store, r);
    if let Err(e) = verify::verify(store, r) {
        panic!("{src}: output does not verify: {e}");
    }
    (t, r)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn telescoped_products_equal_explicit_loops(shape in 0..SHAPES.len(), d in draws()) {
        let mut store = Store::new();
        let (t, r) = closed(&mut store, SHAPES[shape]);
        if same_at(&mut store, t, r, &d) == Some(false) {
            let text = print::print_term(&store, r);
            return Err(TestCaseError::fail(format!("{}\nat {d:?}\nclosed:\n{text}", SHAPES[shape])));
        }
    }
}

/// Enough draws are defined for every shape (the comparison above is not vacuous), and
/// every shape is closed: no `betaFunc` is left, and no product but `Π Γ(as[k] + cnt_k)`
/// and `Π Γ(as[k])` (the Dirichlet-multinomial's own).
#[test]
fn every_shape_is_closed_and_compared() {
    let mut runner = TestRunner::deterministic();
    let strategy = draws();
    for body in SHAPES {
        let mut store = Store::new();
        let (t, r) = closed(&mut store, body);
        let text = print::print_term(&store, r);
        assert!(!text.contains("betaFunc"), "{body}: betas left:\n{text}");
        let products = text.matches("product").count();
        let allowed = if body.contains("int2nat") { 2 } else { 0 };
        assert!(
            products <= allowed,
            "{body}: {products} products left:\n{text}"
        );
        let mut defined = 0;
        for _ in 0..100 {
            let d = strategy
                .new_tree(&mut runner)
                .map(|t| t.current())
                .unwrap_or_else(|e| panic!("{e}"));
            if let Some(ok) = same_at(&mut store, t, r, &d) {
                assert!(ok, "{body} at {d:?}:\n{text}");
                defined += 1;
            }
        }
        assert!(defined >= 20, "{body}: only {defined} draws defined");
    }
}

/// The predictive weight of a label `l` under the Dirichlet drawn by stick-breaking,
/// after telescoping, is `(as[l] + cnt_l) / (A + n)` (A the sum of `as`, n the labels in
/// range): the closed form of shape 2 evaluates to that, and it holds no loop but counts
/// and sums.
#[test]
fn the_predictive_weight_closes_to_counts() {
    let mut store = Store::new();
    let (_, r) = closed(&mut store, SHAPES[2]);
    let expect = format!(
        "{PARAMS}if l + 1 < size(as): \
         (as[l] + (summate j from 0 to size(y): if y[j] == l: 1 else: 0)) \
         / ((summate j from 0 to size(as): as[j]) \
            + (summate j from 0 to size(y): if y[j] < size(as): 1 else: 0)) else: 1"
    );
    let e = front::load(&mut store, &expect).unwrap_or_else(|e| panic!("{e:?}"));
    let text = print::print_term(&store, r);
    assert!(
        !text.contains("product") && !text.contains("gammaFunc"),
        "{text}"
    );
    let mut runner = TestRunner::deterministic();
    let strategy = draws();
    let mut compared = 0;
    for _ in 0..200 {
        let d = strategy
            .new_tree(&mut runner)
            .map(|t| t.current())
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(ok) = same_at(&mut store, e, r, &d) {
            assert!(ok, "at {d:?}:\n{text}");
            compared += 1;
        }
    }
    assert!(compared >= 100, "only {compared} draws compared");
}

/// A wrong closure is caught by the same comparison over the same random draws:
/// `(shape, wrong closed form)`.
#[test]
fn mutants_are_caught() {
    let mutants = [
        // the telescope's upper end off by one
        (SHAPES[4], "(nat2prob(l) + p + 1) / p"),
        // the lower end taken at 1
        (SHAPES[5], "if 1 <= l: as[l] / as[1] else: 1"),
        // the Dirichlet-multinomial evidence with one label too many
        (
            SHAPES[1],
            "if 1 <= size(as): (product k from 0 to size(as): gammaFunc(as[k] + (summate j from 0 to size(y): if y[j] == k: 1 else: 0)) / gammaFunc(as[k])) * gammaFunc(summate j from 0 to size(as): as[j]) / gammaFunc((summate j from 0 to size(as): as[j]) + nat2prob(size(y)) + 1) else: 1",
        ),
    ];
    let mut runner = TestRunner::deterministic();
    let strategy = draws();
    for (shape, wrong) in mutants {
        let mut store = Store::new();
        let (t, _) = closed(&mut store, shape);
        let src = format!("{PARAMS}{wrong}");
        let m = front::load(&mut store, &src).unwrap_or_else(|e| panic!("{wrong}: {e:?}"));
        let caught = (0..200).any(|_| {
            let Ok(d) = strategy.new_tree(&mut runner).map(|t| t.current()) else {
                return false;
            };
            same_at(&mut store, t, m, &d) == Some(false)
        });
        assert!(caught, "mutant {wrong} of {shape} not caught");
    }
}
