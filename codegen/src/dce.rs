//! Dead code removed from the loop IR (issue 12: kernel speed). A statement whose only
//! effect is on names nothing reads is dropped: a `let`, `var` or `alloc` never read, an
//! assignment or store to one, a loop or an `if` left empty. The draw-only program
//! (`crate::draw_only`) is where it pays: the products it drops leave their histograms
//! behind (Naive Bayes' and LDA's whole topic-by-word and document-by-topic tables, each
//! rebuilt at every update and read by nothing), and a program specialised to its data
//! (`crate::data_facts`) leaves the tables of tests its data decided.
//!
//! What is live is found to a fixed point from the result, the measure statements and
//! the `inout` arrays: a statement that matters makes live what it reads and the tests
//! and loop bounds it sits under (so a `var` read only by its own `&&` chain is dead).
//! Draws, factors, observations and rejections are never removed, nor stores to
//! an `inout` array (the caller reads it). Expressions are pure, so removing one changes
//! no value; a removed computation's errors (a read out of range) go with it, so a
//! program errs less, never answers differently where the original answered.

use std::collections::HashSet;

use crate::ir::walk::{reads, Effects};
use crate::ir::{Program, Stmt};

/// What [`eliminate`] did.
#[derive(Clone, Debug)]
pub struct Eliminated {
    pub program: Program,
    /// Statements removed (a removed loop or `if` counts once, with what it held).
    pub removed: usize,
}

/// `p` without its dead statements.
pub fn eliminate(p: &Program) -> Eliminated {
    let mut live = HashSet::new();
    reads(&p.result, &mut live);
    live.extend(p.inout.iter().cloned());
    while mark(&p.body, &mut Vec::new(), &mut live) {}
    let mut removed = 0;
    let body = sweep(p.body.clone(), &live, &mut removed);
    Eliminated {
        program: p.with_body(body),
        removed,
    }
}

/// Adds to `live` what a statement of `block` that matters reads: one that draws,
/// weights or rejects, or defines or changes a live name, with the conditions and loop
/// bounds it sits under (`under`). Returns whether `live` grew.
fn mark(block: &[Stmt], under: &mut Vec<HashSet<String>>, live: &mut HashSet<String>) -> bool {
    let mut grew = false;
    for s in block {
        let matters = match s {
            Stmt::Let { name, .. }
            | Stmt::Var { name, .. }
            | Stmt::Alloc { name, .. }
            | Stmt::Assign { name, .. }
            | Stmt::Store { array: name, .. } => live.contains(name),
            Stmt::Draw { .. } | Stmt::Factor(_) | Stmt::Observe { .. } | Stmt::Reject => true,
            Stmt::For { lo, hi, body, .. } => {
                let mut bounds = HashSet::new();
                reads(lo, &mut bounds);
                reads(hi, &mut bounds);
                under.push(bounds);
                grew |= mark(body, under, live);
                under.pop();
                false
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let mut test = HashSet::new();
                reads(cond, &mut test);
                under.push(test);
                grew |= mark(then, under, live);
                grew |= mark(otherwise, under, live);
                under.pop();
                false
            }
        };
        if matters {
            let n = live.len();
            live.extend(Effects::of(std::slice::from_ref(s)).reads);
            for names in under.iter() {
                live.extend(names.iter().cloned());
            }
            grew |= live.len() > n;
        }
    }
    grew
}

/// `block` without the statements that only define or change names outside `live`.
fn sweep(block: Vec<Stmt>, live: &HashSet<String>, removed: &mut usize) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(block.len());
    for s in block {
        let keep = match s {
            Stmt::Let { ref name, .. }
            | Stmt::Var { ref name, .. }
            | Stmt::Alloc { ref name, .. }
            | Stmt::Assign { ref name, .. }
            | Stmt::Store {
                array: ref name, ..
            } => live.contains(name).then_some(s),
            Stmt::For { var, lo, hi, body } => {
                let body = sweep(body, live, removed);
                (!body.is_empty()).then_some(Stmt::For { var, lo, hi, body })
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let then = sweep(then, live, removed);
                let otherwise = sweep(otherwise, live, removed);
                (!then.is_empty() || !otherwise.is_empty()).then_some(Stmt::If {
                    cond,
                    then,
                    otherwise,
                })
            }
            s @ (Stmt::Draw { .. } | Stmt::Factor(_) | Stmt::Observe { .. } | Stmt::Reject) => {
                Some(s)
            }
        };
        match keep {
            Some(s) => out.push(s),
            None => *removed += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AssignOp, Expr};
    use slic_algebra::Type;

    fn program(body: Vec<Stmt>, result: Expr) -> Program {
        Program {
            params: vec![("x".into(), Type::array(Type::Nat))],
            body,
            result,
            measure: false,
            inout: Vec::new(),
        }
    }

    #[test]
    fn an_unread_table_goes_with_its_loop_and_index() {
        let n = || Expr::size(Expr::var("x"));
        let p = program(
            vec![
                Stmt::alloc("h", Type::Nat, n()),
                Stmt::var("s", Type::Nat, Some(Expr::nat(0))),
                Stmt::for_(
                    "i",
                    Expr::nat(0),
                    n(),
                    vec![
                        Stmt::let_("k", Type::Nat, Expr::index(Expr::var("x"), Expr::var("i"))),
                        Stmt::store("h", Expr::var("k"), AssignOp::Add, Expr::nat(1)),
                        Stmt::assign("s", AssignOp::Add, Expr::var("i")),
                    ],
                ),
            ],
            Expr::var("s"),
        );
        let e = eliminate(&p);
        assert_eq!(e.removed, 3);
        let text = e.program.to_string();
        assert!(!text.contains("h"), "{text}");
        assert!(text.contains("s += i"), "{text}");
    }

    #[test]
    fn a_read_table_and_an_inout_store_stay() {
        let p = program(
            vec![
                Stmt::alloc("h", Type::Nat, Expr::nat(2)),
                Stmt::store("h", Expr::nat(0), AssignOp::Add, Expr::nat(1)),
                Stmt::store("x", Expr::nat(0), AssignOp::Add, Expr::nat(1)),
            ],
            Expr::index(Expr::var("h"), Expr::nat(0)),
        );
        let p = Program {
            inout: vec!["x".into()],
            ..p
        };
        let e = eliminate(&p);
        assert_eq!(e.removed, 0);
        assert_eq!(e.program, p);
    }
}
