//! The IR verifier: re-derives the type of every node of a core term from its children's
//! types by the core typing rules (the doc comments of `term::Node`, `term::Prim` and
//! `term::Dist`) and checks it against the type stored in the [`Store`].
//!
//! Every pass calls it on its output (STYLE.md: verify after every pass), so it is the
//! place where a rewrite that built an ill-typed node is caught, with a typed error that
//! names the node and what was expected. It checks each distinct node once (terms are
//! hash-consed DAGs) with an explicit work stack, so 10,000-statement chains are fine.
//! It does not check scoping (a variable used outside its binder) nor meaning, and it
//! never changes the term.

use std::fmt;

use num_rational::BigRational;

use crate::term::{Node, Pattern, Prim, Store, TermId};
use crate::types::Type;

/// What a typing rule wanted where it found something else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Exactly this type.
    Type(Type),
    /// `nat`, `int`, `prob` or `real`.
    Numeric,
    /// `int` or `real` (closed under negation).
    Ring,
    /// `prob` or `real` (closed under reciprocal).
    Field,
    /// `nat` or `int`.
    Integral,
    /// A numeric type, `bool` or `unit` (what `==` compares).
    Comparable,
    /// `measure(_)`.
    Measure,
    /// `array(_)`.
    Array,
    /// `either(_, _)`.
    Either,
    /// `maybe(_)`.
    Maybe,
    /// `A -> B`.
    Function,
    /// One of the listed types (overloaded built-ins like `abs`).
    OneOf(Vec<Type>),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Type(t) => write!(f, "{t}"),
            Expected::Numeric => f.write_str("a numeric type"),
            Expected::Ring => f.write_str("int or real"),
            Expected::Field => f.write_str("prob or real"),
            Expected::Integral => f.write_str("nat or int"),
            Expected::Comparable => f.write_str("a numeric type, bool or unit"),
            Expected::Measure => f.write_str("measure(_)"),
            Expected::Array => f.write_str("array(_)"),
            Expected::Either => f.write_str("either(_, _)"),
            Expected::Maybe => f.write_str("maybe(_)"),
            Expected::Function => f.write_str("a function type"),
            Expected::OneOf(ts) => {
                let names: Vec<String> = ts.iter().map(Type::to_string).collect();
                write!(f, "one of {}", names.join(", "))
            }
        }
    }
}

/// Why a node is ill-typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyErrorKind {
    /// A child (or the node itself, `what` = "result") has the wrong type.
    Mismatch {
        what: String,
        expected: Expected,
        found: Type,
    },
    /// A node has the wrong number of children (`expected` says how many it needs).
    Arity { expected: String, found: usize },
    /// A literal whose value is not in its type (a negative nat, a fractional int, ...),
    /// or a literal of a non-numeric type.
    LiteralOutOfType { value: BigRational, ty: Type },
    /// A `match` pattern that cannot match values of the scrutinee's type (or whose
    /// variable has the wrong type).
    Pattern { arm: usize, scrutinee: Type },
    /// A `match` with no arms.
    EmptyMatch,
}

/// An ill-typed node: which one (its id and kind) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub term: TermId,
    /// The node's kind, as a short name (`Add`, `Bind`, `Dist(normal)`, ...).
    pub node: String,
    pub kind: VerifyErrorKind,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "term #{} ({}): ", self.term.index(), self.node)?;
        match &self.kind {
            VerifyErrorKind::Mismatch {
                what,
                expected,
                found,
            } => write!(f, "{what}: expected {expected}, found {found}"),
            VerifyErrorKind::Arity { expected, found } => {
                write!(f, "expected {expected} arguments, found {found}")
            }
            VerifyErrorKind::LiteralOutOfType { value, ty } => {
                write!(f, "literal {value} is not a value of type {ty}")
            }
            VerifyErrorKind::Pattern { arm, scrutinee } => {
                write!(f, "the pattern of arm {arm} cannot match a {scrutinee}")
            }
            VerifyErrorKind::EmptyMatch => f.write_str("match without arms"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Check that every node of `t` has the type the typing rules give it.
pub fn verify(store: &Store, t: TermId) -> Result<(), VerifyError> {
    for u in store.subterms(t) {
        let node = store.node(u);
        Checker {
            s: store,
            t: u,
            node,
        }
        .check()?;
    }
    Ok(())
}

/// The short name of a node kind, for error messages.
fn node_name(n: &Node) -> String {
    match n {
        Node::Prim(p, _) => format!("{p:?}"),
        Node::Dist(d, _) => format!("Dist({})", d.name()),
        Node::Coerce(c, _) => format!("Coerce({})", c.name()),
        Node::Transform(tr, _) => format!("Transform({})", tr.name()),
        other => {
            let d = format!("{other:?}");
            d.split(['(', ' ']).next().unwrap_or("?").to_string()
        }
    }
}

/// Checks one node against its children's stored types.
struct Checker<'a> {
    s: &'a Store,
    t: TermId,
    node: &'a Node,
}

type R = Result<(), VerifyError>;

impl Checker<'_> {
    fn err(&self, kind: VerifyErrorKind) -> VerifyError {
        VerifyError {
            term: self.t,
            node: node_name(self.node),
            kind,
        }
    }

    fn mismatch(&self, what: &str, expected: Expected, found: &Type) -> VerifyError {
        self.err(VerifyErrorKind::Mismatch {
            what: what.to_string(),
            expected,
            found: found.clone(),
        })
    }

    fn ty(&self) -> &Type {
        self.s.ty(self.t)
    }

    /// `found` must be exactly `want`.
    fn is(&self, what: &str, found: &Type, want: &Type) -> R {
        if found == want {
            Ok(())
        } else {
            Err(self.mismatch(what, Expected::Type(want.clone()), found))
        }
    }

    /// Child `c` must have type `want`.
    fn child(&self, what: &str, c: TermId, want: &Type) -> R {
        self.is(what, self.s.ty(c), want)
    }

    /// The node's own type must be `want`.
    fn result(&self, want: &Type) -> R {
        self.is("result", self.ty(), want)
    }

    fn class(&self, what: &str, found: &Type, ok: bool, expected: Expected) -> R {
        if ok {
            Ok(())
        } else {
            Err(self.mismatch(what, expected, found))
        }
    }

    fn arity(&self, expected: &str, ok: bool, found: usize) -> R {
        if ok {
            Ok(())
        } else {
            Err(self.err(VerifyErrorKind::Arity {
                expected: expected.to_string(),
                found,
            }))
        }
    }

    /// The element type of the measure type of child `c` (`what` names it).
    fn measure_of(&self, what: &str, c: TermId) -> Result<&Type, VerifyError> {
        let t = self.s.ty(c);
        t.measure_of()
            .ok_or_else(|| self.mismatch(what, Expected::Measure, t))
    }

    fn check(&self) -> R {
        let s = self.s;
        let ty = self.ty();
        match self.node {
            Node::Var(v) => self.result(s.var_type(*v)),
            Node::Lit(q) => {
                let ok = match ty {
                    Type::Nat => q.is_integer() && !q.is_negative(),
                    Type::Int => q.is_integer(),
                    Type::Prob => !q.is_negative(),
                    Type::Real => true,
                    _ => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(self.err(VerifyErrorKind::LiteralOutOfType {
                        value: q.to_big(),
                        ty: ty.clone(),
                    }))
                }
            }
            Node::Bool(_) => self.result(&Type::Bool),
            Node::Unit | Node::RNop => self.result(&Type::Unit),
            Node::Pair(a, b) | Node::RFanout(a, b) => {
                self.result(&Type::pair(s.ty(*a).clone(), s.ty(*b).clone()))
            }
            Node::Left(e) => match ty {
                Type::Either(l, _) => self.child("argument", *e, l),
                _ => Err(self.mismatch("result", Expected::Either, ty)),
            },
            Node::Right(e) => match ty {
                Type::Either(_, r) => self.child("argument", *e, r),
                _ => Err(self.mismatch("result", Expected::Either, ty)),
            },
            Node::Just(e) => self.result(&Type::maybe(s.ty(*e).clone())),
            Node::Nothing => {
                self.class("result", ty, matches!(ty, Type::Maybe(_)), Expected::Maybe)
            }
            Node::Prim(p, args) => self.prim(*p, args),
            Node::Coerce(c, e) => {
                self.child("argument", *e, &c.from_type())?;
                self.result(&c.to_type())
            }
            Node::Let(x, e, body) => {
                self.child("bound expression", *e, s.var_type(*x))?;
                self.result(s.ty(*body))
            }
            Node::Lam(x, body) => {
                self.result(&Type::fun(s.var_type(*x).clone(), s.ty(*body).clone()))
            }
            Node::App(f, a) => match s.ty(*f) {
                Type::Fun(dom, cod) => {
                    self.child("argument", *a, dom)?;
                    self.result(cod)
                }
                other => Err(self.mismatch("function", Expected::Function, other)),
            },
            Node::If(c, a, b) => {
                self.child("condition", *c, &Type::Bool)?;
                self.child("then-branch", *a, ty)?;
                self.child("else-branch", *b, ty)
            }
            Node::Match(e, arms) => {
                if arms.is_empty() {
                    return Err(self.err(VerifyErrorKind::EmptyMatch));
                }
                let st = s.ty(*e);
                for (i, (p, body)) in arms.iter().enumerate() {
                    if !pattern_fits(s, p, st) {
                        return Err(self.err(VerifyErrorKind::Pattern {
                            arm: i,
                            scrutinee: st.clone(),
                        }));
                    }
                    self.child(&format!("body of arm {i}"), *body, ty)?;
                }
                Ok(())
            }
            Node::ArrayLit(xs) => {
                let elem = ty
                    .array_of()
                    .ok_or_else(|| self.mismatch("result", Expected::Array, ty))?;
                for (i, &x) in xs.iter().enumerate() {
                    self.child(&format!("element {i}"), x, elem)?;
                }
                Ok(())
            }
            Node::Array(i, n, e) => {
                self.is("index variable", s.var_type(*i), &Type::Nat)?;
                self.child("size", *n, &Type::Nat)?;
                self.result(&Type::array(s.ty(*e).clone()))
            }
            Node::Index(a, i) => {
                self.child("index", *i, &Type::Nat)?;
                self.child("array", *a, &Type::array(ty.clone()))
            }
            Node::Summate(i, lo, hi, e) | Node::Product(i, lo, hi, e) => {
                let it = s.var_type(*i);
                self.class("index variable", it, it.is_integral(), Expected::Integral)?;
                self.child("lower bound", *lo, it)?;
                self.child("upper bound", *hi, it)?;
                self.class("result", ty, ty.is_numeric(), Expected::Numeric)?;
                self.child("body", *e, ty)
            }
            Node::Integrate(x, lo, hi, e) => {
                self.is("variable", s.var_type(*x), &Type::Real)?;
                self.child("lower bound", *lo, &Type::Real)?;
                self.child("upper bound", *hi, &Type::Real)?;
                self.child("body", *e, &Type::Prob)?;
                self.result(&Type::Prob)
            }
            Node::Bucket(j, lo, hi, r) => {
                let jt = s.var_type(*j);
                self.class("index variable", jt, jt.is_integral(), Expected::Integral)?;
                self.child("lower bound", *lo, jt)?;
                self.child("upper bound", *hi, jt)?;
                self.result(s.ty(*r))
            }
            Node::RAdd(e) => {
                self.class("result", ty, ty.is_numeric(), Expected::Numeric)?;
                self.child("summand", *e, ty)
            }
            Node::RIndex(b, n, e, r) => {
                self.is("bucket variable", s.var_type(*b), &Type::Nat)?;
                self.child("bucket count", *n, &Type::Nat)?;
                self.child("bucket index", *e, &Type::Nat)?;
                self.result(&Type::array(s.ty(*r).clone()))
            }
            Node::RSplit(c, r1, r2) => {
                self.child("condition", *c, &Type::Bool)?;
                self.result(&Type::pair(s.ty(*r1).clone(), s.ty(*r2).clone()))
            }
            Node::Dirac(e) => self.result(&Type::measure(s.ty(*e).clone())),
            Node::Weight(w, m) => {
                self.child("weight", *w, &Type::Prob)?;
                self.measure_of("measure", *m)?;
                self.child("measure", *m, ty)
            }
            Node::Reject => self.class("result", ty, ty.measure_of().is_some(), Expected::Measure),
            Node::Superpose(ms) => {
                self.arity("at least 2", ms.len() >= 2, ms.len())?;
                self.class("result", ty, ty.measure_of().is_some(), Expected::Measure)?;
                for (i, &m) in ms.iter().enumerate() {
                    self.child(&format!("operand {i}"), m, ty)?;
                }
                Ok(())
            }
            Node::Bind(x, m, k) => {
                self.child("measure", *m, &Type::measure(s.var_type(*x).clone()))?;
                self.measure_of("body", *k)?;
                self.result(s.ty(*k))
            }
            Node::Plate(i, n, m) => {
                self.is("index variable", s.var_type(*i), &Type::Nat)?;
                self.child("size", *n, &Type::Nat)?;
                let elem = self.measure_of("body", *m)?;
                self.result(&Type::measure(Type::array(elem.clone())))
            }
            Node::Chain(st, s0, n, m) => {
                let state = s.var_type(*st);
                self.child("initial state", *s0, state)?;
                self.child("length", *n, &Type::Nat)?;
                let step = self.measure_of("step", *m)?;
                match step {
                    Type::Pair(a, st2) if **st2 == *state => self.result(&Type::measure(
                        Type::pair(Type::array((**a).clone()), state.clone()),
                    )),
                    other => Err(self.mismatch(
                        "step",
                        Expected::Type(Type::measure(Type::pair(Type::Unit, state.clone()))),
                        &Type::measure(other.clone()),
                    )),
                }
            }
            Node::Dist(d, args) => {
                let params = d.param_types();
                self.arity(
                    &params.len().to_string(),
                    params.len() == args.len(),
                    args.len(),
                )?;
                for (i, (&a, p)) in args.iter().zip(&params).enumerate() {
                    self.child(&format!("argument {i}"), a, p)?;
                }
                self.result(&Type::measure(d.support_type()))
            }
            Node::Observe(m, v) => {
                let elem = self.measure_of("measure", *m)?;
                self.child("value", *v, elem)?;
                self.result(s.ty(*m))
            }
            Node::Transform(tr, e) => match tr.result_type(s.ty(*e)) {
                Some(ty) => self.result(&ty),
                None => Err(self.mismatch("argument", Expected::Measure, s.ty(*e))),
            },
        }
    }

    fn prim(&self, p: Prim, args: &[TermId]) -> R {
        use Prim::*;
        let s = self.s;
        let ty = self.ty();
        match p.arity() {
            Some(n) => self.arity(&n.to_string(), args.len() == n, args.len())?,
            None => self.arity("at least 2", args.len() >= 2, args.len())?,
        }
        let arg = |i: usize| s.ty(args[i]);
        let all = |want: &Type| -> R {
            for (i, &a) in args.iter().enumerate() {
                self.child(&format!("argument {i}"), a, want)?;
            }
            Ok(())
        };
        // `(argument types, result type)` for the fixed-type primitives.
        let fixed = |params: &[Type], res: Type| -> R {
            for (i, (&a, want)) in args.iter().zip(params).enumerate() {
                self.child(&format!("argument {i}"), a, want)?;
            }
            self.result(&res)
        };
        // Overloaded unary primitives: `(argument, result)` pairs.
        let overloaded = |table: &[(Type, Type)]| -> R {
            let a = arg(0);
            match table.iter().find(|(from, _)| from == a) {
                Some((_, to)) => self.result(to),
                None => Err(self.mismatch(
                    "argument 0",
                    Expected::OneOf(table.iter().map(|(f, _)| f.clone()).collect()),
                    a,
                )),
            }
        };
        let (n, i, pr, r) = (Type::Nat, Type::Int, Type::Prob, Type::Real);
        match p {
            Add | Mul => {
                self.class("result", ty, ty.is_numeric(), Expected::Numeric)?;
                all(ty)
            }
            Neg => {
                self.class("result", ty, ty.is_ring(), Expected::Ring)?;
                all(ty)
            }
            Recip => {
                self.class("result", ty, ty.is_field(), Expected::Field)?;
                all(ty)
            }
            Min | Max => {
                self.class("result", ty, ty.is_numeric(), Expected::Numeric)?;
                all(ty)
            }
            Pow => {
                self.class("result", ty, ty.is_numeric(), Expected::Numeric)?;
                fixed(&[ty.clone(), n], ty.clone())
            }
            Abs => overloaded(&[(i, n), (r, pr)]),
            Signum => overloaded(&[(i.clone(), i), (r.clone(), r)]),
            Floor => overloaded(&[(pr, n), (r, i)]),
            Erf => overloaded(&[(r.clone(), r), (pr.clone(), pr)]),
            RealPow | NatRoot | Exp | Log | Sqrt | Pi | Infinity | Choose | GammaFunc
            | BetaFunc | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh
            | Acosh | Atanh => {
                let (params, res) = p.fixed_signature().unwrap_or((Vec::new(), Type::Prob));
                fixed(&params, res)
            }
            Lt | Le => {
                let a = arg(0);
                self.class("argument 0", a, a.is_numeric(), Expected::Numeric)?;
                all(a)?;
                self.result(&Type::Bool)
            }
            Eq | Ne => {
                let a = arg(0);
                let ok = a.is_numeric() || *a == Type::Bool || *a == Type::Unit;
                self.class("argument 0", a, ok, Expected::Comparable)?;
                all(a)?;
                self.result(&Type::Bool)
            }
            And | Or | Not | Xor | Iff | Impl | Nand | Nor => {
                all(&Type::Bool)?;
                self.result(&Type::Bool)
            }
            Size => {
                let a = arg(0);
                self.class("argument 0", a, a.array_of().is_some(), Expected::Array)?;
                self.result(&n)
            }
            Reduce => {
                let t = ty.clone();
                let f = Type::fun(t.clone(), Type::fun(t.clone(), t.clone()));
                fixed(&[f, t.clone(), Type::array(t.clone())], t)
            }
        }
    }
}

/// Can pattern `p` match values of type `t` (with its variables typed accordingly)?
fn pattern_fits(s: &Store, p: &Pattern, t: &Type) -> bool {
    match (p, t) {
        (Pattern::Wild, _) => true,
        (Pattern::Var(v), _) => s.var_type(*v) == t,
        (Pattern::Unit, Type::Unit) | (Pattern::Bool(_), Type::Bool) => true,
        (Pattern::Pair(a, b), Type::Pair(ta, tb)) => {
            pattern_fits(s, a, ta) && pattern_fits(s, b, tb)
        }
        (Pattern::Left(a), Type::Either(ta, _)) | (Pattern::Right(a), Type::Either(_, ta)) => {
            pattern_fits(s, a, ta)
        }
        (Pattern::Just(a), Type::Maybe(ta)) => pattern_fits(s, a, ta),
        (Pattern::Nothing, Type::Maybe(_)) => true,
        _ => false,
    }
}

#[cfg(test)]
#[rustfmt::skip]
mod tests;
