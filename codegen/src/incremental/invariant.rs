//! What is the same in every update of a chain (issue 13): the parameters the driver's
//! protocol changes between updates ([`moved`]), and the tables of memoised values that
//! read none of them ([`kept_memos`]), which `scratch.rs` keeps from one update to the
//! next instead of emptying.

use std::collections::HashSet;

use crate::ir::walk::reads;
use crate::ir::{Expr, Program, Stmt};

/// The parameters of `update` a point changes: the state, the index, and what the
/// protocol's programs (`update` and `others`) write: the statistics, not the tables
/// `init` builds from the data.
pub(super) fn moved(
    update: &Program,
    others: &[&Program],
    state: &str,
    index: &str,
) -> HashSet<String> {
    let mut moved: HashSet<String> = [state, index].iter().map(|x| x.to_string()).collect();
    for p in others.iter().copied().chain([update]) {
        moved.extend(crate::ir::walk::Effects::of(&p.body).writes);
    }
    moved.retain(|x| update.params.iter().any(|(p, _)| p == x));
    moved
}

/// The tables of the update's memoised values (`crate::memo`) that no point changes, kept
/// from one update to the next instead of emptied: every value the update stores in them
/// is computed from what is the same in every update. Naive Bayes' `B(Σ_{j>k} α_j, α_k)`,
/// a function of the topic prior alone: nineteen beta functions an update before.
///
/// A name is the same in every update at each point of the update's run when it is
/// computed only from parameters no point changes, literals and such names, under tests
/// and loop bounds that are such too (then every update runs that computation the same
/// way); a table when every store into it is such, at such an index (it starts as zeros
/// at each update). A memoised value counts as computed from its value expression alone,
/// which is exact: a recalled value is the one the expression gives at that key. Tables
/// whose flags any value the update changes shares are emptied as before.
///
/// Exact: a kept table's value at key `k` is the one its expression gives at `k` in the
/// first update that needed it, which every later update's would give too (the same
/// values read); a flag set in an earlier update skips a computation whose value would
/// have been the one recalled, and whose errors, if any, would have stopped the first.
pub(super) fn kept_memos(body: &[Stmt], moved: HashSet<String>) -> HashSet<String> {
    let mut variant = moved;
    loop {
        let before = variant.len();
        changes(body, false, &mut variant);
        if variant.len() == before {
            break;
        }
    }
    // the flags of each table of values, and whether every value stored there is fixed
    let mut sites: Vec<(String, String, bool)> = Vec::new();
    memo_sites(body, &variant, &mut sites);
    let mut kept = HashSet::new();
    for (memo, have, _) in &sites {
        // every site of these flags, of any table, stores a fixed value
        let all = sites
            .iter()
            .filter(|(_, h, _)| h == have)
            .all(|(m, _, ok)| *ok && m == memo);
        // and nothing but memoised reads touches either table
        if all && only_memo_sites(body, memo, have) {
            kept.insert(memo.clone());
            kept.insert(have.clone());
        }
    }
    kept
}

/// Each memoised value's tables in `body`, and whether its value reads nothing `variant`
/// holds.
fn memo_sites(body: &[Stmt], variant: &HashSet<String>, out: &mut Vec<(String, String, bool)>) {
    for s in body {
        if let Some(m) = crate::memo::memo_site(s) {
            let fixed = !reads_any(m.value, variant);
            out.push((m.memo.to_string(), m.have.to_string(), fixed));
            continue;
        }
        match s {
            Stmt::For { body, .. } => memo_sites(body, variant, out),
            Stmt::If {
                then, otherwise, ..
            } => {
                memo_sites(then, variant, out);
                memo_sites(otherwise, variant, out);
            }
            _ => {}
        }
    }
}

/// Adds to `variant` what `body` computes from it (under a test or loop bound that reads
/// it when `ctl`): see [`kept_memos`].
fn changes(body: &[Stmt], ctl: bool, variant: &mut HashSet<String>) {
    for s in body {
        if let Some(m) = crate::memo::memo_site(s) {
            if ctl || reads_any(m.value, variant) {
                variant.insert(m.name.to_string());
            }
            continue;
        }
        let mark = |x: &str, from: &[&Expr], variant: &mut HashSet<String>| {
            if ctl || from.iter().any(|e| reads_any(e, variant)) {
                variant.insert(x.to_string());
            }
        };
        match s {
            Stmt::Let { name, value, .. } | Stmt::Assign { name, value, .. } => {
                mark(name, &[value], variant)
            }
            Stmt::Var { name, init, .. } => match init {
                Some(e) => mark(name, &[e], variant),
                None => mark(name, &[], variant),
            },
            Stmt::Alloc { name, size, .. } => mark(name, &[size], variant),
            Stmt::Store {
                array,
                index,
                value,
                ..
            } => mark(array, &[index, value], variant),
            Stmt::For { var, lo, hi, body } => {
                let c = ctl || reads_any(lo, variant) || reads_any(hi, variant);
                if c {
                    variant.insert(var.clone());
                }
                changes(body, c, variant);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = ctl || reads_any(cond, variant);
                changes(then, c, variant);
                changes(otherwise, c, variant);
            }
            Stmt::Draw { name, .. } => {
                variant.insert(name.clone());
            }
            Stmt::Factor(_) | Stmt::Observe { .. } | Stmt::Reject => {}
        }
    }
}

/// Does `e` read a name of `names`?
fn reads_any(e: &Expr, names: &HashSet<String>) -> bool {
    let mut r = HashSet::new();
    reads(e, &mut r);
    r.iter().any(|x| names.contains(x))
}

/// Are `memo` and `have` read and written only by memoised values' sites (and allocated)?
fn only_memo_sites(body: &[Stmt], memo: &str, have: &str) -> bool {
    let mut ok = true;
    for s in body {
        if crate::memo::memo_site(s).is_some_and(|m| m.memo == memo && m.have == have) {
            continue;
        }
        match s {
            Stmt::Alloc { .. } => {}
            Stmt::For { body, .. } => ok &= only_memo_sites(body, memo, have),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                ok &= !reads_any(cond, &HashSet::from([memo.to_string(), have.to_string()]))
                    && only_memo_sites(then, memo, have)
                    && only_memo_sites(otherwise, memo, have);
            }
            s => {
                let e = crate::ir::walk::Effects::of(std::slice::from_ref(s));
                ok &= ![memo, have]
                    .iter()
                    .any(|x| e.reads.contains(*x) || e.writes.contains(*x));
            }
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::AssignOp;
    use slic_algebra::{Prim, Type};

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    /// `var x: prob; if have[k] == 1 { x = memo[k] } else { x = e; memo[k] = x; have[k] =
    /// 1 }`, as `crate::memo` writes a memoised value
    fn site(x: &str, memo: &str, have: &str, e: Expr) -> Vec<Stmt> {
        vec![
            Stmt::var(x, Type::Prob, None),
            Stmt::if_(
                Expr::prim(Prim::Eq, vec![Expr::index(v(have), v("k")), Expr::nat(1)]),
                vec![Stmt::assign(x, AssignOp::Set, Expr::index(v(memo), v("k")))],
                vec![
                    Stmt::assign(x, AssignOp::Set, e),
                    Stmt::store(memo, v("k"), AssignOp::Set, v(x)),
                    Stmt::store(have, v("k"), AssignOp::Set, Expr::nat(1)),
                ],
            ),
        ]
    }

    #[test]
    fn only_memo_tables_of_values_no_point_changes_are_kept() {
        // `a` is data; `s` a statistic the points move; `y` a let computed from `s`
        let mut k_body = vec![Stmt::let_("y", Type::Prob, Expr::index(v("s"), v("k")))];
        k_body.extend(site("x1", "m1", "h1", Expr::index(v("a"), v("k"))));
        k_body.extend(site("x2", "m2", "h2", v("y")));
        // a third site on the fixed table's flags, storing a moved value: both kept no more
        let shared = site("x3", "m3", "h3", Expr::index(v("a"), v("k")));
        let mut shared_moved = k_body.clone();
        shared_moved.extend(shared.clone());
        shared_moved.extend(site("x4", "m4", "h3", v("y")));
        let body = |k_body: Vec<Stmt>| {
            vec![
                Stmt::alloc("m1", Type::Prob, Expr::nat(4)),
                Stmt::for_("k", Expr::nat(0), Expr::nat(4), k_body),
            ]
        };
        let moved = || HashSet::from(["s".to_string()]);
        let kept = kept_memos(&body(k_body.clone()), moved());
        assert_eq!(kept, HashSet::from(["m1".to_string(), "h1".to_string()]));
        let kept = kept_memos(&body(shared_moved), moved());
        assert!(!kept.contains("h3") && kept.contains("h1"), "{kept:?}");
        // a table read outside a memoised site is kept no more
        let mut read = k_body;
        read.push(Stmt::let_("peek", Type::Prob, Expr::index(v("m1"), v("k"))));
        assert!(kept_memos(&body(read), moved()).is_empty());
        // under a test that reads a moved name the stored value is still `a[k]` (whether
        // it is computed in an update changes, not what it is): kept; but a value read
        // from a name set under such a test is moved
        let guarded = vec![Stmt::if_(
            Expr::prim(
                Prim::Lt,
                vec![Expr::index(v("s"), Expr::nat(0)), Expr::nat(3)],
            ),
            site("x1", "m1", "h1", Expr::index(v("a"), v("k"))),
            Vec::new(),
        )];
        assert!(kept_memos(&body(guarded), moved()).contains("m1"));
        let mut set_under = vec![
            Stmt::var("w", Type::Prob, Some(Expr::prob(1.0))),
            Stmt::if_(
                Expr::prim(
                    Prim::Lt,
                    vec![Expr::index(v("s"), Expr::nat(0)), Expr::nat(3)],
                ),
                vec![Stmt::assign(
                    "w",
                    AssignOp::Set,
                    Expr::index(v("a"), v("k")),
                )],
                Vec::new(),
            ),
        ];
        set_under.extend(shared);
        set_under.extend(site("x5", "m5", "h5", v("w")));
        let kept = kept_memos(&body(set_under), moved());
        assert!(kept.contains("m3") && !kept.contains("m5"), "{kept:?}");
    }
}
