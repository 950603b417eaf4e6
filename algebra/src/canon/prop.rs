//! Property tests of canonical forms (issue 3): on random arithmetic expressions over
//! two reals and a prob (`+ - * / ^ exp log sqrt`, literals), canonicalisation verifies,
//! round-trips through the printer, is idempotent, and evaluates equal to its input at
//! random points (relative 1e-9 against the largest intermediate value, skipping points
//! where the input is undefined or not finite). `eval::eval_f64` is the oracle; a small
//! local walk over arithmetic terms supplies the magnitude bound and the strict reading of
//! `real2prob` (a negative argument makes the input undefined there).

use proptest::prelude::*;

use super::*;
use crate::alpha::alpha_eq;
use crate::eval::eval_f64;
use crate::term::{Node, Prim};
use crate::types::Coercion;
use crate::verify::verify;
use crate::{front, print};

/// A random expression; rendered with the coercions its position needs.
#[derive(Clone, Debug)]
enum E {
    X,
    Y,
    P,
    Lit(u8),
    Half,
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
    Div(Box<E>, Box<E>),
    Pow(Box<E>, u8),
    Exp(Box<E>),
    Log(Box<E>),
    Sqrt(Box<E>),
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        Just(E::X),
        Just(E::Y),
        Just(E::P),
        (1u8..4).prop_map(E::Lit),
        Just(E::Half),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let b = move || inner.clone().prop_map(Box::new);
        prop_oneof![
            (b(), b()).prop_map(|(a, c)| E::Add(a, c)),
            (b(), b()).prop_map(|(a, c)| E::Sub(a, c)),
            (b(), b()).prop_map(|(a, c)| E::Mul(a, c)),
            (b(), b()).prop_map(|(a, c)| E::Div(a, c)),
            (b(), 0u8..4).prop_map(|(a, n)| E::Pow(a, n)),
            b().prop_map(E::Exp),
            b().prop_map(E::Log),
            b().prop_map(E::Sqrt),
        ]
    })
}

/// `e` as `.hk` text of type prob (`prob`) or real.
fn render(e: &E, prob: bool) -> String {
    let bin = |a: &E, op: &str, c: &E, p: bool| format!("({} {op} {})", render(a, p), render(c, p));
    match e {
        E::X if prob => "real2prob(x)".into(),
        E::Y if prob => "real2prob(y)".into(),
        E::X => "x".into(),
        E::Y => "y".into(),
        E::P if prob => "p".into(),
        E::P => "prob2real(p)".into(),
        E::Lit(n) => n.to_string(),
        E::Half => "(1/2)".into(),
        E::Add(a, c) => bin(a, "+", c, prob),
        E::Mul(a, c) => bin(a, "*", c, prob),
        E::Div(a, c) => bin(a, "/", c, prob),
        E::Sub(a, c) if prob => format!("real2prob({})", bin(a, "-", c, false)),
        E::Sub(a, c) => bin(a, "-", c, false),
        E::Pow(a, n) => format!("({} ^ {n})", render(a, prob)),
        E::Exp(a) if prob => format!("exp({})", render(a, false)),
        E::Exp(a) => format!("prob2real(exp({}))", render(a, false)),
        E::Log(a) if prob => format!("real2prob(log({}))", render(a, true)),
        E::Log(a) => format!("log({})", render(a, true)),
        E::Sqrt(a) if prob => format!("sqrt({})", render(a, true)),
        E::Sqrt(a) => format!("prob2real(sqrt({}))", render(a, true)),
    }
}

/// The value of an arithmetic term, and the largest magnitude met on the way; `None`
/// where undefined. `strict`: `real2prob` of a negative is undefined (the input's
/// meaning); otherwise it passes the value (canonical forms may move the guard).
fn eval(
    s: &Store,
    t: TermId,
    env: &dyn Fn(&str) -> f64,
    strict: bool,
    big: &mut f64,
) -> Option<f64> {
    let ev = |u: TermId, big: &mut f64| eval(s, u, env, strict, big);
    let v = match s.node(t) {
        Node::Var(v) => env(s.var_name(*v)),
        Node::Lit(q) => q.to_f64(),
        Node::Coerce(c, a) => {
            let x = ev(*a, big)?;
            match c {
                Coercion::Real2Prob if strict && x < 0.0 => return None,
                Coercion::Real2Int => x.floor(),
                _ => x,
            }
        }
        Node::Prim(p, args) => {
            let mut xs = Vec::with_capacity(args.len());
            for &a in args {
                xs.push(ev(a, big)?);
            }
            match (p, xs.as_slice()) {
                (Prim::Add, _) => xs.iter().sum(),
                (Prim::Mul, _) => xs.iter().product(),
                (Prim::Neg, [a]) => -a,
                (Prim::Recip, [a]) => 1.0 / a,
                (Prim::Pow, [a, n]) => a.powi(*n as i32),
                (Prim::RealPow, [a, b]) => a.powf(*b),
                (Prim::NatRoot, [a, n]) => a.powf(1.0 / n),
                (Prim::Exp, [a]) => a.exp(),
                (Prim::Log, [a]) => a.ln(),
                (Prim::Sqrt, [a]) => a.sqrt(),
                (Prim::Pi, []) => std::f64::consts::PI,
                _ => return None,
            }
        }
        _ => return None,
    };
    if !v.is_finite() {
        return None;
    }
    *big = big.max(v.abs());
    Some(v)
}

fn run(src: &str, points: &[(f64, f64, f64)]) -> Result<(), TestCaseError> {
    let mut s = Store::new();
    let t = match front::load(&mut s, src) {
        Ok(t) => t,
        // e.g. a literal division by zero: not a well-formed input
        Err(_) => return Ok(()),
    };
    let c = canonicalize(&mut s, &Context::new(), t);
    prop_assert!(
        verify(&s, c).is_ok(),
        "output does not verify: {}",
        print::print_term(&s, c)
    );
    prop_assert_eq!(
        canonicalize(&mut s, &Context::new(), c),
        c,
        "not idempotent"
    );
    let printed = print::print_term(&s, c);
    let back = front::load(&mut s, &printed);
    prop_assert!(
        matches!(back, Ok(b) if alpha_eq(&s, c, b)),
        "no round trip:\n{}",
        printed
    );
    let (mut bt, mut bc) = (t, c);
    while let (Node::Lam(_, x), Node::Lam(_, y)) = (s.node(bt), s.node(bc)) {
        (bt, bc) = (*x, *y);
    }
    for &(x, y, p) in points {
        let env = |n: &str| match n {
            "x" => x,
            "y" => y,
            _ => p,
        };
        let by_id = |v: crate::term::VarId| Some(env(s.var_name(v)));
        // the largest intermediate magnitude (local walk) bounds the rounding error
        let mut big = 1.0f64;
        let Some(a) = eval(&s, bt, &env, true, &mut big) else {
            continue;
        };
        if a.abs() > 1e9 || big > 1e9 {
            continue;
        }
        // ill-conditioned points (near a pole, `x / (2 + x)^3` at x = -1.997) are skipped:
        // there a change of the arguments in their last digits moves the value by more
        // than the tolerance, so equal forms evaluated in another order differ as much
        let nudge = |v: f64| v + 1e-12 * v.abs().max(1.0);
        let env2 = |n: &str| match n {
            "x" => nudge(x),
            "y" => nudge(y),
            _ => nudge(p),
        };
        let mut big2 = 1.0f64;
        match eval(&s, bt, &env2, true, &mut big2) {
            Some(a2) if (a2 - a).abs() <= 1e-9 * big.max(a.abs()) => {}
            _ => continue,
        }
        // the crate's evaluator is the oracle for both sides
        let (Some(ea), Some(b)) = (eval_f64(&s, bt, &by_id), eval_f64(&s, bc, &by_id)) else {
            return Err(TestCaseError::fail(format!(
                "undefined at {x}, {y}, {p}: {src} or {printed}"
            )));
        };
        let _ = eval(&s, bc, &env, false, &mut big);
        let tol = 1e-9 * big.max(ea.abs()).max(b.abs());
        prop_assert!(
            (a - ea).abs() <= tol,
            "local {} and eval_f64 {} disagree on {}",
            a,
            ea,
            src
        );
        prop_assert!(
            (ea - b).abs() <= tol,
            "{} = {} but canonical {} = {} at x={}, y={}, p={}",
            src,
            ea,
            printed,
            b,
            x,
            y,
            p
        );
    }
    Ok(())
}

proptest! {
    // 400 cases by default (well under a second); PROPTEST_CASES overrides
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)))]
    #[test]
    fn canonical_forms_keep_meaning(e in expr(), prob in any::<bool>(), pts in proptest::collection::vec((-2.0f64..2.0, -2.0f64..2.0, 0.05f64..3.0), 4)) {
        // the body at type real or prob: both arithmetic write-backs are exercised
        let src = format!("fn x real: fn y real: fn p prob: {}", render(&e, prob));
        run(&src, &pts)?;
    }
}
