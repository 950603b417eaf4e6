//! Golden identities for canonical forms: each row is an input `.hk` expression (free
//! variables as `fn` parameters) and the printed canonical form of its body. Every row
//! also checks that the output verifies, that canonicalising again changes nothing, and
//! that printing and loading the output gives an alpha-equivalent term.

use super::*;
use crate::alpha::alpha_eq;
use crate::num::Rational;
use crate::term::Node;
use crate::verify::verify;
use crate::{front, print};

/// The body under the leading `fn`s.
fn body(s: &Store, mut t: TermId) -> TermId {
    while let Node::Lam(_, b) = s.node(t) {
        t = *b;
    }
    t
}

fn canon_text(src: &str) -> Result<String, String> {
    let mut s = Store::new();
    let t = front::load(&mut s, src).map_err(|d| format!("{d:?}"))?;
    let c = canonicalize(&mut s, &Context::new(), t);
    verify(&s, c).map_err(|e| format!("output does not verify: {e}"))?;
    let again = canonicalize(&mut s, &Context::new(), c);
    if again != c {
        return Err(format!(
            "not idempotent:\n{}---\n{}",
            print::print_term(&s, c),
            print::print_term(&s, again)
        ));
    }
    let printed = print::print_term(&s, c);
    let back =
        front::load(&mut s, &printed).map_err(|d| format!("reload of\n{printed}failed: {d:?}"))?;
    if !alpha_eq(&s, c, back) {
        return Err(format!("printed form does not round-trip:\n{printed}"));
    }
    Ok(print::print_term(&s, body(&s, c)).trim_end().to_string())
}

fn check(src: &str, expect: &str) {
    match canon_text(src) {
        Ok(got) => assert_eq!(got, expect, "canonical form of {src}"),
        Err(e) => panic!("{src}: {e}"),
    }
}

#[test]
fn constants_sums_and_products() {
    check("fn x real: x + x", "2 * x");
    check("fn x real: 1/2 + 1/3", "5/6");
    check("fn x real: x - x", "0. real");
    check("fn x real: fn y real: x + y - x", "y");
    check("fn x real: 3 * x - x * 3", "0. real");
    check("fn x real: fn y real: x * y * x", "x ^ 2 * y");
    check("fn x real: (x + 1)^2", "x ^ 2 + 2 * x + 1");
    check("fn x real: (x - 1)^3", "x ^ 3 - 3 * x ^ 2 + 3 * x - 1");
    check("fn x real: fn y real: (x + y)^2", "x ^ 2 + 2 * x * y + y ^ 2");
    check("fn x real: fn y real: (x + y)*(x - y)", "x ^ 2 - y ^ 2");
    check("fn x real: x^2/2 - x/3", "x ^ 2 / 2 - x / 3");
    check("fn x real: (x^2 - 1)/(x - 1)", "x + 1");
    check("fn x real: fn y real: (x^2 - y^2)/(x + y)", "x - y");
    check("fn x real: fn y real: x/y + 1/y", "(x + 1) / y");
    check("fn x real: 1/x + 1/x", "2 / x");
    check("fn x real: fn y real: (x + 1/2) / y", "(2 * x + 1) / (2 * y)");
    check("fn x real: x / 2", "x / 2");
    check("fn x real: fn y real: x * y / (2 * x)", "y / 2");
    check("fn x real: fn y real: x * (y + 1) - x * y", "x");
}

#[test]
fn exponentials() {
    check("fn x real: fn y real: exp(x) * exp(y)", "exp(x + y)");
    check("fn x real: exp(x)^2", "exp(2 * x)");
    check("fn x real: exp(x) / exp(x)", "1. prob");
    check("fn x real: 1 / exp(x)", "exp(-x)");
    check("fn x real: exp(0)", "1. prob");
    check("fn x real: exp(x) * exp(-x) * 3", "3. prob");
    check("fn x prob: exp(log(x))", "x");
    check("fn x prob: exp(2 * log(x))", "x ^ 2");
    check("fn x prob: exp(-log(x))", "1 / x");
    check("fn x prob: exp(log(x) / 2)", "sqrt(x)");
    check("fn x prob: fn y real: exp(log(x) + y)", "x * exp(y)");
}

#[test]
fn logarithms() {
    check("fn x real: log(exp(x))", "x");
    check("fn x prob: fn y prob: log(x * y)", "log(x) + log(y)");
    check("fn x prob: log(x^3)", "3 * log(x)");
    check("log(1)", "0. real");
    check("fn x prob: fn y prob: log(x / y)", "log(x) - log(y)");
    check("log(1/2)", "-log(2)");
    check("fn x prob: log(sqrt(x))", "log(x) / 2");
    check("fn x prob: log(2 * x)", "log(x) + log(2)");
    check("fn x prob: log(x * (x + 1))", "log(x) + log(x + 1)");
    check("fn x real: log(exp(x) * exp(x))", "2 * x");
}

#[test]
fn powers_and_radicals() {
    check("sqrt(8)", "2 * sqrt(2)");
    check("sqrt(4)", "2. prob");
    check("sqrt(1/8)", "sqrt(2) / 4");
    check("fn x prob: sqrt(x) * sqrt(x)", "x");
    check("fn x prob: sqrt(x)^3", "x * sqrt(x)");
    check("fn x prob: x ** (1/3) * x ** (1/2)", "x ** (5/6)");
    check("fn x prob: fn y prob: sqrt(x * y)", "sqrt(x) * sqrt(y)");
    check("sqrt(2) * sqrt(3)", "sqrt(6)");
    check("sqrt(2) * sqrt(2)", "2. prob");
    check("fn x real: 1 / sqrt(2)", "sqrt(2) / 2");
    check("natroot(8, 3)", "2. prob");
    check("natroot(16, 3)", "2 * natroot(2, 3)");
    check("sqrt(2) * natroot(2, 3)", "natroot(32, 6)");
    check("sqrt(2) * natroot(3, 3) * sqrt(3)", "natroot(243, 6) * sqrt(2)");
    check("sqrt(2) * natroot(4, 3)", "2 * natroot(2, 6)");
    check("sqrt(sqrt(1/2))", "natroot(8, 4) / 2");
    check("fn x prob: fn y real: x ** y", "x ** y");
    check("fn x prob: fn y real: x ** y * x ** y", "x ** (2 * y)");
    check("fn x prob: fn y real: fn z real: x ** y * x ** z", "x ** (y + z)");
    check("fn x prob: x ** 2", "x ^ 2");
    check("fn x prob: sqrt(x^2)", "x");
    check("fn x prob: 1/sqrt(x)", "1 / sqrt(x)");
    check("fn x prob: fn y prob: sqrt(x) / (x * y)", "1 / (y * sqrt(x))");
    check("pi * pi", "pi ^ 2");
    check("sqrt(pi) * sqrt(pi)", "pi");
}

#[test]
fn coercions_to_the_leaves() {
    check("fn a prob: fn b prob: prob2real(a * b)", "prob2real(a) * b");
    check("fn a prob: fn b prob: prob2real(a + b) - prob2real(a)", "prob2real(b)");
    check("fn n nat: fn m nat: (n + m) * 2", "2 * n + 2 * m");
    check("fn n int: fn m nat: n - m", "n - m");
    check("fn p prob: real2prob(1 - p)", "real2prob(-p + 1)");
    check("fn p prob: real2prob(prob2real(p) + 1)", "p + 1");
    // issue 10: a prob factor common to every term and a prob denominator come out of
    // `real2prob`, so a precision `t * (..)` is seen as a power of `t`
    check("fn t prob: fn x real: real2prob(t * x - t)", "t * real2prob(x - 1)");
    check("fn t prob: fn x real: real2prob((x - 1) / (t + 1))", "real2prob(x - 1) / (t + 1)");
    check("fn x real: fn y real: real2prob(x * y - x)", "real2prob(x * y - x)");
    check("fn n nat: nat2real(n) * 2 + 1", "2 * nat2real(n) + 1");
}

#[test]
fn piecewise_atoms() {
    check("fn x prob: fn c bool: if c: x + 1 else: 1 + x", "x + 1");
    check("fn x real: fn c bool: (if c: x else: 2*x) * 3", "3 * (if c: x else: 2 * x)");
    check("fn x real: if true: x + x else: x", "2 * x");
    check("fn x real: fn y real: if x < y: x + 0 else: y", "if x < y: x else: y");
}

#[test]
fn densities_and_atoms() {
    check("fn x real: fn mu real: fn s prob: exp(-(x - mu)^2 / (2 * s^2)) / (s * sqrt(2 * pi))", "exp(-(x ^ 2 - 2 * x * mu + mu ^ 2) / (2 * prob2real(s) ^ 2)) / (s * sqrt(2) * sqrt(pi))");
    check("fn p prob: fn a prob: fn b prob: p ** (a - 1) * real2prob(1 - p) ** (b - 1)", "p ** (a - 1) * real2prob(-p + 1) ** (b - 1)");
    check("fn x prob: fn k prob: fn t prob: x ** (k - 1) * exp(-x / t)", "x ** (k - 1) * exp(-prob2real(x) / t)");
    check("fn a array(real): fn i nat: a[i] + a[i]", "2 * a[i]");
    check("fn x real: fn y real: max(y, x) + max(x, y)", "2 * max(x, y)");
    check("fn n nat: summate i from 0 to n: i + i", "int2nat(nat2int(n) ^ 2 - n)");
    check("fn x real: fn y real: (x + y)^2 - (x - y)^2", "4 * x * y");
    check("fn x real: (1 + x)^10 - (x + 1)^10", "0. real");
}
/// Inputs that are equal as polynomials (or rational functions) get one printed form.
fn same(srcs: &[&str]) {
    let forms: Vec<String> = srcs
        .iter()
        .map(|s| canon_text(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    for (s, f) in srcs.iter().zip(&forms) {
        assert_eq!(f, &forms[0], "{s} and {} differ", srcs[0]);
    }
}

#[test]
fn polynomially_equal_inputs_get_one_form() {
    same(&["fn x real: fn y real: (x + y)^2", "fn x real: fn y real: x^2 + 2*x*y + y^2", "fn x real: fn y real: y^2 + x*(2*y + x)"]);
    same(&["fn x real: fn y real: x * y + 1", "fn x real: fn y real: 1 + y * x", "fn x real: fn y real: (x + 1) * (y + 1) - x - y"]);
    same(&["fn x real: fn y real: exp(x) * exp(y)", "fn x real: fn y real: exp(y + x)", "fn x real: fn y real: exp(x + y + 1) / exp(1)"]);
    same(&["fn x real: fn y real: 1 / (x + y)", "fn x real: fn y real: (x - y) / (x^2 - y^2)", "fn x real: fn y real: 2 / (2*y + 2*x)"]);
    same(&["fn x prob: fn y prob: sqrt(x) * sqrt(y) * x", "fn x prob: fn y prob: sqrt(x^3 * y)", "fn x prob: fn y prob: x ** (3/2) * y ** (1/2)"]);
    same(&["fn p prob: fn a real: p ** (a - 1)", "fn p prob: fn a real: p ** a / p", "fn p prob: fn a real: exp(a * log(p)) * exp(-log(p))"]);
    same(&["fn x prob: fn y prob: log(x) + log(y) + log(2)", "fn x prob: fn y prob: log(2 * y * x)", "fn x prob: fn y prob: log(y) + log(x * 2)"]);
}

/// Canonicalising in one session after meeting kernels in another order changes nothing.
#[test]
fn output_does_not_depend_on_the_order_kernels_are_met() {
    let mut s = Store::new();
    let t = front::load(&mut s, "fn x real: fn y real: (y + exp(x)) * (log(2) + x)").unwrap();
    let mut c1 = Canon::new(&mut s, Context::new());
    let a = c1.canonicalize(t);
    let mut s2 = s.clone();
    let mut c2 = Canon::new(&mut s2, Context::new());
    // meet the kernels in another order first
    let u = front::load(c2.store_mut(), "fn x real: fn y real: log(2) * exp(x) * y").unwrap();
    c2.canonicalize(u);
    let b = c2.canonicalize(t);
    assert_eq!(a, b);
}

#[test]
fn to_term_writes_each_numeric_type() {
    let mut s = Store::new();
    let t = front::load(&mut s, "fn n nat: fn p prob: fn x real: n").unwrap();
    let n = body(&s, t);
    let mut c = Canon::new(&mut s, Context::new());
    let nn = c.normal(n).unwrap();
    let two = Normal::constant(Rational::from_integer(2));
    let sum = nn.add(&two, 100).unwrap();
    for ty in [Type::Nat, Type::Int, Type::Prob, Type::Real] {
        let w = c.to_term(&sum, &ty).unwrap();
        verify(c.store(), w).unwrap();
        assert_eq!(c.store().ty(w), &ty);
    }
    let neg = sum.neg();
    let w = c.to_term(&neg, &Type::Nat).unwrap();
    verify(c.store(), w).unwrap();
    assert_eq!(
        print::print_term(c.store(), w).trim_end(),
        "int2nat(-n - 2)"
    );
    assert!(c.to_term(&sum, &Type::Bool).is_err());
}

#[test]
fn collect_gives_coefficients_in_one_kernel() {
    let mut s = Store::new();
    let t = front::load(
        &mut s,
        "fn x real: fn mu real: fn s prob: -(x - mu)^2 / (2 * s^2)",
    )
    .unwrap();
    let e = body(&s, t);
    let x = match s.node(t) {
        Node::Lam(v, _) => s.var_term(*v),
        _ => unreachable!("a fn"),
    };
    let mut c = Canon::new(&mut s, Context::new());
    let cs = c.collect(e, x).unwrap();
    let shown: Vec<(u32, String)> = cs
        .iter()
        .map(|&(d, t)| (d, print::print_term(c.store(), t).trim_end().to_string()))
        .collect();
    assert_eq!(
        shown,
        vec![
            (2, "-1 / (2 * prob2real(s) ^ 2)".to_string()),
            (1, "mu / prob2real(s) ^ 2".to_string()),
            (0, "-mu ^ 2 / (2 * prob2real(s) ^ 2)".to_string()),
        ]
    );
    let not_kernel = body(c.store(), t);
    assert_eq!(
        c.collect(e, not_kernel),
        Err(CanonError::NotAKernel { term: not_kernel })
    );
}

#[test]
fn expansions_over_the_budget_stay_atoms() {
    let mut s = Store::new();
    let t = front::load(
        &mut s,
        "fn a real: fn b real: fn c real: fn d real: (a + b + c + d)^30",
    )
    .unwrap();
    let e = body(&s, t);
    let mut c = Canon::with_config(&mut s, Context::new(), CanonConfig { max_terms: 500 });
    let r = c.canonicalize(e);
    assert_eq!(c.budget_hits(), 1);
    assert_eq!(
        print::print_term(c.store(), r).trim_end(),
        "(a + b + c + d) ^ 30"
    );
    let again = c.canonicalize(r);
    assert_eq!(again, r);
    // the 330 terms of (x1 + ... + x8)^4 are within the default budget
    let u = front::load(c.store_mut(), "fn a real: fn b real: fn c real: fn d real: fn e real: fn f real: fn g real: fn h real: (a+b+c+d+e+f+g+h)^4").unwrap();
    let mut c = Canon::new(c.store_mut(), Context::new());
    let n = c.normal(body(c.store(), u)).unwrap();
    assert_eq!(n.num().terms().len(), 330);
    assert_eq!(c.budget_hits(), 0);
}

#[test]
fn conditions_are_decided_under_the_context() {
    check("fn n nat: summate i from 0 to n: if i < n: i + i else: 0", "int2nat(nat2int(n) ^ 2 - n)");
    check("fn x real: if x < 0: (if x < 0: x * 2 else: x) else: x + x", "2 * x");
    check("fn x real: fn y real: if not(y <= x): x else: y", "if x < y: x else: y");
}

/// Deep nesting (100,000 levels, built directly: the parser stops at 1,000) neither
/// overflows the stack nor takes long.
#[test]
fn deeply_nested_input() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let xt = s.var_term(x);
    let mut t = s.int_lit(1, Type::Real);
    for _ in 0..100_000 {
        t = s.prim(crate::term::Prim::Add, vec![xt, t], Type::Real);
    }
    let c = canonicalize(&mut s, &Context::new(), t);
    verify(&s, c).unwrap();
    assert_eq!(print::print_term(&s, c).trim_end(), "100000 * x + 1");
}

#[test]
fn measures_and_binders_keep_their_shape() {
    check("fn mu real:\nx <~ normal(mu + mu, 1)\nreturn x * 2 - x", "x <~ normal(2 * mu, 1)\nreturn x");
    check("fn n nat: fn a array(prob): weight(product i from 0 to n: a[i] * a[i], return n + n)", "weight(product j from 0 to n: a[j] ^ 2, return 2 * n)");
    check("fn a array(real): array i of size(a): a[i] - a[i] + 1", "array i of size(a): 1. real");
}

/// A likelihood of 50 normal observations: one exponential whose exponent is a
/// polynomial over `2 s^2`, and the constants gathered (`(2 pi)^25 s^50`).
#[test]
fn product_of_fifty_normal_densities_is_one_exponential() {
    let factors: Vec<String> = (0..50).map(|i| format!("exp(-(xs[{i}] - mu)^2 / (2 * s^2)) / (s * sqrt(2 * pi))")).collect();
    let src = format!("fn mu real: fn s prob: fn xs array(real):\n{}", factors.join(" * "));
    let text = canon_text(&src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text.matches("exp(").count(), 1, "{text}");
    assert!(text.starts_with("exp(-(50 * mu ^ 2"), "{text}");
    assert!(text.ends_with("/ (33554432 * s ^ 50 * pi ^ 25)"), "{text}");
}

/// Limits and singular inputs: kept as atoms or decided exactly, never a panic or a hang.
#[test]
fn edge_cases() {
    check("fn x real: 1/(x - x)", "recip(0. real)");
    check("2 ^ 1000000000", "2 ^ 1000000000");
    check("fn x prob: sqrt(x) ^ 1000000000", "x ^ 500000000");
    check("log(0)", "log(0)");
    check("exp(log(0))", "0. prob");
    check("fn x real: (x+1)^100000", "(x + 1) ^ 100000");
    check("sqrt(2) ^ 1000000000", "sqrt(2) ^ 1000000000");
    check("fn x prob: x ** 1000000000", "x ^ 1000000000");
    check("natroot(0, 3)", "0. prob");
    check("fn x real: exp(x) ^ 100000", "exp(100000 * x)");
    check("fn x prob: log(x ^ 0)", "0. real");
    check("fn x prob: 0 * x ** (1/2)", "0. prob");
    check("real2prob(-2) ** (1/2)", "sqrt(real2prob(-2))");
    check("fn n nat: fn m nat: int2nat(n - m) + 1", "int2nat(n - m) + 1");
    // exponents past MAX_EXPONENT stay powers; they once wrapped around to `1`
    check("fn x real: x ^ 3000000000 * x ^ 3000000000", "(x ^ 3000000000) ^ 2");
    check("fn x real: x ^ 1073741824 * x ^ 1073741824", "x ^ 1073741824 * x ^ 1073741824");
    check("fn x real: x ^ 1073741824 * x", "x ^ 1073741824 * x");
}

/// Conditions: numeric sides canonical first, then `cond`'s canonical comparison shape.
#[test]
fn conditions_are_canonical() {
    check("fn x real: fn y real: if 2*x + 1 < y: x else: y", "if 2 * x + 1 < y: x else: y");
    check("fn x real: fn y real: if x * y < 1: x else: y", "if x * y < 1: x else: y");
    check("fn n nat: fn i nat: if i + 1 <= n: 1 else: 2", "if i + 1 <= n: 1 else: 2");
    check("fn x real: fn y real: if (x + y)^2 == x^2 + y^2 + 2*x*y: x else: y", "x");
    check("fn x real: fn y real: if x/2 < y/3 && y < x: x else: y", "if y < x && 3 * x < 2 * y: x else: y");
    check("fn a array(real): fn i nat: if a[i] * 2 < a[i] + 1: a[i] else: 0", "if a[i] < 1: a[i] else: 0");
    check("fn x prob: fn y prob: if x * y < 2 * x: x else: y", "if x * y < 2 * x: x else: y");
}
