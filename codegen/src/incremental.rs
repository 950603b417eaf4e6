//! Incremental statistics of a Gibbs update (issue 13, deliverable 1): the loops of an
//! update program that rebuild, at every update, sums over the points of the state, kept
//! instead between updates and moved when one label changes.
//!
//! An update `fn ... z ... u: measure(nat)` lowered to the loop IR rebuilds its
//! histograms in loops `for j in lo..hi { body }` over the points. Such a loop is made
//! incremental when
//! - it sits outside every other loop (under `if`s is fine, when their tests and the
//!   `let`s it reads depend on neither the state nor the index),
//! - its body writes only accumulators declared before it, each with `+=` on `nat`, `int`
//!   or `real` (an array's element or a scalar: sums of counts, sums, sums of squares,
//!   `r_add` under `r_index`), and reads none of them,
//! - it reads the state only as `z[j]` and the index only in the tests `j /= u` and
//!   `j == u` (the point split), and draws nothing.
//!
//! Then its accumulators equal `Σ_{j ≠ u} body₀(j) + [lo <= u < hi]·body(u)`, where
//! `body₀` is the body with `j /= u` true (the body of every other point, reading `u`
//! nowhere) and `body(u)` the body at `j = u`. The first sum is kept: a statistic per
//! accumulator (an array parameter of the same element type, a scalar's of length 1).
//!
//! [`derive`] writes four programs over one parameter list, the update's parameters then
//! the statistics:
//! - `init` sets the statistics to `Σ_j body₀(j)` over every point (inout);
//! - `remove` subtracts point `u`'s `body₀(u)` under its current label, `add` adds it
//!   (inout; both do nothing when `u` is outside the loop's range);
//! - `update` is the update with each such loop replaced by the statistics (copied into
//!   its accumulators, O(classes)) plus `body(u)`, folded where `j == u` decides tests.
//!
//! The driver's protocol (`gibbs/incremental.rs`): `init` once; for each update of `u`,
//! `remove`, `update` (which reads the statistics of every point but `u`), draw, store
//! the label, `add`. Between updates the statistics are those of every point: `init` of
//! the current state, exactly for counts, up to rounding for real sums.
//!
//! A loop that also reads the index through a test `a[j] == a[u]` of a data array (LDA's
//! own document and own word) keeps the accumulators that test filters per key: a table
//! with a row per value of `a`, the update reading row `a[u]` (`keyed.rs`).
//!
//! The update's copies of the statistics are then read where they are used
//! (`crate::forward`), a list of a point's nonzero counts is built as they are counted
//! (`crate::touched`), and `prob2real` of a data array the update converts in its loops,
//! or the suffix sums of one it accumulates, is a table `init` builds once (`tables.rs`,
//! `suffix.rs`).
//!
//! Exactness: every derived program is checked by the IR's verifier, and what cannot be
//! shown to have the shape above keeps its loop (reported with the reason, in
//! [`Incremental::loops`]); the programs never guess. A sum of `prob`s (log space) is not
//! invertible and is never made incremental.

use std::collections::{HashMap, HashSet};
use std::fmt;

use slic_algebra::{Coercion, Prim, Type};

use crate::dce::eliminate;
use crate::forward::forward_copies;
use crate::ir::walk::{can_fail, map_exprs, reads, rewrite_leaves, visit_leaves, Effects};
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};
use crate::memo::undo_cheap;
use crate::touched::list_where_written;
use crate::verify::verify;

mod fission;
mod grouped;
mod invariant;
mod keyed;
mod reset;
mod scratch;
mod suffix;
mod sweep;
mod tables;

pub use keyed::Key;

pub use sweep::sweep_program;

/// One kept statistic: an array parameter standing for an accumulator of the update.
#[derive(Clone, Debug, PartialEq)]
pub struct Statistic {
    /// The parameter's name in the derived programs.
    pub param: String,
    /// The accumulator of the update it keeps the other points' part of.
    pub of: String,
    /// Its element type (`nat`, `int` or `real`).
    pub elem: Type,
    /// Whether the accumulator is a scalar (the statistic then has length 1).
    pub scalar: bool,
    pub kind: StatKind,
    /// A moving sum of terms that are never negative: `remove` clamps it at 0, so the
    /// rounding of a subtraction never takes it below (where `real2prob` or `log` of it
    /// would fail, or be NaN, though the exact value is 0).
    pub nonnegative: bool,
    /// Kept per key (`keyed.rs`): rows of the accumulator's length, the update reading
    /// the row of its own key.
    pub key: Option<Key>,
    /// A bound on every element while the chain keeps it, where one is known: the
    /// number of points times what one point adds (a literal per write, its loop's
    /// range literal), or for an index the number of members. What a caller may store
    /// it in 32 bits by (`Specialise::narrow`).
    pub most: Option<u64>,
}

impl Statistic {
    /// A table no point's part is summed into (built by `init`, or the update's own):
    /// an array, unbounded, unkeyed.
    fn table(param: String, of: String, elem: Type, kind: StatKind) -> Statistic {
        Statistic {
            param,
            of,
            elem,
            scalar: false,
            kind,
            nonnegative: false,
            key: None,
            most: None,
        }
    }
}

/// How a statistic follows the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatKind {
    /// A sum over the points that reads their labels: `remove` and `add` move point
    /// `u`'s part (`+=` on `nat`, `int` or `real` only).
    Moving,
    /// A reduction (`+=` or `*=`, on any numeric type) that reads no label: computed once
    /// by `init` over every point, never changed after (it includes point `u` already).
    Constant(AssignOp),
    /// Half of an index of the data built once by `init`: where each point's members
    /// are (`grouped.rs`), never changed after.
    Index,
    /// A table of the data built once by `init` and read by the update: `prob2real` of
    /// every element of a data array where the update converted its elements
    /// (`tables.rs`), or an array's suffix sums where the update accumulated them
    /// (`suffix.rs`).
    Table,
    /// A working table of the update kept from one update to the next instead of
    /// allocated at each (`scratch.rs`): the driver makes it once a chain, as a fresh
    /// allocation is, and only the update writes it.
    Scratch,
}

/// What became of one loop over the points.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopReport {
    /// `for j in lo..hi`, as printed.
    pub head: String,
    /// The accumulators it kept, or why it is recomputed at every update.
    pub verdict: Result<Vec<String>, String>,
}

impl fmt::Display for LoopReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Ok(accs) => write!(f, "{}: incremental ({})", self.head, accs.join(", ")),
            Err(why) => write!(f, "{}: recomputed at every update ({why})", self.head),
        }
    }
}

/// The programs of an update with incremental statistics (see the module doc).
#[derive(Clone, Debug)]
pub struct Incremental {
    pub update: Program,
    pub init: Program,
    pub add: Program,
    pub remove: Program,
    /// Each statistic's length, in order (a nat, or nested pairs of them), over the same
    /// parameters: run it (on any statistics) to size them.
    pub sizes: Program,
    pub stats: Vec<Statistic>,
    /// Every loop over the points that reads the state, made incremental or not.
    pub loops: Vec<LoopReport>,
}

impl Incremental {
    /// The number of the update's own parameters (the statistics follow them).
    pub fn first_stat(&self) -> usize {
        self.update.params.len() - self.stats.len()
    }
}

/// Why no statistic could be kept: the report of every loop over the points (empty when
/// no loop reads the state).
#[derive(Clone, Debug, PartialEq)]
pub struct NotIncremental {
    pub loops: Vec<LoopReport>,
    /// A derived program failed the verifier (a bug here, reported rather than used).
    pub invalid: Option<String>,
}

impl fmt::Display for NotIncremental {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = &self.invalid {
            return write!(f, "a derived program is ill-formed: {e}");
        }
        if self.loops.is_empty() {
            return write!(f, "no loop over the points reads the state");
        }
        write!(f, "no loop over the points can keep its statistics: ")?;
        let parts: Vec<String> = self.loops.iter().map(ToString::to_string).collect();
        write!(f, "{}", parts.join("; "))
    }
}

/// Where a statement sits: the index in each enclosing block, and for each enclosing
/// `if` the branch (`true` for `then`).
type Path = Vec<(usize, Option<bool>)>;

/// A table of the data that `init` builds once (`tables.rs`, `suffix.rs`): its
/// parameter, element type, length, the statements that fill it, and how it is reported.
struct DataTable {
    param: String,
    elem: Type,
    len: Expr,
    fill: Vec<Stmt>,
    of: String,
}

/// A loop found to keep its statistics.
struct Kept {
    path: Path,
    var: String,
    lo: Expr,
    hi: Expr,
    body0: Vec<Stmt>,
    body_u: Vec<Stmt>,
    /// Per accumulator: its statistic's index in `stats`.
    accs: Vec<(String, usize)>,
    /// The context: `(level, position)` of each `let` it reads, outermost first.
    slice: Vec<(usize, usize)>,
    /// The size of each statistic of this loop (in the context).
    sizes: Vec<(usize, Expr)>,
    /// Whether the loop runs over the members of the points rather than the points.
    group: Option<grouped::Group>,
}

/// The incremental form of update `p` with state `state` and index `index` (see the
/// module doc), or why there is none.
pub fn derive(p: &Program, state: &str, index: &str) -> Result<Incremental, NotIncremental> {
    let mut names: HashSet<String> = p.params.iter().map(|(x, _)| x.clone()).collect();
    names.extend(Effects::of(&p.body).decls);
    // label-free accumulators split off into loops of their own, kept as constants
    let labelled = tainted(&p.body, state, index);
    let mut split = p.clone();
    fission::split_loops(&mut split.body, &labelled, &mut names);
    let p = &split;
    let params: HashSet<&str> = p.params.iter().map(|(x, _)| x.as_str()).collect();
    let mut found = Vec::new();
    loops(&p.body, &mut Vec::new(), &mut found);
    let mut reports = Vec::new();
    let mut kept = Vec::new();
    let mut stats: Vec<Statistic> = Vec::new();
    for path in found {
        let Some(Stmt::For { var, lo, hi, body }) = at(&p.body, &path) else {
            continue;
        };
        let eff = Effects::of(body).free();
        let mut uses = eff.reads;
        reads(lo, &mut uses);
        reads(hi, &mut uses);
        // a loop over the points, or one whose sums no label reaches (a constant)
        let constant = !eff.measure
            && !eff.writes.is_empty()
            && eff.writes.iter().all(|w| !labelled.contains(w.as_str()))
            && !uses
                .iter()
                .any(|x| labelled.contains(x.as_str()) || x == state || x == index);
        if !uses.contains(state) && !constant {
            continue;
        }
        let head = format!("for {var} in {lo}..{hi}");
        let cx = Cx {
            p,
            params: &params,
            state,
            index,
        };
        match cx.keep(&path, var, lo, hi, body) {
            Ok((mut k, accs)) => {
                let mut named = Vec::new();
                for (acc, elem, scalar, kind, nonnegative, key) in accs {
                    let param = fresh(&mut names, &format!("stat_{acc}"));
                    named.push(match &key {
                        Some(key) => format!("{acc} per {}[{var}]", key.array),
                        None => acc.clone(),
                    });
                    k.accs.push((acc.clone(), stats.len()));
                    let most = match (&elem, kind) {
                        (Type::Nat, StatKind::Moving | StatKind::Constant(AssignOp::Add)) => {
                            points(&k.lo, &k.hi).and_then(|n| {
                                per_point(&k.body0, &acc).and_then(|c| n.checked_mul(c))
                            })
                        }
                        _ => None,
                    };
                    stats.push(Statistic {
                        param,
                        of: acc,
                        elem,
                        scalar,
                        kind,
                        nonnegative,
                        key,
                        most,
                    });
                }
                if let Some(g) = &mut k.group {
                    let first = stats.len();
                    for part in ["starts", "members"] {
                        stats.push(Statistic {
                            param: fresh(&mut names, &format!("{part}_{}", g.array)),
                            of: format!("{part} of {}", g.array),
                            elem: Type::Nat,
                            scalar: false,
                            kind: StatKind::Index,
                            nonnegative: false,
                            key: None,
                            // a count of members, or a member's position
                            most: match &k.hi {
                                Expr::Lit(Lit::Nat(n)) => Some(*n),
                                _ => None,
                            },
                        });
                    }
                    named.push(format!("over the members of each {}[{var}]", g.array));
                    g.stats = Some((first, first + 1));
                }
                reports.push(LoopReport {
                    head,
                    verdict: Ok(named),
                });
                kept.push(k);
            }
            // a loop that reads no label and cannot be kept runs at every update, as it
            // did: only loops over the points are reported
            Err(_) if !uses.contains(state) => {}
            Err(why) => reports.push(LoopReport {
                head,
                verdict: Err(why),
            }),
        }
    }
    nested_reports(&p.body, state, false, &mut reports);
    if kept.is_empty() {
        return Err(NotIncremental {
            loops: reports,
            invalid: None,
        });
    }
    let build = Builder {
        p,
        stats: &stats,
        kept: &kept,
        names: &mut names,
        state,
        index,
    };
    build.programs(reports, stats.clone())
}

/// How many points `lo..hi` holds, where both are literals.
fn points(lo: &Expr, hi: &Expr) -> Option<u64> {
    match (lo, hi) {
        (Expr::Lit(Lit::Nat(a)), Expr::Lit(Lit::Nat(b))) => Some(b.saturating_sub(*a)),
        _ => None,
    }
}

/// The most one point's `body` adds to any element of `acc`: the sum of the literals of
/// its `+=` writes to it, none inside a loop (so each runs at most once a point); `None`
/// where a write is another.
fn per_point(body: &[Stmt], acc: &str) -> Option<u64> {
    fn go(body: &[Stmt], acc: &str, looped: bool, total: &mut Option<u64>) {
        for s in body {
            match s {
                Stmt::Assign {
                    name: x, op, value, ..
                }
                | Stmt::Store {
                    array: x,
                    op,
                    value,
                    ..
                } if x == acc => {
                    *total = match (op, value, looped, *total) {
                        (AssignOp::Add, Expr::Lit(Lit::Nat(c)), false, Some(t)) => {
                            t.checked_add(*c)
                        }
                        _ => None,
                    };
                }
                Stmt::For { body, .. } => go(body, acc, true, total),
                Stmt::If {
                    then, otherwise, ..
                } => {
                    go(then, acc, looped, total);
                    go(otherwise, acc, looped, total);
                }
                _ => {}
            }
        }
    }
    let mut total = Some(0);
    go(body, acc, false, &mut total);
    total
}

/// Every `for` outside every other loop, by path.
fn loops(block: &[Stmt], path: &mut Path, out: &mut Vec<Path>) {
    for (k, s) in block.iter().enumerate() {
        match s {
            Stmt::For { .. } => {
                path.push((k, None));
                out.push(path.clone());
                path.pop();
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                path.push((k, Some(true)));
                loops(then, path, out);
                path.pop();
                path.push((k, Some(false)));
                loops(otherwise, path, out);
                path.pop();
            }
            _ => {}
        }
    }
}

/// Loops inside loops that read the state: recomputed, and said so.
fn nested_reports(block: &[Stmt], state: &str, inside: bool, out: &mut Vec<LoopReport>) {
    for s in block {
        match s {
            Stmt::For { var, lo, hi, body } => {
                if inside && Effects::of(body).reads.contains(state) {
                    out.push(LoopReport {
                        head: format!("for {var} in {lo}..{hi}"),
                        verdict: Err("inside another loop".into()),
                    });
                }
                nested_reports(body, state, true, out);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                nested_reports(then, state, inside, out);
                nested_reports(otherwise, state, inside, out);
            }
            _ => {}
        }
    }
}

/// The statement at `path`.
fn at<'a>(block: &'a [Stmt], path: &[(usize, Option<bool>)]) -> Option<&'a Stmt> {
    let ((k, branch), rest) = path.split_first()?;
    let s = block.get(*k)?;
    match (branch, s) {
        (None, _) if rest.is_empty() => Some(s),
        (
            Some(b),
            Stmt::If {
                then, otherwise, ..
            },
        ) => at(if *b { then } else { otherwise }, rest),
        _ => None,
    }
}

/// The blocks along `path`, outermost first: each block with the position of the
/// statement the path goes through.
fn levels<'a>(body: &'a [Stmt], path: &[(usize, Option<bool>)]) -> Vec<(&'a [Stmt], usize)> {
    let mut out = Vec::new();
    let mut block = body;
    for (k, branch) in path {
        out.push((block, *k));
        match (branch, block.get(*k)) {
            (
                Some(b),
                Some(Stmt::If {
                    then, otherwise, ..
                }),
            ) => block = if *b { then } else { otherwise },
            _ => break,
        }
    }
    out
}

/// A name not yet used, from `base`.
fn fresh(names: &mut HashSet<String>, base: &str) -> String {
    crate::ir::walk::fresh_name(names, base)
}

struct Cx<'a> {
    p: &'a Program,
    params: &'a HashSet<&'a str>,
    state: &'a str,
    index: &'a str,
}

/// An accumulator a loop keeps: its name, element type, whether it is a scalar, how it
/// is kept, whether its terms are never negative, and its key if it is kept per key.
type Acc = (String, Type, bool, StatKind, bool, Option<Key>);

impl Cx<'_> {
    /// The loop at `path`, if its statistics can be kept (see the module doc).
    fn keep(
        &self,
        path: &Path,
        var: &str,
        lo: &Expr,
        hi: &Expr,
        body: &[Stmt],
    ) -> Result<(Kept, Vec<Acc>), String> {
        let eff = Effects::of(body).free();
        if eff.measure {
            return Err("it draws or weights".into());
        }
        let lv = levels(&self.p.body, path);
        let labelled = tainted(body, self.state, self.index);
        // the accumulators: declared before the loop, never read; those reading a label
        // written with += only
        let mut accs: Vec<Acc> = Vec::new();
        let mut sizes = Vec::new();
        let mut writes: Vec<&String> = eff.writes.iter().collect();
        writes.sort();
        for w in writes {
            if eff.reads.contains(w) {
                return Err(format!("it reads `{w}`, which it also sums into"));
            }
            let Some(decl) = declaration(&lv, w) else {
                return Err(format!("`{w}` is not declared before it"));
            };
            let (elem, scalar, size) = match decl {
                Stmt::Alloc { elem, size, .. } => (elem.clone(), false, size.clone()),
                Stmt::Var { ty, .. } => (ty.clone(), true, Expr::nat(1)),
                _ => return Err(format!("`{w}` is not an accumulator")),
            };
            let kind = if !labelled.contains(w.as_str()) {
                match ops(body, w).as_slice() {
                    [op @ (AssignOp::Add | AssignOp::Mul)] => StatKind::Constant(*op),
                    _ => return Err(format!("`{w}` is not only added to or multiplied by")),
                }
            } else if !matches!(elem, Type::Nat | Type::Int | Type::Real) {
                return Err(format!(
                    "`{w}` sums {elem} values over the labels, which subtraction cannot \
                     undo exactly"
                ));
            } else if ops(body, w) != [AssignOp::Add] {
                return Err(format!("`{w}` is not only added to"));
            } else {
                StatKind::Moving
            };
            let nonnegative = elem == Type::Real && terms_nonnegative(body, w);
            sizes.push(size);
            accs.push((w.clone(), elem, scalar, kind, nonnegative, None));
        }
        if accs.is_empty() {
            return Err("it sums into nothing".into());
        }
        // the state only as `z[j]`, the index only in `j /= u` and `j == u`; else, the
        // loop over the members of points `d = g[j]`, through `z[d]`, `d /= u`, `d == u`
        let data = self.data_arrays();
        let mut bad = self.odd_uses(body, var);
        let mut point = var.to_string();
        let mut group = None;
        let mut grouped_body = None;
        if bad.is_some() {
            for (d, g) in grouped::point_of(body, var, &data) {
                let b = grouped::unalias(body, &d);
                if self.odd_uses(&b, &d).is_none() {
                    bad = None;
                    point = d.clone();
                    group = Some(grouped::Group {
                        array: g,
                        stats: None,
                    });
                    grouped_body = Some(b);
                    break;
                }
            }
        }
        let body = grouped_body.as_deref().unwrap_or(body);
        for e in [lo, hi] {
            let mut r = HashSet::new();
            reads(e, &mut r);
            if r.contains(self.state) || r.contains(self.index) {
                bad = Some("its bounds read the state or the index".into());
            }
        }
        if let Some(why) = bad {
            return Err(why);
        }
        let body0 = fold(&specialise(body, &point, self.index, false));
        // sums filtered by a test of a key at the point: rows of a table
        let names: Vec<String> = accs.iter().map(|a| a.0.clone()).collect();
        let lets = self.index_lets(&lv);
        let keyed = match group {
            Some(_) => None,
            None => keyed::split(&body0, var, self.index, &lets, &data, &names)?,
        };
        let body0 = match keyed {
            Some((keyed_body, filters)) => {
                for (acc, width) in accs.iter_mut().zip(&sizes) {
                    if let Some((at, array)) = filters.get(&acc.0) {
                        acc.5 = Some(Key {
                            at: at.clone(),
                            array: array.clone(),
                            width: width.clone(),
                        });
                    }
                }
                keyed_body
            }
            None => body0,
        };
        if Effects::of(&body0).reads.contains(self.index) {
            return Err(format!("it reads `{}` beyond the point split", self.index));
        }
        let body_u = fold(&specialise(body, &point, self.index, true));
        // an accumulator no other point adds to (Naive Bayes's counts of document `u`'s
        // own words) needs no statistic: the update's `body(u)` alone writes it
        let written = Effects::of(&body0).writes;
        let (accs, sizes): (Vec<Acc>, Vec<Expr>) = accs
            .into_iter()
            .zip(sizes)
            .filter(|(a, _)| written.contains(&a.0))
            .unzip();
        // the context: the lets the bounds, the sizes, the body and the tests on the path
        // read, none of them reading the state or the index
        let mut need: HashSet<String> = Effects::of(&body0).free().reads;
        need.remove(var);
        for e in sizes.iter().chain([lo, hi]) {
            reads(e, &mut need);
        }
        for (block, k) in &lv[..lv.len().saturating_sub(1)] {
            if let Some(Stmt::If { cond, .. }) = block.get(*k) {
                reads(cond, &mut need);
            }
        }
        let slice = self.slice(&lv, need)?;
        let kept = Kept {
            path: path.clone(),
            var: var.to_string(),
            lo: lo.clone(),
            hi: hi.clone(),
            body0,
            body_u,
            accs: Vec::new(),
            slice,
            sizes: Vec::new(),
            group,
        };
        let sizes = sizes.into_iter().enumerate().collect();
        Ok((Kept { sizes, ..kept }, accs))
    }

    /// The `let`s before the loop on `lv` whose values read the index (not the state):
    /// what a key of `keyed.rs` may be.
    fn index_lets(&self, lv: &[(&[Stmt], usize)]) -> HashSet<String> {
        let mut out = HashSet::new();
        for (block, k) in lv {
            for s in &block[..*k] {
                if let Stmt::Let { name, value, .. } = s {
                    let mut r = HashSet::new();
                    reads(value, &mut r);
                    if r.contains(self.index) && !r.contains(self.state) {
                        out.insert(name.clone());
                    }
                }
            }
        }
        out
    }

    /// The natural array parameters of data (not the state, never written): what a key
    /// is read from.
    fn data_arrays(&self) -> HashSet<&str> {
        let written = Effects::of(&self.p.body).writes;
        self.p
            .params
            .iter()
            .filter(|(x, t)| {
                *t == Type::array(Type::Nat)
                    && x != self.state
                    && !written.contains(x)
                    && !self.p.inout.contains(x)
            })
            .map(|(x, _)| x.as_str())
            .collect()
    }

    /// Why `body` (a loop's, over `j`) reads the state other than as `z[j]` (and the
    /// index other than in `j /= u`, `j == u`: checked on `body₀`), if it does.
    fn odd_uses(&self, body: &[Stmt], j: &str) -> Option<String> {
        let mut bad = None;
        for s in body {
            let mut s = s.clone();
            map_exprs(&mut s, &mut |e| {
                if bad.is_none() {
                    bad = self.odd_use(e, j);
                }
                e.clone()
            });
        }
        bad
    }

    /// Why `e` (an expression of the loop's body, not inside another) reads the state or
    /// the index other than as `z[j]` and in `j /= u`, `j == u`.
    fn odd_use(&self, e: &Expr, j: &str) -> Option<String> {
        match e {
            Expr::Var(x) if x == self.state => Some(format!(
                "it reads `{}` other than at its own point",
                self.state
            )),
            Expr::Var(_) | Expr::Lit(_) => None,
            Expr::Index(a, i) => match (a.as_ref(), i.as_ref()) {
                (Expr::Var(z), Expr::Var(k)) if z == self.state && k == j => None,
                (Expr::Var(z), _) if z == self.state => Some(format!(
                    "it reads `{}` other than at its own point",
                    self.state
                )),
                _ => self.odd_use(a, j).or_else(|| self.odd_use(i, j)),
            },
            Expr::Prim(Prim::Ne | Prim::Eq, args) if is_split(args, j, self.index) => None,
            Expr::Prim(_, args) => args.iter().find_map(|a| self.odd_use(a, j)),
            Expr::Convert(_, x) => self.odd_use(x, j),
            Expr::Pair(a, b) => self.odd_use(a, j).or_else(|| self.odd_use(b, j)),
        }
    }

    /// The `let`s (by level and position) defining `need`'s names that are not
    /// parameters, and those they read, in program order; an error when one is not a
    /// `let` before the loop or reads the state or the index.
    fn slice(
        &self,
        lv: &[(&[Stmt], usize)],
        mut need: HashSet<String>,
    ) -> Result<Vec<(usize, usize)>, String> {
        let mut out = Vec::new();
        for (level, (block, k)) in lv.iter().enumerate().rev() {
            for pos in (0..*k).rev() {
                let s = &block[pos];
                let declares = match s {
                    Stmt::Let { name, .. }
                    | Stmt::Var { name, .. }
                    | Stmt::Alloc { name, .. }
                    | Stmt::Draw { name, .. } => Some(name),
                    _ => None,
                };
                let Some(name) = declares else { continue };
                if !need.contains(name) {
                    continue;
                }
                let Stmt::Let { value, .. } = s else {
                    return Err(format!("it reads `{name}`, computed by the update itself"));
                };
                need.remove(name);
                let mut r = HashSet::new();
                reads(value, &mut r);
                if r.contains(self.state) || r.contains(self.index) {
                    return Err(format!(
                        "it reads `{name}`, which depends on the state or the index"
                    ));
                }
                need.extend(r);
                out.push((level, pos));
            }
        }
        need.retain(|x| !self.params.contains(x.as_str()));
        if let Some(x) = need.iter().min() {
            return Err(format!("it reads `{x}`, not a let of the data before it"));
        }
        out.reverse();
        Ok(out)
    }
}

/// Is `args` the point split's test `j ? u` (either way round)?
fn is_split(args: &[Expr], j: &str, u: &str) -> bool {
    matches!(args, [Expr::Var(a), Expr::Var(b)] if (a == j && b == u) || (a == u && b == j))
}

/// The declaration of `name` in the blocks on the path before the statement the path
/// goes through.
fn declaration<'a>(lv: &[(&'a [Stmt], usize)], name: &str) -> Option<&'a Stmt> {
    lv.iter().rev().find_map(|(block, k)| {
        block[..*k].iter().rev().find(|s| match s {
            Stmt::Alloc { name: n, .. } | Stmt::Var { name: n, .. } => n == name,
            _ => false,
        })
    })
}

/// The distinct operators `body` writes `acc` (or its elements) with.
fn ops(body: &[Stmt], acc: &str) -> Vec<AssignOp> {
    let mut out = Vec::new();
    visit_leaves(body, &mut |s| match s {
        Stmt::Assign { name: x, op, .. } | Stmt::Store { array: x, op, .. }
            if x == acc && !out.contains(op) =>
        {
            out.push(*op)
        }
        _ => {}
    });
    out
}

/// Is every term `body` adds to `acc` a real that is never negative? By shape: nat and
/// prob values converted, even powers, literals, sums, products and `max` of such, and
/// the body's own names all of whose values are such.
fn terms_nonnegative(body: &[Stmt], acc: &str) -> bool {
    fn nonneg(e: &Expr, d: &HashMap<&str, Vec<&Expr>>, seen: &mut HashSet<String>) -> bool {
        match e {
            Expr::Lit(Lit::Real(x)) => *x >= 0.0,
            Expr::Lit(Lit::Nat(_) | Lit::Prob(_)) => true,
            Expr::Convert(Coercion::Nat2Real | Coercion::Prob2Real, _) => true,
            Expr::Var(x) => {
                if !seen.insert(x.clone()) {
                    return true; // a cycle through accumulations of such terms
                }
                let ok = d
                    .get(x.as_str())
                    .is_some_and(|vs| vs.iter().all(|v| nonneg(v, d, seen)));
                seen.remove(x);
                ok
            }
            Expr::Prim(Prim::Pow, args) => match args.as_slice() {
                [b, Expr::Lit(Lit::Nat(k))] => k % 2 == 0 || nonneg(b, d, seen),
                _ => false,
            },
            Expr::Prim(Prim::Add | Prim::Mul | Prim::Max, args) => {
                args.iter().all(|a| nonneg(a, d, seen))
            }
            _ => false,
        }
    }
    // every value each name of the body takes, and every term added to `acc`
    let mut d: HashMap<&str, Vec<&Expr>> = HashMap::new();
    let mut writes = Vec::new();
    visit_leaves(body, &mut |s| match s {
        Stmt::Assign { name, value, .. }
        | Stmt::Store {
            array: name, value, ..
        } if name == acc => writes.push(value),
        Stmt::Let { name, value, .. } | Stmt::Assign { name, value, .. } => {
            d.entry(name).or_default().push(value)
        }
        Stmt::Var { name, init, .. } => d.entry(name).or_default().extend(init.iter()),
        _ => {}
    });
    !writes.is_empty() && writes.iter().all(|w| nonneg(w, &d, &mut HashSet::new()))
}

/// The names `body` computes from a label or the index: written from an expression that
/// reads the state, the index or such a name, or under a test that does (to a fixpoint,
/// for what inner loops carry round).
fn tainted<'a>(body: &'a [Stmt], state: &str, index: &str) -> HashSet<&'a str> {
    fn reads_any(e: &Expr, t: &HashSet<&str>, state: &str, index: &str) -> bool {
        let mut r = HashSet::new();
        reads(e, &mut r);
        r.iter()
            .any(|x| x == state || x == index || t.contains(x.as_str()))
    }
    fn go<'a>(body: &'a [Stmt], under: bool, t: &mut HashSet<&'a str>, state: &str, index: &str) {
        for s in body {
            let hit = |e: &Expr, t: &HashSet<&str>| under || reads_any(e, t, state, index);
            match s {
                Stmt::Let { name, value, .. } | Stmt::Assign { name, value, .. } => {
                    if hit(value, t) {
                        t.insert(name);
                    }
                }
                Stmt::Var { name, init, .. } => {
                    if under || init.as_ref().is_some_and(|e| hit(e, t)) {
                        t.insert(name);
                    }
                }
                Stmt::Store {
                    array,
                    index: i,
                    value,
                    ..
                } => {
                    if hit(i, t) || hit(value, t) {
                        t.insert(array);
                    }
                }
                Stmt::Alloc { name, size, .. } => {
                    if hit(size, t) {
                        t.insert(name);
                    }
                }
                Stmt::Draw { name, .. } => {
                    t.insert(name);
                }
                Stmt::For { lo, hi, body, .. } => {
                    let u = hit(lo, t) || hit(hi, t);
                    go(body, u, t, state, index);
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let u = hit(cond, t);
                    go(then, u, t, state, index);
                    go(otherwise, u, t, state, index);
                }
                Stmt::Factor(_) | Stmt::Observe { .. } | Stmt::Reject => {}
            }
        }
    }
    let mut t = HashSet::new();
    loop {
        let before = t.len();
        go(body, false, &mut t, state, index);
        if t.len() == before {
            return t;
        }
    }
}

/// `body` with the point split's tests decided: `j == u` is `at_u`, `j /= u` its negation.
fn specialise(body: &[Stmt], j: &str, u: &str, at_u: bool) -> Vec<Stmt> {
    fn go(e: &Expr, j: &str, u: &str, at_u: bool) -> Expr {
        match e {
            Expr::Prim(p @ (Prim::Ne | Prim::Eq), args) if is_split(args, j, u) => {
                Expr::bool((*p == Prim::Eq) == at_u)
            }
            Expr::Lit(_) | Expr::Var(_) => e.clone(),
            Expr::Prim(p, args) => Expr::Prim(*p, args.iter().map(|a| go(a, j, u, at_u)).collect()),
            Expr::Index(a, i) => Expr::index(go(a, j, u, at_u), go(i, j, u, at_u)),
            Expr::Convert(c, x) => Expr::convert(*c, go(x, j, u, at_u)),
            Expr::Pair(a, b) => {
                Expr::Pair(Box::new(go(a, j, u, at_u)), Box::new(go(b, j, u, at_u)))
            }
        }
    }
    body.iter()
        .map(|s| {
            let mut s = s.clone();
            map_exprs(&mut s, &mut |e| go(e, j, u, at_u));
            s
        })
        .collect()
}

/// `block` with boolean constants propagated through `let`s and accumulators and the
/// branches they decide taken (names are unique in a lowered program, so a taken
/// branch's statements join the enclosing block); an `if` left with two empty branches
/// is dropped when its test cannot fail.
fn fold(block: &[Stmt]) -> Vec<Stmt> {
    folded(block, false)
}

/// [`fold`], natural constants propagated too, and comparisons of them decided, and what
/// both branches of an `if` leave known after it (`keyed.rs`: does a test's failure leave
/// an accumulator unwritten?).
fn fold_values(block: &[Stmt]) -> Vec<Stmt> {
    folded(block, true)
}

/// `block` folded, natural constants kept when `nats`.
fn folded(block: &[Stmt], nats: bool) -> Vec<Stmt> {
    let mut env = Env {
        values: HashMap::new(),
        nats,
    };
    let mut out = Vec::new();
    fold_into(block, &mut env, &mut out);
    out
}

/// The constants [`fold_into`] knows, by name.
#[derive(Clone)]
struct Env {
    values: HashMap<String, Lit>,
    /// Whether natural constants are kept too (else booleans only).
    nats: bool,
}

impl Env {
    fn get(&self, x: &str) -> Option<&Lit> {
        self.values.get(x)
    }

    fn remove(&mut self, x: &str) {
        self.values.remove(x);
    }

    /// Records `x = v` where `v` is a constant this fold keeps, else forgets `x`.
    fn set(&mut self, x: &str, v: &Expr) {
        match v {
            Expr::Lit(l @ Lit::Bool(_)) => {
                self.values.insert(x.to_string(), *l);
            }
            Expr::Lit(l @ Lit::Nat(_)) if self.nats => {
                self.values.insert(x.to_string(), *l);
            }
            _ => self.remove(x),
        }
    }
}

fn fold_into(block: &[Stmt], env: &mut Env, out: &mut Vec<Stmt>) {
    for s in block {
        match s {
            Stmt::Let { name, ty, value } => {
                let v = fold_expr(value, env);
                env.set(name, &v);
                out.push(Stmt::Let {
                    name: name.clone(),
                    ty: ty.clone(),
                    value: v,
                });
            }
            Stmt::Var { name, ty, init } => {
                let init = init.as_ref().map(|e| fold_expr(e, env));
                match &init {
                    Some(v) => env.set(name, v),
                    None => env.remove(name),
                }
                out.push(Stmt::Var {
                    name: name.clone(),
                    ty: ty.clone(),
                    init,
                });
            }
            Stmt::Assign { name, op, value } => {
                let v = fold_expr(value, env);
                match op {
                    AssignOp::Set => env.set(name, &v),
                    _ => env.remove(name),
                }
                out.push(Stmt::Assign {
                    name: name.clone(),
                    op: *op,
                    value: v,
                });
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = fold_expr(cond, env);
                if let Expr::Lit(Lit::Bool(b)) = c {
                    fold_into(if b { then } else { otherwise }, env, out);
                    continue;
                }
                let (mut e1, mut e2) = (env.clone(), env.clone());
                let (mut t, mut o) = (Vec::new(), Vec::new());
                fold_into(then, &mut e1, &mut t);
                fold_into(otherwise, &mut e2, &mut o);
                let changed = Effects::of(then)
                    .writes
                    .into_iter()
                    .chain(Effects::of(otherwise).writes);
                for x in changed {
                    match (e1.get(&x), e2.get(&x)) {
                        (Some(a), Some(b)) if env.nats && a == b => {
                            let v = *a;
                            env.values.insert(x, v);
                        }
                        _ => env.remove(&x),
                    }
                }
                if t.is_empty() && o.is_empty() && !can_fail(&c) {
                    continue;
                }
                out.push(Stmt::If {
                    cond: c,
                    then: t,
                    otherwise: o,
                });
            }
            Stmt::For { var, lo, hi, body } => {
                for x in Effects::of(body).writes {
                    env.remove(&x);
                }
                let mut inner = env.clone();
                let mut b = Vec::new();
                fold_into(body, &mut inner, &mut b);
                out.push(Stmt::For {
                    var: var.clone(),
                    lo: fold_expr(lo, env),
                    hi: fold_expr(hi, env),
                    body: b,
                });
            }
            s => {
                let mut s = s.clone();
                map_exprs(&mut s, &mut |e| fold_expr(e, env));
                out.push(s);
            }
        }
    }
}

/// `e` with known constants substituted and `&&`, `||`, `not` of constants decided (and,
/// where the fold keeps naturals, comparisons of natural literals).
fn fold_expr(e: &Expr, env: &Env) -> Expr {
    match e {
        Expr::Var(x) => env.get(x).map_or_else(|| e.clone(), |l| Expr::Lit(*l)),
        Expr::Prim(p @ (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne), args) if env.nats => {
            let args: Vec<Expr> = args.iter().map(|a| fold_expr(a, env)).collect();
            match args.as_slice() {
                [Expr::Lit(Lit::Nat(a)), Expr::Lit(Lit::Nat(b))] => Expr::bool(match p {
                    Prim::Lt => a < b,
                    Prim::Le => a <= b,
                    Prim::Eq => a == b,
                    _ => a != b,
                }),
                _ => Expr::Prim(*p, args),
            }
        }
        Expr::Lit(_) => e.clone(),
        Expr::Prim(p @ (Prim::And | Prim::Or), args) => {
            // `&&`: false absorbs, true drops out; `||` the other way round
            let absorb = *p == Prim::Or;
            let mut kept = Vec::new();
            for a in args {
                match fold_expr(a, env) {
                    Expr::Lit(Lit::Bool(b)) if b == absorb => return Expr::bool(absorb),
                    Expr::Lit(Lit::Bool(_)) => {}
                    a => kept.push(a),
                }
            }
            match kept.len() {
                0 => Expr::bool(!absorb),
                1 => kept.pop().unwrap_or(Expr::bool(!absorb)),
                _ => Expr::Prim(*p, kept),
            }
        }
        Expr::Prim(Prim::Not, args) => match args.as_slice() {
            [a] => match fold_expr(a, env) {
                Expr::Lit(Lit::Bool(b)) => Expr::bool(!b),
                a => Expr::Prim(Prim::Not, vec![a]),
            },
            _ => e.clone(),
        },
        Expr::Prim(p, args) => Expr::Prim(*p, args.iter().map(|a| fold_expr(a, env)).collect()),
        Expr::Index(a, i) => Expr::index(fold_expr(a, env), fold_expr(i, env)),
        Expr::Convert(c, x) => Expr::convert(*c, fold_expr(x, env)),
        Expr::Pair(a, b) => Expr::Pair(Box::new(fold_expr(a, env)), Box::new(fold_expr(b, env))),
    }
}

struct Builder<'a> {
    p: &'a Program,
    stats: &'a [Statistic],
    kept: &'a [Kept],
    names: &'a mut HashSet<String>,
    state: &'a str,
    index: &'a str,
}

/// How a derived program changes the statistics: every one from scratch (`init`), or
/// the moving ones by point `u`'s part.
#[derive(Clone, Copy, PartialEq)]
enum Sign {
    Init,
    Add,
    Remove,
}

impl Builder<'_> {
    fn programs(
        mut self,
        loops: Vec<LoopReport>,
        stats: Vec<Statistic>,
    ) -> Result<Incremental, NotIncremental> {
        let mut params = self.p.params.clone();
        for s in self.stats {
            params.push((s.param.clone(), Type::array(s.elem.clone())));
        }
        let inout: Vec<String> = self.stats.iter().map(|s| s.param.clone()).collect();
        let done = Expr::nat(0);
        let program = |body, result, inout: &Vec<String>| Program {
            params: params.clone(),
            body,
            result,
            measure: false,
            inout: inout.clone(),
        };
        // init: zero every statistic, then sum every point
        let mut init = Vec::new();
        for s in self.stats {
            let c = fresh(self.names, "c");
            init.push(Stmt::for_(
                &c,
                Expr::nat(0),
                Expr::size(Expr::var(&s.param)),
                vec![Stmt::store(
                    &s.param,
                    Expr::var(&c),
                    AssignOp::Set,
                    identity(s),
                )],
            ));
        }
        for k in self.kept {
            let body = self.redirect(k, &k.body0, Sign::Init);
            let mut inner = vec![Stmt::for_(&k.var, k.lo.clone(), k.hi.clone(), body)];
            if let Some((g, index)) = self.index_of(k) {
                inner.extend(grouped::build_index(
                    self.names,
                    &g.array,
                    self.state,
                    (&k.lo, &k.hi),
                    (&index.0, &index.1),
                ));
            }
            init.push(self.wrapped(k, inner));
        }
        let init = program(init, done.clone(), &inout);
        // add and remove: point u alone
        let point = |this: &mut Self, sign: Sign| {
            let mut body = Vec::new();
            for k in this.kept {
                if k.accs
                    .iter()
                    .all(|(_, i)| this.stats[*i].kind != StatKind::Moving)
                {
                    continue;
                }
                let change = this.redirect(k, &k.body0, sign);
                let guarded = this.at_point(k, change);
                body.push(this.wrapped(k, vec![guarded]));
            }
            body
        };
        let add = program(point(&mut self, Sign::Add), done.clone(), &inout);
        let remove = program(point(&mut self, Sign::Remove), done.clone(), &inout);
        // sizes: each statistic's length where its loop runs, 0 elsewhere
        let mut sizes = Vec::new();
        let mut size_vars = Vec::new();
        for s in self.stats {
            let v = fresh(self.names, &format!("len_{}", s.param));
            sizes.push(Stmt::var(&v, Type::Nat, Some(Expr::nat(0))));
            size_vars.push(v);
        }
        for k in self.kept {
            let mut inner = Vec::new();
            for (i, e) in &k.sizes {
                let stat = k.accs[*i].1;
                let len = &size_vars[stat];
                match &self.stats[stat].key {
                    None => inner.push(Stmt::assign(len, AssignOp::Set, e.clone())),
                    // rows: one past the largest key of a point in the loop's range
                    Some(key) => {
                        let rows = fresh(self.names, "rows");
                        let at = Expr::index(Expr::var(&key.array), Expr::var(&k.var));
                        let next = Expr::prim(Prim::Add, vec![at, Expr::nat(1)]);
                        let widest = Expr::prim(Prim::Max, vec![Expr::var(&rows), next]);
                        let inside = Expr::prim(
                            Prim::Lt,
                            vec![Expr::var(&k.var), Expr::size(Expr::var(&key.array))],
                        );
                        inner.push(Stmt::var(&rows, Type::Nat, Some(Expr::nat(0))));
                        inner.push(Stmt::for_(
                            &k.var,
                            k.lo.clone(),
                            k.hi.clone(),
                            vec![Stmt::if_(
                                inside,
                                vec![Stmt::assign(&rows, AssignOp::Set, widest)],
                                Vec::new(),
                            )],
                        ));
                        let total =
                            Expr::prim(Prim::Mul, vec![Expr::var(&rows), key.width.clone()]);
                        inner.push(Stmt::assign(len, AssignOp::Set, total));
                    }
                }
            }
            if let Some(g) = &k.group {
                // the index: a start per point and one past the last, a place per member
                if let Some((starts, members)) = g.stats {
                    let points = Expr::size(Expr::var(self.state));
                    let past = Expr::prim(Prim::Add, vec![points, Expr::nat(1)]);
                    inner.push(Stmt::assign(&size_vars[starts], AssignOp::Set, past));
                    inner.push(Stmt::assign(
                        &size_vars[members],
                        AssignOp::Set,
                        k.hi.clone(),
                    ));
                }
            }
            sizes.push(self.wrapped(k, inner));
        }
        let result = size_vars
            .iter()
            .rev()
            .map(|v| Expr::var(v))
            .reduce(|acc, v| Expr::Pair(Box::new(v), Box::new(acc)))
            .unwrap_or(Expr::nat(0));
        let sizes = program(sizes, result, &Vec::new());
        // the update: each kept loop replaced by its statistics and point u's own part
        let mut body = self.p.body.clone();
        // the last loop first, so the paths of the others stay true
        let mut order: Vec<&Kept> = self.kept.iter().collect();
        order.sort_by(|a, b| b.path.cmp(&a.path));
        for k in order {
            let mut with = Vec::new();
            let mut constant = HashSet::new();
            for (acc, stat) in &k.accs {
                let s = &self.stats[*stat];
                let op = match s.kind {
                    StatKind::Moving => AssignOp::Add,
                    StatKind::Constant(op) => {
                        constant.insert(acc.as_str());
                        op
                    }
                    // never an accumulator's
                    StatKind::Index | StatKind::Table | StatKind::Scratch => continue,
                };
                if let Some(key) = &s.key {
                    with.push(self.read_row(s, key, acc, op));
                } else if s.scalar {
                    with.push(Stmt::assign(
                        acc,
                        op,
                        Expr::index(Expr::var(&s.param), Expr::nat(0)),
                    ));
                } else {
                    let c = fresh(self.names, "c");
                    with.push(Stmt::for_(
                        &c,
                        Expr::nat(0),
                        self.copy_width(acc, s),
                        vec![Stmt::store(
                            acc,
                            Expr::var(&c),
                            op,
                            Expr::index(Expr::var(&s.param), Expr::var(&c)),
                        )],
                    ));
                }
            }
            // point u's own part, but of the constant statistics (which hold it already;
            // a loop of constants only has none, and init evaluated what it read)
            let body_u = fold(&drop_writes(&k.body_u, &constant));
            if !body_u.is_empty() && constant.len() < k.accs.len() {
                with.push(self.at_point(k, body_u));
            }
            replace_at(&mut body, &k.path, with);
        }
        let update = Program {
            params: params.clone(),
            body,
            result: self.p.result.clone(),
            measure: self.p.measure,
            inout: Vec::new(),
        };
        // the statistics' rows read where the update reads them, not copied first; the
        // lists of a point's nonzero counts built as they are counted (`touched.rs`)
        let update = eliminate(&forward_copies(&update)).program;
        let (update, _) = list_where_written(&update);
        // tables of `prob2real` of the data the update converts in its loops, built by
        // init beside the statistics (`tables.rs`)
        let data: Vec<String> = self
            .p
            .params
            .iter()
            .filter(|(x, ty)| *ty == Type::array(Type::Prob) && x != self.state && x != self.index)
            .map(|(x, _)| x.clone())
            .collect();
        let (update, tables) = tables::element_tables(&update, &data, self.names);
        // a memoised conversion the tables made a read is read where it is used
        let update = eliminate(&update.with_body(undo_cheap(&update.body))).program;
        // and suffix sums of the data the update accumulates in its loops (`suffix.rs`)
        let (update, suffixes) = suffix::suffix_tables(&update, &data, self.names);
        let mut update = eliminate(&update).program;
        let mut made: Vec<DataTable> = Vec::new();
        for t in tables {
            let k = fresh(self.names, "k");
            let element = Expr::index(Expr::var(&t.array), Expr::var(&k));
            made.push(DataTable {
                fill: vec![Stmt::for_(
                    &k,
                    Expr::nat(0),
                    Expr::size(Expr::var(&t.array)),
                    vec![Stmt::store(
                        &t.param,
                        Expr::var(&k),
                        AssignOp::Set,
                        Expr::convert(Coercion::Prob2Real, element),
                    )],
                )],
                len: Expr::size(Expr::var(&t.array)),
                of: format!("prob2real of {}", t.array),
                elem: Type::Real,
                param: t.param,
            });
        }
        for t in suffixes {
            let (step, c) = (fresh(self.names, "step"), fresh(self.names, "c"));
            made.push(DataTable {
                fill: suffix::fill(&t.param, &t.array, &step, &c),
                len: Expr::prim(
                    Prim::Add,
                    vec![Expr::size(Expr::var(&t.array)), Expr::nat(1)],
                ),
                of: format!("suffix sums of {}", t.array),
                elem: Type::Prob,
                param: t.param,
            });
        }
        let (mut init, mut add, mut remove, mut sizes, mut stats) =
            (init, add, remove, sizes, stats);
        for t in made {
            let ty = Type::array(t.elem.clone());
            for q in [&mut update, &mut init, &mut add, &mut remove, &mut sizes] {
                q.params.push((t.param.clone(), ty.clone()));
            }
            for q in [&mut init, &mut add, &mut remove] {
                q.inout.push(t.param.clone());
            }
            init.body.extend(t.fill);
            sizes.result = Expr::Pair(Box::new(sizes.result.clone()), Box::new(t.len));
            stats.push(Statistic::table(t.param, t.of, t.elem, StatKind::Table));
        }
        // the update's working tables kept between updates (`scratch.rs`): parameters of
        // every program, written by the update alone, sized by `sizes`
        let moved = invariant::moved(&update, &[&add, &remove], self.state, self.index);
        let (update, scratch) = scratch::keep(&update, &moved, self.names);
        for t in scratch {
            let ty = Type::array(t.elem.clone());
            for q in [&mut init, &mut add, &mut remove, &mut sizes] {
                q.params.push((t.param.clone(), ty.clone()));
            }
            sizes.result = Expr::Pair(Box::new(sizes.result.clone()), Box::new(t.len));
            stats.push(Statistic::table(t.param, t.of, t.elem, StatKind::Scratch));
        }
        for q in [&update, &init, &add, &remove, &sizes] {
            if let Err(e) = verify(q) {
                return Err(NotIncremental {
                    loops,
                    invalid: Some(e.to_string()),
                });
            }
        }
        Ok(Incremental {
            update,
            init,
            add,
            remove,
            sizes,
            stats,
            loops,
        })
    }

    /// `body` with its writes to the loop's accumulators made writes to their
    /// statistics: every one for `init`; the moving ones' sums (or, removing,
    /// subtractions) for `add` and `remove`, the constant ones' dropped.
    fn redirect(&self, k: &Kept, body: &[Stmt], sign: Sign) -> Vec<Stmt> {
        rewrite_leaves(body, &mut |s| match s {
            Stmt::Assign {
                name, op, value, ..
            } => match self.stat_of(k, name) {
                Some(st) => change(st, row(st, &k.var, Expr::nat(0)), *op, value.clone(), sign),
                None => Some(s.clone()),
            },
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => match self.stat_of(k, array) {
                Some(st) => change(st, row(st, &k.var, index.clone()), *op, value.clone(), sign)
                    .map(|w| within_row(st, index, w)),
                None => Some(s.clone()),
            },
            s => Some(s.clone()),
        })
    }

    /// How many elements of `s` the update copies into `acc`: the accumulator's length
    /// where it is fixed for the call (the statistic was allocated with it, by `sizes`;
    /// `crate::forward` then sees that the loops over the labels read no further than
    /// the copy), else the statistic's own length.
    fn copy_width(&self, acc: &str, s: &Statistic) -> Expr {
        let mut size = None;
        visit_leaves(&self.p.body, &mut |st| {
            if let Stmt::Alloc { name, size: n, .. } = st {
                if name == acc {
                    size = Some(n.clone());
                }
            }
        });
        let fixed = |e: &Expr| {
            let mut names = HashSet::new();
            reads(e, &mut names);
            names
                .iter()
                .all(|x| self.p.params.iter().any(|(p, _)| p == x) && x != &s.param)
        };
        match size {
            Some(n) if fixed(&n) => n,
            _ => Expr::size(Expr::var(&s.param)),
        }
    }

    /// `acc op= row K of s` where the statistic has that row (else `acc` stays as it is:
    /// no point has the key `K`).
    fn read_row(&mut self, s: &Statistic, key: &Key, acc: &str, op: AssignOp) -> Stmt {
        let k = key.at.clone();
        let start = Expr::prim(Prim::Mul, vec![k.clone(), key.width.clone()]);
        let end = Expr::prim(
            Prim::Mul,
            vec![
                Expr::prim(Prim::Add, vec![k, Expr::nat(1)]),
                key.width.clone(),
            ],
        );
        let has_row = Expr::prim(Prim::Le, vec![end, Expr::size(Expr::var(&s.param))]);
        let read = if s.scalar {
            Stmt::assign(acc, op, Expr::index(Expr::var(&s.param), start))
        } else {
            let c = fresh(self.names, "c");
            let at = Expr::prim(Prim::Add, vec![start, Expr::var(&c)]);
            Stmt::for_(
                &c,
                Expr::nat(0),
                key.width.clone(),
                vec![Stmt::store(
                    acc,
                    Expr::var(&c),
                    op,
                    Expr::index(Expr::var(&s.param), at),
                )],
            )
        };
        let read = Stmt::if_(has_row, vec![read], Vec::new());
        // a read at the index checked first: out of range, no point can have its key
        // (where the loop would have read it, the update erred; it errs less, as dce.rs)
        match &key.at {
            Expr::Index(b, i) => {
                let inside = Expr::prim(
                    Prim::Lt,
                    vec![i.as_ref().clone(), Expr::size(b.as_ref().clone())],
                );
                Stmt::if_(inside, vec![read], Vec::new())
            }
            _ => read,
        }
    }

    /// `body` run for point `u` of loop `k`: at `j = u` where `u` is in the loop's range,
    /// or at each of its members (a loop over members of points).
    fn at_point(&mut self, k: &Kept, body: Vec<Stmt>) -> Stmt {
        if let Some((_, (starts, members))) = self.index_of(k) {
            return grouped::members_loop(
                self.names,
                &k.var,
                self.index,
                (&starts, &members),
                body,
            );
        }
        let mut inner = vec![Stmt::let_(&k.var, Type::Nat, Expr::var(self.index))];
        inner.extend(body);
        Stmt::if_(in_range(k, self.index), inner, Vec::new())
    }

    /// The grouping of loop `k` and its index's two statistics, by name.
    fn index_of<'k>(&self, k: &'k Kept) -> Option<(&'k grouped::Group, (String, String))> {
        let g = k.group.as_ref()?;
        let (a, b) = g.stats?;
        Some((
            g,
            (self.stats[a].param.clone(), self.stats[b].param.clone()),
        ))
    }

    fn stat_of(&self, k: &Kept, acc: &str) -> Option<&Statistic> {
        k.accs
            .iter()
            .find(|(a, _)| a == acc)
            .map(|(_, i)| &self.stats[*i])
    }

    /// `inner` inside the loop's context: the `let`s it reads and the `if`s it sits in,
    /// all under an `if true` of its own so the lets of two loops never meet.
    fn wrapped(&self, k: &Kept, inner: Vec<Stmt>) -> Stmt {
        let lv = levels(&self.p.body, &k.path);
        let mut block = inner;
        for level in (0..lv.len()).rev() {
            let (stmts, pos) = lv[level];
            let mut here: Vec<Stmt> = k
                .slice
                .iter()
                .filter(|(l, _)| *l == level)
                .map(|(_, p)| stmts[*p].clone())
                .collect();
            if level + 1 < lv.len() {
                // this level's statement on the path is an `if`: the block goes in its branch
                if let (Some(Stmt::If { cond, .. }), (_, Some(b))) = (stmts.get(pos), k.path[level])
                {
                    let (t, o) = if b {
                        (block, Vec::new())
                    } else {
                        (Vec::new(), block)
                    };
                    here.push(Stmt::if_(cond.clone(), t, o));
                    block = here;
                    continue;
                }
            }
            here.extend(block);
            block = here;
        }
        Stmt::if_(Expr::bool(true), block, Vec::new())
    }
}

/// `lo <= u && u < hi` of a loop.
fn in_range(k: &Kept, u: &str) -> Expr {
    Expr::prim(
        Prim::And,
        vec![
            Expr::prim(Prim::Le, vec![k.lo.clone(), Expr::var(u)]),
            Expr::prim(Prim::Lt, vec![Expr::var(u), k.hi.clone()]),
        ],
    )
}

/// The element of statistic `st` that element `i` of its accumulator goes to at point `j`:
/// `i` itself, or in the row of the point's key.
fn row(st: &Statistic, j: &str, i: Expr) -> Expr {
    match &st.key {
        None => i,
        Some(key) => {
            let k = Expr::index(Expr::var(&key.array), Expr::var(j));
            let start = Expr::prim(Prim::Mul, vec![k, key.width.clone()]);
            Expr::prim(Prim::Add, vec![start, i])
        }
    }
}

/// The write `w` to element `i` of a keyed statistic's row, where `i` may not be below
/// the row's width: out of range, the accumulator's store failed; the row's would land in
/// the next row, so a store past the statistic's end fails instead (the same kind of
/// error, never another row's count).
fn within_row(st: &Statistic, i: &Expr, w: Stmt) -> Stmt {
    let Some(key) = &st.key else { return w };
    if let (Expr::Lit(Lit::Nat(i)), Expr::Lit(Lit::Nat(n))) = (i, &key.width) {
        if i < n {
            return w;
        }
    }
    let inside = Expr::prim(Prim::Lt, vec![i.clone(), key.width.clone()]);
    let past = Stmt::store(
        &st.param,
        Expr::size(Expr::var(&st.param)),
        AssignOp::Set,
        crate::lower::zero(&st.elem),
    );
    Stmt::if_(inside, vec![w], vec![past])
}

/// What a statistic starts from: the identity of its reduction.
fn identity(s: &Statistic) -> Expr {
    let one = s.kind == StatKind::Constant(AssignOp::Mul);
    match (&s.elem, one) {
        (Type::Int, false) => Expr::int(0),
        (Type::Int, true) => Expr::int(1),
        (Type::Real, false) => Expr::real(0.0),
        (Type::Real, true) => Expr::real(1.0),
        (Type::Prob, false) => Expr::prob(0.0),
        (Type::Prob, true) => Expr::prob(1.0),
        (_, false) => Expr::nat(0),
        (_, true) => Expr::nat(1),
    }
}

/// The write `stat[i] op= v` of `sign` (see [`Builder::redirect`]): a subtraction of a
/// nat goes through int, failing if it would go below 0, which a statistic of every
/// point never does.
fn change(st: &Statistic, i: Expr, op: AssignOp, v: Expr, sign: Sign) -> Option<Stmt> {
    let s = &st.param;
    Some(match (sign, st.kind, &st.elem) {
        (Sign::Init, _, _) => Stmt::store(s, i, op, v),
        (_, StatKind::Constant(_) | StatKind::Index | StatKind::Table | StatKind::Scratch, _) => {
            return None
        }
        (Sign::Add, StatKind::Moving, _) => Stmt::store(s, i, AssignOp::Add, v),
        (Sign::Remove, StatKind::Moving, Type::Nat) => {
            let old = Expr::convert(Coercion::Nat2Int, Expr::index(Expr::var(s), i.clone()));
            let minus = Expr::prim(Prim::Neg, vec![Expr::convert(Coercion::Nat2Int, v)]);
            let new = Expr::convert(Coercion::Int2Nat, Expr::prim(Prim::Add, vec![old, minus]));
            Stmt::store(s, i, AssignOp::Set, new)
        }
        (Sign::Remove, StatKind::Moving, _) if st.nonnegative => {
            let old = Expr::index(Expr::var(s), i.clone());
            let new = Expr::prim(Prim::Add, vec![old, Expr::prim(Prim::Neg, vec![v])]);
            Stmt::store(
                s,
                i,
                AssignOp::Set,
                Expr::prim(Prim::Max, vec![new, Expr::real(0.0)]),
            )
        }
        (Sign::Remove, StatKind::Moving, _) => {
            Stmt::store(s, i, AssignOp::Add, Expr::prim(Prim::Neg, vec![v]))
        }
    })
}

/// `body` without its writes to `names`.
fn drop_writes(body: &[Stmt], names: &HashSet<&str>) -> Vec<Stmt> {
    rewrite_leaves(body, &mut |s| match s {
        Stmt::Assign { name: x, .. } | Stmt::Store { array: x, .. }
            if names.contains(x.as_str()) =>
        {
            None
        }
        s => Some(s.clone()),
    })
}

/// `body` with the statement at `path` replaced by `with`.
fn replace_at(body: &mut Vec<Stmt>, path: &[(usize, Option<bool>)], with: Vec<Stmt>) {
    let Some(((k, branch), rest)) = path.split_first() else {
        return;
    };
    match branch {
        None => {
            if *k < body.len() {
                body.splice(*k..=*k, with);
            }
        }
        Some(b) => {
            if let Some(Stmt::If {
                then, otherwise, ..
            }) = body.get_mut(*k)
            {
                replace_at(if *b { then } else { otherwise }, rest, with);
            }
        }
    }
}
