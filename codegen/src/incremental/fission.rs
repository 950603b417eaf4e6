//! Loop fission before the incremental derivation (issue 13): a loop outside every other
//! loop that sums both into accumulators no label reaches and into others is split in
//! two, the label-free accumulators' loop first. Fusion puts, say, `Π_k Γ(as[k])` into
//! the GMM's loop over classes beside `Π_k Γ(as[k] + n_k)`; split off, it is a loop of
//! its own that [`super::derive`] keeps as a constant statistic, computed once instead
//! of at every update.
//!
//! The first loop is the backward slice of the body for the label-free accumulators:
//! every statement that writes a name they need (to a fixpoint, since an inner loop's
//! accumulator carries values round), and every `if` and `for` around one, with its test
//! or bounds. Its locals are renamed fresh. The second loop is the body without the
//! label-free accumulators' writes. Each accumulator is computed by the same operations,
//! in the same order, from the same values, so the values are kept exactly; a read that
//! can fail fails in one of the two loops as it did in the one (the first failure may be
//! another read's). A loop that draws or weights, whose bounds a label reaches, or that
//! writes only one kind of accumulator is left as it is.

use std::collections::{HashMap, HashSet};

use crate::ir::walk::{reads, rename_block, rewrite_leaves, Effects};
use crate::ir::{Expr, Stmt};

/// `body` with each loop outside every other loop (under `if`s too) split where it sums
/// into both accumulators outside `tainted` and others (see the module doc); `names`
/// holds every name in use and receives the fresh ones.
pub(super) fn split_loops(
    body: &mut Vec<Stmt>,
    tainted: &HashSet<&str>,
    names: &mut HashSet<String>,
) {
    let mut out = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        match &mut s {
            Stmt::If {
                then, otherwise, ..
            } => {
                split_loops(then, tainted, names);
                split_loops(otherwise, tainted, names);
            }
            Stmt::For { var, lo, hi, body } => {
                out.extend(fission(var, lo, hi, body, tainted, names));
            }
            _ => {}
        }
        out.push(s);
    }
    *body = out;
}

/// The label-free accumulators' loop, taken out of `body` (which keeps the rest), when
/// the loop `for var in lo..hi { body }` writes both kinds.
fn fission(
    var: &str,
    lo: &crate::ir::Expr,
    hi: &crate::ir::Expr,
    body: &mut Vec<Stmt>,
    tainted: &HashSet<&str>,
    names: &mut HashSet<String>,
) -> Option<Stmt> {
    let eff = Effects::of(body).free();
    if eff.measure {
        return None;
    }
    let mut bounds = HashSet::new();
    reads(lo, &mut bounds);
    reads(hi, &mut bounds);
    if bounds.iter().any(|x| tainted.contains(x.as_str())) {
        return None;
    }
    let (free, labelled): (HashSet<String>, HashSet<String>) = eff
        .writes
        .into_iter()
        .partition(|w| !tainted.contains(w.as_str()));
    // the body must not read what it splits off (a read would see a partial sum)
    if free.is_empty() || labelled.is_empty() || free.iter().any(|w| eff.reads.contains(w)) {
        return None;
    }
    // what the label-free accumulators need, to a fixpoint
    let mut need: HashSet<String> = free.clone();
    loop {
        let before = need.len();
        slice(body, &mut need);
        if need.len() == before {
            break;
        }
    }
    // the slice must not write a labelled accumulator (its value would then be needed)
    if labelled.iter().any(|w| need.contains(w)) {
        return None;
    }
    let mut first = slice(body, &mut need.clone());
    let sliced = Effects::of(&first).decls;
    // its locals renamed, the loop variable too
    let mut decls: Vec<String> = sliced.iter().cloned().collect();
    decls.sort();
    decls.push(var.to_string());
    let rename: HashMap<String, String> = decls
        .into_iter()
        .map(|d| {
            let new = super::fresh(names, &d);
            (d, new)
        })
        .collect();
    rename_block(&mut first, &rename);
    let new_var = rename.get(var).cloned().unwrap_or_else(|| var.to_string());
    // the second loop: the body without the label-free accumulators' writes, and
    // without the lets the first loop evaluates that nothing else reads (the first loop
    // evaluated them, at every point, before: dropping them loses no failure)
    let free_ref: HashSet<&str> = free.iter().map(String::as_str).collect();
    *body = drop_dead_lets(super::drop_writes(body, &free_ref), &sliced);
    Some(Stmt::For {
        var: new_var,
        lo: lo.clone(),
        hi: hi.clone(),
        body: first,
    })
}

/// The statements of `block` that write a name of `need` (with the `if`s and `for`s
/// around them), backwards; what they read joins `need`.
fn slice(block: &[Stmt], need: &mut HashSet<String>) -> Vec<Stmt> {
    let mut kept = Vec::new();
    for s in block.iter().rev() {
        // a statement that writes one name, and what it reads to write it
        let write: Option<(&String, Vec<&Expr>)> = match s {
            Stmt::Let { name, value, .. } | Stmt::Assign { name, value, .. } => {
                Some((name, vec![value]))
            }
            Stmt::Var { name, init, .. } => Some((name, init.iter().collect())),
            Stmt::Alloc { name, size, .. } => Some((name, vec![size])),
            Stmt::Store {
                array,
                index,
                value,
                ..
            } => Some((array, vec![index, value])),
            _ => None,
        };
        if let Some((name, read)) = write {
            if need.contains(name) {
                for e in read {
                    reads(e, need);
                }
                kept.push(s.clone());
            }
            continue;
        }
        let keep = match s {
            Stmt::For { var, lo, hi, body } => {
                let inner = slice(body, need);
                (!inner.is_empty()).then(|| {
                    reads(lo, need);
                    reads(hi, need);
                    Stmt::For {
                        var: var.clone(),
                        lo: lo.clone(),
                        hi: hi.clone(),
                        body: inner,
                    }
                })
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let then = slice(then, need);
                let otherwise = slice(otherwise, need);
                (!then.is_empty() || !otherwise.is_empty()).then(|| {
                    reads(cond, need);
                    Stmt::If {
                        cond: cond.clone(),
                        then,
                        otherwise,
                    }
                })
            }
            // the writes are taken above; draws, factors and rejects write no statistic
            _ => None,
        };
        kept.extend(keep);
    }
    kept.reverse();
    kept
}

/// `block` without its lets of the names of `droppable` that nothing reads, to a
/// fixpoint.
fn drop_dead_lets(mut block: Vec<Stmt>, droppable: &HashSet<String>) -> Vec<Stmt> {
    loop {
        let read = Effects::of(&block).reads;
        let next = rewrite_leaves(&block, &mut |s| match s {
            Stmt::Let { name, .. } if droppable.contains(name) && !read.contains(name) => None,
            s => Some(s.clone()),
        });
        if next == block {
            return block;
        }
        block = next;
    }
}
