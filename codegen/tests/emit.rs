//! Kernels (issue 12): hand-built loop-IR programs emitted as C and Rust, compiled at run
//! time and called, against the IR's interpreter (the oracle): values and exact
//! distributions equal to 1e-9 relative, errors of the same kind. Also: the emitted
//! source compiles with warnings as errors (`cc -std=c11 -Wall -Werror -O2`, `rustc -O -D
//! warnings`); hostile identifiers (quotes, comment closers, newlines, keywords of both
//! languages, names equal but for punctuation) never reach the code; a second build of a
//! kernel is a cache hit; a missing compiler is a clear error naming the other backends;
//! a specialised kernel refuses other data; the Rust prelude's `lgamma` agrees with
//! libm's to 1e-14 (through `gammaFunc` programs); every law sampled by a kernel from a
//! seed follows the interpreter's stream from that seed. Checks that can never fire are
//! left out (own-range reads and stores, bounded counters, reads within baked-in sizes),
//! and the ones that can fire (a loop to another parameter, shadowed names, unbounded or
//! nested adds) are kept and fail as the interpreter's.

use slic_algebra::{Coercion, Dist, Prim, Type};
use slic_codegen::{
    emit, run, run_measure, AssignOp, CompileError, CompileOptions, Compiled, Expr, KernelError,
    Mode, Outcome, Program, RunError, Specialise, Stmt, Target, Val,
};
use std::path::PathBuf;

const TARGETS: [Target; 2] = [Target::C, Target::Rust];

fn v(x: &str) -> Expr {
    Expr::var(x)
}
fn prim(p: Prim, args: Vec<Expr>) -> Expr {
    Expr::prim(p, args)
}

/// A cache directory of this test binary's own, emptied once per process: in the target
/// directory's space for tests (not one more folder in the system's temporary directory
/// per run).
fn cache() -> PathBuf {
    static INIT: std::sync::Once = std::sync::Once::new();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("slic-emit-test");
    INIT.call_once(|| {
        let _ = std::fs::remove_dir_all(&dir);
    });
    dir
}

fn opts() -> CompileOptions {
    CompileOptions {
        cache_dir: Some(cache()),
        deny_warnings: true,
        ..CompileOptions::default()
    }
}

fn build(p: &Program, t: Target) -> Compiled {
    match Compiled::build(p, t, &Specialise::default(), None, &opts()) {
        Ok(k) => k,
        Err(e) => panic!(
            "{t:?}: {e}\n{}",
            emit(p, t).map(|e| e.source).unwrap_or_default()
        ),
    }
}

/// Relatively close: reals to 1e-9 of the larger, probs by their logarithms to 1e-9
/// (relative once beyond 1), integers and booleans exactly.
fn close(a: &Val, b: &Val) -> bool {
    let f = |x: f64, y: f64| {
        x == y
            || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
            || (x.is_nan() && y.is_nan())
    };
    match (a, b) {
        (Val::Real(x), Val::Real(y)) => {
            x == y
                || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) + 1e-300
                || (x.is_nan() && y.is_nan())
        }
        (Val::Prob(x), Val::Prob(y)) => f(*x, *y),
        (Val::Array(xs), Val::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| close(x, y))
        }
        (Val::Pair(p), Val::Pair(q)) => close(&p.0, &q.0) && close(&p.1, &q.1),
        _ => a == b,
    }
}

fn same_kind(a: &RunError, b: &RunError) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// The kernel of `p` on `args` against the interpreter, on both targets.
fn check(p: &Program, cases: &[Vec<Val>]) {
    for t in TARGETS {
        let k = build(p, t);
        for args in cases {
            if p.measure {
                let want = run_measure(p, args, Mode::Exact { max_paths: 1000 });
                let got = k.enumerate(args, 1000);
                match (want, got) {
                    (Ok(Outcome::Exact(w)), Ok(g)) => {
                        assert_eq!(w.weights.len(), g.weights.len(), "{t:?} {args:?}");
                        assert_eq!(w.paths, g.paths, "{t:?} {args:?}: paths");
                        for ((va, la), (vb, lb)) in w.weights.iter().zip(&g.weights) {
                            assert!(close(va, vb), "{t:?} {args:?}: {va:?} vs {vb:?}");
                            assert!(
                                close(&Val::Prob(*la), &Val::Prob(*lb)),
                                "{t:?} {args:?}: weight of {va:?} {la} vs {lb}"
                            );
                        }
                    }
                    (Err(a), Err(KernelError::Run(b))) => {
                        assert!(same_kind(&a, &b), "{t:?} {args:?}: {a} vs {b}")
                    }
                    (w, g) => panic!("{t:?} {args:?}: interp {w:?}, kernel {g:?}"),
                }
            } else {
                agrees(t, p, &k, args);
            }
        }
    }
}

/// The kernel `k` of the program `p` (not a measure) on `args`: the interpreter's value,
/// or an error of the interpreter's kind.
fn agrees(t: Target, p: &Program, k: &Compiled, args: &[Val]) {
    match (run(p, args), k.run(args)) {
        (Ok((a, _)), Ok(b)) => assert!(close(&a, &b), "{t:?} {args:?}: {a:?} vs {b:?}"),
        (Err(a), Err(KernelError::Run(b))) => {
            assert!(same_kind(&a, &b), "{t:?} {args:?}: {a} vs {b}")
        }
        (a, b) => panic!("{t:?} {args:?}: interp {a:?}, kernel {b:?}"),
    }
}

fn reals(xs: &[f64]) -> Val {
    Val::array(xs.iter().map(|&x| Val::Real(x)).collect())
}
fn probs_ln(ls: &[f64]) -> Val {
    Val::array(ls.iter().map(|&l| Val::Prob(l)).collect())
}

/// `s = Σ_i x[i]` and `m = log Σ_i exp(w[i])` in prob, returned as a pair.
fn sums() -> Program {
    Program {
        params: vec![
            ("x".into(), Type::array(Type::Real)),
            ("w".into(), Type::array(Type::Prob)),
        ],
        body: vec![
            Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
            Stmt::var("m", Type::Prob, Some(Expr::prob(0.0))),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::size(v("x")),
                vec![Stmt::assign(
                    "s",
                    AssignOp::Add,
                    Expr::index(v("x"), v("i")),
                )],
            ),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::size(v("w")),
                vec![Stmt::assign(
                    "m",
                    AssignOp::Add,
                    Expr::index(v("w"), v("j")),
                )],
            ),
        ],
        result: Expr::Pair(Box::new(v("s")), Box::new(v("m"))),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn sums_agree_with_the_interpreter_including_underflow_and_empty_arrays() {
    check(
        &sums(),
        &[
            vec![reals(&[1.0, 2.5, -3.0]), probs_ln(&[0.0, -1.0, -2.0])],
            vec![reals(&[]), probs_ln(&[])],
            // weights that underflow in linear space
            vec![reals(&[1e300, 1e300]), probs_ln(&[-2000.0, -2001.0, -1e6])],
            vec![reals(&[0.1]), probs_ln(&[f64::NEG_INFINITY, -800.0])],
        ],
    );
}

/// Per class `k`, `(s · c[k] + 1 + s · c[k] + c[k]) · (s · c[k] + c[k])` and
/// `(s · c[k] + s · k + s · s) · (s · c[k] + c[k]) / (s · c[k] + 1)`, in prob: sums and a
/// quotient the kernels compute in linear space where they can (`emit/linear.rs`: `s` read
/// through `exp` inside the loop), and the one they cannot (`s · s`, two `exp` reads in a
/// term).
fn linear_sums() -> Program {
    let mul = |a, b| prim(Prim::Mul, vec![a, b]);
    let add = |a, b| prim(Prim::Add, vec![a, b]);
    Program {
        params: vec![
            ("s".into(), Type::Prob),
            ("c".into(), Type::array(Type::Nat)),
        ],
        body: vec![
            Stmt::alloc("a", Type::Prob, Expr::size(v("c"))),
            Stmt::alloc("b", Type::Prob, Expr::size(v("c"))),
            Stmt::for_(
                "k",
                Expr::nat(0),
                Expr::size(v("c")),
                vec![
                    Stmt::let_("n", Type::Nat, Expr::index(v("c"), v("k"))),
                    Stmt::let_(
                        "p",
                        Type::Prob,
                        mul(v("s"), Expr::convert(Coercion::Nat2Prob, v("n"))),
                    ),
                    Stmt::let_("q", Type::Prob, add(v("p"), Expr::prob(1.0))),
                    Stmt::let_(
                        "r",
                        Type::Prob,
                        add(v("p"), Expr::convert(Coercion::Nat2Prob, v("n"))),
                    ),
                    Stmt::let_("t", Type::Prob, add(v("q"), v("r"))),
                    Stmt::store("a", v("k"), AssignOp::Set, mul(v("t"), v("r"))),
                    Stmt::let_(
                        "u",
                        Type::Prob,
                        add(
                            v("p"),
                            mul(v("s"), Expr::convert(Coercion::Nat2Prob, v("k"))),
                        ),
                    ),
                    Stmt::let_("x", Type::Prob, add(v("u"), mul(v("s"), v("s")))),
                    // a quotient of two sums (one division in linear space)
                    Stmt::let_(
                        "w",
                        Type::Prob,
                        mul(v("r"), prim(Prim::Recip, vec![v("q")])),
                    ),
                    Stmt::store("b", v("k"), AssignOp::Set, mul(v("x"), v("w"))),
                ],
            ),
        ],
        result: Expr::Pair(Box::new(v("a")), Box::new(v("b"))),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn sums_in_linear_space_agree_and_fall_back_at_the_edges() {
    let p = linear_sums();
    // the linear forms are emitted (both targets render the same statements)
    let src = emit(&p, Target::C).expect("emits").source;
    let kernel = kernel_part(&src);
    assert_eq!(kernel.matches("slic_lin_ok(").count(), 5, "{kernel}");
    let counts = |ns: &[u64]| Val::array(ns.iter().map(|&n| Val::Nat(n)).collect());
    let mut cases = Vec::new();
    // s within e^±600 (the linear forms), beyond (log space: at e^-740, s is subnormal, and
    // `s · c + s · k` a normal double wrong by a tenth), and at 0 and infinity; a count of
    // 0 makes `s · c + c` exactly 0 (log space)
    for ln_s in [
        0.9, -3.0, 40.0, -599.0, 599.0, -601.0, 601.0, -740.0, 800.0, -1e6,
    ] {
        cases.push(vec![Val::Prob(ln_s), counts(&[0, 1, 7, 1 << 40, 1 << 60])]);
    }
    cases.push(vec![Val::Prob(f64::NEG_INFINITY), counts(&[0, 3])]);
    cases.push(vec![Val::Prob(f64::INFINITY), counts(&[0, 3])]);
    cases.push(vec![Val::Prob(0.5), counts(&[])]);
    check(&p, &cases);
}

/// Every coercion and the fallible primitives, with arguments that make them fail.
fn arith() -> Program {
    let x = || v("x");
    let n = || v("n");
    let lets = vec![
        Stmt::let_("a", Type::Nat, Expr::convert(Coercion::Int2Nat, v("k"))),
        Stmt::let_("b", Type::Prob, Expr::convert(Coercion::Real2Prob, x())),
        Stmt::let_("c", Type::Int, Expr::convert(Coercion::Real2Int, x())),
        Stmt::let_("d", Type::Nat, prim(Prim::Pow, vec![n(), Expr::nat(3)])),
        Stmt::let_("e", Type::Nat, prim(Prim::Choose, vec![n(), Expr::nat(5)])),
        Stmt::let_("g", Type::Prob, prim(Prim::GammaFunc, vec![x()])),
        Stmt::let_("h", Type::Prob, prim(Prim::BetaFunc, vec![v("b"), v("b")])),
        Stmt::let_(
            "r",
            Type::Real,
            prim(
                Prim::Add,
                vec![
                    prim(Prim::Sin, vec![x()]),
                    prim(Prim::Erf, vec![x()]),
                    prim(Prim::Atanh, vec![prim(Prim::Tanh, vec![x()])]),
                    Expr::convert(Coercion::Prob2Real, prim(Prim::Sqrt, vec![v("b")])),
                    Expr::convert(Coercion::Int2Real, v("c")),
                    Expr::convert(
                        Coercion::Nat2Real,
                        prim(Prim::Mul, vec![v("a"), v("d"), v("e")]),
                    ),
                    prim(
                        Prim::Log,
                        vec![prim(
                            Prim::Mul,
                            vec![v("g"), v("h"), prim(Prim::Pi, vec![])],
                        )],
                    ),
                ],
            ),
        ),
    ];
    Program {
        params: vec![
            ("x".into(), Type::Real),
            ("k".into(), Type::Int),
            ("n".into(), Type::Nat),
        ],
        body: lets,
        result: v("r"),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn primitives_and_coercions_agree_and_fail_alike() {
    let args = |x: f64, k: i64, n: u64| vec![Val::Real(x), Val::Int(k), Val::Nat(n)];
    check(
        &arith(),
        &[
            args(0.5, 3, 7),
            args(2.75, 0, 12),
            args(13.5, 1, 40),
            args(170.2, 2, 60),
            args(1e-8, 5, 1),
            // real2prob of a negative real
            args(-0.5, 3, 7),
            // int2nat of a negative int
            args(0.5, -1, 7),
            // n^3 and choose overflow
            args(0.5, 1, 3_000_000),
            args(0.5, 1, u64::MAX),
        ],
    );
}

/// `int2nat(nat2int(a) + -nat2int(b))`: a count taken down, as `remove` writes it.
fn nat_difference() -> Program {
    let to_int = |x: &str| Expr::convert(Coercion::Nat2Int, v(x));
    let diff = prim(
        Prim::Add,
        vec![to_int("a"), prim(Prim::Neg, vec![to_int("b")])],
    );
    Program {
        params: vec![("a".into(), Type::Nat), ("b".into(), Type::Nat)],
        body: vec![Stmt::let_(
            "d",
            Type::Nat,
            Expr::convert(Coercion::Int2Nat, diff),
        )],
        result: v("d"),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn a_natural_difference_is_one_helper_that_fails_alike() {
    let p = nat_difference();
    for t in TARGETS {
        let src = emit(&p, t).expect("emits").source;
        let calls = src
            .lines()
            .filter(|l| code_of(l).contains("slic_nat_sub(K, "))
            .count();
        assert_eq!(calls, 1, "{t:?}: {src}");
    }
    let args = |a: u64, b: u64| vec![Val::Nat(a), Val::Nat(b)];
    check(
        &p,
        &[
            args(5, 3),
            args(7, 7),
            args(0, 0),
            // below zero: int2nat fails
            args(3, 5),
            // past the ints: nat2int fails, of either operand
            args(u64::MAX, 1),
            args(1, u64::MAX),
            args(u64::MAX, u64::MAX),
        ],
    );
}

#[test]
fn a_narrow_table_parameter_holds_32_bit_counts_and_refuses_wider_ones() {
    // `t[0] += v` on an inout table laid out as 32-bit elements
    let p = Program {
        params: vec![
            ("t".into(), Type::array(Type::Nat)),
            ("v".into(), Type::Nat),
        ],
        body: vec![Stmt::store("t", Expr::nat(0), AssignOp::Add, v("v"))],
        result: Expr::nat(0),
        measure: false,
        inout: vec!["t".into()],
    };
    let spec = Specialise {
        fixed: Vec::new(),
        narrow: vec![true, false],
    };
    let nats = |xs: &[u64]| Val::array(xs.iter().map(|&x| Val::Nat(x)).collect());
    for t in TARGETS {
        let k = Compiled::build(&p, t, &spec, None, &opts()).expect("builds");
        let mut prep = k
            .prepare(&[nats(&[5, 6]), Val::Nat(3)])
            .expect("counts that fit");
        k.run_prepared(&mut prep).expect("runs");
        assert_eq!(prep.array(0), Some(nats(&[8, 6])), "{t:?}");
        // a count past 2^32 - 1 is an error, not a wrapped count
        prep.set(1, &Val::Nat(u64::from(u32::MAX))).expect("sets");
        match k.run_prepared(&mut prep) {
            Err(KernelError::Run(RunError::Arith { .. })) => {}
            other => panic!("{t:?}: {other:?}"),
        }
        // and so is an argument that does not fit
        assert!(
            k.prepare(&[nats(&[1 << 32, 0]), Val::Nat(0)]).is_err(),
            "{t:?}"
        );
    }
}

/// `k ~ categorical(w); j ~ categorical(w); factor w[k]; return k + j` beside the Gibbs
/// shape `if c { draw t ~ categorical(w); r = t } else { reject }; return r`.
fn two_draws() -> Program {
    Program {
        params: vec![("w".into(), Type::array(Type::Prob))],
        body: vec![
            Stmt::draw("k", Type::Nat, Dist::Categorical, vec![v("w")]),
            Stmt::draw("j", Type::Nat, Dist::Categorical, vec![v("w")]),
            Stmt::Factor(Expr::index(v("w"), v("k"))),
        ],
        result: prim(Prim::Add, vec![v("k"), v("j")]),
        measure: true,
        inout: Vec::new(),
    }
}

fn gibbs_shape() -> Program {
    Program {
        params: vec![
            ("w".into(), Type::array(Type::Prob)),
            ("c".into(), Type::Bool),
        ],
        body: vec![
            Stmt::var("r", Type::Nat, None),
            Stmt::if_(
                v("c"),
                vec![
                    Stmt::Factor(Expr::prob(0.5)),
                    Stmt::draw("t", Type::Nat, Dist::Categorical, vec![v("w")]),
                    Stmt::assign("r", AssignOp::Set, v("t")),
                ],
                vec![Stmt::Reject, Stmt::assign("r", AssignOp::Set, Expr::nat(0))],
            ),
        ],
        result: v("r"),
        measure: true,
        inout: Vec::new(),
    }
}

#[test]
fn exact_enumeration_agrees_value_by_value() {
    let w = |ls: &[f64]| vec![probs_ln(ls)];
    check(
        &two_draws(),
        &[
            w(&[0.0, -1.0, -0.5]),
            w(&[]),
            w(&[f64::NEG_INFINITY, -3.0]),
            w(&[-1000.0, -1001.0, -1002.0]),
            // an infinite or NaN weight is a bad draw, wherever it stands
            w(&[f64::INFINITY, 0.0]),
            w(&[0.0, -1.0, f64::INFINITY]),
            w(&[-1.0, f64::NAN, 0.0]),
        ],
    );
    let g = |ls: &[f64], c: bool| vec![probs_ln(ls), Val::Bool(c)];
    check(
        &gibbs_shape(),
        &[g(&[0.0, -2.0, -0.1], true), g(&[0.0], false), g(&[], true)],
    );
    // the Gibbs shape's draw is in tail position: one call, no replay
    let emitted = emit(&gibbs_shape(), Target::C).expect("emits");
    assert!(emitted.source.contains(", true, "), "{}", emitted.source);
}

#[test]
fn too_many_paths_and_continuous_draws_are_errors_of_their_kind() {
    for t in TARGETS {
        let k = build(&two_draws(), t);
        let w = vec![probs_ln(&[0.0; 10])];
        match k.enumerate(&w, 20) {
            Err(KernelError::Run(RunError::TooManyPaths { .. })) => {}
            other => panic!("{t:?}: {other:?}"),
        }
        let normal = Program {
            params: vec![("m".into(), Type::Real)],
            body: vec![Stmt::draw(
                "x",
                Type::Real,
                Dist::Normal,
                vec![v("m"), Expr::prob(1.0)],
            )],
            result: v("x"),
            measure: true,
            inout: Vec::new(),
        };
        let k = build(&normal, t);
        match k.enumerate(&[Val::Real(0.0)], 20) {
            Err(KernelError::Run(RunError::NotFinite { dist: "normal", .. })) => {}
            other => panic!("{t:?}: {other:?}"),
        }
        match k.enumerate(&[Val::Real(f64::INFINITY)], 20) {
            Err(KernelError::Run(RunError::BadDraw { .. })) => {}
            other => panic!("{t:?}: {other:?}"),
        }
    }
}

/// Names that would break out of an identifier, a string or a comment in either target.
const HOSTILE: [&str; 10] = [
    "a\"b",
    "*/ exit(1); /*",
    "x\ny",
    "int",
    "fn",
    "a-b",
    "ab",
    "a b",
    "return",
    "\u{e9}t\u{e9}",
];

/// A line without its comments (`/* ... */` spans, `//` tails, header lines `* ...`).
fn code_of(line: &str) -> String {
    let t = line.trim_start();
    if t.starts_with("* ") || t == "*" || t == "/*" {
        return String::new();
    }
    let mut out = String::new();
    let mut rest = line;
    while let Some(k) = rest.find("/*") {
        out.push_str(&rest[..k]);
        match rest[k..].find("*/") {
            Some(e) => rest = &rest[k + e + 2..],
            None => return out,
        }
    }
    out.push_str(rest);
    match out.find("//") {
        Some(k) => out[..k].to_string(),
        None => out,
    }
}

#[test]
fn hostile_names_never_reach_the_code() {
    // each hostile name is a parameter, a let, a loop index and an allocation
    let mut params = Vec::new();
    let mut body = vec![Stmt::var("acc", Type::Real, Some(Expr::real(0.0)))];
    for (k, name) in HOSTILE.iter().enumerate() {
        let p = name.to_string();
        params.push((p.clone(), Type::array(Type::Real)));
        let l = format!("{name}{name}");
        let i = format!("{name}!");
        let a = format!("{name}?");
        body.push(Stmt::alloc(&a, Type::Real, Expr::size(v(&p))));
        body.push(Stmt::for_(
            &i,
            Expr::nat(0),
            Expr::size(v(&p)),
            vec![
                Stmt::let_(&l, Type::Real, Expr::index(v(&p), v(&i))),
                Stmt::store(
                    &a,
                    v(&i),
                    AssignOp::Set,
                    prim(Prim::Mul, vec![v(&l), Expr::real(k as f64 + 1.0)]),
                ),
                Stmt::assign("acc", AssignOp::Add, Expr::index(v(&a), v(&i))),
            ],
        ));
    }
    let p = Program {
        params,
        body,
        result: v("acc"),
        measure: false,
        inout: Vec::new(),
    };
    for t in TARGETS {
        let src = emit(&p, t).expect("emits").source;
        // a name may be quoted in a comment (stripped to a safe alphabet), never in code
        for name in HOSTILE {
            if name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-')
            {
                continue;
            }
            assert!(!src.contains(name), "{t:?}: `{name}` reached the source");
        }
        for line in src.lines() {
            let code = code_of(line);
            assert!(
                !code.contains("exit(1)") && !code.contains("a-b") && !code.contains("a b"),
                "{t:?}: a hostile name outside a comment: {line}"
            );
        }
    }
    let args: Vec<Val> = (0..HOSTILE.len())
        .map(|k| reals(&[k as f64, 0.5]))
        .collect();
    check(&p, &[args]);
}

#[test]
fn a_second_build_is_a_cache_hit() {
    let dir = cache().join("hits");
    let _ = std::fs::remove_dir_all(&dir);
    let o = CompileOptions {
        cache_dir: Some(dir.clone()),
        ..CompileOptions::default()
    };
    for t in TARGETS {
        let first = Compiled::build(&sums(), t, &Specialise::default(), None, &o).expect("builds");
        assert!(!first.cache_hit(), "{t:?}: the first build compiles");
        let second = Compiled::build(&sums(), t, &Specialise::default(), None, &o).expect("builds");
        assert!(second.cache_hit(), "{t:?}: the second build compiles again");
        let args = [reals(&[1.0]), probs_ln(&[0.0])];
        assert_eq!(first.run(&args).ok(), second.run(&args).ok());
    }
}

#[test]
fn a_missing_compiler_is_a_clear_error() {
    let o = CompileOptions {
        cache_dir: Some(cache().join("missing")),
        c_compiler: Some(PathBuf::from("/nonexistent/cc")),
        rustc: Some(PathBuf::from("/nonexistent/rustc")),
        ..CompileOptions::default()
    };
    for t in TARGETS {
        match Compiled::build(&sums(), t, &Specialise::default(), None, &o) {
            Err(KernelError::Compile(e @ CompileError::NoCompiler { .. })) => {
                let msg = e.to_string();
                assert!(msg.contains("--backend interp"), "{msg}");
                if t == Target::C {
                    assert!(
                        msg.contains("no C compiler") && msg.contains("--backend rust"),
                        "{msg}"
                    );
                }
            }
            Err(e) => panic!("{t:?}: {e}"),
            Ok(_) => panic!("{t:?}: built without a compiler"),
        }
    }
}

#[test]
fn a_specialised_kernel_bakes_in_its_data_and_refuses_other_data() {
    let p = sums();
    let args = vec![reals(&[1.0, 2.0]), probs_ln(&[0.0, -1.0, -2.0])];
    for t in TARGETS {
        let k = Compiled::build(&p, t, &Specialise::all(2), Some(&args), &opts()).expect("builds");
        assert!(k.source().contains("specialised"), "{t:?}");
        let (want, _) = run(&p, &args).expect("runs");
        assert!(close(&want, &k.run(&args).expect("runs")), "{t:?}");
        match k.run(&[reals(&[1.0]), probs_ln(&[0.0, -1.0, -2.0])]) {
            Err(KernelError::Specialised { .. }) => {}
            other => panic!("{t:?}: {other:?}"),
        }
    }
}

#[test]
fn lgamma_of_the_rust_prelude_agrees_with_libm() {
    // gammaFunc over a spread of arguments, negative ones with a positive Γ included
    let p = Program {
        params: vec![("x".into(), Type::array(Type::Real))],
        body: vec![
            Stmt::alloc("g", Type::Prob, Expr::size(v("x"))),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::size(v("x")),
                vec![Stmt::store(
                    "g",
                    v("i"),
                    AssignOp::Set,
                    prim(Prim::GammaFunc, vec![Expr::index(v("x"), v("i"))]),
                )],
            ),
        ],
        result: v("g"),
        measure: false,
        inout: Vec::new(),
    };
    let xs: Vec<f64> = [
        1e-300, 1e-10, 0.001, 0.3, 0.5, 0.999, 1.0, 1.0001, 1.5, 1.9999, 2.0, 2.5, 3.7, 9.9, 14.99,
        15.0, 30.5, 171.3, 1e3, 1e5, 1e10, 1e300, -1.5, -3.5, -5.7, -99.5,
    ]
    .to_vec();
    let k = build(&p, Target::Rust);
    let got = k.run(&[reals(&xs)]).expect("runs");
    let Val::Array(got) = got else {
        panic!("{got:?}")
    };
    for (x, g) in xs.iter().zip(got.iter()) {
        let Val::Prob(l) = g else { panic!("{g:?}") };
        let want = libm::lgamma(*x);
        let tol = 1e-14 * want.abs().max(1.0);
        assert!((l - want).abs() <= tol, "lgamma({x}) = {l}, libm {want}");
    }
}

#[test]
fn emitted_source_is_readable() {
    let src = emit(&sums(), Target::C).expect("emits").source;
    assert!(src.contains("/* for i in 0..size(x) */"), "{src}");
    assert!(src.contains("ABI (version 2)"), "{src}");
    let src = emit(&sums(), Target::Rust).expect("emits").source;
    assert!(src.contains("// for j in 0..size(w)"), "{src}");
    assert!(!src.contains("\n\n\n"), "{src}");
}

/// The emitted files compile warning-free by hand, as the issue asks of `emit` output:
/// `cc -std=c11 -Wall -Werror -O2` and `rustc -O -D warnings --crate-type cdylib` (not
/// through the `cc` crate, whose flags could hide a warning).
#[test]
fn emitted_source_compiles_warning_free_by_hand() {
    let dir = cache().join("by-hand");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let normal = Program {
        params: vec![("m".into(), Type::Real)],
        body: vec![Stmt::draw(
            "x",
            Type::Real,
            Dist::Normal,
            vec![v("m"), Expr::prob(1.0)],
        )],
        result: v("x"),
        measure: true,
        inout: Vec::new(),
    };
    let programs = [
        sums(),
        arith(),
        two_draws(),
        gibbs_shape(),
        normal,
        own_ranges(),
    ];
    for (k, p) in programs.iter().enumerate() {
        let c = dir.join(format!("k{k}.c"));
        std::fs::write(&c, emit(p, Target::C).expect("emits").source).expect("writes");
        let out = std::process::Command::new("cc")
            .args([
                "-std=c11", "-Wall", "-Werror", "-O2", "-shared", "-fPIC", "-o",
            ])
            .arg(dir.join(format!("k{k}c.so")))
            .arg(&c)
            .arg("-lm")
            .output()
            .expect("cc runs");
        assert!(
            out.status.success(),
            "cc: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = dir.join(format!("k{k}.rs"));
        std::fs::write(&r, emit(p, Target::Rust).expect("emits").source).expect("writes");
        let out = std::process::Command::new("rustc")
            .args([
                "-O",
                "-D",
                "warnings",
                "--edition",
                "2021",
                "--crate-type",
                "cdylib",
                "-o",
            ])
            .arg(dir.join(format!("k{k}r.so")))
            .arg(&r)
            .output()
            .expect("rustc runs");
        assert!(
            out.status.success(),
            "rustc: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Sampling: each law (uniform, normal, gamma of shapes 0.05 and 3, beta, poisson below
/// and above the sampler's switch at 30, a categorical) drawn by the kernel from a seed
/// follows the interpreter's stream from that seed: equal samples to 1e-9 (the kernel's
/// libm may differ in the last bit; 95% must agree, so a rare shifted stream is no
/// failure but a wrong sampler is).
#[test]
fn sampling_follows_the_interpreters_stream() {
    let draw = |dist: Dist, args: Vec<Expr>| Program {
        params: vec![("w".into(), Type::array(Type::Prob))],
        body: vec![
            Stmt::draw("x", dist.support_type(), dist, args),
            Stmt::Factor(Expr::prob(0.5)),
        ],
        result: v("x"),
        measure: true,
        inout: Vec::new(),
    };
    let programs = [
        draw(Dist::Uniform, vec![Expr::real(-1.0), Expr::real(2.0)]),
        draw(Dist::Normal, vec![Expr::real(3.0), Expr::prob(0.5)]),
        draw(Dist::Gamma, vec![Expr::prob(0.05), Expr::prob(2.0)]),
        draw(Dist::Gamma, vec![Expr::prob(3.0), Expr::prob(1.0)]),
        draw(Dist::Beta, vec![Expr::prob(0.5), Expr::prob(2.5)]),
        draw(Dist::Poisson, vec![Expr::prob(3.5)]),
        draw(Dist::Poisson, vec![Expr::prob(70.0)]),
        draw(Dist::Categorical, vec![v("w")]),
    ];
    let w = vec![probs_ln(&[0.0, -1.0, f64::NEG_INFINITY, -0.5])];
    let n = 200;
    for p in &programs {
        for t in TARGETS {
            let k = build(p, t);
            let Ok(Outcome::Sampled(a)) = run_measure(p, &w, Mode::Sample { n, seed: 11 }) else {
                panic!("the interpreter samples")
            };
            let b = k.sample(&w, n, 11).unwrap_or_else(|e| panic!("{t:?}: {e}"));
            let same = a
                .samples
                .iter()
                .zip(&b.samples)
                .filter(|(x, y)| {
                    x.value
                        .as_ref()
                        .zip(y.value.as_ref())
                        .is_some_and(|(u, w)| close(u, w))
                        && close(&Val::Prob(x.ln_w), &Val::Prob(y.ln_w))
                })
                .count();
            assert!(
                b.samples.len() == n && same * 20 >= n * 19,
                "{t:?} {}: {same} of {n} agree\n{:?}\n{:?}",
                p.body[0].head(),
                &a.samples[..3],
                &b.samples[..3]
            );
        }
    }
}

// ---- checks that can never fire are left out (`emit/safe.rs`) ----

/// The kernel's own part of an emitted source: after the prelude, which defines every
/// checked helper whether or not the kernel calls it.
fn kernel_part(src: &str) -> &str {
    let at = src.find("---- the kernel ----").expect("the kernel marker");
    &src[at..]
}

/// The prelude helpers both targets spell each check with.
const CHECKED_READ: &str = "slic_rd_";
const CHECKED_INDEX: &str = "slic_ix_";
const CHECKED_NAT_ADD: &str = "slic_nat_add";
const CHECKED_INT_ADD: &str = "slic_int_add";

fn nats(xs: &[u64]) -> Val {
    Val::array(xs.iter().map(|&x| Val::Nat(x)).collect())
}
fn bools(xs: &[bool]) -> Val {
    Val::array(xs.iter().map(|&x| Val::Bool(x)).collect())
}
fn pairs(mut es: Vec<Expr>) -> Expr {
    let last = es.pop().expect("a result");
    es.into_iter()
        .rev()
        .fold(last, |acc, e| Expr::Pair(Box::new(e), Box::new(acc)))
}
/// `var name: T; if c { name = 1 } else { name = 0 }`, as lowering writes an indicator.
fn indicator(name: &str, ty: Type, c: Expr) -> Vec<Stmt> {
    let (one, zero) = match ty {
        Type::Int => (Expr::int(1), Expr::int(0)),
        _ => (Expr::nat(1), Expr::nat(0)),
    };
    vec![
        Stmt::var(name, ty, None),
        Stmt::if_(
            c,
            vec![Stmt::assign(name, AssignOp::Set, one)],
            vec![Stmt::assign(name, AssignOp::Set, zero)],
        ),
    ]
}

/// Loops over their arrays' own ranges and counters bounded by their trip counts:
/// ```text
/// fn(x: array(real), b: array(bool)) {
///     let v: nat = size(x)
///     var s: real = 0.0; var pos: nat = 0; var neg: int = 0; var twice: nat = 0
///     alloc h: array(nat) of v
///     for i in 0..v {
///         s += x[i]                                          read through `let v = size(x)`
///         var one: nat; if (0.0 < x[i]) { one = 1 } else { one = 0 }
///         pos += one; neg += -1                              one 0/1 (or ±1) add a trip
///         twice += 1; twice += one                           two a trip, over a length
///         h[i] += one                                        a store at an own index, `h` of v
///     }
///     var seen: nat = 0
///     for j in 0..size(b) { if b[j] { seen += 1 } }
///     var total: real = 0.0
///     for k in 0..size(h) { total += nat2real(h[k]) }        h allocated of v
///     return (s, pos, neg, twice, seen, total, h)
/// }
/// ```
fn own_ranges() -> Program {
    let xi = || Expr::index(v("x"), v("i"));
    let mut body_i = vec![Stmt::assign("s", AssignOp::Add, xi())];
    body_i.extend(indicator(
        "one",
        Type::Nat,
        prim(Prim::Lt, vec![Expr::real(0.0), xi()]),
    ));
    body_i.extend([
        Stmt::assign("pos", AssignOp::Add, v("one")),
        Stmt::assign("neg", AssignOp::Add, Expr::int(-1)),
        Stmt::assign("twice", AssignOp::Add, Expr::nat(1)),
        Stmt::assign("twice", AssignOp::Add, v("one")),
        Stmt::store("h", v("i"), AssignOp::Add, v("one")),
    ]);
    Program {
        params: vec![
            ("x".into(), Type::array(Type::Real)),
            ("b".into(), Type::array(Type::Bool)),
        ],
        body: vec![
            Stmt::let_("v", Type::Nat, Expr::size(v("x"))),
            Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
            Stmt::var("pos", Type::Nat, Some(Expr::nat(0))),
            Stmt::var("neg", Type::Int, Some(Expr::int(0))),
            Stmt::var("twice", Type::Nat, Some(Expr::nat(0))),
            Stmt::alloc("h", Type::Nat, v("v")),
            Stmt::for_("i", Expr::nat(0), v("v"), body_i),
            Stmt::var("seen", Type::Nat, Some(Expr::nat(0))),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::size(v("b")),
                vec![Stmt::if_(
                    Expr::index(v("b"), v("j")),
                    vec![Stmt::assign("seen", AssignOp::Add, Expr::nat(1))],
                    vec![],
                )],
            ),
            Stmt::var("total", Type::Real, Some(Expr::real(0.0))),
            Stmt::for_(
                "k",
                Expr::nat(0),
                Expr::size(v("h")),
                vec![Stmt::assign(
                    "total",
                    AssignOp::Add,
                    Expr::convert(Coercion::Nat2Real, Expr::index(v("h"), v("k"))),
                )],
            ),
        ],
        result: pairs(
            ["s", "pos", "neg", "twice", "seen", "total", "h"]
                .iter()
                .map(|x| v(x))
                .collect(),
        ),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn own_range_reads_and_bounded_counters_are_unchecked_and_agree() {
    let p = own_ranges();
    for t in TARGETS {
        let src = emit(&p, t).expect("emits").source;
        let k = kernel_part(&src);
        for checked in [
            CHECKED_READ,
            CHECKED_INDEX,
            CHECKED_NAT_ADD,
            CHECKED_INT_ADD,
        ] {
            assert!(!k.contains(checked), "{t:?}: `{checked}` left in\n{k}");
        }
    }
    let cases = [
        vec![reals(&[1.0, -2.0, 3.5]), bools(&[true, false, true, true])],
        vec![reals(&[]), bools(&[])],
        vec![reals(&[-1.0]), bools(&[false])],
        vec![reals(&[0.5; 40]), bools(&[true; 7])],
    ];
    check(&p, &cases);
    // specialised on the data, as `run` and `gibbs` build kernels: still unchecked, equal
    for t in TARGETS {
        for args in &cases {
            let spec = Specialise::all(p.params.len());
            let k = Compiled::build(&p, t, &spec, Some(args), &opts()).expect("builds");
            assert!(!kernel_part(k.source()).contains(CHECKED_READ), "{t:?}");
            let (want, _) = run(&p, args).expect("runs");
            assert!(close(&want, &k.run(args).expect("runs")), "{t:?} {args:?}");
        }
    }
}

/// The histogram as lowering writes it: indices out of range skipped by a test.
/// ```text
/// fn(z: array(nat), k: nat) {
///     alloc h: array(nat) of k
///     for i in 0..size(z) { let c: nat = z[i]; if (c < k) { h[c] += 1 } }
///     return h
/// }
/// ```
fn histogram(guarded: Vec<Stmt>) -> Program {
    Program {
        params: vec![
            ("z".into(), Type::array(Type::Nat)),
            ("k".into(), Type::Nat),
        ],
        body: vec![
            Stmt::alloc("h", Type::Nat, v("k")),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::size(v("z")),
                vec![
                    Stmt::var("c", Type::Nat, Some(Expr::index(v("z"), v("i")))),
                    Stmt::if_(prim(Prim::Lt, vec![v("c"), v("k")]), guarded, vec![]),
                ],
            ),
        ],
        result: v("h"),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn a_histograms_guarded_store_is_unchecked_and_agrees() {
    let p = histogram(vec![Stmt::store("h", v("c"), AssignOp::Add, Expr::nat(1))]);
    for t in TARGETS {
        let src = emit(&p, t).expect("emits").source;
        let k = kernel_part(&src);
        for checked in [CHECKED_READ, CHECKED_INDEX, CHECKED_NAT_ADD] {
            assert!(!k.contains(checked), "{t:?}: `{checked}` left in\n{k}");
        }
    }
    let args = |z: &[u64], k: u64| vec![nats(z), Val::Nat(k)];
    check(
        &p,
        &[
            args(&[0, 2, 2, 1, 7, u64::MAX], 3),
            args(&[], 0),
            args(&[4, 4], 0),
        ],
    );
}

/// A row of a row-major table of 3 columns, as `crate::forward` reads an incremental
/// update's statistics (`loop_hi` the columns read, `base` the row's first element):
/// ```text
/// fn(t: array(nat), k: nat) {
///     let end: nat = (k + 1) * 3; let ok: bool = (end <= size(t)); let base: nat = k * 3
///     alloc out: array(nat) of 4
///     for i in 0..loop_hi { var x: nat = 0; if ok { x = t[base + i] }; out[i] = x }
///     return out
/// }
/// ```
fn table_row(loop_hi: u64, base: Expr) -> Program {
    let k = || v("k");
    Program {
        params: vec![
            ("t".into(), Type::array(Type::Nat)),
            ("k".into(), Type::Nat),
        ],
        body: vec![
            Stmt::let_(
                "end",
                Type::Nat,
                prim(
                    Prim::Mul,
                    vec![prim(Prim::Add, vec![k(), Expr::nat(1)]), Expr::nat(3)],
                ),
            ),
            Stmt::let_(
                "ok",
                Type::Bool,
                prim(Prim::Le, vec![v("end"), Expr::size(v("t"))]),
            ),
            Stmt::let_("base", Type::Nat, base),
            Stmt::alloc("out", Type::Nat, Expr::nat(4)),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::nat(loop_hi),
                vec![
                    Stmt::var("x", Type::Nat, Some(Expr::nat(0))),
                    Stmt::if_(
                        v("ok"),
                        vec![Stmt::assign(
                            "x",
                            AssignOp::Set,
                            Expr::index(v("t"), prim(Prim::Add, vec![v("base"), v("i")])),
                        )],
                        vec![],
                    ),
                    Stmt::store("out", v("i"), AssignOp::Set, v("x")),
                ],
            ),
        ],
        result: v("out"),
        measure: false,
        inout: Vec::new(),
    }
}

#[test]
fn a_row_of_a_table_under_its_test_is_read_unchecked_and_agrees() {
    let k3 = || prim(Prim::Mul, vec![v("k"), Expr::nat(3)]);
    let args = |k: u64| vec![nats(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), Val::Nat(k)];
    // k = 3 has no row (zeros), u64::MAX / 2 overflows the test (an error both ways)
    let cases = [args(0), args(2), args(3), args(u64::MAX / 2)];
    let p = table_row(3, k3());
    for t in TARGETS {
        let src = emit(&p, t).expect("emits").source;
        let k = kernel_part(&src);
        for checked in [CHECKED_READ, CHECKED_NAT_ADD] {
            let reads = k
                .lines()
                .filter(|l| l.contains("base") && l.contains(checked));
            assert_eq!(reads.count(), 0, "{t:?}: `{checked}` at the row read\n{k}");
        }
    }
    check(&p, &cases);
    // a column past the row's width, or a base that is not the row's: checked
    for q in [
        table_row(4, k3()),
        table_row(3, prim(Prim::Mul, vec![v("k"), Expr::nat(2)])),
    ] {
        for t in TARGETS {
            let src = emit(&q, t).expect("emits").source;
            assert!(kernel_part(&src).contains(CHECKED_READ), "{t:?}\n{src}");
        }
        check(&q, &cases);
    }
}

/// `a[k] = int2nat(nat2int(a[k]) + -(1))` on a copy of `t` (as an incremental update's
/// `remove` writes a count less one): the value reads the element at the index the store
/// checked, once; a count of 0 and an index out of range fail as in the interpreter.
#[test]
fn a_store_reads_its_own_element_at_the_checked_index() {
    let less_one = Expr::convert(
        Coercion::Int2Nat,
        prim(
            Prim::Add,
            vec![
                Expr::convert(Coercion::Nat2Int, Expr::index(v("a"), v("k"))),
                prim(Prim::Neg, vec![Expr::int(1)]),
            ],
        ),
    );
    let p = Program {
        params: vec![
            ("t".into(), Type::array(Type::Nat)),
            ("k".into(), Type::Nat),
        ],
        body: vec![
            Stmt::alloc("a", Type::Nat, Expr::size(v("t"))),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::size(v("t")),
                vec![Stmt::store(
                    "a",
                    v("i"),
                    AssignOp::Set,
                    Expr::index(v("t"), v("i")),
                )],
            ),
            Stmt::store("a", v("k"), AssignOp::Set, less_one),
        ],
        result: v("a"),
        measure: false,
        inout: Vec::new(),
    };
    for t in TARGETS {
        let src = emit(&p, t).expect("emits").source;
        let k = kernel_part(&src);
        let line = k
            .lines()
            .find(|l| l.contains("int2nat"))
            .expect("the store of a count less one");
        assert!(!line.contains(CHECKED_READ), "{t:?}: {line}");
    }
    let args = |t: &[u64], k: u64| vec![nats(t), Val::Nat(k)];
    check(
        &p,
        &[
            args(&[3, 1, 4], 1),
            args(&[3, 0, 4], 1),
            args(&[3, 1, 4], 3),
        ],
    );
}

/// Programs whose checks can fire, each with the check it must keep, and arguments that
/// make it fire (or come near): the kernel fails as the interpreter does, in kind.
fn kept_checks() -> Vec<(&'static str, Program, &'static str, Vec<Vec<Val>>)> {
    let sum = |params: Vec<(String, Type)>, body: Vec<Stmt>, result: &str| Program {
        params,
        body,
        result: v(result),
        measure: false,
        inout: Vec::new(),
    };
    let real_arr = || ("a".to_string(), Type::array(Type::Real));
    let nat_arr = || ("a".to_string(), Type::array(Type::Nat));
    let n = || ("n".to_string(), Type::Nat);
    let ai = |i: &str| Expr::index(v("a"), v(i));
    vec![
        (
            // the bound is another parameter: `n` may exceed `size(a)`
            "a loop to a separate parameter",
            Program {
                params: vec![real_arr(), n()],
                body: vec![
                    Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
                    Stmt::for_(
                        "j",
                        Expr::nat(0),
                        v("n"),
                        vec![Stmt::assign("s", AssignOp::Add, ai("j"))],
                    ),
                ],
                result: v("s"),
                measure: false,
                inout: Vec::new(),
            },
            CHECKED_READ,
            vec![
                vec![reals(&[1.0, 2.0, 3.0]), Val::Nat(2)],
                vec![reals(&[1.0, 2.0, 3.0]), Val::Nat(4)],
                vec![reals(&[]), Val::Nat(1)],
            ],
        ),
        (
            "a store to a separate parameter's range",
            Program {
                params: vec![real_arr(), n()],
                body: vec![
                    Stmt::alloc("h", Type::Real, Expr::size(v("a"))),
                    Stmt::for_(
                        "j",
                        Expr::nat(0),
                        v("n"),
                        vec![Stmt::store("h", v("j"), AssignOp::Set, Expr::real(1.0))],
                    ),
                ],
                result: v("h"),
                measure: false,
                inout: Vec::new(),
            },
            CHECKED_INDEX,
            vec![
                vec![reals(&[1.0, 2.0]), Val::Nat(2)],
                vec![reals(&[1.0, 2.0]), Val::Nat(3)],
            ],
        ),
        (
            "a counter adding a non-constant",
            sum(
                vec![nat_arr()],
                vec![
                    Stmt::var("s", Type::Nat, Some(Expr::nat(0))),
                    Stmt::for_(
                        "j",
                        Expr::nat(0),
                        Expr::size(v("a")),
                        vec![Stmt::assign("s", AssignOp::Add, ai("j"))],
                    ),
                ],
                "s",
            ),
            CHECKED_NAT_ADD,
            vec![vec![nats(&[1, 2, 3])], vec![nats(&[u64::MAX, 1])]],
        ),
        (
            // (2^64 - 1)^2 adds of 1 over two loops to a nat parameter
            "an accumulator added to in a nested loop",
            sum(
                vec![n()],
                vec![
                    Stmt::var("c", Type::Nat, Some(Expr::nat(0))),
                    Stmt::for_(
                        "i",
                        Expr::nat(0),
                        v("n"),
                        vec![Stmt::for_(
                            "j",
                            Expr::nat(0),
                            v("n"),
                            vec![Stmt::assign("c", AssignOp::Add, Expr::nat(1))],
                        )],
                    ),
                ],
                "c",
            ),
            CHECKED_NAT_ADD,
            vec![vec![Val::Nat(0)], vec![Val::Nat(5)]],
        ),
        (
            // 2 (2^64 - 1) adds of 1
            "two adds a trip over a nat parameter",
            sum(
                vec![n()],
                vec![
                    Stmt::var("d", Type::Nat, Some(Expr::nat(0))),
                    Stmt::for_(
                        "i",
                        Expr::nat(0),
                        v("n"),
                        vec![
                            Stmt::assign("d", AssignOp::Add, Expr::nat(1)),
                            Stmt::assign("d", AssignOp::Add, Expr::nat(1)),
                        ],
                    ),
                ],
                "d",
            ),
            CHECKED_NAT_ADD,
            vec![vec![Val::Nat(7)]],
        ),
        (
            "a counter starting near the top",
            sum(
                vec![real_arr()],
                vec![
                    Stmt::var("e", Type::Nat, Some(Expr::nat(u64::MAX - 1))),
                    Stmt::for_(
                        "i",
                        Expr::nat(0),
                        Expr::size(v("a")),
                        vec![Stmt::assign("e", AssignOp::Add, Expr::nat(1))],
                    ),
                ],
                "e",
            ),
            CHECKED_NAT_ADD,
            vec![vec![reals(&[0.0])], vec![reals(&[0.0, 0.0])]],
        ),
        (
            // `x = a[i]` is unbounded: the next `x += 1` can overflow
            "a counter also set to a non-constant",
            sum(
                vec![nat_arr()],
                vec![
                    Stmt::var("x", Type::Nat, Some(Expr::nat(0))),
                    Stmt::for_(
                        "i",
                        Expr::nat(0),
                        Expr::size(v("a")),
                        vec![
                            Stmt::assign("x", AssignOp::Add, Expr::nat(1)),
                            Stmt::if_(
                                prim(Prim::Eq, vec![v("x"), Expr::nat(2)]),
                                vec![Stmt::assign("x", AssignOp::Set, ai("i"))],
                                vec![],
                            ),
                        ],
                    ),
                ],
                "x",
            ),
            CHECKED_NAT_ADD,
            vec![vec![nats(&[0, 7, 5])], vec![nats(&[0, u64::MAX, 5])]],
        ),
        (
            // the read's `i` is the inner loop's, bound by `n`
            "a shadowed loop index",
            sum(
                vec![real_arr(), n()],
                vec![
                    Stmt::var("f", Type::Real, Some(Expr::real(0.0))),
                    Stmt::for_(
                        "i",
                        Expr::nat(0),
                        Expr::size(v("a")),
                        vec![Stmt::for_(
                            "i",
                            Expr::nat(0),
                            v("n"),
                            vec![Stmt::assign("f", AssignOp::Add, ai("i"))],
                        )],
                    ),
                ],
                "f",
            ),
            CHECKED_READ,
            vec![
                vec![reals(&[1.0, 2.0]), Val::Nat(2)],
                vec![reals(&[1.0, 2.0]), Val::Nat(3)],
            ],
        ),
        (
            // the loop's `m` is the inner `let m = n`, not the outer `let m = size(a)`
            "a shadowed let",
            sum(
                vec![real_arr(), n()],
                vec![
                    Stmt::var("f", Type::Real, Some(Expr::real(0.0))),
                    Stmt::let_("m", Type::Nat, Expr::size(v("a"))),
                    Stmt::if_(
                        prim(Prim::Lt, vec![Expr::nat(0), v("m")]),
                        vec![
                            Stmt::let_("m", Type::Nat, v("n")),
                            Stmt::for_(
                                "k",
                                Expr::nat(0),
                                v("m"),
                                vec![Stmt::assign("f", AssignOp::Add, ai("k"))],
                            ),
                        ],
                        vec![],
                    ),
                ],
                "f",
            ),
            CHECKED_READ,
            vec![
                vec![reals(&[1.0, 2.0]), Val::Nat(1)],
                vec![reals(&[1.0, 2.0]), Val::Nat(3)],
            ],
        ),
        (
            // `c` changes after the test
            "a guarded index assigned in its branch",
            histogram(vec![
                Stmt::assign("c", AssignOp::Add, Expr::nat(1)),
                Stmt::store("h", v("c"), AssignOp::Add, Expr::nat(1)),
            ]),
            CHECKED_INDEX,
            vec![
                vec![nats(&[0, 1]), Val::Nat(3)],
                vec![nats(&[0, 2]), Val::Nat(3)],
            ],
        ),
        (
            // the test holds in the then-branch only
            "an index stored to in the else branch of its test",
            Program {
                params: vec![
                    ("z".into(), Type::array(Type::Nat)),
                    ("k".into(), Type::Nat),
                ],
                body: vec![
                    Stmt::alloc("h", Type::Nat, v("k")),
                    Stmt::for_(
                        "i",
                        Expr::nat(0),
                        Expr::size(v("z")),
                        vec![
                            Stmt::let_("c", Type::Nat, Expr::index(v("z"), v("i"))),
                            Stmt::if_(
                                prim(Prim::Lt, vec![v("c"), v("k")]),
                                vec![],
                                vec![Stmt::store("h", v("c"), AssignOp::Add, Expr::nat(1))],
                            ),
                        ],
                    ),
                ],
                result: v("h"),
                measure: false,
                inout: Vec::new(),
            },
            CHECKED_INDEX,
            vec![
                vec![nats(&[]), Val::Nat(3)],
                vec![nats(&[0, 5]), Val::Nat(3)],
            ],
        ),
    ]
}

#[test]
fn checks_that_can_fire_are_kept_and_fail_as_the_interpreter_does() {
    for (what, p, checked, cases) in kept_checks() {
        for t in TARGETS {
            let src = emit(&p, t).expect("emits").source;
            assert!(
                kernel_part(&src).contains(checked),
                "{what}, {t:?}: `{checked}` left out\n{}",
                kernel_part(&src)
            );
        }
        // at least one case fails, in the interpreter and (by `check`) alike in the kernel
        assert!(
            what.contains("nested")
                || what.contains("two adds")
                || cases.iter().any(|a| run(&p, a).is_err()),
            "{what}: no case fails"
        );
        check(&p, &cases);
    }
}

/// A specialised kernel knows its data's sizes: `for j in 0..n` reading `a[j]` with `n`
/// and `size(a)` baked in is unchecked exactly when `n <= size(a)` (the clinical trial's
/// loop); with `n` larger the check stays and fires as the interpreter's.
#[test]
fn specialised_sizes_prove_reads_in_bounds_only_when_they_are() {
    let (_, p, _, _) = kept_checks().swap_remove(0);
    let spec = Specialise::all(p.params.len());
    for t in TARGETS {
        for (len, n, unchecked) in [(3usize, 3u64, true), (3, 2, true), (3, 4, false)] {
            let args = vec![reals(&vec![1.5; len]), Val::Nat(n)];
            let k = Compiled::build(&p, t, &spec, Some(&args), &opts()).expect("builds");
            let has_check = kernel_part(k.source()).contains(CHECKED_READ);
            assert_eq!(has_check, !unchecked, "{t:?} len {len} n {n}");
            agrees(t, &p, &k, &args);
        }
    }
}

/// A loop reading a large table at an index read from another array requests the read
/// ahead (`emit/prefetch.rs`), in both targets, and keeps its meaning: the same value as
/// the interpreter, and the same error where the source holds an index past the table
/// (the prefetch tests it against the table's length and requests nothing there).
#[test]
fn a_large_table_read_through_another_array_is_prefetched_and_keeps_its_meaning() {
    // fn ks: array(nat), stat: array(nat), i: nat:
    //   var acc = 0; for t in 0..size(ks) { let k = ks[t]; acc += stat[i * 1000 + k] }
    let body = vec![
        Stmt::var("acc", Type::Nat, Some(Expr::nat(0))),
        Stmt::for_(
            "t",
            Expr::nat(0),
            Expr::size(v("ks")),
            vec![
                Stmt::let_("k", Type::Nat, Expr::index(v("ks"), v("t"))),
                Stmt::assign(
                    "acc",
                    AssignOp::Add,
                    Expr::index(
                        v("stat"),
                        prim(
                            Prim::Add,
                            vec![prim(Prim::Mul, vec![v("i"), Expr::nat(1000)]), v("k")],
                        ),
                    ),
                ),
            ],
        ),
    ];
    let p = Program {
        params: vec![
            ("ks".into(), Type::array(Type::Nat)),
            ("stat".into(), Type::array(Type::Nat)),
            ("i".into(), Type::Nat),
        ],
        body,
        result: v("acc"),
        measure: false,
        inout: Vec::new(),
    };
    let len = 1usize << 17;
    let stat = Val::array((0..len as u64).map(|x| Val::Nat(x % 7)).collect());
    let spine: Vec<u64> = (0..40).map(|x| (x * 37) % 1000).collect();
    let mut past = spine.clone();
    past[25] = len as u64; // `stat[i * 1000 + k]` past the end at `t = 25`, `i = 0`
                           // the table's length baked in, the rest read at run time
    let spec = Specialise {
        fixed: vec![false, true, false],
        narrow: Vec::new(),
    };
    for t in TARGETS {
        for (ks, i) in [(spine.clone(), 3u64), (past.clone(), 0), (vec![5, 6], 1)] {
            let args = vec![nats(&ks), stat.clone(), Val::Nat(i)];
            let k = Compiled::build(&p, t, &spec, Some(&args), &opts()).expect("builds");
            let prefetch = match t {
                Target::C => "__builtin_prefetch(&",
                Target::Rust => "slic_prefetch(&",
            };
            assert!(kernel_part(k.source()).contains(prefetch), "{t:?}");
            agrees(t, &p, &k, &args);
        }
        // a table below the size worth prefetching is read as it was
        let small = Val::array((0..1000u64).map(Val::Nat).collect());
        let args = vec![nats(&[1, 2, 3]), small, Val::Nat(0)];
        let k = Compiled::build(&p, t, &spec, Some(&args), &opts()).expect("builds");
        assert!(!kernel_part(k.source()).contains("prefetch(&"), "{t:?}");
    }
}

/// A loop's slow branch (a gamma function beside a branch without one, and the rare
/// branches of `emit/products.rs`) is emitted as a function of its own (`emit/cold.rs`),
/// in both targets, and keeps its meaning: the same value as the interpreter through every
/// branch, and the same error where the outlined branch fails (a gamma function negative
/// at a `prob`).
#[test]
fn a_slow_branch_in_a_loop_is_outlined_and_keeps_its_meaning() {
    // fn xs: array(real): var acc: prob = 1; var n: nat = 0
    //   for t in 0..size(xs) { let x = xs[t]
    //     if x < 5 { acc *= real2prob(x * x) } else { let g = gammaFunc(x - 10); acc *= g } }
    //   return acc
    let x = || v("x");
    let body = vec![
        Stmt::var("acc", Type::Prob, Some(Expr::prob(1.0))),
        Stmt::for_(
            "t",
            Expr::nat(0),
            Expr::size(v("xs")),
            vec![
                Stmt::let_("x", Type::Real, Expr::index(v("xs"), v("t"))),
                Stmt::if_(
                    prim(Prim::Lt, vec![x(), Expr::real(5.0)]),
                    vec![Stmt::assign(
                        "acc",
                        AssignOp::Mul,
                        Expr::convert(Coercion::Real2Prob, prim(Prim::Mul, vec![x(), x()])),
                    )],
                    vec![
                        Stmt::let_(
                            "g",
                            Type::Prob,
                            prim(
                                Prim::GammaFunc,
                                vec![prim(Prim::Add, vec![x(), Expr::real(-10.0)])],
                            ),
                        ),
                        Stmt::assign("acc", AssignOp::Mul, v("g")),
                    ],
                ),
            ],
        ),
    ];
    let p = Program {
        params: vec![("xs".into(), Type::array(Type::Real))],
        body,
        result: v("acc"),
        measure: false,
        inout: Vec::new(),
    };
    for t in TARGETS {
        let k = build(&p, t);
        // the gamma branch, the factor out of range and the fold
        assert_eq!(
            kernel_part(k.source()).matches("t_cold_").count(),
            6,
            "{t:?}"
        );
        for xs in [
            vec![1.0, 2.0, 3.0],
            vec![1.5, 12.0, 2.0, 15.5],
            vec![2.0, 9.5, 3.0], // Γ(-0.5) < 0: an error at a prob
            vec![],
            // a factor past the range `products.rs` multiplies as reals (its `log` taken
            // in an outlined branch), and a product that leaves it many times (folded)
            vec![-1e200, 2.0],
            vec![4.9; 300],
        ] {
            agrees(t, &p, &k, &[reals(&xs)]);
        }
    }
}
