//! The histogram transform (paper section 4, Fig. 7; issue 11, deliverable 1): inside a
//! loop over classes `k` (`array k of K`, `summate k from 0 to K`, `product k from 0 to
//! K`), every `summate j from lo to hi: if ... && k == ix(j) && ...: t(j) else: 0`
//! is read from ONE histogram `bucket j from lo to hi: r_index b = K of ix(j): R`,
//! let-bound just outside the loop over `k`, so the data are scanned once per update
//! instead of once per class (O(n + K) instead of O(n·K)).
//!
//! - The conjunct `k == ix` (either side) is the index the sum is solved for; `ix` must
//!   be a nat that mentions `j` and not `k`. Every other conjunct becomes an `r_split c:
//!   r_add t else: r_nop` inside the index (a condition that does not solve for an index).
//! - Sums over the same range with the same index share one bucket: their reducers are
//!   joined by `r_fanout` (right-nested), and each sum reads its slot with a `match`.
//! - Profitability (Fig. 7): a histogram is made only when its reducer holds an index, so a
//!   sum whose body tests no class variable is left as it is.
//! - Hoisting: the histogram is placed right outside the loop over `k` (the first step of
//!   the LICM; the full ANF/LICM pass is a separate part). A sum whose range,
//!   index, condition or summand mentions a variable bound between that loop and the sum
//!   is left alone, since its histogram could not be hoisted there.
//!
//! Meaning is kept exactly: a class `k` in `0..K` receives exactly the `j` with
//! `ix(j) == k`, an index outside `0..K` selects no bucket (like no `k`), and additions
//! per bucket happen in the order of `j`, as in the nested loop. Partiality is kept too:
//! when the loop over classes may be empty, the histogram's range is empty with it
//! (`bucket j from lo to (if 0 < K: hi else: lo)`), and an index that can fail is
//! evaluated only where the conjuncts written before the test hold (`if c: ix else: K`,
//! which selects no bucket otherwise). Products (`product j: if k == ix: t else: 1`)
//! are not transformed: the reducers of Fig. 6 only add, and going through exp/log would
//! change exact prob arithmetic into logs of possibly zero factors.
//!
//! This module rewrites terms only: it does no IO, and `summarize` never fails (a term
//! with nothing to summarize comes back unchanged).

use crate::split::{conjuncts_of, is_zero};
use rustc_hash::{FxHashMap, FxHashSet};
use slic_algebra::vars::{self, FreeVars};
use slic_algebra::{stack, Node, Pattern, Prim, Store, TermId, Transform, Type, VarId};

/// What [`summarize`] did.
#[derive(Clone, Debug)]
pub struct Summarized {
    /// The transformed term (same type and meaning as the input).
    pub term: TermId,
    /// How many histograms (`bucket` terms) were let-bound.
    pub histograms: usize,
    /// How many sums now read a histogram instead of looping.
    pub sums_replaced: usize,
}

/// The histogram transform of `t` everywhere in it, and of the argument of every
/// `summarize(e)` inside it (the `summarize` marker itself is dropped: its job is done).
pub fn summarize(store: &mut Store, t: TermId) -> Summarized {
    // the point split first: per-class sums that read a proposed label at one point
    // become sums over the other points (histograms free of the label) plus the point
    let t = crate::split::split_points(store, t).term;
    let mut s = Summarizer {
        store,
        memo: FxHashMap::default(),
        fv: FreeVars::new(),
        histograms: 0,
        sums_replaced: 0,
    };
    let term = s.go(t);
    Summarized {
        term,
        histograms: s.histograms,
        sums_replaced: s.sums_replaced,
    }
}

struct Summarizer<'s> {
    store: &'s mut Store,
    /// Results per subterm: the rewrite of a subterm does not depend on its context.
    memo: FxHashMap<TermId, TermId>,
    fv: FreeVars,
    histograms: usize,
    sums_replaced: usize,
}

/// A sum that reads a histogram: the parts its bucket is made of, with the sum's own
/// index renamed to the loop's common `j` and the class variable to the bucket's `b`.
#[derive(Clone)]
struct Candidate {
    lo: TermId,
    hi: TermId,
    /// The common index variable the parts are written in.
    j: VarId,
    ix: TermId,
    /// `r_add t` or `r_split c: r_add t else: r_nop`.
    reducer: TermId,
    /// Does the reducer's value hold the sum under a split (a pair to take apart)?
    split: bool,
    /// Free variables of the bucket's parts: none may be bound between the loop over
    /// classes and the sum.
    free: Vec<VarId>,
}

/// One bucket being assembled: its range and index, and its distinct reducers in order.
struct Group {
    lo: TermId,
    hi: TermId,
    j: VarId,
    ix: TermId,
    reducers: Vec<TermId>,
}

/// The loop over classes being summarized: its variable, its bucket count, the common
/// variables the histograms are written in.
struct ClassLoop {
    k: VarId,
    /// The number of classes (the loop's bound).
    count: TermId,
    b: VarId,
    /// One common sum index per index type.
    js: Vec<(Type, VarId)>,
}

impl Summarizer<'_> {
    fn go(&mut self, t: TermId) -> TermId {
        if let Some(&r) = self.memo.get(&t) {
            return r;
        }
        let r = stack::grow(|| self.go_inner(t));
        self.memo.insert(t, r);
        r
    }

    fn go_inner(&mut self, t: TermId) -> TermId {
        let node = self.store.node(t).clone();
        if let Node::Transform(Transform::Summarize, e) = node {
            return self.go(e);
        }
        let children = node.children();
        let new: Vec<TermId> = children.iter().map(|&c| self.go(c)).collect();
        let t1 = if new == children {
            t
        } else {
            let ty = self.store.ty(t).clone();
            self.store.intern(node.with_children(&new), ty)
        };
        self.hoist(t1)
    }

    /// `t` itself if it is not a loop over classes with sums to summarize; otherwise the
    /// histograms let-bound around the loop whose sums now read them.
    fn hoist(&mut self, t: TermId) -> TermId {
        let node = self.store.node(t).clone();
        let (k, count, body_index, body) = match node {
            Node::Array(k, n, body) => (k, n, 1, body),
            Node::Summate(k, lo, hi, body) | Node::Product(k, lo, hi, body)
                if is_zero(self.store, lo) =>
            {
                (k, hi, 2, body)
            }
            _ => return t,
        };
        if self.store.var_type(k) != &Type::Nat || !self.fv.contains(self.store, body, k) {
            return t;
        }
        let b = self.store.fresh_var("b", Type::Nat);
        let mut lp = ClassLoop {
            k,
            count,
            b,
            js: Vec::new(),
        };
        // pass 1: the sums that can read a histogram, and their buckets
        let mut found: FxHashMap<TermId, Option<Candidate>> = FxHashMap::default();
        let mut order: Vec<TermId> = Vec::new();
        self.collect(&mut lp, body, &mut Vec::new(), &mut found, &mut order);
        let mut groups: Vec<Group> = Vec::new();
        // each accepted sum: (group, slot)
        let mut slot_of: FxHashMap<TermId, (usize, usize)> = FxHashMap::default();
        for s in order {
            let Some(Some(c)) = found.get(&s) else {
                continue;
            };
            let g = match groups
                .iter()
                .position(|g| (g.lo, g.hi, g.j, g.ix) == (c.lo, c.hi, c.j, c.ix))
            {
                Some(g) => g,
                None => {
                    groups.push(Group {
                        lo: c.lo,
                        hi: c.hi,
                        j: c.j,
                        ix: c.ix,
                        reducers: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let rs = &mut groups[g].reducers;
            let slot = match rs.iter().position(|&r| r == c.reducer) {
                Some(i) => i,
                None => {
                    rs.push(c.reducer);
                    rs.len() - 1
                }
            };
            slot_of.insert(s, (g, slot));
        }
        if groups.is_empty() {
            return t;
        }
        // the buckets and the variables that hold them
        let mut lets: Vec<(VarId, TermId)> = Vec::new();
        let mut reads: FxHashMap<TermId, TermId> = FxHashMap::default();
        let k_term = self.store.var_term(k);
        let mut holders = Vec::new();
        for g in &groups {
            let fan = self.fanout(&g.reducers);
            let fan_ty = self.store.ty(fan).clone();
            let index_ty = Type::array(fan_ty.clone());
            let index = self
                .store
                .intern(Node::RIndex(b, count, g.ix, fan), index_ty.clone());
            // the loop over classes may be empty, and then the original read no index:
            // the histogram's range is empty too (`hi` becomes `lo` when `count` is 0)
            let hi = if is_positive_literal(self.store, count) {
                g.hi
            } else {
                let zero = self.store.int_lit(0, Type::Nat);
                let some = self.store.prim(Prim::Lt, vec![zero, count], Type::Bool);
                let ty = self.store.ty(g.hi).clone();
                self.store.intern(Node::If(some, g.hi, g.lo), ty)
            };
            let bucket = self
                .store
                .intern(Node::Bucket(g.j, g.lo, hi, index), index_ty.clone());
            let h = self.store.fresh_var("h", index_ty);
            let h_term = self.store.var_term(h);
            let at = self.store.intern(Node::Index(h_term, k_term), fan_ty);
            lets.push((h, bucket));
            holders.push(at);
        }
        for (&s, &(g, slot)) in &slot_of {
            let Some(Some(c)) = found.get(&s) else {
                continue;
            };
            let read = self.read(holders[g], groups[g].reducers.len(), slot, c.split, s);
            reads.insert(s, read);
        }
        self.histograms += groups.len();
        self.sums_replaced += reads.len();
        // pass 2: the sums replaced by their reads, where pass 1 accepted them
        let new_body = self.replace(&lp, body, &mut Vec::new(), &found, &reads);
        let mut children = node.children();
        children[body_index] = new_body;
        let ty = self.store.ty(t).clone();
        let mut out = self.store.intern(node.with_children(&children), ty.clone());
        for (h, bucket) in lets.into_iter().rev() {
            out = self.store.intern(Node::Let(h, bucket, out), ty.clone());
        }
        out
    }

    /// Finds the sums under `t` (with `bound` the variables bound between the loop and
    /// `t`) that can read a histogram of the loop `lp`, in the order they occur.
    fn collect(
        &mut self,
        lp: &mut ClassLoop,
        t: TermId,
        bound: &mut Vec<VarId>,
        found: &mut FxHashMap<TermId, Option<Candidate>>,
        order: &mut Vec<TermId>,
    ) {
        if !self.fv.contains(self.store, t, lp.k) {
            return;
        }
        if let Node::Summate(..) = self.store.node(t) {
            if let std::collections::hash_map::Entry::Vacant(e) = found.entry(t) {
                e.insert(self.candidate(lp, t));
            }
            if let Some(Some(c)) = found.get(&t) {
                if !c.free.iter().any(|v| bound.contains(v)) {
                    order.push(t);
                    return;
                }
            }
        }
        let node = self.store.node(t).clone();
        for (i, c) in node.children().into_iter().enumerate() {
            let depth = bound.len();
            vars::bound_in(&node, i, bound);
            stack::grow(|| self.collect(lp, c, bound, found, order));
            bound.truncate(depth);
        }
    }

    /// `t` with each sum that pass 1 accepted (and that is in the same scope here)
    /// replaced by its read of a histogram.
    fn replace(
        &mut self,
        lp: &ClassLoop,
        t: TermId,
        bound: &mut Vec<VarId>,
        found: &FxHashMap<TermId, Option<Candidate>>,
        reads: &FxHashMap<TermId, TermId>,
    ) -> TermId {
        if !self.fv.contains(self.store, t, lp.k) {
            return t;
        }
        if let (Some(Some(c)), Some(&read)) = (found.get(&t), reads.get(&t)) {
            if !c.free.iter().any(|v| bound.contains(v)) {
                return read;
            }
        }
        let node = self.store.node(t).clone();
        let children = node.children();
        let mut new = Vec::with_capacity(children.len());
        for (i, &c) in children.iter().enumerate() {
            let depth = bound.len();
            vars::bound_in(&node, i, bound);
            new.push(stack::grow(|| self.replace(lp, c, bound, found, reads)));
            bound.truncate(depth);
        }
        if new == children {
            return t;
        }
        let ty = self.store.ty(t).clone();
        self.store.intern(node.with_children(&new), ty)
    }

    /// The histogram parts of the sum `s` for the class variable `lp.k`, if its body is
    /// `if ... && k == ix && ...: t else: 0` with `ix` a nat index that mentions the sum's
    /// variable and not `k`.
    fn candidate(&mut self, lp: &mut ClassLoop, s: TermId) -> Option<Candidate> {
        let Node::Summate(j0, lo, hi, body) = self.store.node(s).clone() else {
            return None;
        };
        let k = lp.k;
        if self.fv.contains(self.store, lo, k) || self.fv.contains(self.store, hi, k) {
            return None;
        }
        let Node::If(cond, then, other) = self.store.node(body).clone() else {
            return None;
        };
        if !is_zero(self.store, other) {
            return None;
        }
        let mut conjuncts = Vec::new();
        conjuncts_of(self.store, cond, &mut conjuncts);
        let at = conjuncts
            .iter()
            .position(|&c| self.index_of(c, k, j0).is_some())?;
        let mut ix0 = self.index_of(conjuncts[at], k, j0)?;
        // the conjuncts before the index test guarded its evaluation: so they still do
        // (`if c: ix else: K`, an index out of range, selects no bucket)
        if at > 0 && !crate::split::total(self.store, ix0) {
            let before = if at == 1 {
                conjuncts[0]
            } else {
                self.store
                    .prim(Prim::And, conjuncts[..at].to_vec(), Type::Bool)
            };
            ix0 = self
                .store
                .intern(Node::If(before, ix0, lp.count), Type::Nat);
        }
        conjuncts.remove(at);
        // the common sum index of this loop for j's type
        let j_ty = self.store.var_type(j0).clone();
        let j = match lp.js.iter().find(|(ty, _)| *ty == j_ty) {
            Some(&(_, j)) => j,
            None => {
                let j = self.store.fresh_var("j", j_ty.clone());
                lp.js.push((j_ty, j));
                j
            }
        };
        let j_term = self.store.var_term(j);
        let b_term = self.store.var_term(lp.b);
        let mut map = FxHashMap::default();
        map.insert(j0, j_term);
        map.insert(k, b_term);
        let ix = vars::substitute(self.store, ix0, &map);
        let summand = vars::substitute(self.store, then, &map);
        let add_ty = self.store.ty(summand).clone();
        let add = self.store.intern(Node::RAdd(summand), add_ty.clone());
        let (reducer, split) = if conjuncts.is_empty() {
            (add, false)
        } else {
            let rest = if conjuncts.len() == 1 {
                conjuncts[0]
            } else {
                self.store.prim(Prim::And, conjuncts, Type::Bool)
            };
            let rest = vars::substitute(self.store, rest, &map);
            let nop = self.store.intern(Node::RNop, Type::Unit);
            let ty = Type::pair(add_ty, Type::Unit);
            (self.store.intern(Node::RSplit(rest, add, nop), ty), true)
        };
        let mut free = FxHashSet::default();
        for part in [lo, hi, ix, reducer] {
            free.extend(self.fv.of(self.store, part).iter().copied());
        }
        free.remove(&j);
        free.remove(&lp.b);
        if free.contains(&k) {
            return None;
        }
        let mut free: Vec<VarId> = free.into_iter().collect();
        free.sort();
        Some(Candidate {
            lo,
            hi,
            j,
            ix,
            reducer,
            split,
            free,
        })
    }

    /// `ix` if `c` is `k == ix` or `ix == k` with `ix` a nat that mentions `j` and not `k`.
    fn index_of(&mut self, c: TermId, k: VarId, j: VarId) -> Option<TermId> {
        let Node::Prim(Prim::Eq, args) = self.store.node(c) else {
            return None;
        };
        let [a, b] = args.as_slice() else {
            return None;
        };
        let (a, b) = (*a, *b);
        let is_k = |store: &Store, t: TermId| matches!(store.node(t), Node::Var(v) if *v == k);
        let ix = if is_k(self.store, a) {
            b
        } else if is_k(self.store, b) {
            a
        } else {
            return None;
        };
        let ok = self.store.ty(ix) == &Type::Nat
            && !self.fv.contains(self.store, ix, k)
            && self.fv.contains(self.store, ix, j);
        ok.then_some(ix)
    }

    /// The reducers joined by `r_fanout`, right-nested (one reducer is itself).
    fn fanout(&mut self, rs: &[TermId]) -> TermId {
        match rs {
            [] => self.store.intern(Node::RNop, Type::Unit),
            [r] => *r,
            [r, rest @ ..] => {
                let tail = self.fanout(rest);
                let ty = Type::pair(self.store.ty(*r).clone(), self.store.ty(tail).clone());
                self.store.intern(Node::RFanout(*r, tail), ty)
            }
        }
    }

    /// The value of slot `slot` of `n` in the bucket value `at` (`h[k]`): a `match` that
    /// takes the right-nested fanout (and a split's pair) apart.
    fn read(&mut self, at: TermId, n: usize, slot: usize, split: bool, sum: TermId) -> TermId {
        if n == 1 && !split {
            return at;
        }
        let sum_ty = self.store.ty(sum).clone();
        let x = self.store.fresh_var("x", sum_ty.clone());
        let mut pat = Pattern::Var(x);
        if split {
            pat = Pattern::Pair(Box::new(pat), Box::new(Pattern::Wild));
        }
        if n > 1 {
            if slot + 1 < n {
                pat = Pattern::Pair(Box::new(pat), Box::new(Pattern::Wild));
            }
            for _ in 0..slot {
                pat = Pattern::Pair(Box::new(Pattern::Wild), Box::new(pat));
            }
        }
        let x_term = self.store.var_term(x);
        self.store
            .intern(Node::Match(at, vec![(pat, x_term)]), sum_ty)
    }
}

/// Is `t` a literal above 0?
fn is_positive_literal(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(v) if !v.is_zero())
}
