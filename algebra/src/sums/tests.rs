//! Tables for closing sums and products: each row is an input `.hk` function (free
//! variables as `fn` parameters) and the printed body after [`simplify_loops`]. Every row
//! also checks that the output verifies, is a fixpoint (simplifying again changes
//! nothing), prints and parses back alpha-equivalently, and evaluates equal to the input
//! (explicit loops) at pseudo-random points: parameters instantiated as literals, both
//! sides evaluated by `eval` (exactly when the value is rational, else in `f64`).
//! The proptests compare closed forms of random polynomial and exponential bodies with
//! explicit loops over random bounds, empty and reversed ranges included.

use proptest::prelude::*;

use super::*;
use crate::alpha::alpha_eq;
use crate::eval;
use num_bigint::BigInt;
use num_rational::BigRational;
use crate::verify::verify;
use crate::{front, print};

// ---- the oracle: `eval` on the input and the output with literal parameters ---------------

/// A parameter value: a number (kept exact) or an array of numbers.
#[derive(Clone, Debug)]
enum V {
    N(Rational),
    A(Vec<Rational>),
}

fn frac(p: i64, q: i64) -> Rational {
    Rational::new(BigRational::new(BigInt::from(p), BigInt::from(q)))
}

/// `t` with each parameter replaced by its value as a literal.
fn instantiate(s: &mut Store, t: TermId, env: &[(VarId, V)]) -> TermId {
    let mut t = t;
    for (v, x) in env {
        let ty = s.var_type(*v).clone();
        let lit = match x {
            V::N(q) => s.intern(Node::Lit(q.clone()), ty),
            V::A(xs) => {
                let elem = ty.array_of().cloned().unwrap_or(Type::Real);
                let ls = xs.iter().map(|q| s.intern(Node::Lit(q.clone()), elem.clone())).collect();
                s.intern(Node::ArrayLit(ls), ty)
            }
        };
        t = crate::vars::substitute1(s, t, *v, lit);
    }
    t
}

/// The value of a closed numeric term: exact when it is rational, else in `f64`.
enum Val {
    Exact(Rational),
    Float(f64),
}

fn value(s: &Store, t: TermId) -> Option<Val> {
    match eval::eval_exact(s, t) {
        Some(q) => Some(Val::Exact(q)),
        None => eval::eval_f64(s, t, &|_| None).map(Val::Float),
    }
}

fn same(x: &Val, y: &Val) -> bool {
    match (x, y) {
        (Val::Exact(a), Val::Exact(b)) => a == b,
        _ => close_enough(float(x), float(y)),
    }
}

fn float(x: &Val) -> f64 {
    match x {
        Val::Exact(q) => q.to_f64(),
        Val::Float(f) => *f,
    }
}

/// The parameters of the leading `fn`s, and the body under them.
fn params(s: &Store, mut t: TermId) -> (Vec<VarId>, TermId) {
    let mut vs = Vec::new();
    while let Node::Lam(v, b) = s.node(t) {
        vs.push(*v);
        t = *b;
    }
    (vs, t)
}

/// A deterministic pseudo-random stream.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }

    fn value(&mut self, ty: &Type) -> Option<V> {
        let r = match ty {
            Type::Nat => V::N(frac(self.next(7) as i64, 1)),
            Type::Int => V::N(frac(self.next(11) as i64 - 4, 1)),
            Type::Prob => V::N(frac(50 + self.next(1000) as i64, 500)),
            Type::Real => V::N(frac(self.next(1000) as i64 - 500, 250)),
            Type::Array(e) => {
                let mut xs = Vec::new();
                for _ in 0..12 {
                    match self.value(e)? {
                        V::N(x) => xs.push(x),
                        V::A(_) => return None,
                    }
                }
                V::A(xs)
            }
            _ => return None,
        };
        Some(r)
    }
}

fn close_enough(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// Evaluates `a` and `b` (bodies under the same parameters) at `points` pseudo-random
/// points; an error names the first point where they differ. Points where the input
/// cannot be evaluated (an index out of bounds) are skipped.
fn same_values(s: &mut Store, vars: &[VarId], a: TermId, b: TermId, points: usize, seed: u64) -> Result<usize, String> {
    let mut rng = Lcg(seed);
    let mut compared = 0;
    for _ in 0..points {
        let mut env = Vec::new();
        for &v in vars {
            let ty = s.var_type(v).clone();
            let Some(x) = rng.value(&ty) else { return Ok(0) };
            env.push((v, x));
        }
        let (ai, bi) = (instantiate(s, a, &env), instantiate(s, b, &env));
        let Some(x) = value(s, ai) else { continue };
        match value(s, bi) {
            Some(y) if same(&x, &y) => compared += 1,
            y => return Err(format!("at {env:?}: input {}, output {:?}", float(&x), y.as_ref().map(float))),
        }
    }
    Ok(compared)
}

// ---- the table ------------------------------------------------------------------------

fn simplified(src: &str) -> Result<String, String> {
    let mut s = Store::new();
    let t = front::load(&mut s, src).map_err(|d| format!("{d:?}"))?;
    let r = simplify_loops(&mut s, &Context::new(), t);
    verify(&s, r).map_err(|e| format!("output does not verify: {e}"))?;
    let again = simplify_loops(&mut s, &Context::new(), r);
    if again != r {
        return Err(format!(
            "not a fixpoint:\n{}---\n{}",
            print::print_term(&s, r),
            print::print_term(&s, again)
        ));
    }
    if canon::canonicalize(&mut s, &Context::new(), r) != r {
        return Err(format!("not canonical:\n{}", print::print_term(&s, r)));
    }
    let printed = print::print_term(&s, r);
    let back = front::load(&mut s, &printed).map_err(|d| format!("reload of\n{printed}failed: {d:?}"))?;
    if !alpha_eq(&s, r, back) {
        return Err(format!("printed form does not round-trip:\n{printed}"));
    }
    let (vars, a) = params(&s, t);
    let (_, b) = params(&s, r);
    same_values(&mut s, &vars, a, b, 40, 7)?;
    Ok(print::print_term(&s, b).trim_end().to_string())
}

fn check(src: &str, expect: &str) {
    match simplified(src) {
        Ok(got) => assert_eq!(got, expect, "loops of {src}"),
        Err(e) => panic!("{src}: {e}"),
    }
}

const N: &str = "fn n nat: fn m nat: fn x real: fn p prob: fn i nat: fn a array(real): fn b array(real): fn q array(prob): fn y array(nat):\n";

/// A row over the standard parameters `N`.
fn row(body: &str, expect: &str) {
    check(&format!("{N}{body}"), expect);
}

#[test]
fn constants_factor_out() {
    row("summate k from 0 to n: x * nat2real(k)", "nat2real(n) ^ 2 * x / 2 - n * x / 2");
    row("summate k from 0 to n: x * a[k]", "x * (summate j from 0 to n: a[j])");
    row("summate k from 0 to n: 2 * x * a[k] / 3", "2 * x * (summate j from 0 to n: a[j]) / 3");
    row("summate k from 0 to n: a[k] / x", "(summate j from 0 to n: a[j]) / x");
    row("product k from 0 to n: p * q[k]", "p ** n * (product j from 0 to n: q[j])");
    row("product k from 0 to n: 2 * q[k]", "2 ** n * (product j from 0 to n: q[j])");
    row("product k from 0 to n: -2 * a[k]", "(-1. real) ^ n * 2 ** n * (product j from 0 to n: a[j])");
    row("product k from 0 to n: q[k] / p", "p ** (-nat2real(n)) * (product j from 0 to n: q[j])");
}

#[test]
fn split_over_sums_and_products() {
    row("summate k from 0 to n: a[k] + b[k]", "(summate j from 0 to n: a[j]) + (summate j from 0 to n: b[j])");
    row("summate k from 0 to n: a[k] + 2 * b[k] + x", "n * x + (summate j from 0 to n: a[j]) + 2 * (summate j from 0 to n: b[j])");
    row("product k from 0 to n: a[k] * b[k]", "(product j from 0 to n: a[j]) * (product j from 0 to n: b[j])");
    row("product k from 0 to n: q[k] ^ 2 * a[k]", "(product j from 0 to n: a[j]) * (product j from 0 to n: prob2real(q[j]) ^ 2)");
}

#[test]
fn free_bodies_count() {
    row("summate k from 0 to n: x", "n * x");
    row("summate k from 0 to 5: x", "5 * x");
    row("summate k from 3 to 1: x", "0. real");
    row("summate k from m to n: x", "if m <= n: n * x - m * x else: 0");
    row("summate k from 0 to n: x * p", "n * x * p");
    row("product k from 0 to n: x", "x ^ n");
    row("product k from 0 to n: p", "p ** n");
    row("product k from m to n: x", "if m <= n: x ^ int2nat(n - m) else: 1");
    row("product k from 0 to n: x + 1", "(x + 1) ^ n");
    row("product k from 0 to n: p + 1", "(p + 1) ** n");
    row("product k from 2 to 2: x", "1. real");
    check("fn a int: fn b int: fn x real: summate k from a to b: x", "if a <= b: -a * x + b * x else: 0");
}

#[test]
fn power_sums() {
    row("summate k from 0 to n: nat2real(k)", "nat2real(n) ^ 2 / 2 - nat2real(n) / 2");
    row("summate k from 0 to n: nat2real(k) ^ 2", "nat2real(n) ^ 3 / 3 - nat2real(n) ^ 2 / 2 + nat2real(n) / 6");
    row("summate k from 0 to n: nat2real(k) ^ 3", "nat2real(n) ^ 4 / 4 - nat2real(n) ^ 3 / 2 + nat2real(n) ^ 2 / 4");
    row("summate k from 0 to n: nat2real(k) ^ 4", "nat2real(n) ^ 5 / 5 - nat2real(n) ^ 4 / 2 + nat2real(n) ^ 3 / 3 - nat2real(n) / 30");
    row("summate k from 0 to n: k", "int2nat(real2int(nat2real(n) ^ 2 / 2 - nat2real(n) / 2))");
    row("summate k from 0 to 10: k ^ 3", "2025");
    row("summate k from 1 to n + 1: nat2real(k)", "nat2real(n) ^ 2 / 2 + nat2real(n) / 2");
    row("summate k from 0 to n: (nat2real(k) + x) ^ 2", "nat2real(n) ^ 3 / 3\n    + nat2real(n) ^ 2 * x\n    + n * x ^ 2\n    - nat2real(n) ^ 2 / 2\n    - n * x\n    + nat2real(n) / 6");
    check("fn a int: fn b int: summate k from a to b: int2real(k)", "if a <= b: -int2real(a) ^ 2 / 2 + int2real(b) ^ 2 / 2 + a / 2 - b / 2 else: 0");
    check("fn n nat: summate k from 0 to n: nat2real(k) ^ 17", "summate j from 0 to n: nat2real(j) ^ 17");
}

#[test]
fn kronecker_deltas() {
    row("summate j from 0 to n: if i == j: a[j] else: 0", "if i + 1 <= n: a[i] else: 0");
    row("summate j from 1 to n: if i == j - 1: a[j] else: 0", "if i + 2 <= n: a[i + 1] else: 0");
    row("summate j from 0 to n: if j == i + 1: a[j] * x else: 0", "if i + 2 <= n: x * a[i + 1] else: 0");
    row("summate j from 0 to n: if 2 * j == i: a[j] else: 0", "if i + 1 <= 2 * n && i == 2 * real2int(nat2real(i) / 2):\n    a[int2nat(real2int(nat2real(i) / 2))]\nelse:\n    0");
    row("product j from 0 to n: if i == j: q[j] else: 1", "if i + 1 <= n: q[i] else: 1");
    row("summate j from 0 to n: if j == m && x < a[j]: a[j] else: 0", "if x < a[m] && m + 1 <= n: a[m] else: 0");
    row("summate k from 0 to n: summate j from 0 to n: if k == j: a[k] * b[j] else: 0", "summate j from 0 to n: a[j] * b[j]");
    row("summate k from 0 to n: summate j from 0 to m: if k == j: a[k] else: 0", "summate j from 0 to n: if j + 1 <= m: a[j] else: 0");
}

#[test]
fn exponentials_and_powers() {
    row("product k from 0 to n: exp(x * nat2real(k))", "exp(nat2real(n) ^ 2 * x / 2 - n * x / 2)");
    row("product k from 0 to n: exp(a[k])", "exp(summate j from 0 to n: a[j])");
    row("product k from 0 to n: exp(a[k]) * q[k]", "exp(summate j from 0 to n: a[j]) * (product j from 0 to n: q[j])");
    row("product k from 0 to n: p ** a[k]", "p ** (summate j from 0 to n: a[j])");
    row("product k from 0 to n: 2 ** nat2real(k)", "2 ** (nat2real(n) ^ 2 / 2 - nat2real(n) / 2)");
    row("product k from 0 to n: exp(x) / p", "p ** (-nat2real(n)) * exp(n * x)");
    row("product j from 0 to n: if i == y[j]: exp(a[j]) else: 1", "exp(summate j from 0 to n: if i == y[j]: a[j] else: 0)");
    row("product j from 0 to n: if i == y[j]: p else: 1", "p ** (summate j from 0 to n: if i == y[j]: 1 else: 0)");
}

#[test]
fn indirect_indexing_keeps_one_shape() {
    row("summate j from 0 to n: if i == y[j]: 3 * a[j] else: 0", "3 * (summate j from 0 to n: if i == y[j]: a[j] else: 0)");
    row("summate j from 0 to n: if y[j] == i: a[j] else: 0", "summate j from 0 to n: if i == y[j]: a[j] else: 0");
    row("summate j from 0 to n: if i == y[j]: a[j] + 2 * b[j] else: 0", "(summate j from 0 to n: if i == y[j]: a[j] else: 0)\n    + 2 * (summate j from 0 to n: if i == y[j]: b[j] else: 0)");
    row("summate j from 0 to n: (if i == y[j]: a[j] else: 0) + (if i == y[j]: a[j] * x else: 0)", "x * (summate j from 0 to n: if i == y[j]: a[j] else: 0)\n    + (summate j from 0 to n: if i == y[j]: a[j] else: 0)");
    row("summate j from 0 to n: if 0 < x && i == y[j]: a[j] else: 0", "if 0 < x:\n    summate j from 0 to n: if i == y[j]: a[j] else: 0\nelse:\n    0");
    row("summate j from 0 to n: if i == y[j]: x else: 0", "x * (summate j from 0 to n: if i == y[j]: 1 else: 0)");
    row("summate j from 0 to n: a[j] / (nat2real(j) + 1)", "summate j from 0 to n: a[j] / (nat2real(j) + 1)");
    row("summate j from 0 to n: a[j]", "summate j from 0 to n: a[j]");
    row("product j from 0 to n: q[j]", "product j from 0 to n: q[j]");
}

/// A sum over classes of a per-class sum is the sum over the points of the classes in
/// range; the tail sums of a Dirichlet posterior's concentrations meet its stick counts.
#[test]
fn sums_over_classes_interchange() {
    row("summate k from 0 to m: summate j from 0 to n: if k == y[j]: 1 else: 0", "summate j from 0 to n: if y[j] + 1 <= m: 1 else: 0");
    row("summate k from i + 1 to m: summate j from 0 to n: if k == y[j]: a[j] else: 0", "summate j from 0 to n: if i + 1 <= y[j] && y[j] + 1 <= m: a[j] else: 0");
    row("summate k from i to m: q[k] + (summate j from 0 to n: if k == y[j]: 1 else: 0)", "(summate j from i to m: q[j])\n    + (summate j from 0 to n: if i <= y[j] && y[j] + 1 <= m: 1 else: 0)");
    // the inner sum over k does not close: both loops stay as they were
    row("summate k from 0 to m: summate j from 0 to n: a[j] * b[k]", "(summate j from 0 to n: a[j]) * (summate j from 0 to m: b[j])");
    row("summate k from 0 to m: summate j from 0 to n: if k <= y[j]: a[k] else: 0", "summate k from 0 to m: a[k] * (summate j from 0 to n: if k <= y[j]: 1 else: 0)");
}

#[test]
fn two_way_products_become_powers_of_counts() {
    // a factor 0 off its support keeps the reads it guards in its loop (corpus case 15)
    row("product j from 0 to n: (if y[j] < size(q): 1 else: 0) * q[y[j]] / p", "p ** (-nat2real(n)) * (product j from 0 to n: if size(q) <= y[j]: 0 else: q[y[j]])");
    row("product j from 0 to n: (if y[j] < size(q): 1 else: 0) * q[y[j]] * nat2real(j)", "product j from 0 to n: if size(q) <= y[j]: 0 else: nat2real(j) * q[y[j]]");
    row("product j from 0 to n: if i == y[j]: p else: 2 * p", "p ** n * 2 ** (nat2real(n) - (summate j from 0 to n: if i == y[j]: 1 else: 0))");
    row("product j from 0 to n: if i == y[j]: x else: -2", "x ^ (summate j from 0 to n: if i == y[j]: 1 else: 0)\n    * (-2. real) ^ int2nat(n - (summate j from 0 to n: if i == y[j]: 1 else: 0))");
    row("product j from m to n: if i == y[j]: x else: 3", "x ^ (summate j from m to n: if i == y[j]: 1 else: 0)\n    * 3 ** (-(summate j from m to n: if i == y[j]: 1 else: 0)\n                + (if m <= n: nat2real(n) - m else: 0))");
    row("product j from 0 to n: if i == y[j]: p ** a[j] else: 1", "p ** (summate j from 0 to n: if i == y[j]: a[j] else: 0)");
    row("product j from 0 to n: if i /= y[j]: q[j] else: p", "p ** (summate j from 0 to n: if i == y[j]: 1 else: 0)\n    * (product j from 0 to n: if i == y[j]: 1 else: q[j])");
    row("summate j from 0 to n: if i /= y[j]: x else: 0", "n * x - x * (summate j from 0 to n: if i == y[j]: 1 else: 0)");
    row("summate j from m to n: if not (i == y[j]): 1 else: 0", "int2nat(-(summate j from m to n: if i == y[j]: 1 else: 0)\n            + nat2int(if m <= n: int2nat(n - m) else: 0))");
}

/// Issue 10, corpus case 23 (the Stan coin): a multi-way choice whose leaves are free of
/// the index is a product of powers of its paths' counts, a zero leaf a guard on its count.
#[test]
fn multi_way_products_become_powers_of_counts() {
    row("product j from 0 to n: if i == y[j]: 0 else: p", "p ** (nat2real(n) - (summate j from 0 to n: if i == y[j]: 1 else: 0))\n    * (if (summate j from 0 to n: if i == y[j]: 1 else: 0) == 0: 1. prob else: 0. prob)");
    row("product j from 0 to n: if i == y[j]: x else: 0", "x ^ (summate j from 0 to n: if i == y[j]: 1 else: 0)\n    * (if int2nat(n - (summate j from 0 to n: if i == y[j]: 1 else: 0)) == 0:\n           1. real\n       else:\n           0. real)");
    row("product j from 0 to size(y): if y[j] == 0: p else: if y[j] == 1: 2 * p else: if y[j] == 2: 3 else: p + 1", "p ** (nat2real(summate j from 0 to size(y): if y[j] == 0: 1 else: 0)\n          + (summate j from 0 to size(y): if y[j] == 1 && y[j] /= 0: 1 else: 0))\n    * 2 ** (summate j from 0 to size(y): if y[j] == 1 && y[j] /= 0: 1 else: 0)\n    * 3 ** (summate j from 0 to size(y):\n                if y[j] == 2 && y[j] /= 0 && y[j] /= 1: 1 else: 0)\n    * (p + 1) ** (summate j from 0 to size(y):\n                      if y[j] /= 0 && y[j] /= 1 && y[j] /= 2: 1 else: 0)");
    row("product j from 0 to size(y): if y[j] < 2: (if y[j] == 0: x else: 2) else: (if y[j] == 4: x + 1 else: 0)", "x ^ (summate j from 0 to size(y): if y[j] <= 1 && y[j] == 0: 1 else: 0)\n    * (x + 1) ^ (summate j from 0 to size(y): if 2 <= y[j] && y[j] == 4: 1 else: 0)\n    * 2 ** (summate j from 0 to size(y): if y[j] <= 1 && y[j] /= 0: 1 else: 0)\n    * (if (summate j from 0 to size(y): if 2 <= y[j] && y[j] /= 4: 1 else: 0) == 0:\n           1. real\n       else:\n           0. real)");
    row("product j from 0 to size(y): if y[j] == i: 1 else: if y[j] < i: p else: 0", "p ** (summate j from 0 to size(y): if y[j] + 1 <= i && i /= y[j]: 1 else: 0)\n    * (if (summate j from 0 to size(y): if i <= y[j] && i /= y[j]: 1 else: 0) == 0:\n           1. prob\n       else:\n           0. prob)");
    // the branches read the index: left to the two-way rules
    row("product j from 0 to size(q): if y[j] == 0: q[j] else: if y[j] == 1: p else: 2", "p ** (summate j from 0 to size(q): if y[j] == 1 && y[j] /= 0: 1 else: 0)\n    * 2 ** (summate j from 0 to size(q): if y[j] /= 0 && y[j] /= 1: 1 else: 0)\n    * (product j from 0 to size(q): if y[j] == 0: q[j] else: 1)");
    // a leaf that reads where only its path keeps the read in bounds (case 15)
    row("product j from 0 to n: if size(q) <= y[j]: 0 else: if y[j] == 0: q[y[j]] else: p", "product j from 0 to n: if size(q) <= y[j]: 0 else: if y[j] == 0: q[y[j]] else: p");
    // a leaf that may be undefined where no point takes it (x real, 1 - x maybe negative)
    row("product j from 0 to size(y): if 2 <= y[j]: 0 else: if y[j] == 0: real2prob(1 - x) else: p", "product j from 0 to size(y):\n    if 2 <= y[j]: 0 else: if y[j] == 0: real2prob(-x + 1) else: p");
    // ... and the same where the context keeps it defined (the coin's `z <~ beta(1, 1)`)
    row("if p <= 1: (product j from 0 to size(y): if 2 <= y[j]: 0 else: if y[j] == 0: real2prob(1 - p) else: p) else: 1", "if p <= 1:\n    p ** (summate j from 0 to size(y): if y[j] <= 1 && y[j] /= 0: 1 else: 0)\n        * real2prob(-p + 1) ** (summate j from 0 to size(y):\n                                    if y[j] <= 1 && y[j] == 0: 1 else: 0)\n        * (if (summate j from 0 to size(y): if 2 <= y[j]: 1 else: 0) == 0:\n               1. prob\n           else:\n               0. prob)\nelse:\n    1");
}

#[test]
fn every_point_except_one() {
    row("summate j from 0 to size(y): if m == (if j == i: 2 else: y[j]): 1 else: 0", "int2nat((summate j from 0 to size(y): if m == y[j]: 1 else: 0)\n            + (if i + 1 <= size(y):\n                   -nat2int(if m == y[i]: 1 else: 0) + nat2int(if m == 2: 1 else: 0)\n               else:\n                   0))");
    row("summate j from 0 to size(a): if j == i: x else: a[j]", "(summate j from 0 to size(a): a[j]) + (if i + 1 <= size(a): x - a[i] else: 0)");
    row("summate j from m to size(a): if j == i: x else: a[j]", "(summate j from m to size(a): a[j]) + (if m <= i && i + 1 <= size(a): x - a[i] else: 0)");
    row("summate j from 0 to size(a): (if j == i: x else: a[j]) ^ 2", "(summate j from 0 to size(a): a[j] ^ 2)\n    + (if i + 1 <= size(a): x ^ 2 - a[i] ^ 2 else: 0)");
    row("summate j from 0 to size(y): if m == (if j == i: 2 else: y[j]): nat2real(y[j]) else: 0", "(summate j from 0 to size(y): if m == y[j]: nat2real(y[j]) else: 0)\n    + (if i + 1 <= size(y):\n           -(if m == y[i]: nat2real(y[i]) else: 0) + (if m == 2: nat2real(y[i]) else: 0)\n       else:\n           0)");
    row("summate j from 0 to size(a): (array d of size(a): if d == i: x else: a[d])[j]", "(summate j from 0 to size(a): a[j]) + (if i + 1 <= size(a): x - a[i] else: 0)");
    row("product j from 0 to size(y): if m == (if j == i: 2 else: y[j]): p else: 1", "p ** ((summate j from 0 to size(y): if m == y[j]: 1 else: 0)\n          + (if i + 1 <= size(y):\n                 -(if m == y[i]: 1. real else: 0. real)\n                     + (if m == 2: 1. real else: 0. real)\n             else:\n                 0))");
    row("product j from 0 to size(a): exp(if j == i: x else: a[j])", "exp((summate j from 0 to size(a): a[j]) + (if i + 1 <= size(a): x - a[i] else: 0))");
    row("product j from 0 to n: if j == i: p else: q[j]", "(product j from 0 to n: if j == i: 1 else: q[j]) * (if i + 1 <= n: p else: 1)");
    // not where the loop over every point would read past an array's end (a's size is
    // not known to be n) or divide by zero at u
    row("summate j from 0 to n: if j == i: x else: a[j]", "summate j from 0 to n: if j == i: x else: a[j]");
    row("summate j from 0 to n: if j == i: x else: 1 / (nat2real(j) - nat2real(i))", "summate j from 0 to n: if j == i: x else: 1 / (nat2real(j) - i)");
    // literal-array reads are reduced where the range keeps them in bounds
    row("summate j from 0 to n: (array d of n: if d == i: x else: a[d])[j]", "summate j from 0 to n: if j == i: x else: a[j]");
}

#[test]
fn gamma_ratios_in_loops() {
    row("product j from 0 to n: gammaFunc(q[j] + 2) / gammaFunc(q[j])", "product j from 0 to n: q[j] ^ 2 + q[j]");
    row("product j from 0 to n: gammaFunc(q[j]) / gammaFunc(q[j] + 3)", "1 / (product j from 0 to n: q[j] ^ 3 + 3 * q[j] ^ 2 + 2 * q[j])");
    row("summate j from 0 to n: gammaFunc(q[j] + 1) / gammaFunc(q[j])", "summate j from 0 to n: q[j]");
    row("product j from 0 to n: gammaFunc(q[j] + nat2prob(y[j]) + (if j == i: 1 else: 0)) / gammaFunc(q[j] + nat2prob(y[j]))", "if i + 1 <= n: q[i] + y[i] else: 1");
    row("product j from 0 to n: gammaFunc(p + (if i == y[j]: 1 else: 0)) / gammaFunc(p)", "p ** (summate j from 0 to n: if i == y[j]: 1 else: 0)");
    row("product j from 0 to n: gammaFunc(q[j] + 1 / 2) / gammaFunc(q[j])", "(product j from 0 to n: gammaFunc(prob2real(q[j]) + 1/2))\n    / (product j from 0 to n: gammaFunc(q[j]))");
    row("product j from 0 to n: gammaFunc(q[j] + 20) / gammaFunc(q[j])", "(product j from 0 to n: gammaFunc(prob2real(q[j]) + 20))\n    / (product j from 0 to n: gammaFunc(q[j]))");
}

/// Every variant in `variants` (bodies over `n`, `i`, `y`, `s`) closes to one and the same
/// term: they are loaded as the elements of one array literal, so equal means the same
/// `TermId` (issue 10 §3: the histogram transform must meet each count once).
fn one_term(variants: &[&str]) {
    let src = format!("fn n nat: fn i nat: fn y array(nat): fn s array(real): [{}]", variants.join(", "));
    let mut st = Store::new();
    let t = front::load(&mut st, &src).unwrap_or_else(|d| panic!("{src}: {d:?}"));
    let r = simplify_loops(&mut st, &Context::new(), t);
    let (vars, body) = params(&st, r);
    let Node::ArrayLit(xs) = st.node(body).clone() else { panic!("{src}: not an array literal") };
    for (x, v) in xs.iter().zip(variants) {
        assert_eq!(*x, xs[0], "{v}\n  is {}\n  not {}", print::print_term(&st, *x), print::print_term(&st, xs[0]));
    }
    let (_, a) = params(&st, t);
    let Node::ArrayLit(ins) = st.node(a).clone() else { panic!("{src}: not an array literal") };
    for (x, v) in ins.iter().zip(variants) {
        match same_values(&mut st, &vars, *x, xs[0], 40, 11) {
            Ok(k) => assert!(k > 0, "{v}: nothing compared"),
            Err(e) => panic!("{v}: {e}"),
        }
    }
}

#[test]
fn counts_and_class_sums_are_one_term() {
    one_term(&[
        "summate j from 0 to n: if i == y[j]: 1 else: 0",
        "summate k from 0 to n: if y[k] == i: 1 else: 0",
        "summate k from 0 to n: if y[k] /= i: 0 else: 1",
        "summate k from 0 to n: if not (y[k] == i): 0 else: 1",
        "summate k from 0 to n: (if i == y[k]: 1 else: 0) * 1",
        "summate k from 0 to n: if i == y[k] && k < n: 1 else: 0",
        "summate k from 0 to n: if i == y[k]: (if y[k] == i: 1 else: 0) else: 0",
    ]);
    one_term(&[
        "summate j from 0 to n: if i == y[j]: 1. real else: 0",
        "nat2real(summate k from 0 to n: if y[k] == i: 1 else: 0)",
        "summate k from 0 to n: if y[k] /= i: 0. real else: 1",
        "summate k from 0 to n: nat2real(if y[k] == i: 1 else: 0)",
    ]);
    one_term(&[
        "summate j from 0 to n: if i == y[j]: s[j] else: 0",
        "summate k from 0 to n: if y[k] == i: s[k] else: 0",
        "summate k from 0 to n: s[k] * (if i == y[k]: 1 else: 0)",
        "summate k from 0 to n: (if y[k] /= i: 0 else: 1) * s[k]",
        "summate k from 0 to n: if y[k] == i: s[k] else: 0 * s[k]",
    ]);
    one_term(&[
        "summate j from 0 to n: if i == y[j]: s[j] ^ 2 else: 0",
        "summate k from 0 to n: if y[k] == i: s[k] * s[k] else: 0",
        "summate k from 0 to n: (if i == y[k]: s[k] else: 0) ^ 2",
        "summate k from 0 to n: s[k] * (if y[k] == i: s[k] else: 0)",
    ]);
    one_term(&[
        "summate j from 0 to n: if i < y[j]: 1 else: 0",
        "summate k from 0 to n: if y[k] > i: 1 else: 0",
        "summate k from 0 to n: if not (y[k] <= i): 1 else: 0",
        "summate k from 0 to n: if i + 1 <= y[k]: 1 else: 0",
        "summate k from 0 to n: if y[k] >= i + 1: 1 else: 0",
    ]);
    one_term(&[
        "summate j from 0 to n: if i /= y[j]: 1 else: 0",
        "int2nat(n - (summate k from 0 to n: if y[k] == i: 1 else: 0))",
        "int2nat(summate k from 0 to n: 1 - (if y[k] == i: 1 else: 0))",
    ]);
}

// ---- closed forms against explicit loops ------------------------------------------------

/// Loads `src`, closes its loops, and compares the input and the output at the
/// parameter values `vals` (in `fn` order); `closed` also asks that no loop remains.
fn agree(src: &str, vals: &[Rational], closed: bool) -> Result<(), TestCaseError> {
    let mut s = Store::new();
    let t = front::load(&mut s, src).map_err(|d| TestCaseError::fail(format!("{src}: {d:?}")))?;
    let r = simplify_loops(&mut s, &Context::new(), t);
    let text = print::print_term(&s, r);
    prop_assert!(verify(&s, r).is_ok(), "{src}: output does not verify:\n{text}");
    prop_assert!(!closed || !text.contains("summate") && !text.contains("product"), "{src}: not closed:\n{text}");
    let (vars, a) = params(&s, t);
    let (_, b) = params(&s, r);
    let env: Vec<(VarId, V)> = vars.iter().zip(vals).map(|(&v, x)| (v, V::N(x.clone()))).collect();
    let (ai, bi) = (instantiate(&mut s, a, &env), instantiate(&mut s, b, &env));
    match (value(&s, ai), value(&s, bi)) {
        (Some(x), Some(y)) => prop_assert!(same(&x, &y), "{src} at {vals:?}: loop {}, closed {}\n{text}", float(&x), float(&y)),
        _ => prop_assert!(false, "{src} at {vals:?}: cannot evaluate\n{text}"),
    }
    Ok(())
}

/// `c0 + c1 * x * k + c2 * k^2 + ...` over the index `k` written as `idx`.
fn poly_text(cs: &[i64], with_x: &[bool], idx: &str, scale: &str) -> String {
    let mut parts = Vec::new();
    for (d, (&c, &wx)) in cs.iter().zip(with_x).enumerate() {
        let x = if wx { " * x" } else { "" };
        parts.push(match d {
            0 => format!("({c}){scale}{x}"),
            _ => format!("({c}){scale}{x} * {idx} ^ {d}"),
        });
    }
    parts.join(" + ")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn polynomial_sums_over_nat_bounds(
        cs in proptest::collection::vec(-3i64..=3, 1..=5),
        wx in proptest::collection::vec(any::<bool>(), 5),
        lo in 0u32..7, hi in 0u32..9, x in -200i64..200,
    ) {
        let body = poly_text(&cs, &wx, "nat2real(k)", "");
        let src = format!("fn lo nat: fn hi nat: fn x real: summate k from lo to hi: {body}");
        agree(&src, &[frac(i64::from(lo), 1), frac(i64::from(hi), 1), frac(x, 100)], true)?;
    }

    #[test]
    fn polynomial_sums_over_int_bounds(
        cs in proptest::collection::vec(-3i64..=3, 1..=5),
        wx in proptest::collection::vec(any::<bool>(), 5),
        lo in -5i32..5, hi in -5i32..7, x in -200i64..200,
    ) {
        let body = poly_text(&cs, &wx, "int2real(k)", "");
        let src = format!("fn lo int: fn hi int: fn x real: summate k from lo to hi: {body}");
        agree(&src, &[frac(i64::from(lo), 1), frac(i64::from(hi), 1), frac(x, 100)], true)?;
    }

    #[test]
    fn polynomial_sums_from_literal_bounds(
        cs in proptest::collection::vec(-3i64..=3, 1..=5),
        wx in proptest::collection::vec(any::<bool>(), 5),
        lo in 0u32..4, hi in 0u32..9, x in -200i64..200,
    ) {
        let body = poly_text(&cs, &wx, "nat2real(k)", "");
        let src = format!("fn hi nat: fn x real: summate k from {lo} to hi + 1: {body}");
        agree(&src, &[frac(i64::from(hi), 1), frac(x, 100)], true)?;
    }

    #[test]
    fn products_of_constants_and_exponentials(
        c in prop_oneof![-3i64..=-1, 1i64..=3],
        e in 0u32..3,
        cs in proptest::collection::vec(-3i64..=3, 1..=3),
        wx in proptest::collection::vec(any::<bool>(), 3),
        lo in 0u32..6, hi in 0u32..8, x in -200i64..200, p in 1i64..300,
    ) {
        let ex = poly_text(&cs, &wx, "nat2real(k)", "/10");
        let src = format!(
            "fn lo nat: fn hi nat: fn x real: fn p prob: product k from lo to hi: ({c}) * x ^ {e} * p * exp({ex})"
        );
        agree(&src, &[frac(i64::from(lo), 1), frac(i64::from(hi), 1), frac(x, 100), frac(p, 100)], true)?;
    }

    #[test]
    fn products_over_int_bounds(
        c in prop_oneof![-3i64..=-1, 1i64..=3],
        cs in proptest::collection::vec(-3i64..=3, 1..=3),
        wx in proptest::collection::vec(any::<bool>(), 3),
        lo in -4i32..4, hi in -4i32..6, x in -200i64..200,
    ) {
        let ex = poly_text(&cs, &wx, "int2real(k)", "/10");
        let src = format!("fn lo int: fn hi int: fn x real: product k from lo to hi: ({c}) * x * exp({ex})");
        agree(&src, &[frac(i64::from(lo), 1), frac(i64::from(hi), 1), frac(x, 100)], true)?;
    }

    #[test]
    fn deltas_collapse(
        shift in -2i64..=2, lo in 0u32..4, n in 0u32..8, i in 0u32..9, x in -200i64..200,
    ) {
        let src = format!(
            "fn n nat: fn i nat: fn x real: summate j from {lo} to n: if nat2int(i) == nat2int(j) + ({shift}): x * nat2real(j) ^ 2 + 1 else: 0"
        );
        agree(&src, &[frac(i64::from(n), 1), frac(i64::from(i), 1), frac(x, 100)], true)?;
        let src = format!(
            "fn n nat: fn i nat: fn x real: product j from {lo} to n: if nat2int(i) == nat2int(j) + ({shift}): x * nat2real(j) + 2 else: 1"
        );
        agree(&src, &[frac(i64::from(n), 1), frac(i64::from(i), 1), frac(x, 100)], true)?;
    }
}