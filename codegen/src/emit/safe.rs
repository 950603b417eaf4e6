//! The run-time checks a kernel may leave out because they can never fire: a small
//! analysis over a verified loop-IR [`Program`] that proves three kinds of fact, and
//! nothing by guessing. `context.rs` asks it at each read, store and compound addition and emits the
//! unchecked form where it answers yes; the templates spell both forms (the Rust
//! template's unchecked form is `slic_at`/`slic_set`, without Rust's own bounds check
//! either, so a wrong answer here is undefined behaviour in both targets). A check is left
//! out only where the interpreter (`interp.rs`) could not fail either, so kernels and
//! interpreter still agree on every program, errors in kind.
//!
//! 1. **Indices in bounds by construction.** `a[i]` (a read, or a store's index) where `i`
//!    names, directly or through `let`s, the index of an enclosing `for i in lo..hi` over
//!    `nat`, and `hi <= size(a)` follows from the program: `hi` and `a`'s length are the
//!    same symbolic value (`size(a)`; a `let` bound to it; the size an `alloc a` was given
//!    and the loop bound resolving to the same immutable names, literals and primitives),
//!    or an upper bound of `hi` is at most a lower bound of the length (literals, and the
//!    values and lengths a specialised kernel bakes in, which the driver checks on every
//!    call). Then `0 <= lo <= i < hi <= size(a)`. Likewise a `nat` name `x` inside the
//!    then-branch of a test with a conjunct `x < e`, `e <= size(a)` as above, when the
//!    branch never assigns `x` (the histogram's `if (k < size(h)) { h[k] += .. }`, which
//!    skips indices out of range): there `0 <= x < e <= size(a)`. Names are resolved by
//!    the scopes the verifier and interpreter use (an inner scope may shadow), each
//!    declaration its own binding; immutable bindings (parameters, `let`s, loop indices,
//!    draws) keep their value for the life of the scope that declares them, and a loop's
//!    bound, a test and an allocation's size are evaluated once, so equal symbolic values
//!    evaluated where both are in scope are equal numbers. Mutable accumulators never
//!    take part in symbolic values.
//! 2. **Additions that cannot overflow.** `x += e` on a `nat` or `int` accumulator, or
//!    `h[k] += e` on an allocated (zero-filled) `nat` or `int` array, where every write of
//!    `x` (of any element of `h`) is `=` or `+=` of a value bounded by a constant: a
//!    literal, a `let` of one, a mutable scalar whose own bound is proven this way (the IR
//!    writes `var v: nat; if b { v = 1 } else { v = 0 }; sum += v`), an element of such an
//!    array, a loop index (below its bound's upper bound), a specialised value. From the
//!    declaration on, `|x| <= base + Σ_s c_s · n_s`, where `base` bounds the initial value
//!    and every `=`, `c_s` bounds the value added at site `s`, and `n_s` the times `s` can
//!    run in one life of `x`: the product of the trip counts of the loops around `s` inside
//!    `x`'s scope (a loop's trip count is at most `hi - lo`: an upper bound of `hi`, which
//!    is at most `2^64 - 1` for any `nat`, `2^63 - 1` for the length of an array, since
//!    Rust slices and vectors and C objects (glibc refuses larger) hold at most
//!    `isize::MAX` bytes; an `int` loop runs at most `2^64 - 1` times). Computed in `u128`,
//!    saturating; when the bound is at most `u64::MAX` (`nat`) or `i64::MAX` (`int`, by
//!    magnitude), every partial sum fits and no addition to `x` can overflow. One loop
//!    adding 0 or 1 once per iteration to a counter declared outside it is the common case
//!    (`2^64 - 1` at most); two such adds per iteration, or nested loops, are proven only
//!    when the trip counts are array lengths or baked-in values.
//!
//! 3. **Counts that fit 32 bits.** An allocated `nat` array whose every element is
//!    bounded as in point 2 by at most `u32::MAX`, known to hold at least
//!    [`NARROW_MIN_LEN`] elements, and only read and stored element by element (never a
//!    result or a draw's weights) may be stored as 32-bit elements: a specialised
//!    kernel's histogram of counts over fewer than 2^32 data, half the memory of its
//!    scatter.
//!
//! 4. **Rows of a table.** `a[b + v]` inside the then-branch of a test `(k + 1) * w <=
//!    size(a)` (or of a `let` bound to it), where `b` is the value `k * w` and `v` the
//!    index of a `nat` loop whose bound is at most `w` (the same symbolic value, or an upper
//!    bound below a lower bound of `w`): the test evaluated `(k + 1) * w` without
//!    overflowing, so `b + v < k * w + w <= size(a)`: the read is in bounds and the
//!    addition cannot overflow (it is emitted unchecked too). `crate::forward` reads an
//!    incremental update's statistics' rows so.
//!
//! It writes no target text and never changes the program; a program it cannot read
//! (names out of scope: never after `verify`) only loses proofs.

use super::nodes::FixedVal;
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};
use slic_algebra::{Coercion, Prim, Type};
use std::collections::{HashMap, HashSet};

/// The most elements any array can have: `isize::MAX` (objects of 1-byte elements).
const MAX_LEN: u128 = i64::MAX as u128;
/// The largest `nat`.
const NAT_MAX: u128 = u64::MAX as u128;
/// The largest `int` magnitude kept (`i64::MIN` is left out).
const INT_MAX: u128 = i64::MAX as u128;

/// The fewest elements a `nat` array must be known to have to be stored as 32-bit
/// elements: a smaller one (512 bytes at 64 bits, in the first-level cache either way)
/// gains nothing, and on the GMM's 50 class counts the C kernel's sweep measured slower
/// narrowed (135 -> 151 ms) where the Rust one measured faster: code layout, not memory.
pub(crate) const NARROW_MIN_LEN: u128 = 4096;

/// A declaration, by its place in the walk.
type Bid = usize;

/// The checks [`analyse`] proved unnecessary, by the address of the IR node in the
/// program it was given (never dereferenced: identity only).
#[derive(Debug, Default)]
pub(crate) struct Safe {
    /// `Expr::Index` reads whose index is in bounds.
    reads: HashSet<*const Expr>,
    /// `Expr::Prim(Add)` indices (of reads in `reads`) whose addition cannot overflow: a
    /// row of a table read at its base plus a column (point 4).
    index_adds: HashSet<*const Expr>,
    /// `Stmt::Store`s whose index is in bounds.
    stores: HashSet<*const Stmt>,
    /// `Stmt::Assign` / `Stmt::Store` with `+=` whose addition cannot overflow.
    adds: HashSet<*const Stmt>,
    /// `Stmt::Alloc`s of `nat` arrays known to be large whose elements never exceed
    /// `u32::MAX`, read and stored element by element and never used whole.
    narrow: HashSet<*const Stmt>,
}

impl Safe {
    /// Is the read `e` (an `Expr::Index` of the analysed program) in bounds?
    pub(crate) fn read(&self, e: &Expr) -> bool {
        self.reads.contains(&(e as *const Expr))
    }

    /// Is `e`, the index of a read in bounds, an addition that cannot overflow?
    pub(crate) fn index_add(&self, e: &Expr) -> bool {
        self.index_adds.contains(&(e as *const Expr))
    }

    /// Is the index of the store `s` in bounds?
    pub(crate) fn store(&self, s: &Stmt) -> bool {
        self.stores.contains(&(s as *const Stmt))
    }

    /// Can the `+=` of `s` never overflow?
    pub(crate) fn add(&self, s: &Stmt) -> bool {
        self.adds.contains(&(s as *const Stmt))
    }

    /// May the `nat` array `s` allocates be stored as 32-bit elements? Its every element
    /// is at most `u32::MAX` over its whole life (the bound of point 2, so a specialised
    /// kernel's histogram of counts over fewer than 2^32 data), and it is only read and
    /// stored element by element, never used whole (a result, a draw's weights): half the
    /// memory, and half the cache misses of a histogram's scatter.
    pub(crate) fn narrow(&self, s: &Stmt) -> bool {
        self.narrow.contains(&(s as *const Stmt))
    }
}

/// A value in terms of immutable bindings: what a loop bound or an allocation's size is,
/// compared structurally (pure expressions of equal parts are equal).
#[derive(Clone, Debug, PartialEq)]
enum Sym {
    Lit(Lit),
    /// An immutable binding's value (parameter, unresolved `let`, loop index, draw).
    Name(Bid),
    /// The length of a parameter array, or of an allocation of an unresolved size.
    Size(Bid),
    Prim(Prim, Vec<Sym>),
    Conv(Coercion, Box<Sym>),
}

/// A bound on a value's magnitude, settled once every write is known.
#[derive(Clone, Debug)]
enum Bound {
    Known(u128),
    /// At most the bound of a mutable binding (scalar, or any element of an array).
    Of(Bid),
    Unknown,
}

#[derive(Clone, Debug)]
enum Kind {
    Param(Option<FixedVal>),
    Let {
        sym: Option<Sym>,
        bound: Bound,
    },
    Loop {
        /// over `nat` (the index is then at least 0)
        nat: bool,
        hi: Option<Sym>,
        /// an upper bound of `hi`, a lower bound of `lo`
        hi_ub: u128,
        lo_lb: u128,
    },
    /// A mutable scalar.
    Var,
    /// An allocated array and the value of its size.
    Alloc(Option<Sym>),
    Draw,
}

/// One write of a mutable binding.
#[derive(Debug)]
struct Write {
    stmt: *const Stmt,
    op: AssignOp,
    value: Bound,
    /// the times it can run in one life of the binding
    runs: u128,
}

#[derive(Debug)]
struct Binding {
    kind: Kind,
    /// the scalar's type, or an array's
    ty: Type,
    /// loops around the declaration
    depth: usize,
    /// the initial value (mutable bindings: 0 when unwritten or allocated)
    init: Bound,
    writes: Vec<Write>,
    /// the `Stmt::Alloc` that declares an allocated array
    alloc: Option<*const Stmt>,
    /// an array used whole (a result, a draw's weights), not only by its elements
    whole: bool,
}

struct Walk {
    binds: Vec<Binding>,
    scopes: Vec<Vec<(String, Bid)>>,
    /// the loops around the statement being walked, outermost first
    loops: Vec<Bid>,
    /// `x < e` known to hold here: the tests of the enclosing `if`s' then-branches that
    /// do not assign `x`, with `e`'s value
    guards: Vec<(Bid, Sym)>,
    /// `e <= size(a)` known to hold here (the tests of the enclosing then-branches), with
    /// `e`'s value and `a`
    rows: Vec<(Sym, Bid)>,
    safe: Safe,
}

/// What can be left out of `p`'s kernel, with the parameters `fixed` baked in (`fixed[k]`
/// for parameter `k`; the driver refuses other arguments).
pub(crate) fn analyse(p: &Program, fixed: &[Option<FixedVal>]) -> Safe {
    let mut w = Walk {
        binds: Vec::new(),
        scopes: vec![Vec::new()],
        loops: Vec::new(),
        guards: Vec::new(),
        rows: Vec::new(),
        safe: Safe::default(),
    };
    for (pos, (name, ty)) in p.params.iter().enumerate() {
        let f = fixed.get(pos).cloned().flatten();
        w.declare(name, Kind::Param(f), ty.clone(), Bound::Unknown);
    }
    w.scopes.push(Vec::new());
    w.block(&p.body);
    w.visit(&p.result);
    w.settle();
    w.safe
}

impl Walk {
    fn declare(&mut self, name: &str, kind: Kind, ty: Type, init: Bound) -> Bid {
        let id = self.binds.len();
        self.binds.push(Binding {
            kind,
            ty,
            depth: self.loops.len(),
            init,
            writes: Vec::new(),
            alloc: None,
            whole: false,
        });
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.to_string(), id));
        }
        id
    }

    /// The binding `name` means here: the latest declaration of the innermost scope that
    /// has one, as the verifier, the interpreter and the emitter resolve it.
    fn lookup(&self, name: &str) -> Option<Bid> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, b)| *b)
    }

    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn scoped(&mut self, body: &[Stmt]) {
        self.scopes.push(Vec::new());
        self.block(body);
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { name, ty, value } => {
                self.visit(value);
                let kind = Kind::Let {
                    sym: self.resolve(value),
                    bound: self.bound(value),
                };
                self.declare(name, kind, ty.clone(), Bound::Unknown);
            }
            Stmt::Var { name, ty, init } => {
                let init = match init {
                    Some(e) => {
                        self.visit(e);
                        self.bound(e)
                    }
                    // unwritten: read only after a write (the verifier's definite assignment)
                    None => Bound::Known(0),
                };
                self.declare(name, Kind::Var, ty.clone(), init);
            }
            Stmt::Assign { name, op, value } => {
                self.visit(value);
                let value = self.bound(value);
                if let Some(b) = self.lookup(name) {
                    self.write(b, s, *op, value);
                }
            }
            Stmt::Alloc { name, elem, size } => {
                self.visit(size);
                let len = self.resolve(size);
                // zero-filled
                let init = Bound::Known(0);
                let b = self.declare(name, Kind::Alloc(len), Type::array(elem.clone()), init);
                self.binds[b].alloc = Some(s as *const Stmt);
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                self.visit(index);
                self.visit(value);
                let value = self.bound(value);
                if let Some(a) = self.lookup(array) {
                    if self.in_bounds(a, index) {
                        self.safe.stores.insert(s as *const Stmt);
                    }
                    self.write(a, s, *op, value);
                }
            }
            Stmt::For { var, lo, hi, body } => {
                self.visit(lo);
                self.visit(hi);
                let nat = self.ty_of(lo) == Some(Type::Nat);
                let hi_sym = self.resolve(hi);
                let lo_sym = self.resolve(lo);
                let (hi_ub, lo_lb) = if nat {
                    (
                        hi_sym.as_ref().map_or(NAT_MAX, |h| self.ub(h)),
                        lo_sym.as_ref().map_or(0, |l| self.lb(l)),
                    )
                } else {
                    (NAT_MAX, 0)
                };
                let kind = Kind::Loop {
                    nat,
                    hi: hi_sym,
                    hi_ub,
                    lo_lb,
                };
                let ty = if nat { Type::Nat } else { Type::Int };
                self.scopes.push(Vec::new());
                let b = self.declare(var, kind, ty, Bound::Unknown);
                self.loops.push(b);
                self.block(body);
                self.loops.pop();
                self.scopes.pop();
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.visit(cond);
                let outer = (self.guards.len(), self.rows.len());
                self.guard(cond, then);
                self.scoped(then);
                self.guards.truncate(outer.0);
                self.rows.truncate(outer.1);
                self.scoped(otherwise);
            }
            Stmt::Draw { name, ty, args, .. } => {
                for a in args {
                    self.visit(a);
                }
                self.declare(name, Kind::Draw, ty.clone(), Bound::Unknown);
            }
            Stmt::Factor(w) => self.visit(w),
            Stmt::Observe { args, value, .. } => {
                for a in args {
                    self.visit(a);
                }
                self.visit(value);
            }
            Stmt::Reject => {}
        }
    }

    /// Records a write of the mutable binding `b` at `s`, with the times it can run in one
    /// life of `b`: the trip counts of the loops around `s` declared inside `b`'s scope.
    fn write(&mut self, b: Bid, s: &Stmt, op: AssignOp, value: Bound) {
        let depth = self.binds[b].depth;
        let runs = self.loops[depth.min(self.loops.len())..]
            .iter()
            .fold(1u128, |n, &l| n.saturating_mul(self.trips(l)));
        self.binds[b].writes.push(Write {
            stmt: s as *const Stmt,
            op,
            value,
            runs,
        });
    }

    /// An upper bound of the times the loop `l` runs its body each time it starts.
    fn trips(&self, l: Bid) -> u128 {
        match &self.binds[l].kind {
            Kind::Loop {
                nat: true,
                hi_ub,
                lo_lb,
                ..
            } => hi_ub.saturating_sub(*lo_lb),
            // `hi - lo` over i64, or an unknown loop: at most 2^64 - 1
            _ => NAT_MAX,
        }
    }

    /// Every element read inside `e`, proven or not.
    fn visit(&mut self, e: &Expr) {
        match e {
            Expr::Index(a, i) => {
                self.visit(i);
                match a.as_ref() {
                    Expr::Var(x) => {
                        if let Some(b) = self.lookup(x) {
                            if self.in_bounds(b, i) {
                                self.safe.reads.insert(e as *const Expr);
                            } else if self.in_row(b, i) {
                                self.safe.reads.insert(e as *const Expr);
                                self.safe.index_adds.insert(i.as_ref() as *const Expr);
                            }
                        }
                    }
                    other => self.visit(other),
                }
            }
            // the length alone: not a use of the elements
            Expr::Prim(Prim::Size, args) if matches!(args.as_slice(), [Expr::Var(_)]) => {}
            Expr::Prim(_, args) => {
                for a in args {
                    self.visit(a);
                }
            }
            Expr::Convert(_, x) => self.visit(x),
            Expr::Pair(a, b) => {
                self.visit(a);
                self.visit(b);
            }
            // an array named whole (a result, a draw's weights)
            Expr::Var(x) => {
                if let Some(b) = self.lookup(x) {
                    if self.binds[b].ty.array_of().is_some() {
                        self.binds[b].whole = true;
                    }
                }
            }
            Expr::Lit(_) => {}
        }
    }

    /// The facts `x < e` the test `cond` gives inside `then` (each conjunct `x < e` of a
    /// `nat` name `x` that `then` never assigns, with `e` resolved): the histogram's
    /// `if (k < size(h)) { h[k] += .. }`, which skips the indices out of range.
    fn guard(&mut self, cond: &Expr, then: &[Stmt]) {
        match cond {
            Expr::Prim(Prim::And, args) => {
                for a in args {
                    self.guard(a, then);
                }
            }
            // `e <= size(a)`, or a name bound to that test (`row_fact` keeps only those)
            Expr::Prim(Prim::Le, _) | Expr::Var(_) => {
                if let Some(Sym::Prim(Prim::Le, parts)) = self.resolve(cond) {
                    self.row_fact(parts);
                }
            }
            Expr::Prim(Prim::Lt, args) => {
                let [Expr::Var(x), e] = args.as_slice() else {
                    return;
                };
                let Some(b) = self.lookup(x) else {
                    return;
                };
                if self.binds[b].ty != Type::Nat || assigns(then, x) {
                    return;
                }
                if let Some(e) = self.resolve(e) {
                    self.guards.push((b, e));
                }
            }
            _ => {}
        }
    }

    /// Records `e <= size(a)` from the parts of a resolved test.
    fn row_fact(&mut self, parts: Vec<Sym>) {
        if let [e, Sym::Size(a)] = parts.as_slice() {
            self.rows.push((e.clone(), *a));
        }
    }

    /// Is `index`, here, `b + v` inside row `k` of a row-major table `a` of `w` columns:
    /// `b` the value `k * w`, `v` a `nat` loop's index whose bound is at most `w`, under a
    /// test `(k + 1) * w <= size(a)` (point 4)? Then `b + v < (k + 1) * w <= size(a)`, and
    /// the addition cannot overflow either.
    fn in_row(&self, a: Bid, index: &Expr) -> bool {
        let Expr::Prim(Prim::Add, args) = index else {
            return false;
        };
        let [b, Expr::Var(v)] = args.as_slice() else {
            return false;
        };
        let (Some(Sym::Prim(Prim::Mul, kw)), Some(l)) = (self.resolve(b), self.lookup(v)) else {
            return false;
        };
        let [k, w] = kw.as_slice() else {
            return false;
        };
        let Kind::Loop {
            nat: true,
            hi: Some(hi),
            hi_ub,
            ..
        } = &self.binds[l].kind
        else {
            return false;
        };
        if !(hi == w || *hi_ub <= self.lb(w)) {
            return false;
        }
        let one = Sym::Lit(Lit::Nat(1));
        let end = Sym::Prim(
            Prim::Mul,
            vec![Sym::Prim(Prim::Add, vec![k.clone(), one]), w.clone()],
        );
        self.rows.iter().any(|(e, t)| *t == a && *e == end)
    }

    /// Is `index`, here, below the length of `a`: a `nat` loop's index whose bound is at
    /// most that length, or a `nat` name an enclosing test keeps below it?
    fn in_bounds(&self, a: Bid, index: &Expr) -> bool {
        let len = self.len_of(a);
        let within = |hi: &Sym, hi_ub: u128| *hi == len || hi_ub <= self.lb(&len);
        if let Expr::Var(x) = index {
            let b = self.lookup(x);
            if self
                .guards
                .iter()
                .any(|(g, e)| Some(*g) == b && within(e, self.ub(e)))
            {
                return true;
            }
        }
        let Some(Sym::Name(l)) = self.resolve(index) else {
            return false;
        };
        match &self.binds[l].kind {
            Kind::Loop {
                nat: true,
                hi: Some(hi),
                hi_ub,
                ..
            } => within(hi, *hi_ub),
            _ => false,
        }
    }

    /// The symbolic length of the array `a`: an allocation's size, or `size(a)`.
    fn len_of(&self, a: Bid) -> Sym {
        match &self.binds[a].kind {
            Kind::Alloc(Some(n)) => n.clone(),
            _ => Sym::Size(a),
        }
    }

    /// `e`'s value in terms of immutable bindings, or `None` where it reads anything that
    /// can change (a mutable accumulator, an array element).
    fn resolve(&self, e: &Expr) -> Option<Sym> {
        match e {
            Expr::Lit(l) => Some(Sym::Lit(*l)),
            Expr::Var(x) => {
                let b = self.lookup(x)?;
                match &self.binds[b].kind {
                    Kind::Let { sym: Some(s), .. } => Some(s.clone()),
                    Kind::Let { sym: None, .. }
                    | Kind::Param(_)
                    | Kind::Loop { .. }
                    | Kind::Draw => Some(Sym::Name(b)),
                    Kind::Var | Kind::Alloc(_) => None,
                }
            }
            Expr::Prim(Prim::Size, args) => match args.as_slice() {
                [Expr::Var(a)] => Some(self.len_of(self.lookup(a)?)),
                _ => None,
            },
            Expr::Prim(p, args) => {
                let args: Option<Vec<Sym>> = args.iter().map(|a| self.resolve(a)).collect();
                Some(Sym::Prim(*p, args?))
            }
            Expr::Convert(c, x) => Some(Sym::Conv(*c, Box::new(self.resolve(x)?))),
            Expr::Index(..) | Expr::Pair(..) => None,
        }
    }

    /// An upper bound of a `nat` value.
    fn ub(&self, s: &Sym) -> u128 {
        let v = match s {
            Sym::Lit(Lit::Nat(n)) => u128::from(*n),
            Sym::Name(b) => match &self.binds[*b].kind {
                Kind::Param(Some(FixedVal::Nat(n))) => u128::from(*n),
                // below the loop's bound (a loop that never runs binds nothing)
                Kind::Loop {
                    nat: true, hi_ub, ..
                } => hi_ub.saturating_sub(1),
                _ => NAT_MAX,
            },
            Sym::Size(b) => match &self.binds[*b].kind {
                Kind::Param(Some(FixedVal::Len(n))) => u128::from(*n),
                _ => MAX_LEN,
            },
            Sym::Prim(Prim::Add, args) => args
                .iter()
                .fold(0u128, |acc, a| acc.saturating_add(self.ub(a))),
            Sym::Prim(Prim::Mul, args) => args
                .iter()
                .fold(1u128, |acc, a| acc.saturating_mul(self.ub(a))),
            Sym::Prim(Prim::Min, args) => args.iter().map(|a| self.ub(a)).min().unwrap_or(NAT_MAX),
            Sym::Prim(Prim::Max, args) => args.iter().map(|a| self.ub(a)).max().unwrap_or(NAT_MAX),
            _ => NAT_MAX,
        };
        v.min(NAT_MAX)
    }

    /// A lower bound of a `nat` value.
    fn lb(&self, s: &Sym) -> u128 {
        let v = match s {
            Sym::Lit(Lit::Nat(n)) => u128::from(*n),
            Sym::Name(b) => match &self.binds[*b].kind {
                Kind::Param(Some(FixedVal::Nat(n))) => u128::from(*n),
                Kind::Loop {
                    nat: true, lo_lb, ..
                } => *lo_lb,
                _ => 0,
            },
            Sym::Size(b) => match &self.binds[*b].kind {
                Kind::Param(Some(FixedVal::Len(n))) => u128::from(*n),
                _ => 0,
            },
            Sym::Prim(Prim::Add, args) => args
                .iter()
                .fold(0u128, |acc, a| acc.saturating_add(self.lb(a))),
            Sym::Prim(Prim::Mul, args) => args
                .iter()
                .fold(1u128, |acc, a| acc.saturating_mul(self.lb(a))),
            Sym::Prim(Prim::Min, args) => args.iter().map(|a| self.lb(a)).min().unwrap_or(0),
            Sym::Prim(Prim::Max, args) => args.iter().map(|a| self.lb(a)).max().unwrap_or(0),
            // where `int2nat(e)` has a value, it is `e` and not negative
            Sym::Conv(Coercion::Int2Nat, x) => self
                .lb_int(x)
                .map_or(0, |v| u128::try_from(v.max(0)).unwrap_or(0)),
            _ => 0,
        };
        v.min(NAT_MAX)
    }

    /// A lower bound of an `int` value, `None` when unknown: literals, naturals converted
    /// (`nat2int(size(a)) + -1`, the last index of a Dirichlet's classes) and their sums.
    fn lb_int(&self, s: &Sym) -> Option<i128> {
        match s {
            Sym::Lit(Lit::Int(n)) => Some(i128::from(*n)),
            Sym::Conv(Coercion::Nat2Int, x) => i128::try_from(self.lb(x)).ok(),
            Sym::Prim(Prim::Add, args) => args
                .iter()
                .try_fold(0i128, |acc, a| acc.checked_add(self.lb_int(a)?)),
            _ => None,
        }
    }

    /// A bound on the magnitude of the `nat` or `int` value `e`, here.
    fn bound(&self, e: &Expr) -> Bound {
        match e {
            Expr::Lit(Lit::Nat(n)) => Bound::Known(u128::from(*n)),
            Expr::Lit(Lit::Int(n)) => Bound::Known(u128::from(n.unsigned_abs())),
            Expr::Var(x) => {
                let Some(b) = self.lookup(x) else {
                    return Bound::Unknown;
                };
                match &self.binds[b].kind {
                    Kind::Let { bound, .. } => bound.clone(),
                    Kind::Var => Bound::Of(b),
                    Kind::Loop { nat: true, .. } => Bound::Known(self.ub(&Sym::Name(b))),
                    Kind::Param(Some(FixedVal::Nat(n))) => Bound::Known(u128::from(*n)),
                    Kind::Param(Some(FixedVal::Int(n))) => {
                        Bound::Known(u128::from(n.unsigned_abs()))
                    }
                    _ => Bound::Unknown,
                }
            }
            Expr::Index(a, _) => match a.as_ref() {
                Expr::Var(x) => match self.lookup(x) {
                    Some(b) if matches!(self.binds[b].kind, Kind::Alloc(_)) => Bound::Of(b),
                    _ => Bound::Unknown,
                },
                _ => Bound::Unknown,
            },
            // the same magnitude (int2nat fails on a negative value)
            Expr::Convert(Coercion::Nat2Int | Coercion::Int2Nat, x) => self.bound(x),
            _ => Bound::Unknown,
        }
    }

    /// `e`'s type where it is evident (literals, names, sizes, conversions, the
    /// arithmetic that keeps its arguments' type); `None` otherwise.
    fn ty_of(&self, e: &Expr) -> Option<Type> {
        match e {
            Expr::Lit(l) => Some(l.ty()),
            Expr::Var(x) => Some(self.binds[self.lookup(x)?].ty.clone()),
            Expr::Prim(Prim::Size, _) => Some(Type::Nat),
            Expr::Prim(Prim::Add | Prim::Mul | Prim::Min | Prim::Max, args) => {
                self.ty_of(args.first()?)
            }
            Expr::Convert(c, _) => Some(c.to_type()),
            _ => None,
        }
    }

    /// Every mutable `nat` or `int` binding whose writes are bounded: its `+=`s are safe.
    fn settle(&mut self) {
        let mut memo: HashMap<Bid, Option<u128>> = HashMap::new();
        let mut adds = Vec::new();
        for b in 0..self.binds.len() {
            if !matches!(self.binds[b].kind, Kind::Var | Kind::Alloc(_)) {
                continue;
            }
            let bound = self.settled(b, &mut memo, &mut HashSet::new());
            let bind = &self.binds[b];
            if let (Some(total), Some(alloc), Kind::Alloc(len)) = (bound, bind.alloc, &bind.kind) {
                let big = len.as_ref().is_some_and(|n| self.lb(n) >= NARROW_MIN_LEN);
                if total <= u128::from(u32::MAX)
                    && big
                    && !bind.whole
                    && bind.ty.array_of() == Some(&Type::Nat)
                {
                    self.safe.narrow.insert(alloc);
                }
            }
            if bound.is_some() {
                adds.extend(
                    self.binds[b]
                        .writes
                        .iter()
                        .filter(|w| w.op == AssignOp::Add)
                        .map(|w| w.stmt),
                );
            }
        }
        self.safe.adds.extend(adds);
    }

    /// The bound of the mutable binding `b` over its whole life, if it fits its type:
    /// `base + Σ c_s · runs_s` (see the module's paragraph). `visiting` breaks cycles
    /// (`x += y; y += x`), which prove nothing.
    fn settled(
        &self,
        b: Bid,
        memo: &mut HashMap<Bid, Option<u128>>,
        visiting: &mut HashSet<Bid>,
    ) -> Option<u128> {
        if let Some(r) = memo.get(&b) {
            return *r;
        }
        if !visiting.insert(b) {
            return None;
        }
        let bind = &self.binds[b];
        let limit = match bind.ty.array_of().unwrap_or(&bind.ty) {
            Type::Nat => Some(NAT_MAX),
            Type::Int => Some(INT_MAX),
            _ => None,
        };
        let r = limit.and_then(|limit| {
            let mut base = self.known(&bind.init, memo, visiting)?;
            let mut added = 0u128;
            for w in &bind.writes {
                let c = self.known(&w.value, memo, visiting)?;
                match w.op {
                    AssignOp::Set => base = base.max(c),
                    AssignOp::Add => added = added.saturating_add(c.saturating_mul(w.runs)),
                    AssignOp::Mul | AssignOp::Max => return None,
                }
            }
            let total = base.saturating_add(added);
            (total <= limit).then_some(total)
        });
        visiting.remove(&b);
        memo.insert(b, r);
        r
    }

    fn known(
        &self,
        v: &Bound,
        memo: &mut HashMap<Bid, Option<u128>>,
        visiting: &mut HashSet<Bid>,
    ) -> Option<u128> {
        match v {
            Bound::Known(c) => Some(*c),
            Bound::Of(b) => self.settled(*b, memo, visiting),
            Bound::Unknown => None,
        }
    }
}

/// Does `body` assign the accumulator `x` anywhere (or a name `x` that shadows it: kept
/// conservative)?
fn assigns(body: &[Stmt], x: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::Assign { name, .. } => name == x,
        Stmt::For { body, .. } => assigns(body, x),
        Stmt::If {
            then, otherwise, ..
        } => assigns(then, x) || assigns(otherwise, x),
        _ => false,
    })
}
