//! Tables of data kept with the statistics (issue 13: kernel speed). A `prob` is kept as
//! its logarithm, so an update that adds a prior to a count, `prob2real(word_prior[w]) +
//! n`, takes an `exp` of the same data element at every update, for every class: for
//! Naive Bayes, classes times the document's words, as many `exp`s as the update's own
//! logarithms. The data do not change along the chain, so the table `T[k] =
//! prob2real(A[k])` for every `k` is built once by `init` (a statistic no point moves,
//! [`StatKind::Table`](super::StatKind::Table)) and the update reads `T[e]` where it
//! converted `A[e]`.
//!
//! The update's reads take three forms, each rewritten only where every use qualifies:
//! - `prob2real(A[e])` becomes `T[e]`;
//! - `let x = A[e]` whose every read is `prob2real(x)` becomes `let x: real = T[e]`, its
//!   reads `x`;
//! - `var x` whose every assignment is `A[e]` or a literal and every read `prob2real(x)`
//!   becomes a `real` `var` assigned `T[e]` or the converted literal.
//!
//! Exact: `T` has `A`'s length, so `T[e]` fails exactly where `A[e]` did, and holds the
//! value the conversion computes, by the same operation. Only arrays the update reads
//! inside a loop get a table (one read an update is not worth a parameter), and names
//! declared more than once in the update are left alone.

use std::collections::{HashMap, HashSet};

use slic_algebra::{Coercion, Type};

use crate::ir::walk::{decl_counts, for_each_expr, map_exprs, tally};
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};

/// One table of the data: parameter `param` holds what `init` computes from `array`
/// (here `prob2real` of every element; `suffix.rs`'s suffix sums).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Table {
    pub param: String,
    pub array: String,
}

/// `update` reading tables of the arrays in `data` (`array(prob)` parameters no program
/// writes) where it converts their elements inside a loop, and the tables it reads,
/// named fresh from `names`.
pub(super) fn element_tables(
    update: &Program,
    data: &[String],
    names: &mut HashSet<String>,
) -> (Program, Vec<Table>) {
    let decls = decl_counts(&update.body);
    let mut body = update.body.clone();
    let mut tables = Vec::new();
    for a in data {
        let param = super::fresh(names, &format!("real_{a}"));
        let cx = Cx {
            array: a,
            table: &param,
            carriers: carriers(&body, &update.result, a, &decls),
        };
        let mut inside = false;
        let rewritten = cx.block(&body, false, &mut inside);
        if inside {
            body = rewritten;
            tables.push(Table {
                param,
                array: a.clone(),
            });
        } else {
            names.remove(&param);
        }
    }
    (update.with_body(body), tables)
}

/// The `let`s and `var`s of `body` that only carry an element of `a` to a `prob2real`:
/// declared once, every assignment `a[e]` or (a `var`'s) a literal, every read
/// `prob2real(x)`.
fn carriers(
    body: &[Stmt],
    result: &Expr,
    a: &str,
    decls: &HashMap<String, usize>,
) -> HashSet<String> {
    let mut candidates: HashSet<String> = HashSet::new();
    let mut bad: HashSet<String> = HashSet::new();
    let element = |e: &Expr| matches!(e, Expr::Index(x, _) if **x == Expr::var(a));
    crate::ir::walk::visit_leaves(body, &mut |s| match s {
        Stmt::Let { name, value, .. } if element(value) => {
            candidates.insert(name.clone());
        }
        Stmt::Var {
            name,
            ty: Type::Prob,
            init: None | Some(Expr::Lit(_)),
        } => {
            candidates.insert(name.clone());
        }
        Stmt::Assign { name, op, value }
            if *op != AssignOp::Set || !(element(value) || matches!(value, Expr::Lit(_))) =>
        {
            bad.insert(name.clone());
        }
        _ => {}
    });
    // a `var` assigned nothing but literals carries nothing of `a`
    let mut assigned: HashSet<String> = HashSet::new();
    crate::ir::walk::visit_leaves(body, &mut |s| {
        if let Stmt::Assign { name, value, .. } = s {
            if element(value) {
                assigned.insert(name.clone());
            }
        }
        if let Stmt::Let { name, value, .. } = s {
            if element(value) {
                assigned.insert(name.clone());
            }
        }
    });
    let (mut all, mut converted) = (HashMap::new(), HashMap::new());
    for s in body {
        for_each_expr(s, &mut |e| tally(e, &mut all, &mut converted));
    }
    tally(result, &mut all, &mut converted);
    candidates
        .into_iter()
        .filter(|x| {
            !bad.contains(x)
                && assigned.contains(x)
                && decls.get(x) == Some(&1)
                && all.get(x) == converted.get(x)
        })
        .collect()
}

/// One array's rewrite.
struct Cx<'a> {
    array: &'a str,
    table: &'a str,
    carriers: HashSet<String>,
}

impl Cx<'_> {
    /// `block` rewritten; `inside` set where a rewrite falls inside a loop.
    fn block(&self, block: &[Stmt], in_loop: bool, inside: &mut bool) -> Vec<Stmt> {
        block
            .iter()
            .map(|s| self.stmt(s, in_loop, inside))
            .collect()
    }

    fn stmt(&self, s: &Stmt, in_loop: bool, inside: &mut bool) -> Stmt {
        let mut hit = false;
        let mut out = match s {
            Stmt::Let { name, value, .. } if self.carriers.contains(name) => {
                hit = true;
                Stmt::let_(name, Type::Real, self.table_read(value))
            }
            Stmt::Var { name, init, .. } if self.carriers.contains(name) => Stmt::Var {
                name: name.clone(),
                ty: Type::Real,
                init: init.as_ref().map(real_of),
            },
            Stmt::Assign { name, op, value } if self.carriers.contains(name) => {
                hit = matches!(value, Expr::Index(..));
                let value = match value {
                    Expr::Lit(_) => real_of(value),
                    _ => self.table_read(value),
                };
                Stmt::assign(name, *op, value)
            }
            Stmt::For { var, lo, hi, body } => Stmt::For {
                var: var.clone(),
                lo: lo.clone(),
                hi: hi.clone(),
                body: self.block(body, true, inside),
            },
            Stmt::If {
                cond,
                then,
                otherwise,
            } => Stmt::If {
                cond: cond.clone(),
                then: self.block(then, in_loop, inside),
                otherwise: self.block(otherwise, in_loop, inside),
            },
            other => other.clone(),
        };
        // the statement's own expressions: conversions of the array's elements and of
        // the carriers (a loop's or branch's body is done above)
        match &mut out {
            Stmt::For { lo, hi, .. } => {
                *lo = self.expr(lo, &mut hit);
                *hi = self.expr(hi, &mut hit);
            }
            Stmt::If { cond, .. } => *cond = self.expr(cond, &mut hit),
            _ => map_exprs(&mut out, &mut |e| self.expr(e, &mut hit)),
        }
        *inside |= hit && in_loop;
        out
    }

    /// `a[e]` as `T[e]`.
    fn table_read(&self, e: &Expr) -> Expr {
        match e {
            Expr::Index(_, i) => Expr::index(Expr::var(self.table), (**i).clone()),
            other => other.clone(),
        }
    }

    fn expr(&self, e: &Expr, hit: &mut bool) -> Expr {
        match e {
            Expr::Convert(Coercion::Prob2Real, x) => match &**x {
                Expr::Index(a, _) if **a == Expr::var(self.array) => {
                    *hit = true;
                    self.table_read(x)
                }
                Expr::Var(v) if self.carriers.contains(v) => (**x).clone(),
                _ => Expr::Convert(Coercion::Prob2Real, Box::new(self.expr(x, hit))),
            },
            Expr::Prim(p, args) => Expr::Prim(*p, args.iter().map(|a| self.expr(a, hit)).collect()),
            Expr::Index(a, i) => Expr::index(self.expr(a, hit), self.expr(i, hit)),
            Expr::Convert(c, x) => Expr::Convert(*c, Box::new(self.expr(x, hit))),
            Expr::Pair(a, b) => {
                Expr::Pair(Box::new(self.expr(a, hit)), Box::new(self.expr(b, hit)))
            }
            other => other.clone(),
        }
    }
}

/// A `prob` literal as the `real` it converts to (`prob2real`, as the interpreter
/// computes it); anything else unchanged.
fn real_of(e: &Expr) -> Expr {
    match e {
        Expr::Lit(Lit::Prob(l)) => Expr::real(l.exp()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Val;
    use slic_algebra::Prim;

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    fn real(e: Expr) -> Expr {
        Expr::convert(Coercion::Prob2Real, e)
    }

    /// `var acc: real = 0; for k in 0..n { let x = a[idx[k]]; var y: prob; if k < 2 { y
    /// = a[k] } else { y = 0.5 }; acc += prob2real(x) + prob2real(y) + prob2real(a[k]) +
    /// extra }; return acc` over `a: array(prob)`, `idx: array(nat)`, `n: nat`.
    fn program(extra: Expr) -> Program {
        let plus = |xs: Vec<Expr>| Expr::prim(Prim::Add, xs);
        let body = vec![
            Stmt::let_(
                "x",
                Type::Prob,
                Expr::index(v("a"), Expr::index(v("idx"), v("k"))),
            ),
            Stmt::var("y", Type::Prob, None),
            Stmt::if_(
                Expr::prim(Prim::Lt, vec![v("k"), Expr::nat(2)]),
                vec![Stmt::assign(
                    "y",
                    AssignOp::Set,
                    Expr::index(v("a"), v("k")),
                )],
                vec![Stmt::assign("y", AssignOp::Set, Expr::prob(0.5))],
            ),
            Stmt::assign(
                "acc",
                AssignOp::Add,
                plus(vec![
                    real(v("x")),
                    real(v("y")),
                    real(Expr::index(v("a"), v("k"))),
                    extra,
                ]),
            ),
        ];
        Program {
            params: vec![
                ("a".into(), Type::array(Type::Prob)),
                ("idx".into(), Type::array(Type::Nat)),
                ("n".into(), Type::Nat),
            ],
            body: vec![
                Stmt::var("acc", Type::Real, Some(Expr::real(0.0))),
                Stmt::for_("k", Expr::nat(0), v("n"), body),
            ],
            result: v("acc"),
            measure: false,
            inout: Vec::new(),
        }
    }

    /// `q` with the table `t` its parameter, as `derive` appends it.
    fn with_table(q: &Program, t: &str) -> Program {
        let mut q = q.clone();
        q.params.push((t.to_string(), Type::array(Type::Real)));
        q
    }

    #[test]
    fn converted_elements_are_read_from_the_table_and_mean_the_same() {
        let p = program(Expr::real(0.0));
        let mut names: HashSet<String> = ["a", "idx", "n", "acc", "k", "x", "y"]
            .iter()
            .map(|x| x.to_string())
            .collect();
        let (q, tables) = element_tables(&p, &["a".to_string()], &mut names);
        assert_eq!(tables.len(), 1);
        let t = &tables[0].param;
        let q = with_table(&q, t);
        assert_eq!(crate::verify::verify(&q), Ok(()), "{q}");
        let text = q.to_string();
        // no conversion of `a` is left: `x` and `y` carry reals from the table
        assert!(!text.contains("prob2real"), "{text}");
        let mut rng = crate::sampler::Rng::seed_from_u64(11);
        for case in 0..40 {
            let len = 1 + (rng.uniform() * 5.0) as usize;
            let elems: Vec<f64> = (0..len).map(|_| rng.uniform() * 3.0).collect();
            let a = Val::array(elems.iter().map(|&x| Val::prob(x)).collect());
            let table = Val::array(elems.iter().map(|&x| Val::Real(x.ln().exp())).collect());
            // an index past the end now and then: both err
            let reach = if case % 5 == 0 { len + 1 } else { len };
            let idx = Val::array(
                (0..len)
                    .map(|_| Val::Nat((rng.uniform() * reach as f64) as u64))
                    .collect(),
            );
            let n = Val::Nat((rng.uniform() * (len as f64 + 1.0)) as u64);
            let args = [a, idx, n];
            let mut targs = args.to_vec();
            targs.push(table);
            crate::interp::assert_same_run(&p, &args, &q, &targs, &format!("case {case}"));
        }
    }

    #[test]
    fn a_carrier_read_as_a_prob_and_a_read_outside_loops_keep_their_form() {
        // `x` also read as a prob: it stays a prob, converted where it was
        let p = program(real(Expr::prim(Prim::Mul, vec![v("x"), v("x")])));
        let mut names = HashSet::new();
        let (q, tables) = element_tables(&p, &["a".to_string()], &mut names);
        assert_eq!(tables.len(), 1);
        let text = q.to_string();
        assert!(text.contains("let x: prob"), "{text}");
        assert!(text.contains("prob2real(x)"), "{text}");
        // a conversion outside every loop is not worth a table
        let once = Program {
            params: vec![("a".into(), Type::array(Type::Prob))],
            body: Vec::new(),
            result: real(Expr::index(v("a"), Expr::nat(0))),
            measure: false,
            inout: Vec::new(),
        };
        let (same, none) = element_tables(&once, &["a".to_string()], &mut names);
        assert!(none.is_empty());
        assert_eq!(same, once);
    }
}
