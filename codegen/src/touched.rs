//! Lists kept where their tables are written (issue 13: kernel speed). `sparse.rs` lists
//! the indices where a product's factor is not 1 once per update, by a pass over the
//! table that decides it: for Naive Bayes, the words of the moved document, found by
//! scanning its histogram over the whole vocabulary,
//!
//! ```text
//! alloc d: array(nat) of V               // zero
//! ... d[w] += 1 ...                      // the document's tokens
//! var n = 0; alloc ks: array(nat) of V
//! for k in 0..V { let x = d[k]; if x == 0 {} else { ks[n] = k; n += 1 } }
//! ```
//!
//! 50,000 reads an update for a document of a hundred words. [`list_where_written`]
//! builds the list at the writes instead: where every write to `d` adds a positive
//! literal, an element is nonzero exactly when some write reached it, so
//!
//! ```text
//! var n = 0; alloc ks: array(nat) of V   // moved up, beside d
//! ... if d[w] == 0 { ks[n] = w; n += 1 }; d[w] += 1 ...
//! ```
//!
//! lists the same indices, each once. They come in the order the writes first reach
//! them rather than ascending: the loops over the list multiply the same factors in
//! another order, which moves a product's last bits and nothing else. The added read
//! `d[w]` is at the index the store reads, so it fails only where the store would have.

use std::collections::HashSet;

use slic_algebra::Prim;

use crate::ir::walk::visit_leaves;
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};

/// `p` with each list of a table's nonzero indices built at the table's writes (see the
/// module documentation), and how many lists were.
pub fn list_where_written(p: &Program) -> (Program, usize) {
    let mut body = p.body.clone();
    let mut made = 0;
    while let Some(scan) = find(&body) {
        rewrite(&mut body, &scan);
        made += 1;
    }
    (p.with_body(body), made)
}

/// A scan `for k in 0..W { let x = d[k]; (let g = x == 0;) if .. {} else { ks[n] = k;
/// n += 1 } }` in the top-level block, with the positions of its parts.
struct Scan {
    at: usize,
    table: String,
    list: String,
    count: String,
    table_at: usize,
    list_at: usize,
    count_at: usize,
}

/// The first scan of the top-level block whose table and list qualify.
fn find(body: &[Stmt]) -> Option<Scan> {
    (0..body.len()).find_map(|at| scan_at(body, at))
}

fn scan_at(body: &[Stmt], at: usize) -> Option<Scan> {
    let Stmt::For {
        var,
        lo,
        hi,
        body: b,
    } = &body[at]
    else {
        return None;
    };
    if *lo != Expr::nat(0) {
        return None;
    }
    let (x, table) = match b.first()? {
        Stmt::Let {
            name,
            value: Expr::Index(a, i),
            ..
        } => match (a.as_ref(), i.as_ref()) {
            (Expr::Var(t), Expr::Var(k)) if k == var => (name.clone(), t.clone()),
            _ => return None,
        },
        _ => return None,
    };
    let is_zero = |e: &Expr| {
        matches!(e, Expr::Prim(Prim::Eq, args)
            if matches!(args.as_slice(), [Expr::Var(y), Expr::Lit(Lit::Nat(0))] if *y == x))
    };
    let rest = &b[1..];
    let (cond_ok, branch) = match rest {
        [Stmt::Let { name: g, value, .. }, s @ Stmt::If {
            cond: Expr::Var(c), ..
        }] if c == g && is_zero(value) => (true, s),
        [s @ Stmt::If { cond, .. }] => (is_zero(cond), s),
        _ => return None,
    };
    let Stmt::If {
        then, otherwise, ..
    } = branch
    else {
        return None;
    };
    if !cond_ok || !then.is_empty() {
        return None;
    }
    let (list, count) = match otherwise.as_slice() {
        [Stmt::Store {
            array,
            index: Expr::Var(n),
            op: AssignOp::Set,
            value: Expr::Var(k),
        }, Stmt::Assign {
            name,
            op: AssignOp::Add,
            value: Expr::Lit(Lit::Nat(1)),
        }] if k == var && n == name => (array.clone(), name.clone()),
        _ => return None,
    };
    let decl = |name: &str| {
        body[..at].iter().position(|s| match s {
            Stmt::Alloc { name: n, .. } | Stmt::Var { name: n, .. } => n == name,
            _ => false,
        })
    };
    let (table_at, list_at, count_at) = (decl(&table)?, decl(&list)?, decl(&count)?);
    // the table a zero `nat` alloc of the scan's length; the list a literal length; the
    // count a `var` of 0
    let ok_table = matches!(&body[table_at], Stmt::Alloc { elem, size, .. }
        if *elem == slic_algebra::Type::Nat && size == hi);
    let ok_list = matches!(
        &body[list_at],
        Stmt::Alloc {
            size: Expr::Lit(_),
            ..
        }
    );
    let ok_count = matches!(&body[count_at], Stmt::Var { init: Some(e), .. } if *e == Expr::nat(0));
    if !(ok_table && ok_list && ok_count) || list_at < table_at || count_at < table_at {
        return None;
    }
    // every write to the table adds a positive literal at a name or a literal, between
    // its allocation and the scan; the list and the count written only by the scan
    let mut ok = true;
    let mut inside = 0;
    for (k, s) in body.iter().enumerate() {
        visit_leaves(std::slice::from_ref(s), &mut |leaf| match leaf {
            Stmt::Store {
                array,
                op,
                value,
                index,
                ..
            } if *array == table => {
                let adds = *op == AssignOp::Add
                    && matches!(value, Expr::Lit(Lit::Nat(c)) if *c > 0)
                    && matches!(index, Expr::Var(_) | Expr::Lit(_));
                ok &= adds && k > table_at && k < at;
            }
            Stmt::Store { array, .. } if *array == list => {
                ok &= k == at;
                inside += 1;
            }
            Stmt::Assign { name, .. } if *name == count => {
                ok &= k == at;
                inside += 1;
            }
            _ => {}
        });
    }
    (ok && inside == 2).then_some(Scan {
        at,
        table,
        list,
        count,
        table_at,
        list_at,
        count_at,
    })
}

/// `body` with the scan removed, the list and count declared after the table, and each
/// write to the table first listing its index where the element is still 0.
fn rewrite(body: &mut Vec<Stmt>, s: &Scan) {
    let mut moved: Vec<(usize, Stmt)> = vec![
        (s.list_at, body[s.list_at].clone()),
        (s.count_at, body[s.count_at].clone()),
    ];
    moved.sort_by_key(|(k, _)| *k);
    let mut drop: HashSet<usize> = HashSet::from([s.at, s.list_at, s.count_at]);
    let mut out = Vec::with_capacity(body.len());
    for (k, stmt) in body.drain(..).enumerate() {
        if drop.remove(&k) {
            continue;
        }
        let after_table = k == s.table_at;
        out.push(listing(stmt, s));
        if after_table {
            out.extend(moved.iter().map(|(_, m)| m.clone()));
        }
    }
    *body = out;
}

/// `stmt` with each `table[e] += c` preceded by `if table[e] == 0 { list[count] = e;
/// count += 1 }`.
fn listing(stmt: Stmt, s: &Scan) -> Stmt {
    match stmt {
        Stmt::Store {
            array,
            index,
            op,
            value,
        } if array == s.table => {
            let fresh = Expr::prim(
                Prim::Eq,
                vec![
                    Expr::index(Expr::var(&s.table), index.clone()),
                    Expr::nat(0),
                ],
            );
            let list = vec![
                Stmt::store(&s.list, Expr::var(&s.count), AssignOp::Set, index.clone()),
                Stmt::assign(&s.count, AssignOp::Add, Expr::nat(1)),
            ];
            Stmt::if_(
                Expr::bool(true),
                vec![
                    Stmt::if_(fresh, list, Vec::new()),
                    Stmt::Store {
                        array,
                        index,
                        op,
                        value,
                    },
                ],
                Vec::new(),
            )
        }
        Stmt::For { var, lo, hi, body } => Stmt::For {
            var,
            lo,
            hi,
            body: body.into_iter().map(|x| listing(x, s)).collect(),
        },
        Stmt::If {
            cond,
            then,
            otherwise,
        } => Stmt::If {
            cond,
            then: then.into_iter().map(|x| listing(x, s)).collect(),
            otherwise: otherwise.into_iter().map(|x| listing(x, s)).collect(),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Val;
    use slic_algebra::Type;

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    /// `d` counts the words `w` (below 6), `ks` lists the nonzero ones by a scan, and the
    /// result is `Σ_t (ks[t] + 1) * d[ks[t]]` beside `n`: the same whatever the list's
    /// order. `add` is what each write adds; `late` writes `d` once more after the scan.
    fn program(add: Expr, late: bool) -> Program {
        let count = Stmt::for_(
            "j",
            Expr::nat(0),
            Expr::size(v("w")),
            vec![
                Stmt::let_("x", Type::Nat, Expr::index(v("w"), v("j"))),
                Stmt::store("d", v("x"), AssignOp::Add, add),
            ],
        );
        let scan = Stmt::for_(
            "k",
            Expr::nat(0),
            Expr::nat(6),
            vec![
                Stmt::let_("c", Type::Nat, Expr::index(v("d"), v("k"))),
                Stmt::let_(
                    "g",
                    Type::Bool,
                    Expr::prim(Prim::Eq, vec![v("c"), Expr::nat(0)]),
                ),
                Stmt::if_(
                    v("g"),
                    Vec::new(),
                    vec![
                        Stmt::store("ks", v("n"), AssignOp::Set, v("k")),
                        Stmt::assign("n", AssignOp::Add, Expr::nat(1)),
                    ],
                ),
            ],
        );
        let use_list = Stmt::for_(
            "t",
            Expr::nat(0),
            v("n"),
            vec![
                Stmt::let_("q", Type::Nat, Expr::index(v("ks"), v("t"))),
                Stmt::let_("e", Type::Nat, Expr::index(v("d"), v("q"))),
                Stmt::assign(
                    "s",
                    AssignOp::Add,
                    Expr::prim(
                        Prim::Mul,
                        vec![Expr::prim(Prim::Add, vec![v("q"), Expr::nat(1)]), v("e")],
                    ),
                ),
            ],
        );
        let mut body = vec![
            Stmt::alloc("d", Type::Nat, Expr::nat(6)),
            count,
            Stmt::var("n", Type::Nat, Some(Expr::nat(0))),
            Stmt::alloc("ks", Type::Nat, Expr::nat(6)),
            scan,
            Stmt::var("s", Type::Nat, Some(Expr::nat(0))),
            use_list,
        ];
        if late {
            body.push(Stmt::store("d", Expr::nat(0), AssignOp::Add, Expr::nat(1)));
        }
        Program {
            params: vec![("w".into(), Type::array(Type::Nat))],
            body,
            result: Expr::Pair(Box::new(v("s")), Box::new(v("n"))),
            measure: false,
            inout: Vec::new(),
        }
    }

    #[test]
    fn a_list_of_nonzero_counts_is_built_where_they_are_counted() {
        let p = program(Expr::nat(1), false);
        let (q, made) = list_where_written(&p);
        assert_eq!(made, 1, "{q}");
        assert_eq!(crate::verify::verify(&q), Ok(()), "{q}");
        assert!(!q.to_string().contains("for k in"), "{q}");
        let words: [&[u64]; 5] = [&[], &[3], &[5, 0, 5, 2, 0, 5], &[1, 1, 1], &[4, 2, 9]];
        for w in words {
            let args = [Val::array(w.iter().map(|&x| Val::Nat(x)).collect())];
            // a word past the table: the store errs, and so does the added read
            crate::interp::assert_same_run(&p, &args, &q, &args, &format!("{w:?}"));
        }
    }

    #[test]
    fn tables_that_are_not_counts_keep_their_scan() {
        // a write that may add 0, one of a name, and one after the scan
        for p in [
            program(Expr::nat(0), false),
            program(v("x"), false),
            program(Expr::nat(1), true),
        ] {
            let (q, made) = list_where_written(&p);
            assert_eq!(made, 0, "{q}");
        }
    }
}
