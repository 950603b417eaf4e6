//! Products of powers with each base written once (issue 13: kernel speed). The GMM's
//! class weight reads the predictive variance as `recip(sqrt(2 s² π / (s² n + 1))) ·
//! sqrt(2 s² π / (s² (n + 1) + 1))`, one `let` per operation. In log space each sum costs
//! a `log`, though the value is `sqrt((s² n + 1) / (s² (n + 1) + 1))`: one quotient,
//! which `linear.rs` computes in linear space with one `log`.
//!
//! [`gather_monomials`] reads each `prob` `let` built by `*`, `recip`, `sqrt` and `^` (a
//! natural literal) from literals, `pi` and names as a monomial: a product of bases raised
//! to rational exponents, the names bound to such products read through their own. Where
//! the monomial has at least two bases that are sums, the same power `e ∈ {1/2, 1}` of
//! each (up to sign), and the `let` is not already written so, it becomes
//! `let x_ratio = N · recip(D)` (the bases with exponent `+e`, then with `-e`) and
//! `let x = K · sqrt(x_ratio)` (or `K · x_ratio`), `K` the literals and `pi` left over
//! (nothing, when they cancel). The intermediate `let`s nothing reads any more are then
//! removed (`crate::dce`).
//!
//! Exactness: over the positive reals, `(a^r)^s = a^(rs)`, `a^r a^s = a^(r+s)` and the
//! factors commute, so the value is the same up to rounding. Zero and infinity break
//! those laws (`a · recip(a)` is `0 · ∞ = 0` at `a = 0`, not 1), so every base must be
//! positive and finite, which is shown, not assumed:
//! - a `prob` literal other than zero, with `|ln p| <= 10^6`, and `pi`;
//! - a name bound once by `let` to a sum of terms that are finite and non-negative
//!   (literals, `pi`, `nat2prob` of a natural, and sums and products of those), at least
//!   one of them positive by the rule above: a value at least that term, and at most a
//!   bounded sum of bounded terms.
//!
//! Nothing here can fail (the operations are total in log space), so no error moves.

use std::collections::{BTreeMap, HashMap, HashSet};

use slic_algebra::{Coercion, Prim, Rational, Type};

use crate::dce::eliminate;
use crate::ir::walk::{each_block_mut, fresh_name, visit_decls};
use crate::ir::{Expr, Lit, Program, Stmt};

/// The largest `|ln p|` of a literal base (far from any overflow of sums of a few).
const LOG_LIMIT: f64 = 1e6;

/// A base of a monomial.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Base {
    /// A name bound to a positive, finite value that is no monomial (a sum).
    Name(String),
    /// A prob literal, by the bits of its logarithm.
    Lit(u64),
    Pi,
}

/// A product of bases raised to rational exponents (none zero).
type Mono = BTreeMap<Base, Rational>;

/// `p` with its products of powers of sums written as one quotient (see the module
/// documentation).
pub(crate) fn gather_monomials(p: &Program) -> Program {
    let mut count: HashMap<String, usize> = HashMap::new();
    for (x, _) in &p.params {
        *count.entry(x.clone()).or_default() += 1;
    }
    visit_decls(&p.body, &mut |x| {
        *count.entry(x.to_string()).or_default() += 1
    });
    let mut cx = Cx {
        once: count
            .iter()
            .filter(|(_, &n)| n == 1)
            .map(|(x, _)| x.clone())
            .collect(),
        taken: count.into_keys().collect(),
        ..Cx::default()
    };
    let mut body = p.body.clone();
    cx.block(&mut body);
    if !cx.changed {
        return p.clone();
    }
    eliminate(&p.with_body(body)).program
}

#[derive(Default)]
struct Cx {
    /// Names declared once in the program (the only ones read through their values).
    once: HashSet<String>,
    /// Every name declared, and the ones made here.
    taken: HashSet<String>,
    /// Names bound to finite, non-negative values; `true` where also positive.
    finite: HashMap<String, bool>,
    /// Names bound to monomials.
    monos: HashMap<String, Mono>,
    changed: bool,
}

impl Cx {
    fn block(&mut self, b: &mut Vec<Stmt>) {
        let mut out = Vec::with_capacity(b.len());
        for mut s in std::mem::take(b) {
            match &s {
                Stmt::Let { name, ty, value } if *ty == Type::Prob && self.once.contains(name) => {
                    if let Some(pos) = self.sign(value) {
                        self.finite.insert(name.clone(), pos);
                    }
                    if let Some(m) = self.mono(value) {
                        if let Some(lets) = self.rewrite(name, value, &m) {
                            self.changed = true;
                            out.extend(lets);
                            self.monos.insert(name.clone(), m);
                            continue;
                        }
                        self.monos.insert(name.clone(), m);
                    }
                }
                _ => {}
            }
            each_block_mut(&mut s, &mut |b| self.block(b));
            out.push(s);
        }
        *b = out;
    }

    /// `Some(positive)` where `e` is finite and non-negative (see the module doc).
    fn sign(&self, e: &Expr) -> Option<bool> {
        match e {
            Expr::Lit(Lit::Prob(l)) => {
                if *l == f64::NEG_INFINITY {
                    Some(false)
                } else {
                    (l.abs() <= LOG_LIMIT).then_some(true)
                }
            }
            Expr::Prim(Prim::Pi, args) if args.is_empty() => Some(true),
            Expr::Var(x) => self.finite.get(x).copied(),
            // a natural: below 2^64
            Expr::Convert(Coercion::Nat2Prob, _) => Some(false),
            Expr::Prim(Prim::Add, args) => {
                let signs: Option<Vec<bool>> = args.iter().map(|a| self.sign(a)).collect();
                Some(signs?.into_iter().any(|p| p))
            }
            Expr::Prim(Prim::Mul, args) => {
                let signs: Option<Vec<bool>> = args.iter().map(|a| self.sign(a)).collect();
                Some(signs?.into_iter().all(|p| p))
            }
            _ => None,
        }
    }

    /// `e` as a monomial over positive, finite bases, if it is one.
    fn mono(&self, e: &Expr) -> Option<Mono> {
        let one = |b: Base| Some(Mono::from([(b, Rational::one())]));
        match e {
            Expr::Lit(Lit::Prob(l)) if l.is_finite() && l.abs() <= LOG_LIMIT => {
                one(Base::Lit(l.to_bits()))
            }
            Expr::Prim(Prim::Pi, args) if args.is_empty() => one(Base::Pi),
            Expr::Var(x) => match self.monos.get(x) {
                Some(m) => Some(m.clone()),
                None if self.finite.get(x) == Some(&true) => one(Base::Name(x.clone())),
                None => None,
            },
            Expr::Prim(Prim::Mul, args) => {
                let mut m = Mono::new();
                for a in args {
                    for (b, r) in self.mono(a)? {
                        let sum = m.get(&b).map_or(r.clone(), |s| s + &r);
                        if sum.is_zero() {
                            m.remove(&b);
                        } else {
                            m.insert(b, sum);
                        }
                    }
                }
                Some(m)
            }
            Expr::Prim(Prim::Recip, args) => match args.as_slice() {
                [a] => Some(scaled(self.mono(a)?, &Rational::from_integer(-1))),
                _ => None,
            },
            Expr::Prim(Prim::Sqrt, args) => match args.as_slice() {
                [a] => Some(scaled(self.mono(a)?, &Rational::ratio(1, 2)?)),
                _ => None,
            },
            Expr::Prim(Prim::Pow, args) => match args.as_slice() {
                [a, Expr::Lit(Lit::Nat(n))] if *n > 0 => {
                    let n = i64::try_from(*n).ok()?;
                    Some(scaled(self.mono(a)?, &Rational::from_integer(n)))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The `let`s that write `name`'s monomial `m` as one quotient, where that is worth
    /// it and differs from `value`.
    fn rewrite(&mut self, name: &str, value: &Expr, m: &Mono) -> Option<Vec<Stmt>> {
        let sums: Vec<(&String, &Rational)> = m
            .iter()
            .filter_map(|(b, r)| match b {
                Base::Name(x) => Some((x, r)),
                _ => None,
            })
            .collect();
        if sums.len() < 2 {
            return None;
        }
        let e = sums[0].1.abs();
        if sums.iter().any(|(_, r)| r.abs() != e) {
            return None;
        }
        let half = Rational::ratio(1, 2)?;
        if e != half && !e.is_one() {
            return None;
        }
        let (num, den): (Vec<_>, Vec<_>) = sums.iter().partition(|(_, r)| r.is_positive());
        let var = |(x, _): &(&String, &Rational)| Expr::var(x);
        let mut ratio: Vec<Expr> = num.iter().map(var).collect();
        let den: Vec<Expr> = den.iter().map(var).collect();
        if !den.is_empty() {
            let d = if den.len() == 1 {
                den[0].clone()
            } else {
                Expr::prim(Prim::Mul, den)
            };
            ratio.push(Expr::prim(Prim::Recip, vec![d]));
        }
        let ratio = product(ratio);
        let mut factors = Vec::new();
        for (b, r) in m {
            let base = match b {
                Base::Name(_) => continue,
                Base::Lit(bits) => Expr::Lit(Lit::Prob(f64::from_bits(*bits))),
                Base::Pi => Expr::prim(Prim::Pi, Vec::new()),
            };
            factors.push(power(base, r)?);
        }
        if e.is_one() {
            factors.push(ratio);
            let v = product(factors);
            return (v != *value).then(|| vec![Stmt::let_(name, Type::Prob, v)]);
        }
        let q = self.fresh(&format!("{name}_ratio"));
        factors.push(Expr::prim(Prim::Sqrt, vec![Expr::var(&q)]));
        Some(vec![
            Stmt::let_(&q, Type::Prob, ratio),
            Stmt::let_(name, Type::Prob, product(factors)),
        ])
    }

    fn fresh(&mut self, base: &str) -> String {
        fresh_name(&mut self.taken, base)
    }
}

/// `m` with every exponent times `k`.
fn scaled(m: Mono, k: &Rational) -> Mono {
    m.into_iter().map(|(b, r)| (b, &r * k)).collect()
}

/// The product of `factors` (one factor is itself; none is 1).
fn product(mut factors: Vec<Expr>) -> Expr {
    match factors.len() {
        0 => Expr::prob(1.0),
        1 => factors.remove(0),
        _ => Expr::prim(Prim::Mul, factors),
    }
}

/// `base ^ r` for `r` an integer or half an integer, else `None`.
fn power(base: Expr, r: &Rational) -> Option<Expr> {
    let (n, d) = r.to_small()?;
    if d != 1 && d != 2 {
        return None;
    }
    let base = if n < 0 {
        Expr::prim(Prim::Recip, vec![base])
    } else {
        base
    };
    let k = n.unsigned_abs();
    let powered = if k == 1 {
        base
    } else {
        Expr::prim(Prim::Pow, vec![base, Expr::nat(k)])
    };
    Some(if d == 2 {
        Expr::prim(Prim::Sqrt, vec![powered])
    } else {
        powered
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Val;
    use proptest::prelude::*;

    fn nat2prob(x: &str) -> Expr {
        Expr::Convert(Coercion::Nat2Prob, Box::new(Expr::var(x)))
    }

    /// The GMM's shape: `a = c n + 1`, `b = c (n + 1) + 1`, and
    /// `recip(sqrt(2 c pi / a)) · sqrt(2 c pi / b)` one operation per `let`.
    fn gmm(c: f64) -> Program {
        let lit = |p: f64| Expr::prob(p);
        let pi = || Expr::prim(Prim::Pi, Vec::new());
        let k = || Expr::prim(Prim::Mul, vec![lit(2.0), lit(c), pi()]);
        let recip = |x: &str| Expr::prim(Prim::Recip, vec![Expr::var(x)]);
        let sqrt = |e: Expr| Expr::prim(Prim::Sqrt, vec![e]);
        let body = vec![
            Stmt::let_(
                "m",
                Type::Nat,
                Expr::prim(Prim::Add, vec![Expr::var("n"), Expr::nat(1)]),
            ),
            Stmt::let_(
                "a",
                Type::Prob,
                Expr::prim(
                    Prim::Add,
                    vec![Expr::prim(Prim::Mul, vec![lit(c), nat2prob("n")]), lit(1.0)],
                ),
            ),
            Stmt::let_(
                "b",
                Type::Prob,
                Expr::prim(
                    Prim::Add,
                    vec![Expr::prim(Prim::Mul, vec![lit(c), nat2prob("m")]), lit(1.0)],
                ),
            ),
            Stmt::let_("ra", Type::Prob, recip("a")),
            Stmt::let_(
                "ka",
                Type::Prob,
                Expr::prim(Prim::Mul, vec![k(), Expr::var("ra")]),
            ),
            Stmt::let_("sa", Type::Prob, sqrt(Expr::var("ka"))),
            Stmt::let_("ia", Type::Prob, recip("sa")),
            Stmt::let_("rb", Type::Prob, recip("b")),
            Stmt::let_(
                "kb",
                Type::Prob,
                Expr::prim(Prim::Mul, vec![k(), Expr::var("rb")]),
            ),
            Stmt::let_("sb", Type::Prob, sqrt(Expr::var("kb"))),
            Stmt::let_(
                "w",
                Type::Prob,
                Expr::prim(Prim::Mul, vec![Expr::var("ia"), Expr::var("sb")]),
            ),
        ];
        Program {
            params: vec![("n".into(), Type::Nat)],
            body,
            result: Expr::var("w"),
            measure: false,
            inout: Vec::new(),
        }
    }

    fn value(p: &Program, n: u64) -> f64 {
        match crate::run(p, &[Val::Nat(n)]).map(|r| r.0) {
            Ok(Val::Prob(l)) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_gmm_variance_ratio_becomes_one_quotient() {
        let p = gmm(20833.3);
        let q = gather_monomials(&p);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(
            text.contains("let w_ratio: prob = (a * recip(b))"),
            "{text}"
        );
        assert!(text.contains("let w: prob = sqrt(w_ratio)"), "{text}");
        assert!(!text.contains("let ka"), "the intermediates go: {text}");
    }

    #[test]
    fn a_product_of_names_not_shown_positive_stays() {
        // `a` a parameter: it may be 0, where `a · recip(a)` is not 1
        let p = Program {
            params: vec![("a".into(), Type::Prob), ("b".into(), Type::Prob)],
            body: vec![Stmt::let_(
                "w",
                Type::Prob,
                Expr::prim(
                    Prim::Mul,
                    vec![
                        Expr::prim(Prim::Sqrt, vec![Expr::var("a")]),
                        Expr::prim(Prim::Recip, vec![Expr::var("b")]),
                    ],
                ),
            )],
            result: Expr::var("w"),
            measure: false,
            inout: Vec::new(),
        };
        assert_eq!(gather_monomials(&p), p);
    }

    proptest! {
        /// The quotient means what the chain of `let`s meant, to rounding.
        #[test]
        fn the_quotient_keeps_the_value(n in 0u64..1_000_000, c in 1e-3f64..1e6) {
            let p = gmm(c);
            let q = gather_monomials(&p);
            let (x, y) = (value(&p, n), value(&q, n));
            prop_assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()), "{x} vs {y}");
        }
    }
}
