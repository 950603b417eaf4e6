//! Printer tests: terms built directly in a `Store`, compared with the exact text.

use num_bigint::BigInt;
use num_rational::BigRational;

use super::*;
use crate::term::{Dist, Node, Pattern, Prim, Store, TermId, Transform, VarId};
use crate::types::{Coercion, Type};

/// A term builder that computes the types of the nodes it makes.
pub(crate) struct B {
    pub s: Store,
}

impl B {
    pub fn new() -> B {
        B { s: Store::new() }
    }
    pub fn ty(&self, t: TermId) -> Type {
        self.s.ty(t).clone()
    }
    pub fn fresh(&mut self, name: &str, ty: Type) -> VarId {
        self.s.fresh_var(name, ty)
    }
    /// A fresh variable and its term.
    pub fn var(&mut self, name: &str, ty: Type) -> (VarId, TermId) {
        let v = self.s.fresh_var(name, ty);
        (v, self.s.var_term(v))
    }
    pub fn v(&mut self, v: VarId) -> TermId {
        self.s.var_term(v)
    }
    pub fn q(&mut self, n: i64, d: i64, ty: Type) -> TermId {
        self.s
            .lit(BigRational::new(BigInt::from(n), BigInt::from(d)), ty)
    }
    pub fn nat(&mut self, n: i64) -> TermId {
        self.s.int_lit(n, Type::Nat)
    }
    pub fn int(&mut self, n: i64) -> TermId {
        self.s.int_lit(n, Type::Int)
    }
    pub fn real(&mut self, n: i64) -> TermId {
        self.s.int_lit(n, Type::Real)
    }
    pub fn prob(&mut self, n: i64) -> TermId {
        self.s.int_lit(n, Type::Prob)
    }
    pub fn n(&mut self, node: Node, ty: Type) -> TermId {
        self.s.intern(node, ty)
    }
    /// A primitive whose result type is its first argument's (arithmetic).
    pub fn arith(&mut self, p: Prim, args: Vec<TermId>) -> TermId {
        let ty = self.ty(args[0]);
        self.s.prim(p, args, ty)
    }
    pub fn add(&mut self, args: Vec<TermId>) -> TermId {
        self.arith(Prim::Add, args)
    }
    pub fn mul(&mut self, args: Vec<TermId>) -> TermId {
        self.arith(Prim::Mul, args)
    }
    pub fn neg(&mut self, a: TermId) -> TermId {
        self.arith(Prim::Neg, vec![a])
    }
    pub fn recip(&mut self, a: TermId) -> TermId {
        self.arith(Prim::Recip, vec![a])
    }
    pub fn prim(&mut self, p: Prim, args: Vec<TermId>, ty: Type) -> TermId {
        self.s.prim(p, args, ty)
    }
    pub fn cmp(&mut self, p: Prim, a: TermId, b: TermId) -> TermId {
        self.s.prim(p, vec![a, b], Type::Bool)
    }
    pub fn coerce(&mut self, c: Coercion, e: TermId) -> TermId {
        self.n(Node::Coerce(c, e), c.to_type())
    }
    pub fn infinity(&mut self) -> TermId {
        self.s.prim(Prim::Infinity, vec![], Type::Prob)
    }
    pub fn neg_infinity(&mut self) -> TermId {
        let i = self.infinity();
        let r = self.coerce(Coercion::Prob2Real, i);
        self.neg(r)
    }
    pub fn dist(&mut self, d: Dist, args: Vec<TermId>) -> TermId {
        self.n(Node::Dist(d, args), Type::measure(d.support_type()))
    }
    pub fn normal(&mut self, a: TermId, b: TermId) -> TermId {
        self.dist(Dist::Normal, vec![a, b])
    }
    pub fn dirac(&mut self, e: TermId) -> TermId {
        let ty = Type::measure(self.ty(e));
        self.n(Node::Dirac(e), ty)
    }
    pub fn weight(&mut self, w: TermId, m: TermId) -> TermId {
        let ty = self.ty(m);
        self.n(Node::Weight(w, m), ty)
    }
    pub fn bind(&mut self, x: VarId, m: TermId, k: TermId) -> TermId {
        let ty = self.ty(k);
        self.n(Node::Bind(x, m, k), ty)
    }
    pub fn let_(&mut self, x: VarId, e: TermId, body: TermId) -> TermId {
        let ty = self.ty(body);
        self.n(Node::Let(x, e, body), ty)
    }
    pub fn lam(&mut self, x: VarId, body: TermId) -> TermId {
        let ty = Type::fun(self.s.var_type(x).clone(), self.ty(body));
        self.n(Node::Lam(x, body), ty)
    }
    pub fn app(&mut self, f: TermId, a: TermId) -> TermId {
        let ty = match self.ty(f) {
            Type::Fun(_, r) => *r,
            t => t,
        };
        self.n(Node::App(f, a), ty)
    }
    pub fn if_(&mut self, c: TermId, a: TermId, b: TermId) -> TermId {
        let ty = self.ty(a);
        self.n(Node::If(c, a, b), ty)
    }
    pub fn pair(&mut self, a: TermId, b: TermId) -> TermId {
        let ty = Type::pair(self.ty(a), self.ty(b));
        self.n(Node::Pair(a, b), ty)
    }
    pub fn superpose(&mut self, ms: Vec<TermId>) -> TermId {
        let ty = self.ty(ms[0]);
        self.n(Node::Superpose(ms), ty)
    }
    pub fn index(&mut self, a: TermId, i: TermId) -> TermId {
        let ty = self.ty(a).array_of().cloned().unwrap_or(Type::Unit);
        self.n(Node::Index(a, i), ty)
    }
    pub fn bool_(&mut self, b: bool) -> TermId {
        self.n(Node::Bool(b), Type::Bool)
    }
}

/// Build a term, print it, compare with `expect` (without the final newline).
fn check(build: impl FnOnce(&mut B) -> TermId, expect: &str) {
    check_with(build, &PrintOptions::default(), expect);
}

fn check_with(build: impl FnOnce(&mut B) -> TermId, opts: &PrintOptions, expect: &str) {
    let mut b = B::new();
    let t = build(&mut b);
    let got = print_with(&b.s, t, opts);
    assert_eq!(
        got,
        format!("{expect}\n"),
        "\n--- got ---\n{got}--- want ---\n{expect}\n"
    );
}

fn narrow(width: usize) -> PrintOptions {
    PrintOptions {
        ascii: false,
        width,
    }
}

#[test]
fn literals_at_unchecked_positions_print_exact() {
    check(|b| b.nat(3), "3");
    check(|b| b.int(3), "+3");
    check(|b| b.int(-3), "-3");
    check(|b| b.prob(3), "3/1");
    check(|b| b.q(1, 2, Type::Prob), "1/2");
    check(|b| b.real(3), "+3/1");
    check(|b| b.q(-1, 2, Type::Real), "-1/2");
    check(|b| b.real(0), "+0/1");
}

#[test]
fn literals_at_checked_positions_print_bare() {
    check(
        |b| {
            let (m, z) = (b.real(0), b.prob(1));
            b.normal(m, z)
        },
        "normal(0, 1)",
    );
    check(
        |b| {
            let (m, z) = (b.real(-3), b.q(1, 2, Type::Prob));
            b.normal(m, z)
        },
        "normal(-3, 1/2)",
    );
    check(
        |b| {
            let (m, z) = (b.q(-5, 2, Type::Real), b.prob(2));
            b.normal(m, z)
        },
        "normal(-5/2, 2)",
    );
    check(
        |b| {
            let x = b.nat(2);
            b.dist(Dist::Poisson, vec![x])
        },
        "poisson(2)",
    );
    check(|b| b.dist(Dist::Counting, vec![]), "counting");
    check(
        |b| {
            let x = b.real(1);
            b.prim(Prim::Exp, vec![x], Type::Prob)
        },
        "exp(1)",
    );
}

#[test]
fn arithmetic_operators() {
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let l = b.real(1);
            b.add(vec![x, l])
        },
        "x + 1",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let l = b.real(-3);
            b.add(vec![x, l])
        },
        "x - 3",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let l = b.real(-3);
            b.add(vec![l, x])
        },
        "-3 + x",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let (_, y) = b.var("y", Type::Real);
            let n = b.neg(y);
            b.add(vec![x, n])
        },
        "x - y",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let (_, y) = b.var("y", Type::Real);
            let n = b.neg(x);
            b.add(vec![n, y])
        },
        "-x + y",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Prob);
            let h = b.q(1, 2, Type::Prob);
            b.mul(vec![h, x])
        },
        "(1/2) * x",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Prob);
            let (_, y) = b.var("y", Type::Prob);
            let r = b.recip(y);
            b.mul(vec![x, r])
        },
        "x / y",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Prob);
            let two = b.prob(2);
            let r = b.recip(two);
            b.mul(vec![x, r])
        },
        "x / 2",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Prob);
            let r = b.recip(x);
            let (_, y) = b.var("y", Type::Prob);
            b.mul(vec![r, y])
        },
        "recip(x) * y",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let m = b.real(-3);
            b.mul(vec![x, m])
        },
        "x * (-3)",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let (_, y) = b.var("y", Type::Real);
            let (_, z) = b.var("z", Type::Real);
            let s = b.add(vec![x, y]);
            b.mul(vec![s, z])
        },
        "(x + y) * z",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let (_, y) = b.var("y", Type::Real);
            let (_, z) = b.var("z", Type::Real);
            let s = b.add(vec![y, z]);
            b.add(vec![x, s])
        },
        "x + (y + z)",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let (_, y) = b.var("y", Type::Real);
            let p = b.mul(vec![x, y]);
            b.neg(p)
        },
        "-x * y",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let n = b.neg(x);
            b.neg(n)
        },
        "-(-x)",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let (_, y) = b.var("y", Type::Real);
            let n = b.neg(y);
            let n2 = b.neg(n);
            b.add(vec![x, n2])
        },
        "x - (-y)",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let two = b.nat(2);
            let p = b.prim(Prim::Pow, vec![x, two], Type::Real);
            let (_, y) = b.var("y", Type::Real);
            b.mul(vec![p, y])
        },
        "x ^ 2 * y",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let n = b.neg(x);
            let two = b.nat(2);
            b.prim(Prim::Pow, vec![n, two], Type::Real)
        },
        "(-x) ^ 2",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Prob);
            let h = b.q(1, 2, Type::Real);
            b.prim(Prim::RealPow, vec![x, h], Type::Prob)
        },
        "x ** (1/2)",
    );
    check(
        |b| {
            let h = b.q(1, 2, Type::Prob);
            let two = b.nat(2);
            b.prim(Prim::Pow, vec![h, two], Type::Prob)
        },
        "(1/2) ^ 2",
    );
    check(
        |b| {
            let t = b.real(2);
            let two = b.nat(2);
            b.prim(Prim::Pow, vec![t, two], Type::Real)
        },
        "(+2/1) ^ 2",
    );
}

#[test]
fn all_literal_operators_fix_their_type_with_the_first_operand() {
    check(
        |b| {
            let (x, y) = (b.real(1), b.real(2));
            b.add(vec![x, y])
        },
        "+1/1 + 2",
    );
    check(
        |b| {
            let (x, y) = (b.nat(1), b.nat(2));
            b.add(vec![x, y])
        },
        "1 + 2",
    );
    check(
        |b| {
            let (x, y) = (b.real(3), b.real(4));
            b.mul(vec![x, y])
        },
        "(+3/1) * 4",
    );
    check(
        |b| {
            let (x, y) = (b.prob(3), b.prob(2));
            let r = b.recip(y);
            b.mul(vec![x, r])
        },
        "3 * recip(2/1)",
    );
    check(
        |b| {
            let (x, y) = (b.int(-3), b.int(-2));
            b.add(vec![x, y])
        },
        "-3 - 2",
    );
    check(
        |b| {
            let (x, y) = (b.real(1), b.real(2));
            b.cmp(Prim::Lt, x, y)
        },
        "+1/1 < 2",
    );
}

#[test]
fn negation_and_infinity() {
    check(
        |b| {
            let l = b.int(3);
            b.neg(l)
        },
        "negate(+3)",
    );
    check(|b| b.infinity(), "∞");
    check(|b| b.neg_infinity(), "-∞");
    check_with(
        |b| b.neg_infinity(),
        &PrintOptions {
            ascii: true,
            width: 88,
        },
        "-inf",
    );
    check(
        |b| {
            let (lo, hi) = (b.neg_infinity(), b.infinity());
            let hi = b.coerce(Coercion::Prob2Real, hi);
            b.dist(Dist::Lebesgue, vec![lo, hi])
        },
        "lebesgue(-∞, ∞)",
    );
    check(
        |b| {
            let i = b.infinity();
            b.coerce(Coercion::Prob2Real, i)
        },
        "prob2real(∞)",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let ni = b.neg_infinity();
            b.add(vec![x, ni])
        },
        "x - ∞",
    );
}

#[test]
fn comparisons_logic_and_calls() {
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let z = b.real(0);
            b.cmp(Prim::Lt, x, z)
        },
        "x < 0",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Int);
            let z = b.int(0);
            b.cmp(Prim::Le, z, x)
        },
        "0 <= x",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Nat);
            let z = b.nat(0);
            b.cmp(Prim::Ne, x, z)
        },
        "x /= 0",
    );
    check(
        |b| {
            let (_, p) = b.var("p", Type::Bool);
            let (_, q) = b.var("q", Type::Bool);
            let n = b.prim(Prim::Not, vec![q], Type::Bool);
            b.prim(Prim::And, vec![p, n], Type::Bool)
        },
        "p && not(q)",
    );
    check(
        |b| {
            let (_, p) = b.var("p", Type::Bool);
            let (_, q) = b.var("q", Type::Bool);
            let o = b.prim(Prim::Or, vec![p, q], Type::Bool);
            b.prim(Prim::And, vec![o, p], Type::Bool)
        },
        "(p || q) && p",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Prob);
            let l = b.prim(Prim::Log, vec![x], Type::Real);
            b.prim(Prim::Exp, vec![l], Type::Prob)
        },
        "exp(log(x))",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let z = b.real(0);
            b.prim(Prim::Max, vec![x, z], Type::Real)
        },
        "max(x, 0)",
    );
    check(|b| b.prim(Prim::Pi, vec![], Type::Prob), "pi");
    check(
        |b| {
            let (_, x) = b.var("x", Type::Nat);
            b.coerce(Coercion::Nat2Real, x)
        },
        "nat2real(x)",
    );
    check(
        |b| {
            let (_, a) = b.var("a", Type::array(Type::Real));
            let (_, i) = b.var("i", Type::Nat);
            b.index(a, i)
        },
        "a[i]",
    );
    check(
        |b| {
            let (_, a) = b.var("a", Type::array(Type::Real));
            let i = b.nat(0);
            b.index(a, i)
        },
        "a[0]",
    );
    check(
        |b| {
            let (_, a) = b.var("a", Type::array(Type::Real));
            b.prim(Prim::Size, vec![a], Type::Nat)
        },
        "size(a)",
    );
}

#[test]
fn data_constructors() {
    check(|b| b.n(Node::Unit, Type::Unit), "()");
    check(
        |b| {
            let (x, y, z) = (b.nat(1), b.bool_(true), b.real(2));
            let p = b.pair(y, z);
            b.pair(x, p)
        },
        "(1, true, +2/1)",
    );
    check(
        |b| {
            let (x, y, z) = (b.nat(1), b.nat(2), b.nat(3));
            let p = b.pair(x, y);
            b.pair(p, z)
        },
        "((1, 2), 3)",
    );
    check(
        |b| {
            let x = b.nat(1);
            b.n(Node::Left(x), Type::either(Type::Nat, Type::Real))
        },
        "left(1). either(nat, real)",
    );
    check(
        |b| {
            let x = b.real(1);
            b.n(Node::Right(x), Type::either(Type::Nat, Type::Real))
        },
        "right(+1/1). either(nat, real)",
    );
    check(
        |b| {
            let x = b.nat(1);
            b.n(Node::Just(x), Type::maybe(Type::Nat))
        },
        "just(1)",
    );
    check(
        |b| b.n(Node::Nothing, Type::maybe(Type::Prob)),
        "nothing. maybe(prob)",
    );
    check(
        |b| b.n(Node::ArrayLit(vec![]), Type::array(Type::Nat)),
        "[]. array(nat)",
    );
    check(
        |b| {
            let (x, y) = (b.real(1), b.real(2));
            b.n(Node::ArrayLit(vec![x, y]), Type::array(Type::Real))
        },
        "[+1/1, 2]",
    );
    check(
        |b| {
            let (_, x) = b.var("x", Type::Real);
            let y = b.real(2);
            b.n(Node::ArrayLit(vec![x, y]), Type::array(Type::Real))
        },
        "[x, 2]",
    );
}

#[test]
fn measures() {
    check(
        |b| {
            let x = b.real(1);
            b.dirac(x)
        },
        "return +1/1",
    );
    check(
        |b| b.n(Node::Reject, Type::measure(Type::Nat)),
        "reject. measure(nat)",
    );
    check(
        |b| {
            let w = b.q(1, 2, Type::Prob);
            let t = b.bool_(true);
            let d = b.dirac(t);
            b.weight(w, d)
        },
        "weight(1/2, return true)",
    );
    check(
        |b| {
            let w = b.q(1, 2, Type::Prob);
            let t = b.bool_(true);
            let f = b.bool_(false);
            let (d1, d2) = (b.dirac(t), b.dirac(f));
            let m1 = b.weight(w, d1);
            let m2 = b.weight(w, d2);
            b.superpose(vec![m1, m2])
        },
        "weight(1/2, return true) <|> weight(1/2, return false)",
    );
    check(
        |b| {
            let (_, m) = b.var("m", Type::measure(Type::Real));
            let (_, v) = b.var("v", Type::Real);
            b.n(Node::Observe(m, v), Type::measure(Type::Real))
        },
        "observe(m, v)",
    );
    check(
        |b| {
            let (_, m) = b.var("m", Type::measure(Type::Real));
            b.n(
                Node::Transform(Transform::Simplify, m),
                Type::measure(Type::Real),
            )
        },
        "simplify(m)",
    );
    check(
        |b| {
            let (i, _) = b.var("i", Type::Nat);
            let n = b.nat(10);
            let (z, o) = (b.real(0), b.prob(1));
            let m = b.normal(z, o);
            b.n(Node::Plate(i, n, m), Type::measure(Type::array(Type::Real)))
        },
        "plate i of 10: normal(0, 1)",
    );
}

#[test]
fn statements() {
    check(
        |b| {
            let x = b.fresh("x", Type::Real);
            let (z, o) = (b.real(0), b.prob(1));
            let m = b.normal(z, o);
            let xv = b.v(x);
            let r = b.dirac(xv);
            b.bind(x, m, r)
        },
        "x <~ normal(0, 1)\nreturn x",
    );
    check(
        |b| {
            let x = b.fresh("x", Type::Nat);
            let three = b.nat(3);
            let xv = b.v(x);
            let body = b.mul(vec![xv, xv]);
            b.let_(x, three, body)
        },
        "x = 3\nx * x",
    );
    // a measure block as the second argument of weight: aligned at its first token
    check(
        |b| {
            let x = b.fresh("x", Type::Real);
            let (z, o) = (b.real(0), b.prob(1));
            let m = b.normal(z, o);
            let xv = b.v(x);
            let r = b.dirac(xv);
            let k = b.bind(x, m, r);
            let w = b.q(1, 2, Type::Prob);
            b.weight(w, k)
        },
        "weight(1/2,\n       x <~ normal(0, 1)\n       return x)",
    );
    // a let inside an operand is parenthesised; the block's column is after `(`
    check(
        |b| {
            let x = b.fresh("x", Type::Nat);
            let (_, y) = b.var("y", Type::Nat);
            let three = b.nat(3);
            let xv = b.v(x);
            let l = b.let_(x, three, xv);
            b.add(vec![y, l])
        },
        "y\n    + (x = 3\n       x)",
    );
    check(
        |b| {
            let x = b.fresh("x", Type::Real);
            let y = b.fresh("y", Type::Real);
            let xv = b.v(x);
            let e = b.dirac(xv);
            let m = b.superpose(vec![e, e]);
            let yv = b.v(y);
            let r = b.dirac(yv);
            let k = b.bind(y, m, r);
            let l = b.real(1);
            b.let_(x, l, k)
        },
        "x = +1/1\ny <~ (return x) <|> (return x)\nreturn y",
    );
}

#[test]
fn functions_and_defs() {
    check(
        |b| {
            let x = b.fresh("x", Type::Real);
            let y = b.fresh("y", Type::Real);
            let (xv, yv) = (b.v(x), b.v(y));
            let s = b.add(vec![xv, yv]);
            let l = b.lam(y, s);
            b.lam(x, l)
        },
        "fn x real:\nfn y real:\nx + y",
    );
    check(
        |b| {
            let mu = b.fresh("mu", Type::Real);
            let x = b.fresh("x", Type::Real);
            let muv = b.v(mu);
            let o = b.prob(1);
            let m = b.normal(muv, o);
            let xv = b.v(x);
            let r = b.dirac(xv);
            let k = b.bind(x, m, r);
            b.lam(mu, k)
        },
        "fn mu real:\nx <~ normal(mu, 1)\nreturn x",
    );
    check(
        |b| {
            let f = b.fresh("f", Type::fun(Type::Real, Type::Real));
            let x = b.fresh("x", Type::Real);
            let xv = b.v(x);
            let one = b.real(1);
            let s = b.add(vec![xv, one]);
            let lam = b.lam(x, s);
            let fv = b.v(f);
            let two = b.real(2);
            let call = b.app(fv, two);
            b.let_(f, lam, call)
        },
        "def f(x real) real: x + 1\nf(2)",
    );
    check(
        |b| {
            let f = b.fresh(
                "f",
                Type::fun(Type::Real, Type::fun(Type::Prob, Type::measure(Type::Real))),
            );
            let x = b.fresh("x", Type::Real);
            let s = b.fresh("s", Type::Prob);
            let (xv, sv) = (b.v(x), b.v(s));
            let m = b.normal(xv, sv);
            let l1 = b.lam(s, m);
            let lam = b.lam(x, l1);
            let fv = b.v(f);
            let (z, o) = (b.real(0), b.prob(1));
            let c1 = b.app(fv, z);
            let call = b.app(c1, o);
            b.let_(f, lam, call)
        },
        "def f(x real, s prob) measure(real): normal(x, s)\nf(0, 1)",
    );
    check(
        |b| {
            let x = b.fresh("x", Type::Real);
            let xv = b.v(x);
            let lam = b.lam(x, xv);
            let (_, y) = b.var("y", Type::Real);
            b.pair(lam, y)
        },
        "(fn x real: x, y)",
    );
    check(
        |b| {
            let x = b.fresh("x", Type::Real);
            let xv = b.v(x);
            let lam = b.lam(x, xv);
            let one = b.real(1);
            b.app(lam, one)
        },
        "(fn x real: x)(+1/1)",
    );
}

#[test]
fn conditionals_and_match() {
    check(
        |b| {
            let (_, c) = b.var("c", Type::Bool);
            let (x, y) = (b.real(1), b.real(2));
            b.if_(c, x, y)
        },
        "if c: +1/1 else: +2/1",
    );
    check(
        |b| {
            let (_, c) = b.var("c", Type::Bool);
            let (_, x) = b.var("x", Type::Real);
            let y = b.real(2);
            b.if_(c, x, y)
        },
        "if c: x else: 2",
    );
    check(
        |b| {
            let (_, c) = b.var("c", Type::Bool);
            let (x, y) = (b.real(1), b.real(2));
            let (dx, dy) = (b.dirac(x), b.dirac(y));
            let i = b.if_(c, dx, dy);
            let k = b.fresh("k", Type::Real);
            let kv = b.v(k);
            let r = b.dirac(kv);
            b.bind(k, i, r)
        },
        "k <~ if c: return +1/1 else: return +2/1\nreturn k",
    );
    check(
        |b| {
            let (_, c) = b.var("c", Type::Bool);
            let (_, d) = b.var("d", Type::Bool);
            let (x, y, z) = (b.nat(1), b.nat(2), b.nat(3));
            let inner = b.if_(d, x, y);
            b.if_(c, inner, z)
        },
        "if c:\n    if d: 1 else: 2\nelse:\n    3",
    );
    check(
        |b| {
            let (_, p) = b.var("p", Type::pair(Type::Real, Type::Nat));
            let a = b.fresh("a", Type::Real);
            let n = b.fresh("n", Type::Nat);
            let av = b.v(a);
            b.n(
                Node::Match(
                    p,
                    vec![(
                        Pattern::Pair(Box::new(Pattern::Var(a)), Box::new(Pattern::Var(n))),
                        av,
                    )],
                ),
                Type::Real,
            )
        },
        "match p:\n    (a, n): a",
    );
    check(
        |b| {
            let (_, e) = b.var("e", Type::either(Type::Nat, Type::Bool));
            let x = b.fresh("x", Type::Nat);
            let xv = b.v(x);
            let t = b.bool_(true);
            let one = b.nat(1);
            let z = b.nat(0);
            let inner = b.if_(t, one, z);
            b.n(
                Node::Match(
                    e,
                    vec![
                        (Pattern::Left(Box::new(Pattern::Var(x))), xv),
                        (Pattern::Right(Box::new(Pattern::Wild)), inner),
                    ],
                ),
                Type::Nat,
            )
        },
        "match e:\n    left(x): x\n    right(_): if true: 1 else: 0",
    );
}

#[test]
fn loops_and_reducers() {
    check(
        |b| {
            let i = b.fresh("i", Type::Nat);
            let n = b.nat(3);
            let iv = b.v(i);
            let c = b.coerce(Coercion::Nat2Real, iv);
            b.n(Node::Array(i, n, c), Type::array(Type::Real))
        },
        "array i of 3: nat2real(i)",
    );
    check(
        |b| {
            let i = b.fresh("i", Type::Nat);
            let (_, a) = b.var("a", Type::array(Type::Real));
            let lo = b.nat(0);
            let hi = b.prim(Prim::Size, vec![a], Type::Nat);
            let iv = b.v(i);
            let e = b.index(a, iv);
            b.n(Node::Summate(i, lo, hi, e), Type::Real)
        },
        "summate i from 0 to size(a): a[i]",
    );
    check(
        |b| {
            let i = b.fresh("i", Type::Int);
            let lo = b.int(0);
            let hi = b.int(10);
            let iv = b.v(i);
            b.n(Node::Product(i, lo, hi, iv), Type::Int)
        },
        "product i from +0 to 10: i",
    );
    check(
        |b| {
            let x = b.fresh("x", Type::Real);
            let lo = b.real(0);
            let i = b.infinity();
            let hi = b.coerce(Coercion::Prob2Real, i);
            let xv = b.v(x);
            let e = b.prim(Prim::Exp, vec![xv], Type::Prob);
            b.n(Node::Integrate(x, lo, hi, e), Type::Prob)
        },
        "integrate x from 0 to ∞: exp(x)",
    );
    check(
        |b| {
            let j = b.fresh("j", Type::Nat);
            let lo = b.nat(0);
            let hi = b.nat(5);
            let one = b.real(1);
            let r = b.n(Node::RAdd(one), Type::Real);
            b.n(Node::Bucket(j, lo, hi, r), Type::Real)
        },
        "bucket j from 0 to 5: r_add +1/1",
    );
    check(
        |b| {
            let j = b.fresh("j", Type::Nat);
            let bb = b.fresh("b", Type::Nat);
            let lo = b.nat(0);
            let hi = b.nat(5);
            let n = b.nat(3);
            let jv = b.v(j);
            let one = b.prob(1);
            let ra = b.n(Node::RAdd(one), Type::Prob);
            let ri = b.n(Node::RIndex(bb, n, jv, ra), Type::array(Type::Prob));
            b.n(Node::Bucket(j, lo, hi, ri), Type::array(Type::Prob))
        },
        "bucket j from 0 to 5: r_index b = 3 of j: r_add 1/1",
    );
    check(
        |b| {
            let (_, c) = b.var("c", Type::Bool);
            let one = b.nat(1);
            let ra = b.n(Node::RAdd(one), Type::Nat);
            let nop = b.n(Node::RNop, Type::Unit);
            let sp = b.n(Node::RSplit(c, ra, nop), Type::pair(Type::Nat, Type::Unit));
            b.n(
                Node::RFanout(nop, sp),
                Type::pair(Type::Unit, Type::pair(Type::Nat, Type::Unit)),
            )
        },
        "r_fanout r_nop || (r_split c: r_add 1 else: r_nop)",
    );
    check(
        |b| {
            let s = b.fresh("s", Type::Real);
            let s0 = b.real(0);
            let n = b.nat(4);
            let sv = b.v(s);
            let o = b.prob(1);
            let m = b.normal(sv, o);
            let x = b.fresh("x", Type::Real);
            let xv = b.v(x);
            let pr = b.pair(xv, xv);
            let r = b.dirac(pr);
            let k = b.bind(x, m, r);
            b.n(
                Node::Chain(s, s0, n, k),
                Type::measure(Type::pair(Type::array(Type::Real), Type::Real)),
            )
        },
        "chain s from +0/1 of 4:\n    x <~ normal(s, 1)\n    return (x, x)",
    );
}

#[test]
fn long_lines_break() {
    check_with(
        |b| {
            let vs: Vec<TermId> = ["alpha", "bb", "gamma1", "delta"]
                .iter()
                .map(|n| b.var(n, Type::Real).1)
                .collect();
            b.add(vs)
        },
        &narrow(16),
        "alpha\n    + bb\n    + gamma1\n    + delta",
    );
    check_with(
        |b| {
            let (_, x) = b.var("xxxxxxxx", Type::Real);
            let (_, y) = b.var("yyyyyyyy", Type::Prob);
            b.normal(x, y)
        },
        &narrow(20),
        "normal(xxxxxxxx,\n       yyyyyyyy)",
    );
    check_with(
        |b| {
            let (_, c) = b.var("c", Type::Bool);
            let (_, x) = b.var("xxxxxxxx", Type::Real);
            let (_, y) = b.var("yyyyyyyy", Type::Real);
            b.if_(c, x, y)
        },
        &narrow(20),
        "if c:\n    xxxxxxxx\nelse:\n    yyyyyyyy",
    );
    check_with(
        |b| {
            let x = b.fresh("x", Type::Real);
            let xv = b.v(x);
            let (_, y) = b.var("yyyyyyyyyyyyyyyy", Type::Real);
            let s = b.add(vec![xv, y]);
            b.lam(x, s)
        },
        &narrow(20),
        "fn x real:\nx + yyyyyyyyyyyyyyyy",
    );
}

#[test]
fn names_avoid_capture_shadowing_and_builtins() {
    // two binders with the same hint, the inner one referring to the outer
    check(
        |b| {
            let x1 = b.fresh("x", Type::Real);
            let x2 = b.fresh("x", Type::Real);
            let (z, o) = (b.real(0), b.prob(1));
            let m1 = b.normal(z, o);
            let x1v = b.v(x1);
            let m2 = b.normal(x1v, o);
            let x2v = b.v(x2);
            let p = b.pair(x1v, x2v);
            let r = b.dirac(p);
            let k2 = b.bind(x2, m2, r);
            b.bind(x1, m1, k2)
        },
        "x <~ normal(0, 1)\nx1 <~ normal(x, 1)\nreturn (x, x1)",
    );
    // a binder named like a free variable
    check(
        |b| {
            let (_, xf) = b.var("x", Type::Real);
            let x = b.fresh("x", Type::Real);
            let xv = b.v(x);
            let s = b.add(vec![xv, xf]);
            b.lam(x, s)
        },
        "fn x1 real:\nx1 + x",
    );
    // reserved and built-in names
    check(
        |b| {
            let e = b.fresh("exp", Type::Real);
            let n = b.fresh("normal", Type::Real);
            let t = b.fresh("true", Type::Real);
            let (ev, nv, tv) = (b.v(e), b.v(n), b.v(t));
            let s = b.add(vec![ev, nv, tv]);
            let l3 = b.lam(t, s);
            let l2 = b.lam(n, l3);
            b.lam(e, l2)
        },
        "fn exp1 real:\nfn normal1 real:\nfn true1 real:\nexp1 + normal1 + true1",
    );
    // invalid hints
    check(
        |b| {
            let e = b.fresh("", Type::Real);
            let n = b.fresh("1a", Type::Real);
            let (ev, nv) = (b.v(e), b.v(n));
            let s = b.add(vec![ev, nv]);
            let l = b.lam(n, s);
            b.lam(e, l)
        },
        "fn x real:\nfn a real:\nx + a",
    );
    // sibling scopes may reuse a name
    check(
        |b| {
            let x1 = b.fresh("x", Type::Real);
            let x2 = b.fresh("x", Type::Real);
            let (v1, v2) = (b.v(x1), b.v(x2));
            let l1 = b.lam(x1, v1);
            let l2 = b.lam(x2, v2);
            b.pair(l1, l2)
        },
        "(fn x real: x, fn x real: x)",
    );
    // a statement's variable is not reused by binders in its right-hand side
    check(
        |b| {
            let f = b.fresh("x", Type::fun(Type::Real, Type::Real));
            let x = b.fresh("x", Type::Real);
            let xv = b.v(x);
            let lam = b.lam(x, xv);
            let fv = b.v(f);
            let one = b.real(1);
            let c = b.app(fv, one);
            b.let_(f, lam, c)
        },
        "def x(x1 real) real: x1\nx(1)",
    );
}

#[test]
fn deep_statement_chains_print_without_recursing() {
    let mut b = B::new();
    let n = 10_000;
    let vars: Vec<VarId> = (0..n).map(|_| b.fresh("x", Type::Nat)).collect();
    let last = b.v(vars[n - 1]);
    let mut body = b.dirac(last);
    for i in (0..n).rev() {
        let rhs = if i == 0 { b.nat(0) } else { b.v(vars[i - 1]) };
        body = b.let_(vars[i], rhs, body);
    }
    let text = print_term(&b.s, body);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), n + 1);
    assert_eq!(lines[0], "x = 0");
    assert_eq!(lines[1], "x1 = x");
    assert_eq!(lines[n - 1], format!("x{} = x{}", n - 1, n - 2));
    assert_eq!(lines[n], format!("return x{}", n - 1));
}
