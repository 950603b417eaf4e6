//! Deciding canonical conditions under a context: what the context knows
//! ([`Knowledge`]) and the proof search over it.
//!
//! # What is decided
//! A context's facts are read once into a set of known canonical literals (a
//! `Fact::Holds` condition, or its negation when its value is false, split at `&&`; a
//! `Fact::Range { var, lo, hi }` as the two literals `lo <= var` and `var < hi`), a list
//! of linear facts (the known `<=`, `<`, `==` comparisons) and an interval per atom (from
//! its type: nat and prob are `>= 0`; and from known comparisons of that atom alone with a
//! constant, such as `i <= 9` or `x == 2`).
//!
//! A canonical condition is then evaluated bottom-up (`&&`, `||`, `if` by three-valued
//! logic); a literal (comparison, bool atom, `not` of an atom) is:
//! 1. true if it is a known literal, false if its canonical negation is one;
//! 2. for a comparison `Q REL 0`: `Q <= 0` is proved when the interval of `Q` (from the
//!    atoms' intervals) lies in `(-∞, 0]`, or when for one linear fact `M REL' 0` and one
//!    multiplier λ (chosen to cancel an atom of `Q`; λ > 0, or any sign for an equality)
//!    the interval of `Q - λM` lies in `(-∞, 0]`; `Q < 0` likewise with a strict bound, and
//!    for integer-valued `Q` as `Q + 1 <= 0`; `==` is two `<=`, false when either strict
//!    inequality is proved; `/=` is the negation of `==`.
//!
//! # What is left Unknown
//! Anything needing two or more relational facts at once (`i < n`, `n <= m` do not give
//! `i < m`), a bound on an atom that follows only from a relational fact (`x <= y` and
//! `y <= 3` give no interval for x), products and other non-linear atoms beyond their type
//! (`x * y` is an opaque atom; its bound is only from its type), strictness of atom bounds
//! (`x < 3` for real x is used as `x <= 3`), disjunctive facts (a known `a || b` helps
//! only for that exact condition), and every question under an inconsistent context
//! (one whose facts contradict each other by the checks above). Values are assumed finite.

use rustc_hash::{FxHashMap, FxHashSet};

use super::{Comparison, Linear, Norm, Rel};
use crate::assume::{Context, Fact, Tri};
use crate::num::Rational;
use crate::term::{Node, Prim, Store, TermId};

/// A closed interval; `None` is unbounded on that side.
#[derive(Clone, Debug, Default)]
struct Interval {
    lo: Option<Rational>,
    hi: Option<Rational>,
}

/// What a context knows, read into a form the proof search uses.
pub(crate) struct Knowledge {
    known: FxHashSet<TermId>,
    facts: Vec<Comparison>,
    bounds: FxHashMap<TermId, Interval>,
    /// The facts contradict each other: every question is answered Unknown.
    pub(crate) inconsistent: bool,
}

impl Knowledge {
    pub(crate) fn new(n: &mut Norm, ctx: &Context) -> Knowledge {
        let mut kb = Knowledge {
            known: FxHashSet::default(),
            facts: Vec::new(),
            bounds: FxHashMap::default(),
            inconsistent: false,
        };
        for fact in ctx.facts() {
            match fact {
                Fact::Range { var, lo, hi } => {
                    let v = n.store.var_term(*var);
                    let lv = super::linear_form(n.store, v);
                    let llo = super::linear_form(n.store, *lo);
                    let lhi = super::linear_form(n.store, *hi);
                    // a loop up to `int2nat(e)` runs only where `e >= 0`, and there its
                    // bound is `e` too (a plate of `int2nat(n - 1)` has `i + 1 < n`)
                    if let Node::Coerce(crate::types::Coercion::Int2Nat, e) = *n.store.node(*hi) {
                        let le = super::linear_form(n.store, e);
                        let zero = Linear::constant(Rational::zero());
                        let nonneg = zero.sub(n.store, &le);
                        let above = lv.sub(n.store, &le);
                        for (rel, lin) in [(Rel::Le, nonneg), (Rel::Lt, above)] {
                            if let Ok(cmp) = Comparison::new(n.store, rel, lin) {
                                let t = cmp.to_term(n.store);
                                kb.add(n, t);
                            }
                        }
                    }
                    let below = llo.sub(n.store, &lv);
                    let above = lv.sub(n.store, &lhi);
                    for (rel, lin) in [(Rel::Le, below), (Rel::Lt, above)] {
                        match Comparison::new(n.store, rel, lin) {
                            Ok(cmp) => {
                                let t = cmp.to_term(n.store);
                                kb.add(n, t);
                            }
                            Err(b) => kb.inconsistent |= !b,
                        }
                    }
                }
                Fact::Holds { cond, value } => {
                    let t = n.norm(*cond, !*value);
                    kb.add(n, t);
                }
            }
        }
        let empty = kb.bounds.keys().any(|&a| {
            let iv = kb.interval(n.store, a);
            matches!((&iv.lo, &iv.hi), (Some(lo), Some(hi)) if lo > hi)
        });
        if empty {
            kb.inconsistent = true;
        }
        kb
    }

    /// Records a canonical condition known to be true.
    fn add(&mut self, n: &mut Norm, t: TermId) {
        match n.store.node(t).clone() {
            Node::Bool(true) => {}
            Node::Bool(false) => self.inconsistent = true,
            Node::Prim(Prim::And, xs) => {
                for x in xs {
                    self.add(n, x);
                }
            }
            _ => {
                if !self.known.insert(t) {
                    return;
                }
                if let Some(Ok(cmp)) = Comparison::of_term(n.store, t) {
                    if cmp.rel != Rel::Ne {
                        self.bound_from(&cmp);
                        self.facts.push(cmp);
                    }
                }
            }
        }
    }

    /// A fact `c * a + d REL 0` on one atom bounds that atom.
    fn bound_from(&mut self, cmp: &Comparison) {
        let [(a, c)] = cmp.lin.terms.as_slice() else {
            return;
        };
        let Some(r) = c.recip() else { return };
        let value = -(&cmp.lin.constant * &r);
        let iv = self.bounds.entry(*a).or_default();
        let upper = cmp.rel == Rel::Eq || !c.is_negative();
        let lower = cmp.rel == Rel::Eq || c.is_negative();
        if upper && iv.hi.as_ref().is_none_or(|h| &value < h) {
            iv.hi = Some(value.clone());
        }
        if lower && iv.lo.as_ref().is_none_or(|l| &value > l) {
            iv.lo = Some(value);
        }
    }

    fn interval(&self, store: &Store, a: TermId) -> Interval {
        let mut iv = self.bounds.get(&a).cloned().unwrap_or_default();
        if crate::assume::evidently_nonnegative(store, a)
            && iv.lo.as_ref().is_none_or(|l| l.is_negative())
        {
            iv.lo = Some(Rational::zero());
        }
        iv
    }

    /// The least upper bound of a linear form over the atoms' intervals (`None`: unbounded).
    fn sup(&self, store: &Store, l: &Linear) -> Option<Rational> {
        let mut s = l.constant.clone();
        for (a, c) in &l.terms {
            let iv = self.interval(store, *a);
            let end = if c.is_negative() { iv.lo } else { iv.hi };
            s += c * &end?;
        }
        Some(s)
    }

    /// The multipliers λ that cancel one atom of `q` against fact `f`.
    fn lambdas(q: &Linear, f: &Comparison) -> Vec<Rational> {
        let mut out: Vec<Rational> = Vec::new();
        for (a, qa) in &q.terms {
            let fa = f.lin.coeff(*a);
            let Some(r) = fa.recip() else { continue };
            let l = qa * &r;
            if (f.rel == Rel::Eq || !l.is_negative()) && !out.contains(&l) {
                out.push(l);
            }
        }
        out
    }

    /// Is `q <= 0` (or `q < 0` when `strict`) provable?
    fn prove(&self, store: &Store, q: &Linear, strict: bool) -> bool {
        if strict && q.is_integral(store) && q.constant.is_integer() {
            let q1 = Linear {
                constant: &q.constant + &Rational::one(),
                terms: q.terms.clone(),
            };
            return self.prove(store, &q1, false);
        }
        let ok = |s: Option<Rational>, strict_fact: bool| match s {
            Some(s) if strict && !strict_fact => s.is_negative(),
            Some(s) => s.is_negative() || s.is_zero(),
            None => false,
        };
        if ok(self.sup(store, q), false) {
            return true;
        }
        self.facts.iter().any(|f| {
            Self::lambdas(q, f).iter().any(|l| {
                let r = q.add_scaled(store, &f.lin, &-l);
                ok(self.sup(store, &r), f.rel == Rel::Lt)
            })
        })
    }

    fn decide_cmp(&self, store: &Store, cmp: &Comparison) -> Tri {
        let q = &cmp.lin;
        let mq = q.scale(&-Rational::one());
        let eq = || {
            if self.prove(store, q, false) && self.prove(store, &mq, false) {
                Tri::True
            } else if self.prove(store, q, true) || self.prove(store, &mq, true) {
                Tri::False
            } else {
                Tri::Unknown
            }
        };
        match cmp.rel {
            Rel::Le | Rel::Lt => {
                let strict = cmp.rel == Rel::Lt;
                if self.prove(store, q, strict) {
                    Tri::True
                } else if self.prove(store, &mq, !strict) {
                    Tri::False
                } else {
                    Tri::Unknown
                }
            }
            Rel::Eq => eq(),
            Rel::Ne => !eq(),
        }
    }

    /// The value of a canonical condition.
    pub(crate) fn eval(&self, n: &mut Norm, t: TermId) -> Tri {
        crate::stack::grow(|| self.eval_here(n, t))
    }

    fn eval_here(&self, n: &mut Norm, t: TermId) -> Tri {
        let node = n.store.node(t).clone();
        match node {
            Node::Bool(b) => return Tri::from_bool(b),
            Node::Prim(Prim::And, xs) | Node::Prim(Prim::Or, xs) => {
                let conj = matches!(n.store.node(t), Node::Prim(Prim::And, _));
                if self.known.contains(&t) {
                    return Tri::True;
                }
                let mut all = Tri::from_bool(conj);
                for x in xs {
                    match (self.eval(n, x), conj) {
                        (Tri::False, true) => return Tri::False,
                        (Tri::True, false) => return Tri::True,
                        (Tri::Unknown, _) => all = Tri::Unknown,
                        _ => {}
                    }
                }
                return all;
            }
            Node::If(c, a, b) => {
                return match self.eval(n, c) {
                    Tri::True => self.eval(n, a),
                    Tri::False => self.eval(n, b),
                    Tri::Unknown => match (self.eval(n, a), self.eval(n, b)) {
                        (x, y) if x == y => x,
                        _ => Tri::Unknown,
                    },
                }
            }
            _ => {}
        }
        if self.known.contains(&t) {
            return Tri::True;
        }
        let neg = n.norm(t, true);
        if self.known.contains(&neg) {
            return Tri::False;
        }
        match Comparison::of_term(n.store, t) {
            Some(Ok(cmp)) => self.decide_cmp(n.store, &cmp),
            Some(Err(b)) => Tri::from_bool(b),
            None => Tri::Unknown,
        }
    }

    /// `t` with every literal this knowledge decides replaced by its value, re-normalised.
    pub(crate) fn simplify(&self, n: &mut Norm, t: TermId) -> TermId {
        crate::stack::grow(|| self.simplify_here(n, t))
    }

    fn simplify_here(&self, n: &mut Norm, t: TermId) -> TermId {
        match n.store.node(t).clone() {
            Node::Prim(p @ (Prim::And | Prim::Or), xs) => {
                let ops = xs.iter().map(|&x| self.simplify(n, x)).collect();
                n.junction(p == Prim::And, ops)
            }
            Node::If(c, a, b) => {
                let c = self.simplify(n, c);
                let a = self.simplify(n, a);
                let b = self.simplify(n, b);
                n.bool_if(c, a, b)
            }
            _ => match self.eval(n, t) {
                Tri::True => n.bool(true),
                Tri::False => n.bool(false),
                Tri::Unknown => t,
            },
        }
    }
}
