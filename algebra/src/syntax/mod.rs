//! Concrete syntax: lexing and parsing `.hk` text into the surface tree of [`ast`].
pub mod ast;
