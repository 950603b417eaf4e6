//! Before integration: definitions inlined and applications reduced, and the structural
//! reductions that substitution makes possible.
//!
//! [`Prepare`] inlines standard-library calls (their definitions, see
//! `slic_algebra::stdlib`), `def`s and other lets whose value is a function or a measure,
//! beta-reduces `(fn x: e)(a)` (renaming the copy's binders, so a definition used twice
//! binds fresh variables each time), and drops `simplify(...)` wrappers (the whole term is
//! being simplified). Lets of plain values inside measure chains stay: `integrate`
//! substitutes them as it walks.
//!
//! [`reduce`] applies the reductions of constructors met by their eliminators:
//! `[a, b][1]` is `b`, `size([a, b])` is `2`, `array i of 2: e` is a literal array, `if true: a else: b` is `a`, a `match` on a
//! constructor picks its arm, and a `summate`/`product` over a short literal range whose
//! body indexes a literal array is unrolled (`summate i from 0 to 2: [x, y][i]` is
//! `x + y`). These are the steps after which `canon` can see the arithmetic.
//!
//! Both keep the meaning of every well-typed program; an out-of-range index into a
//! literal array is left as it is.

use rustc_hash::FxHashMap;

use slic_algebra::canon::{self, gamma_value};
use slic_algebra::num::Rational;
use slic_algebra::vars;
use slic_algebra::{Node, Pattern, Prim, Store, TermId, Transform, Type, VarId};

use crate::terms;

/// The most nodes [`Prepare`] visits before giving up (inlining can grow a term
/// exponentially: a definition applied to itself twice, and so on).
pub(crate) const PREPARE_BUDGET: usize = 2_000_000;

/// The longest literal range a `summate`/`product` or an `array` is unrolled over.
const UNROLL_MAX: i64 = 16;

/// Inlining exceeded [`PREPARE_BUDGET`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TooBig;

/// Inlining and beta-reduction over a whole term (see the module doc).
pub(crate) struct Prepare<'s> {
    store: &'s mut Store,
    memo: FxHashMap<TermId, TermId>,
    budget: usize,
}

impl<'s> Prepare<'s> {
    pub(crate) fn new(store: &'s mut Store) -> Prepare<'s> {
        Prepare {
            store,
            memo: FxHashMap::default(),
            budget: PREPARE_BUDGET,
        }
    }

    pub(crate) fn run(&mut self, t: TermId) -> Result<TermId, TooBig> {
        self.prep(t)
    }

    fn prep(&mut self, t: TermId) -> Result<TermId, TooBig> {
        if let Node::Var(v) = *self.store.node(t) {
            if let Some(def) = self.store.library_def(v) {
                // a standard-library call: its definition inlined, a fresh copy at each
                // use (not memoised) so that no two places bind the same variables
                self.budget = self.budget.checked_sub(1).ok_or(TooBig)?;
                let copy = vars::freshen(self.store, def);
                return self.prep(copy);
            }
        }
        if let Some(&r) = self.memo.get(&t) {
            return Ok(r);
        }
        self.budget = self.budget.checked_sub(1).ok_or(TooBig)?;
        let r = slic_algebra::stack::grow(|| self.prep_here(t))?;
        self.memo.insert(t, r);
        Ok(r)
    }

    fn prep_here(&mut self, t: TermId) -> Result<TermId, TooBig> {
        let node = self.store.node(t).clone();
        match node {
            Node::Let(x, e, body) => {
                let e = self.prep(e)?;
                let inline = matches!(self.store.ty(e), Type::Fun(..) | Type::Measure(_))
                    || self.store.ty(body).measure_of().is_none();
                if inline {
                    let body = self.subst_copies(body, x, e)?;
                    self.prep(body)
                } else {
                    let body = self.prep(body)?;
                    let ty = self.store.ty(t).clone();
                    Ok(self.store.intern(Node::Let(x, e, body), ty))
                }
            }
            Node::App(f, a) => {
                let f = self.prep(f)?;
                let a = self.prep(a)?;
                if matches!(self.store.node(f), Node::Lam(..)) {
                    let copy = vars::freshen(self.store, f);
                    if let Node::Lam(x, body) = *self.store.node(copy) {
                        let body = self.subst_copies(body, x, a)?;
                        return self.prep(body);
                    }
                }
                let ty = self.store.ty(t).clone();
                Ok(self.store.intern(Node::App(f, a), ty))
            }
            Node::Transform(Transform::Simplify, e) => self.prep(e),
            _ => {
                let ch = node.children();
                let mut new = Vec::with_capacity(ch.len());
                for &c in &ch {
                    new.push(self.prep(c)?);
                }
                if new == ch {
                    return Ok(t);
                }
                let ty = self.store.ty(t).clone();
                Ok(self.store.intern(node.with_children(&new), ty))
            }
        }
    }

    /// `t` with `x` replaced by `value`, each occurrence getting its own copy of
    /// `value`'s binders.
    fn subst_copies(&mut self, t: TermId, x: VarId, value: TermId) -> Result<TermId, TooBig> {
        if !vars::has_binders(self.store, value) {
            return Ok(vars::substitute1(self.store, t, x, value));
        }
        let mut memo = FxHashMap::default();
        self.copies_in(t, x, value, &mut memo)
    }

    fn copies_in(
        &mut self,
        t: TermId,
        x: VarId,
        value: TermId,
        memo: &mut FxHashMap<TermId, TermId>,
    ) -> Result<TermId, TooBig> {
        slic_algebra::stack::grow(|| {
            if let Some(&r) = memo.get(&t) {
                return Ok(r);
            }
            self.budget = self.budget.checked_sub(1).ok_or(TooBig)?;
            let node = self.store.node(t).clone();
            if let Node::Var(v) = node {
                // no memo: every occurrence gets its own copy
                return Ok(if v == x {
                    vars::freshen(self.store, value)
                } else {
                    t
                });
            }
            let ch = node.children();
            let mut new = Vec::with_capacity(ch.len());
            for &c in &ch {
                new.push(self.copies_in(c, x, value, memo)?);
            }
            let r = if new == ch {
                t
            } else {
                let ty = self.store.ty(t).clone();
                self.store.intern(node.with_children(&new), ty)
            };
            memo.insert(t, r);
            Ok(r)
        })
    }
}

/// The structural reductions of the module doc, everywhere in `t`.
pub(crate) fn reduce(store: &mut Store, t: TermId) -> TermId {
    let mut memo = FxHashMap::default();
    reduce_in(store, t, &mut memo)
}

fn reduce_in(store: &mut Store, t: TermId, memo: &mut FxHashMap<TermId, TermId>) -> TermId {
    slic_algebra::stack::grow(|| {
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let node = store.node(t).clone();
        let ch = node.children();
        let new: Vec<TermId> = ch.iter().map(|&c| reduce_in(store, c, memo)).collect();
        let here = if new == ch {
            t
        } else {
            let ty = store.ty(t).clone();
            store.intern(node.with_children(&new), ty)
        };
        let r = match step(store, here) {
            Some(next) => reduce_in(store, next, memo),
            None => here,
        };
        memo.insert(t, r);
        r
    })
}

/// One reduction at the root of `t` (children already reduced), if one applies.
fn step(store: &mut Store, t: TermId) -> Option<TermId> {
    match store.node(t).clone() {
        Node::Index(a, i) => {
            if let (Node::ArrayLit(_), Some((c, x, y))) =
                (store.node(a), literal_branches(store, i))
            {
                let ty = store.ty(t).clone();
                let l = store.intern(Node::Index(a, x), ty.clone());
                let r = store.intern(Node::Index(a, y), ty.clone());
                return Some(store.intern(Node::If(c, l, r), ty));
            }
            // `(array v of n: e)[i]` is `e[v := i]` (an index out of range is an error
            // in the reference semantics, so the program has no meaning there)
            if let Node::Array(v, _, e) = *store.node(a) {
                return Some(vars::substitute1(store, e, v, i));
            }
            let k = terms::lit_value(store, i)?.to_i64()?;
            match store.node(a).clone() {
                Node::ArrayLit(xs) => usize::try_from(k).ok().and_then(|k| xs.get(k).copied()),
                _ => None,
            }
        }
        // `array i of 2: e` is `[e[i := 0], e[i := 1]]`
        Node::Array(v, n, body) => {
            let n = terms::lit_value(store, n)?.to_i64()?;
            if !(0..=UNROLL_MAX).contains(&n) {
                return None;
            }
            let vty = store.var_type(v).clone();
            let items: Vec<TermId> = (0..n)
                .map(|k| {
                    let kt = terms::int(store, k, &vty);
                    vars::substitute1(store, body, v, kt)
                })
                .collect();
            let ty = store.ty(t).clone();
            Some(store.intern(Node::ArrayLit(items), ty))
        }
        Node::Prim(Prim::Size, xs) => {
            let a = *xs.first()?;
            match store.node(a).clone() {
                Node::ArrayLit(items) => {
                    let n = i64::try_from(items.len()).ok()?;
                    Some(store.int_lit(n, Type::Nat))
                }
                Node::Array(_, n, _) => Some(n),
                _ => None,
            }
        }
        Node::Prim(Prim::GammaFunc, xs) => {
            let a = literal(store, *xs.first()?)?;
            let g = gamma_value(&a)?;
            Some(g.to_term(store))
        }
        Node::Prim(Prim::BetaFunc, xs) => {
            let a = literal(store, *xs.first()?)?;
            let b = literal(store, *xs.get(1)?)?;
            let (ga, gb, gab) = (gamma_value(&a)?, gamma_value(&b)?, gamma_value(&(&a + &b))?);
            let half_pis = ga.half_pis + gb.half_pis;
            let value = ga.value.checked_div(&gab.value)? * gb.value;
            let g = canon::GammaValue {
                value,
                half_pis: half_pis.checked_sub(gab.half_pis)?,
            };
            Some(g.to_term(store))
        }
        Node::If(c, a, b) => match store.node(c) {
            Node::Bool(true) => Some(a),
            Node::Bool(false) => Some(b),
            _ if a == b => Some(a),
            _ => None,
        },
        // a comparison or an index with a piecewise literal operand is decided per branch
        // (`(if c: 0 else: 1) <= 1` is true, `[a, b][if c: 0 else: 1]` is `if c: a else: b`)
        Node::Prim(p @ (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne), xs) if xs.len() == 2 => {
            let (x, y) = (xs[0], xs[1]);
            if let Some((c, a, b)) = literal_branches(store, x) {
                terms::lit_value(store, y)?;
                let l = store.prim(p, vec![a, y], Type::Bool);
                let r = store.prim(p, vec![b, y], Type::Bool);
                return Some(store.intern(Node::If(c, l, r), Type::Bool));
            }
            let (c, a, b) = literal_branches(store, y)?;
            terms::lit_value(store, x)?;
            let l = store.prim(p, vec![x, a], Type::Bool);
            let r = store.prim(p, vec![x, b], Type::Bool);
            Some(store.intern(Node::If(c, l, r), Type::Bool))
        }
        Node::Match(e, arms) => {
            for (p, body) in &arms {
                match match_pattern(store, p, e)? {
                    Some(binds) => {
                        let map: FxHashMap<VarId, TermId> = binds.into_iter().collect();
                        return Some(vars::substitute(store, *body, &map));
                    }
                    None => continue,
                }
            }
            None
        }
        Node::Summate(v, lo, hi, body) | Node::Product(v, lo, hi, body) => {
            let is_sum = matches!(store.node(t), Node::Summate(..));
            let lo = terms::lit_value(store, lo)?.to_i64()?;
            let hi = terms::lit_value(store, hi)?.to_i64()?;
            if hi.checked_sub(lo)? > UNROLL_MAX || !indexes_literal_array(store, body) {
                return None;
            }
            let ty = store.ty(t).clone();
            let vty = store.var_type(v).clone();
            if hi <= lo {
                return Some(terms::int(store, i64::from(!is_sum), &ty));
            }
            let items: Vec<TermId> = (lo..hi)
                .map(|k| {
                    let kt = terms::int(store, k, &vty);
                    vars::substitute1(store, body, v, kt)
                })
                .collect();
            if items.len() == 1 {
                return items.first().copied();
            }
            let p = if is_sum { Prim::Add } else { Prim::Mul };
            Some(store.prim(p, items, ty))
        }
        _ => None,
    }
}

/// The exact value of `t` when it is a closed rational expression (`nat2prob(0) + 2`).
fn literal(store: &Store, t: TermId) -> Option<Rational> {
    if !matches!(store.ty(t), Type::Nat | Type::Int | Type::Prob | Type::Real) {
        return None;
    }
    slic_algebra::eval::eval_exact(store, t)
}

/// `if c: a else: b` with literal branches, as `(c, a, b)`.
fn literal_branches(store: &Store, t: TermId) -> Option<(TermId, TermId, TermId)> {
    match *store.node(t) {
        Node::If(c, a, b)
            if matches!(store.node(a), Node::Lit(_)) && matches!(store.node(b), Node::Lit(_)) =>
        {
            Some((c, a, b))
        }
        _ => None,
    }
}

/// Does `t` index a literal array anywhere?
fn indexes_literal_array(store: &Store, t: TermId) -> bool {
    store.subterms(t).any(|x| {
        matches!(store.node(x), Node::Index(a, _) if matches!(store.node(*a), Node::ArrayLit(_)))
    })
}

/// Does pattern `p` match the term `e`? `Some(Some(bindings))` yes, `Some(None)` no,
/// `None` when that depends on values not known here.
#[allow(clippy::type_complexity)]
pub(crate) fn match_pattern(
    store: &Store,
    p: &Pattern,
    e: TermId,
) -> Option<Option<Vec<(VarId, TermId)>>> {
    let node = store.node(e);
    Some(match (p, node) {
        (Pattern::Wild, _) => Some(Vec::new()),
        (Pattern::Var(v), _) => Some(vec![(*v, e)]),
        (Pattern::Unit, _) => Some(Vec::new()),
        (Pattern::Bool(b), Node::Bool(c)) => (b == c).then(Vec::new),
        (Pattern::Pair(p1, p2), Node::Pair(a, b)) => {
            let (a, b) = (*a, *b);
            match (match_pattern(store, p1, a)?, match_pattern(store, p2, b)?) {
                (Some(mut x), Some(y)) => {
                    x.extend(y);
                    Some(x)
                }
                _ => None,
            }
        }
        (Pattern::Left(q), Node::Left(a)) | (Pattern::Right(q), Node::Right(a)) => {
            match_pattern(store, q, *a)?
        }
        (Pattern::Just(q), Node::Just(a)) => match_pattern(store, q, *a)?,
        (Pattern::Nothing, Node::Nothing) => Some(Vec::new()),
        (Pattern::Left(_), Node::Right(_))
        | (Pattern::Right(_), Node::Left(_))
        | (Pattern::Just(_), Node::Nothing)
        | (Pattern::Nothing, Node::Just(_)) => None,
        _ => return None,
    })
}
