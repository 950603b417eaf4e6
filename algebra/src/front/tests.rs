//! The front end on `.hk` text: a table of programs and their types (every construct and
//! built-in), a table of core terms (coercions and literal folding), and a table of
//! errors with their messages and positions.

use crate::diag::LineIndex;
use crate::elab::tests::show;
use crate::front::{load, load_bytes};
use crate::term::Store;

/// The type of a program, or its first error.
fn type_of(src: &str) -> String {
    let mut s = Store::new();
    match load(&mut s, src) {
        Ok(t) => s.ty(t).to_string(),
        Err(errs) => format!("error: {}", errs[0].message),
    }
}

fn check_types(table: &[(&str, &str)]) {
    let mut bad = Vec::new();
    for &(src, want) in table {
        let got = type_of(src);
        if got != want {
            bad.push(format!("{src:?}\n    want {want}\n    got  {got}"));
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[rustfmt::skip]
const TYPES: &[(&str, &str)] = &[
    // `def f():` names a value; `f()` is it (issue 14)
    ("def f() real: 2\nf() + 1", "real"),
    ("def m():\n  normal(0, 1)\nx <~ m()\nreturn x", "measure(real)"),
    // literals and constants
    ("3", "nat"),
    ("0.5", "prob"),
    ("5e-9", "prob"),
    ("-3", "int"),
    ("+3", "int"),
    ("-0.5", "real"),
    ("1/2", "prob"),
    ("-1/2", "real"),
    ("1/-2", "real"),
    ("∞", "prob"),
    ("-∞", "real"),
    ("infinity()", "prob"),
    ("pi", "prob"),
    ("true", "bool"),
    ("false", "bool"),
    ("()", "unit"),
    // data
    ("(1, true)", "pair(nat, bool)"),
    ("(1, 2, 3)", "pair(nat, pair(nat, nat))"),
    ("[1, 2, 3]", "array(nat)"),
    ("[1, 0.5]", "array(prob)"),
    ("[1, -2]", "array(int)"),
    ("[-1, 0.5]", "array(real)"),
    ("[]. array(real)", "array(real)"),
    ("[true, false]", "array(bool)"),
    ("just(3)", "maybe(nat)"),
    ("nothing. maybe(nat)", "maybe(nat)"),
    ("left(3). either(nat, real)", "either(nat, real)"),
    ("right(3). either(bool, real)", "either(bool, real)"),
    ("array i of 3: i", "array(nat)"),
    ("fn xs array(real): array i of size(xs): xs[i] * 2", "array(real) -> array(real)"),
    ("fn xs array(real): xs[0]", "array(real) -> real"),
    // functions
    ("fn x real: return x", "real -> measure(real)"),
    ("fn x nat: fn y real: x + y", "nat -> real -> real"),
    ("fn f real -> real: f(2)", "(real -> real) -> real"),
    ("def f(x real, y prob) real: x * y\nf(1, 2)", "real"),
    ("def f(x real, y prob): x * y\nf(1)", "prob -> real"),
    ("def f(x real, y prob): x * y\nf", "real -> prob -> real"),
    ("(fn x real: x * 2)(3)", "real"),
    ("fn normal real: normal + 1", "real -> real"),
    ("x = 1\nx = true\nx", "bool"),
    ("x = 3\nx + 1", "nat"),
    // arithmetic
    ("fn n nat: n - 1", "nat -> int"),
    ("fn p prob: p - 1", "prob -> real"),
    ("fn n nat: n / 2", "nat -> prob"),
    ("fn n int: n / 2", "int -> real"),
    ("fn p prob: p + 1", "prob -> prob"),
    ("fn x real: x * x * 2", "real -> real"),
    ("fn x real: -x", "real -> real"),
    ("fn x nat: -x", "nat -> int"),
    ("fn p prob: -p", "prob -> real"),
    ("fn x nat: +x", "nat -> nat"),
    ("fn x nat: x ^ 2", "nat -> nat"),
    ("fn x real: x ^ 2", "real -> real"),
    ("fn x prob: x ** 0.5", "prob -> prob"),
    ("fn x prob: x ** -1", "prob -> prob"),
    ("1 + 2", "nat"),
    ("1 - 2", "int"),
    ("2 * 3 / 4", "prob"),
    // numeric built-ins
    ("exp(1)", "prob"),
    ("log(2)", "real"),
    ("sqrt(2)", "prob"),
    ("natroot(8, 3)", "prob"),
    ("negate(3)", "int"),
    ("negate(0.5)", "real"),
    ("recip(2)", "prob"),
    ("recip(-2)", "real"),
    ("abs(-3)", "nat"),
    ("abs(-0.5)", "prob"),
    ("signum(-2)", "int"),
    ("signum(0.5)", "real"),
    ("floor(2.5)", "nat"),
    ("floor(-2.5)", "int"),
    ("erf(0.5)", "prob"),
    ("erf(-0.5)", "real"),
    ("choose(5, 2)", "nat"),
    ("gammaFunc(0.5)", "prob"),
    ("betaFunc(1, 2)", "prob"),
    ("min(1, 2.5)", "prob"),
    ("max(-1, 2)", "int"),
    ("size([1, 2])", "nat"),
    ("reduce(fn a nat: fn b nat: a + b, 0, [1, 2])", "nat"),
    // logic and comparisons
    ("1 < 2", "bool"),
    ("1 > 0.5", "bool"),
    ("-1 <= 2", "bool"),
    ("1 >= 2", "bool"),
    ("1 == 0.5", "bool"),
    ("true /= false", "bool"),
    ("() == ()", "bool"),
    ("true && false || true", "bool"),
    ("not(true)", "bool"),
    ("fn x nat: 2 * x < 3", "nat -> bool"),
    // conditionals and matching
    ("if true: 1 else: 0.5", "prob"),
    ("if true: -1 else: 0.5", "real"),
    ("if true: reject else: return 1", "measure(nat)"),
    ("if true: [] else: [1]", "array(nat)"),
    ("match (1, 2.5):\n  (a, b): a + b", "prob"),
    ("fn e either(nat, real): match e:\n  left(a): a\n  right(b): b", "either(nat, real) -> real"),
    ("fn m maybe(nat): match m:\n  just(a): a\n  nothing: 0", "maybe(nat) -> nat"),
    ("fn b bool: match b:\n  true: 1\n  false: -1", "bool -> int"),
    ("match ():\n  (): 1\n  _: 2", "nat"),
    ("match 3:\n  x: x + 1", "nat"),
    ("match 3:\n  _: reject\n  _: return 1", "measure(nat)"),
    // measures
    ("normal(0, 1)", "measure(real)"),
    ("lebesgue(-∞, ∞)", "measure(real)"),
    ("counting", "measure(int)"),
    ("uniform(0, 1)", "measure(real)"),
    ("gamma(1, 2)", "measure(prob)"),
    ("beta(1, 1)", "measure(prob)"),
    ("poisson(3)", "measure(nat)"),
    ("categorical([1, 2])", "measure(nat)"),
    ("categorical(array i of 3: 1)", "measure(nat)"),
    ("return 1", "measure(nat)"),
    ("dirac(0.5)", "measure(prob)"),
    ("weight(0.5, return 1)", "measure(nat)"),
    ("factor(0.5)", "measure(unit)"),
    ("reject. measure(real)", "measure(real)"),
    ("return 1 <|> return 2", "measure(nat)"),
    ("return 1 <|> reject", "measure(nat)"),
    ("x <~ normal(0, 1)\nreturn x", "measure(real)"),
    ("x <~ normal(0, 1)\ny = x * 2\nreturn y", "measure(real)"),
    ("fn mu real:\nx <~ normal(mu, 1)\nreturn x", "real -> measure(real)"),
    ("plate i of 3: normal(0, 1)", "measure(array(real))"),
    ("chain s from 0 of 3:\n  x <~ poisson(1)\n  return (x, s + x)", "measure(pair(array(nat), nat))"),
    ("observe(normal(0, 1), 2)", "measure(real)"),
    ("(x <~ normal(0, 1)\n return x). measure(real)", "measure(real)"),
    // loops
    ("summate i from 0 to 10: i", "nat"),
    ("summate i from -5 to 5: i", "int"),
    ("product i from 0 to 10: 0.5", "prob"),
    ("integrate x from 0 to 1: exp(x)", "prob"),
    ("integrate x from -∞ to ∞: exp(-x * x)", "prob"),
    // histograms
    ("bucket i from 0 to 10: r_add 1", "nat"),
    ("bucket i from 0 to 10: r_fanout r_add 1 || r_nop", "pair(nat, unit)"),
    ("bucket i from 0 to 10: r_split i < 5: r_add 1 else: r_nop", "pair(nat, unit)"),
    ("fn xs array(nat): bucket i from 0 to size(xs): r_index b = 3 of xs[i]: r_add 1", "array(nat) -> array(nat)"),
    // explicit coercions and transforms
    ("nat2real(3)", "real"),
    ("nat2int(3)", "int"),
    ("nat2prob(3)", "prob"),
    ("int2real(-3)", "real"),
    ("prob2real(0.5)", "real"),
    ("int2nat(-1)", "nat"),
    ("real2int(1.5)", "int"),
    ("fn p prob: real2prob(1 - p)", "prob -> prob"),
    ("simplify(normal(0, 1))", "measure(real)"),
    ("summarize(3)", "nat"),
    ("fn x real: x. real", "real -> real"),
];

#[test]
fn every_construct_has_its_type() {
    assert!(TYPES.len() >= 60);
    check_types(TYPES);
}

#[test]
fn every_fixed_type_builtin_has_its_type() {
    let trig = [
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh",
    ];
    let rows: Vec<(String, &str)> = trig
        .iter()
        .map(|f| (format!("{f}(1)"), "real"))
        .chain(
            ["xor", "iff", "impl", "nand", "nor"]
                .iter()
                .map(|f| (format!("{f}(true, false)"), "bool")),
        )
        .collect();
    let table: Vec<(&str, &str)> = rows.iter().map(|(s, t)| (s.as_str(), *t)).collect();
    check_types(&table);
}

/// The core term of a program, in `elab::tests::show`'s notation.
fn check_core(table: &[(&str, &str)]) {
    let mut bad = Vec::new();
    for &(src, want) in table {
        let mut s = Store::new();
        let got = match load(&mut s, src) {
            Ok(t) => show(&s, t),
            Err(errs) => format!("error: {}", errs[0].message),
        };
        if got != want {
            bad.push(format!("{src:?}\n    want {want}\n    got  {got}"));
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[rustfmt::skip]
const CORE: &[(&str, &str)] = &[
    ("normal(0, 1)", "normal(Lit(0):real, Lit(1):prob)"),
    ("fn n nat: return n + 0.5", "Lam(n, Dirac(Add[Coerce(nat2prob, n), Lit(1/2):prob]))"),
    ("fn x real: x - 3", "Lam(x, Add[x, Lit(-3):real])"),
    ("fn x real: x + -3", "Lam(x, Add[x, Lit(-3):real])"),
    ("fn x real: x - -3", "Lam(x, Add[x, Lit(3):real])"),
    ("1/2", "Lit(1/2):prob"),
    ("-1/2", "Lit(-1/2):real"),
    ("3/1", "Lit(3):prob"),
    ("+0/1", "Lit(0):real"),
    ("-3", "Lit(-3):int"),
    ("+0.5", "Lit(1/2):real"),
    ("1/2/2", "Lit(1/4):prob"),
    ("1 + 2", "Add[Lit(1):nat, Lit(2):nat]"),
    ("1 - 2", "Add[Lit(1):int, Lit(-2):int]"),
    ("fn n nat: n - 1", "Lam(n, Add[Coerce(nat2int, n), Lit(-1):int])"),
    ("fn a real: fn b real: fn c real: a + b - c", "Lam(a, Lam(b, Lam(c, Add[a, b, Neg[c]])))"),
    ("fn a real: fn b real: a + (b + 1)", "Lam(a, Lam(b, Add[a, Add[b, Lit(1):real]]))"),
    ("fn a real: fn b real: a / b * 2", "Lam(a, Lam(b, Mul[a, Recip[b], Lit(2):real]))"),
    ("fn x real: x / 0.5", "Lam(x, Mul[x, Recip[Lit(1/2):real]])"),
    ("fn n nat: n / 2", "Lam(n, Mul[Coerce(nat2prob, n), Recip[Lit(2):prob]])"),
    ("fn x real: -x + 1", "Lam(x, Add[Neg[x], Lit(1):real])"),
    ("fn n nat: -n + 0.5", "Lam(n, Add[Neg[Coerce(nat2real, n)], Lit(1/2):real])"),
    ("fn n nat: -n", "Lam(n, Neg[Coerce(nat2int, n)])"),
    ("fn x real: x > 0", "Lam(x, Lt[Lit(0):real, x])"),
    ("fn x real: x >= 1", "Lam(x, Le[Lit(1):real, x])"),
    ("fn n nat: n < 0.5", "Lam(n, Lt[Coerce(nat2prob, n), Lit(1/2):prob])"),
    ("fn a bool: fn b bool: a && b && true", "Lam(a, Lam(b, And[a, b, true]))"),
    ("fn a bool: a || (a && a)", "Lam(a, Or[a, And[a, a]])"),
    ("fn a bool: a || a && a", "Lam(a, Or[a, And[a, a]])"),
    ("fn p prob: real2prob(1 - p)", "Lam(p, Coerce(real2prob, Add[Lit(1):real, Neg[Coerce(prob2real, p)]]))"),
    ("nat2real(3)", "Coerce(nat2real, Lit(3):nat)"),
    ("lebesgue(-∞, ∞)", "lebesgue(Neg[Coerce(prob2real, Infinity[])], Coerce(prob2real, Infinity[]))"),
    ("fn x nat: if x < 2: 1 else: 0.5", "Lam(x, If(Lt[x, Lit(2):nat], Lit(1):prob, Lit(1/2):prob))"),
    ("categorical([1, 2])", "categorical(ArrayLit(Lit(1):prob, Lit(2):prob))"),
    ("factor(2)", "Weight(Lit(2):prob, Dirac(Unit()))"),
    ("return 1 <|> return 2 <|> reject", "Superpose(Dirac(Lit(1):nat), Dirac(Lit(2):nat), Reject())"),
    ("def f(x real) real: x\nf(1)", "Let(f, Lam(x, x), App(f, Lit(1):real))"),
    ("fn x prob: x ^ 2", "Lam(x, Pow[x, Lit(2):nat])"),
    ("2 ^ 3", "Pow[Lit(2):nat, Lit(3):nat]"),
    ("fn i int: abs(i)", "Lam(i, Abs[i])"),
    ("fn i nat: abs(i)", "Lam(i, Abs[Coerce(nat2int, i)])"),
    ("min(1, 0.5)", "Min[Lit(1):prob, Lit(1/2):prob]"),
    ("fn x real: normal(x, 1) <|> normal(0, 2)", "Lam(x, Superpose(normal(x, Lit(1):prob), normal(Lit(0):real, Lit(2):prob)))"),
    ("x <~ normal(0, 1)\nreturn x", "Bind(x, normal(Lit(0):real, Lit(1):prob), Dirac(x))"),
    ("weight(1/2, return 1). measure(real)", "Weight(Lit(1/2):prob, Dirac(Lit(1):real))"),
    ("summate i from 0 to 3: 1", "Summate(Lit(0):nat, Lit(3):nat, Lit(1):nat)"),
    ("summate i from -1 to 3: i", "Summate(Lit(-1):int, Lit(3):int, i)"),
];

#[test]
fn coercions_and_literal_folding() {
    check_core(CORE);
}

/// Errors: the first message must contain `want`, and start at `line:col` (1-based).
fn check_errors(table: &[(&str, &str, usize, usize)]) {
    let mut bad = Vec::new();
    for &(src, want, line, col) in table {
        let mut s = Store::new();
        match load(&mut s, src) {
            Ok(t) => bad.push(format!("{src:?}: no error, type {}", s.ty(t))),
            Err(errs) => {
                let d = &errs[0];
                let at = LineIndex::new(src).line_col(src, d.span.start as usize);
                if !d.message.contains(want) || at != (line, col) {
                    bad.push(format!(
                        "{src:?}\n    want {want:?} at {line}:{col}\n    got  {:?} at {}:{}",
                        d.message, at.0, at.1
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[rustfmt::skip]
const ERRORS: &[(&str, &str, usize, usize)] = &[
    ("foo", "unknown name 'foo'", 1, 1),
    ("foo(1)", "unknown name 'foo'", 1, 1),
    ("normal(0)", "'normal' takes 2 arguments, found 1", 1, 1),
    ("log(1, 2)", "'log' takes 1 argument, found 2", 1, 1),
    ("exp", "'exp' takes 1 argument, found 0", 1, 1),
    ("fn x float: x", "unknown type 'float'", 1, 6),
    ("fn x array(foo): x", "unknown type 'foo'", 1, 12),
    ("fn x array(real, real): x", "'array' takes 1 type argument, found 2", 1, 6),
    ("log(true)", "'log' expects prob, found bool", 1, 5),
    ("fn x real: normal(0, x)", "'normal' expects prob, found real", 1, 22),
    ("x <~ 3\nreturn x", "expected a measure, found nat", 1, 6),
    ("x <~ normal(0, 1)\nx", "expected a measure, found real", 2, 1),
    ("[]", "cannot infer the element type of '[]'; annotate it, e.g. '[]. array(real)'", 1, 1),
    ("reject", "annotate it, e.g. 'reject. measure(", 1, 1),
    ("nothing", "annotate it, e.g. 'nothing. maybe(", 1, 1),
    ("left(1)", "cannot infer the type of 'left(..)'", 1, 1),
    ("disint(normal(0, 1))", "'disint' needs a measure of pairs (observation, rest), found measure(real)", 1, 1),
    // the target is read first: it must be a measure (issue 15)
    ("mcmc(1, 2)", "expected a measure, found nat", 1, 9),
    ("mh(fn x real: normal(x, 1), 2)", "expected a measure, found nat", 1, 29),
    ("x = 1\nreparam(x)", "transform 'reparam' is not implemented", 2, 1),
    ("def f(x real, y real): x\nf(1, 2, 3)", "'f' takes 2 arguments, found 3", 2, 1),
    ("fn f real -> real: f(1, 2)", "'f' takes 1 argument, found 2", 1, 20),
    ("fn x real: x(1)", "'x' is not a function; it has type real", 1, 12),
    // only a `def` without parameters may be called with none (issue 14)
    ("x = 1\nx()", "'x' is not a function; it has type nat", 2, 1),
    ("def f() real: 2\nf(1)", "'f' is not a function; it has type real", 2, 1),
    // an unbounded size is refused for what it is (issue 14)
    ("xs <~ plate i of ∞: normal(0, 1)\nreturn xs", "'plate' of unbounded size (∞) is not supported", 1, 18),
    ("fn y real: array i of inf: y", "'array' of unbounded size (∞) is not supported", 1, 23),
    ("chain s from 0 of infinity(): return ((), s)", "'chain' of unbounded size (∞) is not supported", 1, 19),
    ("r_add 1", "is only allowed in", 1, 1),
    ("r_nop", "is only allowed in", 1, 1),
    ("bucket i from 0 to 3: 5", "expected a reducer", 1, 23),
    ("match (1, 2):\n  left(x): x", "pattern 'left(x)' does not match type pair(nat, nat)", 2, 3),
    ("match 1:\n  true: 2", "pattern 'true' does not match type nat", 2, 3),
    ("1 / 0", "division by zero", 1, 5),
    ("fn x real: x / 0", "division by zero", 1, 16),
    ("if 1: 2 else: 3", "expected bool, found nat", 1, 4),
    ("if true: 1 else: false", "expected nat, found bool", 1, 18),
    ("fn x real: x[0]", "expected an array, found real", 1, 12),
    ("fn x array(real): x[-1]", "expected nat, found int", 1, 21),
    ("true + 1", "expected a number, found bool", 1, 1),
    ("3 < true", "'<' expects a number, found bool", 1, 5),
    ("fn x real: x ** 2", "'**' expects prob, found real", 1, 12),
    ("summate i from 0 to 1.5: i", "loop bounds must be nat or int, found prob", 1, 16),
    ("integrate x from 0 to 1: x", "expected prob, found real", 1, 26),
    ("return 1 <|> return true", "expected nat, found bool", 1, 21),
    ("1 <|> 2", "expected a measure, found nat", 1, 1),
    ("plate i of 3: 4", "expected a measure, found nat", 1, 15),
    ("-3. nat", "expected nat, found int", 1, 1),
    ("normal(0, 1). measure(prob)", "expected measure(prob), found measure(real)", 1, 1),
    ("fn x real: size(x)", "'size' expects an array, found real", 1, 17),
    ("(1, 2) == (1, 2)", "compare numbers, bools or units, found pair(nat, nat)", 1, 1),
    ("weight(true, return 1)", "'weight' expects prob, found bool", 1, 8),
    ("factor(-1)", "'factor' expects prob, found int", 1, 8),
    ("observe(normal(0, 1), true)", "'observe' expects real, found bool", 1, 23),
    ("not(1)", "'not' expects bool, found nat", 1, 5),
    ("nat2real(0.5)", "'nat2real' expects nat, found prob", 1, 10),
    ("fn x real: fn y real: x && y", "expected bool, found real", 1, 23),
    ("def f(x real) bool: x\nf(1)", "expected bool, found real", 1, 21),
    ("fn x real: (x, 1). pair(real, bool)", "expected bool, found nat", 1, 16),
    ("array i of 2.5: i", "expected nat, found prob", 1, 12),
    ("chain s from 0 of 3: return (1, true)", "state type nat", 1, 22),
    ("fn x real: (return x). measure(nat)", "expected nat, found real", 1, 20),
    ("fn x nat: x. prob. nat", "expected nat, found prob", 1, 11),
    ("match (1, 2):\n  (x, x): x", "'x' is bound twice in one pattern", 2, 7),
    ("x <~ normal(0, 1)\nfn y real: return y", "expected a measure, found a function", 2, 1),
    ("(fn x real: x). (nat -> real)", "expected nat -> real, found a function of real", 1, 1),
];

#[test]
fn errors_have_messages_and_positions() {
    assert!(ERRORS.len() >= 30);
    check_errors(ERRORS);
}

#[test]
fn independent_errors_are_all_reported() {
    let mut s = Store::new();
    let errs = load(&mut s, "normal(true, false)")
        .err()
        .unwrap_or_default();
    let msgs: Vec<&str> = errs.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "'normal' expects real, found bool",
            "'normal' expects prob, found bool"
        ]
    );
}

#[test]
fn bytes_are_decoded_first() {
    let mut s = Store::new();
    let t = load_bytes(&mut s, b"fn x real: x").map(|t| s.ty(t).to_string());
    assert_eq!(t, Ok("real -> real".to_string()));
    let errs = load_bytes(&mut s, b"\xff").err().unwrap_or_default();
    assert_eq!(errs.len(), 1);
    assert!(errs[0].message.contains("UTF-8"), "{errs:?}");
}

#[test]
fn long_programs_load() {
    // 10,000 statements: each binds the next variable.
    let mut src = String::from("x0 <~ normal(0, 1)\n");
    for i in 1..10_000 {
        src.push_str(&format!("x{i} <~ normal(x{}, 1)\n", i - 1));
    }
    src.push_str("return x9999\n");
    assert_eq!(type_of(&src), "measure(real)");
    // One line of 100,000 terms.
    let mut line = String::from("fn x real: x");
    for i in 0..100_000 {
        line.push_str(if i % 2 == 0 { " + x" } else { " - 1" });
    }
    assert_eq!(type_of(&line), "real -> real");
}

mod random {
    use proptest::prelude::*;

    use crate::front::load;
    use crate::term::Store;

    /// Random expressions over a small vocabulary of names, built-ins and operators.
    fn expr() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec![
            "x", "p", "xs", "1", "0.5", "-2", "1/2", "true", "()", "pi", "∞", "reject", "nothing",
            "[]", "counting", "normal", "foo",
        ])
        .prop_map(str::to_string);
        leaf.prop_recursive(4, 48, 3, |inner| {
            let names = prop::sample::select(vec![
                "normal",
                "exp",
                "log",
                "abs",
                "min",
                "size",
                "left",
                "just",
                "weight",
                "factor",
                "nat2real",
                "real2prob",
                "dirac",
                "observe",
                "simplify",
                "disint",
                "reduce",
                "categorical",
                "floor",
                "not",
            ]);
            let ops = prop::sample::select(vec![
                " + ", " - ", " * ", " / ", " < ", " >= ", " == ", " && ", " || ", " <|> ", " ^ ",
                " ** ",
            ]);
            prop_oneof![
                (names, prop::collection::vec(inner.clone(), 0..3))
                    .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
                (inner.clone(), ops, inner.clone()).prop_map(|(a, op, b)| format!("({a}{op}{b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|xs| format!("[{}]", xs.join(", "))),
                inner.clone().prop_map(|a| format!("(return {a})")),
                inner.clone().prop_map(|a| format!("(-{a})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}[{b}]")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("(if {a}: {b} else: {c})")),
                inner.clone().prop_map(|a| format!("(fn y nat: {a})")),
                inner.clone().prop_map(|a| format!("({a}. real)")),
                inner.clone().prop_map(|a| format!("({a}. measure(nat))")),
                (inner.clone(), inner).prop_map(|(a, b)| format!("(summate i from 0 to {a}: {b})")),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// Whatever the input, elaboration answers with a term or with messages, and
        /// never reaches one of its "internal error" guards.
        #[test]
        fn random_programs_never_panic(body in expr()) {
            let src = format!("fn x real: fn p prob: fn xs array(real): {body}");
            let mut s = Store::new();
            match load(&mut s, &src) {
                Ok(t) => prop_assert!(!s.ty(t).to_string().is_empty()),
                Err(errs) => {
                    prop_assert!(!errs.is_empty());
                    for d in &errs {
                        prop_assert!(!d.message.is_empty());
                        prop_assert!(!d.message.contains("internal error"), "{}: {}", src, d.message);
                    }
                }
            }
        }
    }

    proptest! {
        /// `a/b` folds to the exact rational, prob when unsigned, real when signed; an
        /// int/real operand makes the quotient real.
        #[test]
        fn literal_division_folds_exactly(a in 0u32..1000, b in 1u32..1000, c in 1u32..50) {
            use num_rational::BigRational;
            let q = BigRational::new(a.into(), b.into());
            let cases = [
                (format!("{a}/{b}"), q.clone(), "prob"),
                (format!("-{a}/{b}"), -q.clone(), "real"),
                (format!("+{a}/{b}"), q.clone(), "real"),
                (format!("{a}/-{b}"), -q.clone(), "real"),
                (format!("{a}/{b}/{c}"), q.clone() / BigRational::from_integer(c.into()), "prob"),
            ];
            for (src, value, ty) in cases {
                let mut s = Store::new();
                let t = load(&mut s, &src);
                prop_assert!(t.is_ok(), "{}: {:?}", src, t);
                if let Ok(t) = t {
                    prop_assert_eq!(s.node(t), &crate::term::Node::Lit(value.into()));
                    prop_assert_eq!(s.ty(t).to_string(), ty);
                }
            }
        }
    }
}

/// Hints on errors (issue: trustworthy verdicts): the note each program's first error
/// carries, or `None` for an error that must have no hint (no far-fetched guesses).
#[rustfmt::skip]
const HINTS: &[(&str, Option<&str>)] = &[
    ("nromal(0, 1)", Some("did you mean 'normal'?")),
    ("fn sigma prob: normal(0, sigm)", Some("did you mean 'sigma'?")),
    ("fn x real: return lgo(x)", Some("did you mean 'log'?")),
    ("x <~ normal(0, 1)\nreturn x + y", None),
    ("fn x rael: return x", Some("did you mean 'real'?")),
    ("fn s real: normal(0, s)", Some("convert it with 'real2prob(...)'")),
    ("fn n int: categorical(array i of n: 1)", Some("convert it with 'int2nat(...)'")),
    ("x = normal(0, 1)\nreturn x + 1", Some("'x' is a measure over real, not a value; to use a value drawn from it, bind it with '<~' (x <~ ...)")),
    ("x = normal(0, 1)\ny <~ normal(x, 1)\nreturn y", Some("bind it with '<~'")),
    ("log(true)", None),
    ("plate i of -1: normal(0, 1)", None),
    ("y = 1 + (return 2)\nreturn y", Some("bind a value drawn from it with '<~' first")),
];

#[test]
fn errors_carry_hints() {
    let mut bad = Vec::new();
    for &(src, want) in HINTS {
        let mut s = Store::new();
        let notes = match load(&mut s, src) {
            Ok(_) => vec!["(no error)".to_string()],
            Err(errs) => errs[0].notes.clone(),
        };
        let ok = match want {
            Some(w) => notes.len() == 1 && notes[0].contains(w),
            None => notes.is_empty(),
        };
        if !ok {
            bad.push(format!("{src:?}: want {want:?}, got {notes:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// ---- data declarations and imports (issue 14, section 1) ----------------------------

const SHAPE: &str = "data shape():\n    circle(real)\n    rect(real, real)\n    point\n";

#[test]
fn data_constructors_elaborate_to_sums_of_products() {
    let with = |body: &str| format!("{SHAPE}{body}");
    let shape = "either(real, either(pair(real, real), unit))";
    check_types(&[
        (&with("circle(1)"), shape),
        (&with("point"), shape),
        (
            &with("[rect(1, 2), point, circle(-1)]"),
            &format!("array({shape})"),
        ),
        (
            &with("fn s shape:\nmatch s:\n  circle(r): r\n  rect(w, h): w * h\n  point: 0"),
            &format!("{shape} -> real"),
        ),
        (
            &with("fn s shape:\nmatch s:\n  rect(w, _): w\n  _: 0"),
            &format!("{shape} -> real"),
        ),
        // one constructor: its product; fields checked against their types (coerced)
        ("data money(): cents(nat)\nfn n nat: cents(n)", "nat -> nat"),
        ("data p2(): pt(real, real)\npt(1, 2)", "pair(real, real)"),
        // a later type may use an earlier one; a variable hides a constructor
        (
            &with("data tagged(): tag(shape, nat) none\ntag(point, 3)"),
            &format!("either(pair({shape}, nat), unit)"),
        ),
        (&with("fn circle real: circle + 1"), "real -> real"),
    ]);
    // the core terms are the built-in injections and pairs
    let mut s = Store::new();
    let t = load(&mut s, &with("rect(1, 2)")).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(show(&s, t), "Right(Left(Pair(Lit(1):real, Lit(2):real)))");
    let t = load(&mut s, &with("point")).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(show(&s, t), "Right(Right(Unit()))");
}

#[test]
fn data_errors_have_messages_and_positions() {
    let with = |body: &str| format!("{SHAPE}{body}");
    let shape_rows = SHAPE.lines().count() + 1;
    let cases = [
        (
            with("circle(1, 2)"),
            "constructor 'circle' of 'shape' takes 1 field, found 2",
            shape_rows,
            1,
        ),
        (
            with("point(1)"),
            "constructor 'point' of 'shape' takes no fields, found 1",
            shape_rows,
            1,
        ),
        (
            with("rect(1, true)"),
            "'rect' expects real, found bool",
            shape_rows,
            9,
        ),
        (
            with("fn s shape:\nmatch s:\n  square(x): x\n  _: 0"),
            "unknown constructor 'square' in pattern",
            shape_rows + 2,
            3,
        ),
        (
            with("fn s shape:\nmatch s:\n  rect(x): x\n  _: 0"),
            "constructor 'rect' of 'shape' takes 2 fields, the pattern has 1",
            shape_rows + 2,
            3,
        ),
        (
            with("data color(): red green blue\nfn s shape:\nmatch s:\n  red: 1\n  _: 0"),
            "constructor 'red' of type 'color' cannot match a value of type shape",
            shape_rows + 3,
            3,
        ),
        (
            "data t(): a b a\n1".to_string(),
            "constructor 'a' is declared twice",
            1,
            15,
        ),
        (
            with("data u(): point\n1"),
            "constructor 'point' is declared twice (also in type 'shape')",
            shape_rows,
            11,
        ),
        (
            "data t(): left(real) b\n1".to_string(),
            "'left' is a built-in constructor",
            1,
            11,
        ),
        (
            "data real(): a b\n1".to_string(),
            "'real' is a built-in type",
            1,
            6,
        ),
        (
            with("data shape(): a b\n1"),
            "type 'shape' is declared twice",
            shape_rows,
            6,
        ),
        (
            "data list(): nil cons(real, list)\n1".to_string(),
            "data types cannot be recursive",
            1,
            29,
        ),
        (
            "data box(a): full(a) empty\n1".to_string(),
            "type parameters of 'data' are not supported",
            1,
            10,
        ),
        ("x = 1\ndata t(): a b\nx".to_string(), "", 0, 0),
        (
            "def f(x real) real:\n    data t(): a b\n    x\nf(1)".to_string(),
            "'data' declarations must be in the top block of a file",
            2,
            5,
        ),
        (
            "x = 1\nimport m\nx".to_string(),
            "'import' must come before the other statements of the file",
            2,
            1,
        ),
        (
            "import m\n1".to_string(),
            "cannot import 'm': imports are looked up beside the program's file",
            1,
            8,
        ),
    ];
    let mut bad = Vec::new();
    for (src, want, line, col) in &cases {
        let mut s = Store::new();
        match (load(&mut s, src), want.is_empty()) {
            (Ok(_), true) => {}
            (Ok(t), false) => bad.push(format!("{src:?}: no error, type {}", s.ty(t))),
            (Err(errs), _) => {
                let d = &errs[0];
                let at = LineIndex::new(src).line_col(src, d.span.start as usize);
                if want.is_empty() || !d.message.contains(want) || at != (*line, *col) {
                    bad.push(format!(
                        "{src:?}\n    want {want:?} at {line}:{col}\n    got  {:?} at {}:{}",
                        d.message, at.0, at.1
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// A reader over an in-memory directory of files.
fn files(
    list: &[(&'static str, &'static str)],
) -> impl FnMut(&std::path::Path) -> std::io::Result<Vec<u8>> {
    let list: Vec<(&str, &str)> = list.to_vec();
    move |p: &std::path::Path| {
        let name = p.to_string_lossy();
        list.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| text.as_bytes().to_vec())
            .ok_or_else(|| std::io::ErrorKind::NotFound.into())
    }
}

fn load_at(
    store: &mut Store,
    main: &str,
    read: &mut crate::front::Reader<'_>,
) -> Result<crate::front::FileProgram, Vec<crate::diag::Diagnostic>> {
    crate::front::load_file(
        store,
        std::path::Path::new("d/main.hk"),
        main.as_bytes(),
        read,
    )
}

#[test]
fn imports_bring_definitions_and_data_into_scope() {
    let mut read = files(&[
        ("d/a.hk", "import c\ndef twice(x real) real: c2(x)\n"),
        (
            "d/b.hk",
            "import c\ndata coin(): heads tails\nflip = c2(1)\n()\n",
        ),
        ("d/c.hk", "# the module of c2\ndef c2(x real) real: x * 2\n"),
    ]);
    let mut s = Store::new();
    let src = "import a\nimport b\nfn y real:\nreturn (twice(y) + flip + c2(0), heads)\n";
    let p = load_at(&mut s, src, &mut read).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        s.ty(p.term).to_string(),
        "real -> measure(pair(real, either(unit, unit)))"
    );
    // c is read once although a and b both import it: c2, twice, flip
    assert_eq!(p.comments.prelude.skip, 3);
    // fmt prints the imports back, not the definitions, and reads back the same
    let text = crate::print::print_with_comments(&s, p.term, &Default::default(), p.comments);
    assert_eq!(
        text,
        "import a\nimport b\nfn y real:\nreturn (twice(y) + flip + c2(0), heads)\n"
    );
    let again = load_at(&mut s, &text, &mut read).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(crate::alpha::alpha_eq(&s, p.term, again.term));
}

/// A program, the error it gives, the file that error is in (`None`: the program's) and
/// where.
type ImportError = (
    &'static str,
    &'static str,
    Option<&'static str>,
    (usize, usize),
);

#[test]
fn import_errors_name_the_file_they_are_in() {
    let mut read = files(&[
        ("d/cyc1.hk", "import cyc2\ndef f() real: 1\n"),
        ("d/cyc2.hk", "import cyc1\ndef g() real: 1\n"),
        ("d/bad.hk", "def h(x real) real:\n    log(x)\n"),
        ("d/dup.hk", "def twice(x real) real: x + x\n"),
        ("d/dup2.hk", "def twice(x real) real: 2 * x\n"),
        ("d/syntax.hk", "def k(x real) real: (x\n"),
        ("d/late.hk", "def k(x real) real: x\nimport dup\n"),
    ]);
    let cases: &[ImportError] = &[
        (
            "import late\n1",
            "'import' must come before the other statements",
            Some("d/late.hk"),
            (2, 8),
        ),
        (
            "import nope\n1",
            "no module nope: looked for d/nope.hk",
            None,
            (1, 8),
        ),
        (
            "import cyc1\n1",
            "import cycle: d/cyc1.hk imports d/cyc2.hk imports d/cyc1.hk",
            Some("d/cyc2.hk"),
            (1, 8),
        ),
        (
            "import bad\nh(1)",
            "'log' expects prob, found real",
            Some("d/bad.hk"),
            (2, 9),
        ),
        (
            "import syntax\n1",
            "unclosed '('",
            Some("d/syntax.hk"),
            (1, 21),
        ),
        (
            "import dup\ndef twice(x real) real: x\n1",
            "'twice' is already defined by 'import dup'",
            None,
            (2, 5),
        ),
        (
            "import dup\nimport dup2\n1",
            "'twice' is defined both by module 'dup' and by module 'dup2'",
            Some("d/dup2.hk"),
            (1, 5),
        ),
    ];
    let mut bad = Vec::new();
    for &(src, want, file, (line, col)) in cases {
        let mut s = Store::new();
        let errs = match load_at(&mut s, src, &mut read) {
            Ok(_) => {
                bad.push(format!("{src:?}: no error"));
                continue;
            }
            Err(e) => e,
        };
        let d = &errs[0];
        let (path, text) = match &d.origin {
            Some(o) => (
                Some(o.path.as_str()),
                String::from_utf8_lossy(&o.bytes).to_string(),
            ),
            None => (None, src.to_string()),
        };
        let at = LineIndex::new(&text).line_col(&text, d.span.start as usize);
        if !d.message.contains(want) || path != file || at != (line, col) {
            bad.push(format!(
                "{src:?}\n    want {want:?} in {file:?} at {line}:{col}\n    got  {:?} in {path:?} at {}:{}",
                d.message, at.0, at.1
            ));
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn fmt_prints_data_declarations_and_constructors_back() {
    let src = "# shapes\ndata shape():\n    circle(real)\n    rect(real, real)\n    point\n\
               fn s shape:\ndef area(t shape) real:\n    match t:\n        circle(r): r * r\n        rect(w, h): w * h\n        point: 0\n\
               return (area(s), [rect(1, 2), point])\n";
    let mut s = Store::new();
    let (t, comments) =
        crate::front::load_with_comments(&mut s, src).unwrap_or_else(|e| panic!("{e:?}"));
    let text = crate::print::print_with_comments(&s, t, &Default::default(), comments);
    assert_eq!(text, src);
    // without the prelude (simplify's output), the encoding prints, and means the same
    let plain = crate::print::print_term(&s, t);
    assert!(plain.contains("right(left((1"), "{plain}");
    let back = load(&mut s, &plain).unwrap_or_else(|e| panic!("{plain}\n{e:?}"));
    assert!(crate::alpha::alpha_eq(&s, t, back));
}
