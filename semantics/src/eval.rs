//! Deterministic evaluation of every term node: the heart of the reference interpreter.
//!
//! [`Interp`] evaluates a term in an environment to a [`Value`]. Expressions are
//! computed (primitives in `prim`, loops, arrays, `integrate` by adaptive quadrature,
//! `bucket` by the reducer semantics of the arrays paper, section 4.1 eq. (32)-(33));
//! measure terms evaluate to measure values without sampling (see `sample` and
//! `expect`). Transforms (`simplify`, `summarize`) are meaning-preserving, so they
//! evaluate as the identity.
//!
//! Safety on bad input: every limit is in [`EvalConfig`] and hitting one is an
//! [`EvalError::Budget`], never a hang or a stack overflow. Nesting depth is counted on
//! every recursive call and tail positions (`let` bodies, branches, applications) loop
//! instead of recursing, so long `let` chains cost no stack.
//!
//! Where an error happened: terms carry no source positions, so the interpreter remembers
//! the innermost term whose evaluation raised the error of the current top-level call
//! ([`Interp::error_site`]); the CLI maps that term back to `file:line:col` through the
//! elaborator's span map.
//!
//! This module must not sample or call the random number generator.

use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};
use slic_algebra::{Coercion, Node, Pattern, Prim, Rational, Store, TermId, Type, VarId};

use crate::error::{bad_arg, budget, overflow, EvalError, EvalResult};
use crate::prim;
use crate::quad::{self, Estimate, QuadConfig};
use crate::value::{Closure, Env, MeasureVal, Value};

/// Limits and tolerances of one interpreter run. Counters are per top-level call
/// (`eval`, `sample`, `expect`, `apply`).
#[derive(Clone, Debug)]
pub struct EvalConfig {
    /// Total loop iterations (summate, product, array, plate, chain, bucket, reduce).
    pub max_iterations: u64,
    /// Nesting depth of the evaluator's recursion. The default keeps the worst case within
    /// the 2 MiB stack of a test thread even in an unoptimised build (about 5 KiB of stack
    /// per level there, a few hundred bytes in release); raise it on bigger stacks.
    pub max_depth: usize,
    /// Largest array the interpreter will build.
    pub max_array_len: u64,
    /// Total integrand evaluations of numeric integrals and series terms.
    pub max_integrand_evals: u64,
    /// Most nested continuous integrals (`integrate` and continuous binders in `expect`).
    pub max_dimensions: usize,
    /// Largest `plate`/`chain` with random elements that `expect` integrates by nesting.
    pub max_plate_nesting: u64,
    /// Most terms of one infinite series (counting, poisson) in `expect`.
    pub max_series_terms: u64,
    /// Tolerances of each adaptive integral.
    pub quad: QuadConfig,
    /// An `integrate` expression whose estimated relative error exceeds this is an error.
    pub integrate_max_rel_err: f64,
}

impl Default for EvalConfig {
    fn default() -> EvalConfig {
        EvalConfig {
            max_iterations: 100_000_000,
            max_depth: 160,
            max_array_len: 1 << 26,
            max_integrand_evals: 20_000_000,
            max_dimensions: 4,
            max_plate_nesting: 4,
            max_series_terms: 1_000_000,
            quad: QuadConfig::default(),
            integrate_max_rel_err: 1e-6,
        }
    }
}

/// The reference interpreter over one store. Cheap to create; holds the budget counters.
pub struct Interp<'s> {
    pub(crate) store: &'s Store,
    pub(crate) config: EvalConfig,
    iterations: u64,
    pub(crate) depth: usize,
    evals: u64,
    pub(crate) dims: usize,
    /// The innermost term at which the current top-level call failed, with the error it
    /// raised (kept to tell this error from an older one; see [`Interp::error_site`]).
    site: Option<(TermId, EvalError)>,
}

/// Is this node a measure constructor (evaluates to a measure value as it stands)?
pub(crate) fn is_measure_node(n: &Node) -> bool {
    matches!(
        n,
        Node::Dirac(_)
            | Node::Weight(..)
            | Node::Reject
            | Node::Superpose(_)
            | Node::Bind(..)
            | Node::Plate(..)
            | Node::Chain(..)
            | Node::Dist(..)
            | Node::Observe(..)
    )
}

/// A loop bound or index as a wide integer.
fn as_index(v: &Value, what: &str) -> EvalResult<i128> {
    match v {
        Value::Nat(n) => Ok(i128::from(*n)),
        Value::Int(i) => Ok(i128::from(*i)),
        other => Err(bad_arg(
            what,
            format!("expected an integer, found {}", other.kind()),
        )),
    }
}

/// The natural log of a non-negative big rational, even when it under- or overflows f64.
fn ln_ratio(r: &Rational) -> f64 {
    if r.is_zero() {
        return f64::NEG_INFINITY;
    }
    let x = r.to_f64();
    if x > 0.0 && x.is_finite() && x >= f64::MIN_POSITIVE {
        return x.ln();
    }
    ln_big(&r.numer()) - ln_big(&r.denom())
}

fn ln_big(n: &BigInt) -> f64 {
    let bits = n.bits();
    let shift = bits.saturating_sub(60);
    let top = (n.abs() >> shift).to_f64().unwrap_or(f64::NAN);
    top.ln() + shift as f64 * std::f64::consts::LN_2
}

/// Converts a literal to a value of numeric type `ty`.
pub(crate) fn literal(r: &Rational, ty: &Type) -> EvalResult<Value> {
    let text = || r.to_string();
    match ty {
        Type::Nat | Type::Int => {
            if !r.is_integer() {
                return Err(bad_arg("literal", format!("{} is not an integer", text())));
            }
            // the common case, without big integers
            match (r.to_i64(), ty) {
                (Some(i), Type::Int) => return Ok(Value::Int(i)),
                (Some(i), _) if i >= 0 => return Ok(Value::Nat(i.unsigned_abs())),
                _ => {}
            }
            let n = r.numer();
            if *ty == Type::Nat {
                if n.is_negative() {
                    return Err(EvalError::NegativeToNat {
                        value: n.to_i128().unwrap_or(i128::MIN),
                    });
                }
                n.to_u64()
                    .map(Value::Nat)
                    .ok_or_else(|| overflow(format!("the nat literal {}", text())))
            } else {
                n.to_i64()
                    .map(Value::Int)
                    .ok_or_else(|| overflow(format!("the int literal {}", text())))
            }
        }
        Type::Prob => {
            if r.is_negative() {
                return Err(EvalError::NegativeToProb { value: r.to_f64() });
            }
            Ok(Value::Prob(ln_ratio(r)))
        }
        Type::Real => Ok(Value::Real(r.to_f64())),
        other => Err(bad_arg(
            "literal",
            format!("a number cannot have type {other}"),
        )),
    }
}

/// Applies a numeric coercion.
pub(crate) fn coerce(c: Coercion, v: &Value) -> EvalResult<Value> {
    let name = c.name();
    Ok(match (c, v) {
        (Coercion::Nat2Int, Value::Nat(n)) => {
            Value::Int(i64::try_from(*n).map_err(|_| overflow(format!("nat2int({n})")))?)
        }
        (Coercion::Nat2Prob, Value::Nat(n)) => Value::Prob((*n as f64).ln()),
        (Coercion::Nat2Real, Value::Nat(n)) => Value::Real(*n as f64),
        (Coercion::Int2Real, Value::Int(i)) => Value::Real(*i as f64),
        (Coercion::Prob2Real, Value::Prob(l)) => Value::Real(l.exp()),
        (Coercion::Int2Nat, Value::Int(i)) => {
            if *i < 0 {
                return Err(EvalError::NegativeToNat {
                    value: i128::from(*i),
                });
            }
            Value::Nat(*i as u64)
        }
        (Coercion::Real2Prob, Value::Real(x)) => {
            if x.is_nan() {
                return Err(bad_arg(name, "the argument is not a number"));
            }
            if *x < 0.0 {
                return Err(EvalError::NegativeToProb { value: *x });
            }
            Value::Prob(x.ln())
        }
        (Coercion::Real2Int, Value::Real(x)) => prim::f64_to_int(name, x.floor())?,
        _ => return Err(bad_arg(name, format!("unexpected {}", v.kind()))),
    })
}

/// Matches `v` against `p`, extending `env` with the pattern's variables on success.
fn match_pattern(p: &Pattern, v: &Value, env: &mut Env) -> bool {
    match (p, v) {
        (Pattern::Wild, _) => true,
        (Pattern::Var(x), _) => {
            *env = env.bind(*x, v.clone());
            true
        }
        (Pattern::Unit, Value::Unit) => true,
        (Pattern::Bool(b), Value::Bool(c)) => b == c,
        (Pattern::Pair(a, b), Value::Pair(pv)) => {
            match_pattern(a, &pv.0, env) && match_pattern(b, &pv.1, env)
        }
        (Pattern::Left(q), Value::Left(x))
        | (Pattern::Right(q), Value::Right(x))
        | (Pattern::Just(q), Value::Just(x)) => match_pattern(q, x, env),
        (Pattern::Nothing, Value::Nothing) => true,
        _ => false,
    }
}

/// A running sum of values of one numeric type (exact for nat/int, log-sum-exp for prob,
/// compensated for real).
#[derive(Clone, Debug)]
pub(crate) enum SumAcc {
    Nat(u64),
    Int(i64),
    /// `exp(max) * scaled` is the sum.
    Prob {
        max: f64,
        scaled: f64,
    },
    Real {
        sum: f64,
        comp: f64,
    },
}

impl SumAcc {
    pub(crate) fn zero(ty: &Type) -> EvalResult<SumAcc> {
        Ok(match ty {
            Type::Nat => SumAcc::Nat(0),
            Type::Int => SumAcc::Int(0),
            Type::Prob => SumAcc::Prob {
                max: f64::NEG_INFINITY,
                scaled: 0.0,
            },
            Type::Real => SumAcc::Real {
                sum: 0.0,
                comp: 0.0,
            },
            other => {
                return Err(bad_arg(
                    "summation",
                    format!("cannot add values of type {other}"),
                ))
            }
        })
    }

    pub(crate) fn add(&mut self, v: &Value) -> EvalResult<()> {
        match (self, v) {
            (SumAcc::Nat(a), Value::Nat(b)) => {
                *a = a.checked_add(*b).ok_or_else(|| overflow("nat summation"))?
            }
            (SumAcc::Int(a), Value::Int(b)) => {
                *a = a.checked_add(*b).ok_or_else(|| overflow("int summation"))?
            }
            (SumAcc::Prob { max, scaled }, Value::Prob(l)) => {
                let l = *l;
                if l.is_nan() {
                    *scaled = f64::NAN;
                } else if l == f64::INFINITY {
                    *max = f64::INFINITY;
                    *scaled = 1.0;
                } else if *max == f64::INFINITY || l == f64::NEG_INFINITY {
                } else if l > *max {
                    *scaled = *scaled * (*max - l).exp() + 1.0;
                    *max = l;
                } else {
                    *scaled += (l - *max).exp();
                }
            }
            (SumAcc::Real { sum, comp }, Value::Real(x)) => {
                let t = *sum + x;
                if sum.abs() >= x.abs() {
                    *comp += (*sum - t) + x;
                } else {
                    *comp += (x - t) + *sum;
                }
                *sum = t;
            }
            (_, v) => return Err(bad_arg("summation", format!("unexpected {}", v.kind()))),
        }
        Ok(())
    }

    pub(crate) fn finish(&self) -> Value {
        match self {
            SumAcc::Nat(a) => Value::Nat(*a),
            SumAcc::Int(a) => Value::Int(*a),
            SumAcc::Prob { max, scaled } => {
                if *max == f64::NEG_INFINITY {
                    Value::Prob(f64::NEG_INFINITY)
                } else {
                    Value::Prob(max + scaled.ln())
                }
            }
            SumAcc::Real { sum, comp } => {
                let r = sum + comp;
                Value::Real(if r.is_nan() && !sum.is_nan() { *sum } else { r })
            }
        }
    }
}

/// A bucket (histogram) being filled: the mutable image of a reducer's value.
enum Acc {
    Add(SumAcc),
    Nop,
    Array(Vec<Acc>),
    Pair(Box<Acc>, Box<Acc>),
}

impl Acc {
    fn finish(&self) -> Value {
        match self {
            Acc::Add(s) => s.finish(),
            Acc::Nop => Value::Unit,
            Acc::Array(xs) => Value::array(xs.iter().map(Acc::finish).collect()),
            Acc::Pair(a, b) => Value::pair(a.finish(), b.finish()),
        }
    }
}

impl<'s> Interp<'s> {
    pub fn new(store: &'s Store, config: EvalConfig) -> Interp<'s> {
        Interp {
            store,
            config,
            iterations: 0,
            depth: 0,
            evals: 0,
            dims: 0,
            site: None,
        }
    }

    /// The term at which `error` was raised, if it is the error this interpreter's last
    /// top-level call (`eval`, `apply`, `sample`, ...) failed with: the innermost
    /// primitive, index, coercion, loop or primitive measure whose evaluation failed.
    pub fn error_site(&self, error: &EvalError) -> Option<TermId> {
        match &self.site {
            Some((t, e)) if e == error => Some(*t),
            _ => None,
        }
    }

    /// Records `t` as where `r` failed, unless a term inside it already was (the first
    /// recorded is the innermost, since errors propagate outwards).
    pub(crate) fn at<T>(&mut self, t: TermId, r: EvalResult<T>) -> EvalResult<T> {
        if let Err(e) = &r {
            if self.site.is_none() {
                self.site = Some((t, e.clone()));
            }
        }
        r
    }

    pub fn store(&self) -> &'s Store {
        self.store
    }

    pub fn config(&self) -> &EvalConfig {
        &self.config
    }

    /// Starts a top-level call: resets the budget counters (not when called re-entrantly,
    /// e.g. from an integrand inside `expect`).
    pub(crate) fn begin(&mut self) {
        if self.depth == 0 && self.dims == 0 {
            self.iterations = 0;
            self.evals = 0;
            self.site = None;
        }
    }

    /// Evaluates `term` in `env`.
    pub fn eval(&mut self, term: TermId, env: &Env) -> EvalResult<Value> {
        self.begin();
        self.ev(term, env)
    }

    /// Applies a function value to one argument.
    pub fn apply(&mut self, f: &Value, arg: Value) -> EvalResult<Value> {
        self.begin();
        self.app(f, arg)
    }

    /// Applies a function value to arguments in order (a curried call); with fewer
    /// arguments than parameters the result is again a function.
    pub fn apply_args(&mut self, f: &Value, args: &[Value]) -> EvalResult<Value> {
        self.begin();
        let mut cur = f.clone();
        for a in args {
            cur = self.app(&cur, a.clone())?;
        }
        Ok(cur)
    }

    #[inline(never)]
    pub(crate) fn enter(&mut self) -> EvalResult<()> {
        if self.depth >= self.config.max_depth {
            return Err(budget(format!(
                "the term is nested deeper than {} levels",
                self.config.max_depth
            )));
        }
        self.depth += 1;
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Reserves `n` loop iterations from the budget.
    pub(crate) fn spend(&mut self, n: u128, what: &str) -> EvalResult<()> {
        let left = self.config.max_iterations.saturating_sub(self.iterations);
        if n > u128::from(left) {
            return Err(budget(format!(
                "{what} needs {n} iterations, more than the {} left of the limit of {}",
                left, self.config.max_iterations
            )));
        }
        self.iterations += n as u64;
        Ok(())
    }

    /// Counts one integrand evaluation or series term.
    pub(crate) fn tick(&mut self) -> EvalResult<()> {
        self.evals += 1;
        if self.evals > self.config.max_integrand_evals {
            return Err(budget(format!(
                "more than {} integrand evaluations",
                self.config.max_integrand_evals
            )));
        }
        Ok(())
    }

    /// The value of loop index `k` for a variable of nat or int type.
    pub(crate) fn index_value(&self, var: VarId, k: i128) -> EvalResult<Value> {
        match self.store.var_type(var) {
            Type::Nat => u64::try_from(k)
                .map(Value::Nat)
                .map_err(|_| EvalError::NegativeToNat { value: k }),
            Type::Int => i64::try_from(k)
                .map(Value::Int)
                .map_err(|_| overflow(format!("the index {k}"))),
            other => Err(bad_arg(
                "loop",
                format!("the index {} has type {other}", self.store.var_name(var)),
            )),
        }
    }

    pub(crate) fn nat(&mut self, t: TermId, env: &Env, what: &str) -> EvalResult<u64> {
        match self.ev(t, env)? {
            Value::Nat(n) => Ok(n),
            Value::Int(i) => u64::try_from(i).map_err(|_| EvalError::NegativeToNat {
                value: i128::from(i),
            }),
            other => Err(bad_arg(
                what,
                format!("expected a nat, found {}", other.kind()),
            )),
        }
    }

    /// The log of a prob-valued term (weights).
    pub(crate) fn ln_prob(&mut self, t: TermId, env: &Env, what: &str) -> EvalResult<f64> {
        match self.ev(t, env)? {
            Value::Prob(l) => Ok(l),
            other => match other.as_f64() {
                Some(x) if x >= 0.0 => Ok(x.ln()),
                Some(x) => Err(EvalError::NegativeToProb { value: x }),
                None => Err(bad_arg(
                    what,
                    format!("expected a prob, found {}", other.kind()),
                )),
            },
        }
    }

    pub(crate) fn real(&mut self, t: TermId, env: &Env, what: &str) -> EvalResult<f64> {
        let v = self.ev(t, env)?;
        v.as_f64()
            .ok_or_else(|| bad_arg(what, format!("expected a number, found {}", v.kind())))
    }

    /// Applies a function value to one argument (no budget reset).
    pub(crate) fn app(&mut self, f: &Value, arg: Value) -> EvalResult<Value> {
        let Value::Closure(c) = f else {
            return Err(EvalError::NotAFunction {
                found: f.kind().to_string(),
            });
        };
        let env = c.env.bind(c.var, arg);
        self.ev(c.body, &env)
    }

    /// Evaluation with the depth guard.
    pub(crate) fn ev(&mut self, term: TermId, env: &Env) -> EvalResult<Value> {
        self.enter()?;
        let r = self.ev_inner(term, env);
        self.leave();
        r
    }

    // Debug builds give every local of a function its own stack slot, so the recursive
    // path (ev -> ev_inner -> one small helper -> ev) keeps each function small: every
    // arm with more than a call lives in its own `#[inline(never)]` helper.
    fn ev_inner(&mut self, term: TermId, env: &Env) -> EvalResult<Value> {
        let store = self.store;
        let mut t = term;
        let mut env = env.clone();
        loop {
            let node = store.node(t);
            let step = match node {
                Node::Let(x, e, body) => self.step_let(*x, *e, *body, &env),
                Node::App(f, a) => self.step_app(*f, *a, &env),
                Node::If(c, a, b) => self.step_if(*c, *a, *b, &env),
                Node::Match(e, arms) => self.step_match(*e, arms, &env),
                Node::Transform(tr, e) if tr.keeps_meaning() => Ok((env.clone(), *e)),
                Node::Transform(tr, _) => Err(bad_arg(
                    tr.name(),
                    "the transform must be expanded before evaluation (slic_simplify::expand_transforms)",
                )),
                _ => return self.ev_node(t, &env),
            };
            let (env2, t2) = step?;
            env = env2;
            t = t2;
        }
    }

    #[inline(never)]
    fn step_let(
        &mut self,
        x: VarId,
        e: TermId,
        body: TermId,
        env: &Env,
    ) -> EvalResult<(Env, TermId)> {
        let v = self.ev(e, env)?;
        Ok((env.bind(x, v), body))
    }

    #[inline(never)]
    fn step_app(&mut self, f: TermId, a: TermId, env: &Env) -> EvalResult<(Env, TermId)> {
        let fv = self.ev(f, env)?;
        let av = self.ev(a, env)?;
        let Value::Closure(c) = fv else {
            return Err(EvalError::NotAFunction {
                found: fv.kind().to_string(),
            });
        };
        Ok((c.env.bind(c.var, av), c.body))
    }

    #[inline(never)]
    fn step_if(&mut self, c: TermId, a: TermId, b: TermId, env: &Env) -> EvalResult<(Env, TermId)> {
        match self.ev(c, env)? {
            Value::Bool(true) => Ok((env.clone(), a)),
            Value::Bool(false) => Ok((env.clone(), b)),
            other => Err(bad_arg(
                "if",
                format!("the condition is {}, not a bool", other.kind()),
            )),
        }
    }

    #[inline(never)]
    fn step_match(
        &mut self,
        e: TermId,
        arms: &[(Pattern, TermId)],
        env: &Env,
    ) -> EvalResult<(Env, TermId)> {
        let v = self.ev(e, env)?;
        for (p, body) in arms {
            let mut env2 = env.clone();
            if match_pattern(p, &v, &mut env2) {
                return Ok((env2, *body));
            }
        }
        Err(EvalError::NoMatch {
            value: v.to_string(),
        })
    }

    /// Every node that is not a tail form. Each arm is a single call, so that in debug
    /// builds the arms share one result slot and the frame stays small.
    #[inline(never)]
    fn ev_node(&mut self, t: TermId, env: &Env) -> EvalResult<Value> {
        let r = self.ev_node_inner(t, env);
        self.at(t, r)
    }

    #[inline(never)]
    fn ev_node_inner(&mut self, t: TermId, env: &Env) -> EvalResult<Value> {
        let node = self.store.node(t);
        match node {
            Node::Pair(..) | Node::Left(_) | Node::Right(_) | Node::Just(_) => {
                self.ev_constructor(node, env)
            }
            Node::Prim(p, args) => self.prim(*p, args, env),
            Node::Coerce(c, a) => self.ev_coerce(*c, *a, env),
            Node::ArrayLit(items) => self.ev_array_lit(items, env),
            Node::Array(i, n, body) => self.ev_array(*i, *n, *body, env),
            Node::Index(a, i) => self.ev_index(*a, *i, env),
            Node::Summate(i, lo, hi, body) => self.sum_or_product(true, *i, *lo, *hi, *body, env),
            Node::Product(i, lo, hi, body) => self.sum_or_product(false, *i, *lo, *hi, *body, env),
            Node::Integrate(x, lo, hi, body) => self.integrate_expr(*x, *lo, *hi, *body, env),
            Node::Bucket(j, lo, hi, r) => self.bucket(*j, *lo, *hi, *r, env),
            _ => self.ev_leaf(t, env),
        }
    }

    /// Nodes that do not evaluate subterms (and the tail forms, routed back to `ev`).
    #[inline(never)]
    fn ev_leaf(&mut self, t: TermId, env: &Env) -> EvalResult<Value> {
        let store = self.store;
        let node = store.node(t);
        if is_measure_node(node) {
            return Ok(Value::Measure(Rc::new(MeasureVal {
                env: env.clone(),
                term: t,
            })));
        }
        match node {
            Node::Var(x) => match env.lookup(*x) {
                Some(v) => Ok(v.clone()),
                // a standard-library call: its definition is closed
                None => match store.library_def(*x) {
                    Some(def) => self.ev(def, &Env::new()),
                    None => Err(EvalError::UnboundVariable {
                        name: store.var_name(*x).to_string(),
                    }),
                },
            },
            Node::Lit(r) => literal(r, store.ty(t)),
            Node::Bool(b) => Ok(Value::Bool(*b)),
            Node::Unit => Ok(Value::Unit),
            Node::Nothing => Ok(Value::Nothing),
            Node::Lam(x, body) => Ok(Value::Closure(Rc::new(Closure {
                env: env.clone(),
                var: *x,
                body: *body,
            }))),
            Node::RAdd(_)
            | Node::RNop
            | Node::RIndex(..)
            | Node::RSplit(..)
            | Node::RFanout(..) => Err(bad_arg(
                "reducer",
                "a reducer is only meaningful inside bucket",
            )),
            // Tail forms are handled by `ev_inner`.
            Node::Let(..)
            | Node::App(..)
            | Node::If(..)
            | Node::Match(..)
            | Node::Transform(..) => self.ev(t, env),
            _ => Err(bad_arg("eval", "internal: unexpected node")),
        }
    }

    #[inline(never)]
    fn ev_constructor(&mut self, node: &Node, env: &Env) -> EvalResult<Value> {
        Ok(match node {
            Node::Pair(a, b) => {
                let x = self.ev(*a, env)?;
                Value::pair(x, self.ev(*b, env)?)
            }
            Node::Left(a) => Value::Left(Rc::new(self.ev(*a, env)?)),
            Node::Right(a) => Value::Right(Rc::new(self.ev(*a, env)?)),
            Node::Just(a) => Value::Just(Rc::new(self.ev(*a, env)?)),
            _ => return Err(bad_arg("constructor", "internal: not a constructor")),
        })
    }

    #[inline(never)]
    fn ev_coerce(&mut self, c: Coercion, a: TermId, env: &Env) -> EvalResult<Value> {
        let v = self.ev(a, env)?;
        coerce(c, &v)
    }

    #[inline(never)]
    fn ev_array_lit(&mut self, items: &[TermId], env: &Env) -> EvalResult<Value> {
        self.spend(items.len() as u128, "an array literal")?;
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            out.push(self.ev(*it, env)?);
        }
        Ok(Value::array(out))
    }

    #[inline(never)]
    fn ev_array(&mut self, i: VarId, n: TermId, body: TermId, env: &Env) -> EvalResult<Value> {
        let n = self.nat(n, env, "array")?;
        self.check_len(n)?;
        self.spend(u128::from(n), "array")?;
        let mut out = Vec::with_capacity(n as usize);
        for k in 0..n {
            let iv = self.index_value(i, i128::from(k))?;
            out.push(self.ev(body, &env.bind(i, iv))?);
        }
        Ok(Value::array(out))
    }

    #[inline(never)]
    fn ev_index(&mut self, a: TermId, i: TermId, env: &Env) -> EvalResult<Value> {
        let av = self.ev(a, env)?;
        let iv = self.ev(i, env)?;
        let Value::Array(items) = av else {
            return Err(bad_arg("index", format!("cannot index {}", av.kind())));
        };
        let k = as_index(&iv, "index")?;
        match usize::try_from(k).ok().and_then(|k| items.get(k)) {
            Some(v) => Ok(v.clone()),
            None => Err(EvalError::IndexOutOfBounds {
                index: k,
                size: items.len(),
            }),
        }
    }

    pub(crate) fn check_len(&self, n: u64) -> EvalResult<()> {
        if n > self.config.max_array_len {
            return Err(budget(format!(
                "an array of {n} elements is larger than the limit of {}",
                self.config.max_array_len
            )));
        }
        Ok(())
    }

    #[inline(never)]
    fn prim(&mut self, p: Prim, args: &[TermId], env: &Env) -> EvalResult<Value> {
        match p {
            Prim::And | Prim::Or => {
                let stop = p == Prim::Or;
                for a in args {
                    match self.ev(*a, env)? {
                        Value::Bool(b) if b == stop => return Ok(Value::Bool(stop)),
                        Value::Bool(_) => {}
                        other => {
                            return Err(bad_arg(
                                if stop { "||" } else { "&&" },
                                format!("expected a bool, found {}", other.kind()),
                            ))
                        }
                    }
                }
                Ok(Value::Bool(!stop))
            }
            Prim::Reduce => {
                let [f, z, a] = args else {
                    return Err(bad_arg("reduce", "expected 3 arguments"));
                };
                let fv = self.ev(*f, env)?;
                let mut acc = self.ev(*z, env)?;
                let Value::Array(items) = self.ev(*a, env)? else {
                    return Err(bad_arg("reduce", "the third argument is not an array"));
                };
                self.spend(items.len() as u128, "reduce")?;
                for it in items.iter() {
                    let g = self.app(&fv, acc)?;
                    acc = self.app(&g, it.clone())?;
                }
                Ok(acc)
            }
            _ => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.ev(*a, env)?);
                }
                prim::apply(p, &vals)
            }
        }
    }

    fn bounds(
        &mut self,
        lo: TermId,
        hi: TermId,
        env: &Env,
        what: &str,
    ) -> EvalResult<(i128, i128)> {
        let l = self.ev(lo, env)?;
        let h = self.ev(hi, env)?;
        Ok((as_index(&l, what)?, as_index(&h, what)?))
    }

    fn sum_or_product(
        &mut self,
        is_sum: bool,
        i: VarId,
        lo: TermId,
        hi: TermId,
        body: TermId,
        env: &Env,
    ) -> EvalResult<Value> {
        let what = if is_sum { "summate" } else { "product" };
        let (l, h) = self.bounds(lo, hi, env, what)?;
        let count = (h - l).max(0);
        self.spend(count as u128, what)?;
        let ty = self.store.ty(body).clone();
        if is_sum {
            let mut acc = SumAcc::zero(&ty)?;
            for k in l..h {
                let iv = self.index_value(i, k)?;
                let v = self.ev(body, &env.bind(i, iv))?;
                acc.add(&v)?;
            }
            Ok(acc.finish())
        } else {
            let mut acc = match ty {
                Type::Nat => Value::Nat(1),
                Type::Int => Value::Int(1),
                Type::Prob => Value::Prob(0.0),
                Type::Real => Value::Real(1.0),
                ref other => {
                    return Err(bad_arg(
                        "product",
                        format!("cannot multiply values of type {other}"),
                    ))
                }
            };
            for k in l..h {
                let iv = self.index_value(i, k)?;
                let v = self.ev(body, &env.bind(i, iv))?;
                acc = prim::mul2(&acc, &v)?;
            }
            Ok(acc)
        }
    }

    /// `integrate x from lo to hi: body` by adaptive quadrature (a reversed range negates).
    fn integrate_expr(
        &mut self,
        x: VarId,
        lo: TermId,
        hi: TermId,
        body: TermId,
        env: &Env,
    ) -> EvalResult<Value> {
        let a = self.real(lo, env, "integrate")?;
        let b = self.real(hi, env, "integrate")?;
        let (a, b, sign) = if a <= b { (a, b, 1.0) } else { (b, a, -1.0) };
        let ty = self.store.ty(body).clone();
        let var_is_prob = *self.store.var_type(x) == Type::Prob;
        if var_is_prob && a < 0.0 {
            return Err(EvalError::NegativeToProb { value: a });
        }
        if self.dims >= self.config.max_dimensions {
            return Err(budget(format!(
                "more than {} nested numeric integrals",
                self.config.max_dimensions
            )));
        }
        self.dims += 1;
        let cfg = self.config.quad;
        let breaks = lebesgue_breaks(a, b);
        let r = quad::integrate(a, b, &breaks, &cfg, &mut |xv| {
            self.tick()?;
            let arg = if var_is_prob {
                Value::Prob(xv.ln())
            } else {
                Value::Real(xv)
            };
            let v = self.ev(body, &env.bind(x, arg))?;
            Ok(Estimate::exact(v.as_f64().unwrap_or(f64::NAN)))
        });
        self.dims -= 1;
        let r = r?;
        let value = sign * r.estimate.value;
        let err = r.estimate.error;
        if !r.converged
            && value.is_finite()
            && err > self.config.integrate_max_rel_err * value.abs()
        {
            return Err(EvalError::NoConvergence {
                what: format!(
                    "the integral from {a} to {b} is {value} with an estimated error of {err}"
                ),
            });
        }
        match ty {
            Type::Prob => {
                if value < 0.0 {
                    return Err(EvalError::NegativeToProb { value });
                }
                Ok(Value::Prob(value.ln()))
            }
            Type::Real => Ok(Value::Real(value)),
            other => Err(bad_arg("integrate", format!("the body has type {other}"))),
        }
    }

    // ---- bucket: the reducer semantics of the arrays paper, section 4.1 ----

    fn bucket(
        &mut self,
        j: VarId,
        lo: TermId,
        hi: TermId,
        r: TermId,
        env: &Env,
    ) -> EvalResult<Value> {
        let (l, h) = self.bounds(lo, hi, env, "bucket")?;
        self.spend((h - l).max(0) as u128, "bucket")?;
        let mut acc = self.reducer_init(r, env)?;
        for k in l..h {
            let jv = self.index_value(j, k)?;
            let envj = env.bind(j, jv);
            self.reducer_update(r, &mut acc, &envj)?;
        }
        Ok(acc.finish())
    }

    /// The reducer's identity (r^0): zero for `r_add`, unit for `r_nop`, an array of `n`
    /// identities for `r_index` (element `b` initialised with `b` bound), pairs for
    /// `r_split` and `r_fanout`.
    fn reducer_init(&mut self, r: TermId, env: &Env) -> EvalResult<Acc> {
        self.enter()?;
        let out = self.reducer_init_inner(r, env);
        self.leave();
        out
    }

    fn reducer_init_inner(&mut self, r: TermId, env: &Env) -> EvalResult<Acc> {
        let store = self.store;
        Ok(match store.node(r) {
            Node::RAdd(_) => Acc::Add(SumAcc::zero(store.ty(r))?),
            Node::RNop => Acc::Nop,
            Node::RIndex(b, n, _, inner) => {
                let n = self.nat(*n, env, "r_index")?;
                self.check_len(n)?;
                self.spend(u128::from(n), "r_index")?;
                let mut items = Vec::with_capacity(n as usize);
                for k in 0..n {
                    let bv = self.index_value(*b, i128::from(k))?;
                    items.push(self.reducer_init(*inner, &env.bind(*b, bv))?);
                }
                Acc::Array(items)
            }
            Node::RSplit(_, r1, r2) | Node::RFanout(r1, r2) => Acc::Pair(
                Box::new(self.reducer_init(*r1, env)?),
                Box::new(self.reducer_init(*r2, env)?),
            ),
            _ => return Err(bad_arg("bucket", "the body is not a reducer")),
        })
    }

    /// One update (r^1(j) combined into the accumulator), with the loop index bound in
    /// `env`. `r_index` updates only the bucket its index selects; an index outside
    /// `0..n` selects none, so the update is the identity (eq. (32)).
    fn reducer_update(&mut self, r: TermId, acc: &mut Acc, env: &Env) -> EvalResult<()> {
        self.enter()?;
        let out = self.reducer_update_inner(r, acc, env);
        self.leave();
        out
    }

    fn reducer_update_inner(&mut self, r: TermId, acc: &mut Acc, env: &Env) -> EvalResult<()> {
        let store = self.store;
        match (store.node(r), acc) {
            (Node::RAdd(e), Acc::Add(s)) => {
                let v = self.ev(*e, env)?;
                s.add(&v)?;
            }
            (Node::RNop, Acc::Nop) => {}
            (Node::RIndex(b, _, e, inner), Acc::Array(items)) => {
                let iv = self.ev(*e, env)?;
                let k = as_index(&iv, "r_index")?;
                if let Some(slot) = usize::try_from(k).ok().and_then(|k| items.get_mut(k)) {
                    let bv = self.index_value(*b, k)?;
                    self.reducer_update(*inner, slot, &env.bind(*b, bv))?;
                }
            }
            (Node::RSplit(c, r1, r2), Acc::Pair(a1, a2)) => match self.ev(*c, env)? {
                Value::Bool(true) => self.reducer_update(*r1, a1, env)?,
                Value::Bool(false) => self.reducer_update(*r2, a2, env)?,
                other => {
                    return Err(bad_arg(
                        "r_split",
                        format!("the condition is {}, not a bool", other.kind()),
                    ))
                }
            },
            (Node::RFanout(r1, r2), Acc::Pair(a1, a2)) => {
                self.reducer_update(*r1, a1, env)?;
                self.reducer_update(*r2, a2, env)?;
            }
            _ => return Err(bad_arg("bucket", "the body is not a reducer")),
        }
        Ok(())
    }
}

/// Extra breakpoints for integrals over infinite ranges with no other information, so
/// the adaptive rule looks at several scales before trusting a smooth-looking panel.
pub(crate) fn lebesgue_breaks(a: f64, b: f64) -> Vec<f64> {
    if a.is_finite() && b.is_finite() {
        return Vec::new();
    }
    let mut out = vec![0.0];
    for s in [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0] {
        out.push(s);
        out.push(-s);
    }
    if a.is_finite() {
        out.push(a + 1.0);
    }
    if b.is_finite() {
        out.push(b - 1.0);
    }
    out
}

/// Evaluates a closed (or `env`-closed) term with the default configuration.
pub fn eval(store: &Store, term: TermId, env: &Env) -> EvalResult<Value> {
    Interp::new(store, EvalConfig::default()).eval(term, env)
}

/// Applies a function value (e.g. a whole `.hk` file of the form `fn x T: ...`) to its
/// arguments in order, with the default configuration.
pub fn apply_args(store: &Store, f: &Value, args: &[Value]) -> EvalResult<Value> {
    Interp::new(store, EvalConfig::default()).apply_args(f, args)
}
