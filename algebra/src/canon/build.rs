//! Reading terms into canonical forms: [`Canon::normal_of`] for numeric terms (bottom-up
//! into a [`Normal`]) and [`Canon::canon`] for every term (numeric subterms through
//! `normal_of` and back; everything else rebuilt with canonical children, with the
//! context extended under binders and branches).
//!
//! Arithmetic nodes become arithmetic on `Normal`s; the laws for `exp`, `log` and powers
//! are in `laws`; every other numeric node becomes an atom kernel whose children are
//! canonical. When an expansion overflows the budget, the node is kept as an atom over
//! its canonical children (commutative operands sorted), so the choice depends only on
//! the node, never on the order things were met. Recursion follows term nesting and
//! moves to a fresh stack segment when the stack runs low.

use super::kernel::{Kernel, KernelInfo};
use super::normal::{Normal, Overflow};
use super::Canon;
use crate::assume::Context;
use crate::num::Rational;
use crate::order::compare as cmp_terms;
use crate::poly::{Monomial, Poly};
use crate::term::{Node, Prim, TermId};
use crate::types::{Coercion, Type};
use crate::{cond, piecewise};
use rustc_hash::FxHashMap;

impl Canon<'_> {
    /// The canonical form of a numeric term.
    pub(crate) fn normal_of(&mut self, t: TermId) -> Normal {
        // terms are DAGs: a shared subterm (`s * sqrt(2 * pi)` in every factor of a
        // likelihood) is read once per context
        let key = (t, self.generation);
        if let Some(n) = self.memo.get(&key) {
            return n.clone();
        }
        let n = crate::stack::grow(|| self.normal_here(t));
        self.memo.insert(key, n.clone());
        n
    }

    fn normal_here(&mut self, t: TermId) -> Normal {
        // The field laws fail for ∞ (`∞ - ∞`, `0 * ∞`, `∞ / ∞`): arithmetic whose subtree
        // mentions it keeps its shape, children canonical. (Once, `pi + recip(∞) * 16`
        // became `(pi * ∞ + 16) / ∞`.) Canonical forms assume finite values elsewhere.
        if matches!(self.store.node(t), Node::Prim(p, _) if *p != Prim::Infinity)
            && self.mentions_infinity(t)
        {
            return self.atom_of_children(t);
        }
        let r = match self.store.node(t) {
            Node::Lit(v) => return Normal::constant(v.clone()),
            Node::Var(_) => return self.atom_normal(t),
            Node::Prim(p, args) => {
                let (p, args) = (*p, args.clone());
                self.prim_normal(t, p, &args)
            }
            Node::Coerce(c, a) => {
                let (c, a) = (*c, *a);
                match c {
                    // `real2int` is exact on integers: transparent when the canonical
                    // form is integral (integral kernels, integer coefficients), so
                    // `real2int(nat2real(k) + 2)` is the int `k + 2` and a literal folds
                    Coercion::Real2Int => {
                        let n = self.normal_of(a);
                        if self.fits(&n, &Type::Int) {
                            Ok(n)
                        } else {
                            Ok(self.atom_of_children(t))
                        }
                    }
                    // `real2prob` and `int2nat` assert the value is in the smaller type:
                    // transparent when the canonical form shows it (`real2prob(1 + p)`)
                    // or, for `real2prob` of a variable, the context proves it
                    // (`real2prob(s)` under `3 < s`: `prob2real(real2prob(s))` is `s`),
                    // else an atom that remembers it (`real2prob(1 - p)` stays, so
                    // `p^a * real2prob(1 - p)^b` keeps prob arithmetic; were it opened,
                    // its factors could be written back as one `real2prob` of a
                    // rational function that rounds below 0 near `p = 1`)
                    Coercion::Real2Prob | Coercion::Int2Nat => {
                        let n = self.normal_of(a);
                        if self.fits(&n, &c.to_type())
                            || (c == Coercion::Real2Prob && self.proves_nonnegative(a))
                        {
                            Ok(n)
                        } else if let Some(split) = self
                            .split_nonneg_part(&n)
                            .filter(|_| c == Coercion::Real2Prob)
                        {
                            Ok(split)
                        } else {
                            let inner = self.write(&n, &c.from_type());
                            // a coercion of a choice is the choice of the coerced
                            // branches (`int2nat(if c: +1 else: +0)`, a count closed
                            // in int, is the nat `if c: 1 else: 0`)
                            if let Node::If(cc, x, y) = *self.store.node(inner) {
                                let (x, y) = (self.coerce(c, x), self.coerce(c, y));
                                let choice = self.store.intern(Node::If(cc, x, y), c.to_type());
                                return self.normal_of(choice);
                            }
                            let term = self.coerce(c, inner);
                            Ok(self.atom_normal(term))
                        }
                    }
                    _ => Ok(self.normal_of(a)),
                }
            }
            Node::If(..) => {
                let c = self.canon_children(t, false);
                if matches!(self.store.node(c), Node::If(..)) {
                    Ok(self.atom_normal(c))
                } else {
                    Ok(self.normal_of(c))
                }
            }
            // Loops with canonical children are closed by `sums` when a rule applies
            // (Faulhaber, Kronecker deltas, constants, exp of sums); the loops it leaves
            // open are fixed points, so this never cycles.
            Node::Summate(..) | Node::Product(..) => {
                let c = self.canon_children(t, false);
                let closed = match *self.store.node(c) {
                    Node::Summate(v, lo, hi, b) => {
                        crate::sums::close_summate_normal(self, v, lo, hi, b)
                    }
                    Node::Product(v, lo, hi, b) => {
                        crate::sums::close_product_normal(self, v, lo, hi, b)
                    }
                    _ => None,
                };
                let open = match closed {
                    Some(n) => return n,
                    None => self.canonical_loop(c),
                };
                Ok(self.atom_normal(open))
            }
            _ => Ok(self.atom_of_children(t)),
        };
        r.unwrap_or_else(|Overflow| {
            self.budget_hits += 1;
            self.atom_of_children(t)
        })
    }

    /// The loop `t` with its index renamed to the canonical loop index of its height
    /// (`sums::canonical_binder`), so loops equal up to their index's name are one atom.
    fn canonical_loop(&mut self, t: TermId) -> TermId {
        let (v, lo, hi, body, sum) = match *self.store.node(t) {
            Node::Summate(v, lo, hi, b) => (v, lo, hi, b, true),
            Node::Product(v, lo, hi, b) => (v, lo, hi, b, false),
            _ => return t,
        };
        let (w, body) = crate::sums::canonical_binder(self.store, v, body);
        if w == v {
            return t;
        }
        let tty = self.store.ty(t).clone();
        let node = if sum {
            Node::Summate(w, lo, hi, body)
        } else {
            Node::Product(w, lo, hi, body)
        };
        self.store.intern(node, tty)
    }

    fn prim_normal(&mut self, t: TermId, p: Prim, args: &[TermId]) -> Result<Normal, Overflow> {
        match (p, args) {
            (Prim::Add, _) => {
                let mut items = Vec::with_capacity(args.len());
                for &a in args {
                    items.push(self.normal_of(a));
                }
                self.sum_of(items)
            }
            (Prim::Mul, _) => {
                // exponentials are gathered into one exponent and made a kernel once
                // (a product of n densities would otherwise build n growing kernels)
                // and monomial factors multiply by adding exponents, merged once
                let mut acc = Normal::one();
                let mut exps = Vec::new();
                let mut mono = Monomials::default();
                for &a in args {
                    let n = self.normal_of(a);
                    let n = match self.peel_exp(&n) {
                        Some((rest, s)) => {
                            exps.push(s);
                            rest
                        }
                        None => n,
                    };
                    if !mono.absorb(&n) {
                        acc = self.mul(&acc, &n)?;
                    }
                }
                if let Some(m) = mono.into_normal() {
                    let m = self.fix(m)?;
                    acc = self.mul(&acc, &m)?;
                }
                let exp_sum = self.sum_of(exps)?;
                if !exp_sum.is_zero() {
                    let e = self.exp(&exp_sum)?;
                    acc = self.mul(&acc, &e)?;
                }
                Ok(acc)
            }
            (Prim::Neg, [a]) => Ok(self.normal_of(*a).neg()),
            (Prim::Recip, [a]) => {
                let n = self.normal_of(*a);
                match self.recip(&n)? {
                    Some(r) => Ok(r),
                    None => Ok(self.atom_of_children(t)),
                }
            }
            (Prim::Pow, [a, e]) => match self.literal_int(*e) {
                Some(k) => {
                    let n = self.normal_of(*a);
                    match self.pow(&n, k)? {
                        Some(r) => Ok(r),
                        None => Ok(self.atom_of_children(t)),
                    }
                }
                None => Ok(self.atom_of_children(t)),
            },
            (Prim::Pi, []) => Ok(Normal::kernel(self.pi_kernel())),
            (Prim::Exp, [a]) => {
                let s = self.normal_of(*a);
                self.exp(&s)
            }
            (Prim::Log, [a]) => self.log(*a),
            (Prim::Sqrt, [a]) => self.root(*a, &super::laws::frac(1, 2)),
            (Prim::NatRoot, [a, n]) => match self.literal_int(*n) {
                Some(k) if k > 0 => self.root(*a, &super::laws::frac(1, k)),
                _ => Ok(self.atom_of_children(t)),
            },
            (Prim::RealPow, [a, b]) => {
                let e = self.normal_of(*b);
                match e.as_constant() {
                    Some(r) => self.root(*a, &r),
                    None => {
                        let l = self.log(*a)?;
                        let s = self.mul(&e, &l)?;
                        self.exp(&s)
                    }
                }
            }
            (Prim::Min | Prim::Max, _) => Ok(self.atom_of_sorted_children(t)),
            _ => Ok(self.atom_of_children(t)),
        }
    }

    /// The value of an integer literal that fits in `i64`.
    fn literal_int(&self, t: TermId) -> Option<i64> {
        match self.store.node(t) {
            Node::Lit(v) if v.is_integer() => v.to_i64(),
            _ => None,
        }
    }

    /// The kernel of `pi`.
    pub(crate) fn pi_kernel(&mut self) -> u32 {
        if let Some(k) = self.pi {
            return k;
        }
        let term = self.store.prim(Prim::Pi, vec![], Type::Prob);
        let k = self.kernels.intern(KernelInfo {
            kernel: Kernel::Pi,
            term: Some(term),
            ty: Type::Prob,
            nonneg: true,
            exp_arg: None,
            base: None,
            is_log: false,
        });
        self.pi = Some(k);
        k
    }

    /// Does the context prove the real variable `a >= 0`? Asked only when a condition of
    /// the context mentions it (the decision procedure is not cheap, and nothing else
    /// can prove it).
    pub(crate) fn proves_nonnegative(&mut self, a: TermId) -> bool {
        let Node::Var(v) = *self.store.node(a) else {
            return false;
        };
        let store = &*self.store;
        let known = self.ctx.facts().iter().any(|f| match f {
            crate::assume::Fact::Holds { cond, .. } => crate::vars::mentions(store, *cond, v),
            crate::assume::Fact::Range { var, .. } => *var == v,
        });
        if !known {
            return false;
        }
        let zero = self.store.intern(Node::Lit(Rational::zero()), Type::Real);
        let le = self.store.prim(Prim::Le, vec![zero, a], Type::Bool);
        cond::decide(self.store, &self.ctx, le) == crate::assume::Tri::True
    }

    /// The canonical term `c` (already canonical) as an atom kernel.
    pub(crate) fn atom_normal(&mut self, c: TermId) -> Normal {
        Normal::kernel(self.atom_kernel(c))
    }

    pub(crate) fn atom_kernel(&mut self, c: TermId) -> u32 {
        // every open loop is an atom under its canonical index, however it was built
        let c = self.canonical_loop(c);
        if let Some(k) = self.kernels.find(&Kernel::Atom(c)) {
            return k;
        }
        let ty = self.store.ty(c).clone();
        let nonneg = ty.is_nonnegative() || crate::assume::evidently_nonnegative(self.store, c);
        self.kernels.intern(KernelInfo {
            kernel: Kernel::Atom(c),
            term: Some(c),
            ty,
            nonneg,
            exp_arg: None,
            base: None,
            is_log: false,
        })
    }

    /// `t` rebuilt with canonical children, as an atom.
    /// Does `t`'s subtree contain `∞`? Memoised per session; a work list, so deep terms
    /// cannot overflow the stack.
    fn mentions_infinity(&mut self, t: TermId) -> bool {
        let mut stack = vec![(t, false)];
        while let Some((u, children_done)) = stack.pop() {
            if self.infinite.contains_key(&u) {
                continue;
            }
            let node = self.store.node(u);
            if matches!(node, Node::Prim(Prim::Infinity, _)) {
                self.infinite.insert(u, true);
                continue;
            }
            let children = node.children();
            if children_done {
                let any = children.iter().any(|c| self.infinite.get(c) == Some(&true));
                self.infinite.insert(u, any);
            } else {
                stack.push((u, true));
                stack.extend(children.into_iter().map(|c| (c, false)));
            }
        }
        self.infinite.get(&t) == Some(&true)
    }

    fn atom_of_children(&mut self, t: TermId) -> Normal {
        let c = self.canon_children(t, false);
        self.atom_normal(c)
    }

    /// Like `atom_of_children` for a commutative node: children sorted.
    fn atom_of_sorted_children(&mut self, t: TermId) -> Normal {
        let c = self.canon_children(t, true);
        self.atom_normal(c)
    }

    /// The canonical form of any term.
    pub(crate) fn canon(&mut self, t: TermId) -> TermId {
        crate::stack::grow(|| self.canon_here(t))
    }

    fn canon_here(&mut self, t: TermId) -> TermId {
        let ty = self.store.ty(t).clone();
        if ty.is_numeric() {
            let n = self.normal_of(t);
            return self.write(&n, &ty);
        }
        let c = self.canon_children(t, false);
        if ty == Type::Bool && !matches!(self.store.node(c), Node::If(..)) {
            return cond::canonical(self.store, &self.ctx, c);
        }
        c
    }

    /// `t` with every child canonical (sorted when `sort`, for commutative nodes with
    /// interchangeable children: `Add`, `Mul`, `min`, `max`), the context extended under
    /// binders and branches. `if` with a literal condition becomes its live branch, and
    /// an `if` with equal branches becomes that branch.
    fn canon_children(&mut self, t: TermId, sort: bool) -> TermId {
        let node = self.store.node(t).clone();
        let ty = self.store.ty(t).clone();
        let new = match &node {
            Node::Var(_) | Node::Lit(_) | Node::Bool(_) | Node::Unit | Node::Nothing => return t,
            Node::RNop | Node::Reject => return t,
            Node::Summate(v, lo, hi, e)
            | Node::Product(v, lo, hi, e)
            | Node::Bucket(v, lo, hi, e) => {
                let (lo, hi) = (self.canon(*lo), self.canon(*hi));
                let e = self.in_range(*v, lo, hi, *e);
                vec![lo, hi, e]
            }
            Node::Array(v, n, e) | Node::Plate(v, n, e) => {
                let n = self.canon(*n);
                let nty = self.store.ty(n).clone();
                let zero = self.lit(Rational::zero(), &nty);
                let e = self.in_range(*v, zero, n, *e);
                vec![n, e]
            }
            Node::If(c, a, b) => {
                let c = self.canon(*c);
                match self.store.node(c) {
                    Node::Bool(true) => return self.canon(*a),
                    Node::Bool(false) => return self.canon(*b),
                    _ => {}
                }
                let saved = self.enter(|ctx| ctx.with_condition(c, true));
                let a = self.canon(*a);
                self.leave(saved);
                let saved = self.enter(|ctx| ctx.with_condition(c, false));
                let b = self.canon(*b);
                self.leave(saved);
                return piecewise::simplify_if(self.store, &self.ctx, c, a, b, &ty);
            }
            _ => {
                let mut ch: Vec<TermId> = node.children().iter().map(|&c| self.canon(c)).collect();
                if sort {
                    let store = &*self.store;
                    ch.sort_by(|&a, &b| cmp_terms(store, a, b));
                }
                ch
            }
        };
        let rebuilt = node.with_children(&new);
        self.store.intern(rebuilt, ty)
    }

    /// Canonicalise `body` under the fact `lo <= v < hi`.
    fn in_range(&mut self, v: crate::term::VarId, lo: TermId, hi: TermId, body: TermId) -> TermId {
        let saved = self.enter(|ctx| ctx.with_range(v, lo, hi));
        let b = self.canon(body);
        self.leave(saved);
        b
    }

    /// Switch to a context derived from the current one; returns what `leave` restores.
    /// Each context gets its own memo generation (canonical forms may depend on it).
    fn enter(&mut self, f: impl FnOnce(&Context) -> Context) -> (Context, u32) {
        let new = f(&self.ctx);
        let saved = (std::mem::replace(&mut self.ctx, new), self.generation);
        self.next_generation += 1;
        self.generation = self.next_generation;
        saved
    }

    fn leave(&mut self, saved: (Context, u32)) {
        self.ctx = saved.0;
        self.generation = saved.1;
    }
}

/// A product of monomial fractions kept as exponents (negative in the denominator).
#[derive(Default)]
struct Monomials {
    coef: Option<Rational>,
    exps: FxHashMap<u32, i64>,
}

impl Monomials {
    /// Multiply in `n` if it is a monomial over a monomial.
    fn absorb(&mut self, n: &Normal) -> bool {
        let (Some((m, c)), Some((dm, dc))) = (single(n.num()), single(n.den())) else {
            return false;
        };
        let Some(q) = c.checked_div(dc) else {
            return false;
        };
        self.coef = Some(match self.coef.take() {
            Some(k) => &k * &q,
            None => q,
        });
        for &(k, e) in m.pairs() {
            *self.exps.entry(k).or_insert(0) += i64::from(e);
        }
        for &(k, e) in dm.pairs() {
            *self.exps.entry(k).or_insert(0) -= i64::from(e);
        }
        true
    }

    fn into_normal(self) -> Option<Normal> {
        let coef = self.coef?;
        let mut num = Vec::new();
        let mut den = Vec::new();
        for (k, e) in self.exps {
            match e.cmp(&0) {
                std::cmp::Ordering::Greater => num.push((k, u32::try_from(e).ok()?)),
                std::cmp::Ordering::Less => den.push((k, u32::try_from(-e).ok()?)),
                std::cmp::Ordering::Equal => {}
            }
        }
        Normal::from_parts(
            Poly::term(Monomial::from_pairs(num), coef),
            Poly::term(Monomial::from_pairs(den), Rational::one()),
        )
    }
}

fn single(p: &Poly) -> Option<(&Monomial, &Rational)> {
    match p.terms() {
        [(m, c)] => Some((m, c)),
        _ => None,
    }
}
