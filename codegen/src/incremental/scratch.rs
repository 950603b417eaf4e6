//! The update's working tables kept from one update to the next (issue 13: an update
//! through the driver's protocol at the speed of hand-written code). An update allocates
//! its tables afresh at every call: for Naive Bayes, the moved document's word histogram
//! and the list of its words, 2 x 50,000 elements zeroed per update for a document of a
//! hundred words, and nineteen beta functions of the topic prior alone computed again.
//! The sweep kernel (`sweep.rs`) makes them once a sweep; a kernel called once an update
//! cannot, unless the tables outlive the call.
//!
//! [`keep`] makes such a table a parameter of every derived program, `inout` in the
//! update, a statistic of kind [`StatKind::Scratch`](super::StatKind::Scratch) that the
//! driver makes once a chain, filled as a fresh allocation is (zeros; `prob`'s 0): every
//! top-level allocation of the update declared once, of a size over the parameters no
//! point changes. Where it was allocated, such a table is filled with zeros again,
//! unless what it holds at the start of an update cannot change what the update does:
//!
//! - **set whole before it is read** (the weights): the first statement that mentions
//!   it is a loop over its length setting every element from values that are not its own;
//! - **memoised values of what no point changes** (`invariant.rs`'s `kept_memos`: Naive
//!   Bayes' `B(Σ_{j>k} α_j, α_k)`): a value found there is the one its expression gives
//!   at that key in every update, since it reads nothing the protocol changes;
//! - **zeros again by its list** (`reset.rs`: the document histogram and its list): where
//!   the update draws once, a categorical at its top level, and nothing from the draw on
//!   mentions the table, the list's resets run just before the draw, so every update
//!   that reaches its draw leaves the table as it found it, all zeros.
//!
//! A refill costs what the allocation's own zeros did, without the allocator: Naive
//! Bayes' thirteen other memo tables of nineteen elements.
//!
//! An update that stops before its draw (an error, a weight of 0) may leave a listed
//! table dirty: the driver fills every scratch table again then (`gibbs.rs`), and the
//! chain stops at such an update anyway. The interpreter runs the update on a copy of the
//! arguments and never keeps them: it finds fresh tables at every update, which mean the
//! same.

use std::collections::{HashMap, HashSet};

use slic_algebra::{Dist, Type};

use super::invariant::kept_memos;
use super::reset::Lists;
use super::sweep::{overwritten, reads_only};
use crate::ir::walk::{decl_counts, fresh_name, reads, rename_block, rename_expr, Effects};
use crate::ir::{AssignOp, Expr, Program, Stmt};

/// One table of the update kept between updates: the parameter standing for it, what it
/// is, its element type and its length (over the parameters no point changes).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Scratch {
    pub(super) param: String,
    pub(super) of: String,
    pub(super) elem: Type,
    pub(super) len: Expr,
}

/// `update` with the tables it may keep between updates made parameters (each of them
/// named afresh from `names`, `inout`), the resets of the listed ones placed before its
/// draw, and those tables; `moved` holds the parameters the protocol changes between
/// updates (the state, the index, the statistics `remove` and `add` write).
pub(super) fn keep(
    update: &Program,
    moved: &HashSet<String>,
    names: &mut HashSet<String>,
) -> (Program, Vec<Scratch>) {
    let body = &update.body;
    let fixed: HashSet<&str> = update
        .params
        .iter()
        .map(|(x, _)| x.as_str())
        .filter(|x| !moved.contains(*x))
        .collect();
    let decls = decl_counts(body);
    let top: Vec<(usize, &String, &Type, &Expr)> = body
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match s {
            Stmt::Alloc { name, elem, size }
                if decls.get(name) == Some(&1) && reads_only(size, &fixed) =>
            {
                Some((k, name, elem, size))
            }
            _ => None,
        })
        .collect();
    if top.is_empty() {
        return (update.clone(), Vec::new());
    }
    let memos = kept_memos(body, moved.clone());
    let lists = Lists::of(body);
    let draw = the_draw(update);
    // the tables a list may reset before the draw: nothing from the draw on names them
    let quiet: HashSet<String> = match draw {
        Some(d) => top
            .iter()
            .map(|t| t.1.clone())
            .filter(|x| !mentioned(&body[d..], &update.result, x))
            .collect(),
        None => HashSet::new(),
    };
    let mut kept: Vec<(usize, String, Type, Expr, String)> = Vec::new();
    let mut listed = HashSet::new();
    let mut refilled = HashSet::new();
    for &(k, name, elem, size) in &top {
        let why = if memos.contains(name) {
            format!("{name}, memoised values (or their flags) of what no point changes")
        } else if overwritten(&body[k + 1..], name, size) {
            format!("{name}, set whole before it is read")
        } else if lists.covers(name, &quiet) {
            listed.insert(name.clone());
            match lists.list_of(name) {
                Some(list) => format!("{name}, zeros again before the draw (by its list {list})"),
                None => format!(
                    "{name}, a list of a table's nonzero elements, zeros again before the draw"
                ),
            }
        } else {
            refilled.insert(k);
            format!("{name}, filled with zeros where it was allocated")
        };
        kept.push((k, name.clone(), elem.clone(), size.clone(), why));
    }
    let dropped: HashSet<usize> = kept.iter().map(|t| t.0).collect();
    let mut out = Vec::with_capacity(body.len());
    for (k, s) in body.iter().enumerate() {
        if Some(k) == draw && !listed.is_empty() {
            let mut fresh = |base: &str| fresh_name(names, base);
            out.extend(lists.reset(&listed, &mut fresh));
        }
        match s {
            Stmt::Alloc { name, elem, size } if refilled.contains(&k) => {
                let c = fresh_name(names, "c");
                let zero = crate::lower::zero(elem);
                let fill = Stmt::store(name, Expr::var(&c), AssignOp::Set, zero);
                out.push(Stmt::for_(&c, Expr::nat(0), size.clone(), vec![fill]));
            }
            _ if dropped.contains(&k) => {}
            _ => out.push(s.clone()),
        }
    }
    let map: HashMap<String, String> = kept
        .iter()
        .map(|t| (t.1.clone(), fresh_name(names, &format!("scratch_{}", t.1))))
        .collect();
    rename_block(&mut out, &map);
    let mut result = update.result.clone();
    for (from, to) in &map {
        result = rename_expr(&result, from, to);
    }
    let mut p = update.clone();
    p.body = out;
    p.result = result;
    let scratch: Vec<Scratch> = kept
        .into_iter()
        .map(|(_, name, elem, len, of)| Scratch {
            param: map[&name].clone(),
            of,
            elem,
            len,
        })
        .collect();
    for s in &scratch {
        p.params
            .push((s.param.clone(), Type::array(s.elem.clone())));
        p.inout.push(s.param.clone());
    }
    (p, scratch)
}

/// The position of the update's one draw, a categorical among its top-level statements
/// with nothing that draws, weighs or rejects after it.
fn the_draw(update: &Program) -> Option<usize> {
    if !super::sweep::one_last_draw(&update.body) {
        return None;
    }
    update.body.iter().position(|s| {
        matches!(
            s,
            Stmt::Draw {
                dist: Dist::Categorical,
                ..
            }
        )
    })
}

/// Does `rest` or `result` read or write `x`?
fn mentioned(rest: &[Stmt], result: &Expr, x: &str) -> bool {
    let e = Effects::of(rest);
    let mut r = HashSet::new();
    reads(result, &mut r);
    e.reads.contains(x) || e.writes.contains(x) || r.contains(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{run_measure, Mode, Outcome, Val};
    use crate::ir::Lit;
    use slic_algebra::Prim;

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    /// An update over the words `w[0..n]` of one point: their histogram `d` listed in `ks`,
    /// the weight of each of 3 labels from it (`arr`, set whole), and a draw.
    fn update(after_draw: Vec<Stmt>) -> Program {
        let t14 = Expr::index(v("w"), v("t"));
        let mut body = vec![
            Stmt::alloc("d", Type::Nat, Expr::nat(5)),
            Stmt::var("n", Type::Nat, Some(Expr::nat(0))),
            Stmt::alloc("ks", Type::Nat, Expr::nat(5)),
            Stmt::for_(
                "t",
                Expr::nat(0),
                Expr::size(v("w")),
                vec![
                    Stmt::let_("e", Type::Nat, t14),
                    Stmt::if_(
                        Expr::prim(Prim::Eq, vec![Expr::index(v("d"), v("e")), Expr::nat(0)]),
                        vec![
                            Stmt::store("ks", v("n"), AssignOp::Set, v("e")),
                            Stmt::assign("n", AssignOp::Add, Expr::nat(1)),
                        ],
                        Vec::new(),
                    ),
                    Stmt::store("d", v("e"), AssignOp::Add, Expr::nat(1)),
                ],
            ),
            Stmt::alloc("arr", Type::Prob, Expr::nat(3)),
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::nat(3),
                vec![
                    Stmt::var("s", Type::Nat, Some(Expr::nat(1))),
                    Stmt::for_(
                        "j",
                        Expr::nat(0),
                        v("n"),
                        vec![Stmt::assign(
                            "s",
                            AssignOp::Add,
                            Expr::prim(
                                Prim::Mul,
                                vec![
                                    Expr::index(v("d"), Expr::index(v("ks"), v("j"))),
                                    Expr::prim(Prim::Add, vec![v("i"), Expr::nat(1)]),
                                ],
                            ),
                        )],
                    ),
                    Stmt::store(
                        "arr",
                        v("i"),
                        AssignOp::Set,
                        Expr::convert(slic_algebra::Coercion::Nat2Prob, v("s")),
                    ),
                ],
            ),
            Stmt::Draw {
                name: "k".into(),
                ty: Type::Nat,
                dist: Dist::Categorical,
                args: vec![v("arr")],
            },
        ];
        body.extend(after_draw);
        Program {
            params: vec![("w".into(), Type::array(Type::Nat))],
            body,
            result: v("k"),
            measure: true,
            inout: Vec::new(),
        }
    }

    fn weights(p: &Program, args: &[Val]) -> Vec<(Val, f64)> {
        match run_measure(p, args, Mode::Exact { max_paths: 100 }) {
            Ok(Outcome::Exact(e)) => e.weights,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_histogram_its_list_and_the_weights_are_kept_and_left_as_found() {
        let p = update(Vec::new());
        let mut names = HashSet::new();
        crate::ir::walk::visit_decls(&p.body, &mut |x| {
            names.insert(x.to_string());
        });
        let (q, kept) = keep(&p, &HashSet::from(["w".to_string()]), &mut names);
        let of: Vec<&str> = kept.iter().map(|s| s.param.as_str()).collect();
        assert_eq!(of, ["scratch_d", "scratch_ks", "scratch_arr"], "{q}");
        crate::verify::verify(&q).expect("the kept update verifies");
        // a run on the tables a fresh allocation holds gives the update's weights, and
        // leaves the histogram and the list as it found them (the weights are left set)
        let w = Val::array(vec![Val::Nat(1), Val::Nat(3), Val::Nat(1)]);
        let zeros = |n: usize| Val::array(vec![Val::Nat(0); n]);
        let no_mass = Val::array(vec![Val::Prob(f64::NEG_INFINITY); 3]);
        let mut args = vec![w.clone(), zeros(5), zeros(5), no_mass];
        assert_eq!(weights(&p, &[w]), weights(&q, &args));
        // the update up to its draw, run keeping its tables: the histogram and the list
        // are as it found them (the weights are left set)
        let at = q.body.iter().position(|s| matches!(s, Stmt::Draw { .. }));
        let prefix = Program {
            body: q.body[..at.expect("a draw")].to_vec(),
            result: Expr::nat(0),
            measure: false,
            ..q.clone()
        };
        crate::interp::run_inout(&prefix, &mut args).expect("runs");
        assert_eq!(args[1], zeros(5));
        assert_eq!(args[2], zeros(5));
        assert_ne!(args[3], Val::array(vec![Val::Prob(f64::NEG_INFINITY); 3]));
        // a mutant that drops the resets leaves the histogram dirty
        let unreset = Program {
            body: prefix
                .body
                .iter()
                .filter(
                    |s| !matches!(s, Stmt::For { var, .. } if var.starts_with('t') && var != "t"),
                )
                .cloned()
                .collect(),
            ..prefix.clone()
        };
        let mut dirty = vec![args[0].clone(), zeros(5), zeros(5), args[3].clone()];
        crate::interp::run_inout(&unreset, &mut dirty).expect("runs");
        assert_ne!(dirty[1], zeros(5), "{unreset}");
    }

    #[test]
    fn a_table_read_after_the_draw_is_filled_again_where_it_was_allocated() {
        let peek = vec![Stmt::let_(
            "late",
            Type::Nat,
            Expr::index(v("d"), Expr::Lit(Lit::Nat(0))),
        )];
        let p = update(peek);
        let mut names = HashSet::new();
        let (q, kept) = keep(&p, &HashSet::from(["w".to_string()]), &mut names);
        let of: Vec<&str> = kept.iter().map(|s| s.param.as_str()).collect();
        assert_eq!(of, ["scratch_d", "scratch_ks", "scratch_arr"], "{q}");
        crate::verify::verify(&q).expect("the kept update verifies");
        // nothing resets the histogram before the draw: it and its list are filled with
        // zeros where they were allocated, so any tables they start from give the
        // update's weights
        let w = Val::array(vec![Val::Nat(2), Val::Nat(2), Val::Nat(4)]);
        let junk = |n: usize| Val::array((0..n).map(|k| Val::Nat(7 * k as u64 + 1)).collect());
        let args = vec![
            w.clone(),
            junk(5),
            junk(5),
            Val::array(vec![Val::Prob(0.5); 3]),
        ];
        assert_eq!(weights(&p, &[w]), weights(&q, &args));
        // a mutant that keeps the histogram unfilled counts the junk
        let unfilled = Program {
            body: q.body[1..].to_vec(),
            ..q.clone()
        };
        assert!(
            matches!(&q.body[0], Stmt::For { body, .. } if matches!(&body[0], Stmt::Store { array, .. } if array == "scratch_d")),
            "{q}"
        );
        assert_ne!(weights(&unfilled, &args), weights(&q, &args));
    }
}
