//! Loops that compute one body share a table (issue 12): the first term pass, before
//! the point split.
//!
//! A simplified Gibbs update is `weight(Σ_l A(l) · c, categorical(array i of n: A(i) ·
//! d))`: its mass sums the very weights its categorical draws from, so a kernel would
//! compute every proposal's weight twice (and, for a topic model, the whole per-class
//! work twice). Where a value `w` (a weight's mass, or a `let`'s right-hand side)
//! evaluates a loop `summate`/`product l from 0 to n: B(l)` wherever it is evaluated,
//! and what follows it (the weighted measure, or the `let`'s body) holds an `array i of
//! n` whose body has `B(i)` as a subterm or, for a product `B = b1 * ... * bk`, has a
//! product among whose factors are `b1(i) ... bk(i)`, the body is tabulated once:
//!
//! `tab = array i of n: B(i)` let-bound around both; the loop becomes `Σ_l tab[l]` and
//! the array's occurrence `tab[i]`.
//!
//! Meaning is kept exactly: the table evaluates `B` at the same points, in the same order,
//! as the loop it replaces did wherever the table is evaluated (the loop is on a path of
//! `w` that is always taken: no branch, no loop body, no right operand of `&&`/`||` on
//! the way), so it fails exactly where the loop failed, and the sum or product of its
//! elements is the same arithmetic on the same values. The array reads the table where it
//! computed the same value (up to the names of binders, `alpha_eq`); no binder between the array and the occurrence rebinds a
//! name of `B`, and none on the path to the loop.

use rustc_hash::FxHashMap;
use slic_algebra::alpha;
use slic_algebra::vars::{self, FreeVars};
use slic_algebra::{stack, Node, Prim, Store, TermId, Type, VarId};

/// What [`share_tables`] did.
#[derive(Clone, Debug)]
pub struct Shared {
    pub term: TermId,
    /// How many tables were made.
    pub tables: usize,
}

/// Every loop body that a later array recomputes, tabulated once, everywhere in `t`.
pub fn share_tables(store: &mut Store, t: TermId) -> Shared {
    let mut s = Sharer {
        store,
        fv: FreeVars::new(),
        memo: FxHashMap::default(),
        tables: 0,
    };
    let term = s.go(t);
    Shared {
        term,
        tables: s.tables,
    }
}

struct Sharer<'s> {
    store: &'s mut Store,
    fv: FreeVars,
    memo: FxHashMap<TermId, TermId>,
    tables: usize,
}

/// A loop found on an always-taken path: `summate`/`product l from 0 to n: body`.
#[derive(Clone, Copy)]
struct Strict {
    term: TermId,
    l: VarId,
    n: TermId,
    body: TermId,
}

impl Sharer<'_> {
    fn go(&mut self, t: TermId) -> TermId {
        if let Some(&r) = self.memo.get(&t) {
            return r;
        }
        let r = stack::grow(|| self.go_inner(t));
        self.memo.insert(t, r);
        r
    }

    fn go_inner(&mut self, t: TermId) -> TermId {
        let children = self.store.node(t).children();
        let new: Vec<TermId> = children.iter().map(|&c| self.go(c)).collect();
        let t1 = crate::split::with_children(self.store, t, &new);
        let ty = self.store.ty(t).clone();
        // the value evaluated first, and what follows it in its scope
        let node1 = self.store.node(t1).clone();
        let (first, rest, shadow) = match node1 {
            Node::Weight(w, m) => (w, m, None),
            Node::Let(x, r, b) => (r, b, Some(x)),
            _ => return t1,
        };
        let mut loops = Vec::new();
        self.strict_loops(first, &mut Vec::new(), &mut loops);
        for lp in loops {
            // a `let` that rebinds a name of the loop would change what the array means
            if shadow.is_some_and(|x| self.fv.contains(self.store, lp.term, x)) {
                continue;
            }
            if let Some(r) = self.share(lp, first, rest, &node1, &ty) {
                self.tables += 1;
                return r;
            }
        }
        t1
    }

    /// The loops from 0 that evaluating `t` always evaluates, none of whose free names is
    /// bound on the way (`bound`).
    fn strict_loops(&mut self, t: TermId, bound: &mut Vec<VarId>, out: &mut Vec<Strict>) {
        let node = self.store.node(t).clone();
        match node {
            Node::Summate(l, lo, n, body) | Node::Product(l, lo, n, body) => {
                let zero = matches!(self.store.node(lo), Node::Lit(v) if v.is_zero());
                let free = self.fv.of(self.store, t);
                if zero && !bound.iter().any(|v| free.contains(v)) {
                    out.push(Strict {
                        term: t,
                        l,
                        n,
                        body,
                    });
                }
                // the bounds are always evaluated, the body maybe not
                self.strict_loops(lo, bound, out);
                self.strict_loops(n, bound, out);
            }
            Node::Prim(Prim::And | Prim::Or, args) => {
                if let Some(&a) = args.first() {
                    self.strict_loops(a, bound, out);
                }
            }
            Node::Prim(_, args) => {
                for a in args {
                    stack::grow(|| self.strict_loops(a, bound, out));
                }
            }
            Node::Coerce(_, x) => self.strict_loops(x, bound, out),
            Node::If(c, ..) => self.strict_loops(c, bound, out),
            Node::Let(x, r, b) => {
                self.strict_loops(r, bound, out);
                bound.push(x);
                stack::grow(|| self.strict_loops(b, bound, out));
                bound.pop();
            }
            _ => {}
        }
    }

    /// `lp` tabulated, if an array over its range in `rest` recomputes its body.
    fn share(
        &mut self,
        lp: Strict,
        first: TermId,
        rest: TermId,
        node: &Node,
        ty: &Type,
    ) -> Option<TermId> {
        let body_ty = self.store.ty(lp.body).clone();
        if body_ty.array_of().is_some() || !self.store.ty(lp.term).eq(&body_ty) {
            return None;
        }
        let (array, i) = self.find_array(rest, lp)?;
        let Node::Array(_, n, e) = *self.store.node(array) else {
            return None;
        };
        let i_term = self.store.var_term(i);
        let b_i = vars::substitute1(self.store, lp.body, lp.l, i_term);
        let tab_ty = Type::array(body_ty.clone());
        let tab = self.store.fresh_var("tab", tab_ty.clone());
        let tab_term = self.store.var_term(tab);
        let read_i = self
            .store
            .intern(Node::Index(tab_term, i_term), body_ty.clone());
        let e2 = self.replace(e, b_i, read_i, i, &mut Vec::new())?;
        let array2 = self
            .store
            .intern(Node::Array(i, n, e2), self.store.ty(array).clone());
        let l_term = self.store.var_term(lp.l);
        let read_l = self
            .store
            .intern(Node::Index(tab_term, l_term), body_ty.clone());
        let loop_ty = self.store.ty(lp.term).clone();
        let loop2 = match *self.store.node(lp.term) {
            Node::Summate(l, lo, hi, _) => Node::Summate(l, lo, hi, read_l),
            Node::Product(l, lo, hi, _) => Node::Product(l, lo, hi, read_l),
            _ => return None,
        };
        let loop2 = self.store.intern(loop2, loop_ty);
        let first2 = vars::replace_free(self.store, first, lp.term, loop2);
        let rest2 = vars::replace_free(self.store, rest, array, array2);
        if first2 == first || rest2 == rest {
            return None;
        }
        let table = self.store.intern(Node::Array(i, lp.n, b_i), tab_ty);
        let inner = self
            .store
            .intern(node.with_children(&[first2, rest2]), ty.clone());
        Some(self.store.intern(Node::Let(tab, table, inner), ty.clone()))
    }

    /// The first `array i of n` in `t` (outside binders of the loop's free names) whose
    /// body holds the loop's body at `i`.
    fn find_array(&mut self, t: TermId, lp: Strict) -> Option<(TermId, VarId)> {
        let free = self.fv.of(self.store, lp.term);
        let mut stack = vec![(t, Vec::<VarId>::new())];
        let mut seen = rustc_hash::FxHashSet::default();
        while let Some((x, bound)) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            let node = self.store.node(x).clone();
            if let Node::Array(i, n, e) = node {
                if n == lp.n && !free.contains(&i) {
                    let i_term = self.store.var_term(i);
                    let b_i = vars::substitute1(self.store, lp.body, lp.l, i_term);
                    if self.occurs(e, b_i, i) {
                        return Some((x, i));
                    }
                }
            }
            for (k, c) in node.children().into_iter().enumerate() {
                let mut b = bound.clone();
                vars::bound_in(&node, k, &mut b);
                if b.iter().any(|v| free.contains(v)) {
                    continue;
                }
                stack.push((c, b));
            }
        }
        None
    }

    /// Does `target` (or, for a product, all its factors within one product) occur in
    /// `t` outside binders of its names?
    fn occurs(&mut self, t: TermId, target: TermId, i: VarId) -> bool {
        let probe = self.store.var_term(i);
        self.replace(t, target, probe, i, &mut Vec::new()).is_some()
    }

    /// Are `a` and `b` the same term up to the names of their binders (the simplifier
    /// names the loops of the mass and of the weights apart)?
    fn same(&self, a: TermId, b: TermId) -> bool {
        a == b
            || (std::mem::discriminant(self.store.node(a))
                == std::mem::discriminant(self.store.node(b))
                && self.store.ty(a) == self.store.ty(b)
                && alpha::alpha_eq(self.store, a, b))
    }

    /// `t` with the occurrences of `target` (see [`Self::occurs`]) replaced by `with`;
    /// `None` if there is none.
    fn replace(
        &mut self,
        t: TermId,
        target: TermId,
        with: TermId,
        i: VarId,
        bound: &mut Vec<VarId>,
    ) -> Option<TermId> {
        if self.same(t, target) {
            return Some(with);
        }
        let free = self.fv.of(self.store, target);
        if !self.fv.contains(self.store, t, i) {
            return None;
        }
        let ty = self.store.ty(t).clone();
        // a product holding every factor of a product target
        if let (Node::Prim(Prim::Mul, have), Node::Prim(Prim::Mul, want)) =
            (self.store.node(t).clone(), self.store.node(target).clone())
        {
            let mut left = have.clone();
            let all = want
                .iter()
                .all(|&w| match left.iter().position(|&h| self.same(h, w)) {
                    Some(p) => {
                        left.remove(p);
                        true
                    }
                    None => false,
                });
            if all && !left.is_empty() {
                left.insert(0, with);
                return Some(self.store.prim(Prim::Mul, left, ty));
            }
        }
        let node = self.store.node(t).clone();
        let children = node.children();
        let mut new = children.clone();
        let mut any = false;
        for (k, &c) in children.iter().enumerate() {
            let depth = bound.len();
            vars::bound_in(&node, k, bound);
            let captured = bound[depth..].iter().any(|v| free.contains(v));
            if !captured {
                if let Some(r) = stack::grow(|| self.replace(c, target, with, i, bound)) {
                    new[k] = r;
                    any = true;
                }
            }
            bound.truncate(depth);
        }
        any.then(|| self.store.intern(node.with_children(&new), ty))
    }
}
