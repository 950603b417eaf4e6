//! Gamma ratios at the point (issue 12: kernel speed). The point split writes a product
//! over classes with the proposed label's class taken out as
//! `(let all = Π_k f(k) in let q = f(i) in if q == 0: Π_{k /= i} f(k) else: all / q)`,
//! multiplied by the point's own factor `f'(i)`. For the Dirichlet's
//! `f(k) = Γ(as[k] + n_k)` the point's factor is `Γ(as[i] + n_i + [b])` (the updated point
//! counted when `b`), and the quotient of the two is `as[i] + n_i` or 1: one `log` per
//! proposed label where two `lgamma`s were.
//!
//! [`close_ratios`] finds, in a product, such a quotient `L` beside a factor
//! `P = if c: Γ(x + [b]) else: 1` where `q = if c: Γ(x) else: 1` (one condition `c` in
//! both; `[b]` written `if b: 1 else: 0`, inside the sums of `x` at one place), and writes
//! the two as `let all = Π_k f(k) in if c: (if 0 < x: all · (if b: x else: 1) else: L · P)
//! else: L · P`. Where `0 < x`, `Γ(x)` is finite and positive, so `q /= 0` and
//! `all / q · P = all · Γ(x + [b]) / Γ(x)`, which is `all · x` or `all` (`Γ(x + 1) = x Γ(x)`);
//! elsewhere the product is as it was. The fast branch reads what `q` and `P` read, so
//! meaning and errors are kept; it needs neither `q` nor `P`, so neither gamma function is
//! evaluated.

use rustc_hash::FxHashMap;
use slic_algebra::{stack, Coercion, Node, Prim, Store, TermId, Type, VarId};

use crate::split::{is_zero, with_children};

/// What [`close_ratios`] did.
#[derive(Clone, Debug)]
pub struct Ratios {
    /// The rewritten term (same type and meaning).
    pub term: TermId,
    /// Quotients closed.
    pub closed: usize,
}

/// Every point quotient in a product of `t` whose neighbour's ratio closes, closed.
pub fn close_ratios(store: &mut Store, t: TermId) -> Ratios {
    let mut c = Closer {
        store,
        memo: FxHashMap::default(),
        closed: 0,
    };
    let term = c.go(t);
    Ratios {
        term,
        closed: c.closed,
    }
}

struct Closer<'s> {
    store: &'s mut Store,
    memo: FxHashMap<TermId, TermId>,
    closed: usize,
}

/// `let all = A in let q = Q in if q == 0: O else: all · recip(q)`, read apart.
struct Quotient {
    all: (VarId, TermId),
    /// `let q = Q in if q == 0: O else: all · recip(q)`
    inner: TermId,
    /// `Q`
    q: TermId,
}

impl Closer<'_> {
    fn go(&mut self, t: TermId) -> TermId {
        if let Some(&r) = self.memo.get(&t) {
            return r;
        }
        let ch = self.store.node(t).children();
        let new: Vec<TermId> = ch.iter().map(|&c| stack::grow(|| self.go(c))).collect();
        let t1 = with_children(self.store, t, &new);
        let r = match self.store.node(t1).clone() {
            Node::Prim(Prim::Mul, args) if *self.store.ty(t1) == Type::Prob => {
                let n = args.len();
                let args = self.close_in(args);
                match args.len() {
                    1 => args[0],
                    k if k == n => t1,
                    _ => self.store.prim(Prim::Mul, args, Type::Prob),
                }
            }
            _ => t1,
        };
        self.memo.insert(t, r);
        r
    }

    /// The factors of a product with each closable (quotient, factor) pair made one.
    fn close_in(&mut self, mut args: Vec<TermId>) -> Vec<TermId> {
        let mut i = 0;
        while i < args.len() {
            if let Some(quot) = self.quotient(args[i]) {
                let partner = (0..args.len())
                    .filter(|&j| j != i)
                    .find_map(|j| self.closed_ratio(args[j], quot.q).map(|r| (j, r)));
                if let Some((j, r)) = partner {
                    let p = args[j];
                    args[i] = self.rebuild(&quot, p, r);
                    args.remove(j);
                    self.closed += 1;
                    continue;
                }
            }
            i += 1;
        }
        args
    }

    fn quotient(&self, t: TermId) -> Option<Quotient> {
        let s = &*self.store;
        let Node::Let(all, a, inner) = *s.node(t) else {
            return None;
        };
        let Node::Let(q, qv, pick) = *s.node(inner) else {
            return None;
        };
        let Node::If(test, _, quotient) = *s.node(pick) else {
            return None;
        };
        let is_var = |t: TermId, v| matches!(s.node(t), Node::Var(x) if *x == v);
        let zero_test = matches!(s.node(test), Node::Prim(Prim::Eq, xs)
            if xs.len() == 2 && is_var(xs[0], q) && is_zero(s, xs[1]));
        let divides = match s.node(quotient) {
            Node::Prim(Prim::Mul, xs) if xs.len() == 2 && is_var(xs[0], all) => {
                matches!(s.node(xs[1]), Node::Prim(Prim::Recip, r) if r.len() == 1 && is_var(r[0], q))
            }
            _ => false,
        };
        (zero_test && divides).then_some(Quotient {
            all: (all, a),
            inner,
            q: qv,
        })
    }

    /// `p / q` closable, where `p = if c: Γ(x') else: 1` and `q = if c: Γ(x) else: 1` with
    /// `x'` the sum `x` plus `[b]` at one place: `(c, x, b)`.
    fn closed_ratio(&mut self, p: TermId, q: TermId) -> Option<Closable> {
        let (c, gp) = self.guarded(p)?;
        let (c2, gq) = self.guarded(q)?;
        if c != c2 {
            return None;
        }
        let (Node::Prim(Prim::GammaFunc, xp), Node::Prim(Prim::GammaFunc, xq)) =
            (self.store.node(gp), self.store.node(gq))
        else {
            return None;
        };
        let (x1, x) = (*xp.first()?, *xq.first()?);
        let b = plus_indicator(self.store, x, x1)?;
        Some(Closable { c, x, b })
    }

    /// `if c: g else: 1` as `(Some(c), g)`, any other term as `(None, t)`.
    fn guarded(&self, t: TermId) -> Option<(Option<TermId>, TermId)> {
        Some(match *self.store.node(t) {
            Node::If(c, g, one) if is_one(self.store, one) => (Some(c), g),
            _ => (None, t),
        })
    }

    /// `let all = A in if c: (if 0 < x: all · (if b: x else: 1) else: L · p) else: L · p`,
    /// where `L · p` is the product as it was (`let q = Q in ...`, `all` bound).
    fn rebuild(&mut self, quot: &Quotient, p: TermId, k: Closable) -> TermId {
        let ty = Type::Prob;
        let slow = self.store.prim(Prim::Mul, vec![quot.inner, p], ty.clone());
        let all_t = self.store.var_term(quot.all.0);
        let x_prob = self
            .store
            .intern(Node::Coerce(Coercion::Real2Prob, k.x), ty.clone());
        let one = self.store.int_lit(1, ty.clone());
        let step = self.store.intern(Node::If(k.b, x_prob, one), ty.clone());
        let fast = self.store.prim(Prim::Mul, vec![all_t, step], ty.clone());
        let zero = self.store.int_lit(0, Type::Real);
        let pos = self.store.prim(Prim::Lt, vec![zero, k.x], Type::Bool);
        let mut body = self.store.intern(Node::If(pos, fast, slow), ty.clone());
        if let Some(c) = k.c {
            body = self.store.intern(Node::If(c, body, slow), ty.clone());
        }
        self.store
            .intern(Node::Let(quot.all.0, quot.all.1, body), ty)
    }
}

/// A quotient that closes: `if c: (if b: x else: 1) else: 1` where `0 < x`.
struct Closable {
    c: Option<TermId>,
    x: TermId,
    b: TermId,
}

/// `b` where `x1` is `x` with, at one place in its sums (through coercions), an added
/// `if b: 1 else: 0` (in place of a `0`, or as a new last summand).
fn plus_indicator(store: &Store, x: TermId, x1: TermId) -> Option<TermId> {
    if x == x1 {
        return None;
    }
    match (store.node(x), store.node(x1)) {
        (Node::Coerce(c, a), Node::Coerce(c1, a1)) if c == c1 => plus_indicator(store, *a, *a1),
        (Node::Prim(Prim::Add, xs), Node::Prim(Prim::Add, ys)) if xs.len() == ys.len() => {
            let diff: Vec<usize> = (0..xs.len()).filter(|&k| xs[k] != ys[k]).collect();
            match diff.as_slice() {
                [k] => plus_indicator(store, xs[*k], ys[*k]),
                _ => None,
            }
        }
        (_, Node::Prim(Prim::Add, ys)) if ys.len() == 2 && ys[0] == x => indicator(store, ys[1]),
        _ if is_zero(store, x) => indicator(store, x1),
        _ => None,
    }
}

/// `b` of `if b: 1 else: 0` (any numeric type, through coercions).
fn indicator(store: &Store, t: TermId) -> Option<TermId> {
    match store.node(t) {
        Node::Coerce(_, a) => indicator(store, *a),
        Node::If(b, one, zero) if is_one(store, *one) && is_zero(store, *zero) => Some(*b),
        _ => None,
    }
}

fn is_one(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(v) if v.is_one())
}
