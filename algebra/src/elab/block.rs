//! Statement sequences and branching: blocks of `x = e`, `x <~ m`, `def` and nested `fn`
//! (walked iteratively, built bottom-up), `if`, `match` and its patterns, `<|>`, and the
//! shared rule that gives several branches one type. Must not recurse once per statement.

use std::sync::Arc;

use super::{needs_expected, Elab, Failed, R};
use crate::diag::Span;
use crate::syntax::ast::{ChainOp, Expr, ExprKind, Ident, Pat, PatKind, TypeExpr};
use crate::term::{Node, Pattern, TermId, VarId};
use crate::types::Type;

/// A statement of a block, elaborated, waiting for the term of its body.
enum Frame {
    Let(VarId, TermId),
    Bind(VarId, TermId),
    Lam(VarId),
}

impl Elab<'_> {
    /// A block: statements and nested `fn`s down to a final expression.
    pub(super) fn block(&mut self, e: &Expr, expected: Option<&Type>) -> R<TermId> {
        let mark = self.mark();
        let r = self.block_in_scope(e, expected);
        self.pop_to(mark);
        r
    }

    fn block_in_scope(&mut self, e: &Expr, expected: Option<&Type>) -> R<TermId> {
        let mut frames = Vec::new();
        let mut expected = expected.cloned();
        // Set after `x <~ m`: the rest of the block must be a measure.
        let mut needs_measure = false;
        let mut cur = e;
        let last = loop {
            match &cur.kind {
                ExprKind::Let(x, rhs, body) => {
                    let t = self.infer(rhs)?;
                    let v = self.bind(&x.name, self.ty(t));
                    self.statements.push((x.span, v));
                    frames.push(Frame::Let(v, t));
                    cur = body;
                }
                ExprKind::Bind(x, m, body) => {
                    if let Some(want) = &expected {
                        if want.measure_of().is_none() {
                            return Err(
                                self.err(cur.span, format!("expected {want}, found a measure"))
                            );
                        }
                    }
                    let (t, elem) = self.infer_measure(m)?;
                    let v = self.bind(&x.name, elem);
                    self.statements.push((x.span, v));
                    frames.push(Frame::Bind(v, t));
                    needs_measure = true;
                    cur = body;
                }
                ExprKind::Def {
                    name,
                    params,
                    ret,
                    body,
                    rest,
                } => {
                    let f = self.def(params, ret.as_ref(), body)?;
                    let v = self.bind(&name.name, self.ty(f));
                    if params.is_empty() {
                        self.nullary.insert(v);
                    }
                    self.statements.push((name.span, v));
                    frames.push(Frame::Let(v, f));
                    cur = rest;
                }
                ExprKind::Import(_, rest) | ExprKind::Data(_, rest) => {
                    self.declaration(cur)?;
                    cur = rest;
                }
                ExprKind::Lam(x, t, body) => {
                    if needs_measure {
                        return Err(self.err(cur.span, "expected a measure, found a function"));
                    }
                    let param = self.resolve_type(t)?;
                    expected = match expected {
                        None => None,
                        Some(Type::Fun(a, b)) if *a == param => Some(Arc::unwrap_or_clone(b)),
                        Some(want) => {
                            return Err(self.err(
                                cur.span,
                                format!("expected {want}, found a function of {param}"),
                            ))
                        }
                    };
                    let v = self.bind(&x.name, param);
                    self.statements.push((x.span, v));
                    frames.push(Frame::Lam(v));
                    cur = body;
                }
                _ => break self.elab(cur, expected.as_ref())?,
            }
        };
        if needs_measure {
            let ty = self.ty(last);
            if ty.measure_of().is_none() {
                return Err(self.err(cur.span, format!("expected a measure, found {ty}")));
            }
        }
        let mut t = last;
        for frame in frames.into_iter().rev() {
            let body_ty = self.ty(t);
            t = match frame {
                Frame::Let(v, rhs) => self.store.intern(Node::Let(v, rhs, t), body_ty),
                Frame::Bind(v, m) => self.store.intern(Node::Bind(v, m, t), body_ty),
                Frame::Lam(v) => {
                    let param = self.store.var_type(v).clone();
                    self.store
                        .intern(Node::Lam(v, t), Type::fun(param, body_ty))
                }
            };
        }
        Ok(t)
    }

    /// `def f(x T, y U) R: body` as the curried lambda `fn x T: fn y U: body`.
    pub(super) fn def(
        &mut self,
        params: &[(Ident, TypeExpr)],
        ret: Option<&TypeExpr>,
        body: &Expr,
    ) -> R<TermId> {
        let mark = self.mark();
        let r = self.def_in_scope(params, ret, body);
        self.pop_to(mark);
        r
    }

    fn def_in_scope(
        &mut self,
        params: &[(Ident, TypeExpr)],
        ret: Option<&TypeExpr>,
        body: &Expr,
    ) -> R<TermId> {
        let mut vars = Vec::with_capacity(params.len());
        let mut failed = false;
        for (i, (x, t)) in params.iter().enumerate() {
            // A repeated name would make the earlier argument unreachable: surely a slip.
            if params[..i].iter().any(|(y, _)| y.name == x.name) {
                self.err(x.span, format!("parameter '{}' is declared twice", x.name));
                failed = true;
            }
            match self.resolve_type(t) {
                Ok(ty) => vars.push(self.bind(&x.name, ty)),
                Err(Failed) => failed = true,
            }
        }
        let ret = match ret {
            Some(r) => Some(self.resolve_type(r)?),
            None => None,
        };
        if failed {
            return Err(Failed);
        }
        let mut t = self.elab(body, ret.as_ref())?;
        for v in vars.into_iter().rev() {
            let ty = Type::fun(self.store.var_type(v).clone(), self.ty(t));
            t = self.store.intern(Node::Lam(v, t), ty);
        }
        Ok(t)
    }

    /// `m` inferred and required to be a measure; returns it and its element type.
    pub(super) fn infer_measure(&mut self, m: &Expr) -> R<(TermId, Type)> {
        let t = self.infer(m)?;
        match self.ty(t) {
            Type::Measure(elem) => Ok((t, Arc::unwrap_or_clone(elem))),
            other => Err(self.err(m.span, format!("expected a measure, found {other}"))),
        }
    }

    /// `if c: a else: b`.
    pub(super) fn if_expr(
        &mut self,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        expected: Option<&Type>,
    ) -> R<TermId> {
        let cond = self.check(c, &Type::Bool);
        let (branches, ty) = match expected {
            Some(want) => {
                let x = self.check(a, want);
                let y = self.check(b, want);
                (vec![x?, y?], want.clone())
            }
            None => self.unify(&[a, b])?,
        };
        let cond = cond?;
        let [x, y] = branches[..] else {
            return Err(self.err(a.span.join(b.span), "internal error: lost a branch"));
        };
        Ok(self.store.intern(Node::If(cond, x, y), ty))
    }

    /// Several expressions given one type, in infer mode: each is inferred (literals get
    /// their natural types); numeric types are joined, others must be equal; all are then
    /// fitted to that type. Expressions that need an expected type (`reject`, `[]`, ...)
    /// are checked against it afterwards.
    pub(super) fn unify(&mut self, items: &[&Expr]) -> R<(Vec<TermId>, Type)> {
        let mut done: Vec<Option<TermId>> = Vec::with_capacity(items.len());
        let mut failed = false;
        for e in items {
            if needs_expected(self, e) {
                done.push(None);
                continue;
            }
            match self.infer(e) {
                Ok(t) => done.push(Some(t)),
                Err(Failed) => {
                    failed = true;
                    done.push(None);
                }
            }
        }
        if failed {
            return Err(Failed);
        }
        let known: Vec<Type> = done.iter().flatten().map(|&t| self.ty(t)).collect();
        let Some(first) = known.first() else {
            // Nothing to infer from: inferring the first reports what it needs.
            let Some(e) = items.first() else {
                return Err(Failed);
            };
            self.infer(e)?;
            return Err(Failed);
        };
        let target = branch_type(first, &known);
        let mut out = Vec::with_capacity(items.len());
        for (e, t) in items.iter().zip(done) {
            let r = match t {
                Some(t) if self.fits_by_coercion(t, &target) => self.coerce(t, &target, e.span),
                // e.g. `return 0` inferred as measure(nat) beside a measure(real) branch:
                // elaborate it again against the joined type
                _ => self.check(e, &target),
            };
            match r {
                Ok(t) => out.push(t),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        Ok((out, target))
    }

    /// `m1 <|> m2 <|> ...`: one `Superpose` of measures of one type.
    pub(super) fn superpose(
        &mut self,
        first: &Expr,
        rest: &[(ChainOp, Expr)],
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let items: Vec<&Expr> = std::iter::once(first)
            .chain(rest.iter().map(|(_, x)| x))
            .collect();
        let (terms, ty) = match expected {
            Some(want) if want.measure_of().is_some() => {
                let mut terms = Vec::with_capacity(items.len());
                let mut failed = false;
                for e in &items {
                    match self.check(e, want) {
                        Ok(t) => terms.push(t),
                        Err(Failed) => failed = true,
                    }
                }
                if failed {
                    return Err(Failed);
                }
                (terms, want.clone())
            }
            _ => self.unify(&items)?,
        };
        if ty.measure_of().is_none() {
            return Err(self.err(first.span, format!("expected a measure, found {ty}")));
        }
        let t = self.store.intern(Node::Superpose(terms), ty);
        self.fit(t, expected, span)
    }

    /// `match e:` with `pattern: body` branches.
    pub(super) fn match_expr(
        &mut self,
        e: &Expr,
        scrutinee: &Expr,
        arms: &[(Pat, Expr)],
        expected: Option<&Type>,
    ) -> R<TermId> {
        let s = self.infer(scrutinee)?;
        let sty = self.ty(s);
        if arms.is_empty() {
            return Err(self.err(e.span, "'match' needs at least one branch"));
        }
        // First pass: patterns, and bodies that can be elaborated now.
        let mut pats = Vec::with_capacity(arms.len());
        let mut bodies: Vec<Option<TermId>> = Vec::with_capacity(arms.len());
        let mut failed = false;
        for (p, body) in arms {
            let mark = self.mark();
            let mut binds = Vec::new();
            let r = match self.pattern(p, &sty, &mut binds) {
                Ok(pat) => {
                    pats.push((pat, binds));
                    if expected.is_none() && needs_expected(self, body) {
                        Ok(None)
                    } else {
                        self.elab(body, expected).map(Some)
                    }
                }
                Err(Failed) => Err(Failed),
            };
            self.pop_to(mark);
            match r {
                Ok(t) => bodies.push(t),
                Err(Failed) => {
                    failed = true;
                    bodies.push(None);
                }
            }
        }
        if failed {
            return Err(Failed);
        }
        let ty = match expected {
            Some(want) => want.clone(),
            None => self.match_type(arms, &pats, &mut bodies)?,
        };
        let mut out = Vec::with_capacity(arms.len());
        for ((pat, _), body) in pats.into_iter().zip(bodies) {
            let Some(body) = body else {
                return Err(self.err(e.span, "internal error: lost a branch"));
            };
            out.push((pat, body));
        }
        Ok(self.store.intern(Node::Match(s, out), ty))
    }

    /// The type of a `match` in infer mode: like `unify`, with each deferred body checked
    /// in its pattern's scope. Fills in `bodies`.
    fn match_type(
        &mut self,
        arms: &[(Pat, Expr)],
        pats: &[(Pattern, Vec<(String, VarId)>)],
        bodies: &mut [Option<TermId>],
    ) -> R<Type> {
        let known: Vec<Type> = bodies.iter().flatten().map(|&t| self.ty(t)).collect();
        let Some(first) = known.first() else {
            // Every body needs an expected type: inferring the first reports it.
            if let (Some((_, body)), Some((_, binds))) = (arms.first(), pats.first()) {
                let mark = self.mark();
                self.rebind(binds);
                let r = self.infer(body);
                self.pop_to(mark);
                r?;
            }
            return Err(Failed);
        };
        let target = branch_type(first, &known);
        let mut failed = false;
        for (((_, body), (_, binds)), slot) in arms.iter().zip(pats).zip(bodies.iter_mut()) {
            let r = match *slot {
                Some(t) if self.fits_by_coercion(t, &target) => self.coerce(t, &target, body.span),
                _ => {
                    let mark = self.mark();
                    self.rebind(binds);
                    let r = self.check(body, &target);
                    self.pop_to(mark);
                    r
                }
            };
            match r {
                Ok(t) => *slot = Some(t),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        Ok(target)
    }

    /// Can `t` be fitted to `target` without elaborating it again (same type, or a numeric
    /// coercion)?
    fn fits_by_coercion(&self, t: TermId, target: &Type) -> bool {
        let ty = self.ty(t);
        ty == *target || (ty.is_numeric() && target.is_numeric())
    }

    /// Puts a pattern's variables back in scope.
    fn rebind(&mut self, binds: &[(String, VarId)]) {
        for (name, v) in binds {
            self.scopes.map.entry(name.clone()).or_default().push(*v);
            self.scopes.log.push(name.clone());
        }
    }

    /// A pattern checked against the scrutinee type; its variables are bound in scope
    /// and recorded in `binds`.
    pub(super) fn pattern(
        &mut self,
        p: &Pat,
        ty: &Type,
        binds: &mut Vec<(String, VarId)>,
    ) -> R<Pattern> {
        self.nested(p.span, |cx| cx.pattern_node(p, ty, binds))
    }

    fn pattern_node(&mut self, p: &Pat, ty: &Type, binds: &mut Vec<(String, VarId)>) -> R<Pattern> {
        Ok(match (&p.kind, ty) {
            (PatKind::Wild, _) => Pattern::Wild,
            (PatKind::Ctor(c, pats), _) => self.ctor_pattern(c, pats, ty, binds)?,
            // a bare name that is a constructor without fields (`point:`)
            (PatKind::Var(name), _) if self.ctor_declared(name) => {
                let c = crate::syntax::ast::Ident {
                    name: name.clone(),
                    span: p.span,
                };
                self.ctor_pattern(&c, &[], ty, binds)?
            }
            (PatKind::Var(name), _) => {
                if binds.iter().any(|(n, _)| n == name) {
                    return Err(self.err(p.span, format!("'{name}' is bound twice in one pattern")));
                }
                let v = self.bind(name, ty.clone());
                binds.push((name.clone(), v));
                Pattern::Var(v)
            }
            (PatKind::Unit, Type::Unit) => Pattern::Unit,
            (PatKind::Bool(b), Type::Bool) => Pattern::Bool(*b),
            (PatKind::Pair(a, b), Type::Pair(ta, tb)) => {
                let a = self.pattern(a, ta, binds)?;
                let b = self.pattern(b, tb, binds)?;
                Pattern::Pair(Box::new(a), Box::new(b))
            }
            (PatKind::Left(x), Type::Either(a, _)) => {
                Pattern::Left(Box::new(self.pattern(x, a, binds)?))
            }
            (PatKind::Right(x), Type::Either(_, b)) => {
                Pattern::Right(Box::new(self.pattern(x, b, binds)?))
            }
            (PatKind::Just(x), Type::Maybe(a)) => {
                Pattern::Just(Box::new(self.pattern(x, a, binds)?))
            }
            (PatKind::Nothing, Type::Maybe(_)) => Pattern::Nothing,
            _ => {
                let mut text = String::new();
                show_pattern(p, &mut text, 0);
                return Err(self.err(p.span, format!("pattern '{text}' does not match type {ty}")));
            }
        })
    }
}

/// The one type of several branches: their join (numeric types join in the coercion
/// lattice, also under `measure(..)`, `array(..)`, pairs...); when there is none, the
/// first branch's type, so the mismatch is reported against it.
fn branch_type(first: &Type, all: &[Type]) -> Type {
    all.iter()
        .try_fold(first.clone(), |j, t| j.join(t))
        .unwrap_or_else(|| first.clone())
}

/// A pattern as the user wrote it, for messages; subpatterns nested deeper than a few
/// levels are shown as `..` (the pattern itself may nest arbitrarily deep).
fn show_pattern(p: &Pat, out: &mut String, depth: usize) {
    if depth > 8 {
        out.push_str("..");
        return;
    }
    match &p.kind {
        PatKind::Wild => out.push('_'),
        PatKind::Var(name) => out.push_str(name),
        PatKind::Unit => out.push_str("()"),
        PatKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        PatKind::Nothing => out.push_str("nothing"),
        PatKind::Pair(a, b) => {
            out.push('(');
            show_pattern(a, out, depth + 1);
            out.push_str(", ");
            show_pattern(b, out, depth + 1);
            out.push(')');
        }
        PatKind::Ctor(c, ps) => {
            out.push_str(&c.name);
            out.push('(');
            for (i, x) in ps.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                show_pattern(x, out, depth + 1);
            }
            out.push(')');
        }
        PatKind::Left(x) | PatKind::Right(x) | PatKind::Just(x) => {
            out.push_str(match &p.kind {
                PatKind::Left(_) => "left(",
                PatKind::Right(_) => "right(",
                _ => "just(",
            });
            show_pattern(x, out, depth + 1);
            out.push(')');
        }
    }
}
