//! Loop fusion on the loop IR (issue 11, deliverable 4): loops over the same range in one
//! block share one pass, with as many accumulators as the loops had; then, inside each
//! loop body, repeated reads of one input array element (`t[j]` read by several
//! accumulators) become one `let` at the top of the body.
//!
//! A `for` is merged into an earlier `for` of the same block with syntactically equal
//! bounds (or with the upper bound `if c: hi else: lo` of a guarded histogram, its body
//! then joined under `if c`), and an `if` into an earlier `if` with a syntactically equal test (both
//! branches joined in order: A-normal form guards each hoisted name by its own `if c`,
//! and the loops inside the joined branches then share a pass), when that cannot change
//! what any statement sees: the later loop reads nothing
//! the earlier loop or the statements between them write, writes nothing they read or
//! write, and the declarations between them that it needs (its accumulator's `var`, its
//! histogram's `alloc`, a `let`) move up before the earlier loop, which is safe because
//! they read nothing written since. The bounds must read nothing written in between, so
//! both loops run the same iterations. Loops and statements that draw, weight or reject
//! are never moved: the order of a measure program's effects is left as it is.
//!
//! A read is hoisted only where it is evaluated on every iteration anyway (in a statement
//! at the top of the body, outside any `if` or inner loop), of an array the body never
//! writes, at an index the body never changes: the hoisted `let` fails exactly when the
//! original read would have, in the same iteration. This module changes no arithmetic:
//! every accumulator sees the same values in the same order.

use crate::ir::walk::{each_block_mut, map_exprs, reads, rename_expr, Effects};
use crate::ir::{AssignOp, Expr, Program, Stmt};
use slic_algebra::Type;
use std::collections::{HashMap, HashSet};

/// `p` with its loops fused and repeated element reads shared (see the module doc).
pub fn fuse(p: &Program) -> Program {
    let mut names = HashSet::new();
    for (x, _) in &p.params {
        names.insert(x.clone());
    }
    declared(&p.body, &mut names);
    let mut types: HashMap<String, Type> = HashMap::new();
    for (x, t) in &p.params {
        types.insert(x.clone(), t.clone());
    }
    array_types(&p.body, &mut types);
    let mut f = Fuser { names, types };
    let mut body = p.body.clone();
    f.block(&mut body);
    p.with_body(body)
}

struct Fuser {
    /// Every name in the program, for fresh ones.
    names: HashSet<String>,
    /// Element types of arrays (parameters and allocations), by name.
    types: HashMap<String, Type>,
}

fn declared(stmts: &[Stmt], out: &mut HashSet<String>) {
    out.extend(Effects::of(stmts).decls);
}

fn array_types(stmts: &[Stmt], out: &mut HashMap<String, Type>) {
    for s in stmts {
        match s {
            Stmt::Alloc { name, elem, .. } => {
                out.insert(name.clone(), Type::array(elem.clone()));
            }
            Stmt::For { body, .. } => array_types(body, out),
            Stmt::If {
                then, otherwise, ..
            } => {
                array_types(then, out);
                array_types(otherwise, out);
            }
            _ => {}
        }
    }
}

fn disjoint(a: &HashSet<String>, b: &HashSet<String>) -> bool {
    a.is_disjoint(b)
}

impl Fuser {
    fn fresh(&mut self, hint: &str) -> String {
        let mut name = hint.to_string();
        let mut k = 0;
        while self.names.contains(&name) {
            k += 1;
            name = format!("{hint}_{k}");
        }
        self.names.insert(name.clone());
        name
    }

    fn block(&mut self, stmts: &mut Vec<Stmt>) {
        // this level first, so that the bodies of merged loops are fused in turn
        while self.fuse_once(stmts) {}
        for s in stmts.iter_mut() {
            each_block_mut(s, &mut |b| self.block(b));
        }
        for s in stmts.iter_mut() {
            if let Stmt::For { var, body, .. } = s {
                self.share_reads(var, body);
            }
        }
    }

    /// Merges one pair of loops of `stmts`, if any can be; whether it did.
    fn fuse_once(&mut self, stmts: &mut Vec<Stmt>) -> bool {
        for j in 0..stmts.len() {
            for i in 0..j {
                if let Some(plan) = plan(stmts, i, j) {
                    apply(stmts, i, j, plan);
                    return true;
                }
                // a guarded loop before the full one: over the full range, then merged
                if let Some(full) = unguarded(stmts, i, j) {
                    let was = std::mem::replace(&mut stmts[i], full);
                    if let Some(plan) = plan(stmts, i, j) {
                        apply(stmts, i, j, plan);
                        return true;
                    }
                    stmts[i] = was;
                }
            }
        }
        false
    }

    /// Repeated reads `a[e]` in the body of `for var`, one of them unconditional, of an
    /// array the body never writes at an index it never changes: one `let` at the top.
    fn share_reads(&mut self, var: &str, body: &mut Vec<Stmt>) {
        let all = Effects::of(body);
        if all.measure {
            return;
        }
        let mut count: Vec<(Expr, usize)> = Vec::new();
        for s in body.iter() {
            stmt_reads(s, &mut |e| {
                if let Some(k) = count.iter().position(|(x, _)| x == e) {
                    count[k].1 += 1;
                } else {
                    count.push((e.clone(), 1));
                }
            });
        }
        let mut unconditional: Vec<Expr> = Vec::new();
        for s in body.iter() {
            top_reads(s, &mut unconditional);
        }
        let mut lets = Vec::new();
        for (e, n) in count {
            let Expr::Index(a, i) = &e else { continue };
            let Expr::Var(arr) = a.as_ref() else { continue };
            let Some(elem) = self.types.get(arr).and_then(Type::array_of).cloned() else {
                continue;
            };
            let mut idx = HashSet::new();
            reads(i, &mut idx);
            let stable = !all.writes.contains(arr)
                && !all.decls.contains(arr)
                && idx
                    .iter()
                    .all(|x| x == var || (!all.writes.contains(x) && !all.decls.contains(x)));
            if n < 2 || !stable || elem.array_of().is_some() || !unconditional.contains(&e) {
                continue;
            }
            let hint = match i.as_ref() {
                Expr::Var(x) => format!("{arr}_{x}"),
                _ => format!("{arr}_at"),
            };
            let name = self.fresh(&hint);
            lets.push((e.clone(), name, elem));
        }
        if lets.is_empty() {
            return;
        }
        for s in body.iter_mut() {
            map_exprs(s, &mut |e| replace_reads(e, &lets));
        }
        let mut new_body: Vec<Stmt> = lets
            .into_iter()
            .map(|(e, name, ty)| Stmt::let_(&name, ty, e))
            .collect();
        new_body.append(body);
        *body = new_body;
    }
}

/// `e` with each element read of `lets` replaced by its name.
fn replace_reads(e: &Expr, lets: &[(Expr, String, Type)]) -> Expr {
    if let Some((_, name, _)) = lets.iter().find(|(x, _, _)| x == e) {
        return Expr::Var(name.clone());
    }
    match e {
        Expr::Lit(_) | Expr::Var(_) => e.clone(),
        Expr::Prim(p, args) => {
            Expr::Prim(*p, args.iter().map(|a| replace_reads(a, lets)).collect())
        }
        Expr::Index(a, i) => Expr::index(replace_reads(a, lets), replace_reads(i, lets)),
        Expr::Convert(c, x) => Expr::convert(*c, replace_reads(x, lets)),
        Expr::Pair(a, b) => Expr::Pair(
            Box::new(replace_reads(a, lets)),
            Box::new(replace_reads(b, lets)),
        ),
    }
}

/// Every element read (`a[i]`) in `e`.
fn index_reads(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    match e {
        Expr::Lit(_) | Expr::Var(_) => {}
        Expr::Prim(_, args) => args.iter().for_each(|a| index_reads(a, f)),
        Expr::Index(a, i) => {
            f(e);
            index_reads(a, f);
            index_reads(i, f);
        }
        Expr::Convert(_, x) => index_reads(x, f),
        Expr::Pair(a, b) => {
            index_reads(a, f);
            index_reads(b, f);
        }
    }
}

/// Every element read in `s` and what is nested in it.
fn stmt_reads(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    let mut s = s.clone();
    map_exprs(&mut s, &mut |e| {
        index_reads(e, f);
        e.clone()
    });
}

/// The element reads `s` evaluates whenever it runs: its own expressions, not those of
/// the blocks nested in it.
fn top_reads(s: &Stmt, out: &mut Vec<Expr>) {
    let mut push = |e: &Expr| index_reads(e, &mut |x| out.push(x.clone()));
    match s {
        Stmt::Let { value, .. } | Stmt::Assign { value, .. } => push(value),
        Stmt::Var { init, .. } => {
            if let Some(e) = init {
                push(e);
            }
        }
        Stmt::Alloc { size, .. } => push(size),
        Stmt::Store { index, value, .. } => {
            push(index);
            push(value);
        }
        Stmt::For { lo, hi, .. } => {
            push(lo);
            push(hi);
        }
        Stmt::If { cond, .. } => push(cond),
        Stmt::Draw { args, .. } => args.iter().for_each(push),
        Stmt::Factor(w) => push(w),
        Stmt::Observe { args, value, .. } => {
            args.iter().for_each(&mut push);
            push(value);
        }
        Stmt::Reject => {}
    }
}

/// How to merge loop (or `if`) `j` into loop (or `if`) `i`: the statements between them
/// that move up before `i` (the declarations `j` needs), by position.
struct Plan {
    up: Vec<usize>,
    /// Loop `j` runs over `lo..(if c: hi else: lo)` where loop `i` runs over `lo..hi`:
    /// its body joins under `if c` (`c` fixed in between, as the bounds are).
    guard: Option<Expr>,
}

/// The test `c` when `hi` is a variable set just by `if c { hi = full } else { hi = lo }`
/// earlier in `stmts[..j]` (each branch may hold other statements that write neither
/// `hi` nor what `full` reads) and written nowhere else in the block: a guarded range
/// (`bucket j from lo to (if c: n else: lo)`, as A-normal form guards an array, a sum or
/// a product).
fn guarded_bound(
    stmts: &[Stmt],
    j: usize,
    hi: &Expr,
    full: &Expr,
    lo: &Expr,
) -> Option<(Expr, usize)> {
    let Expr::Var(h) = hi else {
        return None;
    };
    let mut found = None;
    for (k, st) in stmts.iter().enumerate() {
        let e = Effects::of(std::slice::from_ref(st));
        if !e.writes.contains(h) {
            continue;
        }
        match st {
            Stmt::If {
                cond,
                then,
                otherwise,
            } if k < j && found.is_none() => {
                // each branch sets `hi` once, at its top level, to `full` or `lo` (other
                // statements of the branch, as lowering joins the guards of one test, may
                // not write it nor what the value reads)
                let sets = |b: &[Stmt], v: &Expr| {
                    let mut value_reads = HashSet::new();
                    reads(v, &mut value_reads);
                    let mut assigns = 0;
                    for st in b {
                        match st {
                            Stmt::Assign {
                                name,
                                op: AssignOp::Set,
                                value,
                            } if name == h && same_value(stmts, b, value, v) => assigns += 1,
                            st => {
                                let e = Effects::of(std::slice::from_ref(st));
                                if e.writes.contains(h) || !disjoint(&e.writes, &value_reads) {
                                    return false;
                                }
                            }
                        }
                    }
                    assigns == 1
                };
                if !(sets(then, full) && sets(otherwise, lo)) {
                    return None;
                }
                found = Some((cond.clone(), k));
            }
            _ => return None,
        }
    }
    found
}

/// Do `a` (assigned in `branch`) and `b` have one value? Equal, or equal once the `let`s
/// of the block and of the branch are read through (`let v_8 = size(w)` in a branch and
/// `let v_9 = size(w)` outside), where what they then read is written nowhere in the
/// block (parameters, `let`s): so the value is the same wherever it is evaluated.
fn same_value(stmts: &[Stmt], branch: &[Stmt], a: &Expr, b: &Expr) -> bool {
    if a == b {
        return true;
    }
    let mut lets: HashMap<&str, &Expr> = HashMap::new();
    for st in stmts.iter().chain(branch) {
        if let Stmt::Let { name, value, .. } = st {
            lets.insert(name, value);
        }
    }
    let (ra, rb) = (through_lets(a, &lets, 4), through_lets(b, &lets, 4));
    if ra != rb {
        return false;
    }
    let mut read = HashSet::new();
    reads(&ra, &mut read);
    let written = Effects::of(stmts).writes;
    disjoint(&read, &written) && disjoint(&read, &Effects::of(branch).writes)
}

/// `e` with each name of a `let` in `lets` replaced by its value, `depth` levels deep.
fn through_lets(e: &Expr, lets: &HashMap<&str, &Expr>, depth: usize) -> Expr {
    if depth == 0 {
        return e.clone();
    }
    let go = |x: &Expr| through_lets(x, lets, depth - 1);
    match e {
        Expr::Var(x) => match lets.get(x.as_str()) {
            Some(v) => go(v),
            None => e.clone(),
        },
        Expr::Lit(_) => e.clone(),
        Expr::Prim(p, args) => Expr::Prim(*p, args.iter().map(go).collect()),
        Expr::Index(a, i) => Expr::index(go(a), go(i)),
        Expr::Convert(c, x) => Expr::convert(*c, go(x)),
        Expr::Pair(a, b) => Expr::Pair(Box::new(go(a)), Box::new(go(b))),
    }
}

/// Loop `i` over a guarded range `lo..hi_i` (see [`guarded_bound`]) where the later loop
/// `j` runs over the full range: loop `i` as a loop over the full range with its body
/// under the test, so that the two can merge (only used where they then do; the full
/// bound is an expression of names fixed in the block, so it means the same at `i`).
fn unguarded(stmts: &[Stmt], i: usize, j: usize) -> Option<Stmt> {
    let (
        Stmt::For {
            var,
            lo,
            hi: hi_i,
            body,
        },
        Stmt::For { lo: lj, hi: hj, .. },
    ) = (&stmts[i], &stmts[j])
    else {
        return None;
    };
    if lo != lj || hi_i == hj {
        return None;
    }
    let (c, at) = guarded_bound(stmts, i, hi_i, hj, lo)?;
    // the full bound and the test are declared before loop i and not written from the
    // guarding `if` on (so the test means at loop i what it meant there, and at loop j)
    let mut need = HashSet::new();
    reads(hj, &mut need);
    reads(&c, &mut need);
    let before = Effects::of(&stmts[..i]);
    if !need.iter().all(|x| before.decls.contains(x))
        || !disjoint(&need, &Effects::of(&stmts[at..]).writes)
    {
        return None;
    }
    Some(Stmt::For {
        var: var.clone(),
        lo: lo.clone(),
        hi: hj.clone(),
        body: vec![Stmt::If {
            cond: c,
            then: body.clone(),
            otherwise: Vec::new(),
        }],
    })
}

fn plan(stmts: &[Stmt], i: usize, j: usize) -> Option<Plan> {
    // two loops over equal bounds, or two `if`s on an equal test (the test, like the
    // bounds, must see the same values at both places): what heads them, and the names
    // each declares in its bodies
    let (head, di, dj, guard, joined) = match (&stmts[i], &stmts[j]) {
        (
            Stmt::For {
                var: vi,
                lo: li,
                hi: hi_i,
                body: bi,
            },
            Stmt::For {
                var: vj,
                lo: lj,
                hi: hj,
                body: bj,
            },
        ) => {
            if li != lj {
                return None;
            }
            let guard = if hi_i == hj {
                None
            } else {
                Some(guarded_bound(stmts, j, hj, hi_i, lj)?.0)
            };
            let (di, dj) = (Effects::of(bi).decls, Effects::of(bj).decls);
            // a guarded loop, as it will be: over loop i's range, its body under the test
            let joined = guard.as_ref().map(|c| Stmt::For {
                var: vj.clone(),
                lo: lj.clone(),
                hi: hi_i.clone(),
                body: vec![Stmt::If {
                    cond: c.clone(),
                    then: bj.clone(),
                    otherwise: Vec::new(),
                }],
            });
            let ej = Effects::of(joined.as_slice()).free();
            if dj.contains(vj) || (vi != vj && (ej.reads.contains(vi) || dj.contains(vi))) {
                return None;
            }
            let head = match &guard {
                Some(c) => vec![lj.clone(), hi_i.clone(), c.clone()],
                None => vec![lj.clone(), hj.clone()],
            };
            (head, di, dj, guard, joined)
        }
        (
            Stmt::If {
                cond: ci,
                then: ti,
                otherwise: oi,
            },
            Stmt::If {
                cond: cj,
                then: tj,
                otherwise: oj,
            },
        ) => {
            if ci != cj {
                return None;
            }
            let (di, dj) = (
                Effects::of(&[ti.as_slice(), oi].concat()).decls,
                Effects::of(&[tj.as_slice(), oj].concat()).decls,
            );
            (vec![cj.clone()], di, dj, None, None)
        }
        _ => return None,
    };
    let ei = Effects::of(&stmts[i..=i]);
    let ej = match &joined {
        Some(s) => Effects::of(std::slice::from_ref(s)),
        None => Effects::of(&stmts[j..=j]),
    };
    if ei.measure || ej.measure {
        return None;
    }
    let (ei, ej) = (ei.free(), ej.free());
    // one scope after the merge: no name declared in both bodies, none captured
    if !disjoint(&di, &dj) || !disjoint(&di, &ej.reads) || !disjoint(&dj, &ei.reads) {
        return None;
    }
    // the two loops are independent
    if !disjoint(&ei.writes, &ej.reads)
        || !disjoint(&ei.writes, &ej.writes)
        || !disjoint(&ej.writes, &ei.reads)
    {
        return None;
    }
    let between: Vec<Effects> = (i + 1..j).map(|k| Effects::of(&stmts[k..=k])).collect();
    if between.iter().any(|e| e.measure) {
        return None;
    }
    // the bounds (the test) see the same values at both places
    let mut bounds = HashSet::new();
    for e in &head {
        reads(e, &mut bounds);
    }
    // (a name declared in between is allowed where its declaration moves up, below)
    if !disjoint(&bounds, &ei.writes) || between.iter().any(|e| !disjoint(&bounds, &e.writes)) {
        return None;
    }
    // the declarations loop j needs, and those they need in turn, move up
    let mut need: HashSet<String> = ej.reads.union(&ej.writes).cloned().collect();
    let mut up = vec![false; between.len()];
    loop {
        let mut grew = false;
        for (k, e) in between.iter().enumerate() {
            if !up[k] && !disjoint(&e.decls, &need) {
                up[k] = true;
                need.extend(e.reads.iter().cloned());
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut stay_writes = HashSet::new();
    let mut stay_reads = HashSet::new();
    for (k, e) in between.iter().enumerate() {
        if up[k] {
            // only declarations move, only when what they read is not written since, and
            // never over a statement that sees another variable of the same name
            let s = &stmts[i + 1 + k];
            if !matches!(s, Stmt::Let { .. } | Stmt::Var { .. } | Stmt::Alloc { .. })
                || !disjoint(&e.reads, &ei.writes)
                || !disjoint(&e.decls, &ei.reads)
                || !disjoint(&e.decls, &ei.writes)
                || !disjoint(&e.decls, &stay_reads)
                || !disjoint(&e.decls, &stay_writes)
            {
                return None;
            }
        } else {
            stay_writes.extend(e.writes.iter().cloned());
            stay_reads.extend(e.reads.iter().cloned());
        }
    }
    if between
        .iter()
        .enumerate()
        .any(|(k, e)| !up[k] && !disjoint(&bounds, &e.decls))
    {
        return None;
    }
    let moved_reads: HashSet<String> = between
        .iter()
        .enumerate()
        .filter(|(k, _)| up[*k])
        .flat_map(|(_, e)| e.reads.iter().cloned())
        .collect();
    // loop j and the moved declarations pass the statements that stay: independent of them
    if !disjoint(&stay_writes, &ej.reads)
        || !disjoint(&stay_writes, &moved_reads)
        || !disjoint(&ej.writes, &stay_reads)
        || !disjoint(&ej.writes, &stay_writes)
    {
        return None;
    }
    Some(Plan {
        up: (0..between.len())
            .filter(|k| up[*k])
            .map(|k| i + 1 + k)
            .collect(),
        guard,
    })
}

/// Merges loop `j` into loop `i` by `plan`.
fn apply(stmts: &mut Vec<Stmt>, i: usize, j: usize, plan: Plan) {
    let later = stmts.remove(j);
    let mut moved = Vec::new();
    let mut stay = Vec::new();
    let tail: Vec<Stmt> = stmts.drain(i + 1..).collect();
    for (k, s) in tail.into_iter().enumerate() {
        let pos = i + 1 + k;
        if pos < j && plan.up.contains(&pos) {
            moved.push(s);
        } else {
            stay.push(s);
        }
    }
    let Some(mut first) = stmts.pop() else {
        return;
    };
    match (&mut first, later) {
        (
            Stmt::For { var: vi, body, .. },
            Stmt::For {
                var: vj, body: bj, ..
            },
        ) => {
            let mut joined = Vec::with_capacity(bj.len());
            for mut s in bj {
                if *vi != vj {
                    map_exprs(&mut s, &mut |e| rename_expr(e, &vj, vi));
                }
                joined.push(s);
            }
            match plan.guard {
                Some(cond) => body.push(Stmt::If {
                    cond,
                    then: joined,
                    otherwise: Vec::new(),
                }),
                None => body.extend(joined),
            }
        }
        (
            Stmt::If {
                then, otherwise, ..
            },
            Stmt::If {
                then: tj,
                otherwise: oj,
                ..
            },
        ) => {
            then.extend(tj);
            otherwise.extend(oj);
        }
        _ => {}
    }
    stmts.extend(moved);
    stmts.push(first);
    stmts.extend(stay);
}
