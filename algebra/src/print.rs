//! The printer: core terms back to `.hk` text that parses and elaborates to an
//! alpha-equivalent term (same types, same literals, same coercions).
//!
//! It exists so that every stage's output can be read by people and by slic-cas itself
//! (`slic-cas simplify` prints its result; golden files are printed terms). The layout
//! follows the concrete-syntax contract in `syntax::ast` and Hakaru's own printer: nested
//! `fn`s of a file flush left, one statement per line, `if`/`match` as blocks unless
//! short, `<|>` chains one operand per line when they break. It must not decide anything
//! about meaning: it prints exactly the term it is given, and it never panics, whatever
//! the term (an ill-typed term prints as best it can; `verify` is the place to reject it).
//!
//! ```
//! use slic_algebra::{front, print, Store};
//! let mut store = Store::new();
//! let src = "fn mu real:\n  x <~ normal(mu, 1.0)\n  weight(0.5, return x - 3)\n";
//! let t = front::load(&mut store, src).unwrap();
//! let text = print::print_term(&store, t);
//! assert_eq!(text, "fn mu real:\nx <~ normal(mu, 1)\nweight(1/2, return x - 3)\n");
//! ```
//!
//! # Literals and the elaborator's checking positions
//! A literal prints one way: its value, an integer as an integer and a fraction as `a/b`
//! in lowest terms, with `-` when negative (`3`, `-3`, `1/2`, `-5/2`; never `3/1` or
//! `+0/1`). Read alone, that text has a *natural* type (`3` nat, `-3` int, `1/2` prob,
//! `-1/2` real). Where the elaborator checks the literal against its own type (argument of
//! `normal`, operand of a sum with a non-literal operand, element of a checked array,
//! ...) it re-types the literal, so the value is all that prints. Elsewhere a literal
//! whose natural type is not its type says its type: a non-negative int with a sign
//! (`+3`, as Hakaru writes ints), any other with an annotation (`3. prob`,
//! `(1/2. real) + 2`), and an array literal made only of literals is annotated as a whole
//! (`[1, 0, 2]. array(prob)`), so that its elements print as values too. Every `doc` call
//! says whether its position is such a checked position (`checked`); a non-literal
//! printed in an unchecked position always infers its own type, which is what n-ary
//! operators and `if` rely on when they let their literal operands print bare.
//!
//! # Coercions
//! Unsafe coercions (`int2nat`, `real2prob`, `real2int`) always print. A safe one,
//! `Coerce(c, e)` with `e` not a literal and a form the elaborator infers and then fits
//! (variables, calls, operators, indexing, applications, numeric loops; not `if`, `match`,
//! blocks, `simplify`, which take an expected type inside), prints as just `e` exactly
//! where elaborating that text re-inserts `c`:
//! - at a checked position (`normal(n, 1)`, `return n` in a checked measure, `weight(n,
//!   m)`, `exp(i)`, a user function's argument, checked `if`/`match` branches and array
//!   elements), and where the elaborator checks without the printer marking the position
//!   `checked`: a coercion call's argument (`real2prob(n)`), a `def` body, `left`/`right`,
//!   the components of a checked pair or `just`, `observe`'s value, `reduce`'s start,
//!   an `integrate` body;
//! - among the operands of a position typed by a join (`+ -` and `* /` chains, `min`,
//!   `max`, comparisons, inferred array literals and `if`/`match` branches, `summate`/
//!   `product`/`bucket` bounds) when the join the elaborator computes from the printed
//!   operands (literals at their natural types; raised to a ring or field when the chain
//!   subtracts or divides) is still the operator's type: all of them (`1 - p`, `n + x`),
//!   or else all but the first (`nat2real(n) + m`, not `n + m`, which is a nat sum). In
//!   a `+` chain an operand printing as `-x` would be read as subtracted, so its coercion
//!   stays (`x + int2real(-i)`);
//! - as the operand of `-`, `abs`, `signum` (raised to a ring) and `recip`, `erf`,
//!   `floor` (raised to a field) when raising inserts that coercion (`-p`, `abs(n)`).
//!
//! So `prob2real(∞)` prints `∞` at a checked real position and `-∞` as a negation.
//!
//! # Comments
//! Core terms carry no comments; `print_with_comments` (for `slic-cas fmt`) takes a side
//! table that names, for each comment, the statement (by the variable it binds) or final
//! expression it belongs to (see `comments`). A comment line prints before its anchor at
//! the anchor's column; comments that ended a line print at the end of the anchor's first
//! line (`Doc::trail`), and any text the layout would put after one moves to the next
//! line, so a comment never swallows code.
//!
//! # Names
//! Variables print with their hints, renamed with numeric suffixes where a hint would
//! capture or shadow another variable or hide a built-in (see `names`).
//!
//! Statement chains (`Let`/`Bind`) and the `fn`s of a file are walked iteratively, so
//! 10,000-statement programs print without deep recursion; other recursion follows term
//! nesting and moves to a fresh stack segment when the stack runs low.

mod comments;
mod data;
mod doc;
mod implicit;
mod names;

pub use comments::{Anchor, Comments, Note};
pub use data::Prelude;

use crate::num::Rational;

use crate::term::{Node, Pattern, Prim, Store, TermId, Transform, VarId};
use crate::types::Type;
use doc::Doc;
use implicit::{implicit_arg, join_elision, raised_arg, Raise};
use names::Names;

/// How to print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintOptions {
    /// Print `inf` instead of `∞`.
    pub ascii: bool,
    /// The line width the layout aims for (lines may exceed it when nothing breaks).
    pub width: usize,
    /// Print a literal whose denominator divides a power of ten as a decimal (`0.0123`
    /// rather than `123/10000`; it reads back as the same rational).
    pub decimals: bool,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            ascii: false,
            width: 88,
            decimals: false,
        }
    }
}

/// Print a term with the default options.
pub fn print_term(store: &Store, t: TermId) -> String {
    print_with(store, t, &PrintOptions::default())
}

/// Print a term as a `.hk` file: deterministic, ending in a newline.
pub fn print_with(store: &Store, t: TermId, opts: &PrintOptions) -> String {
    print_with_comments(store, t, opts, Comments::default())
}

/// Print a term as a `.hk` file with the comments of the program it was read from
/// (`slic-cas fmt`): each before or after the statement it belongs to, as the table says,
/// and those whose statement the term does not contain at the end.
pub fn print_with_comments(
    store: &Store,
    t: TermId,
    opts: &PrintOptions,
    comments: Comments,
) -> String {
    let mut comments = comments;
    let prelude = std::mem::take(&mut comments.prelude);
    // the imported definitions print as their `import` lines
    let mut t = t;
    for _ in 0..prelude.skip {
        match store.node(t) {
            Node::Let(_, _, body) => t = *body,
            _ => break,
        }
    }
    let mut p = Printer {
        store,
        opts,
        names: Names::default(),
        comments,
        prelude,
    };
    for v in crate::vars::free_vars(store, t) {
        p.names.bind(v, store.var_name(v));
    }
    // no variable may take a constructor's name, which would hide it
    for d in &p.prelude.data {
        for c in &d.ctors {
            p.names.reserve(&c.name);
        }
    }
    let mut s = String::new();
    for note in std::mem::take(&mut p.comments.top) {
        s.push_str(&note.text);
        s.push('\n');
    }
    for i in &p.prelude.imports {
        s.push_str(&format!("import {i}\n"));
    }
    for d in p.prelude.declarations() {
        s.push_str(&d);
        s.push('\n');
    }
    let d = p.top(t);
    s.push_str(&d.render(opts.width));
    s.push('\n');
    for note in p.comments.take_rest() {
        s.push_str(&note.text);
        s.push('\n');
    }
    s
}

// Precedence of printed forms, loosest first. A form printed where a tighter one is
// needed gets parentheses.
/// Statements (`x = e` then more): only at the start of a block.
const P_BLOCK: u8 = 0;
/// Header forms whose body runs to the end (`fn`, `if`, `match`, loops, `r_split`...).
const P_OPEN: u8 = 1;
/// Prefix keyword forms (`return e`, `r_add e`).
const P_RET: u8 = 2;
const P_SUP: u8 = 3;
const P_OR: u8 = 4;
const P_AND: u8 = 5;
const P_CMP: u8 = 6;
/// `e. T`
const P_ANN: u8 = 7;
const P_ADD: u8 = 8;
/// Prefix sign; also signed literals.
const P_PREFIX: u8 = 9;
/// An unsigned fraction literal `p/q`: a `/` chain of its own, so it needs parentheses
/// inside `*`/`/` chains, under `^`, after a prefix sign.
const P_FRAC: u8 = 10;
const P_MUL: u8 = 11;
const P_POW: u8 = 12;
/// Atoms, calls, indexing.
const P_POSTFIX: u8 = 13;

fn is_lit(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(_))
}

fn is_zero_lit(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(v) if v.is_zero())
}

/// The text of a literal and its precedence (see "Literals" in the module doc): its value
/// (`3`, `-3`, `1/2`, `-1/2`), where the position does not fix the type and the value
/// alone would be read at another type signed (`+3`, an int) or annotated (`3. prob`).
fn lit_text(v: &Rational, ty: &Type, checked: bool, decimals: bool) -> (String, u8) {
    let a = v.abs();
    let (mag, prec) = if a.is_integer() {
        (a.numer().to_string(), P_POSTFIX)
    } else if let Some(d) = decimals.then(|| decimal_text(&a)).flatten() {
        (d, P_POSTFIX)
    } else {
        (format!("{}/{}", a.numer(), a.denom()), P_FRAC)
    };
    let (text, prec) = if v.is_negative() {
        (format!("-{mag}"), P_PREFIX)
    } else {
        (mag, prec)
    };
    if checked || !ty.is_numeric() || implicit::natural_type(v) == *ty {
        (text, prec)
    } else if *ty == Type::Int && a.is_integer() {
        // a signed integer is an int: `+3`, as Hakaru writes it
        (format!("+{text}"), P_PREFIX)
    } else {
        (format!("{text}. {ty}"), P_ANN)
    }
}

/// The decimal text of a positive non-integer rational whose denominator divides a power
/// of ten (`3/8` is `0.375`), at most 40 places; `None` otherwise.
fn decimal_text(a: &Rational) -> Option<String> {
    let mut d = a.denom();
    let mut places = 0usize;
    let (two, five, ten) = (
        num_bigint::BigInt::from(2),
        num_bigint::BigInt::from(5),
        num_bigint::BigInt::from(10),
    );
    let zero = num_bigint::BigInt::from(0);
    // the places needed: the larger of the powers of 2 and of 5 in the denominator
    let (mut p2, mut p5) = (0usize, 0usize);
    while &d % &two == zero {
        d /= &two;
        p2 += 1;
    }
    while &d % &five == zero {
        d /= &five;
        p5 += 1;
    }
    if d != num_bigint::BigInt::from(1) {
        return None;
    }
    places += p2.max(p5);
    if places > 40 {
        return None;
    }
    let scaled = a.numer() * ten.pow(u32::try_from(places).ok()?) / a.denom();
    let digits = format!("{scaled:0>width$}", width = places + 1);
    let (int, frac) = digits.split_at(digits.len() - places);
    Some(format!("{int}.{frac}"))
}

/// Whether `t` is an array literal made only of literals, at an unchecked position, that
/// prints annotated (`[1, 0, 2]. array(prob)`): the elements' values alone would give the
/// array another type (the join of their natural types is not the element type).
fn annotated_lits(store: &Store, t: TermId, checked: bool) -> bool {
    let (Node::ArrayLit(xs), Some(elem)) = (store.node(t), store.ty(t).array_of()) else {
        return false;
    };
    if checked || xs.is_empty() {
        return false;
    }
    let mut join = Some(Type::Nat);
    for &x in xs {
        let Node::Lit(v) = store.node(x) else {
            return false;
        };
        join = join.and_then(|j| j.join(&implicit::natural_type(v)));
    }
    join.as_ref() != Some(elem)
}

/// Which arguments of a fixed-type built-in the elaborator checks against their type.
fn prim_arg_checked(p: Prim, i: usize) -> bool {
    use Prim::*;
    match p {
        Exp | Log | Sqrt | NatRoot | GammaFunc | BetaFunc | Choose | RealPow | Sin | Cos | Tan
        | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh => true,
        Pow => i == 1,
        _ => false,
    }
}

/// For operands of an n-ary numeric operator (and other joined positions): whether each
/// prints in a checked position. `literal[i]` says operand i prints as a literal.
/// With a non-literal operand (which infers the common type) literals print bare; with
/// only literals, the first prints exact (fixing the common type) and the rest bare.
fn nary_checked(literal: &[bool]) -> Vec<bool> {
    if literal.iter().any(|l| !l) {
        literal.to_vec()
    } else {
        (0..literal.len()).map(|i| i > 0).collect()
    }
}

/// How one operand of an operator chain prints.
enum Operand {
    /// The term as it is.
    Term(TermId),
    /// A negative literal printed as its absolute value (after `-`).
    AbsLit(TermId),
    /// `-x`: the first operand of a sum, negated.
    Neg(TermId),
}

struct Printer<'a> {
    store: &'a Store,
    opts: &'a PrintOptions,
    names: Names,
    /// The comments not printed yet (empty except for `fmt`).
    comments: Comments,
    /// Imports and data types (empty except for `fmt`).
    prelude: Prelude,
}

impl Printer<'_> {
    fn inf(&self) -> &'static str {
        if self.opts.ascii {
            "inf"
        } else {
            "∞"
        }
    }

    fn var_name(&self, v: VarId) -> String {
        self.names.get(v, self.store.var_name(v))
    }

    /// The whole file: a block at column 0 whose `fn`s print flush left.
    fn top(&mut self, t: TermId) -> Doc {
        self.block(t, false, true)
    }

    /// What prints for `t` at a position that is `checked` or not: at a checked position a
    /// safe coercion the elaborator re-inserts prints as its argument (which is inferred,
    /// so it prints unchecked); otherwise `t` itself.
    fn shown(&self, t: TermId, checked: bool) -> (TermId, bool) {
        match implicit_arg(self.store, t) {
            Some(e) if checked => (e, false),
            _ => (t, checked),
        }
    }

    /// What to print for `t` where the elaborator checks it against its type, but where
    /// `t` prints unchecked (so its literals keep their exact forms).
    fn at_check(&self, t: TermId) -> TermId {
        implicit_arg(self.store, t).unwrap_or(t)
    }

    /// An argument the elaborator checks against its own type, as `call` takes it: a
    /// literal prints as its value (re-typed there), anything else as `at_check` says.
    fn checked_arg(&self, t: TermId) -> (TermId, bool) {
        if is_lit(self.store, t) {
            (t, true)
        } else {
            (self.at_check(t), false)
        }
    }

    /// The precedence of the form `doc` prints for `t`.
    fn prec(&self, t: TermId, checked: bool) -> u8 {
        let s = self.store;
        let (t, checked) = self.shown(t, checked);
        match s.node(t) {
            Node::Lit(v) => lit_text(v, s.ty(t), checked, self.opts.decimals).1,
            Node::Left(_) | Node::Right(_) if self.prelude.ctor_term(s, t).is_some() => P_POSTFIX,
            Node::Left(_) | Node::Right(_) | Node::Nothing | Node::Reject => P_ANN,
            Node::ArrayLit(xs) if xs.is_empty() || annotated_lits(s, t, checked) => P_ANN,
            Node::Prim(p, args) => match p {
                Prim::Add if args.len() >= 2 => P_ADD,
                Prim::Mul if args.len() >= 2 => P_MUL,
                Prim::Neg if args.len() == 1 && !is_lit(s, args[0]) => P_PREFIX,
                Prim::Pow | Prim::RealPow if args.len() == 2 => P_POW,
                Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne if args.len() == 2 => P_CMP,
                Prim::And if args.len() >= 2 => P_AND,
                Prim::Or if args.len() >= 2 => P_OR,
                _ => P_POSTFIX,
            },
            Node::Superpose(ms) => match ms.len() {
                0 => P_ANN,
                1 => self.prec(ms[0], checked),
                _ => P_SUP,
            },
            // `return e` takes `e` up to `||`: it may be an operand of `<|>` as it is.
            Node::Dirac(_) => P_OR,
            Node::RAdd(_) => P_RET,
            Node::If(..)
            | Node::Match(..)
            | Node::Lam(..)
            | Node::Array(..)
            | Node::Plate(..)
            | Node::Summate(..)
            | Node::Product(..)
            | Node::Integrate(..)
            | Node::Bucket(..)
            | Node::Chain(..)
            | Node::RIndex(..)
            | Node::RSplit(..)
            | Node::RFanout(..) => P_OPEN,
            Node::Let(..) | Node::Bind(..) => P_BLOCK,
            Node::Var(_)
            | Node::Bool(_)
            | Node::Unit
            | Node::Pair(..)
            | Node::Just(_)
            | Node::ArrayLit(_)
            | Node::Index(..)
            | Node::App(..)
            | Node::Coerce(..)
            | Node::Dist(..)
            | Node::Weight(..)
            | Node::Observe(..)
            | Node::Transform(..)
            | Node::RNop => P_POSTFIX,
        }
    }

    /// `t` printed where a form of precedence `need` or tighter is required.
    fn doc(&mut self, t: TermId, need: u8, checked: bool) -> Doc {
        // Recursion follows term nesting, which passes may make deep: grow the stack.
        crate::stack::grow(|| self.doc_here(t, need, checked))
    }

    fn doc_here(&mut self, t: TermId, need: u8, checked: bool) -> Doc {
        let (t, checked) = self.shown(t, checked);
        if self.prec(t, checked) < need {
            let inner = self.doc_inner(t, checked);
            return Doc::concat(vec![Doc::text("("), Doc::align(inner), Doc::text(")")]);
        }
        self.doc_inner(t, checked)
    }

    fn doc_inner(&mut self, t: TermId, checked: bool) -> Doc {
        let s = self.store;
        let ty = s.ty(t);
        match s.node(t) {
            Node::Var(v) => Doc::text(self.var_name(*v)),
            Node::Lit(v) => Doc::text(lit_text(v, ty, checked, self.opts.decimals).0),
            Node::Bool(b) => Doc::text(if *b { "true" } else { "false" }),
            Node::Unit => Doc::text("()"),
            Node::Pair(..) => {
                let mut parts = Vec::new();
                let mut cur = t;
                while let Node::Pair(a, b) = s.node(cur) {
                    parts.push(*a);
                    cur = *b;
                }
                parts.push(cur);
                // A checked pair checks its components.
                if checked {
                    parts = parts.into_iter().map(|p| self.at_check(p)).collect();
                }
                let docs = parts
                    .into_iter()
                    .map(|p| self.doc(p, P_BLOCK, false))
                    .collect();
                Self::bracketed("(", docs, ")")
            }
            // `left(e). T` checks `e` against its side of `T`.
            Node::Left(_) | Node::Right(_) if self.prelude.ctor_term(s, t).is_some() => {
                let (name, fields) = self.prelude.ctor_term(s, t).unwrap_or_default();
                let name = name.to_string();
                if fields.is_empty() {
                    return Doc::text(name);
                }
                // the elaborator checks each field against its type
                let args: Vec<(TermId, bool)> =
                    fields.iter().map(|&f| self.checked_arg(f)).collect();
                self.call(&name, &args)
            }
            Node::Left(e) => {
                let d = self.call("left", &[self.checked_arg(*e)]);
                self.annotated(d, ty)
            }
            Node::Right(e) => {
                let d = self.call("right", &[self.checked_arg(*e)]);
                self.annotated(d, ty)
            }
            Node::Just(e) => {
                let e = if checked { self.at_check(*e) } else { *e };
                self.call("just", &[(e, false)])
            }
            Node::Nothing => self.annotated(Doc::text("nothing"), ty),
            Node::Reject => self.annotated(Doc::text("reject"), ty),
            Node::Prim(p, args) => self.prim(*p, args, ty),
            Node::Coerce(c, e) => {
                // The argument of a coercion call is checked against its source type: a
                // literal of that type prints as its value (`real2prob(2)`).
                let arg = if *s.ty(*e) == c.from_type() {
                    self.checked_arg(*e)
                } else {
                    (*e, false)
                };
                self.call(c.name(), &[arg])
            }
            Node::Let(..) | Node::Bind(..) => self.block(t, checked, false),
            Node::Lam(v, body) => {
                let name = self.names.bind(*v, s.var_name(*v));
                let head = Doc::text(format!(
                    "fn {name} {}",
                    self.prelude.type_text(s.var_type(*v))
                ));
                let d = self.header(head, *body, false);
                self.names.unbind();
                d
            }
            Node::App(..) => self.app(t),
            Node::If(c, a, b) => {
                let br = self.branches(ty, checked, &[*a, *b]);
                self.if_doc("if", *c, br[0].0, br[1].0, br[0].1, br[1].1)
            }
            Node::Match(e, arms) => self.match_doc(t, *e, arms, checked),
            Node::ArrayLit(xs) => {
                if xs.is_empty() {
                    return self.annotated(Doc::text("[]"), ty);
                }
                let lits: Vec<bool> = xs.iter().map(|&x| is_lit(s, x)).collect();
                // Only literals, inferred, some not of the element type by themselves:
                // annotate the array, which checks every element (so each prints as its
                // value, rather than the first one annotated).
                if annotated_lits(s, t, checked) {
                    let d = self.doc_inner(t, true);
                    return self.annotated(d, ty);
                }
                // Checked: each element is checked against the element type (literals
                // print bare); inferred: the elements are joined.
                // (Only literals and not annotated: their join is the element type, so
                // each prints as its value too.)
                let ck = if checked || lits.iter().all(|&l| l) {
                    vec![true; xs.len()]
                } else {
                    nary_checked(&lits)
                };
                let shown = match ty.array_of() {
                    Some(_) if checked => xs.iter().map(|&x| self.at_check(x)).collect(),
                    Some(elem) => {
                        let items: Vec<(TermId, bool)> = xs.iter().map(|&x| (x, false)).collect();
                        join_elision(self.store, elem, &items, false, Raise::Not)
                    }
                    None => xs.clone(),
                };
                let docs = shown
                    .into_iter()
                    .zip(ck)
                    .map(|(x, c)| self.doc(x, P_BLOCK, c))
                    .collect();
                Self::bracketed("[", docs, "]")
            }
            Node::Array(v, n, e) => {
                let n = self.doc(*n, P_SUP, true);
                let name = self.names.bind(*v, s.var_name(*v));
                let head = Doc::concat(vec![Doc::text(format!("array {name} of ")), n]);
                let d = self.header(head, *e, false);
                self.names.unbind();
                d
            }
            Node::Plate(v, n, m) => {
                let n = self.doc(*n, P_SUP, true);
                let name = self.names.bind(*v, s.var_name(*v));
                let head = Doc::concat(vec![Doc::text(format!("plate {name} of ")), n]);
                let d = self.header(head, *m, false);
                self.names.unbind();
                d
            }
            Node::Index(a, i) => Doc::concat(vec![
                self.doc(*a, P_POSTFIX, false),
                Doc::text("["),
                Doc::align(self.doc(*i, P_BLOCK, true)),
                Doc::text("]"),
            ]),
            Node::Summate(v, lo, hi, e) => self.range_loop("summate", *v, *lo, *hi, *e, false),
            Node::Product(v, lo, hi, e) => self.range_loop("product", *v, *lo, *hi, *e, false),
            Node::Integrate(v, lo, hi, e) => self.range_loop("integrate", *v, *lo, *hi, *e, true),
            Node::Bucket(v, lo, hi, r) => self.range_loop("bucket", *v, *lo, *hi, *r, false),
            Node::RAdd(e) => Doc::concat(vec![Doc::text("r_add "), self.doc(*e, P_AND, false)]),
            Node::RNop => Doc::text("r_nop"),
            Node::RIndex(b, n, e, r) => {
                let n = self.doc(*n, P_SUP, true);
                let e = self.doc(*e, P_SUP, true);
                let name = self.names.bind(*b, s.var_name(*b));
                let head = Doc::concat(vec![
                    Doc::text(format!("r_index {name} = ")),
                    n,
                    Doc::text(" of "),
                    e,
                ]);
                let d = self.header(head, *r, false);
                self.names.unbind();
                d
            }
            Node::RSplit(c, r1, r2) => self.if_doc("r_split", *c, *r1, *r2, false, false),
            Node::RFanout(r1, r2) => Doc::concat(vec![
                Doc::text("r_fanout "),
                self.doc(*r1, P_RET, false),
                Doc::text(" || "),
                self.doc(*r2, P_RET, false),
            ]),
            Node::Dirac(e) => {
                let inner = checked && ty.measure_of() == Some(s.ty(*e));
                Doc::concat(vec![Doc::text("return "), self.doc(*e, P_OR, inner)])
            }
            Node::Weight(w, m) => self.call("weight", &[(*w, true), (*m, false)]),
            Node::Superpose(ms) => match ms.len() {
                0 => self.annotated(Doc::text("reject"), ty),
                1 => self.doc_inner(ms[0], false),
                _ => {
                    let ops = ms
                        .iter()
                        .map(|&m| ("<|>", Operand::Term(m), P_OR, false))
                        .collect();
                    self.chain(ops)
                }
            },
            Node::Chain(v, s0, n, m) => {
                let s0 = self.doc(*s0, P_SUP, false);
                let n = self.doc(*n, P_SUP, true);
                let name = self.names.bind(*v, s.var_name(*v));
                let head = Doc::concat(vec![
                    Doc::text(format!("chain {name} from ")),
                    s0,
                    Doc::text(" of "),
                    n,
                ]);
                let d = self.header(head, *m, false);
                self.names.unbind();
                d
            }
            Node::Dist(d, args) => {
                if args.is_empty() {
                    return Doc::text(d.name());
                }
                let args: Vec<(TermId, bool)> = args.iter().map(|&a| (a, true)).collect();
                self.call(d.name(), &args)
            }
            // `observe(m, v)` checks `v` against m's element type.
            Node::Observe(m, v) => {
                let v = self.at_check(*v);
                self.call("observe", &[(*m, false), (v, false)])
            }
            // `mh(p, t)` and `mcmc(p, t)` hold their two arguments as a pair
            Node::Transform(tr @ (Transform::Mh | Transform::Mcmc), e) => {
                match *self.store.node(*e) {
                    Node::Pair(p, t) => self.call(tr.name(), &[(p, false), (t, false)]),
                    _ => self.call(tr.name(), &[(*e, false)]),
                }
            }
            Node::Transform(tr, e) => self.call(tr.name(), &[(*e, false)]),
        }
    }

    /// `e. T`
    fn annotated(&self, d: Doc, ty: &Type) -> Doc {
        Doc::concat(vec![
            d,
            Doc::text(format!(". {}", self.prelude.type_text(ty))),
        ])
    }

    /// `open d0, d1, ... close`, one element per line (aligned) if it does not fit.
    fn bracketed(open: &str, docs: Vec<Doc>, close: &str) -> Doc {
        let mut parts = Vec::new();
        for (i, d) in docs.into_iter().enumerate() {
            if i > 0 {
                parts.push(Doc::text(","));
                parts.push(Doc::line());
            }
            parts.push(d);
        }
        Doc::group(Doc::concat(vec![
            Doc::text(open),
            Doc::align(Doc::concat(parts)),
            Doc::text(close),
        ]))
    }

    /// `name(args)`; each argument starts a block at its first token.
    fn call(&mut self, name: &str, args: &[(TermId, bool)]) -> Doc {
        let docs = args.iter().map(|&(a, c)| self.doc(a, P_BLOCK, c)).collect();
        Self::bracketed(&format!("{name}("), docs, ")")
    }

    /// `head: body`, or the body as a block on the next lines (indented by 4).
    fn header(&mut self, head: Doc, body: TermId, checked: bool) -> Doc {
        let body = self.doc(body, P_BLOCK, checked);
        Doc::group(Doc::concat(vec![
            head,
            Doc::text(":"),
            Doc::nest(4, Doc::concat(vec![Doc::line(), body])),
        ]))
    }

    /// `kw i from lo to hi: body`; bounds are real (`integrate`) or joined (the rest).
    fn range_loop(
        &mut self,
        kw: &str,
        v: VarId,
        lo: TermId,
        hi: TermId,
        body: TermId,
        real_bounds: bool,
    ) -> Doc {
        let s = self.store;
        let (ck, bounds) = if real_bounds {
            (vec![true, true], vec![lo, hi])
        } else {
            // `summate`, `product` and `bucket` join their bounds.
            let ck = nary_checked(&[is_lit(s, lo), is_lit(s, hi)]);
            (
                ck,
                join_elision(
                    self.store,
                    s.ty(lo),
                    &[(lo, false), (hi, false)],
                    false,
                    Raise::Not,
                ),
            )
        };
        let lo = self.doc(bounds[0], P_SUP, ck[0]);
        let hi = self.doc(bounds[1], P_SUP, ck[1]);
        let name = self.names.bind(v, s.var_name(v));
        let head = Doc::concat(vec![
            Doc::text(format!("{kw} {name} from ")),
            lo,
            Doc::text(" to "),
            hi,
        ]);
        // An `integrate` body is checked against prob.
        let body = if real_bounds {
            self.at_check(body)
        } else {
            body
        };
        let d = self.header(head, body, false);
        self.names.unbind();
        d
    }

    /// What prints for each branch of an `if`/`match` of type `ty`, and whether it prints
    /// checked.
    fn branches(&self, ty: &Type, checked: bool, branches: &[TermId]) -> Vec<(TermId, bool)> {
        if checked {
            return branches.iter().map(|&b| (b, true)).collect();
        }
        // In infer mode the elaborator joins the branches' types (numeric types only),
        // then checks each branch against the join: literals may print bare only when
        // some branch is a non-literal (printed unchecked, so it infers `ty`), and safe
        // coercions print implicitly where the join comes out as `ty` without them.
        let lits: Vec<bool> = branches.iter().map(|&b| is_lit(self.store, b)).collect();
        if ty.is_numeric() && lits.iter().any(|l| !l) {
            let items: Vec<(TermId, bool)> = branches.iter().map(|&b| (b, false)).collect();
            let shown = join_elision(self.store, ty, &items, false, Raise::Not);
            shown.into_iter().zip(lits).collect()
        } else {
            branches.iter().map(|&b| (b, false)).collect()
        }
    }

    /// `if c: a else: b` on one line when short, else as a block with `else:` under
    /// `if`. A header form as the then-branch forces the block layout (it would swallow
    /// the `else` on one line).
    fn if_doc(&mut self, kw: &str, c: TermId, a: TermId, b: TermId, ca: bool, cb: bool) -> Doc {
        let cond = self.doc(c, P_SUP, true);
        let force = self.prec(a, ca) < P_RET;
        let then = self.doc(a, P_BLOCK, ca);
        let els = self.doc(b, P_BLOCK, cb);
        let sep = if force { Doc::hard() } else { Doc::line() };
        Doc::group(Doc::align(Doc::concat(vec![
            Doc::text(format!("{kw} ")),
            cond,
            Doc::text(":"),
            Doc::nest(4, Doc::concat(vec![sep, then])),
            Doc::line(),
            Doc::text("else:"),
            Doc::nest(4, Doc::concat(vec![Doc::line(), els])),
        ])))
    }

    fn match_doc(
        &mut self,
        t: TermId,
        e: TermId,
        arms: &[(Pattern, TermId)],
        checked: bool,
    ) -> Doc {
        let bodies: Vec<TermId> = arms.iter().map(|(_, b)| *b).collect();
        let shown = self.branches(self.store.ty(t), checked, &bodies);
        let mut parts = vec![
            Doc::text("match "),
            self.doc(e, P_SUP, false),
            Doc::text(":"),
        ];
        let mut arm_docs = Vec::new();
        for ((pat, _), (body, c)) in arms.iter().zip(shown) {
            let mut vars = Vec::new();
            pat.vars(&mut vars);
            for &v in &vars {
                self.names.bind(v, self.store.var_name(v));
            }
            let p = self.pattern(pat, self.store.ty(e));
            let body = self.doc(body, P_BLOCK, c);
            for _ in &vars {
                self.names.unbind();
            }
            arm_docs.push(Doc::hard());
            arm_docs.push(Doc::group(Doc::concat(vec![
                Doc::text(format!("{p}:")),
                Doc::nest(4, Doc::concat(vec![Doc::line(), body])),
            ])));
        }
        parts.push(Doc::nest(4, Doc::concat(arm_docs)));
        Doc::concat(parts)
    }

    /// A pattern against a value of type `ty` (which says where constructors of data
    /// types are).
    fn pattern(&self, p: &Pattern, ty: &Type) -> String {
        if let Some((name, fields)) = self.prelude.ctor_pattern(ty, p) {
            let Some(d) = self.prelude.named(ty) else {
                return name;
            };
            let Some(c) = d.ctors.iter().find(|c| c.name == name) else {
                return name;
            };
            if fields.is_empty() {
                return name;
            }
            let parts: Vec<String> = fields
                .iter()
                .zip(&c.fields)
                .map(|(f, t)| self.pattern(f, t))
                .collect();
            return format!("{name}({})", parts.join(", "));
        }
        let unit = Type::Unit;
        let (a_ty, b_ty) = match ty {
            Type::Pair(a, b) | Type::Either(a, b) => (&**a, &**b),
            Type::Maybe(a) => (&**a, &unit),
            _ => (&unit, &unit),
        };
        match p {
            Pattern::Wild => "_".to_string(),
            Pattern::Var(v) => self.var_name(*v),
            Pattern::Unit => "()".to_string(),
            Pattern::Bool(b) => b.to_string(),
            Pattern::Pair(a, b) => {
                format!("({}, {})", self.pattern(a, a_ty), self.pattern(b, b_ty))
            }
            Pattern::Left(a) => format!("left({})", self.pattern(a, a_ty)),
            Pattern::Right(a) => format!("right({})", self.pattern(a, b_ty)),
            Pattern::Just(a) => format!("just({})", self.pattern(a, a_ty)),
            Pattern::Nothing => "nothing".to_string(),
        }
    }

    /// `f(a, b)` for `App(App(f, a), b)`.
    fn app(&mut self, t: TermId) -> Doc {
        let s = self.store;
        let mut args = Vec::new();
        let mut head = t;
        while let Node::App(f, a) = s.node(head) {
            args.push(*a);
            head = *f;
        }
        args.reverse();
        // A named function's arguments are checked against its parameter types.
        let named = matches!(s.node(head), Node::Var(_));
        let head = self.doc(head, P_POSTFIX, false);
        let docs = args
            .into_iter()
            .map(|a| self.doc(a, P_BLOCK, named))
            .collect();
        Doc::concat(vec![head, Self::bracketed("(", docs, ")")])
    }

    /// `first op1 e1 op2 e2 ...`; one operand per line (continuation indent 4) when it
    /// does not fit.
    fn chain(&mut self, ops: Vec<(&str, Operand, u8, bool)>) -> Doc {
        let mut first = None;
        let mut rest = Vec::new();
        for (i, (op, operand, need, checked)) in ops.into_iter().enumerate() {
            let d = match operand {
                Operand::Term(x) => self.doc(x, need, checked),
                Operand::AbsLit(x) => match self.store.node(x) {
                    Node::Lit(v) => {
                        let (s, p) =
                            lit_text(&v.abs(), self.store.ty(x), checked, self.opts.decimals);
                        if p < need {
                            Doc::text(format!("({s})"))
                        } else {
                            Doc::text(s)
                        }
                    }
                    _ => self.doc(x, need, checked),
                },
                Operand::Neg(x) => Doc::concat(vec![Doc::text("-"), self.doc(x, P_MUL, false)]),
            };
            if i == 0 {
                first = Some(d);
            } else {
                rest.push(Doc::line());
                rest.push(Doc::text(format!("{op} ")));
                rest.push(d);
            }
        }
        let mut parts = Vec::new();
        parts.extend(first);
        parts.push(Doc::nest(4, Doc::concat(rest)));
        Doc::group(Doc::concat(parts))
    }

    fn prim(&mut self, p: Prim, args: &[TermId], ty: &Type) -> Doc {
        let s = self.store;
        match (p, args) {
            (Prim::Add, _) if args.len() >= 2 => self.sum(args, ty),
            (Prim::Mul, _) if args.len() >= 2 => self.product(args, ty),
            (Prim::And | Prim::Or, _) if args.len() >= 2 => {
                let (op, need) = if p == Prim::And {
                    ("&&", P_CMP)
                } else {
                    ("||", P_AND)
                };
                let ops = args
                    .iter()
                    .map(|&a| (op, Operand::Term(a), need, false))
                    .collect();
                self.chain(ops)
            }
            (Prim::Neg, [x]) => {
                if is_lit(s, *x) {
                    self.call("negate", &[(*x, false)])
                } else {
                    let x = raised_arg(self.store, p, *x);
                    Doc::concat(vec![Doc::text("-"), self.doc(x, P_MUL, false)])
                }
            }
            (Prim::Pow | Prim::RealPow, [a, b]) => {
                let op = if p == Prim::Pow { " ^ " } else { " ** " };
                Doc::concat(vec![
                    self.doc(*a, P_POSTFIX, prim_arg_checked(p, 0)),
                    Doc::text(op),
                    self.doc(*b, P_POW, prim_arg_checked(p, 1)),
                ])
            }
            (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne, [a, b]) => {
                let op = match p {
                    Prim::Lt => "<",
                    Prim::Le => "<=",
                    Prim::Eq => "==",
                    _ => "/=",
                };
                let ck = nary_checked(&[is_lit(s, *a), is_lit(s, *b)]);
                let shown = join_elision(
                    self.store,
                    s.ty(*a),
                    &[(*a, false), (*b, false)],
                    false,
                    Raise::Not,
                );
                let ops = vec![
                    ("", Operand::Term(shown[0]), P_ANN, ck[0]),
                    (op, Operand::Term(shown[1]), P_ANN, ck[1]),
                ];
                self.chain(ops)
            }
            (Prim::Pi, []) => Doc::text("pi"),
            (Prim::Infinity, []) => Doc::text(self.inf()),
            (Prim::Min | Prim::Max, _) => {
                let lits: Vec<bool> = args.iter().map(|&a| is_lit(s, a)).collect();
                let items: Vec<(TermId, bool)> = args.iter().map(|&a| (a, false)).collect();
                let shown = join_elision(self.store, ty, &items, false, Raise::Not);
                let args: Vec<(TermId, bool)> =
                    shown.into_iter().zip(nary_checked(&lits)).collect();
                self.call(p.name().unwrap_or("min"), &args)
            }
            _ => {
                let name = match p.name() {
                    Some(n) => n.to_string(),
                    // An operator with the wrong number of arguments (ill-formed term):
                    // print something readable rather than fail.
                    None => format!("{p:?}").to_lowercase(),
                };
                let args: Vec<(TermId, bool)> = args
                    .iter()
                    .enumerate()
                    .map(|(i, &a)| {
                        let shown = match (p, i) {
                            // `reduce(f, z, a)` checks `z` against a's element type.
                            (Prim::Reduce, 1) => self.at_check(a),
                            _ if args.len() == 1 => raised_arg(self.store, p, a),
                            _ => a,
                        };
                        (shown, prim_arg_checked(p, i))
                    })
                    .collect();
                self.call(&name, &args)
            }
        }
    }

    /// `a + b - c ...`: a negated operand (not a literal's negation, which prints as
    /// `negate(..)`) prints after `-` (first: with a prefix `-`), which the elaborator
    /// reads as a negated operand of the chain; a negative literal after the first prints
    /// as `- |v|`, which it folds back.
    fn sum(&mut self, args: &[TermId], ty: &Type) -> Doc {
        let s = self.store;
        let items: Vec<(TermId, bool)> = args
            .iter()
            .map(|&a| match s.node(a) {
                Node::Prim(Prim::Neg, n) if n.len() == 1 && !is_lit(s, n[0]) => (n[0], true),
                _ => (a, false),
            })
            .collect();
        let shown = join_elision(self.store, ty, &items, true, Raise::Ring);
        let mut ops = Vec::new();
        for (i, (&(item, negated), x)) in items.iter().zip(shown).enumerate() {
            let need = if i == 0 { P_PREFIX } else { P_FRAC };
            let (op, operand, lit) = match s.node(item) {
                _ if negated && i == 0 => ("+", Operand::Neg(x), false),
                _ if negated => ("-", Operand::Term(x), false),
                Node::Lit(v) if i > 0 && v.is_negative() => ("-", Operand::AbsLit(item), true),
                Node::Lit(_) => ("+", Operand::Term(item), true),
                _ => ("+", Operand::Term(x), false),
            };
            ops.push((op, operand, need, lit));
        }
        self.nary_chain(ops)
    }

    /// `a * b / c ...`: a reciprocal after the first operand prints after `/`, unless the
    /// chain would then fold into a literal or divide by a literal zero.
    fn product(&mut self, args: &[TermId], ty: &Type) -> Doc {
        let s = self.store;
        // `3 / 2` would fold into the literal 3/2: when every operand after a literal
        // first one is a literal's reciprocal, write `recip` instead.
        let fold_risk = is_lit(s, args[0])
            && args[1..].iter().all(|&a| {
                matches!(s.node(a), Node::Prim(Prim::Recip, r) if r.len() == 1 && is_lit(s, r[0]))
            });
        let items: Vec<(TermId, bool)> = args
            .iter()
            .enumerate()
            .map(|(i, &a)| match s.node(a) {
                // `x / 0` is refused by the elaborator: write `recip(0/1)`.
                Node::Prim(Prim::Recip, r)
                    if i > 0 && r.len() == 1 && !fold_risk && !is_zero_lit(s, r[0]) =>
                {
                    (r[0], true)
                }
                _ => (a, false),
            })
            .collect();
        let shown = join_elision(self.store, ty, &items, false, Raise::Field);
        let ops = items
            .iter()
            .zip(shown)
            .map(|(&(item, divisor), x)| {
                let op = if divisor { "/" } else { "*" };
                (op, Operand::Term(x), P_POW, is_lit(s, item))
            })
            .collect();
        self.nary_chain(ops)
    }

    /// An arithmetic chain whose operands follow the n-ary literal rule: the bool in
    /// each operand says whether it prints as a literal.
    fn nary_chain(&mut self, ops: Vec<(&str, Operand, u8, bool)>) -> Doc {
        let lits: Vec<bool> = ops.iter().map(|o| o.3).collect();
        let ck = nary_checked(&lits);
        let ops = ops
            .into_iter()
            .zip(ck)
            .map(|((op, x, need, _), c)| (op, x, need, c))
            .collect();
        self.chain(ops)
    }

    /// A block: statements one per line at one column, then the final expression.
    /// Walks the statement chain iteratively. In the file's top block (`file`), `fn x T:`
    /// headers also print one per line at the block's column, their bodies continuing the
    /// block (as Hakaru prints a file's parameters). Comments anchored at a statement
    /// print on the lines before it and at the end of its last line; those of the final
    /// expression likewise.
    fn block(&mut self, t: TermId, checked: bool, file: bool) -> Doc {
        let s = self.store;
        let mut items = Vec::new();
        let mut bound = 0usize;
        let mut last = None;
        let mut cur = t;
        let mut chk = checked;
        loop {
            match s.node(cur) {
                Node::Let(v, e, body) => {
                    self.comments_before(Anchor::Stmt(*v), &mut items);
                    let chosen = self.names.choose(s.var_name(*v));
                    self.names.reserve(&chosen.name);
                    let stmt = if let Node::Lam(..) = s.node(*e) {
                        self.def(&chosen.name, *e)
                    } else {
                        Doc::concat(vec![
                            Doc::text(format!("{} = ", chosen.name)),
                            self.doc(*e, P_OPEN, false),
                        ])
                    };
                    self.names.release(&chosen.name);
                    self.names.bind_chosen(*v, chosen);
                    bound += 1;
                    items.push(self.with_trailing(Anchor::Stmt(*v), stmt));
                    items.push(Doc::hard());
                    last = Some(*v);
                    cur = *body;
                    chk = false;
                }
                Node::Lam(v, body) if file => {
                    self.comments_before(Anchor::Stmt(*v), &mut items);
                    let name = self.names.bind(*v, s.var_name(*v));
                    let head = Doc::text(format!(
                        "fn {name} {}:",
                        self.prelude.type_text(s.var_type(*v))
                    ));
                    items.push(self.with_trailing(Anchor::Stmt(*v), head));
                    items.push(Doc::hard());
                    bound += 1;
                    last = Some(*v);
                    cur = *body;
                    chk = false;
                }
                Node::Bind(v, m, k) => {
                    self.comments_before(Anchor::Stmt(*v), &mut items);
                    let chosen = self.names.choose(s.var_name(*v));
                    self.names.reserve(&chosen.name);
                    let stmt = Doc::concat(vec![
                        Doc::text(format!("{} <~ ", chosen.name)),
                        self.doc(*m, P_OPEN, false),
                    ]);
                    self.names.release(&chosen.name);
                    self.names.bind_chosen(*v, chosen);
                    bound += 1;
                    items.push(self.with_trailing(Anchor::Stmt(*v), stmt));
                    items.push(Doc::hard());
                    last = Some(*v);
                    cur = *k;
                }
                _ => {
                    let anchor = match last {
                        Some(v) => Some(Anchor::Tail(v)),
                        None if file => Some(Anchor::Top),
                        None => None,
                    };
                    if let Some(a) = anchor {
                        self.comments_before(a, &mut items);
                    }
                    let d = self.doc(cur, P_BLOCK, chk);
                    items.push(match anchor {
                        Some(a) => self.with_trailing(a, d),
                        None => d,
                    });
                    break;
                }
            }
        }
        for _ in 0..bound {
            self.names.unbind();
        }
        Doc::align(Doc::concat(items))
    }

    /// The comment lines anchored before `a`, each followed by a line break.
    fn comments_before(&mut self, a: Anchor, items: &mut Vec<Doc>) {
        for note in self.comments.take_before(a) {
            items.push(Doc::comment(note.text));
            items.push(Doc::hard());
        }
    }

    /// `d` (the anchor `a` printed) with the comments that end `a`'s lines, joined, at
    /// the end of its first line.
    fn with_trailing(&mut self, a: Anchor, d: Doc) -> Doc {
        let notes = self.comments.take_trailing(a);
        if notes.is_empty() {
            return d;
        }
        let texts: Vec<String> = notes.into_iter().map(|n| n.text).collect();
        Doc::trail(format!(" {}", texts.join(" ")), d)
    }

    /// `def f(x T, y U) R:` and the body, for `f = fn x T: fn y U: body`.
    fn def(&mut self, name: &str, lam: TermId) -> Doc {
        let s = self.store;
        let mut params = Vec::new();
        let mut cur = lam;
        while let Node::Lam(v, body) = s.node(cur) {
            let p = self.names.bind(*v, s.var_name(*v));
            params.push(format!("{p} {}", self.prelude.type_text(s.var_type(*v))));
            cur = *body;
        }
        let head = Doc::text(format!(
            "def {name}({}) {}",
            params.join(", "),
            self.prelude.type_text(s.ty(cur))
        ));
        // The body is checked against the result type written in the head.
        let d = self.header(head, self.at_check(cur), false);
        for _ in &params {
            self.names.unbind();
        }
        d
    }
}

#[cfg(test)]
pub(crate) mod build;
#[cfg(test)]
mod roundtrip;
#[cfg(test)]
#[rustfmt::skip]
mod tests;
