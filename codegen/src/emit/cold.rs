//! A loop's rare slow branch emitted as a function of its own (issue 13: kernel speed):
//! hot/cold splitting. `ratios.rs` writes Naive Bayes' rising product of a word's counts
//! as `if d <= 8 && x < 10^30 { a product of reals } else { Γ(x + d) / Γ(x) }`; the
//! second branch almost never runs, yet its two calls into libm sat in the loop over the
//! document's words, and both C and Rust compilers then kept the loop's running values in
//! memory across the whole loop. Moved into a function marked cold and never inlined, the
//! branch is one call on a path the compilers lay out of line (measured on the Naive
//! Bayes sweep, the branch outlined by hand: 0.95x in C and 0.94x in Rust).
//!
//! [`candidate`] decides, on the loop IR, which branch of an `if` inside a loop is such a
//! slow path: it calls a gamma or beta function and the other branch calls neither; the
//! range tests of `products.rs` name theirs too (a factor out of range, the running
//! product folded: each a `log` that would otherwise sit in the loop; measured 0.89x of
//! the Naive Bayes sweep in Rust, neutral in C).
//! [`plan`] then reads the branch as the emitter built it: only declarations, assignments
//! and `if`s, no array read or write, and exactly one name declared outside it assigned
//! (its result). The function takes the control block, the names the branch reads (by
//! their kernel names, so its statements are emitted unchanged) and the result's current
//! value, runs the statements and hands the result back through a pointer; a failure
//! returns its code as the statements' checks return it in the kernel's body, and the
//! call site returns it in turn. The same statements run on the same values in the same
//! order: the meaning and the errors are the kernel's as before.

use std::collections::HashSet;

use slic_algebra::Prim;

use super::nodes::{ENode, SNode};
use crate::ir::{Expr, Stmt};

/// Whether `branch`, beside `other`, is a slow path worth a function of its own: it
/// computes a gamma or beta function, and `other` neither.
pub(crate) fn candidate(branch: &[Stmt], other: &[Stmt]) -> bool {
    gammas(branch) && !gammas(other)
}

fn gammas(block: &[Stmt]) -> bool {
    let mut any = false;
    for s in block {
        crate::ir::walk::for_each_expr(s, &mut |e| any |= calls_gamma(e));
    }
    any
}

fn calls_gamma(e: &Expr) -> bool {
    match e {
        Expr::Prim(Prim::GammaFunc | Prim::BetaFunc, _) => true,
        Expr::Prim(_, args) => args.iter().any(calls_gamma),
        Expr::Convert(_, x) => calls_gamma(x),
        Expr::Index(a, i) | Expr::Pair(a, i) => calls_gamma(a) || calls_gamma(i),
        Expr::Var(_) | Expr::Lit(_) => false,
    }
}

/// What an outlined branch reads and writes of the kernel's names.
pub(crate) struct Plan {
    /// The names declared outside the branch that it reads (kernel names), sorted.
    pub reads: Vec<String>,
    /// The one name declared outside it that it assigns.
    pub result: String,
}

/// The plan of the emitted `body` of a branch, or `None` where it does anything but
/// declare, assign and branch, reads an array, assigns no or several outer names, or
/// calls no helper.
pub(crate) fn plan(body: &[SNode]) -> Option<Plan> {
    let mut w = Walk::default();
    if !w.block(body) || !w.calls {
        // a branch that calls nothing costs the loop nothing where it stands
        return None;
    }
    let outer: Vec<&String> = w.assigned.difference(&w.declared).collect();
    let [result] = outer[..] else {
        return None;
    };
    let mut reads: Vec<String> = w
        .read
        .difference(&w.declared)
        .filter(|x| *x != result)
        .cloned()
        .collect();
    reads.sort();
    Some(Plan {
        reads,
        result: result.clone(),
    })
}

#[derive(Default)]
struct Walk {
    declared: HashSet<String>,
    assigned: HashSet<String>,
    read: HashSet<String>,
    /// it calls a prelude helper
    calls: bool,
}

impl Walk {
    fn block(&mut self, body: &[SNode]) -> bool {
        body.iter().all(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &SNode) -> bool {
        match s {
            SNode::Decl { name, value, .. } => {
                self.declared.insert(name.clone());
                value.as_ref().is_none_or(|v| self.expr(v))
            }
            SNode::Set { name, value, .. } => {
                self.assigned.insert(name.clone());
                // a compound assignment reads the old value too
                self.read.insert(name.clone());
                self.expr(value)
            }
            SNode::If {
                cond,
                cname,
                then,
                otherwise,
                ..
            } => {
                self.declared.insert(cname.clone());
                self.expr(cond) && self.block(then) && self.block(otherwise)
            }
            SNode::Note { .. } => true,
            _ => false,
        }
    }

    fn expr(&mut self, e: &ENode) -> bool {
        match e {
            ENode::Lit { .. } => true,
            ENode::Var { name } => {
                self.read.insert(name.clone());
                true
            }
            ENode::Call { args, .. } => {
                self.calls = true;
                args.iter().all(|a| self.expr(a))
            }
            ENode::Op { args, .. } => args.iter().all(|a| self.expr(a)),
            ENode::Read { .. } | ENode::Get { .. } | ENode::Elem { .. } | ENode::Size { .. } => {
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::nodes::Num;
    use super::*;
    use slic_algebra::Type;

    fn var(x: &str) -> ENode {
        ENode::Var { name: x.into() }
    }

    #[test]
    fn a_branch_that_calls_gamma_beside_one_that_does_not_is_a_candidate() {
        let gamma = vec![Stmt::let_(
            "g",
            Type::Prob,
            Expr::prim(Prim::GammaFunc, vec![Expr::var("x")]),
        )];
        let cheap = vec![Stmt::let_("y", Type::Real, Expr::var("x"))];
        assert!(candidate(&gamma, &cheap));
        assert!(!candidate(&cheap, &gamma));
        assert!(!candidate(&gamma, &gamma));
    }

    #[test]
    fn a_branch_is_outlined_only_when_it_assigns_one_outer_name_and_reads_no_array() {
        let one = ENode::Lit {
            ty: "nat",
            num: Num {
                text: "1".into(),
                class: "finite",
            },
        };
        let decl = SNode::Decl {
            name: "t".into(),
            ty: "real",
            value: Some(ENode::Call {
                f: "real_gamma",
                args: vec![var("x")],
                site: Some(3),
            }),
            mutable: false,
            check: true,
        };
        let set = |name: &str| SNode::Set {
            name: name.into(),
            value: ENode::Op {
                op: "add",
                args: vec![var(name), var("t")],
            },
            check: false,
        };
        let p = plan(&[decl.clone(), set("acc")]).expect("a plan");
        assert_eq!(p.result, "acc");
        assert_eq!(p.reads, vec!["x".to_string()]);
        // two outer names assigned, or none: kept inline
        assert!(plan(&[decl.clone(), set("acc"), set("other")]).is_none());
        assert!(plan(std::slice::from_ref(&decl)).is_none());
        // an array read: kept inline
        let read = SNode::Decl {
            name: "r".into(),
            ty: "nat",
            value: Some(ENode::Get {
                arr: "a".into(),
                ety: "nat",
                idx: Box::new(one),
            }),
            mutable: false,
            check: false,
        };
        assert!(plan(&[decl, read, set("acc")]).is_none());
    }
}
