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
//! program's body unchanged, in a scope of its own. The update's top-level working
//! tables are parameters already, kept from one update to the next (`scratch.rs`: Naive
//! Bayes' document histogram, reset by its list before the draw; its beta functions of
//! the topic prior, computed once a chain); any other `alloc` of the update outside its
//! loops (under an `if`), declared once, whose size reads only parameters no point
//! changes, is made once before the loop and filled with zeros where it stood (what a
//! fresh allocation holds) unless a loop then sets every element before any is read. A
//! sweep of the draw-only GMM update allocates nothing per point.
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
    // those of its top level are parameters already, kept between updates (`scratch.rs`)
    let mut hoisted = Vec::new();
    let mut update_body = once(&up.body, &fixed, &twice, &mut hoisted, &mut fresh);
    update_body.push(Stmt::assign(&new, AssignOp::Set, up.result.clone()));

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
/// with zeros left in its place unless a loop then sets it whole.
fn once(
    body: &[Stmt],
    fixed: &HashSet<&str>,
    twice: &HashSet<String>,
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
                if overwritten(&body[k + 1..], name, size) {
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
                    *b = once(b, fixed, twice, hoisted, fresh);
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
