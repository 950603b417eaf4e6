//! The loop IR, its verifier and its interpreter (issue 11, deliverables 3 and 5), on
//! hand-built programs: a sum, a per-class histogram, a log-sum-exp normaliser (in real
//! arithmetic and in log-space prob), nested loops (an array of arrays, a triangular loop
//! with an `if`). Each is run on random inputs (proptest) and compared with the answer
//! computed directly in Rust, and with the reference interpreter (`slic-semantics`) on the
//! same computation written as a `.hk` term; the work counts are the ones the loops imply.
//! Then the verifier on hand-broken programs, each beside its repaired twin, so every
//! rejection is shown to be able to fail; and run-time errors that are errors, not panics.

use proptest::prelude::*;
use slic_algebra::{Coercion, Prim, Store, Type};
use slic_codegen::{run, verify, AssignOp, Expr, Program, RunError, Stats, Stmt, Val, VerifyError};
use slic_semantics::Value;

fn v(x: &str) -> Expr {
    Expr::var(x)
}
fn ix(a: Expr, i: Expr) -> Expr {
    Expr::index(a, i)
}
fn add(a: Expr, b: Expr) -> Expr {
    Expr::prim(Prim::Add, vec![a, b])
}
fn mul(a: Expr, b: Expr) -> Expr {
    Expr::prim(Prim::Mul, vec![a, b])
}
fn neg(a: Expr) -> Expr {
    Expr::prim(Prim::Neg, vec![a])
}
fn arr(t: Type) -> Type {
    Type::array(t)
}
fn reals(xs: &[f64]) -> Val {
    Val::array(xs.iter().map(|&x| Val::Real(x)).collect())
}
fn nats(xs: &[u64]) -> Val {
    Val::array(xs.iter().map(|&x| Val::Nat(x)).collect())
}

/// A run's value as a linear `f64` and its counts; a failed run fails the test.
fn run_f64(p: &Program, args: &[Val]) -> (f64, Stats) {
    match run(p, args) {
        Ok((val, stats)) => (val.to_f64().unwrap_or(f64::NAN), stats),
        Err(e) => panic!("run failed: {e}\n{p}"),
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

/// The reference interpreter's value to the IR's, where the shapes correspond: the one
/// conversion the tests need (the crate itself does not depend on `slic-semantics`).
fn from_semantics(x: &Value) -> Option<Val> {
    Some(match x {
        Value::Nat(n) => Val::Nat(*n),
        Value::Int(n) => Val::Int(*n),
        Value::Real(r) => Val::Real(*r),
        Value::Prob(l) => Val::Prob(*l),
        Value::Bool(b) => Val::Bool(*b),
        Value::Array(items) => Val::array(items.iter().map(from_semantics).collect::<Option<_>>()?),
        _ => return None,
    })
}

/// The IR's value to the reference interpreter's.
fn to_semantics(x: &Val) -> Value {
    match x {
        Val::Nat(n) => Value::Nat(*n),
        Val::Int(n) => Value::Int(*n),
        Val::Real(r) => Value::Real(*r),
        Val::Prob(l) => Value::Prob(*l),
        Val::Bool(b) => Value::Bool(*b),
        Val::Array(items) => Value::array(items.iter().map(to_semantics).collect()),
        Val::Pair(p) => Value::pair(to_semantics(&p.0), to_semantics(&p.1)),
        Val::Unit => Value::Unit,
    }
}

/// `.hk` source applied to `args` by the reference interpreter, as an IR value.
fn reference(src: &str, args: &[Val]) -> Val {
    let mut store = Store::new();
    let t = match slic_algebra::front::load(&mut store, src) {
        Ok(t) => t,
        Err(d) => panic!("{src} does not load: {d:?}"),
    };
    let f = slic_semantics::eval(&store, t, &slic_semantics::Env::new()).expect("evaluates");
    let args: Vec<Value> = args.iter().map(to_semantics).collect();
    let out = slic_semantics::apply_args(&store, &f, &args).expect("applies");
    from_semantics(&out).expect("a scalar or array value")
}

/// `Σ_i x[i]`
fn sum_program() -> Program {
    Program {
        params: vec![("x".into(), arr(Type::Real))],
        body: vec![
            Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::size(v("x")),
                vec![Stmt::assign("s", AssignOp::Add, ix(v("x"), v("i")))],
            ),
        ],
        result: v("s"),
        measure: false,
        inout: Vec::new(),
    }
}

/// The per-class histogram `h[k] = Σ_j [y[j] == k] t[j]` in one pass, then
/// `Σ_k (k + 1) · h[k]²` over the classes.
fn histogram_program() -> Program {
    Program {
        params: vec![
            ("y".into(), arr(Type::Nat)),
            ("t".into(), arr(Type::Real)),
            ("K".into(), Type::Nat),
        ],
        body: vec![
            Stmt::alloc("h", Type::Real, v("K")),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::size(v("y")),
                vec![Stmt::store(
                    "h",
                    ix(v("y"), v("j")),
                    AssignOp::Add,
                    ix(v("t"), v("j")),
                )],
            ),
            Stmt::var("tot", Type::Real, None),
            Stmt::assign("tot", AssignOp::Set, Expr::real(0.0)),
            Stmt::for_(
                "k",
                Expr::nat(0),
                v("K"),
                vec![
                    Stmt::let_("hk", Type::Real, ix(v("h"), v("k"))),
                    Stmt::let_(
                        "w",
                        Type::Real,
                        Expr::convert(Coercion::Nat2Real, add(v("k"), Expr::nat(1))),
                    ),
                    Stmt::assign("tot", AssignOp::Add, mul(v("w"), mul(v("hk"), v("hk")))),
                ],
            ),
        ],
        result: v("tot"),
        measure: false,
        inout: Vec::new(),
    }
}

/// The log-sum-exp normaliser in real arithmetic: `m = max x`, `m + log Σ exp(x[i] - m)`.
fn lse_real_program() -> Program {
    let each = |body| Stmt::for_("i", Expr::nat(0), Expr::size(v("x")), body);
    Program {
        params: vec![("x".into(), arr(Type::Real))],
        body: vec![
            Stmt::var("m", Type::Real, Some(Expr::real(f64::NEG_INFINITY))),
            each(vec![Stmt::assign("m", AssignOp::Max, ix(v("x"), v("i")))]),
            Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
            each(vec![Stmt::assign(
                "s",
                AssignOp::Add,
                Expr::convert(
                    Coercion::Prob2Real,
                    Expr::prim(Prim::Exp, vec![add(ix(v("x"), v("i")), neg(v("m")))]),
                ),
            )]),
        ],
        result: add(
            v("m"),
            Expr::prim(Prim::Log, vec![Expr::convert(Coercion::Real2Prob, v("s"))]),
        ),
        measure: false,
        inout: Vec::new(),
    }
}

/// The same normaliser as a prob accumulator: `log Σ exp(x[i])`, where `+=` on a prob is
/// the interpreter's own log-sum-exp.
fn lse_prob_program() -> Program {
    Program {
        params: vec![("x".into(), arr(Type::Real))],
        body: vec![
            Stmt::var("p", Type::Prob, Some(Expr::prob(0.0))),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::size(v("x")),
                vec![Stmt::assign(
                    "p",
                    AssignOp::Add,
                    Expr::prim(Prim::Exp, vec![ix(v("x"), v("i"))]),
                )],
            ),
        ],
        result: Expr::prim(Prim::Log, vec![v("p")]),
        measure: false,
        inout: Vec::new(),
    }
}

/// `Σ_i Σ_{j < size(a[i])} j · a[i][j]` over an array of arrays.
fn ragged_program() -> Program {
    Program {
        params: vec![("a".into(), arr(arr(Type::Real)))],
        body: vec![
            Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::size(v("a")),
                vec![Stmt::for_(
                    "j",
                    Expr::nat(0),
                    Expr::size(ix(v("a"), v("i"))),
                    vec![Stmt::assign(
                        "s",
                        AssignOp::Add,
                        mul(
                            Expr::convert(Coercion::Nat2Real, v("j")),
                            ix(ix(v("a"), v("i")), v("j")),
                        ),
                    )],
                )],
            ),
        ],
        result: v("s"),
        measure: false,
        inout: Vec::new(),
    }
}

/// Inversions `#{(i, j) : j < i, x[i] < x[j]}`, a triangular nested loop with an `if`
/// (int bounds, so the index is an int).
fn inversions_program() -> Program {
    let n = Expr::convert(Coercion::Nat2Int, Expr::size(v("x")));
    Program {
        params: vec![("x".into(), arr(Type::Real))],
        body: vec![
            Stmt::var("c", Type::Nat, Some(Expr::nat(0))),
            Stmt::for_(
                "i",
                Expr::int(0),
                n,
                vec![Stmt::for_(
                    "j",
                    Expr::int(0),
                    v("i"),
                    vec![Stmt::if_(
                        Expr::prim(Prim::Lt, vec![ix(v("x"), v("i")), ix(v("x"), v("j"))]),
                        vec![Stmt::assign("c", AssignOp::Add, Expr::nat(1))],
                        vec![],
                    )],
                )],
            ),
        ],
        result: v("c"),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn the_printer_writes_one_statement_a_line() {
    let text = histogram_program().to_string();
    let expected = "\
fn(y: array(nat), t: array(real), K: nat) {
    alloc h: array(real) of K
    for j in 0..size(y) {
        h[y[j]] += t[j]
    }
    var tot: real
    tot = 0.0
    for k in 0..K {
        let hk: real = h[k]
        let w: real = nat2real((k + 1))
        tot += (w * (hk * hk))
    }
    return tot
}
";
    assert_eq!(text, expected);
    assert!(lse_prob_program()
        .to_string()
        .contains("var p: prob = prob(0.0)"));
}

#[test]
fn every_hand_built_program_verifies() {
    for p in [
        sum_program(),
        histogram_program(),
        lse_real_program(),
        lse_prob_program(),
        ragged_program(),
        inversions_program(),
    ] {
        assert_eq!(verify(&p), Ok(()), "{p}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_sum(xs in prop::collection::vec(-1e3f64..1e3, 0..40)) {
        let (got, stats) = run_f64(&sum_program(), &[reals(&xs)]);
        prop_assert!(close(got, xs.iter().sum(), 1e-12));
        let n = xs.len() as u64;
        prop_assert_eq!(stats, Stats { iterations: n, array_reads: n, allocations: 0 });
        let reference = reference("fn x array(real): summate i from 0 to size(x): x[i]", &[reals(&xs)]);
        prop_assert!(close(got, reference.to_f64().unwrap_or(f64::NAN), 1e-12));
    }

    #[test]
    fn a_per_class_histogram(
        k in 1u64..8,
        pts in prop::collection::vec((0u64..1000, -10f64..10.0), 0..40),
    ) {
        let ys: Vec<u64> = pts.iter().map(|(y, _)| y % k).collect();
        let ts: Vec<f64> = pts.iter().map(|(_, t)| *t).collect();
        let args = [nats(&ys), reals(&ts), Val::Nat(k)];
        let (got, stats) = run_f64(&histogram_program(), &args);
        // directly: the nested sum the histogram replaces, O(n·K)
        let want: f64 = (0..k)
            .map(|c| {
                let h: f64 = ys.iter().zip(&ts).filter(|(y, _)| **y == c).map(|(_, t)| t).sum();
                (c + 1) as f64 * h * h
            })
            .sum();
        prop_assert!(close(got, want, 1e-9));
        let n = ys.len() as u64;
        // n + K iterations: one pass over the points, one over the classes
        prop_assert_eq!(stats, Stats { iterations: n + k, array_reads: 2 * n + k, allocations: 1 });
        let reference = reference(
            "fn y array(nat): fn t array(real): fn k nat:\n    \
             summate c from 0 to k:\n        \
             nat2real(c + 1) * (summate j from 0 to size(y): (if y[j] == c: t[j] else: 0)) ^ 2",
            &args,
        );
        prop_assert!(close(got, reference.to_f64().unwrap_or(f64::NAN), 1e-9));
    }

    #[test]
    fn a_log_sum_exp_normaliser(xs in prop::collection::vec(-50f64..50.0, 1..30), shift in -800f64..800.0) {
        // shifted far enough that exp overflows or underflows in linear space
        let xs: Vec<f64> = xs.iter().map(|x| x + shift).collect();
        let m = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let want = m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln();
        let (real, stats) = run_f64(&lse_real_program(), &[reals(&xs)]);
        prop_assert!(close(real, want, 1e-12));
        let n = xs.len() as u64;
        prop_assert_eq!(stats, Stats { iterations: 2 * n, array_reads: 2 * n, allocations: 0 });
        let (prob, stats) = run_f64(&lse_prob_program(), &[reals(&xs)]);
        prop_assert!(close(prob, want, 1e-12));
        prop_assert_eq!(stats, Stats { iterations: n, array_reads: n, allocations: 0 });
        let reference = reference(
            "fn x array(real): log(summate i from 0 to size(x): exp(x[i]))",
            &[reals(&xs)],
        );
        prop_assert!(close(prob, reference.to_f64().unwrap_or(f64::NAN), 1e-12));
    }

    #[test]
    fn nested_loops_over_an_array_of_arrays(
        a in prop::collection::vec(prop::collection::vec(-10f64..10.0, 0..8), 0..8),
    ) {
        let arg = Val::array(a.iter().map(|row| reals(row)).collect());
        let (got, stats) = run_f64(&ragged_program(), &[arg]);
        let want: f64 = a.iter().flat_map(|row| row.iter().enumerate().map(|(j, x)| j as f64 * x)).sum();
        prop_assert!(close(got, want, 1e-12));
        let reference = reference(
            "fn a array(array(real)):\n    \
             summate i from 0 to size(a): summate j from 0 to size(a[i]): nat2real(j) * a[i][j]",
            &[Val::array(a.iter().map(|row| reals(row)).collect())],
        );
        prop_assert!(close(got, reference.to_f64().unwrap_or(f64::NAN), 1e-12));
        let (n, cells) = (a.len() as u64, a.iter().map(|r| r.len() as u64).sum::<u64>());
        // the inner bound reads a[i] once per row; each cell reads a[i], then [j]
        prop_assert_eq!(stats, Stats { iterations: n + cells, array_reads: n + 2 * cells, allocations: 0 });
    }

    #[test]
    fn a_triangular_loop_with_a_branch(xs in prop::collection::vec(-5i32..5, 0..25)) {
        let xs: Vec<f64> = xs.iter().map(|&x| f64::from(x)).collect();
        let (got, stats) = run_f64(&inversions_program(), &[reals(&xs)]);
        let n = xs.len();
        let want = (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).filter(|&(i, j)| xs[i] < xs[j]).count();
        prop_assert_eq!(got, want as f64);
        let pairs = (n * n.saturating_sub(1) / 2) as u64;
        prop_assert_eq!(stats, Stats { iterations: n as u64 + pairs, array_reads: 2 * pairs, allocations: 0 });
    }
}

/// A program whose body is `body` after `x: array(real)` and the accumulator `s`,
/// returning `s`.
fn with_body(body: Vec<Stmt>) -> Program {
    let mut all = vec![Stmt::var("s", Type::Real, Some(Expr::real(0.0)))];
    all.extend(body);
    Program {
        params: vec![("x".into(), arr(Type::Real))],
        body: all,
        result: v("s"),
        measure: false,
        inout: Vec::new(),
    }
}

fn each_x(body: Vec<Stmt>) -> Stmt {
    Stmt::for_("i", Expr::nat(0), Expr::size(v("x")), body)
}

/// `broken` is rejected with an error of the kind `is_kind` names (whose message names a
/// statement), and `fixed`, the same program repaired, verifies: the check can fail and
/// can pass.
fn check_rejects(broken: Program, fixed: Program, is_kind: fn(&VerifyError) -> bool) {
    match verify(&broken) {
        Ok(()) => panic!("accepted:\n{broken}"),
        Err(e) => {
            assert!(is_kind(&e), "wrong error {e:?} for\n{broken}");
            let msg = e.to_string();
            assert!(!msg.contains('\n') && msg.contains("in `"), "{msg}");
        }
    }
    assert_eq!(verify(&fixed), Ok(()), "{fixed}");
    // the interpreter refuses what the verifier rejects
    assert!(matches!(
        run(&broken, &[reals(&[1.0])]),
        Err(RunError::Verify(_))
    ));
}

#[test]
fn rejects_a_read_of_an_unallocated_array() {
    let read_h = |pre: Vec<Stmt>| {
        let mut body = pre;
        body.push(each_x(vec![Stmt::assign(
            "s",
            AssignOp::Add,
            ix(v("h"), v("i")),
        )]));
        with_body(body)
    };
    check_rejects(
        read_h(vec![]),
        read_h(vec![Stmt::alloc("h", Type::Real, Expr::size(v("x")))]),
        |e| matches!(e, VerifyError::UnallocatedArray { name, .. } if name == "h"),
    );
}

#[test]
fn rejects_a_store_into_an_unallocated_or_input_array() {
    let store_into = |name: &str| {
        with_body(vec![
            Stmt::alloc("h", Type::Real, Expr::nat(3)),
            each_x(vec![Stmt::store(
                name,
                Expr::nat(0),
                AssignOp::Add,
                ix(v("x"), v("i")),
            )]),
        ])
    };
    check_rejects(
        store_into("g"),
        store_into("h"),
        |e| matches!(e, VerifyError::UnallocatedArray { name, .. } if name == "g"),
    );
    check_rejects(
        store_into("x"),
        store_into("h"),
        |e| matches!(e, VerifyError::NotWritable { name, .. } if name == "x"),
    );
}

#[test]
fn rejects_a_use_out_of_scope() {
    // `i` after its loop, then inside it
    let use_i = |inside: bool| {
        let add_i = Stmt::assign("s", AssignOp::Add, ix(v("x"), v("i")));
        if inside {
            with_body(vec![each_x(vec![add_i])])
        } else {
            with_body(vec![each_x(vec![]), add_i])
        }
    };
    check_rejects(
        use_i(false),
        use_i(true),
        |e| matches!(e, VerifyError::Unbound { name, .. } if name == "i"),
    );
    // a `let` of one branch read after the `if`
    let let_in_branch = |after: bool| {
        let set = Stmt::let_("y", Type::Real, Expr::real(1.0));
        let read = Stmt::assign("s", AssignOp::Add, v("y"));
        let branch = if after {
            vec![set]
        } else {
            vec![set, read.clone()]
        };
        let mut body = vec![Stmt::if_(Expr::bool(true), branch, vec![])];
        if after {
            body.push(read);
        }
        with_body(body)
    };
    check_rejects(
        let_in_branch(true),
        let_in_branch(false),
        |e| matches!(e, VerifyError::Unbound { name, .. } if name == "y"),
    );
}

#[test]
fn rejects_a_redeclaration_in_one_scope_but_not_a_shadow() {
    let twice = |nested: bool| {
        let second = Stmt::let_("y", Type::Real, Expr::real(2.0));
        let mut body = vec![Stmt::let_("y", Type::Real, Expr::real(1.0))];
        body.push(if nested { each_x(vec![second]) } else { second });
        with_body(body)
    };
    check_rejects(
        twice(false),
        twice(true),
        |e| matches!(e, VerifyError::Redeclared { name, .. } if name == "y"),
    );
}

#[test]
fn rejects_type_mismatches() {
    // a nat element added to a real accumulator, then converted
    let nat_into_real = |convert: bool| {
        let elem = ix(v("y"), v("i"));
        let value = if convert {
            Expr::convert(Coercion::Nat2Real, elem)
        } else {
            elem
        };
        Program {
            params: vec![("y".into(), arr(Type::Nat))],
            body: vec![
                Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
                Stmt::for_(
                    "i",
                    Expr::nat(0),
                    Expr::size(v("y")),
                    vec![Stmt::assign("s", AssignOp::Add, value)],
                ),
            ],
            result: v("s"),
            measure: false,
            inout: Vec::new(),
        }
    };
    check_rejects(nat_into_real(false), nat_into_real(true), |e| {
        matches!(
            e,
            VerifyError::TypeMismatch {
                found: Type::Nat,
                ..
            }
        )
    });
    // a real loop bound
    let bound = |hi: Expr| with_body(vec![Stmt::for_("i", Expr::nat(0), hi, vec![])]);
    check_rejects(bound(Expr::real(3.0)), bound(Expr::nat(3)), |e| {
        matches!(
            e,
            VerifyError::TypeMismatch {
                found: Type::Real,
                ..
            }
        )
    });
    // a prob where the argument of `log` must be prob, not real
    let log_of = |x: Expr| {
        with_body(vec![Stmt::assign(
            "s",
            AssignOp::Set,
            Expr::prim(Prim::Log, vec![x]),
        )])
    };
    check_rejects(log_of(Expr::real(2.0)), log_of(Expr::prob(2.0)), |e| {
        matches!(
            e,
            VerifyError::TypeMismatch {
                found: Type::Real,
                ..
            }
        )
    });
}

#[test]
fn rejects_a_read_before_write() {
    let acc = |init: Option<Expr>, body: Vec<Stmt>| {
        let mut all = vec![Stmt::var("a", Type::Real, init)];
        all.extend(body);
        Program {
            params: vec![("x".into(), arr(Type::Real))],
            body: all,
            result: v("a"),
            measure: false,
            inout: Vec::new(),
        }
    };
    let is_a =
        |e: &VerifyError| matches!(e, VerifyError::ReadBeforeWrite { name, .. } if name == "a");
    // `+=` on an unwritten accumulator reads it
    let add_one = || vec![Stmt::assign("a", AssignOp::Add, Expr::real(1.0))];
    check_rejects(
        acc(None, add_one()),
        acc(Some(Expr::real(0.0)), add_one()),
        is_a,
    );
    // written only inside a loop that may run zero times
    let in_loop = vec![each_x(vec![Stmt::assign(
        "a",
        AssignOp::Set,
        Expr::real(1.0),
    )])];
    let mut set_first = vec![Stmt::assign("a", AssignOp::Set, Expr::real(0.0))];
    set_first.extend(in_loop.clone());
    check_rejects(acc(None, in_loop), acc(None, set_first), is_a);
    // written on one branch of an `if`, then on both
    let branches = |both: bool| {
        let set = Stmt::assign("a", AssignOp::Set, Expr::real(1.0));
        let other = if both { vec![set.clone()] } else { vec![] };
        acc(None, vec![Stmt::if_(Expr::bool(true), vec![set], other)])
    };
    check_rejects(branches(false), branches(true), is_a);
}

#[test]
fn rejects_writes_to_immutable_names_and_reduce() {
    let assign_to = |name: &str| {
        with_body(vec![
            Stmt::let_("y", Type::Real, Expr::real(1.0)),
            Stmt::assign(name, AssignOp::Set, Expr::real(2.0)),
        ])
    };
    check_rejects(
        assign_to("y"),
        assign_to("s"),
        |e| matches!(e, VerifyError::NotWritable { name, .. } if name == "y"),
    );
    let reduce = with_body(vec![Stmt::assign(
        "s",
        AssignOp::Set,
        Expr::prim(Prim::Reduce, vec![Expr::real(0.0), Expr::real(0.0), v("x")]),
    )]);
    assert!(matches!(
        verify(&reduce),
        Err(VerifyError::UnsupportedPrim {
            prim: Prim::Reduce,
            ..
        })
    ));
}

#[test]
fn run_time_failures_are_errors() {
    // a label outside the histogram's classes
    let args = [nats(&[0, 5]), reals(&[1.0, 2.0]), Val::Nat(3)];
    assert!(matches!(
        run(&histogram_program(), &args),
        Err(RunError::OutOfBounds {
            index: 5,
            size: 3,
            ..
        })
    ));
    // arguments of the wrong number or type
    assert!(matches!(
        run(&sum_program(), &[]),
        Err(RunError::ArgCount {
            expected: 1,
            found: 0
        })
    ));
    assert!(matches!(
        run(&sum_program(), &[nats(&[1])]),
        Err(RunError::ArgType { .. })
    ));
    // an unsafe coercion of a negative number
    let p = with_body(vec![Stmt::assign(
        "s",
        AssignOp::Set,
        Expr::prim(
            Prim::Log,
            vec![Expr::convert(Coercion::Real2Prob, Expr::real(-1.0))],
        ),
    )]);
    assert!(matches!(
        run(&p, &[reals(&[])]),
        Err(RunError::Arith { .. })
    ));
    // nat overflow
    let big = Program {
        params: vec![],
        body: vec![],
        result: mul(Expr::nat(u64::MAX), Expr::nat(2)),
        measure: false,
        inout: Vec::new(),
    };
    assert!(matches!(run(&big, &[]), Err(RunError::Arith { .. })));
}

/// A random value of a scalar type, from `rng`: small integers (so `choose` and powers
/// fit), reals on `[-3, 3)` (inside and outside the inverse trigonometric domains), probs
/// on `[e^-3, e^3)` and exact zero now and then.
fn random_scalar(t: &Type, rng: &mut slic_semantics::Rng) -> Val {
    match t {
        Type::Nat => Val::Nat(rng.below(12)),
        Type::Int => Val::Int(rng.below(25) as i64 - 12),
        Type::Real => Val::Real(if rng.below(10) == 0 {
            0.0
        } else {
            6.0 * rng.uniform() - 3.0
        }),
        Type::Prob => Val::Prob(if rng.below(10) == 0 {
            f64::NEG_INFINITY
        } else {
            6.0 * rng.uniform() - 3.0
        }),
        _ => Val::Bool(rng.below(2) == 1),
    }
}

/// The same value, or both NaN, or close in linear space (probs compared by logarithm).
fn same_value(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Real(x), Val::Real(y)) | (Val::Prob(x), Val::Prob(y)) => {
            (x.is_nan() && y.is_nan()) || x == y || close(*x, *y, 1e-12)
        }
        _ => a == b,
    }
}

/// Every primitive of the algebra (`Prim::ALL`) at every scalar typing the verifier
/// accepts, on random arguments, computes what the reference interpreter's primitive
/// computes (both in log space for probs): the IR's primitives are its own code, so
/// this is what keeps them honest. Every primitive but `reduce` has some typing.
#[test]
fn every_primitive_agrees_with_the_reference_interpreter() {
    let scalars = [Type::Nat, Type::Int, Type::Real, Type::Prob, Type::Bool];
    let mut rng = slic_semantics::Rng::seed_from_u64(11);
    let mut checked = 0;
    for p in Prim::ALL {
        if p == Prim::Size || p == Prim::Reduce {
            continue; // on arrays, covered by the programs above; `reduce` is refused
        }
        let arities: Vec<usize> = match p.arity() {
            Some(n) => vec![n],
            None => vec![2, 3],
        };
        let mut typings = 0;
        for n in arities {
            // every tuple of scalar types of length n
            let mut tuples: Vec<Vec<Type>> = vec![vec![]];
            for _ in 0..n {
                tuples = tuples
                    .into_iter()
                    .flat_map(|t| {
                        scalars.iter().map(move |s| {
                            let mut t = t.clone();
                            t.push(s.clone());
                            t
                        })
                    })
                    .collect();
            }
            for tys in tuples {
                let params: Vec<(String, Type)> = tys
                    .iter()
                    .enumerate()
                    .map(|(k, t)| (format!("a{k}"), t.clone()))
                    .collect();
                let call = Expr::prim(p, (0..n).map(|k| v(&format!("a{k}"))).collect());
                if slic_codegen::verify::expr_type(&params, &call).is_err() {
                    continue;
                }
                typings += 1;
                let prog = Program {
                    params,
                    body: vec![],
                    result: call,
                    measure: false,
                    inout: Vec::new(),
                };
                for _ in 0..40 {
                    let args: Vec<Val> = tys.iter().map(|t| random_scalar(t, &mut rng)).collect();
                    let sem: Vec<Value> = args.iter().map(to_semantics).collect();
                    let want = slic_semantics::prim::apply(p, &sem)
                        .ok()
                        .and_then(|x| from_semantics(&x));
                    let got = run(&prog, &args).ok().map(|(x, _)| x);
                    match (&got, &want) {
                        (Some(g), Some(w)) => {
                            assert!(same_value(g, w), "{p:?}{args:?}: {g:?} vs {w:?}")
                        }
                        (None, None) => {}
                        _ => panic!("{p:?}{args:?}: the IR gives {got:?}, the reference {want:?}"),
                    }
                    checked += 1;
                }
            }
        }
        assert!(typings > 0, "{p:?} has no typing in the IR");
    }
    assert!(checked > 1000, "{checked}");
}

/// Every coercion of the algebra (`Coercion::ALL`) as an IR conversion computes what the
/// reference interpreter computes for the `.hk` call of the same name (errors included:
/// a negative `int2nat` or `real2prob` fails in both).
#[test]
fn every_conversion_agrees_with_the_reference_interpreter() {
    let mut rng = slic_semantics::Rng::seed_from_u64(12);
    for c in Coercion::ALL {
        let from = c.from_type();
        let src = format!("fn x {from}: {}(x)", c.name());
        let mut store = Store::new();
        let t = slic_algebra::front::load(&mut store, &src).expect("a coercion's call loads");
        let f = slic_semantics::eval(&store, t, &slic_semantics::Env::new()).expect("evaluates");
        let prog = Program {
            params: vec![("x".into(), from.clone())],
            body: vec![],
            result: Expr::convert(c, v("x")),
            measure: false,
            inout: Vec::new(),
        };
        for _ in 0..40 {
            let x = random_scalar(&from, &mut rng);
            let want = slic_semantics::apply_args(&store, &f, &[to_semantics(&x)])
                .ok()
                .and_then(|y| from_semantics(&y));
            let got = run(&prog, std::slice::from_ref(&x)).ok().map(|(y, _)| y);
            match (&got, &want) {
                (Some(g), Some(w)) => assert!(same_value(g, w), "{c:?}({x:?}): {g:?} vs {w:?}"),
                (None, None) => {}
                _ => panic!("{c:?}({x:?}): the IR gives {got:?}, the reference {want:?}"),
            }
        }
    }
}

#[test]
fn rejects_types_the_ir_does_not_hold_and_wrong_arities() {
    let with_param = |t: Type| Program {
        params: vec![("m".into(), t)],
        body: vec![],
        result: Expr::real(0.0),
        measure: false,
        inout: Vec::new(),
    };
    assert!(matches!(
        verify(&with_param(Type::measure(Type::Real))),
        Err(VerifyError::UnsupportedType { .. })
    ));
    assert_eq!(verify(&with_param(arr(arr(Type::Prob)))), Ok(()));
    // arrays are allocated with scalar elements and never bound by `let`
    let nested = with_body(vec![Stmt::alloc("h", arr(Type::Real), Expr::nat(2))]);
    assert!(matches!(
        verify(&nested),
        Err(VerifyError::UnsupportedType { .. })
    ));
    let alias = with_body(vec![Stmt::let_("y", arr(Type::Real), v("x"))]);
    assert!(matches!(
        verify(&alias),
        Err(VerifyError::UnsupportedType { .. })
    ));
    let one_arg_add = with_body(vec![Stmt::assign(
        "s",
        AssignOp::Set,
        Expr::prim(Prim::Add, vec![Expr::real(1.0)]),
    )]);
    assert!(matches!(
        verify(&one_arg_add),
        Err(VerifyError::Arity {
            prim: Prim::Add,
            found: 1,
            ..
        })
    ));
}
