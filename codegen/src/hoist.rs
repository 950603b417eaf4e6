//! Reads of fixed data at fixed positions, read once (issue 12: kernel speed). LDA's
//! update compares every token's document and word with `doc[wordUpdate]` and
//! `w[wordUpdate]`, inside its loop over the tokens and under the test `j /= wordUpdate`:
//! A-normal form leaves them there, since a read may fail and the branch might not run.
//! In the kernel each is then a checked read at every token, and the C compiler cannot
//! move it out itself (the histograms it stores into are arrays of the same type, which
//! may alias the data as far as it knows).
//!
//! [`hoist_reads`] moves a read `a[i]` that sits inside a loop to a `let` at the top of
//! the program when `a` is a parameter the program never stores into, `i` a literal or a
//! parameter, neither rebound anywhere, and the caller proves `i` below the length of `a`
//! (`crate::data_facts`: a chain's lengths and its index's range). Exact: parameters do
//! not change during a run, so the read has the same value wherever it is evaluated, and
//! a read in range cannot fail, so evaluating it once more or less changes nothing.

use std::collections::HashSet;

use crate::ir::walk::{map_exprs, visit_decls};
use crate::ir::{Expr, Program, Stmt};
use slic_algebra::Type;

/// `p` with its reads that may move moved, and how many distinct reads moved.
/// `in_range(a, i)` must hold only where `i` is below the length of `a` for every
/// argument the program will be run on.
pub fn hoist_reads(p: &Program, in_range: &dyn Fn(&str, &Expr) -> bool) -> (Program, usize) {
    let mut declared = HashSet::new();
    visit_decls(&p.body, &mut |x| {
        declared.insert(x.to_string());
    });
    let fixed = |x: &str| {
        !declared.contains(x)
            && !p.inout.iter().any(|y| y == x)
            && p.params.iter().any(|(y, _)| y == x)
    };
    let mut found: Vec<(String, Expr, Type)> = Vec::new();
    let mut visit = |e: &Expr| {
        each_read(e, &mut |a, i| {
            let movable = fixed(a)
                && match i {
                    Expr::Lit(_) => true,
                    Expr::Var(x) => fixed(x),
                    _ => false,
                }
                && !found.iter().any(|(b, j, _)| b == a && j == i)
                && in_range(a, i);
            let elem = p.params.iter().find_map(|(y, t)| match t {
                Type::Array(el) if y == a => Some((**el).clone()),
                _ => None,
            });
            if let (true, Some(el)) = (movable, elem) {
                found.push((a.to_string(), i.clone(), el));
            }
        })
    };
    in_loops(&p.body, false, &mut visit);
    if found.is_empty() {
        return (p.clone(), 0);
    }
    let mut names = Vec::with_capacity(found.len());
    let mut lets = Vec::with_capacity(found.len());
    for (k, (a, i, el)) in found.iter().enumerate() {
        let mut name = format!("{a}_at_{k}");
        while declared.contains(&name) || p.params.iter().any(|(y, _)| *y == name) {
            name.push('_');
        }
        lets.push(Stmt::let_(
            &name,
            el.clone(),
            Expr::Index(Box::new(Expr::var(a)), Box::new(i.clone())),
        ));
        names.push(name);
    }
    let replace = |e: &Expr| replaced(e, &found, &names);
    let mut body = lets;
    for s in &p.body {
        let mut s = s.clone();
        map_exprs(&mut s, &mut |e| replace(e));
        body.push(s);
    }
    let result = replace(&p.result);
    let moved = found.len();
    (
        Program {
            result,
            ..p.with_body(body)
        },
        moved,
    )
}

/// `f` on every expression of a statement inside a loop of `body` (`inside`: `body` is
/// itself in one), loop bounds of nested loops included.
fn in_loops(body: &[Stmt], inside: bool, f: &mut dyn FnMut(&Expr)) {
    for s in body {
        match s {
            Stmt::For { lo, hi, body, .. } => {
                if inside {
                    f(lo);
                    f(hi);
                }
                in_loops(body, true, f);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if inside {
                    f(cond);
                }
                in_loops(then, inside, f);
                in_loops(otherwise, inside, f);
            }
            s if inside => {
                let mut s = s.clone();
                map_exprs(&mut s, &mut |e| {
                    f(e);
                    e.clone()
                });
            }
            _ => {}
        }
    }
}

/// `f(a, i)` on every read `a[i]` of a named array in `e`.
fn each_read(e: &Expr, f: &mut dyn FnMut(&str, &Expr)) {
    match e {
        Expr::Lit(_) | Expr::Var(_) => {}
        Expr::Index(a, i) => {
            if let Expr::Var(a) = a.as_ref() {
                f(a, i);
            } else {
                each_read(a, f);
            }
            each_read(i, f);
        }
        Expr::Prim(_, args) => args.iter().for_each(|x| each_read(x, f)),
        Expr::Convert(_, x) => each_read(x, f),
        Expr::Pair(a, b) => {
            each_read(a, f);
            each_read(b, f);
        }
    }
}

/// `e` with each read of `found` replaced by the name it moved to.
fn replaced(e: &Expr, found: &[(String, Expr, Type)], names: &[String]) -> Expr {
    let go = |x: &Expr| replaced(x, found, names);
    match e {
        Expr::Index(a, i) => {
            if let Expr::Var(x) = a.as_ref() {
                if let Some(k) = found.iter().position(|(b, j, _)| b == x && j == i.as_ref()) {
                    return Expr::var(&names[k]);
                }
            }
            Expr::Index(Box::new(go(a)), Box::new(go(i)))
        }
        Expr::Lit(_) | Expr::Var(_) => e.clone(),
        Expr::Prim(p, args) => Expr::Prim(*p, args.iter().map(go).collect()),
        Expr::Convert(c, x) => Expr::Convert(*c, Box::new(go(x))),
        Expr::Pair(a, b) => Expr::Pair(Box::new(go(a)), Box::new(go(b))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Val;
    use crate::ir::{AssignOp, Lit};
    use slic_algebra::Prim;

    /// `fn d: array(nat), u: nat`: how many `j` have `d[j] == d[u]`.
    fn program() -> Program {
        let read = |i: &str| Expr::Index(Box::new(Expr::var("d")), Box::new(Expr::var(i)));
        Program {
            params: vec![
                ("d".into(), Type::array(Type::Nat)),
                ("u".into(), Type::Nat),
            ],
            body: vec![
                Stmt::var("c", Type::Nat, Some(Expr::nat(0))),
                Stmt::for_(
                    "j",
                    Expr::nat(0),
                    Expr::size(Expr::var("d")),
                    vec![Stmt::If {
                        cond: Expr::prim(Prim::Eq, vec![read("j"), read("u")]),
                        then: vec![Stmt::assign("c", AssignOp::Add, Expr::nat(1))],
                        otherwise: Vec::new(),
                    }],
                ),
            ],
            result: Expr::var("c"),
            measure: false,
            inout: Vec::new(),
        }
    }

    #[test]
    fn a_read_at_a_parameter_in_range_is_read_once_before_the_loops() {
        let p = program();
        let (q, moved) = hoist_reads(&p, &|a, i| {
            a == "d" && matches!(i, Expr::Var(x) if x == "u")
        });
        assert_eq!(moved, 1);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(text.contains("let d_at_0: nat = d[u]"), "{text}");
        assert!(text.contains("(d[j] == d_at_0)"), "{text}");
        let d = Val::array([3, 1, 3, 3].iter().map(|&k| Val::Nat(k)).collect());
        for u in 0..4 {
            let a = [d.clone(), Val::Nat(u)];
            assert_eq!(
                crate::run(&p, &a).map(|r| r.0),
                crate::run(&q, &a).map(|r| r.0)
            );
        }
    }

    #[test]
    fn nothing_moves_without_a_proof_or_out_of_a_loop() {
        let p = program();
        assert_eq!(hoist_reads(&p, &|_, _| false).1, 0);
        // a read at the top level is already read once
        let top = Program {
            body: vec![Stmt::let_(
                "x",
                Type::Nat,
                Expr::Index(Box::new(Expr::var("d")), Box::new(Expr::Lit(Lit::Nat(0)))),
            )],
            result: Expr::var("x"),
            ..p
        };
        assert_eq!(hoist_reads(&top, &|_, _| true).1, 0);
    }
}
