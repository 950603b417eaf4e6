//! Sums and products with indirect indexing equal their explicit loops (issue 10 §3):
//! random label arrays (length 0..6, values below K <= 3 and sometimes not), real and
//! bool arrays of the same length, a point u in and out of range, and loops of the
//! shapes the Gibbs and conjugacy updates produce (counts, per-class sums and square sums,
//! "every point except u", two-way and multi-way products, gamma ratios). Each program is
//! closed by `sums::simplify_loops`; the input and the output, applied to the same literal
//! arguments, are evaluated by `eval` (exactly when rational, else in `f64`) and must
//! agree. Mutants (a count off by one, u's correction forgotten) must be caught by the
//! same comparison, so it is not vacuous.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use slic_algebra::assume::Context;
use slic_algebra::eval;
use slic_algebra::num::Rational;
use slic_algebra::{front, print, sums, verify, Node, Store, TermId, Type};

/// The parameters of every shape, in order.
const PARAMS: &str = "fn k nat: fn u nat: fn zn nat: fn kk nat: fn p prob: fn x real: \
                      fn y array(nat): fn s array(real): fn b array(bool):\n";

/// Loop bodies over the parameters; `N` is the points' count `size(y)`.
const SHAPES: &[&str] = &[
    // counts and per-class sums, written several ways
    "summate i from 0 to N: if k == y[i]: 1 else: 0",
    "summate i from 0 to N: if y[i] /= k: 0. real else: 1",
    "summate i from 0 to N: if y[i] == k: s[i] else: 0",
    "summate i from 0 to N: s[i] * s[i] * (if k == y[i]: 1 else: 0)",
    "summate i from 0 to N: if y[i] > k: 1 else: 0",
    "summate i from 0 to N: if k /= y[i]: x else: 0",
    // every point except u
    "summate i from 0 to N: if k == (if i == u: zn else: y[i]): 1 else: 0",
    "summate i from 0 to N: if k == (array d of N: if d == u: zn else: y[d])[i]: 1 else: 0",
    "summate i from 0 to N: if k == (if i == u: zn else: y[i]): nat2real(y[i]) * x else: 0",
    "summate i from 0 to size(s): (if i == u: x else: s[i]) ^ 2",
    "product i from 0 to N: if k == (if i == u: zn else: y[i]): p else: 1",
    "product i from 0 to size(s): exp(if i == u: x else: s[i])",
    // refused (s is not known to be as long as y): stays a loop, still equal
    "summate i from 0 to N: if i == u: x else: s[i]",
    // two-way products
    "product i from 0 to N: if b[i]: p else: real2prob(1 - p)",
    "product i from 0 to N: if k == y[i]: x else: -2",
    "product i from 0 to N: if y[i] < k: 0 else: p",
    "product i from 0 to N: if k == y[i]: p else: 2 * p",
    // a read guarded by its support (labels may be out of range)
    "product i from 0 to N: if y[i] < kk: (array c of kk: p + nat2prob(c))[y[i]] * p else: 0",
    // gamma ratios: Dirichlet-multinomial predictive, rising factorials
    "product c from 0 to kk: gammaFunc(p + nat2prob(summate i from 0 to N: if c == y[i]: 1 else: 0) + (if c == zn: 1 else: 0)) / gammaFunc(p + nat2prob(summate i from 0 to N: if c == y[i]: 1 else: 0))",
    "product i from 0 to N: gammaFunc(p + nat2prob(y[i]) + 2) / gammaFunc(p + nat2prob(y[i]))",
    "product c from 0 to kk: gammaFunc(p + (if c == k: 1 else: 0)) / gammaFunc(p)",
    // one point and every other (`sums/point.rs`): the loop over every point times the
    // point's ratio, where the other body is proved positive there
    "product i from 0 to N: if i == u: p * p else: 1 + nat2prob(y[i])",
    "product i from 0 to N: if u == i: x else: 2 + nat2real(y[i])",
    "product i from 0 to size(s): if i == u: p else: exp(s[i]) * (p + 1)",
    "product i from 0 to N: if i /= u: 1 + nat2prob(y[i]) else: 1",
    "product i from 0 to N: if i == N + u: p else: 1 + nat2prob(y[i])",
    // refused: `y[u]` may be 0 (dividing by it is wrong), and `s[u]` is not known to be
    // read in bounds when u < size(y)
    "product i from 0 to N: if u == i: p else: nat2prob(y[i])",
    "product i from 0 to N: if u == i: p else: exp(s[i])",
    // multi-way choices whose leaves are free of the index (corpus case 23, the coin's
    // observations), with zero leaves (labels at or past kk are impossible)
    "product i from 0 to N: if kk <= y[i]: 0 else: if y[i] == k: p else: 2 * p",
    "product i from 0 to N: if y[i] == 0: x else: if y[i] == 1: -2 else: if y[i] == 2: 3 else: 0",
    "product i from 0 to N: if b[i]: (if y[i] < k: p else: 0) else: p + 1",
];

/// One draw: the scalar parameters and the arrays.
#[derive(Clone, Debug)]
struct Draw {
    k: u32,
    u: u32,
    zn: u32,
    kk: u32,
    p: (i64, i64),
    x: (i64, i64),
    y: Vec<u32>,
    s: Vec<i64>,
    b: Vec<bool>,
}

fn draws() -> impl Strategy<Value = Draw> {
    (1u32..=3, 0usize..6).prop_flat_map(|(kk, len)| {
        (
            0..=kk,
            0u32..8,
            0..=kk,
            (1i64..99, Just(100i64)),
            (-300i64..300, Just(100i64)),
            // labels below K, and sometimes K itself (out of range)
            proptest::collection::vec(0..=kk, len),
            proptest::collection::vec(-400i64..400, len),
            proptest::collection::vec(any::<bool>(), len),
        )
            .prop_map(move |(k, u, zn, p, x, y, s, b)| Draw {
                k,
                u,
                zn,
                kk,
                p,
                x,
                y,
                s,
                b,
            })
    })
}

fn lit(store: &mut Store, num: i64, den: i64, ty: Type) -> TermId {
    let q = Rational::new(num_rational::BigRational::new(num.into(), den.into()));
    store.intern(Node::Lit(q), ty)
}

/// The body of `f` with its parameters bound to the draw's values (in the order of
/// `PARAMS`).
fn apply(store: &mut Store, f: TermId, d: &Draw) -> TermId {
    let mut args = vec![
        lit(store, i64::from(d.k), 1, Type::Nat),
        lit(store, i64::from(d.u), 1, Type::Nat),
        lit(store, i64::from(d.zn), 1, Type::Nat),
        lit(store, i64::from(d.kk), 1, Type::Nat),
        lit(store, d.p.0, d.p.1, Type::Prob),
        lit(store, d.x.0, d.x.1, Type::Real),
    ];
    let ys =
        d.y.iter()
            .map(|&v| lit(store, i64::from(v), 1, Type::Nat))
            .collect();
    args.push(store.intern(Node::ArrayLit(ys), Type::Array(Type::Nat.into())));
    let ss =
        d.s.iter()
            .map(|&v| lit(store, v, 100, Type::Real))
            .collect();
    args.push(store.intern(Node::ArrayLit(ss), Type::Array(Type::Real.into())));
    let bs =
        d.b.iter()
            .map(|&v| store.intern(Node::Bool(v), Type::Bool))
            .collect();
    args.push(store.intern(Node::ArrayLit(bs), Type::Array(Type::Bool.into())));
    // the parameters bound by `let` around the body (`eval` applies literal `fn`s only)
    let mut vars = Vec::new();
    let mut body = f;
    while let Node::Lam(v, b) = store.node(body) {
        vars.push(*v);
        body = *b;
    }
    let ty = store.ty(body).clone();
    for (v, a) in vars.into_iter().zip(args).rev() {
        body = store.intern(Node::Let(v, a, body), ty.clone());
    }
    body
}

/// The value of a closed numeric term: exact when it is rational, else in `f64`.
fn value(store: &Store, t: TermId) -> Option<Result<Rational, f64>> {
    match eval::eval_exact(store, t) {
        Some(q) => Some(Ok(q)),
        None => eval::eval_f64(store, t, &|_| None).map(Err),
    }
}

fn agree(a: &Result<Rational, f64>, b: &Result<Rational, f64>) -> bool {
    let f = |v: &Result<Rational, f64>| match v {
        Ok(q) => q.to_f64(),
        Err(x) => *x,
    };
    match (a, b) {
        (Ok(x), Ok(y)) => x == y,
        _ => {
            let (x, y) = (f(a), f(b));
            (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs()))
        }
    }
}

/// A program of `body` over the parameters.
fn program(body: &str) -> String {
    format!("{PARAMS}{}", body.replace('N', "size(y)"))
}

/// Does `output` (a program over the parameters) evaluate like `input` at the draw? An
/// error names both values.
fn compare(store: &mut Store, input: TermId, output: TermId, d: &Draw) -> Result<(), String> {
    let (ai, bi) = (apply(store, input, d), apply(store, output, d));
    let x =
        value(store, ai).ok_or_else(|| format!("the explicit loop does not evaluate at {d:?}"))?;
    match value(store, bi) {
        Some(y) if agree(&x, &y) => Ok(()),
        y => Err(format!("at {d:?}: loop {x:?}, closed {y:?}")),
    }
}

/// Loads and closes shape `i`: (input, output).
fn closed(store: &mut Store, body: &str) -> Result<(TermId, TermId), String> {
    let src = program(body);
    let t = front::load(store, &src).map_err(|e| format!("{src}: {e:?}"))?;
    let r = sums::simplify_loops(store, &Context::new(), t);
    verify::verify(store, r).map_err(|e| format!("{src}: output does not verify: {e}"))?;
    Ok((t, r))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn indirect_sums_equal_explicit_loops(shape in 0..SHAPES.len(), d in draws()) {
        let mut store = Store::new();
        let (t, r) = closed(&mut store, SHAPES[shape]).map_err(TestCaseError::fail)?;
        let text = print::print_term(&store, r);
        compare(&mut store, t, r, &d).map_err(|e| TestCaseError::fail(format!("{}\n{e}\nclosed:\n{text}", SHAPES[shape])))?;
    }
}

/// Every shape but the refused one is rewritten (none is merely passed through), and the
/// "except u" shapes lose their `if i == u` (the pattern is really closed, not left in
/// the loop).
#[test]
fn every_shape_is_rewritten() {
    for body in SHAPES.iter().filter(|b| !b.ends_with("else: s[i]")) {
        let mut store = Store::new();
        let (t, r) = closed(&mut store, body).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(t, r, "{body}: unchanged");
        let text = print::print_term(&store, r);
        if body.contains("== u") {
            assert!(
                !text.contains("u =="),
                "{body}: still tests u inside the loop:\n{text}"
            );
        }
    }
}

/// A wrong closure is caught by the comparison above over the same random draws:
/// `(shape, wrong closed form)`.
#[test]
fn mutants_are_caught() {
    assert!(SHAPES[21].starts_with("product i from 0 to N: if i == u: p * p"));
    let mutants = [
        // a count off by one
        (SHAPES[0], "(summate i from 0 to N: if k == y[i]: 1 else: 0) + 1"),
        // the count over all points with u's correction forgotten
        (SHAPES[6], "summate i from 0 to N: if k == y[i]: 1 else: 0"),
        // the correction made whatever u is (y[u] read out of range, or counted twice)
        (
            SHAPES[9],
            "(summate i from 0 to size(s): s[i] ^ 2) + x ^ 2 - (if u < size(s): s[u] ^ 2 else: 0)",
        ),
        // the point's ratio forgotten, or made whatever u is
        (SHAPES[21], "product i from 0 to N: 1 + nat2prob(y[i])"),
        (
            SHAPES[21],
            "(product i from 0 to N: 1 + nat2prob(y[i])) * (if u < N: p * p / (1 + nat2prob(y[0])) else: 1)",
        ),
        // two counts where one is the complement of the other, swapped
        (SHAPES[16], "p ** (summate i from 0 to N: if k /= y[i]: 1 else: 0) * (2 * p) ** (summate i from 0 to N: if k == y[i]: 1 else: 0)"),
        // a chain's zero leaf forgotten (labels past kk weigh 2 * p instead of 0)
        (SHAPES[28], "p ** (summate i from 0 to N: if k == y[i]: 1 else: 0) * (2 * p) ** (summate i from 0 to N: if k /= y[i]: 1 else: 0)"),
    ];
    let mut runner = TestRunner::deterministic();
    let strategy = draws();
    for (shape, wrong) in mutants {
        let mut store = Store::new();
        let t = front::load(&mut store, &program(shape)).unwrap_or_else(|e| panic!("{e:?}"));
        let m =
            front::load(&mut store, &program(wrong)).unwrap_or_else(|e| panic!("{wrong}: {e:?}"));
        // caught: both sides evaluate, to different values
        let caught = (0..200).any(|_| {
            let Ok(d) = strategy.new_tree(&mut runner).map(|t| t.current()) else {
                return false;
            };
            let (ai, bi) = (apply(&mut store, t, &d), apply(&mut store, m, &d));
            match (value(&store, ai), value(&store, bi)) {
                (Some(x), Some(y)) => !agree(&x, &y),
                _ => false,
            }
        });
        assert!(caught, "mutant {wrong} of {shape} not caught");
    }
}
