//! Constants of a loop-IR program specialised to its data (issue 13: kernel speed). The
//! emitter bakes a chain's sizes and scalars into the kernel's source, where the C and
//! Rust compilers fold them; the passes that read the IR before that (the incremental
//! statistics of `crate::incremental`) see `size(as)` and the `if (0 < size(as))` that
//! A-normal form's guarded hoisting wrote around what it moved out of a loop, and a bound
//! assigned in such an `if` is a `var` to them, "computed by the update itself": the
//! Dirichlet prior's `Σ_k as[k]` (50 log-sum-exps) then ran at every update instead of
//! once per chain.
//!
//! [`fold_constants`] substitutes the known parameters (a fixed array's `size`, a fixed
//! `nat` or `int` scalar), folds integral and boolean primitives of literals
//! (overflow left unfolded, for the kernel to report), propagates `let`s of literals,
//! splices the taken branch of an `if` on a literal, drops a loop over an empty literal
//! range, and writes a `var` assigned once,
//! in its own block, as a `let`. Exact: every rewrite evaluates what the program would;
//! a statement read before its only assignment keeps its `var`. The literals pay in the
//! kernels too: the GMM sweep's C kernel took 110.8 ms with them and 131.1 ms with only
//! the tests decided (`cargo bench --bench kernels -- gmm-sweep`, one session).

use std::collections::{HashMap, HashSet};

use slic_algebra::{Coercion, Prim};

use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};

/// `p` with `known` (parameter name to value) and `sizes` (array parameter name to
/// length) folded in.
pub fn fold_constants(
    p: &Program,
    known: &HashMap<String, Lit>,
    sizes: &HashMap<String, u64>,
) -> Program {
    let mut f = Folder {
        consts: known.clone(),
        sizes,
    };
    let body = f.block(&p.body);
    // the vars the spliced branches left assigned once, as lets; then their literals
    let body = lets_of_vars(body.clone(), &assignment_counts(&body_writes(&body)));
    let body = f.block(&body);
    let result = f.expr(&p.result);
    Program {
        result,
        ..p.with_body(body)
    }
}

struct Folder<'a> {
    /// Names whose value is a literal: parameters, then `let`s of literals.
    consts: HashMap<String, Lit>,
    sizes: &'a HashMap<String, u64>,
}

impl Folder<'_> {
    fn block(&mut self, block: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(block.len());
        for s in block {
            match s {
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let cond = self.expr(cond);
                    match cond {
                        Expr::Lit(Lit::Bool(b)) => {
                            let taken = if b { then } else { otherwise };
                            out.extend(self.block(taken));
                        }
                        cond => out.push(Stmt::If {
                            cond,
                            then: self.block(then),
                            otherwise: self.block(otherwise),
                        }),
                    }
                }
                Stmt::For { var, lo, hi, body } => {
                    let (lo, hi) = (self.expr(lo), self.expr(hi));
                    // a loop over an empty range runs nothing
                    if let (Expr::Lit(Lit::Nat(l)), Expr::Lit(Lit::Nat(h))) = (&lo, &hi) {
                        if l >= h {
                            continue;
                        }
                    }
                    out.push(Stmt::For {
                        var: var.clone(),
                        lo,
                        hi,
                        body: self.block(body),
                    });
                }
                Stmt::Let { name, ty, value } => {
                    let value = self.expr(value);
                    if let Expr::Lit(l) = &value {
                        self.consts.insert(name.clone(), *l);
                    }
                    out.push(Stmt::Let {
                        name: name.clone(),
                        ty: ty.clone(),
                        value,
                    });
                }
                other => {
                    let mut s = other.clone();
                    crate::ir::walk::map_exprs(&mut s, &mut |e| self.expr(e));
                    out.push(s);
                }
            }
        }
        out
    }

    fn expr(&self, e: &Expr) -> Expr {
        match e {
            Expr::Var(x) => self
                .consts
                .get(x)
                .map_or_else(|| e.clone(), |l| Expr::Lit(*l)),
            Expr::Lit(_) => e.clone(),
            Expr::Prim(Prim::Size, a) if a.len() == 1 => match &a[0] {
                Expr::Var(x) if self.sizes.contains_key(x) => Expr::nat(self.sizes[x]),
                _ => e.clone(),
            },
            Expr::Prim(op, args) => {
                let args: Vec<Expr> = args.iter().map(|a| self.expr(a)).collect();
                fold_prim(*op, &args).unwrap_or(Expr::Prim(*op, args))
            }
            Expr::Index(a, i) => Expr::Index(Box::new(self.expr(a)), Box::new(self.expr(i))),
            Expr::Convert(c, x) => {
                let x = self.expr(x);
                match (c, &x) {
                    (Coercion::Nat2Int, Expr::Lit(Lit::Nat(n))) => {
                        i64::try_from(*n).map_or(Expr::Convert(*c, Box::new(x.clone())), Expr::int)
                    }
                    (Coercion::Int2Nat, Expr::Lit(Lit::Int(n))) if *n >= 0 => Expr::nat(*n as u64),
                    _ => Expr::Convert(*c, Box::new(x)),
                }
            }
            Expr::Pair(a, b) => Expr::Pair(Box::new(self.expr(a)), Box::new(self.expr(b))),
        }
    }
}

/// A primitive of literal arguments, where it is integral or boolean and exact.
fn fold_prim(op: Prim, args: &[Expr]) -> Option<Expr> {
    let lits: Option<Vec<&Lit>> = args
        .iter()
        .map(|a| match a {
            Expr::Lit(l) => Some(l),
            _ => None,
        })
        .collect();
    let lits = lits?;
    let b = |v: bool| Some(Expr::Lit(Lit::Bool(v)));
    match (op, lits.as_slice()) {
        (Prim::Lt, [Lit::Nat(x), Lit::Nat(y)]) => b(x < y),
        (Prim::Le, [Lit::Nat(x), Lit::Nat(y)]) => b(x <= y),
        (Prim::Eq, [Lit::Nat(x), Lit::Nat(y)]) => b(x == y),
        (Prim::Ne, [Lit::Nat(x), Lit::Nat(y)]) => b(x != y),
        (Prim::Lt, [Lit::Int(x), Lit::Int(y)]) => b(x < y),
        (Prim::Le, [Lit::Int(x), Lit::Int(y)]) => b(x <= y),
        (Prim::Eq, [Lit::Int(x), Lit::Int(y)]) => b(x == y),
        (Prim::Ne, [Lit::Int(x), Lit::Int(y)]) => b(x != y),
        (Prim::Not, [Lit::Bool(x)]) => b(!x),
        (Prim::And | Prim::Or, ls) => {
            let vs: Option<Vec<bool>> = ls
                .iter()
                .map(|l| match l {
                    Lit::Bool(v) => Some(*v),
                    _ => None,
                })
                .collect();
            let vs = vs?;
            b(if op == Prim::And {
                vs.iter().all(|v| *v)
            } else {
                vs.iter().any(|v| *v)
            })
        }
        (Prim::Add, ls) => sum_or_product(ls, 0, |x, y| x.checked_add(y), |x, y| x.checked_add(y)),
        (Prim::Mul, ls) => sum_or_product(ls, 1, |x, y| x.checked_mul(y), |x, y| x.checked_mul(y)),
        _ => None,
    }
}

/// The sum or product of `nat` or `int` literals, unless it overflows.
fn sum_or_product(
    ls: &[&Lit],
    unit: u8,
    nat: fn(u64, u64) -> Option<u64>,
    int: fn(i64, i64) -> Option<i64>,
) -> Option<Expr> {
    match ls.first()? {
        Lit::Nat(_) => ls
            .iter()
            .try_fold(u64::from(unit), |acc, l| match l {
                Lit::Nat(x) => nat(acc, *x),
                _ => None,
            })
            .map(Expr::nat),
        Lit::Int(_) => ls
            .iter()
            .try_fold(i64::from(unit), |acc, l| match l {
                Lit::Int(x) => int(acc, *x),
                _ => None,
            })
            .map(Expr::int),
        _ => None,
    }
}

/// Every assignment's target, once per assignment, anywhere in `block`.
fn body_writes(block: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    crate::ir::walk::visit_leaves(block, &mut |s| {
        if let Stmt::Assign { name, .. } = s {
            out.push(name.clone());
        }
    });
    out
}

fn assignment_counts(writes: &[String]) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for w in writes {
        *out.entry(w.clone()).or_insert(0) += 1;
    }
    out
}

/// In each block, `var x: T` (no initial value) followed in the same block by the
/// program's only assignment to `x`, a plain `x = e`, with no read of `x` between: one
/// `let x: T = e` where the assignment was.
fn lets_of_vars(block: Vec<Stmt>, writes: &HashMap<String, usize>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = Vec::with_capacity(block.len());
    let mut pending: HashSet<String> = HashSet::new();
    for s in block {
        let s = match s {
            Stmt::For { var, lo, hi, body } => Stmt::For {
                var,
                lo,
                hi,
                body: lets_of_vars(body, writes),
            },
            Stmt::If {
                cond,
                then,
                otherwise,
            } => Stmt::If {
                cond,
                then: lets_of_vars(then, writes),
                otherwise: lets_of_vars(otherwise, writes),
            },
            s => s,
        };
        // a read of a pending var before its assignment keeps it a var
        let read = crate::ir::walk::Effects::of(std::slice::from_ref(&s)).reads;
        pending.retain(|x| !read.contains(x));
        match s {
            Stmt::Var {
                ref name,
                init: None,
                ..
            } if writes.get(name) == Some(&1) => {
                pending.insert(name.clone());
                out.push(s);
            }
            Stmt::Assign {
                name,
                op: AssignOp::Set,
                value,
            } if pending.remove(&name) => {
                let at = out
                    .iter()
                    .position(|d| matches!(d, Stmt::Var { name: n, .. } if *n == name));
                let Some(Stmt::Var { ty, .. }) = at.map(|k| out.remove(k)) else {
                    out.push(Stmt::Assign {
                        name,
                        op: AssignOp::Set,
                        value,
                    });
                    continue;
                };
                out.push(Stmt::Let { name, ty, value });
            }
            s => out.push(s),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::Type;

    #[test]
    fn a_bound_guarded_on_a_known_size_becomes_a_let_of_it() {
        // var t; if (0 < size(x)) { t = size(x) } else { t = 0 }; for j in 0..t { s += j }
        let p = Program {
            params: vec![
                ("x".into(), Type::array(Type::Nat)),
                ("n".into(), Type::Nat),
            ],
            body: vec![
                Stmt::var("t", Type::Nat, None),
                Stmt::If {
                    cond: Expr::prim(Prim::Lt, vec![Expr::nat(0), Expr::size(Expr::var("x"))]),
                    then: vec![Stmt::assign("t", AssignOp::Set, Expr::size(Expr::var("x")))],
                    otherwise: vec![Stmt::assign("t", AssignOp::Set, Expr::nat(0))],
                },
                Stmt::var("s", Type::Nat, Some(Expr::var("n"))),
                Stmt::for_(
                    "j",
                    Expr::nat(0),
                    Expr::var("t"),
                    vec![Stmt::assign("s", AssignOp::Add, Expr::var("j"))],
                ),
            ],
            result: Expr::var("s"),
            measure: false,
            inout: Vec::new(),
        };
        let sizes = HashMap::from([("x".to_string(), 3)]);
        let values = HashMap::from([("n".to_string(), Lit::Nat(7))]);
        let q = fold_constants(&p, &values, &sizes);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(text.contains("let t: nat = 3"), "{text}");
        assert!(text.contains("for j in 0..3"), "{text}");
        assert!(!text.contains("if "), "{text}");
        let x = crate::Val::array(vec![crate::Val::Nat(0); 3]);
        let args = [x, crate::Val::Nat(7)];
        assert_eq!(
            crate::run(&p, &args).map(|r| r.0),
            crate::run(&q, &args).map(|r| r.0)
        );
    }

    #[test]
    fn overflow_and_unknown_values_stay_for_the_kernel() {
        let big = Expr::prim(Prim::Mul, vec![Expr::nat(u64::MAX), Expr::nat(2)]);
        assert_eq!(
            fold_prim(Prim::Mul, &[Expr::nat(u64::MAX), Expr::nat(2)]),
            None
        );
        let f = Folder {
            consts: HashMap::new(),
            sizes: &HashMap::new(),
        };
        assert_eq!(f.expr(&big), big);
        let read = Expr::prim(Prim::Lt, vec![Expr::var("u"), Expr::nat(3)]);
        assert_eq!(f.expr(&read), read);
    }
}
