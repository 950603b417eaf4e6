//! Tests of lowering core terms into the loop IR (issue 11): every non-measure program is
//! lowered, verified and run by the IR interpreter, and its value compared with the
//! reference interpreter's on the same arguments (proptest over random arrays, sizes 0
//! and 1 included, 1e-12 relative); errors must agree too (an index out of range fails in
//! both or in neither). Measure programs (`corpus/lowering/`) are checked here by the
//! structure of what they print, and by meaning with the whole corpus in
//! `tests/lowering.rs`.

use proptest::prelude::*;
use slic_algebra::{front, Store, TermId};
use slic_codegen::{lower, run, verify, LowerError, Program, Val};
use slic_semantics::{apply_args, eval, Env, Value};

/// The parameters every expression program here takes.
const PARAMS: &str =
    "fn y array(nat):\nfn t array(real):\nfn w array(nat):\nfn K nat:\nfn x real:\n";

/// The arguments, in the order of [`PARAMS`].
#[derive(Clone, Debug)]
struct Args {
    y: Vec<u64>,
    t: Vec<f64>,
    w: Vec<u64>,
    k: u64,
    x: f64,
}

impl Args {
    fn reference(&self) -> Vec<Value> {
        let nats = |v: &[u64]| Value::array(v.iter().map(|n| Value::Nat(*n)).collect());
        vec![
            nats(&self.y),
            Value::array(self.t.iter().map(|r| Value::Real(*r)).collect()),
            nats(&self.w),
            Value::Nat(self.k),
            Value::Real(self.x),
        ]
    }

    fn ir(&self) -> Vec<Val> {
        let nats = |v: &[u64]| Val::array(v.iter().map(|n| Val::Nat(*n)).collect());
        vec![
            nats(&self.y),
            Val::array(self.t.iter().map(|r| Val::Real(*r)).collect()),
            nats(&self.w),
            Val::Nat(self.k),
            Val::Real(self.x),
        ]
    }
}

/// Fixed arguments: labels at and above `K`, an empty case, a single element.
fn fixed_args() -> Vec<Args> {
    vec![
        Args {
            y: vec![0, 1, 2, 1, 0, 5],
            t: vec![1.5, -2.0, 3.25, 0.5, -1.0, 7.0],
            w: vec![1, 2, 3, 4, 5, 6],
            k: 3,
            x: 0.75,
        },
        Args {
            y: vec![],
            t: vec![],
            w: vec![],
            k: 0,
            x: -1.5,
        },
        Args {
            y: vec![1],
            t: vec![2.0],
            w: vec![0],
            k: 1,
            x: 2.0,
        },
        Args {
            y: vec![2, 2, 2],
            t: vec![1.0, 2.0],
            w: vec![0, 0, 1],
            k: 4,
            x: 0.0,
        },
    ]
}

fn load(store: &mut Store, body: &str) -> TermId {
    let src = format!("{PARAMS}{body}\n");
    front::load(store, &src).unwrap_or_else(|e| panic!("{body}: {e:?}"))
}

fn lowered(store: &Store, t: TermId) -> Program {
    let p = lower(store, t)
        .unwrap_or_else(|e| panic!("{e}\n{}", slic_algebra::print::print_term(store, t)));
    if let Err(e) = verify(&p) {
        panic!("{e}\n{p}");
    }
    p
}

/// Equal to 1e-12 relative (exact for integers and bools).
fn same(ir: &Val, reference: &Value) -> bool {
    let close = |a: f64, b: f64| {
        a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
    };
    match (ir, reference) {
        (Val::Nat(a), Value::Nat(b)) => a == b,
        (Val::Int(a), Value::Int(b)) => a == b,
        (Val::Bool(a), Value::Bool(b)) => a == b,
        (Val::Real(a), Value::Real(b)) => close(*a, *b),
        // probs compared as linear values (log space hides relative error near 0)
        (Val::Prob(a), Value::Prob(b)) => close(a.exp(), b.exp()),
        _ => false,
    }
}

/// Lowers `body`, runs it and the reference on `args`; `Err` says how they differ.
fn compare(store: &Store, t: TermId, p: &Program, args: &Args) -> Result<(), String> {
    let reference =
        eval(store, t, &Env::new()).and_then(|f| apply_args(store, &f, &args.reference()));
    let ir = run(p, &args.ir());
    match (&ir, &reference) {
        (Ok((a, _)), Ok(b)) if same(a, b) => Ok(()),
        (Err(_), Err(_)) => Ok(()),
        _ => Err(format!(
            "on {args:?}: IR {ir:?}, reference {reference:?}\n{p}"
        )),
    }
}

fn check(body: &str) -> Program {
    let mut store = Store::new();
    let t = load(&mut store, body);
    let p = lowered(&store, t);
    for a in fixed_args() {
        if let Err(e) = compare(&store, t, &p, &a) {
            panic!("{body}\n{e}");
        }
    }
    p
}

/// Bodies with scalar results: sums, products, arrays, histograms (`bucket` with every
/// reducer), nested loops, `if`, `let`, `match`, functions, short-circuit guards.
const BODIES: &[&str] = &[
    // sums and products
    "summate j from 0 to size(t): t[j] * x",
    "summate j from 0 to size(w): w[j] * w[j]",
    "summate j from 0 to size(t): exp(t[j])",
    "product j from 0 to size(w): nat2prob(w[j]) + 1",
    "product j from 0 to size(t): t[j] + x",
    "summate i from -2 to nat2int(K): i * i",
    // arrays
    "a = array i of K: nat2real(i) * x\nsummate k from 0 to K: a[k] * a[k]",
    "a = array i of size(t): t[i] + 1\nb = array i of size(a): a[i] * 2\nsummate k from 0 to size(b): b[k]",
    "a = [x, 2 * x, 3]\na[1] + nat2real(size(a))",
    // an array of pairs is a pair of arrays
    "p = array i of K: (nat2real(i) * x, i * 2)\nsummate k from 0 to size(p): match p[k]: (a, b): a + nat2real(b)",
    // nested loops and histograms by hand
    "summate i from 0 to K: summate j from 0 to size(t): if y[j] == i: t[j] else: 0",
    "h = bucket j from 0 to size(y): r_index b = K of y[j]: r_add t[j]\nsummate k from 0 to K: h[k] * nat2real(k + 1)",
    "h = bucket j from 0 to size(y): r_index b = K of y[j] * 2: r_add 1\nsummate k from 0 to K: h[k] * (k + 1)",
    "h = bucket j from 0 to size(y): r_index b = K of y[j]: r_add nat2real(b) * t[j]\nsummate k from 0 to K: h[k]",
    "h = bucket j from 0 to size(t): r_fanout r_add t[j] || r_add 1\nmatch h: (s, n): s / (nat2real(n) + 1)",
    "h = bucket j from 0 to size(t): r_split t[j] < 0: r_add t[j] else: r_nop\nmatch h: (s, _): s",
    "h = bucket j from 0 to size(y): r_index b = K of y[j]: r_fanout (r_add t[j]) || (r_split 1 < w[j]: r_add w[j] else: r_nop)\nsummate k from 0 to K: match h[k]: (s, (n, _)): s * nat2real(n)",
    "match (bucket j from 0 to size(y): r_fanout (r_index b = K of y[j]: r_add 1) || (r_add t[j])): (h, s): s + nat2real(summate k from 0 to K: h[k])",
    // if, let, match
    "z = x * 2\nif z < 1: z else: summate j from 0 to size(t): t[j] * z",
    "if x < 0: size(t) else: size(w) + K",
    "match x < 1:\n  true: 1\n  false: 2",
    "match x < 1:\n  false: t[0]\n  true: x",
    "p = (x, K)\nmatch p: (a, b): a * nat2real(b)",
    "match (x < 0, t[K]):\n  (true, _): 1\n  (false, v): v",
    // functions
    "def sq(v real) real: v * v\nsq(x) + sq(summate j from 0 to size(t): t[j])",
    "def scale(c real) array(real): array i of size(t): t[i] * c\nsummate j from 0 to size(t): scale(x)[j]",
    "reduce(fn a real: fn b real: a + b * b, x, t)",
    // short-circuit guards protecting an index
    "summate j from 0 to K: if j < size(t) && 0 < t[j]: 1 else: 0",
    "summate j from 0 to K: if size(t) <= j || t[j] < 0: 1 else: 0",
    "summate j from 0 to K: if j < size(w) && j < size(t) && 1 <= w[j] && 0 < t[j]: t[j] else: 0",
    // short-circuit guards protecting an unsafe coercion
    "summate j from 0 to size(t): if 0 <= t[j] && real2prob(t[j]) < 1: 1 else: 0",
    "summate i from 0 to K: if i < 2 || 1 <= int2nat(nat2int(i) - 2): 1 else: 0",
    // failures that must fail in both: an index out of range, an unsafe coercion
    "t[K]",
    "nat2real(int2nat(nat2int(K) - 2))",
];

#[test]
fn every_body_lowers_verifies_and_runs_as_the_reference() {
    for body in BODIES {
        check(body);
    }
}

/// The histogram shapes of `tests/histogram.rs`, summarized (so `bucket` comes from the
/// transform, with `r_index`, `r_fanout`, `r_split`, `r_nop`) and then lowered.
const SUMMARIZED: &[&str] = &[
    "summate k from 0 to K: (summate j from 0 to size(y): if k == y[j]: t[j] else: 0) ^ 2",
    "summate k from 0 to K: (summate j from 0 to size(y): if k == y[j]: t[j] else: 0) \
     * nat2real(summate j from 0 to size(y): if k == y[j]: w[j] else: 0) \
     + (summate j from 0 to size(y): if k == y[j]: 1 else: 0)",
    "summate k from 0 to K: summate j from 0 to size(y): if t[j] < 0 && k == y[j]: t[j] else: 0",
    "summate k from 0 to K: summate j from 0 to size(y): if 1 < w[j] && k == y[j]: nat2real(k) * t[j] else: 0",
];

fn summarized(store: &mut Store, body: &str) -> TermId {
    let t = load(store, body);
    let out = slic_codegen::summarize(store, t);
    assert!(out.histograms >= 1, "no histogram in {body}");
    out.term
}

#[test]
fn summarized_histograms_lower_and_run_as_the_reference() {
    for body in SUMMARIZED {
        let mut store = Store::new();
        let t = summarized(&mut store, body);
        let p = lowered(&store, t);
        // one pass over the data: the histogram loop (its range empty when K is 0)
        assert_eq!(p.to_string().matches("for j").count(), 1, "{p}");
        for a in fixed_args() {
            compare(&store, t, &p, &a).unwrap_or_else(|e| panic!("{body}\n{e}"));
        }
    }
}

#[test]
fn a_guard_is_a_statement_if() {
    let p = check("summate j from 0 to K: if j < size(t) && 0 < t[j]: 1 else: 0");
    let text = p.to_string();
    // the read of t[j] sits inside an `if` on the guard, not beside it in one `&&`
    assert!(!text.contains("&& (0.0 < t[j])"), "{text}");
    assert!(text.contains("if t"), "{text}");
}

#[test]
fn names_come_from_the_term() {
    let p = check("total = summate j from 0 to size(t): t[j]\ntotal * x");
    let text = p.to_string();
    assert!(text.contains("var total: real = 0.0"), "{text}");
    assert!(text.contains("for j in 0..size(t) {"), "{text}");
    // the same hint twice is suffixed
    let p = check(
        "a = summate j from 0 to size(t): t[j]\nb = summate j from 0 to size(t): t[j] * 2\na + b",
    );
    assert!(p.to_string().contains("for j_1 in"), "{p}");
}

#[test]
fn a_wrong_lowering_is_caught() {
    // the mutant: the sum starts at 1 instead of 0
    let mut store = Store::new();
    let t = load(&mut store, "summate j from 0 to size(t): t[j]");
    let mut p = lowered(&store, t);
    for s in &mut p.body {
        if let slic_codegen::Stmt::Var { init, .. } = s {
            *init = Some(slic_codegen::Expr::real(1.0));
        }
    }
    let caught = fixed_args()
        .iter()
        .any(|a| compare(&store, t, &p, a).is_err());
    assert!(caught, "the mutant was not caught:\n{p}");
}

/// What cannot be lowered is an error naming it, never a panic.
#[test]
fn unsupported_terms_are_clear_errors() {
    let cases: &[(&str, &str)] = &[
        ("integrate z from 0 to 1: exp(z)", "integrate"),
        ("array i of K: array j of K: x", "arrays"),
        ("f = fn z real: z + x\nf", "function"),
        ("z <~ lebesgue(0, 1)\nreturn z", "lebesgue"),
        ("z <~ counting\nreturn z", "counting"),
        ("simplify(x)", "simplify"),
        (
            "plate i of K: plate j of K: normal(0, 1)",
            "array of arrays",
        ),
        ("match just(x):\n  just(a): a\n  nothing: 0", "just"),
    ];
    for (body, word) in cases {
        let mut store = Store::new();
        let src = format!("{PARAMS}{body}\n");
        let t = match front::load(&mut store, &src) {
            Ok(t) => t,
            Err(e) => panic!("{body} does not elaborate: {e:?}"),
        };
        match lower(&store, t) {
            Err(e @ LowerError::Unsupported(_)) => {
                assert!(e.to_string().contains(word), "{body}: {e}")
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}

fn args_strategy() -> impl Strategy<Value = Args> {
    (
        proptest::collection::vec((0u64..5, -8i32..8, 0u64..4), 0..7),
        0u64..=4,
        -8i32..8,
    )
        .prop_map(|(rows, k, x)| Args {
            y: rows.iter().map(|r| r.0).collect(),
            t: rows.iter().map(|r| f64::from(r.1) / 4.0).collect(),
            w: rows.iter().map(|r| r.2).collect(),
            k,
            x: f64::from(x) / 4.0,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every body, lowered, equals the reference on random arrays (length 0 to 6, labels
    /// at and above K) to 1e-12 relative; errors agree.
    #[test]
    fn lowered_equals_reference(args in args_strategy()) {
        for body in BODIES {
            let mut store = Store::new();
            let t = load(&mut store, body);
            let p = lowered(&store, t);
            if let Err(e) = compare(&store, t, &p, &args) {
                prop_assert!(false, "{}\n{}", body, e);
            }
        }
        for body in SUMMARIZED {
            let mut store = Store::new();
            let t = summarized(&mut store, body);
            let p = lowered(&store, t);
            if let Err(e) = compare(&store, t, &p, &args) {
                prop_assert!(false, "{}\n{}", body, e);
            }
        }
    }
}

// ---- measures: checked by structure here, by meaning in tests/lowering.rs ----

/// Measure programs of `corpus/lowering/`, each with words its lowered text must hold (in
/// order). Their meaning (exact distributions of the finite ones, sample moments of the
/// rest, against the reference interpreter) is checked with the whole corpus by
/// `tests/lowering.rs`.
const MEASURES: &[(&str, &[&str])] = &[
    (
        "01-normal-doubled.hk",
        &["measure {", "draw z: real ~ normal(x, ", "return (z * 2.0)"],
    ),
    (
        "02-weighted-return.hk",
        &["factor real2prob((x * x))", "return x"],
    ),
    (
        "03-reject-or-return.hk",
        &["if (x < 0.0) {", "reject", "} else {", "return t"],
    ),
    (
        "04-three-way-superpose.hk",
        &[
            "alloc t",
            "~ categorical(t",
            "factor nat2prob(3)",
            "if (t",
            "return t",
        ],
    ),
    (
        "05-plate-of-poissons.hk",
        &[
            "alloc t",
            "for i in 0..K {",
            "~ poisson(nat2prob(w[i]))",
            "[i] = t",
        ],
    ),
    (
        "06-two-draws-from-one-measure.hk",
        &[
            "draw a: nat ~ categorical(",
            "draw b: nat ~ categorical(",
            "return (a + b)",
        ],
    ),
    ("07-bernoulli-indicator.hk", &["measure {", "draw"]),
    (
        "08-binomial.hk",
        &[
            "alloc t",
            "for k in 0..t",
            "choose(K, k)",
            "draw z: nat ~ categorical(t",
        ],
    ),
    (
        "09-dirichlet-first.hk",
        &[
            "alloc a: array(prob) of 3",
            "~ beta(",
            "alloc z: array(prob) of",
            "return z[0]",
        ],
    ),
    (
        "10-std-normal.hk",
        &["draw z: real ~ normal(0.0, prob(1.0))"],
    ),
    (
        "11-categorical-weighted-read.hk",
        &[
            "alloc t",
            "draw c: nat ~ categorical(t",
            "factor nat2prob((c + 1))",
            "return t[c]",
        ],
    ),
    (
        "12-superposed-pairs.hk",
        &[
            "categorical",
            "if (t",
            "} else {",
            "return (p * nat2real(p_1))",
        ],
    ),
];

/// The words of `expect` in `text`, in order.
fn in_order(text: &str, expect: &[&str]) -> Result<(), String> {
    let mut rest = text;
    for e in expect {
        match rest.find(e) {
            Some(k) => rest = &rest[k + e.len()..],
            None => return Err(format!("{e:?} missing (in order) in\n{text}")),
        }
    }
    Ok(())
}

#[test]
fn measures_lower_to_draws_factors_and_rejections() {
    for (body, expect) in MEASURES {
        let path = format!("{}/../corpus/lowering/{body}", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut store = Store::new();
        let t = front::load(&mut store, &src).unwrap_or_else(|e| panic!("{body}: {e:?}"));
        let p = lower(&store, t).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert!(p.measure, "{body}");
        in_order(&p.to_string(), expect).unwrap_or_else(|e| panic!("{body}: {e}"));
    }
}

/// An expression program never draws: `measure` is false and no measure statement appears.
#[test]
fn expressions_are_not_measures() {
    for body in BODIES {
        let p = check(body);
        assert!(!p.measure);
        let text = p.to_string();
        assert!(!text.contains("draw") && !text.contains("factor"), "{text}");
    }
}

/// The simplified GMM Gibbs update of the corpus lowers, whole, to one measure program
/// that draws once, from a categorical over the classes.
#[test]
fn gmm_gibbs_update_lowers() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/cases/18-gmm-gibbs.simplified.hk"
    );
    let src = std::fs::read_to_string(path).expect("the corpus file");
    let mut store = Store::new();
    let t = front::load(&mut store, &src).expect("elaborates");
    for term in [t, slic_codegen::summarize(&mut store, t).term] {
        let p = lower(&store, term).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.measure);
        let text = p.to_string();
        assert_eq!(text.matches("draw ").count(), 1, "{text}");
        in_order(
            &text,
            &[
                "if (1 <= size(as)) {",
                "factor",
                "~ categorical(",
                "} else {",
                "reject",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // fused: loops over the data inside the loop over classes share passes (fewer
        // loops); the draw and its factor stay where they are
        let f = slic_codegen::fuse(&p);
        let fused = f.to_string();
        let loops = |s: &str| s.matches("for ").count();
        assert!(loops(&fused) < loops(&text), "{fused}");
        assert_eq!(fused.matches("draw ").count(), 1, "{fused}");
        in_order(&fused, &["factor", "~ categorical(", "reject"]).unwrap_or_else(|e| panic!("{e}"));
    }
}

// ---- fusion ----

/// Runs `p` and `fuse(p)` on `args`: the same value (or both fail), never more iterations;
/// the fused program verifies. Returns both iteration counts.
fn fused_same(p: &Program, args: &Args) -> Result<(u64, u64), String> {
    let f = slic_codegen::fuse(p);
    verify(&f).map_err(|e| format!("{e}\n{f}"))?;
    match (run(p, &args.ir()), run(&f, &args.ir())) {
        (Ok((a, sa)), Ok((b, sb))) => {
            if a != b {
                return Err(format!("on {args:?}: {a:?} became {b:?}\n{p}\n{f}"));
            }
            if sb.iterations > sa.iterations || sb.array_reads > sa.array_reads {
                return Err(format!("on {args:?}: more work {sa:?} -> {sb:?}\n{f}"));
            }
            Ok((sa.iterations, sb.iterations))
        }
        (Err(_), Err(_)) => Ok((0, 0)),
        (a, b) => Err(format!("on {args:?}: {a:?} became {b:?}\n{p}\n{f}")),
    }
}

/// Three class statistics used in three places: the histogram transform gives every
/// bucket of one range and index the same reducers (one term, shared by A-normal form),
/// and fusion joins the three loops over the classes; one pass of each.
const GMM_STATISTICS: &str = "\
a = summate k from 0 to K: (summate j from 0 to size(t): if k == y[j]: t[j] else: 0) ^ 2
b = product k from 0 to K: nat2prob(summate j from 0 to size(t): if k == y[j]: 1 else: 0) + 1
c = summate k from 0 to K: (summate j from 0 to size(t): if k == y[j]: t[j] ^ 2 else: 0)
a + prob2real(b) + c";

#[test]
fn gmm_statistics_take_one_pass_over_the_data() {
    let mut store = Store::new();
    let t = load(&mut store, GMM_STATISTICS);
    // through A-normal form: the three histograms' ranges are one shared name
    let t = slic_codegen::term_stages(&mut store, t, slic_codegen::Passes::default())
        .expect("the term passes")
        .anf;
    let p = lowered(&store, t);
    let f = slic_codegen::fuse(&p);
    let text = f.to_string();
    assert_eq!(text.matches("for j").count(), 1, "{text}");
    assert_eq!(text.matches("for k").count(), 1, "{text}");
    // one bucket of the three statistics: y[j] is read once per iteration
    assert_eq!(text.matches("y[j]").count(), 1, "{text}");
    assert_eq!(text.matches("alloc hist").count(), 3, "{text}");
    for (n, k) in [(0usize, 0u64), (1, 1), (50, 3), (200, 10)] {
        let args = Args {
            y: (0..n as u64).map(|j| (j * 7) % (k + 1)).collect(),
            t: (0..n).map(|j| j as f64 / 8.0 - 3.0).collect(),
            w: vec![0; n],
            k,
            x: 0.0,
        };
        let (before, after) = fused_same(&p, &args).unwrap_or_else(|e| panic!("{e}"));
        // one pass over the data (one bucket), and fused, one over the classes (instead
        // of one per statistic)
        assert_eq!(after, n as u64 + k, "{text}");
        assert_eq!(before, n as u64 + 3 * k, "{p}");
        compare(&store, t, &f, &args).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A bucket needed under a branch inside a loop leaves both guarded (its range emptied
/// where the test fails or the loop is empty); the same bucket unguarded in scope serves
/// it: one pass over the data.
#[test]
fn a_guarded_bucket_is_served_by_the_unguarded_one() {
    let mut store = Store::new();
    let t = load(
        &mut store,
        "(summate k from 0 to K: (summate j from 0 to size(t): if k == y[j]: t[j] else: 0) ^ 2) \
         + (summate i from 0 to size(w): \
              if x < 0: \
                  nat2real(w[i]) * (summate k from 0 to K: nat2real(k) * (summate j from 0 to size(t): if k == y[j]: t[j] else: 0)) \
              else: 1)",
    );
    let t = slic_codegen::term_stages(&mut store, t, slic_codegen::Passes::default())
        .expect("the term passes")
        .anf;
    let p = lowered(&store, t);
    let text = p.to_string();
    assert_eq!(text.matches("alloc hist").count(), 1, "{text}");
    for (n, k, x) in [
        (0usize, 0u64, -1.0),
        (5, 2, -1.0),
        (5, 2, 1.0),
        (40, 4, -0.5),
    ] {
        let args = Args {
            y: (0..n as u64).map(|j| (j * 5) % (k + 2)).collect(),
            t: (0..n).map(|j| j as f64 / 4.0 - 2.0).collect(),
            w: (0..n as u64).map(|j| j % 3).collect(),
            k,
            x,
        };
        compare(&store, t, &p, &args).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn dependent_loops_stay_apart() {
    // the second loop reads the first's accumulator: two passes
    let p =
        check("m = summate j from 0 to size(t): t[j]\nsummate j from 0 to size(t): (t[j] - m) ^ 2");
    let f = slic_codegen::fuse(&p);
    assert_eq!(f.to_string().matches("for ").count(), 2, "{f}");
    assert_eq!(f, p);
    // an array filled by one loop and read by the next at another index
    let p = check("a = array i of size(t): t[i] * 2\nsummate j from 0 to size(t): a[0] + t[j]");
    let f = slic_codegen::fuse(&p);
    assert_eq!(f.to_string().matches("for ").count(), 2, "{f}");
}

#[test]
fn independent_loops_share_one_pass() {
    let p = check("a = summate j from 0 to size(t): t[j]\nb = summate i from 0 to size(t): t[i] * t[i]\na * b + x");
    let f = slic_codegen::fuse(&p);
    let text = f.to_string();
    assert_eq!(text.matches("for ").count(), 1, "{text}");
    assert!(text.contains("let t_j: real = t[j]"), "{text}");
    for a in fixed_args() {
        let (before, after) = fused_same(&p, &a).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(2 * after, before);
    }
}

#[test]
fn ifs_on_one_test_share_their_branches_and_loops() {
    // A-normal form guards each name it hoists by its own `if c`: joined, the loops in
    // the branches share one pass
    let p = check(
        "a = if 1 < K: (summate j from 0 to size(t): t[j]) else: 0\n\
         b = if 1 < K: (summate j from 0 to size(t): t[j] * t[j]) else: x\na + b",
    );
    let f = slic_codegen::fuse(&p);
    let text = f.to_string();
    assert_eq!(text.matches("if (1 < K)").count(), 1, "{text}");
    assert_eq!(text.matches("for ").count(), 1, "{text}");
    for a in fixed_args() {
        fused_same(&p, &a).unwrap_or_else(|e| panic!("{e}"));
    }
    // the second reads what the first computes: they stay apart
    let p = check(
        "a = if 1 < K: (summate j from 0 to size(t): t[j]) else: 0\n\
         b = if 1 < K: (summate j from 0 to size(t): t[j] * a) else: x\na + b",
    );
    let f = slic_codegen::fuse(&p);
    assert_eq!(f.to_string().matches("if (1 < K)").count(), 2, "{f}");
}

#[test]
fn a_guarded_histogram_joins_the_loop_over_its_range() {
    // `for j in 0..(if c: size(t) else: 0)`, the range of a histogram A-normal form
    // guarded, joins `for j in 0..size(t)` with its body under `if c`
    use slic_algebra::{Prim, Type};
    use slic_codegen::{AssignOp, Expr, Stmt};
    let n = || Expr::size(Expr::var("t"));
    let t_j = || Expr::index(Expr::var("t"), Expr::var("j"));
    let params = |p: &Program| p.params.clone();
    let base = check("x");
    let p = Program {
        params: params(&base),
        body: vec![
            Stmt::var("s1", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "j",
                Expr::nat(0),
                n(),
                vec![Stmt::assign("s1", AssignOp::Add, t_j())],
            ),
            Stmt::let_(
                "c",
                Type::Bool,
                Expr::prim(Prim::Lt, vec![Expr::nat(1), Expr::var("K")]),
            ),
            Stmt::var("h", Type::Nat, None),
            Stmt::if_(
                Expr::var("c"),
                vec![Stmt::assign("h", AssignOp::Set, n())],
                vec![Stmt::assign("h", AssignOp::Set, Expr::nat(0))],
            ),
            Stmt::var("s2", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::var("h"),
                vec![Stmt::assign(
                    "s2",
                    AssignOp::Add,
                    Expr::prim(Prim::Mul, vec![t_j(), t_j()]),
                )],
            ),
        ],
        result: Expr::prim(Prim::Add, vec![Expr::var("s1"), Expr::var("s2")]),
        measure: false,
        inout: Vec::new(),
    };
    verify(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
    let f = slic_codegen::fuse(&p);
    let text = f.to_string();
    assert_eq!(text.matches("for ").count(), 1, "{text}");
    assert!(text.contains("if c {"), "{text}");
    let mut ks = fixed_args();
    for a in fixed_args() {
        ks.push(Args { k: 0, ..a });
    }
    for a in ks {
        let (before, after) = fused_same(&p, &a).unwrap_or_else(|e| panic!("{e}"));
        // one pass instead of two where the test holds
        let passes = if a.k > 1 { 2 } else { 1 };
        assert_eq!(before, passes * a.t.len() as u64, "{a:?}");
        assert_eq!(after, a.t.len() as u64, "{a:?}");
    }
    // a bound set otherwise (another value in the else branch) is not joined
    let mut q = p.clone();
    q.body[4] = Stmt::if_(
        Expr::var("c"),
        vec![Stmt::assign("h", AssignOp::Set, n())],
        vec![Stmt::assign("h", AssignOp::Set, Expr::nat(1))],
    );
    assert_eq!(
        slic_codegen::fuse(&q).to_string().matches("for ").count(),
        2
    );
}

#[test]
fn a_guarded_loop_before_the_full_one_joins_it() {
    // the guarded loop first, its bound set in an `if` that also sets another name, to a
    // `let` of the branch equal to the full loop's bound (`let m2 = size(t)` beside `let m
    // = size(t)`): the guarded loop runs over the full range, its body under `if c`, and
    // the two take one pass
    use slic_algebra::{Prim, Type};
    use slic_codegen::{AssignOp, Expr, Stmt};
    let t_j = || Expr::index(Expr::var("t"), Expr::var("j"));
    let base = check("x");
    let p = Program {
        params: base.params.clone(),
        body: vec![
            Stmt::let_(
                "c",
                Type::Bool,
                Expr::prim(Prim::Lt, vec![Expr::nat(1), Expr::var("K")]),
            ),
            Stmt::let_("m", Type::Nat, Expr::size(Expr::var("t"))),
            Stmt::var("h", Type::Nat, None),
            Stmt::var("o", Type::Nat, None),
            Stmt::if_(
                Expr::var("c"),
                vec![
                    Stmt::let_("m2", Type::Nat, Expr::size(Expr::var("t"))),
                    Stmt::assign("h", AssignOp::Set, Expr::var("m2")),
                    Stmt::assign("o", AssignOp::Set, Expr::nat(3)),
                ],
                vec![
                    Stmt::assign("o", AssignOp::Set, Expr::nat(4)),
                    Stmt::assign("h", AssignOp::Set, Expr::nat(0)),
                ],
            ),
            Stmt::var("s2", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::var("h"),
                vec![Stmt::assign(
                    "s2",
                    AssignOp::Add,
                    Expr::prim(Prim::Mul, vec![t_j(), t_j()]),
                )],
            ),
            Stmt::var("s1", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::var("m"),
                vec![Stmt::assign("s1", AssignOp::Add, t_j())],
            ),
        ],
        result: Expr::prim(
            Prim::Add,
            vec![
                Expr::prim(Prim::Add, vec![Expr::var("s1"), Expr::var("s2")]),
                Expr::convert(slic_algebra::Coercion::Nat2Real, Expr::var("o")),
            ],
        ),
        measure: false,
        inout: Vec::new(),
    };
    verify(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
    let text = slic_codegen::fuse(&p).to_string();
    assert_eq!(text.matches("for ").count(), 1, "{text}");
    let mut ks = fixed_args();
    for a in fixed_args() {
        ks.push(Args { k: 0, ..a });
    }
    for a in ks {
        let (before, after) = fused_same(&p, &a).unwrap_or_else(|e| panic!("{e}"));
        let passes = if a.k > 1 { 2 } else { 1 };
        assert_eq!(before, passes * a.t.len() as u64, "{a:?}");
        assert_eq!(after, a.t.len() as u64, "{a:?}");
    }
    // a test written after the guarding `if` is not what the loop was guarded by: apart
    let mut q = p.clone();
    q.body[0] = Stmt::var(
        "c",
        Type::Bool,
        Some(Expr::prim(Prim::Lt, vec![Expr::nat(1), Expr::var("K")])),
    );
    q.body
        .insert(5, Stmt::assign("c", AssignOp::Set, Expr::bool(false)));
    verify(&q).unwrap_or_else(|e| panic!("{e}\n{q}"));
    assert_eq!(
        slic_codegen::fuse(&q).to_string().matches("for ").count(),
        2
    );
    // nor is a bound the branch sets to another value than the full range
    let mut r = p.clone();
    r.body[4] = Stmt::if_(
        Expr::var("c"),
        vec![Stmt::assign("h", AssignOp::Set, Expr::var("K"))],
        vec![Stmt::assign("h", AssignOp::Set, Expr::nat(0))],
    );
    r.body[3] = Stmt::var("o", Type::Nat, Some(Expr::nat(0)));
    verify(&r).unwrap_or_else(|e| panic!("{e}\n{r}"));
    assert_eq!(
        slic_codegen::fuse(&r).to_string().matches("for ").count(),
        2
    );
}

#[test]
fn a_guarded_read_is_not_hoisted() {
    // t[j] is read only when j < size(t): hoisting it would fail where the program does not
    let p = check("a = summate j from 0 to K: if j < size(t): t[j] else: 0\nb = summate j from 0 to K: if j < size(t): t[j] * 2 else: 0\na + b");
    let f = slic_codegen::fuse(&p);
    let text = f.to_string();
    assert_eq!(text.matches("for ").count(), 1, "{text}");
    assert!(!text.contains("let t_j"), "{text}");
    for a in fixed_args() {
        fused_same(&p, &a).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Fusing every lowered body keeps its value (exactly: no arithmetic changes) and
    /// never adds work, on random arguments.
    #[test]
    fn fused_equals_unfused(args in args_strategy()) {
        let mut store = Store::new();
        let mut terms = Vec::new();
        for body in BODIES {
            terms.push(load(&mut store, body));
        }
        for body in SUMMARIZED.iter().chain([&GMM_STATISTICS]) {
            terms.push(summarized(&mut store, body));
        }
        for t in terms {
            let p = lowered(&store, t);
            if let Err(e) = fused_same(&p, &args) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}

#[test]
fn merged_loops_have_their_inner_loops_merged() {
    let p = check(
        "a = summate i from 0 to K: summate j from 0 to size(t): t[j] * nat2real(i)\n\
         b = summate i from 0 to K: summate j from 0 to size(t): t[j] + x\na - b",
    );
    let f = slic_codegen::fuse(&p);
    assert_eq!(f.to_string().matches("for ").count(), 2, "{f}");
    let args = &fixed_args()[0];
    let (before, after) = fused_same(&p, args).unwrap_or_else(|e| panic!("{e}"));
    let (k, n) = (args.k, args.t.len() as u64);
    assert_eq!((before, after), (2 * (k + k * n), k + k * n));
}

/// A hand-built program where a `let` between two loops shadows a name the first loop
/// reads: moving it up would change the first loop, so the loops stay apart.
#[test]
fn a_shadowing_declaration_does_not_move() {
    use slic_algebra::{Prim, Type};
    use slic_codegen::{AssignOp, Expr, Stmt};
    let n = || Expr::size(Expr::var("t"));
    let p = Program {
        params: vec![("t".into(), Type::array(Type::Real))],
        body: vec![
            Stmt::let_("a", Type::Real, Expr::real(1.0)),
            Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
            Stmt::var("s2", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "i",
                Expr::nat(0),
                n(),
                vec![
                    Stmt::for_(
                        "j",
                        Expr::nat(0),
                        n(),
                        vec![Stmt::assign("s", AssignOp::Add, Expr::var("a"))],
                    ),
                    Stmt::let_("a", Type::Real, Expr::real(2.0)),
                    Stmt::for_(
                        "k",
                        Expr::nat(0),
                        n(),
                        vec![Stmt::assign("s2", AssignOp::Add, Expr::var("a"))],
                    ),
                ],
            ),
        ],
        result: Expr::prim(
            Prim::Add,
            vec![
                Expr::var("s"),
                Expr::prim(Prim::Mul, vec![Expr::var("s2"), Expr::real(10.0)]),
            ],
        ),
        measure: false,
        inout: Vec::new(),
    };
    verify(&p).expect("well formed");
    let f = slic_codegen::fuse(&p);
    assert_eq!(f, p, "{f}");
    let t = Val::array(vec![Val::Real(0.5); 3]);
    let (v, _) = run(&f, &[t]).expect("runs");
    assert_eq!(v, Val::Real(9.0 + 180.0));
}

// ---- observe: the IR's densities against the reference's ----

/// `observe(d(..), v)` of each primitive, at parameters and values in and out of the
/// support: the IR's density factor (exact mode: no draw) equals the reference's mass of
/// the same term to 1e-10 relative.
fn observed_mass_agrees(src: &str, args: &[Value], ir_args: &[Val]) -> Result<(), String> {
    let mut store = Store::new();
    let t = front::load(&mut store, src).map_err(|e| format!("{e:?}"))?;
    let p = lower(&store, t).map_err(|e| e.to_string())?;
    verify(&p).map_err(|e| e.to_string())?;
    let m = eval(&store, t, &Env::new())
        .and_then(|f| apply_args(&store, &f, args))
        .map_err(|e| e.to_string())?;
    let want = slic_semantics::mass(&store, &m)
        .map_err(|e| e.to_string())?
        .value;
    let got =
        match slic_codegen::run_measure(&p, ir_args, slic_codegen::Mode::Exact { max_paths: 4 }) {
            Ok(slic_codegen::Outcome::Exact(e)) => e.mass(),
            other => return Err(format!("{other:?}")),
        };
    let ok = got == want || (got - want).abs() <= 1e-10 * got.abs().max(want.abs());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{src} on {args:?}: the IR's {got} against {want}\n{p}"
        ))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn observed_densities_equal_the_reference(
        a in -3.0f64..3.0,
        b in 0.05f64..4.0,
        c in 0.05f64..4.0,
        x in -1.0f64..3.0,
        k in 0u64..6,
    ) {
        let px = x.abs();
        let reals = |v: &[f64]| v.iter().map(|r| Value::Real(*r)).collect::<Vec<_>>();
        let probs = |v: &[f64]| v.iter().map(|r| Value::prob(*r)).collect::<Vec<_>>();
        let cases: Vec<(&str, Vec<Value>, Vec<Val>)> = vec![
            (
                "fn m real:\nfn s prob:\nfn v real:\nobserve(normal(m, s), v)\n",
                vec![Value::Real(a), Value::prob(b), Value::Real(x)],
                vec![Val::Real(a), Val::prob(b), Val::Real(x)],
            ),
            (
                "fn lo real:\nfn v real:\nobserve(uniform(lo, lo + 1.5), v)\n",
                reals(&[a, x]),
                vec![Val::Real(a), Val::Real(x)],
            ),
            (
                "fn k prob:\nfn s prob:\nfn v prob:\nobserve(gamma(k, s), v)\n",
                probs(&[b, c, px]),
                vec![Val::prob(b), Val::prob(c), Val::prob(px)],
            ),
            (
                "fn p prob:\nfn q prob:\nfn v prob:\nobserve(beta(p, q), v)\n",
                probs(&[b, c, px / 2.0]),
                vec![Val::prob(b), Val::prob(c), Val::prob(px / 2.0)],
            ),
            (
                "fn r prob:\nfn n nat:\nobserve(poisson(r), n)\n",
                vec![Value::prob(b), Value::Nat(k)],
                vec![Val::prob(b), Val::Nat(k)],
            ),
            (
                "fn w array(prob):\nfn n nat:\nobserve(categorical(w), n)\n",
                vec![Value::array(probs(&[b, c, 0.0, 1.0])), Value::Nat(k)],
                vec![
                    Val::array(vec![Val::prob(b), Val::prob(c), Val::prob(0.0), Val::prob(1.0)]),
                    Val::Nat(k),
                ],
            ),
        ];
        for (src, args, ir_args) in cases {
            let r = observed_mass_agrees(src, &args, &ir_args);
            prop_assert!(r.is_ok(), "{}", r.err().unwrap_or_default());
        }
    }
}

/// A loop that cannot fail leaves a branch whose test reads the enclosing loop's index
/// (`Σ_j t[j]` under `if i /= 1` in a loop over `i`; LDA's `Σ_k topic_prior[k]` under `if
/// l /= doc[u]` in its loop over documents): it then leaves that loop too, and runs once
/// instead of once per iteration that takes the branch. A loop whose reads may fail
/// (`t[j]` for `j < size(w)`) stays in its branch.
#[test]
fn a_loop_that_cannot_fail_leaves_a_branch_and_its_loop() {
    use slic_codegen::{lower_program, Passes};
    for (body, hoisted) in [
        (
            "summate i from 0 to K: if i /= 1: (summate j from 0 to size(t): t[j]) * nat2real(i) else: 0",
            true,
        ),
        (
            "summate i from 0 to K: if i /= 1: (summate j from 0 to size(w): t[j]) * nat2real(i) else: 0",
            false,
        ),
    ] {
        let mut store = Store::new();
        let t = load(&mut store, body);
        let p = lower_program(&mut store, t, Passes::default())
            .unwrap_or_else(|e| panic!("{body}: {e:?}"))
            .program;
        verify(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
        for a in fixed_args() {
            compare(&store, t, &p, &a).unwrap_or_else(|e| panic!("{body}\n{e}\n{p}"));
        }
        // K = 3 and six points: 3 + 6 iterations once hoisted, 3 + 2 * 6 in the branch
        let a = &fixed_args()[0];
        let (_, stats) = run(&p, &a.ir()).expect("runs");
        let want = if hoisted { 3 + 6 } else { 3 + 2 * 6 };
        assert_eq!(stats.iterations, want, "{body}\n{p}");
    }
}
