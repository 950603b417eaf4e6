//! The parser: tokens to the surface tree of [`super::ast`], applying the layout contract
//! written in that module's documentation (offside rule on token columns).
//!
//! It is a recursive-descent parser with precedence climbing for binary operators. Layout
//! is handled by one question, `Parser::look`: is the next token part of what is being
//! parsed (same line, or a later line at a column greater than the current block's), does
//! it start the next item of the current block (a later line at the block's column), or
//! does it end the block (a smaller column)? Blocks set the column; `(`, `[` and `,`
//! start blocks at their first token, and `)`, `]`, `,` are always seen, so they end
//! whatever blocks are open inside them.
//!
//! Invariants that keep it safe on hostile input: every recursion on user structure goes
//! through a depth counter ([`MAX_DEPTH`]); chains of left-associative operators are
//! collected in loops into flat [`ExprKind::OpChain`] nodes; statement sequences are
//! collected in a loop and folded into nested `Let`/`Bind`/`Def` afterwards; any
//! construct that would build a tree deeper than the limit (long `^` chains, chained
//! `a[i][j]...`, long tuples, repeated annotations) is refused. Each nesting step checks
//! the remaining stack and moves to a fresh segment when it runs low (`crate::stack::grow`), so the
//! limit holds on small thread stacks and in unoptimised builds too. The first error stops
//! the parse (recovery would mostly report follow-on noise).
//!
//! It must not resolve names, check types or fold literals: that is the elaborator's job.

use crate::stack::grow;
use num_bigint::{BigInt, BigUint};
use num_rational::BigRational;
use num_traits::One;

use super::ast::{
    ChainOp, CmpOp, CtorDecl, DataDecl, Expr, ExprKind, Ident, Pat, PatKind, PowOp, TypeExpr,
    TypeExprKind,
};
use super::lexer::{self, Comment, Tok, Token};
use crate::diag::{Diagnostic, Span};

/// The deepest nesting of expressions, types, patterns and reducers the parser accepts.
pub const MAX_DEPTH: u32 = 1000;

/// Longest number literal accepted (digits), so that a huge literal cannot stall the
/// conversion to a big integer.
const MAX_LITERAL_DIGITS: usize = 10_000;

/// Largest decimal exponent magnitude accepted (`1e10000`).
const MAX_EXPONENT: i64 = 10_000;

/// The layout column meaning "no block here": inside the parentheses of a type, a
/// pattern or a parameter list, every token belongs to the list.
const FREE: i64 = -1;

type PResult<T> = Result<T, Box<Diagnostic>>;

/// Parse a whole `.hk` file (one program is one block) into its surface tree.
///
/// Errors: the lexer's (unknown characters), or the first syntax error.
pub fn parse(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    parse_with_comments(text).map(|(e, _)| e)
}

/// [`parse`], also returning the program's `#` comments in source order (for `fmt`,
/// which prints them back; the tree itself has no place for them).
pub fn parse_with_comments(text: &str) -> Result<(Expr, Vec<Comment>), Vec<Diagnostic>> {
    parse_file(text, false)
}

/// [`parse`] for a file read by `import`: its top block may hold only statements, with
/// no final expression (which then reads as `()`; a final expression, which Hakaru's
/// grammar needs, is allowed and ignored by the importer).
pub fn parse_module(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    parse_file(text, true).map(|(e, _)| e)
}

fn parse_file(text: &str, module: bool) -> Result<(Expr, Vec<Comment>), Vec<Diagnostic>> {
    if u32::try_from(text.len()).is_err() {
        return Err(vec![Diagnostic::new(
            Span::default(),
            "file is too large (limit 4 GiB)",
        )]);
    }
    let (toks, comments) = lexer::lex_with_comments(text)?;
    let mut p = Parser {
        text,
        toks,
        pos: 0,
        lay: FREE,
        line_ok: 0,
        in_final: false,
        depth: 0,
        may_end: module,
    };
    let program = p.program().map_err(|d| vec![*d])?;
    Ok((program, comments))
}

// Binding levels of binary operators, loosest first; prefix signs sit between `+` and `*`.
const L_ALT: u8 = 1;
const L_OR: u8 = 2;
const L_AND: u8 = 3;
const L_CMP: u8 = 4;
const L_ANN: u8 = 5;
const L_ADD: u8 = 6;
const L_MUL: u8 = 8;
const L_POW: u8 = 9;

#[derive(Clone, Copy)]
enum BinOp {
    Chain(ChainOp),
    Cmp(CmpOp),
    Ann,
    Pow(PowOp),
}

fn binop(k: Tok) -> Option<(u8, BinOp)> {
    use BinOp::*;
    Some(match k {
        Tok::Alt => (L_ALT, Chain(ChainOp::Superpose)),
        Tok::OrOr => (L_OR, Chain(ChainOp::Or)),
        Tok::AndAnd => (L_AND, Chain(ChainOp::And)),
        Tok::Lt => (L_CMP, Cmp(CmpOp::Lt)),
        Tok::Gt => (L_CMP, Cmp(CmpOp::Gt)),
        Tok::Le => (L_CMP, Cmp(CmpOp::Le)),
        Tok::Ge => (L_CMP, Cmp(CmpOp::Ge)),
        Tok::EqEq => (L_CMP, Cmp(CmpOp::Eq)),
        Tok::Ne => (L_CMP, Cmp(CmpOp::Ne)),
        Tok::Dot => (L_ANN, Ann),
        Tok::Plus => (L_ADD, Chain(ChainOp::Add)),
        Tok::Minus => (L_ADD, Chain(ChainOp::Sub)),
        Tok::Star => (L_MUL, Chain(ChainOp::Mul)),
        Tok::Slash => (L_MUL, Chain(ChainOp::Div)),
        Tok::Caret => (L_POW, Pow(PowOp::Pow)),
        Tok::StarStar => (L_POW, Pow(PowOp::RealPow)),
        _ => return None,
    })
}

/// Whether the next two tokens are `(` `)` on the line being parsed (`nothing()`).
fn p_empty_parens(p: &Parser<'_>) -> bool {
    p.at(Tok::LParen) && p.kind_at(p.pos + 1) == Tok::RParen
}

/// `)`, `]` and `,`: they end every block opened inside their brackets, so layout never
/// hides them.
fn closer(k: Tok) -> bool {
    matches!(k, Tok::RParen | Tok::RBracket | Tok::Comma)
}

/// A binary operator that cannot start an expression: a line beginning with one continues
/// the expression before it, whatever its column (Hakaru prints long sums and products
/// with the operator leading each continuation line). `+` and `-` may also be prefix
/// signs, so they continue only where nothing else could start (see `Parser::in_final`).
fn leads_continuation(k: Tok) -> bool {
    binop(k).is_some() && !matches!(k, Tok::Plus | Tok::Minus)
}

/// What the next token is to the construct being parsed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Look {
    /// Part of it (same line, or a continuation line).
    Tok(Tok),
    /// First on a line at the current block's column: the block's next item.
    Sep,
    /// First on a line left of the current block's column: the block is over.
    Close,
    /// End of input.
    Eof,
}

/// A statement of a block, before it is given the rest of the block as its scope.
enum Stmt {
    Let(Ident, Expr, u32),
    Bind(Ident, Expr, u32),
    Def {
        name: Ident,
        params: Vec<(Ident, TypeExpr)>,
        ret: Option<TypeExpr>,
        body: Expr,
        start: u32,
    },
    Import(Ident, u32),
    Data(DataDecl, u32),
}

struct Parser<'a> {
    text: &'a str,
    /// Ends with exactly one `Eof` token.
    toks: Vec<Token>,
    pos: usize,
    /// Column of the current block, or [`FREE`].
    lay: i64,
    /// Index of a token accepted whatever its column: the first token of a block item,
    /// or an operand that follows a binary operator ending the previous line.
    line_ok: usize,
    /// Whether the expression being parsed is the final expression of the current block:
    /// then a line at the block's column that starts with `+` or `-` can only continue
    /// it (a block has nothing after its final expression), as Hakaru prints long sums.
    in_final: bool,
    depth: u32,
    /// Set for a module's top block (see [`parse_module`]): it may end after its
    /// statements, without a final expression. Taken by the first block parsed.
    may_end: bool,
}

impl<'a> Parser<'a> {
    // ---- tokens and layout ----

    fn eof(&self) -> Token {
        let end = u32::try_from(self.text.len()).unwrap_or(u32::MAX);
        Token {
            kind: Tok::Eof,
            start: end,
            end,
            col: 0,
            nl: true,
        }
    }

    fn cur(&self) -> Token {
        self.toks
            .get(self.pos)
            .copied()
            .unwrap_or_else(|| self.eof())
    }

    fn kind_at(&self, i: usize) -> Tok {
        self.toks.get(i).map_or(Tok::Eof, |t| t.kind)
    }

    fn look(&self) -> Look {
        let t = self.cur();
        if t.kind == Tok::Eof {
            return Look::Eof;
        }
        let col = i64::from(t.col);
        if !t.nl
            || closer(t.kind)
            || self.pos == self.line_ok
            || col > self.lay
            || leads_continuation(t.kind)
            || (col == self.lay && self.in_final && matches!(t.kind, Tok::Plus | Tok::Minus))
        {
            Look::Tok(t.kind)
        } else if col == self.lay {
            Look::Sep
        } else {
            Look::Close
        }
    }

    fn at(&self, k: Tok) -> bool {
        self.look() == Look::Tok(k)
    }

    fn bump(&mut self) -> Token {
        let t = self.cur();
        if t.kind != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn text_of(&self, t: Token) -> &'a str {
        self.text
            .get(t.start as usize..t.end as usize)
            .unwrap_or("")
    }

    fn describe(&self, t: Token) -> String {
        match t.kind {
            Tok::Ident => format!("identifier '{}'", self.text_of(t)),
            Tok::Nat | Tok::Decimal => format!("number '{}'", self.text_of(t)),
            Tok::Eof => "end of file".to_string(),
            k => format!("'{}'", k.spelling().unwrap_or("?")),
        }
    }

    /// The next token as an error message names it.
    fn found(&self) -> String {
        match self.look() {
            Look::Eof => "end of file".to_string(),
            Look::Sep | Look::Close => "newline".to_string(),
            Look::Tok(_) => self.describe(self.cur()),
        }
    }

    /// The previous token as an error message names it (`'+'`, `identifier 'x'`).
    fn prev(&self) -> String {
        match self.pos.checked_sub(1).and_then(|i| self.toks.get(i)) {
            Some(&t) => self.describe(t),
            None => "the start of the file".to_string(),
        }
    }

    /// Where an error about the next token points: the token itself, or the end of the
    /// previous one when the next token is not part of the construct (a line break).
    fn here(&self) -> Span {
        match self.look() {
            Look::Tok(_) => self.cur().span(),
            _ => {
                let end = self
                    .pos
                    .checked_sub(1)
                    .and_then(|i| self.toks.get(i))
                    .map_or(0, |t| t.end);
                Span { start: end, end }
            }
        }
    }

    fn error(&self, msg: String) -> Box<Diagnostic> {
        Box::new(Diagnostic::new(self.here(), msg))
    }

    fn error_at(span: Span, msg: impl Into<String>) -> Box<Diagnostic> {
        Box::new(Diagnostic::new(span, msg))
    }

    /// Consume a `k`, or fail with "expected 'k' <what> '<kw>', found ...".
    fn expect(&mut self, k: Tok, what: &str, kw: &str) -> PResult<Token> {
        if self.at(k) {
            return Ok(self.bump());
        }
        let want = k.spelling().unwrap_or("?");
        let found = self.found();
        Err(self.error(if kw.is_empty() {
            format!("expected '{want}' {what}, found {found}")
        } else {
            format!("expected '{want}' {what} '{kw}', found {found}")
        }))
    }

    /// Consume the closing bracket of a list opened by `open`.
    fn close(&mut self, open: Token, k: Tok, what: &str) -> PResult<Token> {
        match self.look() {
            Look::Tok(x) if x == k => Ok(self.bump()),
            Look::Tok(_) => {
                let want = k.spelling().unwrap_or("?");
                Err(self.error(format!("expected '{want}' {what}, found {}", self.found())))
            }
            _ => Err(Self::unclosed(open)),
        }
    }

    fn unclosed(open: Token) -> Box<Diagnostic> {
        Self::error_at(
            open.span(),
            format!("unclosed '{}'", open.kind.spelling().unwrap_or("?")),
        )
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.too_deep());
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Fail if `extra` more levels on top of the current depth exceed the limit.
    fn room_for(&self, extra: usize) -> PResult<()> {
        if (self.depth as usize).saturating_add(extra) > MAX_DEPTH as usize {
            return Err(self.too_deep());
        }
        Ok(())
    }

    fn too_deep(&self) -> Box<Diagnostic> {
        Self::error_at(
            self.cur().span(),
            format!("expression nests too deeply (limit {MAX_DEPTH})"),
        )
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let r = grow(|| f(self));
        self.leave();
        r
    }

    /// Run `f` with `lay` set (and the current token accepted), then restore the layout.
    fn with_layout<T>(&mut self, lay: i64, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let saved = (self.lay, self.line_ok, self.in_final);
        self.lay = lay;
        self.line_ok = self.pos;
        self.in_final = false;
        let r = f(self);
        (self.lay, self.line_ok, self.in_final) = saved;
        r
    }

    // ---- blocks and statements ----

    fn program(&mut self) -> PResult<Expr> {
        if self.cur().kind == Tok::Eof {
            return Err(Self::error_at(Span::default(), "empty program"));
        }
        let first = self.cur();
        let e = self.block()?;
        let t = self.cur();
        if t.kind == Tok::Eof {
            Ok(e)
        } else if t.nl && t.col < first.col {
            Err(Self::error_at(
                t.span(),
                "line is indented less than the start of its block",
            ))
        } else {
            Err(self.stray())
        }
    }

    /// The error for a token left over after a complete construct.
    fn stray(&self) -> Box<Diagnostic> {
        let t = self.cur();
        let msg = match t.kind {
            Tok::RParen | Tok::RBracket => {
                format!("unmatched '{}'", t.kind.spelling().unwrap_or("?"))
            }
            Tok::Else => "'else' without 'if'".to_string(),
            _ if t.nl => "unexpected indentation".to_string(),
            _ => format!(
                "expected an operator or end of line, found {}",
                self.describe(t)
            ),
        };
        Self::error_at(t.span(), msg)
    }

    /// A block: statements at the column of its first token, then a final expression.
    fn block(&mut self) -> PResult<Expr> {
        let col = i64::from(self.cur().col);
        grow(|| self.with_layout(col, |p| p.block_items(false)))
    }

    /// A block at the column of the block around it (a header's body that Hakaru prints
    /// flush left): it ends after its final expression, and the next line at that column
    /// is the enclosing block's next item.
    fn flush_block(&mut self) -> PResult<Expr> {
        let col = i64::from(self.cur().col);
        grow(|| self.with_layout(col, |p| p.block_items(true)))
    }

    /// Statements and the final expression of a block; `open_end`: a line at the block's
    /// column after the final expression belongs to the enclosing block.
    fn block_items(&mut self, open_end: bool) -> PResult<Expr> {
        let may_end = std::mem::take(&mut self.may_end);
        let mut stmts = Vec::new();
        loop {
            self.line_ok = self.pos;
            if !self.at_statement() {
                break;
            }
            stmts.push(self.statement()?);
            match self.look() {
                Look::Sep => {}
                Look::Eof if may_end => {
                    let at = self.cur().span();
                    return Ok(fold(stmts, Expr::new(ExprKind::Unit, at)));
                }
                Look::Tok(k) if !closer(k) => {
                    let t = self.cur();
                    return Err(if t.nl {
                        Self::error_at(t.span(), "unexpected indentation")
                    } else {
                        Self::error_at(
                            t.span(),
                            format!(
                                "expected newline after the statement, found {}",
                                self.describe(t)
                            ),
                        )
                    });
                }
                Look::Close => {
                    return Err(Self::error_at(
                        self.cur().span(),
                        "expected an expression after the statement, found a line indented \
                         less than the start of its block",
                    ))
                }
                _ => {
                    return Err(self.error(format!(
                        "expected an expression on the line after the statement, found {}",
                        self.found()
                    )))
                }
            }
        }
        self.in_final = true;
        let last = self.expr()?;
        self.in_final = false;
        let t = self.cur();
        match self.look() {
            Look::Sep if open_end => Ok(fold(stmts, last)),
            Look::Sep => Err(Self::error_at(
                t.span(),
                format!(
                    "expected end of block after its final expression, found {}",
                    self.describe(t)
                ),
            )),
            Look::Tok(k) if t.nl && !closer(k) => {
                Err(Self::error_at(t.span(), "unexpected indentation"))
            }
            _ => Ok(fold(stmts, last)),
        }
    }

    /// `x = e`, `x <~ m` (also with a reserved word for `x`, to report it) or `def`.
    fn at_statement(&self) -> bool {
        let k = self.cur().kind;
        matches!(k, Tok::Def | Tok::Import | Tok::Data)
            || ((k == Tok::Ident || k.is_keyword())
                && matches!(self.kind_at(self.pos + 1), Tok::Assign | Tok::Bind))
    }

    fn statement(&mut self) -> PResult<Stmt> {
        let start = self.cur().start;
        if self.at(Tok::Def) {
            return self.nested(Self::def);
        }
        if self.at(Tok::Import) {
            let kw = self.bump();
            let name = self.binder("of the module after", "import")?;
            return Ok(Stmt::Import(name, kw.start));
        }
        if self.at(Tok::Data) {
            return self.nested(Self::data);
        }
        let name = self.binder("", "")?;
        let op = self.bump();
        // `x2 <~ x1 <~ m` NEWLINE (lines at the column of `x1`): the right-hand side is
        // itself a block, which starts at `x1` and whose result is bound to `x2`.
        let rhs = if self.at_statement() {
            self.block()?
        } else {
            self.expr()?
        };
        Ok(if op.kind == Tok::Assign {
            Stmt::Let(name, rhs, start)
        } else {
            Stmt::Bind(name, rhs, start)
        })
    }

    fn def(&mut self) -> PResult<Stmt> {
        let kw = self.bump();
        let name = self.binder("after", "def")?;
        let open = self.expect(Tok::LParen, "after the name of the function in", "def")?;
        let params = self.with_layout(FREE, |p| {
            let mut params = Vec::new();
            // `def f():` defines a named value, called as `f()` (Hakaru has both).
            if p.at(Tok::RParen) {
                p.bump();
                return Ok(params);
            }
            loop {
                let x = p.binder("for a parameter of", "def")?;
                let ty = p.ty("after the parameter name")?;
                params.push((x, ty));
                match p.look() {
                    Look::Tok(Tok::Comma) => {
                        p.bump();
                    }
                    Look::Tok(Tok::RParen) => {
                        p.bump();
                        return Ok(params);
                    }
                    Look::Eof => return Err(Self::unclosed(open)),
                    _ => {
                        return Err(p.error(format!(
                            "expected ',' or ')' after a parameter of 'def', found {}",
                            p.found()
                        )))
                    }
                }
            }
        })?;
        let ret = match self.look() {
            Look::Tok(Tok::Colon) => None,
            Look::Tok(Tok::Ident | Tok::Array | Tok::LParen) => {
                Some(self.ty("as the return type of 'def'")?)
            }
            _ => {
                return Err(self.error(format!(
                    "expected ':' after the parameters of 'def', found {}",
                    self.found()
                )))
            }
        };
        self.expect(Tok::Colon, "after the return type of", "def")?;
        let body = self.body(true)?;
        Ok(Stmt::Def {
            name,
            params,
            ret,
            body,
            start: kw.start,
        })
    }

    /// `data NAME(params): c1(T, ...) c2 ...`: the constructors follow the `:` on the
    /// same line or on lines indented more than the statement, a bare name being a
    /// constructor without fields.
    fn data(&mut self) -> PResult<Stmt> {
        let kw = self.bump();
        let name = self.binder("of the type after", "data")?;
        let mut params = Vec::new();
        if self.at(Tok::LParen) {
            let open = self.bump();
            self.with_layout(FREE, |p| loop {
                match p.look() {
                    Look::Tok(Tok::RParen) => {
                        p.bump();
                        return Ok(());
                    }
                    Look::Tok(Tok::Comma) if !params.is_empty() => {
                        p.bump();
                    }
                    Look::Eof => return Err(Self::unclosed(open)),
                    _ => params.push(p.binder("for a type parameter of", "data")?),
                }
            })?;
        }
        self.expect(Tok::Colon, "after the name of the type in", "data")?;
        let mut ctors = Vec::new();
        while let Look::Tok(Tok::Ident) = self.look() {
            let c = self.binder("for a constructor of", "data")?;
            let mut fields = Vec::new();
            let mut span = c.span;
            if self.at(Tok::LParen) {
                let open = self.bump();
                let close = self.with_layout(FREE, |p| {
                    if p.at(Tok::RParen) {
                        return Ok(p.bump());
                    }
                    loop {
                        fields.push(p.ty("for a field of a constructor")?);
                        match p.look() {
                            Look::Tok(Tok::Comma) => {
                                p.bump();
                            }
                            Look::Tok(Tok::RParen) => return Ok(p.bump()),
                            Look::Eof => return Err(Self::unclosed(open)),
                            _ => {
                                return Err(p.error(format!(
                                    "expected ',' or ')' after a field type, found {}",
                                    p.found()
                                )))
                            }
                        }
                    }
                })?;
                span = span.join(close.span());
            }
            ctors.push(CtorDecl {
                name: c,
                fields,
                span,
            });
        }
        let Some(last) = ctors.last() else {
            return Err(self.error(format!(
                "expected the constructors of '{}' after ':', found {}",
                name.name,
                self.found()
            )));
        };
        let span = Span {
            start: kw.start,
            end: last.span.end,
        };
        Ok(Stmt::Data(
            DataDecl {
                name,
                params,
                ctors,
                span,
            },
            kw.start,
        ))
    }

    /// The body after a header's `:`: the rest of the line, or an indented block on the
    /// following lines (`same_col_ok`: the bodies of `fn`, `def`, `if`/`else`, `summate`
    /// and `product` may also stand at the column of the enclosing block, as Hakaru
    /// prints them; such a body ends after its final expression).
    fn body(&mut self, same_col_ok: bool) -> PResult<Expr> {
        let t = self.cur();
        match self.look() {
            Look::Tok(_) if !t.nl => {
                if self.at_statement() {
                    self.block()
                } else {
                    self.expr()
                }
            }
            Look::Tok(k) if !closer(k) => self.block(),
            Look::Sep if same_col_ok => self.flush_block(),
            Look::Sep => Err(Self::error_at(
                t.span(),
                format!(
                    "expected an indented block after ':', found {} at the same indentation",
                    self.describe(t)
                ),
            )),
            Look::Close => Err(Self::error_at(
                t.span(),
                format!(
                    "expected an indented block after ':', found {} indented less",
                    self.describe(t)
                ),
            )),
            _ => Err(self.error(format!(
                "expected an expression after ':', found {}",
                self.found()
            ))),
        }
    }

    /// A name being bound; reserved words are refused.
    fn binder(&mut self, what: &str, kw: &str) -> PResult<Ident> {
        let t = self.cur();
        match self.look() {
            Look::Tok(k) if k == Tok::Ident || k.is_keyword() => {
                let name = self.text_of(t);
                if k != Tok::Ident || lexer::is_reserved(name) {
                    return Err(Self::error_at(
                        t.span(),
                        format!("'{name}' is reserved and cannot be used as a name"),
                    ));
                }
                self.bump();
                Ok(Ident {
                    name: name.to_string(),
                    span: t.span(),
                })
            }
            _ => {
                let found = self.found();
                Err(self.error(if kw.is_empty() {
                    format!("expected a name {what}, found {found}")
                } else {
                    format!("expected a name {what} '{kw}', found {found}")
                }))
            }
        }
    }

    // ---- expressions ----

    fn expr(&mut self) -> PResult<Expr> {
        self.binary(L_ALT)
    }

    fn peek_binop(&self) -> Option<(u8, BinOp)> {
        match self.look() {
            Look::Tok(k) => binop(k),
            _ => None,
        }
    }

    /// Operators of level `min` or tighter, by precedence climbing. Left-associative
    /// levels are collected into one flat chain; `^` chains are folded to the right.
    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.unary(min)?;
        let mut cap = u8::MAX;
        let mut anns = 0usize;
        while let Some((lvl, op)) = self.peek_binop() {
            if lvl < min || lvl > cap {
                break;
            }
            match op {
                BinOp::Chain(mut c) => {
                    let mut rest = Vec::new();
                    loop {
                        self.bump();
                        let rhs = self.operand(lvl + 1)?;
                        rest.push((c, rhs));
                        match self.peek_binop() {
                            Some((l, BinOp::Chain(c2))) if l == lvl => c = c2,
                            _ => break,
                        }
                    }
                    let end = rest.last().map_or(lhs.span, |(_, e)| e.span);
                    let span = lhs.span.join(end);
                    lhs = Expr::new(ExprKind::OpChain(Box::new(lhs), rest), span);
                }
                BinOp::Cmp(c) => {
                    self.bump();
                    let rhs = self.operand(lvl + 1)?;
                    let span = lhs.span.join(rhs.span);
                    lhs = Expr::new(ExprKind::Compare(c, Box::new(lhs), Box::new(rhs)), span);
                    if let Some((_, BinOp::Cmp(_))) = self.peek_binop() {
                        return Err(self.error(format!(
                            "expected '&&' between comparisons, found {}",
                            self.found()
                        )));
                    }
                }
                BinOp::Ann => {
                    anns += 1;
                    self.room_for(anns)?;
                    self.bump();
                    self.accept_next_line();
                    let ty = self.ty("after '.'")?;
                    let span = lhs.span.join(ty.span);
                    lhs = Expr::new(ExprKind::Ann(Box::new(lhs), ty), span);
                    cap = L_ANN;
                }
                BinOp::Pow(mut p) => {
                    let mut operands = vec![lhs];
                    let mut ops = Vec::new();
                    loop {
                        self.room_for(ops.len() + 1)?;
                        self.bump();
                        ops.push(p);
                        operands.push(self.operand(L_POW + 1)?);
                        match self.peek_binop() {
                            Some((_, BinOp::Pow(p2))) => p = p2,
                            _ => break,
                        }
                    }
                    lhs = fold_pow(operands, ops)?;
                }
            }
        }
        Ok(lhs)
    }

    /// After a binary operator that ends a line, the operand may stand on the next line
    /// at any column (nothing else could follow there), unless it starts a statement.
    fn accept_next_line(&mut self) {
        let t = self.cur();
        if t.nl && t.kind != Tok::Eof && !self.at_statement() {
            self.line_ok = self.pos;
        }
    }

    fn operand(&mut self, min: u8) -> PResult<Expr> {
        self.accept_next_line();
        self.binary(min)
    }

    /// Prefix signs: `-e` binds looser than `*` and `^` (`-x^2` is `-(x^2)`), and may start
    /// an operand of a tighter operator (`x * -3`).
    fn unary(&mut self, min: u8) -> PResult<Expr> {
        match self.look() {
            Look::Tok(k @ (Tok::Minus | Tok::Plus)) => self.nested(|p| {
                let op = p.bump();
                let e = p.binary(min.max(L_MUL))?;
                let span = op.span().join(e.span);
                let kind = if k == Tok::Minus {
                    ExprKind::Neg(Box::new(e))
                } else {
                    ExprKind::Plus(Box::new(e))
                };
                Ok(Expr::new(kind, span))
            }),
            _ => self.postfix(),
        }
    }

    /// Calls `f(a, b)` and indexing `a[i]`, chained.
    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        let saved = self.depth;
        loop {
            match self.look() {
                Look::Tok(Tok::LParen) => {
                    self.enter()?;
                    let open = self.bump();
                    let (args, close) = self.list(open, Tok::RParen, "an argument")?;
                    let span = e.span.join(close.span());
                    e = Expr::new(ExprKind::Call(Box::new(e), args), span);
                }
                Look::Tok(Tok::LBracket) => {
                    self.enter()?;
                    let open = self.bump();
                    let idx = self.block()?;
                    let close = self.close(open, Tok::RBracket, "after the index")?;
                    let span = e.span.join(close.span());
                    e = Expr::new(ExprKind::Index(Box::new(e), Box::new(idx)), span);
                }
                _ => break,
            }
        }
        self.depth = saved;
        Ok(e)
    }

    /// Comma-separated blocks up to `end`, after `open` was consumed.
    fn list(&mut self, open: Token, end: Tok, what: &str) -> PResult<(Vec<Expr>, Token)> {
        let mut items = Vec::new();
        if self.at(end) {
            return Ok((items, self.bump()));
        }
        loop {
            if self.cur().kind == Tok::Eof {
                return Err(Self::unclosed(open));
            }
            items.push(self.block()?);
            match self.look() {
                Look::Tok(Tok::Comma) => {
                    self.bump();
                }
                Look::Tok(k) if k == end => return Ok((items, self.bump())),
                Look::Tok(_) => {
                    let want = end.spelling().unwrap_or("?");
                    return Err(self.error(format!(
                        "expected ',' or '{want}' after {what}, found {}",
                        self.found()
                    )));
                }
                _ => return Err(Self::unclosed(open)),
            }
        }
    }

    fn expected_expr(&self) -> Box<Diagnostic> {
        self.error(format!(
            "expected an expression after {}, found {}",
            self.prev(),
            self.found()
        ))
    }

    fn primary(&mut self) -> PResult<Expr> {
        let t = self.cur();
        let Look::Tok(k) = self.look() else {
            return Err(self.expected_expr());
        };
        let leaf = |kind| Ok(Expr::new(kind, t.span()));
        match k {
            Tok::Ident => {
                self.bump();
                let name = self.text_of(t);
                if name == "inf" {
                    return leaf(ExprKind::Infinity);
                }
                if name == "infinity"
                    && self.at(Tok::LParen)
                    && self.kind_at(self.pos + 1) == Tok::RParen
                {
                    self.bump();
                    let close = self.bump();
                    return Ok(Expr::new(ExprKind::Infinity, t.span().join(close.span())));
                }
                leaf(ExprKind::Var(name.to_string()))
            }
            Tok::Nat => {
                self.bump();
                leaf(ExprKind::Nat(self.nat_value(t)?))
            }
            Tok::Decimal => {
                self.bump();
                leaf(ExprKind::Decimal(self.decimal_value(t)?))
            }
            Tok::Infinity => {
                self.bump();
                leaf(ExprKind::Infinity)
            }
            Tok::LParen => self.nested(Self::paren),
            Tok::LBracket => self.nested(Self::bracket),
            Tok::If => self.nested(Self::if_expr),
            Tok::Match => self.nested(Self::match_expr),
            Tok::Fn => self.nested(Self::lambda),
            Tok::Return => self.nested(|p| {
                p.bump();
                let e = p.binary(L_OR)?;
                let span = t.span().join(e.span);
                Ok(Expr::new(ExprKind::Return(Box::new(e)), span))
            }),
            Tok::Array | Tok::Plate => self.nested(|p| p.index_loop(k)),
            Tok::Summate | Tok::Product | Tok::Integrate | Tok::Bucket => {
                self.nested(|p| p.range_loop(k))
            }
            Tok::Chain => self.nested(Self::chain),
            Tok::Expect => self.nested(Self::expect_expr),
            Tok::Else => Err(Self::error_at(t.span(), "'else' without 'if'")),
            Tok::Import | Tok::Data => Err(Self::error_at(
                t.span(),
                format!(
                    "'{}' is a statement: it needs a line of its own and something after it",
                    self.text_of(t)
                ),
            )),
            Tok::RAdd | Tok::RNop | Tok::RIndex | Tok::RSplit | Tok::RFanout => {
                Err(Self::error_at(
                    t.span(),
                    format!(
                        "reducer '{}' is only allowed in the body of 'bucket'",
                        self.text_of(t)
                    ),
                ))
            }
            _ => Err(self.expected_expr()),
        }
    }

    fn nat_value(&self, t: Token) -> PResult<BigUint> {
        let s = self.text_of(t);
        if s.len() > MAX_LITERAL_DIGITS {
            return Err(Self::error_at(t.span(), "number literal too large"));
        }
        BigUint::parse_bytes(s.as_bytes(), 10)
            .ok_or_else(|| Self::error_at(t.span(), "malformed number literal"))
    }

    fn decimal_value(&self, t: Token) -> PResult<BigRational> {
        decimal(self.text_of(t)).ok_or_else(|| Self::error_at(t.span(), "number literal too large"))
    }

    /// `()`, `(e)`, `(a, b, ...)` (right-nested pairs).
    fn paren(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let (mut items, close) = self.list(open, Tok::RParen, "an element")?;
        let span = open.span().join(close.span());
        let Some(mut acc) = items.pop() else {
            return Ok(Expr::new(ExprKind::Unit, span));
        };
        if items.is_empty() {
            acc.span = span;
            return Ok(acc);
        }
        if let Err(mut d) = self.room_for(items.len()) {
            d.span = open.span();
            return Err(d);
        }
        while let Some(x) = items.pop() {
            let s = x.span.join(acc.span);
            acc = Expr::new(ExprKind::Pair(Box::new(x), Box::new(acc)), s);
        }
        acc.span = span;
        Ok(acc)
    }

    fn bracket(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let (items, close) = self.list(open, Tok::RBracket, "an element")?;
        Ok(Expr::new(
            ExprKind::ArrayLit(items),
            open.span().join(close.span()),
        ))
    }

    /// `else` after a then-branch: on the same line, on a continuation line, or at the
    /// column of the current block (where an `if` that starts a line stands).
    fn else_kw(&mut self, what: &str) -> PResult<Token> {
        match self.look() {
            Look::Tok(Tok::Else) => Ok(self.bump()),
            Look::Sep if self.cur().kind == Tok::Else => Ok(self.bump()),
            _ => Err(self.error(format!(
                "expected 'else' after the then-branch of '{what}', found {}",
                self.found()
            ))),
        }
    }

    fn if_expr(&mut self) -> PResult<Expr> {
        let kw = self.bump();
        let cond = self.expr()?;
        self.expect(Tok::Colon, "after the condition of", "if")?;
        let then = self.body(true)?;
        self.else_kw("if")?;
        self.expect(Tok::Colon, "after", "else")?;
        let els = self.body(true)?;
        let span = kw.span().join(els.span);
        Ok(Expr::new(
            ExprKind::If(Box::new(cond), Box::new(then), Box::new(els)),
            span,
        ))
    }

    fn match_expr(&mut self) -> PResult<Expr> {
        let kw = self.bump();
        // the scrutinee may stand on the next line, as after a binary operator
        self.accept_next_line();
        let scrut = self.expr()?;
        self.expect(Tok::Colon, "after the scrutinee of", "match")?;
        let t = self.cur();
        // Hakaru also prints the branches flush left, at the column of the block around
        // the `match`: then a line at that column is a further branch only if it reads as
        // a pattern and `:`, and otherwise the enclosing block's next item.
        let flush = self.look() == Look::Sep && self.looks_like_branch();
        match self.look() {
            Look::Tok(k) if !closer(k) => {}
            Look::Sep if flush => {}
            Look::Sep | Look::Close => {
                return Err(Self::error_at(
                    t.span(),
                    format!(
                        "expected indented branches after 'match', found {} indented too little",
                        self.describe(t)
                    ),
                ))
            }
            _ => {
                return Err(self.error(format!(
                    "expected a branch after 'match', found {}",
                    self.found()
                )))
            }
        }
        let branches = self.with_layout(i64::from(t.col), |p| {
            let mut branches = Vec::new();
            loop {
                p.line_ok = p.pos;
                let pat = p.pat()?;
                p.expect(Tok::Colon, "after the pattern of a branch of", "match")?;
                // flush branches may have flush bodies (they end at their final expression)
                let body = p.body(flush)?;
                branches.push((pat, body));
                match p.look() {
                    Look::Sep if !flush || p.looks_like_branch() => {}
                    Look::Sep => return Ok(branches),
                    Look::Tok(k) if p.cur().nl && !closer(k) => {
                        return Err(Self::error_at(p.cur().span(), "unexpected indentation"))
                    }
                    _ => return Ok(branches),
                }
            }
        })?;
        let end = branches.last().map_or(scrut.span, |(_, b)| b.span);
        Ok(Expr::new(
            ExprKind::Match(Box::new(scrut), branches),
            kw.span().join(end),
        ))
    }

    /// Whether the line starting at the next token reads as a branch head: only names,
    /// `(`, `)` and `,` (the tokens of a pattern), then `:`.
    fn looks_like_branch(&self) -> bool {
        let mut i = self.pos;
        loop {
            let Some(t) = self.toks.get(i) else {
                return false;
            };
            if i > self.pos && t.nl {
                return false;
            }
            match t.kind {
                Tok::Colon => return i > self.pos,
                Tok::Ident | Tok::LParen | Tok::RParen | Tok::Comma => i += 1,
                _ => return false,
            }
        }
    }

    fn lambda(&mut self) -> PResult<Expr> {
        let kw = self.bump();
        let x = self.binder("after", "fn")?;
        let ty = self.ty("for the parameter of 'fn'")?;
        self.expect(Tok::Colon, "after the parameter type of", "fn")?;
        let body = self.body(true)?;
        let span = kw.span().join(body.span);
        Ok(Expr::new(ExprKind::Lam(x, ty, Box::new(body)), span))
    }

    /// `array i of n: e`, `plate i of n: m`.
    fn index_loop(&mut self, k: Tok) -> PResult<Expr> {
        let kw = self.bump();
        let name = k.spelling().unwrap_or("?");
        let i = self.binder("after", name)?;
        self.expect(Tok::Of, "after the index of", name)?;
        let n = self.expr()?;
        self.expect(Tok::Colon, "after the bound of", name)?;
        let body = self.body(false)?;
        let span = kw.span().join(body.span);
        let (n, body) = (Box::new(n), Box::new(body));
        let kind = if k == Tok::Array {
            ExprKind::Array(i, n, body)
        } else {
            ExprKind::Plate(i, n, body)
        };
        Ok(Expr::new(kind, span))
    }

    /// `summate`, `product`, `integrate`, `bucket`: `kw x from lo to hi: body`.
    fn range_loop(&mut self, k: Tok) -> PResult<Expr> {
        let kw = self.bump();
        let name = k.spelling().unwrap_or("?");
        let x = self.binder("after", name)?;
        self.expect(Tok::From, "after the variable of", name)?;
        let lo = Box::new(self.expr()?);
        self.expect(Tok::To, "after the lower bound of", name)?;
        let hi = Box::new(self.expr()?);
        self.expect(Tok::Colon, "after the upper bound of", name)?;
        let body = if k == Tok::Bucket {
            self.reducer_body()?
        } else {
            self.body(matches!(k, Tok::Summate | Tok::Product))?
        };
        let span = kw.span().join(body.span);
        let body = Box::new(body);
        let kind = match k {
            Tok::Summate => ExprKind::Summate(x, lo, hi, body),
            Tok::Product => ExprKind::Product(x, lo, hi, body),
            Tok::Integrate => ExprKind::Integrate(x, lo, hi, body),
            _ => ExprKind::Bucket(x, lo, hi, body),
        };
        Ok(Expr::new(kind, span))
    }

    /// `chain s from s0 of n: m`.
    fn chain(&mut self) -> PResult<Expr> {
        let kw = self.bump();
        let s = self.binder("after", "chain")?;
        self.expect(Tok::From, "after the variable of", "chain")?;
        let s0 = Box::new(self.expr()?);
        self.expect(Tok::Of, "after the initial state of", "chain")?;
        let n = Box::new(self.expr()?);
        self.expect(Tok::Colon, "after the length of", "chain")?;
        let body = self.body(false)?;
        let span = kw.span().join(body.span);
        Ok(Expr::new(ExprKind::Chain(s, s0, n, Box::new(body)), span))
    }

    /// `expect x <~ m: e`.
    fn expect_expr(&mut self) -> PResult<Expr> {
        let kw = self.bump();
        let x = self.binder("after", "expect")?;
        self.expect(Tok::Bind, "after the variable of", "expect")?;
        let m = Box::new(self.expr()?);
        self.expect(Tok::Colon, "after the measure of", "expect")?;
        let body = self.body(false)?;
        let span = kw.span().join(body.span);
        Ok(Expr::new(ExprKind::Expect(x, m, Box::new(body)), span))
    }

    // ---- reducers ----

    /// A reducer body after `:`: the rest of the line or an indented reducer below.
    fn reducer_body(&mut self) -> PResult<Expr> {
        let t = self.cur();
        match self.look() {
            Look::Tok(_) if !t.nl => self.reducer(),
            Look::Tok(k) if !closer(k) => self.with_layout(i64::from(t.col), |p| {
                let r = p.reducer()?;
                let t = p.cur();
                match p.look() {
                    Look::Sep => Err(Self::error_at(
                        t.span(),
                        format!(
                            "expected end of block after the reducer, found {}",
                            p.describe(t)
                        ),
                    )),
                    Look::Tok(k) if t.nl && !closer(k) => {
                        Err(Self::error_at(t.span(), "unexpected indentation"))
                    }
                    _ => Ok(r),
                }
            }),
            _ => Err(self.error(format!(
                "expected a reducer after ':', found {}",
                self.found()
            ))),
        }
    }

    fn reducer(&mut self) -> PResult<Expr> {
        self.nested(Self::reducer_inner)
    }

    fn reducer_inner(&mut self) -> PResult<Expr> {
        let t = self.cur();
        let kind = match self.look() {
            Look::Tok(Tok::RAdd) => {
                self.bump();
                // `||` after a reducer is `r_fanout`'s separator, not boolean or.
                let e = self.binary(L_AND)?;
                let span = t.span().join(e.span);
                return Ok(Expr::new(ExprKind::RAdd(Box::new(e)), span));
            }
            Look::Tok(Tok::RNop) => {
                self.bump();
                return Ok(Expr::new(ExprKind::RNop, t.span()));
            }
            Look::Tok(Tok::RIndex) => {
                self.bump();
                let b = self.binder("after", "r_index")?;
                self.expect(Tok::Assign, "after the bucket name of", "r_index")?;
                let n = Box::new(self.expr()?);
                self.expect(Tok::Of, "after the bucket count of", "r_index")?;
                let e = Box::new(self.expr()?);
                self.expect(Tok::Colon, "after the bucket index of", "r_index")?;
                ExprKind::RIndex(b, n, e, Box::new(self.reducer_body()?))
            }
            Look::Tok(Tok::RSplit) => {
                self.bump();
                let c = Box::new(self.expr()?);
                self.expect(Tok::Colon, "after the condition of", "r_split")?;
                let r1 = Box::new(self.reducer_body()?);
                self.else_kw("r_split")?;
                self.expect(Tok::Colon, "after", "else")?;
                ExprKind::RSplit(c, r1, Box::new(self.reducer_body()?))
            }
            Look::Tok(Tok::RFanout) => {
                self.bump();
                let r1 = Box::new(self.reducer()?);
                self.expect(Tok::OrOr, "between the reducers of", "r_fanout")?;
                self.accept_next_line();
                ExprKind::RFanout(r1, Box::new(self.reducer()?))
            }
            Look::Tok(Tok::LParen) => {
                let open = self.bump();
                let col = i64::from(self.cur().col);
                let mut r = self.with_layout(col, Self::reducer)?;
                let close = self.close(open, Tok::RParen, "after the reducer")?;
                r.span = open.span().join(close.span());
                return Ok(r);
            }
            _ => {
                return Err(self.error(format!(
                    "expected a reducer (r_add, r_nop, r_index, r_split or r_fanout), found {}",
                    self.found()
                )))
            }
        };
        let end = self
            .pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(t.end, |x| x.end);
        Ok(Expr::new(
            kind,
            Span {
                start: t.start,
                end,
            },
        ))
    }

    // ---- types and patterns ----

    /// A type; `->` is right-associative.
    fn ty(&mut self, what: &str) -> PResult<TypeExpr> {
        self.nested(|p| {
            let a = p.ty_atom(what)?;
            if !p.at(Tok::Arrow) {
                return Ok(a);
            }
            p.bump();
            let b = p.ty("after '->'")?;
            let span = a.span.join(b.span);
            Ok(TypeExpr {
                kind: TypeExprKind::Fun(Box::new(a), Box::new(b)),
                span,
            })
        })
    }

    fn ty_atom(&mut self, what: &str) -> PResult<TypeExpr> {
        let t = self.cur();
        match self.look() {
            Look::Tok(Tok::Ident | Tok::Array) => {
                self.bump();
                let name = self.text_of(t).to_string();
                if !self.at(Tok::LParen) {
                    return Ok(TypeExpr {
                        kind: TypeExprKind::Name(name),
                        span: t.span(),
                    });
                }
                let open = self.bump();
                let (args, close) = self.with_layout(FREE, |p| {
                    let mut args = Vec::new();
                    loop {
                        args.push(p.ty("as a type argument")?);
                        match p.look() {
                            Look::Tok(Tok::Comma) => {
                                p.bump();
                            }
                            Look::Tok(Tok::RParen) => return Ok((args, p.bump())),
                            Look::Eof => return Err(Self::unclosed(open)),
                            _ => {
                                return Err(p.error(format!(
                                    "expected ',' or ')' after a type argument, found {}",
                                    p.found()
                                )))
                            }
                        }
                    }
                })?;
                Ok(TypeExpr {
                    kind: TypeExprKind::App(name, args),
                    span: t.span().join(close.span()),
                })
            }
            Look::Tok(Tok::LParen) => {
                let open = self.bump();
                let (inner, close) = self.with_layout(FREE, |p| {
                    let inner = p.ty("after '('")?;
                    Ok((inner, p.close(open, Tok::RParen, "after the type")?))
                })?;
                Ok(TypeExpr {
                    kind: inner.kind,
                    span: open.span().join(close.span()),
                })
            }
            _ => Err(self.error(format!("expected a type {what}, found {}", self.found()))),
        }
    }

    /// The patterns of a parenthesised list after its `(` (`open`), and the `)`: a
    /// constructor's fields or a tuple's components.
    fn pattern_items(&mut self, open: Token) -> PResult<(Vec<Pat>, Token)> {
        self.with_layout(FREE, |p| {
            let mut items = Vec::new();
            if p.at(Tok::RParen) {
                return Ok((items, p.bump()));
            }
            loop {
                items.push(p.pat()?);
                match p.look() {
                    Look::Tok(Tok::Comma) => {
                        p.bump();
                    }
                    Look::Tok(Tok::RParen) => return Ok((items, p.bump())),
                    Look::Eof => return Err(Self::unclosed(open)),
                    _ => {
                        return Err(p.error(format!(
                            "expected ',' or ')' in a pattern, found {}",
                            p.found()
                        )))
                    }
                }
            }
        })
    }

    fn pat(&mut self) -> PResult<Pat> {
        self.nested(Self::pat_inner)
    }

    fn pat_inner(&mut self) -> PResult<Pat> {
        let t = self.cur();
        let leaf = |kind| {
            Ok(Pat {
                kind,
                span: t.span(),
            })
        };
        match self.look() {
            Look::Tok(Tok::Ident) => {
                self.bump();
                let name = self.text_of(t);
                match name {
                    "_" => leaf(PatKind::Wild),
                    "true" => leaf(PatKind::Bool(true)),
                    "false" => leaf(PatKind::Bool(false)),
                    // Hakaru writes the constructor with its empty argument list too.
                    "nothing" if p_empty_parens(self) => {
                        self.bump();
                        let close = self.bump();
                        Ok(Pat {
                            kind: PatKind::Nothing,
                            span: t.span().join(close.span()),
                        })
                    }
                    "nothing" => leaf(PatKind::Nothing),
                    "left" | "right" | "just" => {
                        let open = self.expect(Tok::LParen, "after", name)?;
                        let (inner, close) = self.with_layout(FREE, |p| {
                            let inner = p.pat()?;
                            Ok((inner, p.close(open, Tok::RParen, "after the pattern")?))
                        })?;
                        let inner = Box::new(inner);
                        let kind = match name {
                            "left" => PatKind::Left(inner),
                            "right" => PatKind::Right(inner),
                            _ => PatKind::Just(inner),
                        };
                        Ok(Pat {
                            kind,
                            span: t.span().join(close.span()),
                        })
                    }
                    _ if lexer::is_reserved(name) => Err(Self::error_at(
                        t.span(),
                        format!("'{name}' is reserved and cannot be used as a name"),
                    )),
                    // `c(p, ...)`: a constructor of a `data` declaration
                    _ if self.at(Tok::LParen) => {
                        let open = self.bump();
                        let (items, close) = self.pattern_items(open)?;
                        let c = Ident {
                            name: name.to_string(),
                            span: t.span(),
                        };
                        Ok(Pat {
                            kind: PatKind::Ctor(c, items),
                            span: t.span().join(close.span()),
                        })
                    }
                    _ => leaf(PatKind::Var(name.to_string())),
                }
            }
            Look::Tok(Tok::LParen) => {
                let open = self.bump();
                let (mut items, close) = self.pattern_items(open)?;
                let span = open.span().join(close.span());
                let Some(mut acc) = items.pop() else {
                    return Ok(Pat {
                        kind: PatKind::Unit,
                        span,
                    });
                };
                self.room_for(items.len())?;
                while let Some(x) = items.pop() {
                    let s = x.span.join(acc.span);
                    acc = Pat {
                        kind: PatKind::Pair(Box::new(x), Box::new(acc)),
                        span: s,
                    };
                }
                acc.span = span;
                Ok(acc)
            }
            Look::Tok(k) if k.is_keyword() => Err(Self::error_at(
                t.span(),
                format!("expected a pattern, found {}", self.describe(t)),
            )),
            _ => Err(self.error(format!("expected a pattern, found {}", self.found()))),
        }
    }
}

/// Give each statement the rest of its block as its scope, innermost first (a loop, so
/// a block of any length folds without recursion).
fn fold(stmts: Vec<Stmt>, last: Expr) -> Expr {
    let mut acc = last;
    for st in stmts.into_iter().rev() {
        let end = acc.span.end;
        let (kind, start) = match st {
            Stmt::Let(x, e, start) => (ExprKind::Let(x, Box::new(e), Box::new(acc)), start),
            Stmt::Bind(x, e, start) => (ExprKind::Bind(x, Box::new(e), Box::new(acc)), start),
            Stmt::Def {
                name,
                params,
                ret,
                body,
                start,
            } => (
                ExprKind::Def {
                    name,
                    params,
                    ret,
                    body: Box::new(body),
                    rest: Box::new(acc),
                },
                start,
            ),
            Stmt::Import(name, start) => (ExprKind::Import(name, Box::new(acc)), start),
            Stmt::Data(decl, start) => (ExprKind::Data(Box::new(decl), Box::new(acc)), start),
        };
        acc = Expr::new(kind, Span { start, end });
    }
    acc
}

/// `a ^ b ^ c` from its operands and operators: right-associative.
fn fold_pow(mut operands: Vec<Expr>, mut ops: Vec<PowOp>) -> PResult<Expr> {
    let Some(mut acc) = operands.pop() else {
        return Err(Box::new(Diagnostic::new(
            Span::default(),
            "internal error: empty power chain",
        )));
    };
    while let (Some(l), Some(op)) = (operands.pop(), ops.pop()) {
        let span = l.span.join(acc.span);
        acc = Expr::new(ExprKind::Pow(op, Box::new(l), Box::new(acc)), span);
    }
    Ok(acc)
}

/// The exact value of a decimal literal (`2.5e+2`), or `None` if it is too large.
fn decimal(s: &str) -> Option<BigRational> {
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (s.get(..i)?, s.get(i + 1..)?.parse::<i64>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.len() + frac.len() > MAX_LITERAL_DIGITS || !(-MAX_EXPONENT..=MAX_EXPONENT).contains(&exp)
    {
        return None;
    }
    let mut digits = String::with_capacity(int.len() + frac.len());
    digits.push_str(int);
    digits.push_str(frac);
    let num = BigUint::parse_bytes(digits.as_bytes(), 10)?;
    let scale = exp - i64::try_from(frac.len()).ok()?;
    let ten = BigUint::from(10u32);
    let pow = ten.pow(u32::try_from(scale.unsigned_abs()).ok()?);
    let (n, d) = if scale >= 0 {
        (num * pow, BigUint::one())
    } else {
        (num, pow)
    };
    Some(BigRational::new(BigInt::from(n), BigInt::from(d)))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use super::*;
    use crate::diag::LineIndex;

    /// The tree as an s-expression: `(let x e body)`, chains as `(a + b - c)`.
    fn sx(e: &Expr) -> String {
        let mut out = String::new();
        expr_sx(&mut out, e);
        out
    }

    fn list(out: &mut String, head: &str, ids: &[&Ident], es: &[&Expr]) {
        out.push('(');
        out.push_str(head);
        for x in ids {
            out.push(' ');
            out.push_str(&x.name);
        }
        for e in es {
            out.push(' ');
            expr_sx(out, e);
        }
        out.push(')');
    }

    fn ty_sx(t: &TypeExpr) -> String {
        match &t.kind {
            TypeExprKind::Name(n) => n.clone(),
            TypeExprKind::App(n, args) => {
                let args: Vec<String> = args.iter().map(ty_sx).collect();
                format!("{n}({})", args.join(", "))
            }
            TypeExprKind::Fun(a, b) => format!("({} -> {})", ty_sx(a), ty_sx(b)),
        }
    }

    fn pat_sx(p: &Pat) -> String {
        match &p.kind {
            PatKind::Wild => "_".into(),
            PatKind::Var(x) => x.clone(),
            PatKind::Unit => "()".into(),
            PatKind::Bool(b) => b.to_string(),
            PatKind::Pair(a, b) => format!("(pair {} {})", pat_sx(a), pat_sx(b)),
            PatKind::Left(a) => format!("(left {})", pat_sx(a)),
            PatKind::Right(a) => format!("(right {})", pat_sx(a)),
            PatKind::Just(a) => format!("(just {})", pat_sx(a)),
            PatKind::Nothing => "nothing".into(),
            PatKind::Ctor(c, ps) => {
                let ps: Vec<String> = ps.iter().map(pat_sx).collect();
                format!("({} {})", c.name, ps.join(" "))
            }
        }
    }

    fn chain_op(op: ChainOp) -> &'static str {
        match op {
            ChainOp::Add => "+",
            ChainOp::Sub => "-",
            ChainOp::Mul => "*",
            ChainOp::Div => "/",
            ChainOp::And => "&&",
            ChainOp::Or => "||",
            ChainOp::Superpose => "<|>",
        }
    }

    fn expr_sx(out: &mut String, e: &Expr) {
        use ExprKind::*;
        match &e.kind {
            Var(x) => out.push_str(x),
            Nat(n) => write!(out, "{n}").unwrap_or(()),
            Decimal(r) => write!(out, "#{r}").unwrap_or(()),
            Infinity => out.push('∞'),
            Unit => out.push_str("()"),
            Pair(a, b) => list(out, "pair", &[], &[a, b]),
            ArrayLit(xs) => {
                out.push('[');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    expr_sx(out, x);
                }
                out.push(']');
            }
            Call(f, args) => {
                let mut es: Vec<&Expr> = vec![f];
                es.extend(args.iter());
                list(out, "call", &[], &es);
            }
            Index(a, i) => list(out, "idx", &[], &[a, i]),
            OpChain(first, rest) => {
                out.push('(');
                expr_sx(out, first);
                for (op, x) in rest {
                    write!(out, " {} ", chain_op(*op)).unwrap_or(());
                    expr_sx(out, x);
                }
                out.push(')');
            }
            Pow(op, a, b) => {
                let head = if *op == PowOp::Pow { "^" } else { "**" };
                list(out, head, &[], &[a, b]);
            }
            Neg(a) => list(out, "neg", &[], &[a]),
            Plus(a) => list(out, "pos", &[], &[a]),
            Compare(op, a, b) => {
                let head = match op {
                    CmpOp::Lt => "<",
                    CmpOp::Gt => ">",
                    CmpOp::Le => "<=",
                    CmpOp::Ge => ">=",
                    CmpOp::Eq => "==",
                    CmpOp::Ne => "/=",
                };
                list(out, head, &[], &[a, b]);
            }
            Ann(a, t) => {
                out.push_str("(ann ");
                expr_sx(out, a);
                write!(out, " {})", ty_sx(t)).unwrap_or(());
            }
            If(c, a, b) => list(out, "if", &[], &[c, a, b]),
            Match(s, branches) => {
                out.push_str("(match ");
                expr_sx(out, s);
                for (p, b) in branches {
                    write!(out, " ({} ", pat_sx(p)).unwrap_or(());
                    expr_sx(out, b);
                    out.push(')');
                }
                out.push(')');
            }
            Let(x, a, b) => list(out, "let", &[x], &[a, b]),
            Bind(x, a, b) => list(out, "bind", &[x], &[a, b]),
            Def {
                name,
                params,
                ret,
                body,
                rest,
            } => {
                write!(out, "(def {} (", name.name).unwrap_or(());
                for (i, (x, t)) in params.iter().enumerate() {
                    let sep = if i > 0 { " " } else { "" };
                    write!(out, "{sep}({} {})", x.name, ty_sx(t)).unwrap_or(());
                }
                let ret = ret.as_ref().map_or("_".to_string(), ty_sx);
                write!(out, ") {ret} ").unwrap_or(());
                expr_sx(out, body);
                out.push(' ');
                expr_sx(out, rest);
                out.push(')');
            }
            Import(x, rest) => {
                write!(out, "(import {} ", x.name).unwrap_or(());
                expr_sx(out, rest);
                out.push(')');
            }
            Data(d, rest) => {
                write!(out, "(data {}", d.name.name).unwrap_or(());
                for p in &d.params {
                    write!(out, " '{}", p.name).unwrap_or(());
                }
                for c in &d.ctors {
                    let fs: Vec<String> = c.fields.iter().map(ty_sx).collect();
                    write!(
                        out,
                        " ({}{}{})",
                        c.name.name,
                        if fs.is_empty() { "" } else { " " },
                        fs.join(" ")
                    )
                    .unwrap_or(());
                }
                out.push(' ');
                expr_sx(out, rest);
                out.push(')');
            }
            Lam(x, t, b) => {
                write!(out, "(fn {} {} ", x.name, ty_sx(t)).unwrap_or(());
                expr_sx(out, b);
                out.push(')');
            }
            Return(a) => list(out, "return", &[], &[a]),
            Array(i, n, b) => list(out, "array", &[i], &[n, b]),
            Plate(i, n, b) => list(out, "plate", &[i], &[n, b]),
            Summate(i, a, b, c) => list(out, "summate", &[i], &[a, b, c]),
            Product(i, a, b, c) => list(out, "product", &[i], &[a, b, c]),
            Integrate(i, a, b, c) => list(out, "integrate", &[i], &[a, b, c]),
            Chain(i, a, b, c) => list(out, "chain", &[i], &[a, b, c]),
            Bucket(i, a, b, c) => list(out, "bucket", &[i], &[a, b, c]),
            RAdd(a) => list(out, "r_add", &[], &[a]),
            RNop => out.push_str("r_nop"),
            RIndex(b, n, i, r) => list(out, "r_index", &[b], &[n, i, r]),
            RSplit(c, a, b) => list(out, "r_split", &[], &[c, a, b]),
            RFanout(a, b) => list(out, "r_fanout", &[], &[a, b]),
            Expect(x, m, b) => list(out, "expect", &[x], &[m, b]),
        }
    }

    /// The parse of `input` as an s-expression, or `error L:C: message`.
    fn show(input: &str) -> String {
        match parse(input) {
            Ok(e) => sx(&e),
            Err(ds) => {
                let d = &ds[0];
                let (l, c) = LineIndex::new(input).line_col(input, d.span.start as usize);
                format!("error {l}:{c}: {}", d.message)
            }
        }
    }

    fn check(input: &str, expect: &str) {
        assert_eq!(show(input), expect, "parsing {input:?}");
    }

    #[test]
    fn atoms_and_literals() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("x", "x"),
            ("θ", "θ"),
            ("x'", "x'"),
            ("42", "42"),
            ("0.5", "#1/2"),
            ("1.0", "#1"),
            ("5e-9", "#1/200000000"),
            ("1e3", "#1000"),
            ("2.5e+2", "#250"),
            ("0.125E1", "#5/4"),
            ("∞", "∞"),
            ("inf", "∞"),
            ("infinity()", "∞"),
            ("infinity", "infinity"),
            ("-∞", "(neg ∞)"),
            ("()", "()"),
            ("(x)", "x"),
            ("((x))", "x"),
            ("(a, b)", "(pair a b)"),
            ("(a, b, c)", "(pair a (pair b c))"),
            ("[]", "[]"),
            ("[a, b]", "[a b]"),
            ("[true, false][i]", "(idx [true false] i)"),
            ("a[i][j]", "(idx (idx a i) j)"),
            ("f()", "(call f)"),
            ("f(x, y)", "(call f x y)"),
            ("f(x)(y)", "(call (call f x) y)"),
            ("size(a)[0]", "(idx (call size a) 0)"),
            ("reject", "reject"),
            ("dirac(x)", "(call dirac x)"),
            ("observe(normal(x, 1), t[i])", "(call observe (call normal x 1) (idx t i))"),
        ];
        for (i, e) in cases {
            check(i, e);
        }
    }

    #[test]
    fn precedence() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("-x^2", "(neg (^ x 2))"),
            ("a - b - c", "(a - b - c)"),
            ("a + b * c - d", "(a + (b * c) - d)"),
            ("1/2*x", "(1 / 2 * x)"),
            ("-1/2", "(neg (1 / 2))"),
            ("+0/1", "(pos (0 / 1))"),
            ("x * -3", "(x * (neg 3))"),
            ("x * -a * b", "(x * (neg a) * b)"),
            ("a - -b", "(a - (neg b))"),
            ("-a + b", "((neg a) + b)"),
            ("- -a", "(neg (neg a))"),
            ("a ^ b ^ c", "(^ a (^ b c))"),
            ("a ** b ^ c", "(** a (^ b c))"),
            ("2 ^ -1", "(^ 2 (neg 1))"),
            ("a * b ^ c", "(a * (^ b c))"),
            ("(a + b) * c", "((a + b) * c)"),
            ("(a + b) + c", "((a + b) + c)"),
            ("a < b && c || d", "(((< a b) && c) || d)"),
            ("a || b && c", "(a || (b && c))"),
            ("a == b + 1", "(== a (b + 1))"),
            ("a /= b", "(/= a b)"),
            ("a <= b", "(<= a b)"),
            ("a >= b", "(>= a b)"),
            ("3 < x && x < 7", "((< 3 x) && (< x 7))"),
            ("m1 <|> m2 <|> m3", "(m1 <|> m2 <|> m3)"),
            ("a || b <|> c", "((a || b) <|> c)"),
            ("reject. measure(nat)", "(ann reject measure(nat))"),
            ("reject.measure(nat)", "(ann reject measure(nat))"),
            ("x. real + 1 < 2", "error 1:9: expected an operator or end of line, found '+'"),
            ("a + b. real", "(ann (a + b) real)"),
            ("a + b. real < c", "(< (ann (a + b) real) c)"),
            ("1. nat", "(ann 1 nat)"),
            ("x. (real)", "(ann x real)"),
            ("x. array(real)", "(ann x array(real))"),
            ("f. real -> real", "(ann f (real -> real))"),
            ("f. nat -> real -> prob", "(ann f (nat -> (real -> prob)))"),
            ("f. (nat -> real) -> prob", "(ann f ((nat -> real) -> prob))"),
            ("x. pair(real, either(unit, bool))", "(ann x pair(real, either(unit, bool)))"),
            ("x. maybe(int)", "(ann x maybe(int))"),
            ("reject. measure(nat) <|> m", "((ann reject measure(nat)) <|> m)"),
            ("return x <|> return y", "((return x) <|> (return y))"),
            ("return x + 1", "(return (x + 1))"),
            ("return a && b", "(return (a && b))"),
            ("-f(x)[i]", "(neg (idx (call f x) i))"),
        ];
        for (i, e) in cases {
            check(i, e);
        }
    }

    #[test]
    fn constructs() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("x = 1\nx", "(let x 1 x)"),
            ("x <~ m\nreturn x", "(bind x m (return x))"),
            ("_ <~ m\nreturn ()", "(bind _ m (return ()))"),
            ("def f(x real) real: x + 1\nf(2)", "(def f ((x real)) real (x + 1) (call f 2))"),
            ("def f(x real, y prob):\n  x\nf", "(def f ((x real) (y prob)) _ x f)"),
            ("def f(x array(real)) measure(real):\n  normal(x[0], 1)\nf", "(def f ((x array(real))) measure(real) (call normal (idx x 0) 1) f)"),
            ("fn x real: x", "(fn x real x)"),
            ("fn f real -> real: f(1)", "(fn f (real -> real) (call f 1))"),
            ("fn x real: fn y prob: x", "(fn x real (fn y prob x))"),
            ("if c: a else: b", "(if c a b)"),
            ("if a < b: 1 else: if c: 2 else: 3", "(if (< a b) 1 (if c 2 3))"),
            ("match p: (a, b): a", "(match p ((pair a b) a))"),
            ("match e:\n  true: 1\n  false: 0", "(match e (true 1) (false 0))"),
            ("match e:\n  left(x): x\n  right(_): 0", "(match e ((left x) x) ((right _) 0))"),
            ("match e:\n  just(x): x\n  nothing: 0", "(match e ((just x) x) (nothing 0))"),
            ("match e:\n  (): 1", "(match e (() 1))"),
            ("match e:\n  ((a, b), left((c, _))): a", "(match e ((pair (pair a b) (left (pair c _))) a))"),
            ("match e:\n  (a, b, c): a", "(match e ((pair a (pair b c)) a))"),
            ("match e:\n  ((x)): x", "(match e (x x))"),
            ("array i of n: i", "(array i n i)"),
            ("plate i of n: normal(0, 1)", "(plate i n (call normal 0 1))"),
            ("plate _ of k: return 1", "(plate _ k (return 1))"),
            ("summate i from 0 to size(a): a[i]", "(summate i 0 (call size a) (idx a i))"),
            ("product i from 0 to n: x", "(product i 0 n x)"),
            ("integrate x from -∞ to ∞: f(x)", "(integrate x (neg ∞) ∞ (call f x))"),
            ("chain s from s0 of n: kernel(s)", "(chain s s0 n (call kernel s))"),
            ("return e", "(return e)"),
            ("expect x <~ normal(0, 1): x * x", "(expect x (call normal 0 1) (x * x))"),
            ("bucket j from 0 to n: r_nop", "(bucket j 0 n r_nop)"),
            ("bucket j from 0 to n: r_add 1", "(bucket j 0 n (r_add 1))"),
            ("bucket j from 0 to n: r_add a && b", "(bucket j 0 n (r_add (a && b)))"),
            ("bucket j from 0 to size(y): r_index i = m of y[j]: r_fanout r_add s[j] || r_add 1",
             "(bucket j 0 (call size y) (r_index i m (idx y j) (r_fanout (r_add (idx s j)) (r_add 1))))"),
            ("bucket j from 0 to n: r_split j < 3: r_add 1 else: r_nop",
             "(bucket j 0 n (r_split (< j 3) (r_add 1) r_nop))"),
            ("bucket j from 0 to n: r_fanout (r_add 1) || (r_fanout r_nop || r_add a || b)",
             "error 1:72: expected ')' after the reducer, found '||'"),
            ("bucket j from 0 to n: r_fanout (r_add 1) || (r_fanout r_nop || r_add (a || b))",
             "(bucket j 0 n (r_fanout (r_add 1) (r_fanout r_nop (r_add (a || b)))))"),
            ("bucket j from 0 to n: r_fanout r_fanout r_nop || r_nop || r_add 2",
             "(bucket j 0 n (r_fanout (r_fanout r_nop r_nop) (r_add 2)))"),
            ("bucket j from 0 to n:\n  r_split c:\n    r_add 1\n  else:\n    r_nop",
             "(bucket j 0 n (r_split c (r_add 1) r_nop))"),
            ("weight(if 3 < x && x < 7: 1/2 else: 0, return x)",
             "(call weight (if ((< 3 x) && (< x 7)) (1 / 2) 0) (return x))"),
        ];
        for (i, e) in cases {
            check(i, e);
        }
    }

    #[test]
    fn layout() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            // Hakaru's own examples.
            ("def bern(p prob):\n    i <~ categorical([p, real2prob(1 - p)])\n    return [true, false][i]\n\nfn mu real:\nx <~ normal(mu, 1)\ny <~ normal(x, 1)\nz <~ normal(x, 1)\nreturn [y, z]\n",
             "(def bern ((p prob)) _ (bind i (call categorical [p (call real2prob (1 - p))]) (return (idx [true false] i))) (fn mu real (bind x (call normal mu 1) (bind y (call normal x 1) (bind z (call normal x 1) (return [y z]))))))"),
            ("fn n nat:\nfn t array(real):\nx <~ normal(0, 1)\nys <~ plate i of n: observe(normal(x, 1), t[i])\nreturn x\n",
             "(fn n nat (fn t array(real) (bind x (call normal 0 1) (bind ys (plate i n (call observe (call normal x 1) (idx t i))) (return x)))))"),
            ("x <~ lebesgue(-∞, ∞)\nweight(if 3 < x && x < 7: 1/2 else: 0, return x)\n",
             "(bind x (call lebesgue (neg ∞) ∞) (call weight (if ((< 3 x) && (< x 7)) (1 / 2) 0) (return x)))"),
            ("match p:\n  (a, b):\n    if a: return b\n    else: reject. measure(real)\n",
             "(match p ((pair a b) (if a (return b) (ann reject measure(real)))))"),
            ("weight(1/2,\n       p <~ beta(1, 2)\n       return (p, false)) <|>\nweight(1/2, p <~ beta(2, 1)\n            return (p, true))\n",
             "((call weight (1 / 2) (bind p (call beta 1 2) (return (pair p false)))) <|> (call weight (1 / 2) (bind p (call beta 2 1) (return (pair p true)))))"),
            // Block bodies and inline bodies.
            ("x <~ plate i of n:\n       normal(0, 1)\nreturn x", "(bind x (plate i n (call normal 0 1)) (return x))"),
            ("fn x real:\n  y <~ normal(x, 1)\n  return y", "(fn x real (bind y (call normal x 1) (return y)))"),
            ("fn x real: y <~ normal(x, 1)\n           return y", "(fn x real (bind y (call normal x 1) (return y)))"),
            // else on the next line at the if's column, or on the same line.
            ("if c:\n  a\nelse:\n  b", "(if c a b)"),
            ("if c: a\nelse: b", "(if c a b)"),
            ("y = if c: a\n    else: b\ny", "(let y (if c a b) y)"),
            ("if a:\n  if b: x\n  else: y\nelse: z", "(if a (if b x y) z)"),
            ("if c:\n  x <~ m\n  return x\nelse:\n  reject", "(if c (bind x m (return x)) reject)"),
            // Continuation lines.
            ("x = a +\n  b\nx", "(let x (a + b) x)"),
            ("x = a\n  + b\nx", "(let x (a + b) x)"),
            ("x = a +\nb\nx", "(let x (a + b) x)"),
            ("f(a,\nb)", "(call f a b)"),
            ("x = f(a +\n  b)\nx", "(let x (call f (a + b)) x)"),
            ("weight(1/2,\n       p <~ beta(1, 2)\n       return p\n)", "(call weight (1 / 2) (bind p (call beta 1 2) (return p)))"),
            ("summate i from 0 to n:\n  summate j from 0 to m:\n    a[i][j]", "(summate i 0 n (summate j 0 m (idx (idx a i) j)))"),
            ("match b:\n  true:\n    x <~ m\n    return x\n  false: reject", "(match b (true (bind x m (return x))) (false reject))"),
            ("match b: true: 1\n         false: 0", "(match b (true 1) (false 0))"),
            ("def f(x real,\n  y real):\n  x\nf", "(def f ((x real) (y real)) _ x f)"),
            ("x. pair(real,\nreal)", "(ann x pair(real, real))"),
            // Comments, blank lines, CRLF, tabs, BOM.
            ("# header\nx <~ m # bind\n\n   # indented comment\nreturn x # done\n", "(bind x m (return x))"),
            ("x <~ m\r\nreturn x\r\n", "(bind x m (return x))"),
            ("fn x real:\r\n  x\r\n", "(fn x real x)"),
            ("if c:\n\ta\nelse:\n        b", "(if c a b)"),
            ("\u{feff}x <~ m\nreturn x", "(bind x m (return x))"),
            ("  x <~ m\n  return x", "(bind x m (return x))"),
        ];
        for (i, e) in cases {
            check(i, e);
        }
    }

    /// `import` lines and `data` declarations (issue 14, section 1), and constructor
    /// patterns.
    #[test]
    fn imports_and_data() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("import a\nimport b\nx", "(import a (import b x))"),
            ("data bit(): zero one\nzero", "(data bit (zero) (one) zero)"),
            ("data bit: zero one\nzero", "(data bit (zero) (one) zero)"),
            ("data shape():\n    circle(real)\n    rect(real, real)\n    point\npoint",
             "(data shape (circle real) (rect real real) (point) point)"),
            ("data box(a): full(a) empty\n1", "(data box 'a (full a) (empty) 1)"),
            ("data t(): c(array(real), nat -> prob)\n1", "(data t (c array(real) (nat -> prob)) 1)"),
            ("import m\ndata t(): a b\ndef f(x t) t: x\nf(a)",
             "(import m (data t (a) (b) (def f ((x t)) t x (call f a))))"),
            ("match s:\n  circle(r): r\n  rect(w, (h, _)): w\n  point: 0",
             "(match s ((circle r) r) ((rect w (pair h _)) w) (point 0))"),
            ("match s:\ncircle(r): r\npoint(): 0", "(match s ((circle r) r) ((point ) 0))"),
        ];
        for (i, e) in cases {
            check(i, e);
        }
        // a module may end after its statements
        let m = parse_module("def f(x real) real: x\ny = 2\n").map(|e| sx(&e));
        assert_eq!(
            m.as_deref().ok(),
            Some("(def f ((x real)) real x (let y 2 ()))")
        );
        assert!(parse("def f(x real) real: x\n").is_err());
    }

    /// The layouts of issue 14 (section 1): Hakaru's printed programs.
    #[test]
    fn hakaru_printed_layouts() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            // A line that begins with a binary operator continues the expression before it.
            ("x = a\n* b\nx", "(let x (a * b) x)"),
            ("x = a\n/ b\nx", "(let x (a / b) x)"),
            ("x = a\n&& b\n|| c\nx", "(let x ((a && b) || c) x)"),
            ("x = a\n< b\nx", "(let x (< a b) x)"),
            ("x = a\n== b\nx", "(let x (== a b) x)"),
            ("x = m\n<|> n\nx", "(let x (m <|> n) x)"),
            ("fn x real:\n    weight(x,\n           m)\n* 2", "(fn x real ((call weight x m) * 2))"),
            ("fn x real:\nx\n+ 1\n- y", "(fn x real (x + 1 - y))"),
            ("a\n+ b\n* c", "(a + (b * c))"),
            ("a\n  - b", "(a - b)"),
            // `+` and `-` at the block's column after a statement start the final expression.
            ("x = 3\n-x", "(let x 3 (neg x))"),
            ("x = 3\n+x", "(let x 3 (pos x))"),
            // an operator line left of an inner block continues the innermost expression
            ("y = if c:\n      a\n    else:\n      b\n  * 2\ny", "(let y (if c a (b * 2)) y)"),
            // A header's body at the column of its head (flush left).
            ("def f(x real) real:\nx + 1\nf(2)", "(def f ((x real)) real (x + 1) (call f 2))"),
            ("def f(x real):\ny = x * 2\ny\nf(2)", "(def f ((x real)) _ (let y (x * 2) y) (call f 2))"),
            ("fn a real:\nfn b real:\na\n+ b", "(fn a real (fn b real (a + b)))"),
            ("f = fn x real:\nx * x\nf(3)", "(let f (fn x real (x * x)) (call f 3))"),
            ("if c:\na\nelse:\nb", "(if c a b)"),
            ("x = if c:\na\nelse:\nb\nx", "(let x (if c a b) x)"),
            ("summate i from 0 to n:\na[i]", "(summate i 0 n (idx a i))"),
            ("product i from 0 to n:\nsummate j from 0 to m:\na[i][j]", "(product i 0 n (summate j 0 m (idx (idx a i) j)))"),
            ("s = summate i from 0 to n:\na[i]\ns + 1", "(let s (summate i 0 n (idx a i)) (s + 1))"),
            // A binding whose right-hand side is a block.
            ("x2 <~ x1 <~ normal(0, 1)\n      return x1 * 2\nreturn x2", "(bind x2 (bind x1 (call normal 0 1) (return (x1 * 2))) (return x2))"),
            ("x5 = x2 = fn x0 real: x0\n     x2(3)\nx5", "(let x5 (let x2 (fn x0 real x0) (call x2 3)) x5)"),
            ("x3 <~ x2 <~ x1 <~ m\n            return x1\n      return x2\nreturn x3", "(bind x3 (bind x2 (bind x1 m (return x1)) (return x2)) (return x3))"),
            // `match` with its scrutinee or branches on the next lines, flush left.
            ("match\n  p:\n  (a, b): a", "(match p ((pair a b) a))"),
            ("match\np:\n(r3, r1): r3", "(match p ((pair r3 r1) r3))"),
            ("match p:\n(r3, r1):\nr3 + r1", "(match p ((pair r3 r1) (r3 + r1)))"),
            ("y = match m:\njust(x): x\nnothing(): 0\ny", "(let y (match m ((just x) x) (nothing 0)) y)"),
            ("y = match e:\nleft(a): a\nright(b): b\nz = y\nz", "(let y (match e ((left a) a) ((right b) b)) (let z y z))"),
            ("y = match b:\ntrue: 1\nfalse: 0\nreturn y", "(let y (match b (true 1) (false 0)) (return y))"),
            // `def f():` names a value; `f()` calls it.
            ("def f():\n  3\nf()", "(def f () _ 3 (call f))"),
            ("def f() real: 1\nf() + 1", "(def f () real 1 ((call f) + 1))"),
        ];
        for (i, e) in cases {
            check(i, e);
        }
    }

    #[test]
    fn errors() {
        let deep_parens = format!("{}x{}", "(".repeat(20_000), ")".repeat(20_000));
        let deep_pow = format!("x{}", "^x".repeat(1001));
        let deep_neg = format!("{}x", "-".repeat(5000));
        let deep_if = "if c: ".repeat(5000) + "x";
        let deep_fn = "fn x real:\n".repeat(2000) + "x";
        let deep_type = format!("x. {}real{}", "array(".repeat(2000), ")".repeat(2000));
        let deep_pat = format!(
            "match e:\n  {}x{}: 1",
            "left(".repeat(2000),
            ")".repeat(2000)
        );
        let long_tuple = format!("({})", vec!["x"; 2000].join(", "));
        let long_index = format!("a{}", "[0]".repeat(2000));
        let long_ann = format!("x{}", ". real".repeat(2000));
        #[rustfmt::skip]
        let cases: Vec<(&str, &str)> = vec![
            ("", "error 1:1: empty program"),
            ("# nothing here\n\n", "error 1:1: empty program"),
            ("array i of n\n  i", "error 2:3: expected ':' after the bound of 'array', found identifier 'i'"),
            ("x = array i of n\ny", "error 1:17: expected ':' after the bound of 'array', found newline"),
            ("x <~ normal(0, 1)\n  y <~ normal(x, 1)\nreturn y", "error 2:3: unexpected indentation"),
            ("x <~ m\nreturn x\n  y", "error 3:3: unexpected indentation"),
            ("f(x, y", "error 1:2: unclosed '('"),
            ("x = f(a\ny = 3\ny", "error 1:6: unclosed '('"),
            ("[1, 2", "error 1:1: unclosed '['"),
            ("a[1", "error 1:2: unclosed '['"),
            ("f(x))", "error 1:5: unmatched ')'"),
            ("if c: a", "error 1:8: expected 'else' after the then-branch of 'if', found end of file"),
            ("if c: a\nx", "error 1:8: expected 'else' after the then-branch of 'if', found newline"),
            ("else: 3", "error 1:1: 'else' without 'if'"),
            ("x <~ m\nelse: 3", "error 2:1: 'else' without 'if'"),
            ("x = 1 +", "error 1:8: expected an expression after '+', found end of file"),
            ("x = 1 *\ny = 2\ny", "error 1:8: expected an expression after '*', found newline"),
            ("x <~\nreturn x", "error 1:5: expected an expression after '<~', found newline"),
            ("if = 3\nif", "error 1:1: 'if' is reserved and cannot be used as a name"),
            ("observe <~ m\nreturn 1", "error 1:1: 'observe' is reserved and cannot be used as a name"),
            ("fn return real: 1", "error 1:4: 'return' is reserved and cannot be used as a name"),
            ("array true of 3: 1", "error 1:7: 'true' is reserved and cannot be used as a name"),
            ("match e:\n  dirac: 1", "error 2:3: 'dirac' is reserved and cannot be used as a name"),
            ("x = 1 @ 2\nx", "error 1:7: unknown character '@'"),
            ("x <~ m\nreturn x\ny <~ m", "error 3:1: expected end of block after its final expression, found identifier 'y'"),
            ("x <~ m", "error 1:7: expected an expression on the line after the statement, found end of file"),
            ("x <~ m y\nreturn x", "error 1:8: expected newline after the statement, found identifier 'y'"),
            ("def f(x) real: 1\nf", "error 1:8: expected a type after the parameter name, found ')'"),
            ("def f(x real)\nx", "error 1:14: expected ':' after the parameters of 'def', found newline"),
            ("def f(x real)\n  x\nf", "error 2:4: expected ':' after the return type of 'def', found newline"),
            ("fn x: x", "error 1:5: expected a type for the parameter of 'fn', found ':'"),
            ("array i of n:\nx", "error 2:1: expected an indented block after ':', found identifier 'x' at the same indentation"),
            ("fn x real:\n  match e:\ntrue: 1", "error 3:1: expected indented branches after 'match', found identifier 'true' indented too little"),
            ("match e:\nx + 1", "error 2:1: expected indented branches after 'match', found identifier 'x' indented too little"),
            ("match e:\n  3: 1", "error 2:3: expected a pattern, found number '3'"),
            ("match e:\n  left x: 1", "error 2:8: expected '(' after 'left', found identifier 'x'"),
            ("a < b < c", "error 1:7: expected '&&' between comparisons, found '<'"),
            ("x = r_nop\nx", "error 1:5: reducer 'r_nop' is only allowed in the body of 'bucket'"),
            ("bucket j from 0 to n: x", "error 1:23: expected a reducer (r_add, r_nop, r_index, r_split or r_fanout), found identifier 'x'"),
            ("bucket j from 0 to n: r_fanout r_nop r_nop", "error 1:38: expected '||' between the reducers of 'r_fanout', found 'r_nop'"),
            ("summate i from 0 n: i", "error 1:18: expected 'to' after the lower bound of 'summate', found identifier 'n'"),
            ("import foo", "error 1:11: expected an expression on the line after the statement, found end of file"),
            ("1 + import foo", "error 1:5: 'import' is a statement: it needs a line of its own and something after it"),
            ("import if\n1", "error 1:8: 'if' is reserved and cannot be used as a name"),
            ("data t:\n1", "error 1:8: expected the constructors of 't' after ':', found newline"),
            ("data t() a b\n1", "error 1:10: expected ':' after the name of the type in 'data', found identifier 'a'"),
            ("data t(): a(real b\n1", "error 1:18: expected ',' or ')' after a field type, found identifier 'b'"),
            ("data t(): nothing\n1", "error 1:11: 'nothing' is reserved and cannot be used as a name"),
            ("(a b)", "error 1:4: expected ',' or ')' after an element, found identifier 'b'"),
            ("f(a,)", "error 1:5: expected an expression after ',', found ')'"),
            ("x y", "error 1:3: expected an operator or end of line, found identifier 'y'"),
            ("  x = 1\nx", "error 2:1: expected an expression after the statement, found a line indented less than the start of its block"),
            ("  x\ny", "error 2:1: line is indented less than the start of its block"),
            ("x = 1e99999\nx", "error 1:5: number literal too large"),
            (deep_parens.as_str(), "error 1:1001: expression nests too deeply (limit 1000)"),
            (deep_pow.as_str(), "error 1:2002: expression nests too deeply (limit 1000)"),
            (deep_neg.as_str(), "error 1:1001: expression nests too deeply (limit 1000)"),
            (deep_if.as_str(), "error 1:6001: expression nests too deeply (limit 1000)"),
            (deep_fn.as_str(), "error 1000:6: expression nests too deeply (limit 1000)"),
            (deep_type.as_str(), "error 1:6004: expression nests too deeply (limit 1000)"),
            (deep_pat.as_str(), "error 2:4998: expression nests too deeply (limit 1000)"),
            (long_tuple.as_str(), "error 1:1: expression nests too deeply (limit 1000)"),
            (long_index.as_str(), "error 1:3002: expression nests too deeply (limit 1000)"),
            (long_ann.as_str(), "error 1:6002: expression nests too deeply (limit 1000)"),
        ];
        let mut bad = Vec::new();
        for (i, e) in cases {
            let shown = show(i);
            if shown != e {
                let head: String = i.chars().take(40).collect();
                bad.push(format!("{head:?}\n   got: {shown}\n  want: {e}"));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    /// A program of `n` statements (binds and lets of arithmetic), ending in `return`.
    fn long_program(n: usize) -> String {
        let mut text = String::from("fn mu real:\nx0 <~ normal(mu, 1)\n");
        for i in 1..n {
            if i % 2 == 0 {
                writeln!(text, "x{i} <~ normal(x{} * 2 + -3 / (1 + x0^2), 1)", i - 1).unwrap_or(());
            } else {
                writeln!(text, "x{i} = x{} - 0.5 * (x{} + 1e-3)", i - 1, i - 1).unwrap_or(());
            }
        }
        writeln!(text, "return x{}", n - 1).unwrap_or(());
        text
    }

    /// The statements along the spine of a block, counted without recursion.
    fn count_statements(mut e: &Expr) -> usize {
        let mut n = 0;
        loop {
            match &e.kind {
                ExprKind::Lam(_, _, b) => e = b,
                ExprKind::Let(_, _, b) | ExprKind::Bind(_, _, b) => {
                    n += 1;
                    e = b;
                }
                _ => return n,
            }
        }
    }

    #[test]
    fn ten_thousand_statements_parse_flat() {
        // how fast is for the benchmarks (benches/frontend.rs); here, that it parses
        let text = long_program(10_000);
        let e = parse(&text).unwrap_or_else(|d| panic!("{:?}", d[0]));
        assert_eq!(count_statements(&e), 10_000);
    }

    #[test]
    fn hundred_thousand_term_line_is_one_flat_chain() {
        let mut text = String::from("x = 1");
        for i in 0..100_000 {
            let op = ["+", "-", "+", "-"][i % 4];
            write!(text, " {op} y{i}").unwrap_or(());
        }
        text.push_str("\nx\n");
        let e = parse(&text).unwrap_or_else(|d| panic!("{:?}", d[0]));
        let ExprKind::Let(_, rhs, _) = &e.kind else {
            panic!("not a let: {}", sx(&e))
        };
        let ExprKind::OpChain(first, rest) = &rhs.kind else {
            panic!("not a chain")
        };
        assert_eq!(
            **first,
            Expr::new(ExprKind::Nat(1u32.into()), Span::new(4, 5))
        );
        assert_eq!(rest.len(), 100_000);
        assert!(rest.iter().all(|(_, e)| matches!(e.kind, ExprKind::Var(_))));
        assert_eq!(rest[1].0, ChainOp::Sub);
    }

    #[test]
    fn spans_are_byte_offsets_into_the_original_text() {
        // The BOM (3 bytes) and the two-byte θ shift byte offsets, not columns.
        let text = "\u{feff}θ <~ m\r\nreturn θ + 1";
        let e = parse(text).unwrap_or_else(|d| panic!("{:?}", d[0]));
        let ExprKind::Bind(x, m, body) = &e.kind else {
            panic!("{}", sx(&e))
        };
        assert_eq!((x.span.start, x.span.end), (3, 5));
        assert_eq!(&text[m.span.range()], "m");
        assert_eq!(&text[body.span.range()], "return θ + 1");
        assert_eq!(&text[e.span.range()], &text[3..]);
        let ExprKind::Return(sum) = &body.kind else {
            panic!()
        };
        assert_eq!(&text[sum.span.range()], "θ + 1");
        let grouped = parse("f((a + b), [c])").unwrap_or_else(|d| panic!("{:?}", d[0]));
        let ExprKind::Call(_, args) = &grouped.kind else {
            panic!()
        };
        assert_eq!((args[0].span.start, args[0].span.end), (2, 9));
        assert_eq!((args[1].span.start, args[1].span.end), (11, 14));
    }

    #[test]
    fn decode_checks_utf8() {
        assert_eq!(super::super::decode(b"x <~ m"), Ok("x <~ m"));
        assert_eq!(super::super::decode(b"\xef\xbb\xbfx"), Ok("\u{feff}x"));
        let err = super::super::decode(b"x = 1\n\xff\xfe").err();
        let err = err.map(|d| (d.message, d.span.start, d.span.end));
        assert_eq!(err, Some(("file is not valid UTF-8".to_string(), 6, 7)));
        let err = super::super::decode("θ".as_bytes().get(..1).unwrap_or(&[])).err();
        assert_eq!(err.map(|d| d.span.start), Some(0));
    }

    /// Every diagnostic points inside the text, on character boundaries.
    fn spans_are_sane(text: &str) -> Result<(), String> {
        if let Err(ds) = parse(text) {
            for d in &ds {
                let (a, b) = (d.span.start as usize, d.span.end as usize);
                if a > b || b > text.len() || !text.is_char_boundary(a) || !text.is_char_boundary(b)
                {
                    return Err(format!("bad span {a}..{b} for {:?} in {text:?}", d.message));
                }
                if d.message.is_empty() || d.message.contains('\n') {
                    return Err(format!("bad message {:?}", d.message));
                }
            }
        }
        Ok(())
    }

    const VOCAB: &[&str] = &[
        "x", "y", "θ", "1", "0.5", "1e3", "∞", "(", ")", "[", "]", ",", ":", "=", "<~", "+", "-",
        "*", "/", "^", "**", "<", "==", "&&", "||", "<|>", ".", "->", "def", "fn", "if", "else",
        "match", "return", "array", "plate", "of", "from", "to", "summate", "chain", "bucket",
        "r_add", "r_nop", "r_index", "r_split", "r_fanout", "expect", "real", "nat", "measure",
        "left", "just", "_", "true", "()", "\n", "\n  ", "\n    ", " ", " ", " ", "\t", "#c\n",
        "\r\n", "@",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            match crate::syntax::decode(&bytes) {
                Ok(text) => spans_are_sane(text).map_err(proptest::test_runner::TestCaseError::fail)?,
                Err(d) => proptest::prop_assert!((d.span.start as usize) < bytes.len()),
            }
        }

        #[test]
        fn token_soup_never_panics(words in proptest::collection::vec(proptest::sample::select(VOCAB), 0..80)) {
            let text: String = words.concat();
            spans_are_sane(&text).map_err(proptest::test_runner::TestCaseError::fail)?;
        }
    }

    #[test]
    fn very_long_blocks_parse_and_drop_without_deep_recursion() {
        // 200,000 statements, also inside a call that then fails to parse (the folded
        // chain is dropped on the error path).
        let body = "x = 1\n".repeat(200_000);
        let e = parse(&(body.clone() + "x")).unwrap_or_else(|d| panic!("{:?}", d[0]));
        assert_eq!(count_statements(&e), 200_000);
        drop(e);
        let inner = body.replace("x = 1\n", "  x = 1\n");
        let failing = format!("f(\n{inner}  x\n  , )");
        let err = parse(&failing).err().map(|d| d[0].message.clone());
        assert_eq!(
            err.as_deref(),
            Some("expected an expression after ',', found ')'")
        );
        let failing = format!("f(\n{inner}  x\n  y)");
        assert!(parse(&failing).is_err());
    }
}
