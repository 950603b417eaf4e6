//! The loop IR's interpreter (issue 11, deliverable 5): runs a verified [`Program`] on
//! concrete arguments, in `f64` with `prob` in log space (a `prob` value is `ln p`, so
//! `+` on probs is a log-sum-exp and `*` a sum of logarithms), and counts the work done
//! ([`Stats`]: loop iterations summed over all loops, array element reads, allocations),
//! which is how the passes' asymptotic win is measured before any kernel is compiled.
//!
//! It is an oracle for lowered programs, checked itself against direct Rust computations
//! (tests) and later against the reference interpreter: it must not share code with
//! `slic-semantics` (a dev-dependency only), and its primitives are written here, on log
//! space where the type is `prob`. Run-time failures (an index out of bounds, an unsafe
//! coercion of a negative number, integer overflow) are [`RunError`]s, never panics; a
//! program that fails `verify::verify` is refused before it runs.

use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};
use crate::verify::{verify, VerifyError};
use slic_algebra::{Coercion, Prim};
use std::fmt;
use std::rc::Rc;

/// A run-time value. `Prob` holds `ln p`. Parameter arrays are shared, immutable.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Nat(u64),
    Int(i64),
    Real(f64),
    /// `ln p` of a probability or weight `p >= 0`.
    Prob(f64),
    Bool(bool),
    Array(Rc<[Val]>),
}

impl Val {
    /// The prob value of a linear `p >= 0`.
    pub fn prob(p: f64) -> Val {
        Val::Prob(p.ln())
    }

    /// An array of values.
    pub fn array(items: Vec<Val>) -> Val {
        Val::Array(items.into())
    }

    /// The linear value of a number (`exp` of a prob's logarithm), `None` for the rest.
    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Val::Nat(n) => Some(*n as f64),
            Val::Int(n) => Some(*n as f64),
            Val::Real(x) => Some(*x),
            Val::Prob(l) => Some(l.exp()),
            Val::Bool(_) | Val::Array(_) => None,
        }
    }
}

/// The work a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Loop bodies entered, summed over all loops.
    pub iterations: u64,
    /// Array elements read by expressions (an element of an array of arrays counts once
    /// per `[ ]`; `size` reads none, and the update `a[i] += e` is a write, not a read).
    pub array_reads: u64,
    /// `alloc` statements executed.
    pub allocations: u64,
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The program is ill formed.
    Verify(VerifyError),
    /// The arguments do not match the parameters in number.
    ArgCount { expected: usize, found: usize },
    /// An argument's value does not have its parameter's type.
    ArgType { name: String, expected: String },
    /// An array index outside `0..size`.
    OutOfBounds {
        array: String,
        index: i128,
        size: usize,
        at: String,
    },
    /// An arithmetic failure: overflow, a negative `int2nat`/`real2prob`, a loop bound or
    /// size out of range, `choose` of a huge argument.
    Arith { what: String, at: String },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Verify(e) => write!(f, "ill-formed program: {e}"),
            RunError::ArgCount { expected, found } => {
                write!(f, "expected {expected} arguments, found {found}")
            }
            RunError::ArgType { name, expected } => {
                write!(f, "argument `{name}` is not a value of type {expected}")
            }
            RunError::OutOfBounds {
                array,
                index,
                size,
                at,
            } => {
                write!(
                    f,
                    "index {index} out of bounds for `{array}` of size {size}, in `{at}`"
                )
            }
            RunError::Arith { what, at } => write!(f, "{what}, in `{at}`"),
        }
    }
}

impl std::error::Error for RunError {}

/// Verifies `p`, then runs it on `args` (one per parameter, in order).
pub fn run(p: &Program, args: &[Val]) -> Result<(Val, Stats), RunError> {
    verify(p).map_err(RunError::Verify)?;
    if args.len() != p.params.len() {
        return Err(RunError::ArgCount {
            expected: p.params.len(),
            found: args.len(),
        });
    }
    let mut m = Machine {
        env: Vec::new(),
        stats: Stats::default(),
    };
    for ((name, ty), v) in p.params.iter().zip(args) {
        if !has_type(v, ty) {
            return Err(RunError::ArgType {
                name: name.clone(),
                expected: ty.to_string(),
            });
        }
        m.env.push((name.clone(), Slot::Val(v.clone())));
    }
    // not `block`: the body's bindings stay in scope for the result
    for s in &p.body {
        m.stmt(s)?;
    }
    let at = format!("return {}", p.result);
    let v = m.expr(&p.result, &at)?;
    Ok((v, m.stats))
}

fn has_type(v: &Val, t: &slic_algebra::Type) -> bool {
    use slic_algebra::Type;
    match (v, t) {
        (Val::Nat(_), Type::Nat)
        | (Val::Int(_), Type::Int)
        | (Val::Real(_), Type::Real)
        | (Val::Prob(_), Type::Prob)
        | (Val::Bool(_), Type::Bool) => true,
        (Val::Array(items), Type::Array(e)) => items.iter().all(|x| has_type(x, e)),
        _ => false,
    }
}

/// What a name holds: an immutable value (parameters, lets, loop indices), an
/// accumulator, or an allocated array.
enum Slot {
    Val(Val),
    Buf(Vec<Val>),
}

struct Machine {
    /// Innermost binding last; blocks truncate it back on exit, so shadowing works.
    env: Vec<(String, Slot)>,
    stats: Stats,
}

fn arith(what: impl Into<String>, at: &str) -> RunError {
    RunError::Arith {
        what: what.into(),
        at: at.into(),
    }
}

/// `ln(e^a + e^b)` without overflow; `-∞` is the zero of probs.
fn log_add(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY {
        return m;
    }
    if m == f64::INFINITY {
        return m;
    }
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// `ln(e^a · e^b)`, with measure theory's `0 · ∞ = 0`.
fn log_mul(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY || b == f64::NEG_INFINITY {
        f64::NEG_INFINITY
    } else {
        a + b
    }
}

/// The zero of a scalar type: what `alloc` fills arrays with.
fn zero(t: &slic_algebra::Type) -> Val {
    use slic_algebra::Type;
    match t {
        Type::Nat => Val::Nat(0),
        Type::Int => Val::Int(0),
        Type::Prob => Val::Prob(f64::NEG_INFINITY),
        Type::Bool => Val::Bool(false),
        _ => Val::Real(0.0),
    }
}

impl Machine {
    fn lookup(&self, name: &str) -> Option<&Slot> {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    fn lookup_mut(&mut self, name: &str) -> Option<&mut Slot> {
        self.env
            .iter_mut()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    fn block(&mut self, body: &[Stmt]) -> Result<(), RunError> {
        let mark = self.env.len();
        for s in body {
            self.stmt(s)?;
        }
        self.env.truncate(mark);
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), RunError> {
        match s {
            // TODO(issue 11): measure programs are run by the measure interpreter
            Stmt::Draw { .. } | Stmt::Factor(_) | Stmt::Reject => {
                return Err(arith("a measure statement".to_string(), &s.head()));
            }
            Stmt::Let { name, value, .. } => {
                let v = self.expr(value, &s.head())?;
                self.env.push((name.clone(), Slot::Val(v)));
            }
            Stmt::Var { name, ty, init } => {
                // an accumulator without an initial value is never read before a write
                // (verified), so any placeholder of its type will do
                let v = match init {
                    Some(e) => self.expr(e, &s.head())?,
                    None => zero(ty),
                };
                self.env.push((name.clone(), Slot::Val(v)));
            }
            Stmt::Assign { name, op, value } => {
                let at = s.head();
                let v = self.expr(value, &at)?;
                let old = match self.lookup(name) {
                    Some(Slot::Val(old)) => old.clone(),
                    _ => return Err(arith(format!("`{name}` is not an accumulator"), &at)),
                };
                let new = combine(*op, old, v, &at)?;
                if let Some(slot) = self.lookup_mut(name) {
                    *slot = Slot::Val(new);
                }
            }
            Stmt::Alloc { name, elem, size } => {
                let at = s.head();
                let n = self.expr(size, &at)?;
                let n = match n {
                    Val::Nat(n) => usize::try_from(n).map_err(|_| arith("size too large", &at))?,
                    _ => return Err(arith("size is not a nat", &at)),
                };
                self.stats.allocations += 1;
                self.env
                    .push((name.clone(), Slot::Buf(vec![zero(elem); n])));
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let at = s.head();
                let i = self.expr(index, &at)?;
                let v = self.expr(value, &at)?;
                let buf = match self.lookup_mut(array) {
                    Some(Slot::Buf(b)) => b,
                    _ => return Err(arith(format!("`{array}` is not an allocated array"), &at)),
                };
                let k = in_bounds(&i, buf.len(), array, &at)?;
                let old = buf[k].clone();
                buf[k] = combine(*op, old, v, &at)?;
            }
            Stmt::For { var, lo, hi, body } => {
                let at = s.head();
                let lo = self.expr(lo, &at)?;
                let hi = self.expr(hi, &at)?;
                let (lo, hi, nat) = match (lo, hi) {
                    (Val::Nat(a), Val::Nat(b)) => (i128::from(a), i128::from(b), true),
                    (Val::Int(a), Val::Int(b)) => (i128::from(a), i128::from(b), false),
                    _ => return Err(arith("loop bounds are not integers", &at)),
                };
                let mut k = lo;
                while k < hi {
                    self.stats.iterations += 1;
                    // the bounds fit their type, so every index between them does too
                    let iv = if nat {
                        Val::Nat(k as u64)
                    } else {
                        Val::Int(k as i64)
                    };
                    self.env.push((var.clone(), Slot::Val(iv)));
                    let r = self.block(body);
                    self.env.pop();
                    r?;
                    k += 1;
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let at = s.head();
                match self.expr(cond, &at)? {
                    Val::Bool(true) => self.block(then)?,
                    Val::Bool(false) => self.block(otherwise)?,
                    _ => return Err(arith("condition is not a bool", &at)),
                }
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr, at: &str) -> Result<Val, RunError> {
        match e {
            Expr::Lit(l) => Ok(match *l {
                Lit::Nat(n) => Val::Nat(n),
                Lit::Int(n) => Val::Int(n),
                Lit::Real(x) => Val::Real(x),
                Lit::Prob(l) => Val::Prob(l),
                Lit::Bool(b) => Val::Bool(b),
            }),
            Expr::Var(x) => match self.lookup(x) {
                Some(Slot::Val(v)) => Ok(v.clone()),
                // an allocated array is read element by element, never as a whole
                _ => Err(arith(format!("`{x}` is not a scalar"), at)),
            },
            Expr::Index(a, i) => {
                let i = self.expr(i, at)?;
                self.stats.array_reads += 1;
                self.with_array(a, at, |items| {
                    let k = in_bounds(&i, items.len(), &a.to_string(), at)?;
                    Ok(items[k].clone())
                })
            }
            Expr::Convert(c, x) => {
                let v = self.expr(x, at)?;
                convert(*c, v, at)
            }
            Expr::Prim(Prim::Size, args) => {
                let a = args.first().ok_or_else(|| arith("size of nothing", at))?;
                let n = self.with_array(a, at, |items| Ok(items.len()))?;
                Ok(Val::Nat(n as u64))
            }
            Expr::Prim(p, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.expr(a, at)?);
                }
                prim(*p, &vals, at)
            }
        }
    }

    /// `f` of the elements of an array expression (a parameter, an allocation, or an
    /// element of an array of arrays, which counts as one read), borrowed: an allocated
    /// array is never copied to be read.
    fn with_array<R>(
        &mut self,
        a: &Expr,
        at: &str,
        f: impl FnOnce(&[Val]) -> Result<R, RunError>,
    ) -> Result<R, RunError> {
        if let Expr::Var(x) = a {
            return match self.lookup(x) {
                Some(Slot::Buf(b)) => f(b),
                Some(Slot::Val(Val::Array(items))) => f(items),
                _ => Err(arith(format!("`{x}` is not an array"), at)),
            };
        }
        match self.expr(a, at)? {
            Val::Array(items) => f(&items),
            _ => Err(arith(format!("`{a}` is not an array"), at)),
        }
    }
}

fn in_bounds(i: &Val, size: usize, array: &str, at: &str) -> Result<usize, RunError> {
    let k: i128 = match i {
        Val::Nat(n) => i128::from(*n),
        Val::Int(n) => i128::from(*n),
        _ => return Err(arith("index is not an integer", at)),
    };
    if k < 0 || k >= size as i128 {
        return Err(RunError::OutOfBounds {
            array: array.into(),
            index: k,
            size,
            at: at.into(),
        });
    }
    Ok(k as usize)
}

fn combine(op: AssignOp, old: Val, v: Val, at: &str) -> Result<Val, RunError> {
    match op {
        AssignOp::Set => Ok(v),
        AssignOp::Add => prim(Prim::Add, &[old, v], at),
        AssignOp::Mul => prim(Prim::Mul, &[old, v], at),
        AssignOp::Max => prim(Prim::Max, &[old, v], at),
    }
}

fn convert(c: Coercion, v: Val, at: &str) -> Result<Val, RunError> {
    Ok(match (c, v) {
        (Coercion::Nat2Int, Val::Nat(n)) => {
            Val::Int(i64::try_from(n).map_err(|_| arith("nat2int overflows", at))?)
        }
        (Coercion::Nat2Prob, Val::Nat(n)) => Val::Prob((n as f64).ln()),
        (Coercion::Nat2Real, Val::Nat(n)) => Val::Real(n as f64),
        (Coercion::Int2Real, Val::Int(n)) => Val::Real(n as f64),
        (Coercion::Prob2Real, Val::Prob(l)) => Val::Real(l.exp()),
        (Coercion::Int2Nat, Val::Int(n)) => {
            Val::Nat(u64::try_from(n).map_err(|_| arith(format!("int2nat of {n}"), at))?)
        }
        (Coercion::Real2Prob, Val::Real(x)) => {
            if x >= 0.0 {
                Val::Prob(x.ln())
            } else {
                return Err(arith(format!("real2prob of {x}"), at));
            }
        }
        (Coercion::Real2Int, Val::Real(x)) => {
            let f = x.floor();
            if f.is_finite() && f >= i64::MIN as f64 && f < i64::MAX as f64 {
                Val::Int(f as i64)
            } else {
                return Err(arith(format!("real2int of {x}"), at));
            }
        }
        (c, v) => return Err(arith(format!("{} of {v:?}", c.name()), at)),
    })
}

fn overflow(p: Prim, at: &str) -> RunError {
    arith(format!("{p:?} overflows"), at)
}

/// `choose(n, k)` exactly, or an error when it does not fit a nat.
fn choose(n: u64, k: u64, at: &str) -> Result<u64, RunError> {
    if k > n {
        return Ok(0);
    }
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for j in 0..k {
        // c·(n-j)/(j+1) stays an integer: it is choose(n, j+1)
        c = c
            .checked_mul(u128::from(n - j))
            .ok_or_else(|| overflow(Prim::Choose, at))?
            / u128::from(j + 1);
        if c > u128::from(u64::MAX) {
            return Err(overflow(Prim::Choose, at));
        }
    }
    Ok(c as u64)
}

/// `ln Γ(x)` where `Γ(x) >= 0` (a prob), an error where it is negative.
fn ln_gamma(x: f64, at: &str) -> Result<f64, RunError> {
    if x <= 0.0 && x == x.floor() {
        return Ok(f64::INFINITY); // a pole
    }
    let (l, sign) = libm::lgamma_r(x);
    if sign < 0 {
        return Err(arith(format!("gammaFunc({x}) is negative, not a prob"), at));
    }
    Ok(l)
}

/// One primitive on values of the verified types.
fn prim(p: Prim, args: &[Val], at: &str) -> Result<Val, RunError> {
    use Val::*;
    let bad = || arith(format!("{p:?} of {args:?}"), at);
    Ok(match (p, args) {
        (Prim::Add | Prim::Mul | Prim::Min | Prim::Max, [first, rest @ ..]) => {
            let mut acc = first.clone();
            for x in rest {
                acc = binary(p, &acc, x).ok_or_else(|| overflow(p, at))?;
            }
            acc
        }
        (Prim::Neg, [Int(n)]) => Int(n.checked_neg().ok_or_else(|| overflow(p, at))?),
        (Prim::Neg, [Real(x)]) => Real(-x),
        (Prim::Recip, [Real(x)]) => Real(1.0 / x),
        (Prim::Recip, [Prob(l)]) => Prob(-l),
        (Prim::Pow, [x, Nat(n)]) => match x {
            Nat(a) => Nat(u32::try_from(*n)
                .ok()
                .and_then(|n| a.checked_pow(n))
                .ok_or_else(|| overflow(p, at))?),
            Int(a) => Int(u32::try_from(*n)
                .ok()
                .and_then(|n| a.checked_pow(n))
                .ok_or_else(|| overflow(p, at))?),
            Real(a) => Real(libm::pow(*a, *n as f64)),
            Prob(l) => Prob(if *n == 0 { 0.0 } else { *n as f64 * l }),
            _ => return Err(bad()),
        },
        (Prim::RealPow, [Prob(l), Real(y)]) => Prob(if *y == 0.0 { 0.0 } else { y * l }),
        (Prim::NatRoot, [Prob(l), Nat(n)]) => {
            if *n == 0 {
                return Err(arith("natroot of degree 0", at));
            }
            Prob(l / *n as f64)
        }
        (Prim::Exp, [Real(x)]) => Prob(*x),
        (Prim::Log, [Prob(l)]) => Real(*l),
        (Prim::Sqrt, [Prob(l)]) => Prob(l / 2.0),
        (Prim::Pi, []) => Prob(std::f64::consts::PI.ln()),
        (Prim::Infinity, []) => Prob(f64::INFINITY),
        (Prim::Abs, [Int(n)]) => Nat(n.unsigned_abs()),
        (Prim::Abs, [Real(x)]) => Prob(x.abs().ln()),
        (Prim::Signum, [Int(n)]) => Int(n.signum()),
        (Prim::Signum, [Real(x)]) => Real(if *x > 0.0 {
            1.0
        } else if *x < 0.0 {
            -1.0
        } else {
            *x
        }),
        (Prim::Floor, [Prob(l)]) => {
            let f = l.exp().floor();
            if f < u64::MAX as f64 {
                Nat(f as u64)
            } else {
                return Err(overflow(p, at));
            }
        }
        (Prim::Floor, [Real(x)]) => convert(Coercion::Real2Int, Real(*x), at)?,
        (Prim::Erf, [Real(x)]) => Real(libm::erf(*x)),
        (Prim::Erf, [Prob(l)]) => Prob(libm::erf(l.exp()).ln()),
        (Prim::Choose, [Nat(n), Nat(k)]) => Nat(choose(*n, *k, at)?),
        (Prim::GammaFunc, [Real(x)]) => Prob(ln_gamma(*x, at)?),
        (Prim::BetaFunc, [Prob(a), Prob(b)]) => {
            let (a, b) = (a.exp(), b.exp());
            Prob(ln_gamma(a, at)? + ln_gamma(b, at)? - ln_gamma(a + b, at)?)
        }
        (Prim::Sin, [Real(x)]) => Real(libm::sin(*x)),
        (Prim::Cos, [Real(x)]) => Real(libm::cos(*x)),
        (Prim::Tan, [Real(x)]) => Real(libm::tan(*x)),
        (Prim::Asin, [Real(x)]) => Real(libm::asin(*x)),
        (Prim::Acos, [Real(x)]) => Real(libm::acos(*x)),
        (Prim::Atan, [Real(x)]) => Real(libm::atan(*x)),
        (Prim::Sinh, [Real(x)]) => Real(libm::sinh(*x)),
        (Prim::Cosh, [Real(x)]) => Real(libm::cosh(*x)),
        (Prim::Tanh, [Real(x)]) => Real(libm::tanh(*x)),
        (Prim::Asinh, [Real(x)]) => Real(libm::asinh(*x)),
        (Prim::Acosh, [Real(x)]) => Real(libm::acosh(*x)),
        (Prim::Atanh, [Real(x)]) => Real(libm::atanh(*x)),
        (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne, [a, b]) => {
            let o = compare(a, b).ok_or_else(bad)?;
            Bool(match p {
                Prim::Lt => o == Some(std::cmp::Ordering::Less),
                Prim::Le => matches!(
                    o,
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                ),
                Prim::Eq => o == Some(std::cmp::Ordering::Equal),
                _ => o != Some(std::cmp::Ordering::Equal),
            })
        }
        (Prim::And, _) | (Prim::Or, _) => {
            let mut acc = p == Prim::And;
            for x in args {
                match x {
                    Bool(b) if p == Prim::And => acc &= *b,
                    Bool(b) => acc |= *b,
                    _ => return Err(bad()),
                }
            }
            Bool(acc)
        }
        (Prim::Not, [Bool(a)]) => Bool(!a),
        (Prim::Xor, [Bool(a), Bool(b)]) => Bool(a != b),
        (Prim::Iff, [Bool(a), Bool(b)]) => Bool(a == b),
        (Prim::Impl, [Bool(a), Bool(b)]) => Bool(!a || *b),
        (Prim::Nand, [Bool(a), Bool(b)]) => Bool(!(*a && *b)),
        (Prim::Nor, [Bool(a), Bool(b)]) => Bool(!(*a || *b)),
        _ => return Err(bad()),
    })
}

/// Two values of one numeric type (or bools) compared; the outer `None` for a type
/// mismatch, the inner for an unordered (NaN) pair. Probs compare by their logarithms.
fn compare(a: &Val, b: &Val) -> Option<Option<std::cmp::Ordering>> {
    Some(match (a, b) {
        (Val::Nat(x), Val::Nat(y)) => Some(x.cmp(y)),
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(y)),
        (Val::Real(x), Val::Real(y)) | (Val::Prob(x), Val::Prob(y)) => x.partial_cmp(y),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        _ => return None,
    })
}

/// `+`, `*`, `min`, `max` of two values of one type; `None` on integer overflow or a
/// type mismatch.
fn binary(p: Prim, a: &Val, b: &Val) -> Option<Val> {
    use Val::*;
    Some(match (p, a, b) {
        (Prim::Add, Nat(x), Nat(y)) => Nat(x.checked_add(*y)?),
        (Prim::Add, Int(x), Int(y)) => Int(x.checked_add(*y)?),
        (Prim::Add, Real(x), Real(y)) => Real(x + y),
        (Prim::Add, Prob(x), Prob(y)) => Prob(log_add(*x, *y)),
        (Prim::Mul, Nat(x), Nat(y)) => Nat(x.checked_mul(*y)?),
        (Prim::Mul, Int(x), Int(y)) => Int(x.checked_mul(*y)?),
        (Prim::Mul, Real(x), Real(y)) => Real(x * y),
        (Prim::Mul, Prob(x), Prob(y)) => Prob(log_mul(*x, *y)),
        (Prim::Min, Nat(x), Nat(y)) => Nat(*x.min(y)),
        (Prim::Min, Int(x), Int(y)) => Int(*x.min(y)),
        (Prim::Max, Nat(x), Nat(y)) => Nat(*x.max(y)),
        (Prim::Max, Int(x), Int(y)) => Int(*x.max(y)),
        // NaN wins, as in the algebra's float evaluation: a NaN is never hidden
        (Prim::Min | Prim::Max, Real(x), Real(y)) => Real(float_minmax(p, *x, *y)),
        (Prim::Min | Prim::Max, Prob(x), Prob(y)) => Prob(float_minmax(p, *x, *y)),
        _ => return None,
    })
}

fn float_minmax(p: Prim, x: f64, y: f64) -> f64 {
    if x.is_nan() {
        x
    } else if y.is_nan() {
        y
    } else if p == Prim::Min {
        x.min(y)
    } else {
        x.max(y)
    }
}
