//! A small builder of typed core terms for the interpreter's tests, standing in for the
//! `.hk` front end until it lands, plus statistics helpers for Monte Carlo checks.
//! Test-only: it trusts its caller to build well-typed terms.
#![allow(dead_code)]

use num_rational::BigRational;
use slic_algebra::{Coercion, Dist, Node, Pattern, Prim, Store, TermId, Type, VarId};
use slic_semantics::{eval, Env, EvalError, Rng, Summary, Value};

pub struct B {
    pub s: Store,
}

pub fn ratio(x: f64) -> BigRational {
    BigRational::from_float(x).unwrap_or_else(|| panic!("not finite: {x}"))
}

impl B {
    pub fn new() -> B {
        B { s: Store::new() }
    }
    pub fn ty(&self, t: TermId) -> Type {
        self.s.ty(t).clone()
    }
    pub fn lit(&mut self, x: f64, ty: Type) -> TermId {
        self.s.lit(ratio(x), ty)
    }
    pub fn real(&mut self, x: f64) -> TermId {
        self.lit(x, Type::Real)
    }
    pub fn prob(&mut self, x: f64) -> TermId {
        self.lit(x, Type::Prob)
    }
    pub fn nat(&mut self, n: u64) -> TermId {
        self.s.lit(BigRational::from_integer(n.into()), Type::Nat)
    }
    pub fn int(&mut self, n: i64) -> TermId {
        self.s.lit(BigRational::from_integer(n.into()), Type::Int)
    }
    pub fn boolean(&mut self, b: bool) -> TermId {
        self.s.intern(Node::Bool(b), Type::Bool)
    }
    pub fn unit(&mut self) -> TermId {
        self.s.intern(Node::Unit, Type::Unit)
    }
    /// A fresh variable and its term.
    pub fn var(&mut self, name: &str, ty: Type) -> (VarId, TermId) {
        let v = self.s.fresh_var(name, ty);
        (v, self.s.var_term(v))
    }
    pub fn p(&mut self, p: Prim, args: Vec<TermId>) -> TermId {
        use Prim::*;
        let first = args.first().map(|a| self.ty(*a));
        let ty = match p {
            Add | Mul | Neg | Recip | Pow | Min | Max | Signum | Erf => first.unwrap_or(Type::Real),
            RealPow | NatRoot | Exp | Sqrt | Pi | Infinity | GammaFunc | BetaFunc => Type::Prob,
            Log | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh
            | Atanh => Type::Real,
            Abs => match first {
                Some(Type::Int) => Type::Nat,
                _ => Type::Prob,
            },
            Floor => match first {
                Some(Type::Prob) => Type::Nat,
                _ => Type::Int,
            },
            Choose | Size => Type::Nat,
            Lt | Le | Eq | Ne | And | Or | Not | Xor | Iff | Impl | Nand | Nor => Type::Bool,
            Reduce => self.ty(args[1]),
        };
        self.s.prim(p, args, ty)
    }
    pub fn add(&mut self, a: TermId, b: TermId) -> TermId {
        self.p(Prim::Add, vec![a, b])
    }
    pub fn mul(&mut self, a: TermId, b: TermId) -> TermId {
        self.p(Prim::Mul, vec![a, b])
    }
    pub fn coerce(&mut self, c: Coercion, t: TermId) -> TermId {
        self.s.intern(Node::Coerce(c, t), c.to_type())
    }
    pub fn let_(&mut self, x: VarId, e: TermId, body: TermId) -> TermId {
        let ty = self.ty(body);
        self.s.intern(Node::Let(x, e, body), ty)
    }
    pub fn lam(&mut self, x: VarId, body: TermId) -> TermId {
        let ty = Type::fun(self.s.var_type(x).clone(), self.ty(body));
        self.s.intern(Node::Lam(x, body), ty)
    }
    pub fn app(&mut self, f: TermId, a: TermId) -> TermId {
        let ty = match self.ty(f) {
            Type::Fun(_, r) => (*r).clone(),
            other => other,
        };
        self.s.intern(Node::App(f, a), ty)
    }
    pub fn if_(&mut self, c: TermId, a: TermId, b: TermId) -> TermId {
        let ty = self.ty(a);
        self.s.intern(Node::If(c, a, b), ty)
    }
    pub fn match_(&mut self, e: TermId, arms: Vec<(Pattern, TermId)>) -> TermId {
        let ty = self.ty(arms[0].1);
        self.s.intern(Node::Match(e, arms), ty)
    }
    pub fn pair(&mut self, a: TermId, b: TermId) -> TermId {
        let ty = Type::pair(self.ty(a), self.ty(b));
        self.s.intern(Node::Pair(a, b), ty)
    }
    pub fn left(&mut self, a: TermId, other: Type) -> TermId {
        let ty = Type::either(self.ty(a), other);
        self.s.intern(Node::Left(a), ty)
    }
    pub fn right(&mut self, other: Type, a: TermId) -> TermId {
        let ty = Type::either(other, self.ty(a));
        self.s.intern(Node::Right(a), ty)
    }
    pub fn just(&mut self, a: TermId) -> TermId {
        let ty = Type::maybe(self.ty(a));
        self.s.intern(Node::Just(a), ty)
    }
    pub fn nothing(&mut self, t: Type) -> TermId {
        self.s.intern(Node::Nothing, Type::maybe(t))
    }
    pub fn arr(&mut self, items: Vec<TermId>, elem: Type) -> TermId {
        self.s.intern(Node::ArrayLit(items), Type::array(elem))
    }
    pub fn array(&mut self, i: VarId, n: TermId, body: TermId) -> TermId {
        let ty = Type::array(self.ty(body));
        self.s.intern(Node::Array(i, n, body), ty)
    }
    pub fn index(&mut self, a: TermId, i: TermId) -> TermId {
        let ty = self.ty(a).array_of().cloned().unwrap_or(Type::Unit);
        self.s.intern(Node::Index(a, i), ty)
    }
    pub fn summate(&mut self, i: VarId, lo: TermId, hi: TermId, body: TermId) -> TermId {
        let ty = self.ty(body);
        self.s.intern(Node::Summate(i, lo, hi, body), ty)
    }
    pub fn product(&mut self, i: VarId, lo: TermId, hi: TermId, body: TermId) -> TermId {
        let ty = self.ty(body);
        self.s.intern(Node::Product(i, lo, hi, body), ty)
    }
    pub fn integrate(&mut self, x: VarId, lo: TermId, hi: TermId, body: TermId) -> TermId {
        let ty = self.ty(body);
        self.s.intern(Node::Integrate(x, lo, hi, body), ty)
    }
    pub fn bucket(&mut self, j: VarId, lo: TermId, hi: TermId, r: TermId) -> TermId {
        let ty = self.ty(r);
        self.s.intern(Node::Bucket(j, lo, hi, r), ty)
    }
    pub fn r_add(&mut self, e: TermId) -> TermId {
        let ty = self.ty(e);
        self.s.intern(Node::RAdd(e), ty)
    }
    pub fn r_nop(&mut self) -> TermId {
        self.s.intern(Node::RNop, Type::Unit)
    }
    pub fn r_index(&mut self, b: VarId, n: TermId, e: TermId, r: TermId) -> TermId {
        let ty = Type::array(self.ty(r));
        self.s.intern(Node::RIndex(b, n, e, r), ty)
    }
    pub fn r_split(&mut self, c: TermId, r1: TermId, r2: TermId) -> TermId {
        let ty = Type::pair(self.ty(r1), self.ty(r2));
        self.s.intern(Node::RSplit(c, r1, r2), ty)
    }
    pub fn r_fanout(&mut self, r1: TermId, r2: TermId) -> TermId {
        let ty = Type::pair(self.ty(r1), self.ty(r2));
        self.s.intern(Node::RFanout(r1, r2), ty)
    }
    // ---- measures ----
    pub fn dist(&mut self, d: Dist, args: Vec<TermId>) -> TermId {
        self.s
            .intern(Node::Dist(d, args), Type::measure(d.support_type()))
    }
    pub fn normal(&mut self, mu: f64, sd: f64) -> TermId {
        let a = self.real(mu);
        let b = self.prob(sd);
        self.dist(Dist::Normal, vec![a, b])
    }
    pub fn dirac(&mut self, e: TermId) -> TermId {
        let ty = Type::measure(self.ty(e));
        self.s.intern(Node::Dirac(e), ty)
    }
    pub fn weight(&mut self, w: TermId, m: TermId) -> TermId {
        let ty = self.ty(m);
        self.s.intern(Node::Weight(w, m), ty)
    }
    pub fn reject(&mut self, t: Type) -> TermId {
        self.s.intern(Node::Reject, Type::measure(t))
    }
    pub fn sup(&mut self, ms: Vec<TermId>) -> TermId {
        let ty = self.ty(ms[0]);
        self.s.intern(Node::Superpose(ms), ty)
    }
    pub fn bind(&mut self, x: VarId, m: TermId, k: TermId) -> TermId {
        let ty = self.ty(k);
        self.s.intern(Node::Bind(x, m, k), ty)
    }
    pub fn plate(&mut self, i: VarId, n: TermId, m: TermId) -> TermId {
        let elem = self.ty(m).measure_of().cloned().unwrap_or(Type::Unit);
        self.s
            .intern(Node::Plate(i, n, m), Type::measure(Type::array(elem)))
    }
    pub fn chain(&mut self, s: VarId, s0: TermId, n: TermId, m: TermId) -> TermId {
        let (a, st) = match self.ty(m).measure_of() {
            Some(Type::Pair(a, st)) => ((**a).clone(), (**st).clone()),
            _ => (Type::Unit, Type::Unit),
        };
        self.s.intern(
            Node::Chain(s, s0, n, m),
            Type::measure(Type::pair(Type::array(a), st)),
        )
    }
    pub fn observe(&mut self, m: TermId, v: TermId) -> TermId {
        let ty = self.ty(m);
        self.s.intern(Node::Observe(m, v), ty)
    }
    /// Evaluates a closed term.
    pub fn eval(&self, t: TermId) -> Result<Value, EvalError> {
        eval(&self.s, t, &Env::new())
    }
    /// `n` weighted draws of a closed measure term.
    pub fn draws(&self, m: TermId, n: usize, seed: u64) -> Vec<(Value, f64)> {
        let mv = self.eval(m).unwrap_or_else(|e| panic!("{e}"));
        let mut rng = Rng::seed_from_u64(seed);
        slic_semantics::sample_n(&self.s, &mv, &mut rng, n).unwrap_or_else(|e| panic!("{e}"))
    }
    pub fn summary(&self, m: TermId, n: usize, seed: u64) -> Summary {
        Summary::from_samples(&self.draws(m, n, seed))
    }
}

/// Self-normalised weighted mean of `f(v)` over draws, and its standard error (delta
/// method: sqrt(Σ p_i² (f_i - mean)²)).
pub fn weighted_mean(draws: &[(Value, f64)], f: impl Fn(&Value) -> f64) -> (f64, f64) {
    let m = draws.iter().map(|d| d.1).fold(f64::NEG_INFINITY, f64::max);
    let ws: Vec<f64> = draws.iter().map(|d| (d.1 - m).exp()).collect();
    let total: f64 = ws.iter().sum();
    let fs: Vec<f64> = draws.iter().map(|d| f(&d.0)).collect();
    let mean = ws.iter().zip(&fs).map(|(w, x)| w * x).sum::<f64>() / total;
    let var = ws
        .iter()
        .zip(&fs)
        .map(|(w, x)| (w / total) * (w / total) * (x - mean) * (x - mean))
        .sum::<f64>();
    (mean, var.sqrt())
}

/// Asserts `got` is within 5 standard errors of `want` (and the se is sensible).
pub fn within(what: &str, got: (f64, f64), want: f64) {
    let (mean, se) = got;
    assert!(se.is_finite(), "{what}: se {se}");
    assert!(
        (mean - want).abs() <= 5.0 * se + 1e-12 * want.abs(),
        "{what}: estimate {mean} ± {se}, expected {want} (off by {:.1} se)",
        (mean - want).abs() / se
    );
}

pub fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v:?}"))
}

pub fn pat_var(v: VarId) -> Pattern {
    Pattern::Var(v)
}

/// Parses and elaborates `.hk` text, panicking with the diagnostics on failure.
pub fn hk(text: &str) -> (Store, TermId) {
    let mut s = Store::new();
    match slic_algebra::front::load(&mut s, text) {
        Ok(t) => (s, t),
        Err(ds) => panic!("{text}\n{ds:?}"),
    }
}

/// A closed `.hk` program evaluated to a value.
pub struct Prog {
    pub s: Store,
    pub t: TermId,
    pub v: Value,
}

pub fn prog(text: &str) -> Prog {
    let (s, t) = hk(text);
    let v = eval(&s, t, &Env::new()).unwrap_or_else(|e| panic!("{text}\n{e}"));
    Prog { s, t, v }
}

impl Prog {
    pub fn draws(&self, n: usize, seed: u64) -> Vec<(Value, f64)> {
        let mut rng = Rng::seed_from_u64(seed);
        slic_semantics::sample_n(&self.s, &self.v, &mut rng, n).unwrap_or_else(|e| panic!("{e}"))
    }
    pub fn expect(&self, h: &dyn Fn(&Value) -> Result<f64, EvalError>) -> slic_semantics::Estimate {
        slic_semantics::expect(&self.s, &self.v, h).unwrap_or_else(|e| panic!("{e}"))
    }
    pub fn mass(&self) -> f64 {
        self.expect(&|_| Ok(1.0)).value
    }
    pub fn mean(&self) -> f64 {
        let m = self.mass();
        self.expect(&|v| Ok(num(v))).value / m
    }
}
