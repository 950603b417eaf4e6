//! The residual of a program at given arguments (issue 12, `slic-cas run`): the body of
//! `fn x1 T1: ... fn xn Tn: m` with every numeric subterm that reads only the parameters
//! evaluated by the reference interpreter and written as a number. A continuous posterior
//! then reads as what is left to sample: for LinearRegression, a weight, a gamma of two
//! numbers and two normals whose parameters are numbers and the draws before them.
//!
//! The numbers are for reading: reals are rounded to [`SIGNIFICANT`] significant digits,
//! a prob too small or too large for `f64` is written `exp(l)` with `l` its logarithm
//! (the interpreter keeps probs in log space, so a weight like `2^-5000` is not lost to
//! underflow), and integers are exact. A subterm the interpreter cannot evaluate (an
//! error at these arguments) is kept as written, its children folded; if a parameter is
//! still read anywhere (inside a loop over a drawn variable, say), there is no residual.

use std::collections::HashMap;

use num_bigint::BigInt;
use slic_algebra::num::Rational;
use slic_algebra::{vars, Node, Prim, Store, TermId, Type, VarId};

use crate::value::{Env, Value};

/// Significant digits of the reals and probs written into a residual.
pub const SIGNIFICANT: usize = 6;

/// The body of `program` (a chain of `fn`s, one per argument) with its parameters bound
/// to `args` and every numeric subterm that reads only them evaluated; `None` when
/// `program` does not take `args.len()` parameters or the result still reads one.
pub fn residual(store: &mut Store, program: TermId, args: &[Value]) -> Option<TermId> {
    let mut body = program;
    let mut env = Env::new();
    let mut params = Vec::with_capacity(args.len());
    for a in args {
        let Node::Lam(v, b) = *store.node(body) else {
            return None;
        };
        env = env.bind(v, a.clone());
        params.push(v);
        body = b;
    }
    let mut memo = HashMap::new();
    let folded = fold(store, body, &env, &params, &mut memo, 0)?;
    (!vars::mentions_any(store, folded, &params)).then_some(folded)
}

/// How deep [`fold`] descends before leaving a subterm as it is.
const MAX_DEPTH: usize = 2_000;

fn fold(
    store: &mut Store,
    t: TermId,
    env: &Env,
    params: &[VarId],
    memo: &mut HashMap<TermId, TermId>,
    depth: usize,
) -> Option<TermId> {
    if let Some(&r) = memo.get(&t) {
        return Some(r);
    }
    if depth > MAX_DEPTH {
        return Some(t);
    }
    let ty = store.ty(t).clone();
    let numeric = matches!(ty, Type::Nat | Type::Int | Type::Real | Type::Prob);
    let closed = vars::free_vars(store, t).iter().all(|v| params.contains(v));
    let evaluated = if numeric && closed && !matches!(store.node(t), Node::Lit(_)) {
        crate::eval(store, t, env)
            .ok()
            .and_then(|v| number(store, &v, &ty))
    } else {
        None
    };
    let r = match evaluated {
        Some(n) => n,
        None => {
            let node = store.node(t).clone();
            let children = node.children();
            let mut new = Vec::with_capacity(children.len());
            for c in &children {
                new.push(fold(store, *c, env, params, memo, depth + 1)?);
            }
            if new == children {
                t
            } else {
                store.intern(node.with_children(&new), ty)
            }
        }
    };
    memo.insert(t, r);
    Some(r)
}

/// A numeric value as the residual prints it (see the module doc for the rounding: a prob
/// beyond `f64` is `exp(l)`); `None` for a value that is not a finite number of `ty`.
pub fn number_text(v: &Value, ty: &Type) -> Option<String> {
    let mut store = Store::new();
    let t = number(&mut store, v, ty)?;
    let opts = slic_algebra::print::PrintOptions {
        decimals: true,
        ..Default::default()
    };
    Some(
        slic_algebra::print::print_with(&store, t, &opts)
            .trim_end()
            .to_string(),
    )
}

/// A numeric value as a literal term of type `ty` (see the module doc for the rounding);
/// `None` for a value that is not a finite number of that type.
fn number(store: &mut Store, v: &Value, ty: &Type) -> Option<TermId> {
    let lit = |store: &mut Store, r: Rational, ty: &Type| store.intern(Node::Lit(r), ty.clone());
    match (v, ty) {
        (Value::Nat(n), Type::Nat) => Some(lit(
            store,
            Rational::from_integer(i64::try_from(*n).ok()?),
            ty,
        )),
        (Value::Int(i), Type::Int) => Some(lit(store, Rational::from_integer(*i), ty)),
        (Value::Real(x), Type::Real) => Some(lit(store, rounded(*x)?, ty)),
        (Value::Prob(l), Type::Prob) => {
            if *l == f64::NEG_INFINITY {
                return Some(lit(store, Rational::zero(), ty));
            }
            let x = l.exp();
            if x.is_normal() && (1e-12..=1e12).contains(&x) {
                Some(lit(store, rounded(x)?, ty))
            } else {
                let ln = lit(store, rounded(*l)?, &Type::Real);
                Some(store.prim(Prim::Exp, vec![ln], Type::Prob))
            }
        }
        _ => None,
    }
}

/// `x` rounded to [`SIGNIFICANT`] significant digits, as an exact decimal rational.
fn rounded(x: f64) -> Option<Rational> {
    if !x.is_finite() {
        return None;
    }
    let text = format!("{:.*e}", SIGNIFICANT - 1, x);
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i64 = exponent.parse().ok()?;
    let places = mantissa.split_once('.').map_or(0, |(_, f)| f.len());
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut n: BigInt = digits.parse().ok()?;
    if mantissa.starts_with('-') {
        n = -n;
    }
    // value = n · 10^(exponent - places)
    let e = exponent - i64::try_from(places).ok()?;
    let ten = BigInt::from(10);
    let power = ten.pow(u32::try_from(e.unsigned_abs()).ok()?);
    if e >= 0 {
        Some(Rational::from_bigint(n * power))
    } else {
        Some(Rational::from_bigint(n) * Rational::from_bigint(power).recip()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::front;

    fn residual_text(src: &str, args: Vec<Value>) -> Option<String> {
        let mut store = Store::new();
        let t = front::load(&mut store, src).expect("loads");
        let r = residual(&mut store, t, &args)?;
        let opts = slic_algebra::print::PrintOptions {
            decimals: true,
            ..Default::default()
        };
        Some(slic_algebra::print::print_with(&store, r, &opts))
    }

    #[test]
    fn parameters_are_evaluated_and_draws_kept() {
        let src = "fn xs array(real):\n\
                   fn k nat:\n\
                   m <~ normal(summate i from 0 to size(xs): xs[i], 1 / k)\n\
                   weight(real2prob(m * m) * 2 ** k, return m + size(xs))";
        let xs = Value::Array(std::rc::Rc::from(vec![
            Value::Real(0.5),
            Value::Real(1.25),
            Value::Real(-0.125),
        ]));
        let text = residual_text(src, vec![xs, Value::Nat(4)]).expect("a residual");
        assert!(text.contains("normal(1.625, 0.25)"), "{text}");
        assert!(text.contains("* 16"), "{text}");
        assert!(text.contains("m + 3"), "{text}");
        assert!(!text.contains("xs"), "{text}");
    }

    #[test]
    fn a_prob_beyond_f64_is_written_by_its_log() {
        let src = "fn n nat: weight(2 ** (-nat2real(n)), return 1)";
        let text = residual_text(src, vec![Value::Nat(5000)]).expect("a residual");
        // 2^-5000 = exp(-3465.74)
        assert!(text.contains("exp(-3465.74)"), "{text}");
    }

    #[test]
    fn a_parameter_read_under_a_draw_leaves_no_residual() {
        let src = "fn xs array(real):\n\
                   m <~ normal(0, 1)\n\
                   return summate i from 0 to size(xs): xs[i] * m";
        let xs = Value::Array(std::rc::Rc::from(vec![Value::Real(1.0)]));
        assert!(residual_text(src, vec![xs]).is_none());
    }

    #[test]
    fn the_residual_means_the_program_at_its_arguments() {
        let src = "fn xs array(real):\n\
                   m <~ normal((summate i from 0 to size(xs): xs[i]) / size(xs),\n\
                               1 / sqrt(nat2prob(size(xs))))\n\
                   weight(exp((summate i from 0 to size(xs): xs[i] ^ 2) / 10), return m * m)";
        let mut store = Store::new();
        let t = front::load(&mut store, src).expect("loads");
        let xs = Value::Array(std::rc::Rc::from(vec![
            Value::Real(0.3),
            Value::Real(-1.7),
            Value::Real(2.2),
        ]));
        let args = vec![xs];
        let r = residual(&mut store, t, &args).expect("a residual");
        // the same parameter around the residual, which does not read it
        let Node::Lam(v, _) = *store.node(t) else {
            panic!("a fn")
        };
        let ty = store.ty(t).clone();
        let wrapped = store.intern(Node::Lam(v, r), ty);
        // rounding to six digits moves the probes by about 1e-6 of their values
        let config = crate::CompareConfig {
            rel_tol: 1e-4,
            ..Default::default()
        };
        let verdict = crate::compare(&store, t, wrapped, &args, &config);
        assert!(verdict.agrees(), "{verdict}");
        // and a residual made wrong is told apart
        let two = store.int_lit(2, Type::Prob);
        let wrong_body = store.intern(Node::Weight(two, r), store.ty(r).clone());
        let wrong = store.intern(Node::Lam(v, wrong_body), store.ty(t).clone());
        let verdict = crate::compare(&store, t, wrong, &args, &config);
        assert!(
            matches!(verdict, crate::Verdict::Different { .. }),
            "{verdict}"
        );
    }

    #[test]
    fn reals_are_rounded_to_six_digits() {
        assert_eq!(rounded(1.0 / 3.0), Rational::ratio(333_333, 1_000_000));
        assert_eq!(rounded(-2.5e-7), Rational::ratio(-25, 100_000_000));
        assert_eq!(rounded(1e4), Some(Rational::from_integer(10_000)));
        assert_eq!(rounded(f64::NAN), None);
    }
}
