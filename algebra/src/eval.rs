//! Evaluation of closed numeric and boolean terms: exactly to a [`Rational`] where the
//! value is rational, and to `f64` for every numeric primitive.
//!
//! This is the algebra's own small evaluator, used to fold closed constants and to check
//! canonical forms numerically (compare a term and its canonical form at random points).
//! It is not the reference interpreter (`slic-semantics`): it knows no measures, no
//! integrals, no pairs or `match`, and answers `None` for anything it cannot evaluate
//! (a measure, a free variable without a value, an exactly irrational value, a budget
//! exceeded) rather than failing. Both evaluators share one structural core over a
//! number domain ([`Rational`] or `f64`): `let`, `if`, applications of literal `fn`s,
//! comparisons and logic (`&&`/`||` short-circuit left to right, as in the interpreter),
//! `summate`/`product`, arrays (literals, `array i of n: e`, `a[i]`, `size`, `reduce`
//! with a literal function) and coercions (unsafe ones when the value is in range, like
//! `int2nat(3)`; `real2int` rounds down).
//!
//! Limits: all loops together run at most [`MAX_ITERATIONS`] iterations (array building
//! counts its elements; a big exact result costs the square of its length in words),
//! nesting is at most [`MAX_DEPTH`] terms deep (on a growing stack), and exact values stay
//! below [`MAX_EXACT_BITS`], so evaluation never hangs or overflows the stack. Real arithmetic in `eval_f64` is IEEE (`1/0` is `inf`,
//! `0/0` is NaN: a NaN result is `Some(NaN)`); prob products follow the interpreter's
//! `0 * ∞ = 0`; values outside their type (a negative `gammaFunc` as a prob, `int2nat` of
//! a negative) are `None`, as they are errors there.

use std::cmp::Ordering;
use std::rc::Rc;

use crate::num::Rational;
use crate::term::{Node, Prim, Store, TermId, VarId};
use crate::types::{Coercion, Type};

/// Total loop iterations (summate, product, array, reduce, choose, factorials) of one
/// evaluation.
pub const MAX_ITERATIONS: u64 = 1_000_000;

/// Deepest nesting of terms one evaluation follows.
pub const MAX_DEPTH: usize = 10_000;

/// Exact values above this many bits (numerator or denominator, about 1200 digits) are not
/// computed: big-rational sums cost a gcd each, whose cost grows with the square of the
/// size (a harmonic sum of a million terms would never finish). Factorials and binomials
/// are refused up front by an estimate of their size.
pub const MAX_EXACT_BITS: u64 = 1 << 12;

/// A value of a closed term: a number of the domain, a boolean or an array.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<N> {
    Num(N),
    Bool(bool),
    Array(Rc<[Value<N>]>),
}

impl<N> Value<N> {
    fn num(self) -> Option<N> {
        match self {
            Value::Num(n) => Some(n),
            _ => None,
        }
    }

    fn bool(self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
}

/// The exact value of a closed numeric term, when it is rational (`sqrt(4)` is 2,
/// `sqrt(2)` is `None`, `exp(0)` is 1).
pub fn eval_exact(store: &Store, t: TermId) -> Option<Rational> {
    Eval::new(store, Exact).eval(t)?.num()
}

/// The value of a closed boolean term, deciding comparisons exactly.
pub fn eval_bool_exact(store: &Store, t: TermId) -> Option<bool> {
    Eval::new(store, Exact).eval(t)?.bool()
}

/// The `f64` value of a numeric term whose free variables `env` gives numbers for.
/// Prob values are returned as themselves (not in log space).
pub fn eval_f64(store: &Store, t: TermId, env: &dyn Fn(VarId) -> Option<f64>) -> Option<f64> {
    let env = |v| env(v).map(Value::Num);
    Eval::new(store, Float { env: &env }).eval(t)?.num()
}

/// The value of a boolean term under `env`, comparing in `f64`.
pub fn eval_bool_f64(store: &Store, t: TermId, env: &dyn Fn(VarId) -> Option<f64>) -> Option<bool> {
    let env = |v| env(v).map(Value::Num);
    Eval::new(store, Float { env: &env }).eval(t)?.bool()
}

/// The value of any numeric, boolean or array term under an environment that may give
/// arrays too (for terms with free array variables, like `summate j from 0 to size(y):
/// y[j]`).
pub fn eval_f64_value(
    store: &Store,
    t: TermId,
    env: &dyn Fn(VarId) -> Option<Value<f64>>,
) -> Option<Value<f64>> {
    Eval::new(store, Float { env }).eval(t)
}

/// A number system the structural evaluator runs over.
trait Domain {
    type N: Clone;
    fn lit(&self, q: &Rational) -> Option<Self::N>;
    fn int(&self, i: i64) -> Self::N;
    /// The value as an exact integer (loop bounds, indices, nat exponents).
    fn to_int(&self, x: &Self::N) -> Option<i64>;
    /// The value of a free variable.
    fn free(&self, v: VarId) -> Option<Value<Self::N>>;
    /// `None` when unordered (NaN).
    fn cmp(&self, a: &Self::N, b: &Self::N) -> Option<Ordering>;
    fn coerce(&self, c: Coercion, x: &Self::N) -> Option<Self::N>;
    /// `a + b`; big exact results draw on `budget`, `None` when too large.
    fn add(&self, a: &Self::N, b: &Self::N, budget: &mut u64) -> Option<Self::N>;
    /// `a * b` in type `ty` (prob: `0 * ∞ = 0`); as `add` for exact results.
    fn mul(&self, a: &Self::N, b: &Self::N, ty: &Type, budget: &mut u64) -> Option<Self::N>;
    /// Every numeric primitive except `+` and `*`, on evaluated arguments; loops inside
    /// (choose, factorials) draw on `budget`.
    fn prim(&self, p: Prim, args: &[Self::N], ty: &Type, budget: &mut u64) -> Option<Self::N>;
}

struct Eval<'s, D: Domain> {
    store: &'s Store,
    dom: D,
    /// Bound variables, innermost last; `None` for a binding whose value is unknown.
    env: Vec<(VarId, Option<Value<D::N>>)>,
    budget: u64,
    depth: usize,
}

impl<'s, D: Domain> Eval<'s, D> {
    fn new(store: &'s Store, dom: D) -> Eval<'s, D> {
        Eval {
            store,
            dom,
            env: Vec::new(),
            budget: MAX_ITERATIONS,
            depth: 0,
        }
    }

    fn eval(&mut self, t: TermId) -> Option<Value<D::N>> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let v = crate::stack::grow(|| self.node(t));
        self.depth -= 1;
        v
    }

    fn num(&mut self, t: TermId) -> Option<D::N> {
        self.eval(t)?.num()
    }

    fn bool(&mut self, t: TermId) -> Option<bool> {
        self.eval(t)?.bool()
    }

    fn int(&mut self, t: TermId) -> Option<i64> {
        let n = self.num(t)?;
        self.dom.to_int(&n)
    }

    fn charge(&mut self, n: u64) -> Option<()> {
        self.budget = self.budget.checked_sub(n)?;
        Some(())
    }

    /// Evaluates `body` with `v` bound to `val`.
    fn bound<R>(
        &mut self,
        v: VarId,
        val: Option<Value<D::N>>,
        body: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.env.push((v, val));
        let r = body(self);
        self.env.pop();
        r
    }

    fn lookup(&self, v: VarId) -> Option<Value<D::N>> {
        match self.env.iter().rev().find(|(w, _)| *w == v) {
            Some((_, val)) => val.clone(),
            None => self.dom.free(v),
        }
    }

    fn node(&mut self, t: TermId) -> Option<Value<D::N>> {
        let store = self.store;
        match store.node(t) {
            Node::Var(v) => self.lookup(*v),
            Node::Lit(q) => Some(Value::Num(self.dom.lit(q)?)),
            Node::Bool(b) => Some(Value::Bool(*b)),
            Node::Prim(p, args) => self.prim(*p, args, store.ty(t)),
            Node::Coerce(c, a) => {
                let x = self.num(*a)?;
                Some(Value::Num(self.dom.coerce(*c, &x)?))
            }
            Node::Let(v, e, body) => {
                // an unknown bound value only matters if the body uses it
                let val = self.eval(*e);
                self.bound(*v, val, |s| s.eval(*body))
            }
            Node::App(f, a) => match store.node(*f) {
                Node::Lam(v, body) => {
                    let val = self.eval(*a);
                    self.bound(*v, val, |s| s.eval(*body))
                }
                _ => None,
            },
            Node::If(c, a, b) => {
                if self.bool(*c)? {
                    self.eval(*a)
                } else {
                    self.eval(*b)
                }
            }
            Node::ArrayLit(xs) => {
                self.charge(xs.len() as u64)?;
                let vals = xs
                    .iter()
                    .map(|x| self.eval(*x))
                    .collect::<Option<Vec<_>>>()?;
                Some(Value::Array(vals.into()))
            }
            Node::Array(v, n, body) => {
                let n = u64::try_from(self.int(*n)?).ok()?;
                self.charge(n)?;
                let mut vals = Vec::with_capacity(usize::try_from(n).ok()?);
                for i in 0..n {
                    let i = Value::Num(self.dom.int(i64::try_from(i).ok()?));
                    vals.push(self.bound(*v, Some(i), |s| s.eval(*body))?);
                }
                Some(Value::Array(vals.into()))
            }
            Node::Index(a, i) => {
                let i = self.int(*i)?;
                self.index(*a, i)
            }
            Node::Summate(v, lo, hi, body) | Node::Product(v, lo, hi, body) => {
                let sum = matches!(store.node(t), Node::Summate(..));
                self.fold(*v, *lo, *hi, *body, sum, store.ty(t))
            }
            // simplify and summarize preserve meaning; disint and density are computed
            // by the simplifier's expansion first
            Node::Transform(tr, e) if tr.keeps_meaning() => self.eval(*e),
            _ => None,
        }
    }

    /// `a[i]`, evaluating only the element asked for when `a` is written out.
    fn index(&mut self, a: TermId, i: i64) -> Option<Value<D::N>> {
        let i = usize::try_from(i).ok()?;
        match self.store.node(a) {
            Node::ArrayLit(xs) => self.eval(*xs.get(i)?),
            Node::Array(v, n, body) => {
                let n = usize::try_from(self.int(*n)?).ok()?;
                if i >= n {
                    return None;
                }
                let iv = Value::Num(self.dom.int(i64::try_from(i).ok()?));
                self.bound(*v, Some(iv), |s| s.eval(*body))
            }
            _ => match self.eval(a)? {
                Value::Array(xs) => xs.get(i).cloned(),
                _ => None,
            },
        }
    }

    /// `size(a)`, without evaluating the elements when `a` is written out.
    fn size(&mut self, a: TermId) -> Option<i64> {
        match self.store.node(a) {
            Node::ArrayLit(xs) => i64::try_from(xs.len()).ok(),
            Node::Array(_, n, _) => self.int(*n).filter(|n| *n >= 0),
            _ => match self.eval(a)? {
                Value::Array(xs) => i64::try_from(xs.len()).ok(),
                _ => None,
            },
        }
    }

    /// `summate`/`product v from lo to hi: body` (hi exclusive).
    fn fold(
        &mut self,
        v: VarId,
        lo: TermId,
        hi: TermId,
        body: TermId,
        sum: bool,
        ty: &Type,
    ) -> Option<Value<D::N>> {
        let (lo, hi) = (self.int(lo)?, self.int(hi)?);
        let mut acc = self.dom.int(if sum { 0 } else { 1 });
        if hi <= lo {
            return Some(Value::Num(acc));
        }
        self.charge(hi.abs_diff(lo))?;
        for i in lo..hi {
            let iv = Value::Num(self.dom.int(i));
            let x = self.bound(v, Some(iv), |s| s.num(body))?;
            acc = if sum {
                self.dom.add(&acc, &x, &mut self.budget)?
            } else {
                self.dom.mul(&acc, &x, ty, &mut self.budget)?
            };
        }
        Some(Value::Num(acc))
    }

    fn prim(&mut self, p: Prim, args: &[TermId], ty: &Type) -> Option<Value<D::N>> {
        let b = Value::Bool;
        match p {
            Prim::And | Prim::Or => {
                // left to right, stopping at the first deciding argument
                let stop = p == Prim::Or;
                for a in args {
                    if self.bool(*a)? == stop {
                        return Some(b(stop));
                    }
                }
                Some(b(!stop))
            }
            Prim::Lt | Prim::Le => {
                let (x, y) = (self.num(*args.first()?)?, self.num(*args.get(1)?)?);
                let o = self.dom.cmp(&x, &y);
                // comparisons with NaN are false, as in IEEE
                Some(b(o.is_some_and(|o| {
                    o == Ordering::Less || (p == Prim::Le && o == Ordering::Equal)
                })))
            }
            Prim::Eq | Prim::Ne => {
                let (x, y) = (self.eval(*args.first()?)?, self.eval(*args.get(1)?)?);
                let eq = match (x, y) {
                    (Value::Num(x), Value::Num(y)) => self.dom.cmp(&x, &y) == Some(Ordering::Equal),
                    (Value::Bool(x), Value::Bool(y)) => x == y,
                    _ => return None,
                };
                Some(b(eq == (p == Prim::Eq)))
            }
            Prim::Not => Some(b(!self.bool(*args.first()?)?)),
            Prim::Xor | Prim::Iff | Prim::Impl | Prim::Nand | Prim::Nor => {
                let (x, y) = (self.bool(*args.first()?)?, self.bool(*args.get(1)?)?);
                Some(b(match p {
                    Prim::Xor => x != y,
                    Prim::Iff => x == y,
                    Prim::Impl => !x || y,
                    Prim::Nand => !(x && y),
                    _ => !(x || y),
                }))
            }
            Prim::Size => {
                let n = self.size(*args.first()?)?;
                Some(Value::Num(self.dom.int(n)))
            }
            Prim::Reduce => self.reduce(args),
            Prim::Add | Prim::Mul => {
                let (first, rest) = args.split_first()?;
                let mut acc = self.num(*first)?;
                for a in rest {
                    let x = self.num(*a)?;
                    acc = if p == Prim::Add {
                        self.dom.add(&acc, &x, &mut self.budget)?
                    } else {
                        self.dom.mul(&acc, &x, ty, &mut self.budget)?
                    };
                }
                Some(Value::Num(acc))
            }
            _ => {
                if p.arity().is_some_and(|n| n != args.len()) {
                    return None;
                }
                let xs = args
                    .iter()
                    .map(|a| self.num(*a))
                    .collect::<Option<Vec<_>>>()?;
                let mut budget = self.budget;
                let r = self.dom.prim(p, &xs, ty, &mut budget);
                self.budget = budget;
                Some(Value::Num(r?))
            }
        }
    }

    /// `reduce(fn x: fn y: body, z, a)`: folds `a` from the left starting at `z`.
    fn reduce(&mut self, args: &[TermId]) -> Option<Value<D::N>> {
        let [f, z, a] = args else {
            return None;
        };
        let Node::Lam(x, inner) = self.store.node(*f) else {
            return None;
        };
        let Node::Lam(y, body) = self.store.node(*inner) else {
            return None;
        };
        let (x, y, body) = (*x, *y, *body);
        let mut acc = self.eval(*z)?;
        let Value::Array(xs) = self.eval(*a)? else {
            return None;
        };
        self.charge(xs.len() as u64)?;
        for e in xs.iter() {
            acc = self.bound(x, Some(acc), |s| {
                s.bound(y, Some(e.clone()), |s| s.eval(body))
            })?;
        }
        Some(acc)
    }
}

/// Exact rational arithmetic.
struct Exact;

/// `q` unless it is larger than [`MAX_EXACT_BITS`]. A big result also costs iterations:
/// the square of its length in 64-bit words, the order of the gcd that made it, so long
/// loops over growing rationals (a harmonic sum) stop early instead of taking seconds.
fn bounded(q: Rational, budget: &mut u64) -> Option<Rational> {
    if q.is_small() {
        return Some(q);
    }
    let bits = q.bits();
    if bits > MAX_EXACT_BITS {
        return None;
    }
    let words = bits / 64 + 1;
    *budget = budget.checked_sub(words * words)?;
    Some(q)
}

/// `(n - 1)!` exactly, for small enough `n >= 1`.
fn factorial_exact(n: i64, budget: &mut u64) -> Option<Rational> {
    let n = u64::try_from(n).ok()?.checked_sub(1)?;
    if n.saturating_mul(u64::from(n.max(2).ilog2() + 1)) > MAX_EXACT_BITS {
        return None;
    }
    *budget = budget.checked_sub(n)?;
    let mut acc = Rational::one();
    for i in 2..=n {
        acc *= Rational::from_integer(i64::try_from(i).ok()?);
    }
    Some(acc)
}

/// Is `q` exactly zero / one (the points where some transcendental functions are rational)?
fn at(q: &Rational, v: i64) -> bool {
    q.to_small() == Some((v, 1))
}

impl Domain for Exact {
    type N = Rational;

    fn lit(&self, q: &Rational) -> Option<Rational> {
        Some(q.clone())
    }

    fn int(&self, i: i64) -> Rational {
        Rational::from_integer(i)
    }

    fn to_int(&self, x: &Rational) -> Option<i64> {
        x.to_i64()
    }

    fn free(&self, _: VarId) -> Option<Value<Rational>> {
        None
    }

    fn cmp(&self, a: &Rational, b: &Rational) -> Option<Ordering> {
        Some(a.cmp(b))
    }

    fn coerce(&self, c: Coercion, x: &Rational) -> Option<Rational> {
        match c {
            Coercion::Int2Nat | Coercion::Real2Prob if x.is_negative() => None,
            Coercion::Real2Int => Some(x.floor()),
            _ => Some(x.clone()),
        }
    }

    fn add(&self, a: &Rational, b: &Rational, budget: &mut u64) -> Option<Rational> {
        bounded(a + b, budget)
    }

    fn mul(&self, a: &Rational, b: &Rational, _: &Type, budget: &mut u64) -> Option<Rational> {
        bounded(a * b, budget)
    }

    fn prim(&self, p: Prim, args: &[Rational], _: &Type, budget: &mut u64) -> Option<Rational> {
        let r = self.prim_unbounded(p, args, budget)?;
        bounded(r, budget)
    }
}

impl Exact {
    fn prim_unbounded(&self, p: Prim, args: &[Rational], budget: &mut u64) -> Option<Rational> {
        let zero = Rational::zero;
        match (p, args) {
            (Prim::Neg, [x]) => Some(-x),
            (Prim::Recip, [x]) => x.recip(),
            (Prim::Pow, [x, n]) => x.pow(n.to_i64().filter(|n| *n >= 0)?),
            (Prim::RealPow, [x, e]) if !x.is_negative() => {
                let r = x.pow_rational(e)?;
                r.is_rational().then_some(r.coeff)
            }
            (Prim::NatRoot, [x, n]) if !x.is_negative() => {
                let (c, r) = x.root(u32::try_from(n.to_i64()?).ok()?)?;
                r.is_one().then_some(c)
            }
            (Prim::Sqrt, [x]) if !x.is_negative() => {
                let (c, r) = x.root(2)?;
                r.is_one().then_some(c)
            }
            (Prim::Exp | Prim::Cos | Prim::Cosh, [x]) if x.is_zero() => Some(Rational::one()),
            (Prim::Log | Prim::Acosh | Prim::Acos, [x]) if at(x, 1) => Some(zero()),
            (
                Prim::Sin
                | Prim::Tan
                | Prim::Asin
                | Prim::Atan
                | Prim::Sinh
                | Prim::Tanh
                | Prim::Asinh
                | Prim::Atanh
                | Prim::Erf,
                [x],
            ) if x.is_zero() => Some(zero()),
            (Prim::Abs, [x]) => Some(x.abs()),
            (Prim::Signum, [x]) => Some(x.signum()),
            (Prim::Floor, [x]) => Some(x.floor()),
            (Prim::Min, [x, y]) => Some(x.min(y).clone()),
            (Prim::Max, [x, y]) => Some(x.max(y).clone()),
            (Prim::Choose, [n, k]) => {
                let (n, k) = (n.to_i64()?, k.to_i64()?);
                if n < 0 || k < 0 {
                    return None;
                }
                if k > n {
                    return Some(zero());
                }
                let k = k.min(n - k);
                let bits = (k.unsigned_abs()).saturating_mul(u64::from(n.max(2).ilog2() + 1));
                if bits > MAX_EXACT_BITS {
                    return None;
                }
                *budget = budget.checked_sub(k.unsigned_abs())?;
                let mut c = Rational::one();
                for i in 0..k {
                    // C(n, i+1) = C(n, i) * (n - i) / (i + 1), exact at every step
                    c = (c * Rational::from_integer(n - i))
                        .checked_div(&Rational::from_integer(i + 1))?;
                }
                Some(c)
            }
            (Prim::GammaFunc, [x]) if x.is_integer() && x.is_positive() => {
                factorial_exact(x.to_i64()?, budget)
            }
            (Prim::BetaFunc, [a, b]) => {
                // B(a, b) = (a-1)! (b-1)! / (a+b-1)! for positive integers
                if !(a.is_integer() && b.is_integer() && a.is_positive() && b.is_positive()) {
                    return None;
                }
                let (a, b) = (a.to_i64()?, b.to_i64()?);
                let num = factorial_exact(a, budget)? * factorial_exact(b, budget)?;
                num.checked_div(&factorial_exact(a.checked_add(b)?, budget)?)
            }
            _ => None,
        }
    }
}

/// Floating point, with free variables from an environment.
struct Float<'e> {
    env: &'e dyn Fn(VarId) -> Option<Value<f64>>,
}

/// `C(n, k)` in floating point.
fn choose_f64(n: f64, k: f64, budget: &mut u64) -> Option<f64> {
    if n < 0.0 || k < 0.0 || n.fract() != 0.0 || k.fract() != 0.0 {
        return None;
    }
    if k > n {
        return Some(0.0);
    }
    let k = k.min(n - k);
    if k <= 1.0e5 {
        *budget = budget.checked_sub(k as u64)?;
        let mut c = 1.0f64;
        let mut i = 0.0f64;
        while i < k {
            c = c * (n - i) / (i + 1.0);
            i += 1.0;
        }
        // the exact value is an integer; remove the rounding drift where f64 can hold it
        Some(if c < 9.0e15 { c.round() } else { c })
    } else {
        let ln = libm::lgamma(n + 1.0) - libm::lgamma(k + 1.0) - libm::lgamma(n - k + 1.0);
        Some(libm::exp(ln))
    }
}

fn gamma_f64(x: f64) -> Option<f64> {
    if x.is_nan() {
        return Some(x);
    }
    if x <= 0.0 && x == x.floor() {
        // a pole: Γ is unbounded there, as in the interpreter
        return Some(f64::INFINITY);
    }
    let g = libm::tgamma(x);
    // gammaFunc is prob-valued: a negative value is an error in the interpreter
    (g >= 0.0).then_some(g)
}

fn beta_f64(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return f64::INFINITY;
    }
    if a + b < 170.0 {
        libm::tgamma(a) * libm::tgamma(b) / libm::tgamma(a + b)
    } else {
        libm::exp(libm::lgamma(a) + libm::lgamma(b) - libm::lgamma(a + b))
    }
}

impl Domain for Float<'_> {
    type N = f64;

    fn lit(&self, q: &Rational) -> Option<f64> {
        Some(q.to_f64())
    }

    fn int(&self, i: i64) -> f64 {
        i as f64
    }

    fn to_int(&self, x: &f64) -> Option<i64> {
        const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
        (x.fract() == 0.0 && (-LIMIT..LIMIT).contains(x)).then_some(*x as i64)
    }

    fn free(&self, v: VarId) -> Option<Value<f64>> {
        (self.env)(v)
    }

    fn cmp(&self, a: &f64, b: &f64) -> Option<Ordering> {
        a.partial_cmp(b)
    }

    fn coerce(&self, c: Coercion, x: &f64) -> Option<f64> {
        match c {
            Coercion::Int2Nat if *x < 0.0 => None,
            Coercion::Real2Prob if x.is_nan() || *x < 0.0 => None,
            Coercion::Real2Int => Some(x.floor()),
            _ => Some(*x),
        }
    }

    fn add(&self, a: &f64, b: &f64, _: &mut u64) -> Option<f64> {
        Some(a + b)
    }

    fn mul(&self, a: &f64, b: &f64, ty: &Type, _: &mut u64) -> Option<f64> {
        // measure theory's 0 * ∞ = 0 for probs (weights), IEEE for reals
        Some(if *ty == Type::Prob && (*a == 0.0 || *b == 0.0) {
            0.0
        } else {
            a * b
        })
    }

    fn prim(&self, p: Prim, args: &[f64], _: &Type, budget: &mut u64) -> Option<f64> {
        Some(match (p, args) {
            (Prim::Neg, [x]) => -x,
            (Prim::Recip, [x]) => 1.0 / x,
            (Prim::Pow, [x, n]) => libm::pow(*x, *n),
            (Prim::RealPow, [x, y]) => {
                if *y == 0.0 && !x.is_nan() {
                    1.0
                } else {
                    libm::pow(*x, *y)
                }
            }
            (Prim::NatRoot, [x, n]) => {
                if *n == 0.0 {
                    return None;
                } else if *n == 2.0 {
                    libm::sqrt(*x)
                } else if *n == 3.0 {
                    libm::cbrt(*x)
                } else {
                    libm::pow(*x, 1.0 / n)
                }
            }
            (Prim::Exp, [x]) => libm::exp(*x),
            (Prim::Log, [x]) => libm::log(*x),
            (Prim::Sqrt, [x]) => libm::sqrt(*x),
            (Prim::Pi, []) => std::f64::consts::PI,
            (Prim::Infinity, []) => f64::INFINITY,
            (Prim::Abs, [x]) => x.abs(),
            (Prim::Signum, [x]) => {
                if *x > 0.0 {
                    1.0
                } else if *x < 0.0 {
                    -1.0
                } else {
                    *x
                }
            }
            (Prim::Floor, [x]) => x.floor(),
            (Prim::Erf, [x]) => libm::erf(*x),
            (Prim::Choose, [n, k]) => return choose_f64(*n, *k, budget),
            (Prim::GammaFunc, [x]) => return gamma_f64(*x),
            (Prim::BetaFunc, [a, b]) => beta_f64(*a, *b),
            (Prim::Min | Prim::Max, [x, y]) => {
                if x.is_nan() {
                    *x
                } else if y.is_nan() {
                    *y
                } else if p == Prim::Min {
                    x.min(*y)
                } else {
                    x.max(*y)
                }
            }
            (Prim::Sin, [x]) => libm::sin(*x),
            (Prim::Cos, [x]) => libm::cos(*x),
            (Prim::Tan, [x]) => libm::tan(*x),
            (Prim::Asin, [x]) => libm::asin(*x),
            (Prim::Acos, [x]) => libm::acos(*x),
            (Prim::Atan, [x]) => libm::atan(*x),
            (Prim::Sinh, [x]) => libm::sinh(*x),
            (Prim::Cosh, [x]) => libm::cosh(*x),
            (Prim::Tanh, [x]) => libm::tanh(*x),
            (Prim::Asinh, [x]) => libm::asinh(*x),
            (Prim::Acosh, [x]) => libm::acosh(*x),
            (Prim::Atanh, [x]) => libm::atanh(*x),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
