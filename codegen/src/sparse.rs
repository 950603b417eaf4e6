//! Sparse products on the loop IR (issues 12 and 13: kernel speed): a product over a
//! range, inside an outer loop, whose factor is 1 wherever a test that does not depend
//! on the outer loop holds, runs over the indices where the test fails, listed once
//! before the outer loop.
//!
//! A Naive Bayes update multiplies, for each proposed topic, the words' gamma ratios of
//! the document being moved: `Π_{k<V} (if d[k] == 0: 1 else: Γ(x_k + d[k]) / Γ(x_k))`
//! with `d` the document's word histogram. Lowered, that is a loop over the whole
//! vocabulary per proposal (a million iterations per update, for a document of a few
//! dozen distinct words). Here the loop
//!
//! ```text
//! for i in lo..hi {
//!     ...
//!     for k in l..h { lets; var v: prob; if g { v = 1 } else { O }; acc *= v }
//! ```
//!
//! where `l`, `h`, the `lets` and `g` read only `k` and names the outer body neither
//! declares nor writes, becomes
//!
//! ```text
//! var n: nat = 0; var size: nat = 0
//! if lo < hi { size = h; alloc ks of size ... for k in l..h { lets; if g {} else { ks[n] = k; n += 1 } } }
//! for i in lo..hi { ... for t in 0..n { let k = ks[t]; lets; var v: prob; O; acc *= v } }
//! ```
//!
//! (the `alloc` sits outside the `if`, its size 0 when the outer loop is empty). The
//! factors that remain are multiplied in the same order; the ones skipped are 1, whose
//! product in log space (`+ 0.0`) changes nothing, not even a NaN or an infinity. The
//! test's `lets` are evaluated once, where the outer loop's first iteration evaluated
//! them (only when it runs, and outside any draw or weight), so they fail exactly where
//! the original would have.

use std::collections::HashSet;

use crate::ir::walk::{each_block_mut, reads, Effects};
use crate::ir::{AssignOp, Expr, Program, Stmt};
use slic_algebra::{Prim, Type};

/// `p` with every such product made sparse (see the module doc).
pub fn sparsify(p: &Program) -> Program {
    let mut names = HashSet::new();
    for (x, _) in &p.params {
        names.insert(x.clone());
    }
    declared(&p.body, &mut names);
    let mut s = Sparse { names, made: 0 };
    let mut body = p.body.clone();
    s.block(&mut body);
    p.with_body(body)
}

struct Sparse {
    /// Every name in the program, for fresh ones.
    names: HashSet<String>,
    made: usize,
}

fn declared(stmts: &[Stmt], out: &mut HashSet<String>) {
    out.extend(Effects::of(stmts).decls);
}

/// The parts of an inner loop that can be made sparse.
struct Inner {
    k: String,
    lo: Expr,
    hi: Expr,
    /// The `let`s before the test.
    lets: Vec<Stmt>,
    test: Expr,
    /// `var v: prob`.
    factor: Stmt,
    otherwise: Vec<Stmt>,
    /// `acc *= v`.
    multiply: Stmt,
}

impl Sparse {
    fn fresh(&mut self, base: &str) -> String {
        let mut n = self.names.len();
        loop {
            let name = format!("{base}_{n}");
            if self.names.insert(name.clone()) {
                return name;
            }
            n += 1;
        }
    }

    fn block(&mut self, stmts: &mut Vec<Stmt>) {
        let mut pos = 0;
        while pos < stmts.len() {
            each_block_mut(&mut stmts[pos], &mut |b| self.block(b));
            let before = self.outer(&mut stmts[pos]);
            let n = before.len();
            for (j, s) in before.into_iter().enumerate() {
                stmts.insert(pos + j, s);
            }
            pos += n + 1;
        }
    }

    /// Where `s` is an outer loop with a product to make sparse: rewrites its body and
    /// returns the statements to put before it.
    fn outer(&mut self, s: &mut Stmt) -> Vec<Stmt> {
        let Stmt::For { var, lo, hi, body } = s else {
            return Vec::new();
        };
        let effects = Effects::of(body);
        if effects.measure {
            return Vec::new();
        }
        let mut varying: HashSet<String> = effects.decls.union(&effects.writes).cloned().collect();
        varying.insert(var.clone());
        let mut before = Vec::new();
        for slot in body.iter_mut() {
            let Some(inner) = inner_loop(slot, &varying) else {
                continue;
            };
            let (outer_lo, outer_hi) = (lo.clone(), hi.clone());
            let (count, list, t, size) = (
                self.fresh("n"),
                self.fresh("ks"),
                self.fresh("t"),
                self.fresh("size"),
            );
            // the indices whose factor may differ from 1, listed once
            let keep = vec![
                Stmt::store(&list, Expr::var(&count), AssignOp::Set, Expr::var(&inner.k)),
                Stmt::assign(&count, AssignOp::Add, Expr::nat(1)),
            ];
            let mut scan_body = inner.lets.clone();
            scan_body.push(Stmt::if_(inner.test.clone(), Vec::new(), keep));
            let nonempty = Expr::prim(Prim::Lt, vec![outer_lo, outer_hi]);
            before.push(Stmt::var(&count, Type::Nat, Some(Expr::nat(0))));
            before.push(Stmt::var(&size, Type::Nat, Some(Expr::nat(0))));
            before.push(Stmt::if_(
                nonempty.clone(),
                vec![Stmt::assign(&size, AssignOp::Set, inner.hi.clone())],
                Vec::new(),
            ));
            before.push(Stmt::alloc(&list, Type::Nat, Expr::var(&size)));
            before.push(Stmt::if_(
                nonempty,
                vec![Stmt::for_(
                    &inner.k,
                    inner.lo.clone(),
                    inner.hi.clone(),
                    scan_body,
                )],
                Vec::new(),
            ));
            // the product over them
            let mut product = vec![Stmt::let_(
                &inner.k,
                Type::Nat,
                Expr::index(Expr::var(&list), Expr::var(&t)),
            )];
            product.extend(inner.lets);
            product.push(inner.factor);
            product.extend(inner.otherwise);
            product.push(inner.multiply);
            *slot = Stmt::for_(&t, Expr::nat(0), Expr::var(&count), product);
            self.made += 1;
        }
        before
    }
}

/// `for k in l..h { lets; var v: prob; if g { v = 1 } else { O }; acc *= v }` over nat
/// indices, its bounds, lets and test reading nothing in `varying`.
fn inner_loop(s: &Stmt, varying: &HashSet<String>) -> Option<Inner> {
    let Stmt::For { var, lo, hi, body } = s else {
        return None;
    };
    let n = body.len();
    if n < 3 {
        return None;
    }
    let (lets, tail) = body.split_at(n - 3);
    let [factor @ Stmt::Var {
        name: v,
        ty: Type::Prob,
        init: None,
    }, Stmt::If {
        cond,
        then,
        otherwise,
    }, multiply @ Stmt::Assign {
        name: acc,
        op: AssignOp::Mul,
        value: Expr::Var(m),
    }] = tail
    else {
        return None;
    };
    let unit = Stmt::assign(v, AssignOp::Set, Expr::prob(1.0));
    if m != v || then.as_slice() != [unit] || acc == v {
        return None;
    }
    // the test: computed by the lets from the index and from what the outer loop fixes
    let mut local: HashSet<String> = HashSet::new();
    local.insert(var.clone());
    let fixed = |e: &Expr, local: &HashSet<String>| {
        let mut r = HashSet::new();
        reads(e, &mut r);
        r.iter().all(|x| local.contains(x) || !varying.contains(x))
    };
    if !fixed(lo, &HashSet::new()) || !fixed(hi, &HashSet::new()) {
        return None;
    }
    for l in lets {
        let Stmt::Let { name, value, .. } = l else {
            return None;
        };
        if !fixed(value, &local) {
            return None;
        }
        local.insert(name.clone());
    }
    if !fixed(cond, &local) {
        return None;
    }
    // a nat index (the bounds share the index's type; the list holds nats)
    if !matches!(lo, Expr::Lit(crate::ir::Lit::Nat(_))) {
        return None;
    }
    // nothing else in the body touches the accumulator
    let inner = Effects::of(otherwise);
    if inner.reads.contains(acc) || inner.writes.contains(acc) || inner.measure {
        return None;
    }
    Some(Inner {
        k: var.clone(),
        lo: lo.clone(),
        hi: hi.clone(),
        lets: lets.to_vec(),
        test: cond.clone(),
        factor: factor.clone(),
        otherwise: otherwise.clone(),
        multiply: multiply.clone(),
    })
}
