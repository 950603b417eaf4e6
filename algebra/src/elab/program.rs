//! A whole program: the files it imports, then its own top block. The imported files'
//! definitions (`def f(...)`, `x = e`) and data types are elaborated first, in the order
//! `front` resolved them (each module after the modules it imports), and stay in scope
//! for the importing file; the program's term is its own term under one `let` per
//! imported definition, outermost first. So an import means exactly what writing the
//! definitions at the top of the file would mean, and nothing after the elaborator knows
//! that modules exist. A module's final expression, if it has one (Hakaru's grammar
//! needs it), is ignored, as Hakaru's importer does.
//!
//! Names: a name is defined once in a program: an imported definition cannot be
//! redefined by another module or by a statement of the importing file's top block
//! (both are errors naming the module). Inner blocks may shadow it as any variable.
//! `import` lines must come first in a file; `data` declarations must be in a file's top
//! block, and are in scope in the whole file (and in the files that import it).

use rustc_hash::FxHashMap;

use super::{Elab, Elaborated, Failed, R};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::{Expr, ExprKind};
use crate::term::{Node, TermId, VarId};

/// One imported file, as `front` hands it over.
pub struct Module<'a> {
    /// The name it was imported by (`import NAME`).
    pub name: &'a str,
    /// Its parsed text.
    pub expr: &'a Expr,
}

/// Which file a diagnostic is about: `Some(i)` the `i`th module, `None` the program's own.
pub type Located = (Option<usize>, Diagnostic);

/// Elaborates `main` after `modules` (see the module doc). `imports_resolved`: the
/// front end has read the files `main` imports (otherwise an `import` is an error,
/// since there is no file to look beside).
pub(super) fn elaborate(
    mut cx: Elab<'_>,
    modules: &[Module<'_>],
    main: &Expr,
    imports_resolved: bool,
) -> Result<Elaborated, Vec<Located>> {
    let mut located: Vec<Located> = Vec::new();
    let mut frames: Vec<(VarId, TermId)> = Vec::new();
    // each imported name and the module that defined it
    let mut defined: FxHashMap<String, usize> = FxHashMap::default();
    let mut failed = false;
    for (i, m) in modules.iter().enumerate() {
        cx.file = i + 1;
        let r = cx.module(i, m, modules, &mut frames, &mut defined);
        failed |= r.is_err();
        located.extend(cx.errors.drain(..).map(|d| (Some(i), d)));
    }
    // the definitions of modules are not statements of this file: `fmt` must not anchor
    // this file's comments to them
    cx.statements.clear();
    let imported_data = cx.data.len();
    cx.file = 0;
    let term = if failed {
        Err(Failed)
    } else {
        cx.top_level(main, modules, &defined, imports_resolved)
            .and_then(|()| cx.infer(main))
    };
    located.extend(cx.errors.drain(..).map(|d| (None, d)));
    match term {
        Ok(mut t) if located.is_empty() => {
            for &(v, f) in frames.iter().rev() {
                let ty = cx.ty(t);
                t = cx.store.intern(Node::Let(v, f, t), ty);
            }
            Ok(Elaborated {
                term: t,
                spans: cx.spans,
                statements: cx.statements,
                imported: frames.len(),
                data: cx.data,
                imported_data,
            })
        }
        _ => {
            if located.is_empty() {
                located.push((
                    None,
                    Diagnostic::new(
                        main.span,
                        "internal error: type checking failed without a message",
                    ),
                ));
            }
            Err(located)
        }
    }
}

impl Elab<'_> {
    /// The statements of module `i`, left in scope; its definitions pushed on `frames`.
    fn module(
        &mut self,
        i: usize,
        m: &Module<'_>,
        modules: &[Module<'_>],
        frames: &mut Vec<(VarId, TermId)>,
        defined: &mut FxHashMap<String, usize>,
    ) -> R<()> {
        // spans of an imported file point into that file, not into the program's
        let spans = self.spans.take();
        let r = self.module_items(i, m, modules, frames, defined);
        self.spans = spans;
        r
    }

    fn module_items(
        &mut self,
        i: usize,
        m: &Module<'_>,
        modules: &[Module<'_>],
        frames: &mut Vec<(VarId, TermId)>,
        defined: &mut FxHashMap<String, usize>,
    ) -> R<()> {
        let mut cur = m.expr;
        let mut first = true;
        loop {
            let (name, t, rest) = match &cur.kind {
                // `front` resolved the leading imports; a later one it did not read
                ExprKind::Import(x, _) if !first => {
                    return Err(self.err(
                        x.span,
                        "'import' must come before the other statements of the file",
                    ))
                }
                ExprKind::Import(_, rest) => {
                    cur = rest;
                    continue;
                }
                ExprKind::Data(d, rest) => {
                    first = false;
                    self.declare(d)?;
                    cur = rest;
                    continue;
                }
                ExprKind::Def {
                    name,
                    params,
                    ret,
                    body,
                    rest,
                } => (name, self.def(params, ret.as_ref(), body)?, rest),
                ExprKind::Let(name, rhs, rest) => (name, self.infer(rhs)?, rest),
                ExprKind::Bind(x, ..) | ExprKind::Lam(x, ..) => {
                    return Err(self.err(
                        x.span,
                        format!(
                            "module '{}' may hold only 'import', 'data', 'def' and 'x = e' \
                             statements before its final expression",
                            m.name
                        ),
                    ))
                }
                _ => return Ok(()),
            };
            if let Some(&j) = defined.get(&name.name) {
                let other = modules.get(j).map_or("", |m| m.name);
                return Err(self.err(
                    name.span,
                    format!(
                        "'{}' is defined both by module '{other}' and by module '{}'",
                        name.name, m.name
                    ),
                ));
            }
            first = false;
            defined.insert(name.name.clone(), i);
            let v = self.bind(&name.name, self.ty(t));
            if let ExprKind::Def { params, .. } = &cur.kind {
                if params.is_empty() {
                    self.nullary.insert(v);
                }
            }
            frames.push((v, t));
            cur = rest;
        }
    }

    /// The program's own top block, before it is elaborated: its `import` lines (first,
    /// and resolved) and `data` declarations (declared now, for the whole file) are
    /// marked handled; a top-level name an import defines is refused.
    fn top_level(
        &mut self,
        main: &Expr,
        modules: &[Module<'_>],
        defined: &FxHashMap<String, usize>,
        imports_resolved: bool,
    ) -> R<()> {
        let mut failed = false;
        let mut first = true;
        let mut cur = main;
        loop {
            let (binder, rest) = match &cur.kind {
                ExprKind::Import(x, rest) => {
                    if !first {
                        self.err(
                            cur.span,
                            "'import' must come before the other statements of the file",
                        );
                        failed = true;
                    } else if !imports_resolved {
                        self.err(
                            x.span,
                            format!(
                                "cannot import '{}': imports are looked up beside the \
                                 program's file, and this program was not read from a file",
                                x.name
                            ),
                        );
                        failed = true;
                    }
                    self.handled.insert((0, cur.span.start));
                    cur = rest;
                    continue;
                }
                ExprKind::Data(d, rest) => {
                    first = false;
                    failed |= self.declare(d).is_err();
                    self.handled.insert((0, cur.span.start));
                    cur = rest;
                    continue;
                }
                ExprKind::Def { name, rest, .. } => (name, rest.as_ref()),
                ExprKind::Let(x, _, rest)
                | ExprKind::Bind(x, _, rest)
                | ExprKind::Lam(x, _, rest) => (x, rest.as_ref()),
                _ => break,
            };
            first = false;
            if let Some(&j) = defined.get(&binder.name) {
                let m = modules.get(j).map_or("", |m| m.name);
                self.err(
                    binder.span,
                    format!(
                        "'{}' is already defined by 'import {m}'; a file may not redefine an \
                         imported name",
                        binder.name
                    ),
                );
                failed = true;
            }
            cur = rest;
        }
        if failed {
            Err(Failed)
        } else {
            Ok(())
        }
    }

    /// An `import` or `data` statement met while elaborating a block: skipped when the
    /// top level took care of it, otherwise misplaced.
    pub(super) fn declaration(&mut self, e: &Expr) -> R<()> {
        if self.handled.contains(&(self.file, e.span.start)) {
            return Ok(());
        }
        let span = match &e.kind {
            ExprKind::Data(d, _) => d.span,
            _ => Span::new(
                e.span.start as usize,
                e.span.start as usize + "import".len(),
            ),
        };
        Err(self.err(
            span,
            match &e.kind {
                ExprKind::Data(..) => "'data' declarations must be in the top block of a file",
                _ => "'import' must come before the other statements of the file",
            },
        ))
    }
}
