//! What `slic-cas fmt` prints of a program beyond its term: the `import` lines and the
//! `data` declarations it was written with, and the user's constructors read back out
//! of the sums and products the elaborator encoded them as (`elab::data`).
//!
//! The elaborator erases both: imported definitions become `let`s at the top of the term
//! and data types their encodings. The [`Prelude`] (built by `front` from the elaborator's
//! output) says how many leading `let`s the imports stand for and which data types are in
//! scope, so the printer can print `import NAME` instead of the definitions and
//! `circle(r)` instead of `left(r)`. Only a data type with two or more constructors is
//! read back (its encoding is an `either`, which nothing else of the program can be
//! confused with at that type); a term or pattern that is not a whole constructor
//! application (a `right(x)` of a variable) prints as the encoding, which means the same.
//! Without a prelude (`simplify`, golden files) everything prints as the encoding.

use crate::elab::DataType;
use crate::term::{Node, Pattern, Store, TermId};
use crate::types::Type;

/// The part of a program `fmt` prints before its term.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prelude {
    /// `import NAME` lines, in source order.
    pub imports: Vec<String>,
    /// How many `let`s at the top of the term the imports stand for (not printed).
    pub skip: usize,
    /// The data types in scope: imported ones first, then the file's own.
    pub data: Vec<DataType>,
    /// The first of `data` that the file declares itself (printed as declarations).
    pub own_data: usize,
}

impl Prelude {
    pub fn is_empty(&self) -> bool {
        self.imports.is_empty() && self.skip == 0 && self.data.is_empty()
    }

    /// The data type whose encoding is `ty`, when it is read back by name.
    pub(super) fn named(&self, ty: &Type) -> Option<&DataType> {
        self.data.iter().find(|d| d.ctors.len() >= 2 && d.ty == *ty)
    }

    /// `ty` as written, data types by name.
    pub fn type_text(&self, ty: &Type) -> String {
        if self.data.is_empty() {
            return ty.to_string();
        }
        if let Some(d) = self.named(ty) {
            return d.name.clone();
        }
        match ty {
            Type::Array(t) => format!("array({})", self.type_text(t)),
            Type::Measure(t) => format!("measure({})", self.type_text(t)),
            Type::Maybe(t) => format!("maybe({})", self.type_text(t)),
            Type::Pair(a, b) => format!("pair({}, {})", self.type_text(a), self.type_text(b)),
            Type::Either(a, b) => {
                format!("either({}, {})", self.type_text(a), self.type_text(b))
            }
            Type::Fun(a, b) => {
                let a_text = self.type_text(a);
                if matches!(**a, Type::Fun(..)) {
                    format!("({a_text}) -> {}", self.type_text(b))
                } else {
                    format!("{a_text} -> {}", self.type_text(b))
                }
            }
            _ => ty.to_string(),
        }
    }

    /// The file's own declarations, one `data` block each.
    pub(super) fn declarations(&self) -> Vec<String> {
        let own = self.data.get(self.own_data..).unwrap_or_default();
        own.iter()
            .map(|d| {
                let mut s = format!("data {}():", d.name);
                for c in &d.ctors {
                    s.push_str("\n    ");
                    s.push_str(&c.name);
                    if !c.fields.is_empty() {
                        let fields: Vec<String> =
                            c.fields.iter().map(|f| self.type_text(f)).collect();
                        s.push_str(&format!("({})", fields.join(", ")));
                    }
                }
                s
            })
            .collect()
    }

    /// `t` as a constructor application: the constructor's name and its fields' terms.
    pub(super) fn ctor_term<'d>(
        &'d self,
        store: &Store,
        t: TermId,
    ) -> Option<(&'d str, Vec<TermId>)> {
        let d = self.named(store.ty(t))?;
        let n = d.ctors.len();
        let mut k = 0;
        let mut cur = t;
        let payload = loop {
            if k + 1 == n {
                break cur;
            }
            match store.node(cur) {
                Node::Left(x) => break *x,
                Node::Right(x) => {
                    k += 1;
                    cur = *x;
                }
                _ => return None,
            }
        };
        let c = d.ctors.get(k)?;
        let fields = match c.fields.len() {
            0 => match store.node(payload) {
                Node::Unit => Vec::new(),
                _ => return None,
            },
            m => {
                let mut out = Vec::with_capacity(m);
                let mut cur = payload;
                for _ in 1..m {
                    match store.node(cur) {
                        Node::Pair(a, b) => {
                            out.push(*a);
                            cur = *b;
                        }
                        _ => return None,
                    }
                }
                out.push(cur);
                out
            }
        };
        Some((c.name.as_str(), fields))
    }

    /// A pattern against a value of type `ty` as a constructor pattern: its name and the
    /// fields' patterns.
    pub(super) fn ctor_pattern<'p>(
        &self,
        ty: &Type,
        p: &'p Pattern,
    ) -> Option<(String, Vec<&'p Pattern>)> {
        let d = self.named(ty)?;
        let n = d.ctors.len();
        let mut k = 0;
        let mut cur = p;
        let payload = loop {
            if k + 1 == n {
                break cur;
            }
            match cur {
                Pattern::Left(x) => break &**x,
                Pattern::Right(x) => {
                    k += 1;
                    cur = x;
                }
                _ => return None,
            }
        };
        let c = d.ctors.get(k)?;
        let fields = match c.fields.len() {
            0 => match payload {
                Pattern::Unit => Vec::new(),
                _ => return None,
            },
            m => {
                let mut out = Vec::with_capacity(m);
                let mut cur = payload;
                for _ in 1..m {
                    match cur {
                        Pattern::Pair(a, b) => {
                            out.push(&**a);
                            cur = b;
                        }
                        _ => return None,
                    }
                }
                out.push(cur);
                out
            }
        };
        Some((c.name.clone(), fields))
    }
}
