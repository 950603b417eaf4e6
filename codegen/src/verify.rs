//! The loop IR's verifier (issue 11, deliverable 3): run after every pass, it checks that a
//! [`Program`] is well formed, so the interpreter and the kernel templates may rely on it.
//!
//! It checks types (every expression's type from its parts, by the algebra's signatures of
//! its primitives; every assignment's type matches its target; loop bounds integral),
//! scopes (no name used outside its scope, none declared twice in one scope; an inner
//! scope may shadow), arrays (every array read is a parameter or was allocated, only
//! allocated arrays are written, arrays hold scalars when allocated and are never bound
//! by `let`, so an array expression always names one of the two), and definite assignment
//! (no accumulator read before a write on every path: a write inside a loop's body does
//! not count after the loop, which may run zero times; after an `if`, only writes made on
//! both branches count). Errors are data naming the statement; it never panics.
//!
//! Measure statements (`draw`, `factor`, `reject`) only in measure programs. A draw's
//! arguments have the types the algebra's `Dist::param_types` gives (the one table of
//! distribution signatures: normal(real, prob), categorical(array(prob)), ...), its
//! declared type is `Dist::support_type`, and the drawn name is a new immutable scalar in
//! scope after the draw; `lebesgue` and `counting` are not probability measures and cannot
//! be drawn. `factor` takes a `prob`. Draws may sit inside `for` and `if`: a plate of draws
//! stores each one into an allocated array.

use crate::ir::{AssignOp, Expr, Program, Stmt};
use slic_algebra::{Dist, Prim, Type};
use std::collections::HashSet;
use std::fmt;

/// Why a program is ill formed. `at` is the offending statement's first line (or
/// `return ...` for the result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyError {
    /// A name no enclosing scope declares.
    Unbound { name: String, at: String },
    /// An array read or written that is neither a parameter nor allocated.
    UnallocatedArray { name: String, at: String },
    /// A name declared twice in one scope.
    Redeclared { name: String, at: String },
    /// A type other than the one the position needs.
    TypeMismatch {
        what: String,
        expected: String,
        found: Type,
        at: String,
    },
    /// An accumulator read before it is written on every path to the read.
    ReadBeforeWrite { name: String, at: String },
    /// An assignment to a name that is not an accumulator, or an element store into an
    /// array that was not allocated (parameters are read-only inputs unless `inout`);
    /// also an `inout` name that is not an array parameter.
    NotWritable { name: String, at: String },
    /// A primitive applied to the wrong number of arguments.
    Arity {
        prim: Prim,
        found: usize,
        at: String,
    },
    /// A primitive the IR has no place for (`reduce` takes a function).
    UnsupportedPrim { prim: Prim, at: String },
    /// A parameter, binding or allocation of a type the IR does not hold.
    UnsupportedType {
        what: String,
        found: Type,
        at: String,
    },
    /// A draw, factor or reject in a program that is not a measure program.
    NotAMeasure { at: String },
    /// A draw from a measure that is not a probability measure (`lebesgue`, `counting`).
    NotDrawable { dist: Dist, at: String },
    /// A draw with the wrong number of arguments for its distribution.
    DrawArity {
        dist: Dist,
        expected: usize,
        found: usize,
        at: String,
    },
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Unbound { name, at } => write!(f, "`{name}` is not in scope in `{at}`"),
            VerifyError::NotAMeasure { at } => {
                write!(
                    f,
                    "`{at}` is a measure statement in a program that is not a measure"
                )
            }
            VerifyError::NotDrawable { dist, at } => write!(
                f,
                "{} is not a probability measure and cannot be drawn, in `{at}`",
                dist.name()
            ),
            VerifyError::DrawArity {
                dist,
                expected,
                found,
                at,
            } => write!(
                f,
                "{} takes {expected} arguments, found {found}, in `{at}`",
                dist.name()
            ),
            VerifyError::UnallocatedArray { name, at } => {
                write!(
                    f,
                    "array `{name}` is neither a parameter nor allocated, in `{at}`"
                )
            }
            VerifyError::Redeclared { name, at } => {
                write!(f, "`{name}` is declared twice in one scope, in `{at}`")
            }
            VerifyError::TypeMismatch {
                what,
                expected,
                found,
                at,
            } => {
                write!(f, "{what} has type {found}, expected {expected}, in `{at}`")
            }
            VerifyError::ReadBeforeWrite { name, at } => {
                write!(
                    f,
                    "accumulator `{name}` may be read before it is written, in `{at}`"
                )
            }
            VerifyError::NotWritable { name, at } => {
                write!(
                    f,
                    "`{name}` is not writable (not an accumulator or allocated array), in `{at}`"
                )
            }
            VerifyError::Arity { prim, found, at } => {
                write!(
                    f,
                    "primitive {prim:?} applied to {found} arguments, in `{at}`"
                )
            }
            VerifyError::UnsupportedPrim { prim, at } => {
                write!(
                    f,
                    "primitive {prim:?} has no place in the loop IR, in `{at}`"
                )
            }
            VerifyError::UnsupportedType { what, found, at } => {
                write!(
                    f,
                    "{what} has type {found}, which the loop IR does not hold, in `{at}`"
                )
            }
        }
    }
}

impl std::error::Error for VerifyError {}

/// What a name is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Param,
    Let,
    Acc,
    Index,
    Alloc,
    /// An `inout` array parameter: read as a parameter, written as an allocation.
    InOut,
}

#[derive(Clone, Debug)]
struct Binding {
    name: String,
    ty: Type,
    kind: Kind,
}

/// Scalars the IR computes with.
fn is_scalar(t: &Type) -> bool {
    matches!(
        t,
        Type::Nat | Type::Int | Type::Real | Type::Prob | Type::Bool
    )
}

/// Parameter types: scalars and arrays of them, to any depth.
fn is_param_type(t: &Type) -> bool {
    is_scalar(t) || t.array_of().is_some_and(is_param_type)
}

fn is_integral(t: &Type) -> bool {
    matches!(t, Type::Nat | Type::Int)
}

/// Checks a program; the first error found, in program order.
pub fn verify(p: &Program) -> Result<(), VerifyError> {
    let mut v = Verifier {
        scopes: vec![Vec::new()],
        written: HashSet::new(),
        measure: p.measure,
    };
    for (name, ty) in &p.params {
        let at = format!("parameter {name}: {ty}");
        if !is_param_type(ty) {
            return Err(VerifyError::UnsupportedType {
                what: format!("parameter `{name}`"),
                found: ty.clone(),
                at,
            });
        }
        let inout = p.inout.contains(name);
        if inout && !ty.array_of().is_some_and(is_scalar) {
            return Err(VerifyError::NotWritable {
                name: name.clone(),
                at,
            });
        }
        let kind = if inout { Kind::InOut } else { Kind::Param };
        v.declare(name, ty.clone(), kind, &at)?;
    }
    if let Some(name) = p
        .inout
        .iter()
        .find(|x| !p.params.iter().any(|(n, _)| n == *x))
    {
        return Err(VerifyError::NotWritable {
            name: name.clone(),
            at: "the inout parameters".into(),
        });
    }
    v.block(&p.body)?;
    let at = format!("return {}", p.result);
    let t = v.expr(&p.result, &at)?;
    // a result is a number, an array of numbers, `()` or a pair of these
    fn returnable(t: &Type) -> bool {
        match t {
            Type::Array(e) => is_scalar(e),
            Type::Pair(a, b) => returnable(a) && returnable(b),
            Type::Unit => true,
            t => is_scalar(t),
        }
    }
    if !returnable(&t) {
        return Err(VerifyError::UnsupportedType {
            what: "the result".into(),
            found: t,
            at,
        });
    }
    Ok(())
}

/// The type of an expression over parameters alone (`params` as in a [`Program`]).
pub fn expr_type(params: &[(String, Type)], e: &Expr) -> Result<Type, VerifyError> {
    let mut v = Verifier {
        scopes: vec![Vec::new()],
        written: HashSet::new(),
        measure: false,
    };
    for (name, ty) in params {
        v.declare(name, ty.clone(), Kind::Param, "parameters")?;
    }
    v.expr(e, &e.to_string())
}

struct Verifier {
    /// Innermost scope last.
    scopes: Vec<Vec<Binding>>,
    /// Accumulators (by declaration: scope depth and position) written on every path so
    /// far. Keyed by the binding's place, so a shadowing accumulator is tracked apart.
    written: HashSet<(usize, usize)>,
    /// Is this a measure program (may it draw, factor, reject)?
    measure: bool,
}

impl Verifier {
    fn lookup(&self, name: &str) -> Option<((usize, usize), &Binding)> {
        for (d, scope) in self.scopes.iter().enumerate().rev() {
            if let Some(k) = scope.iter().rposition(|b| b.name == name) {
                return Some(((d, k), &scope[k]));
            }
        }
        None
    }

    fn declare(
        &mut self,
        name: &str,
        ty: Type,
        kind: Kind,
        at: &str,
    ) -> Result<(usize, usize), VerifyError> {
        let d = self.scopes.len() - 1;
        let scope = &mut self.scopes[d];
        if scope.iter().any(|b| b.name == name) {
            return Err(VerifyError::Redeclared {
                name: name.into(),
                at: at.into(),
            });
        }
        scope.push(Binding {
            name: name.into(),
            ty,
            kind,
        });
        Ok((d, scope.len() - 1))
    }

    fn enter(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn leave(&mut self) {
        let d = self.scopes.len() - 1;
        self.scopes.pop();
        self.written.retain(|&(sd, _)| sd < d);
    }

    fn block(&mut self, body: &[Stmt]) -> Result<(), VerifyError> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn mismatch(what: &str, expected: &str, found: Type, at: &str) -> VerifyError {
        VerifyError::TypeMismatch {
            what: what.into(),
            expected: expected.into(),
            found,
            at: at.into(),
        }
    }

    fn expect(&mut self, e: &Expr, want: &Type, what: &str, at: &str) -> Result<(), VerifyError> {
        let t = self.expr(e, at)?;
        if &t != want {
            return Err(Self::mismatch(what, &want.to_string(), t, at));
        }
        Ok(())
    }

    /// The arguments of a draw or an observation of `dist`: a distribution with a density
    /// the IR computes (not `lebesgue` or `counting`), its parameter types (the algebra's
    /// `Dist::param_types`).
    fn dist_args(&mut self, dist: Dist, args: &[Expr], at: &str) -> Result<(), VerifyError> {
        if matches!(dist, Dist::Lebesgue | Dist::Counting) {
            return Err(VerifyError::NotDrawable {
                dist,
                at: at.into(),
            });
        }
        let params = dist.param_types();
        if args.len() != params.len() {
            return Err(VerifyError::DrawArity {
                dist,
                expected: params.len(),
                found: args.len(),
                at: at.into(),
            });
        }
        for (k, (a, want)) in args.iter().zip(&params).enumerate() {
            let what = format!("argument {k} of {}", dist.name());
            // an array argument (categorical's weights) is named, never built
            let t = if want.array_of().is_some() {
                self.array_expr(a, at)?
            } else {
                self.expr(a, at)?
            };
            if &t != want {
                return Err(Self::mismatch(&what, &want.to_string(), t, at));
            }
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), VerifyError> {
        let at = s.head();
        let at = at.as_str();
        match s {
            Stmt::Draw { .. } | Stmt::Factor(_) | Stmt::Observe { .. } | Stmt::Reject
                if !self.measure =>
            {
                return Err(VerifyError::NotAMeasure { at: at.into() });
            }
            Stmt::Draw {
                name,
                ty,
                dist,
                args,
            } => {
                self.dist_args(*dist, args, at)?;
                let support = dist.support_type();
                if *ty != support {
                    return Err(Self::mismatch(
                        &format!("the drawn `{name}`"),
                        &support.to_string(),
                        ty.clone(),
                        at,
                    ));
                }
                self.declare(name, ty.clone(), Kind::Let, at)?;
            }
            Stmt::Factor(w) => self.expect(w, &Type::Prob, "the factor", at)?,
            Stmt::Observe { dist, args, value } => {
                self.dist_args(*dist, args, at)?;
                let support = dist.support_type();
                self.expect(value, &support, "the observed value", at)?;
            }
            Stmt::Reject => {}
            Stmt::Let { name, ty, value } => {
                if !is_scalar(ty) {
                    return Err(VerifyError::UnsupportedType {
                        what: format!("`{name}`"),
                        found: ty.clone(),
                        at: at.into(),
                    });
                }
                self.expect(value, ty, "the value", at)?;
                self.declare(name, ty.clone(), Kind::Let, at)?;
            }
            Stmt::Var { name, ty, init } => {
                if !is_scalar(ty) {
                    return Err(VerifyError::UnsupportedType {
                        what: format!("`{name}`"),
                        found: ty.clone(),
                        at: at.into(),
                    });
                }
                if let Some(e) = init {
                    self.expect(e, ty, "the initial value", at)?;
                }
                let place = self.declare(name, ty.clone(), Kind::Acc, at)?;
                if init.is_some() {
                    self.written.insert(place);
                }
            }
            Stmt::Assign { name, op, value } => {
                let (place, b) = self.lookup(name).ok_or_else(|| VerifyError::Unbound {
                    name: name.clone(),
                    at: at.into(),
                })?;
                if b.kind != Kind::Acc {
                    return Err(VerifyError::NotWritable {
                        name: name.clone(),
                        at: at.into(),
                    });
                }
                let ty = b.ty.clone();
                self.check_op(*op, &ty, at)?;
                self.expect(value, &ty, "the assigned value", at)?;
                if *op != AssignOp::Set && !self.written.contains(&place) {
                    return Err(VerifyError::ReadBeforeWrite {
                        name: name.clone(),
                        at: at.into(),
                    });
                }
                self.written.insert(place);
            }
            Stmt::Alloc { name, elem, size } => {
                if !is_scalar(elem) {
                    return Err(VerifyError::UnsupportedType {
                        what: format!("an element of `{name}`"),
                        found: elem.clone(),
                        at: at.into(),
                    });
                }
                self.expect(size, &Type::Nat, "the size", at)?;
                self.declare(name, Type::array(elem.clone()), Kind::Alloc, at)?;
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let (_, b) = self
                    .lookup(array)
                    .ok_or_else(|| VerifyError::UnallocatedArray {
                        name: array.clone(),
                        at: at.into(),
                    })?;
                let elem = match (b.kind, b.ty.array_of()) {
                    (Kind::Alloc | Kind::InOut, Some(t)) => t.clone(),
                    _ => {
                        return Err(VerifyError::NotWritable {
                            name: array.clone(),
                            at: at.into(),
                        })
                    }
                };
                let it = self.expr(index, at)?;
                if !is_integral(&it) {
                    return Err(Self::mismatch("the index", "nat or int", it, at));
                }
                self.check_op(*op, &elem, at)?;
                self.expect(value, &elem, "the stored value", at)?;
            }
            Stmt::For { var, lo, hi, body } => {
                let lt = self.expr(lo, at)?;
                if !is_integral(&lt) {
                    return Err(Self::mismatch("the lower bound", "nat or int", lt, at));
                }
                self.expect(hi, &lt, "the upper bound", at)?;
                let before = self.written.clone();
                self.enter();
                self.declare(var, lt, Kind::Index, at)?;
                self.block(body)?;
                self.leave();
                // the body may run zero times: what it wrote is not written after it
                self.written = before;
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.expect(cond, &Type::Bool, "the condition", at)?;
                let before = self.written.clone();
                self.enter();
                self.block(then)?;
                self.leave();
                let after_then = std::mem::replace(&mut self.written, before);
                self.enter();
                self.block(otherwise)?;
                self.leave();
                self.written.retain(|p| after_then.contains(p));
            }
        }
        Ok(())
    }

    /// The compound assignments need an operation on the target's type.
    fn check_op(&self, op: AssignOp, ty: &Type, at: &str) -> Result<(), VerifyError> {
        let ok = match op {
            AssignOp::Set => true,
            AssignOp::Add | AssignOp::Mul | AssignOp::Max => ty.is_numeric(),
        };
        if ok {
            Ok(())
        } else {
            Err(Self::mismatch(
                "the target of a compound assignment",
                "a numeric type",
                ty.clone(),
                at,
            ))
        }
    }

    /// The type of an expression, or why it has none.
    fn expr(&mut self, e: &Expr, at: &str) -> Result<Type, VerifyError> {
        match e {
            Expr::Lit(l) => Ok(l.ty()),
            Expr::Var(x) => {
                let (place, b) = self.lookup(x).ok_or_else(|| VerifyError::Unbound {
                    name: x.clone(),
                    at: at.into(),
                })?;
                if b.kind == Kind::Acc && !self.written.contains(&place) {
                    return Err(VerifyError::ReadBeforeWrite {
                        name: x.clone(),
                        at: at.into(),
                    });
                }
                Ok(b.ty.clone())
            }
            Expr::Index(a, i) => {
                let at_ = self.array_expr(a, at)?;
                let it = self.expr(i, at)?;
                if !is_integral(&it) {
                    return Err(Self::mismatch("the index", "nat or int", it, at));
                }
                Ok(at_.array_of().cloned().unwrap_or(at_))
            }
            Expr::Convert(c, x) => {
                self.expect(
                    x,
                    &c.from_type(),
                    &format!("the argument of {}", c.name()),
                    at,
                )?;
                Ok(c.to_type())
            }
            Expr::Prim(p, args) => self.prim(*p, args, at),
            // a pair is a measure program's result, never an operand
            Expr::Pair(a, b) => {
                let ta = self.expr(a, at)?;
                let tb = self.expr(b, at)?;
                Ok(Type::pair(ta, tb))
            }
        }
    }

    /// The type of an expression in array position: a parameter, an allocated array, or
    /// an element of an array of arrays.
    fn array_expr(&mut self, a: &Expr, at: &str) -> Result<Type, VerifyError> {
        let t = match a {
            Expr::Var(x) => match self.lookup(x) {
                Some((_, b)) => b.ty.clone(),
                None => {
                    return Err(VerifyError::UnallocatedArray {
                        name: x.clone(),
                        at: at.into(),
                    })
                }
            },
            Expr::Index(..) => self.expr(a, at)?,
            _ => {
                let t = self.expr(a, at)?;
                return Err(Self::mismatch(
                    "an array expression",
                    "an array named by a parameter or an allocation",
                    t,
                    at,
                ));
            }
        };
        if t.array_of().is_none() {
            return Err(Self::mismatch(&format!("`{a}`"), "an array", t, at));
        }
        Ok(t)
    }

    fn prim(&mut self, p: Prim, args: &[Expr], at: &str) -> Result<Type, VerifyError> {
        use Prim::*;
        let arity_ok = match p.arity() {
            Some(n) => args.len() == n,
            None => args.len() >= 2,
        };
        if p == Reduce {
            return Err(VerifyError::UnsupportedPrim {
                prim: p,
                at: at.into(),
            });
        }
        if !arity_ok {
            return Err(VerifyError::Arity {
                prim: p,
                found: args.len(),
                at: at.into(),
            });
        }
        if p == Size {
            self.array_expr(&args[0], at)?;
            return Ok(Type::Nat);
        }
        let mut tys = Vec::with_capacity(args.len());
        for a in args {
            tys.push(self.expr(a, at)?);
        }
        let arg = |k: usize| format!("argument {k} of {p:?}");
        // all arguments of the first one's type, which must pass `class`
        let same = |class: fn(&Type) -> bool, expected: &str| -> Result<Type, VerifyError> {
            let t = tys[0].clone();
            if !class(&t) {
                return Err(Self::mismatch(&arg(0), expected, t, at));
            }
            for (k, u) in tys.iter().enumerate().skip(1) {
                if *u != t {
                    return Err(Self::mismatch(&arg(k), &t.to_string(), u.clone(), at));
                }
            }
            Ok(t)
        };
        let overloaded = |table: &[(Type, Type)]| -> Result<Type, VerifyError> {
            match table.iter().find(|(from, _)| *from == tys[0]) {
                Some((_, to)) => Ok(to.clone()),
                None => {
                    let names: Vec<String> = table.iter().map(|(f, _)| f.to_string()).collect();
                    Err(Self::mismatch(
                        &arg(0),
                        &names.join(" or "),
                        tys[0].clone(),
                        at,
                    ))
                }
            }
        };
        let (n, i, pr, r) = (Type::Nat, Type::Int, Type::Prob, Type::Real);
        match p {
            Add | Mul | Min | Max => same(Type::is_numeric, "a numeric type"),
            Neg => same(Type::is_ring, "int or real"),
            Recip => same(Type::is_field, "prob or real"),
            Pow => {
                if tys[1] != Type::Nat {
                    return Err(Self::mismatch(&arg(1), "nat", tys[1].clone(), at));
                }
                let t = tys[0].clone();
                if !t.is_numeric() {
                    return Err(Self::mismatch(&arg(0), "a numeric type", t, at));
                }
                Ok(t)
            }
            Abs => overloaded(&[(i, n), (r, pr)]),
            Signum => overloaded(&[(i.clone(), i), (r.clone(), r)]),
            Floor => overloaded(&[(pr, n), (r, i)]),
            Erf => overloaded(&[(r.clone(), r), (pr.clone(), pr)]),
            Lt | Le => same(Type::is_numeric, "a numeric type").map(|_| Type::Bool),
            Eq | Ne => same(
                |t| t.is_numeric() || *t == Type::Bool,
                "a numeric type or bool",
            )
            .map(|_| Type::Bool),
            And | Or => same(|t| *t == Type::Bool, "bool"),
            _ => match p.fixed_signature() {
                Some((params, res)) => {
                    for (k, (t, want)) in tys.iter().zip(&params).enumerate() {
                        if t != want {
                            return Err(Self::mismatch(&arg(k), &want.to_string(), t.clone(), at));
                        }
                    }
                    Ok(res)
                }
                None => Err(VerifyError::UnsupportedPrim {
                    prim: p,
                    at: at.into(),
                }),
            },
        }
    }
}
