//! The one term language of slic-cas: expressions and measures together, hash-consed in an
//! arena and addressed by typed `u32` ids.
//!
//! A [`Store`] owns every term node and every variable. Interning the same node with the
//! same type twice gives the same [`TermId`], so structural equality of terms is id
//! equality (alpha-equivalence is a separate check, in `alpha`). Every term carries its
//! type: the elaborator (`elab`) is the only producer of terms from user text and it inserts
//! the safe coercions, so a term in the store is always well typed (`verify` checks it).
//!
//! Variables are [`VarId`]s with a name hint and a type; binders hold the `VarId` they
//! bind. Names are hints only: the printer renames to avoid capture, and two parses of the
//! same text give different variables (and so different, alpha-equivalent, terms).
//!
//! This module holds data and the smallest helpers on it; no parsing, printing or
//! semantics live here.

use num_bigint::BigInt;
use num_rational::BigRational;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use crate::num::Rational;
use crate::types::{Coercion, Type};

/// A term in a [`Store`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TermId(u32);

impl TermId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A variable in a [`Store`]: a name hint and a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(u32);

impl VarId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Built-in functions and operators. Arithmetic operators are typed by their operands
/// (after the elaborator has coerced them to a common type); the rest have fixed types,
/// given on each variant as `argument types -> result type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prim {
    /// n-ary (at least 2) sum; all arguments and the result have one numeric type.
    /// `a - b` is `Add[a, Neg b]`.
    Add,
    /// n-ary (at least 2) product; one numeric type. `a / b` is `Mul[a, Recip b]`.
    Mul,
    /// `negate`: int -> int, real -> real.
    Neg,
    /// `recip`: prob -> prob, real -> real.
    Recip,
    /// `a ^ n`: T, nat -> T for numeric T.
    Pow,
    /// `a ** b`: prob, real -> prob.
    RealPow,
    /// `natroot(a, n)`: prob, nat -> prob (the n-th root).
    NatRoot,
    /// `exp`: real -> prob.
    Exp,
    /// `log`: prob -> real.
    Log,
    /// `sqrt`: prob -> prob.
    Sqrt,
    /// `pi`: prob (no arguments).
    Pi,
    /// `∞`: prob (no arguments). `-∞` is `Neg[Coerce(prob2real, ∞)]`.
    Infinity,
    /// `abs`: int -> nat, real -> prob.
    Abs,
    /// `signum`: int -> int, real -> real.
    Signum,
    /// `floor`: prob -> nat, real -> int.
    Floor,
    /// `erf`: real -> real, prob -> prob.
    Erf,
    /// `choose(n, k)`: nat, nat -> nat.
    Choose,
    /// `gammaFunc`: real -> prob.
    GammaFunc,
    /// `betaFunc`: prob, prob -> prob.
    BetaFunc,
    /// `min`, `max`: T, T -> T for numeric T.
    Min,
    Max,
    /// Trigonometric and hyperbolic functions and their inverses: real -> real.
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    /// `a < b`, `a <= b` (`>` and `>=` swap their arguments): T, T -> bool, numeric T.
    Lt,
    Le,
    /// `a == b`, `a /= b`: T, T -> bool for numeric, bool or unit T.
    Eq,
    Ne,
    /// n-ary (at least 2) `&&`, `||`: bool.
    And,
    Or,
    /// `not`: bool -> bool; the rest bool, bool -> bool.
    Not,
    Xor,
    Iff,
    Impl,
    Nand,
    Nor,
    /// `size(a)`: array(T) -> nat.
    Size,
    /// `reduce(f, z, a)`: (T -> T -> T), T, array(T) -> T.
    Reduce,
}

impl Prim {
    /// Every primitive, in declaration order (the order `Ord` sorts them in): the one
    /// list that generators, coverage checks and tests iterate over.
    pub const ALL: [Prim; 47] = [
        Prim::Add,
        Prim::Mul,
        Prim::Neg,
        Prim::Recip,
        Prim::Pow,
        Prim::RealPow,
        Prim::NatRoot,
        Prim::Exp,
        Prim::Log,
        Prim::Sqrt,
        Prim::Pi,
        Prim::Infinity,
        Prim::Abs,
        Prim::Signum,
        Prim::Floor,
        Prim::Erf,
        Prim::Choose,
        Prim::GammaFunc,
        Prim::BetaFunc,
        Prim::Min,
        Prim::Max,
        Prim::Sin,
        Prim::Cos,
        Prim::Tan,
        Prim::Asin,
        Prim::Acos,
        Prim::Atan,
        Prim::Sinh,
        Prim::Cosh,
        Prim::Tanh,
        Prim::Asinh,
        Prim::Acosh,
        Prim::Atanh,
        Prim::Lt,
        Prim::Le,
        Prim::Eq,
        Prim::Ne,
        Prim::And,
        Prim::Or,
        Prim::Not,
        Prim::Xor,
        Prim::Iff,
        Prim::Impl,
        Prim::Nand,
        Prim::Nor,
        Prim::Size,
        Prim::Reduce,
    ];

    /// Every primitive that users call by name, with that name.
    pub const NAMED: [(&'static str, Prim); 37] = [
        ("negate", Prim::Neg),
        ("recip", Prim::Recip),
        ("natroot", Prim::NatRoot),
        ("exp", Prim::Exp),
        ("log", Prim::Log),
        ("sqrt", Prim::Sqrt),
        ("pi", Prim::Pi),
        ("abs", Prim::Abs),
        ("signum", Prim::Signum),
        ("floor", Prim::Floor),
        ("erf", Prim::Erf),
        ("choose", Prim::Choose),
        ("gammaFunc", Prim::GammaFunc),
        ("betaFunc", Prim::BetaFunc),
        ("min", Prim::Min),
        ("max", Prim::Max),
        ("sin", Prim::Sin),
        ("cos", Prim::Cos),
        ("tan", Prim::Tan),
        ("asin", Prim::Asin),
        ("acos", Prim::Acos),
        ("atan", Prim::Atan),
        ("sinh", Prim::Sinh),
        ("cosh", Prim::Cosh),
        ("tanh", Prim::Tanh),
        ("asinh", Prim::Asinh),
        ("acosh", Prim::Acosh),
        ("atanh", Prim::Atanh),
        ("not", Prim::Not),
        ("xor", Prim::Xor),
        ("iff", Prim::Iff),
        ("impl", Prim::Impl),
        ("nand", Prim::Nand),
        ("nor", Prim::Nor),
        ("size", Prim::Size),
        ("reduce", Prim::Reduce),
        ("infinity", Prim::Infinity),
    ];

    /// The primitive users call as `name(...)` (or write as the constant `pi`).
    pub fn from_name(name: &str) -> Option<Prim> {
        Prim::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, p)| p)
    }

    /// The call name of a primitive, if it has one (operators like `Add` do not).
    pub fn name(self) -> Option<&'static str> {
        Prim::NAMED
            .iter()
            .find(|(_, p)| *p == self)
            .map(|&(n, _)| n)
    }

    /// The trigonometric and hyperbolic functions and their inverses (real -> real).
    pub fn is_trig(self) -> bool {
        use Prim::*;
        matches!(
            self,
            Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh
        )
    }

    /// `(argument types, result type)` of the primitives whose types are fixed; `None`
    /// for the ones typed by their operands (arithmetic, comparisons, `abs`, ...). The one
    /// table the elaborator, the verifier and the interpreter agree on.
    pub fn fixed_signature(self) -> Option<(Vec<Type>, Type)> {
        use Type::{Bool, Nat, Prob, Real};
        Some(match self {
            Prim::Exp | Prim::GammaFunc => (vec![Real], Prob),
            Prim::Log => (vec![Prob], Real),
            Prim::Sqrt => (vec![Prob], Prob),
            Prim::Pi | Prim::Infinity => (vec![], Prob),
            Prim::NatRoot => (vec![Prob, Nat], Prob),
            Prim::RealPow => (vec![Prob, Real], Prob),
            Prim::Choose => (vec![Nat, Nat], Nat),
            Prim::BetaFunc => (vec![Prob, Prob], Prob),
            p if p.is_trig() => (vec![Real], Real),
            Prim::Not => (vec![Bool], Bool),
            Prim::Xor | Prim::Iff | Prim::Impl | Prim::Nand | Prim::Nor => (vec![Bool, Bool], Bool),
            _ => return None,
        })
    }

    /// How many arguments a primitive takes; `None` for the n-ary ones.
    pub fn arity(self) -> Option<usize> {
        use Prim::*;
        match self {
            Add | Mul | And | Or => None,
            Pi | Infinity => Some(0),
            Neg | Recip | Exp | Log | Sqrt | Abs | Signum | Floor | Erf | GammaFunc | Sin | Cos
            | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Not
            | Size => Some(1),
            Pow | RealPow | NatRoot | Choose | BetaFunc | Min | Max | Lt | Le | Eq | Ne | Xor
            | Iff | Impl | Nand | Nor => Some(2),
            Reduce => Some(3),
        }
    }
}

/// Primitive measures, with their argument types and the type they range over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dist {
    /// `lebesgue(lo, hi)`: real, real -> measure(real). Not a probability measure.
    Lebesgue,
    /// `counting`: measure(int). Not a probability measure.
    Counting,
    /// `uniform(lo, hi)`: real, real -> measure(real).
    Uniform,
    /// `normal(mean, sd)`: real, prob -> measure(real).
    Normal,
    /// `gamma(shape, scale)`: prob, prob -> measure(prob).
    Gamma,
    /// `beta(a, b)`: prob, prob -> measure(prob).
    Beta,
    /// `poisson(rate)`: prob -> measure(nat).
    Poisson,
    /// `categorical(weights)`: array(prob) -> measure(nat); normalised (mass 1, or the
    /// zero measure when the weights sum to 0).
    Categorical,
}

impl Dist {
    pub const ALL: [Dist; 8] = [
        Dist::Lebesgue,
        Dist::Counting,
        Dist::Uniform,
        Dist::Normal,
        Dist::Gamma,
        Dist::Beta,
        Dist::Poisson,
        Dist::Categorical,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dist::Lebesgue => "lebesgue",
            Dist::Counting => "counting",
            Dist::Uniform => "uniform",
            Dist::Normal => "normal",
            Dist::Gamma => "gamma",
            Dist::Beta => "beta",
            Dist::Poisson => "poisson",
            Dist::Categorical => "categorical",
        }
    }

    pub fn from_name(name: &str) -> Option<Dist> {
        Dist::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The types of the arguments, in order.
    pub fn param_types(self) -> Vec<Type> {
        match self {
            Dist::Lebesgue | Dist::Uniform => vec![Type::Real, Type::Real],
            Dist::Counting => vec![],
            Dist::Normal => vec![Type::Real, Type::Prob],
            Dist::Gamma | Dist::Beta => vec![Type::Prob, Type::Prob],
            Dist::Poisson => vec![Type::Prob],
            Dist::Categorical => vec![Type::array(Type::Prob)],
        }
    }

    /// The type of a draw.
    pub fn support_type(self) -> Type {
        match self {
            Dist::Lebesgue | Dist::Uniform | Dist::Normal => Type::Real,
            Dist::Counting => Type::Int,
            Dist::Gamma | Dist::Beta => Type::Prob,
            Dist::Poisson | Dist::Categorical => Type::Nat,
        }
    }
}

/// Program transformations that a user may write inside a term. Only the ones slic-cas
/// implements exist here; the elaborator rejects the others (`mh`, `mcmc`, ...) by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transform {
    /// `simplify(e)`: meaning-preserving; expanded by the simplifier.
    Simplify,
    /// `summarize(e)`: the histogram transform; meaning-preserving.
    Summarize,
    /// `disint(m)` for `m : measure(pair(a, b))`: a kernel `a -> measure(b)` (issue 15),
    /// computed by `slic_simplify::expand_transforms` before a term is given a meaning.
    Disint,
    /// `density(m)` for `m : measure(a)`: its density `a -> prob` with respect to the
    /// base measure of `a` (issue 15), computed like `disint`.
    Density,
    /// `mh(proposal, target)`, its argument the pair `(proposal, target)` with
    /// `proposal : a -> measure(a)` and `target : measure(a)`: Hakaru's Metropolis-Hastings
    /// proposal `fn x: x' <~ proposal(x); return (x', ratio)` with the acceptance ratio
    /// `target(x') proposal(x' -> x) / (target(x) proposal(x -> x'))` of the densities
    /// (issue 15), computed like `disint`.
    Mh,
    /// `mcmc(proposal, target)`: the Metropolis-Hastings transition kernel
    /// `a -> measure(a)` that accepts `mh`'s proposal with probability `min(1, ratio)`
    /// and otherwise stays (issue 15), computed like `disint`.
    Mcmc,
}

impl Transform {
    pub fn name(self) -> &'static str {
        match self {
            Transform::Simplify => "simplify",
            Transform::Summarize => "summarize",
            Transform::Disint => "disint",
            Transform::Density => "density",
            Transform::Mh => "mh",
            Transform::Mcmc => "mcmc",
        }
    }

    /// Is `tr(e)` `e` itself as far as meaning goes (so that an interpreter may read
    /// through it)? `disint` and `density` are not: their result is another term, of
    /// another type, that must be computed first.
    pub fn keeps_meaning(self) -> bool {
        matches!(self, Transform::Simplify | Transform::Summarize)
    }

    /// The type of `tr(e)` for `e : arg`, `None` when `e` does not fit: `disint` takes a
    /// `measure(pair(a, b))` to `a -> measure(b)`, `density` a `measure(a)` to
    /// `a -> prob`; the others keep their argument's type.
    pub fn result_type(self, arg: &Type) -> Option<Type> {
        match self {
            Transform::Simplify | Transform::Summarize => Some(arg.clone()),
            Transform::Disint => match arg.measure_of()? {
                Type::Pair(a, b) => Some(Type::fun((**a).clone(), Type::measure((**b).clone()))),
                _ => None,
            },
            Transform::Density => Some(Type::fun(arg.measure_of()?.clone(), Type::Prob)),
            Transform::Mh | Transform::Mcmc => {
                let Type::Pair(proposal, target) = arg else {
                    return None;
                };
                let a = target.measure_of()?;
                if **proposal != Type::fun(a.clone(), Type::measure(a.clone())) {
                    return None;
                }
                let out = if self == Transform::Mh {
                    Type::measure(Type::pair(a.clone(), Type::Prob))
                } else {
                    Type::measure(a.clone())
                };
                Some(Type::fun(a.clone(), out))
            }
        }
    }
}

/// A `match` pattern. Variables bind in the branch body.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    /// `_`
    Wild,
    /// `x`: binds the whole scrutinee.
    Var(VarId),
    /// `()`
    Unit,
    /// `true`, `false`
    Bool(bool),
    /// `(p, q)`
    Pair(Box<Pattern>, Box<Pattern>),
    /// `left(p)`, `right(p)`
    Left(Box<Pattern>),
    Right(Box<Pattern>),
    /// `just(p)`, `nothing`
    Just(Box<Pattern>),
    Nothing,
}

impl Pattern {
    /// This pattern with its variables renamed by `r`.
    pub fn renamed(&self, r: &dyn Fn(VarId) -> VarId) -> Pattern {
        let p = self;
        match p {
            Pattern::Var(v) => Pattern::Var(r(*v)),
            Pattern::Pair(a, b) => Pattern::Pair(Box::new(a.renamed(r)), Box::new(b.renamed(r))),
            Pattern::Left(a) => Pattern::Left(Box::new(a.renamed(r))),
            Pattern::Right(a) => Pattern::Right(Box::new(a.renamed(r))),
            Pattern::Just(a) => Pattern::Just(Box::new(a.renamed(r))),
            Pattern::Wild | Pattern::Unit | Pattern::Bool(_) | Pattern::Nothing => p.clone(),
        }
    }

    /// The variables this pattern binds, left to right.
    pub fn vars(&self, out: &mut Vec<VarId>) {
        match self {
            Pattern::Var(v) => out.push(*v),
            Pattern::Pair(a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Pattern::Left(p) | Pattern::Right(p) | Pattern::Just(p) => p.vars(out),
            Pattern::Wild | Pattern::Unit | Pattern::Bool(_) | Pattern::Nothing => {}
        }
    }
}

/// One term node. Children are [`TermId`]s; the comment on each variant says which
/// children are in the scope of the variable it binds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    Var(VarId),
    /// An exact numeric literal; the term's type (nat, int, prob or real) says which.
    Lit(Rational),
    Bool(bool),
    Unit,
    Pair(TermId, TermId),
    /// `left(e)`, `right(e)`: the other side's type is in the term's type.
    Left(TermId),
    Right(TermId),
    /// `just(e)`, `nothing`.
    Just(TermId),
    Nothing,
    /// A built-in function or operator applied to its arguments.
    Prim(Prim, Vec<TermId>),
    /// A numeric coercion (inserted by the elaborator when safe, written when unsafe).
    Coerce(Coercion, TermId),
    /// `x = e1` then `e2`: x scopes over e2.
    Let(VarId, TermId, TermId),
    /// `fn x T: e`: x scopes over e.
    Lam(VarId, TermId),
    /// Application of a function to one argument (curried).
    App(TermId, TermId),
    /// `if c: a else: b`.
    If(TermId, TermId, TermId),
    /// `match e:` with branches tried in order; pattern variables scope over their body.
    Match(TermId, Vec<(Pattern, TermId)>),
    /// `[e0, e1, ...]`; the element type of an empty literal is in the term's type.
    ArrayLit(Vec<TermId>),
    /// `array i of n: e`: i scopes over e (not n).
    Array(VarId, TermId, TermId),
    /// `a[i]`.
    Index(TermId, TermId),
    /// `summate i from lo to hi: e` (hi exclusive): i scopes over e.
    Summate(VarId, TermId, TermId, TermId),
    /// `product i from lo to hi: e` (hi exclusive): i scopes over e.
    Product(VarId, TermId, TermId, TermId),
    /// `integrate x from lo to hi: e`: x scopes over e.
    Integrate(VarId, TermId, TermId, TermId),
    /// `bucket j from lo to hi: r` (hi exclusive): j scopes over the reducer r.
    Bucket(VarId, TermId, TermId, TermId),
    /// Reducer `r_add e`; its type is e's type.
    RAdd(TermId),
    /// Reducer `r_nop`; type unit.
    RNop,
    /// Reducer `r_index b = n of e: r`: an array of n buckets, the update going to bucket
    /// e; b scopes over r only. Type array(type of r).
    RIndex(VarId, TermId, TermId, TermId),
    /// Reducer `r_split c: r1 else: r2`; type pair(type of r1, type of r2).
    RSplit(TermId, TermId, TermId),
    /// Reducer `r_fanout r1 || r2`; type pair(type of r1, type of r2).
    RFanout(TermId, TermId),
    /// `return e` / `dirac(e)`.
    Dirac(TermId),
    /// `weight(w, m)`.
    Weight(TermId, TermId),
    /// `reject`: the zero measure; its type is in the term's type.
    Reject,
    /// `m1 <|> m2 <|> ...` (at least 2).
    Superpose(Vec<TermId>),
    /// `x <~ m` then `k`: x scopes over k.
    Bind(VarId, TermId, TermId),
    /// `plate i of n: m`: i scopes over m.
    Plate(VarId, TermId, TermId),
    /// `chain s from s0 of n: m`: runs n steps from state s0; m : measure(pair(a, S)) with
    /// s : S in scope; the result is measure(pair(array(a), S)). Children in source
    /// order: `Chain(s, s0, n, m)`.
    Chain(VarId, TermId, TermId, TermId),
    /// A primitive measure applied to its arguments.
    Dist(Dist, Vec<TermId>),
    /// `observe(m, v)`: m conditioned on the value v.
    Observe(TermId, TermId),
    /// `simplify(e)`, `summarize(e)`.
    Transform(Transform, TermId),
}

impl Node {
    /// `node` with its children (in [`Node::children`] order) replaced by `ch`, and its
    /// binders (and match-pattern variables) renamed by `rename`.
    pub fn with_children_renamed(&self, ch: &[TermId], rename: &dyn Fn(VarId) -> VarId) -> Node {
        use Node::*;
        let node = self;
        let g = |i: usize, old: TermId| ch.get(i).copied().unwrap_or(old);
        let list = |old: &[TermId]| {
            if ch.len() == old.len() {
                ch.to_vec()
            } else {
                old.to_vec()
            }
        };
        let r = rename;
        match node {
            Var(_) | Lit(_) | Bool(_) | Unit | Nothing | RNop | Reject => node.clone(),
            Left(a) => Left(g(0, *a)),
            Right(a) => Right(g(0, *a)),
            Just(a) => Just(g(0, *a)),
            Coerce(k, a) => Coerce(*k, g(0, *a)),
            Lam(v, a) => Lam(r(*v), g(0, *a)),
            RAdd(a) => RAdd(g(0, *a)),
            Dirac(a) => Dirac(g(0, *a)),
            Transform(k, a) => Transform(*k, g(0, *a)),
            Pair(a, b) => Pair(g(0, *a), g(1, *b)),
            App(a, b) => App(g(0, *a), g(1, *b)),
            Let(v, a, b) => Let(r(*v), g(0, *a), g(1, *b)),
            Array(v, a, b) => Array(r(*v), g(0, *a), g(1, *b)),
            Index(a, b) => Index(g(0, *a), g(1, *b)),
            RFanout(a, b) => RFanout(g(0, *a), g(1, *b)),
            Weight(a, b) => Weight(g(0, *a), g(1, *b)),
            Bind(v, a, b) => Bind(r(*v), g(0, *a), g(1, *b)),
            Plate(v, a, b) => Plate(r(*v), g(0, *a), g(1, *b)),
            Observe(a, b) => Observe(g(0, *a), g(1, *b)),
            If(a, b, c) => If(g(0, *a), g(1, *b), g(2, *c)),
            Summate(v, a, b, c) => Summate(r(*v), g(0, *a), g(1, *b), g(2, *c)),
            Product(v, a, b, c) => Product(r(*v), g(0, *a), g(1, *b), g(2, *c)),
            Integrate(v, a, b, c) => Integrate(r(*v), g(0, *a), g(1, *b), g(2, *c)),
            Bucket(v, a, b, c) => Bucket(r(*v), g(0, *a), g(1, *b), g(2, *c)),
            RIndex(v, a, b, c) => RIndex(r(*v), g(0, *a), g(1, *b), g(2, *c)),
            RSplit(a, b, c) => RSplit(g(0, *a), g(1, *b), g(2, *c)),
            Chain(v, a, b, c) => Chain(r(*v), g(0, *a), g(1, *b), g(2, *c)),
            Prim(p, xs) => Prim(*p, list(xs)),
            ArrayLit(xs) => ArrayLit(list(xs)),
            Superpose(xs) => Superpose(list(xs)),
            Dist(d, xs) => Dist(*d, list(xs)),
            Match(e, arms) => Match(
                g(0, *e),
                arms.iter()
                    .enumerate()
                    .map(|(i, (p, b))| (p.renamed(r), g(i + 1, *b)))
                    .collect(),
            ),
        }
    }

    /// `node` with its children (in [`Node::children`] order) replaced by `ch` (binders kept).
    pub fn with_children(&self, ch: &[TermId]) -> Node {
        self.with_children_renamed(ch, &|v| v)
    }

    /// The node's children in order (binders' scopes included).
    pub fn children(&self) -> Vec<TermId> {
        use Node::*;
        match self {
            Var(_) | Lit(_) | Bool(_) | Unit | Nothing | RNop | Reject => vec![],
            Left(a)
            | Right(a)
            | Just(a)
            | Coerce(_, a)
            | Lam(_, a)
            | RAdd(a)
            | Dirac(a)
            | Transform(_, a) => vec![*a],
            Pair(a, b)
            | App(a, b)
            | Let(_, a, b)
            | Array(_, a, b)
            | Index(a, b)
            | RFanout(a, b)
            | Weight(a, b)
            | Bind(_, a, b)
            | Plate(_, a, b)
            | Observe(a, b) => vec![*a, *b],
            If(a, b, c)
            | Summate(_, a, b, c)
            | Product(_, a, b, c)
            | Integrate(_, a, b, c)
            | Bucket(_, a, b, c)
            | RIndex(_, a, b, c)
            | RSplit(a, b, c)
            | Chain(_, a, b, c) => vec![*a, *b, *c],
            Prim(_, xs) | ArrayLit(xs) | Superpose(xs) | Dist(_, xs) => xs.clone(),
            Match(e, arms) => {
                let mut v = vec![*e];
                v.extend(arms.iter().map(|(_, b)| *b));
                v
            }
        }
    }

    /// The variable bound by this node, if it binds exactly one (match patterns aside).
    pub fn binder(&self) -> Option<VarId> {
        use Node::*;
        match self {
            Let(v, ..)
            | Lam(v, _)
            | Array(v, ..)
            | Summate(v, ..)
            | Product(v, ..)
            | Integrate(v, ..)
            | Bucket(v, ..)
            | RIndex(v, ..)
            | Bind(v, ..)
            | Plate(v, ..)
            | Chain(v, ..) => Some(*v),
            _ => None,
        }
    }
}

/// What the store knows of a variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarInfo {
    /// The name the user wrote (or a generated hint); not unique.
    pub name: String,
    pub ty: Type,
}

/// The arena of hash-consed, typed terms and of variables.
///
/// The index holds only ids; a lookup compares the probe against the arena, so each node
/// is stored once (interning is on every path that builds terms: it must not clone).
#[derive(Default, Clone)]
pub struct Store {
    nodes: Vec<Node>,
    types: Vec<Type>,
    index: HashTable<TermId>,
    vars: Vec<VarInfo>,
    /// The standard-library definitions loaded into this store (by `stdlib`): a library
    /// call is an application of the variable, free in the program, whose definition is
    /// kept here, so only definitions a program uses are loaded and printing shows names.
    library: Vec<(VarId, TermId)>,
    /// The canonical loop indices (`sums`), by type and height: a loop that stays open
    /// binds the one of its index type at the height above every canonical index bound
    /// in its body, so loops equal up to the names of their indices are one term.
    canonical_vars: Vec<(Type, u32, VarId)>,
    /// What `cond` has read each context's facts into (its proof state), by the facts:
    /// terms never change, so the reading is a function of them, and a canonicalisation
    /// decides many conditions under one context. Cleared when it grows past a bound.
    pub(crate) knowledge: rustc_hash::FxHashMap<
        Vec<crate::assume::Fact>,
        std::sync::Arc<dyn std::any::Any + Send + Sync>,
    >,
    /// The structural normal form of each condition `cond` has met (with its polarity):
    /// a function of the term alone, so kept across calls.
    pub(crate) norm_memo: rustc_hash::FxHashMap<(TermId, bool), TermId>,
    /// The canonical form of each term under each list of facts (`canon::canonicalize`,
    /// the one-shot session): a function of the two, and the loops of a Gibbs update
    /// meet the same counts under the same ranges many times. Cleared past a bound.
    pub(crate) canon_memo: rustc_hash::FxHashMap<(Vec<crate::assume::Fact>, TermId), TermId>,
    /// The canonical form of each condition under each list of facts (`cond::canonical`),
    /// and what `cond::decide` said of it: functions of the two, asked again by every
    /// pass over the same loops. Cleared past a bound.
    pub(crate) cond_memo: rustc_hash::FxHashMap<(Vec<crate::assume::Fact>, TermId), TermId>,
    pub(crate) decide_memo:
        rustc_hash::FxHashMap<(Vec<crate::assume::Fact>, TermId), crate::assume::Tri>,
    /// `sums` is canonicalising a sum with its loops interchanged: no second interchange
    /// inside it (it would swap them back), and no canonical form is kept meanwhile.
    pub(crate) interchanging: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("terms", &self.nodes.len())
            .field("vars", &self.vars.len())
            .finish()
    }
}

fn key_hash(node: &Node, ty: &Type) -> u64 {
    FxBuildHasher.hash_one((node, ty))
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    /// The id of `node` with type `ty`, creating it if it is new. The caller vouches that
    /// `ty` is the node's type (`verify` checks whole terms).
    pub fn intern(&mut self, node: Node, ty: Type) -> TermId {
        let hash = key_hash(&node, &ty);
        let (nodes, types) = (&self.nodes, &self.types);
        let found = self.index.find(hash, |&id| {
            nodes[id.index()] == node && types[id.index()] == ty
        });
        if let Some(&id) = found {
            return id;
        }
        let id = TermId(u32::try_from(self.nodes.len()).expect("more than 2^32 terms"));
        self.nodes.push(node);
        self.types.push(ty);
        let (nodes, types) = (&self.nodes, &self.types);
        self.index.insert_unique(hash, id, |&other| {
            key_hash(&nodes[other.index()], &types[other.index()])
        });
        id
    }

    pub fn node(&self, id: TermId) -> &Node {
        &self.nodes[id.index()]
    }

    pub fn ty(&self, id: TermId) -> &Type {
        &self.types[id.index()]
    }

    /// How many distinct terms the store holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// A new variable, distinct from every other, with a name hint.
    pub fn fresh_var(&mut self, name: &str, ty: Type) -> VarId {
        let id = VarId(u32::try_from(self.vars.len()).expect("more than 2^32 variables"));
        self.vars.push(VarInfo {
            name: name.to_string(),
            ty,
        });
        id
    }

    pub fn var(&self, v: VarId) -> &VarInfo {
        &self.vars[v.index()]
    }

    pub fn var_name(&self, v: VarId) -> &str {
        &self.vars[v.index()].name
    }

    pub fn var_type(&self, v: VarId) -> &Type {
        &self.vars[v.index()].ty
    }

    /// The definition of a standard-library variable, `None` for every other variable.
    pub fn library_def(&self, v: VarId) -> Option<TermId> {
        self.library.iter().find(|(w, _)| *w == v).map(|&(_, d)| d)
    }

    /// The loaded standard-library variable named `name`, if any.
    pub fn library_var(&self, name: &str) -> Option<VarId> {
        self.library
            .iter()
            .find(|(w, _)| self.var_name(*w) == name)
            .map(|&(w, _)| w)
    }

    /// Records `v` as the standard-library variable whose definition is the closed
    /// term `def` (only `stdlib` loads definitions).
    pub(crate) fn add_library(&mut self, v: VarId, def: TermId) {
        self.library.push((v, def));
    }

    /// The canonical loop index of type `ty` at `height` (created on first use; see the
    /// `canonical_vars` field). Heights 0, 1, 2 are named `j`, `k`, `l`.
    pub fn canonical_var(&mut self, ty: &Type, height: u32) -> VarId {
        let found = self
            .canonical_vars
            .iter()
            .find(|(t, h, _)| t == ty && *h == height);
        if let Some(&(_, _, v)) = found {
            return v;
        }
        let name = match height {
            0 => "j".to_string(),
            1 => "k".to_string(),
            2 => "l".to_string(),
            h => format!("j{h}"),
        };
        let v = self.fresh_var(&name, ty.clone());
        self.canonical_vars.push((ty.clone(), height, v));
        v
    }

    /// The height of `v` when it is a canonical loop index.
    pub fn canonical_height(&self, v: VarId) -> Option<u32> {
        self.canonical_vars.iter().find(|x| x.2 == v).map(|x| x.1)
    }

    /// The term `x` for a variable.
    pub fn var_term(&mut self, v: VarId) -> TermId {
        let ty = self.var_type(v).clone();
        self.intern(Node::Var(v), ty)
    }

    /// An exact numeric literal of numeric type `ty`.
    pub fn lit(&mut self, value: BigRational, ty: Type) -> TermId {
        debug_assert!(ty.is_numeric());
        self.intern(Node::Lit(Rational::new(value)), ty)
    }

    /// An integer literal of numeric type `ty`.
    pub fn int_lit(&mut self, value: i64, ty: Type) -> TermId {
        self.lit(BigRational::from_integer(BigInt::from(value)), ty)
    }

    /// A built-in applied to arguments, with the given result type.
    pub fn prim(&mut self, p: Prim, args: Vec<TermId>, ty: Type) -> TermId {
        self.intern(Node::Prim(p, args), ty)
    }

    /// `t` rebuilt bottom up, each distinct subterm once: its children first, then `f`
    /// given the subterm's original id and its node with the rebuilt children, which
    /// returns the replacement, or `None` for the node as it is (interned at the original
    /// type). Binders are rebuilt as any node: for rewrites that read no scopes. Deep terms
    /// recurse inside [`crate::stack::grow`].
    pub fn rebuild(
        &mut self,
        t: TermId,
        f: &mut dyn FnMut(&mut Store, TermId, &Node) -> Option<TermId>,
    ) -> TermId {
        let mut memo = rustc_hash::FxHashMap::default();
        self.rebuild_in(t, f, &mut memo)
    }

    fn rebuild_in(
        &mut self,
        t: TermId,
        f: &mut dyn FnMut(&mut Store, TermId, &Node) -> Option<TermId>,
        memo: &mut rustc_hash::FxHashMap<TermId, TermId>,
    ) -> TermId {
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let node = self.node(t).clone();
        let ch = node.children();
        let mut new = Vec::with_capacity(ch.len());
        for &c in &ch {
            new.push(crate::stack::grow(|| self.rebuild_in(c, f, memo)));
        }
        let node = if new == ch {
            node
        } else {
            node.with_children(&new)
        };
        let r = match f(self, t, &node) {
            Some(r) => r,
            None => {
                let ty = self.ty(t).clone();
                self.intern(node, ty)
            }
        };
        memo.insert(t, r);
        r
    }

    /// Every distinct subterm of `t` (itself included), each once, parents before their
    /// children. The walk keeps its own stack, so deep terms cost no call stack; shared
    /// subterms of the DAG are visited once.
    pub fn subterms(&self, t: TermId) -> Subterms<'_> {
        Subterms {
            store: self,
            seen: rustc_hash::FxHashSet::default(),
            work: vec![t],
        }
    }
}

/// The iterator of [`Store::subterms`].
pub struct Subterms<'a> {
    store: &'a Store,
    seen: rustc_hash::FxHashSet<TermId>,
    work: Vec<TermId>,
}

impl Iterator for Subterms<'_> {
    type Item = TermId;

    fn next(&mut self) -> Option<TermId> {
        while let Some(x) = self.work.pop() {
            if self.seen.insert(x) {
                self.work.extend(self.store.node(x).children());
                return Some(x);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_shares_equal_terms() {
        let mut s = Store::new();
        let x = s.fresh_var("x", Type::Real);
        let a = s.var_term(x);
        let b = s.var_term(x);
        assert_eq!(a, b);
        let one = s.int_lit(1, Type::Real);
        let one_nat = s.int_lit(1, Type::Nat);
        assert_ne!(one, one_nat, "the type is part of a literal's identity");
        let sum1 = s.prim(Prim::Add, vec![a, one], Type::Real);
        let sum2 = s.prim(Prim::Add, vec![b, one], Type::Real);
        assert_eq!(sum1, sum2);
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn subterms_visits_each_shared_subterm_once() {
        let mut s = Store::new();
        let x = s.fresh_var("x", Type::Real);
        let a = s.var_term(x);
        let sq = s.prim(Prim::Mul, vec![a, a], Type::Real);
        let t = s.prim(Prim::Add, vec![sq, sq], Type::Real);
        let all: Vec<TermId> = s.subterms(t).collect();
        assert_eq!(all, vec![t, sq, a]);
    }

    #[test]
    fn fresh_variables_are_distinct() {
        let mut s = Store::new();
        let x1 = s.fresh_var("x", Type::Real);
        let x2 = s.fresh_var("x", Type::Real);
        assert_ne!(x1, x2);
        assert_ne!(s.var_term(x1), s.var_term(x2));
    }

    #[test]
    fn distribution_signatures() {
        assert_eq!(Dist::Counting.param_types(), vec![]);
        assert_eq!(Dist::Normal.param_types(), vec![Type::Real, Type::Prob]);
        assert_eq!(Dist::Categorical.support_type(), Type::Nat);
    }

    #[test]
    fn fixed_signatures_match_arities() {
        let mut fixed = 0;
        for p in Prim::ALL {
            if let Some((params, _)) = p.fixed_signature() {
                assert_eq!(Some(params.len()), p.arity(), "{p:?}");
                fixed += 1;
            }
        }
        // exp gammaFunc log sqrt pi ∞ natroot ** choose betaFunc, 12 trig, not, 5 logic
        assert_eq!(fixed, 28);
    }

    #[test]
    fn all_lists_every_primitive_once_in_order() {
        assert!(Prim::ALL.windows(2).all(|w| w[0] < w[1]));
        for (_, p) in Prim::NAMED {
            assert!(Prim::ALL.contains(&p), "{p:?}");
        }
        // the first and last variants, so that a variant added at either end is noticed
        assert_eq!(Prim::ALL.first(), Some(&Prim::Add));
        assert_eq!(Prim::ALL.last(), Some(&Prim::Reduce));
    }

    #[test]
    fn names_round_trip() {
        for (n, p) in Prim::NAMED {
            assert_eq!(Prim::from_name(n), Some(p));
            assert_eq!(p.name(), Some(n));
        }
        for d in Dist::ALL {
            assert_eq!(Dist::from_name(d.name()), Some(d));
        }
    }
}
