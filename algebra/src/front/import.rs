//! Resolving a program's `import NAME` lines: module `NAME` is the file `NAME.hk` in the
//! directory of the file that imports it. Modules are read through a function the
//! caller passes in (the command-line tool passes `std::fs::read`), so this crate still
//! does no IO of its own; paths are only joined, never canonicalised.
//!
//! The modules are ordered so that each comes after the modules it imports (a
//! depth-first walk); a module imported twice (two files import it) is read once; an
//! import that leads back to a file being imported is a cycle, reported at that import
//! with the chain of files. There is no standard-library module to fall back on (the
//! standard library is always in scope without an import), so a file that is not there
//! is an error naming the path looked for. A diagnostic about a module carries that
//! module's path and bytes ([`Origin`]), so it is shown at the module's own line.

use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Origin};
use crate::syntax::ast::{Expr, ExprKind, Ident};
use crate::syntax::{decode, parse_module};

/// Reads a file's bytes (the caller's IO).
pub type Reader<'r> = dyn FnMut(&Path) -> std::io::Result<Vec<u8>> + 'r;

/// A module read and parsed.
pub(super) struct Loaded {
    /// The name it was imported by.
    pub(super) name: String,
    pub(super) origin: Origin,
    pub(super) expr: Expr,
}

/// The walk's state.
struct Resolver<'r, 'f> {
    read: &'r mut Reader<'f>,
    /// Finished modules, each after those it imports.
    done: Vec<(PathBuf, Loaded)>,
    /// The files being imported, outermost first (the program's own file first).
    stack: Vec<PathBuf>,
}

/// The modules `program` (read from `path`) imports, directly or not, in dependency
/// order.
pub(super) fn resolve(
    path: &Path,
    program: &Expr,
    read: &mut Reader<'_>,
) -> Result<Vec<Loaded>, Vec<Diagnostic>> {
    let mut r = Resolver {
        read,
        done: Vec::new(),
        stack: vec![path.to_path_buf()],
    };
    r.imports_of(path, program, None)?;
    Ok(r.done.into_iter().map(|(_, m)| m).collect())
}

/// The leading `import` lines of a file (later ones are the elaborator's to refuse).
fn imports(e: &Expr) -> Vec<&Ident> {
    let mut out = Vec::new();
    let mut cur = e;
    while let ExprKind::Import(x, rest) = &cur.kind {
        out.push(x);
        cur = rest;
    }
    out
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

impl Resolver<'_, '_> {
    /// Resolves the imports of the file at `path` (`origin`: it is a module, not the
    /// program's own file).
    fn imports_of(
        &mut self,
        path: &Path,
        e: &Expr,
        origin: Option<&Origin>,
    ) -> Result<(), Vec<Diagnostic>> {
        let dir = path.parent().unwrap_or(Path::new(""));
        for x in imports(e) {
            let target = dir.join(format!("{}.hk", x.name));
            let here = |d: Diagnostic| match origin {
                Some(o) => vec![d.in_file(o)],
                None => vec![d],
            };
            if let Some(i) = self.stack.iter().position(|p| *p == target) {
                let chain: Vec<String> = self.stack[i..]
                    .iter()
                    .chain(std::iter::once(&target))
                    .map(|p| shown(p))
                    .collect();
                return Err(here(Diagnostic::new(
                    x.span,
                    format!("import cycle: {}", chain.join(" imports ")),
                )));
            }
            if self.done.iter().any(|(p, _)| *p == target) {
                continue;
            }
            let bytes = match (self.read)(&target) {
                Ok(b) => b,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    return Err(here(Diagnostic::new(
                        x.span,
                        format!("no module {}: looked for {}", x.name, shown(&target)),
                    )))
                }
                Err(err) => {
                    return Err(here(Diagnostic::new(
                        x.span,
                        format!("cannot read module {} at {}: {err}", x.name, shown(&target)),
                    )))
                }
            };
            let module_origin = Origin {
                path: shown(&target),
                bytes,
            };
            let parsed = decode(&module_origin.bytes)
                .map_err(|d| vec![d])
                .and_then(parse_module);
            let expr = match parsed {
                Ok(e) => e,
                Err(ds) => return Err(ds.into_iter().map(|d| d.in_file(&module_origin)).collect()),
            };
            self.stack.push(target.clone());
            let r = self.imports_of(&target, &expr, Some(&module_origin));
            self.stack.pop();
            r?;
            self.done.push((
                target,
                Loaded {
                    name: x.name.clone(),
                    origin: module_origin,
                    expr,
                },
            ));
        }
        Ok(())
    }
}
