//! The front end as one call: `.hk` text (or bytes) to a typed core term. This is what
//! the command-line tool and the tests use; it only chains `syntax::decode`,
//! `syntax::parse` and `elab::elaborate` and adds no behaviour of its own, except that
//! [`load_with_comments`] also attaches the program's comments to its statements
//! (`comments`), for `fmt` to print them back, and [`load_file`] resolves the program's
//! `import` lines (`import`) through a reader the caller passes in. A program given as
//! text alone has no directory to import from: an `import` in it is an error.

mod comments;
mod import;

pub use import::Reader;

use std::path::Path;

use crate::diag::{Diagnostic, SpanMap};
use crate::print::{Comments, Prelude};
use crate::syntax::ast::{Expr, ExprKind};
use crate::term::{Store, TermId};
use crate::{elab, syntax};

/// A program read from a file, with what the commands need besides its term.
pub struct FileProgram {
    pub term: TermId,
    /// Where each term of the program's own file was written.
    pub spans: SpanMap,
    /// Its comments, imports and data declarations, for `fmt` to print them back.
    pub comments: Comments,
}

/// Parses and type-checks the program in `bytes`, read from `path`, with the modules it
/// imports (`NAME.hk` beside the importing file, read by `read`). A diagnostic about an
/// imported file names it in its `origin`.
///
/// ```
/// use slic_algebra::{front, Store};
/// use std::path::Path;
/// let mut store = Store::new();
/// let mut read = |p: &Path| match p.to_str() {
///     Some("lib/sq.hk") => Ok(b"def sq(x real) real: x * x\n".to_vec()),
///     _ => Err(std::io::ErrorKind::NotFound.into()),
/// };
/// let main = b"import sq\nreturn sq(3)\n";
/// let p = front::load_file(&mut store, Path::new("lib/main.hk"), main, &mut read).unwrap();
/// assert_eq!(store.ty(p.term).to_string(), "measure(real)");
/// let errs = front::load_file(&mut store, Path::new("lib/m.hk"), b"import cube\n1", &mut read);
/// let errs = errs.err().unwrap_or_default();
/// assert_eq!(errs[0].message, "no module cube: looked for lib/cube.hk");
/// ```
pub fn load_file(
    store: &mut Store,
    path: &Path,
    bytes: &[u8],
    read: &mut Reader<'_>,
) -> Result<FileProgram, Vec<Diagnostic>> {
    let text = syntax::decode(bytes).map_err(|d| vec![d])?;
    let (program, found) = syntax::parse_with_comments(text)?;
    let modules = import::resolve(path, &program, read)?;
    let list: Vec<elab::Module<'_>> = modules
        .iter()
        .map(|m| elab::Module {
            name: &m.name,
            expr: &m.expr,
        })
        .collect();
    let done = elab::elaborate_program(store, &list, &program, true).map_err(|ds| {
        ds.into_iter()
            .map(|(i, d)| match i.and_then(|i| modules.get(i)) {
                Some(m) => d.in_file(&m.origin),
                None => d,
            })
            .collect::<Vec<_>>()
    })?;
    let mut comments = comments::attach(text, &program, &found, &done.statements);
    comments.prelude = prelude(&program, &done);
    Ok(FileProgram {
        term: done.term,
        spans: done.spans.unwrap_or_default(),
        comments,
    })
}

/// What `fmt` prints before the term: the file's `import` lines, the data types.
fn prelude(program: &Expr, done: &elab::Elaborated) -> Prelude {
    let mut imports = Vec::new();
    let mut cur = program;
    while let ExprKind::Import(x, rest) = &cur.kind {
        imports.push(x.name.clone());
        cur = rest;
    }
    Prelude {
        imports,
        skip: done.imported,
        data: done.data.clone(),
        own_data: done.imported_data,
    }
}

/// Parses and type-checks a program, building its core term in `store`.
///
/// ```
/// use slic_algebra::{front, Store};
/// let mut store = Store::new();
/// let t = front::load(&mut store, "fn x real: return x").unwrap();
/// assert_eq!(store.ty(t).to_string(), "real -> measure(real)");
/// let errs = front::load(&mut store, "log(true)").unwrap_err();
/// assert_eq!(errs[0].message, "'log' expects prob, found bool");
/// ```
pub fn load(store: &mut Store, text: &str) -> Result<TermId, Vec<Diagnostic>> {
    let program = syntax::parse(text)?;
    elab::elaborate(store, &program)
}

/// Like [`load`], for the raw bytes of a file (which must be UTF-8).
pub fn load_bytes(store: &mut Store, bytes: &[u8]) -> Result<TermId, Vec<Diagnostic>> {
    let text = syntax::decode(bytes).map_err(|d| vec![d])?;
    load(store, text)
}

/// Like [`load`], also returning the source span of each elaborated term (first
/// occurrence), for errors found after elaboration.
///
/// ```
/// use slic_algebra::{front, Store};
/// let mut store = Store::new();
/// let (t, spans) = front::load_with_spans(&mut store, "x = 1\nreturn x").unwrap();
/// assert!(spans.get(t).is_some());
/// ```
pub fn load_with_spans(
    store: &mut Store,
    text: &str,
) -> Result<(TermId, SpanMap), Vec<Diagnostic>> {
    let program = syntax::parse(text)?;
    elab::elaborate_with_spans(store, &program)
}

/// [`load_with_spans`] for the raw bytes of a file (which must be UTF-8).
pub fn load_bytes_with_spans(
    store: &mut Store,
    bytes: &[u8],
) -> Result<(TermId, SpanMap), Vec<Diagnostic>> {
    let text = syntax::decode(bytes).map_err(|d| vec![d])?;
    load_with_spans(store, text)
}

/// Like [`load`], also returning the program's `#` comments attached to the statements
/// of the term (see `comments` for the rule), ready for `print::print_with_comments`.
///
/// ```
/// use slic_algebra::{front, print, Store};
/// let mut store = Store::new();
/// let src = "# a model\nx <~ normal(0, 1) # prior\nreturn x\n";
/// let (t, comments) = front::load_with_comments(&mut store, src).unwrap();
/// let text = print::print_with_comments(&store, t, &Default::default(), comments);
/// assert_eq!(text, src);
/// ```
pub fn load_with_comments(
    store: &mut Store,
    text: &str,
) -> Result<(TermId, Comments), Vec<Diagnostic>> {
    let (program, found) = syntax::parse_with_comments(text)?;
    let done = elab::elaborate_full(store, &program)?;
    let mut comments = comments::attach(text, &program, &found, &done.statements);
    comments.prelude = prelude(&program, &done);
    Ok((done.term, comments))
}

/// Like [`load_with_comments`], for the raw bytes of a file (which must be UTF-8).
pub fn load_bytes_with_comments(
    store: &mut Store,
    bytes: &[u8],
) -> Result<(TermId, Comments), Vec<Diagnostic>> {
    let text = syntax::decode(bytes).map_err(|d| vec![d])?;
    load_with_comments(store, text)
}

#[cfg(test)]
mod tests;
