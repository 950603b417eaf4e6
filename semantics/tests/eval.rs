//! Evaluation of every expression form: primitives, coercions, literals, binders,
//! patterns, arrays, loops, integrals and buckets, and the budgets on bad input.

mod common;

use common::{num, B};
use slic_algebra::{Coercion, Pattern, Prim, Type};
use slic_semantics::{EvalConfig, EvalError, Interp, Value};

/// Values equal, with floats (prob on the linear scale) to 1e-12 relative.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Real(x), Value::Real(y)) => close(*x, *y),
        (Value::Prob(x), Value::Prob(y)) => close(x.exp(), y.exp()),
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| same(x, y))
        }
        (Value::Pair(p), Value::Pair(q)) => same(&p.0, &q.0) && same(&p.1, &q.1),
        _ => a == b,
    }
}

fn close(x: f64, y: f64) -> bool {
    (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
}

fn check(b: &B, t: slic_algebra::TermId, want: Value) {
    match b.eval(t) {
        Ok(v) => assert!(same(&v, &want), "got {v:?}, want {want:?}"),
        Err(e) => panic!("error {e}, want {want:?}"),
    }
}

fn check_err(b: &B, t: slic_algebra::TermId, msg: &str) {
    match b.eval(t) {
        Ok(v) => panic!("got {v:?}, want an error containing {msg:?}"),
        Err(e) => assert!(e.to_string().contains(msg), "{e} lacks {msg:?}"),
    }
}

fn r(x: f64) -> Value {
    Value::Real(x)
}
fn p(x: f64) -> Value {
    Value::prob(x)
}

#[test]
fn arithmetic_primitives() {
    let mut b = B::new();
    type Case = (Prim, Vec<(f64, Type)>, Value);
    let cases: Vec<Case> = vec![
        (
            Prim::Add,
            vec![(2.0, Type::Nat), (3.0, Type::Nat)],
            Value::Nat(5),
        ),
        (
            Prim::Add,
            vec![(2.0, Type::Int), (-3.0, Type::Int), (4.0, Type::Int)],
            Value::Int(3),
        ),
        (
            Prim::Add,
            vec![(0.25, Type::Prob), (0.5, Type::Prob)],
            p(0.75),
        ),
        (
            Prim::Add,
            vec![(1e16, Type::Real), (1.0, Type::Real), (-1e16, Type::Real)],
            r(1.0),
        ),
        (
            Prim::Mul,
            vec![(2.0, Type::Nat), (3.0, Type::Nat)],
            Value::Nat(6),
        ),
        (
            Prim::Mul,
            vec![(-2.0, Type::Int), (3.0, Type::Int)],
            Value::Int(-6),
        ),
        (
            Prim::Mul,
            vec![(0.5, Type::Prob), (0.25, Type::Prob)],
            p(0.125),
        ),
        (
            Prim::Mul,
            vec![(1.5, Type::Real), (-2.0, Type::Real)],
            r(-3.0),
        ),
        (Prim::Neg, vec![(3.0, Type::Int)], Value::Int(-3)),
        (Prim::Neg, vec![(1.5, Type::Real)], r(-1.5)),
        (Prim::Recip, vec![(4.0, Type::Prob)], p(0.25)),
        (Prim::Recip, vec![(-4.0, Type::Real)], r(-0.25)),
        (Prim::Recip, vec![(0.0, Type::Real)], r(f64::INFINITY)),
        (
            Prim::Recip,
            vec![(0.0, Type::Prob)],
            Value::Prob(f64::INFINITY),
        ),
        (
            Prim::Pow,
            vec![(3.0, Type::Nat), (4.0, Type::Nat)],
            Value::Nat(81),
        ),
        (
            Prim::Pow,
            vec![(-2.0, Type::Int), (3.0, Type::Nat)],
            Value::Int(-8),
        ),
        (
            Prim::Pow,
            vec![(0.5, Type::Prob), (3.0, Type::Nat)],
            p(0.125),
        ),
        (Prim::Pow, vec![(0.0, Type::Prob), (0.0, Type::Nat)], p(1.0)),
        (
            Prim::Pow,
            vec![(-1.5, Type::Real), (2.0, Type::Nat)],
            r(2.25),
        ),
        (
            Prim::RealPow,
            vec![(4.0, Type::Prob), (0.5, Type::Real)],
            p(2.0),
        ),
        (
            Prim::RealPow,
            vec![(0.0, Type::Prob), (0.0, Type::Real)],
            p(1.0),
        ),
        (
            Prim::NatRoot,
            vec![(27.0, Type::Prob), (3.0, Type::Nat)],
            p(3.0),
        ),
        (Prim::Exp, vec![(1.0, Type::Real)], p(std::f64::consts::E)),
        (Prim::Log, vec![(1.0, Type::Prob)], r(0.0)),
        (Prim::Log, vec![(0.0, Type::Prob)], r(f64::NEG_INFINITY)),
        (Prim::Sqrt, vec![(2.25, Type::Prob)], p(1.5)),
        (Prim::Pi, vec![], p(std::f64::consts::PI)),
        (Prim::Infinity, vec![], Value::Prob(f64::INFINITY)),
        (Prim::Abs, vec![(-3.0, Type::Int)], Value::Nat(3)),
        (Prim::Abs, vec![(-2.5, Type::Real)], p(2.5)),
        (Prim::Signum, vec![(-3.0, Type::Int)], Value::Int(-1)),
        (Prim::Signum, vec![(0.0, Type::Real)], r(0.0)),
        (Prim::Signum, vec![(2.5, Type::Real)], r(1.0)),
        (Prim::Floor, vec![(2.75, Type::Prob)], Value::Nat(2)),
        (Prim::Floor, vec![(-2.25, Type::Real)], Value::Int(-3)),
        (
            Prim::Erf,
            vec![(0.5, Type::Real)],
            r(0.520_499_877_813_046_5),
        ),
        (
            Prim::Erf,
            vec![(0.5, Type::Prob)],
            p(0.520_499_877_813_046_5),
        ),
        (
            Prim::Choose,
            vec![(10.0, Type::Nat), (3.0, Type::Nat)],
            Value::Nat(120),
        ),
        (
            Prim::Choose,
            vec![(3.0, Type::Nat), (5.0, Type::Nat)],
            Value::Nat(0),
        ),
        (
            Prim::Choose,
            vec![(67.0, Type::Nat), (33.0, Type::Nat)],
            Value::Nat(14_226_520_737_620_288_370),
        ),
        (Prim::GammaFunc, vec![(5.0, Type::Real)], p(24.0)),
        (
            Prim::GammaFunc,
            vec![(0.5, Type::Real)],
            p(std::f64::consts::PI.sqrt()),
        ),
        (
            Prim::GammaFunc,
            vec![(-1.5, Type::Real)],
            p(4.0 * std::f64::consts::PI.sqrt() / 3.0),
        ),
        (
            Prim::BetaFunc,
            vec![(2.0, Type::Prob), (3.0, Type::Prob)],
            p(1.0 / 12.0),
        ),
        (
            Prim::Min,
            vec![(2.0, Type::Nat), (3.0, Type::Nat)],
            Value::Nat(2),
        ),
        (
            Prim::Max,
            vec![(-2.0, Type::Int), (3.0, Type::Int)],
            Value::Int(3),
        ),
        (
            Prim::Min,
            vec![(0.5, Type::Prob), (0.25, Type::Prob)],
            p(0.25),
        ),
        (
            Prim::Max,
            vec![(-0.5, Type::Real), (-0.25, Type::Real)],
            r(-0.25),
        ),
        (Prim::Sin, vec![(0.5, Type::Real)], r(0.5f64.sin())),
        (Prim::Cos, vec![(0.5, Type::Real)], r(0.5f64.cos())),
        (Prim::Tan, vec![(0.5, Type::Real)], r(0.5f64.tan())),
        (Prim::Asin, vec![(0.5, Type::Real)], r(0.5f64.asin())),
        (Prim::Acos, vec![(0.5, Type::Real)], r(0.5f64.acos())),
        (Prim::Atan, vec![(0.5, Type::Real)], r(0.5f64.atan())),
        (Prim::Sinh, vec![(0.5, Type::Real)], r(0.5f64.sinh())),
        (Prim::Cosh, vec![(0.5, Type::Real)], r(0.5f64.cosh())),
        (Prim::Tanh, vec![(0.5, Type::Real)], r(0.5f64.tanh())),
        (Prim::Asinh, vec![(0.5, Type::Real)], r(0.5f64.asinh())),
        (Prim::Acosh, vec![(1.5, Type::Real)], r(1.5f64.acosh())),
        (Prim::Atanh, vec![(0.5, Type::Real)], r(0.5f64.atanh())),
        (Prim::Asin, vec![(2.0, Type::Real)], r(f64::NAN)),
        (
            Prim::Lt,
            vec![(2.0, Type::Nat), (3.0, Type::Nat)],
            Value::Bool(true),
        ),
        (
            Prim::Le,
            vec![(3.0, Type::Int), (3.0, Type::Int)],
            Value::Bool(true),
        ),
        (
            Prim::Lt,
            vec![(0.5, Type::Prob), (0.25, Type::Prob)],
            Value::Bool(false),
        ),
        (
            Prim::Eq,
            vec![(0.5, Type::Real), (0.5, Type::Real)],
            Value::Bool(true),
        ),
        (
            Prim::Ne,
            vec![(1.0, Type::Nat), (2.0, Type::Nat)],
            Value::Bool(true),
        ),
    ];
    for (prim, args, want) in cases {
        let ts: Vec<_> = args.iter().map(|(x, t)| b.lit(*x, t.clone())).collect();
        let t = b.p(prim, ts);
        match b.eval(t) {
            Ok(v) => assert!(
                same(&v, &want),
                "{prim:?}{args:?}: got {v:?}, want {want:?}"
            ),
            Err(e) => panic!("{prim:?}{args:?}: {e}"),
        }
    }
}

#[test]
fn logic_primitives() {
    let mut b = B::new();
    let cases: Vec<(Prim, Vec<bool>, bool)> = vec![
        (Prim::And, vec![true, true, false], false),
        (Prim::And, vec![true, true], true),
        (Prim::Or, vec![false, false, true], true),
        (Prim::Or, vec![false, false], false),
        (Prim::Not, vec![true], false),
        (Prim::Xor, vec![true, false], true),
        (Prim::Xor, vec![true, true], false),
        (Prim::Iff, vec![false, false], true),
        (Prim::Impl, vec![true, false], false),
        (Prim::Impl, vec![false, false], true),
        (Prim::Nand, vec![true, true], false),
        (Prim::Nor, vec![false, false], true),
        (Prim::Eq, vec![true, false], false),
        (Prim::Lt, vec![false, true], true),
    ];
    for (prim, args, want) in cases {
        let ts: Vec<_> = args.iter().map(|x| b.boolean(*x)).collect();
        let t = b.p(prim, ts);
        check(&b, t, Value::Bool(want));
    }
}

#[test]
fn short_circuit_skips_errors() {
    let mut b = B::new();
    let f = b.boolean(false);
    let three = b.nat(3);
    let ten = b.nat(10);
    let arr = b.arr(vec![three], Type::Nat);
    let bad = b.index(arr, ten);
    let bad_cmp = b.p(Prim::Lt, vec![bad, three]);
    let and = b.p(Prim::And, vec![f, bad_cmp]);
    check(&b, and, Value::Bool(false));
    let or = b.p(Prim::Or, vec![bad_cmp, f]);
    check_err(&b, or, "index 10 is out of bounds for an array of size 1");
}

#[test]
fn primitive_errors() {
    let mut b = B::new();
    let big = b.nat(u64::MAX);
    let two = b.nat(2);
    let t = b.add(big, two);
    check_err(&b, t, "integer overflow");
    let t = b.p(Prim::Pow, vec![two, big]);
    check_err(&b, t, "integer overflow");
    let n = b.nat(100);
    let k = b.nat(50);
    let t = b.p(Prim::Choose, vec![n, k]);
    check_err(&b, t, "integer overflow in choose(100, 50)");
    let g = b.real(-0.5);
    let t = b.p(Prim::GammaFunc, vec![g]);
    check_err(&b, t, "cannot convert the negative number");
    let x = b.prob(2.0);
    let z = b.nat(0);
    let t = b.p(Prim::NatRoot, vec![x, z]);
    check_err(&b, t, "bad argument to natroot");
    let huge = b.prob(1e30);
    let t = b.p(Prim::Floor, vec![huge]);
    check_err(&b, t, "does not fit a nat");
    let minint = b.int(i64::MIN);
    let t = b.p(Prim::Neg, vec![minint]);
    check_err(&b, t, "integer overflow in negate");
}

#[test]
fn real_division_follows_ieee() {
    let mut b = B::new();
    let one = b.real(1.0);
    let zero = b.real(0.0);
    let rz = b.p(Prim::Recip, vec![zero]);
    let t = b.mul(one, rz);
    check(&b, t, r(f64::INFINITY));
    let t = b.mul(zero, rz);
    check(&b, t, r(f64::NAN));
    let nan = b.mul(zero, rz);
    let lt = b.p(Prim::Lt, vec![nan, one]);
    check(&b, lt, Value::Bool(false));
    // prob: 0 * ∞ = 0 (measure-theoretic convention).
    let pz = b.prob(0.0);
    let inf = b.p(Prim::Infinity, vec![]);
    let t = b.mul(pz, inf);
    check(&b, t, p(0.0));
}

#[test]
fn coercions() {
    let mut b = B::new();
    let cases: Vec<(Coercion, f64, Type, Result<Value, &str>)> = vec![
        (Coercion::Nat2Int, 3.0, Type::Nat, Ok(Value::Int(3))),
        (
            Coercion::Nat2Int,
            1.8e19,
            Type::Nat,
            Err("integer overflow"),
        ),
        (Coercion::Nat2Prob, 3.0, Type::Nat, Ok(p(3.0))),
        (Coercion::Nat2Real, 3.0, Type::Nat, Ok(r(3.0))),
        (Coercion::Int2Real, -3.0, Type::Int, Ok(r(-3.0))),
        (Coercion::Prob2Real, 0.5, Type::Prob, Ok(r(0.5))),
        (Coercion::Int2Nat, 3.0, Type::Int, Ok(Value::Nat(3))),
        (
            Coercion::Int2Nat,
            -3.0,
            Type::Int,
            Err("cannot convert the negative number -3 to nat"),
        ),
        (Coercion::Real2Prob, 0.5, Type::Real, Ok(p(0.5))),
        (
            Coercion::Real2Prob,
            -0.5,
            Type::Real,
            Err("cannot convert the negative number -0.5 to prob"),
        ),
        (Coercion::Real2Int, -2.5, Type::Real, Ok(Value::Int(-3))),
        (Coercion::Real2Int, 2.5, Type::Real, Ok(Value::Int(2))),
        (
            Coercion::Real2Int,
            1e300,
            Type::Real,
            Err("does not fit an int"),
        ),
    ];
    for (c, x, ty, want) in cases {
        let lit = b.lit(x, ty);
        let t = b.coerce(c, lit);
        match want {
            Ok(v) => check(&b, t, v),
            Err(m) => check_err(&b, t, m),
        }
    }
}

#[test]
fn literals() {
    let mut b = B::new();
    let t = b.s.lit(common::ratio(1.0) / common::ratio(3.0), Type::Prob);
    check(&b, t, p(1.0 / 3.0));
    // 10^-400 underflows f64 but its log does not.
    let tiny = num_rational::BigRational::new(1.into(), num_bigint::BigInt::from(10).pow(400));
    let t = b.s.lit(tiny, Type::Prob);
    match b.eval(t) {
        Ok(Value::Prob(l)) => assert!((l - (-400.0 * 10f64.ln())).abs() < 1e-9, "{l}"),
        other => panic!("{other:?}"),
    }
    let t = b.s.lit(common::ratio(0.5), Type::Nat);
    check_err(&b, t, "not an integer");
    let t = b.s.lit(common::ratio(1e20), Type::Int);
    check_err(&b, t, "integer overflow");
}

#[test]
fn binders_functions_and_patterns() {
    let mut b = B::new();
    // let x = 3 in x * x
    let (x, xt) = b.var("x", Type::Nat);
    let three = b.nat(3);
    let sq = b.mul(xt, xt);
    let t = b.let_(x, three, sq);
    check(&b, t, Value::Nat(9));
    // (fn y real: fn z real: y - z)(5)(2) = 3
    let (y, yt) = b.var("y", Type::Real);
    let (z, zt) = b.var("z", Type::Real);
    let nz = b.p(Prim::Neg, vec![zt]);
    let diff = b.add(yt, nz);
    let inner = b.lam(z, diff);
    let f = b.lam(y, inner);
    let five = b.real(5.0);
    let two = b.real(2.0);
    let a1 = b.app(f, five);
    let a2 = b.app(a1, two);
    check(&b, a2, r(3.0));
    // apply_args on the closure
    let fv = b.eval(f).unwrap_or_else(|e| panic!("{e}"));
    let out = slic_semantics::apply_args(&b.s, &fv, &[r(5.0), r(2.0)]);
    assert_eq!(out, Ok(r(3.0)));
    let too_many = slic_semantics::apply_args(&b.s, &fv, &[r(5.0), r(2.0), r(1.0)]);
    assert!(
        matches!(too_many, Err(EvalError::NotAFunction { .. })),
        "{too_many:?}"
    );
    // if
    let c = b.p(Prim::Lt, vec![two, five]);
    let t = b.if_(c, five, two);
    check(&b, t, r(5.0));
    // match on pairs, either, maybe, bool, unit, wildcard
    let pr = b.pair(five, two);
    let (u, ut) = b.var("u", Type::Real);
    let (v, vt) = b.var("v", Type::Real);
    let body = b.add(ut, vt);
    let t = b.match_(
        pr,
        vec![(
            Pattern::Pair(Box::new(Pattern::Var(u)), Box::new(Pattern::Var(v))),
            body,
        )],
    );
    check(&b, t, r(7.0));
    let rt = b.right(Type::Nat, two);
    let (w, wt) = b.var("w", Type::Real);
    let zero = b.real(0.0);
    let t = b.match_(
        rt,
        vec![
            (Pattern::Left(Box::new(Pattern::Wild)), zero),
            (Pattern::Right(Box::new(Pattern::Var(w))), wt),
        ],
    );
    check(&b, t, r(2.0));
    let nothing = b.nothing(Type::Real);
    let (q, qt) = b.var("q", Type::Real);
    let t = b.match_(
        nothing,
        vec![
            (Pattern::Just(Box::new(Pattern::Var(q))), qt),
            (Pattern::Nothing, zero),
        ],
    );
    check(&b, t, r(0.0));
    let jt = b.just(five);
    let t = b.match_(
        jt,
        vec![
            (Pattern::Nothing, zero),
            (Pattern::Just(Box::new(Pattern::Var(q))), qt),
        ],
    );
    check(&b, t, r(5.0));
    let tt = b.boolean(true);
    let t = b.match_(
        tt,
        vec![(Pattern::Bool(false), zero), (Pattern::Bool(true), two)],
    );
    check(&b, t, r(2.0));
    let un = b.unit();
    let t = b.match_(un, vec![(Pattern::Unit, two)]);
    check(&b, t, r(2.0));
    let t = b.match_(tt, vec![(Pattern::Bool(false), zero)]);
    check_err(&b, t, "no match branch accepts true");
    let left = b.left(five, Type::Nat);
    let t = b.match_(left, vec![(Pattern::Wild, two)]);
    check(&b, t, r(2.0));
    // unbound variable
    let (_, free) = b.var("free", Type::Real);
    check_err(&b, free, "variable free has no value");
}

#[test]
fn arrays_and_reduce() {
    let mut b = B::new();
    let (i, it) = b.var("i", Type::Nat);
    let n = b.nat(4);
    let sq = b.mul(it, it);
    let a = b.array(i, n, sq);
    check(
        &b,
        a,
        Value::array((0..4).map(|k| Value::Nat(k * k)).collect()),
    );
    let size = b.p(Prim::Size, vec![a]);
    check(&b, size, Value::Nat(4));
    let two = b.nat(2);
    let ix = b.index(a, two);
    check(&b, ix, Value::Nat(4));
    let ix = b.index(a, n);
    check_err(&b, ix, "index 4 is out of bounds for an array of size 4");
    let empty = b.arr(vec![], Type::Nat);
    let zero = b.nat(0);
    let ix = b.index(empty, zero);
    check_err(&b, ix, "out of bounds for an array of size 0");
    // reduce(fn x: fn y: x + y, 0, a) = 0 + 1 + 4 + 9
    let (x, xt) = b.var("x", Type::Nat);
    let (y, yt) = b.var("y", Type::Nat);
    let s = b.add(xt, yt);
    let fy = b.lam(y, s);
    let f = b.lam(x, fy);
    let red = b.p(Prim::Reduce, vec![f, zero, a]);
    check(&b, red, Value::Nat(14));
    let lit = b.arr(vec![two, zero], Type::Nat);
    check(&b, lit, Value::array(vec![Value::Nat(2), Value::Nat(0)]));
}

#[test]
fn sums_and_products() {
    let mut b = B::new();
    let (i, it) = b.var("i", Type::Nat);
    let lo = b.nat(1);
    let hi = b.nat(5);
    let s = b.summate(i, lo, hi, it);
    check(&b, s, Value::Nat(10)); // 1+2+3+4 (hi exclusive)
    let pr = b.product(i, lo, hi, it);
    check(&b, pr, Value::Nat(24));
    let empty = b.summate(i, hi, lo, it);
    check(&b, empty, Value::Nat(0));
    let empty_p = b.product(i, hi, lo, it);
    check(&b, empty_p, Value::Nat(1));
    // prob sums in log space: Σ_{k=0}^{999} (1/2)^k ≈ 2
    let half = b.prob(0.5);
    let pw = b.p(Prim::Pow, vec![half, it]);
    let zero = b.nat(0);
    let thousand = b.nat(1000);
    let geo = b.summate(i, zero, thousand, pw);
    check(&b, geo, p(2.0));
    // product of 2000 halves underflows f64 but not in log space
    let n2000 = b.nat(2000);
    let tiny = b.product(i, zero, n2000, half);
    match b.eval(tiny) {
        Ok(Value::Prob(l)) => assert!((l - 2000.0 * 0.5f64.ln()).abs() < 1e-9),
        other => panic!("{other:?}"),
    }
    // int index with negative bounds: Σ_{k=-3}^{2} k = -3
    let (k, kt) = b.var("k", Type::Int);
    let m3 = b.int(-3);
    let p3 = b.int(3);
    let s = b.summate(k, m3, p3, kt);
    check(&b, s, Value::Int(-3));
    // real sums are compensated
    let (j, jt) = b.var("j", Type::Nat);
    let tenth = b.real(0.1);
    let jr = b.coerce(Coercion::Nat2Real, jt);
    let _ = jr;
    let n = b.nat(100_000);
    let s = b.summate(j, zero, n, tenth);
    check(&b, s, r(10_000.0));
}

#[test]
fn budgets_refuse_huge_loops() {
    let mut b = B::new();
    let (i, it) = b.var("i", Type::Nat);
    let zero = b.nat(0);
    let big = b.nat(1_000_000_000_000);
    let s = b.summate(i, zero, big, it);
    check_err(
        &b,
        s,
        "evaluation budget exceeded: summate needs 1000000000000 iterations",
    );
    let a = b.array(i, big, it);
    check_err(&b, a, "evaluation budget exceeded");
    let small = EvalConfig {
        max_iterations: 10,
        ..EvalConfig::default()
    };
    let n = b.nat(11);
    let s = b.summate(i, zero, n, it);
    let mut interp = Interp::new(&b.s, small);
    let r = interp.eval(s, &slic_semantics::Env::new());
    assert!(matches!(r, Err(EvalError::Budget { .. })), "{r:?}");
}

#[test]
fn deep_terms_are_budget_errors_not_crashes() {
    let mut b = B::new();
    // 100,000 nested lets: tail position, so no recursion.
    let mut t = b.nat(1);
    let mut vars = Vec::new();
    for _ in 0..100_000 {
        vars.push(b.var("x", Type::Nat));
    }
    let one = b.nat(1);
    for (v, _) in vars.iter().rev() {
        t = b.let_(*v, one, t);
    }
    check(&b, t, Value::Nat(1));
    // 100,000 nested negations: refused by the depth limit, in a small stack.
    let mut t = b.int(1);
    for _ in 0..100_000 {
        t = b.p(Prim::Neg, vec![t]);
    }
    let s = b.s.clone();
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            slic_semantics::eval(&s, t, &slic_semantics::Env::new())
                .map(|v| v.to_string())
                .map_err(|e| e.to_string())
        });
    let out = handle
        .unwrap_or_else(|e| panic!("{e}"))
        .join()
        .unwrap_or_else(|_| panic!("crashed"));
    match out {
        Err(e) => assert!(e.contains("nested deeper than"), "{e}"),
        Ok(v) => panic!("{v:?}"),
    }
}

#[test]
fn integrals() {
    let mut b = B::new();
    let (x, xt) = b.var("x", Type::Real);
    let zero = b.real(0.0);
    let one = b.real(1.0);
    let x2 = b.mul(xt, xt);
    let t = b.integrate(x, zero, one, x2);
    match b.eval(t) {
        Ok(Value::Real(v)) => assert!((v - 1.0 / 3.0).abs() < 1e-9, "{v}"),
        other => panic!("{other:?}"),
    }
    // reversed bounds negate
    let t = b.integrate(x, one, zero, x2);
    match b.eval(t) {
        Ok(Value::Real(v)) => assert!((v + 1.0 / 3.0).abs() < 1e-9, "{v}"),
        other => panic!("{other:?}"),
    }
    // ∫_{-∞}^{∞} exp(-x^2) dx = √π (prob-valued body)
    let inf = b.p(Prim::Infinity, vec![]);
    let hi = b.coerce(Coercion::Prob2Real, inf);
    let lo = b.p(Prim::Neg, vec![hi]);
    let nx2 = b.p(Prim::Neg, vec![x2]);
    let g = b.p(Prim::Exp, vec![nx2]);
    let t = b.integrate(x, lo, hi, g);
    match b.eval(t) {
        Ok(Value::Prob(l)) => assert!((l.exp() - std::f64::consts::PI.sqrt()).abs() < 1e-9),
        other => panic!("{other:?}"),
    }
    // A divergent integral does not converge: an error, not a wrong number.
    let rx = b.p(Prim::Recip, vec![xt]);
    let t = b.integrate(x, zero, one, rx);
    check_err(&b, t, "numeric integration failed");
    // ∫_0^1 ∫_0^1 x y dy dx = 1/4 (nested)
    let (y, yt) = b.var("y", Type::Real);
    let xy = b.mul(xt, yt);
    let inner = b.integrate(y, zero, one, xy);
    let t = b.integrate(x, zero, one, inner);
    match b.eval(t) {
        Ok(Value::Real(v)) => assert!((v - 0.25).abs() < 1e-9, "{v}"),
        other => panic!("{other:?}"),
    }
    let _ = num(&r(0.0));
}

#[test]
fn buckets_follow_the_reducer_semantics() {
    let mut b = B::new();
    let ys: Vec<_> = [2u64, 0, 2, 1, 7].iter().map(|&y| b.nat(y)).collect();
    let yarr = b.arr(ys, Type::Nat);
    let ss: Vec<_> = [0.5, 1.0, 2.0, 4.0, 8.0]
        .iter()
        .map(|&s| b.real(s))
        .collect();
    let sarr = b.arr(ss, Type::Real);
    let (j, jt) = b.var("j", Type::Nat);
    let zero = b.nat(0);
    let five = b.nat(5);
    let three = b.nat(3);
    let one_nat = b.nat(1);
    // count: bucket j: r_add 1 = 5
    let radd1 = b.r_add(one_nat);
    let t = b.bucket(j, zero, five, radd1);
    check(&b, t, Value::Nat(5));
    // histogram of ys with 3 buckets (y = 7 is out of range: ignored, eq. (32))
    let (bv, _) = b.var("b", Type::Nat);
    let yj = b.index(yarr, jt);
    let sj = b.index(sarr, jt);
    let rs = b.r_add(sj);
    let hist = b.r_index(bv, three, yj, rs);
    let t = b.bucket(j, zero, five, hist);
    check(&b, t, Value::array(vec![r(1.0), r(4.0), r(2.5)]));
    // r_split on y == 2: (sum of s where y = 2, count of the others)
    let two = b.nat(2);
    let c = b.p(Prim::Eq, vec![yj, two]);
    let cnt = b.r_add(one_nat);
    let split = b.r_split(c, rs, cnt);
    let t = b.bucket(j, zero, five, split);
    check(&b, t, Value::pair(r(2.5), Value::Nat(3)));
    // r_fanout: both sides see every j
    let fan = b.r_fanout(rs, cnt);
    let t = b.bucket(j, zero, five, fan);
    check(&b, t, Value::pair(r(15.5), Value::Nat(5)));
    // r_nop
    let nop = b.r_nop();
    let t = b.bucket(j, zero, five, nop);
    check(&b, t, Value::Unit);
    // ragged nested r_index: bucket b has b+1 sub-buckets, inner index 0
    let (b2, b2t) = b.var("b2", Type::Nat);
    let (c2, _) = b.var("c2", Type::Nat);
    let size_inner = b.add(b2t, one_nat);
    let inner = b.r_index(c2, size_inner, zero, cnt);
    let outer = b.r_index(b2, three, yj, inner);
    let t = b.bucket(j, zero, five, outer);
    check(
        &b,
        t,
        Value::array(vec![
            Value::array(vec![Value::Nat(1)]),
            Value::array(vec![Value::Nat(1), Value::Nat(0)]),
            Value::array(vec![Value::Nat(2), Value::Nat(0), Value::Nat(0)]),
        ]),
    );
    // an empty range gives the identity
    let t = b.bucket(j, five, zero, hist);
    check(&b, t, Value::array(vec![r(0.0), r(0.0), r(0.0)]));
    // a reducer outside bucket is an error
    check_err(&b, rs, "only meaningful inside bucket");
}

#[test]
fn measures_evaluate_to_values_without_sampling() {
    let mut b = B::new();
    let m = b.normal(0.0, 1.0);
    assert!(matches!(b.eval(m), Ok(Value::Measure(_))));
    // a bad parameter is only found when the measure is used
    let bad = b.normal(0.0, 0.0);
    assert!(matches!(b.eval(bad), Ok(Value::Measure(_))));
}

/// The interpreter names the innermost term where an error happened, which the span map of
/// the front end turns into the source text (issue: run-time errors carry file:line:col).
#[test]
fn errors_name_the_term_where_they_happened() {
    #[rustfmt::skip]
    let table: [(&str, &str, &str); 4] = [
        ("x = [1, 2]\ny = 3\nx[y] + 1", "x[y]", "index 3 is out of bounds"),
        ("fn t real:\nz = real2prob(t - 5) + 1\nz", "real2prob(t - 5)", "negative number -4"),
        ("fn t real:\nsummate i from 0 to 3: [t, 2][i]", "[t, 2][i]", "index 2 is out of bounds"),
        ("fn t real:\nt + 1", "", ""),
    ];
    for (src, at, says) in table {
        let mut store = slic_algebra::Store::new();
        let (t, spans) = slic_algebra::front::load_with_spans(&mut store, src).expect("loads");
        let mut interp = Interp::new(&store, EvalConfig::default());
        let r = interp
            .eval(t, &slic_semantics::Env::new())
            .and_then(|f| interp.apply_args(&f, &[Value::Real(1.0)]));
        match r {
            Ok(v) => assert!(at.is_empty(), "{src}: no error, value {v:?}"),
            Err(e) => {
                assert!(e.to_string().contains(says), "{src}: {e}");
                let site = interp.error_site(&e).and_then(|s| spans.get(s));
                let shown = site.map(|s| &src[s.range()]);
                assert_eq!(shown, Some(at), "{src}");
                // a different error is not taken for this one
                let other = EvalError::NoMatch { value: "x".into() };
                assert_eq!(interp.error_site(&other), None);
            }
        }
    }
}
