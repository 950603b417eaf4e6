//! Loops split where their index's comparisons change (issue 13: kernel speed). A
//! Dirichlet's stick-breaking form treats its last class apart, so the loop over the
//! classes of a GMM or LDA update tests `i < K - 1` and `K - 1 == i` at every class: two
//! branches per class and label, and two versions of the weight's factors kept live in
//! one loop body, where the hand-written sampler has neither.
//!
//! [`peel_loops`] takes each `for i in lo..hi` over literal `nat` bounds whose body
//! compares `i` with `nat` literals (`i < c`, `i <= c`, `c < i`, `c <= i`, `i == c`, either
//! way round) and splits its range at the points where one of those comparisons changes
//! value: `[lo, p_1), [p_1, p_2), .., [p_k, hi)`, at most [`MAX_PIECES`] pieces. Each piece
//! is the same body over its sub-range with every such comparison, constant there, written
//! as its literal; `crate::constants::fold_constants` then splices the branches that
//! decides. A loop with no such point, but comparisons constant over its whole range (the
//! sweep's `u < size(z)` inside `for u in 0..size(z)`), keeps one piece with those decided. The pieces run one after the other, each index in its order, so the program
//! does what it did, statement for statement. A loop whose body declares its index again
//! (an inner scope shadowing it), or whose body is larger than [`MAX_STATEMENTS`]
//! statements, is left as it is.

use std::collections::{HashMap, HashSet};

use slic_algebra::Prim;

use crate::constants::fold_constants;
use crate::ir::walk::{
    each_block_mut, for_each_expr, fresh_name, map_exprs, rename_block, visit_decls,
};
use crate::ir::{Expr, Lit, Program, Stmt};

/// The most pieces a loop is split into.
pub const MAX_PIECES: usize = 3;

/// The largest body (statements, nested ones counted) that is copied.
pub const MAX_STATEMENTS: usize = 400;

/// `p` with its loops split at their index's comparisons with literals (the program as it
/// was where none is).
pub fn peel_loops(p: &Program) -> Program {
    let mut body = p.body.clone();
    let mut peeled = 0;
    let mut names = Names {
        taken: p.params.iter().map(|q| q.0.clone()).collect(),
        count: HashMap::new(),
    };
    visit_decls(&body, &mut |d| {
        names.taken.insert(d.to_string());
        *names.count.entry(d.to_string()).or_insert(0) += 1;
    });
    peel_block(&mut body, &mut peeled, &mut names);
    if peeled == 0 {
        return p.clone();
    }
    fold_constants(&p.with_body(body), &HashMap::new(), &HashMap::new())
}

/// The program's names: every one taken, and how often each is declared.
struct Names {
    taken: HashSet<String>,
    count: HashMap<String, usize>,
}

fn peel_block(block: &mut Vec<Stmt>, peeled: &mut usize, names: &mut Names) {
    let mut out = Vec::with_capacity(block.len());
    for mut s in block.drain(..) {
        each_block_mut(&mut s, &mut |b| peel_block(b, peeled, names));
        match pieces(&s, names) {
            Some(ps) => {
                *peeled += 1;
                out.extend(ps);
            }
            None => out.push(s),
        }
    }
    *block = out;
}

/// The pieces `s` splits into, if it is a loop that splits. Every piece after the first
/// declares its names afresh, so that each name is still bound once: the emitter's passes
/// read a name's one definition (a loop whose names are declared more than once in the
/// program is not copied: which of them a read means is then a matter of scopes).
fn pieces(s: &Stmt, names: &mut Names) -> Option<Vec<Stmt>> {
    let Stmt::For { var, lo, hi, body } = s else {
        return None;
    };
    let (Expr::Lit(Lit::Nat(lo)), Expr::Lit(Lit::Nat(hi))) = (lo, hi) else {
        return None;
    };
    let (lo, hi) = (*lo, *hi);
    if lo >= hi {
        return None;
    }
    let mut shadowed = false;
    visit_decls(body, &mut |d| shadowed |= d == var);
    if shadowed {
        return None;
    }
    // where a comparison of the index with a literal changes value
    let mut points = Vec::new();
    for st in body {
        for_each_expr(st, &mut |e| collect(e, var, &mut points));
    }
    points.retain(|p| lo < *p && *p < hi);
    points.sort_unstable();
    points.dedup();
    // one piece (comparisons constant over the whole range) copies nothing
    if points.len() + 1 > MAX_PIECES || (!points.is_empty() && size(body) > MAX_STATEMENTS) {
        return None;
    }
    let mut bounds = vec![lo];
    bounds.extend(points);
    bounds.push(hi);
    let mut declared = vec![var.clone()];
    visit_decls(body, &mut |d| declared.push(d.to_string()));
    if bounds.len() > 2
        && declared
            .iter()
            .any(|d| names.count.get(d).copied().unwrap_or(0) > 1)
    {
        return None;
    }
    let out = bounds
        .windows(2)
        .enumerate()
        .map(|(k, w)| {
            let (a, b) = (w[0], w[1]);
            let mut body: Vec<Stmt> = body
                .iter()
                .map(|st| {
                    let mut st = st.clone();
                    map_exprs(&mut st, &mut |e| decide(e, var, a, b));
                    st
                })
                .collect();
            let mut index = var.clone();
            if k > 0 {
                let map: HashMap<String, String> = declared
                    .iter()
                    .map(|d| (d.clone(), fresh_name(&mut names.taken, d)))
                    .collect();
                rename_block(&mut body, &map);
                index = map[var].clone();
            }
            Stmt::For {
                var: index,
                lo: Expr::nat(a),
                hi: Expr::nat(b),
                body,
            }
        })
        .collect::<Vec<Stmt>>();
    if out.len() == 1 && out[0] == *s {
        return None;
    }
    Some(out)
}

/// Statements in `body`, nested ones counted.
fn size(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| match s {
            Stmt::For { body, .. } => 1 + size(body),
            Stmt::If {
                then, otherwise, ..
            } => 1 + size(then) + size(otherwise),
            _ => 1,
        })
        .sum()
}

/// A comparison of the index `i` with a `nat` literal: `(op, c, index first)`.
fn comparison(e: &Expr, i: &str) -> Option<(Prim, u64, bool)> {
    let Expr::Prim(op @ (Prim::Lt | Prim::Le | Prim::Eq), args) = e else {
        return None;
    };
    match args.as_slice() {
        [Expr::Var(x), Expr::Lit(Lit::Nat(c))] if x == i => Some((*op, *c, true)),
        [Expr::Lit(Lit::Nat(c)), Expr::Var(x)] if x == i => Some((*op, *c, false)),
        _ => None,
    }
}

/// The points where the comparisons in `e` change value, added to `out`: the first index
/// of the range where each holds or fails anew.
fn collect(e: &Expr, i: &str, out: &mut Vec<u64>) {
    if let Some((op, c, first)) = comparison(e, i) {
        match (op, first) {
            // i < c, c <= i: from c on; i <= c, c < i: from c + 1 on
            (Prim::Lt, true) | (Prim::Le, false) => out.push(c),
            (Prim::Le, true) | (Prim::Lt, false) => out.extend(c.checked_add(1)),
            _ => {
                out.push(c);
                out.extend(c.checked_add(1));
            }
        }
        return;
    }
    match e {
        Expr::Prim(_, args) => args.iter().for_each(|a| collect(a, i, out)),
        Expr::Index(a, x) => {
            collect(a, i, out);
            collect(x, i, out);
        }
        Expr::Convert(_, x) => collect(x, i, out),
        Expr::Pair(a, b) => {
            collect(a, i, out);
            collect(b, i, out);
        }
        Expr::Lit(_) | Expr::Var(_) => {}
    }
}

/// `e` with each comparison of `i` with a literal that is constant over `a..b` written as
/// its value.
fn decide(e: &Expr, i: &str, a: u64, b: u64) -> Expr {
    if let Some((op, c, first)) = comparison(e, i) {
        // the least and greatest index of the piece
        let (lo, hi) = (a, b - 1);
        let holds = |f: &dyn Fn(u64) -> bool| match (f(lo), f(hi)) {
            (true, true) => Some(true),
            (false, false) => Some(false),
            _ => None,
        };
        let v = match (op, first) {
            (Prim::Lt, true) => holds(&|x| x < c),
            (Prim::Le, true) => holds(&|x| x <= c),
            (Prim::Lt, false) => holds(&|x| c < x),
            (Prim::Le, false) => holds(&|x| c <= x),
            // equal throughout only on a piece of one index
            _ if lo == hi => Some(lo == c),
            _ => (c < lo || hi < c).then_some(false),
        };
        return match v {
            Some(v) => Expr::bool(v),
            None => e.clone(),
        };
    }
    match e {
        Expr::Prim(p, args) => Expr::Prim(*p, args.iter().map(|x| decide(x, i, a, b)).collect()),
        Expr::Index(x, y) => Expr::index(decide(x, i, a, b), decide(y, i, a, b)),
        Expr::Convert(c, x) => Expr::convert(*c, decide(x, i, a, b)),
        Expr::Pair(x, y) => Expr::Pair(Box::new(decide(x, i, a, b)), Box::new(decide(y, i, a, b))),
        Expr::Lit(_) | Expr::Var(_) => e.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::AssignOp;
    use slic_algebra::Type;

    /// `out[i] = (if i < 4: 10 i else: 1) + (if 4 == i: 100 else: 0) + extra(i) + x` over
    /// `0..6`, `extra` a further test of `i` (or none).
    fn program(extra: Option<Expr>) -> Program {
        let i = || Expr::var("i");
        let mut body = vec![
            Stmt::var("t", Type::Nat, Some(Expr::nat(0))),
            Stmt::If {
                cond: Expr::prim(Prim::Lt, vec![i(), Expr::nat(4)]),
                then: vec![Stmt::assign(
                    "t",
                    AssignOp::Set,
                    Expr::prim(Prim::Mul, vec![i(), Expr::nat(10)]),
                )],
                otherwise: vec![Stmt::assign("t", AssignOp::Set, Expr::nat(1))],
            },
            Stmt::let_(
                "e",
                Type::Bool,
                Expr::prim(Prim::Eq, vec![Expr::nat(4), i()]),
            ),
            Stmt::If {
                cond: Expr::var("e"),
                then: vec![Stmt::assign("t", AssignOp::Add, Expr::nat(100))],
                otherwise: Vec::new(),
            },
        ];
        if let Some(c) = extra {
            body.push(Stmt::If {
                cond: c,
                then: vec![Stmt::assign("t", AssignOp::Add, Expr::nat(1000))],
                otherwise: Vec::new(),
            });
        }
        body.push(Stmt::store(
            "out",
            i(),
            AssignOp::Set,
            Expr::prim(Prim::Add, vec![Expr::var("t"), Expr::var("x")]),
        ));
        Program {
            params: vec![("x".into(), Type::Nat)],
            body: vec![
                Stmt::Alloc {
                    name: "out".into(),
                    elem: Type::Nat,
                    size: Expr::nat(6),
                },
                Stmt::for_("i", Expr::nat(0), Expr::nat(6), body),
            ],
            result: Expr::var("out"),
            measure: false,
            inout: Vec::new(),
        }
    }

    fn same(p: &Program, q: &Program) {
        assert_eq!(crate::verify::verify(q), Ok(()), "{q}");
        for x in [0, 7] {
            let args = [crate::Val::Nat(x)];
            assert_eq!(
                crate::run(p, &args).map(|r| r.0),
                crate::run(q, &args).map(|r| r.0),
                "{q}"
            );
        }
    }

    #[test]
    fn a_loop_splits_where_its_tests_change_and_means_what_it_did() {
        let p = program(None);
        let q = peel_loops(&p);
        same(&p, &q);
        let text = q.to_string();
        // [0, 4), [4, 5), [5, 6): no test of the index is left, each name bound once
        assert!(
            text.contains("0..4") && text.contains("4..5") && text.contains("5..6"),
            "{text}"
        );
        assert!(!text.contains("if "), "{text}");
        let mut seen = HashSet::new();
        let mut twice = Vec::new();
        visit_decls(&q.body, &mut |d| {
            if !seen.insert(d.to_string()) {
                twice.push(d.to_string());
            }
        });
        assert!(twice.is_empty(), "{twice:?} in {text}");
    }

    #[test]
    fn comparisons_constant_over_the_range_are_decided_in_place() {
        // `i < 6` over 0..6 needs no split
        let p = program(Some(Expr::prim(
            Prim::Lt,
            vec![Expr::var("i"), Expr::nat(6)],
        )));
        let extra = program(None);
        let q = peel_loops(&p);
        same(&p, &q);
        assert_eq!(peel_loops(&extra).to_string().matches("for ").count(), 3);
        assert_eq!(q.to_string().matches("for ").count(), 3);
        assert!(!q.to_string().contains("< 6"), "{q}");
    }

    #[test]
    fn too_many_pieces_or_a_shadowed_index_stay_as_they_are() {
        // a fourth piece ([0, 2) besides) is one too many
        let p = program(Some(Expr::prim(
            Prim::Le,
            vec![Expr::var("i"), Expr::nat(1)],
        )));
        assert_eq!(peel_loops(&p), p);
        // the body declares `i` again
        let mut q = program(None);
        if let Stmt::For { body, .. } = &mut q.body[1] {
            body.push(Stmt::let_("i", Type::Nat, Expr::nat(0)));
        }
        assert_eq!(peel_loops(&q), q);
    }
}
