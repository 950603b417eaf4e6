//! Tables for canonical conditions and for deciding them, and the proptests: `decide`
//! never contradicts brute-force evaluation, `canonical` is idempotent and keeps meaning.

use crate::assume::{Context, Tri};
use crate::cond::{canonical, decide};
use crate::front;
use crate::print::print_term;
use crate::term::{Node, Store, TermId, VarId};

/// Loads `fn v1 T1: ... fn vk Tk: (e1, (e2, ... (en, ())))` and returns the variables
/// and the ei.
pub(crate) fn load_exprs(
    store: &mut Store,
    vars: &str,
    exprs: &[&str],
) -> (Vec<VarId>, Vec<TermId>) {
    let mut src = String::new();
    for v in vars.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        src.push_str(&format!("fn {v}: "));
    }
    for e in exprs {
        src.push_str(&format!("({e}, "));
    }
    src.push_str("()");
    src.push_str(&")".repeat(exprs.len()));
    let mut t = match front::load(store, &src) {
        Ok(t) => t,
        Err(e) => panic!("{src}: {}", e[0].message),
    };
    let mut vs = Vec::new();
    while let Node::Lam(v, b) = store.node(t) {
        vs.push(*v);
        t = *b;
    }
    let mut out = Vec::new();
    while let Node::Pair(a, b) = store.node(t) {
        out.push(*a);
        t = *b;
    }
    (vs, out)
}

/// The printed term without its trailing newline.
pub(crate) fn show(store: &Store, t: TermId) -> String {
    print_term(store, t).trim_end().to_string()
}

/// Builds a context from fact strings: `i: lo..hi` is a range, `!c` is "c is false",
/// anything else a condition known true. Returns the context, the variables and the
/// query terms.
pub(crate) fn setup(
    store: &mut Store,
    vars: &str,
    facts: &[&str],
    queries: &[&str],
) -> (Context, Vec<VarId>, Vec<TermId>) {
    let mut exprs: Vec<String> = Vec::new();
    let mut kinds = Vec::new();
    for f in facts {
        if let Some((v, range)) = f.split_once(": ") {
            let (lo, hi) = range.rsplit_once("..").expect("range lo..hi");
            exprs.push(v.to_string());
            exprs.push(lo.to_string());
            exprs.push(hi.to_string());
            kinds.push(0);
        } else if let Some(c) = f.strip_prefix('!') {
            exprs.push(c.to_string());
            kinds.push(1);
        } else {
            exprs.push(f.to_string());
            kinds.push(2);
        }
    }
    exprs.extend(queries.iter().map(|q| q.to_string()));
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    let (vs, terms) = load_exprs(store, vars, &refs);
    let mut ctx = Context::new();
    let mut i = 0;
    for k in kinds {
        match k {
            0 => {
                let Node::Var(v) = *store.node(terms[i]) else {
                    panic!("range of a non-variable")
                };
                ctx = ctx.enter_loop(v, terms[i + 1], terms[i + 2]);
                i += 3;
            }
            k => {
                ctx = ctx.enter_branch(terms[i], k == 2);
                i += 1;
            }
        }
    }
    (ctx, vs, terms[i..].to_vec())
}

/// `t` (with free variables `vars`) prints as text that parses back to the same term.
pub(crate) fn round_trips(store: &mut Store, vars: &[VarId], t: TermId) -> Result<(), String> {
    let mut closed = t;
    for &v in vars.iter().rev() {
        let ty = crate::types::Type::fun(store.var_type(v).clone(), store.ty(closed).clone());
        closed = store.intern(Node::Lam(v, closed), ty);
    }
    let text = print_term(store, closed);
    match front::load(store, &text) {
        Ok(back) if crate::alpha::alpha_eq(store, back, closed) => Ok(()),
        Ok(back) => Err(format!("{text} parses back as {}", print_term(store, back))),
        Err(e) => Err(format!("{text} does not parse: {}", e[0].message)),
    }
}

/// Canonical form of `cond` (with `vars` in scope, no facts) printed, and idempotence.
fn check_cond(vars: &str, cond: &str, want: &str) -> Option<String> {
    let mut s = Store::new();
    let (ctx, vs, q) = setup(&mut s, vars, &[], &[cond]);
    let c = canonical(&mut s, &ctx, q[0]);
    let got = show(&s, c);
    let again = canonical(&mut s, &ctx, c);
    if again != c {
        return Some(format!(
            "{cond}: not idempotent: {got} then {}",
            show(&s, again)
        ));
    }
    if let Err(e) = crate::verify::verify(&s, c) {
        return Some(format!("{cond}: ill-typed result {got}: {e:?}"));
    }
    if let Err(e) = round_trips(&mut s, &vs, c) {
        return Some(format!("{cond}: {e}"));
    }
    (got != want).then(|| format!("{cond}\n    want {want}\n    got  {got}"))
}

#[rustfmt::skip]
const CANONICAL: &[(&str, &str, &str)] = &[
    ("i nat, n nat", "i < n", "i + 1 <= n"),
    ("i nat, n nat", "i < n && not(n <= i)", "i + 1 <= n"),
    ("i nat, n nat", "n > i", "i + 1 <= n"),
    ("i nat, n nat", "not(i < n)", "n <= i"),
    ("i nat, n nat", "not(not(i <= n))", "i <= n"),
    ("i nat, n nat", "i == n", "i == n"),
    ("i nat, n nat", "n == i", "i == n"),
    ("i nat, n nat", "not(i == n)", "i /= n"),
    ("i nat, n nat", "i /= n", "i /= n"),
    ("i nat, n nat", "i + 1 == n", "i + 1 == n"),
    ("i nat, n nat", "i == n - 1", "i + 1 == n"),
    ("i int, j int", "i - j < 3", "i <= j + 2"),
    ("i int, j int", "2*i < 2*j", "i + 1 <= j"),
    ("i int", "2*i <= 3", "i <= 1"),
    ("i int", "2*i == 3", "false"),
    ("i int", "2*i /= 3", "true"),
    ("i int", "-i < 0", "1 <= i"),
    ("i int, j int", "3 - i >= j", "i + j <= 3"),
    ("x real, y real", "x < y", "x < y"),
    ("x real, y real", "not(x < y)", "y <= x"),
    ("x real, y real", "x/2 <= y/3", "3 * x <= 2 * y"),
    ("x real", "x < 1/2", "x < 1/2"),
    ("x real", "2*x < 1", "x < 1/2"),
    ("x real, n nat", "n < x", "n < x"),
    ("n nat", "nat2real(n) < 3/2", "n <= 1"),
    ("p prob, q prob", "p < q", "p < q"),
    ("p prob, x real", "p < x", "p < x"),
    ("x real", "x < x + 1", "true"),
    ("x real", "1 < 2", "true"),
    ("x real", "x + 1 == 1 + x", "true"),
    ("a bool, b bool", "a && b && a", "a && b"),
    ("a bool, b bool", "b && a", "a && b"),
    ("a bool, b bool", "a || (b || a)", "a || b"),
    ("a bool", "a && false", "false"),
    ("a bool", "a || false", "a"),
    ("a bool", "a && not(a)", "false"),
    ("a bool", "a || not(a)", "true"),
    ("a bool, b bool", "not(a && b)", "not(a) || not(b)"),
    ("a bool, b bool", "not(a || not(b))", "b && not(a)"),
    ("a bool, b bool", "impl(a, b)", "b || not(a)"),
    ("a bool, b bool", "xor(a, b)", "a /= b"),
    ("a bool, b bool", "iff(b, a)", "a == b"),
    ("a bool", "a == true", "a"),
    ("a bool", "a == false", "not(a)"),
    ("a bool, b bool, c bool", "if a: b else: false", "a && b"),
    ("a bool, b bool", "if a: true else: false", "a"),
    ("x real, b bool", "if not(b): x < 0 else: x > 0", "if b: 0 < x else: x < 0"),
    ("i nat, y array(nat)", "i == y[i]", "i == y[i]"),
    ("i nat, y array(nat), j nat", "y[j] == i", "i == y[j]"),
    ("x real, y real", "x * y < 1", "x * y < 1"),
    ("x real", "x < ∞", "x < ∞"),
    ("x real", "x + ∞ < ∞ + 1", "x + ∞ < ∞ + 1"),
    ("i nat, n nat, x real", "(i < n || x < 0) && i < n", "i + 1 <= n"),
];

#[test]
fn canonical_conditions() {
    let bad: Vec<String> = CANONICAL
        .iter()
        .filter_map(|(v, c, w)| check_cond(v, c, w))
        .collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

fn check_decide(vars: &str, facts: &[&str], cond: &str, want: Tri) -> Option<String> {
    let mut s = Store::new();
    let (ctx, _, q) = setup(&mut s, vars, facts, &[cond]);
    let got = decide(&mut s, &ctx, q[0]);
    (got != want).then(|| format!("{facts:?} |- {cond}: want {want:?}, got {got:?}"))
}

#[rustfmt::skip]
const DECIDE: &[(&str, &[&str], &str, Tri)] = &[
    ("i nat, n nat", &["i: 0..n"], "i < n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i == n", Tri::False),
    ("i nat, n nat", &["i: 0..n"], "n <= i", Tri::False),
    ("i nat, n nat", &["i: 0..n"], "i <= n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i + 1 <= n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i < n - 1", Tri::Unknown),
    ("i nat, n nat", &["i: 0..n"], "0 < n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i /= n", Tri::True),
    ("i nat, n nat", &["i: 0..n"], "i + 2 <= n", Tri::Unknown),
    ("i nat, n nat", &[], "0 <= i", Tri::True),
    ("i nat, n nat", &[], "i < 0", Tri::False),
    ("i int", &[], "0 <= i", Tri::Unknown),
    ("i nat", &[], "-1 < i", Tri::True),
    ("p prob", &[], "0 <= p", Tri::True),
    ("p prob", &[], "p < 0", Tri::False),
    ("p prob", &[], "0 < p", Tri::Unknown),
    ("i nat", &["i: 2..10"], "i < 10 && 1 < i", Tri::True),
    ("i nat", &["i: 2..10"], "i == 12", Tri::False),
    ("i nat", &["i: 2..10"], "i <= 8", Tri::Unknown),
    ("i nat", &["i: 2..10"], "i == 5", Tri::Unknown),
    ("i nat", &["i: 2..3"], "i == 2", Tri::True),
    ("i int, j int", &["i: j..j+3"], "i < j + 3", Tri::True),
    ("i int, j int", &["i: j..j+3"], "j - 1 < i", Tri::True),
    ("i int, j int", &["i: j..j+3"], "i == j + 3", Tri::False),
    ("i nat, k nat", &["i == k"], "i < k + 1", Tri::True),
    ("i nat, k nat", &["i == k"], "k <= i", Tri::True),
    ("i nat, k nat", &["i == k"], "i /= k", Tri::False),
    ("i nat, k nat", &["i == k"], "i + 1 == k", Tri::False),
    ("i nat, k nat", &["!(i == k)"], "i == k", Tri::False),
    ("i nat, k nat", &["!(i == k)"], "k /= i", Tri::True),
    ("x real", &["x > 0"], "x < 0", Tri::False),
    ("x real", &["x > 0"], "0 <= x", Tri::True),
    ("x real", &["x > 0"], "0 < x", Tri::True),
    ("x real", &["x > 0"], "x == 0", Tri::False),
    ("x real", &["x >= 0"], "0 < x", Tri::Unknown),
    ("x real", &["x >= 0"], "x < 0", Tri::False),
    ("x real", &["x <= 3"], "x < 3", Tri::Unknown),
    ("x real", &["x <= 3"], "x < 4", Tri::True),
    ("x real, y real", &["x < y"], "y <= x", Tri::False),
    ("x real, y real", &["x < y"], "x < y + 1", Tri::True),
    ("x real, y real", &["x < y"], "x <= y", Tri::True),
    ("x real, y real", &["x < y"], "x == y", Tri::False),
    ("x real, y real", &["!(x < y)"], "x < y || y < x", Tri::Unknown),
    ("a bool, b bool", &["a"], "a || b", Tri::True),
    ("a bool, b bool", &["a"], "not(a) && b", Tri::False),
    ("a bool, b bool", &["!a"], "a", Tri::False),
    ("a bool, b bool", &["a && b"], "b", Tri::True),
    ("a bool, b bool", &["!(a || b)"], "b", Tri::False),
    ("a bool, b bool", &["a || b"], "b || a", Tri::True),
    ("i nat, n nat, m nat", &["i: 0..n", "n <= 10"], "i <= 9", Tri::True),
    ("i nat, n nat, m nat", &["i: 0..n", "n <= m"], "i < m", Tri::Unknown),
    ("i nat, n nat, x real", &["i: 0..n"], "if i < n: x < x + 1 else: false", Tri::True),
    ("x real, y array(real)", &["y[0] < x"], "x <= y[0]", Tri::False),
    ("i nat", &["i < 0"], "i == 5", Tri::Unknown),
    ("x real, y real", &["x * y > 1"], "0 < x * y", Tri::True),
    // a plate of `int2nat(n - 1)` elements: its index is below n - 1
    ("i nat, n nat", &["i: 0..int2nat(n - 1)"], "i + 1 == n", Tri::False),
    ("i nat, n nat", &["i: 0..int2nat(n - 1)"], "i + 1 < n", Tri::True),
    // issue 10: a sum of squares is never negative (a regression slope's precision
    // `1 + Σ x[j]^2`); an odd power or a plain sum of reals is not known
    ("x array(real), n nat", &[], "0 < 1 + summate j from 0 to n: x[j] ^ 2", Tri::True),
    ("x array(real), n nat", &[], "(summate j from 0 to n: x[j] ^ 4) < 0", Tri::False),
    ("x array(real), n nat", &[], "0 <= summate j from 0 to n: x[j] ^ 3", Tri::Unknown),
    ("x array(real), n nat", &[], "0 <= summate j from 0 to n: x[j]", Tri::Unknown),
];

#[test]
fn decide_table() {
    let bad: Vec<String> = DECIDE
        .iter()
        .filter_map(|(v, f, c, w)| check_decide(v, f, c, *w))
        .collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// A small evaluator for the proptests: numbers are exact rationals, variables come from
/// `env`; `None` for anything it does not handle.
pub(crate) mod oracle {
    use crate::num::Rational;
    use crate::term::{Node, Prim, Store, TermId, VarId};
    use crate::types::Coercion;

    #[derive(Clone, Debug, PartialEq)]
    pub enum Val {
        Num(Rational),
        Bool(bool),
    }

    pub fn eval(s: &Store, t: TermId, env: &dyn Fn(VarId) -> Option<Rational>) -> Option<Val> {
        let num = |x: TermId| match eval(s, x, env)? {
            Val::Num(q) => Some(q),
            Val::Bool(_) => None,
        };
        let boolean = |x: TermId| match eval(s, x, env)? {
            Val::Bool(b) => Some(b),
            Val::Num(_) => None,
        };
        Some(match s.node(t) {
            Node::Var(v) => Val::Num(env(*v)?),
            Node::Lit(q) => Val::Num(q.clone()),
            Node::Bool(b) => Val::Bool(*b),
            Node::Coerce(c, x) => {
                let v = num(*x)?;
                Val::Num(match c {
                    Coercion::Real2Int => v.floor(),
                    Coercion::Int2Nat | Coercion::Real2Prob if v.is_negative() => return None,
                    _ => v,
                })
            }
            Node::If(c, a, b) => {
                if boolean(*c)? {
                    eval(s, *a, env)?
                } else {
                    eval(s, *b, env)?
                }
            }
            Node::Prim(p, xs) => match p {
                Prim::Add => Val::Num(
                    xs.iter()
                        .try_fold(Rational::zero(), |acc, &x| Some(acc + num(x)?))?,
                ),
                Prim::Mul => Val::Num(
                    xs.iter()
                        .try_fold(Rational::one(), |acc, &x| Some(acc * num(x)?))?,
                ),
                Prim::Neg => Val::Num(-num(xs[0])?),
                Prim::Recip => Val::Num(num(xs[0])?.recip()?),
                Prim::Lt => Val::Bool(num(xs[0])? < num(xs[1])?),
                Prim::Le => Val::Bool(num(xs[0])? <= num(xs[1])?),
                Prim::Eq | Prim::Ne => {
                    let eq = eval(s, xs[0], env)? == eval(s, xs[1], env)?;
                    Val::Bool(eq == (*p == Prim::Eq))
                }
                Prim::And => Val::Bool(
                    xs.iter()
                        .try_fold(true, |acc, &x| Some(acc & boolean(x)?))?,
                ),
                Prim::Or => Val::Bool(
                    xs.iter()
                        .try_fold(false, |acc, &x| Some(acc | boolean(x)?))?,
                ),
                Prim::Not => Val::Bool(!boolean(xs[0])?),
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// Random linear conditions as text, from a seed (a tiny xorshift generator).
pub(crate) struct Gen(pub(crate) u64);

impl Gen {
    pub(crate) fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    pub(crate) fn linear(&mut self, atoms: &[&str]) -> String {
        let mut s = format!("{}", self.next(7) as i64 - 3);
        for _ in 0..self.next(3) + 1 {
            let a = atoms[self.next(atoms.len() as u64) as usize];
            let c = self.next(3) + 1;
            let sign = if self.next(2) == 0 { "+" } else { "-" };
            s = format!("{s} {sign} {c}*{a}");
        }
        s
    }

    pub(crate) fn cond(&mut self, atoms: &[&str], depth: u32) -> String {
        let k = if depth == 0 { 0 } else { self.next(5) };
        match k {
            0 | 1 => {
                let ops = ["<", "<=", "==", "/=", ">", ">="];
                let op = ops[self.next(6) as usize];
                format!("{} {op} {}", self.linear(atoms), self.linear(atoms))
            }
            2 => format!("not({})", self.cond(atoms, depth - 1)),
            3 => format!(
                "({} && {})",
                self.cond(atoms, depth - 1),
                self.cond(atoms, depth - 1)
            ),
            _ => format!(
                "({} || {})",
                self.cond(atoms, depth - 1),
                self.cond(atoms, depth - 1)
            ),
        }
    }
}

const PVARS: &str = "i nat, j nat, k int, x real";
const ATOMS: &[&str] = &["i", "j", "k", "x", "i*j"];
const INT_ATOMS: &[&str] = &["i", "j", "k"];

/// Every assignment of the proptest variables in a small box: i, j in 0..5, k in -2..3,
/// x in {-1, 0, 1/2, 1}.
fn assignments() -> Vec<[Rational; 4]> {
    let mut out = Vec::new();
    let r = Rational::from_integer;
    for i in 0..5 {
        for j in 0..5 {
            for k in -2..3 {
                for x2 in [-2, 0, 1, 2] {
                    let x = Rational::new(num_rational::BigRational::new(x2.into(), 2.into()));
                    out.push([r(i), r(j), r(k), x]);
                }
            }
        }
    }
    out
}

use crate::num::Rational;

/// A random context: facts as `setup` strings.
fn random_facts(g: &mut Gen) -> Vec<String> {
    let mut facts = Vec::new();
    for n in 0..g.next(3) + 1 {
        match if n == 0 { 0 } else { g.next(3) } {
            0 => {
                let nat_bound = |g: &mut Gen| match g.next(3) {
                    0 => format!("{}", g.next(4)),
                    1 => "j".to_string(),
                    _ => format!("j + {}", g.next(3)),
                };
                let lo = nat_bound(g);
                let hi = nat_bound(g);
                facts.push(format!("i: {lo}..{hi}"));
            }
            1 => facts.push(format!("!{}", g.cond(ATOMS, 1))),
            _ => facts.push(g.cond(ATOMS, 1)),
        }
    }
    facts
}

/// Runs one random case: decide never contradicts the box, canonical keeps meaning in
/// the box and is idempotent. `Err` describes a failure.
fn random_case(seed: u64) -> Result<Tri, String> {
    let mut g = Gen(seed | 1);
    let facts = random_facts(&mut g);
    let atoms = if g.next(2) == 0 { INT_ATOMS } else { ATOMS };
    let query = if g.next(2) == 0 {
        g.cond(atoms, 2)
    } else {
        // a comparison on the range variables, which ranges and facts often decide
        let ops = ["<", "<=", "==", "/=", ">", ">="];
        let op = ops[g.next(6) as usize];
        let rhs = ["j", "k", "0", "3"][g.next(4) as usize];
        format!("i {op} {rhs} + {}", g.next(3))
    };
    let fact_refs: Vec<&str> = facts.iter().map(String::as_str).collect();
    let mut s = Store::new();
    let (ctx, vars, q) = setup(&mut s, PVARS, &fact_refs, &[&query]);
    let q = q[0];
    let decided = decide(&mut s, &ctx, q);
    let canon = canonical(&mut s, &ctx, q);
    let plain = canonical(&mut s, &Context::new(), q);
    if canonical(&mut s, &ctx, canon) != canon || canonical(&mut s, &Context::new(), plain) != plain
    {
        return Err(format!("not idempotent: {query}"));
    }
    for t in [plain, canon] {
        crate::verify::verify(&s, t).map_err(|e| format!("{query}: ill-typed: {e:?}"))?;
        round_trips(&mut s, &vars, t)?;
    }
    for a in assignments() {
        let env = |v: VarId| vars.iter().position(|&w| w == v).map(|p| a[p].clone());
        let holds = |t: TermId| match oracle::eval(&s, t, &env) {
            Some(oracle::Val::Bool(b)) => Some(b),
            _ => None,
        };
        let mut consistent = true;
        for f in ctx.facts() {
            let ok = match f {
                crate::assume::Fact::Range { var, lo, hi } => {
                    let v = env(*var);
                    let lo = oracle::eval(&s, *lo, &env);
                    let hi = oracle::eval(&s, *hi, &env);
                    match (v, lo, hi) {
                        (Some(v), Some(oracle::Val::Num(lo)), Some(oracle::Val::Num(hi))) => {
                            lo <= v && v < hi
                        }
                        _ => return Err(format!("cannot evaluate a range in {facts:?}")),
                    }
                }
                crate::assume::Fact::Holds { cond, value } => {
                    holds(*cond).ok_or("cannot evaluate a fact")? == *value
                }
            };
            consistent &= ok;
        }
        let want = holds(q).ok_or("cannot evaluate the query")?;
        if holds(plain) != Some(want) {
            return Err(format!(
                "canonical changed meaning: {query} -> {} at {a:?}",
                show(&s, plain)
            ));
        }
        if !consistent {
            continue;
        }
        if holds(canon) != Some(want) {
            return Err(format!(
                "canonical under {facts:?} changed meaning: {query} -> {} at {a:?}",
                show(&s, canon)
            ));
        }
        let wrong = match decided {
            Tri::True => !want,
            Tri::False => want,
            Tri::Unknown => false,
        };
        if wrong {
            return Err(format!(
                "{facts:?} |- {query}: decided {decided:?}, but at {a:?} it is {want}"
            ));
        }
    }
    Ok(decided)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    #[test]
    fn decide_never_contradicts_brute_force(seed in proptest::prelude::any::<u64>()) {
        random_case(seed).map_err(proptest::test_runner::TestCaseError::fail)?;
    }
}

/// The proptest is only as strong as the share of cases `decide` settles: keep it up.
#[test]
fn random_cases_are_often_decided() {
    let mut decided = 0;
    for seed in 0..100u64 {
        match random_case(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)) {
            Ok(Tri::Unknown) => {}
            Ok(_) => decided += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(decided >= 20, "only {decided} of 100 random cases decided");
}

/// Deep terms do not overflow the stack, shared subterms are not walked once per path.
#[test]
fn deep_and_shared_terms() {
    use crate::term::Prim;
    use crate::types::Type;
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Int);
    let b = s.fresh_var("b", Type::Bool);
    let xt = s.var_term(x);
    let bt = s.var_term(b);
    // 2^200 x through a doubling DAG
    let mut d = xt;
    for _ in 0..200 {
        d = s.prim(Prim::Add, vec![d, d], Type::Int);
    }
    let zero = s.int_lit(0, Type::Int);
    let c = s.prim(Prim::Le, vec![d, zero], Type::Bool);
    let r = canonical(&mut s, &Context::new(), c);
    assert_eq!(show(&s, r), "x <= 0");
    // bool DAG: c_{k+1} = c_k && (c_k || b)
    let mut e = bt;
    for _ in 0..200 {
        let o = s.prim(Prim::Or, vec![e, bt], Type::Bool);
        e = s.prim(Prim::And, vec![e, o], Type::Bool);
    }
    let r = canonical(&mut s, &Context::new(), e);
    assert_eq!(show(&s, r), "b");
    // 100,000 nested negations
    let mut n = xt;
    for _ in 0..100_000 {
        n = s.prim(Prim::Neg, vec![n], Type::Int);
    }
    let c = s.prim(Prim::Lt, vec![n, zero], Type::Bool);
    let r = canonical(&mut s, &Context::new(), c);
    assert_eq!(show(&s, r), "x + 1 <= 0"); // an even number of negations
    let mut nb = bt;
    for _ in 0..100_000 {
        nb = s.prim(Prim::Not, vec![nb], Type::Bool);
    }
    let r = canonical(&mut s, &Context::new(), nb);
    assert_eq!(show(&s, r), "b");
}
