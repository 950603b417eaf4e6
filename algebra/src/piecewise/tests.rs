//! Piecewise table: `(variables, facts, if-term, want)`, the `if` simplified under the
//! facts and printed; and the guarded shapes.

use crate::cond::tests::{round_trips, setup, show};
use crate::piecewise::{guarded_sum, indicator, simplify_if};
use crate::term::{Node, Store};
use crate::types::Type;

fn check_if(vars: &str, facts: &[&str], src: &str, want: &str) -> Option<String> {
    let mut s = Store::new();
    let (ctx, vs, q) = setup(&mut s, vars, facts, &[src]);
    let &Node::If(c, a, b) = s.node(q[0]) else {
        return Some(format!("{src}: not an if"));
    };
    let ty = s.ty(q[0]).clone();
    let t = simplify_if(&mut s, &ctx, c, a, b, &ty);
    if s.ty(t) != &ty {
        return Some(format!("{src}: type changed to {}", s.ty(t)));
    }
    if let Err(e) = crate::verify::verify(&s, t) {
        return Some(format!("{src}: ill-typed {e:?}"));
    }
    if let Err(e) = round_trips(&mut s, &vs, t) {
        return Some(format!("{src}: {e}"));
    }
    let got = show(&s, t);
    (got != want).then(|| format!("{src}\n    want {want}\n    got  {got}"))
}

#[rustfmt::skip]
const IFS: &[(&str, &[&str], &str, &str)] = &[
    ("i nat, n nat, x real", &["i: 0..n"], "if i < n: x else: 0", "x"),
    ("i nat, n nat, x real", &["i: 0..n"], "if i == n: x else: 2*x", "2 * x"),
    ("x real, c bool", &[], "if c: x else: x", "x"),
    ("c bool", &[], "if c: true else: false", "c"),
    ("c bool", &[], "if c: false else: true", "not(c)"),
    ("x real, y real, c bool", &[], "if not(c): x else: y", "if c: y else: x"),
    ("x real, y real, i int, j int", &[], "if i /= j: x else: y", "if i == j: y else: x"),
    ("x real, y real, z real, c bool", &[], "if c: (if c: x else: y) else: z", "if c: x else: z"),
    ("x real, y real, z real, c bool", &[], "if c: x else: (if c: y else: z)", "if c: x else: z"),
    ("x real, y real, i nat, n nat", &[], "if i < n: (if n <= i: x else: y) else: x", "if i + 1 <= n: y else: x"),
    ("x real, y real, i nat, n nat", &[], "if not(n <= i): x else: y", "if i + 1 <= n: x else: y"),
    ("x real, y real, i nat", &[], "if i < 0: x else: y", "y"),
    ("x real, y real, z real, a bool, b bool", &["a"], "if a && b: x else: (if b: y else: z)", "if b: x else: z"),
    ("x real, y real, c bool", &["!c"], "if c: x else: y", "y"),
    ("x real, y real, z real, c bool, d bool", &[], "if c: (if d: x else: y) else: (if d: x else: y)", "if d: x else: y"),
    ("a bool, b bool", &[], "if a: b else: false", "a && b"),
    ("a bool, b bool, c bool", &[], "if not(a): b else: c", "if a: c else: b"),
    ("i nat, j nat, x real", &["i == j"], "if j <= i: x else: 0", "x"),
];

#[test]
fn piecewise_table() {
    let bad: Vec<String> = IFS
        .iter()
        .filter_map(|(v, f, t, w)| check_if(v, f, t, w))
        .collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// The guarded shapes print as the documented text.
#[test]
fn guarded_shapes() {
    let mut s = Store::new();
    let (_, vs, q) = setup(
        &mut s,
        "i nat, n nat, y array(nat), t array(prob)",
        &[],
        &["i == y[0]", "t[0]", "not(i < n)"],
    );
    let one = indicator(&mut s, q[0], &Type::Real);
    // both branches literals: the printer writes their exact (real) forms
    assert_eq!(show(&s, one), "if i == y[0]: 1. real else: 0. real");
    let ind = indicator(&mut s, q[2], &Type::Nat);
    assert_eq!(show(&s, ind), "if n <= i: 1 else: 0");
    // Σ_j [i == y[j]] t[j], built from parts
    let j = s.fresh_var("j", Type::Nat);
    let jt = s.var_term(j);
    let (y, t) = (s.var_term(vs[2]), s.var_term(vs[3]));
    let yj = s.intern(Node::Index(y, jt), Type::Nat);
    let tj = s.intern(Node::Index(t, jt), Type::Prob);
    let i = s.var_term(vs[0]);
    let eq = s.prim(crate::term::Prim::Eq, vec![yj, i], Type::Bool);
    let zero = s.int_lit(0, Type::Nat);
    let n = s.var_term(vs[1]);
    let sum = guarded_sum(&mut s, j, zero, n, eq, tj);
    assert_eq!(
        show(&s, sum),
        "summate j from 0 to n: if i == y[j]: t[j] else: 0"
    );
    crate::verify::verify(&s, sum).unwrap();
    round_trips(&mut s, &vs, sum).unwrap();
}

/// A chain of `if`s whose two branches are one shared `if` finishes (the budget bounds
/// the walk; without it this is 2^60 visits) and stays well typed.
#[test]
fn shared_if_chains_are_bounded() {
    use crate::assume::Context;
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let mut t = s.var_term(x);
    for k in 0..60 {
        let b = s.fresh_var(&format!("b{k}"), Type::Bool);
        let c = s.var_term(b);
        let two = s.int_lit(2, Type::Real);
        let e = s.prim(crate::term::Prim::Mul, vec![two, t], Type::Real);
        let inner = s.intern(Node::If(c, t, e), Type::Real);
        let b2 = s.fresh_var(&format!("d{k}"), Type::Bool);
        let d = s.var_term(b2);
        t = s.intern(Node::If(d, inner, inner), Type::Real);
    }
    let Node::If(c, a, b) = *s.node(t) else {
        unreachable!()
    };
    let r = simplify_if(&mut s, &Context::new(), c, a, b, &Type::Real);
    crate::verify::verify(&s, r).unwrap();
    assert_eq!(s.ty(r), &Type::Real);
}
