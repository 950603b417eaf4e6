//! Round trips through the front end: for each program, load (parse + elaborate), print,
//! load the printed text again and require an alpha-equivalent term; print that term too
//! and require the same text (the printer's output is a fixpoint). Every loaded term
//! must also pass `verify`.

use super::*;
use crate::alpha::alpha_eq;
use crate::verify::verify;

/// Parse and elaborate `text` into `store`.
pub(crate) fn load(store: &mut Store, text: &str) -> Result<TermId, String> {
    crate::front::load(store, text).map_err(|d| format!("{d:?}"))
}

/// The round trip described in the module doc, with `opts`; returns the printed text.
pub(crate) fn round_trip(text: &str, opts: &PrintOptions) -> Result<String, String> {
    let mut store = Store::new();
    let t1 = load(&mut store, text)?;
    verify(&store, t1).map_err(|e| format!("input does not verify: {e}"))?;
    let p1 = print_with(&store, t1, opts);
    let t2 = load(&mut store, &p1).map_err(|e| format!("printed text does not load: {e}\n{p1}"))?;
    verify(&store, t2).map_err(|e| format!("reloaded term does not verify: {e}"))?;
    if !alpha_eq(&store, t1, t2) {
        return Err(format!("printed text loads to a different term:\n{p1}"));
    }
    let p2 = print_with(&store, t2, opts);
    if p1 != p2 {
        return Err(format!("printing is not a fixpoint:\n{p1}---\n{p2}"));
    }
    Ok(p1)
}

/// The round trip at the default width and at a narrow one (which breaks most lines);
/// a description of each failure.
fn failures(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for opts in [
        PrintOptions::default(),
        // decimals read back as the same rationals
        PrintOptions {
            ascii: true,
            width: 30,
            decimals: true,
        },
    ] {
        if let Err(e) = round_trip(text, &opts) {
            out.push(format!("round trip of\n{text}\nwith {opts:?} failed: {e}"));
        }
    }
    out
}

fn check_all(texts: &[&str]) {
    let errs: Vec<String> = texts.iter().flat_map(|t| failures(t)).collect();
    assert!(
        errs.is_empty(),
        "{} failures:\n{}",
        errs.len(),
        errs.join("\n\n")
    );
}

/// Programs exercising every construct, literal form and layout the printer produces.
const PROGRAMS: &[&str] = &[
    "3",
    "-3",
    "+3",
    "1/2",
    "-1/2",
    "0.5",
    "3/1",
    "+3/1",
    "1 + 2",
    "1.0 + 2",
    "3 * 4 / 2",
    "3 / 2 / 5",
    "1/2 * 3",
    "(1/2) * 3",
    "2 ^ 3",
    "(-2) ^ 3",
    "(1/2) ** 0.5",
    "[1, 2, 3]",
    "[1.5, -2, 3]",
    "[]. array(real)",
    "(1, 2.5, true)",
    "()",
    "left(1). either(nat, bool)",
    "right(-1). either(nat, int)",
    "just(0.5)",
    "nothing. maybe(nat)",
    "∞",
    "-∞",
    "pi * 2",
    "exp(1) + log(2)",
    "min(3, -1)",
    "max(1/2, 2)",
    "not(true) && false || true",
    "1 < 2 && 2.5 >= 1",
    "if true: 1 else: 2.5",
    "if 1 < 2: -1 else: 2",
    "fn x real: x - 3",
    "fn x real: x * -3",
    "fn x real: -x * 2 + 1",
    "fn x real: fn y real: x / y",
    "fn x prob: fn y prob: x / y / 2",
    "fn x prob: 1 / x",
    "fn x prob: x * recip(0.0)",
    "fn x real: x / -2",
    "fn x nat: x - 1",
    "fn x int: abs(x) + signum(x)",
    "fn x real: floor(x)",
    "fn x nat: nat2real(x) + 0.5",
    "fn x real: real2prob(x) ** x",
    "fn x prob: x ^ 2 + natroot(x, 3)",
    "fn x real: x ^ 2 ^ 2",
    "fn x real: -(x ^ 2)",
    "fn x real: -(-x)",
    "fn x real: 1 - -x",
    "fn x real: x - ∞",
    "fn x real: x < ∞ && -∞ < x",
    "fn a array(real): a[0] + a[int2nat(size(a) - 1)]",
    "fn a array(real): reduce(fn x real: fn y real: x + y, 0, a)",
    "fn p pair(real, nat): match p:\n    (x, n): x + n",
    "fn e either(nat, real): match e:\n    left(n): nat2real(n)\n    right(r): r",
    "fn m maybe(bool): match m:\n    just(true): 1\n    just(false): 2\n    nothing: 0.5",
    "fn b bool: match b:\n    true: 1\n    _: 0",
    "normal(0, 1)",
    "normal(-1.5, 2)",
    "x <~ normal(0, 1)\nreturn x",
    "x <~ normal(0, 1)\nreturn 3",
    "x <~ normal(0, 1)\nreturn (x, 3)",
    "x = 3\ny = x + 1\nreturn y",
    "x = 3\nx",
    "weight(0.5, return true) <|> weight(0.5, return false)",
    "return 1 <|> return 2",
    "reject. measure(nat)",
    "weight(2, reject. measure(real))",
    "factor(0.5)",
    "lebesgue(-∞, ∞)",
    "uniform(0, 1)",
    "counting",
    "gamma(1, 2)",
    "beta(1, 1)",
    "poisson(3)",
    "categorical([0.5, 0.5])",
    "fn n nat: plate i of n: normal(nat2real(i), 1)",
    "fn n nat: array i of n: i * 2",
    "fn n nat: summate i from 0 to n: i",
    "fn n int: product i from -3 to n: i",
    "summate i from 0 to 10: 1",
    "integrate x from 0 to 1: exp(x)",
    "integrate x from -∞ to ∞: exp(-x * x)",
    "fn n nat: bucket j from 0 to n: r_add 1",
    "fn n nat: bucket j from 0 to n: r_index b = 3 of j: r_add 1",
    "fn n nat: bucket j from 0 to n: r_fanout r_add 1 || r_nop",
    "fn n nat: bucket j from 0 to n: r_split j < 2: r_add 1.5 else: r_nop",
    "chain s from -0.5 of 3:\n    x <~ normal(s, 1)\n    return (x, x)",
    "m = normal(0, 1)\nobserve(m, 0.5)",
    "simplify(normal(0, 1))",
    "def f(x real) real: x + 1\nf(2)",
    "def f(x real, y prob) measure(real):\n    z <~ normal(x, y)\n    return z\nf(0, 1)",
    "def sq(x nat) nat: x * x\nfn n nat:\nsq(sq(n))",
    "fn x real:\nfn x real:\nx",
    "x <~ normal(0, 1)\nx <~ normal(x, 1)\nreturn x",
    "fn exp1 real: exp(exp1)",
    "fn mu real:\nfn sigma prob:\nx <~ normal(mu, sigma)\ny <~ normal(x, sigma)\nweight(exp(-(y * y)), return (x, y))",
    "weight(1/2, x <~ normal(0, 1)\n            return x)",
    "y <~ (x <~ normal(0, 1)\n      return x)\nreturn y",
    "fn c bool: if c: return 1.0 else: return 2.5",
    "fn c bool:\nx <~ if c: normal(0, 1) else: uniform(0, 1)\nreturn x",
    "fn c bool: if c: reject. measure(real) else: normal(0, 1)",
    "fn f real -> real: f(1)",
    "(fn x real: x * 2)(3)",
    "fn xs array(real): [xs[0], 2]",
    "fn a nat: fn b nat: choose(a, b) + 1",
    "fn p prob: betaFunc(p, 2) * gammaFunc(1)",
    "fn x real: sin(x) + cos(x) * atanh(0.5)",
    "fn p bool: fn q bool: xor(p, q) || iff(p, q)",
    "fn x real: erf(x) + erf(1)",
    "fn x int: x == 3 || x /= -1",
    "fn b bool: b == true",
    "fn x real: if x < 0: -x else: x",
    "def ap(g real -> real, x real) real: g(x)\nap(fn y real: y * 2, 1)",
    "fn θ real: θ * 2",
    "fn x nat: -x + 1",
    "fn x prob: fn n nat: x ^ n * 2 ^ n",
    "fn a array(nat): array i of size(a): a[i] + 1",
    "fn p pair(nat, prob): match p:\n    (n, q): if n == 0: q else: q * 2",
    "x <~ categorical([1, 2])\nm = if x == 0: normal(0, 1) else: uniform(0, 1)\ny <~ m\nreturn (x, y)",
    // safe coercions the elaborator inserts, and explicit ones it would not
    "fn n nat: fn m nat: fn x real: (n + m) * x - n / m",
    "fn n nat: fn m nat: nat2real(n) - m + int2real(n - m)",
    "fn i int: fn p prob: [i, p, -p, -i, abs(i), recip(p)]",
    "fn n nat: fn x real: max(n, x) < min(x, n) || n == x",
    "fn n nat: fn p prob: if n < 3: n else: p",
    "fn n nat:\nfn c bool:\nx <~ normal(n, 1)\nif c: return (x, n) else: return (n, x)",
    "fn n nat: fn a array(prob): reduce(fn x prob: fn y prob: x + y, n, a)",
    "fn n nat: integrate x from n to ∞: n",
    "fn n nat: left(n). either(real, bool)",
    "fn n nat: real2prob(nat2real(n)) + nat2prob(n * n)",
    "fn x real: fn n nat: x * -n + x * (-n) - (-n)",
    "def f(n nat) real: n\nfn k nat: f(k) + k",
    "fn p prob: fn n nat: p ** n + (p + n) ** (n + 1) + exp(n) + log(n)",
];

/// Load `src`, print it (as `slic-cas fmt` does) and compare with `expect` (without the
/// final newline); the text must also round-trip.
fn check_fmt(src: &str, expect: &str) {
    let got = match round_trip(src, &PrintOptions::default()) {
        Ok(text) => text,
        Err(e) => panic!("round trip of\n{src}\nfailed: {e}"),
    };
    assert_eq!(
        got,
        format!("{expect}\n"),
        "\n--- got ---\n{got}--- want ---\n{expect}\n"
    );
}

#[test]
fn implicit_coercions_stay_implicit() {
    check_fmt("fn n nat: normal(n, 1)", "fn n nat:\nnormal(n, 1)");
    check_fmt(
        "def bern(p prob) measure(bool):\n    i <~ categorical([p, real2prob(1 - p)])\n    return i == 0\nbern(0.5)",
        "def bern(p prob) measure(bool):\n    i <~ categorical([p, real2prob(1 - p)])\n    return i == 0\nbern(1/2)",
    );
    check_fmt("fn x real: fn n nat: x + n", "fn x real:\nfn n nat:\nx + n");
    check_fmt(
        "fn n nat: fn m nat: nat2real(n) + m",
        "fn n nat:\nfn m nat:\nnat2real(n) + m",
    );
    check_fmt(
        "fn n nat: fn m nat: nat2real(n + m)",
        "fn n nat:\nfn m nat:\nnat2real(n + m)",
    );
    check_fmt(
        "fn n nat: fn m nat: normal(n + m, n)",
        "fn n nat:\nfn m nat:\nnormal(n + m, n)",
    );
    check_fmt(
        "fn p prob: fn i int: if p < i: -p else: i",
        "fn p prob:\nfn i int:\nif p < i: -p else: i",
    );
    check_fmt(
        "fn p prob: fn n nat: [p, n, 1]",
        "fn p prob:\nfn n nat:\n[p, n, 1]",
    );
    check_fmt(
        "fn n nat: fn k int: summate i from n to k: i * n",
        "fn n nat:\nfn k int:\nsummate i from n to k: i * n",
    );
}

/// Literals print one way (their value; never `3/1` or `+0/1`), with a sign or an
/// annotation only where the position does not fix their type (issue: "Literals print
/// one way").
#[test]
fn literals_print_as_their_values() {
    check_fmt("categorical([3.0, 2, 0.0])", "categorical([3, 2, 0])");
    check_fmt("return [1.0, 0, 2]", "return [1, 0, 2]. array(prob)");
    check_fmt("return [1, 0, 2]", "return [1, 0, 2]");
    check_fmt("return [1, 1/2]", "return [1, 1/2]");
    check_fmt("return [1.0, 2]", "return [1, 2]. array(prob)");
    check_fmt("return [-1, 1/2]", "return [-1, 1/2]");
    check_fmt("return [-1, 2]. array(real)", "return [-1, 2]. array(real)");
    check_fmt("x = 3.0\nreturn x", "x = 3. prob\nreturn x");
    check_fmt("x = -0/1\nreturn x", "x = 0. real\nreturn x");
    check_fmt("x = +1/2\nreturn x", "x = 1/2. real\nreturn x");
    check_fmt("x = +3\nreturn x", "x = +3\nreturn x");
    check_fmt("return (2.0, -1.5)", "return (2. prob, -3/2)");
    check_fmt("return real2prob(+2/1)", "return real2prob(2)");
    check_fmt("fn x real: x + 2.5", "fn x real:\nx + 5/2");
    check_all(&[
        "return +1/1 + 2",
        "return (+2/1) ^ 2",
        "return [+1/1, 2][0]",
        "return 1/1 < 2",
        "return min(1/1, 2)",
        "r <~ return right(+1/1). either(nat, real)\nreturn r",
        "fn c bool: if c: return +1/1 else: return +2/1",
        "bucket j from 0 to 5: r_add +1/1",
        "bucket j from 0 to 5: r_index b = 3 of j: r_add 1/1",
        "chain s from +0/1 of 4:\n    x <~ normal(s, 1)\n    return (x, x)",
        "fn x prob: x * recip(0/1)",
        "return (fn x real: x)(+1/1)",
    ]);
}

#[test]
fn programs_round_trip() {
    check_all(PROGRAMS);
}

#[test]
fn long_statement_chains_round_trip() {
    let mut text = String::from("x0 = 0\n");
    for i in 1..2000 {
        text.push_str(&format!("x{i} = x{} + 1\n", i - 1));
    }
    text.push_str("return x1999\n");
    check_all(&[&text]);
}
