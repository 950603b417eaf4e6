//! `slic-algebra`: the term language of slic-cas and the exact algebra on it.
//!
//! Data flows one way through this crate: text is lexed and parsed (`syntax`) into a
//! surface tree with source spans, the elaborator (`elab`) type-checks it and produces
//! hash-consed, typed core terms in a [`Store`] (`term`), and the printer (`print`) writes
//! core terms back as `.hk` text that parses to an alpha-equivalent term. `verify` re-checks
//! the types of any core term, so every later pass can be checked after it runs.
//!
//! ```
//! use slic_algebra::{front, print, Store};
//! let mut store = Store::new();
//! let term = front::load(&mut store, "fn mu real:\nx <~ normal(mu, 1)\nreturn x\n").unwrap();
//! assert_eq!(store.ty(term).to_string(), "real -> measure(real)");
//! let text = print::print_term(&store, term);
//! assert!(text.contains("normal(mu, 1)"));
//! ```
//!
//! Architecture invariant: this crate does no IO and knows nothing of what measures
//! mean beyond their syntax and types (sampling and integration live in `slic-semantics`).

pub mod alpha;
pub mod assume;
pub mod canon;
pub mod cond;
pub mod cost;
pub mod diag;
pub mod elab;
pub mod eval;
pub mod front;
pub mod num;
pub mod order;
pub mod piecewise;
pub mod poly;
pub mod print;
pub mod solve;
pub mod stack;
pub mod stdlib;
pub mod sums;
pub mod syntax;
pub mod telescope;
pub mod term;
pub mod types;
pub mod unproduct;
pub mod unsupported;
pub mod vars;
pub mod verify;

pub use diag::{Diagnostic, LineIndex, Origin, Span, SpanMap};
pub use num::Rational;
pub use term::{Dist, Node, Pattern, Prim, Store, TermId, Transform, VarId, VarInfo};
pub use types::{Coercion, Type};
