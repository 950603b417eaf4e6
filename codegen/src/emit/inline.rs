//! Terms of a probability sum written into the sum (issue 13: kernel speed). A-normal
//! form binds every operand: the GMM's class weight reads `let v_62: prob = s² *
//! nat2prob(n)` then `let v_63: prob = v_62 + prob(1.0)`. `linear.rs` computes the sum in
//! linear space (`s²·n + 1`, one `log`) with the log-space sum as its fallback, but the
//! kernel still computed `v_62` (a `log` of `n`) before it, for the fallback alone: two of
//! the five `log`s of each class at every update.
//!
//! [`inline_sum_terms`] substitutes such a `let` into the sum that reads it, so that its
//! log-space value is computed only where the fallback is taken; likewise into a
//! quotient (`monomial.rs` writes the GMM's variance ratio as one), and a sum, its terms
//! received, on into a quotient (not into another sum: where that sum has no linear form,
//! the first would lose its own). Only where nothing can
//! change: the `let` is a `prob` built from `prob` literals, `prob` names bound once by
//! `let` (or parameters), `nat2prob` of such a name or of a loop index, `*` and `+`
//! (which cannot fail in log space: the kernel reports no error either way, and the
//! interpreter none on the original); it is read exactly once in the program, as an
//! operand of a `prob` sum or quotient `let` later in the same block and outside any loop nested
//! there (so it is evaluated at most once, as before); it and every name its value reads
//! are declared once in the program (no shadowing to misread).

use std::collections::{HashMap, HashSet};

use slic_algebra::{Coercion, Prim, Type};

use crate::ir::walk::{count_reads, each_block_mut, map_exprs, visit_decls};
use crate::ir::{Expr, Lit, Program, Stmt};

/// `p` with the single-use `prob` terms of sums written into them (see the module
/// documentation).
pub(crate) fn inline_sum_terms(p: &Program) -> Program {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (x, _) in &p.params {
        *count.entry(x).or_default() += 1;
    }
    visit_decls(&p.body, &mut |x| *count.entry(x).or_default() += 1);
    let mut kinds = Kinds {
        twice: count
            .iter()
            .filter(|(_, &n)| n > 1)
            .map(|(x, _)| x.to_string())
            .collect(),
        ..Kinds::default()
    };
    for (x, ty) in &p.params {
        if *ty == Type::Prob && !p.inout.contains(x) {
            kinds.prob.insert(x.clone());
        }
        if *ty == Type::Nat {
            kinds.nat.insert(x.clone());
        }
    }
    kinds.collect(&p.body);
    let mut uses: HashMap<String, usize> = HashMap::new();
    let mut tally = |e: &Expr| count_reads(e, &mut uses);
    tally(&p.result);
    for s in &p.body {
        let mut s = s.clone();
        map_exprs(&mut s, &mut |e| {
            tally(e);
            e.clone()
        });
    }
    let body = block(&p.body, &kinds, &uses);
    p.with_body(body)
}

/// The names a value may read: `prob` lets and parameters, `nat` lets, parameters and
/// loop indices (all immutable).
#[derive(Default)]
struct Kinds {
    prob: HashSet<String>,
    nat: HashSet<String>,
    /// Names declared more than once: never moved, nor read by what moves.
    twice: HashSet<String>,
}

impl Kinds {
    fn collect(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::Let { name, ty, .. } if *ty == Type::Prob => {
                    self.prob.insert(name.clone());
                }
                Stmt::Let { name, ty, .. } if *ty == Type::Nat => {
                    self.nat.insert(name.clone());
                }
                Stmt::For { var, body, .. } => {
                    self.nat.insert(var.clone());
                    self.collect(body);
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    self.collect(then);
                    self.collect(otherwise);
                }
                _ => {}
            }
        }
    }

    /// Can `e` be evaluated anywhere its names are in scope, with the same value and no
    /// failure?
    fn movable(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(Lit::Prob(_)) => true,
            Expr::Var(x) => self.prob.contains(x) && !self.twice.contains(x),
            Expr::Convert(Coercion::Nat2Prob, x) => {
                matches!(x.as_ref(), Expr::Var(n) if self.nat.contains(n) && !self.twice.contains(n))
            }
            Expr::Prim(Prim::Mul | Prim::Add, args) => args.iter().all(|a| self.movable(a)),
            _ => false,
        }
    }
}

/// `b` with its movable single-use terms written into the sums and quotients after them,
/// and each nested block likewise.
fn block(b: &[Stmt], kinds: &Kinds, uses: &HashMap<String, usize>) -> Vec<Stmt> {
    let mut pending: HashMap<String, Expr> = HashMap::new();
    // sums, which only a quotient takes (a sum taken by a sum could lose its own linear
    // form where the other's has none)
    let mut sums: HashMap<String, Expr> = HashMap::new();
    let mut out: Vec<Stmt> = Vec::with_capacity(b.len());
    for s in b {
        match s {
            Stmt::Let { name, ty, value } if *ty == Type::Prob && linear_shape(value) => {
                let quotient = !matches!(value, Expr::Prim(Prim::Add, _));
                let mut take = |a: &Expr| match a {
                    Expr::Var(x) => {
                        let found = match pending.remove(x) {
                            Some(v) => Some(v),
                            None if quotient => sums.remove(x),
                            None => None,
                        };
                        match found {
                            Some(v) => {
                                out.retain(|t| !matches!(t, Stmt::Let { name: n, .. } if n == x));
                                v
                            }
                            None => a.clone(),
                        }
                    }
                    _ => a.clone(),
                };
                let value = operands(value, &mut take);
                if !quotient
                    && !kinds.twice.contains(name)
                    && uses.get(name) == Some(&1)
                    && kinds.movable(&value)
                {
                    sums.insert(name.clone(), value.clone());
                }
                out.push(Stmt::let_(name, ty.clone(), value));
            }
            Stmt::Let { name, ty, value }
                if *ty == Type::Prob
                    && !kinds.twice.contains(name)
                    && uses.get(name) == Some(&1)
                    && kinds.movable(value)
                    && !matches!(value, Expr::Var(_)) =>
            {
                pending.insert(name.clone(), value.clone());
                out.push(s.clone());
            }
            s => {
                let mut s = s.clone();
                each_block_mut(&mut s, &mut |b| *b = block(b, kinds, uses));
                out.push(s);
            }
        }
    }
    out
}

/// A value `linear.rs` computes in linear space when its operands allow: a sum, or a
/// quotient (a product whose last factor is a `recip`).
fn linear_shape(e: &Expr) -> bool {
    match e {
        Expr::Prim(Prim::Add, _) => true,
        Expr::Prim(Prim::Mul, args) => matches!(args.last(), Some(Expr::Prim(Prim::Recip, _))),
        _ => false,
    }
}

/// `e` (of [`linear_shape`]) with `f` applied to its operands: the terms of a sum, the
/// factors of a quotient and those of its denominator.
fn operands(e: &Expr, f: &mut dyn FnMut(&Expr) -> Expr) -> Expr {
    match e {
        Expr::Prim(Prim::Recip, args) => match args.as_slice() {
            [Expr::Prim(Prim::Mul, fs)] => Expr::prim(
                Prim::Recip,
                vec![Expr::prim(Prim::Mul, fs.iter().map(&mut *f).collect())],
            ),
            _ => Expr::prim(Prim::Recip, args.iter().map(&mut *f).collect()),
        },
        Expr::Prim(Prim::Mul, args) => Expr::prim(
            Prim::Mul,
            args.iter()
                .map(|a| match a {
                    Expr::Prim(Prim::Recip, _) => operands(a, f),
                    _ => f(a),
                })
                .collect(),
        ),
        Expr::Prim(p, args) => Expr::prim(*p, args.iter().map(&mut *f).collect()),
        _ => f(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Val;

    /// `fn n: nat`: `a = 2 · n`, `b = a + 1`, and `extra` statements; returns `b` (or what
    /// `extra` makes of it).
    fn program(extra: Vec<Stmt>, result: &str) -> Program {
        let mut body = vec![
            Stmt::let_(
                "a",
                Type::Prob,
                Expr::prim(
                    Prim::Mul,
                    vec![
                        Expr::Lit(Lit::prob(2.0)),
                        Expr::Convert(Coercion::Nat2Prob, Box::new(Expr::var("n"))),
                    ],
                ),
            ),
            Stmt::let_(
                "b",
                Type::Prob,
                Expr::prim(Prim::Add, vec![Expr::var("a"), Expr::Lit(Lit::prob(1.0))]),
            ),
        ];
        body.extend(extra);
        Program {
            params: vec![("n".into(), Type::Nat)],
            body,
            result: Expr::var(result),
            measure: false,
            inout: Vec::new(),
        }
    }

    #[test]
    fn a_term_read_once_by_a_sum_is_written_into_it() {
        let p = program(Vec::new(), "b");
        let q = inline_sum_terms(&p);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(!text.contains("let a"), "{text}");
        assert!(text.contains("nat2prob(n)) + prob(1.0))"), "{text}");
        for n in [0, 1, 7] {
            let a = [Val::Nat(n)];
            assert_eq!(
                crate::run(&p, &a).map(|r| r.0),
                crate::run(&q, &a).map(|r| r.0)
            );
        }
    }

    #[test]
    fn a_term_read_twice_stays() {
        let twice = vec![Stmt::let_(
            "c",
            Type::Prob,
            Expr::prim(Prim::Mul, vec![Expr::var("a"), Expr::var("b")]),
        )];
        let p = program(twice, "c");
        let q = inline_sum_terms(&p);
        assert!(q.to_string().contains("let a"), "{q}");
    }
}
