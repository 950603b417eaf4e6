//! Lowering of core terms into the loop IR (issue 11, deliverable 3): a program as the
//! front end elaborates it (`fn x T:` parameters around an expression or a measure) becomes
//! a [`Program`] whose `for` loops, accumulators and allocations compute the same value.
//!
//! Lowering is naive and direct: each sum, product, array and histogram becomes its loop
//! where the term uses it (the term-level passes share and hoist before it, `fuse` merges
//! loops after it). Values that never exist at run time keep a compile-time shape ([`Val`]):
//! a pair is a pair of IR values, a function a closure that is beta-reduced where it is
//! applied (standard-library calls too: the [`Store`] holds each library variable's closed
//! definition), a measure bound by `let` a thunk that runs where it is drawn from.
//!
//! Evaluation order: the IR evaluates every argument of a primitive, while the reference
//! interpreter evaluates `if` branches only when taken and `&&`/`||` left to right with a
//! short circuit, so anything that can fail there (an array read, an unsafe coercion,
//! integer arithmetic) is lowered under a statement `if`. Unsupported constructs
//! (`lebesgue`, `integrate`, `observe`, arrays of arrays, ...) are a [`LowerError`] that
//! names them in the user's words; this module never panics on a well-typed term.

use crate::ir::walk::can_fail;
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};
use slic_algebra::{Coercion, Dist, Node, Pattern, Prim, Rational, Store, TermId, Type, VarId};
use std::collections::HashSet;
use std::fmt;
use std::rc::Rc;

/// Why a term cannot be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LowerError {
    /// The term uses something the loop IR cannot express (yet); the text names it, for
    /// users.
    Unsupported(String),
    /// The term is not the well-typed core term lowering expects (a bug upstream).
    Internal(String),
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerError::Unsupported(what) => write!(f, "cannot compile to loops: {what}"),
            LowerError::Internal(what) => write!(f, "internal error while lowering: {what}"),
        }
    }
}

impl std::error::Error for LowerError {}

type Result<T> = std::result::Result<T, LowerError>;

fn unsupported<T>(what: impl Into<String>) -> Result<T> {
    Err(LowerError::Unsupported(what.into()))
}

fn internal<T>(what: impl Into<String>) -> Result<T> {
    Err(LowerError::Internal(what.into()))
}

/// A function value: a `fn` with the environment it was written in.
struct Closure {
    var: VarId,
    body: TermId,
    env: Env,
}

/// A measure bound by `let` or passed to a function: lowered (run) where it is used.
struct Thunk {
    term: TermId,
    env: Env,
}

/// The compile-time shape of a value.
#[derive(Clone)]
enum Val {
    /// A scalar: a pure IR expression.
    Scalar(Expr),
    /// An array: an IR array expression (a parameter, an allocation, or an element of a
    /// parameter array of arrays) and its element type.
    Array(Expr, Type),
    /// A pair; also an array of pairs, as a pair of arrays (the term's type tells which).
    Pair(Box<Val>, Box<Val>),
    Unit,
    Fun(Rc<Closure>),
    Measure(Rc<Thunk>),
}

/// Variables in scope, innermost first (persistent: closures keep theirs).
#[derive(Clone, Default)]
struct Env(Option<Rc<(VarId, Val, Env)>>);

impl Env {
    fn bind(&self, x: VarId, v: Val) -> Env {
        Env(Some(Rc::new((x, v, self.clone()))))
    }

    fn lookup(&self, x: VarId) -> Option<&Val> {
        let mut cur = self;
        while let Some(node) = &cur.0 {
            if node.0 == x {
                return Some(&node.1);
            }
            cur = &node.2;
        }
        None
    }
}

fn is_scalar(t: &Type) -> bool {
    matches!(
        t,
        Type::Nat | Type::Int | Type::Real | Type::Prob | Type::Bool
    )
}

/// The parameter types the IR takes: scalars and arrays of them, to any depth.
fn is_param_type(t: &Type) -> bool {
    is_scalar(t) || t.array_of().is_some_and(is_param_type)
}

/// A parameter type the IR takes as one or more parameters: an IR parameter type, or a
/// pair of these (a Markov chain's state `(nT, nM)`), one IR parameter per component.
fn is_param_leaves(t: &Type) -> bool {
    match t {
        Type::Pair(a, b) => is_param_leaves(a) && is_param_leaves(b),
        t => is_param_type(t),
    }
}

/// The names a pair parameter's components are given where the body takes it apart at
/// once (`fn x pair(real, real): match x: (nT, nM): ..`, maybe after `let`s of what does
/// not depend on it), as a pattern; `None` otherwise.
fn component_names(store: &Store, x: VarId, body: TermId) -> Option<Pattern> {
    let mut t = body;
    while let Node::Let(_, _, b) = store.node(t) {
        t = *b;
    }
    let Node::Match(e, arms) = store.node(t) else {
        return None;
    };
    match (store.node(*e), arms.as_slice()) {
        (Node::Var(v), [(p @ Pattern::Pair(..), _)]) if *v == x => Some(p.clone()),
        _ => None,
    }
}

/// The zero of a numeric (or bool) scalar type: the identity of `+`, what `alloc` fills.
pub(crate) fn zero(t: &Type) -> Expr {
    match t {
        Type::Nat => Expr::nat(0),
        Type::Int => Expr::int(0),
        Type::Prob => Expr::Lit(Lit::Prob(f64::NEG_INFINITY)),
        Type::Bool => Expr::bool(false),
        _ => Expr::real(0.0),
    }
}

/// The identity of `*`.
fn one(t: &Type) -> Expr {
    match t {
        Type::Nat => Expr::nat(1),
        Type::Int => Expr::int(1),
        Type::Prob => Expr::Lit(Lit::Prob(0.0)),
        _ => Expr::real(1.0),
    }
}

/// A literal of the term's type; `prob` in log space.
fn literal(r: &Rational, t: &Type) -> Result<Expr> {
    let int = || {
        r.is_integer()
            .then(|| r.to_i64())
            .flatten()
            .ok_or_else(|| LowerError::Unsupported(format!("the literal {r} is too large")))
    };
    Ok(match t {
        Type::Nat => Expr::nat(
            u64::try_from(int()?)
                .map_err(|_| LowerError::Internal(format!("the nat literal {r} is negative")))?,
        ),
        Type::Int => Expr::int(int()?),
        Type::Real => Expr::real(r.to_f64()),
        Type::Prob => Expr::Lit(Lit::Prob(r.to_f64().ln())),
        other => return internal(format!("a numeric literal of type {other}")),
    })
}

/// Lowers a program: the `fn` chain at the top becomes the parameters, the body the
/// statements and the result. A measure body gives a measure program.
pub fn lower(store: &Store, term: TermId) -> std::result::Result<Program, LowerError> {
    let mut l = Lowerer {
        store,
        block: Vec::new(),
        names: HashSet::new(),
        temps: 0,
    };
    let mut env = Env::default();
    let mut params = Vec::new();
    let mut t = term;
    loop {
        // `def`s before the parameters (`def f(..): ..` then `fn x T: ..`) are bound as they
        // come: a function or measure is a compile-time value, a number is computed first
        if let Node::Let(x, e, body) = store.node(t) {
            let name = store.var_name(*x);
            let v = l.lower_value(*e, &env, Some(name))?;
            let v = l.share(v, store.ty(*e), Some(name));
            env = env.bind(*x, v);
            t = *body;
            continue;
        }
        let Node::Lam(x, body) = store.node(t) else {
            break;
        };
        let ty = store.var_type(*x).clone();
        let hint = store.var_name(*x);
        if !is_param_leaves(&ty) {
            return unsupported(format!(
                "the parameter `{hint}` has type {ty}; compiled programs take numbers, \
                 booleans, arrays of them and pairs of these"
            ));
        }
        let names = component_names(store, *x, *body);
        let v = l.param_leaves(&ty, hint, names.as_ref(), &mut params);
        env = env.bind(*x, v);
        t = *body;
    }
    let ty = store.ty(t).clone();
    let measure = ty.measure_of().is_some();
    let v = l.lower(t, &env, None)?;
    let result = result_expr(v)?;
    Ok(Program {
        params,
        body: l.block,
        result,
        measure,
        inout: Vec::new(),
    })
}

/// The IR expression of a program's result: a scalar, an array of scalars, `()`, or a
/// pair of these.
fn result_expr(v: Val) -> std::result::Result<Expr, LowerError> {
    Ok(match v {
        Val::Scalar(e) => e,
        Val::Array(e, el) if is_scalar(&el) => e,
        Val::Array(..) => return unsupported("a result that is an array of arrays"),
        Val::Pair(a, b) => Expr::Pair(Box::new(result_expr(*a)?), Box::new(result_expr(*b)?)),
        Val::Unit => Expr::Lit(Lit::Unit),
        Val::Fun(_) => {
            return unsupported("a result that is a function (only the top `fn`s are parameters)")
        }
        Val::Measure(_) => return unsupported("a result that is a measure inside a value"),
    })
}

struct Lowerer<'s> {
    store: &'s Store,
    /// The block statements are emitted into.
    block: Vec<Stmt>,
    /// Every IR name used so far: names are unique in the whole program.
    names: HashSet<String>,
    temps: usize,
}

/// One alternative of a conditional: taken when `cond` holds (the last has none), the
/// term to lower there, with its environment.
struct Case {
    cond: Option<Expr>,
    term: TermId,
    env: Env,
}

impl Lowerer<'_> {
    /// `hint` if it is unused, else `hint_1`, `hint_2`, ...
    /// The IR parameters of a parameter of type `ty` (see [`is_param_leaves`]), pushed
    /// onto `params` in order (a pair's first component first), and its value over them.
    /// A component is named after `names`' variable in its place, else `hint` with its
    /// position (`x1`, `x2`).
    fn param_leaves(
        &mut self,
        ty: &Type,
        hint: &str,
        names: Option<&Pattern>,
        params: &mut Vec<(String, Type)>,
    ) -> Val {
        if let Type::Pair(a, b) = ty {
            let (na, nb) = match names {
                Some(Pattern::Pair(pa, pb)) => (Some(&**pa), Some(&**pb)),
                _ => (None, None),
            };
            let hint_of = |n: Option<&Pattern>, k: u8| match n {
                Some(Pattern::Var(v)) => self.store.var_name(*v).to_string(),
                _ => format!("{hint}{k}"),
            };
            let (ha, hb) = (hint_of(na, 1), hint_of(nb, 2));
            let va = self.param_leaves(a, &ha, na, params);
            let vb = self.param_leaves(b, &hb, nb, params);
            return Val::Pair(Box::new(va), Box::new(vb));
        }
        let name = self.fresh(hint);
        let v = match ty.array_of() {
            Some(e) => Val::Array(Expr::Var(name.clone()), e.clone()),
            None => Val::Scalar(Expr::Var(name.clone())),
        };
        params.push((name, ty.clone()));
        v
    }

    fn fresh(&mut self, hint: &str) -> String {
        let base: String = hint
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { '_' })
            .collect();
        let base = if base.is_empty() {
            "v".to_string()
        } else {
            base
        };
        crate::ir::walk::fresh_name(&mut self.names, &base)
    }

    /// A fresh temporary `t1`, `t2`, ...
    fn temp(&mut self) -> String {
        loop {
            self.temps += 1;
            let name = format!("t{}", self.temps);
            if self.names.insert(name.clone()) {
                return name;
            }
        }
    }

    fn name_for(&mut self, hint: Option<&str>) -> String {
        match hint {
            Some(h) => self.fresh(h),
            None => self.temp(),
        }
    }

    fn emit(&mut self, s: Stmt) {
        self.block.push(s);
    }

    /// Runs `f` with statements going to a new block; returns the block and `f`'s value.
    fn in_block<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<(Vec<Stmt>, R)> {
        let saved = std::mem::take(&mut self.block);
        let r = f(self);
        let inner = std::mem::replace(&mut self.block, saved);
        Ok((inner, r?))
    }

    fn scalar(&mut self, t: TermId, env: &Env) -> Result<Expr> {
        match self.lower(t, env, None)? {
            Val::Scalar(e) => Ok(e),
            _ => internal(format!("expected a scalar of type {}", self.store.ty(t))),
        }
    }

    /// `e` bound to a `let` unless it is a name or a literal already, so that a value used
    /// many times is computed once.
    fn atom(&mut self, e: Expr, ty: &Type, hint: Option<&str>) -> Expr {
        if matches!(e, Expr::Var(_) | Expr::Lit(_)) {
            return e;
        }
        let name = self.name_for(hint);
        self.emit(Stmt::let_(&name, ty.clone(), e));
        Expr::Var(name)
    }

    /// [`Self::atom`] on every scalar of a value of type `ty`.
    fn share(&mut self, v: Val, ty: &Type, hint: Option<&str>) -> Val {
        match (v, ty) {
            (Val::Scalar(e), _) => Val::Scalar(self.atom(e, ty, hint)),
            (Val::Pair(a, b), Type::Pair(ta, tb)) => {
                let a = self.share(*a, ta, hint);
                let b = self.share(*b, tb, hint);
                Val::Pair(Box::new(a), Box::new(b))
            }
            (v, _) => v,
        }
    }

    /// Lowers `t`; a measure is run here (its draws, factors and rejections emitted), its
    /// value the value it returns. `hint` names the main allocation or accumulator.
    fn lower(&mut self, t: TermId, env: &Env, hint: Option<&str>) -> Result<Val> {
        let v = slic_algebra::stack::grow(|| self.node(t, env, hint))?;
        match v {
            Val::Measure(th) if self.store.ty(t).measure_of().is_some() => {
                self.lower(th.term, &th.env, hint)
            }
            v => Ok(v),
        }
    }

    fn node(&mut self, t: TermId, env: &Env, hint: Option<&str>) -> Result<Val> {
        let store = self.store;
        let ty = store.ty(t).clone();
        match store.node(t) {
            Node::Var(x) => match env.lookup(*x) {
                Some(v) => Ok(v.clone()),
                // a standard-library call: its definition is closed
                None => match store.library_def(*x) {
                    Some(def) => self.lower_value(def, &Env::default(), None),
                    None => internal(format!("`{}` is unbound", store.var_name(*x))),
                },
            },
            Node::Lit(r) => Ok(Val::Scalar(literal(r, &ty)?)),
            Node::Bool(b) => Ok(Val::Scalar(Expr::bool(*b))),
            Node::Unit => Ok(Val::Unit),
            Node::Pair(a, b) => {
                // the reference builds a pair eagerly: a part that can fail is computed
                // here, even if no pattern reads it later
                let part = |l: &mut Self, x: TermId| -> Result<Val> {
                    Ok(match l.lower(x, env, None)? {
                        Val::Scalar(e) if can_fail(&e) => Val::Scalar(l.atom(e, store.ty(x), None)),
                        v => v,
                    })
                };
                let a = part(self, *a)?;
                let b = part(self, *b)?;
                Ok(Val::Pair(Box::new(a), Box::new(b)))
            }
            Node::Left(_) | Node::Right(_) | Node::Just(_) | Node::Nothing => {
                unsupported("`left`, `right`, `just` and `nothing` values")
            }
            Node::Prim(p, args) => self.prim(*p, args, &ty, env, hint),
            Node::Coerce(c, a) => {
                let a = self.scalar(*a, env)?;
                Ok(Val::Scalar(Expr::convert(*c, a)))
            }
            Node::Let(x, e, body) => {
                let name = store.var_name(*x);
                let v = self.lower_value(*e, env, Some(name))?;
                let v = self.share(v, store.ty(*e), Some(name));
                self.lower(*body, &env.bind(*x, v), hint)
            }
            Node::Lam(x, body) => Ok(Val::Fun(Rc::new(Closure {
                var: *x,
                body: *body,
                env: env.clone(),
            }))),
            Node::App(f, a) => {
                let Val::Fun(c) = self.lower(*f, env, None)? else {
                    return internal("an application of something that is not a function");
                };
                let v = self.lower_value(*a, env, Some(store.var_name(c.var)))?;
                let v = self.share(v, store.ty(*a), Some(store.var_name(c.var)));
                self.lower(c.body, &c.env.bind(c.var, v), hint)
            }
            Node::If(c, a, b) => {
                let c = self.scalar(*c, env)?;
                let cases = vec![
                    Case {
                        cond: Some(c),
                        term: *a,
                        env: env.clone(),
                    },
                    Case {
                        cond: None,
                        term: *b,
                        env: env.clone(),
                    },
                ];
                self.choice(cases, &ty, hint)
            }
            Node::Match(e, arms) => self.match_(*e, arms, &ty, env, hint),
            Node::ArrayLit(items) => {
                let elem = ty.array_of().cloned().unwrap_or(Type::Unit);
                let n = Expr::nat(items.len() as u64);
                let target = self.alloc(&elem, &n, hint)?;
                for (k, it) in items.iter().enumerate() {
                    let v = self.lower(*it, env, None)?;
                    self.store_val(&target, &Expr::nat(k as u64), v)?;
                }
                Ok(target)
            }
            Node::Array(i, n, body) => {
                let elem = store.ty(*body).clone();
                let n = self.scalar(*n, env)?;
                let n = self.atom(n, &Type::Nat, None);
                let target = self.alloc(&elem, &n, hint)?;
                let iname = self.fresh(store.var_name(*i));
                let iv = Val::Scalar(Expr::Var(iname.clone()));
                let env2 = env.bind(*i, iv);
                let (body_stmts, ()) = self.in_block(|l| {
                    let v = l.lower(*body, &env2, None)?;
                    l.store_val(&target, &Expr::Var(iname.clone()), v)
                })?;
                self.emit(Stmt::for_(&iname, Expr::nat(0), n, body_stmts));
                Ok(target)
            }
            Node::Index(a, i) => {
                let a = self.lower(*a, env, None)?;
                let i = self.scalar(*i, env)?;
                index_val(&a, &i)
            }
            Node::Summate(i, lo, hi, body) => self.fold(true, *i, *lo, *hi, *body, env, hint),
            Node::Product(i, lo, hi, body) => self.fold(false, *i, *lo, *hi, *body, env, hint),
            Node::Integrate(..) => unsupported("`integrate` (an integral has no loop form)"),
            Node::Bucket(j, lo, hi, r) => self.bucket(*j, *lo, *hi, *r, env, hint),
            Node::RAdd(_)
            | Node::RNop
            | Node::RIndex(..)
            | Node::RSplit(..)
            | Node::RFanout(..) => internal("a reducer outside `bucket`"),
            Node::Dirac(e) => self.lower(*e, env, hint),
            Node::Weight(w, m) => {
                let w = self.scalar(*w, env)?;
                self.emit(Stmt::Factor(w));
                self.lower(*m, env, hint)
            }
            Node::Reject => {
                self.emit(Stmt::Reject);
                // never observed: the run has stopped; a value keeps the result defined
                let inner = ty.measure_of().cloned().unwrap_or(Type::Unit);
                self.zero_val(&inner)
            }
            Node::Superpose(ms) => self.superpose(ms, &ty, env, hint),
            Node::Bind(x, m, k) => {
                let name = store.var_name(*x);
                let v = match store.node(*m) {
                    Node::Dist(d, args) => self.draw(*d, args, env, Some(name))?,
                    _ => {
                        let v = self.lower(*m, env, Some(name))?;
                        self.share(v, store.var_type(*x), Some(name))
                    }
                };
                self.lower(*k, &env.bind(*x, v), hint)
            }
            Node::Plate(i, n, m) => {
                let elem = ty
                    .measure_of()
                    .and_then(Type::array_of)
                    .cloned()
                    .unwrap_or(Type::Unit);
                let n = self.scalar(*n, env)?;
                let n = self.atom(n, &Type::Nat, None);
                let target = self.alloc(&elem, &n, hint)?;
                let iname = self.fresh(store.var_name(*i));
                let env2 = env.bind(*i, Val::Scalar(Expr::Var(iname.clone())));
                let (body_stmts, ()) = self.in_block(|l| {
                    let v = l.lower(*m, &env2, None)?;
                    l.store_val(&target, &Expr::Var(iname.clone()), v)
                })?;
                self.emit(Stmt::for_(&iname, Expr::nat(0), n, body_stmts));
                Ok(target)
            }
            Node::Dist(d, args) => self.draw(*d, args, env, hint),
            Node::Chain(..) => unsupported("`chain` (a Markov chain of measures)"),
            Node::Observe(m, v) => self.observe(*m, *v, env),
            Node::Transform(k, _) => unsupported(format!(
                "a `{0}(...)` marker; expand it first (slic-cas {0})",
                k.name()
            )),
        }
    }

    /// A value to bind (`let`, a function argument): a measure is not run here but where
    /// it is used, so it is kept as a thunk.
    fn lower_value(&mut self, t: TermId, env: &Env, hint: Option<&str>) -> Result<Val> {
        if self.store.ty(t).measure_of().is_some() {
            return Ok(Val::Measure(Rc::new(Thunk {
                term: t,
                env: env.clone(),
            })));
        }
        self.lower(t, env, hint)
    }

    /// The value of a rejected run, of type `t`: zeros (never observed).
    fn zero_val(&mut self, t: &Type) -> Result<Val> {
        Ok(match t {
            Type::Pair(a, b) => Val::Pair(Box::new(self.zero_val(a)?), Box::new(self.zero_val(b)?)),
            Type::Unit => Val::Unit,
            Type::Array(e) => self.alloc(e, &Expr::nat(0), None)?,
            t if is_scalar(t) => Val::Scalar(zero(t)),
            t => return unsupported(format!("a measure over values of type {t}")),
        })
    }

    /// `observe(m, v)`: the density of the primitive measure `m` at `v` as a factor, and
    /// `v` as the result. `m` may be named (a `let` of a primitive measure).
    fn observe(&mut self, m: TermId, v: TermId, env: &Env) -> Result<Val> {
        let (m, menv) = match self.store.node(m) {
            Node::Var(x) => match env.lookup(*x) {
                Some(Val::Measure(th)) => (th.term, th.env.clone()),
                _ => (m, env.clone()),
            },
            _ => (m, env.clone()),
        };
        let Node::Dist(d, args) = self.store.node(m).clone() else {
            return unsupported(
                "`observe` of a measure that is not a primitive distribution (its density                  is not known to the loop IR)",
            );
        };
        if matches!(d, Dist::Lebesgue | Dist::Counting) {
            return unsupported(format!("`observe` of `{}`", d.name()));
        }
        let mut xs = Vec::with_capacity(args.len());
        for a in &args {
            xs.push(match self.lower(*a, &menv, None)? {
                Val::Scalar(e) | Val::Array(e, _) => e,
                _ => return internal(format!("an argument of {} of another shape", d.name())),
            });
        }
        let value = self.scalar(v, env)?;
        let value = self.atom(value, &d.support_type(), None);
        self.emit(Stmt::Observe {
            dist: d,
            args: xs,
            value: value.clone(),
        });
        Ok(Val::Scalar(value))
    }

    /// `draw x ~ d(args)`, named by `hint`.
    fn draw(&mut self, d: Dist, args: &[TermId], env: &Env, hint: Option<&str>) -> Result<Val> {
        if matches!(d, Dist::Lebesgue | Dist::Counting) {
            return unsupported(format!(
                "`{}` (not a probability measure: nothing can be drawn from it)",
                d.name()
            ));
        }
        let mut xs = Vec::with_capacity(args.len());
        for a in args {
            xs.push(match self.lower(*a, env, None)? {
                Val::Scalar(e) | Val::Array(e, _) => e,
                _ => return internal(format!("an argument of {} of another shape", d.name())),
            });
        }
        let name = self.name_for(hint);
        self.emit(Stmt::draw(&name, d.support_type(), d, xs));
        Ok(Val::Scalar(Expr::Var(name)))
    }

    /// Storage for a value of type `t` chosen at run time (`var`s, unassigned).
    fn declare(&mut self, t: &Type, hint: Option<&str>) -> Result<Val> {
        Ok(match t {
            t if is_scalar(t) => {
                let name = self.name_for(hint);
                self.emit(Stmt::var(&name, t.clone(), None));
                Val::Scalar(Expr::Var(name))
            }
            Type::Pair(a, b) => {
                let a = self.declare(a, hint)?;
                let b = self.declare(b, hint)?;
                Val::Pair(Box::new(a), Box::new(b))
            }
            Type::Unit => Val::Unit,
            Type::Array(_) => return unsupported("a conditional choosing between arrays"),
            Type::Fun(..) => return unsupported("a conditional choosing between functions"),
            t => return unsupported(format!("a conditional value of type {t}")),
        })
    }

    /// `target = v`, leaf by leaf.
    fn assign(&mut self, target: &Val, v: Val) -> Result<()> {
        match (target, v) {
            (Val::Scalar(Expr::Var(name)), Val::Scalar(e)) => {
                self.emit(Stmt::assign(name, AssignOp::Set, e));
                Ok(())
            }
            (Val::Pair(ta, tb), Val::Pair(a, b)) => {
                self.assign(ta, *a)?;
                self.assign(tb, *b)
            }
            (Val::Unit, Val::Unit) => Ok(()),
            _ => internal("a conditional's branches have different shapes"),
        }
    }

    /// One zero-filled array per scalar leaf of `elem`, of size `n`.
    fn alloc(&mut self, elem: &Type, n: &Expr, hint: Option<&str>) -> Result<Val> {
        Ok(match elem {
            t if is_scalar(t) => {
                let name = self.name_for(hint);
                self.emit(Stmt::alloc(&name, t.clone(), n.clone()));
                Val::Array(Expr::Var(name), t.clone())
            }
            Type::Pair(a, b) => {
                let a = self.alloc(a, n, hint)?;
                let b = self.alloc(b, n, hint)?;
                Val::Pair(Box::new(a), Box::new(b))
            }
            // `()` needs no storage (an array of pairs with `()` in them, from `r_nop`)
            Type::Unit => Val::Unit,
            Type::Array(_) => return unsupported("an array of arrays"),
            t => return unsupported(format!("an array of values of type {t}")),
        })
    }

    /// `target[i] = v`, leaf by leaf.
    fn store_val(&mut self, target: &Val, i: &Expr, v: Val) -> Result<()> {
        self.update(target, i, AssignOp::Set, v)
    }

    fn update(&mut self, target: &Val, i: &Expr, op: AssignOp, v: Val) -> Result<()> {
        match (target, v) {
            (Val::Array(Expr::Var(a), _), Val::Scalar(e)) => {
                self.emit(Stmt::store(a, i.clone(), op, e));
                Ok(())
            }
            (Val::Pair(ta, tb), Val::Pair(a, b)) => {
                self.update(ta, i, op, *a)?;
                self.update(tb, i, op, *b)
            }
            (Val::Unit, Val::Unit) => Ok(()),
            _ => internal("an array element of another shape"),
        }
    }

    /// A conditional: the cases in order (the last without a condition), each lowered in
    /// its own block, the value assigned to storage declared before.
    fn choice(&mut self, cases: Vec<Case>, ty: &Type, hint: Option<&str>) -> Result<Val> {
        if let [only] = cases.as_slice() {
            if only.cond.is_none() {
                // an irrefutable match: no choice at run time
                return self.lower(only.term, &only.env, hint);
            }
        }
        let vt = ty.measure_of().unwrap_or(ty).clone();
        let target = self.declare(&vt, hint)?;
        let stmts = self.cases(&cases, &target)?;
        self.block.extend(stmts);
        Ok(target)
    }

    fn cases(&mut self, cases: &[Case], target: &Val) -> Result<Vec<Stmt>> {
        let Some((first, rest)) = cases.split_first() else {
            return internal("a conditional without cases");
        };
        let (then, ()) = self.in_block(|l| {
            let v = l.lower(first.term, &first.env, None)?;
            l.assign(target, v)
        })?;
        match &first.cond {
            None => Ok(then),
            Some(_) if rest.is_empty() => internal("a conditional whose last case has a condition"),
            Some(c) => {
                let otherwise = self.cases(rest, target)?;
                Ok(vec![Stmt::if_(c.clone(), then, otherwise)])
            }
        }
    }

    fn match_(
        &mut self,
        e: TermId,
        arms: &[(Pattern, TermId)],
        ty: &Type,
        env: &Env,
        hint: Option<&str>,
    ) -> Result<Val> {
        // a scalar scrutinee is tested by several arms: computed once; the parts of a
        // pair are named where a pattern binds them
        let v = match self.lower(e, env, None)? {
            Val::Scalar(x) => Val::Scalar(self.atom(x, self.store.ty(e), None)),
            v => v,
        };
        let mut cases = Vec::new();
        // single-test arms seen so far: a later arm testing the opposite is exhaustive
        let mut tested: Vec<(Expr, bool)> = Vec::new();
        for (p, body) in arms {
            let mut conds = Vec::new();
            let mut env2 = env.clone();
            if !self.pattern(p, &v, &mut conds, &mut env2)? {
                continue; // statically never matches
            }
            let cond = match conds.len() {
                0 => None,
                1 => {
                    let (x, pol) = conds[0].clone();
                    if tested.contains(&(x.clone(), !pol)) {
                        None
                    } else {
                        tested.push((x, pol));
                        Some(test(conds[0].clone()))
                    }
                }
                _ => Some(Expr::prim(Prim::And, conds.into_iter().map(test).collect())),
            };
            let last = cond.is_none();
            cases.push(Case {
                cond,
                term: *body,
                env: env2,
            });
            if last {
                break;
            }
        }
        if cases.last().is_none_or(|c| c.cond.is_some()) {
            return unsupported("a `match` that may match no branch");
        }
        self.choice(cases, ty, hint)
    }

    /// Matches `v` against `p`: tests (a bool and the value it must have) go to `conds`,
    /// bindings to `env`; `false` when the pattern can never match.
    fn pattern(
        &mut self,
        p: &Pattern,
        v: &Val,
        conds: &mut Vec<(Expr, bool)>,
        env: &mut Env,
    ) -> Result<bool> {
        match (p, v) {
            (Pattern::Wild, _) => Ok(true),
            (Pattern::Var(x), v) => {
                let store = self.store;
                let v = self.share(v.clone(), store.var_type(*x), Some(store.var_name(*x)));
                *env = env.bind(*x, v);
                Ok(true)
            }
            (Pattern::Unit, Val::Unit) => Ok(true),
            (Pattern::Bool(b), Val::Scalar(e)) => match e {
                Expr::Lit(Lit::Bool(c)) => Ok(b == c),
                _ => {
                    conds.push((e.clone(), *b));
                    Ok(true)
                }
            },
            (Pattern::Pair(pa, pb), Val::Pair(a, b)) => {
                Ok(self.pattern(pa, a, conds, env)? && self.pattern(pb, b, conds, env)?)
            }
            (Pattern::Left(_) | Pattern::Right(_) | Pattern::Just(_) | Pattern::Nothing, _) => {
                unsupported("`left`, `right`, `just` and `nothing` patterns")
            }
            _ => internal("a pattern of another shape than its value"),
        }
    }

    /// `summate` (`sum`) or `product`: an accumulator and a `for`.
    #[allow(clippy::too_many_arguments)]
    fn fold(
        &mut self,
        sum: bool,
        i: VarId,
        lo: TermId,
        hi: TermId,
        body: TermId,
        env: &Env,
        hint: Option<&str>,
    ) -> Result<Val> {
        let ty = self.store.ty(body).clone();
        if !ty.is_numeric() {
            return internal(format!("a sum or product of type {ty}"));
        }
        let lo = self.scalar(lo, env)?;
        let hi = self.scalar(hi, env)?;
        let acc = self.name_for(hint);
        let init = if sum { zero(&ty) } else { one(&ty) };
        self.emit(Stmt::var(&acc, ty.clone(), Some(init)));
        let iname = self.fresh(self.store.var_name(i));
        let env2 = env.bind(i, Val::Scalar(Expr::Var(iname.clone())));
        let (stmts, ()) = self.in_block(|l| {
            let e = l.scalar(body, &env2)?;
            let op = if sum { AssignOp::Add } else { AssignOp::Mul };
            l.emit(Stmt::assign(&acc, op, e));
            Ok(())
        })?;
        self.emit(Stmt::for_(&iname, lo, hi, stmts));
        Ok(Val::Scalar(Expr::Var(acc)))
    }

    /// `bucket j from lo to hi: r`: the reducer's identity, then one loop of updates.
    fn bucket(
        &mut self,
        j: VarId,
        lo: TermId,
        hi: TermId,
        r: TermId,
        env: &Env,
        hint: Option<&str>,
    ) -> Result<Val> {
        let lo = self.scalar(lo, env)?;
        let hi = self.scalar(hi, env)?;
        let acc = self.reducer_init(r, env, hint, None)?;
        let jname = self.fresh(self.store.var_name(j));
        let env2 = env.bind(j, Val::Scalar(Expr::Var(jname.clone())));
        let (stmts, ()) = self.in_block(|l| l.reducer_update(r, &acc.0, &acc.1, &env2, None))?;
        self.emit(Stmt::for_(&jname, lo, hi, stmts));
        Ok(acc.0)
    }

    /// The identity of reducer `r`: accumulators (or, under an `r_index` of size `n`,
    /// arrays) holding zero. Returns the value's storage and the tree of `r_index` sizes.
    fn reducer_init(
        &mut self,
        r: TermId,
        env: &Env,
        hint: Option<&str>,
        size: Option<&Expr>,
    ) -> Result<(Val, Sizes)> {
        let store = self.store;
        Ok(match store.node(r) {
            Node::RAdd(_) => {
                let ty = store.ty(r).clone();
                let v = match size {
                    Some(n) => self.alloc(&ty, n, hint)?,
                    None => {
                        let name = self.name_for(hint);
                        self.emit(Stmt::var(&name, ty.clone(), Some(zero(&ty))));
                        Val::Scalar(Expr::Var(name))
                    }
                };
                (v, Sizes::Leaf)
            }
            Node::RNop => (Val::Unit, Sizes::Leaf),
            Node::RIndex(_, n, _, inner) => {
                if size.is_some() {
                    return unsupported("an `r_index` inside an `r_index` (an array of arrays)");
                }
                if matches!(store.node(*inner), Node::RNop) {
                    return unsupported("an `r_index` of `r_nop` (an array of `()`)");
                }
                let n = self.scalar(*n, env)?;
                let n = self.atom(n, &Type::Nat, None);
                let (v, s) = self.reducer_init(*inner, env, hint, Some(&n))?;
                (v, Sizes::Index(n, Box::new(s)))
            }
            Node::RSplit(_, r1, r2) | Node::RFanout(r1, r2) => {
                let (a, sa) = self.reducer_init(*r1, env, hint, size)?;
                let (b, sb) = self.reducer_init(*r2, env, hint, size)?;
                (
                    Val::Pair(Box::new(a), Box::new(b)),
                    Sizes::Pair(Box::new(sa), Box::new(sb)),
                )
            }
            _ => return internal("the body of `bucket` is not a reducer"),
        })
    }

    /// One update of reducer `r` at the current loop index (bound in `env`); under an
    /// `r_index`, `at` is the bucket the update goes to.
    fn reducer_update(
        &mut self,
        r: TermId,
        acc: &Val,
        sizes: &Sizes,
        env: &Env,
        at: Option<&Expr>,
    ) -> Result<()> {
        let store = self.store;
        match (store.node(r), sizes) {
            (Node::RAdd(e), _) => {
                let v = self.scalar(*e, env)?;
                match (acc, at) {
                    (Val::Scalar(Expr::Var(name)), None) => {
                        self.emit(Stmt::assign(name, AssignOp::Add, v));
                    }
                    (Val::Array(..), Some(k)) => {
                        self.update(acc, k, AssignOp::Add, Val::Scalar(v))?;
                    }
                    _ => return internal("an `r_add` accumulator of another shape"),
                }
                Ok(())
            }
            (Node::RNop, _) => Ok(()),
            (Node::RIndex(b, _, e, inner), Sizes::Index(n, inner_sizes)) => {
                let ety = store.ty(*e).clone();
                let k = self.scalar(*e, env)?;
                let k = self.atom(k, &ety, None);
                // an index outside 0..n selects no bucket: the update is the identity
                let (cond, kb) = match ety {
                    Type::Int => (
                        Expr::prim(
                            Prim::And,
                            vec![
                                Expr::prim(Prim::Le, vec![Expr::int(0), k.clone()]),
                                Expr::prim(
                                    Prim::Lt,
                                    vec![k.clone(), Expr::convert(Coercion::Nat2Int, n.clone())],
                                ),
                            ],
                        ),
                        Expr::convert(Coercion::Int2Nat, k.clone()),
                    ),
                    _ => (Expr::prim(Prim::Lt, vec![k.clone(), n.clone()]), k.clone()),
                };
                let bty = store.var_type(*b).clone();
                let (stmts, ()) = self.in_block(|l| {
                    let bv = match bty {
                        Type::Int if ety == Type::Nat => {
                            Expr::convert(Coercion::Nat2Int, k.clone())
                        }
                        Type::Int => k.clone(),
                        _ => kb.clone(),
                    };
                    let bv = l.atom(bv, &bty, Some(store.var_name(*b)));
                    let env2 = env.bind(*b, Val::Scalar(bv));
                    l.reducer_update(*inner, acc, inner_sizes, &env2, Some(&k))
                })?;
                self.emit(Stmt::if_(cond, stmts, Vec::new()));
                Ok(())
            }
            (Node::RSplit(c, r1, r2), Sizes::Pair(s1, s2)) => {
                let Val::Pair(a1, a2) = acc else {
                    return internal("an `r_split` accumulator that is not a pair");
                };
                let c = self.scalar(*c, env)?;
                let (then, ()) = self.in_block(|l| l.reducer_update(*r1, a1, s1, env, at))?;
                let (otherwise, ()) = self.in_block(|l| l.reducer_update(*r2, a2, s2, env, at))?;
                if !(then.is_empty() && otherwise.is_empty()) {
                    self.emit(Stmt::if_(c, then, otherwise));
                }
                Ok(())
            }
            (Node::RFanout(r1, r2), Sizes::Pair(s1, s2)) => {
                let Val::Pair(a1, a2) = acc else {
                    return internal("an `r_fanout` accumulator that is not a pair");
                };
                self.reducer_update(*r1, a1, s1, env, at)?;
                self.reducer_update(*r2, a2, s2, env, at)
            }
            _ => internal("a reducer of another shape than its accumulator"),
        }
    }

    /// `m1 <|> ... <|> mk`: a uniform categorical choice of the branch, weighted by `k`,
    /// so that both enumeration and sampling see each branch with its full weight.
    fn superpose(
        &mut self,
        ms: &[TermId],
        ty: &Type,
        env: &Env,
        hint: Option<&str>,
    ) -> Result<Val> {
        let k = ms.len() as u64;
        let w = self.temp();
        self.emit(Stmt::alloc(&w, Type::Prob, Expr::nat(k)));
        let i = self.temp();
        self.emit(Stmt::for_(
            &i,
            Expr::nat(0),
            Expr::nat(k),
            vec![Stmt::store(
                &w,
                Expr::Var(i.clone()),
                AssignOp::Set,
                one(&Type::Prob),
            )],
        ));
        let c = self.temp();
        self.emit(Stmt::draw(
            &c,
            Type::Nat,
            Dist::Categorical,
            vec![Expr::Var(w)],
        ));
        self.emit(Stmt::Factor(Expr::convert(
            Coercion::Nat2Prob,
            Expr::nat(k),
        )));
        let cases = ms
            .iter()
            .enumerate()
            .map(|(n, m)| Case {
                cond: (n + 1 < ms.len())
                    .then(|| Expr::prim(Prim::Eq, vec![Expr::Var(c.clone()), Expr::nat(n as u64)])),
                term: *m,
                env: env.clone(),
            })
            .collect();
        self.choice(cases, ty, hint)
    }

    fn prim(
        &mut self,
        p: Prim,
        args: &[TermId],
        ty: &Type,
        env: &Env,
        hint: Option<&str>,
    ) -> Result<Val> {
        match p {
            Prim::And | Prim::Or => self.short_circuit(p, args, env),
            Prim::Size => {
                let [a] = args else {
                    return internal("`size` of other than one argument");
                };
                let a = self.lower(*a, env, None)?;
                Ok(Val::Scalar(size_val(&a)?))
            }
            Prim::Reduce => self.reduce(args, ty, env, hint),
            Prim::Eq | Prim::Ne
                if args
                    .first()
                    .is_some_and(|a| *self.store.ty(*a) == Type::Unit) =>
            {
                for a in args {
                    self.lower(*a, env, None)?;
                }
                Ok(Val::Scalar(Expr::bool(p == Prim::Eq)))
            }
            _ => {
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    xs.push(self.scalar(*a, env)?);
                }
                Ok(Val::Scalar(Expr::prim(p, xs)))
            }
        }
    }

    /// `a && b && ...` (or `||`) as the reference evaluates it: left to right, stopping
    /// at the first operand that decides; an operand that can fail is evaluated under an
    /// `if` on the ones before it.
    fn short_circuit(&mut self, p: Prim, args: &[TermId], env: &Env) -> Result<Val> {
        let mut done: Vec<Expr> = Vec::new();
        let combine = |mut xs: Vec<Expr>| {
            if xs.len() == 1 {
                xs.pop().unwrap_or(Expr::bool(p == Prim::And))
            } else {
                Expr::prim(p, xs)
            }
        };
        for a in args {
            let (stmts, e) = self.in_block(|l| l.scalar(*a, env))?;
            if done.is_empty() {
                self.block.extend(stmts);
                done.push(e);
            } else if stmts.is_empty() && !can_fail(&e) {
                done.push(e);
            } else {
                let t = self.temp();
                self.emit(Stmt::var(
                    &t,
                    Type::Bool,
                    Some(combine(std::mem::take(&mut done))),
                ));
                let mut guarded = stmts;
                guarded.push(Stmt::assign(&t, AssignOp::Set, e));
                let s = if p == Prim::And {
                    Stmt::if_(Expr::Var(t.clone()), guarded, Vec::new())
                } else {
                    Stmt::if_(Expr::Var(t.clone()), Vec::new(), guarded)
                };
                self.emit(s);
                done.push(Expr::Var(t));
            }
        }
        Ok(Val::Scalar(combine(done)))
    }

    /// `reduce(f, z, a)`: an accumulator folded over `a` with `f` inlined.
    fn reduce(&mut self, args: &[TermId], ty: &Type, env: &Env, hint: Option<&str>) -> Result<Val> {
        let [f, z, a] = args else {
            return internal("`reduce` of other than three arguments");
        };
        if !is_scalar(ty) {
            return unsupported(format!("`reduce` over values of type {ty}"));
        }
        let fv = self.lower(*f, env, None)?;
        let z = self.scalar(*z, env)?;
        let a = self.lower(*a, env, None)?;
        let n = size_val(&a)?;
        let acc = self.name_for(hint);
        self.emit(Stmt::var(&acc, ty.clone(), Some(z)));
        let k = self.temp();
        let (stmts, ()) = self.in_block(|l| {
            let x = index_val(&a, &Expr::Var(k.clone()))?;
            let g = l.apply(&fv, Val::Scalar(Expr::Var(acc.clone())))?;
            let r = l.apply(&g, x)?;
            let Val::Scalar(r) = r else {
                return internal("`reduce` whose function does not return a scalar");
            };
            l.emit(Stmt::assign(&acc, AssignOp::Set, r));
            Ok(())
        })?;
        self.emit(Stmt::for_(&k, Expr::nat(0), n, stmts));
        Ok(Val::Scalar(Expr::Var(acc)))
    }

    fn apply(&mut self, f: &Val, arg: Val) -> Result<Val> {
        let Val::Fun(c) = f else {
            return internal("an application of something that is not a function");
        };
        let ty = self.store.var_type(c.var).clone();
        let arg = self.share(arg, &ty, Some(self.store.var_name(c.var)));
        self.lower(c.body, &c.env.bind(c.var, arg), None)
    }
}

/// The sizes of the `r_index` levels of a reducer, evaluated once before its loop.
enum Sizes {
    Leaf,
    Index(Expr, Box<Sizes>),
    Pair(Box<Sizes>, Box<Sizes>),
}

/// A test of a bool against the value it must have.
fn test((e, b): (Expr, bool)) -> Expr {
    if b {
        e
    } else {
        Expr::prim(Prim::Not, vec![e])
    }
}

/// `a[i]` of an array value: an array of pairs is a pair of arrays.
fn index_val(a: &Val, i: &Expr) -> Result<Val> {
    Ok(match a {
        Val::Array(e, el) => {
            let x = Expr::index(e.clone(), i.clone());
            match el.array_of() {
                Some(inner) => Val::Array(x, inner.clone()),
                None => Val::Scalar(x),
            }
        }
        Val::Pair(x, y) => Val::Pair(Box::new(index_val(x, i)?), Box::new(index_val(y, i)?)),
        Val::Unit => Val::Unit,
        _ => return internal("an index into something that is not an array"),
    })
}

/// `size(a)`; of an array of pairs, the size of its first array.
fn size_val(a: &Val) -> Result<Expr> {
    match a {
        Val::Array(e, _) => Ok(Expr::size(e.clone())),
        Val::Pair(x, y) => size_val(x).or_else(|_| size_val(y)),
        Val::Unit => unsupported("the size of an array of `()`"),
        _ => internal("the size of something that is not an array"),
    }
}
