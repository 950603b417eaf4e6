//! The *unproduct* operation (section 3.4 and Fig. 5 of the arrays paper): rewrite a
//! prob expression `e` as `e' · Π_{i<n} g(i, x[i])`, where `g` uses the array `x` one
//! element at a time (`ξ` stands for `x[i]`) and `e'` is whatever could not be split.
//!
//! It is what lets the simplifier integrate over an array `x` of symbolic size (the
//! integral of `Π_i g(i, x[i])` over `x` is `Π_i ∫ g(i, ξ) dξ`) and recognise an array
//! density as a `plate`. The walk goes top-down through a *heap*: the context of the
//! subterm in focus, kept as a stack of frames, each factoring either over
//! multiplication (mode ×: products, powers with a free exponent, the top) or over
//! addition (mode +: the argument of `exp`, the exponent of `c ** e`, sums):
//! `H×[e1·e2] = H×[e1]·H×[e2]` and `H+[e1+e2] = H+[e1]·H+[e2]`. A subterm that uses `x`
//! at one index `a` only gives `g(i, ξ) = H[if i == a: e(ξ) else: I]` (`I` the identity of
//! the hole's mode), which `sums::simplify_loops` then reduces: a loop over `j` whose
//! test `i == a(j)` can be solved for `j` becomes a let (`Π_j [i == j - 1] ..`), a
//! product of powers becomes a power of a sum, and an indirect test `i == y[j]` stays a
//! guarded sum per class (eq. (11)). Terms free of `x`, and terms that use it at several
//! indices and cannot be split, go to `e'`. An integral `if c: a else: b` inside a term
//! (a Gibbs update's label `if d == u: zNew else: z[d]`, read as an index or a loop
//! bound) is lifted to the term's level first, `e[if c: a else: b] = if c: e[a] else:
//! e[b]`, where `c` is total and both branches are defined on the heap's loops, so each
//! guarded term reads `x` at one plain index (issue 10, corpus case 19).
//!
//! Out-of-range indices: the rule `e(x[a]) = Π_{i<n} (if i == a: e(x[i]) else: 1)` holds
//! for `0 <= a < n`; indexing outside an array is an error in the reference semantics (a
//! program that does it has no meaning), so the rewrite keeps the meaning of every
//! program that has one. `size(x)` is `n`.
//!
//! Architecture invariant: `H[e] = e' · Π_{i<n} g(i, x[i])` holds for every value of the
//! free variables for which `e` is defined; `g` never mentions `x`. The walk is bounded
//! ([`MAX_NODES`]); past the budget the whole term goes to `e'`.

use crate::assume::Context;
use crate::num::Rational;
use crate::sums;
use crate::term::{Node, Prim, Store, TermId, VarId};
use crate::types::Type;
use crate::vars;

/// The most subterms one unproduct visits before it gives up (the term goes to `e'`).
const MAX_NODES: usize = 20_000;

/// `e = rest · Π_{index < size} body` with `body` mentioning the array only as `elem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unproduct {
    /// The part that could not be split (1 when everything was); may mention the array.
    pub rest: TermId,
    /// The index variable `i` of the product (fresh, nat).
    pub index: VarId,
    /// The variable `ξ` standing for `x[i]` (fresh, of the array's element type).
    pub elem: VarId,
    /// `g(i, ξ)`, prob, simplified by `sums::simplify_loops` under `0 <= i < size`.
    pub body: TermId,
}

/// A frame of the heap: the context around the hole, innermost last.
#[derive(Clone, Debug)]
enum Frame {
    /// `exp([])`: × outside, + inside.
    Exp,
    /// `c ** []` (`c` free of the array): × outside, + inside.
    PowBase(TermId),
    /// `[] ** c` or `[] ^ c`: × inside and outside.
    PowExp(Prim, TermId),
    /// `1 / []`: × inside and outside.
    Recip,
    /// `log([])` in mode +: × inside (`log(a·b) = log a + log b` for probs).
    Log,
    /// `c * []` in mode +.
    Scale(TermId),
    /// `-[]` in mode +.
    Neg,
    /// A safe coercion (it commutes with `+` and `·`).
    Coerce(crate::types::Coercion, Type),
    /// `product j from lo to hi: []` (mode ×).
    Prod(VarId, TermId, TermId),
    /// `summate j from lo to hi: []` (mode +).
    Sum(VarId, TermId, TermId),
    /// `if c: [] else: I` (either mode); `value` false means `if c: I else: []`.
    Guard(TermId, bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Times,
    Plus,
}

struct Walk<'a> {
    store: &'a mut Store,
    /// What is known of the free variables (the loops of the heap add their ranges).
    ctx: Context,
    x: VarId,
    size: TermId,
    index: VarId,
    elem: VarId,
    visited: usize,
    /// The parts that went to `e'`, each `H[e]` at the top level.
    rest: Vec<TermId>,
    /// The parts of `g`, each `H[if i == a: e(ξ) else: I]`.
    body: Vec<TermId>,
}

/// `e` (a prob term) as `rest · Π_{i < size} g(i, x[i])`; `x` has an array type. `ctx`
/// holds what is known of the free variables. `None` when no part of `e` depends on `x`
/// one element at a time (then nothing is gained).
pub fn unproduct(
    store: &mut Store,
    ctx: &Context,
    e: TermId,
    x: VarId,
    size: TermId,
) -> Option<Unproduct> {
    let elem_ty = match store.var_type(x) {
        Type::Array(t) => (**t).clone(),
        _ => return None,
    };
    let xname = store.var_name(x).to_string();
    let index = store.fresh_var("i", Type::Nat);
    let elem = store.fresh_var(&format!("{xname}_i"), elem_ty);
    let mut w = Walk {
        store,
        ctx: ctx.clone(),
        x,
        size,
        index,
        elem,
        visited: 0,
        rest: Vec::new(),
        body: Vec::new(),
    };
    let mut heap = Vec::new();
    w.go(e, &mut heap, Mode::Times);
    if w.body.is_empty() {
        return None;
    }
    let Walk {
        store, rest, body, ..
    } = w;
    let one = store.intern(Node::Lit(Rational::one()), Type::Prob);
    let rest = product(store, rest, one);
    let g = product(store, body, one);
    let inside = ctx.enter_index(store, index, size);
    let g = sums::simplify_loops(store, &inside, g);
    // a loop that closed inside a guard leaves `if c: (if d: e else: I) else: I`: one
    // test `c && d`, so the loop around it closes as one count
    let merged = merge_guards(store, g);
    let g = if merged == g {
        g
    } else {
        sums::simplify_loops(store, &inside, merged)
    };
    Some(Unproduct {
        rest,
        index,
        elem,
        body: g,
    })
}

fn product(store: &mut Store, mut fs: Vec<TermId>, one: TermId) -> TermId {
    match fs.len() {
        0 => one,
        1 => fs.pop().unwrap_or(one),
        _ => store.prim(Prim::Mul, fs, Type::Prob),
    }
}

impl Walk<'_> {
    fn mentions_x(&self, t: TermId) -> bool {
        vars::mentions(self.store, t, self.x)
    }

    fn go(&mut self, e: TermId, heap: &mut Vec<Frame>, mode: Mode) {
        self.visited += 1;
        if self.visited > MAX_NODES {
            let whole = self.plug(heap, e);
            self.rest.push(whole);
            return;
        }
        if !self.mentions_x(e) {
            let whole = self.plug(heap, e);
            self.rest.push(whole);
            return;
        }
        if let Some((c, a, b)) = self.liftable_choice(e, heap) {
            // `e[if c: a else: b] = if c: e[a] else: e[b]` (issue 10, corpus case 19): a
            // Gibbs update's label `if d == u: zNew else: z[d]`, read as an index or a
            // loop bound, becomes two guarded terms, each with one plain index, so the
            // counts are over the points other than u plus u's own term. Left inside,
            // the sums' "every point except u" (sums/except.rs) would write them as the
            // count over every point minus u's term, a difference that a family's
            // parameter cannot be proved positive with
            let choice = self
                .store
                .intern(Node::If(c, a, b), self.store.ty(a).clone());
            let (ea, eb) = (
                replace_subterm(self.store, e, choice, a),
                replace_subterm(self.store, e, choice, b),
            );
            self.under(Frame::Guard(c, true), ea, heap, mode);
            self.under(Frame::Guard(c, false), eb, heap, mode);
            return;
        }
        if let Some(at) = self.single_index(e) {
            self.single(e, at, heap, mode);
            return;
        }
        let node = self.store.node(e).clone();
        let ty = self.store.ty(e).clone();
        match (node, mode) {
            (Node::Prim(Prim::Mul, xs), Mode::Times) | (Node::Prim(Prim::Add, xs), Mode::Plus) => {
                for x in xs {
                    self.go(x, heap, mode);
                }
            }
            (Node::Prim(Prim::Mul, xs), Mode::Plus) => {
                // `c * e` with one factor using x
                let (uses, free): (Vec<TermId>, Vec<TermId>) =
                    xs.iter().partition(|&&f| self.mentions_x(f));
                if uses.len() != 1 {
                    self.fallback(e, heap);
                    return;
                }
                let c = match free.len() {
                    0 => None,
                    1 => Some(free[0]),
                    _ => Some(self.store.prim(Prim::Mul, free, ty)),
                };
                match c {
                    Some(c) => self.under(Frame::Scale(c), uses[0], heap, Mode::Plus),
                    None => self.go(uses[0], heap, Mode::Plus),
                }
            }
            (Node::Prim(Prim::Neg, xs), Mode::Plus) if xs.len() == 1 => {
                self.under(Frame::Neg, xs[0], heap, Mode::Plus)
            }
            (Node::Prim(Prim::Exp, xs), Mode::Times) if xs.len() == 1 => {
                self.under(Frame::Exp, xs[0], heap, Mode::Plus)
            }
            (Node::Prim(Prim::Recip, xs), Mode::Times) if xs.len() == 1 => {
                self.under(Frame::Recip, xs[0], heap, Mode::Times)
            }
            (Node::Prim(Prim::Log, xs), Mode::Plus) if xs.len() == 1 => {
                self.under(Frame::Log, xs[0], heap, Mode::Times)
            }
            (Node::Prim(p @ (Prim::RealPow | Prim::Pow), xs), Mode::Times) if xs.len() == 2 => {
                let (b, k) = (xs[0], xs[1]);
                match (self.mentions_x(b), self.mentions_x(k)) {
                    (true, false) => self.under(Frame::PowExp(p, k), b, heap, Mode::Times),
                    (false, true) if p == Prim::RealPow => {
                        self.under(Frame::PowBase(b), k, heap, Mode::Plus)
                    }
                    _ => self.fallback(e, heap),
                }
            }
            (Node::Coerce(k, a), _) if k.is_safe() => {
                self.under(Frame::Coerce(k, ty), a, heap, mode)
            }
            (Node::Product(j, lo, hi, body), Mode::Times)
                if !self.mentions_x(lo) && !self.mentions_x(hi) =>
            {
                self.under(Frame::Prod(j, lo, hi), body, heap, Mode::Times)
            }
            (Node::Summate(j, lo, hi, body), Mode::Plus)
                if !self.mentions_x(lo) && !self.mentions_x(hi) =>
            {
                self.under(Frame::Sum(j, lo, hi), body, heap, Mode::Plus)
            }
            (Node::If(c, a, b), _) if !self.mentions_x(c) => {
                self.under(Frame::Guard(c, true), a, heap, mode);
                self.under(Frame::Guard(c, false), b, heap, mode);
            }
            _ => self.fallback(e, heap),
        }
    }

    fn under(&mut self, f: Frame, e: TermId, heap: &mut Vec<Frame>, mode: Mode) {
        heap.push(f);
        self.go(e, heap, mode);
        heap.pop();
    }

    fn fallback(&mut self, e: TermId, heap: &[Frame]) {
        let whole = self.plug(heap, e);
        self.rest.push(whole);
    }

    /// `H[if i == a: e(ξ) else: I]`.
    fn single(&mut self, e: TermId, at: TermId, heap: &[Frame], mode: Mode) {
        let Some(e_xi) = self.replace(e, at) else {
            self.fallback(e, heap);
            return;
        };
        // where `i == a`, every other `a` in `e` is `i` too (`if y[j] + 1 == n` under
        // `i == y[j]` is `if i + 1 == n`, free of `j`, so the loop over `j` can close)
        let it = self.store.var_term(self.index);
        let e_xi = replace_subterm(self.store, e_xi, at, it);
        let ty = self.store.ty(e).clone();
        let identity = match mode {
            Mode::Times => Rational::one(),
            Mode::Plus => Rational::zero(),
        };
        let id = self.store.intern(Node::Lit(identity), ty.clone());
        if *self.store.ty(at) != Type::Nat {
            self.fallback(e, heap);
            return;
        }
        let test = self.store.prim(Prim::Eq, vec![it, at], Type::Bool);
        let hole = self.store.intern(Node::If(test, e_xi, id), ty);
        let g = self.plug(heap, hole);
        self.body.push(g);
    }

    /// An `if c: a else: b` of integral type inside `e` (not `e` itself) that may be
    /// lifted to `e`'s level: `c` is total (comparisons and arithmetic of variables, so
    /// evaluating it where `e` might not have is harmless) and free of `x`, no binder of
    /// `e` around it binds a variable of the `if` (so every occurrence is the same value,
    /// replaced at once), and both branches are defined at every point of the heap's
    /// loops (`z[d]` with `d` ranging over `z`). The last condition is about cost, not
    /// meaning: only there does the sums' split at u apply (it needs the same), and
    /// elsewhere (the GMM's `z[i]` over the points of `t`) the choice stays inside the
    /// count, one term instead of two. The first such `if` in a left-to-right walk.
    fn liftable_choice(&mut self, e: TermId, heap: &[Frame]) -> Option<(TermId, TermId, TermId)> {
        let mut found = Vec::new();
        self.find_choices(e, &mut Vec::new(), true, &mut found, 0);
        if found.is_empty() {
            return None;
        }
        let mut ctx = self.ctx.clone();
        for f in heap {
            match f {
                Frame::Prod(j, lo, hi) | Frame::Sum(j, lo, hi) => {
                    ctx = ctx.with_range(*j, *lo, *hi)
                }
                Frame::Guard(c, value) => ctx = ctx.with_condition(*c, *value),
                _ => {}
            }
        }
        found.into_iter().find(|&(_, a, b)| {
            sums::defined_everywhere(self.store, &ctx, a)
                && sums::defined_everywhere(self.store, &ctx, b)
        })
    }

    fn find_choices(
        &self,
        t: TermId,
        bound: &mut Vec<VarId>,
        top: bool,
        found: &mut Vec<(TermId, TermId, TermId)>,
        depth: u32,
    ) {
        if depth > MAX_LIFT_DEPTH || found.len() >= MAX_LIFT_CANDIDATES {
            return;
        }
        let node = self.store.node(t);
        if let Node::If(c, a, b) = *node {
            let clear = || !bound.iter().any(|&v| vars::mentions(self.store, t, v));
            if !top
                && self.store.ty(t).is_integral()
                && !self.mentions_x(c)
                && total_condition(self.store, c)
                && clear()
                && !found.contains(&(c, a, b))
            {
                found.push((c, a, b));
            }
        }
        for (k, ch) in node.children().iter().enumerate() {
            let before = bound.len();
            vars::bound_in(node, k, bound);
            self.find_choices(*ch, bound, false, found, depth + 1);
            bound.truncate(before);
        }
    }

    /// The one index at which `e` uses `x`, if every use is `x[a]` for the same `a`
    /// (or `size(x)`), and `a` mentions nothing bound inside `e`.
    fn single_index(&mut self, e: TermId) -> Option<TermId> {
        let mut at = None;
        let mut bound = Vec::new();
        if self.uses(e, &mut bound, &mut at) {
            at
        } else {
            None
        }
    }

    fn uses(&self, t: TermId, bound: &mut Vec<VarId>, at: &mut Option<TermId>) -> bool {
        if !self.mentions_x(t) {
            return true;
        }
        let node = self.store.node(t);
        match node {
            Node::Var(_) => false,
            Node::Index(a, k) if matches!(self.store.node(*a), Node::Var(v) if *v == self.x) => {
                if self.mentions_x(*k) || bound.iter().any(|&b| vars::mentions(self.store, *k, b)) {
                    return false;
                }
                match at {
                    Some(prev) => *prev == *k,
                    None => {
                        *at = Some(*k);
                        true
                    }
                }
            }
            Node::Prim(Prim::Size, xs)
                if xs.len() == 1
                    && matches!(self.store.node(xs[0]), Node::Var(v) if *v == self.x) =>
            {
                true
            }
            _ => {
                let ch = node.children();
                for (k, c) in ch.iter().enumerate() {
                    let before = bound.len();
                    vars::bound_in(node, k, bound);
                    let ok = self.uses(*c, bound, at);
                    bound.truncate(before);
                    if !ok {
                        return false;
                    }
                }
                true
            }
        }
    }

    /// `e` with `x[at]` replaced by `ξ` and `size(x)` by the size.
    fn replace(&mut self, t: TermId, at: TermId) -> Option<TermId> {
        if !self.mentions_x(t) {
            return Some(t);
        }
        let node = self.store.node(t).clone();
        match &node {
            Node::Index(a, k)
                if *k == at && matches!(self.store.node(*a), Node::Var(v) if *v == self.x) =>
            {
                return Some(self.store.var_term(self.elem));
            }
            Node::Prim(Prim::Size, xs)
                if xs.len() == 1
                    && matches!(self.store.node(xs[0]), Node::Var(v) if *v == self.x) =>
            {
                return Some(self.size);
            }
            Node::Var(_) => return None,
            _ => {}
        }
        let ch = node.children();
        let mut new = Vec::with_capacity(ch.len());
        for c in &ch {
            new.push(self.replace(*c, at)?);
        }
        let ty = self.store.ty(t).clone();
        Some(self.store.intern(node.with_children(&new), ty))
    }

    /// The heap with `e` in its hole.
    fn plug(&mut self, heap: &[Frame], e: TermId) -> TermId {
        // the mode in force just outside each frame (× at the top)
        let mut modes = Vec::with_capacity(heap.len());
        let mut mode = Mode::Times;
        for f in heap {
            modes.push(mode);
            mode = match f {
                Frame::Exp | Frame::PowBase(_) | Frame::Sum(..) | Frame::Scale(_) | Frame::Neg => {
                    Mode::Plus
                }
                Frame::PowExp(..) | Frame::Recip | Frame::Prod(..) | Frame::Log => Mode::Times,
                Frame::Coerce(..) | Frame::Guard(..) => mode,
            };
        }
        let mut t = e;
        for (f, outer) in heap.iter().zip(modes).rev() {
            let ty = self.store.ty(t).clone();
            t = match f {
                Frame::Exp => self.store.prim(Prim::Exp, vec![t], Type::Prob),
                Frame::PowBase(c) => self.store.prim(Prim::RealPow, vec![*c, t], Type::Prob),
                Frame::PowExp(p, c) => self.store.prim(*p, vec![t, *c], ty),
                Frame::Recip => self.store.prim(Prim::Recip, vec![t], ty),
                Frame::Log => self.store.prim(Prim::Log, vec![t], Type::Real),
                Frame::Scale(c) => self.store.prim(Prim::Mul, vec![*c, t], ty),
                Frame::Neg => self.store.prim(Prim::Neg, vec![t], ty),
                Frame::Coerce(k, to) => self.store.intern(Node::Coerce(*k, t), to.clone()),
                Frame::Prod(j, lo, hi) => self.store.intern(Node::Product(*j, *lo, *hi, t), ty),
                Frame::Sum(j, lo, hi) => self.store.intern(Node::Summate(*j, *lo, *hi, t), ty),
                Frame::Guard(c, value) => {
                    // a guard does not change the mode: its identity is the one in force
                    let v = match outer {
                        Mode::Times => Rational::one(),
                        Mode::Plus => Rational::zero(),
                    };
                    let id = self.store.intern(Node::Lit(v), ty.clone());
                    let c = if *value {
                        *c
                    } else {
                        self.store.prim(Prim::Not, vec![*c], Type::Bool)
                    };
                    // a guard around `if d: e else: I` is one test `c && d`, so a loop
                    // over it closes as one count (`Π_j [c && d] ξ = ξ ** Σ_j [c && d]`)
                    match *self.store.node(t) {
                        Node::If(d, e, other) if other == id => {
                            let both = self.store.prim(Prim::And, vec![c, d], Type::Bool);
                            self.store.intern(Node::If(both, e, id), ty)
                        }
                        _ => self.store.intern(Node::If(c, t, id), ty),
                    }
                }
            };
        }
        t
    }
}

/// How deep [`Walk::find_choices`] looks for an `if` to lift, and how many it collects
/// (bounds on the walk, not on correctness: an `if` past them is left where it is).
const MAX_LIFT_DEPTH: u32 = 32;
const MAX_LIFT_CANDIDATES: usize = 8;

/// Is the condition `c` defined whatever the values of its variables: comparisons and
/// logic over variables, literals, sums, products and `size`?
fn total_condition(store: &Store, c: TermId) -> bool {
    store.subterms(c).all(|t| match store.node(t) {
        Node::Var(_) | Node::Lit(_) | Node::Bool(_) => true,
        Node::Coerce(k, _) => k.is_safe(),
        Node::Prim(p, _) => matches!(
            p,
            Prim::Eq
                | Prim::Ne
                | Prim::Lt
                | Prim::Le
                | Prim::And
                | Prim::Or
                | Prim::Not
                | Prim::Add
                | Prim::Mul
                | Prim::Neg
                | Prim::Size
        ),
        _ => false,
    })
}

/// `t` with every `if c: (if d: e else: I) else: I` (`I` a literal) made
/// `if c && d: e else: I`.
fn merge_guards(store: &mut Store, t: TermId) -> TermId {
    let node = store.node(t).clone();
    let ch = node.children();
    if ch.is_empty() {
        return t;
    }
    let new: Vec<TermId> = ch.iter().map(|&c| merge_guards(store, c)).collect();
    let ty = store.ty(t).clone();
    let t = if new == ch {
        t
    } else {
        store.intern(node.with_children(&new), ty.clone())
    };
    if let Node::If(c, a, b) = *store.node(t) {
        if matches!(store.node(b), Node::Lit(_)) {
            if let Node::If(d, e, b2) = *store.node(a) {
                if b2 == b {
                    let both = store.prim(Prim::And, vec![c, d], Type::Bool);
                    return store.intern(Node::If(both, e, b), ty);
                }
            }
        }
    }
    t
}

/// `t` with every occurrence of the term `from` replaced by `to` (the caller makes sure
/// no binder inside `t` binds a variable of `from`).
fn replace_subterm(store: &mut Store, t: TermId, from: TermId, to: TermId) -> TermId {
    if t == from {
        return to;
    }
    let node = store.node(t).clone();
    let ch = node.children();
    if ch.is_empty() {
        return t;
    }
    let new: Vec<TermId> = ch
        .iter()
        .map(|&c| replace_subterm(store, c, from, to))
        .collect();
    if new == ch {
        return t;
    }
    let ty = store.ty(t).clone();
    store.intern(node.with_children(&new), ty)
}

#[cfg(test)]
mod tests;
