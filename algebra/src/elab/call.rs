//! Names and calls: variables, built-in constants and functions (`Prim`), primitive
//! measures (`Dist`), explicit coercions, constructors (`left`, `just`, `dirac`, ...),
//! transforms, and application of user functions one argument at a time. A name bound
//! by the program always wins over a built-in of the same name.

use std::sync::Arc;

use super::{takes, Elab, Failed, R};
use crate::diag::Span;
use crate::syntax::ast::Expr;
use crate::term::{Dist, Node, Prim, TermId, Transform};
use crate::types::{Coercion, Type};

/// Transforms that Hakaru has and slic-cas does not implement: named in an error.
const NOT_IMPLEMENTED: [&str; 3] = ["expect", "disint_m", "reparam"];

/// Built-in names handled here rather than through `Prim`/`Dist`/`Coercion`, with arity.
pub(super) const CONSTRUCTORS: [(&str, usize); 13] = [
    ("dirac", 1),
    ("weight", 2),
    ("factor", 1),
    ("observe", 2),
    ("left", 1),
    ("right", 1),
    ("just", 1),
    ("simplify", 1),
    ("summarize", 1),
    ("disint", 1),
    ("density", 1),
    ("mh", 2),
    ("mcmc", 2),
];

/// The result type of a one-argument primitive given its (raised) operand type.
type ResultType = fn(Type) -> Type;

/// How a polymorphic one-argument primitive types its operand: the operand is raised to
/// its ring or its field, and the result type follows from the raised type.
fn unary_numeric(p: Prim) -> Option<(bool, ResultType)> {
    fn same(t: Type) -> Type {
        t
    }
    fn to_nonneg(t: Type) -> Type {
        match t {
            Type::Int => Type::Nat,
            _ => Type::Prob,
        }
    }
    fn to_integral(t: Type) -> Type {
        match t {
            Type::Prob => Type::Nat,
            _ => Type::Int,
        }
    }
    // (operand raised to a field?, result type of the raised operand type)
    Some(match p {
        Prim::Neg | Prim::Signum => (false, same),
        Prim::Abs => (false, to_nonneg),
        Prim::Recip | Prim::Erf => (true, same),
        Prim::Floor => (true, to_integral),
        _ => return None,
    })
}

impl Elab<'_> {
    /// A name on its own: a variable, or a built-in constant.
    pub(super) fn name(&mut self, name: &str, expected: Option<&Type>, span: Span) -> R<TermId> {
        if let Some(v) = self.lookup(name) {
            let t = self.store.var_term(v);
            return self.fit(t, expected, span);
        }
        if self.is_ctor(name) {
            return self.ctor_value(name, &[], expected, span);
        }
        let t = match name {
            "true" | "false" => self.store.intern(Node::Bool(name == "true"), Type::Bool),
            "reject" => return match expected {
                Some(want @ Type::Measure(_)) => Ok(self.store.intern(Node::Reject, want.clone())),
                Some(want) => Err(self.err(span, format!("expected {want}, found a measure"))),
                None => Err(self.err(
                    span,
                    "cannot infer the type of 'reject'; annotate it, e.g. 'reject. measure(real)'",
                )),
            },
            "nothing" => return match expected {
                Some(want @ Type::Maybe(_)) => Ok(self.store.intern(Node::Nothing, want.clone())),
                Some(want) => Err(self.err(span, format!("expected {want}, found a maybe"))),
                None => Err(self.err(
                    span,
                    "cannot infer the type of 'nothing'; annotate it, e.g. 'nothing. maybe(real)'",
                )),
            },
            _ => {
                if NOT_IMPLEMENTED.contains(&name) {
                    return Err(self.not_implemented(name, span));
                }
                if let Some(d) = Dist::from_name(name) {
                    return self.dist(d, name, &[], expected, span);
                }
                match Prim::from_name(name) {
                    Some(p) if p.arity() == Some(0) => self.store.prim(p, vec![], Type::Prob),
                    Some(p) => {
                        let n = p.arity().unwrap_or(0);
                        return Err(self.err(span, format!("'{name}' {}, found 0", takes(n))));
                    }
                    None => {
                        if let Some(t) = self.library(name, span) {
                            return self.fit(t?, expected, span);
                        }
                        let arity = CONSTRUCTORS
                            .iter()
                            .find(|(n, _)| *n == name)
                            .map(|&(_, a)| a)
                            .or(Coercion::from_name(name).map(|_| 1));
                        return Err(match arity {
                            Some(n) => self.err(span, format!("'{name}' {}, found 0", takes(n))),
                            None => self.unknown_name(span, name),
                        });
                    }
                }
            }
        };
        self.fit(t, expected, span)
    }

    /// `f(args)`: a built-in if `f` is an unbound built-in name, else an application.
    pub(super) fn call(
        &mut self,
        f: &Expr,
        args: &[Expr],
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        if let crate::syntax::ast::ExprKind::Var(name) = &f.kind {
            if self.is_ctor(name) {
                return self.ctor_value(name, args, expected, span);
            }
            if !self.is_bound(name) {
                return self.builtin_call(name, args, expected, span);
            }
            // `f()` for a `def f():` is its value (a definition without parameters is a
            // named value, not a function of unit).
            if args.is_empty() && self.lookup(name).is_some_and(|v| self.nullary.contains(&v)) {
                let t = self.infer(f)?;
                return self.fit(t, expected, span);
            }
            let ft = self.infer(f)?;
            let t = self.apply(ft, Some(name), args, span)?;
            return self.fit(t, expected, span);
        }
        let ft = self.infer(f)?;
        let t = self.apply(ft, None, args, span)?;
        self.fit(t, expected, span)
    }

    /// A function term applied to arguments one at a time (partial application allowed).
    fn apply(&mut self, f: TermId, name: Option<&str>, args: &[Expr], span: Span) -> R<TermId> {
        let fty = self.ty(f);
        let mut arity = 0;
        let mut t = &fty;
        while let Type::Fun(_, b) = t {
            arity += 1;
            t = b;
        }
        let label = name.map_or("this function".to_string(), |n| format!("'{n}'"));
        if arity == 0 {
            return Err(self.err(
                span,
                format!("{label} is not a function; it has type {fty}"),
            ));
        }
        if args.is_empty() || args.len() > arity {
            return Err(self.err(
                span,
                format!("{label} {}, found {}", takes(arity), args.len()),
            ));
        }
        let who = name.unwrap_or("this function");
        let mut cur = fty;
        let mut checked = Vec::with_capacity(args.len());
        let mut failed = false;
        for arg in args {
            let Type::Fun(a, b) = cur else {
                return Err(self.err(span, "internal error: ran out of parameters"));
            };
            match self.check_arg(arg, &a, who) {
                Ok(x) => checked.push((x, (*b).clone())),
                Err(Failed) => failed = true,
            }
            cur = Arc::unwrap_or_clone(b);
        }
        if failed {
            return Err(Failed);
        }
        let mut t = f;
        for (x, ty) in checked {
            t = self.store.intern(Node::App(t, x), ty);
        }
        Ok(t)
    }

    fn arity_error(&mut self, span: Span, name: &str, want: usize, found: usize) -> Failed {
        self.err(span, format!("'{name}' {}, found {found}", takes(want)))
    }

    /// A call of a built-in name that the program has not rebound.
    fn builtin_call(
        &mut self,
        name: &str,
        args: &[Expr],
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        if NOT_IMPLEMENTED.contains(&name) {
            return Err(self.not_implemented(name, span));
        }
        if let Some(&(_, arity)) = CONSTRUCTORS.iter().find(|(n, _)| *n == name) {
            if args.len() != arity {
                return Err(self.arity_error(span, name, arity, args.len()));
            }
            return self.constructor(name, args, expected, span);
        }
        if let Some(d) = Dist::from_name(name) {
            return self.dist(d, name, args, expected, span);
        }
        if let Some(p) = Prim::from_name(name) {
            let t = self.prim_call(p, name, args, span)?;
            return self.fit(t, expected, span);
        }
        if let Some(c) = Coercion::from_name(name) {
            let [x] = args else {
                return Err(self.arity_error(span, name, 1, args.len()));
            };
            let x = self.check_arg(x, &c.from_type(), name)?;
            let t = self.store.intern(Node::Coerce(c, x), c.to_type());
            return self.fit(t, expected, span);
        }
        if let Some(f) = self.library(name, span) {
            let t = self.apply(f?, Some(name), args, span)?;
            return self.fit(t, expected, span);
        }
        match name {
            "true" | "false" | "reject" | "nothing" => Err(self.err(
                span,
                format!("'{name}' is not a function; write it without arguments"),
            )),
            _ => Err(self.unknown_name(span, name)),
        }
    }

    /// A primitive measure: arguments checked against its parameter types.
    fn dist(
        &mut self,
        d: Dist,
        name: &str,
        args: &[Expr],
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let params = d.param_types();
        if args.len() != params.len() {
            return Err(self.arity_error(span, name, params.len(), args.len()));
        }
        let mut terms = Vec::with_capacity(args.len());
        let mut failed = false;
        for (arg, want) in args.iter().zip(&params) {
            match self.check_arg(arg, want, name) {
                Ok(t) => terms.push(t),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        let t = self
            .store
            .intern(Node::Dist(d, terms), Type::measure(d.support_type()));
        self.fit(t, expected, span)
    }

    /// `dirac`, `weight`, `factor`, `observe`, `left`, `right`, `just`, `simplify`,
    /// `summarize` (arity already checked).
    fn constructor(
        &mut self,
        name: &str,
        args: &[Expr],
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        match (name, args) {
            ("dirac", [x]) => self.dirac(x, expected, span),
            ("weight", [w, m]) => {
                let w = self.check_arg(w, &Type::Prob, name);
                let m = match expected {
                    Some(want @ Type::Measure(_)) => self.check(m, want),
                    _ => self.infer_measure(m).map(|(t, _)| t),
                };
                let (w, m) = (w?, m?);
                let ty = self.ty(m);
                let t = self.store.intern(Node::Weight(w, m), ty);
                self.fit(t, expected, span)
            }
            ("factor", [w]) => {
                let w = self.check_arg(w, &Type::Prob, name)?;
                let unit = self.store.intern(Node::Unit, Type::Unit);
                let ret = self
                    .store
                    .intern(Node::Dirac(unit), Type::measure(Type::Unit));
                let t = self
                    .store
                    .intern(Node::Weight(w, ret), Type::measure(Type::Unit));
                self.fit(t, expected, span)
            }
            ("observe", [m, v]) => {
                let (m, elem) = self.infer_measure(m)?;
                let v = self.check_arg(v, &elem, name)?;
                let t = self.store.intern(Node::Observe(m, v), Type::measure(elem));
                self.fit(t, expected, span)
            }
            ("left" | "right", [x]) => self.injection(name == "left", x, expected, span),
            ("just", [x]) => {
                let (x, ty) = match expected {
                    Some(Type::Maybe(a)) => (self.check(x, a)?, expected.cloned()),
                    _ => (self.infer(x)?, None),
                };
                let ty = ty.unwrap_or_else(|| Type::maybe(self.ty(x)));
                let t = self.store.intern(Node::Just(x), ty);
                self.fit(t, expected, span)
            }
            ("simplify" | "summarize", [x]) => {
                let tr = if name == "simplify" {
                    Transform::Simplify
                } else {
                    Transform::Summarize
                };
                let x = self.elab(x, expected)?;
                let ty = self.ty(x);
                Ok(self.store.intern(Node::Transform(tr, x), ty))
            }
            ("disint" | "density", [m]) => {
                let tr = if name == "disint" {
                    Transform::Disint
                } else {
                    Transform::Density
                };
                let (m, elem) = self.infer_measure(m)?;
                let mty = Type::measure(elem.clone());
                let Some(ty) = tr.result_type(&mty) else {
                    return Err(self.err(
                        span,
                        format!(
                            "'disint' needs a measure of pairs (observation, rest), found {mty}"
                        ),
                    ));
                };
                let t = self.store.intern(Node::Transform(tr, m), ty);
                self.fit(t, expected, span)
            }
            ("mh" | "mcmc", [proposal, target]) => {
                let tr = if name == "mh" {
                    Transform::Mh
                } else {
                    Transform::Mcmc
                };
                let (target, a) = self.infer_measure(target)?;
                let kernel = Type::fun(a.clone(), Type::measure(a.clone()));
                let proposal = self.check(proposal, &kernel)?;
                let pair_ty = Type::pair(kernel, Type::measure(a.clone()));
                let arg = self
                    .store
                    .intern(Node::Pair(proposal, target), pair_ty.clone());
                let Some(ty) = tr.result_type(&pair_ty) else {
                    return Err(self.err(
                        span,
                        format!("'{name}' needs a proposal `fn x: measure` and a target measure"),
                    ));
                };
                let t = self.store.intern(Node::Transform(tr, arg), ty);
                self.fit(t, expected, span)
            }
            _ => Err(self.arity_error(span, name, args.len(), args.len())),
        }
    }

    /// `return e` / `dirac(e)`.
    pub(super) fn dirac(&mut self, x: &Expr, expected: Option<&Type>, span: Span) -> R<TermId> {
        if let Some(want @ Type::Measure(elem)) = expected {
            let x = self.check(x, elem)?;
            return Ok(self.store.intern(Node::Dirac(x), want.clone()));
        }
        let x = self.infer(x)?;
        let ty = Type::measure(self.ty(x));
        let t = self.store.intern(Node::Dirac(x), ty);
        self.fit(t, expected, span)
    }

    /// `left(e)` / `right(e)`: the other side's type must come from the context.
    fn injection(
        &mut self,
        left: bool,
        x: &Expr,
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let name = if left { "left" } else { "right" };
        match expected {
            Some(want @ Type::Either(a, b)) => {
                let side = if left { a } else { b };
                let x = self.check(x, side)?;
                let node = if left { Node::Left(x) } else { Node::Right(x) };
                Ok(self.store.intern(node, want.clone()))
            }
            Some(want) => Err(self.err(span, format!("expected {want}, found an either"))),
            None => {
                let x = self.infer(x)?;
                let ty = self.ty(x);
                let example = if left {
                    Type::either(ty, Type::Real)
                } else {
                    Type::either(Type::Real, ty)
                };
                Err(self.err(
                    span,
                    format!(
                        "cannot infer the type of '{name}(..)'; annotate it, e.g. '{name}(..). {example}'"
                    ),
                ))
            }
        }
    }

    /// A call of a named primitive.
    fn prim_call(&mut self, p: Prim, name: &str, args: &[Expr], span: Span) -> R<TermId> {
        if let Some(n) = p.arity() {
            if args.len() != n {
                return Err(self.arity_error(span, name, n, args.len()));
            }
        }
        // Each kind of primitive has its own function, which keeps this frame (on the
        // recursion path of nested calls) small.
        if let Some((params, result)) = p.fixed_signature() {
            return self.fixed_prim(p, name, args, &params, result);
        }
        if let Some((field, result)) = unary_numeric(p) {
            return self.unary_prim(p, name, args, field, result, span);
        }
        self.other_prim(p, name, args, span)
    }

    /// A primitive with fixed argument types: each argument checked against its type.
    fn fixed_prim(
        &mut self,
        p: Prim,
        name: &str,
        args: &[Expr],
        params: &[Type],
        result: Type,
    ) -> R<TermId> {
        let mut terms = Vec::with_capacity(args.len());
        let mut failed = false;
        for (arg, want) in args.iter().zip(params) {
            match self.check_arg(arg, want, name) {
                Ok(t) => terms.push(t),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        Ok(self.store.prim(p, terms, result))
    }

    /// A one-argument numeric primitive whose operand is raised to its ring or field.
    fn unary_prim(
        &mut self,
        p: Prim,
        name: &str,
        args: &[Expr],
        field: bool,
        result: ResultType,
        span: Span,
    ) -> R<TermId> {
        let [x] = args else {
            return Err(self.arity_error(span, name, 1, args.len()));
        };
        let n = self.num(x, Some(name))?;
        let ty = self.num_type(&n);
        let raised = if field {
            ty.field_above()
        } else {
            ty.ring_above()
        };
        let raised = raised.unwrap_or(Type::Real);
        let x = self.num_to(n, &raised)?;
        Ok(self.store.prim(p, vec![x], result(raised)))
    }

    /// `min`, `max`, `size`, `reduce`.
    fn other_prim(&mut self, p: Prim, name: &str, args: &[Expr], span: Span) -> R<TermId> {
        match (p, args) {
            (Prim::Min | Prim::Max, [a, b]) => {
                let x = self.num(a, Some(name));
                let y = self.num(b, Some(name));
                let (terms, ty) = self.joined(vec![x?, y?])?;
                Ok(self.store.prim(p, terms, ty))
            }
            (Prim::Size, [a]) => {
                let a = self.infer_array(a, name)?.0;
                Ok(self.store.prim(p, vec![a], Type::Nat))
            }
            (Prim::Reduce, [f, z, a]) => {
                let (a, elem) = self.infer_array(a, name)?;
                let z = self.check_arg(z, &elem, name);
                let fty = Type::fun(elem.clone(), Type::fun(elem.clone(), elem.clone()));
                let f = self.check_arg(f, &fty, name);
                let (f, z) = (f?, z?);
                Ok(self.store.prim(p, vec![f, z, a], elem))
            }
            _ => Err(self.err(span, format!("'{name}' cannot be called by name"))),
        }
    }

    /// `a` inferred and required to be an array; returns it and its element type.
    pub(super) fn infer_array(&mut self, a: &Expr, who: &str) -> R<(TermId, Type)> {
        let t = self.infer(a)?;
        match self.ty(t) {
            Type::Array(elem) => Ok((t, Arc::unwrap_or_clone(elem))),
            other => Err(self.err(a.span, format!("'{who}' expects an array, found {other}"))),
        }
    }
}
