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
//!   Across the whole term too: a first run records every bucket's reducers per range,
//!   index and guards (in common names); the second gives each bucket of that key the
//!   union's reducers in one order (those it can evaluate: names in scope, total on the
//!   range), so buckets made by different loops over classes are one term, which
//!   A-normal form computes once.
//! - A range test `ix + 1 <= B` beside `k == ix` in a loop over `c <= B` classes (`c`
//!   being `B` or `int2nat(B - m)`) is implied: the bucket gets `B` classes (the same term
//!   as the loop over `B` makes) when its reducer cannot fail.
//! - A sum of a test of the labels cut off at a class count, `Σ_j [A(j) ∧ ix(j) < B ∧
//!   Q(ix(j))] e(j)`, becomes `Σ_{v<B} [Q(v)] Σ_j [A(j) ∧ v == ix(j)] e(j)` when that
//!   reads a bucket made elsewhere anyway: O(B) instead of a pass over the points (see
//!   `label_sum` for when it is exact).
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
use slic_algebra::alpha;
use slic_algebra::vars::{self, FreeVars};
use slic_algebra::{stack, Coercion, Node, Pattern, Prim, Store, TermId, Transform, Type, VarId};

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
    // names in scope everywhere: the program's parameters and the term's free variables
    let mut globals: FxHashSet<VarId> = vars::free_vars(store, t).into_iter().collect();
    let mut body = t;
    while let Node::Lam(x, b) = *store.node(body) {
        globals.insert(x);
        body = b;
    }
    let b = store.fresh_var("b", Type::Nat);
    let mut s = Summarizer {
        store,
        memo: FxHashMap::default(),
        fv: FreeVars::new(),
        histograms: 0,
        sums_replaced: 0,
        canon: Canon {
            recording: true,
            js: Vec::new(),
            b,
            unions: FxHashMap::default(),
            globals,
            misses: 0,
        },
    };
    // a first run records every bucket's reducers; the second gives all buckets of one
    // range, index and guard the same reducers, so they are one term that A-normal form
    // computes once (a bucket of counts and one of counts and sums are one pass, not two)
    s.go(t);
    s.memo.clear();
    s.histograms = 0;
    s.sums_replaced = 0;
    s.canon.recording = false;
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
    canon: Canon,
}

/// The buckets of the whole term, in common names: while `recording`, each bucket's
/// reducers are added to the union for its range, index and guards; afterwards every
/// bucket of that key takes the union's reducers (those it can evaluate) in its order.
struct Canon {
    recording: bool,
    /// The common sum index per index type, and the common class variable.
    js: Vec<(Type, VarId)>,
    b: VarId,
    unions: FxHashMap<BucketKey, Vec<TermId>>,
    /// Names in scope at every bucket.
    globals: FxHashSet<VarId>,
    /// Buckets made (after recording) whose key or reducers no other bucket had.
    misses: usize,
}

/// A bucket's range, index, count and guards in the common names of [`Canon`].
#[derive(Clone, PartialEq, Eq, Hash)]
struct BucketKey {
    lo: TermId,
    hi: TermId,
    ix: TermId,
    count: TermId,
    guards: Vec<TermId>,
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
    /// The number of buckets: the loop's class count, or the upper end `B` of a range
    /// test.
    count: TermId,
    /// Where a range test's sum starts (`e(k)` of `e(k) <= ix(j) < B`): the sum reads
    /// `summate c from e(k) to B: h[c]` instead of `h[k]`.
    from: Option<TermId>,
    /// `r_add t` or `r_split c: r_add t else: r_nop`.
    reducer: TermId,
    /// Does the reducer's value hold the sum under a split (a pair to take apart)?
    split: bool,
    /// Free variables of the bucket's parts: none may be bound between the loop over
    /// classes and the sum.
    free: Vec<VarId>,
    /// The tests (free of the class and of names bound inside the loop) that hold at
    /// every place the sum is met: the bucket is built only where they hold, as the sum
    /// was evaluated only there (`None` until the sum is met).
    guards: Option<Vec<TermId>>,
}

/// Where [`Summarizer::collect`] is: the names bound between the loop over classes and
/// here, and the tests of the `if` branches taken to get here (`not c` in an `else`).
#[derive(Default)]
struct Path {
    bound: Vec<VarId>,
    tests: Vec<TermId>,
}

/// One bucket being assembled: its range and index, and its distinct reducers in order.
struct Group {
    lo: TermId,
    hi: TermId,
    j: VarId,
    ix: TermId,
    count: TermId,
    /// The tests the bucket is built under (see [`Candidate::guards`]).
    guards: Vec<TermId>,
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
        match self.label_sum(t1) {
            Some(read) => read,
            None => self.hoist(t1),
        }
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
        // histograms of an inner class made inside this loop that test `k` too: one
        // histogram of both classes outside it (Fig. 7's `r_index` in `r_index`)
        let mut nested = Vec::new();
        let body = self.nest(k, count, body, &mut Vec::new(), &mut nested);
        if !nested.is_empty() {
            let mut children = node.children();
            children[body_index] = body;
            let ty = self.store.ty(t).clone();
            let inner = self.store.intern(node.with_children(&children), ty.clone());
            let mut out = self.hoist(inner);
            for (h, bucket) in nested.into_iter().rev() {
                out = self.bind_once(h, bucket, out);
            }
            return out;
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
        self.collect(&mut lp, body, &mut Path::default(), &mut found, &mut order);
        let mut groups: Vec<Group> = Vec::new();
        // each accepted sum: (group, slot)
        let mut slot_of: FxHashMap<TermId, (usize, usize)> = FxHashMap::default();
        for s in order {
            let Some(Some(c)) = found.get(&s) else {
                continue;
            };
            let guards = c.guards.clone().unwrap_or_default();
            let g = match groups.iter().position(|g| {
                (g.lo, g.hi, g.j, g.ix, g.count) == (c.lo, c.hi, c.j, c.ix, c.count)
                    && g.guards == guards
            }) {
                Some(g) => g,
                None => {
                    groups.push(Group {
                        lo: c.lo,
                        hi: c.hi,
                        j: c.j,
                        ix: c.ix,
                        count: c.count,
                        guards,
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
        // every bucket of one key gets the same reducers, in the same order
        let slots: Vec<Vec<usize>> = groups.iter_mut().map(|g| self.unify(g, b)).collect();
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
                .intern(Node::RIndex(b, g.count, g.ix, fan), index_ty.clone());
            // the loop over classes may be empty, or the sums sit under tests that may
            // fail, and then the original read no index: the histogram's range is empty
            // too (`hi` becomes `lo` when `count` is 0 or a test fails)
            let mut when = g.guards.clone();
            if !is_positive_literal(self.store, count) {
                let zero = self.store.int_lit(0, Type::Nat);
                when.insert(0, self.store.prim(Prim::Lt, vec![zero, count], Type::Bool));
            }
            let hi = if when.is_empty() {
                g.hi
            } else {
                let some = self.and(when);
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
            let n = groups[g].reducers.len();
            let slot = slots[g][slot];
            let read = match c.from {
                None => self.read(holders[g], n, slot, c.split, s),
                // `summate c from e(k) to B: h[c]`
                Some(from) => {
                    let cv = self.store.fresh_var("c", Type::Nat);
                    let c_term = self.store.var_term(cv);
                    let Node::Index(h_term, _) = *self.store.node(holders[g]) else {
                        continue;
                    };
                    let at_ty = self.store.ty(holders[g]).clone();
                    let at = self.store.intern(Node::Index(h_term, c_term), at_ty);
                    let one = self.read(at, n, slot, c.split, s);
                    let ty = self.store.ty(s).clone();
                    self.store.intern(Node::Summate(cv, from, c.count, one), ty)
                }
            };
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
            out = self.bind_once(h, bucket, out);
        }
        out
    }

    /// `h = bucket` then `out`; where the lets at the head of `out` bind the same bucket
    /// to another holder, that let is dropped and its holder read as `h` (`h` is fresh,
    /// so nothing rebinds it). Two loops that made one histogram then read one name,
    /// which later passes compare (the gamma ratios of `crate::ratios`).
    fn bind_once(&mut self, h: VarId, bucket: TermId, out: TermId) -> TermId {
        let ty = self.store.ty(out).clone();
        let mut chain: Vec<(VarId, TermId)> = Vec::new();
        let mut rest = out;
        while let Node::Let(v, e, body) = *self.store.node(rest) {
            chain.push((v, e));
            rest = body;
        }
        let same = |store: &Store, e: TermId| e == bucket || alpha::alpha_eq(store, e, bucket);
        let found = chain.iter().position(|&(_, e)| same(self.store, e));
        // the lets before it must not bind a name the bucket reads (it would mean another
        // value there)
        let Some(at) = found.filter(|&at| {
            let names: Vec<VarId> = chain[..at].iter().map(|&(v, _)| v).collect();
            !vars::mentions_any(self.store, bucket, &names)
        }) else {
            return self.store.intern(Node::Let(h, bucket, out), ty);
        };
        let (dup, _) = chain.remove(at);
        let h_term = self.store.var_term(h);
        let mut map = FxHashMap::default();
        map.insert(dup, h_term);
        let later = chain.split_off(at);
        let mut body = vars::substitute(self.store, rest, &map);
        for (v, e) in later.into_iter().rev() {
            let e = vars::substitute(self.store, e, &map);
            body = self.store.intern(Node::Let(v, e, body), ty.clone());
        }
        for (v, e) in chain.into_iter().rev() {
            body = self.store.intern(Node::Let(v, e, body), ty.clone());
        }
        self.histograms -= 1;
        self.store.intern(Node::Let(h, bucket, body), ty)
    }

    /// The reducers of `g` made those of every bucket with its key (see [`Canon`]): while
    /// recording, its own are added to the union; afterwards the union's, in order, where
    /// this bucket can evaluate them (their names in scope, and total on the range, since
    /// the original sums did not evaluate them), then any of its own the union lacks.
    /// Returns the new slot of each old one.
    fn unify(&mut self, g: &mut Group, b: VarId) -> Vec<usize> {
        let own = g.reducers.clone();
        let same: Vec<usize> = (0..own.len()).collect();
        let j_ty = self.store.var_type(g.j).clone();
        let cj = match self.canon.js.iter().find(|(ty, _)| *ty == j_ty) {
            Some(&(_, j)) => j,
            None => {
                let j = self.store.fresh_var("j", j_ty.clone());
                self.canon.js.push((j_ty, j));
                j
            }
        };
        let mut to = FxHashMap::default();
        to.insert(g.j, self.store.var_term(cj));
        to.insert(b, self.store.var_term(self.canon.b));
        let canon = |store: &mut Store, t: TermId| vars::substitute(store, t, &to);
        let key = BucketKey {
            lo: canon(self.store, g.lo),
            hi: canon(self.store, g.hi),
            ix: canon(self.store, g.ix),
            count: canon(self.store, g.count),
            guards: g.guards.iter().map(|&x| canon(self.store, x)).collect(),
        };
        let canon_own: Vec<TermId> = own.iter().map(|&r| canon(self.store, r)).collect();
        if self.canon.recording {
            let union = self.canon.unions.entry(key).or_default();
            for r in canon_own {
                if !union.contains(&r) {
                    union.push(r);
                }
            }
            return same;
        }
        let Some(union) = self.canon.unions.get(&key).cloned() else {
            self.canon.misses += 1;
            return same;
        };
        if canon_own.iter().any(|r| !union.contains(r)) {
            self.canon.misses += 1;
        }
        let mut back = FxHashMap::default();
        back.insert(cj, self.store.var_term(g.j));
        back.insert(self.canon.b, self.store.var_term(b));
        // what this bucket may evaluate: names in scope here, and reads the range bounds
        let mut allowed: FxHashSet<VarId> = self.canon.globals.clone();
        for part in [g.lo, g.hi, g.ix, g.count]
            .into_iter()
            .chain(g.guards.iter().copied())
            .chain(own.iter().copied())
        {
            allowed.extend(self.fv.of(self.store, part).iter().copied());
        }
        allowed.insert(g.j);
        allowed.insert(b);
        let top = match *self.store.node(g.hi) {
            Node::If(_, h, l) if l == g.lo => h,
            _ => g.hi,
        };
        let j_term = self.store.var_term(g.j);
        let facts = [self.store.prim(Prim::Lt, vec![j_term, top], Type::Bool)];
        let mut reducers = Vec::with_capacity(union.len());
        for cr in union {
            let r = vars::substitute(self.store, cr, &back);
            let fits = own.contains(&r)
                || (self
                    .fv
                    .of(self.store, r)
                    .iter()
                    .all(|v| allowed.contains(v))
                    && crate::split::total_given(self.store, r, &facts));
            if fits && !reducers.contains(&r) {
                reducers.push(r);
            }
        }
        for &r in &own {
            if !reducers.contains(&r) {
                reducers.push(r);
            }
        }
        g.reducers = reducers;
        own.iter()
            .map(|r| g.reducers.iter().position(|x| x == r).unwrap_or(0))
            .collect()
    }

    /// A sum over the points of a test of their labels cut off at a class count,
    /// `Σ_j [A(j) ∧ ix(j) < B ∧ Q(ix(j)) ∧ R(j)] e(j)` (conjuncts in any order after
    /// `A`), read from a histogram of the labels the term builds anyway:
    /// `Σ_{v<B} [Q(v)] Σ_j [A(j) ∧ v == ix(j) ∧ R(j)] e(j)`, whose inner sum reads that
    /// bucket: O(B) work per use instead of a pass over the points. `None` (the sum stays)
    /// unless every bucket this makes is one made elsewhere with these reducers.
    ///
    /// Meaning: for `v < B`, `v == ix(j)` holds for the one class of `j` in range, and
    /// `Q(ix(j))` is then `Q(v)`. Partiality: the bucket evaluates `A` at every point and
    /// `ix` where `A` holds, as the sum did (`A` is exactly the conjuncts before the first
    /// that reads `ix`, and that one reads it outright); `R` and `e` must not fail on the
    /// range (the bucket evaluates them on classes `Q` rules out); `Q(v)` must be defined
    /// where a condition `D` free of `v` holds. So the rewrite sits under `if 0 < B && D`,
    /// the sum as it was otherwise.
    fn label_sum(&mut self, s: TermId) -> Option<TermId> {
        if self.canon.recording {
            return None;
        }
        let (j0, lo, hi, cs, then, other) = guarded_sum(self.store, s)?;
        let (p, ix, count) = cs
            .iter()
            .enumerate()
            .find_map(|(p, &c)| label_range(self.store, c, j0).map(|(ix, b)| (p, ix, b)))?;
        let v = self.store.fresh_var("v", Type::Nat);
        let v_term = self.store.var_term(v);
        let (mut before, mut rest, mut qs) = (Vec::new(), Vec::new(), Vec::new());
        let mut read_ix = false;
        for (i, &c) in cs.iter().enumerate() {
            if i == p {
                read_ix = true;
                continue;
            }
            let q = vars::replace_free(self.store, c, ix, v_term);
            if !read_ix && q == c {
                // a test before the index is read: it guards the read, so it stays with
                // the points (and must be about them)
                if !self.fv.contains(self.store, c, j0) {
                    return None;
                }
                before.push(c);
                continue;
            }
            if !read_ix {
                if !reads_outright(self.store, c, ix) {
                    return None;
                }
                read_ix = true;
            }
            if self.fv.contains(self.store, q, j0) {
                rest.push(c);
            } else {
                qs.push(q);
            }
        }
        let top = match *self.store.node(hi) {
            Node::If(_, h, l) if l == lo => h,
            _ => hi,
        };
        let j_term = self.store.var_term(j0);
        let facts = [self.store.prim(Prim::Lt, vec![j_term, top], Type::Bool)];
        if !rest
            .iter()
            .chain([&then])
            .all(|&x| crate::split::total_given(self.store, x, &facts))
        {
            return None;
        }
        // a test of the label against a name bound around the sum (a class of an
        // enclosing loop: the histogram transform's own case) would make this O(B) per
        // value of that name
        let globals = &self.canon.globals;
        if qs.iter().any(|&q| {
            vars::free_vars(self.store, q)
                .iter()
                .any(|x| *x != v && !globals.contains(x))
        }) {
            return None;
        }
        let q = self.and(qs.clone());
        let defined = crate::split::defined_cond(self.store, q)?;
        if self.fv.contains(self.store, defined, v) {
            return None;
        }
        let ty = self.store.ty(s).clone();
        let eq = self.store.prim(Prim::Eq, vec![v_term, ix], Type::Bool);
        before.push(eq);
        before.extend(rest);
        let inner_cond = self.and(before);
        let inner_body = self
            .store
            .intern(Node::If(inner_cond, then, other), ty.clone());
        let inner = self
            .store
            .intern(Node::Summate(j0, lo, hi, inner_body), ty.clone());
        let per_class = if qs.is_empty() {
            inner
        } else {
            self.store.intern(Node::If(q, inner, other), ty.clone())
        };
        let zero = self.store.int_lit(0, Type::Nat);
        let classes = self
            .store
            .intern(Node::Summate(v, zero, count, per_class), ty.clone());
        let saved = (self.histograms, self.sums_replaced, self.canon.misses);
        let read = self.hoist(classes);
        if read == classes || self.canon.misses != saved.2 {
            (self.histograms, self.sums_replaced, self.canon.misses) = saved;
            return None;
        }
        let mut when = Vec::new();
        if !is_positive_literal(self.store, count) {
            when.push(self.store.prim(Prim::Lt, vec![zero, count], Type::Bool));
        }
        if !matches!(self.store.node(defined), Node::Bool(true)) {
            when.push(defined);
        }
        Some(if when.is_empty() {
            read
        } else {
            let w = self.and(when);
            self.store.intern(Node::If(w, read, s), ty)
        })
    }

    /// `t` with each histogram of an inner class that can be nested in the loop over `k`
    /// (see [`Self::nested_bucket`]) taken out: its reads `h[i]` become reads of the
    /// two-class histogram at `k * M + i` (`M` the inner count), the histogram pushed on
    /// `out`. `bound` holds the variables bound between the loop and `t`.
    fn nest(
        &mut self,
        k: VarId,
        count: TermId,
        t: TermId,
        bound: &mut Vec<VarId>,
        out: &mut Vec<(VarId, TermId)>,
    ) -> TermId {
        if !self.fv.contains(self.store, t, k) {
            return t;
        }
        let node = self.store.node(t).clone();
        if let Node::Let(h, e, rest) = node {
            if let Some((hh, bucket, stride)) = self.nested_bucket(k, count, e, bound) {
                let k_term = self.store.var_term(k);
                let row = self.store.prim(Prim::Mul, vec![k_term, stride], Type::Nat);
                let mut ok = true;
                let rest1 = self.reread(rest, h, hh, row, stride, &mut Vec::new(), &mut ok);
                if ok && !self.fv.contains(self.store, rest1, h) {
                    self.histograms += 1;
                    out.push((hh, bucket));
                    bound.push(h);
                    let r = self.nest(k, count, rest1, bound, out);
                    bound.pop();
                    return r;
                }
            }
        }
        let children = node.children();
        let mut new = Vec::with_capacity(children.len());
        for (i, &c) in children.iter().enumerate() {
            let depth = bound.len();
            vars::bound_in(&node, i, bound);
            new.push(stack::grow(|| self.nest(k, count, c, bound, out)));
            bound.truncate(depth);
        }
        if new == children {
            return t;
        }
        let ty = self.store.ty(t).clone();
        self.store.intern(node.with_children(&new), ty)
    }

    /// The two-class histogram of `e` for the loop over `k` (of `count` classes), its
    /// holder and the inner count `M`, when `e` is a histogram `bucket j: r_index b = M
    /// of ix: r_split .. && k == ix2 && ..: r_add t else: r_nop` (as this transform makes
    /// for an inner loop) whose only use of `k` is that test: `bucket j: r_index b2 = K *
    /// M of (if ix < M: (if ix2 < K: ix2 * M + ix else: K * M) else: K * M): r_split ..
    /// && ..: r_add t else: r_nop`, flat since the loop IR allocates flat arrays. `ix`
    /// is evaluated first and `ix2` only where it is in range, as in the original (which
    /// reads the test only for in-range buckets); the conjuncts before the test still
    /// guard `ix2`; the range is empty when the loop over `k` may be. Nothing of `e` may
    /// be bound between the loop and `e`.
    fn nested_bucket(
        &mut self,
        k: VarId,
        count: TermId,
        e: TermId,
        bound: &[VarId],
    ) -> Option<(VarId, TermId, TermId)> {
        let Node::Bucket(j, lo, hi, r) = self.store.node(e).clone() else {
            return None;
        };
        let Node::RIndex(b, m, ix, red) = self.store.node(r).clone() else {
            return None;
        };
        let Node::RSplit(cond, add, nop) = self.store.node(red).clone() else {
            return None;
        };
        let mut cs = Vec::new();
        conjuncts_of(self.store, cond, &mut cs);
        let at = cs.iter().position(|&c| self.index_of(c, k, j).is_some())?;
        let test = cs[at];
        let mut ix2 = self.index_of(test, k, j)?;
        if at > 0 && !crate::split::total(self.store, ix2) {
            let before = if at == 1 {
                cs[0]
            } else {
                self.store.prim(Prim::And, cs[..at].to_vec(), Type::Bool)
            };
            ix2 = self.store.intern(Node::If(before, ix2, count), Type::Nat);
        }
        cs.remove(at);
        let rest = self.and(cs);
        let red_ty = self.store.ty(red).clone();
        let red2 = self.store.intern(Node::RSplit(rest, add, nop), red_ty);
        // an index guarded by the conjuncts up to and after the test (`if c1 && k == ix2
        // && c2: x else: M`, as this transform guards an index that can fail): the guard's
        // parts around the test
        let mut guard: Option<(Vec<TermId>, Vec<TermId>)> = None;
        let mut ix = ix;
        if let Node::If(g, x, other) = *self.store.node(ix) {
            let mut gs = Vec::new();
            conjuncts_of(self.store, g, &mut gs);
            if other == m {
                if let Some(pg) = gs.iter().position(|&c| c == test) {
                    guard = Some((gs[..pg].to_vec(), gs[pg + 1..].to_vec()));
                    ix = x;
                }
            }
        }
        let guarded = guard.is_some();
        let (before, after) = guard.unwrap_or_default();
        if [lo, hi, m, ix, red2]
            .iter()
            .any(|&x| self.fv.contains(self.store, x, k))
            || self.fv.contains(self.store, red2, b)
        {
            return None;
        }
        let mut free = FxHashSet::default();
        for part in [lo, hi, m, ix, ix2, red2]
            .into_iter()
            .chain(before.iter().copied())
            .chain(after.iter().copied())
        {
            free.extend(self.fv.of(self.store, part).iter().copied());
        }
        if before
            .iter()
            .chain(&after)
            .any(|&c| self.fv.contains(self.store, c, k))
        {
            return None;
        }
        free.remove(&j);
        if free.iter().any(|v| bound.contains(v)) {
            return None;
        }
        // the flat index
        let flat = self.store.prim(Prim::Mul, vec![count, m], Type::Nat);
        let c2 = self.store.fresh_var("c", Type::Nat);
        let c2_term = self.store.var_term(c2);
        let row = self.store.prim(Prim::Mul, vec![c2_term, m], Type::Nat);
        let at = self.store.prim(Prim::Add, vec![row, ix], Type::Nat);
        let inner_ok = self.store.prim(Prim::Lt, vec![ix, m], Type::Bool);
        let outer_ok = self.store.prim(Prim::Lt, vec![c2_term, count], Type::Bool);
        let fidx = if guarded {
            // `if c1: (let c = ix2; if c < K && c2: (if x < M: c * M + x else: F) else: F)
            // else: F`, the guard's parts in their order
            let inner = self.store.intern(Node::If(inner_ok, at, flat), Type::Nat);
            let mut outer = vec![outer_ok];
            outer.extend(after);
            let outer = self.and(outer);
            let pick = self.store.intern(Node::If(outer, inner, flat), Type::Nat);
            let pick = self.store.intern(Node::Let(c2, ix2, pick), Type::Nat);
            if before.is_empty() {
                pick
            } else {
                let first = self.and(before);
                self.store.intern(Node::If(first, pick, flat), Type::Nat)
            }
        } else {
            let pick = self.store.intern(Node::If(outer_ok, at, flat), Type::Nat);
            let pick = self.store.intern(Node::Let(c2, ix2, pick), Type::Nat);
            self.store.intern(Node::If(inner_ok, pick, flat), Type::Nat)
        };
        let b2 = self.store.fresh_var("b", Type::Nat);
        let index_ty = self.store.ty(r).clone();
        let index = self
            .store
            .intern(Node::RIndex(b2, flat, fidx, red2), index_ty.clone());
        let hi2 = if is_positive_literal(self.store, count) {
            hi
        } else {
            let zero = self.store.int_lit(0, Type::Nat);
            let some = self.store.prim(Prim::Lt, vec![zero, count], Type::Bool);
            let ty = self.store.ty(hi).clone();
            self.store.intern(Node::If(some, hi, lo), ty)
        };
        let bucket = self
            .store
            .intern(Node::Bucket(j, lo, hi2, index), index_ty.clone());
        let hh = self.store.fresh_var("h", index_ty);
        Some((hh, bucket, m))
    }

    /// `t` with every read `h[i]` of the inner histogram `h` as `hh[row + i]`, where `i`
    /// is the index of an enclosing loop over `0..m` (`in_range`), so the read stays in
    /// its row; any other use of `h` clears `ok`.
    #[allow(clippy::too_many_arguments)]
    fn reread(
        &mut self,
        t: TermId,
        h: VarId,
        hh: VarId,
        row: TermId,
        m: TermId,
        in_range: &mut Vec<VarId>,
        ok: &mut bool,
    ) -> TermId {
        if !*ok || !self.fv.contains(self.store, t, h) {
            return t;
        }
        let node = self.store.node(t).clone();
        if let Node::Index(a, i) = node {
            if matches!(self.store.node(a), Node::Var(v) if *v == h) {
                let i_in_row = matches!(self.store.node(i), Node::Var(v) if in_range.contains(v));
                if !i_in_row {
                    *ok = false;
                    return t;
                }
                let hh_term = self.store.var_term(hh);
                let at = self.store.prim(Prim::Add, vec![row, i], Type::Nat);
                let ty = self.store.ty(t).clone();
                return self.store.intern(Node::Index(hh_term, at), ty);
            }
        }
        let over_row = match node {
            Node::Summate(i, lo, hi, _) | Node::Product(i, lo, hi, _)
                if is_zero(self.store, lo) && hi == m =>
            {
                Some(i)
            }
            Node::Array(i, n, _) if n == m => Some(i),
            _ => None,
        };
        let children = node.children();
        let mut new = Vec::with_capacity(children.len());
        for (c_i, &c) in children.iter().enumerate() {
            let body = over_row.is_some() && vars::binds_in(&node, c_i, over_row.unwrap_or(h));
            if body {
                in_range.extend(over_row);
            }
            new.push(stack::grow(|| self.reread(c, h, hh, row, m, in_range, ok)));
            if body {
                in_range.pop();
            }
        }
        if new == children {
            return t;
        }
        let ty = self.store.ty(t).clone();
        self.store.intern(node.with_children(&new), ty)
    }

    /// Finds the sums under `t` (with `bound` the variables bound between the loop and
    /// `t`) that can read a histogram of the loop `lp`, in the order they occur.
    fn collect(
        &mut self,
        lp: &mut ClassLoop,
        t: TermId,
        path: &mut Path,
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
            if let Some(Some(c)) = found.get_mut(&t) {
                if !c.free.iter().any(|v| path.bound.contains(v)) {
                    // the tests this place is reached under that the bucket can be
                    // guarded by outside the loop (free of the class and of names bound
                    // inside it, and total: evaluated where the original may not have);
                    // a sum met at several places keeps the tests common to all of them
                    let here: Vec<TermId> = path
                        .tests
                        .iter()
                        .copied()
                        .filter(|&g| {
                            !self.fv.contains(self.store, g, lp.k)
                                && !path
                                    .bound
                                    .iter()
                                    .any(|&v| self.fv.contains(self.store, g, v))
                                && crate::split::total(self.store, g)
                        })
                        .collect();
                    match &mut c.guards {
                        Some(gs) => gs.retain(|g| here.contains(g)),
                        None => c.guards = Some(here),
                    }
                    order.push(t);
                    return;
                }
            }
        }
        let node = self.store.node(t).clone();
        for (i, c) in node.children().into_iter().enumerate() {
            let depth = path.bound.len();
            let tests = path.tests.len();
            vars::bound_in(&node, i, &mut path.bound);
            if let Node::If(test, ..) = node {
                match i {
                    1 => path.tests.push(test),
                    2 => {
                        let not = self.store.prim(Prim::Not, vec![test], Type::Bool);
                        path.tests.push(not);
                    }
                    _ => {}
                }
            }
            stack::grow(|| self.collect(lp, c, path, found, order));
            path.bound.truncate(depth);
            path.tests.truncate(tests);
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
        let (j0, lo, hi, mut conjuncts, then, _) = guarded_sum(self.store, s)?;
        let k = lp.k;
        if self.fv.contains(self.store, lo, k) || self.fv.contains(self.store, hi, k) {
            return None;
        }
        let (at, mut ix0, count, from) = match conjuncts
            .iter()
            .position(|&c| self.index_of(c, k, j0).is_some())
        {
            Some(at) => {
                let ix0 = self.index_of(conjuncts[at], k, j0)?;
                conjuncts.remove(at);
                (at, ix0, lp.count, None)
            }
            None => {
                let r = self.range_of(&conjuncts, k, j0)?;
                conjuncts.remove(r.lower.max(r.upper));
                conjuncts.remove(r.lower.min(r.upper));
                (r.lower.min(r.upper), r.ix, r.count, Some(r.from))
            }
        };
        // a test that the index is in range (`ix + 1 <= K`, `ix < K`) is what `r_index`
        // does already: dropped where it is safe to evaluate what followed it anyway (the
        // index itself is: the test read it), so that the sum shares the bucket of the
        // same index without it
        //
        // A test against a larger count `B` (`ix + 1 <= K` in a loop over `K - 1`
        // classes) is implied by `k == ix` too: the bucket then has `B` classes (the last
        // ones never read), as the buckets of the same index in a loop over `B` do; its
        // reducer must then not fail, since it now runs for labels the loop never reaches.
        let mut at = at;
        let mut count = count;
        if from.is_none() {
            // widening needs a reducer that cannot fail
            let may_widen = conjuncts.iter().chain([&then]).all(|&c| {
                self.in_range_bound(c, ix0, count).is_some() || crate::split::total(self.store, c)
            });
            let mut p = 0;
            while p < conjuncts.len() {
                let later_total = conjuncts[p + 1..]
                    .iter()
                    .all(|&c| crate::split::total(self.store, c));
                match self.in_range_bound(conjuncts[p], ix0, count) {
                    Some(b)
                        if later_total
                            && (b == count || (may_widen && at_most(self.store, count, b))) =>
                    {
                        count = b;
                        conjuncts.remove(p);
                        if p < at {
                            at -= 1;
                        }
                    }
                    _ => p += 1,
                }
            }
        }
        // the conjuncts before the index test guarded its evaluation: so they still do
        // (`if c: ix else: K`, an index out of range, selects no bucket)
        if at > 0 && !crate::split::total(self.store, ix0) {
            let before = if at == 1 {
                conjuncts[0]
            } else {
                self.store
                    .prim(Prim::And, conjuncts[..at].to_vec(), Type::Bool)
            };
            ix0 = self.store.intern(Node::If(before, ix0, count), Type::Nat);
        }
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
        for part in [lo, hi, ix, count, reducer] {
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
            count,
            from,
            reducer,
            split,
            free,
            guards: None,
        })
    }

    /// `B` if `c` is the test `ix < B` or `ix + 1 <= B` with `count <= B` (`B` itself, or
    /// `B` less a literal: see [`at_most`]).
    fn in_range_bound(&self, c: TermId, ix: TermId, count: TermId) -> Option<TermId> {
        let b = match self.store.node(c) {
            Node::Prim(Prim::Lt, a) if a.len() == 2 && a[0] == ix => a[1],
            Node::Prim(Prim::Le, a) if a.len() == 2 => match self.store.node(a[0]) {
                Node::Prim(Prim::Add, xs) if xs.len() == 2 => {
                    let one = |t: TermId| matches!(self.store.node(t), Node::Lit(v) if v.is_one());
                    if (xs[0] == ix && one(xs[1])) || (xs[1] == ix && one(xs[0])) {
                        a[1]
                    } else {
                        return None;
                    }
                }
                _ => return None,
            },
            _ => return None,
        };
        (b == count || at_most(self.store, count, b)).then_some(b)
    }

    /// A range test among the conjuncts `cs` of a sum over `j` inside the loop over `k`:
    /// `e(k) <= ix(j)` (or `e(k) < ix(j)`) and `ix(j) + 1 <= B` (or `ix(j) < B`), with `ix`
    /// a nat mentioning `j` and not `k`, `e` free of `j`, `B` free of both. The sum over
    /// `j` is then `Σ_{c = e(k)}^{B-1}` of the histogram of `ix` over `0..B` (the prefix
    /// counts of the stick-breaking Dirichlet: `Σ_j [k + 1 <= z[j] < K]`): `O(B)` per
    /// class instead of a pass over the data. `e` and `B` are evaluated once per class
    /// and once per update, and the conjuncts after the first test per point in range, so
    /// all of them must be total.
    fn range_of(&mut self, cs: &[TermId], k: VarId, j: VarId) -> Option<RangeTest> {
        let mut lower: Option<(usize, TermId, TermId)> = None;
        let mut uppers: Vec<(usize, TermId, TermId)> = Vec::new();
        for (i, &c) in cs.iter().enumerate() {
            let Node::Prim(p @ (Prim::Le | Prim::Lt), args) = self.store.node(c).clone() else {
                continue;
            };
            let [a, b] = args[..] else { continue };
            let mentions = |s: &mut Self, t: TermId, v: VarId| s.fv.contains(s.store, t, v);
            // lower: e(k) <= ix(j)
            if lower.is_none()
                && self.store.ty(b) == &Type::Nat
                && mentions(self, a, k)
                && !mentions(self, a, j)
                && mentions(self, b, j)
                && !mentions(self, b, k)
            {
                let from = if p == Prim::Lt {
                    let one = self.store.int_lit(1, Type::Nat);
                    self.store.prim(Prim::Add, vec![a, one], Type::Nat)
                } else {
                    a
                };
                lower = Some((i, b, from));
                continue;
            }
            // upper: ix(j) + 1 <= B, or ix(j) < B
            if mentions(self, b, k) || mentions(self, b, j) {
                continue;
            }
            let ix = match (p, self.store.node(a).clone()) {
                (Prim::Lt, _) => Some(a),
                (Prim::Le, Node::Prim(Prim::Add, xs)) if xs.len() == 2 => {
                    let one =
                        |s: &Self, t: TermId| matches!(s.store.node(t), Node::Lit(v) if v.is_one());
                    if one(self, xs[1]) {
                        Some(xs[0])
                    } else if one(self, xs[0]) {
                        Some(xs[1])
                    } else {
                        None
                    }
                }
                _ => None,
            };
            if let Some(ix) = ix {
                uppers.push((i, ix, b));
            }
        }
        let (li, ix, from) = lower?;
        let &(ui, _, count) = uppers.iter().find(|u| u.1 == ix)?;
        let first = li.min(ui);
        let later_total = cs
            .iter()
            .enumerate()
            .all(|(i, &c)| i < first || i == li || i == ui || crate::split::total(self.store, c));
        let ok = later_total
            && self.store.ty(count) == &Type::Nat
            && crate::split::total(self.store, from)
            && crate::split::total(self.store, count);
        ok.then_some(RangeTest {
            lower: li,
            upper: ui,
            ix,
            from,
            count,
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

    /// The conjunction of `cs` (one conjunct is itself, none is `true`).
    fn and(&mut self, cs: Vec<TermId>) -> TermId {
        match cs.len() {
            0 => self.store.intern(Node::Bool(true), Type::Bool),
            1 => cs[0],
            _ => self.store.prim(Prim::And, cs, Type::Bool),
        }
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

/// A range test found by `range_of`: the positions of its two conjuncts, the index, the
/// sum's lower end and the number of buckets.
struct RangeTest {
    lower: usize,
    upper: usize,
    ix: TermId,
    from: TermId,
    count: TermId,
}

/// The parts of `summate j from lo to hi: if c1 && c2 ...: then else: 0`: `j`, `lo`,
/// `hi`, the conjuncts in order, `then` and the zero.
#[allow(clippy::type_complexity)]
fn guarded_sum(
    store: &Store,
    s: TermId,
) -> Option<(VarId, TermId, TermId, Vec<TermId>, TermId, TermId)> {
    let Node::Summate(j, lo, hi, body) = *store.node(s) else {
        return None;
    };
    let Node::If(cond, then, other) = *store.node(body) else {
        return None;
    };
    if !is_zero(store, other) {
        return None;
    }
    let mut cs = Vec::new();
    conjuncts_of(store, cond, &mut cs);
    Some((j, lo, hi, cs, then, other))
}

/// The label and class count of a range test `ix + 1 <= B` or `ix < B` in a sum over
/// `j`: `ix` a nat that mentions `j`, `B` a total term that does not.
fn label_range(store: &Store, c: TermId, j: VarId) -> Option<(TermId, TermId)> {
    let (ix, b) = match store.node(c) {
        Node::Prim(Prim::Lt, a) if a.len() == 2 => (a[0], a[1]),
        Node::Prim(Prim::Le, a) if a.len() == 2 => match store.node(a[0]) {
            Node::Prim(Prim::Add, xs) if xs.len() == 2 => {
                let one = |t: TermId| matches!(store.node(t), Node::Lit(v) if v.is_one());
                if one(xs[1]) {
                    (xs[0], a[1])
                } else if one(xs[0]) {
                    (xs[1], a[1])
                } else {
                    return None;
                }
            }
            _ => return None,
        },
        _ => return None,
    };
    let ok = store.ty(ix) == &Type::Nat
        && vars::mentions(store, ix, j)
        && !vars::mentions(store, b, j)
        && crate::split::total(store, b);
    ok.then_some((ix, b))
}

/// Does evaluating the test `c` evaluate `ix` whatever its value: a comparison with `ix`,
/// or `ix` plus something, as an operand?
fn reads_outright(store: &Store, c: TermId, ix: TermId) -> bool {
    let Node::Prim(Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne, args) = store.node(c) else {
        return false;
    };
    args.iter()
        .any(|&a| a == ix || matches!(store.node(a), Node::Prim(Prim::Add, xs) if xs.contains(&ix)))
}

/// Is `c <= b` for every value, by its form: `c` is `int2nat(nat2int(b) + m)` (written
/// `int2nat(b - m)`) with a literal `m <= 0`?
fn at_most(store: &Store, c: TermId, b: TermId) -> bool {
    let Node::Coerce(Coercion::Int2Nat, x) = *store.node(c) else {
        return false;
    };
    let Node::Prim(Prim::Add, xs) = store.node(x) else {
        return false;
    };
    let is_b = |t: TermId| matches!(*store.node(t), Node::Coerce(Coercion::Nat2Int, y) if y == b);
    let non_positive = |t: TermId| matches!(store.node(t), Node::Lit(v) if !v.is_positive());
    matches!(xs.as_slice(), [p, q] if (is_b(*p) && non_positive(*q)) || (is_b(*q) && non_positive(*p)))
}

/// Is `t` a literal above 0?
fn is_positive_literal(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(v) if !v.is_zero())
}
