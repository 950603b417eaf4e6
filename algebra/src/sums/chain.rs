//! Products of a multi-way choice whose branches are free of the index (issue 10, corpus
//! case 23, the Stan coin): a categorical observation's density read at data `x[i]` is
//! the chain `if 2 <= x[i]: 0 else: if x[i] == 0: 1 - z else: z`, and its product over
//! the data is a product of powers of counts,
//!
//! `Π_i (if c1: A1 else: if c2: A2 else: A3) = A1^#c1 · A2^#(¬c1 ∧ c2) · A3^#(¬c1 ∧ ¬c2)`
//!
//! with `#c = Σ_i [c]`: at each point exactly one leaf's path condition holds, so exactly
//! one factor is not 1. A leaf that is 0 gives `0^#c`, written as the guard
//! `if #c == 0: 1 else: 0` (the interpreter's `0 ** 0` is 1, but a guard is what the
//! simplifier reads as a support condition, and it keeps the other factors free of a
//! zero base). The branches may nest on either side; the conditions may read the index
//! (they are evaluated at every point in the loop as well), the leaves may not, and
//! every leaf must be defined whatever the data (the powers read a leaf that no point
//! may take): `real2prob(1 - z)` is, under a context that knows `z <~ beta(..)`.
//!
//! Not here: a two-way choice with no zero branch, and guards with a branch 1, which the
//! parent module closes itself; and a leaf that reads the index (`if size(q) <= y[i]: 0
//! else: q[y[i]]`): the read may be undefined where the path is not taken, so it stays in
//! its loop under the condition (see `zero_guarded`). A read outside the chain is made at
//! every point by the loop itself, so the chain's factor may leave its loop.

use super::Loop;
use crate::canon::{Kernel, Normal, Overflow};
use crate::cond;
use crate::num::Rational;
use crate::term::{Node, Prim, TermId};
use crate::types::Type;
use crate::vars::mentions;

/// The most leaves a chain may have (each gives one count).
const MAX_LEAVES: usize = 8;

/// One leaf of a chain: the conditions on the way to it (conjuncts) and its value.
struct Leaf {
    path: Vec<TermId>,
    value: TermId,
}

impl Loop<'_, '_> {
    /// The leaves of the kernel `k` when it is a chain of `if`s with at least two
    /// leaves, every leaf free of the index; `None` otherwise (or past `MAX_LEAVES`).
    fn chain_leaves(&mut self, k: u32) -> Option<Vec<Leaf>> {
        let t = match self.cx.kernels().get(k)?.kernel {
            Kernel::Atom(t) => t,
            _ => return None,
        };
        if !matches!(self.cx.store().node(t), Node::If(..)) {
            return None;
        }
        let mut out = Vec::new();
        let mut todo = vec![(t, Vec::new())];
        while let Some((t, path)) = todo.pop() {
            if let Node::If(c, a, b) = *self.cx.store().node(t) {
                let nc = cond::negate(self.store(), c);
                let mut pa = path.clone();
                pa.push(c);
                let mut pb = path;
                pb.push(nc);
                // the else branch is pushed first so that leaves come out in reading order
                todo.push((b, pb));
                todo.push((a, pa));
                if out.len() + todo.len() > MAX_LEAVES {
                    return None;
                }
            } else {
                if mentions(self.cx.store(), t, self.var) {
                    return None;
                }
                out.push(Leaf { path, value: t });
            }
        }
        Some(out)
    }

    /// Whether the kernel `k` is a chain this file closes: see the module doc for what is
    /// left to the parent.
    pub(super) fn is_chain(&mut self, k: u32) -> bool {
        let Some(leaves) = self.chain_leaves(k) else {
            return false;
        };
        let lit = |s: &crate::term::Store, t: TermId, v: i64| matches!(s.node(t), Node::Lit(x) if *x == Rational::from_integer(v));
        let s = self.cx.store();
        let zero = leaves.iter().any(|l| lit(s, l.value, 0));
        let one = leaves.iter().any(|l| lit(s, l.value, 1));
        // the powers read every leaf once, where the loop read it only on its path:
        // `real2prob(1 - z)` must be defined even where no point takes it (the context
        // says so under `z <~ beta(..)`; a loop that meets none stays as it is)
        if !leaves.iter().all(|l| self.defined_everywhere(l.value)) {
            return false;
        }
        leaves.len() > 2 || (zero && !one)
    }

    /// `Π_i K^e` for a chain kernel `K` (one that [`Self::is_chain`] accepts): the
    /// product over its leaves of each leaf's value to the power of its path's count.
    pub(super) fn chain_product(&mut self, k: u32, e: u32, depth: u32) -> Result<Normal, Overflow> {
        let leaves = self.chain_leaves(k).ok_or(Overflow)?;
        self.changed = true;
        let mut acc = Normal::one();
        for leaf in leaves {
            let v = self.cx.normal_of(leaf.value);
            if v.as_constant().is_some_and(|c| c.is_one()) {
                continue;
            }
            let ty = self.ty.clone();
            let f = if v.is_zero() {
                // 0^#path (e >= 1): 1 where the path is never taken, else 0
                let never = self.never_taken(leaf.path, depth)?;
                let (one, zero) = (self.lit(1, &ty), self.lit(0, &ty));
                let g = self.store().intern(Node::If(never, one, zero), ty);
                self.cx.normal_of(g)
            } else {
                let vp = self.cx.pow(&v, i64::from(e))?.ok_or(Overflow)?;
                let p = self.guarded_product(&vp, leaf.path, depth + 1)?;
                self.finish_product(p)?
            };
            acc = self.cx.mul(&acc, &f)?;
        }
        Ok(acc)
    }

    /// The condition `Σ_i [∧path] == 0`: no point of the range takes the path.
    fn never_taken(&mut self, path: Vec<TermId>, depth: u32) -> Result<TermId, Overflow> {
        let count = self.sum(&Normal::one(), path, depth + 1)?;
        let count = self.finish_sum(count)?;
        let ct = self.cx.write(&count, &Type::Nat);
        let z = self.lit(0, &Type::Nat);
        Ok(self.store().prim(Prim::Eq, vec![ct, z], Type::Bool))
    }
}
