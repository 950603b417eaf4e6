//! Reads of large tables at an index read from another array, requested a few iterations
//! ahead (issue 13: kernel speed). Naive Bayes' weight of a class reads, for each word `k`
//! of the document, the class's count of `k` in a twenty-by-fifty-thousand table:
//! `let k = ks[t]; ... stat[i · W + k]`. Every such read misses the cache, and the loop
//! does too little else to hide the wait: it measured about ten cycles per word, most of
//! them waiting on memory, once the logarithms that used to hide it were gone
//! (`products.rs`).
//!
//! [`plan`] finds, in a loop over `t`, each `let k = B[t]` and each read `A[x]` of a
//! table `A` the caller calls large whose index `x` is computed from `k` (through the
//! loop body's `let`s, and a `var` a top-level `if` sets first in its `then` branch) by
//! `+` and `*` of naturals over literals and names the loop does not change. The
//! emitter then starts the loop body with a prefetch of `A[x]` at `k = B[t + D]`, where
//! `t + D` is below both the loop's end and `B`'s length, and `x` itself below `A`'s.
//!
//! A prefetch is a hint to the processor with no effect on any value: the meaning and
//! the errors of the loop are untouched. What it reads to compute the address is read
//! in bounds (`B[t + D]` under its test, the names defined before the loop), and the
//! address is that of an element of `A` (tested against `A`'s length), so the kernel
//! reads no memory it does not own.

use std::collections::{HashMap, HashSet};

use slic_algebra::Prim;

use crate::ir::walk::Effects;
use crate::ir::{AssignOp, Expr, Lit, Stmt};

/// How many iterations ahead a read is requested: measured on the Naive Bayes sweep,
/// 4 and 8 gave the same gain (0.90x of the sweep), 16 less (0.95x).
pub(crate) const DISTANCE: u64 = 8;

/// The smallest table, in elements, whose reads are requested ahead: four times an L2
/// cache of 1 MiB in 8-byte elements; a smaller table stays in the cache once read.
pub(crate) const MIN_LEN: u64 = 1 << 17;

/// The name standing for `B[t + D]` in [`Ahead::index`].
pub(crate) const AHEAD: &str = "@ahead";

/// One read to request ahead: `table[index]`, `index` over the names declared outside
/// the loop, natural literals, `+`, `*`, and [`AHEAD`] for `source[t + D]`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ahead {
    pub table: String,
    pub source: String,
    pub index: Expr,
}

/// The reads of `body`, a loop over `var`, to request ahead (see the module
/// documentation); `large` says which arrays are large enough.
pub(crate) fn plan(var: &str, body: &[Stmt], large: &dyn Fn(&str) -> bool) -> Vec<Ahead> {
    let inside = Effects::of(body);
    let mut defs: HashMap<&str, &Expr> = HashMap::new();
    let mut sources: HashMap<&str, &str> = HashMap::new();
    for s in body {
        match s {
            Stmt::Let { name, value, .. } => {
                if let Expr::Index(a, i) = value {
                    if let (Expr::Var(b), Expr::Var(t)) = (a.as_ref(), i.as_ref()) {
                        if t == var {
                            sources.insert(name, b);
                        }
                    }
                }
                defs.entry(name).or_insert(value);
            }
            Stmt::If { then, .. } => {
                for t in then {
                    if let Stmt::Assign {
                        name,
                        op: AssignOp::Set,
                        value,
                    } = t
                    {
                        defs.entry(name).or_insert(value);
                    }
                }
            }
            _ => {}
        }
    }
    let fixed = |x: &str| x != var && !inside.decls.contains(x) && !inside.writes.contains(x);
    let mut reads = Vec::new();
    shallow_reads(body, &mut reads);
    let mut out: Vec<Ahead> = Vec::new();
    for (table, x) in &reads {
        if !large(table) {
            continue;
        }
        let mut source = None;
        let Some(index) = resolve(x, &defs, &sources, &fixed, &mut source, 0) else {
            continue;
        };
        let Some(source) = source else {
            continue;
        };
        let a = Ahead {
            table: table.clone(),
            source: source.to_string(),
            index,
        };
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// The reads `A[x]` of a named array in `body`'s statements, nested `if`s included,
/// nested loops not (their reads are their own loop's).
fn shallow_reads(body: &[Stmt], out: &mut Vec<(String, Expr)>) {
    for s in body {
        match s {
            Stmt::For { .. } => {}
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                expr_reads(cond, out);
                shallow_reads(then, out);
                shallow_reads(otherwise, out);
            }
            s => crate::ir::walk::for_each_expr(s, &mut |e| expr_reads(e, out)),
        }
    }
}

fn expr_reads(e: &Expr, out: &mut Vec<(String, Expr)>) {
    match e {
        Expr::Index(a, i) => {
            if let Expr::Var(a) = a.as_ref() {
                out.push((a.clone(), i.as_ref().clone()));
            }
            expr_reads(i, out);
        }
        Expr::Prim(_, args) => args.iter().for_each(|a| expr_reads(a, out)),
        Expr::Convert(_, x) => expr_reads(x, out),
        Expr::Pair(a, b) => {
            expr_reads(a, out);
            expr_reads(b, out);
        }
        Expr::Var(_) | Expr::Lit(_) => {}
    }
}

/// `x` with the body's names replaced by their definitions, the one source read by
/// [`AHEAD`] (its array into `source`); `None` if it reads anything else the loop
/// changes, computes anything but `+` and `*` of naturals, or reads two sources.
fn resolve<'a>(
    x: &'a Expr,
    defs: &HashMap<&str, &'a Expr>,
    sources: &HashMap<&str, &'a str>,
    fixed: &dyn Fn(&str) -> bool,
    source: &mut Option<&'a str>,
    depth: usize,
) -> Option<Expr> {
    if depth > 16 {
        return None;
    }
    match x {
        Expr::Lit(Lit::Nat(_)) => Some(x.clone()),
        Expr::Var(v) => {
            if let Some(b) = sources.get(v.as_str()) {
                if source.is_some_and(|s| s != *b) {
                    return None;
                }
                *source = Some(b);
                return Some(Expr::var(AHEAD));
            }
            if let Some(d) = defs.get(v.as_str()) {
                return resolve(d, defs, sources, fixed, source, depth + 1);
            }
            fixed(v).then(|| x.clone())
        }
        Expr::Prim(p @ (Prim::Add | Prim::Mul), args) => {
            let args: Option<Vec<Expr>> = args
                .iter()
                .map(|a| resolve(a, defs, sources, fixed, source, depth + 1))
                .collect();
            Some(Expr::prim(*p, args?))
        }
        _ => None,
    }
}

/// The names [`Ahead::index`] reads (besides [`AHEAD`]), for the caller to check they
/// are natural scalars.
pub(crate) fn names(e: &Expr) -> HashSet<String> {
    let mut r = HashSet::new();
    crate::ir::walk::reads(e, &mut r);
    r.remove(AHEAD);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::Type;

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    /// `let k = ks[t]; let r = i * 100; let x = r + k; var at; if x < n { at = x } else
    /// { at = n + x }; let c = stat[at]; let small = prior[k]; acc += c`
    fn body() -> Vec<Stmt> {
        let plus = |a: Expr, b: Expr| Expr::prim(Prim::Add, vec![a, b]);
        vec![
            Stmt::let_("k", Type::Nat, Expr::index(v("ks"), v("t"))),
            Stmt::let_(
                "r",
                Type::Nat,
                Expr::prim(Prim::Mul, vec![v("i"), Expr::nat(100)]),
            ),
            Stmt::let_("x", Type::Nat, plus(v("r"), v("k"))),
            Stmt::var("at", Type::Nat, None),
            Stmt::If {
                cond: Expr::prim(Prim::Lt, vec![v("x"), v("n")]),
                then: vec![Stmt::assign("at", AssignOp::Set, v("x"))],
                otherwise: vec![Stmt::assign("at", AssignOp::Set, plus(v("n"), v("x")))],
            },
            Stmt::let_("c", Type::Nat, Expr::index(v("stat"), v("at"))),
            Stmt::let_("small", Type::Real, Expr::index(v("prior"), v("k"))),
            Stmt::assign("acc", AssignOp::Add, v("c")),
        ]
    }

    #[test]
    fn an_indirect_read_of_a_large_table_is_requested_ahead() {
        let large = |a: &str| a == "stat";
        let plan = plan("t", &body(), &large);
        assert_eq!(
            plan,
            vec![Ahead {
                table: "stat".into(),
                source: "ks".into(),
                index: Expr::prim(
                    Prim::Add,
                    vec![
                        Expr::prim(Prim::Mul, vec![v("i"), Expr::nat(100)]),
                        v(AHEAD)
                    ]
                ),
            }]
        );
        assert_eq!(names(&plan[0].index), HashSet::from(["i".to_string()]));
        // the small table is not requested; with both large, both are
        let both = |a: &str| a == "stat" || a == "prior";
        assert_eq!(super::plan("t", &body(), &both).len(), 2);
    }

    #[test]
    fn an_index_the_loop_changes_otherwise_is_not_requested() {
        // `r` reads `acc`, which the loop writes: its value ahead is unknown
        let mut b = body();
        b[1] = Stmt::let_(
            "r",
            Type::Nat,
            Expr::prim(Prim::Mul, vec![v("acc"), Expr::nat(100)]),
        );
        assert!(plan("t", &b, &|_| true).iter().all(|a| a.table != "stat"));
        // a read at `t` itself, not through another array, is left to the hardware
        let direct = vec![Stmt::let_("c", Type::Nat, Expr::index(v("stat"), v("t")))];
        assert!(plan("t", &direct, &|_| true).is_empty());
        // a source indexed by anything but the loop's variable is none
        let mut b = body();
        b[0] = Stmt::let_("k", Type::Nat, Expr::index(v("ks"), v("i")));
        assert!(plan("t", &b, &|_| true).is_empty());
    }
}
