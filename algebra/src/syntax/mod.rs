//! Concrete syntax: lexing and parsing `.hk` text into the surface tree of [`ast`].
//!
//! The entry points are [`decode`] (bytes to text, refusing invalid UTF-8) and [`parse`]
//! (text to one [`ast::Expr`], or diagnostics); [`parse_with_comments`] also hands back
//! the `#` comments, which the tree has no place for. The layout rules both follow are written
//! once, in the documentation of [`ast`]. This module does no IO and knows nothing of
//! types or meanings.
//!
//! ```
//! use slic_algebra::syntax;
//! let text = syntax::decode(b"x <~ normal(0, 1)\nreturn x\n").unwrap();
//! let e = syntax::parse(text).unwrap();
//! assert!(matches!(e.kind, syntax::ast::ExprKind::Bind(..)));
//! ```

pub mod ast;
pub mod lexer;
pub mod parser;

pub use lexer::{is_reserved, Comment};
pub use parser::{parse, parse_module, parse_with_comments, MAX_DEPTH};

use crate::diag::{Diagnostic, Span};

/// Check that a file is UTF-8 and return it as text. A leading byte-order mark is kept
/// (the lexer skips it) so that spans stay byte offsets into `bytes`.
///
/// Errors: `file is not valid UTF-8`, pointing at the first bad byte.
pub fn decode(bytes: &[u8]) -> Result<&str, Diagnostic> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        Diagnostic::new(Span::new(at, at + 1), "file is not valid UTF-8")
    })
}
