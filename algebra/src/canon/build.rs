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
use super::order::cmp_terms;
use super::Canon;
use crate::num::Rational;
use crate::term::{Node, Prim, TermId};
use crate::types::{Coercion, Type};
use crate::{cond, piecewise};

const RED_ZONE: usize = 128 << 10;
const STACK_SEGMENT: usize = 4 << 20;

impl Canon<'_> {
    /// The canonical form of a numeric term.
    pub(crate) fn normal_of(&mut self, t: TermId) -> Normal {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.normal_here(t))
    }

    fn normal_here(&mut self, t: TermId) -> Normal {
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
                    Coercion::Real2Int => Ok(self.atom_of_children(t)),
                    // `real2prob` and `int2nat` assert the value is in the smaller type:
                    // transparent when the canonical form shows it (`real2prob(1 + p)`),
                    // else an atom that remembers it (`real2prob(1 - p)` stays, so
                    // `p^a * real2prob(1 - p)^b` keeps prob arithmetic)
                    Coercion::Real2Prob | Coercion::Int2Nat => {
                        let n = self.normal_of(a);
                        if self.fits(&n, &c.to_type()) {
                            Ok(n)
                        } else {
                            let inner = self.write(&n, &c.from_type());
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
            _ => Ok(self.atom_of_children(t)),
        };
        r.unwrap_or_else(|Overflow| {
            self.budget_hits += 1;
            self.atom_of_children(t)
        })
    }

    fn prim_normal(&mut self, t: TermId, p: Prim, args: &[TermId]) -> Result<Normal, Overflow> {
        match (p, args) {
            (Prim::Add, _) => {
                let mut acc = Normal::zero();
                for &a in args {
                    let n = self.normal_of(a);
                    acc = self.add(&acc, &n)?;
                }
                Ok(acc)
            }
            (Prim::Mul, _) => {
                let mut acc = Normal::one();
                for &a in args {
                    let n = self.normal_of(a);
                    acc = self.mul(&acc, &n)?;
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
            term,
            ty: Type::Prob,
            nonneg: true,
            exp_arg: None,
            base: None,
            is_log: false,
        });
        self.pi = Some(k);
        k
    }

    /// The canonical term `c` (already canonical) as an atom kernel.
    pub(crate) fn atom_normal(&mut self, c: TermId) -> Normal {
        Normal::kernel(self.atom_kernel(c))
    }

    pub(crate) fn atom_kernel(&mut self, c: TermId) -> u32 {
        if let Some(k) = self.kernels.find(&Kernel::Atom(c)) {
            return k;
        }
        let ty = self.store.ty(c).clone();
        let nonneg = ty.is_nonnegative();
        self.kernels.intern(KernelInfo {
            kernel: Kernel::Atom(c),
            term: c,
            ty,
            nonneg,
            exp_arg: None,
            base: None,
            is_log: false,
        })
    }

    /// `t` rebuilt with canonical children, as an atom.
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
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.canon_here(t))
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
                let saved = self.ctx.clone();
                self.ctx = saved.with_condition(c, true);
                let a = self.canon(*a);
                self.ctx = saved.with_condition(c, false);
                let b = self.canon(*b);
                self.ctx = saved;
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
        let rebuilt = with_children(&node, &new);
        self.store.intern(rebuilt, ty)
    }

    /// Canonicalise `body` under the fact `lo <= v < hi`.
    fn in_range(&mut self, v: crate::term::VarId, lo: TermId, hi: TermId, body: TermId) -> TermId {
        let saved = self.ctx.clone();
        self.ctx = saved.with_range(v, lo, hi);
        let b = self.canon(body);
        self.ctx = saved;
        b
    }
}

/// `node` with its children (in [`Node::children`] order) replaced by `ch`.
pub(crate) fn with_children(node: &Node, ch: &[TermId]) -> Node {
    use Node::*;
    let c = |i: usize| ch.get(i).copied();
    let get = |i: usize, old: TermId| c(i).unwrap_or(old);
    match node {
        Var(_) | Lit(_) | Bool(_) | Unit | Nothing | RNop | Reject => node.clone(),
        Left(a) => Left(get(0, *a)),
        Right(a) => Right(get(0, *a)),
        Just(a) => Just(get(0, *a)),
        Coerce(k, a) => Coerce(*k, get(0, *a)),
        Lam(v, a) => Lam(*v, get(0, *a)),
        RAdd(a) => RAdd(get(0, *a)),
        Dirac(a) => Dirac(get(0, *a)),
        Transform(k, a) => Transform(*k, get(0, *a)),
        Pair(a, b) => Pair(get(0, *a), get(1, *b)),
        App(a, b) => App(get(0, *a), get(1, *b)),
        Let(v, a, b) => Let(*v, get(0, *a), get(1, *b)),
        Array(v, a, b) => Array(*v, get(0, *a), get(1, *b)),
        Index(a, b) => Index(get(0, *a), get(1, *b)),
        RFanout(a, b) => RFanout(get(0, *a), get(1, *b)),
        Weight(a, b) => Weight(get(0, *a), get(1, *b)),
        Bind(v, a, b) => Bind(*v, get(0, *a), get(1, *b)),
        Plate(v, a, b) => Plate(*v, get(0, *a), get(1, *b)),
        Observe(a, b) => Observe(get(0, *a), get(1, *b)),
        If(a, b, d) => If(get(0, *a), get(1, *b), get(2, *d)),
        Summate(v, a, b, d) => Summate(*v, get(0, *a), get(1, *b), get(2, *d)),
        Product(v, a, b, d) => Product(*v, get(0, *a), get(1, *b), get(2, *d)),
        Integrate(v, a, b, d) => Integrate(*v, get(0, *a), get(1, *b), get(2, *d)),
        Bucket(v, a, b, d) => Bucket(*v, get(0, *a), get(1, *b), get(2, *d)),
        RIndex(v, a, b, d) => RIndex(*v, get(0, *a), get(1, *b), get(2, *d)),
        RSplit(a, b, d) => RSplit(get(0, *a), get(1, *b), get(2, *d)),
        Chain(v, a, b, d) => Chain(*v, get(0, *a), get(1, *b), get(2, *d)),
        Prim(p, xs) => Prim(*p, replace(xs, ch)),
        ArrayLit(xs) => ArrayLit(replace(xs, ch)),
        Superpose(xs) => Superpose(replace(xs, ch)),
        Dist(d, xs) => Dist(*d, replace(xs, ch)),
        Match(e, arms) => Match(
            get(0, *e),
            arms.iter()
                .enumerate()
                .map(|(i, (p, b))| (p.clone(), get(i + 1, *b)))
                .collect(),
        ),
    }
}

fn replace(old: &[TermId], ch: &[TermId]) -> Vec<TermId> {
    if ch.len() == old.len() {
        ch.to_vec()
    } else {
        old.to_vec()
    }
}
