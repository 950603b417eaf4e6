//! The cheapest of the equal forms of a binder-free numeric term, chosen with an e-graph
//! (egg): canonical forms are expanded, and a reader (and later generated code) pays
//! less for `2 ** (-(k + 1))` than for `2 ** (-k) / 2`, and for `pi * (a ^ 2 + b ^ 2)`
//! than for `a ^ 2 * pi + b ^ 2 * pi`.
//!
//! [`cheapest_form`] puts the canonical term into an e-graph (arithmetic, powers, roots,
//! literals and coercions as e-nodes; every other subterm an opaque leaf), applies the
//! named rules of [`RULES`] until nothing new is learnt or a limit is hit, and extracts
//! the cheapest term by the structural cost of [`crate::cost`]. There are no
//! commutativity or associativity rules (STYLE.md: canonical forms handle AC, and such
//! rules bloat e-graphs): each rule reads the n-ary sums and products of the canonical
//! form as they are. The rules need arithmetic on literals and n-ary matching (a factor
//! common to every summand), so they are Rust functions over e-classes rather than egg
//! patterns, applied in rounds by [`saturate`]; egg supplies the e-graph and the
//! extractor.
//!
//! Architecture invariant: every rule is an identity for all values of the variables
//! allowed by their types (each is checked at random points in the tests), so the
//! result always means what the input means; it is never costlier than the input.

use egg::{Analysis, CostFunction, DidMerge, EGraph, Extractor, Id, Language, RecExpr};
use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use crate::cost;
use crate::num::Rational;
use crate::term::{Node, Prim, Store, TermId};
use crate::types::{Coercion, Type};

/// The most e-nodes the e-graph may grow to.
const NODE_LIMIT: usize = 2_000;

/// The most rounds of rule application.
const ROUND_LIMIT: usize = 6;

/// Terms costlier than this are left as they are (the e-graph of a big term is slow to
/// saturate and its forms are not read by anyone).
const INPUT_LIMIT: u64 = 400;

/// The largest `|n|` of `c = b ^ n` that `power-absorbs-coefficient` looks for.
const MAX_ABSORBED_POWER: i64 = 64;

/// What an e-node applies to its children.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Op {
    /// A subterm the rules do not look into (a variable, `gammaFunc(..)` of a sum, ...).
    Leaf(TermId),
    Lit(Rational),
    Prim(Prim),
    Coerce(Coercion),
}

/// One e-node: an operation, the type of its value, and its operands' e-classes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct ENode {
    op: Op,
    ty: Type,
    children: Vec<Id>,
}

impl Language for ENode {
    type Discriminant = (Op, Type, usize);

    fn discriminant(&self) -> Self::Discriminant {
        (self.op.clone(), self.ty.clone(), self.children.len())
    }

    fn matches(&self, other: &Self) -> bool {
        self.op == other.op && self.ty == other.ty && self.children.len() == other.children.len()
    }

    fn children(&self) -> &[Id] {
        &self.children
    }

    fn children_mut(&mut self) -> &mut [Id] {
        &mut self.children
    }
}

type Graph = EGraph<ENode, Constants>;

/// The e-class analysis: the exact value of a class when it is a constant (`1 / 2` as
/// well as the literal `1/2`), which the rules on literals read.
#[derive(Default)]
struct Constants;

impl Analysis<ENode> for Constants {
    type Data = Option<Rational>;

    fn make(g: &mut Graph, n: &ENode, _id: Id) -> Option<Rational> {
        let mut vals = n.children.iter().map(|&c| g[c].data.clone());
        match &n.op {
            Op::Lit(r) => Some(r.clone()),
            Op::Coerce(c) if c.is_safe() => vals.next().flatten(),
            Op::Prim(Prim::Neg) => vals.next().flatten().map(|v| -v),
            Op::Prim(Prim::Recip) => vals.next().flatten().and_then(|v| v.recip()),
            Op::Prim(Prim::Add) => vals.try_fold(Rational::zero(), |acc, v| Some(acc + v?)),
            Op::Prim(Prim::Mul) => vals.try_fold(Rational::one(), |acc, v| Some(acc * v?)),
            _ => None,
        }
    }

    fn merge(&mut self, a: &mut Option<Rational>, b: Option<Rational>) -> DidMerge {
        // two constants of one class are equal (the rules keep value)
        egg::merge_option(a, b, |_, _| DidMerge(false, false))
    }
}

/// Why the rules stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormsStop {
    /// No rule learnt anything new.
    Saturated,
    /// [`ROUND_LIMIT`] rounds ran.
    RoundLimit,
    /// The e-graph grew past [`NODE_LIMIT`] e-nodes.
    NodeLimit,
    /// The input was costlier than [`INPUT_LIMIT`], or had nothing for the rules; it is
    /// returned as it is.
    Skipped,
}

/// The cheapest form of the numeric term `t` found by the rules, and why they stopped.
/// Equal to `t` in value for every value of its variables; never costlier than `t`.
pub fn cheapest_form(store: &mut Store, t: TermId) -> (TermId, FormsStop) {
    if !store.ty(t).is_numeric() || cost::size(store, t) > INPUT_LIMIT {
        return (t, FormsStop::Skipped);
    }
    let mut graph = Graph::default();
    let mut memo = FxHashMap::default();
    let root = add_term(store, &mut graph, t, &mut memo);
    if !graph.classes().any(|c| c.nodes.iter().any(has_rule_shape)) {
        return (t, FormsStop::Skipped);
    }
    let stop = saturate(&mut graph);
    let best = {
        let extractor = Extractor::new(&graph, StructuralCost { store });
        extractor.find_best(root).1
    };
    // the input is in the e-graph, so the extracted form is never costlier; the check
    // guards against a cost function that is not monotonic
    match to_term(store, &best) {
        Some(out) if cost::size(store, out) <= cost::size(store, t) => (out, stop),
        _ => (t, stop),
    }
}

/// Can some rule start from this node?
fn has_rule_shape(n: &ENode) -> bool {
    matches!(
        n.op,
        Op::Prim(Prim::Add | Prim::Mul | Prim::Sqrt | Prim::RealPow)
    )
}

/// `t` into the e-graph: arithmetic as e-nodes, anything else a leaf.
fn add_term(store: &Store, g: &mut Graph, t: TermId, memo: &mut FxHashMap<TermId, Id>) -> Id {
    if let Some(&id) = memo.get(&t) {
        return id;
    }
    let ty = store.ty(t).clone();
    let node = match store.node(t) {
        Node::Lit(r) => ENode {
            op: Op::Lit(r.clone()),
            ty,
            children: vec![],
        },
        Node::Prim(p, xs) => {
            let xs = xs.clone();
            let children = xs
                .iter()
                .map(|&x| crate::stack::grow(|| add_term(store, g, x, memo)))
                .collect();
            ENode {
                op: Op::Prim(*p),
                ty,
                children,
            }
        }
        Node::Coerce(c, x) => {
            let (c, x) = (*c, *x);
            let child = crate::stack::grow(|| add_term(store, g, x, memo));
            ENode {
                op: Op::Coerce(c),
                ty,
                children: vec![child],
            }
        }
        _ => ENode {
            op: Op::Leaf(t),
            ty,
            children: vec![],
        },
    };
    let id = g.add(node);
    memo.insert(t, id);
    id
}

/// The extracted expression back as a term of the store (`None` if it is malformed,
/// which a correct extractor never gives).
fn to_term(store: &mut Store, e: &RecExpr<ENode>) -> Option<TermId> {
    let mut built: Vec<TermId> = Vec::with_capacity(e.len());
    for (_, n) in e.items() {
        let kids: Vec<TermId> = n
            .children
            .iter()
            .map(|&c| built.get(usize::from(c)).copied())
            .collect::<Option<_>>()?;
        let t = match &n.op {
            Op::Leaf(t) => *t,
            Op::Lit(r) => store.intern(Node::Lit(r.clone()), n.ty.clone()),
            Op::Prim(p) => store.prim(*p, kids, n.ty.clone()),
            Op::Coerce(c) => store.intern(Node::Coerce(*c, *kids.first()?), n.ty.clone()),
        };
        built.push(t);
    }
    built.last().copied()
}

/// [`cost::size`] over e-nodes, leaves at the size of their subterm, and a structural
/// fingerprint that breaks ties. The fingerprint hashes operations, literals and variable
/// names, never e-class or term ids, so equal-cost forms are chosen the same way whatever
/// form the input came in (simplifying an output again gives it back).
struct StructuralCost<'s> {
    store: &'s Store,
}

impl CostFunction<ENode> for StructuralCost<'_> {
    type Cost = (u64, u64);

    fn cost<C>(&mut self, enode: &ENode, mut costs: C) -> (u64, u64)
    where
        C: FnMut(Id) -> (u64, u64),
    {
        let mut h = FxHasher::default();
        let own = match &enode.op {
            Op::Leaf(t) => {
                leaf_fingerprint(self.store, *t).hash(&mut h);
                cost::size(self.store, *t)
            }
            Op::Lit(r) => {
                r.hash(&mut h);
                cost::lit_cost(r)
            }
            Op::Prim(p) => {
                p.hash(&mut h);
                cost::prim_cost(*p, enode.children.len())
            }
            Op::Coerce(c) => {
                c.hash(&mut h);
                cost::COERCION_COST
            }
        };
        enode.ty.hash(&mut h);
        let mut size = own;
        for &c in &enode.children {
            let (cs, cf) = costs(c);
            size = size.saturating_add(cs);
            cf.hash(&mut h);
        }
        (size, h.finish())
    }
}

/// A hash of a leaf's structure by node kind, payload and variable names.
fn leaf_fingerprint(store: &Store, t: TermId) -> u64 {
    let mut h = FxHasher::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        let node = store.node(x);
        std::mem::discriminant(node).hash(&mut h);
        match node {
            Node::Var(v) => store.var_name(*v).hash(&mut h),
            Node::Lit(r) => r.hash(&mut h),
            Node::Prim(p, _) => p.hash(&mut h),
            Node::Coerce(c, _) => c.hash(&mut h),
            _ => {}
        }
        if let Some(v) = node.binder() {
            store.var_name(v).hash(&mut h);
        }
        work.extend(node.children());
    }
    h.finish()
}

/// A rule: from one e-node of a class, a new e-class equal to it (or nothing).
type Rule = fn(&mut Graph, &ENode) -> Option<Id>;

/// The rules, each an identity for every value of the variables.
#[rustfmt::skip]
const RULES: &[(&str, Rule)] = &[
    // c · b ** e = b ** (e + n) when the literals satisfy c = b ^ n (b > 0, b ≠ 1)
    ("power-absorbs-coefficient", power_absorbs_coefficient),
    // b ** (-e) = (1/b) ** e for a literal b > 0 (and back, for b < 1)
    ("reciprocal-base", reciprocal_base),
    // (-a) + (-b) + ... = -(a + b + ...) when every summand is negated or negative
    ("negation-out-of-sum", negation_out_of_sum),
    // a·x + b·x + ... = x · (a + b + ...) for a factor x of every summand
    ("common-factor", common_factor),
    // a ^ 2 ∓ 2·a·b + b ^ 2 = (a ∓ b) ^ 2, in a sum of any length
    ("perfect-square", perfect_square),
    // sqrt(1 / x) = 1 / sqrt(x) (x ≥ 0)
    ("sqrt-of-reciprocal", sqrt_of_reciprocal),
    // a · (b · c) = a · b · c: the product a rule built, spliced into its parent
    ("flatten-product", flatten_product),
    // 1 · x · y = x · y (a rule spliced a `1 · recip(x)` into a product)
    ("unit-factor", unit_factor),
];

/// Applies [`RULES`] in rounds until nothing changes or a limit is hit (what was learnt
/// before the limit is kept).
fn saturate(g: &mut Graph) -> FormsStop {
    for _ in 0..ROUND_LIMIT {
        let nodes: Vec<(Id, ENode)> = g
            .classes()
            .flat_map(|c| c.nodes.iter().map(move |n| (c.id, n.clone())))
            .collect();
        let mut unions: Vec<(Id, Id)> = Vec::new();
        let mut full = false;
        'search: for (class, node) in &nodes {
            for (_, rule) in RULES {
                if let Some(new) = rule(g, node) {
                    unions.push((*class, new));
                }
                if g.total_number_of_nodes() > NODE_LIMIT {
                    full = true;
                    break 'search;
                }
            }
        }
        let mut changed = false;
        for (a, b) in unions {
            changed |= g.union(a, b);
        }
        g.rebuild();
        if full {
            return FormsStop::NodeLimit;
        }
        if !changed {
            return FormsStop::Saturated;
        }
    }
    FormsStop::RoundLimit
}

/// The constant value of class `id`, if it has one.
fn lit_of(g: &Graph, id: Id) -> Option<Rational> {
    g[id].data.clone()
}

/// The first node of class `id` applying `p`, with its children.
fn prim_in(g: &Graph, id: Id, p: Prim) -> Option<ENode> {
    g[id].nodes.iter().find(|n| n.op == Op::Prim(p)).cloned()
}

/// The type of the values of class `id`.
fn ty_of(g: &Graph, id: Id) -> Option<Type> {
    g[id].nodes.first().map(|n| n.ty.clone())
}

fn add_lit(g: &mut Graph, r: Rational, ty: Type) -> Id {
    g.add(ENode {
        op: Op::Lit(r),
        ty,
        children: vec![],
    })
}

fn add_prim(g: &mut Graph, p: Prim, ty: Type, children: Vec<Id>) -> Id {
    g.add(ENode {
        op: Op::Prim(p),
        ty,
        children,
    })
}

/// `n` with `c = b ^ n`, `0 < |n| <= MAX_ABSORBED_POWER`.
fn log_exact(b: &Rational, c: &Rational) -> Option<i64> {
    if !b.is_positive() || b.is_one() || !c.is_positive() {
        return None;
    }
    let (base, sign) = if (c > &Rational::one()) == (b > &Rational::one()) {
        (b.clone(), 1)
    } else {
        (b.recip()?, -1)
    };
    let mut p = base.clone();
    for n in 1..=MAX_ABSORBED_POWER {
        if &p == c {
            return Some(sign * n);
        }
        if p.abs() > c.abs() * Rational::from_integer(1 << 20) {
            return None;
        }
        p *= &base;
    }
    None
}

/// `c · b ** e · rest` as `b ** (e + n) · rest` for a constant factor `c = b ^ n`.
fn power_absorbs_coefficient(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::Mul) {
        return None;
    }
    for (i, &pow) in n.children.iter().enumerate() {
        let Some(p) = prim_in(g, pow, Prim::RealPow) else {
            continue;
        };
        let (Some(&base), Some(&e)) = (p.children.first(), p.children.get(1)) else {
            continue;
        };
        let Some(b) = lit_of(g, base) else {
            continue;
        };
        let found = n.children.iter().enumerate().find_map(|(j, &c)| {
            let k = log_exact(&b, &lit_of(g, c)?)?;
            (j != i).then_some((j, k))
        });
        let Some((j, k)) = found else {
            continue;
        };
        let ety = ty_of(g, e)?;
        let kl = add_lit(g, Rational::from_integer(k), ety.clone());
        let sum = add_prim(g, Prim::Add, ety, vec![e, kl]);
        let merged = add_prim(g, Prim::RealPow, p.ty.clone(), vec![base, sum]);
        let mut rest: Vec<Id> = n
            .children
            .iter()
            .enumerate()
            .filter(|&(m, _)| m != i && m != j)
            .map(|(_, &c)| c)
            .collect();
        if rest.is_empty() {
            return Some(merged);
        }
        rest.push(merged);
        return Some(add_prim(g, Prim::Mul, n.ty.clone(), rest));
    }
    None
}

/// `b ** (-e)` as `(1/b) ** e` for a positive literal `b`, and `b ** e` as
/// `(1/b) ** (-e)` for `0 < b < 1` (both ways, so that both forms are in the e-graph
/// whichever the input had, and the extractor alone decides).
fn reciprocal_base(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::RealPow) {
        return None;
    }
    let (base, e) = (*n.children.first()?, *n.children.get(1)?);
    let b = lit_of(g, base)?;
    if !b.is_positive() {
        return None;
    }
    let bty = ty_of(g, base)?;
    let exponent = match prim_in(g, e, Prim::Neg) {
        Some(neg) => *neg.children.first()?,
        None if b < Rational::one() => {
            let ety = ty_of(g, e)?;
            add_prim(g, Prim::Neg, ety, vec![e])
        }
        None => return None,
    };
    let inv = add_lit(g, b.recip()?, bty);
    Some(add_prim(
        g,
        Prim::RealPow,
        n.ty.clone(),
        vec![inv, exponent],
    ))
}

/// The negation of class `id` as a class: `x` for a `-x` in it, `|r|` for a negative
/// literal `r`.
fn negated(g: &mut Graph, id: Id) -> Option<Id> {
    if let Some(neg) = prim_in(g, id, Prim::Neg) {
        return neg.children.first().copied();
    }
    let r = lit_of(g, id)?;
    if r.is_negative() {
        let ty = ty_of(g, id)?;
        return Some(add_lit(g, -r, ty));
    }
    None
}

/// `(-a) + (-b)` as `-(a + b)`.
fn negation_out_of_sum(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::Add) {
        return None;
    }
    let parts: Vec<Id> = n
        .children
        .iter()
        .map(|&c| negated(g, c))
        .collect::<Option<_>>()?;
    let sum = add_prim(g, Prim::Add, n.ty.clone(), parts);
    Some(add_prim(g, Prim::Neg, n.ty.clone(), vec![sum]))
}

/// The factors of a summand: the operands of a product in its class, or itself.
fn factors_of(g: &Graph, id: Id) -> Vec<Id> {
    match prim_in(g, id, Prim::Mul) {
        Some(m) => m.children.iter().map(|&c| g.find(c)).collect(),
        None => vec![g.find(id)],
    }
}

/// `a·x + b·x` as `x · (a + b)`.
fn common_factor(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::Add) || n.children.len() < 2 {
        return None;
    }
    let mut rests: Vec<Vec<Id>> = n.children.iter().map(|&c| factors_of(g, c)).collect();
    let mut common: Vec<Id> = Vec::new();
    let candidates = rests.first()?.clone();
    for f in candidates {
        if rests.iter().all(|r| r.contains(&f)) {
            for r in &mut rests {
                if let Some(i) = r.iter().position(|&x| x == f) {
                    r.remove(i);
                }
            }
            common.push(f);
        }
    }
    if common.is_empty() {
        return None;
    }
    let ty = n.ty.clone();
    let mut summands = Vec::with_capacity(rests.len());
    for mut r in rests {
        let s = match r.len() {
            0 => add_lit(g, Rational::one(), ty.clone()),
            1 => r.remove(0),
            _ => add_prim(g, Prim::Mul, ty.clone(), r),
        };
        summands.push(s);
    }
    let sum = add_prim(g, Prim::Add, ty.clone(), summands);
    common.push(sum);
    Some(add_prim(g, Prim::Mul, ty, common))
}

/// The base of class `id` when it holds `a ^ 2`.
fn square_base(g: &Graph, id: Id) -> Option<Id> {
    g[id]
        .nodes
        .iter()
        .find_map(|n| match (&n.op, n.children.as_slice()) {
            (Op::Prim(Prim::Pow), [a, two])
                if lit_of(g, *two) == Some(Rational::from_integer(2)) =>
            {
                Some(g.find(*a))
            }
            _ => None,
        })
}

/// `±2` when class `id` holds the product `±2 · a · b` (or `-(±2 · a · b)`).
fn cross_term(g: &Graph, id: Id, a: Id, b: Id) -> Option<Rational> {
    if let Some(neg) = prim_in(g, id, Prim::Neg) {
        if let Some(r) = neg.children.first().and_then(|&c| cross_term(g, c, a, b)) {
            return Some(-r);
        }
    }
    let m = prim_in(g, id, Prim::Mul)?;
    if m.children.len() != 3 {
        return None;
    }
    let mut coef = None;
    let mut rest = Vec::new();
    for &c in &m.children {
        match lit_of(g, c) {
            Some(r) if coef.is_none() => coef = Some(r),
            _ => rest.push(g.find(c)),
        }
    }
    let coef = coef?;
    let two = Rational::from_integer(2);
    let pair = (rest == [a, b]) || (rest == [b, a]);
    (pair && (coef == two || coef == -two.clone())).then_some(coef)
}

/// `a ^ 2 ∓ 2·a·b + b ^ 2 + rest` as `(a ∓ b) ^ 2 + rest`.
fn perfect_square(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::Add) || n.children.len() < 3 {
        return None;
    }
    let kids = n.children.clone();
    let squares: Vec<(usize, Id)> = kids
        .iter()
        .enumerate()
        .filter_map(|(i, &c)| square_base(g, c).map(|a| (i, a)))
        .collect();
    for (x, &(i, a)) in squares.iter().enumerate() {
        for &(j, b) in &squares[x + 1..] {
            if a == b {
                continue;
            }
            let Some((k, coef)) = kids
                .iter()
                .enumerate()
                .find_map(|(k, &c)| cross_term(g, c, a, b).map(|r| (k, r)))
            else {
                continue;
            };
            if coef.is_negative() && !n.ty.is_ring() {
                continue;
            }
            let ty = n.ty.clone();
            let second = if coef.is_negative() {
                add_prim(g, Prim::Neg, ty.clone(), vec![b])
            } else {
                b
            };
            let sum = add_prim(g, Prim::Add, ty.clone(), vec![a, second]);
            let two = add_lit(g, Rational::from_integer(2), Type::Nat);
            let sq = add_prim(g, Prim::Pow, ty.clone(), vec![sum, two]);
            let mut rest: Vec<Id> = kids
                .iter()
                .enumerate()
                .filter(|&(m, _)| m != i && m != j && m != k)
                .map(|(_, &c)| c)
                .collect();
            if rest.is_empty() {
                return Some(sq);
            }
            rest.insert(0, sq);
            return Some(add_prim(g, Prim::Add, ty, rest));
        }
    }
    None
}

/// The `x` of a class holding `1 / x`: `recip(x)`, or the product `1 · recip(x)` that
/// canonical forms write for it in prob.
fn reciprocal_of(g: &Graph, id: Id) -> Option<Id> {
    if let Some(r) = prim_in(g, id, Prim::Recip) {
        return r.children.first().copied();
    }
    let m = prim_in(g, id, Prim::Mul)?;
    match m.children.as_slice() {
        [one, r] if lit_of(g, *one).is_some_and(|v| v.is_one()) => {
            prim_in(g, *r, Prim::Recip)?.children.first().copied()
        }
        _ => None,
    }
}

/// `sqrt(1 / x)` as `1 / sqrt(x)`, written `1 · recip(sqrt(x))` as canonical forms write
/// a reciprocal (a bare `recip` reads as a function call).
fn sqrt_of_reciprocal(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::Sqrt) {
        return None;
    }
    let inner = reciprocal_of(g, *n.children.first()?)?;
    let root = add_prim(g, Prim::Sqrt, n.ty.clone(), vec![inner]);
    let inv = add_prim(g, Prim::Recip, n.ty.clone(), vec![root]);
    let one = add_lit(g, Rational::one(), n.ty.clone());
    Some(add_prim(g, Prim::Mul, n.ty.clone(), vec![one, inv]))
}

/// `a · (b · c)` as `a · b · c` (only when a product operand's class holds a product).
fn flatten_product(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::Mul) {
        return None;
    }
    let mut out = Vec::new();
    let mut spliced = false;
    for &c in &n.children {
        match prim_in(g, c, Prim::Mul) {
            Some(m) if !spliced => {
                out.extend(m.children.iter().copied());
                spliced = true;
            }
            _ => out.push(c),
        }
    }
    spliced.then(|| add_prim(g, Prim::Mul, n.ty.clone(), out))
}

/// `1 · x · y · ...` as `x · y · ...`. Never down to one factor: `1 · recip(x)` is how
/// `1 / x` is written.
fn unit_factor(g: &mut Graph, n: &ENode) -> Option<Id> {
    if n.op != Op::Prim(Prim::Mul) || n.children.len() < 3 {
        return None;
    }
    let i = n
        .children
        .iter()
        .position(|&c| lit_of(g, c).is_some_and(|v| v.is_one()))?;
    let mut rest = n.children.clone();
    rest.remove(i);
    Some(add_prim(g, Prim::Mul, n.ty.clone(), rest))
}

#[cfg(test)]
mod tests;
