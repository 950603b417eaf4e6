//! User data types (`data shape(): circle(real) rect(real, real) point`) in the
//! elaborator: declarations checked and put in scope, constructors as values and as
//! patterns, all elaborated into the core's own sums and products, so that no later stage
//! (simplifier, reference semantics, code generation) knows user types exist.
//!
//! The encoding, which [`encode`] and the printer's reading back (`print::data`) share:
//! a constructor's fields are a product (none: `unit`; one: its type; more:
//! `pair(T1, pair(T2, ...))`, as `(a, b, c)` is `(a, (b, c))`), and the constructors a sum
//! (one: its product; more: `either(P1, either(P2, ... Pn))`, constructor `k` being
//! `k` times `right` then `left`, the last one `right`s alone). Types are therefore
//! structural: two declarations with the same field types in the same order are one
//! type, and a constructor fits any value of its encoding. Declarations are not
//! recursive and have no type parameters (both are refused with a message).

use super::{Elab, Failed, R};
use crate::diag::Span;
use crate::syntax::ast::{DataDecl, Expr, Ident, Pat, TypeExpr, TypeExprKind};
use crate::term::{Node, Pattern, TermId, VarId};
use crate::types::Type;

/// A declared data type: its name, constructors, and the core type it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataType {
    pub name: String,
    pub ctors: Vec<Ctor>,
    pub ty: Type,
}

/// A constructor: its name and the types of its fields, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ctor {
    pub name: String,
    pub fields: Vec<Type>,
}

/// The names `match` and the built-in constructors already use.
const BUILTIN_CTORS: &[&str] = &["left", "right", "just", "nothing", "true", "false"];
const BUILTIN_TYPES: &[&str] = &[
    "nat", "int", "prob", "real", "unit", "bool", "array", "measure", "maybe", "pair", "either",
];

/// The core type of a constructor's fields.
pub fn product(fields: &[Type]) -> Type {
    match fields.split_last() {
        None => Type::Unit,
        Some((last, init)) => init
            .iter()
            .rev()
            .fold(last.clone(), |acc, t| Type::pair(t.clone(), acc)),
    }
}

/// The core type of a data type with these constructors.
pub fn encode(ctors: &[Ctor]) -> Type {
    let products: Vec<Type> = ctors.iter().map(|c| product(&c.fields)).collect();
    match products.split_last() {
        None => Type::Unit,
        Some((last, init)) => init
            .iter()
            .rev()
            .fold(last.clone(), |acc, t| Type::either(t.clone(), acc)),
    }
}

impl Elab<'_> {
    /// The data type named `name`, if one is declared.
    pub(super) fn data_type(&self, name: &str) -> Option<&DataType> {
        self.data.iter().find(|d| d.name == name)
    }

    /// `(type index, constructor index)` of the constructor `name`.
    fn ctor(&self, name: &str) -> Option<(usize, usize)> {
        self.data
            .iter()
            .enumerate()
            .find_map(|(i, d)| d.ctors.iter().position(|c| c.name == name).map(|k| (i, k)))
    }

    /// Is `name` a declared constructor (in a pattern, where it cannot be hidden)?
    pub(super) fn ctor_declared(&self, name: &str) -> bool {
        self.ctor(name).is_some()
    }

    /// Is `name` a declared constructor that no variable in scope hides?
    pub(super) fn is_ctor(&self, name: &str) -> bool {
        !self.is_bound(name) && self.ctor(name).is_some()
    }

    /// Checks a declaration and puts its type and constructors in scope.
    pub(super) fn declare(&mut self, decl: &DataDecl) -> R<()> {
        let name = &decl.name;
        if let Some(p) = decl.params.first() {
            return Err(self.err(
                p.span,
                format!(
                    "type parameters of 'data' are not supported: declare '{}' without '{}'",
                    name.name, p.name
                ),
            ));
        }
        if BUILTIN_TYPES.contains(&name.name.as_str()) {
            return Err(self.err(
                name.span,
                format!("'{}' is a built-in type and cannot be declared", name.name),
            ));
        }
        if self.data_type(&name.name).is_some() {
            return Err(self.err(name.span, format!("type '{}' is declared twice", name.name)));
        }
        let mut ctors: Vec<Ctor> = Vec::with_capacity(decl.ctors.len());
        let mut failed = false;
        for c in &decl.ctors {
            if let Err(Failed) = self.ctor_name_free(&c.name, &ctors) {
                failed = true;
                continue;
            }
            let mut fields = Vec::with_capacity(c.fields.len());
            for f in &c.fields {
                if mentions(f, &name.name) {
                    self.err(
                        f.span,
                        format!(
                            "data types cannot be recursive: '{}' mentions itself",
                            name.name
                        ),
                    );
                    failed = true;
                    continue;
                }
                match self.resolve_type(f) {
                    Ok(t) => fields.push(t),
                    Err(Failed) => failed = true,
                }
            }
            ctors.push(Ctor {
                name: c.name.name.clone(),
                fields,
            });
        }
        if failed {
            return Err(Failed);
        }
        let ty = encode(&ctors);
        self.data.push(DataType {
            name: name.name.clone(),
            ctors,
            ty,
        });
        Ok(())
    }

    /// A constructor name must be new: not built in, not declared before.
    fn ctor_name_free(&mut self, c: &Ident, this: &[Ctor]) -> R<()> {
        let n = c.name.as_str();
        if BUILTIN_CTORS.contains(&n) {
            return Err(self.err(
                c.span,
                format!("'{n}' is a built-in constructor and cannot be declared"),
            ));
        }
        if this.iter().any(|k| k.name == n) {
            return Err(self.err(c.span, format!("constructor '{n}' is declared twice")));
        }
        if let Some((i, _)) = self.ctor(n) {
            let other = self.data.get(i).map_or("", |d| d.name.as_str()).to_string();
            return Err(self.err(
                c.span,
                format!("constructor '{n}' is declared twice (also in type '{other}')"),
            ));
        }
        Ok(())
    }

    /// `c(e1, ..., en)` (or a bare `c`, with `args` empty) as a value of its type.
    pub(super) fn ctor_value(
        &mut self,
        name: &str,
        args: &[Expr],
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let Some((i, k)) = self.ctor(name) else {
            return Err(self.err(span, format!("unknown constructor '{name}'")));
        };
        let Some(data) = self.data.get(i).cloned() else {
            return Err(self.err(span, "internal error: lost a data type"));
        };
        let Some(ctor) = data.ctors.get(k) else {
            return Err(self.err(span, "internal error: lost a constructor"));
        };
        if args.len() != ctor.fields.len() {
            return Err(self.err(
                span,
                format!(
                    "constructor '{name}' of '{}' {}, found {}",
                    data.name,
                    fields(ctor.fields.len()),
                    args.len()
                ),
            ));
        }
        let mut parts = Vec::with_capacity(args.len());
        for (a, t) in args.iter().zip(&ctor.fields) {
            parts.push(self.check_arg(a, t, name)?);
        }
        let mut t = match parts.pop() {
            None => self.store.intern(Node::Unit, Type::Unit),
            Some(last) => {
                let mut acc = last;
                while let Some(x) = parts.pop() {
                    let ty = Type::pair(self.ty(x), self.ty(acc));
                    acc = self.store.intern(Node::Pair(x, acc), ty);
                }
                acc
            }
        };
        // the injections, innermost first: `left` unless last, then `right` per earlier
        // constructor, each typed by the sum of the constructors from it on
        let n = data.ctors.len();
        let from = |j: usize| encode(data.ctors.get(j..).unwrap_or_default());
        if k + 1 < n {
            t = self.store.intern(Node::Left(t), from(k));
        }
        for j in (0..k).rev() {
            t = self.store.intern(Node::Right(t), from(j));
        }
        self.fit(t, expected, span)
    }

    /// The pattern `c(p1, ..., pn)` against a value of type `ty`.
    pub(super) fn ctor_pattern(
        &mut self,
        c: &Ident,
        pats: &[Pat],
        ty: &Type,
        binds: &mut Vec<(String, VarId)>,
    ) -> R<Pattern> {
        let name = c.name.as_str();
        let Some((i, k)) = self.ctor(name) else {
            let what = if self.data.is_empty() {
                "no data type is declared".to_string()
            } else {
                let all: Vec<String> = self
                    .data
                    .iter()
                    .flat_map(|d| d.ctors.iter().map(|c| format!("'{}'", c.name)))
                    .collect();
                format!("the constructors are {}", all.join(", "))
            };
            return Err(self.err(
                c.span,
                format!("unknown constructor '{name}' in pattern ({what})"),
            ));
        };
        let Some(data) = self.data.get(i).cloned() else {
            return Err(self.err(c.span, "internal error: lost a data type"));
        };
        let Some(ctor) = data.ctors.get(k) else {
            return Err(self.err(c.span, "internal error: lost a constructor"));
        };
        if data.ty != *ty {
            let shown = self.type_text(ty);
            return Err(self.err(
                c.span,
                format!(
                    "constructor '{name}' of type '{}' cannot match a value of type {shown}",
                    data.name
                ),
            ));
        }
        if pats.len() != ctor.fields.len() {
            return Err(self.err(
                c.span,
                format!(
                    "constructor '{name}' of '{}' {}, the pattern has {}",
                    data.name,
                    fields(ctor.fields.len()),
                    pats.len()
                ),
            ));
        }
        let mut parts = Vec::with_capacity(pats.len());
        for (p, t) in pats.iter().zip(&ctor.fields) {
            parts.push(self.pattern(p, t, binds)?);
        }
        let mut pat = match parts.pop() {
            None => Pattern::Unit,
            Some(last) => {
                let mut acc = last;
                while let Some(x) = parts.pop() {
                    acc = Pattern::Pair(Box::new(x), Box::new(acc));
                }
                acc
            }
        };
        let n = data.ctors.len();
        if k + 1 < n {
            pat = Pattern::Left(Box::new(pat));
        }
        for _ in 0..k {
            pat = Pattern::Right(Box::new(pat));
        }
        Ok(pat)
    }

    /// A type as the user would write it: the name of a data type where it is one.
    pub(super) fn type_text(&self, ty: &Type) -> String {
        match self.data.iter().find(|d| d.ty == *ty) {
            Some(d) => d.name.clone(),
            None => ty.to_string(),
        }
    }
}

/// `takes no fields` / `takes 1 field` / `takes n fields`.
fn fields(n: usize) -> String {
    match n {
        0 => "takes no fields".to_string(),
        1 => "takes 1 field".to_string(),
        n => format!("takes {n} fields"),
    }
}

/// Does the type expression name `name` anywhere?
fn mentions(t: &TypeExpr, name: &str) -> bool {
    match &t.kind {
        TypeExprKind::Name(n) => n == name,
        TypeExprKind::App(n, args) => n == name || args.iter().any(|a| mentions(a, name)),
        TypeExprKind::Fun(a, b) => mentions(a, name) || mentions(b, name),
    }
}
