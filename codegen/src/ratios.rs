//! Gamma ratios at the point (issue 12: kernel speed). The point split writes a product
//! over classes with the proposed label's class taken out as
//! `(let all = Π_k f(k) in let q = f(i) in if 0 < q < ∞: all / q else: Π_{k /= i} f(k))`,
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
//!
//! Over words (Naive Bayes' Dirichlet evidence of a class's word counts): `q = Π_k Γ(x_k)`
//! (the proposed class's row) and `P = Π_k Γ(x_k + d_k)` over the same range, `d_k` the
//! point's count of word `k` (inside lets that build its histogram, which move out), each
//! factor perhaps guarded by one test `c_k`. They become `if (Σ_k [c_k ∧ ¬(0 < x_k)]) == 0:
//! all · Π_k (if c_k ∧ d_k /= 0: Γ(x_k + d_k) · recip(Γ(x_k)) else: 1) else: L · P`. Under
//! the test every `Γ(x_k)` is finite and positive, so `P / q` is the product of the
//! factors' quotients, and a word the point lacks has quotient 1 (`x_k + 0` is `x_k`):
//! per proposal a test per word and two gamma functions per word of the point, where
//! there were two gamma functions per word. The test evaluates every `x_k` that `q` did,
//! the product what `P` and `q` did where it evaluates them, so errors are kept; at a
//! pole of Γ the test fails and the product is as it was. Where `d_k` is at most 8 (a
//! document's words mostly occur once or twice), the quotient is the rising product
//! `Π_{m < d_k} (x_k + m)` (`Γ(x + 1) = x Γ(x)`, `d_k` times, every factor positive where
//! `0 < x_k`), multiplied as reals below `10^30`: one logarithm where two `lgamma`s were.

use rustc_hash::FxHashMap;
use slic_algebra::{alpha, vars};
use slic_algebra::{stack, Coercion, Node, Prim, Rational, Store, TermId, Type, VarId};

use crate::split::{divisor_test, is_one, is_zero, with_children};

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

/// `let all = A in let q = Q in if 0 < q < ∞: all · recip(q) else: O`, read apart.
struct Quotient {
    all: (VarId, TermId),
    /// `let q = Q in if 0 < q < ∞: all · recip(q) else: O`
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
                    if let Some(closed) = self.rebuild(&quot, p, r) {
                        args[i] = closed;
                        args.remove(j);
                        self.closed += 1;
                        continue;
                    }
                }
            }
            i += 1;
        }
        args
    }

    fn quotient(&mut self, t: TermId) -> Option<Quotient> {
        let Node::Let(all, a, inner) = *self.store.node(t) else {
            return None;
        };
        let Node::Let(q, qv, pick) = *self.store.node(inner) else {
            return None;
        };
        let Node::If(test, quotient, _) = *self.store.node(pick) else {
            return None;
        };
        let q_t = self.store.var_term(q);
        if test != divisor_test(self.store, q_t) {
            return None;
        }
        let s = &*self.store;
        let is_var = |t: TermId, v| matches!(s.node(t), Node::Var(x) if *x == v);
        let divides = match s.node(quotient) {
            Node::Prim(Prim::Mul, xs) if xs.len() == 2 && is_var(xs[0], all) => {
                matches!(s.node(xs[1]), Node::Prim(Prim::Recip, r) if r.len() == 1 && is_var(r[0], q))
            }
            _ => false,
        };
        divides.then_some(Quotient {
            all: (all, a),
            inner,
            q: qv,
        })
    }

    /// `p / q` closable: at the point, `p = if c: Γ(x') else: 1` and `q = if c: Γ(x) else: 1`
    /// with `x'` the sum `x` plus `[b]` at one place; or over words, `p` (under lets) a
    /// product `Π_k g(k)` and `q` the product `Π_k f(k)` over the same range, `f(k) =
    /// Γ(x_k)` and `g(k) = Γ(x_k + d_k)` (each perhaps guarded by one test `c_k`).
    fn closed_ratio(&mut self, p: TermId, q: TermId) -> Option<Closable> {
        let (lets, p_body) = peel_lets(self.store, p);
        let (c, gp) = self.guarded(p_body)?;
        let (c2, gq) = self.guarded(q)?;
        if c != c2 {
            return None;
        }
        if lets.is_empty() {
            if let Some((ck, x, d)) = self.gamma_step(gp, gq) {
                if ck.is_none() {
                    let b = indicator(self.store, d)?;
                    return Some(Closable::Point { c, x, b });
                }
            }
        }
        let (Node::Product(kp, lo, hi, bp), Node::Product(k, lo2, hi2, f)) =
            (self.store.node(gp).clone(), self.store.node(gq).clone())
        else {
            return None;
        };
        if (lo, hi) != (lo2, hi2) {
            return None;
        }
        let g = if kp == k {
            bp
        } else {
            if vars::mentions(self.store, bp, k) {
                return None;
            }
            let k_term = self.store.var_term(k);
            vars::substitute1(self.store, bp, kp, k_term)
        };
        let (ck, x, d) = self.gamma_step(g, f)?;
        Some(Closable::Words(Words {
            lets,
            c,
            k,
            lo,
            hi,
            f,
            g,
            ck,
            x,
            d,
        }))
    }

    /// `(c, x, d)` where `g = if c: Γ(x') else: 1` and `f = if c: Γ(x) else: 1` (or both
    /// unguarded, `c` none) with `x'` the sum `x` plus `d` at one place.
    fn gamma_step(&self, g: TermId, f: TermId) -> Option<(Option<TermId>, TermId, TermId)> {
        let (c, gg) = self.guarded(g)?;
        let (c2, gf) = self.guarded(f)?;
        if c != c2 {
            return None;
        }
        let (Node::Prim(Prim::GammaFunc, xp), Node::Prim(Prim::GammaFunc, xq)) =
            (self.store.node(gg), self.store.node(gf))
        else {
            return None;
        };
        let (x1, x) = (*xp.first()?, *xq.first()?);
        let d = added(self.store, x, x1)?;
        Some((c, x, d))
    }

    /// `if c: g else: 1` as `(Some(c), g)`, any other term as `(None, t)`.
    fn guarded(&self, t: TermId) -> Option<(Option<TermId>, TermId)> {
        Some(match *self.store.node(t) {
            Node::If(c, g, one) if is_one(self.store, one) => (Some(c), g),
            _ => (None, t),
        })
    }

    /// The closed form of the quotient `quot` beside its partner `p`, or `None` where a
    /// name would be captured.
    fn rebuild(&mut self, quot: &Quotient, p: TermId, k: Closable) -> Option<TermId> {
        let ty = Type::Prob;
        let slow = self.store.prim(Prim::Mul, vec![quot.inner, p], ty.clone());
        if vars::mentions(self.store, p, quot.all.0) {
            return None;
        }
        let all_t = self.store.var_term(quot.all.0);
        let (c, mut body) = match k {
            // `if c: (if 0 < x: all · (if b: x else: 1) else: L · p) else: L · p`
            Closable::Point { c, x, b } => {
                let x_prob = self
                    .store
                    .intern(Node::Coerce(Coercion::Real2Prob, x), ty.clone());
                let one = self.store.int_lit(1, ty.clone());
                let step = self.store.intern(Node::If(b, x_prob, one), ty.clone());
                let fast = self.store.prim(Prim::Mul, vec![all_t, step], ty.clone());
                let pos = self.positive(x);
                (c, self.store.intern(Node::If(pos, fast, slow), ty.clone()))
            }
            Closable::Words(w) => {
                let names: Vec<VarId> = w.lets.iter().map(|&(v, _)| v).collect();
                if vars::mentions_any(self.store, quot.inner, &names) {
                    return None;
                }
                let fast = self.words_ratio(&w, all_t);
                let ok = self.all_positive(&w);
                let mut body = self.store.intern(Node::If(ok, fast, slow), ty.clone());
                for &(v, e) in w.lets.iter().rev() {
                    body = self.store.intern(Node::Let(v, e, body), ty.clone());
                }
                (w.c, body)
            }
        };
        if let Some(c) = c {
            body = self.store.intern(Node::If(c, body, slow), ty.clone());
        }
        Some(
            self.store
                .intern(Node::Let(quot.all.0, quot.all.1, body), ty),
        )
    }

    /// `0 < x` (a real).
    fn positive(&mut self, x: TermId) -> TermId {
        let zero = self.store.int_lit(0, Type::Real);
        self.store.prim(Prim::Lt, vec![zero, x], Type::Bool)
    }

    /// `all · Π_k (if c_k: (if d_k == 0: 1 else: g(k) · recip(f(k))) else: 1)`, each
    /// quotient a rising product where `d_k` is small ([`Self::rising`]).
    fn words_ratio(&mut self, w: &Words, all_t: TermId) -> TermId {
        let ty = Type::Prob;
        let d_ty = self.store.ty(w.d).clone();
        let zero = self.store.int_lit(0, d_ty.clone());
        let none = self.store.prim(Prim::Eq, vec![w.d, zero], Type::Bool);
        let inv = self.store.prim(Prim::Recip, vec![w.f], ty.clone());
        let mut step = self.store.prim(Prim::Mul, vec![w.g, inv], ty.clone());
        if d_ty == Type::Nat {
            step = self.rising(w.x, w.d, step);
        }
        let one = self.store.int_lit(1, ty.clone());
        let mut at = self.store.intern(Node::If(none, one, step), ty.clone());
        if let Some(ck) = w.ck {
            at = self.store.intern(Node::If(ck, at, one), ty.clone());
        }
        let ratio = self
            .store
            .intern(Node::Product(w.k, w.lo, w.hi, at), ty.clone());
        self.store.prim(Prim::Mul, vec![all_t, ratio], ty)
    }

    /// `Γ(x + d) / Γ(x)` (`quotient`, where `0 < x`) as `if d <= RISING && x < LINEAR:
    /// real2prob(Π_{m < d} (x + m)) else: quotient`: `Γ(x + 1) = x Γ(x)` applied `d`
    /// times, the factors multiplied as reals, so one logarithm where two `lgamma`s were;
    /// the words of a document mostly occur once or twice. Every `x + m` is positive, so
    /// the product is and `real2prob` cannot fail; below `LINEAR` eight factors cannot
    /// overflow (nor underflow: past the first every factor is at least 1). `x` is bound
    /// first, read by the test and the factors: the quotient reads it too.
    fn rising(&mut self, x0: TermId, d: TermId, quotient: TermId) -> TermId {
        let ty = Type::Prob;
        // `x` once, for the test and the factors (the quotient reads it too)
        let xv = self.store.fresh_var("x", Type::Real);
        let x = self.store.var_term(xv);
        let m = self.store.fresh_var("m", Type::Nat);
        let mv = self.store.var_term(m);
        let mr = self
            .store
            .intern(Node::Coerce(Coercion::Nat2Real, mv), Type::Real);
        let factor = self.store.prim(Prim::Add, vec![x, mr], Type::Real);
        let zero = self.store.int_lit(0, Type::Nat);
        let product = self
            .store
            .intern(Node::Product(m, zero, d, factor), Type::Real);
        let log = self
            .store
            .intern(Node::Coerce(Coercion::Real2Prob, product), ty.clone());
        let most = self.store.int_lit(RISING, Type::Nat);
        let few = self.store.prim(Prim::Le, vec![d, most], Type::Bool);
        let Some(linear) = Rational::from_integer(10).pow(LINEAR_DIGITS) else {
            return quotient;
        };
        let bound = self.store.lit(linear.to_big(), Type::Real);
        let moderate = self.store.prim(Prim::Lt, vec![x, bound], Type::Bool);
        let small = self.store.prim(Prim::And, vec![few, moderate], Type::Bool);
        let pick = self
            .store
            .intern(Node::If(small, log, quotient), ty.clone());
        self.store.intern(Node::Let(xv, x0, pick), ty)
    }

    /// `(summate k: if c_k: (if 0 < x_k: 0 else: 1) else: 0) == 0`: every `Γ(x_k)` of the
    /// quotient's product finite and positive.
    fn all_positive(&mut self, w: &Words) -> TermId {
        let nat = Type::Nat;
        let zero = self.store.int_lit(0, nat.clone());
        let one = self.store.int_lit(1, nat.clone());
        let pos = self.positive(w.x);
        let mut bad = self.store.intern(Node::If(pos, zero, one), nat.clone());
        if let Some(ck) = w.ck {
            bad = self.store.intern(Node::If(ck, bad, zero), nat.clone());
        }
        let count = self
            .store
            .intern(Node::Summate(w.k, w.lo, w.hi, bad), nat.clone());
        self.store.prim(Prim::Eq, vec![count, zero], Type::Bool)
    }
}

/// The largest count whose gamma quotient is written as a rising product.
const RISING: i64 = 8;

/// `LINEAR = 10^LINEAR_DIGITS`: below it a rising product of `RISING` factors is far from
/// overflow (`(10^30 + 8)^8 < 10^241`).
const LINEAR_DIGITS: i64 = 30;

/// A quotient that closes.
enum Closable {
    /// At the point: `if c: (if b: x else: 1) else: 1` where `0 < x`.
    Point {
        c: Option<TermId>,
        x: TermId,
        b: TermId,
    },
    /// Over words: `if c: Π_k (if c_k: Γ(x_k + d_k) / Γ(x_k) else: 1) else: 1` where every
    /// `0 < x_k`, each factor 1 where `d_k == 0`.
    Words(Words),
}

struct Words {
    /// The lets around the partner's product (its histogram of the point's words).
    lets: Vec<(VarId, TermId)>,
    c: Option<TermId>,
    k: VarId,
    lo: TermId,
    hi: TermId,
    /// The quotient's factor `f(k)` and the partner's `g(k)`.
    f: TermId,
    g: TermId,
    ck: Option<TermId>,
    x: TermId,
    d: TermId,
}

/// The lets at the head of `t`, and what they scope over.
fn peel_lets(store: &Store, mut t: TermId) -> (Vec<(VarId, TermId)>, TermId) {
    let mut lets = Vec::new();
    while let Node::Let(v, e, body) = *store.node(t) {
        lets.push((v, e));
        t = body;
    }
    (lets, t)
}

/// `d` where `x1` is `x` with, at one place in its sums (through coercions), an added
/// `d` (in place of a `0`, or as a new last summand).
fn added(store: &Store, x: TermId, x1: TermId) -> Option<TermId> {
    let same = |a: TermId, b: TermId| a == b || alpha::alpha_eq(store, a, b);
    if same(x, x1) {
        return None;
    }
    match (store.node(x), store.node(x1)) {
        (Node::Coerce(c, a), Node::Coerce(c1, a1)) if c == c1 => added(store, *a, *a1),
        (Node::Prim(Prim::Add, xs), Node::Prim(Prim::Add, ys)) if xs.len() == ys.len() => {
            let diff: Vec<usize> = (0..xs.len()).filter(|&k| !same(xs[k], ys[k])).collect();
            match diff.as_slice() {
                [k] => added(store, xs[*k], ys[*k]),
                _ => None,
            }
        }
        (_, Node::Prim(Prim::Add, ys)) if ys.len() == 2 && same(ys[0], x) => Some(ys[1]),
        _ if is_zero(store, x) => Some(x1),
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

/// Every beta function of an argument plus one written through the unshifted one:
/// `B(a, b + 1) = B(a, b) · b / (a + b)` and `B(a + 1, b) = B(a, b) · a / (a + b)`, each
/// where the unshifted argument is positive (the function as it was elsewhere). The
/// stick-breaking Dirichlet Naive Bayes simplifies to weighs the proposed class's stick
/// by `B(x, y + 1)`, the sticks before it by `B(x + 1, y)` and those after by `B(x, y)`:
/// one beta function per class, which `crate::memo` then computes once per class and
/// update, where there were three. Exact where the test holds: `B(a, b) = Γ(a) Γ(b) /
/// Γ(a + b)` and `Γ(b + 1) = b Γ(b)`, with `Γ(b)` finite and positive for `b > 0` and
/// `a + b > 0` (both are probabilities); the new form reads `a` and `b`, which the old
/// one read, and nothing in it can fail.
pub fn shift_betas(store: &mut Store, t: TermId) -> TermId {
    store.rebuild(t, &mut |s, _, node| {
        let Node::Prim(Prim::BetaFunc, args) = node else {
            return None;
        };
        let [a, b] = args.as_slice() else {
            return None;
        };
        let (a, b) = (*a, *b);
        if *s.ty(a) != Type::Prob || *s.ty(b) != Type::Prob {
            return None;
        }
        let (shifted, base) = if let Some(b0) = less_one(s, b) {
            (b0, [a, b0])
        } else if let Some(a0) = less_one(s, a) {
            (a0, [a0, b])
        } else {
            return None;
        };
        let ty = Type::Prob;
        let beta = s.prim(Prim::BetaFunc, base.to_vec(), ty.clone());
        let sum = s.prim(Prim::Add, base.to_vec(), ty.clone());
        let inv = s.prim(Prim::Recip, vec![sum], ty.clone());
        let fast = s.prim(Prim::Mul, vec![beta, shifted, inv], ty.clone());
        let zero = s.int_lit(0, ty.clone());
        let positive = s.prim(Prim::Lt, vec![zero, shifted], Type::Bool);
        let original = s.prim(Prim::BetaFunc, vec![a, b], Type::Prob);
        Some(s.intern(Node::If(positive, fast, original), Type::Prob))
    })
}

/// `x` less a literal 1 among its summands (`x` a `prob` sum), if it has one.
fn less_one(store: &mut Store, x: TermId) -> Option<TermId> {
    let Node::Prim(Prim::Add, terms) = store.node(x).clone() else {
        return None;
    };
    let at = terms.iter().position(|&t| is_one(store, t))?;
    let rest: Vec<TermId> = terms
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != at)
        .map(|(_, &t)| t)
        .collect();
    Some(match rest.as_slice() {
        [] => return None,
        [one] => *one,
        _ => store.prim(Prim::Add, rest, Type::Prob),
    })
}
