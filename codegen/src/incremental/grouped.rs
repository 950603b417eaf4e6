//! Statistics of points that own many members (issue 13: Naive Bayes). The Naive Bayes
//! update labels documents, `z[u]`, but its histograms are sums over the tokens, each
//! reading its document's label: `for j in 0..size(w) { let d = doc[j]; ... z[d] ... d /=
//! u ... }`. The loop runs over the members `j` of the points `d = doc[j]` (`doc` a
//! parameter of data), not over the points themselves. Its accumulators are still
//!
//! `Σ_{j : g[j] ≠ u} body₀(j) + Σ_{j : g[j] = u} body(j)`,
//!
//! with `g` the grouping array, `body₀` the body with `d /= u` true and `body` the one
//! with `d == u` true: the first sum is all members' minus point `u`'s own, kept as any
//! statistic is; `remove` and `add` move point `u`'s members, and the update adds
//! `body(j)` of each. Both visit the members of `u` alone through an index of the
//! grouping built once by `init` (a counting sort, as a compressed sparse row):
//! `starts[d]..starts[d + 1]` are the positions in `members` of the members of point
//! `d`, in the loop's order. A member whose `g[j]` is not a point (`g[j] >= size(z)`) is
//! in no group: no update's index is its point, so it is only ever summed by `init`.
//!
//! [`point_of`] finds the grouping: a `let d = g[j]` at the top of the body through
//! which alone the body reads the state and the index (after [`unalias`] has replaced
//! the `let`s that only copy `d`). The index's two statistics are built by
//! [`build_index`] and read by [`members_loop`].

use std::collections::{HashMap, HashSet};

use slic_algebra::{Prim, Type};

use crate::ir::walk::{fresh_name, map_exprs, substitute};
use crate::ir::{AssignOp, Expr, Stmt};

/// A loop over the members of points (see the module doc).
#[derive(Clone, Debug)]
pub(super) struct Group {
    /// The grouping array (`doc`): member `j` belongs to point `array[j]`.
    pub array: String,
    /// The statistics holding the index: `starts` (one more than the state's length),
    /// then `members`, by their positions in the statistics (set by `derive`).
    pub stats: Option<(usize, usize)>,
}

/// The `let`s at the top level of `body` that read a data array at the loop's variable
/// `j` (`let d = g[j]`, `g` in `data`): the candidate points, with their arrays.
pub(super) fn point_of(body: &[Stmt], j: &str, data: &HashSet<&str>) -> Vec<(String, String)> {
    body.iter()
        .filter_map(|s| match s {
            Stmt::Let {
                name,
                value: Expr::Index(a, i),
                ..
            } => match (a.as_ref(), i.as_ref()) {
                (Expr::Var(g), Expr::Var(k)) if k == j && data.contains(g.as_str()) => {
                    Some((name.clone(), g.clone()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// `body` with every read of a `let` that copies `d` (directly or through another such
/// `let`) made a read of `d` itself. Names are unique in a lowered program and `let`s
/// are never reassigned, so a copy holds `d`'s value wherever it is in scope.
pub(super) fn unalias(body: &[Stmt], d: &str) -> Vec<Stmt> {
    let mut copies: HashMap<String, String> = HashMap::new();
    crate::ir::walk::visit_leaves(body, &mut |s| {
        if let Stmt::Let {
            name,
            value: Expr::Var(x),
            ..
        } = s
        {
            copies.insert(name.clone(), x.clone());
        }
    });
    // the copies of `d`, to a fixpoint (a copy of a copy)
    let mut of_d: HashSet<String> = HashSet::new();
    loop {
        let before = of_d.len();
        for (name, x) in &copies {
            if x == d || of_d.contains(x) {
                of_d.insert(name.clone());
            }
        }
        if of_d.len() == before {
            break;
        }
    }
    if of_d.is_empty() {
        return body.to_vec();
    }
    let to_d: HashMap<String, Expr> = of_d.into_iter().map(|x| (x, Expr::var(d))).collect();
    body.iter()
        .map(|s| {
            let mut s = s.clone();
            map_exprs(&mut s, &mut |e| substitute(e, &to_d));
            s
        })
        .collect()
}

/// The statements that build the index of `g` over the loop `for j in lo..hi` into the
/// statistics `starts` and `members` (both zero): a count per point, their running
/// sums, then each member placed after those of its point already placed.
pub(super) fn build_index(
    names: &mut HashSet<String>,
    g: &str,
    state: &str,
    (lo, hi): (&Expr, &Expr),
    (starts, members): (&str, &str),
) -> Vec<Stmt> {
    let (j, p, d, next) = (
        fresh_name(names, "j"),
        fresh_name(names, "p"),
        fresh_name(names, "d"),
        fresh_name(names, "next"),
    );
    let points = Expr::size(Expr::var(state));
    let point = Stmt::let_(&p, Type::Nat, Expr::index(Expr::var(g), Expr::var(&j)));
    let is_point = Expr::prim(Prim::Lt, vec![Expr::var(&p), points.clone()]);
    let plus1 = |e: Expr| Expr::prim(Prim::Add, vec![e, Expr::nat(1)]);
    let count = Stmt::for_(
        &j,
        lo.clone(),
        hi.clone(),
        vec![
            point.clone(),
            Stmt::if_(
                is_point.clone(),
                vec![Stmt::store(
                    starts,
                    plus1(Expr::var(&p)),
                    AssignOp::Add,
                    Expr::nat(1),
                )],
                Vec::new(),
            ),
        ],
    );
    let running = Stmt::for_(
        &d,
        Expr::nat(0),
        points.clone(),
        vec![Stmt::store(
            starts,
            plus1(Expr::var(&d)),
            AssignOp::Add,
            Expr::index(Expr::var(starts), Expr::var(&d)),
        )],
    );
    let at = Expr::prim(
        Prim::Add,
        vec![
            Expr::index(Expr::var(starts), Expr::var(&p)),
            Expr::index(Expr::var(&next), Expr::var(&p)),
        ],
    );
    let place = Stmt::for_(
        &j,
        lo.clone(),
        hi.clone(),
        vec![
            point,
            Stmt::if_(
                is_point,
                vec![
                    Stmt::store(members, at, AssignOp::Set, Expr::var(&j)),
                    Stmt::store(&next, Expr::var(&p), AssignOp::Add, Expr::nat(1)),
                ],
                Vec::new(),
            ),
        ],
    );
    vec![count, running, Stmt::alloc(&next, Type::Nat, points), place]
}

/// `for t in starts[u]..starts[u + 1] { let j = members[t]; body }`: `body` at each
/// member `j` of point `u`, in the loop's order (nothing where `u` is not a point).
pub(super) fn members_loop(
    names: &mut HashSet<String>,
    j: &str,
    u: &str,
    (starts, members): (&str, &str),
    body: Vec<Stmt>,
) -> Stmt {
    let t = fresh_name(names, "t");
    let next = Expr::prim(Prim::Add, vec![Expr::var(u), Expr::nat(1)]);
    let from = Expr::index(Expr::var(starts), Expr::var(u));
    let to = Expr::index(Expr::var(starts), next.clone());
    let mut inner = vec![Stmt::let_(
        j,
        Type::Nat,
        Expr::index(Expr::var(members), Expr::var(&t)),
    )];
    inner.extend(body);
    let is_point = Expr::prim(Prim::Lt, vec![next, Expr::size(Expr::var(starts))]);
    Stmt::if_(is_point, vec![Stmt::for_(&t, from, to, inner)], Vec::new())
}
