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
];

#[test]
fn decide_table() {
    let bad: Vec<String> = DECIDE
        .iter()
        .filter_map(|(v, f, c, w)| check_decide(v, f, c, *w))
        .collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}
