//! A `prob` array read out of log space once per kernel call, not once per read (issue
//! 13: kernel speed). A `prob` is its logarithm in the kernels, so the GMM's
//! `prob2real(as[i]) + n` costs an `exp` per class; in the whole-sweep kernel
//! (`crate::incremental::sweep_program`) that is an `exp` per class and per point, of the
//! same fifty values at every point.
//!
//! [`linear_tables`] finds `let x: prob = a[i]`, `a` a `prob` array parameter that nothing
//! stores into, where
//! - the read sits in two loops or more and `i` is the index of one nested inside the
//!   outermost (so the outermost loop reads the same elements again and again), and
//! - `x` is read only as `prob2real(x)`.
//!
//! It allocates `a_real` of `size(a)` at the top of the program, fills it with
//! `prob2real(a[k])` for every `k`, and reads `a_real[i]` for `prob2real(x)`; `let x`
//! itself, read by nothing then, goes (`crate::dce`). The values are the same (the same
//! conversion of the same element, computed earlier), `prob2real` cannot fail, and
//! `a_real[i]` is out of range exactly where `a[i]` was.
//!
//! [`invariant_conversions`] does the same for a `prob` name: `prob2real(x)` read inside a
//! loop that `x`'s own `let` (or parameter) is outside of becomes `x_real`, a `let` right
//! after `x`'s. The C and Rust compilers hoist an `exp` out of a loop only where the loop
//! runs it unconditionally; the LDA sweep's `prob2real` of its word's prior sat in a
//! branch on a test the loop does not change, an `exp` per topic and per token.

use std::collections::{HashMap, HashSet};

use slic_algebra::{Coercion, Type};

use crate::dce::eliminate;
use crate::ir::walk::{decl_counts, fresh_name, map_exprs, tally, Effects};
use crate::ir::{AssignOp, Expr, Program, Stmt};

/// `p` with the repeated `prob2real` reads of its `prob` arrays read from tables (see the
/// module documentation).
pub(crate) fn linear_tables(p: &Program) -> Program {
    let written = Effects::of(&p.body).writes;
    let arrays: HashSet<&str> = p
        .params
        .iter()
        .filter(|(x, t)| {
            *t == Type::Array(std::sync::Arc::new(Type::Prob))
                && !written.contains(x)
                && !p.inout.contains(x)
        })
        .map(|(x, _)| x.as_str())
        .collect();
    if arrays.is_empty() {
        return p.clone();
    }
    let mut count = decl_counts(&p.body);
    for (x, _) in &p.params {
        *count.entry(x.clone()).or_default() += 1;
    }
    // the candidate reads: `x` bound to `a[i]`
    let mut found: Vec<(String, String)> = Vec::new();
    candidates(&p.body, &mut Vec::new(), &arrays, &count, &mut found);
    // ... read only through `prob2real`
    let (mut all, mut converted) = (HashMap::new(), HashMap::new());
    for s in &p.body {
        let mut s = s.clone();
        map_exprs(&mut s, &mut |e| {
            tally(e, &mut all, &mut converted);
            e.clone()
        });
    }
    tally(&p.result, &mut all, &mut converted);
    found.retain(|(x, _)| all.get(x).is_some_and(|n| converted.get(x) == Some(n)));
    if found.is_empty() {
        return p.clone();
    }
    let mut taken: HashSet<String> = count.into_keys().collect();
    let mut fresh = |base: String| fresh_name(&mut taken, &base);
    let mut tables: Vec<(String, String)> = Vec::new();
    // each `x` its `x_real` and its array's table
    let mut reals: HashMap<String, String> = HashMap::new();
    let mut table_of: HashMap<String, String> = HashMap::new();
    for (x, a) in found {
        let table = match tables.iter().find(|(b, _)| *b == a) {
            Some((_, t)) => t.clone(),
            None => {
                let t = fresh(format!("{a}_real"));
                tables.push((a.clone(), t.clone()));
                t
            }
        };
        reals.insert(x.clone(), fresh(format!("{x}_real")));
        table_of.insert(x, table);
    }
    let mut body = Vec::new();
    for (a, t) in &tables {
        let k = fresh("k".to_string());
        body.push(Stmt::Alloc {
            name: t.clone(),
            elem: Type::Real,
            size: Expr::size(Expr::var(a)),
        });
        body.push(Stmt::For {
            var: k.clone(),
            lo: Expr::nat(0),
            hi: Expr::size(Expr::var(a)),
            body: vec![Stmt::Store {
                array: t.clone(),
                index: Expr::var(&k),
                op: AssignOp::Set,
                value: Expr::convert(
                    Coercion::Prob2Real,
                    Expr::index(Expr::var(a), Expr::var(&k)),
                ),
            }],
        });
    }
    // after `let x = a[i]`: `let x_real = a_real[i]`
    let read = |s: &Stmt| match s {
        Stmt::Let {
            name,
            value: Expr::Index(_, i),
            ..
        } => {
            let table = Expr::var(table_of.get(name)?);
            let value = Expr::index(table, i.as_ref().clone());
            Some(Stmt::let_(&reals[name], Type::Real, value))
        }
        _ => None,
    };
    body.extend(beside(&p.body, &reals, &read));
    let q = Program {
        result: converted_reads(&p.result, &reals),
        ..p.with_body(body)
    };
    eliminate(&q).program
}

/// `p` with each `prob2real(x)` a loop repeats, `x` a `prob` name declared outside it,
/// read from `x_real`, a `let` beside `x`'s (see the module documentation).
pub(crate) fn invariant_conversions(p: &Program) -> Program {
    let mut count = decl_counts(&p.body);
    for (x, _) in &p.params {
        *count.entry(x.clone()).or_default() += 1;
    }
    // the loop depth of each prob name declared once, and the deepest read through
    // prob2real of each name
    let mut declared: HashMap<String, usize> = p
        .params
        .iter()
        .filter(|(x, t)| *t == Type::Prob && !p.inout.contains(x))
        .map(|(x, _)| (x.clone(), 0))
        .collect();
    let mut deepest: HashMap<String, usize> = HashMap::new();
    depths(&p.body, 0, &mut declared, &mut deepest);
    let mut taken: HashSet<String> = count.keys().cloned().collect();
    let mut reals: HashMap<String, String> = HashMap::new();
    let mut names: Vec<&String> = declared.keys().collect();
    names.sort();
    for x in names {
        let outer = declared[x];
        if count.get(x) == Some(&1) && deepest.get(x).is_some_and(|&d| d > outer) {
            let name = fresh_name(&mut taken, &format!("{x}_real"));
            reals.insert(x.clone(), name);
        }
    }
    if reals.is_empty() {
        return p.clone();
    }
    let convert = |x: &str| {
        let value = Expr::convert(Coercion::Prob2Real, Expr::var(x));
        Stmt::let_(&reals[x], Type::Real, value)
    };
    let mut body: Vec<Stmt> = p
        .params
        .iter()
        .filter(|(x, _)| reals.contains_key(x))
        .map(|(x, _)| convert(x))
        .collect();
    let after = |s: &Stmt| match s {
        Stmt::Let { name, .. } if reals.contains_key(name) => Some(convert(name)),
        _ => None,
    };
    body.extend(beside(&p.body, &reals, &after));
    Program {
        result: converted_reads(&p.result, &reals),
        ..p.with_body(body)
    }
}

/// Records the loop depth of each `prob` `let` of `body` and the deepest `prob2real` read
/// of each name.
fn depths(
    body: &[Stmt],
    depth: usize,
    declared: &mut HashMap<String, usize>,
    deepest: &mut HashMap<String, usize>,
) {
    let scan = |e: &Expr, deepest: &mut HashMap<String, usize>| {
        let mut all = HashMap::new();
        let mut converted = HashMap::new();
        tally(e, &mut all, &mut converted);
        for x in converted.into_keys() {
            let d = deepest.entry(x).or_default();
            *d = (*d).max(depth);
        }
    };
    for s in body {
        match s {
            Stmt::For { lo, hi, body, .. } => {
                scan(lo, deepest);
                scan(hi, deepest);
                depths(body, depth + 1, declared, deepest);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                scan(cond, deepest);
                depths(then, depth, declared, deepest);
                depths(otherwise, depth, declared, deepest);
            }
            s => {
                if let Stmt::Let {
                    name,
                    ty: Type::Prob,
                    ..
                } = s
                {
                    declared.insert(name.clone(), depth);
                }
                let mut s = s.clone();
                map_exprs(&mut s, &mut |e| {
                    scan(e, deepest);
                    e.clone()
                });
            }
        }
    }
}

/// `body` reading `x_real` for each `prob2real(x)` of `reals`, with the statement `after`
/// gives (the declaration of `x_real`) right after each that has one.
fn beside(
    body: &[Stmt],
    reals: &HashMap<String, String>,
    after: &dyn Fn(&Stmt) -> Option<Stmt>,
) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        let mut s = s.clone();
        match &mut s {
            Stmt::For { lo, hi, body, .. } => {
                *lo = converted_reads(lo, reals);
                *hi = converted_reads(hi, reals);
                *body = beside(body, reals, after);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                *cond = converted_reads(cond, reals);
                *then = beside(then, reals, after);
                *otherwise = beside(otherwise, reals, after);
            }
            _ => map_exprs(&mut s, &mut |e| converted_reads(e, reals)),
        }
        let next = after(&s);
        out.push(s);
        out.extend(next);
    }
    out
}

/// The `let x: prob = a[i]` of `body` that qualify by position (see the module doc), as
/// `(x, a)`; `loops` holds the enclosing loops' indices, outermost first.
fn candidates(
    body: &[Stmt],
    loops: &mut Vec<String>,
    arrays: &HashSet<&str>,
    count: &HashMap<String, usize>,
    found: &mut Vec<(String, String)>,
) {
    for s in body {
        match s {
            Stmt::Let {
                name,
                ty: Type::Prob,
                value: Expr::Index(a, i),
            } => {
                if let (Expr::Var(a), Expr::Var(i)) = (a.as_ref(), i.as_ref()) {
                    let inner = loops.iter().skip(1).any(|v| v == i);
                    if arrays.contains(a.as_str())
                        && inner
                        && count.get(name) == Some(&1)
                        && count.get(i) == Some(&1)
                    {
                        found.push((name.clone(), a.clone()));
                    }
                }
            }
            Stmt::For { var, body, .. } => {
                loops.push(var.clone());
                candidates(body, loops, arrays, count, found);
                loops.pop();
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                candidates(then, loops, arrays, count, found);
                candidates(otherwise, loops, arrays, count, found);
            }
            _ => {}
        }
    }
}

/// `e` with `prob2real(x)` read as `x_real`.
fn converted_reads(e: &Expr, reals: &HashMap<String, String>) -> Expr {
    match e {
        Expr::Convert(Coercion::Prob2Real, x) => match x.as_ref() {
            Expr::Var(v) if reals.contains_key(v) => Expr::var(&reals[v]),
            _ => Expr::convert(Coercion::Prob2Real, converted_reads(x, reals)),
        },
        Expr::Lit(_) | Expr::Var(_) => e.clone(),
        Expr::Prim(p, args) => {
            Expr::Prim(*p, args.iter().map(|a| converted_reads(a, reals)).collect())
        }
        Expr::Index(a, i) => Expr::index(converted_reads(a, reals), converted_reads(i, reals)),
        Expr::Convert(c, x) => Expr::convert(*c, converted_reads(x, reals)),
        Expr::Pair(a, b) => Expr::Pair(
            Box::new(converted_reads(a, reals)),
            Box::new(converted_reads(b, reals)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Val;
    use slic_algebra::Prim;

    /// `fn a: array(prob), m: nat`: `Σ_{r < m} Σ_{i < size(a)} prob2real(a[ix]) · (r + 1)`
    /// (`ix` is `i` or `r`).
    fn nested(ix: &str) -> Program {
        let inner = vec![
            Stmt::let_("x", Type::Prob, Expr::index(Expr::var("a"), Expr::var(ix))),
            Stmt::Assign {
                name: "acc".into(),
                op: AssignOp::Add,
                value: Expr::prim(
                    Prim::Mul,
                    vec![
                        Expr::convert(Coercion::Prob2Real, Expr::var("x")),
                        Expr::convert(
                            Coercion::Nat2Real,
                            Expr::prim(Prim::Add, vec![Expr::var("r"), Expr::nat(1)]),
                        ),
                    ],
                ),
            },
        ];
        over_a(
            Vec::new(),
            vec![Stmt::For {
                var: "i".into(),
                lo: Expr::nat(0),
                hi: Expr::size(Expr::var("a")),
                body: inner,
            }],
        )
    }

    /// `fn a: array(prob), m: nat`: `before`, then `var acc = 0; for r < m { inner }`,
    /// returning `acc`.
    fn over_a(mut body: Vec<Stmt>, inner: Vec<Stmt>) -> Program {
        body.push(Stmt::Var {
            name: "acc".into(),
            ty: Type::Real,
            init: Some(Expr::real(0.0)),
        });
        body.push(Stmt::For {
            var: "r".into(),
            lo: Expr::nat(0),
            hi: Expr::var("m"),
            body: inner,
        });
        Program {
            params: vec![
                ("a".into(), Type::Array(std::sync::Arc::new(Type::Prob))),
                ("m".into(), Type::Nat),
            ],
            body,
            result: Expr::var("acc"),
            measure: false,
            inout: Vec::new(),
        }
    }

    #[test]
    fn a_read_the_outer_loop_repeats_comes_from_a_table() {
        let p = nested("i");
        let q = linear_tables(&p);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(
            text.contains("alloc a_real: array(real) of size(a)"),
            "{text}"
        );
        assert!(text.contains("let x_real: real = a_real[i]"), "{text}");
        assert!(!text.contains("prob2real(x)"), "{text}");
        let a = Val::Array(
            [0.5f64, 2.0, 7.25]
                .iter()
                .map(|v| Val::Prob(v.ln()))
                .collect(),
        );
        for m in [0, 1, 4] {
            let args = [a.clone(), Val::Nat(m)];
            assert_eq!(
                crate::run(&p, &args).map(|r| r.0),
                crate::run(&q, &args).map(|r| r.0)
            );
        }
    }

    #[test]
    fn a_conversion_a_loop_repeats_is_made_once() {
        // `let y = a[0]` outside the loop, `acc += prob2real(y)` inside: one `y_real`
        let p = over_a(
            vec![Stmt::let_(
                "y",
                Type::Prob,
                Expr::index(Expr::var("a"), Expr::nat(0)),
            )],
            vec![Stmt::Assign {
                name: "acc".into(),
                op: AssignOp::Add,
                value: Expr::convert(Coercion::Prob2Real, Expr::var("y")),
            }],
        );
        let q = invariant_conversions(&p);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(text.contains("let y_real: real = prob2real(y)"), "{text}");
        assert!(!text.contains("+= prob2real(y)"), "{text}");
        let a = Val::Array([0.5f64, 2.0].iter().map(|v| Val::Prob(v.ln())).collect());
        for m in [0, 3] {
            let args = [a.clone(), Val::Nat(m)];
            assert_eq!(
                crate::run(&p, &args).map(|r| r.0),
                crate::run(&q, &args).map(|r| r.0)
            );
        }
    }

    #[test]
    fn a_read_at_the_outermost_index_stays() {
        // `a[r]`: each pass of the outer loop reads a different element, once per inner pass
        // (no table of all of `a` pays for that in general)
        let p = nested("r");
        assert_eq!(linear_tables(&p), p);
    }
}
