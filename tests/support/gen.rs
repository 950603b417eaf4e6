//! A generator of random, closed, well-typed core terms in *elaborated-normal form*, for
//! the front end's property tests (print -> load must give back an alpha-equivalent term
//! of the same type). It exists because hand-written examples never reach the corners
//! (shadowing, literals at every numeric type, blocks inside arguments, reducers); it must
//! not depend on the printer or the elaborator, so that it can judge them.
//!
//! # Design
//! The generator is driven by a *choice sequence*: a `Vec<u8>` that proptest produces and
//! shrinks. Every decision reads the next byte (`0` once the sequence is exhausted), and
//! option 0 of every decision is the simplest one (a leaf, the first alternative, the
//! smallest literal), so shrinking the bytes toward 0 or dropping them shrinks the term.
//! Generation is type-directed: [`program_from_choices`] picks a few `fn x T:` parameters
//! and a body type, then builds a term of each requested type from the constructors that
//! can produce it (and the eliminators: variables, `let`, `if`, `match`, application,
//! indexing), with a depth bound and a node budget; when either runs out it builds a leaf,
//! which always exists and is structural in the type, so generation always terminates.
//!
//! # Elaborated-normal form (what the generator never produces)
//! The elaborator is the only producer of terms from text, so a printer can only be asked
//! to round-trip terms that the elaborator could have produced from *some* text. These
//! restrictions define that set, as the elaborator implements it (the module doc of
//! `algebra/src/elab.rs` states the rules):
//! - Literals: `Lit(v)` at type nat (integer `v >= 0`), int (integer), prob (`v >= 0`) or
//!   real. Never `Coerce(_, Lit)` nor `Neg(Lit)`: a literal at a checked position is
//!   re-typed and prefix signs and subtracted literals are folded (`x - 3` is
//!   `Add[x, Lit(-3)]`); only an explicit call on a literal (`nat2real(3)`, `negate(3)`)
//!   gives these, and that is [`GenConfig::explicit_literal_calls`], off by default.
//! - `Recip(Lit)` only as a divisor: a non-first operand of a `Mul` that has an operand
//!   which is neither a literal nor an inverted literal, and never of 0 (`x / 2` is
//!   `Mul[x, Recip(Lit 2)]`, but `1 / 2` folds to `Lit(1/2)` and `x / 0` is an error).
//! - `Neg`/`Recip` otherwise take non-literal arguments of ring (int, real) / field
//!   (prob, real) type, as operands (`Add[a, Neg b]` is `a - b`, `Mul[a, Recip b]` is
//!   `a / b`) or alone (`-x`, `negate(x)`, `recip(x)`).
//! - The n-ary `Add`, `Mul`, `And`, `Or` and `Superpose` have 2 to 4 operands and never
//!   an operand with the same head (chains are flattened; a parenthesised chain inside a
//!   chain would elaborate to a nested node, but the printer need not reproduce that
//!   choice); such an operand may occur under another node (`a - (b + c)` is
//!   `Add[a, Neg(Add[b, c])]`).
//! - Comparisons are only `Lt`, `Le`, `Eq`, `Ne` (`>`/`>=` swap their operands); `Eq`/`Ne`
//!   also on bool and unit.
//! - The overloaded `Abs`, `Signum` (int, real) and `Floor`, `Erf` (prob, real) take an
//!   argument of exactly a ring / field type (the elaborator raises a nat or prob argument
//!   to one, so `abs(x)` with `x : nat` is `Abs(Coerce(nat2int, x))`).
//! - `Coerce(c, e)` (never on a literal, see above): safe and unsafe coercions both occur;
//!   a safe coercion the elaborator would not insert implicitly is the explicit call
//!   `nat2real(e)`, which elaborates to `Coerce(nat2real, e)`. Leaves are now and then a
//!   safely coerced variable of a lower type, so that the positions where the printer
//!   leaves coercions implicit (checked arguments, joined operands) see many of them.
//! - Application is only of variables of function type (`f(a)`, `f(a, b)` curried), never
//!   of a lambda written in place; lambdas appear as `let`-bound values (`def`), as
//!   `reduce`'s first argument and as the program's parameters.
//! - Loops: `summate`/`product` bounds are both nat or both int (the index has their
//!   type) and the body any numeric type; `integrate` has real bounds and a prob body;
//!   `array`/`plate`/`chain` sizes and `bucket` bounds are nat; an `r_index` bucket count
//!   never mentions the bucket variable.
//! - Binder names are hints (the round trip compares up to alpha-equivalence), so the
//!   generator also uses hints no text could give, and the printer must rename them:
//!   names of built-ins and constructors (`exp`, `pi`, `left`, `true`, `nothing`),
//!   reserved words (`if`), non-identifiers (`1x`, the empty name), shadowing of outer
//!   names that are still used inside, and two pattern variables of one name (`(x, x)`,
//!   which the elaborator would reject).
//!
//! Terms violating these are not errors of the printer when they fail to round-trip.

use std::fmt;

use num_bigint::BigInt;
use num_rational::BigRational;
use proptest::prelude::*;
use slic_algebra::{Coercion, Dist, Node, Pattern, Prim, Store, TermId, Transform, Type, VarId};

/// Which optional forms the generator produces.
#[derive(Clone, Copy, Debug)]
pub struct GenConfig {
    /// Also produce the terms that only an explicit built-in call *on a literal* gives:
    /// `negate(3)` (`Neg(Lit)`), `recip(2)` (`Recip(Lit)`, also first in a product),
    /// `nat2real(3)` / `real2prob(1/2)` (`Coerce(_, Lit)`). The elaborator produces these
    /// (it folds only prefix signs and `/`-only literal chains), but they are outside the
    /// elaborated-normal form the printer is first held to, so they have their own test.
    pub explicit_literal_calls: bool,
    /// How many non-leaf constructors one program may have.
    pub fuel: u32,
    /// The deepest nesting of non-leaf constructors.
    pub max_depth: u32,
}

impl Default for GenConfig {
    /// Programs of a few dozen nodes: big enough to combine constructs, small enough
    /// that 256 round trips take well under a second.
    fn default() -> GenConfig {
        GenConfig {
            explicit_literal_calls: false,
            fuel: 45,
            max_depth: 6,
        }
    }
}

/// A generated program: the store holding it and the root term.
#[derive(Clone)]
pub struct GenTerm {
    pub store: Store,
    pub term: TermId,
}

impl fmt::Debug for GenTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GenTerm : {}\n{}",
            self.store.ty(self.term),
            dump(&self.store, self.term)
        )
    }
}

/// How many choice bytes a generated program reads at most per unit of fuel (the rest
/// of the program is leaves).
const CHOICES_PER_FUEL: u32 = 9;

/// Random well-typed closed programs in elaborated-normal form (see the module
/// documentation).
pub fn arb_program() -> impl Strategy<Value = GenTerm> {
    arb_program_with(GenConfig::default())
}

/// Random well-typed closed programs with the optional forms `config` asks for.
pub fn arb_program_with(config: GenConfig) -> impl Strategy<Value = GenTerm> {
    let max = (config.fuel.max(1) * CHOICES_PER_FUEL) as usize;
    proptest::collection::vec(any::<u8>(), 0..max)
        .prop_map(move |c| program_from_choices(config, &c))
}

/// The program a choice sequence stands for (deterministic; the empty sequence gives the
/// smallest program).
pub fn program_from_choices(config: GenConfig, choices: &[u8]) -> GenTerm {
    let mut g = Gen {
        config,
        choices,
        pos: 0,
        store: Store::new(),
        scope: Vec::new(),
        fuel: config.fuel,
    };
    let nparams = g.below(4);
    let mut params = Vec::new();
    for _ in 0..nparams {
        let ty = g.param_type();
        let v = g.fresh(ty);
        params.push(v);
        g.scope.push(v);
    }
    let body_ty = g.body_type();
    let mut term = g.expr(&body_ty, Pos::ANY, config.max_depth);
    for &v in params.iter().rev() {
        let ty = Type::fun(g.store.var_type(v).clone(), g.store.ty(term).clone());
        term = g.store.intern(Node::Lam(v, term), ty);
    }
    GenTerm {
        store: g.store,
        term,
    }
}

/// Operators whose chains the elaborator flattens: an operand never has the same head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Head {
    Add,
    Mul,
    And,
    Or,
    Superpose,
}

/// What the position being filled forbids.
#[derive(Clone, Copy, Debug)]
struct Pos {
    /// No literal here (argument of a coercion, of `Neg`/`Recip`, of an overloaded prim).
    no_lit: bool,
    /// No term with this head here (operand of a flattened chain).
    not_head: Option<Head>,
}

impl Pos {
    const ANY: Pos = Pos {
        no_lit: false,
        not_head: None,
    };
    const NO_LIT: Pos = Pos {
        no_lit: true,
        not_head: None,
    };
    /// The argument of `negate`, `recip` or a coercion: a literal only if the config
    /// allows explicit calls on literals.
    fn call_arg(config: GenConfig) -> Pos {
        Pos {
            no_lit: !config.explicit_literal_calls,
            not_head: None,
        }
    }
    fn operand(h: Head) -> Pos {
        Pos {
            no_lit: false,
            not_head: Some(h),
        }
    }
}

/// One way to build a term of the requested type.
#[derive(Clone, Copy, Debug)]
enum Opt {
    Leaf,
    Var,
    Let,
    LetFun,
    If,
    Match,
    App,
    Index,
    Reduce,
    Lit,
    Add,
    Mul,
    Neg,
    Recip,
    Pow,
    MinMax,
    Coerce,
    /// A fixed-signature primitive: `(prim, argument types)`; the result is the request.
    Fixed(Prim, &'static [Ty]),
    /// An overloaded unary primitive on a non-literal argument of the given type.
    Overloaded(Prim, Ty),
    Size,
    Summate,
    Product,
    Integrate,
    Bucket,
    Cmp,
    AndOr,
    Not,
    BoolBin,
    Pair,
    ArrayLit,
    Array,
    Just,
    Left,
    Right,
    Dirac,
    Weight,
    Superpose,
    Bind,
    Plate,
    Chain,
    Dist,
    Observe,
    Transform,
}

/// Static names for the base types in signature tables.
#[derive(Clone, Copy, Debug)]
enum Ty {
    Nat,
    Int,
    Prob,
    Real,
    Bool,
}

impl Ty {
    fn ty(self) -> Type {
        match self {
            Ty::Nat => Type::Nat,
            Ty::Int => Type::Int,
            Ty::Prob => Type::Prob,
            Ty::Real => Type::Real,
            Ty::Bool => Type::Bool,
        }
    }
}

const REAL: &[Ty] = &[Ty::Real];
const PROB: &[Ty] = &[Ty::Prob];
const NAT2: &[Ty] = &[Ty::Nat, Ty::Nat];
const PROB2: &[Ty] = &[Ty::Prob, Ty::Prob];
const PROB_NAT: &[Ty] = &[Ty::Prob, Ty::Nat];
const PROB_REAL: &[Ty] = &[Ty::Prob, Ty::Real];
const BOOL2: &[Ty] = &[Ty::Bool, Ty::Bool];

const BOOL_BIN: [Prim; 5] = [Prim::Xor, Prim::Iff, Prim::Impl, Prim::Nand, Prim::Nor];

/// Binder name hints: ordinary ones (often reused, so shadowing happens), names of
/// built-ins and constructors (the printer must not confuse them with the built-in), unusual
/// identifiers, and hints that are not identifiers at all (the printer must rename them).
const NAMES: [&str; 30] = [
    "x", "y", "z", "i", "x", "y", "a", "b", "n", "k", "exp", "pi", "normal", "size", "log", "max",
    "θ", "x'", "_t", "x1", "x2", "exp1", "y_1", "counting", "left", "true", "if", "nothing", "1x",
    "",
];

struct Gen<'a> {
    config: GenConfig,
    choices: &'a [u8],
    pos: usize,
    store: Store,
    /// Variables in scope, innermost last (shadowed ones stay: names are only hints).
    scope: Vec<VarId>,
    fuel: u32,
}

impl Gen<'_> {
    fn next(&mut self) -> u8 {
        let c = self.choices.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        c
    }

    /// A number in `0..n` (0 for n <= 1).
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            0
        } else {
            usize::from(self.next()) % n
        }
    }

    /// True with probability about `percent`%; false on the byte 0.
    fn chance(&mut self, percent: u32) -> bool {
        let c = u32::from(self.next());
        c * 100 >= (100 - percent) * 256
    }

    /// An index into `weights`, choosing option `i` with probability proportional to
    /// `weights[i]`; byte 0 picks option 0.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        if total == 0 {
            return 0;
        }
        let mut r = u32::from(self.next()) * total / 256;
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }

    fn fresh(&mut self, ty: Type) -> VarId {
        let name = NAMES[self.below(NAMES.len())];
        self.store.fresh_var(name, ty)
    }

    fn var_term(&mut self, v: VarId) -> TermId {
        self.store.var_term(v)
    }

    fn numeric(&mut self) -> Type {
        [Type::Nat, Type::Int, Type::Prob, Type::Real][self.below(4)].clone()
    }

    /// A first-order data type (what measures range over and variables hold).
    fn data_type(&mut self, depth: u32) -> Type {
        if depth == 0 {
            return self.numeric();
        }
        match self.weighted(&[12, 3, 2, 3, 3, 1, 1]) {
            0 => self.numeric(),
            1 => Type::Bool,
            2 => Type::Unit,
            3 => Type::pair(self.data_type(depth - 1), self.data_type(depth - 1)),
            4 => Type::array(self.data_type(depth - 1)),
            5 => Type::maybe(self.data_type(depth - 1)),
            _ => Type::either(self.data_type(depth - 1), self.data_type(depth - 1)),
        }
    }

    fn param_type(&mut self) -> Type {
        match self.weighted(&[10, 3, 2, 1]) {
            0 => self.numeric(),
            1 => Type::array(self.numeric()),
            2 => self.data_type(1),
            _ => Type::fun(self.numeric(), self.numeric()),
        }
    }

    fn body_type(&mut self) -> Type {
        match self.weighted(&[4, 4, 3, 1]) {
            0 => self.numeric(),
            1 => Type::measure(self.numeric()),
            2 => Type::measure(self.data_type(2)),
            _ => self.data_type(2),
        }
    }

    /// The type of something matched on.
    fn scrutinee_type(&mut self) -> Type {
        match self.weighted(&[3, 3, 2, 2, 1]) {
            0 => Type::Bool,
            1 => Type::pair(self.data_type(1), self.data_type(1)),
            2 => Type::maybe(self.data_type(1)),
            3 => Type::either(self.data_type(1), self.data_type(1)),
            _ => Type::Unit,
        }
    }

    fn vars_of(&self, ty: &Type) -> Vec<VarId> {
        self.scope
            .iter()
            .copied()
            .filter(|&v| self.store.var_type(v) == ty)
            .collect()
    }

    /// Functions in scope that give `ty` after one or more arguments: (function, argument
    /// types).
    fn functions_to(&self, ty: &Type) -> Vec<(VarId, Vec<Type>)> {
        let mut out = Vec::new();
        for &v in &self.scope {
            let mut t = self.store.var_type(v);
            let mut args = Vec::new();
            while let Type::Fun(a, b) = t {
                args.push((**a).clone());
                t = b;
                if t == ty {
                    out.push((v, args.clone()));
                    break;
                }
            }
        }
        out
    }

    /// A term of type `ty` allowed at `pos`, built with at most `depth` nested
    /// constructors.
    fn expr(&mut self, ty: &Type, pos: Pos, depth: u32) -> TermId {
        if depth == 0 || self.fuel == 0 || self.pos >= self.choices.len() {
            return self.leaf(ty, pos);
        }
        self.fuel -= 1;
        let opts = self.options(ty, pos);
        let weights: Vec<u32> = opts.iter().map(|&(w, _)| w).collect();
        let opt = opts[self.weighted(&weights)].1;
        self.build(opt, ty, pos, depth - 1)
    }

    /// The ways to build a term of `ty` at `pos`, with weights; the leaf comes first.
    fn options(&self, ty: &Type, pos: Pos) -> Vec<(u32, Opt)> {
        let mut o = vec![(6, Opt::Leaf)];
        let allow = |h: Head| pos.not_head != Some(h);
        if !self.vars_of(ty).is_empty() {
            o.push((6, Opt::Var));
        }
        o.push((2, Opt::Let));
        o.push((2, Opt::LetFun));
        o.push((2, Opt::If));
        o.push((2, Opt::Match));
        if !self.functions_to(ty).is_empty() {
            o.push((12, Opt::App));
        }
        if !matches!(ty, Type::Fun(..)) {
            o.push((1, Opt::Index));
            if matches!(
                ty,
                Type::Measure(_) | Type::Real | Type::Bool | Type::Pair(..)
            ) {
                o.push((1, Opt::Transform));
            }
        }
        match ty {
            Type::Nat | Type::Int | Type::Prob | Type::Real => {
                if !pos.no_lit {
                    o.push((4, Opt::Lit));
                }
                if allow(Head::Add) {
                    o.push((5, Opt::Add));
                }
                if allow(Head::Mul) {
                    o.push((4, Opt::Mul));
                }
                o.push((1, Opt::Pow));
                o.push((1, Opt::MinMax));
                o.push((5, Opt::Coerce));
                o.push((1, Opt::Reduce));
                o.push((1, Opt::Summate));
                o.push((1, Opt::Product));
                o.push((1, Opt::Bucket));
                if ty.is_ring() {
                    o.push((2, Opt::Neg));
                }
                if ty.is_field() {
                    o.push((2, Opt::Recip));
                }
                if *ty == Type::Prob {
                    o.push((1, Opt::Integrate));
                }
                match ty {
                    Type::Nat => {
                        o.push((2, Opt::Overloaded(Prim::Abs, Ty::Int)));
                        o.push((2, Opt::Overloaded(Prim::Floor, Ty::Prob)));
                        o.push((1, Opt::Fixed(Prim::Choose, NAT2)));
                        o.push((2, Opt::Size));
                    }
                    Type::Int => {
                        o.push((2, Opt::Overloaded(Prim::Signum, Ty::Int)));
                        o.push((2, Opt::Overloaded(Prim::Floor, Ty::Real)));
                    }
                    Type::Prob => {
                        o.push((2, Opt::Fixed(Prim::Exp, REAL)));
                        o.push((1, Opt::Fixed(Prim::Sqrt, PROB)));
                        o.push((1, Opt::Fixed(Prim::GammaFunc, REAL)));
                        o.push((1, Opt::Fixed(Prim::BetaFunc, PROB2)));
                        o.push((1, Opt::Fixed(Prim::NatRoot, PROB_NAT)));
                        o.push((1, Opt::Fixed(Prim::RealPow, PROB_REAL)));
                        o.push((1, Opt::Fixed(Prim::Pi, &[])));
                        o.push((1, Opt::Fixed(Prim::Infinity, &[])));
                        o.push((1, Opt::Overloaded(Prim::Abs, Ty::Real)));
                        o.push((1, Opt::Overloaded(Prim::Erf, Ty::Prob)));
                    }
                    _ => {
                        o.push((2, Opt::Fixed(Prim::Log, PROB)));
                        o.push((2, Opt::Fixed(Prim::Sin, REAL)));
                        o.push((1, Opt::Overloaded(Prim::Signum, Ty::Real)));
                        o.push((1, Opt::Overloaded(Prim::Erf, Ty::Real)));
                    }
                }
            }
            Type::Bool => {
                o.push((3, Opt::Cmp));
                if allow(Head::And) || allow(Head::Or) {
                    o.push((3, Opt::AndOr));
                }
                o.push((2, Opt::Not));
                o.push((1, Opt::BoolBin));
            }
            Type::Unit => o.push((1, Opt::Bucket)),
            Type::Pair(..) => {
                o.push((4, Opt::Pair));
                if is_reducer_type(ty) {
                    o.push((2, Opt::Bucket));
                }
            }
            Type::Array(_) => {
                o.push((3, Opt::ArrayLit));
                o.push((3, Opt::Array));
                if is_reducer_type(ty) {
                    o.push((2, Opt::Bucket));
                }
            }
            Type::Maybe(_) => o.push((3, Opt::Just)),
            Type::Either(..) => {
                o.push((2, Opt::Left));
                o.push((2, Opt::Right));
            }
            Type::Measure(t) => {
                if let Type::Array(_) = **t {
                    o.push((4, Opt::Plate));
                }
                o.push((3, Opt::Dirac));
                o.push((3, Opt::Weight));
                if allow(Head::Superpose) {
                    o.push((2, Opt::Superpose));
                }
                o.push((8, Opt::Bind));
                if let Type::Pair(a, _) = &**t {
                    if matches!(**a, Type::Array(_)) {
                        o.push((8, Opt::Chain));
                    }
                }
                if Dist::ALL.iter().any(|d| d.support_type() == **t) {
                    o.push((5, Opt::Dist));
                    o.push((2, Opt::Observe));
                }
            }
            Type::Fun(..) => {}
        }
        o
    }

    /// The smallest term of `ty` allowed at `pos` (structural in the type, so it always
    /// terminates).
    fn leaf(&mut self, ty: &Type, pos: Pos) -> TermId {
        // Now and then a variable of a lower numeric type, safely coerced: the printer
        // leaves such coercions implicit where the elaborator re-inserts them.
        if let Some(v) = self.lower_var(ty) {
            return v;
        }
        let vars = self.vars_of(ty);
        if !vars.is_empty() && (pos.no_lit || self.chance(40)) {
            let v = vars[self.below(vars.len())];
            return self.var_term(v);
        }
        match ty {
            Type::Nat | Type::Int | Type::Prob | Type::Real => {
                if pos.no_lit {
                    self.non_literal_constant(ty)
                } else {
                    self.literal(ty)
                }
            }
            Type::Bool => {
                let b = self.chance(50);
                self.store.intern(Node::Bool(b), Type::Bool)
            }
            Type::Unit => self.store.intern(Node::Unit, Type::Unit),
            Type::Pair(a, b) => {
                let x = self.leaf(a, Pos::ANY);
                let y = self.leaf(b, Pos::ANY);
                self.store.intern(Node::Pair(x, y), ty.clone())
            }
            Type::Array(t) => {
                let elems = if self.chance(60) {
                    vec![self.leaf(t, Pos::ANY)]
                } else {
                    vec![]
                };
                self.store.intern(Node::ArrayLit(elems), ty.clone())
            }
            Type::Maybe(t) => {
                if self.chance(50) {
                    let x = self.leaf(t, Pos::ANY);
                    self.store.intern(Node::Just(x), ty.clone())
                } else {
                    self.store.intern(Node::Nothing, ty.clone())
                }
            }
            Type::Either(a, b) => {
                if self.chance(50) {
                    let x = self.leaf(b, Pos::ANY);
                    self.store.intern(Node::Right(x), ty.clone())
                } else {
                    let x = self.leaf(a, Pos::ANY);
                    self.store.intern(Node::Left(x), ty.clone())
                }
            }
            Type::Measure(t) => {
                let dists: Vec<Dist> = Dist::ALL
                    .into_iter()
                    .filter(|d| d.support_type() == **t)
                    .collect();
                match self.below(3) {
                    1 if !dists.is_empty() => {
                        let d = dists[self.below(dists.len())];
                        self.dist(d, 0)
                    }
                    2 => self.store.intern(Node::Reject, ty.clone()),
                    _ => {
                        let x = self.leaf(t, Pos::ANY);
                        self.store.intern(Node::Dirac(x), ty.clone())
                    }
                }
            }
            Type::Fun(a, b) => {
                let v = self.fresh((**a).clone());
                self.scope.push(v);
                let body = self.leaf(b, Pos::ANY);
                self.scope.pop();
                self.store.intern(Node::Lam(v, body), ty.clone())
            }
        }
    }

    /// With a chance of a quarter, `Coerce(c, x)` for a variable `x` in scope whose type
    /// `c` safely coerces to `ty`; `None` on byte 0 or when there is no such variable.
    fn lower_var(&mut self, ty: &Type) -> Option<TermId> {
        if !ty.is_numeric() {
            return None;
        }
        let lower: Vec<(VarId, Coercion)> = self
            .scope
            .iter()
            .filter_map(|&v| Coercion::safe(self.store.var_type(v), ty).map(|c| (v, c)))
            .collect();
        if lower.is_empty() || !self.chance(25) {
            return None;
        }
        let (v, c) = lower[self.below(lower.len())];
        let x = self.var_term(v);
        Some(self.store.intern(Node::Coerce(c, x), ty.clone()))
    }

    /// A closed non-literal term of a numeric type, for positions that forbid literals
    /// when no variable fits.
    fn non_literal_constant(&mut self, ty: &Type) -> TermId {
        let pi = self.store.prim(Prim::Pi, vec![], Type::Prob);
        match ty {
            Type::Nat => self.store.prim(Prim::Floor, vec![pi], Type::Nat),
            Type::Int => {
                let n = self.store.prim(Prim::Floor, vec![pi], Type::Nat);
                self.store
                    .intern(Node::Coerce(Coercion::Nat2Int, n), Type::Int)
            }
            Type::Real => self
                .store
                .intern(Node::Coerce(Coercion::Prob2Real, pi), Type::Real),
            _ => pi,
        }
    }

    /// A literal of numeric type `ty`: small values mostly, negative and fractional ones
    /// where the type allows, now and then a big one.
    fn literal(&mut self, ty: &Type) -> TermId {
        let mut num = match self.weighted(&[24, 1]) {
            0 => BigInt::from(self.below(6)),
            _ => BigInt::from(10u32).pow(20) + BigInt::from(self.below(100)),
        };
        let den = if ty.is_field() && self.chance(50) {
            match self.weighted(&[12, 1]) {
                0 => BigInt::from(2 + self.below(6)),
                _ => BigInt::from(3u32).pow(41),
            }
        } else {
            BigInt::from(1)
        };
        if ty.is_ring() && self.chance(50) {
            num = -num;
        }
        self.store.lit(BigRational::new(num, den), ty.clone())
    }

    fn build(&mut self, opt: Opt, ty: &Type, pos: Pos, d: u32) -> TermId {
        match opt {
            Opt::Leaf => self.leaf(ty, pos),
            Opt::Var => {
                let vars = self.vars_of(ty);
                let v = vars[self.below(vars.len())];
                self.var_term(v)
            }
            Opt::Let => {
                let t = self.data_type(1);
                let e = self.expr(&t, Pos::ANY, d);
                let v = self.fresh(t);
                self.scope.push(v);
                let body = self.expr(ty, pos, d);
                self.scope.pop();
                self.store.intern(Node::Let(v, e, body), ty.clone())
            }
            Opt::LetFun => {
                let nargs = 1 + self.below(2);
                let params: Vec<Type> = (0..nargs)
                    .map(|_| {
                        if self.chance(10) {
                            Type::fun(self.numeric(), self.numeric())
                        } else {
                            self.data_type(1)
                        }
                    })
                    .collect();
                // Mostly a function giving the requested type, so the body can call it.
                let ret = if self.chance(60) {
                    ty.clone()
                } else {
                    self.data_type(1)
                };
                let f = self.lambda(&params, &ret, d);
                let fty = self.store.ty(f).clone();
                let v = self.fresh(fty);
                self.scope.push(v);
                let body = self.expr(ty, pos, d);
                self.scope.pop();
                self.store.intern(Node::Let(v, f, body), ty.clone())
            }
            Opt::If => {
                let c = self.expr(&Type::Bool, Pos::ANY, d);
                let a = self.expr(ty, pos, d);
                let b = self.expr(ty, pos, d);
                self.store.intern(Node::If(c, a, b), ty.clone())
            }
            Opt::Match => self.matching(ty, pos, d),
            Opt::App => {
                let fs = self.functions_to(ty);
                let (f, args) = fs[self.below(fs.len())].clone();
                let mut t = self.var_term(f);
                let mut fty = self.store.var_type(f).clone();
                for a in &args {
                    let x = self.expr(a, Pos::ANY, d);
                    let Type::Fun(_, rest) = fty else {
                        unreachable!("functions_to returned a non-function")
                    };
                    fty = (*rest).clone();
                    t = self.store.intern(Node::App(t, x), fty.clone());
                }
                t
            }
            Opt::Index => {
                let arr = self.expr(&Type::array(ty.clone()), Pos::ANY, d);
                let i = self.expr(&Type::Nat, Pos::ANY, d);
                self.store.intern(Node::Index(arr, i), ty.clone())
            }
            Opt::Reduce => {
                let f = self.lambda(&[ty.clone(), ty.clone()], ty, d);
                let z = self.expr(ty, Pos::ANY, d);
                let a = self.expr(&Type::array(ty.clone()), Pos::ANY, d);
                self.store.prim(Prim::Reduce, vec![f, z, a], ty.clone())
            }
            Opt::Lit => self.literal(ty),
            Opt::Add | Opt::Mul => {
                let (p, h) = if matches!(opt, Opt::Add) {
                    (Prim::Add, Head::Add)
                } else {
                    (Prim::Mul, Head::Mul)
                };
                let n = 2 + self.below(3);
                let mut args = (0..n)
                    .map(|i| self.operand(p, h, ty, d, i == 0))
                    .collect::<Vec<_>>();
                // `3 / 2` folds to a literal: a product with an inverted literal needs an
                // operand that is not a literal (or an explicit `recip` call).
                let literalish = |s: &Store, t: TermId| match s.node(t) {
                    Node::Lit(_) => true,
                    Node::Prim(Prim::Recip, xs) => {
                        xs.iter().all(|&x| matches!(s.node(x), Node::Lit(_)))
                    }
                    _ => false,
                };
                if p == Prim::Mul
                    && !self.config.explicit_literal_calls
                    && args.iter().all(|&t| literalish(&self.store, t))
                    && args
                        .iter()
                        .any(|&t| !matches!(self.store.node(t), Node::Lit(_)))
                {
                    let pos = Pos {
                        no_lit: true,
                        not_head: Some(h),
                    };
                    args[0] = self.expr(ty, pos, d);
                }
                self.store.prim(p, args, ty.clone())
            }
            Opt::Neg => {
                let x = self.expr(ty, Pos::call_arg(self.config), d);
                self.store.prim(Prim::Neg, vec![x], ty.clone())
            }
            Opt::Recip => {
                let x = self.expr(ty, Pos::call_arg(self.config), d);
                self.store.prim(Prim::Recip, vec![x], ty.clone())
            }
            Opt::Pow => {
                let a = self.expr(ty, Pos::ANY, d);
                let n = self.expr(&Type::Nat, Pos::ANY, d);
                self.store.prim(Prim::Pow, vec![a, n], ty.clone())
            }
            Opt::MinMax => {
                let p = if self.chance(50) {
                    Prim::Max
                } else {
                    Prim::Min
                };
                let a = self.expr(ty, Pos::ANY, d);
                let b = self.expr(ty, Pos::ANY, d);
                self.store.prim(p, vec![a, b], ty.clone())
            }
            Opt::Coerce => {
                let cs: Vec<Coercion> = Coercion::ALL
                    .into_iter()
                    .filter(|c| c.to_type() == *ty)
                    .collect();
                let c = cs[self.below(cs.len())];
                let x = self.expr(&c.from_type(), Pos::call_arg(self.config), d);
                self.store.intern(Node::Coerce(c, x), ty.clone())
            }
            Opt::Fixed(p, args) => {
                let xs = args
                    .iter()
                    .map(|a| self.expr(&a.ty(), Pos::ANY, d))
                    .collect::<Vec<_>>();
                let p = if p == Prim::Sin {
                    let trig: Vec<Prim> = Prim::ALL.into_iter().filter(|p| p.is_trig()).collect();
                    trig[self.below(trig.len())]
                } else {
                    p
                };
                self.store.prim(p, xs, ty.clone())
            }
            Opt::Overloaded(p, a) => {
                let x = self.expr(&a.ty(), Pos::ANY, d);
                self.store.prim(p, vec![x], ty.clone())
            }
            Opt::Size => {
                let t = self.data_type(1);
                let a = self.expr(&Type::array(t), Pos::ANY, d);
                self.store.prim(Prim::Size, vec![a], Type::Nat)
            }
            Opt::Summate | Opt::Product => {
                let bound = if self.chance(25) {
                    Type::Int
                } else {
                    Type::Nat
                };
                let lo = self.expr(&bound, Pos::ANY, d);
                let hi = self.expr(&bound, Pos::ANY, d);
                let i = self.fresh(bound);
                self.scope.push(i);
                let body = self.expr(ty, Pos::ANY, d);
                self.scope.pop();
                let node = if matches!(opt, Opt::Summate) {
                    Node::Summate(i, lo, hi, body)
                } else {
                    Node::Product(i, lo, hi, body)
                };
                self.store.intern(node, ty.clone())
            }
            Opt::Integrate => {
                let lo = self.expr(&Type::Real, Pos::ANY, d);
                let hi = self.expr(&Type::Real, Pos::ANY, d);
                let x = self.fresh(Type::Real);
                self.scope.push(x);
                let body = self.expr(ty, Pos::ANY, d);
                self.scope.pop();
                self.store
                    .intern(Node::Integrate(x, lo, hi, body), ty.clone())
            }
            Opt::Bucket => {
                let lo = self.expr(&Type::Nat, Pos::ANY, d);
                let hi = self.expr(&Type::Nat, Pos::ANY, d);
                let outer = self.scope.len();
                let j = self.fresh(Type::Nat);
                self.scope.push(j);
                let r = self.reducer(ty, d, outer);
                self.scope.pop();
                self.store.intern(Node::Bucket(j, lo, hi, r), ty.clone())
            }
            Opt::Cmp => {
                let p = [Prim::Lt, Prim::Le, Prim::Eq, Prim::Ne][self.below(4)];
                let t = if matches!(p, Prim::Eq | Prim::Ne) && self.chance(20) {
                    if self.chance(50) {
                        Type::Bool
                    } else {
                        Type::Unit
                    }
                } else {
                    self.numeric()
                };
                let a = self.expr(&t, Pos::ANY, d);
                let b = self.expr(&t, Pos::ANY, d);
                self.store.prim(p, vec![a, b], Type::Bool)
            }
            Opt::AndOr => {
                let (p, h) = match pos.not_head {
                    Some(Head::And) => (Prim::Or, Head::Or),
                    Some(Head::Or) => (Prim::And, Head::And),
                    _ if self.chance(50) => (Prim::Or, Head::Or),
                    _ => (Prim::And, Head::And),
                };
                let n = 2 + self.below(2);
                let args = (0..n)
                    .map(|_| self.expr(&Type::Bool, Pos::operand(h), d))
                    .collect::<Vec<_>>();
                self.store.prim(p, args, Type::Bool)
            }
            Opt::Not => {
                let x = self.expr(&Type::Bool, Pos::ANY, d);
                self.store.prim(Prim::Not, vec![x], Type::Bool)
            }
            Opt::BoolBin => {
                let p = BOOL_BIN[self.below(BOOL_BIN.len())];
                let xs = BOOL2
                    .iter()
                    .map(|a| self.expr(&a.ty(), Pos::ANY, d))
                    .collect::<Vec<_>>();
                self.store.prim(p, xs, Type::Bool)
            }
            Opt::Pair => {
                let Type::Pair(a, b) = ty else {
                    unreachable!("Pair option for a non-pair type")
                };
                let x = self.expr(a, Pos::ANY, d);
                let y = self.expr(b, Pos::ANY, d);
                self.store.intern(Node::Pair(x, y), ty.clone())
            }
            Opt::ArrayLit => {
                let Type::Array(t) = ty else {
                    unreachable!("ArrayLit option for a non-array type")
                };
                let n = self.below(4);
                let xs = (0..n)
                    .map(|_| self.expr(t, Pos::ANY, d))
                    .collect::<Vec<_>>();
                self.store.intern(Node::ArrayLit(xs), ty.clone())
            }
            Opt::Array => {
                let Type::Array(t) = ty else {
                    unreachable!("Array option for a non-array type")
                };
                let n = self.expr(&Type::Nat, Pos::ANY, d);
                let i = self.fresh(Type::Nat);
                self.scope.push(i);
                let body = self.expr(t, Pos::ANY, d);
                self.scope.pop();
                self.store.intern(Node::Array(i, n, body), ty.clone())
            }
            Opt::Just => {
                let Type::Maybe(t) = ty else {
                    unreachable!("Just option for a non-maybe type")
                };
                let x = self.expr(t, Pos::ANY, d);
                self.store.intern(Node::Just(x), ty.clone())
            }
            Opt::Left | Opt::Right => {
                let Type::Either(a, b) = ty else {
                    unreachable!("Left/Right option for a non-either type")
                };
                if matches!(opt, Opt::Left) {
                    let x = self.expr(a, Pos::ANY, d);
                    self.store.intern(Node::Left(x), ty.clone())
                } else {
                    let x = self.expr(b, Pos::ANY, d);
                    self.store.intern(Node::Right(x), ty.clone())
                }
            }
            Opt::Dirac => {
                let t = measure_arg(ty);
                let x = self.expr(&t, Pos::ANY, d);
                self.store.intern(Node::Dirac(x), ty.clone())
            }
            Opt::Weight => {
                let w = self.expr(&Type::Prob, Pos::ANY, d);
                let m = self.expr(ty, Pos::ANY, d);
                self.store.intern(Node::Weight(w, m), ty.clone())
            }
            Opt::Superpose => {
                let n = 2 + self.below(2);
                let ms = (0..n)
                    .map(|_| self.expr(ty, Pos::operand(Head::Superpose), d))
                    .collect::<Vec<_>>();
                self.store.intern(Node::Superpose(ms), ty.clone())
            }
            Opt::Bind => {
                // Now and then the type a `chain` gives, which other requests rarely ask for.
                let t = match self.weighted(&[16, 1, 2]) {
                    0 => self.data_type(1),
                    1 => Type::pair(Type::array(self.numeric()), self.numeric()),
                    _ => Type::array(self.numeric()),
                };
                let m = self.expr(&Type::measure(t.clone()), Pos::ANY, d);
                let x = self.fresh(t);
                self.scope.push(x);
                let k = self.expr(ty, Pos::ANY, d);
                self.scope.pop();
                self.store.intern(Node::Bind(x, m, k), ty.clone())
            }
            Opt::Plate => {
                let Type::Array(t) = measure_arg(ty) else {
                    unreachable!("Plate option for a non-array measure")
                };
                let n = self.expr(&Type::Nat, Pos::ANY, d);
                let i = self.fresh(Type::Nat);
                self.scope.push(i);
                let m = self.expr(&Type::measure((*t).clone()), Pos::ANY, d);
                self.scope.pop();
                self.store.intern(Node::Plate(i, n, m), ty.clone())
            }
            Opt::Chain => {
                let Type::Pair(arr, state) = measure_arg(ty) else {
                    unreachable!("Chain option for a non-pair measure")
                };
                let Type::Array(a) = &*arr else {
                    unreachable!("Chain option for a non-array first component")
                };
                let s0 = self.expr(&state, Pos::ANY, d);
                let n = self.expr(&Type::Nat, Pos::ANY, d);
                let s = self.fresh((*state).clone());
                self.scope.push(s);
                let m = self.expr(
                    &Type::measure(Type::pair((**a).clone(), (*state).clone())),
                    Pos::ANY,
                    d,
                );
                self.scope.pop();
                self.store.intern(Node::Chain(s, s0, n, m), ty.clone())
            }
            Opt::Dist => {
                let t = measure_arg(ty);
                let ds: Vec<Dist> = Dist::ALL
                    .into_iter()
                    .filter(|x| x.support_type() == t)
                    .collect();
                let dist = ds[self.below(ds.len())];
                self.dist(dist, d)
            }
            Opt::Observe => {
                let t = measure_arg(ty);
                let ds: Vec<Dist> = Dist::ALL
                    .into_iter()
                    .filter(|x| x.support_type() == t)
                    .collect();
                let m = if self.chance(70) {
                    let dist = ds[self.below(ds.len())];
                    self.dist(dist, d)
                } else {
                    self.expr(ty, Pos::ANY, d)
                };
                let v = self.expr(&t, Pos::ANY, d);
                self.store.intern(Node::Observe(m, v), ty.clone())
            }
            Opt::Transform => {
                let tr = if self.chance(50) {
                    Transform::Summarize
                } else {
                    Transform::Simplify
                };
                let m = self.expr(ty, Pos::ANY, d);
                self.store.intern(Node::Transform(tr, m), ty.clone())
            }
        }
    }

    /// An operand of the n-ary `p` (head `h`) at type `ty`: sometimes negated or
    /// inverted (`a - b`, `a / b`), never a term with head `h`. A subtracted literal is
    /// folded by the elaborator (`x - 3` is `Add[x, Lit(-3)]`), so `Neg(Lit)` needs an
    /// explicit `negate(3)`; a divisor literal is not (`x / 2` is `Mul[x, Recip(Lit 2)]`),
    /// but a leading `Recip(Lit)` needs an explicit `recip(2)`, as does dividing by 0.
    fn operand(&mut self, p: Prim, h: Head, ty: &Type, d: u32, first: bool) -> TermId {
        let explicit = self.config.explicit_literal_calls;
        let (inverse, lit_ok) = match p {
            Prim::Add if ty.is_ring() => (Some(Prim::Neg), explicit),
            Prim::Mul if ty.is_field() => (Some(Prim::Recip), explicit || !first),
            _ => (None, false),
        };
        match inverse {
            Some(inv) if self.chance(25) => {
                let x = if lit_ok && self.chance(40) {
                    let x = self.literal(ty);
                    match self.store.node(x) {
                        Node::Lit(v) if v.is_zero() && !explicit => {
                            self.store.int_lit(1, ty.clone())
                        }
                        _ => x,
                    }
                } else {
                    self.expr(ty, Pos::NO_LIT, d)
                };
                self.store.prim(inv, vec![x], ty.clone())
            }
            _ => self.expr(ty, Pos::operand(h), d),
        }
    }

    /// `fn x1 T1: ... fn xn Tn: body` with body of type `ret`.
    fn lambda(&mut self, params: &[Type], ret: &Type, d: u32) -> TermId {
        let vars: Vec<VarId> = params.iter().map(|t| self.fresh(t.clone())).collect();
        self.scope.extend(vars.iter().copied());
        let mut t = self.expr(ret, Pos::ANY, d);
        for _ in &vars {
            self.scope.pop();
        }
        for &v in vars.iter().rev() {
            let fty = Type::fun(self.store.var_type(v).clone(), self.store.ty(t).clone());
            t = self.store.intern(Node::Lam(v, t), fty);
        }
        t
    }

    /// A primitive measure with arguments of its parameter types.
    fn dist(&mut self, dist: Dist, d: u32) -> TermId {
        let args = dist
            .param_types()
            .iter()
            .map(|t| self.expr(t, Pos::ANY, d))
            .collect::<Vec<_>>();
        self.store
            .intern(Node::Dist(dist, args), Type::measure(dist.support_type()))
    }

    /// A reducer of type `ty` (numeric, unit, array or pair of reducer types). The bucket
    /// variable is the last in scope; `outer` is the scope length before it, which is
    /// all an `r_index` bucket count may mention.
    fn reducer(&mut self, ty: &Type, d: u32, outer: usize) -> TermId {
        let node = match ty {
            Type::Unit => Node::RNop,
            Type::Array(t) => {
                let inner = self.scope.split_off(outer);
                let n = self.expr(&Type::Nat, Pos::ANY, d);
                self.scope.extend(inner);
                let e = self.expr(&Type::Nat, Pos::ANY, d);
                let b = self.fresh(Type::Nat);
                self.scope.push(b);
                let r = self.reducer(t, d.saturating_sub(1), outer);
                self.scope.pop();
                Node::RIndex(b, n, e, r)
            }
            Type::Pair(a, b) => {
                if self.chance(50) {
                    let c = self.expr(&Type::Bool, Pos::ANY, d);
                    let r1 = self.reducer(a, d.saturating_sub(1), outer);
                    let r2 = self.reducer(b, d.saturating_sub(1), outer);
                    Node::RSplit(c, r1, r2)
                } else {
                    let r1 = self.reducer(a, d.saturating_sub(1), outer);
                    let r2 = self.reducer(b, d.saturating_sub(1), outer);
                    Node::RFanout(r1, r2)
                }
            }
            _ => Node::RAdd(self.expr(ty, Pos::ANY, d)),
        };
        self.store.intern(node, ty.clone())
    }

    /// `match e:` on a random scrutinee type, with arms whose patterns fit it.
    fn matching(&mut self, ty: &Type, pos: Pos, d: u32) -> TermId {
        let st = self.scrutinee_type();
        let e = self.expr(&st, Pos::ANY, d);
        let mut pats: Vec<Pattern> = match &st {
            Type::Bool => match self.below(3) {
                0 => vec![Pattern::Bool(true), Pattern::Bool(false)],
                1 => vec![Pattern::Bool(false), Pattern::Wild],
                _ => vec![Pattern::Bool(true), Pattern::Bool(false), Pattern::Wild],
            },
            Type::Pair(a, b) => {
                let p = self.sub_pattern(a);
                let q = self.sub_pattern(b);
                vec![Pattern::Pair(Box::new(p), Box::new(q))]
            }
            Type::Maybe(t) => {
                let p = self.sub_pattern(t);
                let just = Pattern::Just(Box::new(p));
                match self.below(3) {
                    0 => vec![just, Pattern::Nothing],
                    1 => vec![Pattern::Nothing, just],
                    _ => vec![just, Pattern::Wild],
                }
            }
            Type::Either(a, b) => {
                let p = Pattern::Left(Box::new(self.sub_pattern(a)));
                let q = Pattern::Right(Box::new(self.sub_pattern(b)));
                if self.chance(50) {
                    vec![q, p]
                } else {
                    vec![p, q]
                }
            }
            _ => vec![Pattern::Unit],
        };
        if self.chance(15) {
            let v = self.fresh(st.clone());
            pats.push(Pattern::Var(v));
        }
        let mut arms = Vec::new();
        for p in pats {
            let mut vs = Vec::new();
            p.vars(&mut vs);
            let n = vs.len();
            self.scope.extend(vs);
            let body = self.expr(ty, pos, d);
            self.scope.truncate(self.scope.len() - n);
            arms.push((p, body));
        }
        self.store.intern(Node::Match(e, arms), ty.clone())
    }

    /// A pattern for a component of type `ty`: a variable mostly, a wildcard, or a
    /// nested pattern for pairs.
    fn sub_pattern(&mut self, ty: &Type) -> Pattern {
        match self.weighted(&[6, 2, 2]) {
            1 => Pattern::Wild,
            2 => match ty {
                Type::Pair(a, b) => {
                    let p = self.sub_pattern(a);
                    let q = self.sub_pattern(b);
                    Pattern::Pair(Box::new(p), Box::new(q))
                }
                Type::Unit => Pattern::Unit,
                Type::Bool => Pattern::Bool(self.chance(50)),
                Type::Maybe(t) if self.chance(50) => Pattern::Just(Box::new(self.sub_pattern(t))),
                Type::Maybe(_) => Pattern::Nothing,
                Type::Either(a, _) if self.chance(50) => {
                    Pattern::Left(Box::new(self.sub_pattern(a)))
                }
                Type::Either(_, b) => Pattern::Right(Box::new(self.sub_pattern(b))),
                _ => Pattern::Wild,
            },
            _ => Pattern::Var(self.fresh(ty.clone())),
        }
    }
}

/// `T` for `measure(T)` (the request of a measure option always is a measure type).
fn measure_arg(ty: &Type) -> Type {
    match ty {
        Type::Measure(t) => (**t).clone(),
        _ => unreachable!("measure option for a non-measure type"),
    }
}

/// Types a reducer can have: numeric, unit, and arrays and pairs of those.
fn is_reducer_type(ty: &Type) -> bool {
    match ty {
        Type::Nat | Type::Int | Type::Prob | Type::Real | Type::Unit => true,
        Type::Array(t) => is_reducer_type(t),
        Type::Pair(a, b) => is_reducer_type(a) && is_reducer_type(b),
        _ => false,
    }
}

/// An s-expression dump of a term, independent of the printer under test: variables as
/// `name#id`, literals as `value:type`.
pub fn dump(store: &Store, t: TermId) -> String {
    let mut out = String::new();
    dump_into(store, t, &mut out);
    out
}

fn var(store: &Store, v: VarId) -> String {
    format!("{}#{}", store.var_name(v), v.index())
}

fn pattern_text(store: &Store, p: &Pattern) -> String {
    match p {
        Pattern::Wild => "_".into(),
        Pattern::Var(v) => var(store, *v),
        Pattern::Unit => "()".into(),
        Pattern::Bool(b) => b.to_string(),
        Pattern::Pair(a, b) => format!("({}, {})", pattern_text(store, a), pattern_text(store, b)),
        Pattern::Left(a) => format!("left({})", pattern_text(store, a)),
        Pattern::Right(a) => format!("right({})", pattern_text(store, a)),
        Pattern::Just(a) => format!("just({})", pattern_text(store, a)),
        Pattern::Nothing => "nothing".into(),
    }
}

fn dump_into(store: &Store, t: TermId, out: &mut String) {
    let node = store.node(t);
    let head = match node {
        Node::Var(v) => {
            out.push_str(&var(store, *v));
            return;
        }
        Node::Lit(v) => {
            out.push_str(&format!("{v}:{}", store.ty(t)));
            return;
        }
        Node::Bool(b) => {
            out.push_str(&b.to_string());
            return;
        }
        Node::Unit => {
            out.push_str("()");
            return;
        }
        Node::Nothing | Node::RNop | Node::Reject => {
            out.push_str(&format!("{node:?}:{}", store.ty(t)));
            return;
        }
        Node::Prim(p, _) => format!("{p:?}"),
        Node::Coerce(c, _) => c.name().to_string(),
        Node::Dist(d, _) => d.name().to_string(),
        Node::Transform(tr, _) => tr.name().to_string(),
        Node::Match(_, arms) => {
            let pats: Vec<String> = arms.iter().map(|(p, _)| pattern_text(store, p)).collect();
            format!("Match[{}]", pats.join(" | "))
        }
        Node::Left(_) | Node::Right(_) | Node::ArrayLit(_) => {
            format!("{}:{}", node_name(node), store.ty(t))
        }
        other => match other.binder() {
            Some(v) => format!("{} {}", node_name(other), var(store, v)),
            None => node_name(other).to_string(),
        },
    };
    out.push('(');
    out.push_str(&head);
    for c in node.children() {
        out.push(' ');
        dump_into(store, c, out);
    }
    out.push(')');
}

fn node_name(n: &Node) -> &'static str {
    match n {
        Node::Pair(..) => "Pair",
        Node::Left(_) => "Left",
        Node::Right(_) => "Right",
        Node::Just(_) => "Just",
        Node::Let(..) => "Let",
        Node::Lam(..) => "Lam",
        Node::App(..) => "App",
        Node::If(..) => "If",
        Node::ArrayLit(_) => "ArrayLit",
        Node::Array(..) => "Array",
        Node::Index(..) => "Index",
        Node::Summate(..) => "Summate",
        Node::Product(..) => "Product",
        Node::Integrate(..) => "Integrate",
        Node::Bucket(..) => "Bucket",
        Node::RAdd(_) => "RAdd",
        Node::RIndex(..) => "RIndex",
        Node::RSplit(..) => "RSplit",
        Node::RFanout(..) => "RFanout",
        Node::Dirac(_) => "Dirac",
        Node::Weight(..) => "Weight",
        Node::Superpose(_) => "Superpose",
        Node::Bind(..) => "Bind",
        Node::Plate(..) => "Plate",
        Node::Chain(..) => "Chain",
        Node::Observe(..) => "Observe",
        _ => "?",
    }
}
