//! The elaborator: type-checks the surface tree ([`ast::Expr`]) and builds typed,
//! hash-consed core terms in a [`Store`]. It is the only producer of core terms from user
//! text, so it is where safe coercions are inserted, literals get their types, names are
//! resolved to variables and built-ins, and where every user-facing type error is found.
//! It must not simplify (beyond the literal folding below), print, or evaluate anything.
//!
//! # Bidirectional checking
//! `infer(e)` computes a term and its type; `check(e, T)` is `infer(e)` followed by a fit
//! to `T`: equal types are fine; a type strictly below `T` in the numeric lattice
//! (`nat < int < real`, `nat < prob < real`) gets `Coerce(safe, _)`, except that a literal
//! is re-typed (`Lit(v) : T`, never `Coerce(_, Lit)`); anything else is
//! `expected T, found U`.
//!
//! Positions checked against a fixed type (so a printer may write a bare literal there):
//! arguments of primitive measures (`Dist::param_types`) and of fixed-type built-ins
//! (`exp` real, `log` prob, `sqrt` prob, `natroot` prob and nat, `gammaFunc` real,
//! `betaFunc` prob and prob, `choose` nat and nat, trigonometric real, `not` / `xor` / ...
//! bool), `a ** b` (prob, real), the exponent of `a ^ n` (nat), `weight(w, m)` and
//! `factor(w)` (w prob), `observe(m, v)` (v against m's element type), the explicit
//! coercions (their source type), `reduce(f, z, a)` (z against a's element type), index
//! `a[i]` (nat), the sizes of `array`, `plate`, `chain` and the `n` and `e` of
//! `r_index b = n of e` (nat), `integrate` bounds (real) and body (prob), `if` and
//! `r_split` conditions and `&&` / `||` operands (bool), arguments of user functions
//! (their parameter type), the body of a `def` with a result type.
//!
//! Forms that pass an expected type down instead of inferring: blocks (`x = e`, `x <~ m`,
//! `def`, `fn`: their final expression), `if` and `match` branches, `return e` /
//! `dirac(e)` (e against T when expecting `measure(T)`), `weight(w, m)` (m), `<|>`
//! operands, `left` / `right` / `just`, `reject`, `nothing`, pairs (componentwise), array
//! literals (each element against T when expecting `array(T)`), `array i of n: e` (e),
//! `plate` and `chain` bodies, `simplify` / `summarize`, and `e. T` (which checks `e`
//! against `T`). Everything else is inferred and then fitted.
//!
//! In infer mode, `if` and `match` branches, array-literal elements and `<|>` operands
//! are inferred (literals with their natural types); numeric types are joined, other
//! types must be equal; each is then fitted to that type. A branch that cannot be
//! inferred on its own (`reject`, `nothing`, `[]`, `left(..)`, `right(..)`) is checked
//! against the type of the others.
//!
//! # Literals
//! `3` is a nat literal, `0.5` a prob literal. Literal-only subtrees are folded before any
//! typing decision: a sign on a nat/int literal gives an int literal (`-3`, `+3`), on a
//! prob/real literal a real literal; a `/`-only chain of literals folds left to right, the
//! type of `a / b` being the field above the join of theirs (`1/2` : prob, `-1/2` : real);
//! dividing by a literal zero is an error. Nothing else folds (`1 + 2` stays a sum).
//!
//! # Numeric operators
//! `+ -` chains become one n-ary `Prim(Add)` (`a - b` is `Add[a, Neg b]`, a negated literal
//! is folded: `x - 3` is `Add[x, Lit(-3)]`), `* /` chains one `Prim(Mul)` (`a / b` is
//! `Mul[a, Recip b]`). Every non-literal operand is inferred; the operands' common type is
//! the join of their types and the literals' natural types, raised to a ring when the
//! chain negates and to a field when it divides; every operand is then fitted to it. The
//! same join (without raising) types `min`, `max`, comparisons (`>`/`>=` become `Lt`/`Le`
//! with swapped arguments), array literals in infer mode, and `summate`/`product`/`bucket`
//! bounds (which must be integral). `&&`, `||` and `<|>` chains become one n-ary node each.
//!
//! # Recursion
//! Statement sequences (`x = e`, `x <~ m`, `def`, nested `fn`s) are walked in a loop and
//! their terms built bottom-up afterwards, so a program of many statements does not
//! recurse once per statement; operator chains are flat. Other nesting recurses with an
//! explicit depth limit ([`MAX_DEPTH`]), reported as an error rather than a stack overflow.

mod block;
mod call;
mod data;
pub use data::{Ctor, DataType};
mod program;
pub use program::{Located, Module};
mod forms;
mod hints;
mod library;
pub(crate) use library::library_var;
mod lit;
#[cfg(test)]
pub(crate) mod tests;

use rustc_hash::FxHashMap;

use crate::diag::{Diagnostic, Span, SpanMap};
use crate::syntax::ast::{ChainOp, Expr, ExprKind, TypeExpr, TypeExprKind};
use crate::term::{Node, Prim, Store, TermId, VarId};
use crate::types::{Coercion, Type};

/// How deeply expressions may nest (outside statement sequences and operator chains)
/// before the elaborator reports an error instead of recursing further.
pub const MAX_DEPTH: usize = 256;

/// Type-checks `program` and builds its core term in `store`. On failure returns every
/// error found (at least one), in source order of discovery.
pub fn elaborate(store: &mut Store, program: &Expr) -> Result<TermId, Vec<Diagnostic>> {
    run(Elab::new(store), program).map(|done| done.term)
}

/// Like [`elaborate`], also returning where in the source each term came from (see
/// [`SpanMap`]), so that errors found later (at run time) can point at the source.
pub fn elaborate_with_spans(
    store: &mut Store,
    program: &Expr,
) -> Result<(TermId, SpanMap), Vec<Diagnostic>> {
    let mut cx = Elab::new(store);
    cx.spans = Some(SpanMap::default());
    run(cx, program).map(|done| (done.term, done.spans.unwrap_or_default()))
}

/// The variable each block statement bound, keyed by the span of the name it binds.
pub type Statements = Vec<(Span, VarId)>;

/// [`elaborate`], also returning the variable each block statement (`x = e`, `x <~ m`,
/// `def f`, `fn x T`) bound, keyed by the span of its name: how `fmt` finds, in the core
/// term, the statements that comments were written next to.
pub fn elaborate_with_binders(
    store: &mut Store,
    program: &Expr,
) -> Result<(TermId, Statements), Vec<Diagnostic>> {
    run(Elab::new(store), program).map(|done| (done.term, done.statements))
}

/// What a successful elaboration leaves: the term and the side tables recorded on the way.
pub struct Elaborated {
    /// The program's term: one `let` per imported definition, then the file's own term.
    pub term: TermId,
    /// Where each term of the program's own file came from, if asked for.
    pub spans: Option<SpanMap>,
    /// The variable each statement of the program's own file bound.
    pub statements: Statements,
    /// How many `let`s at the top of `term` are imported definitions.
    pub imported: usize,
    /// The data types in scope: the imported ones first (`imported_data` of them), then
    /// the file's own, in declaration order.
    pub data: Vec<DataType>,
    pub imported_data: usize,
}

/// Elaborates a program whose imports `front` has resolved: `modules` in dependency
/// order (each after those it imports), then `main` (see `program`). Each error says
/// which file it is about. `spans`: also record where each term came from.
pub fn elaborate_program(
    store: &mut Store,
    modules: &[Module<'_>],
    main: &Expr,
    spans: bool,
) -> Result<Elaborated, Vec<Located>> {
    let mut cx = Elab::new(store);
    if spans {
        cx.spans = Some(SpanMap::default());
    }
    program::elaborate(cx, modules, main, true)
}

/// [`elaborate_with_binders`] with everything the elaborator records (for `fmt`: the
/// data types, which the printer reads back).
pub fn elaborate_full(store: &mut Store, program: &Expr) -> Result<Elaborated, Vec<Diagnostic>> {
    run(Elab::new(store), program)
}

/// A program read from no file: an `import` in it is an error.
fn run(cx: Elab<'_>, program: &Expr) -> Result<Elaborated, Vec<Diagnostic>> {
    program::elaborate(cx, &[], program, false)
        .map_err(|ds| ds.into_iter().map(|(_, d)| d).collect())
}

/// Marker for "an error has been recorded in `Elab::errors`".
#[derive(Clone, Copy, Debug)]
struct Failed;

type R<T> = Result<T, Failed>;

/// Lexical scopes: each name maps to the stack of variables it has been bound to, and a
/// log of bindings in order lets a scope be closed in O(bindings it made).
#[derive(Default)]
struct Scopes {
    map: FxHashMap<String, Vec<VarId>>,
    log: Vec<String>,
}

/// The elaborator's state for one program.
struct Elab<'s> {
    store: &'s mut Store,
    scopes: Scopes,
    errors: Vec<Diagnostic>,
    depth: usize,
    /// The depth-limit error is reported once, not once per sibling that hits it.
    too_deep_reported: bool,
    /// The argument position being checked for a named function: a fit failure at exactly
    /// this span is reported as `'f' expects T, found U`.
    who: Option<(Span, String)>,
    /// Where each term came from, when the caller asked for it (recording costs a hash
    /// insert per expression, which plain type-checking need not pay).
    spans: Option<SpanMap>,
    /// The variable bound by each block statement, by the span of its name.
    statements: Statements,
    /// How many standard-library definitions (in file order) names may resolve to: all
    /// of them in a program, the ones above it while a library definition is elaborated.
    library_limit: usize,
    /// The variables bound by `def f():` (no parameters): `f()` names their value, as in
    /// Hakaru, while a call with no arguments of anything else stays an error.
    nullary: std::collections::HashSet<VarId>,
    /// The data types in scope (the file's own and its imports'), in declaration order.
    data: Vec<DataType>,
    /// The `import` and `data` statements (by where they start) that the front end has
    /// taken care of: the file's top block skips them; any other is misplaced.
    handled: std::collections::HashSet<(usize, u32)>,
    /// Which file is being elaborated: 0 the program's own, `i + 1` its `i`th module.
    file: usize,
}

impl<'s> Elab<'s> {
    fn new(store: &'s mut Store) -> Elab<'s> {
        Elab {
            store,
            scopes: Scopes::default(),
            errors: Vec::new(),
            depth: 0,
            too_deep_reported: false,
            who: None,
            spans: None,
            statements: Vec::new(),
            library_limit: usize::MAX,
            nullary: std::collections::HashSet::new(),
            data: Vec::new(),
            handled: std::collections::HashSet::new(),
            file: 0,
        }
    }

    // ---- diagnostics -------------------------------------------------------------------

    fn err(&mut self, span: Span, message: impl Into<String>) -> Failed {
        self.errors.push(Diagnostic::new(span, message));
        Failed
    }

    fn mismatch(&mut self, span: Span, want: &Type, have: &Type) -> Failed {
        let message = match &self.who {
            Some((s, name)) if *s == span => format!("'{name}' expects {want}, found {have}"),
            _ => format!("expected {want}, found {have}"),
        };
        self.err(span, message)
    }

    // ---- scopes ------------------------------------------------------------------------

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes.map.get(name).and_then(|vs| vs.last().copied())
    }

    fn is_bound(&self, name: &str) -> bool {
        self.lookup(name).is_some()
    }

    /// A fresh variable named `name` of type `ty`, in scope until `pop_to`.
    fn bind(&mut self, name: &str, ty: Type) -> VarId {
        let v = self.store.fresh_var(name, ty);
        self.scopes.map.entry(name.to_string()).or_default().push(v);
        self.scopes.log.push(name.to_string());
        v
    }

    fn mark(&self) -> usize {
        self.scopes.log.len()
    }

    fn pop_to(&mut self, mark: usize) {
        while self.scopes.log.len() > mark {
            let Some(name) = self.scopes.log.pop() else {
                break;
            };
            if let Some(vs) = self.scopes.map.get_mut(&name) {
                vs.pop();
            }
        }
    }

    // ---- fitting -----------------------------------------------------------------------

    fn ty(&self, t: TermId) -> Type {
        self.store.ty(t).clone()
    }

    /// `t` as a term of type `want`: unchanged, re-typed (literals) or safely coerced.
    fn coerce(&mut self, t: TermId, want: &Type, span: Span) -> R<TermId> {
        let have = self.ty(t);
        if &have == want {
            return Ok(t);
        }
        if let Some(c) = Coercion::safe(&have, want) {
            if let Node::Lit(v) = self.store.node(t) {
                let v = v.clone();
                return Ok(self.store.lit(v.into_big(), want.clone()));
            }
            return Ok(self.store.intern(Node::Coerce(c, t), want.clone()));
        }
        let failed = self.mismatch(span, want, &have);
        self.hint_for(t, Some(want));
        Err(failed)
    }

    /// Fits `t` to the expected type, if there is one.
    fn fit(&mut self, t: TermId, expected: Option<&Type>, span: Span) -> R<TermId> {
        match expected {
            Some(want) => self.coerce(t, want, span),
            None => Ok(t),
        }
    }

    // ---- entry points ------------------------------------------------------------------

    fn infer(&mut self, e: &Expr) -> R<TermId> {
        self.elab(e, None)
    }

    fn check(&mut self, e: &Expr, want: &Type) -> R<TermId> {
        self.elab(e, Some(want))
    }

    /// `check`, reporting a mismatch of the whole argument as `'who' expects T, found U`.
    fn check_arg(&mut self, e: &Expr, want: &Type, who: &str) -> R<TermId> {
        let saved = self.who.replace((e.span, who.to_string()));
        let r = self.check(e, want);
        self.who = saved;
        r
    }

    /// Runs `f` one nesting level deeper, or reports that the input nests too deeply.
    fn nested<T>(&mut self, span: Span, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.depth >= MAX_DEPTH {
            return Err(self.too_deep(span));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn elab(&mut self, e: &Expr, expected: Option<&Type>) -> R<TermId> {
        if self.depth >= MAX_DEPTH {
            return Err(self.too_deep(e.span));
        }
        self.depth += 1;
        let r = self.elab_node(e, expected);
        self.depth -= 1;
        if let (Ok(t), Some(spans)) = (&r, self.spans.as_mut()) {
            spans.record(*t, e.span);
            // a coercion inserted by fitting has the span of what it wraps, and run-time
            // errors (an index out of range) happen in the wrapped term
            if let Node::Coerce(_, inner) = self.store.node(*t) {
                spans.record(*inner, e.span);
            }
        }
        r
    }

    fn too_deep(&mut self, span: Span) -> Failed {
        if !self.too_deep_reported {
            self.too_deep_reported = true;
            self.err(
                span,
                format!("expression nested too deeply (more than {MAX_DEPTH} levels)"),
            );
        }
        Failed
    }

    /// The forms that use an expected type; the rest are inferred and then fitted. (Each
    /// arm is one call: this function is on every recursion path, so its frame stays small.)
    fn elab_node(&mut self, e: &Expr, expected: Option<&Type>) -> R<TermId> {
        use ExprKind as K;
        let span = e.span;
        match &e.kind {
            K::Let(..) | K::Bind(..) | K::Def { .. } | K::Lam(..) | K::Import(..) | K::Data(..) => {
                self.block(e, expected)
            }
            K::If(c, a, b) => self.if_expr(c, a, b, expected),
            K::Match(s, arms) => self.match_expr(e, s, arms, expected),
            K::Return(x) => self.dirac(x, expected, span),
            K::Pair(a, b) => self.pair(a, b, expected, span),
            K::ArrayLit(xs) => self.array_lit(xs, expected, span),
            K::Array(i, n, body) => self.array(i, n, body, expected, span),
            K::Plate(i, n, m) => self.plate(i, n, m, expected, span),
            K::Chain(s, s0, n, m) => self.chain(s, s0, n, m, expected, span),
            K::Ann(x, t) => self.annotated(x, t, expected, span),
            K::Var(name) => self.name(name, expected, span),
            K::Call(f, args) => self.call(f, args, expected, span),
            K::OpChain(first, rest) if rest.iter().all(|(op, _)| *op == ChainOp::Superpose) => {
                self.superpose(first, rest, expected, span)
            }
            _ => self.inferred(e, expected),
        }
    }

    /// `e. T`: `e` checked against `T`.
    fn annotated(
        &mut self,
        x: &Expr,
        t: &TypeExpr,
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let want = self.resolve_type(t)?;
        let r = self.check(x, &want)?;
        self.fit(r, expected, span)
    }

    /// A form that is inferred, then fitted to the expected type.
    fn inferred(&mut self, e: &Expr, expected: Option<&Type>) -> R<TermId> {
        let t = self.infer_form(e)?;
        self.fit(t, expected, e.span)
    }

    fn infer_form(&mut self, e: &Expr) -> R<TermId> {
        use ExprKind as K;
        let span = e.span;
        match &e.kind {
            K::Nat(_) | K::Decimal(_) | K::Neg(_) | K::Plus(_) | K::OpChain(..) => self.numeric(e),
            K::Infinity => Ok(self.store.prim(Prim::Infinity, vec![], Type::Prob)),
            K::Unit => Ok(self.store.intern(Node::Unit, Type::Unit)),
            K::Index(a, i) => self.index(a, i),
            K::Pow(op, a, b) => self.pow(*op, a, b),
            K::Compare(op, a, b) => self.compare(*op, a, b),
            K::Summate(i, lo, hi, body) => self.sum_or_product(true, i, lo, hi, body),
            K::Product(i, lo, hi, body) => self.sum_or_product(false, i, lo, hi, body),
            K::Integrate(x, lo, hi, body) => self.integrate(x, lo, hi, body),
            K::Bucket(j, lo, hi, r) => self.bucket(j, lo, hi, r),
            K::RAdd(_) => Err(self.reducer_outside("r_add", span)),
            K::RNop => Err(self.reducer_outside("r_nop", span)),
            K::RIndex(..) => Err(self.reducer_outside("r_index", span)),
            K::RSplit(..) => Err(self.reducer_outside("r_split", span)),
            K::RFanout(..) => Err(self.reducer_outside("r_fanout", span)),
            K::Expect(..) => Err(self.not_implemented("expect", span)),
            // The forms `elab_node` handles itself.
            K::Let(..)
            | K::Bind(..)
            | K::Def { .. }
            | K::Lam(..)
            | K::Import(..)
            | K::Data(..)
            | K::If(..)
            | K::Match(..)
            | K::Return(_)
            | K::Pair(..)
            | K::ArrayLit(_)
            | K::Array(..)
            | K::Plate(..)
            | K::Chain(..)
            | K::Ann(..)
            | K::Var(_)
            | K::Call(..) => self.elab_node(e, None),
        }
    }

    /// Literals (folded), prefix signs, and operator chains.
    fn numeric(&mut self, e: &Expr) -> R<TermId> {
        if let Some((v, ty)) = self.literal(e)? {
            return Ok(self.store.lit(v, ty));
        }
        match &e.kind {
            ExprKind::Neg(x) => self.negate(x),
            // `+e` on a non-literal is the identity.
            ExprKind::Plus(x) => self.infer(x),
            ExprKind::OpChain(first, rest) => self.op_chain(first, rest, e.span),
            _ => Err(self.err(e.span, "internal error: unfolded literal")),
        }
    }

    fn reducer_outside(&mut self, name: &str, span: Span) -> Failed {
        self.err(span, format!("'{name}' is only allowed in a bucket"))
    }

    fn not_implemented(&mut self, name: &str, span: Span) -> Failed {
        self.err(span, format!("transform '{name}' is not implemented yet"))
    }

    // ---- types -------------------------------------------------------------------------

    /// The type a type expression denotes.
    fn resolve_type(&mut self, t: &TypeExpr) -> R<Type> {
        self.nested(t.span, |cx| cx.resolve_type_node(t))
    }

    fn resolve_type_node(&mut self, t: &TypeExpr) -> R<Type> {
        match &t.kind {
            TypeExprKind::Name(name) => match name.as_str() {
                "nat" => Ok(Type::Nat),
                "int" => Ok(Type::Int),
                "prob" => Ok(Type::Prob),
                "real" => Ok(Type::Real),
                "unit" => Ok(Type::Unit),
                "bool" => Ok(Type::Bool),
                other if self.data_type(other).is_some() => {
                    Ok(self.data_type(other).map_or(Type::Unit, |d| d.ty.clone()))
                }
                other => match type_constructor_arity(other) {
                    Some(n) => Err(self.type_arity(t.span, other, n, 0)),
                    None => Err(self.unknown_type(t.span, other)),
                },
            },
            TypeExprKind::App(name, args) => {
                let Some(want) = type_constructor_arity(name) else {
                    return Err(match name.as_str() {
                        n if self.data_type(n).is_some() => {
                            self.type_arity(t.span, name, 0, args.len())
                        }
                        "nat" | "int" | "prob" | "real" | "unit" | "bool" => {
                            self.type_arity(t.span, name, 0, args.len())
                        }
                        other => self.unknown_type(t.span, other),
                    });
                };
                if args.len() != want {
                    return Err(self.type_arity(t.span, name, want, args.len()));
                }
                let mut tys = Vec::with_capacity(args.len());
                for a in args {
                    tys.push(self.resolve_type(a)?);
                }
                let mut tys = tys.into_iter();
                let (Some(a), b) = (tys.next(), tys.next()) else {
                    return Err(self.type_arity(t.span, name, want, 0));
                };
                Ok(match (name.as_str(), b) {
                    ("array", None) => Type::array(a),
                    ("measure", None) => Type::measure(a),
                    ("maybe", None) => Type::maybe(a),
                    ("pair", Some(b)) => Type::pair(a, b),
                    ("either", Some(b)) => Type::either(a, b),
                    _ => return Err(self.type_arity(t.span, name, want, args.len())),
                })
            }
            TypeExprKind::Fun(a, b) => {
                let a = self.resolve_type(a)?;
                let b = self.resolve_type(b)?;
                Ok(Type::fun(a, b))
            }
        }
    }

    fn type_arity(&mut self, span: Span, name: &str, want: usize, found: usize) -> Failed {
        let want = match want {
            0 => "no type arguments".to_string(),
            1 => "1 type argument".to_string(),
            n => format!("{n} type arguments"),
        };
        self.err(span, format!("'{name}' takes {want}, found {found}"))
    }
}

/// How many type arguments a type constructor takes.
fn type_constructor_arity(name: &str) -> Option<usize> {
    match name {
        "array" | "measure" | "maybe" => Some(1),
        "pair" | "either" => Some(2),
        _ => None,
    }
}

/// `takes no arguments` / `takes 1 argument` / `takes 2 arguments`.
fn takes(n: usize) -> String {
    match n {
        0 => "takes no arguments".to_string(),
        1 => "takes 1 argument".to_string(),
        n => format!("takes {n} arguments"),
    }
}

/// Does `e` need an expected type to be elaborated (so that, among branches, it should be
/// checked against the others' type rather than inferred)?
fn needs_expected(cx: &Elab<'_>, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(n) => (n == "reject" || n == "nothing") && !cx.is_bound(n),
        ExprKind::ArrayLit(xs) => xs.is_empty(),
        ExprKind::Call(f, _) => {
            matches!(&f.kind, ExprKind::Var(n) if (n == "left" || n == "right") && !cx.is_bound(n))
        }
        _ => false,
    }
}
