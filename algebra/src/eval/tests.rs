//! Tables for the evaluators: `.hk` text through `front::load`, then the exact value (or
//! `none`), or the `f64` value within 1e-12 relative (or `none`/`nan`).

use super::*;
use crate::front;

/// Loads `src` and peels leading `fn`s: the body and the parameters, in order.
fn load(store: &mut Store, src: &str) -> (TermId, Vec<VarId>) {
    let mut t = front::load(store, src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
    let mut params = Vec::new();
    while let Node::Lam(v, body) = store.node(t) {
        params.push(*v);
        t = *body;
    }
    (t, params)
}

/// The exact value of a closed term as text: a rational, `true`/`false`, or `none`.
fn exact(src: &str) -> String {
    let mut s = Store::new();
    let (t, _) = load(&mut s, src);
    let text = if *s.ty(t) == Type::Bool {
        eval_bool_exact(&s, t).map(|b| b.to_string())
    } else {
        eval_exact(&s, t).map(|q| q.to_string())
    };
    text.unwrap_or_else(|| "none".into())
}

fn check_exact(src: &str, want: &str) {
    assert_eq!(exact(src), want, "{src}");
}

#[test]
fn exact_table() {
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("1/2 + 1/3", "5/6"),
        ("3 - 5", "-2"),
        ("2 ^ 10", "1024"),
        ("(1/2) ^ 3", "1/8"),
        ("(-2/3) ^ 3", "-8/27"),
        ("1/2 / (3/4)", "2/3"),
        ("recip(0)", "none"),
        ("sqrt(4)", "2"),
        ("sqrt(9/4)", "3/2"),
        ("sqrt(2)", "none"),
        ("natroot(27, 3)", "3"),
        ("natroot(27, 0)", "none"),
        ("4 ** (1/2)", "2"),
        ("8 ** (2/3)", "4"),
        ("4 ** (-1/2)", "1/2"),
        ("2 ** (1/2)", "none"),
        ("exp(0)", "1"),
        ("exp(1)", "none"),
        ("log(1)", "0"),
        ("sin(0) + cos(0) + erf(0)", "1"),
        ("pi", "none"),
        ("∞", "none"),
        ("floor(7/2)", "3"),
        ("floor(-7/2)", "-4"),
        ("abs(-3)", "3"),
        ("signum(-2/3)", "-1"),
        ("min(3, 5) + max(-1, -2)", "2"),
        ("choose(5, 2)", "10"),
        ("choose(2, 5)", "0"),
        ("choose(50, 25)", "126410606437752"),
        ("choose(100, 50)", "100891344545564193334812497256"),
        ("gammaFunc(5)", "24"),
        ("gammaFunc(0)", "none"),
        ("gammaFunc(1/2)", "none"),
        ("betaFunc(2, 3)", "1/12"),
        ("int2nat(3 - 1)", "2"),
        ("int2nat(1 - 3)", "none"),
        ("real2prob(-1/2)", "none"),
        ("real2prob(+1/2)", "1/2"),
        ("real2int(-5/2)", "-3"),
        ("nat2real(3) * (-1/3)", "-1"),
        ("if 1 < 2: 3 else: 4", "3"),
        ("if 2 < 1: 3 else: 4", "4"),
        ("if pi < 4: 1 else: 0", "none"),
        ("x = 3\nx * x", "9"),
        ("x = sqrt(2)\n7", "7"),
        ("x = sqrt(2)\nx * x", "none"),
        ("summate i from 0 to 10: i", "45"),
        ("summate i from 5 to 2: i", "0"),
        ("product i from 1 to 6: i", "120"),
        ("summate i from 0 to 4: (1/2) ^ i", "15/8"),
        ("summate i from 0 to 3: summate j from 0 to i: i * j", "2"),
        ("summate i from 0 to 2000000: i", "none"),
        ("summate i from 0 to 1000: summate j from 0 to 1000: 1", "none"),
        ("size([1, 2, 3])", "3"),
        ("[1/2, 1/3][1]", "1/3"),
        ("[1/2, 1/3][2]", "none"),
        ("(array i of 5: i * i)[3]", "9"),
        ("size(array i of 7: i)", "7"),
        ("a = array i of 4: i + 1\nsummate j from 0 to size(a): a[j]", "10"),
        ("reduce(fn a nat: fn b nat: a + b, 0, [1, 2, 3])", "6"),
        ("9223372036854775807 + 1", "9223372036854775808"),
        ("4611686018427387904 * 4611686018427387904", "21267647932558653966460912964485513216"),
        ("2 ^ 100000000", "none"),
        ("simplify(1 + 1)", "2"),
        ("1 < 2 && 2 < 1", "false"),
        ("not(1 == 1) || 3 /= 4", "true"),
        ("2 < 1 && recip(0) == 1", "false"),
        ("recip(0) == 1 && 2 < 1", "none"),
        ("xor(true, false)", "true"),
        ("impl(true, false)", "false"),
        ("1/3 == 2/6", "true"),
        ("-1/2 <= -1/2", "true"),
        ("normal(0, 1)", "none"),
    ];
    for &(src, want) in rows {
        check_exact(src, want);
    }
}

/// `f64` expectations: a number, `nan` or `none`.
fn check_f64(src: &str, args: &[f64], want: &str) {
    let mut s = Store::new();
    let (t, params) = load(&mut s, src);
    let env = |v: VarId| params.iter().position(|p| *p == v).map(|i| args[i]);
    let got = if *s.ty(t) == Type::Bool {
        eval_bool_f64(&s, t, &env).map(|b| if b { 1.0 } else { 0.0 })
    } else {
        eval_f64(&s, t, &env)
    };
    match (want, got) {
        ("none", None) => {}
        ("nan", Some(x)) if x.is_nan() => {}
        (_, Some(x)) => {
            let w: f64 = want
                .parse()
                .unwrap_or_else(|_| panic!("{src}: got {x}, want {want}"));
            let ok = x == w || (x - w).abs() <= 1e-12 * w.abs().max(1e-300);
            assert!(ok, "{src}: got {x}, want {w}");
        }
        (_, None) => panic!("{src}: got none, want {want}"),
    }
}

#[test]
fn f64_table() {
    use std::f64::consts::{E, FRAC_PI_2, LN_2, PI, SQRT_2};
    let num = |x: f64| x.to_string();
    #[rustfmt::skip]
    let rows: Vec<(&str, String)> = vec![
        ("exp(1)", num(E)),
        ("log(2)", num(LN_2)),
        ("log(0)", num(f64::NEG_INFINITY)),
        ("sqrt(2)", num(SQRT_2)),
        ("pi", num(PI)),
        ("pi * 2 - pi", num(PI)),
        ("erf(1/2)", "0.5204998778130465".into()),
        ("erf(-1/2)", "-0.5204998778130465".into()),
        ("gammaFunc(1/2)", num(PI.sqrt())),
        ("gammaFunc(5)", "24".into()),
        ("gammaFunc(0)", "inf".into()),
        ("gammaFunc(-1/2)", "none".into()),
        ("betaFunc(1/2, 1/2)", num(PI)),
        ("betaFunc(2, 3)", num(1.0 / 12.0)),
        ("sin(pi / 2)", "1".into()),
        ("cos(0)", "1".into()),
        ("tan(1)", "1.5574077246549023".into()),
        ("atan(1) * 4", num(PI)),
        ("asin(1)", num(FRAC_PI_2)),
        ("acos(0)", num(FRAC_PI_2)),
        ("sinh(1)", "1.1752011936438014".into()),
        ("cosh(1)", "1.5430806348152437".into()),
        ("tanh(1)", "0.7615941559557649".into()),
        ("asinh(1)", "0.881373587019543".into()),
        ("acosh(2)", "1.3169578969248166".into()),
        ("atanh(1/2)", "0.5493061443340549".into()),
        ("natroot(8, 3)", "2".into()),
        ("natroot(16, 4)", "2".into()),
        ("natroot(2, 0)", "none".into()),
        ("2 ** (1/2)", num(SQRT_2)),
        ("0 ** 0", "1".into()),
        ("choose(10, 3)", "120".into()),
        ("choose(3, 10)", "0".into()),
        ("∞", "inf".into()),
        ("exp(-∞)", "0".into()),
        ("0 * ∞", "0".into()),
        ("recip(0)", "inf".into()),
        ("log(0) - log(0)", "nan".into()),
        ("summate i from 1 to 101: 1 / i", "5.187377517639621".into()),
        ("product i from 1 to 11: i", "3628800".into()),
        ("summate i from 0 to 3000000: i", "none".into()),
        ("if pi > 3: 1 else: 0", "1".into()),
        ("pi > 3 && pi < 22/7", "1".into()),
        ("max(1/2, 1/3) + min(1/2, 1/3)", num(0.5 + 1.0 / 3.0)),
        ("floor(pi)", "3".into()),
        ("abs(-2.5)", "2.5".into()),
        ("signum(-2.5)", "-1".into()),
        ("real2int(-2.5)", "-3".into()),
        ("real2prob(-2.5)", "none".into()),
        ("(array i of 4: sqrt(i))[2]", num(SQRT_2)),
        ("size([1, 2])", "2".into()),
        ("x = pi\nx * x", num(PI * PI)),
        ("fn x real: x * x + 1", "10".into()),
        ("fn x real: fn y prob: x * y", "1".into()),
        ("fn x real: exp(x) * exp(-x)", "1".into()),
        ("fn n nat: summate i from 0 to n: i", "10".into()),
        ("fn z real: w", "none".into()),
        ("return 1", "none".into()),
    ];
    let args: &[(&str, &[f64])] = &[
        ("fn x real: x * x + 1", &[3.0]),
        ("fn x real: fn y prob: x * y", &[2.0, 0.5]),
        ("fn x real: exp(x) * exp(-x)", &[0.7]),
        ("fn n nat: summate i from 0 to n: i", &[5.0]),
        ("fn z real: w", &[1.0]),
    ];
    for (src, want) in &rows {
        let a = args
            .iter()
            .find(|(s, _)| s == src)
            .map_or(&[][..], |(_, a)| a);
        if src.contains(": w") {
            // an unbound name is an elaboration error, not an evaluation one
            assert!(front::load(&mut Store::new(), src).is_err());
            continue;
        }
        check_f64(src, a, want);
    }
}

#[test]
fn free_arrays_through_the_value_environment() {
    let mut s = Store::new();
    let (t, params) = load(
        &mut s,
        "fn y array(real): summate j from 0 to size(y): y[j] * y[j]",
    );
    let y: Rc<[Value<f64>]> = [1.0, 2.0, 3.0].map(Value::Num).into();
    let env = |v: VarId| (v == params[0]).then(|| Value::Array(y.clone()));
    assert_eq!(eval_f64_value(&s, t, &env), Some(Value::Num(14.0)));
    let none = |_: VarId| None;
    assert_eq!(eval_f64_value(&s, t, &none), None);
}

#[test]
fn deep_terms_do_not_overflow_the_stack() {
    let mut s = Store::new();
    let mut t = s.int_lit(1, Type::Nat);
    let one = t;
    for _ in 0..50_000 {
        t = s.prim(Prim::Add, vec![t, one], Type::Nat);
    }
    // deeper than MAX_DEPTH: refused, not crashed
    assert_eq!(eval_exact(&s, t), None);
    let mut u = one;
    for _ in 0..5_000 {
        u = s.prim(Prim::Add, vec![u, one], Type::Nat);
    }
    assert_eq!(eval_exact(&s, u), Some(Rational::from_integer(5_001)));
}
