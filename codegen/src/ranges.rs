//! Comparisons decided by the loops they sit in (issue 12: kernel speed). The point split
//! evaluates a summand at the point with the proposed label, so a Gibbs update's weight of
//! label `i`, inside `array i of size(as)`, reads tests such as `i + 1 <= size(as)` that
//! the loop's own range makes true. Left in, they tie loop-invariant work to `i` (a gamma
//! function of the class counts, once per proposed label instead of once per update); once
//! decided, A-normal form hoists that work out of the loop.
//!
//! [`decide_ranges`] walks a term with the range `lo <= v < hi` of every enclosing
//! `array`, `summate` and `product`, asks `slic_algebra::cond::decide` (never wrong,
//! sometimes unknown) about every integral comparison that reads one of those variables,
//! writes the decided ones as `true`/`false`, and folds the `&&`, `||`, `not` and `if`
//! they leave. A range is forgotten under a binder that rebinds its variable or a variable
//! of its bounds. Comparisons are total, so replacing one by its value keeps the meaning
//! exactly, partiality included.
//!
//! [`shift_literals`], run by the pipeline before the histogram transform, normalises
//! integral comparisons everywhere: a positive literal added to one side moves across
//! (`z[j] + 1 <= size(as)` becomes `z[j] < size(as)`), so the kernel's test needs no
//! addition that could overflow, and it is the very test the histogram's bucket makes,
//! which the C and Rust compilers then evaluate once.

use rustc_hash::FxHashMap;
use slic_algebra::assume::{Context, Tri};
use slic_algebra::{cond, stack, vars, Node, Prim, Store, TermId, Type, VarId};

/// What [`decide_ranges`] did.
#[derive(Clone, Debug)]
pub struct Ranges {
    /// The rewritten term (same type and meaning).
    pub term: TermId,
    /// Comparisons the ranges decided.
    pub decided: usize,
}

/// Every integral comparison in `t` that the ranges of its enclosing loops decide, decided.
pub fn decide_ranges(store: &mut Store, t: TermId) -> Ranges {
    let mut w = Walker {
        store,
        facts: Vec::new(),
        epoch: 0,
        epochs: 0,
        memo: FxHashMap::default(),
        loops: FxHashMap::default(),
        decided: 0,
    };
    let term = rebuild_scoped(&mut w, t);
    Ranges {
        term,
        decided: w.decided,
    }
}

/// `lo <= var < hi`.
#[derive(Clone, Copy)]
struct Range {
    var: VarId,
    lo: TermId,
    hi: TermId,
}

struct Walker<'s> {
    store: &'s mut Store,
    /// The ranges in force, outermost first.
    facts: Vec<Range>,
    /// Which set of ranges `facts` is (memo entries are valid under one set only), and
    /// how many sets there have been.
    epoch: u64,
    epochs: u64,
    memo: FxHashMap<(TermId, u64), TermId>,
    /// Whether a term has a loop (outside any loop, nothing can be decided).
    loops: FxHashMap<TermId, bool>,
    decided: usize,
}

impl ScopedRewrite for Walker<'_> {
    type Saved = (Vec<Range>, u64);

    fn store(&mut self) -> &mut Store {
        self.store
    }

    fn epoch(&self) -> u64 {
        self.epoch
    }

    fn memo(&mut self) -> &mut FxHashMap<(TermId, u64), TermId> {
        &mut self.memo
    }

    fn unchanged(&mut self, t: TermId) -> bool {
        // outside every loop nothing can be decided
        self.facts.is_empty() && !loops_in(self.store, t, &mut self.loops)
    }

    fn enter(&mut self, node: &Node, i: usize, bound: &[VarId]) -> Option<Self::Saved> {
        let last = i + 1 == node.children().len();
        let range = match *node {
            Node::Array(v, n, _) if last => {
                let zero = self.store.int_lit(0, Type::Nat);
                Some(Range {
                    var: v,
                    lo: zero,
                    hi: n,
                })
            }
            Node::Summate(v, lo, hi, _) | Node::Product(v, lo, hi, _) if last => {
                Some(Range { var: v, lo, hi })
            }
            _ => None,
        };
        (!bound.is_empty() || range.is_some()).then(|| self.enter_scope(bound, range))
    }

    fn leave(&mut self, (facts, epoch): Self::Saved) {
        self.facts = facts;
        self.epoch = epoch;
    }

    fn fold(&mut self, node: Node, ty: Type) -> TermId {
        self.fold_node(node, ty)
    }
}

impl Walker<'_> {
    /// Forgets the ranges a binder of `bound` shadows, adds `range`; returns what to restore.
    fn enter_scope(&mut self, bound: &[VarId], range: Option<Range>) -> (Vec<Range>, u64) {
        let saved = (self.facts.clone(), self.epoch);
        if !bound.is_empty() {
            let store = &*self.store;
            self.facts.retain(|f| {
                !bound.contains(&f.var)
                    && !vars::mentions_any(store, f.lo, bound)
                    && !vars::mentions_any(store, f.hi, bound)
            });
        }
        if let Some(r) = range {
            // the range's own bounds are read outside the binder: they never mention it
            self.facts.push(r);
        }
        if range.is_some() || self.facts.len() != saved.0.len() {
            self.epochs += 1;
            self.epoch = self.epochs;
        }
        saved
    }

    /// `node` rebuilt: a comparison decided by the ranges, or a connective folded.
    fn fold_node(&mut self, node: Node, ty: Type) -> TermId {
        match &node {
            Node::Prim(Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne, args)
                if args.len() == 2
                    && args
                        .iter()
                        .all(|&a| matches!(self.store.ty(a), Type::Nat | Type::Int)) =>
            {
                let t = self.store.intern(node.clone(), ty);
                let vs: Vec<VarId> = self.facts.iter().map(|f| f.var).collect();
                if vs.is_empty() || !vars::mentions_any(self.store, t, &vs) {
                    return t;
                }
                let ctx = self
                    .facts
                    .iter()
                    .fold(Context::new(), |c, f| c.with_range(f.var, f.lo, f.hi));
                match cond::decide(self.store, &ctx, t) {
                    Tri::True => {
                        self.decided += 1;
                        self.store.intern(Node::Bool(true), Type::Bool)
                    }
                    Tri::False => {
                        self.decided += 1;
                        self.store.intern(Node::Bool(false), Type::Bool)
                    }
                    Tri::Unknown => t,
                }
            }
            _ => fold_connective(self.store, &node).unwrap_or_else(|| self.store.intern(node, ty)),
        }
    }
}

/// A bottom-up rewrite that knows, at each subterm, the scope it sits in (the loops'
/// ranges, what the enclosing tests say): shared by the passes that decide comparisons
/// ([`decide_ranges`], `crate::data_facts`). [`rebuild_scoped`] rebuilds each distinct
/// subterm once per scope (memoised by the scope's epoch), children first, entering a
/// scope of the walker's making for a child that binds variables or that it asks to.
pub(crate) trait ScopedRewrite {
    /// What [`Self::enter`] saves to restore.
    type Saved;
    fn store(&mut self) -> &mut Store;
    /// Which scope is in force (memo entries are valid under it only).
    fn epoch(&self) -> u64;
    fn memo(&mut self) -> &mut FxHashMap<(TermId, u64), TermId>;
    /// `t` as it is, without a walk (nothing under it can change).
    fn unchanged(&mut self, _t: TermId) -> bool {
        false
    }
    /// The scope of child `i` of `node`, which binds `bound`: `None` to keep the current.
    fn enter(&mut self, node: &Node, i: usize, bound: &[VarId]) -> Option<Self::Saved>;
    fn leave(&mut self, saved: Self::Saved);
    /// `node` (children rewritten) rebuilt.
    fn fold(&mut self, node: Node, ty: Type) -> TermId;
}

/// `t` rewritten by `w` (see [`ScopedRewrite`]).
pub(crate) fn rebuild_scoped<W: ScopedRewrite>(w: &mut W, t: TermId) -> TermId {
    if w.unchanged(t) {
        return t;
    }
    let epoch = w.epoch();
    if let Some(&r) = w.memo().get(&(t, epoch)) {
        return r;
    }
    let node = w.store().node(t).clone();
    let ch = node.children();
    let mut new = Vec::with_capacity(ch.len());
    for (i, &c) in ch.iter().enumerate() {
        let mut bound = Vec::new();
        vars::bound_in(&node, i, &mut bound);
        let r = match w.enter(&node, i, &bound) {
            None => stack::grow(|| rebuild_scoped(w, c)),
            Some(saved) => {
                let r = stack::grow(|| rebuild_scoped(w, c));
                w.leave(saved);
                r
            }
        };
        new.push(r);
    }
    let node = if new == ch {
        node
    } else {
        node.with_children(&new)
    };
    let ty = w.store().ty(t).clone();
    let r = w.fold(node, ty);
    w.memo().insert((t, epoch), r);
    r
}

/// `node` with literal truth values folded: a connective (`&&`, `||`, `not`) with a
/// literal argument, or an `if` with a literal condition; `None` when there is nothing
/// to fold. Exact: `&&` and `||` are total, so dropping a `true` from `&&` keeps the
/// meaning, partiality included. Shared by the passes that decide comparisons.
pub(crate) fn fold_connective(store: &mut Store, node: &Node) -> Option<TermId> {
    let truth = |store: &Store, t: TermId| match store.node(t) {
        Node::Bool(b) => Some(*b),
        _ => None,
    };
    match node {
        Node::Prim(p @ (Prim::And | Prim::Or), args) => {
            // `and`: a false argument decides it, true ones drop out (`or` dually)
            let unit = *p == Prim::And;
            if args.iter().any(|&a| truth(store, a) == Some(!unit)) {
                return Some(store.intern(Node::Bool(!unit), Type::Bool));
            }
            let kept: Vec<TermId> = args
                .iter()
                .copied()
                .filter(|&a| truth(store, a) != Some(unit))
                .collect();
            match kept.len() {
                0 => Some(store.intern(Node::Bool(unit), Type::Bool)),
                1 => Some(kept[0]),
                _ if kept.len() == args.len() => None,
                _ => Some(store.prim(*p, kept, Type::Bool)),
            }
        }
        Node::Prim(Prim::Not, args) if args.len() == 1 => {
            truth(store, args[0]).map(|b| store.intern(Node::Bool(!b), Type::Bool))
        }
        Node::If(c, a, b) => match truth(store, *c) {
            Some(true) => Some(*a),
            Some(false) => Some(*b),
            None => None,
        },
        _ => None,
    }
}

/// Every comparison in `t` with a positive literal added to one side shifted across (see
/// the module's documentation), everywhere in the term. The pipeline runs it before the
/// histogram transform, so that every copy of a test, inside a loop or not, has one form
/// and the buckets that read it stay equal (shifting only some copies would make two
/// tables of one histogram).
pub fn shift_literals(store: &mut Store, t: TermId) -> TermId {
    store.rebuild(t, &mut |s, _, node| shift_literal(s, node))
}

/// `a + c <= b` as `a + (c - 1) < b`, and `b < a + c` as `b <= a + (c - 1)`, for an
/// integral (nat or int) comparison and a positive integer literal `c`: the comparison
/// a label's bounds test reads, `z[j] + 1 <= size(as)`, becomes `z[j] < size(as)`, which
/// a kernel evaluates without an addition that could overflow, and which is the test the
/// histogram's bucket already makes (so the two are one). Exact on the integers; `None`
/// when `node` is not of that form.
fn shift_literal(store: &mut Store, node: &Node) -> Option<TermId> {
    let Node::Prim(p @ (Prim::Le | Prim::Lt), args) = node else {
        return None;
    };
    if args.len() != 2
        || !args
            .iter()
            .all(|&a| matches!(store.ty(a), Type::Nat | Type::Int))
    {
        return None;
    }
    // the side that holds the sum: the left of `<=`, the right of `<`
    let side = usize::from(*p == Prim::Lt);
    let Node::Prim(Prim::Add, terms) = store.node(args[side]) else {
        return None;
    };
    let ty = store.ty(args[side]).clone();
    let (at, c) = terms
        .iter()
        .enumerate()
        .find_map(|(i, &t)| match store.node(t) {
            Node::Lit(r) => r.to_i64().filter(|&c| c >= 1).map(|c| (i, c)),
            _ => None,
        })?;
    let mut rest: Vec<TermId> = terms.clone();
    if c == 1 {
        rest.remove(at);
    } else {
        rest[at] = store.int_lit(c - 1, ty.clone());
    }
    let sum = match rest.len() {
        1 => rest[0],
        _ => store.prim(Prim::Add, rest, ty),
    };
    let mut new = args.clone();
    new[side] = sum;
    let q = if *p == Prim::Le { Prim::Lt } else { Prim::Le };
    Some(store.prim(q, new, Type::Bool))
}

/// Whether `t` has a loop, memoised in `seen`.
fn loops_in(store: &Store, t: TermId, seen: &mut FxHashMap<TermId, bool>) -> bool {
    if let Some(&r) = seen.get(&t) {
        return r;
    }
    let node = store.node(t);
    let r = matches!(
        node,
        Node::Array(..) | Node::Summate(..) | Node::Product(..)
    ) || node
        .children()
        .iter()
        .any(|&c| stack::grow(|| loops_in(store, c, seen)));
    seen.insert(t, r);
    r
}
