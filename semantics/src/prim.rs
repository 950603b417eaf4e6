//! The built-in functions on values: arithmetic, comparisons, logic and special functions.
//!
//! Each primitive follows its Hakaru type on the value's representation: nat and int
//! arithmetic is exact and checked (overflow is an [`EvalError::Overflow`], never a
//! wrap), real arithmetic is IEEE (`1/0` is `inf`, `0/0` is NaN: the meaning of real
//! division), and prob arithmetic happens in log space (`+` is log-sum-exp, `*` adds
//! logs, with `0 * ∞ = 0` as in measure theory). Special functions come from `libm`.
//!
//! The lazy primitives (`&&`, `||`, which short-circuit, and `reduce`, which applies a
//! function value) live in `eval`; everything here is strict and pure.

use slic_algebra::Prim;

use crate::error::{bad_arg, overflow, EvalError, EvalResult};
use crate::rng::log_sum_exp;
use crate::value::Value;

fn name(p: Prim) -> String {
    match p.name() {
        Some(n) => n.to_string(),
        None => format!("{p:?}").to_lowercase(),
    }
}

fn mismatch(p: Prim, args: &[Value]) -> EvalError {
    let kinds: Vec<&str> = args.iter().map(Value::kind).collect();
    bad_arg(
        &name(p),
        format!("unexpected arguments ({})", kinds.join(", ")),
    )
}

/// Neumaier's compensated sum, so long real sums in the oracle lose no accuracy.
fn compensated_sum(xs: impl Iterator<Item = f64>) -> f64 {
    let mut sum = 0.0f64;
    let mut comp = 0.0f64;
    for x in xs {
        let t = sum + x;
        if sum.abs() >= x.abs() {
            comp += (sum - t) + x;
        } else {
            comp += (x - t) + sum;
        }
        sum = t;
    }
    let r = sum + comp;
    // Infinities make the compensation NaN; fall back to the plain sum then.
    if r.is_nan() && !sum.is_nan() {
        sum
    } else {
        r
    }
}

/// The product of probs given by their logs: `0 * ∞ = 0`.
pub(crate) fn ln_product(ls: impl Iterator<Item = f64>) -> f64 {
    let mut acc = 0.0f64;
    let mut zero = false;
    for l in ls {
        if l == f64::NEG_INFINITY {
            zero = true;
        }
        acc += l;
    }
    if zero {
        f64::NEG_INFINITY
    } else {
        acc
    }
}

/// `a * b` for two values of one numeric type.
pub(crate) fn mul2(a: &Value, b: &Value) -> EvalResult<Value> {
    apply(Prim::Mul, &[a.clone(), b.clone()])
}

fn f64_to_nat(op: &str, x: f64) -> EvalResult<Value> {
    if x.is_nan() {
        return Err(bad_arg(op, "the argument is not a number"));
    }
    if x < 0.0 {
        return Err(EvalError::NegativeToNat { value: x as i128 });
    }
    if x >= 18_446_744_073_709_551_616.0 {
        return Err(overflow(format!("{op}: {x} does not fit a nat")));
    }
    Ok(Value::Nat(x as u64))
}

pub(crate) fn f64_to_int(op: &str, x: f64) -> EvalResult<Value> {
    if x.is_nan() {
        return Err(bad_arg(op, "the argument is not a number"));
    }
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        return Err(overflow(format!("{op}: {x} does not fit an int")));
    }
    Ok(Value::Int(x as i64))
}

fn signum(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// `choose(n, k)` exactly, or overflow.
fn choose(n: u64, k: u64) -> EvalResult<u64> {
    if k > n {
        return Ok(0);
    }
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 0..k {
        // c = C(n, i) here; C(n, i+1) = C(n, i) * (n - i) / (i + 1) exactly.
        c = c * u128::from(n - i) / u128::from(i + 1);
        if c > u128::from(u64::MAX) {
            return Err(overflow(format!("choose({n}, {k})")));
        }
    }
    Ok(c as u64)
}

fn gamma_func(x: f64) -> EvalResult<Value> {
    if x.is_nan() {
        return Ok(Value::Prob(f64::NAN));
    }
    if x <= 0.0 && x == x.floor() {
        // A pole: Γ is unbounded there; report ∞.
        return Ok(Value::Prob(f64::INFINITY));
    }
    let (lg, sign) = libm::lgamma_r(x);
    if sign < 0 {
        return Err(EvalError::NegativeToProb {
            value: libm::tgamma(x),
        });
    }
    Ok(Value::Prob(lg))
}

fn pow_nat_checked<T>(base: T, exp: u64, mul: impl Fn(T, T) -> Option<T>, one: T) -> Option<T>
where
    T: Copy,
{
    let mut result = one;
    let mut b = base;
    let mut e = exp;
    let mut first = true;
    while e > 0 {
        if !first {
            b = mul(b, b)?;
        }
        first = false;
        if e & 1 == 1 {
            result = mul(result, b)?;
        }
        e >>= 1;
    }
    Some(result)
}

fn real_fn(p: Prim, x: f64) -> f64 {
    match p {
        Prim::Sin => libm::sin(x),
        Prim::Cos => libm::cos(x),
        Prim::Tan => libm::tan(x),
        Prim::Asin => libm::asin(x),
        Prim::Acos => libm::acos(x),
        Prim::Atan => libm::atan(x),
        Prim::Sinh => libm::sinh(x),
        Prim::Cosh => libm::cosh(x),
        Prim::Tanh => libm::tanh(x),
        Prim::Asinh => libm::asinh(x),
        Prim::Acosh => libm::acosh(x),
        Prim::Atanh => libm::atanh(x),
        _ => f64::NAN,
    }
}

/// The order of two values of one type; `None` when a NaN is involved.
fn cmp_values(p: Prim, a: &Value, b: &Value) -> EvalResult<Option<std::cmp::Ordering>> {
    use std::cmp::Ordering;
    let o = match (a, b) {
        (Value::Nat(x), Value::Nat(y)) => Some(x.cmp(y)),
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Prob(x), Value::Prob(y)) | (Value::Real(x), Value::Real(y)) => x.partial_cmp(y),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Unit, Value::Unit) => Some(Ordering::Equal),
        _ => return Err(mismatch(p, &[a.clone(), b.clone()])),
    };
    Ok(o)
}

/// The arguments of an n-ary arithmetic primitive as one kind of number (every argument
/// must have the kind of the first), or a mismatch error.
fn all_of<T>(p: Prim, args: &[Value], get: fn(&Value) -> Option<T>) -> EvalResult<Vec<T>> {
    args.iter()
        .map(|a| get(a).ok_or_else(|| mismatch(p, args)))
        .collect()
}

fn as_nat(v: &Value) -> Option<u64> {
    match v {
        Value::Nat(x) => Some(*x),
        _ => None,
    }
}

fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(x) => Some(*x),
        _ => None,
    }
}

/// A prob's natural logarithm (its representation).
fn as_ln_prob(v: &Value) -> Option<f64> {
    match v {
        Value::Prob(l) => Some(*l),
        _ => None,
    }
}

fn as_real(v: &Value) -> Option<f64> {
    match v {
        Value::Real(x) => Some(*x),
        _ => None,
    }
}

/// Folds integers with a checked operation; overflow is an error naming `what`.
fn checked_fold<T>(xs: Vec<T>, init: T, op: fn(T, T) -> Option<T>, what: &str) -> EvalResult<T> {
    xs.into_iter()
        .try_fold(init, op)
        .ok_or_else(|| overflow(what))
}

/// Applies a strict primitive to evaluated arguments.
pub fn apply(p: Prim, args: &[Value]) -> EvalResult<Value> {
    use Value::*;
    if let Some(n) = p.arity() {
        if args.len() != n {
            return Err(bad_arg(
                &name(p),
                format!("expected {n} arguments, found {}", args.len()),
            ));
        }
    } else if args.is_empty() {
        return Err(bad_arg(&name(p), "no arguments"));
    }
    let nm = || name(p);
    let v = match (p, args) {
        (Prim::Add, [first, ..]) => match first {
            Nat(_) => Nat(checked_fold(
                all_of(p, args, as_nat)?,
                0,
                u64::checked_add,
                "nat addition",
            )?),
            Int(_) => Int(checked_fold(
                all_of(p, args, as_int)?,
                0,
                i64::checked_add,
                "int addition",
            )?),
            Prob(_) => Prob(log_sum_exp(&all_of(p, args, as_ln_prob)?)),
            Real(_) => Real(compensated_sum(all_of(p, args, as_real)?.into_iter())),
            _ => return Err(mismatch(p, args)),
        },
        (Prim::Mul, [first, ..]) => match first {
            Nat(_) => Nat(checked_fold(
                all_of(p, args, as_nat)?,
                1,
                u64::checked_mul,
                "nat multiplication",
            )?),
            Int(_) => Int(checked_fold(
                all_of(p, args, as_int)?,
                1,
                i64::checked_mul,
                "int multiplication",
            )?),
            Prob(_) => Prob(ln_product(all_of(p, args, as_ln_prob)?.into_iter())),
            Real(_) => Real(all_of(p, args, as_real)?.into_iter().product()),
            _ => return Err(mismatch(p, args)),
        },
        (Prim::Neg, [Int(x)]) => Int(x.checked_neg().ok_or_else(|| overflow("negate"))?),
        (Prim::Neg, [Real(x)]) => Real(-x),
        (Prim::Recip, [Prob(l)]) => Prob(-l),
        (Prim::Recip, [Real(x)]) => Real(1.0 / x),
        (Prim::Pow, [base, Nat(n)]) => match base {
            Nat(b) => Nat(pow_nat_checked(*b, *n, u64::checked_mul, 1)
                .ok_or_else(|| overflow(format!("{b} ^ {n}")))?),
            Int(b) => Int(pow_nat_checked(*b, *n, i64::checked_mul, 1)
                .ok_or_else(|| overflow(format!("{b} ^ {n}")))?),
            Prob(l) => Prob(if *n == 0 { 0.0 } else { l * *n as f64 }),
            Real(x) => Real(libm::pow(*x, *n as f64)),
            _ => return Err(mismatch(p, args)),
        },
        (Prim::RealPow, [Prob(l), Real(r)]) => {
            Prob(if *r == 0.0 && !l.is_nan() { 0.0 } else { l * r })
        }
        (Prim::NatRoot, [Prob(l), Nat(n)]) => {
            if *n == 0 {
                return Err(bad_arg("natroot", "the 0th root is undefined"));
            }
            Prob(l / *n as f64)
        }
        (Prim::Exp, [Real(x)]) => Prob(*x),
        (Prim::Log, [Prob(l)]) => Real(*l),
        (Prim::Sqrt, [Prob(l)]) => Prob(l / 2.0),
        (Prim::Pi, []) => Prob(std::f64::consts::PI.ln()),
        (Prim::Infinity, []) => Prob(f64::INFINITY),
        (Prim::Abs, [Int(x)]) => Nat(x.unsigned_abs()),
        (Prim::Abs, [Real(x)]) => Prob(x.abs().ln()),
        (Prim::Signum, [Int(x)]) => Int(x.signum()),
        (Prim::Signum, [Real(x)]) => Real(signum(*x)),
        (Prim::Floor, [Prob(l)]) => f64_to_nat("floor", l.exp().floor())?,
        (Prim::Floor, [Real(x)]) => f64_to_int("floor", x.floor())?,
        (Prim::Erf, [Real(x)]) => Real(libm::erf(*x)),
        (Prim::Erf, [Prob(l)]) => Prob(libm::erf(l.exp()).ln()),
        (Prim::Choose, [Nat(n), Nat(k)]) => Nat(choose(*n, *k)?),
        (Prim::GammaFunc, [Real(x)]) => gamma_func(*x)?,
        (Prim::BetaFunc, [Prob(a), Prob(b)]) => {
            let (a, b) = (a.exp(), b.exp());
            if a == 0.0 || b == 0.0 {
                Prob(f64::INFINITY)
            } else {
                Prob(crate::dist::ln_beta(a, b))
            }
        }
        (Prim::Min | Prim::Max, [a, b]) => {
            let pick_a = match cmp_values(p, a, b)? {
                Some(o) => (o != std::cmp::Ordering::Greater) == (p == Prim::Min),
                // NaN: min/max of NaN is NaN (pick the NaN).
                None => a.as_f64().is_some_and(f64::is_nan),
            };
            if pick_a {
                a.clone()
            } else {
                b.clone()
            }
        }
        (_, [Real(x)]) if p.is_trig() => Real(real_fn(p, *x)),
        (Prim::Lt | Prim::Le, [a, b]) => {
            // Comparisons with NaN are false, as in IEEE.
            match cmp_values(p, a, b)? {
                Some(o) => Bool(if p == Prim::Lt { o.is_lt() } else { o.is_le() }),
                None => Bool(false),
            }
        }
        (Prim::Eq | Prim::Ne, [a, b]) => {
            if matches!(a, Closure(_) | Measure(_)) || matches!(b, Closure(_) | Measure(_)) {
                return Err(bad_arg(&nm(), "cannot compare functions or measures"));
            }
            Bool(a.data_eq(b) == (p == Prim::Eq))
        }
        (Prim::And | Prim::Or, _) => {
            let mut acc = p == Prim::And;
            for a in args {
                let Bool(x) = a else {
                    return Err(mismatch(p, args));
                };
                acc = if p == Prim::And { acc && *x } else { acc || *x };
            }
            Bool(acc)
        }
        (Prim::Not, [Bool(x)]) => Bool(!x),
        (Prim::Xor, [Bool(a), Bool(b)]) => Bool(a != b),
        (Prim::Iff, [Bool(a), Bool(b)]) => Bool(a == b),
        (Prim::Impl, [Bool(a), Bool(b)]) => Bool(!a || *b),
        (Prim::Nand, [Bool(a), Bool(b)]) => Bool(!(*a && *b)),
        (Prim::Nor, [Bool(a), Bool(b)]) => Bool(!(*a || *b)),
        (Prim::Size, [Array(a)]) => Nat(a.len() as u64),
        _ => return Err(mismatch(p, args)),
    };
    Ok(v)
}
