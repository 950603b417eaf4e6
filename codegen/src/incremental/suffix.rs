//! Suffix sums of the data kept with the statistics (issue 13: kernel speed). The
//! stick-breaking Dirichlet that Naive Bayes simplifies to sums, for each class `k`, the
//! priors of the classes after it: `for c in k + 1..K { let v = topic_prior[c]; s += v }`.
//! `memo.rs` computes that once per `k`, but still at every update, and a sum of `prob`s
//! is a log-sum-exp per term: a tenth of a Naive Bayes sweep (measured by replacing them
//! in the generated kernel). The data do not change along the chain.
//!
//! [`suffix_tables`] finds, in a loop `for c in lo..hi`, a `let v: prob = A[c]` (`A` a
//! `prob` data array) whose only read is `acc += v`, `acc` a `prob` that the loop writes
//! nowhere else and reads nowhere. `init` builds `S_A[c] = A[c] + S_A[c + 1]` (with
//! `S_A[size(A)] = 0`) once per chain, a statistic no point moves
//! ([`StatKind::Table`](super::StatKind::Table)), and the loop becomes
//!
//! ```text
//! if hi == size(A) && lo <= hi { for c in lo..hi { (the rest) }; acc += S_A[lo] }
//! else { (the loop as it was) }
//! ```
//!
//! Exact up to the association of the additions: in the first branch every `A[c]` the
//! loop read is in range (`c < size(A)`), so dropping the reads drops no error, and
//! `S_A[lo]` is the sum of the same terms, added from the last rather than from the
//! first (a log-sum-exp of non-negative terms, so the two differ in their last bits and
//! nothing else). `acc` is read nowhere in the loop, so adding after it changes no other
//! value. Elsewhere the loop is as it was.

use std::collections::{HashMap, HashSet};

use slic_algebra::{Coercion, Prim, Type};

use super::tables::Table;
use crate::ir::walk::{count_reads, decl_counts, for_each_expr, reads, Effects};
use crate::ir::{AssignOp, Expr, Program, Stmt};

/// `update` reading suffix sums of the arrays in `data` where its loops accumulate them
/// (see the module documentation), and the tables it reads, named fresh from `names`.
pub(super) fn suffix_tables(
    update: &Program,
    data: &[String],
    names: &mut HashSet<String>,
) -> (Program, Vec<Table>) {
    let decls = decl_counts(&update.body);
    let mut uses: HashMap<String, usize> = HashMap::new();
    for s in &update.body {
        for_each_expr(s, &mut |e| count_reads(e, &mut uses));
    }
    count_reads(&update.result, &mut uses);
    let mut cx = Cx {
        data,
        decls: &decls,
        uses: &uses,
        tables: HashMap::new(),
        names,
    };
    let body = cx.block(&update.body);
    let mut tables: Vec<Table> = cx
        .tables
        .into_iter()
        .map(|(array, param)| Table { param, array })
        .collect();
    tables.sort_by(|a, b| a.param.cmp(&b.param));
    (update.with_body(body), tables)
}

/// `init`'s fill of `t`, the suffix sums of `a`: `t[size(a)] = 0`, then for each `c` from
/// the last down, `t[c] = a[c] + t[c + 1]` (`step` and `c_name` fresh names).
pub(super) fn fill(t: &str, a: &str, step: &str, c_name: &str) -> Vec<Stmt> {
    let n = Expr::size(Expr::var(a));
    let int = |e: Expr| Expr::convert(Coercion::Nat2Int, e);
    // c = n - 1 - step, through int (step < n, so it is a nat)
    let past = Expr::prim(Prim::Add, vec![Expr::var(step), Expr::nat(1)]);
    let c = Expr::convert(
        Coercion::Int2Nat,
        Expr::prim(
            Prim::Add,
            vec![int(n.clone()), Expr::prim(Prim::Neg, vec![int(past)])],
        ),
    );
    let at = |i: Expr| Expr::index(Expr::var(t), i);
    let next = Expr::prim(Prim::Add, vec![Expr::var(c_name), Expr::nat(1)]);
    vec![
        Stmt::store(t, n.clone(), AssignOp::Set, Expr::prob(0.0)),
        Stmt::for_(
            step,
            Expr::nat(0),
            n,
            vec![
                Stmt::let_(c_name, Type::Nat, c),
                Stmt::store(
                    t,
                    Expr::var(c_name),
                    AssignOp::Set,
                    Expr::prim(
                        Prim::Add,
                        vec![Expr::index(Expr::var(a), Expr::var(c_name)), at(next)],
                    ),
                ),
            ],
        ),
    ]
}

struct Cx<'a> {
    data: &'a [String],
    decls: &'a HashMap<String, usize>,
    uses: &'a HashMap<String, usize>,
    /// Each array's table.
    tables: HashMap<String, String>,
    names: &'a mut HashSet<String>,
}

impl Cx<'_> {
    fn block(&mut self, block: &[Stmt]) -> Vec<Stmt> {
        block.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Stmt {
        match s {
            Stmt::For { var, lo, hi, body } => {
                let inner = self.block(body);
                let rebuilt = Stmt::For {
                    var: var.clone(),
                    lo: lo.clone(),
                    hi: hi.clone(),
                    body: inner,
                };
                match self.sums(var, &rebuilt) {
                    Some(fast) => fast,
                    None => rebuilt,
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => Stmt::If {
                cond: cond.clone(),
                then: self.block(then),
                otherwise: self.block(otherwise),
            },
            other => other.clone(),
        }
    }

    /// `lp` (a loop over `c`) with one suffix sum read from a table, if it has one.
    fn sums(&mut self, c: &str, lp: &Stmt) -> Option<Stmt> {
        let Stmt::For { lo, hi, body, .. } = lp else {
            return None;
        };
        for (at, s) in body.iter().enumerate() {
            let Stmt::Let {
                name: v,
                ty: Type::Prob,
                value: Expr::Index(arr, i),
            } = s
            else {
                continue;
            };
            let (Expr::Var(a), Expr::Var(ix)) = (arr.as_ref(), i.as_ref()) else {
                continue;
            };
            if ix != c || !self.data.contains(a) || self.uses.get(v) != Some(&1) {
                continue;
            }
            if self.decls.get(v) != Some(&1) {
                continue;
            }
            // the one read of v: `acc += v` later in the same body
            let Some(add_at) = body[at + 1..].iter().position(|t| {
                matches!(t, Stmt::Assign { op: AssignOp::Add, value: Expr::Var(x), .. } if x == v)
            }) else {
                continue;
            };
            let add_at = at + 1 + add_at;
            let Stmt::Assign { name: acc, .. } = &body[add_at] else {
                continue;
            };
            if !self.accumulates_only(body, add_at, acc) {
                continue;
            }
            let table = match self.tables.get(a) {
                Some(t) => t.clone(),
                None => {
                    let t = super::fresh(self.names, &format!("suffix_{a}"));
                    self.tables.insert(a.clone(), t.clone());
                    t
                }
            };
            let rest: Vec<Stmt> = body
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != at && *k != add_at)
                .map(|(_, t)| t.clone())
                .collect();
            let var = c.to_string();
            let fast = vec![
                Stmt::for_(&var, lo.clone(), hi.clone(), rest),
                Stmt::assign(
                    acc,
                    AssignOp::Add,
                    Expr::index(Expr::var(&table), lo.clone()),
                ),
            ];
            let whole = Expr::prim(Prim::Eq, vec![hi.clone(), Expr::size(Expr::var(a))]);
            let ordered = Expr::prim(Prim::Le, vec![lo.clone(), hi.clone()]);
            let test = Expr::prim(Prim::And, vec![whole, ordered]);
            return Some(Stmt::if_(test, fast, vec![lp.clone()]));
        }
        None
    }

    /// Is `acc` declared once, and does `body` write it only at `add_at` and read it
    /// nowhere (the bounds and tests of its loops and branches included)? (A `prob`: it
    /// is added a `prob`, and the verifier checks the types.)
    fn accumulates_only(&self, body: &[Stmt], add_at: usize, acc: &str) -> bool {
        self.decls.get(acc) == Some(&1)
            && body.iter().enumerate().all(|(k, s)| {
                let mut r = HashSet::new();
                for_each_expr(s, &mut |x| reads(x, &mut r));
                let writes = Effects::of(std::slice::from_ref(s)).writes;
                !r.contains(acc) && (k == add_at || !writes.contains(acc))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Val;

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    /// `var acc: prob = 0; var n: nat = 0; for c in lo..hi { let x = a[c]; n += b[c];
    /// acc += x; extra }; return acc + nat2prob(n)` over `a: array(prob)`, `b:
    /// array(nat)`, `lo: nat`, `hi: nat` (`hi` the expression given).
    fn program(hi: Expr, extra: Vec<Stmt>) -> Program {
        let mut body = vec![
            Stmt::let_("x", Type::Prob, Expr::index(v("a"), v("c"))),
            Stmt::assign("n", AssignOp::Add, Expr::index(v("b"), v("c"))),
            Stmt::assign("acc", AssignOp::Add, v("x")),
        ];
        body.extend(extra);
        Program {
            params: vec![
                ("a".into(), Type::array(Type::Prob)),
                ("b".into(), Type::array(Type::Nat)),
                ("lo".into(), Type::Nat),
            ],
            body: vec![
                Stmt::var("acc", Type::Prob, Some(Expr::prob(0.0))),
                Stmt::var("n", Type::Nat, Some(Expr::nat(0))),
                Stmt::for_("c", v("lo"), hi, body),
            ],
            result: Expr::prim(
                Prim::Add,
                vec![v("acc"), Expr::convert(Coercion::Nat2Prob, v("n"))],
            ),
            measure: false,
            inout: Vec::new(),
        }
    }

    fn rewrite(p: &Program) -> (Program, Vec<Table>) {
        let mut names: HashSet<String> = ["a", "b", "lo", "acc", "n", "c", "x"]
            .iter()
            .map(|x| x.to_string())
            .collect();
        suffix_tables(p, &["a".to_string()], &mut names)
    }

    /// The table `init` builds for `a`, by the interpreter.
    fn table(a: &Val, len: usize) -> Val {
        let init = Program {
            params: vec![
                ("a".into(), Type::array(Type::Prob)),
                ("t".into(), Type::array(Type::Prob)),
            ],
            body: fill("t", "a", "step", "cc"),
            result: Expr::nat(0),
            measure: false,
            inout: vec!["t".into()],
        };
        assert_eq!(crate::verify::verify(&init), Ok(()));
        let mut args = vec![a.clone(), Val::array(vec![Val::prob(0.0); len + 1])];
        crate::run_inout(&init, &mut args).expect("init fills the table");
        args.pop().expect("the table")
    }

    #[test]
    fn a_suffix_sum_of_the_data_is_read_from_a_table_and_means_the_same() {
        let p = program(Expr::size(v("a")), Vec::new());
        let (q, tables) = rewrite(&p);
        assert_eq!(tables.len(), 1, "{q}");
        let mut q = q;
        q.params
            .push((tables[0].param.clone(), Type::array(Type::Prob)));
        assert_eq!(crate::verify::verify(&q), Ok(()), "{q}");
        let mut rng = crate::sampler::Rng::seed_from_u64(13);
        for case in 0..60 {
            let len = (rng.uniform() * 6.0) as usize;
            let a = Val::array((0..len).map(|_| Val::prob(rng.uniform() * 2.0)).collect());
            // b shorter now and then: its read errs, in both
            let blen = if case % 7 == 0 {
                len.saturating_sub(1)
            } else {
                len
            };
            let b = Val::array(
                (0..blen)
                    .map(|_| Val::Nat((rng.uniform() * 3.0) as u64))
                    .collect(),
            );
            // lo past the end now and then: the loop is empty, the table not read
            let lo = Val::Nat((rng.uniform() * (len as f64 + 2.0)) as u64);
            let t = table(&a, len);
            let args = [a, b, lo];
            let mut targs = args.to_vec();
            targs.push(t);
            match (crate::run(&p, &args), crate::run(&q, &targs)) {
                // the same terms added in another order: the last bits may differ
                (Ok((Val::Prob(x), _)), Ok((Val::Prob(y), _))) => assert!(
                    x == y || (x - y).abs() <= 1e-12 * x.abs().max(1.0),
                    "case {case}: {x} against {y}"
                ),
                (Err(w), Err(g)) => assert_eq!(
                    std::mem::discriminant(&w),
                    std::mem::discriminant(&g),
                    "case {case}"
                ),
                (w, g) => panic!("case {case}: {w:?} against {g:?} in {q}"),
            }
        }
    }

    #[test]
    fn a_sum_read_in_its_loop_or_its_term_read_twice_stays() {
        // `n += int2nat(real2int(prob2real(x)))`: the accumulator read inside the loop,
        // or the term read again
        let reading = |x: &str| {
            vec![Stmt::assign(
                "n",
                AssignOp::Add,
                Expr::convert(
                    Coercion::Int2Nat,
                    Expr::convert(Coercion::Real2Int, Expr::convert(Coercion::Prob2Real, v(x))),
                ),
            )]
        };
        for extra in [reading("acc"), reading("x")] {
            let p = program(Expr::size(v("a")), extra);
            let (q, tables) = rewrite(&p);
            assert!(tables.is_empty(), "{q}");
            assert_eq!(q, p);
        }
    }
}
