//! A whole Gibbs sweep as one program (issue 13: a sweep at the speed of hand-written
//! code). The driver's protocol calls three kernels per update (`remove`, `update`,
//! `add`), marshals the update's distribution out and draws from it: on the GMM (n =
//! 10,000, K = 50) that overhead was two thirds of each update. [`sweep_program`] writes
//! the protocol itself as a loop:
//!
//! ```text
//! var changed: nat = 0
//! for u in 0..size(z) {
//!     let old = z[u]
//!     { remove }                      // point u's contribution out of the statistics
//!     var new: nat = 0
//!     { update, its draw d; new = d } // the weights from the statistics, then the draw
//!     z[u] = new
//!     { add }                         // point u's contribution under its new label
//!     if old /= new { changed += 1 }
//! }
//! return changed
//! ```
//!
//! over the update's parameters (the index's among them, shadowed by the loop), the state
//! and the statistics `inout`; `new` is the update's result. Each block is the derived
//! program's body unchanged, in a scope of its own; an `alloc` of the update outside its
//! loops, declared once, whose size reads only parameters no point changes, is made once
//! before the loop and filled with zeros where it stood (what a fresh allocation holds)
//! unless a loop then sets every element before any is read (the weights), or a list the
//! update keeps of its nonzero elements sets them back to 0 after it (`reset.rs`: Naive
//! Bayes's document histogram), or it is a table of memoised values no point changes
//! (`kept_memos`: Naive Bayes' beta functions of the topic prior alone, computed once a
//! sweep). A sweep of the draw-only GMM update allocates nothing per point.
//!
//! Exact: each iteration runs the protocol's programs in the protocol's order on the same
//! values. It is written only where the update draws once, a categorical outside its
//! loops, and nothing that draws, weighs or rejects can run after the draw: the factors
//! before it weigh every label alike, so sampling the program (`Compiled::sweep_step`,
//! the kernel's own generator started from the chain's, one uniform per point as the
//! driver's draws take) draws the label from the distribution the driver would draw it
//! from. A zero mass stops the sweep with an error, as it stops the driver's update.

use std::collections::HashSet;

use slic_algebra::{Dist, Prim, Type};

use super::reset::Lists;
use super::Incremental;
use crate::ir::walk::{each_block_mut, reads, visit_decls};
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};
use crate::verify::verify;

/// The sweep of `inc` over the state parameter `state` and index `index` (see the module
/// documentation), or `None` where the update's draw is not its last statement or the
/// program does not verify.
pub fn sweep_program(inc: &Incremental, state: &str, index: &str) -> Option<Program> {
    let up = &inc.update;
    if !one_last_draw(&up.body) {
        return None;
    }
    let params: HashSet<&str> = up.params.iter().map(|(x, _)| x.as_str()).collect();
    if !params.contains(state) || !params.contains(index) {
        return None;
    }
    // what an allocation made before the loop may read: the parameters no point changes
    let fixed: HashSet<&str> = params
        .iter()
        .copied()
        .filter(|x| *x != state && *x != index && !inc.stats.iter().any(|s| s.param == *x))
        .collect();
    let mut taken: HashSet<String> = params.iter().map(|x| x.to_string()).collect();
    let mut twice: HashSet<String> = HashSet::new();
    visit_decls(&up.body, &mut |x| {
        if !taken.insert(x.to_string()) {
            twice.insert(x.to_string());
        }
    });
    for p in [&inc.remove, &inc.add] {
        visit_decls(&p.body, &mut |x| {
            taken.insert(x.to_string());
        });
    }
    let mut fresh = |base: &str| {
        let mut name = format!("sweep_{base}");
        while taken.contains(&name) {
            name.push('_');
        }
        taken.insert(name.clone());
        name
    };
    let (old, new, changed) = (fresh("old"), fresh("new"), fresh("changed"));

    // the update's allocations outside its loops, of a size over the parameters alone,
    // made once (each name declared once, so the one before the loop is the one read);
    // those of its top level that a list keeps track of reset by the list after it
    let top: HashSet<String> = up
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::Alloc { name, size, .. } if reads_only(size, &fixed) && !twice.contains(name) => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect();
    let lists = Lists::of(&up.body);
    let kept = kept_memos(&up.body, moved(up, &[&inc.remove, &inc.add], state, index));
    let listed = |name: &str| lists.covers(name, &top) || kept.contains(name);
    let mut hoisted = Vec::new();
    let mut update_body = once(&up.body, &fixed, &twice, &listed, &mut hoisted, &mut fresh);
    update_body.push(Stmt::assign(&new, AssignOp::Set, up.result.clone()));
    update_body.extend(lists.reset(&top, &mut fresh));

    let block = |body: Vec<Stmt>| Stmt::If {
        cond: Expr::Lit(Lit::Bool(true)),
        then: body,
        otherwise: Vec::new(),
    };
    let at_index = Expr::Index(Box::new(Expr::var(state)), Box::new(Expr::var(index)));
    let point = vec![
        Stmt::let_(&old, Type::Nat, at_index),
        block(inc.remove.body.clone()),
        Stmt::var(&new, Type::Nat, Some(Expr::nat(0))),
        block(update_body),
        Stmt::Store {
            array: state.to_string(),
            index: Expr::var(index),
            op: AssignOp::Set,
            value: Expr::var(&new),
        },
        block(inc.add.body.clone()),
        Stmt::If {
            cond: Expr::prim(Prim::Ne, vec![Expr::var(&old), Expr::var(&new)]),
            then: vec![Stmt::assign(&changed, AssignOp::Add, Expr::nat(1))],
            otherwise: Vec::new(),
        },
    ];
    let mut body = hoisted;
    body.push(Stmt::var(&changed, Type::Nat, Some(Expr::nat(0))));
    body.push(Stmt::for_(
        index,
        Expr::nat(0),
        Expr::size(Expr::var(state)),
        point,
    ));
    let mut inout: Vec<String> = inc.stats.iter().map(|s| s.param.clone()).collect();
    inout.push(state.to_string());
    let p = Program {
        params: up.params.clone(),
        body,
        result: Expr::var(&changed),
        measure: true,
        inout,
    };
    verify(&p).ok()?;
    Some(p)
}

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

/// Does `body` draw once, a categorical outside every loop, with nothing that draws,
/// weighs or rejects able to run after it? Then sampling the program draws the label
/// from the distribution the driver would draw it from (the weights before it are the
/// same for every label).
pub(super) fn one_last_draw(body: &[Stmt]) -> bool {
    let mut count = 0;
    crate::ir::walk::visit_leaves(body, &mut |s| {
        count += usize::from(matches!(s, Stmt::Draw { .. }))
    });
    count == 1 && last_in(body)
}

/// The draw is in `block` (outside loops), and nothing after it measures.
fn last_in(block: &[Stmt]) -> bool {
    for (k, s) in block.iter().enumerate() {
        let here = match s {
            Stmt::Draw {
                dist: Dist::Categorical,
                ..
            } => true,
            Stmt::If {
                then, otherwise, ..
            } if draws(then) || draws(otherwise) => {
                if draws(then) {
                    last_in(then)
                } else {
                    last_in(otherwise)
                }
            }
            s if draws(std::slice::from_ref(s)) => return false,
            _ => continue,
        };
        let after = &block[k + 1..];
        let mut measures = false;
        crate::ir::walk::visit_leaves(after, &mut |t| {
            measures |= matches!(
                t,
                Stmt::Draw { .. } | Stmt::Factor(_) | Stmt::Observe { .. } | Stmt::Reject
            )
        });
        return here && !measures;
    }
    false
}

/// `body` with each allocation outside its loops whose size reads only `fixed` and whose
/// name is declared once (`twice` lists the others) moved to `hoisted`, a loop filling it
/// with zeros left in its place unless `listed` says its list resets it (`reset.rs`).
fn once(
    body: &[Stmt],
    fixed: &HashSet<&str>,
    twice: &HashSet<String>,
    listed: &dyn Fn(&str) -> bool,
    hoisted: &mut Vec<Stmt>,
    fresh: &mut dyn FnMut(&str) -> String,
) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for (k, s) in body.iter().enumerate() {
        match s {
            Stmt::Alloc { name, elem, size }
                if reads_only(size, fixed) && !twice.contains(name) =>
            {
                hoisted.push(s.clone());
                if listed(name) || overwritten(&body[k + 1..], name, size) {
                    // every element set before any is read: no zeros needed
                    continue;
                }
                let c = fresh("c");
                out.push(Stmt::for_(
                    &c,
                    Expr::nat(0),
                    size.clone(),
                    vec![Stmt::Store {
                        array: name.clone(),
                        index: Expr::var(&c),
                        op: AssignOp::Set,
                        value: crate::lower::zero(elem),
                    }],
                ));
            }
            Stmt::If { .. } => {
                let mut s = s.clone();
                each_block_mut(&mut s, &mut |b| {
                    *b = once(b, fixed, twice, &|_| false, hoisted, fresh);
                });
                out.push(s);
            }
            s => out.push(s.clone()),
        }
    }
    out
}

/// Is the array `a` of length `size` set whole before anything reads it, by the first
/// statement of `rest` that mentions it: a loop `for i in 0..size` whose body sets `a[i]`
/// (with `=`, outside any branch) and reads nothing of `a`?
pub(super) fn overwritten(rest: &[Stmt], a: &str, size: &Expr) -> bool {
    let mentions = |s: &Stmt| {
        let e = crate::ir::walk::Effects::of(std::slice::from_ref(s));
        e.reads.contains(a) || e.writes.contains(a)
    };
    let Some(first) = rest.iter().find(|s| mentions(s)) else {
        return false;
    };
    let Stmt::For { var, lo, hi, body } = first else {
        return false;
    };
    let sets = body.iter().any(|t| {
        matches!(t, Stmt::Store { array, index: Expr::Var(i), op: AssignOp::Set, value }
        if array == a && i == var && {
            let mut r = HashSet::new();
            reads(value, &mut r);
            !r.contains(a)
        })
    });
    let reads_a = body.iter().any(|t| {
        let e = crate::ir::walk::Effects::of(std::slice::from_ref(t));
        e.reads.contains(a)
    });
    *lo == Expr::nat(0) && hi == size && sets && !reads_a
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

/// Does `body` draw anywhere?
fn draws(body: &[Stmt]) -> bool {
    let mut any = false;
    crate::ir::walk::visit_leaves(body, &mut |s| any |= matches!(s, Stmt::Draw { .. }));
    any
}

/// Does `e` read only the names in `params`?
pub(super) fn reads_only(e: &Expr, params: &HashSet<&str>) -> bool {
    let mut names = HashSet::new();
    reads(e, &mut names);
    names.iter().all(|x| params.contains(x.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
