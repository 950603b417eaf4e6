//! "Every point but one" for products (issue 10, the paper's section 3.2 steps 5-7): a
//! product whose body is one thing at a single point `a` and another everywhere else,
//!
//! `Π_{lo<=i<hi} (if i == a: f(i) else: g(i)) = (Π_{lo<=i<hi} g(i)) · (if lo <= a < hi: f(a) / g(a) else: 1)`,
//!
//! which is what integrating an array out element by element leaves when a later draw
//! reads it at a random index (case 15's new point `t <~ normal(xs[z], 1)`: every class
//! but `z` contributes its evidence, class `z` its evidence with `t` added). The loop
//! over every point is shared by every value of `a`, and the correction at `a` is a
//! scalar term that the rest of the simplifier can read (a normal kernel in `t`).
//!
//! The rewrite divides by `g(a)`, so it is made only where `g(a)` is proved positive and
//! defined under `lo <= a < hi` (this file's small prover: positive literals, `exp`,
//! `pi`, sums of non-negative terms one of which is positive, products, quotients, roots
//! and powers of positive terms, `Γ` and `B` of positive arguments, array reads whose
//! index is proved in bounds or that `f(a)` makes as well, and else `cond::decide(0 <
//! x)`), the divisors that `f(a)` always evaluates being taken as nonzero (where the
//! point is in range the input evaluates `f(a)`); otherwise the product is left as it
//! was. `Π_i (if i == a: 1 else: g(i))` (a guard whose negation solves for
//! the index) is the case `f = 1`. This file only rewrites; the loop over `g` is closed
//! by the ordinary `product` of the parent module.

use super::{Loop, Parts, MAX_DEPTH};
use crate::assume::{Context, Tri};
use crate::canon::{Normal, Overflow};
use crate::cond;
use crate::solve::solve_linear;
use crate::term::{Node, Prim, Store, TermId, VarId};
use crate::types::{Coercion, Type};
use crate::vars;

/// How deeply the positivity and definedness prover below descends into a term.
const MAX_PROOF_DEPTH: u32 = 48;

impl Loop<'_, '_> {
    /// `Π_i (if c: at(i) else: elsewhere(i))^e` by the one-point rule, where `c` is an
    /// equation that solves for the index; `None` when it is not, or when
    /// `elsewhere(a)` is not proved positive and defined at the point.
    pub(super) fn one_point(
        &mut self,
        c: TermId,
        at: TermId,
        elsewhere: TermId,
        e: u32,
        depth: u32,
    ) -> Result<Option<Parts>, Overflow> {
        if depth >= MAX_DEPTH || !matches!(self.cx.store().node(c), Node::Prim(Prim::Eq, _)) {
            return Ok(None);
        }
        let inside = self.inside.clone();
        let var = self.var;
        let Some(sol) = solve_linear(self.store(), &inside, c, var) else {
            return Ok(None);
        };
        let outside = self.outside.clone();
        let cond = cond::and(self.store(), &outside, vec![sol.condition]);
        if matches!(self.cx.store().node(cond), Node::Bool(false)) {
            // the point is never in the range: every factor is `elsewhere`
            self.changed = true;
            let gn = self.cx.normal_of(elsewhere);
            let gn = self.cx.pow(&gn, i64::from(e))?.ok_or(Overflow)?;
            return self.product(&gn, depth + 1).map(Some);
        }
        let ga = vars::substitute1(self.store(), elsewhere, var, sol.value);
        let fa = vars::substitute1(self.store(), at, var, sol.value);
        // where the point is in range the input reads `at(a)`: what it divides by is
        // not 0 there (a prob or nat divisor is then positive), which `elsewhere(a)`,
        // often the same density without the point's own factor, may need
        let mut at_point = outside.enter_branch(cond, true);
        for s in strict_divisors(self.cx.store(), fa) {
            if matches!(self.cx.store().ty(s), Type::Prob | Type::Nat) {
                let ty = self.cx.store().ty(s).clone();
                let zero = self
                    .store()
                    .intern(Node::Lit(crate::num::Rational::zero()), ty);
                let lt = self.store().prim(Prim::Lt, vec![zero, s], Type::Bool);
                at_point = at_point.with_condition(lt, true);
            }
        }
        let point_vars = vars::free_vars(self.cx.store(), sol.value);
        let reads_of_at = self
            .cx
            .store()
            .subterms(fa)
            .filter(|&r| matches!(self.cx.store().node(r), Node::Index(..)))
            .collect();
        let prover = Prover {
            point_vars,
            reads_of_at,
        };
        if !prover.positive(self.store(), &at_point, ga, 0) {
            return Ok(None);
        }
        self.changed = true;
        let gn = self.cx.normal_of(elsewhere);
        let gn = self.cx.pow(&gn, i64::from(e))?.ok_or(Overflow)?;
        let mut parts = self.product(&gn, depth + 1)?;
        let fan = self.cx.normal_of(fa);
        let gan = self.cx.normal_of(ga);
        let inv = gan.recip().ok_or(Overflow)?;
        let ratio = self.cx.mul(&fan, &inv)?;
        let ratio = self.cx.pow(&ratio, i64::from(e))?.ok_or(Overflow)?;
        let corr = self.if_normal(cond, &ratio, 1);
        parts.free = self.cx.mul(&parts.free, &corr)?;
        Ok(Some(parts))
    }

    /// `Π_i (if ∧guard: a else: 1)` where the guard is one disequation `i /= u` (or
    /// `not (i == u)`): the one-point rule with 1 at the point.
    pub(super) fn all_but_point(
        &mut self,
        a: &Normal,
        guard: &[TermId],
        depth: u32,
    ) -> Result<Option<Parts>, Overflow> {
        let [g] = guard else {
            return Ok(None);
        };
        if !matches!(
            self.cx.store().node(*g),
            Node::Prim(Prim::Ne | Prim::Not, _)
        ) {
            return Ok(None);
        }
        let c = cond::negate(self.store(), *g);
        let ty = self.ty.clone();
        let at = self.lit(1, &ty);
        let elsewhere = self.cx.write(a, &ty);
        self.one_point(c, at, elsewhere, 1, depth)
    }
}

/// The positivity and definedness prover of the one-point rule, at the point `a`.
struct Prover {
    /// The variables of the point `a`.
    point_vars: Vec<VarId>,
    /// The array reads `at(a)` makes: a read of `elsewhere(a)` whose index does not
    /// depend on the point and that `at(a)` makes too is one the input already made
    /// where the point is in range (`summate j from 0 to size(s): .. y[j] ..` in both
    /// branches of case 15's weight), not one the rewrite adds.
    reads_of_at: rustc_hash::FxHashSet<TermId>,
}

impl Prover {
    /// Is `t` defined and `> 0` under `ctx`?
    fn positive(&self, store: &mut Store, ctx: &Context, t: TermId, depth: u32) -> bool {
        if depth > MAX_PROOF_DEPTH {
            return false;
        }
        let d = depth + 1;
        match store.node(t).clone() {
            Node::Lit(v) => v.is_positive(),
            Node::Prim(Prim::Pi, _) => true,
            Node::Prim(Prim::Exp, xs) => xs.iter().all(|&x| self.defined(store, ctx, x, d)),
            Node::Prim(Prim::Mul, xs) => xs.iter().all(|&x| self.positive(store, ctx, x, d)),
            Node::Prim(Prim::Add, xs) => {
                xs.iter().all(|&x| self.nonnegative(store, ctx, x, d))
                    && xs.iter().any(|&x| self.positive(store, ctx, x, d))
            }
            Node::Prim(Prim::Recip | Prim::Sqrt | Prim::GammaFunc | Prim::BetaFunc, xs) => {
                xs.iter().all(|&x| self.positive(store, ctx, x, d))
            }
            Node::Prim(Prim::Pow | Prim::RealPow | Prim::NatRoot, xs) => match xs.as_slice() {
                [b, n] => self.positive(store, ctx, *b, d) && self.defined(store, ctx, *n, d),
                _ => false,
            },
            Node::Coerce(c, x) if safe(c) => self.positive(store, ctx, x, d),
            Node::Product(v, lo, hi, body) => {
                self.defined(store, ctx, lo, d)
                    && self.defined(store, ctx, hi, d)
                    && self.positive(store, &ctx.with_range(v, lo, hi), body, d)
            }
            Node::If(c, a, b) => {
                self.defined(store, ctx, c, d)
                    && self.positive(store, &ctx.enter_branch(c, true), a, d)
                    && self.positive(store, &ctx.enter_branch(c, false), b, d)
            }
            _ => decided(store, ctx, Prim::Lt, t) && self.defined(store, ctx, t, d),
        }
    }

    /// Is `t` defined and `>= 0` under `ctx`?
    fn nonnegative(&self, store: &mut Store, ctx: &Context, t: TermId, depth: u32) -> bool {
        if depth > MAX_PROOF_DEPTH {
            return false;
        }
        if matches!(store.ty(t), Type::Nat | Type::Prob) {
            return self.defined(store, ctx, t, depth + 1);
        }
        let d = depth + 1;
        match store.node(t).clone() {
            Node::Lit(v) => !v.is_negative(),
            Node::Prim(Prim::Pow, xs) if xs.len() == 2 => {
                // an even literal power of anything defined, or a power of what is >= 0
                let even = matches!(store.node(xs[1]), Node::Lit(q) if q.to_i64().is_some_and(|k| k % 2 == 0));
                self.defined(store, ctx, xs[1], d)
                    && if even {
                        self.defined(store, ctx, xs[0], d)
                    } else {
                        self.nonnegative(store, ctx, xs[0], d)
                    }
            }
            Node::Prim(Prim::Add | Prim::Mul, xs) => {
                xs.iter().all(|&x| self.nonnegative(store, ctx, x, d))
            }
            Node::Coerce(c, x) if safe(c) => self.nonnegative(store, ctx, x, d),
            Node::Summate(v, lo, hi, body) => {
                self.defined(store, ctx, lo, d)
                    && self.defined(store, ctx, hi, d)
                    && self.nonnegative(store, &ctx.with_range(v, lo, hi), body, d)
            }
            Node::If(c, a, b) => {
                self.defined(store, ctx, c, d)
                    && self.nonnegative(store, &ctx.enter_branch(c, true), a, d)
                    && self.nonnegative(store, &ctx.enter_branch(c, false), b, d)
            }
            _ => decided(store, ctx, Prim::Le, t) && self.defined(store, ctx, t, d),
        }
    }

    /// Is `t` defined under `ctx` (no division by zero, no root or log of what may be
    /// negative, every array read in bounds or made by `at(a)` too), whatever the values
    /// the context allows?
    fn defined(&self, store: &mut Store, ctx: &Context, t: TermId, depth: u32) -> bool {
        if depth > MAX_PROOF_DEPTH {
            return false;
        }
        let d = depth + 1;
        match store.node(t).clone() {
            Node::Var(_) | Node::Lit(_) | Node::Bool(_) => true,
            Node::Index(arr, i) => {
                if !self.defined(store, ctx, arr, d) || !self.defined(store, ctx, i, d) {
                    return false;
                }
                let size = match *store.node(arr) {
                    Node::Array(_, m, _) => m,
                    _ => store.prim(Prim::Size, vec![arr], Type::Nat),
                };
                (!vars::mentions_any(store, i, &self.point_vars) && self.reads_of_at.contains(&t))
                    || in_bounds(store, ctx, i, size)
            }
            Node::Coerce(c, x) => {
                self.defined(store, ctx, x, d) && (safe(c) || self.nonnegative(store, ctx, x, d))
            }
            Node::Prim(p, xs) => match p {
                Prim::Recip | Prim::Log | Prim::GammaFunc | Prim::BetaFunc => {
                    xs.iter().all(|&x| self.positive(store, ctx, x, d))
                }
                Prim::Sqrt => xs.iter().all(|&x| self.nonnegative(store, ctx, x, d)),
                Prim::RealPow | Prim::NatRoot => match xs.as_slice() {
                    [b, n] => {
                        self.nonnegative(store, ctx, *b, d) && self.defined(store, ctx, *n, d)
                    }
                    _ => false,
                },
                p if super::except::is_total(p) => {
                    xs.iter().all(|&x| self.defined(store, ctx, x, d))
                }
                _ => false,
            },
            Node::Summate(v, lo, hi, body) | Node::Product(v, lo, hi, body) => {
                self.defined(store, ctx, lo, d)
                    && self.defined(store, ctx, hi, d)
                    && self.defined(store, &ctx.with_range(v, lo, hi), body, d)
            }
            Node::If(c, a, b) => {
                self.defined(store, ctx, c, d)
                    && self.defined(store, &ctx.enter_branch(c, true), a, d)
                    && self.defined(store, &ctx.enter_branch(c, false), b, d)
            }
            _ => false,
        }
    }
}

/// The divisors `s` of `1/s` subterms of `t` that evaluating `t` always evaluates (not
/// under an `if` or a loop): where `t` is defined, none of them is 0.
fn strict_divisors(store: &Store, t: TermId) -> Vec<TermId> {
    let mut out = Vec::new();
    let mut stack = vec![(t, 0u32)];
    while let Some((x, depth)) = stack.pop() {
        if depth > MAX_PROOF_DEPTH {
            continue;
        }
        match store.node(x) {
            Node::Prim(Prim::Recip, xs) => {
                // a product or power that is not 0 has no factor or base that is
                let mut parts: Vec<TermId> = xs.clone();
                while let Some(d) = parts.pop() {
                    out.push(d);
                    match store.node(d) {
                        Node::Prim(Prim::Mul, fs) => parts.extend(fs.iter().copied()),
                        // `b ^ 0` is 1 whatever b is: only a literal non-zero power says
                        // that its base is not 0
                        Node::Prim(Prim::Pow | Prim::RealPow, bs)
                            if bs.get(1).is_some_and(
                                |&e| matches!(store.node(e), Node::Lit(q) if !q.is_zero()),
                            ) =>
                        {
                            parts.extend(bs.first().copied())
                        }
                        Node::Prim(Prim::NatRoot, bs) => parts.extend(bs.first().copied()),
                        Node::Prim(Prim::Sqrt, bs) => parts.extend(bs.iter().copied()),
                        _ => {}
                    }
                }
                stack.extend(xs.iter().map(|&c| (c, depth + 1)));
            }
            Node::Prim(_, xs) => stack.extend(xs.iter().map(|&c| (c, depth + 1))),
            Node::Coerce(_, c) => stack.push((*c, depth + 1)),
            _ => {}
        }
    }
    out
}

/// The coercions that are total and keep the value (`nat2prob`, `prob2real`, ...).
fn safe(c: Coercion) -> bool {
    !matches!(
        c,
        Coercion::Int2Nat | Coercion::Real2Prob | Coercion::Real2Int
    )
}

/// Does `ctx` decide `0 < t` (`op` Lt) or `0 <= t` (`op` Le)?
fn decided(store: &mut Store, ctx: &Context, op: Prim, t: TermId) -> bool {
    let ty = store.ty(t).clone();
    if !ty.is_numeric() {
        return false;
    }
    let zero = store.intern(Node::Lit(crate::num::Rational::zero()), ty);
    let c = store.prim(op, vec![zero, t], Type::Bool);
    cond::decide(store, ctx, c) == Tri::True
}

/// Does `ctx` decide `0 <= i < m` (i an index of integral type)? Also what `except.rs`
/// asks of the reads it moves.
pub(super) fn in_bounds(store: &mut Store, ctx: &Context, i: TermId, m: TermId) -> bool {
    let (it, mt) = (store.ty(i).clone(), store.ty(m).clone());
    if !it.is_integral() || !mt.is_integral() {
        return false;
    }
    let lt = store.prim(Prim::Lt, vec![i, m], Type::Bool);
    let c = if it == Type::Nat {
        lt
    } else {
        let zero = store.intern(Node::Lit(crate::num::Rational::zero()), it);
        let ge = store.prim(Prim::Le, vec![zero, i], Type::Bool);
        store.prim(Prim::And, vec![ge, lt], Type::Bool)
    };
    cond::decide(store, ctx, c) == Tri::True
}
