//! Tables for canonical conditions and for deciding them, and the proptests: `decide`
//! never contradicts brute-force evaluation, `canonical` is idempotent and keeps meaning.

use crate::assume::{Context, Tri};
use crate::cond::{canonical, decide};
use crate::front;
use crate::print::print_term;
use crate::term::{Node, Store, TermId};

/// Loads `fn v1 T1: ... fn vk Tk: (e1, (e2, ... (en, ())))` and returns the ei.
pub(crate) fn load_exprs(store: &mut Store, vars: &str, exprs: &[&str]) -> Vec<TermId> {
    let mut src = String::new();
    for v in vars.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        src.push_str(&format!("fn {v}: "));
    }
    for e in exprs {
        src.push_str(&format!("({e}, "));
    }
    src.push_str("()");
    src.push_str(&")".repeat(exprs.len()));
    let mut t = match front::load(store, &src) {
        Ok(t) => t,
        Err(e) => panic!("{src}: {}", e[0].message),
    };
    while let Node::Lam(_, b) = store.node(t) {
        t = *b;
    }
    let mut out = Vec::new();
    while let Node::Pair(a, b) = store.node(t) {
        out.push(*a);
        t = *b;
    }
    out
}

/// The printed term without its trailing newline.
pub(crate) fn show(store: &Store, t: TermId) -> String {
    print_term(store, t).trim_end().to_string()
}

/// Builds a context from fact strings: `i: lo..hi` is a range, `!c` is "c is false",
/// anything else a condition known true. Returns the context and the query terms.
pub(crate) fn setup(
    store: &mut Store,
    vars: &str,
    facts: &[&str],
    queries: &[&str],
) -> (Context, Vec<TermId>) {
    let mut exprs: Vec<String> = Vec::new();
    let mut kinds = Vec::new();
    for f in facts {
        if let Some((v, range)) = f.split_once(": ") {
            let (lo, hi) = range.rsplit_once("..").expect("range lo..hi");
            exprs.push(v.to_string());
            exprs.push(lo.to_string());
            exprs.push(hi.to_string());
            kinds.push(0);
        } else if let Some(c) = f.strip_prefix('!') {
            exprs.push(c.to_string());
            kinds.push(1);
        } else {
            exprs.push(f.to_string());
            kinds.push(2);
        }
    }
    exprs.extend(queries.iter().map(|q| q.to_string()));
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    let terms = load_exprs(store, vars, &refs);
    let mut ctx = Context::new();
    let mut i = 0;
    for k in kinds {
        match k {
            0 => {
                let Node::Var(v) = *store.node(terms[i]) else {
                    panic!("range of a non-variable")
                };
                ctx = ctx.enter_loop(v, terms[i + 1], terms[i + 2]);
                i += 3;
            }
            k => {
                ctx = ctx.enter_branch(terms[i], k == 2);
                i += 1;
            }
        }
    }
    (ctx, terms[i..].to_vec())
}

/// Canonical form of `cond` (with `vars` in scope, no facts) printed, and idempotence.
fn check_cond(vars: &str, cond: &str, want: &str) -> Option<String> {
    let mut s = Store::new();
    let (ctx, q) = setup(&mut s, vars, &[], &[cond]);
    let c = canonical(&mut s, &ctx, q[0]);
    let got = show(&s, c);
    let again = canonical(&mut s, &ctx, c);
    if again != c {
        return Some(format!(
            "{cond}: not idempotent: {got} then {}",
            show(&s, again)
        ));
    }
    if let Err(e) = crate::verify::verify(&s, c) {
        return Some(format!("{cond}: ill-typed result {got}: {e:?}"));
    }
    let mut s2 = Store::new();
    match front::load(&mut s2, &format!("fn {}: {got}", vars.replace(',', ": fn"))) {
        Ok(_) => {}
        Err(e) => return Some(format!("{cond}: {got} does not parse: {}", e[0].message)),
    }
    (got != want).then(|| format!("{cond}\n    want {want}\n    got  {got}"))
}

#[rustfmt::skip]
const CANONICAL: &[(&str, &str, &str)] = &[
    ("i nat, n nat", "i < n", "i + 1 <= n"),
    ("i nat, n nat", "i < n && not(n <= i)", "i + 1 <= n"),
    ("i nat, n nat", "n > i", "i + 1 <= n"),
    ("i nat, n nat", "not(i < n)", "n <= i"),
    ("i nat, n nat", "not(not(i <= n))", "i <= n"),
    ("i nat, n nat", "i == n", "i == n"),
    ("i nat, n nat", "n == i", "i == n"),
    ("i nat, n nat", "not(i == n)", "i /= n"),
    ("i nat, n nat", "i /= n", "i /= n"),
    ("i nat, n nat", "i + 1 == n", "i + 1 == n"),
    ("i nat, n nat", "i == n - 1", "i + 1 == n"),
    ("i int, j int", "i - j < 3", "i <= j + 2"),
    ("i int, j int", "2*i < 2*j", "i + 1 <= j"),
    ("i int", "2*i <= 3", "i <= 1"),
    ("i int", "2*i == 3", "false"),
    ("i int", "2*i /= 3", "true"),
    ("i int", "-i < 0", "1 <= i"),
    ("i int, j int", "3 - i >= j", "i + j <= 3"),
    ("x real, y real", "x < y", "x < y"),
    ("x real, y real", "not(x < y)", "y <= x"),
    ("x real, y real", "x/2 <= y/3", "3 * x <= 2 * y"),
    ("x real", "x < 1/2", "x < 1/2"),
    ("x real", "2*x < 1", "x < 1/2"),
    ("x real, n nat", "n < x", "nat2real(n) < x"),
    ("n nat", "nat2real(n) < 3/2", "n <= 1"),
    ("p prob, q prob", "p < q", "p < q"),
    ("p prob, x real", "p < x", "prob2real(p) < x"),
    ("x real", "x < x + 1", "true"),
    ("x real", "1 < 2", "true"),
    ("x real", "x + 1 == 1 + x", "true"),
    ("a bool, b bool", "a && b && a", "a && b"),
    ("a bool, b bool", "b && a", "a && b"),
    ("a bool, b bool", "a || (b || a)", "a || b"),
    ("a bool", "a && false", "false"),
    ("a bool", "a || false", "a"),
    ("a bool", "a && not(a)", "false"),
    ("a bool", "a || not(a)", "true"),
    ("a bool, b bool", "not(a && b)", "not(a) || not(b)"),
    ("a bool, b bool", "not(a || not(b))", "b && not(a)"),
    ("a bool, b bool", "impl(a, b)", "b || not(a)"),
    ("a bool, b bool", "xor(a, b)", "a /= b"),
    ("a bool, b bool", "iff(b, a)", "a == b"),
    ("a bool", "a == true", "a"),
    ("a bool", "a == false", "not(a)"),
    ("a bool, b bool, c bool", "if a: b else: false", "a && b"),
    ("a bool, b bool", "if a: true else: false", "a"),
    ("x real, b bool", "if not(b): x < 0 else: x > 0", "if b: 0 < x else: x < 0"),
    ("i nat, y array(nat)", "i == y[i]", "i == y[i]"),
    ("i nat, y array(nat), j nat", "y[j] == i", "i == y[j]"),
    ("x real, y real", "x * y < 1", "x * y < 1"),
    ("i nat, n nat, x real", "(i < n || x < 0) && i < n", "i + 1 <= n"),
];

#[test]
fn canonical_conditions() {
    let bad: Vec<String> = CANONICAL
        .iter()
        .filter_map(|(v, c, w)| check_cond(v, c, w))
        .collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

fn check_decide(vars: &str, facts: &[&str], cond: &str, want: Tri) -> Option<String> {
    let mut s = Store::new();
    let (ctx, q) = setup(&mut s, vars, facts, &[cond]);
    let got = decide(&mut s, &ctx, q[0]);
    (got != want).then(|| format!("{facts:?} |- {cond}: want {want:?}, got {got:?}"))
}

#[rustfmt::skip]
const DECIDE: &[(&str, &[&str], &str, Tri)] = &[
    ("i nat, n nat", &["i: 0..n"], "i < n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i == n", Tri::False),
    ("i nat, n nat", &["i: 0..n"], "n <= i", Tri::False),
    ("i nat, n nat", &["i: 0..n"], "i <= n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i + 1 <= n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i < n - 1", Tri::Unknown),
    ("i nat, n nat", &["i: 0..n"], "0 < n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i /= n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i + 2 <= n", Tri::Unknown),
    ("i nat, n nat", &[], "0 <= i", Tri::True),
    ("i nat, n nat", &[], "i < 0", Tri::False),
    ("i int", &[], "0 <= i", Tri::Unknown),
    ("i nat", &[], "-1 < i", Tri::True),
    ("p prob", &[], "0 <= p", Tri::True),
    ("p prob", &[], "p < 0", Tri::False),
    ("p prob", &[], "0 < p", Tri::Unknown),
    ("i nat", &["i: 2..10"], "i < 10 && 1 < i", Tri::True),
    ("i nat", &["i: 2..10"], "i == 12", Tri::False),
    ("i nat", &["i: 2..10"], "i <= 8", Tri::Unknown),
    ("i nat", &["i: 2..10"], "i == 5", Tri::Unknown),
    ("i nat", &["i: 2..3"], "i == 2", Tri::True),
    ("i int, j int", &["i: j..j+3"], "i < j + 3", Tri::True),
    ("i int, j int", &["i: j..j+3"], "j - 1 < i", Tri::True),
    ("i int, j int", &["i: j..j+3"], "i == j + 3", Tri::False),
    ("i nat, k nat", &["i == k"], "i < k + 1", Tri::True),
    ("i nat, k nat", &["i == k"], "k <= i", Tri::True),
    ("i nat, k nat", &["i == k"], "i /= k", Tri::False),
    ("i nat, k nat", &["i == k"], "i + 1 == k", Tri::False),
    ("i nat, k nat", &["!(i == k)"], "i == k", Tri::False),
    ("i nat, k nat", &["!(i == k)"], "k /= i", Tri::True),
    ("x real", &["x > 0"], "x < 0", Tri::False),
    ("x real", &["x > 0"], "0 <= x", Tri::True),
    ("x real", &["x > 0"], "0 < x", Tri::True),
    ("x real", &["x > 0"], "x == 0", Tri::False),
    ("x real", &["x >= 0"], "0 < x", Tri::Unknown),
    ("x real", &["x >= 0"], "x < 0", Tri::False),
    ("x real", &["x <= 3"], "x < 3", Tri::Unknown),
    ("x real", &["x <= 3"], "x < 4", Tri::True),
    ("x real, y real", &["x < y"], "y <= x", Tri::False),
    ("x real, y real", &["x < y"], "x < y + 1", Tri::True),
    ("x real, y real", &["x < y"], "x <= y", Tri::True),
    ("x real, y real", &["x < y"], "x == y", Tri::False),
    ("x real, y real", &["!(x < y)"], "x < y || y < x", Tri::Unknown),
    ("a bool, b bool", &["a"], "a || b", Tri::True),
    ("a bool, b bool", &["a"], "not(a) && b", Tri::False),
    ("a bool, b bool", &["!a"], "a", Tri::False),
    ("a bool, b bool", &["a && b"], "b", Tri::True),
    ("a bool, b bool", &["!(a || b)"], "b", Tri::False),
    ("a bool, b bool", &["a || b"], "b || a", Tri::True),
    ("i nat, n nat, m nat", &["i: 0..n", "n <= 10"], "i <= 9", Tri::True),
    ("i nat, n nat, m nat", &["i: 0..n", "n <= m"], "i < m", Tri::Unknown),
    ("i nat, n nat, x real", &["i: 0..n"], "if i < n: x < x + 1 else: false", Tri::True),
    ("x real, y array(real)", &["y[0] < x"], "x <= y[0]", Tri::False),
    ("i nat", &["i < 0"], "i == 5", Tri::Unknown),
    ("x real, y real", &["x * y > 1"], "0 < x * y", Tri::True),
];

#[test]
fn decide_table() {
    let bad: Vec<String> = DECIDE
        .iter()
        .filter_map(|(v, f, c, w)| check_decide(v, f, c, *w))
        .collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}
