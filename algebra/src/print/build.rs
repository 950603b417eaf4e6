//! A test-only term builder: makes typed core terms with short nested calls, so that
//! printer, alpha-equivalence and verifier tests read as one-liners. Each method computes
//! the node's type by the core typing rules (it does not check them: `verify` does).

use std::sync::Arc;

use std::cell::RefCell;

use num_bigint::BigInt;
use num_rational::BigRational;

use crate::term::{Dist, Node, Prim, Store, TermId, VarId};
use crate::types::{Coercion, Type};

pub struct B {
    pub s: RefCell<Store>,
}

impl B {
    pub fn new() -> B {
        B {
            s: RefCell::new(Store::new()),
        }
    }
    pub fn ty(&self, t: TermId) -> Type {
        self.s.borrow().ty(t).clone()
    }
    pub fn n(&self, node: Node, ty: Type) -> TermId {
        self.s.borrow_mut().intern(node, ty)
    }
    pub fn fresh(&self, name: &str, ty: Type) -> VarId {
        self.s.borrow_mut().fresh_var(name, ty)
    }
    pub fn v(&self, v: VarId) -> TermId {
        self.s.borrow_mut().var_term(v)
    }
    /// The term of a new (free) variable.
    pub fn var(&self, name: &str, ty: Type) -> TermId {
        let v = self.fresh(name, ty);
        self.v(v)
    }
    pub fn q(&self, n: i64, d: i64, ty: Type) -> TermId {
        let q = BigRational::new(BigInt::from(n), BigInt::from(d));
        self.n(Node::Lit(q.into()), ty)
    }
    pub fn nat(&self, n: i64) -> TermId {
        self.q(n, 1, Type::Nat)
    }
    pub fn int(&self, n: i64) -> TermId {
        self.q(n, 1, Type::Int)
    }
    pub fn prob(&self, n: i64) -> TermId {
        self.q(n, 1, Type::Prob)
    }
    pub fn real(&self, n: i64) -> TermId {
        self.q(n, 1, Type::Real)
    }
    pub fn bool(&self, b: bool) -> TermId {
        self.n(Node::Bool(b), Type::Bool)
    }
    pub fn unit(&self) -> TermId {
        self.n(Node::Unit, Type::Unit)
    }
    pub fn prim(&self, p: Prim, args: &[TermId], ty: Type) -> TermId {
        self.n(Node::Prim(p, args.to_vec()), ty)
    }
    /// A primitive typed like its first argument (arithmetic).
    pub fn arith(&self, p: Prim, args: &[TermId]) -> TermId {
        let ty = self.ty(args[0]);
        self.prim(p, args, ty)
    }
    pub fn add(&self, args: &[TermId]) -> TermId {
        self.arith(Prim::Add, args)
    }
    pub fn mul(&self, args: &[TermId]) -> TermId {
        self.arith(Prim::Mul, args)
    }
    pub fn neg(&self, a: TermId) -> TermId {
        self.arith(Prim::Neg, &[a])
    }
    pub fn recip(&self, a: TermId) -> TermId {
        self.arith(Prim::Recip, &[a])
    }
    pub fn pow(&self, a: TermId, n: TermId) -> TermId {
        self.arith(Prim::Pow, &[a, n])
    }
    pub fn cmp(&self, p: Prim, a: TermId, b: TermId) -> TermId {
        self.prim(p, &[a, b], Type::Bool)
    }
    pub fn coerce(&self, c: Coercion, e: TermId) -> TermId {
        self.n(Node::Coerce(c, e), c.to_type())
    }
    pub fn inf(&self) -> TermId {
        self.prim(Prim::Infinity, &[], Type::Prob)
    }
    pub fn real_inf(&self) -> TermId {
        self.coerce(Coercion::Prob2Real, self.inf())
    }
    pub fn neg_inf(&self) -> TermId {
        self.neg(self.real_inf())
    }
    pub fn dist(&self, d: Dist, args: &[TermId]) -> TermId {
        self.n(
            Node::Dist(d, args.to_vec()),
            Type::measure(d.support_type()),
        )
    }
    pub fn normal(&self, a: TermId, b: TermId) -> TermId {
        self.dist(Dist::Normal, &[a, b])
    }
    pub fn std_normal(&self) -> TermId {
        self.normal(self.real(0), self.prob(1))
    }
    pub fn dirac(&self, e: TermId) -> TermId {
        self.n(Node::Dirac(e), Type::measure(self.ty(e)))
    }
    pub fn weight(&self, w: TermId, m: TermId) -> TermId {
        self.n(Node::Weight(w, m), self.ty(m))
    }
    pub fn superpose(&self, ms: &[TermId]) -> TermId {
        self.n(Node::Superpose(ms.to_vec()), self.ty(ms[0]))
    }
    pub fn reject(&self, t: Type) -> TermId {
        self.n(Node::Reject, Type::measure(t))
    }
    /// `x <~ m; k(x)` with a new variable `x` of m's element type.
    pub fn bind(&self, name: &str, m: TermId, k: impl FnOnce(TermId) -> TermId) -> TermId {
        let ty = self.ty(m).measure_of().cloned().unwrap_or(Type::Unit);
        let x = self.fresh(name, ty);
        let body = k(self.v(x));
        self.n(Node::Bind(x, m, body), self.ty(body))
    }
    /// `x = e; body(x)`.
    pub fn let_(&self, name: &str, e: TermId, body: impl FnOnce(TermId) -> TermId) -> TermId {
        let x = self.fresh(name, self.ty(e));
        let body = body(self.v(x));
        self.n(Node::Let(x, e, body), self.ty(body))
    }
    /// `fn x T: body(x)`.
    pub fn lam(&self, name: &str, ty: Type, body: impl FnOnce(TermId) -> TermId) -> TermId {
        let x = self.fresh(name, ty.clone());
        let body = body(self.v(x));
        self.n(Node::Lam(x, body), Type::fun(ty, self.ty(body)))
    }
    /// `f(a, b, ...)`, curried.
    pub fn app(&self, f: TermId, args: &[TermId]) -> TermId {
        let mut t = f;
        for &a in args {
            let ty = match self.ty(t) {
                Type::Fun(_, r) => Arc::unwrap_or_clone(r),
                other => other,
            };
            t = self.n(Node::App(t, a), ty);
        }
        t
    }
    pub fn if_(&self, c: TermId, a: TermId, b: TermId) -> TermId {
        self.n(Node::If(c, a, b), self.ty(a))
    }
    pub fn pair(&self, a: TermId, b: TermId) -> TermId {
        self.n(Node::Pair(a, b), Type::pair(self.ty(a), self.ty(b)))
    }
    pub fn array_lit(&self, elem: Type, xs: &[TermId]) -> TermId {
        self.n(Node::ArrayLit(xs.to_vec()), Type::array(elem))
    }
    pub fn index(&self, a: TermId, i: TermId) -> TermId {
        let ty = self.ty(a).array_of().cloned().unwrap_or(Type::Unit);
        self.n(Node::Index(a, i), ty)
    }
    /// `array i of n: e(i)`.
    pub fn array(&self, name: &str, n: TermId, e: impl FnOnce(TermId) -> TermId) -> TermId {
        let i = self.fresh(name, Type::Nat);
        let e = e(self.v(i));
        self.n(Node::Array(i, n, e), Type::array(self.ty(e)))
    }
    /// `plate i of n: m(i)`.
    pub fn plate(&self, name: &str, n: TermId, m: impl FnOnce(TermId) -> TermId) -> TermId {
        let i = self.fresh(name, Type::Nat);
        let m = m(self.v(i));
        let elem = self.ty(m).measure_of().cloned().unwrap_or(Type::Unit);
        self.n(Node::Plate(i, n, m), Type::measure(Type::array(elem)))
    }
    /// `summate i from lo to hi: e(i)` (`product` with `prod`).
    pub fn sum(
        &self,
        name: &str,
        lo: TermId,
        hi: TermId,
        e: impl FnOnce(TermId) -> TermId,
    ) -> TermId {
        let i = self.fresh(name, self.ty(lo));
        let e = e(self.v(i));
        self.n(Node::Summate(i, lo, hi, e), self.ty(e))
    }
    pub fn prod(
        &self,
        name: &str,
        lo: TermId,
        hi: TermId,
        e: impl FnOnce(TermId) -> TermId,
    ) -> TermId {
        let i = self.fresh(name, self.ty(lo));
        let e = e(self.v(i));
        self.n(Node::Product(i, lo, hi, e), self.ty(e))
    }
    pub fn integrate(
        &self,
        name: &str,
        lo: TermId,
        hi: TermId,
        e: impl FnOnce(TermId) -> TermId,
    ) -> TermId {
        let x = self.fresh(name, Type::Real);
        let e = e(self.v(x));
        self.n(Node::Integrate(x, lo, hi, e), self.ty(e))
    }
    pub fn bucket(
        &self,
        name: &str,
        lo: TermId,
        hi: TermId,
        r: impl FnOnce(TermId) -> TermId,
    ) -> TermId {
        let j = self.fresh(name, self.ty(lo));
        let r = r(self.v(j));
        self.n(Node::Bucket(j, lo, hi, r), self.ty(r))
    }
    pub fn r_add(&self, e: TermId) -> TermId {
        self.n(Node::RAdd(e), self.ty(e))
    }
    pub fn r_nop(&self) -> TermId {
        self.n(Node::RNop, Type::Unit)
    }
    pub fn r_index(
        &self,
        name: &str,
        n: TermId,
        e: TermId,
        r: impl FnOnce(TermId) -> TermId,
    ) -> TermId {
        let b = self.fresh(name, Type::Nat);
        let r = r(self.v(b));
        self.n(Node::RIndex(b, n, e, r), Type::array(self.ty(r)))
    }
    pub fn r_split(&self, c: TermId, r1: TermId, r2: TermId) -> TermId {
        self.n(
            Node::RSplit(c, r1, r2),
            Type::pair(self.ty(r1), self.ty(r2)),
        )
    }
    pub fn r_fanout(&self, r1: TermId, r2: TermId) -> TermId {
        self.n(Node::RFanout(r1, r2), Type::pair(self.ty(r1), self.ty(r2)))
    }
    /// `chain s from s0 of n: m(s)`; m : measure(pair(a, S)).
    pub fn chain(
        &self,
        name: &str,
        s0: TermId,
        n: TermId,
        m: impl FnOnce(TermId) -> TermId,
    ) -> TermId {
        let s = self.fresh(name, self.ty(s0));
        let m = m(self.v(s));
        let ty = match self.ty(m).measure_of() {
            Some(Type::Pair(a, st)) => {
                Type::measure(Type::pair(Type::array((**a).clone()), (**st).clone()))
            }
            _ => Type::Unit,
        };
        self.n(Node::Chain(s, s0, n, m), ty)
    }
}
