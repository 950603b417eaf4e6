//! Data and loop forms: pairs, array literals, `array`, indexing, `plate`, `chain`,
//! `summate`, `product`, `integrate`, and `bucket` with its reducers. Reducers are only
//! elaborated here, directly under a `bucket` or inside another reducer.

use std::sync::Arc;

use super::{Elab, Failed, R};
use crate::diag::Span;
use crate::syntax::ast::{Expr, ExprKind, Ident};
use crate::term::{Node, TermId};
use crate::types::Type;

impl Elab<'_> {
    /// `(a, b)`.
    pub(super) fn pair(
        &mut self,
        a: &Expr,
        b: &Expr,
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let (x, y) = match expected {
            Some(Type::Pair(ta, tb)) => (self.check(a, ta), self.check(b, tb)),
            _ => (self.infer(a), self.infer(b)),
        };
        let (x, y) = (x?, y?);
        let ty = Type::pair(self.ty(x), self.ty(y));
        let t = self.store.intern(Node::Pair(x, y), ty);
        self.fit(t, expected, span)
    }

    /// `[e0, e1, ...]`: elements checked against the expected element type, or given one
    /// type as branches are.
    pub(super) fn array_lit(
        &mut self,
        xs: &[Expr],
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        if let Some(want @ Type::Array(elem)) = expected {
            let mut terms = Vec::with_capacity(xs.len());
            let mut failed = false;
            for x in xs {
                match self.check(x, elem) {
                    Ok(t) => terms.push(t),
                    Err(Failed) => failed = true,
                }
            }
            if failed {
                return Err(Failed);
            }
            return Ok(self.store.intern(Node::ArrayLit(terms), want.clone()));
        }
        if xs.is_empty() {
            return Err(match expected {
                Some(want) => self.err(span, format!("expected {want}, found an array")),
                None => self.err(
                    span,
                    "cannot infer the element type of '[]'; annotate it, e.g. '[]. array(real)'",
                ),
            });
        }
        let items: Vec<&Expr> = xs.iter().collect();
        let (terms, elem) = self.unify(&items)?;
        let t = self.store.intern(Node::ArrayLit(terms), Type::array(elem));
        self.fit(t, expected, span)
    }

    /// The size of an `array`, `plate` or `chain`: a `nat`. A size written `∞` (Hakaru
    /// users write it for an array of observations whose length they leave open) is
    /// refused for what it is, not as a `prob` where a `nat` was expected (issue 14).
    fn loop_size(&mut self, n: &Expr, what: &str) -> R<TermId> {
        if matches!(n.kind, ExprKind::Infinity) {
            return Err(self.err(
                n.span,
                format!(
                    "'{what}' of unbounded size (∞) is not supported: the size must be a nat, \
                     such as 'size(data)' for an array of observations given as a parameter"
                ),
            ));
        }
        self.check(n, &Type::Nat)
    }

    /// `array i of n: e`.
    pub(super) fn array(
        &mut self,
        i: &Ident,
        n: &Expr,
        body: &Expr,
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let n = self.loop_size(n, "array")?;
        let mark = self.mark();
        let v = self.bind(&i.name, Type::Nat);
        let body = match expected {
            Some(Type::Array(elem)) => self.check(body, elem),
            _ => self.infer(body),
        };
        self.pop_to(mark);
        let body = body?;
        let ty = Type::array(self.ty(body));
        let t = self.store.intern(Node::Array(v, n, body), ty);
        self.fit(t, expected, span)
    }

    /// `a[i]`.
    pub(super) fn index(&mut self, a: &Expr, i: &Expr) -> R<TermId> {
        let arr = self.infer(a);
        let ix = self.check(i, &Type::Nat);
        let arr = arr?;
        let elem = match self.ty(arr) {
            Type::Array(elem) => Arc::unwrap_or_clone(elem),
            other => return Err(self.err(a.span, format!("expected an array, found {other}"))),
        };
        let ix = ix?;
        Ok(self.store.intern(Node::Index(arr, ix), elem))
    }

    /// `plate i of n: m`.
    pub(super) fn plate(
        &mut self,
        i: &Ident,
        n: &Expr,
        m: &Expr,
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        let n = self.loop_size(n, "plate")?;
        let mark = self.mark();
        let v = self.bind(&i.name, Type::Nat);
        let body = match expected.and_then(Type::measure_of).and_then(Type::array_of) {
            Some(elem) => {
                let want = Type::measure(elem.clone());
                self.check(m, &want).map(|t| (t, elem.clone()))
            }
            None => self.infer_measure(m),
        };
        self.pop_to(mark);
        let (body, elem) = body?;
        let ty = Type::measure(Type::array(elem));
        let t = self.store.intern(Node::Plate(v, n, body), ty);
        self.fit(t, expected, span)
    }

    /// `chain s from s0 of n: m`: `Chain(s, s0, n, m)`, with `m : measure(pair(a, S))`
    /// and `s : S` in scope; the result is `measure(pair(array(a), S))`.
    pub(super) fn chain(
        &mut self,
        s: &Ident,
        s0: &Expr,
        n: &Expr,
        m: &Expr,
        expected: Option<&Type>,
        span: Span,
    ) -> R<TermId> {
        // The expected type, when it has the right shape, fixes a and S.
        let shape = match expected.and_then(Type::measure_of) {
            Some(Type::Pair(arr, st)) => arr.array_of().map(|a| (a.clone(), (**st).clone())),
            _ => None,
        };
        let init = match &shape {
            Some((_, st)) => self.check(s0, st),
            None => self.infer(s0),
        };
        let n = self.loop_size(n, "chain");
        let (init, n) = (init?, n?);
        let state = self.ty(init);
        let mark = self.mark();
        let v = self.bind(&s.name, state.clone());
        let body = match &shape {
            Some((a, st)) => {
                let want = Type::measure(Type::pair(a.clone(), st.clone()));
                self.check(m, &want).map(|t| (t, a.clone()))
            }
            None => self.chain_body(m, &state),
        };
        self.pop_to(mark);
        let (body, a) = body?;
        let ty = Type::measure(Type::pair(Type::array(a), state));
        let t = self.store.intern(Node::Chain(v, init, n, body), ty);
        self.fit(t, expected, span)
    }

    /// A `chain` body in infer mode: a measure of `pair(a, state)`; returns it and `a`.
    fn chain_body(&mut self, m: &Expr, state: &Type) -> R<(TermId, Type)> {
        let (t, elem) = self.infer_measure(m)?;
        match elem {
            Type::Pair(a, st) if *st == *state => Ok((t, Arc::unwrap_or_clone(a))),
            other => Err(self.err(
                m.span,
                format!(
                    "expected a measure of a pair whose second part is the state type {state}, found measure({other})"
                ),
            )),
        }
    }

    /// Loop bounds: joined like numeric operands, and integral.
    fn int_bounds(&mut self, lo: &Expr, hi: &Expr) -> R<(TermId, TermId, Type)> {
        let x = self.num(lo, None);
        let y = self.num(hi, None);
        let (x, y) = (x?, y?);
        let (terms, ty) = self.joined(vec![x, y])?;
        if !ty.is_integral() {
            return Err(self.err(
                lo.span.join(hi.span),
                format!("loop bounds must be nat or int, found {ty}"),
            ));
        }
        let [a, b] = terms[..] else {
            return Err(self.err(lo.span, "internal error: lost a bound"));
        };
        Ok((a, b, ty))
    }

    /// `summate i from lo to hi: e` / `product ...`: integral bounds, numeric body.
    pub(super) fn sum_or_product(
        &mut self,
        sum: bool,
        i: &Ident,
        lo: &Expr,
        hi: &Expr,
        body: &Expr,
    ) -> R<TermId> {
        let (lo, hi, ity) = self.int_bounds(lo, hi)?;
        let mark = self.mark();
        let v = self.bind(&i.name, ity);
        let n = self.num(body, None);
        let n = match n {
            Ok(n) => {
                let ty = self.num_type(&n);
                self.num_to(n, &ty)
            }
            Err(Failed) => Err(Failed),
        };
        self.pop_to(mark);
        let body = n?;
        let ty = self.ty(body);
        let node = if sum {
            Node::Summate(v, lo, hi, body)
        } else {
            Node::Product(v, lo, hi, body)
        };
        Ok(self.store.intern(node, ty))
    }

    /// `integrate x from lo to hi: e`: real bounds, prob body.
    pub(super) fn integrate(&mut self, x: &Ident, lo: &Expr, hi: &Expr, body: &Expr) -> R<TermId> {
        let lo = self.check(lo, &Type::Real);
        let hi = self.check(hi, &Type::Real);
        let (lo, hi) = (lo?, hi?);
        let mark = self.mark();
        let v = self.bind(&x.name, Type::Real);
        let body = self.check(body, &Type::Prob);
        self.pop_to(mark);
        let body = body?;
        Ok(self
            .store
            .intern(Node::Integrate(v, lo, hi, body), Type::Prob))
    }

    /// `bucket j from lo to hi: r`.
    pub(super) fn bucket(&mut self, j: &Ident, lo: &Expr, hi: &Expr, r: &Expr) -> R<TermId> {
        let (lo, hi, jty) = self.int_bounds(lo, hi)?;
        let mark = self.mark();
        let v = self.bind(&j.name, jty);
        let r = self.reducer(r);
        self.pop_to(mark);
        let r = r?;
        let ty = self.ty(r);
        Ok(self.store.intern(Node::Bucket(v, lo, hi, r), ty))
    }

    fn reducer(&mut self, r: &Expr) -> R<TermId> {
        self.nested(r.span, |cx| cx.reducer_node(r))
    }

    fn reducer_node(&mut self, r: &Expr) -> R<TermId> {
        match &r.kind {
            ExprKind::RAdd(x) => {
                let n = self.num(x, Some("r_add"))?;
                let ty = self.num_type(&n);
                let x = self.num_to(n, &ty)?;
                Ok(self.store.intern(Node::RAdd(x), ty))
            }
            ExprKind::RNop => Ok(self.store.intern(Node::RNop, Type::Unit)),
            ExprKind::RIndex(b, n, ix, body) => {
                let n = self.check(n, &Type::Nat);
                let ix = self.check(ix, &Type::Nat);
                let (n, ix) = (n?, ix?);
                let mark = self.mark();
                let v = self.bind(&b.name, Type::Nat);
                let body = self.reducer(body);
                self.pop_to(mark);
                let body = body?;
                let ty = Type::array(self.ty(body));
                Ok(self.store.intern(Node::RIndex(v, n, ix, body), ty))
            }
            ExprKind::RSplit(c, r1, r2) => {
                let c = self.check(c, &Type::Bool);
                let r1 = self.reducer(r1);
                let r2 = self.reducer(r2);
                let (c, r1, r2) = (c?, r1?, r2?);
                let ty = Type::pair(self.ty(r1), self.ty(r2));
                Ok(self.store.intern(Node::RSplit(c, r1, r2), ty))
            }
            ExprKind::RFanout(r1, r2) => {
                let r1 = self.reducer(r1);
                let r2 = self.reducer(r2);
                let (r1, r2) = (r1?, r2?);
                let ty = Type::pair(self.ty(r1), self.ty(r2));
                Ok(self.store.intern(Node::RFanout(r1, r2), ty))
            }
            _ => Err(self.err(
                r.span,
                "expected a reducer (r_add, r_nop, r_index, r_split or r_fanout)",
            )),
        }
    }
}
