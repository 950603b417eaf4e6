//! Conditions: canonical forms of boolean terms, and deciding them under a [`Context`].
//!
//! Simplification needs to know when two conditions are the same (`i < n` and
//! `not(n <= i)`), and which conditions the context already settles (inside
//! `summate i from 0 to n`, `i < n` is true). This module gives conditions one canonical
//! shape ([`canonical`]) and answers true/false/unknown ([`decide`]); `piecewise` and
//! `solve` build on it. It treats numeric subterms only through their linear form
//! ([`linear`]): it never rewrites inside atoms (that is `canon`'s job), and it must never
//! decide a condition wrongly: `Unknown` is always an allowed answer.
//!
//! # The canonical shape
//! [`canonical`] returns an elaborated-normal bool term (it prints and parses back):
//! - `&&`/`||` flattened, operands sorted by [`order::compare`], duplicates removed,
//!   `true`/`false` folded (`x && false` is `false`), `a && not(a)` is `false` and
//!   `a || not(a)` is `true` for non-compound `a`; a one-operand chain is its operand;
//! - `not` pushed to the leaves (De Morgan), double negation removed; what remains under a
//!   `not` is a bool atom (a variable, `b[i]`, an application, ...); `impl`, `nand`, `nor`
//!   are rewritten with `&&`, `||`, `not`; `xor`/`iff` and `==`/`/=` on bools become
//!   `a /= b` / `a == b` with sorted operands, a constant operand folded (`b == true` is b);
//! - a numeric comparison `a OP b` is read as `L OP 0` with `L = a - b` linear
//!   ([`linear_form`]), scaled by a positive factor so its coefficients are coprime
//!   integers; when every atom is integral (nat/int) the constant is tightened and `<`
//!   becomes `<=` (`i < n` is `i + 1 <= n`, `2*i <= 3` is `i <= 1`, `2*i == 3` is `false`);
//!   `==`/`/=` are oriented so the first atom (in [`order::compare`] order) has a positive
//!   coefficient; `not` flips the relation (`not(a < b)` is `b <= a`, `not(a == b)` is
//!   `a /= b`). It is written `P + c OP N` (or `P OP N + c`): P the atoms with positive
//!   coefficients, N the others negated, the constant on the side where it is positive,
//!   each side a sum of atoms (in order) then the constant, both sides at the join of the
//!   atoms' types (nat if all atoms are nat); comparisons of constants are evaluated; a
//!   comparison with `∞` as a term of either side is left as written (an opaque atom);
//! - a bool `if c: a else: b` has canonical parts, folds to `&&`/`||` when a branch is a
//!   constant, and has a condition that is not a `not` or a `/=` (the branches swap).
//!
//! [`canonical`] also replaces each comparison and atom that the context decides by its
//! value. It is idempotent (under the same context).

mod decide;
pub mod linear;
#[cfg(test)]
pub(crate) mod tests;

use crate::assume::{Context, Tri};
use crate::num::Rational;
use crate::order;
use crate::term::{Node, Prim, Store, TermId};
use crate::types::Type;
use decide::Knowledge;
pub use linear::{linear_form, strip_safe, Linear};

/// The relation of a normalised comparison `form REL 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rel {
    /// `form <= 0`
    Le,
    /// `form < 0` (only when some atom is not integral: integral ones use `Le`)
    Lt,
    /// `form == 0`
    Eq,
    /// `form /= 0`
    Ne,
}

impl Rel {
    fn prim(self) -> Prim {
        match self {
            Rel::Le => Prim::Le,
            Rel::Lt => Prim::Lt,
            Rel::Eq => Prim::Eq,
            Rel::Ne => Prim::Ne,
        }
    }

    /// Does `c REL 0` hold?
    fn holds(self, c: &Rational) -> bool {
        match self {
            Rel::Le => c.is_negative() || c.is_zero(),
            Rel::Lt => c.is_negative(),
            Rel::Eq => c.is_zero(),
            Rel::Ne => !c.is_zero(),
        }
    }
}

/// A normalised numeric comparison `lin REL 0` (see the module doc for the normalisation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Comparison {
    pub rel: Rel,
    pub lin: Linear,
}

impl Comparison {
    /// Normalises `lin REL 0`: `Err(value)` when it has no atoms (or is decided by
    /// integrality, like `2*i == 3`), else the normal comparison.
    pub fn new(store: &Store, rel: Rel, lin: Linear) -> Result<Comparison, bool> {
        if lin.is_constant() {
            return Err(rel.holds(&lin.constant));
        }
        let mut lin = lin.scale(&lin.primitive_factor());
        let mut rel = rel;
        if matches!(rel, Rel::Eq | Rel::Ne) && lin.terms.first().is_some_and(|t| t.1.is_negative())
        {
            lin = lin.scale(&-Rational::one());
        }
        if lin.is_integral(store) {
            let c = lin.constant.clone();
            match rel {
                Rel::Le => lin.constant = c.ceil(),
                Rel::Lt => {
                    rel = Rel::Le;
                    lin.constant = c.floor() + Rational::one();
                }
                Rel::Eq | Rel::Ne if !c.is_integer() => return Err(rel == Rel::Ne),
                Rel::Eq | Rel::Ne => {}
            }
        }
        Ok(Comparison { rel, lin })
    }

    /// Reads a numeric comparison term (`Lt`, `Le`, `Eq`, `Ne` on numbers) and
    /// normalises it; `None` for any other term.
    pub fn of_term(store: &mut Store, t: TermId) -> Option<Result<Comparison, bool>> {
        let (rel, a, b) = match store.node(t) {
            Node::Prim(p, xs) if xs.len() == 2 && store.ty(xs[0]).is_numeric() => {
                let rel = match p {
                    Prim::Le => Rel::Le,
                    Prim::Lt => Rel::Lt,
                    Prim::Eq => Rel::Eq,
                    Prim::Ne => Rel::Ne,
                    _ => return None,
                };
                (rel, xs[0], xs[1])
            }
            _ => return None,
        };
        let la = linear_form(store, a);
        let lb = linear_form(store, b);
        let lin = la.sub(store, &lb);
        let infinite = |l: &Linear| {
            l.terms
                .iter()
                .any(|&(x, _)| matches!(store.node(x), Node::Prim(Prim::Infinity, _)))
        };
        if infinite(&la) || infinite(&lb) {
            // `x + ∞ < ∞ + 1` is not `x < 1`: comparisons with ∞ stay as written
            return None;
        }
        Some(Comparison::new(store, rel, lin))
    }

    /// The negation: `not(L <= 0)` is `-L < 0`, `not(L == 0)` is `L /= 0`, normalised.
    pub fn negate(&self, store: &Store) -> Result<Comparison, bool> {
        let minus = -Rational::one();
        let (rel, lin) = match self.rel {
            Rel::Le => (Rel::Lt, self.lin.scale(&minus)),
            Rel::Lt => (Rel::Le, self.lin.scale(&minus)),
            Rel::Eq => (Rel::Ne, self.lin.clone()),
            Rel::Ne => (Rel::Eq, self.lin.clone()),
        };
        Comparison::new(store, rel, lin)
    }

    /// The canonical term `P + c REL N` (see the module doc).
    pub fn to_term(&self, store: &mut Store) -> TermId {
        let zero = Rational::zero();
        let mut pos = Linear::constant(zero.clone());
        let mut neg = Linear::constant(zero);
        let mut w = Type::Nat;
        for (a, c) in &self.lin.terms {
            w = w.numeric_join(store.ty(*a)).unwrap_or(Type::Real);
            if c.is_negative() {
                neg.terms.push((*a, -c));
            } else {
                pos.terms.push((*a, c.clone()));
            }
        }
        let c = &self.lin.constant;
        if !c.is_integer() {
            w = w.field_above().unwrap_or(Type::Real);
        }
        if c.is_negative() {
            neg.constant = -c;
        } else {
            pos.constant = c.clone();
        }
        let lhs = pos.to_term(store, &w);
        let rhs = neg.to_term(store, &w);
        store.prim(self.rel.prim(), vec![lhs, rhs], Type::Bool)
    }
}

/// The canonical form of the bool term `c` under `ctx` (see the module doc).
pub fn canonical(store: &mut Store, ctx: &Context, c: TermId) -> TermId {
    let key = (ctx.facts().to_vec(), c);
    if let Some(&r) = store.cond_memo.get(&key) {
        return r;
    }
    let mut n = Norm::new(store);
    let t = n.norm(c, false);
    let kb = knowledge(&mut n, ctx);
    let r = if kb.inconsistent {
        t
    } else {
        kb.simplify(&mut n, t)
    };
    if store.cond_memo.len() >= NORM_CACHE {
        store.cond_memo.clear();
    }
    store.cond_memo.insert(key, r);
    r
}

/// The canonical form of the conjunction of `conds` under `ctx` (`true` when empty).
pub fn and(store: &mut Store, ctx: &Context, conds: Vec<TermId>) -> TermId {
    let t = match conds.len() {
        0 => store.intern(Node::Bool(true), Type::Bool),
        1 => conds[0],
        _ => store.prim(Prim::And, conds, Type::Bool),
    };
    canonical(store, ctx, t)
}

/// The canonical form of `not(c)` (no context).
pub fn negate(store: &mut Store, c: TermId) -> TermId {
    Norm::new(store).norm(c, true)
}

/// Decides the bool term `c` under `ctx`: `True`/`False` only when that holds for every
/// assignment of the free variables consistent with `ctx` (types, ranges, conditions);
/// `Unknown` otherwise. See `cond/decide.rs` for exactly what is decided.
pub fn decide(store: &mut Store, ctx: &Context, c: TermId) -> Tri {
    let key = (ctx.facts().to_vec(), c);
    if let Some(&r) = store.decide_memo.get(&key) {
        return r;
    }
    let mut n = Norm::new(store);
    let t = n.norm(c, false);
    let kb = knowledge(&mut n, ctx);
    let r = if kb.inconsistent {
        Tri::Unknown
    } else {
        kb.eval(&mut n, t)
    };
    if store.decide_memo.len() >= NORM_CACHE {
        store.decide_memo.clear();
    }
    store.decide_memo.insert(key, r);
    r
}

/// How many structural normal forms of conditions the store keeps before it starts over.
const NORM_CACHE: usize = 1 << 16;

/// How many contexts' readings the store keeps before it starts over.
const KNOWLEDGE_CACHE: usize = 4096;

/// What `ctx` says, read once per distinct list of facts (`Store::knowledge`).
fn knowledge(n: &mut Norm, ctx: &Context) -> std::sync::Arc<Knowledge> {
    if let Some(k) = n.store.knowledge.get(ctx.facts()) {
        if let Ok(k) = k.clone().downcast::<Knowledge>() {
            return k;
        }
    }
    let kb = std::sync::Arc::new(Knowledge::new(n, ctx));
    if n.store.knowledge.len() >= KNOWLEDGE_CACHE {
        n.store.knowledge.clear();
    }
    n.store.knowledge.insert(
        ctx.facts().to_vec(),
        kb.clone() as std::sync::Arc<dyn std::any::Any + Send + Sync>,
    );
    kb
}

/// The structural normaliser (no context).
pub(crate) struct Norm<'s> {
    pub(crate) store: &'s mut Store,
    /// Results so far: shared subterms are normalised once (terms are DAGs).
    memo: rustc_hash::FxHashMap<(TermId, bool), TermId>,
}

impl<'s> Norm<'s> {
    pub(crate) fn new(store: &'s mut Store) -> Norm<'s> {
        Norm {
            store,
            memo: Default::default(),
        }
    }
}

impl Norm<'_> {
    pub(crate) fn bool(&mut self, b: bool) -> TermId {
        self.store.intern(Node::Bool(b), Type::Bool)
    }

    fn const_of(&self, t: TermId) -> Option<bool> {
        match self.store.node(t) {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The canonical form of `t` (or of `not t` when `neg`).
    pub(crate) fn norm(&mut self, t: TermId, neg: bool) -> TermId {
        if let Some(&r) = self.memo.get(&(t, neg)) {
            return r;
        }
        if let Some(&r) = self.store.norm_memo.get(&(t, neg)) {
            return r;
        }
        let r = crate::stack::grow(|| self.norm_here(t, neg));
        self.memo.insert((t, neg), r);
        if self.store.norm_memo.len() >= NORM_CACHE {
            self.store.norm_memo.clear();
        }
        self.store.norm_memo.insert((t, neg), r);
        r
    }

    fn norm_here(&mut self, t: TermId, neg: bool) -> TermId {
        let node = self.store.node(t).clone();
        match node {
            Node::Bool(b) => self.bool(b != neg),
            Node::Prim(p, xs) => match (p, xs.as_slice()) {
                (Prim::Not, &[x]) => self.norm(x, !neg),
                (Prim::And | Prim::Or, _) => {
                    let ops: Vec<TermId> = xs.iter().map(|&x| self.norm(x, neg)).collect();
                    self.junction((p == Prim::And) != neg, ops)
                }
                (Prim::Impl, &[a, b]) => {
                    let ops = vec![self.norm(a, !neg), self.norm(b, neg)];
                    self.junction(neg, ops)
                }
                (Prim::Nand | Prim::Nor, &[a, b]) => {
                    let ops = vec![self.norm(a, !neg), self.norm(b, !neg)];
                    self.junction((p == Prim::Nor) != neg, ops)
                }
                (Prim::Xor | Prim::Iff, &[a, b]) => self.bool_eq(a, b, (p == Prim::Iff) != neg),
                (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne, &[a, _])
                    if self.store.ty(a).is_numeric() =>
                {
                    match Comparison::of_term(self.store, t) {
                        Some(Ok(cmp)) => {
                            let cmp = if neg { cmp.negate(self.store) } else { Ok(cmp) };
                            match cmp {
                                Ok(cmp) => cmp.to_term(self.store),
                                Err(b) => self.bool(b),
                            }
                        }
                        Some(Err(b)) => self.bool(b != neg),
                        None => self.atom(t, neg),
                    }
                }
                (Prim::Eq | Prim::Ne, &[a, b]) if *self.store.ty(a) == Type::Bool => {
                    self.bool_eq(a, b, (p == Prim::Eq) != neg)
                }
                (Prim::Eq | Prim::Ne, &[a, _]) if *self.store.ty(a) == Type::Unit => {
                    self.bool((p == Prim::Eq) != neg)
                }
                _ => self.atom(t, neg),
            },
            Node::If(c, a, b) if *self.store.ty(t) == Type::Bool => {
                let c = self.norm(c, false);
                let a = self.norm(a, neg);
                let b = self.norm(b, neg);
                self.bool_if(c, a, b)
            }
            _ => self.atom(t, neg),
        }
    }

    fn atom(&mut self, t: TermId, neg: bool) -> TermId {
        if neg {
            self.store.prim(Prim::Not, vec![t], Type::Bool)
        } else {
            t
        }
    }

    /// `a == b` (or `a /= b` when not `equal`) on bools.
    fn bool_eq(&mut self, a: TermId, b: TermId, equal: bool) -> TermId {
        let a = self.norm(a, false);
        let b = self.norm(b, false);
        if let Some(x) = self.const_of(a) {
            return self.norm(b, x != equal);
        }
        if let Some(x) = self.const_of(b) {
            return self.norm(a, x != equal);
        }
        if a == b {
            return self.bool(equal);
        }
        let (a, b) = match order::compare(self.store, a, b) {
            std::cmp::Ordering::Greater => (b, a),
            _ => (a, b),
        };
        let p = if equal { Prim::Eq } else { Prim::Ne };
        self.store.prim(p, vec![a, b], Type::Bool)
    }

    /// `if c: a else: b` on canonical bool parts.
    pub(crate) fn bool_if(&mut self, c: TermId, a: TermId, b: TermId) -> TermId {
        if let Some(x) = self.const_of(c) {
            return if x { a } else { b };
        }
        if a == b {
            return a;
        }
        match (self.const_of(a), self.const_of(b)) {
            (Some(true), Some(false)) => c,
            (Some(false), Some(true)) => self.norm(c, true),
            (Some(true), _) => self.junction(false, vec![c, b]),
            (Some(false), _) => {
                let nc = self.norm(c, true);
                self.junction(true, vec![nc, b])
            }
            (_, Some(true)) => {
                let nc = self.norm(c, true);
                self.junction(false, vec![nc, a])
            }
            (_, Some(false)) => self.junction(true, vec![c, a]),
            (None, None) => {
                if is_negative_form(self.store, c) {
                    let nc = self.norm(c, true);
                    self.store.intern(Node::If(nc, b, a), Type::Bool)
                } else {
                    self.store.intern(Node::If(c, a, b), Type::Bool)
                }
            }
        }
    }

    /// `&&` (`conj`) or `||` of canonical operands, flattened, sorted, folded.
    pub(crate) fn junction(&mut self, conj: bool, ops: Vec<TermId>) -> TermId {
        let (me, unit) = if conj {
            (Prim::And, true)
        } else {
            (Prim::Or, false)
        };
        let mut flat = Vec::with_capacity(ops.len());
        for op in ops {
            match self.store.node(op) {
                Node::Prim(p, ys) if *p == me => flat.extend(ys.iter().copied()),
                Node::Bool(b) if *b == unit => {}
                Node::Bool(_) => return self.bool(!unit),
                _ => flat.push(op),
            }
        }
        flat.sort_by(|&x, &y| order::compare(self.store, x, y));
        flat.dedup();
        let set: rustc_hash::FxHashSet<TermId> = flat.iter().copied().collect();
        for &op in &flat {
            let compound = matches!(self.store.node(op), Node::Prim(Prim::And | Prim::Or, _));
            if !compound && set.contains(&self.norm(op, true)) {
                return self.bool(!unit);
            }
        }
        // absorption: `a && (a || b)` is `a`, `a || (a && b)` is `a`
        flat.retain(|&op| match self.store.node(op) {
            Node::Prim(_, ys) if is_junction(self.store, op) => !ys.iter().any(|y| set.contains(y)),
            _ => true,
        });
        match flat.len() {
            0 => self.bool(unit),
            1 => flat[0],
            _ => self.store.prim(me, flat, Type::Bool),
        }
    }
}

/// Is `t` an `&&` or `||` chain?
fn is_junction(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Prim(Prim::And | Prim::Or, _))
}

/// Is `c` a negated form (`not x`, `a /= b`) that a piecewise condition is not kept in?
pub(crate) fn is_negative_form(store: &Store, c: TermId) -> bool {
    matches!(store.node(c), Node::Prim(Prim::Not | Prim::Ne, _))
}
