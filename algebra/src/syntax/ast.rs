//! The surface syntax tree: what the parser produces and the elaborator consumes.
//!
//! It mirrors the text (names are strings, every node has a [`Span`]) and is untyped;
//! the elaborator resolves names, checks types and builds core terms. Nothing else uses
//! this tree: every later stage works on core terms in a `Store`.
//!
//! Chains of left-associative operators (`a + b - c + ...`, `*` `/`, `&&`, `||`, `<|>`)
//! are kept flat ([`ExprKind::OpChain`]) so that a 100,000-term line is a wide tree, not a
//! deep one: no pass over this tree may recurse once per operand of a chain.
//!
//! # The concrete syntax (the contract between parser and printer)
//!
//! Layout follows an offside rule on *columns of tokens*:
//! - A **block** starts at its first token; its column is the block's column. A block is
//!   a sequence of *statements* (`x <~ m`, `x = e`, `def f(...) T:` + body) followed by one
//!   final expression; each statement and the final expression start at the block's
//!   column. A statement's scope is the rest of its block.
//! - A token on a later line at a column *greater* than the block's column continues the
//!   current line (so long expressions may wrap, and arguments may be broken over lines).
//!   A token at a column *smaller* than the block's column ends the block.
//! - After a header ending in `:` (`fn x T:`, `if c:`, `else:`, `match e:`, a pattern
//!   `p:`, `def ...:`, `array i of n:`, `plate`, `summate`, `product`, `integrate`,
//!   `chain`, `bucket`, `r_index`, `r_split`) the body is either the rest of the line (an
//!   expression, possibly itself a header form) or, if the line ends after `:`, a block on
//!   the following lines whose column is greater than the column of the enclosing block.
//!   Exception, as Hakaru prints it: the body of `fn x T:`, `def ...:`, `if c:`, `else:`,
//!   `summate` and `product` may also be a block at the *same* column as the enclosing
//!   block (nested `fn`s flush left, one per line). Such a flush block ends after its
//!   final expression: the next line at that column is the enclosing block's next item.
//! - A token first on its line that is a binary operator which cannot start an
//!   expression (`*` `/` `^` `**` `&&` `||` `<|>` `.` and the comparisons) continues the
//!   innermost expression being parsed, whatever its column (Hakaru prints long sums and
//!   products with the operator leading each line). `+` and `-` can be prefix signs, so a
//!   line led by one continues only when it is indented more than its block, or stands at
//!   the block's column while the block's final expression is being parsed (a block has
//!   nothing after it); after a statement, `-x` at the block's column is the final
//!   expression.
//! - A statement whose right-hand side starts with a statement (`x2 <~ x1 <~ m`,
//!   `x5 = x2 = e`) binds a block that starts at that inner statement: lines at its
//!   column are the inner block's items; its result is bound to the outer name.
//! - `match` may have its scrutinee on the next line (at any column, as an operand after
//!   a binary operator), and its branches flush left at the column of the enclosing
//!   block; then a line at that column continues the branches only when it reads as a
//!   pattern and `:` (names, `(`, `)`, `,` then `:`), and otherwise the enclosing block
//!   goes on; flush branches may have flush bodies.
//! - `import NAME` stands on its own line among the first statements of a file;
//!   `data NAME():` (or `data NAME:`) is a statement whose constructors (`c(T, U)` or a
//!   bare name `c`) follow the `:` on the same line or on lines indented more.
//! - `def f():` has no parameters (a named value; the elaborator reads `f()` as it);
//!   the pattern `nothing()` is `nothing`.
//! - `else:` stands at the column of its `if` (or follows the then-branch on the same line:
//!   `if c: a else: b`). `r_split c: r1 else: r2` likewise.
//! - Inside `(...)` and `[...]` the same rules hold for the blocks that start there, with
//!   the block's column being that of its first token; `)` / `]` / `,` end open blocks.
//!   So `weight(1/2, x <~ normal(0, 1)` NEWLINE (spaces up to the column of `x`) `return x)`
//!   is one call whose second argument is a bind block.
//! - `#` comments and blank lines are ignored. Tabs count as advancing to the next multiple
//!   of 8 columns.
//!
//! Operator precedence, tightest first: postfix `a[i]`, calls `f(x)`; `^` and `**`
//! (right-associative); `*` `/` (left); prefix `-` `+`; binary `+` `-` (left); the type
//! annotation `e. T` (postfix, loose: `reject. measure(nat)`); comparisons
//! `< > <= >= == /=` (non-associative); `&&`; `||`; `<|>`. A prefix sign may also start
//! an operand of a tighter operator (`x * -3` means `x * (-3)`).
//!
//! Literals: `3` (nat), `0.5`, `1.0`, `5e-9`, `1/2` are exact; `∞`/`inf`/`infinity()`.
//! The parser does not fold signs or `/`: `-1/2` is `Neg(OpChain[1 / 2])`. Folding
//! literal arithmetic is the elaborator's job (it decides literal types).

use num_bigint::BigUint;
use num_rational::BigRational;

use crate::diag::Span;

/// A name with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeExprKind {
    /// `nat`, `int`, `prob`, `real`, `unit`, `bool` (or an unknown name: the elaborator
    /// reports it).
    Name(String),
    /// `array(T)`, `measure(T)`, `pair(A, B)`, `either(A, B)`, `maybe(T)` (or an unknown
    /// constructor or wrong arity: the elaborator reports it).
    App(String, Vec<TypeExpr>),
    /// `A -> B` (right-associative).
    Fun(Box<TypeExpr>, Box<TypeExpr>),
}

/// A `match` pattern as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pat {
    pub kind: PatKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatKind {
    /// `_`
    Wild,
    /// `x` (any identifier that is not a constructor name)
    Var(String),
    /// `()`
    Unit,
    /// `true`, `false`
    Bool(bool),
    /// `(p, q)`
    Pair(Box<Pat>, Box<Pat>),
    /// `left(p)`, `right(p)`, `just(p)`
    Left(Box<Pat>),
    Right(Box<Pat>),
    Just(Box<Pat>),
    /// `nothing`
    Nothing,
    /// `c(p, ...)`: a constructor of a `data` declaration with its fields' patterns (a
    /// constructor without fields is written as a bare name, which parses as `Var`: the
    /// elaborator tells the two apart by the declarations in scope).
    Ctor(Ident, Vec<Pat>),
}

/// `data name(): c1(T, ...) c2 ...`: a user type, the sum of its constructors, each the
/// product of its fields (positional). Type parameters parse (Hakaru's grammar has
/// them) so that the elaborator can refuse them by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataDecl {
    pub name: Ident,
    pub params: Vec<Ident>,
    pub ctors: Vec<CtorDecl>,
    pub span: Span,
}

/// One constructor of a [`DataDecl`]: its name and the types of its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtorDecl {
    pub name: Ident,
    pub fields: Vec<TypeExpr>,
    pub span: Span,
}

/// Binary operators that live in flat chains (all left-associative).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainOp {
    Add,
    Sub,
    Mul,
    Div,
    And,
    Or,
    /// `<|>`
    Superpose,
}

/// Right-associative power operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowOp {
    /// `^`: exponent is a nat.
    Pow,
    /// `**`: prob base, real exponent.
    RealPow,
}

/// Comparison operators (non-associative).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
}

/// An expression (or measure, or reducer) as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A name: a variable, a user function, or a built-in constant/measure used without
    /// arguments (`pi`, `counting`, `reject`, `true`, `false`, `nothing`).
    Var(String),
    /// An unsigned integer literal: natural type nat.
    Nat(BigUint),
    /// An unsigned decimal literal (`0.5`, `1.0`, `5e-9`), exact: natural type prob.
    Decimal(BigRational),
    /// `∞`, `inf`, `infinity()`: prob.
    Infinity,
    /// `()`
    Unit,
    /// `(a, b)`; `(a, b, c)` is `(a, (b, c))`.
    Pair(Box<Expr>, Box<Expr>),
    /// `[e0, e1, ...]`
    ArrayLit(Vec<Expr>),
    /// `f(a, b, ...)`: `func` is usually a `Var` naming a built-in function, a primitive
    /// measure, a coercion, a constructor (`left`, `right`, `just`, `dirac`, `weight`,
    /// `factor`, `observe`), a transform (`simplify`, `summarize`, `disint`, ...), or a
    /// user function (applied one argument at a time).
    Call(Box<Expr>, Vec<Expr>),
    /// `a[i]`
    Index(Box<Expr>, Box<Expr>),
    /// A flat chain `first op1 e1 op2 e2 ...` of one precedence level (+/-, * and /,
    /// &&, ||, <|>), left-associative. `rest` is never empty.
    OpChain(Box<Expr>, Vec<(ChainOp, Expr)>),
    /// `a ^ b`, `a ** b`.
    Pow(PowOp, Box<Expr>, Box<Expr>),
    /// Prefix `-e`.
    Neg(Box<Expr>),
    /// Prefix `+e`.
    Plus(Box<Expr>),
    /// `a < b` etc.
    Compare(CmpOp, Box<Expr>, Box<Expr>),
    /// `e. T`
    Ann(Box<Expr>, TypeExpr),
    /// `if c: a else: b`
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `match e:` then `pattern: body` lines.
    Match(Box<Expr>, Vec<(Pat, Expr)>),
    /// `x = e` then the rest of the block.
    Let(Ident, Box<Expr>, Box<Expr>),
    /// `x <~ m` then the rest of the block.
    Bind(Ident, Box<Expr>, Box<Expr>),
    /// `def f(x T, y U) R: body` then the rest of the block (`R` optional; no parameters:
    /// a named value).
    Def {
        name: Ident,
        params: Vec<(Ident, TypeExpr)>,
        ret: Option<TypeExpr>,
        body: Box<Expr>,
        rest: Box<Expr>,
    },
    /// `fn x T: body`
    Lam(Ident, TypeExpr, Box<Expr>),
    /// `return e` (also written `dirac(e)`, which parses as a `Call`).
    Return(Box<Expr>),
    /// `array i of n: e`
    Array(Ident, Box<Expr>, Box<Expr>),
    /// `plate i of n: m`
    Plate(Ident, Box<Expr>, Box<Expr>),
    /// `summate i from lo to hi: e`
    Summate(Ident, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `product i from lo to hi: e`
    Product(Ident, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `integrate x from lo to hi: e`
    Integrate(Ident, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `chain s from s0 of n: m`
    Chain(Ident, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `bucket j from lo to hi: r`
    Bucket(Ident, Box<Expr>, Box<Expr>, Box<Expr>),
    /// Reducer `r_add e`
    RAdd(Box<Expr>),
    /// Reducer `r_nop`
    RNop,
    /// Reducer `r_index b = n of e: r`
    RIndex(Ident, Box<Expr>, Box<Expr>, Box<Expr>),
    /// Reducer `r_split c: r1 else: r2`
    RSplit(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Reducer `r_fanout r1 || r2`
    RFanout(Box<Expr>, Box<Expr>),
    /// `import NAME` then the rest of the file: the definitions of module `NAME` in scope
    /// (resolved by `front`; only the first statements of a file may be imports).
    Import(Ident, Box<Expr>),
    /// `data ...` (see [`DataDecl`]) then the rest of the block (only in a file's top
    /// block; its type and constructors are in scope in the whole file).
    Data(Box<DataDecl>, Box<Expr>),
    /// `expect x <~ m: e`: parsed so the elaborator can name it in its "not implemented"
    /// error.
    Expect(Ident, Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
}

/// A block's statements nest to the right (`Let(x, e, Let(y, f, ...))`), one level per
/// line, so the derived recursive drop would overflow the stack on a long program. This
/// drop walks that spine (`Let`/`Bind` bodies, `Def` rests) in a loop; every other path
/// down the tree is bounded by the parser's nesting limit. (Because of this impl, take a
/// node's fields by reference or with `std::mem::replace`, not by moving out.)
impl Drop for Expr {
    fn drop(&mut self) {
        let mut next = take_rest(&mut self.kind);
        while let Some(mut e) = next {
            next = take_rest(&mut e.kind);
        }
    }
}

/// Detach the rest of the block below a statement node, leaving `()` in its place.
fn take_rest(kind: &mut ExprKind) -> Option<Expr> {
    match kind {
        ExprKind::Let(_, _, rest)
        | ExprKind::Bind(_, _, rest)
        | ExprKind::Def { rest, .. }
        | ExprKind::Import(_, rest)
        | ExprKind::Data(_, rest) => {
            let unit = Expr::new(ExprKind::Unit, Span::default());
            Some(std::mem::replace(&mut **rest, unit))
        }
        _ => None,
    }
}
