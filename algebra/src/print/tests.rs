//! Printer tests: terms built directly in a `Store` and compared with the exact text; then
//! round trips through the parser and elaborator (load, print, load, alpha-compare; print
//! twice, same text).
//! (This file is `#[rustfmt::skip]` so each case stays a one-line table row.)

use super::build::B;
use super::*;
use crate::term::{Dist, Node, Pattern, Prim, Transform};
use crate::types::{Coercion, Type};
use Type::{Bool, Int, Nat, Prob, Real};

/// Build a term, print it, compare with `expect` (without the final newline).
fn check(build: impl FnOnce(&B) -> TermId, expect: &str) {
    check_with(build, &PrintOptions::default(), expect);
}

fn check_with(build: impl FnOnce(&B) -> TermId, opts: &PrintOptions, expect: &str) {
    let b = B::new();
    let t = build(&b);
    let got = print_with(&b.s.borrow(), t, opts);
    assert_eq!(got, format!("{expect}\n"), "\n--- got ---\n{got}--- want ---\n{expect}\n");
}

fn width(width: usize) -> PrintOptions {
    PrintOptions {
        ascii: false,
        width,
        decimals: false,
    }
}

fn pat_var(v: crate::term::VarId) -> Box<Pattern> {
    Box::new(Pattern::Var(v))
}

#[test]
fn literals_at_unchecked_positions_say_their_type() {
    check(|b| b.nat(3), "3");
    check(|b| b.int(3), "+3");
    check(|b| b.int(-3), "-3");
    check(|b| b.prob(3), "3. prob");
    check(|b| b.q(1, 2, Prob), "1/2");
    check(|b| b.real(3), "3. real");
    check(|b| b.q(-1, 2, Real), "-1/2");
    check(|b| b.real(0), "0. real");
}

#[test]
fn literals_at_checked_positions_print_bare() {
    check(|b| b.normal(b.real(0), b.prob(1)), "normal(0, 1)");
    check(|b| b.normal(b.real(-3), b.q(1, 2, Prob)), "normal(-3, 1/2)");
    check(|b| b.normal(b.q(-5, 2, Real), b.prob(2)), "normal(-5/2, 2)");
    check(|b| b.dist(Dist::Poisson, &[b.prob(2)]), "poisson(2)");
    check(|b| b.dist(Dist::Counting, &[]), "counting");
    check(|b| b.prim(Prim::Exp, &[b.real(1)], Prob), "exp(1)");
    check(|b| b.index(b.var("a", Type::array(Real)), b.nat(0)), "a[0]");
    check(|b| b.weight(b.prob(2), b.dirac(b.unit())), "weight(2, return ())");
}

#[test]
fn arithmetic_operators() {
    check(|b| b.add(&[b.var("x", Real), b.real(1)]), "x + 1");
    check(|b| b.add(&[b.var("x", Real), b.real(-3)]), "x - 3");
    check(|b| b.add(&[b.real(-3), b.var("x", Real)]), "-3 + x");
    check(|b| b.add(&[b.var("x", Real), b.q(-1, 2, Real)]), "x - 1/2");
    check(|b| b.add(&[b.var("x", Real), b.neg(b.var("y", Real))]), "x - y");
    check(|b| b.add(&[b.neg(b.var("x", Real)), b.var("y", Real)]), "-x + y");
    check(|b| b.add(&[b.var("x", Int), b.neg(b.int(3))]), "x + negate(+3)");
    check(|b| b.mul(&[b.q(1, 2, Prob), b.var("x", Prob)]), "(1/2) * x");
    check(|b| b.mul(&[b.var("x", Prob), b.recip(b.var("y", Prob))]), "x / y");
    check(|b| b.mul(&[b.var("x", Prob), b.recip(b.prob(2))]), "x / 2");
    check(|b| b.mul(&[b.var("x", Prob), b.recip(b.q(1, 2, Prob))]), "x / (1/2)");
    check(|b| b.mul(&[b.recip(b.var("x", Prob)), b.var("y", Prob)]), "recip(x) * y");
    check(|b| b.mul(&[b.var("x", Prob), b.recip(b.prob(0))]), "x * recip(0. prob)");
    check(|b| b.mul(&[b.var("x", Real), b.real(-3)]), "x * (-3)");
    check(|b| b.mul(&[b.add(&[b.var("x", Real), b.var("y", Real)]), b.var("z", Real)]), "(x + y) * z");
    check(|b| b.add(&[b.var("x", Real), b.add(&[b.var("y", Real), b.var("z", Real)])]), "x + (y + z)");
    check(|b| b.mul(&[b.mul(&[b.var("x", Real), b.var("y", Real)]), b.var("z", Real)]), "(x * y) * z");
    check(|b| b.neg(b.mul(&[b.var("x", Real), b.var("y", Real)])), "-x * y");
    check(|b| b.neg(b.neg(b.var("x", Real))), "-(-x)");
    check(|b| b.add(&[b.var("x", Real), b.neg(b.neg(b.var("y", Real)))]), "x - (-y)");
    check(|b| b.mul(&[b.pow(b.var("x", Real), b.nat(2)), b.var("y", Real)]), "x ^ 2 * y");
    check(|b| b.pow(b.neg(b.var("x", Real)), b.nat(2)), "(-x) ^ 2");
    check(|b| b.pow(b.pow(b.var("x", Real), b.nat(2)), b.nat(3)), "(x ^ 2) ^ 3");
    check(|b| b.pow(b.var("x", Nat), b.pow(b.nat(2), b.nat(3))), "x ^ 2 ^ 3");
    check(|b| b.prim(Prim::RealPow, &[b.var("x", Prob), b.q(1, 2, Real)], Prob), "x ** (1/2)");
    check(|b| b.prim(Prim::RealPow, &[b.var("x", Prob), b.real(-2)], Prob), "x ** (-2)");
    check(|b| b.pow(b.q(1, 2, Prob), b.nat(2)), "(1/2) ^ 2");
    check(|b| b.pow(b.real(2), b.nat(2)), "(2. real) ^ 2");
}

#[test]
fn all_literal_operators_fix_their_type_with_the_first_operand() {
    check(|b| b.add(&[b.real(1), b.real(2)]), "(1. real) + 2");
    check(|b| b.add(&[b.nat(1), b.nat(2)]), "1 + 2");
    check(|b| b.mul(&[b.real(3), b.real(4)]), "(3. real) * 4");
    check(|b| b.mul(&[b.prob(3), b.recip(b.prob(2))]), "3 * recip(2. prob)");
    check(|b| b.add(&[b.int(-3), b.int(-2)]), "-3 - 2");
    check(|b| b.cmp(Prim::Lt, b.real(1), b.real(2)), "1. real < 2");
    check(|b| b.prim(Prim::Min, &[b.prob(1), b.prob(2)], Prob), "min(1. prob, 2)");
}

#[test]
fn negation_and_infinity() {
    check(|b| b.inf(), "∞");
    check(|b| b.neg_inf(), "-∞");
    check_with(|b| b.neg_inf(), &PrintOptions {
            ascii: true,
            width: 88,
            decimals: false,
        }, "-inf");
    check(|b| b.dist(Dist::Lebesgue, &[b.neg_inf(), b.real_inf()]), "lebesgue(-∞, ∞)");
    check(|b| b.real_inf(), "prob2real(∞)");
    check(|b| b.add(&[b.var("x", Real), b.neg_inf()]), "x - ∞");
    check(|b| b.add(&[b.var("x", Real), b.real_inf()]), "x + ∞");
    check(|b| b.add(&[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.real_inf()]), "nat2real(n) + ∞");
}

#[test]
fn safe_coercions_print_implicitly_at_checked_positions() {
    check(|b| b.normal(b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.prob(1)), "normal(n, 1)");
    check(|b| b.normal(b.coerce(Coercion::Int2Real, b.add(&[b.var("i", Int), b.var("j", Int)])), b.prob(1)), "normal(i + j, 1)");
    check(|b| b.prim(Prim::Exp, &[b.coerce(Coercion::Int2Real, b.coerce(Coercion::Nat2Int, b.var("n", Nat)))], Prob), "exp(nat2int(n))");
    check(|b| b.weight(b.coerce(Coercion::Nat2Prob, b.prim(Prim::Size, &[b.var("a", Type::array(Real))], Nat)), b.dirac(b.unit())), "weight(size(a), return ())");
    check(|b| { let n = b.var("n", Nat); b.prim(Prim::RealPow, &[b.coerce(Coercion::Nat2Prob, b.add(&[n, b.nat(1)])), b.coerce(Coercion::Nat2Real, n)], Prob) }, "(n + 1) ** n");
    check(|b| b.prim(Prim::RealPow, &[b.var("p", Prob), b.coerce(Coercion::Int2Real, b.add(&[b.var("i", Int), b.int(1)]))], Prob), "p ** (i + 1)");
    check(|b| b.lam("f", Type::fun(Real, Real), |f| b.app(f, &[b.coerce(Coercion::Prob2Real, b.var("p", Prob))])), "fn f real -> real:\nf(p)");
    check(|b| b.lam("c", Bool, |c| b.bind("x", b.std_normal(), |x| b.dirac(b.if_(c, x, b.coerce(Coercion::Nat2Real, b.var("n", Nat)))))), "fn c bool:\nx <~ normal(0, 1)\nreturn (if c: x else: n)");
    check(|b| b.normal(b.if_(b.var("c", Bool), b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.coerce(Coercion::Nat2Real, b.var("m", Nat))), b.prob(1)), "normal(if c: n else: m, 1)");
    check(|b| { let n = b.var("n", Nat); b.integrate("x", b.coerce(Coercion::Nat2Real, n), b.real_inf(), |_| b.coerce(Coercion::Nat2Prob, n)) }, "integrate x from n to ∞: n");
    // positions the elaborator checks that `checked` does not cover: coercion arguments,
    // `def` bodies, `left`/`right`, components of a checked pair, `observe`'s value
    check(|b| b.coerce(Coercion::Real2Prob, b.coerce(Coercion::Nat2Real, b.var("n", Nat))), "real2prob(n)");
    check(|b| b.let_("f", b.lam("n", Nat, |n| b.coerce(Coercion::Nat2Real, n)), |f| b.app(f, &[b.nat(2)])), "def f(n nat) real: n\nf(2)");
    check(|b| b.n(Node::Left(b.coerce(Coercion::Nat2Real, b.var("n", Nat))), Type::either(Real, Bool)), "left(n). either(real, bool)");
    check(|b| b.lam("f", Type::fun(Type::measure(Type::pair(Real, Real)), Real), |f| b.app(f, &[b.dirac(b.pair(b.var("x", Real), b.coerce(Coercion::Nat2Real, b.var("n", Nat))))])), "fn f measure(pair(real, real)) -> real:\nf(return (x, n))");
    // an unchecked pair infers its components
    check(|b| b.lam("c", Bool, |c| b.bind("x", b.std_normal(), |x| b.if_(c, b.dirac(b.pair(x, b.coerce(Coercion::Nat2Real, b.var("n", Nat)))), b.dirac(b.pair(x, x))))), "fn c bool:\nx <~ normal(0, 1)\nif c: return (x, nat2real(n)) else: return (x, x)");
    check(|b| b.n(Node::Observe(b.std_normal(), b.coerce(Coercion::Nat2Real, b.var("n", Nat))), Type::measure(Real)), "observe(normal(0, 1), n)");
    check(|b| b.n(Node::Right(b.coerce(Coercion::Int2Real, b.var("i", Int))), Type::either(Bool, Real)), "right(i). either(bool, real)");
    check(|b| b.lam("f", Type::fun(Type::maybe(Prob), Real), |f| b.app(f, &[b.n(Node::Just(b.coerce(Coercion::Nat2Prob, b.var("n", Nat))), Type::maybe(Prob))])), "fn f maybe(prob) -> real:\nf(just(n))");
    check(|b| b.n(Node::Just(b.coerce(Coercion::Nat2Prob, b.var("n", Nat))), Type::maybe(Prob)), "just(nat2prob(n))");
    check(|b| { let a = b.var("a", Type::array(Prob)); b.prim(Prim::Reduce, &[b.lam("x", Prob, |x| b.lam("y", Prob, |y| b.add(&[x, y]))), b.coerce(Coercion::Nat2Prob, b.var("n", Nat)), a], Prob) }, "reduce(fn x prob: fn y prob: x + y, n, a)");
    // stays explicit: a literal argument, forms that take the expected type inside,
    // unchecked positions, unsafe coercions
    check(|b| b.normal(b.coerce(Coercion::Nat2Real, b.nat(3)), b.prob(1)), "normal(nat2real(3), 1)");
    check(|b| b.normal(b.coerce(Coercion::Nat2Real, b.if_(b.var("c", Bool), b.var("n", Nat), b.var("m", Nat))), b.prob(1)), "normal(nat2real(if c: n else: m), 1)");
    check(|b| b.normal(b.coerce(Coercion::Nat2Real, b.let_("k", b.nat(3), |k| k)), b.prob(1)), "normal(nat2real(k = 3\n                k),\n       1)");
    check(|b| b.dirac(b.coerce(Coercion::Nat2Real, b.var("n", Nat))), "return nat2real(n)");
    check(|b| b.let_("y", b.coerce(Coercion::Nat2Real, b.var("n", Nat)), |y| y), "y = nat2real(n)\ny");
    check(|b| b.dist(Dist::Poisson, &[b.coerce(Coercion::Real2Prob, b.var("x", Real))]), "poisson(real2prob(x))");
    check(|b| b.index(b.var("a", Type::array(Real)), b.coerce(Coercion::Int2Nat, b.var("i", Int))), "a[int2nat(i)]");
}

#[test]
fn safe_coercions_print_implicitly_in_joined_operands() {
    check(|b| b.add(&[b.real(1), b.neg(b.coerce(Coercion::Prob2Real, b.var("p", Prob)))]), "1 - p");
    check(|b| b.add(&[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.var("x", Real)]), "n + x");
    check(|b| b.add(&[b.neg(b.coerce(Coercion::Prob2Real, b.var("p", Prob))), b.var("x", Real)]), "-p + x");
    check(|b| b.add(&[b.coerce(Coercion::Nat2Int, b.var("n", Nat)), b.neg(b.coerce(Coercion::Nat2Int, b.var("m", Nat)))]), "n - m");
    check(|b| b.add(&[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.q(-1, 2, Real)]), "n - 1/2");
    check(|b| b.add(&[b.coerce(Coercion::Int2Real, b.var("i", Int)), b.coerce(Coercion::Prob2Real, b.var("p", Prob))]), "i + p");
    check(|b| b.mul(&[b.coerce(Coercion::Nat2Prob, b.var("n", Nat)), b.recip(b.coerce(Coercion::Nat2Prob, b.var("m", Nat)))]), "n / m");
    check(|b| b.mul(&[b.var("x", Real), b.coerce(Coercion::Int2Real, b.neg(b.var("i", Int)))]), "x * (-i)");
    check(|b| b.cmp(Prim::Lt, b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.var("x", Real)), "n < x");
    check(|b| b.prim(Prim::Max, &[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.var("x", Real)], Real), "max(n, x)");
    check(|b| b.array_lit(Real, &[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.var("x", Real)]), "[n, x]");
    check(|b| b.dist(Dist::Categorical, &[b.array_lit(Prob, &[b.coerce(Coercion::Nat2Prob, b.var("n", Nat)), b.coerce(Coercion::Nat2Prob, b.var("m", Nat))])]), "categorical([n, m])");
    check(|b| b.if_(b.var("c", Bool), b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.var("x", Real)), "if c: n else: x");
    check(|b| b.sum("i", b.coerce(Coercion::Nat2Int, b.var("n", Nat)), b.var("k", Int), |i| i), "summate i from n to k: i");
    // the join without the coercions would be lower: all but the first stay implicit
    check(|b| b.add(&[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.coerce(Coercion::Nat2Real, b.var("m", Nat))]), "nat2real(n) + m");
    check(|b| b.add(&[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.neg(b.coerce(Coercion::Nat2Real, b.var("m", Nat)))]), "nat2real(n) - m");
    check(|b| b.mul(&[b.coerce(Coercion::Nat2Prob, b.var("n", Nat)), b.coerce(Coercion::Nat2Prob, b.var("m", Nat))]), "nat2prob(n) * m");
    check(|b| b.array_lit(Real, &[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.coerce(Coercion::Nat2Real, b.var("m", Nat))]), "[nat2real(n), m]");
    check(|b| b.if_(b.var("c", Bool), b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.coerce(Coercion::Prob2Real, b.var("p", Prob))), "if c: nat2real(n) else: p");
    // ... and with only literals beside it, the one coercion stays explicit
    check(|b| b.add(&[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.real(1)]), "nat2real(n) + 1");
    check(|b| b.add(&[b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.q(1, 2, Real)]), "nat2real(n) + 1/2");
    check(|b| b.cmp(Prim::Lt, b.coerce(Coercion::Nat2Real, b.var("n", Nat)), b.real(3)), "nat2real(n) < 3");
    check(|b| b.sum("i", b.coerce(Coercion::Nat2Int, b.var("n", Nat)), b.int(5), |i| i), "summate i from nat2int(n) to 5: i");
    // a negated argument would be read as subtracted; unsafe coercions always print
    check(|b| b.add(&[b.var("x", Real), b.coerce(Coercion::Int2Real, b.neg(b.var("i", Int)))]), "x + int2real(-i)");
    check(|b| b.add(&[b.coerce(Coercion::Int2Real, b.neg(b.var("i", Int))), b.var("x", Real)]), "int2real(-i) + x");
    check(|b| b.add(&[b.var("x", Real), b.coerce(Coercion::Int2Real, b.coerce(Coercion::Real2Int, b.var("y", Real)))]), "x + real2int(y)");
    check(|b| b.add(&[b.var("i", Int), b.coerce(Coercion::Real2Int, b.var("y", Real))]), "i + real2int(y)");
}

#[test]
fn safe_coercions_print_implicitly_under_raising_primitives() {
    check(|b| b.neg(b.coerce(Coercion::Nat2Int, b.var("n", Nat))), "-n");
    check(|b| b.neg(b.coerce(Coercion::Prob2Real, b.var("p", Prob))), "-p");
    check(|b| b.prim(Prim::Abs, &[b.coerce(Coercion::Nat2Int, b.var("n", Nat))], Nat), "abs(n)");
    check(|b| b.recip(b.coerce(Coercion::Nat2Prob, b.var("n", Nat))), "recip(n)");
    check(|b| b.prim(Prim::Floor, &[b.coerce(Coercion::Int2Real, b.var("i", Int))], Int), "floor(i)");
    // raising nat gives int, so nat2real stays
    check(|b| b.neg(b.coerce(Coercion::Nat2Real, b.var("n", Nat))), "-nat2real(n)");
    check(|b| b.prim(Prim::Abs, &[b.coerce(Coercion::Int2Real, b.var("i", Int))], Prob), "abs(int2real(i))");
}

#[test]
fn comparisons_logic_and_calls() {
    check(|b| b.cmp(Prim::Lt, b.var("x", Real), b.real(0)), "x < 0");
    check(|b| b.cmp(Prim::Le, b.int(0), b.var("x", Int)), "0 <= x");
    check(|b| b.cmp(Prim::Ne, b.var("x", Nat), b.nat(0)), "x /= 0");
    check(|b| b.cmp(Prim::Eq, b.add(&[b.var("x", Nat), b.nat(1)]), b.nat(2)), "x + 1 == 2");
    check(|b| b.prim(Prim::And, &[b.var("p", Bool), b.prim(Prim::Not, &[b.var("q", Bool)], Bool)], Bool), "p && not(q)");
    check(|b| b.prim(Prim::And, &[b.prim(Prim::Or, &[b.var("p", Bool), b.var("q", Bool)], Bool), b.var("r", Bool)], Bool), "(p || q) && r");
    check(|b| b.prim(Prim::Or, &[b.prim(Prim::And, &[b.var("p", Bool), b.var("q", Bool)], Bool), b.var("r", Bool)], Bool), "p && q || r");
    check(|b| b.prim(Prim::Exp, &[b.prim(Prim::Log, &[b.var("x", Prob)], Real)], Prob), "exp(log(x))");
    check(|b| b.prim(Prim::Max, &[b.var("x", Real), b.real(0)], Real), "max(x, 0)");
    check(|b| b.prim(Prim::Pi, &[], Prob), "pi");
    check(|b| b.prim(Prim::Choose, &[b.nat(5), b.nat(2)], Nat), "choose(5, 2)");
    check(|b| b.prim(Prim::Abs, &[b.int(-2)], Nat), "abs(-2)");
    check(|b| b.coerce(Coercion::Nat2Real, b.var("x", Nat)), "nat2real(x)");
    check(|b| b.coerce(Coercion::Real2Prob, b.real(2)), "real2prob(2)");
    check(|b| b.coerce(Coercion::Real2Prob, b.add(&[b.real(1), b.neg(b.coerce(Coercion::Prob2Real, b.var("p", Prob)))])), "real2prob(1 - p)");
    check(|b| b.index(b.var("a", Type::array(Real)), b.var("i", Nat)), "a[i]");
    check(|b| b.prim(Prim::Size, &[b.var("a", Type::array(Real))], Nat), "size(a)");
}

#[test]
fn data_constructors() {
    check(|b| b.unit(), "()");
    check(|b| b.pair(b.nat(1), b.pair(b.bool(true), b.real(2))), "(1, true, 2. real)");
    check(|b| b.pair(b.pair(b.nat(1), b.nat(2)), b.nat(3)), "((1, 2), 3)");
    check(|b| b.n(Node::Left(b.nat(1)), Type::either(Nat, Real)), "left(1). either(nat, real)");
    check(|b| b.n(Node::Right(b.real(1)), Type::either(Nat, Real)), "right(1). either(nat, real)");
    check(|b| b.n(Node::Just(b.nat(1)), Type::maybe(Nat)), "just(1)");
    check(|b| b.n(Node::Nothing, Type::maybe(Prob)), "nothing. maybe(prob)");
    check(|b| b.array_lit(Nat, &[]), "[]. array(nat)");
    check(|b| b.index(b.array_lit(Nat, &[]), b.nat(0)), "([]. array(nat))[0]");
    check(|b| b.array_lit(Real, &[b.real(1), b.real(2)]), "[1, 2]. array(real)");
    check(|b| b.array_lit(Real, &[b.var("x", Real), b.real(2)]), "[x, 2]");
}

#[test]
fn measures() {
    check(|b| b.dirac(b.real(1)), "return 1. real");
    check(|b| b.reject(Nat), "reject. measure(nat)");
    check(|b| b.weight(b.q(1, 2, Prob), b.dirac(b.bool(true))), "weight(1/2, return true)");
    check(|b| b.superpose(&[b.weight(b.q(1, 2, Prob), b.dirac(b.bool(true))), b.weight(b.q(1, 2, Prob), b.dirac(b.bool(false)))]), "weight(1/2, return true) <|> weight(1/2, return false)");
    check(|b| b.superpose(&[b.dirac(b.nat(1)), b.reject(Nat)]), "return 1 <|> reject. measure(nat)");
    check(|b| b.dirac(b.prim(Prim::Or, &[b.var("p", Bool), b.var("q", Bool)], Bool)), "return p || q");
    check(|b| b.dirac(b.superpose(&[b.var("m", Type::measure(Nat)), b.var("n", Type::measure(Nat))])), "return (m <|> n)");
    check(|b| b.n(Node::Observe(b.var("m", Type::measure(Real)), b.var("v", Real)), Type::measure(Real)), "observe(m, v)");
    check(|b| b.n(Node::Transform(Transform::Simplify, b.var("m", Type::measure(Real))), Type::measure(Real)), "simplify(m)");
    check(|b| b.plate("i", b.nat(10), |_| b.std_normal()), "plate i of 10: normal(0, 1)");
}

#[test]
fn statements() {
    check(|b| b.bind("x", b.std_normal(), |x| b.dirac(x)), "x <~ normal(0, 1)\nreturn x");
    check(|b| b.let_("x", b.nat(3), |x| b.mul(&[x, x])), "x = 3\nx * x");
    // a measure block as the second argument of weight: aligned at its first token
    check(|b| b.weight(b.q(1, 2, Prob), b.bind("x", b.std_normal(), |x| b.dirac(x))), "weight(1/2,\n       x <~ normal(0, 1)\n       return x)");
    // a let inside an operand is parenthesised; the block's column is after `(`
    check(|b| b.add(&[b.var("y", Nat), b.let_("x", b.nat(3), |x| x)]), "y\n    + (x = 3\n       x)");
    check(|b| b.let_("x", b.real(1), |x| b.bind("y", b.superpose(&[b.dirac(x), b.dirac(x)]), |y| b.dirac(y))), "x = 1. real\ny <~ return x <|> return x\nreturn y");
    // a statement chain as a statement's right-hand side
    check(|b| b.bind("y", b.bind("x", b.std_normal(), |x| b.dirac(x)), |y| b.dirac(y)), "y <~ (x <~ normal(0, 1)\n      return x)\nreturn y");
    // bind bodies are checked against the chain's measure type; let bodies are not
    check(|b| b.lam("c", Bool, |c| b.bind("x", b.std_normal(), |_| b.if_(c, b.dirac(b.real(1)), b.dirac(b.real(2))))), "fn c bool:\nx <~ normal(0, 1)\nif c: return 1. real else: return 2. real");
}

#[test]
fn functions_and_defs() {
    check(|b| b.lam("x", Real, |x| b.lam("y", Real, |y| b.add(&[x, y]))), "fn x real:\nfn y real:\nx + y");
    check(|b| b.lam("mu", Real, |mu| b.bind("x", b.normal(mu, b.prob(1)), |x| b.dirac(x))), "fn mu real:\nx <~ normal(mu, 1)\nreturn x");
    check(|b| b.let_("f", b.lam("x", Real, |x| b.add(&[x, b.real(1)])), |f| b.app(f, &[b.real(2)])), "def f(x real) real: x + 1\nf(2)");
    check(|b| b.let_("f", b.lam("x", Real, |x| b.lam("s", Prob, |s| b.normal(x, s))), |f| b.app(f, &[b.real(0), b.prob(1)])), "def f(x real, s prob) measure(real): normal(x, s)\nf(0, 1)");
    check(|b| b.let_("f", b.lam("x", Real, |x| b.bind("y", b.normal(x, b.prob(1)), |y| b.dirac(y))), |f| b.app(f, &[b.real(0)])), "def f(x real) measure(real):\n    y <~ normal(x, 1)\n    return y\nf(0)");
    check(|b| b.pair(b.lam("x", Real, |x| x), b.var("y", Real)), "(fn x real: x, y)");
    check(|b| b.app(b.lam("x", Real, |x| x), &[b.real(1)]), "(fn x real: x)(1. real)");
    check(|b| b.lam("f", Type::fun(Nat, Real), |f| b.app(f, &[b.nat(1)])), "fn f nat -> real:\nf(1)");
    // a file's parameters print flush left after its defs, and statements may follow them
    check(|b| b.let_("f", b.lam("x", Real, |x| x), |f| b.lam("y", Real, |y| b.bind("z", b.normal(b.app(f, &[y]), b.prob(1)), |z| b.dirac(z)))), "def f(x real) real: x\nfn y real:\nz <~ normal(f(y), 1)\nreturn z");
    // elsewhere a lambda's block body is indented
    check(|b| b.let_("g", b.lam("x", Real, |x| b.lam("y", Real, |y| b.let_("s", b.add(&[x, y]), |s| b.mul(&[s, s])))), |g| g), "def g(x real, y real) real:\n    s = x + y\n    s * s\ng");
    check(|b| b.pair(b.lam("x", Real, |x| b.let_("s", b.add(&[x, x]), |s| s)), b.unit()), "(fn x real:\n     s = x + x\n     s,\n ())");
}

#[test]
fn conditionals_and_match() {
    check(|b| b.if_(b.var("c", Bool), b.real(1), b.real(2)), "if c: 1. real else: 2. real");
    check(|b| b.if_(b.var("c", Bool), b.var("x", Real), b.real(2)), "if c: x else: 2");
    check(|b| b.bind("k", b.if_(b.var("c", Bool), b.dirac(b.real(1)), b.dirac(b.real(2))), |k| b.dirac(k)), "k <~ if c: return 1. real else: return 2. real\nreturn k");
    check(|b| b.if_(b.var("c", Bool), b.if_(b.var("d", Bool), b.nat(1), b.nat(2)), b.nat(3)), "if c:\n    if d: 1 else: 2\nelse:\n    3");
    check(|b| b.if_(b.var("c", Bool), b.nat(3), b.if_(b.var("d", Bool), b.nat(1), b.nat(2))), "if c: 3 else: if d: 1 else: 2");
    check(|b| b.add(&[b.var("x", Nat), b.if_(b.var("c", Bool), b.nat(1), b.nat(2))]), "x + (if c: 1 else: 2)");
    check(|b| { let (a, n) = (b.fresh("a", Real), b.fresh("n", Nat)); b.n(Node::Match(b.var("p", Type::pair(Real, Nat)), vec![(Pattern::Pair(pat_var(a), pat_var(n)), b.v(a))]), Real) }, "match p:\n    (a, n): a");
    check(|b| { let x = b.fresh("x", Nat); b.n(Node::Match(b.var("e", Type::either(Nat, Bool)), vec![(Pattern::Left(pat_var(x)), b.v(x)), (Pattern::Right(Box::new(Pattern::Wild)), b.if_(b.bool(true), b.nat(1), b.nat(0)))]), Nat) }, "match e:\n    left(x): x\n    right(_): if true: 1 else: 0");
    check(|b| b.n(Node::Match(b.var("m", Type::maybe(Bool)), vec![(Pattern::Just(Box::new(Pattern::Bool(true))), b.nat(1)), (Pattern::Nothing, b.nat(0)), (Pattern::Unit, b.nat(2))]), Nat), "match m:\n    just(true): 1\n    nothing: 0\n    (): 2");
}

#[test]
fn loops_and_reducers() {
    check(|b| b.array("i", b.nat(3), |i| b.coerce(Coercion::Nat2Real, i)), "array i of 3: nat2real(i)");
    check(|b| { let a = b.var("a", Type::array(Real)); b.sum("i", b.nat(0), b.prim(Prim::Size, &[a], Nat), |i| b.index(a, i)) }, "summate i from 0 to size(a): a[i]");
    check(|b| b.prod("i", b.int(0), b.int(10), |i| i), "product i from +0 to 10: i");
    check(|b| b.integrate("x", b.real(0), b.real_inf(), |x| b.prim(Prim::Exp, &[x], Prob)), "integrate x from 0 to ∞: exp(x)");
    check(|b| b.bucket("j", b.nat(0), b.nat(5), |_| b.r_add(b.real(1))), "bucket j from 0 to 5: r_add 1. real");
    check(|b| b.bucket("j", b.nat(0), b.nat(5), |j| b.r_index("b", b.nat(3), j, |_| b.r_add(b.prob(1)))), "bucket j from 0 to 5: r_index b = 3 of j: r_add 1. prob");
    check(|b| b.r_fanout(b.r_nop(), b.r_split(b.var("c", Bool), b.r_add(b.nat(1)), b.r_nop())), "r_fanout r_nop || (r_split c: r_add 1 else: r_nop)");
    check(|b| b.r_add(b.prim(Prim::Or, &[b.var("p", Bool), b.var("q", Bool)], Bool)), "r_add (p || q)");
    check(|b| b.chain("s", b.real(0), b.nat(4), |s| b.bind("x", b.normal(s, b.prob(1)), |x| b.dirac(b.pair(x, x)))), "chain s from 0. real of 4:\n    x <~ normal(s, 1)\n    return (x, x)");
}

#[test]
fn long_lines_break() {
    check_with(|b| b.add(&[b.var("alpha", Real), b.var("bb", Real), b.var("gamma1", Real), b.var("delta", Real)]), &width(16), "alpha\n    + bb\n    + gamma1\n    + delta");
    check_with(|b| b.normal(b.var("xxxxxxxx", Real), b.var("yyyyyyyy", Prob)), &width(20), "normal(xxxxxxxx,\n       yyyyyyyy)");
    check_with(|b| b.if_(b.var("c", Bool), b.var("xxxxxxxx", Real), b.var("yyyyyyyy", Real)), &width(20), "if c:\n    xxxxxxxx\nelse:\n    yyyyyyyy");
    check_with(|b| b.lam("x", Real, |x| b.add(&[x, b.var("yyyyyyyyyyyyyyyy", Real)])), &width(20), "fn x real:\nx + yyyyyyyyyyyyyyyy");
    check_with(|b| b.superpose(&[b.weight(b.q(1, 3, Prob), b.dirac(b.nat(1))), b.weight(b.q(2, 3, Prob), b.dirac(b.nat(2)))]), &width(30), "weight(1/3, return 1)\n    <|> weight(2/3, return 2)");
    check_with(|b| b.plate("i", b.var("n", Nat), |_| b.normal(b.var("mmmmmmmmmmmm", Real), b.prob(1))), &width(30), "plate i of n:\n    normal(mmmmmmmmmmmm, 1)");
    check_with(|b| b.bind("x", b.plate("i", b.var("n", Nat), |_| b.normal(b.var("mmmmmmmmmmmm", Real), b.prob(1))), |x| b.dirac(x)), &width(30), "x <~ plate i of n:\n    normal(mmmmmmmmmmmm, 1)\nreturn x");
}

#[test]
fn names_avoid_capture_shadowing_and_builtins() {
    // two binders with the same hint, the inner one referring to the outer
    check(|b| b.bind("x", b.std_normal(), |x1| b.bind("x", b.normal(x1, b.prob(1)), |x2| b.dirac(b.pair(x1, x2)))), "x <~ normal(0, 1)\nx1 <~ normal(x, 1)\nreturn (x, x1)");
    // a binder named like a free variable
    check(|b| { let xf = b.var("x", Real); b.lam("x", Real, |x| b.add(&[x, xf])) }, "fn x1 real:\nx1 + x");
    // reserved and built-in names
    check(|b| b.lam("exp", Real, |e| b.lam("normal", Real, |n| b.lam("true", Real, |t| b.add(&[e, n, t])))), "fn exp1 real:\nfn normal1 real:\nfn true1 real:\nexp1 + normal1 + true1");
    // invalid hints
    check(|b| b.lam("", Real, |e| b.lam("1a", Real, |n| b.add(&[e, n]))), "fn x real:\nfn a real:\nx + a");
    // sibling scopes may reuse a name
    check(|b| b.pair(b.lam("x", Real, |x| x), b.lam("x", Real, |x| x)), "(fn x real: x, fn x real: x)");
    // a statement's variable is not reused by binders in its right-hand side
    check(|b| b.let_("x", b.lam("x", Real, |x| x), |f| b.app(f, &[b.real(1)])), "def x(x1 real) real: x1\nx(1)");
    // a suffixed name does not collide with a hint that already has that suffix
    check(|b| b.lam("x", Real, |x| b.lam("x", Real, |x1| b.lam("x1", Real, |x11| b.add(&[x, x1, x11])))), "fn x real:\nfn x1 real:\nfn x11 real:\nx + x1 + x11");
    // two free variables with one hint stay distinct
    check(|b| b.add(&[b.var("x", Real), b.var("x", Real)]), "x + x1");
}

#[test]
fn deep_statement_chains_print_without_recursing() {
    let b = B::new();
    let n = 10_000;
    let vars: Vec<_> = (0..n).map(|_| b.fresh("x", Nat)).collect();
    let mut body = b.dirac(b.v(vars[n - 1]));
    for i in (0..n).rev() {
        let rhs = if i == 0 { b.nat(0) } else { b.v(vars[i - 1]) };
        body = b.n(Node::Let(vars[i], rhs, body), b.ty(body));
    }
    let text = print_term(&b.s.borrow(), body);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), n + 1);
    assert_eq!(lines[0], "x = 0");
    assert_eq!(lines[1], "x1 = x");
    assert_eq!(lines[n - 1], format!("x{} = x{}", n - 1, n - 2));
    assert_eq!(lines[n], format!("return x{}", n - 1));
}

#[test]
fn deeply_nested_terms_print_without_overflowing_the_stack() {
    // 20,000 nested negations: only a program transformation builds such a term.
    let b = B::new();
    let mut t = b.var("x", Real);
    for _ in 0..20_000 {
        t = b.neg(t);
    }
    let text = print_term(&b.s.borrow(), t);
    assert!(text.starts_with("-(-(-("), "{}", &text[..40]);
    assert!(text.contains("(-(-x))))"));
    assert_eq!(text.matches('x').count(), 1);
}

#[test]
fn decimals_are_printed_where_asked_and_only_for_tenths() {
    let mut store = Store::new();
    let t = crate::front::load(&mut store, "return 3/8 + (-1/20) + 7").expect("loads");
    let opts = PrintOptions {
        decimals: true,
        ..PrintOptions::default()
    };
    let text = print_with(&store, t, &opts);
    assert!(text.contains("0.375") && text.contains("0.05"), "{text}");
    assert!(print_term(&store, t).contains("3/8"));
    // a third has no decimal form
    let third = store.intern(
        Node::Lit(crate::num::Rational::ratio(1, 3).expect("a ratio")),
        Prob,
    );
    assert_eq!(print_with(&store, third, &opts).trim(), "1/3");
}
