//! Tests lifted out of gamma functions (issue 13: kernel speed). After the point split a
//! Gibbs update's weight of label `i` often reads `i` in one place only, a test: the
//! Dirichlet's last class, `Γ(as[K-1] + n_{K-1} + (if i == K-1: 1 else: 0) + ...)`.
//! Left as it is, the gamma function runs once per proposed label; written
//! `if i == K-1: Γ(... + 1 + ...) else: Γ(... + 0 + ...)`, both arguments read nothing
//! of the label and A-normal form hoists both gamma functions out of the loop over labels:
//! two `lgamma`s per update where there were `K`.
//!
//! [`lift_tests`] rewrites `gammaFunc(e)` where `e` (through sums, products, negations
//! and coercions) holds a test `if c: a else: b` whose condition reads a variable that
//! nothing else in `e` reads (nor `a`, nor `b`), as `if c: gammaFunc(e[a]) else:
//! gammaFunc(e[b])`. Exact: `f(if c: a else: b)` is `if c: f(a) else: f(b)` for every
//! `f`, errors included (A-normal form guards what it hoists out of a branch).

use slic_algebra::{vars, Node, Prim, Store, TermId, Type, VarId};

/// What [`lift_tests`] did.
#[derive(Clone, Debug)]
pub struct Lifted {
    pub term: TermId,
    /// Gamma functions split on a test.
    pub lifted: usize,
}

/// Every gamma function of `t` whose argument reads a variable only in a test, split on
/// the test.
pub fn lift_tests(store: &mut Store, t: TermId) -> Lifted {
    let mut lifted = 0;
    let term = store.rebuild(t, &mut |store, _, node| {
        let Node::Prim(Prim::GammaFunc, args) = node else {
            return None;
        };
        let [e] = args.as_slice() else {
            return None;
        };
        let s = liftable_test(store, *e)?;
        let Node::If(c, a, b) = *store.node(s) else {
            return None;
        };
        // what the two sides share, bound once outside the test (so that a sum over
        // the points in it is not copied into both sides)
        let mut shared = Vec::new();
        let skeleton = skeleton(store, *e, s, &mut shared);
        let with = |store: &mut Store, v: TermId| {
            let arg = store.rebuild(skeleton, &mut |_, orig, _| (orig == s).then_some(v));
            store.prim(Prim::GammaFunc, vec![arg], Type::Prob)
        };
        let (ga, gb) = (with(store, a), with(store, b));
        lifted += 1;
        let mut out = store.intern(Node::If(c, ga, gb), Type::Prob);
        for (v, value) in shared.into_iter().rev() {
            out = store.intern(Node::Let(v, value, out), Type::Prob);
        }
        Some(out)
    });
    Lifted { term, lifted }
}

/// A test `if c: a else: b` inside `e` (through arithmetic and coercions, not binders)
/// whose condition reads a variable that the rest of `e`, `a` and `b` do not.
fn liftable_test(store: &Store, e: TermId) -> Option<TermId> {
    let mut tests = Vec::new();
    arithmetic_tests(store, e, &mut tests);
    tests.into_iter().find(|&s| {
        let Node::If(c, a, b) = *store.node(s) else {
            return false;
        };
        vars::free_vars(store, c).into_iter().any(|v| {
            !vars::mentions_any(store, a, &[v])
                && !vars::mentions_any(store, b, &[v])
                && !reads_outside(store, e, s, &[v])
        })
    })
}

/// The operands of an arithmetic node (a sum, product, negation or coercion), through
/// which the tests of an argument are looked for; `None` for any other node.
fn operands(node: &Node) -> Option<&[TermId]> {
    match node {
        Node::Prim(Prim::Add | Prim::Mul | Prim::Neg, args) => Some(args),
        Node::Coerce(_, x) => Some(std::slice::from_ref(x)),
        _ => None,
    }
}

/// The `if`s reached from `t` through arithmetic.
fn arithmetic_tests(store: &Store, t: TermId, out: &mut Vec<TermId>) {
    if let Node::If(..) = store.node(t) {
        out.push(t);
    }
    for &a in operands(store.node(t)).unwrap_or(&[]) {
        arithmetic_tests(store, a, out);
    }
}

/// `t` with every operand off the path to `s` that is not a literal or a variable
/// replaced by a fresh variable, bound in `shared` (outermost first).
fn skeleton(store: &mut Store, t: TermId, s: TermId, shared: &mut Vec<(VarId, TermId)>) -> TermId {
    if t == s {
        return t;
    }
    let ty = store.ty(t).clone();
    match store.node(t).clone() {
        Node::Prim(op @ (Prim::Add | Prim::Mul | Prim::Neg), args) => {
            let args = args
                .into_iter()
                .map(|a| {
                    if contains(store, a, s) {
                        skeleton(store, a, s, shared)
                    } else if matches!(store.node(a), Node::Lit(_) | Node::Var(_)) {
                        a
                    } else {
                        let v = store.fresh_var("g", store.ty(a).clone());
                        shared.push((v, a));
                        store.var_term(v)
                    }
                })
                .collect();
            store.prim(op, args, ty)
        }
        Node::Coerce(c, x) => {
            let x = skeleton(store, x, s, shared);
            store.intern(Node::Coerce(c, x), ty)
        }
        _ => t,
    }
}

/// Whether the arithmetic of `t` reaches the subterm `s`.
fn contains(store: &Store, t: TermId, s: TermId) -> bool {
    t == s
        || operands(store.node(t))
            .unwrap_or(&[])
            .iter()
            .any(|&a| contains(store, a, s))
}

/// Whether `t` reads any of `vs` other than inside the subterm `s`.
fn reads_outside(store: &Store, t: TermId, s: TermId, vs: &[VarId]) -> bool {
    if t == s {
        return false;
    }
    match operands(store.node(t)) {
        Some(ops) => ops.iter().any(|&a| reads_outside(store, a, s, vs)),
        None => vars::mentions_any(store, t, vs),
    }
}
