//! The lexer: `.hk` text to a flat vector of tokens, each with its byte span, its layout
//! column and whether it is the first token on its line.
//!
//! It exists so that the parser can apply the offside rule (see the layout contract in
//! [`super::ast`]) by looking only at token columns: the lexer expands tabs to the next
//! multiple of 8 columns, skips `#` comments, blank lines, `\r` (CRLF files) and a leading
//! byte-order mark (which takes no column, so spans stay byte offsets into the original
//! text). Tokens carry no text of their own: literals and names are read back from the
//! source through their spans, so lexing allocates one vector and nothing per token.
//! The comments it skips are kept aside ([`lex_with_comments`]) for `slic-cas fmt`,
//! which prints them back; the parser never sees them.
//!
//! It must not interpret anything: numbers are checked for shape, not value, and
//! reserved words are only classified; the parser decides what is allowed where.

use crate::diag::{Diagnostic, Span};

/// The kind of a token. Keywords are the reserved words that have syntax of their own;
/// reserved words that are written like calls (`observe`, `dirac`, ...) are identifiers
/// and are refused only as binders (see [`is_reserved`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A name: a letter or `_`, then letters, digits, `_` or `'`.
    Ident,
    /// Unsigned integer literal (ASCII digits).
    Nat,
    /// Unsigned decimal literal with a fraction and/or an exponent: `0.5`, `5e-9`.
    Decimal,
    /// `∞`
    Infinity,
    Def,
    Fn,
    If,
    Else,
    Match,
    Return,
    Integrate,
    Summate,
    Product,
    From,
    To,
    Array,
    Plate,
    Chain,
    Of,
    Bucket,
    RNop,
    RSplit,
    RIndex,
    RFanout,
    RAdd,
    Import,
    Data,
    Expect,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Colon,
    /// `=`
    Assign,
    /// `<~`
    Bind,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    /// `**`
    StarStar,
    Lt,
    Gt,
    Le,
    Ge,
    /// `==`
    EqEq,
    /// `/=`
    Ne,
    AndAnd,
    OrOr,
    /// `<|>`
    Alt,
    /// `.` (type annotation)
    Dot,
    /// `->`
    Arrow,
    /// End of input; always the last token.
    Eof,
}

impl Tok {
    /// Whether this kind is a keyword (a reserved word with syntax of its own).
    pub fn is_keyword(self) -> bool {
        use Tok::*;
        matches!(
            self,
            Def | Fn
                | If
                | Else
                | Match
                | Return
                | Integrate
                | Summate
                | Product
                | From
                | To
                | Array
                | Plate
                | Chain
                | Of
                | Bucket
                | RNop
                | RSplit
                | RIndex
                | RFanout
                | RAdd
                | Import
                | Data
                | Expect
        )
    }

    /// How the kind is written, for messages (`'('`, `'if'`); `None` for names, numbers and
    /// end of input, whose text depends on the token.
    pub fn spelling(self) -> Option<&'static str> {
        use Tok::*;
        Some(match self {
            Ident | Nat | Decimal | Eof => return None,
            Infinity => "∞",
            Def => "def",
            Fn => "fn",
            If => "if",
            Else => "else",
            Match => "match",
            Return => "return",
            Integrate => "integrate",
            Summate => "summate",
            Product => "product",
            From => "from",
            To => "to",
            Array => "array",
            Plate => "plate",
            Chain => "chain",
            Of => "of",
            Bucket => "bucket",
            RNop => "r_nop",
            RSplit => "r_split",
            RIndex => "r_index",
            RFanout => "r_fanout",
            RAdd => "r_add",
            Import => "import",
            Data => "data",
            Expect => "expect",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            Comma => ",",
            Colon => ":",
            Assign => "=",
            Bind => "<~",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Caret => "^",
            StarStar => "**",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            EqEq => "==",
            Ne => "/=",
            AndAnd => "&&",
            OrOr => "||",
            Alt => "<|>",
            Dot => ".",
            Arrow => "->",
        })
    }
}

/// One token: 16 bytes, no text (read it from the source with [`Token::span`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
    /// Layout column, 0-based: characters before the token on its line, tabs advancing to
    /// the next multiple of 8.
    pub col: u32,
    /// The token is the first on its line (or is the end of input).
    pub nl: bool,
}

impl Token {
    pub fn span(&self) -> Span {
        Span {
            start: self.start,
            end: self.end,
        }
    }
}

/// The keyword for a name, if it is one.
fn keyword(name: &str) -> Option<Tok> {
    use Tok::*;
    Some(match name {
        "def" => Def,
        "fn" => Fn,
        "if" => If,
        "else" => Else,
        "match" => Match,
        "return" => Return,
        "integrate" => Integrate,
        "summate" => Summate,
        "product" => Product,
        "from" => From,
        "to" => To,
        "array" => Array,
        "plate" => Plate,
        "chain" => Chain,
        "of" => Of,
        "bucket" => Bucket,
        "r_nop" => RNop,
        "r_split" => RSplit,
        "r_index" => RIndex,
        "r_fanout" => RFanout,
        "r_add" => RAdd,
        "import" => Import,
        "data" => Data,
        "expect" => Expect,
        _ => return None,
    })
}

/// Whether `name` may not be bound by a program (`x = ...`, `fn x`, a pattern variable):
/// the reserved words of Hakaru (keywords, `dirac` and the transform names) and the
/// constants the parser gives a meaning of its own (`true`, `false`, `nothing`, `inf`).
/// The printer uses this to rename such binders.
pub fn is_reserved(name: &str) -> bool {
    keyword(name).is_some()
        || matches!(
            name,
            "dirac"
                | "observe"
                | "mh"
                | "mcmc"
                | "disint"
                | "disint_m"
                | "summarize"
                | "simplify"
                | "reparam"
                | "true"
                | "false"
                | "nothing"
                | "inf"
        )
}

/// At most this many lexical errors are reported (the rest are usually the same mistake).
const MAX_ERRORS: usize = 20;

fn ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn ident_continue(c: char) -> bool {
    c == '_' || c == '\'' || c.is_alphanumeric()
}

/// A `#` comment: its span (from `#` to the end of its line, without the line break or a
/// `\r` before it) and whether it stands on a line of its own (no token before it on its
/// line) or ends a line of code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comment {
    pub span: Span,
    pub own_line: bool,
}

/// Lex a whole text. The result always ends with one [`Tok::Eof`] token. Errors are
/// unknown characters (all of them, up to a cap); lexing never fails otherwise.
pub fn lex(text: &str) -> Result<Vec<Token>, Vec<Diagnostic>> {
    lex_with_comments(text).map(|(toks, _)| toks)
}

/// [`lex`], also returning the comments in source order.
pub fn lex_with_comments(text: &str) -> Result<(Vec<Token>, Vec<Comment>), Vec<Diagnostic>> {
    let mut comments = Vec::new();
    let bytes = text.as_bytes();
    let mut toks = Vec::with_capacity(bytes.len() / 3 + 1);
    let mut errors = Vec::new();
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut col: u32 = 0;
    let mut nl = true;
    while let Some(&b) = bytes.get(i) {
        let start = i;
        let kind = match b {
            b'\n' => {
                i += 1;
                col = 0;
                nl = true;
                continue;
            }
            b' ' | b'\r' | b'\x0c' => {
                i += 1;
                col = col.saturating_add(u32::from(b == b' '));
                continue;
            }
            b'\t' => {
                i += 1;
                col = (col / 8).saturating_add(1).saturating_mul(8);
                continue;
            }
            b'#' => {
                i = bytes
                    .get(i..)
                    .unwrap_or(&[])
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |n| i + n);
                let end = if bytes.get(i.wrapping_sub(1)) == Some(&b'\r') && i > start {
                    i - 1
                } else {
                    i
                };
                comments.push(Comment {
                    span: Span::new(start, end),
                    own_line: nl,
                });
                continue;
            }
            b'0'..=b'9' => {
                let (end, decimal) = scan_number(bytes, i);
                i = end;
                if decimal {
                    Tok::Decimal
                } else {
                    Tok::Nat
                }
            }
            b'(' => punct(&mut i, 1, Tok::LParen),
            b')' => punct(&mut i, 1, Tok::RParen),
            b'[' => punct(&mut i, 1, Tok::LBracket),
            b']' => punct(&mut i, 1, Tok::RBracket),
            b',' => punct(&mut i, 1, Tok::Comma),
            b':' => punct(&mut i, 1, Tok::Colon),
            b'+' => punct(&mut i, 1, Tok::Plus),
            b'^' => punct(&mut i, 1, Tok::Caret),
            b'.' => punct(&mut i, 1, Tok::Dot),
            b'-' => match bytes.get(i + 1) {
                Some(b'>') => punct(&mut i, 2, Tok::Arrow),
                _ => punct(&mut i, 1, Tok::Minus),
            },
            b'*' => match bytes.get(i + 1) {
                Some(b'*') => punct(&mut i, 2, Tok::StarStar),
                _ => punct(&mut i, 1, Tok::Star),
            },
            b'/' => match bytes.get(i + 1) {
                Some(b'=') => punct(&mut i, 2, Tok::Ne),
                _ => punct(&mut i, 1, Tok::Slash),
            },
            b'=' => match bytes.get(i + 1) {
                Some(b'=') => punct(&mut i, 2, Tok::EqEq),
                _ => punct(&mut i, 1, Tok::Assign),
            },
            b'>' => match bytes.get(i + 1) {
                Some(b'=') => punct(&mut i, 2, Tok::Ge),
                _ => punct(&mut i, 1, Tok::Gt),
            },
            b'<' => match (bytes.get(i + 1), bytes.get(i + 2)) {
                (Some(b'|'), Some(b'>')) => punct(&mut i, 3, Tok::Alt),
                (Some(b'~'), _) => punct(&mut i, 2, Tok::Bind),
                (Some(b'='), _) => punct(&mut i, 2, Tok::Le),
                _ => punct(&mut i, 1, Tok::Lt),
            },
            b'&' if bytes.get(i + 1) == Some(&b'&') => punct(&mut i, 2, Tok::AndAnd),
            b'|' if bytes.get(i + 1) == Some(&b'|') => punct(&mut i, 2, Tok::OrOr),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                // ASCII fast path; a non-ASCII letter inside the name falls back below.
                let mut j = i + 1;
                while bytes
                    .get(j)
                    .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'\'')
                {
                    j += 1;
                }
                i = if bytes.get(j).is_some_and(|&c| c >= 0x80) {
                    name_end(text, i)
                } else {
                    j
                };
                keyword(text.get(start..i).unwrap_or("")).unwrap_or(Tok::Ident)
            }
            _ => {
                let rest = text.get(i..).unwrap_or("");
                let Some(c) = rest.chars().next() else { break };
                if ident_start(c) {
                    i = name_end(text, i);
                    keyword(text.get(start..i).unwrap_or("")).unwrap_or(Tok::Ident)
                } else {
                    i += c.len_utf8();
                    if c == '∞' {
                        Tok::Infinity
                    } else {
                        if errors.len() < MAX_ERRORS {
                            errors.push(Diagnostic::new(
                                Span::new(start, i),
                                format!("unknown character '{}'", c.escape_debug()),
                            ));
                        }
                        col = col.saturating_add(1);
                        continue;
                    }
                }
            }
        };
        // A token is as many columns wide as it has characters.
        let token = bytes.get(start..i).unwrap_or(&[]);
        let width = if token.is_ascii() {
            token.len()
        } else {
            text.get(start..i).map_or(1, |t| t.chars().count())
        };
        let width = u32::try_from(width).unwrap_or(u32::MAX);
        push(&mut toks, kind, start, i, col, nl);
        col = col.saturating_add(width);
        nl = false;
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    push(&mut toks, Tok::Eof, bytes.len(), bytes.len(), 0, true);
    Ok((toks, comments))
}

/// The end of the name that starts at `i`.
fn name_end(text: &str, i: usize) -> usize {
    let rest = text.get(i..).unwrap_or("");
    i + rest
        .char_indices()
        .find(|&(_, c)| !ident_continue(c))
        .map_or(rest.len(), |(n, _)| n)
}

fn punct(i: &mut usize, len: usize, kind: Tok) -> Tok {
    *i += len;
    kind
}

fn push(toks: &mut Vec<Token>, kind: Tok, start: usize, end: usize, col: u32, nl: bool) {
    let s = Span::new(start, end);
    toks.push(Token {
        kind,
        start: s.start,
        end: s.end,
        col,
        nl,
    });
}

/// Scan a number starting at `i` (an ASCII digit): digits, then an optional `.digits`
/// fraction, then an optional exponent `e[+-]digits`. A `.` or `e` not followed by a
/// digit is not part of the number (`1. nat` is an annotation). Returns the end offset
/// and whether the literal is a decimal.
fn scan_number(bytes: &[u8], mut i: usize) -> (usize, bool) {
    let digits = |mut j: usize| {
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        j
    };
    let is_digit = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_digit);
    i = digits(i);
    let mut decimal = false;
    if bytes.get(i) == Some(&b'.') && is_digit(i + 1) {
        i = digits(i + 1);
        decimal = true;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        if is_digit(i + 1 + sign) {
            i = digits(i + 1 + sign);
            decimal = true;
        }
    }
    (i, decimal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kinds and columns of the tokens of `text`, `*` marking first-on-line, e.g.
    /// `*Ident@0 Assign@2`.
    fn dump(text: &str) -> String {
        match lex(text) {
            Ok(toks) => toks
                .iter()
                .filter(|t| t.kind != Tok::Eof)
                .map(|t| {
                    let star = if t.nl { "*" } else { "" };
                    let src = text.get(t.start as usize..t.end as usize).unwrap_or("?");
                    format!("{star}{:?}({src})@{}", t.kind, t.col)
                })
                .collect::<Vec<_>>()
                .join(" "),
            Err(es) => {
                let msgs: Vec<String> = es
                    .iter()
                    .map(|e| format!("{}..{}: {}", e.span.start, e.span.end, e.message))
                    .collect();
                format!("error {}", msgs.join("; "))
            }
        }
    }

    fn check(text: &str, expect: &str) {
        assert_eq!(dump(text), expect, "lexing {text:?}");
    }

    #[test]
    fn tokens() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("x <~ m", "*Ident(x)@0 Bind(<~)@2 Ident(m)@5"),
            ("a<|>b", "*Ident(a)@0 Alt(<|>)@1 Ident(b)@4"),
            ("a<-3", "*Ident(a)@0 Lt(<)@1 Minus(-)@2 Nat(3)@3"),
            ("a/=b /c", "*Ident(a)@0 Ne(/=)@1 Ident(b)@3 Slash(/)@5 Ident(c)@6"),
            ("x**2^3", "*Ident(x)@0 StarStar(**)@1 Nat(2)@3 Caret(^)@4 Nat(3)@5"),
            ("a && b || c", "*Ident(a)@0 AndAnd(&&)@2 Ident(b)@5 OrOr(||)@7 Ident(c)@10"),
            ("<= >= == = > ->", "*Le(<=)@0 Ge(>=)@3 EqEq(==)@6 Assign(=)@9 Gt(>)@11 Arrow(->)@13"),
            ("0.5 1.0 5e-9 1e3 2.5e+2 7", "*Decimal(0.5)@0 Decimal(1.0)@4 Decimal(5e-9)@8 Decimal(1e3)@13 Decimal(2.5e+2)@17 Nat(7)@24"),
            ("1. nat", "*Nat(1)@0 Dot(.)@1 Ident(nat)@3"),
            ("reject.measure", "*Ident(reject)@0 Dot(.)@6 Ident(measure)@7"),
            ("2e x", "*Nat(2)@0 Ident(e)@1 Ident(x)@3"),
            ("θ β' x_1 _", "*Ident(θ)@0 Ident(β')@2 Ident(x_1)@5 Ident(_)@9"),
            ("-∞ ∞x", "*Minus(-)@0 Infinity(∞)@1 Infinity(∞)@3 Ident(x)@4"),
            ("if else fn def r_add r_fanout", "*If(if)@0 Else(else)@3 Fn(fn)@8 Def(def)@11 RAdd(r_add)@15 RFanout(r_fanout)@21"),
            ("a # comment\n  b", "*Ident(a)@0 *Ident(b)@2"),
            ("\ta\n \tb\n        \tc", "*Ident(a)@8 *Ident(b)@8 *Ident(c)@16"),
            ("a\r\n  b\r\n", "*Ident(a)@0 *Ident(b)@2"),
            ("\u{feff}x\ny", "*Ident(x)@0 *Ident(y)@0"),
            ("θ = 1", "*Ident(θ)@0 Assign(=)@2 Nat(1)@4"),
            ("", ""),
            ("# only\n\n", ""),
            ("a @ b", "error 2..3: unknown character '@'"),
            ("a & b | c", "error 2..3: unknown character '&'; 6..7: unknown character '|'"),
            ("x\u{a0}y", "error 1..3: unknown character '\\u{a0}'"),
            ("a;b", "error 1..2: unknown character ';'"),
        ];
        for (text, expect) in cases {
            check(text, expect);
        }
    }

    #[test]
    fn comments_are_kept_aside() {
        let text = "# head\nx = 1 # one\r\n  # inner\ny#\n";
        let Ok((_, comments)) = lex_with_comments(text) else {
            panic!("lexing failed");
        };
        let got: Vec<(&str, bool)> = comments
            .iter()
            .map(|c| {
                (
                    &text[c.span.start as usize..c.span.end as usize],
                    c.own_line,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("# head", true),
                ("# one", false),
                ("# inner", true),
                ("#", false)
            ]
        );
    }

    #[test]
    fn reserved_words() {
        for w in [
            "if", "def", "dirac", "observe", "simplify", "true", "inf", "r_nop",
        ] {
            assert!(is_reserved(w), "{w}");
        }
        for w in ["x", "normal", "left", "pi", "infinity", "_"] {
            assert!(!is_reserved(w), "{w}");
        }
    }
}
