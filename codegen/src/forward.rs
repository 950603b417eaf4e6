//! Copies read where they are needed (issue 13: kernel speed). An update with incremental
//! statistics starts by copying what it reads of them into its accumulators: LDA's copies
//! its document's and its word's rows of the topic tables and two whole tables, four
//! arrays of 50 per token, each element read, bounds-checked, added to a zeroed element
//! and stored, before the loop over the topics reads them once more.
//!
//! [`forward_copies`] finds an array `A` that a program fills in one loop, under `if`s
//! only, `for c in 0..W { A[c] op= S[B + c] }` (`op` is `=` or `+=`, `A` a zero-filled
//! `alloc` of `nat`s or `int`s stored nowhere else, `S` a parameter stored nowhere), and
//! reads nowhere but as `let x = A[v]`, after that loop in its block, `v` the index of a
//! loop over `lo..W` (the same bound: so `v < W`, and `A[v]` was filled), or any name
//! where `A`'s length is `W` and the copy is under no `if` (Naive Bayes reads its topic
//! by word table at `i * V + k`: the read tests `v < W` and reads past `S`'s end where it
//! fails, erring as `A[v]` did). Each such read
//! becomes a read of `S` itself: `let x = S[base + v]`, where the copy loop records
//! `base = B` (and, under `if`s, `var x = 0; if filled { x = S[base + v] }`, `filled` set
//! where the loop ran: elsewhere `A[v]` was still 0). `0 + s` and `s` are the same `nat`
//! or `int`. `S` is never written, so it holds at the read what it held at the copy.
//! The copy loop goes, and `A` with it (`crate::dce`): the program reads what it read,
//! and errs less (a read of `S` the copy made and no one used is not made).

use std::collections::HashSet;

use slic_algebra::{Prim, Type};

use crate::ir::walk::{for_each_expr, fresh_name, reads, visit_decls, visit_leaves};
use crate::ir::{AssignOp, Expr, Program, Stmt};

/// `p` with each array that only copies a parameter's row read from the parameter.
pub fn forward_copies(p: &Program) -> Program {
    let mut q = p.clone();
    let mut taken: HashSet<String> = p.params.iter().map(|(x, _)| x.clone()).collect();
    visit_decls(&p.body, &mut |d| {
        taken.insert(d.to_string());
    });
    let mut candidates = Vec::new();
    visit_leaves(&p.body, &mut |s| {
        if let Stmt::Alloc { name, elem, .. } = s {
            if matches!(elem, Type::Nat | Type::Int) {
                candidates.push(name.clone());
            }
        }
    });
    for a in candidates {
        if let Some(body) = forward(&q, &a, &mut taken) {
            q.body = body;
        }
    }
    q
}

/// The copy loop `for c in 0..W { A[c] op= S[B + c] }`, read apart.
struct Copy {
    source: String,
    width: Expr,
    base: Option<Expr>,
}

fn copy_of(s: &Stmt, a: &str) -> Option<Copy> {
    let Stmt::For { var, lo, hi, body } = s else {
        return None;
    };
    if *lo != Expr::nat(0) {
        return None;
    }
    let [Stmt::Store {
        array,
        index: Expr::Var(i),
        op: AssignOp::Set | AssignOp::Add,
        value: Expr::Index(src, at),
    }] = body.as_slice()
    else {
        return None;
    };
    let Expr::Var(source) = src.as_ref() else {
        return None;
    };
    if array != a || i != var {
        return None;
    }
    let c = Expr::var(var);
    let base = match at.as_ref() {
        x if *x == c => None,
        Expr::Prim(Prim::Add, xs) if xs.len() == 2 && xs[1] == c => {
            let mut r = HashSet::new();
            reads(&xs[0], &mut r);
            if r.contains(var) {
                return None;
            }
            Some(xs[0].clone())
        }
        _ => return None,
    };
    Some(Copy {
        source: source.clone(),
        width: hi.clone(),
        base,
    })
}

/// The body of `p` with the reads of `a` forwarded, or `None` where the pattern fails.
fn forward(p: &Program, a: &str, taken: &mut HashSet<String>) -> Option<Vec<Stmt>> {
    let params: HashSet<String> = p.params.iter().map(|(x, _)| x.clone()).collect();
    // `a` allocated once and stored once
    let (mut allocs, mut stores) = (0, 0);
    let mut stored: HashSet<String> = HashSet::new();
    let mut length = None;
    visit_leaves(&p.body, &mut |s| match s {
        Stmt::Alloc { name, size, .. } if name == a => {
            allocs += 1;
            length = Some(size.clone());
        }
        Stmt::Store { array, .. } => {
            if array == a {
                stores += 1;
            }
            stored.insert(array.clone());
        }
        _ => {}
    });
    if allocs != 1 || stores != 1 {
        return None;
    }
    // every read of `a`, the result's included, must be one that is forwarded
    let mut total = occurrences(&p.result, a);
    for s in &p.body {
        for_each_expr(s, &mut |e| total += occurrences(e, a));
    }
    let mut out = p.body.clone();
    let mut f = Forward {
        a,
        taken,
        params: &params,
        stored: &stored,
        length,
        rewritten: 0,
    };
    if f.block(&mut out) && total > 0 && f.rewritten == total {
        Some(out)
    } else {
        None
    }
}

/// How often `Var(a)` occurs in `e`.
fn occurrences(e: &Expr, a: &str) -> usize {
    match e {
        Expr::Var(x) => usize::from(x == a),
        Expr::Lit(_) => 0,
        Expr::Prim(_, xs) => xs.iter().map(|x| occurrences(x, a)).sum(),
        Expr::Index(x, i) | Expr::Pair(x, i) => occurrences(x, a) + occurrences(i, a),
        Expr::Convert(_, x) => occurrences(x, a),
    }
}

struct Forward<'a> {
    a: &'a str,
    taken: &'a mut HashSet<String>,
    params: &'a HashSet<String>,
    stored: &'a HashSet<String>,
    /// The length `a` is allocated with.
    length: Option<Expr>,
    /// Reads of `a` forwarded so far.
    rewritten: usize,
}

/// Where the rewritten reads find the source: its name, the row's base (a name), and the
/// flag the copy's `if`s set (none where the copy was not under one).
struct Source {
    name: String,
    width: Expr,
    base: Option<String>,
    filled: Option<String>,
}

impl Forward<'_> {
    /// The block holding the copy loop (directly, or under `if`s only) rewritten; `false`
    /// where there is none or it does not forward.
    fn block(&mut self, block: &mut Vec<Stmt>) -> bool {
        for k in 0..block.len() {
            if let Some(copy) = find(&block[k], self.a) {
                return self.rewrite(block, k, copy);
            }
        }
        for s in block.iter_mut() {
            let found = match s {
                Stmt::For { body, .. } => self.block(body),
                Stmt::If {
                    then, otherwise, ..
                } => self.block(then) || self.block(otherwise),
                _ => false,
            };
            if found {
                return true;
            }
        }
        false
    }

    fn rewrite(&mut self, block: &mut Vec<Stmt>, k: usize, copy: Copy) -> bool {
        // the source a parameter nothing stores to; the width a number fixed for the call
        let mut names = HashSet::new();
        reads(&copy.width, &mut names);
        if !self.params.contains(&copy.source)
            || self.stored.contains(&copy.source)
            || !names.iter().all(|x| self.params.contains(x))
        {
            return false;
        }
        let guarded = copy_of(&block[k], self.a).is_none();
        let base = copy
            .base
            .as_ref()
            .map(|_| fresh_name(self.taken, &format!("{}_base", self.a)));
        let filled = guarded.then(|| fresh_name(self.taken, &format!("{}_filled", self.a)));
        let src = Source {
            name: copy.source.clone(),
            width: copy.width.clone(),
            base,
            filled,
        };
        // the copy itself, then the reads after it
        let mut rest: Vec<Stmt> = block.split_off(k);
        if rest.is_empty() {
            return false;
        }
        let copy_stmt = rest.remove(0);
        if !self.reads(&mut rest, &src, &mut Vec::new()) {
            return false;
        }
        let mut head = Vec::new();
        if let (Some(end), Some(ok), Some(b), Some(e)) = (
            row_test(&copy_stmt, self.a, &copy),
            &src.filled,
            &src.base,
            &copy.base,
        ) {
            // a row's test alone: its end, the test and the base as `let`s, where the `if`
            // evaluated the end (the base, `k * w <= (k + 1) * w`, cannot err once the end
            // did not), so `emit/safe.rs` sees the reads inside the row
            let end_name = fresh_name(self.taken, &format!("{}_end", self.a));
            let test = Expr::prim(
                Prim::Le,
                vec![Expr::var(&end_name), Expr::size(Expr::var(&copy.source))],
            );
            head.push(Stmt::let_(&end_name, Type::Nat, end));
            head.push(Stmt::let_(ok, Type::Bool, test));
            head.push(Stmt::let_(b, Type::Nat, e.clone()));
            block.extend(head);
            block.extend(rest);
            return true;
        }
        match (&src.filled, &src.base, &copy.base) {
            (None, Some(b), Some(e)) => head.push(Stmt::let_(b, Type::Nat, e.clone())),
            (None, _, _) => {}
            (Some(ok), base, e) => {
                head.push(Stmt::var(ok, Type::Bool, Some(Expr::bool(false))));
                if let Some(b) = base {
                    head.push(Stmt::var(b, Type::Nat, Some(Expr::nat(0))));
                }
                let mut marks = vec![Stmt::assign(ok, AssignOp::Set, Expr::bool(true))];
                if let (Some(b), Some(e)) = (base, e) {
                    marks.push(Stmt::assign(b, AssignOp::Set, e.clone()));
                }
                let mut stmt = copy_stmt;
                replace_copy(&mut stmt, self.a, &mut Some(marks));
                head.push(stmt);
            }
        }
        block.extend(head);
        block.extend(rest);
        true
    }

    /// `let x = A[v]` (or `x = A[v]`) with `A` of the copy's width `W` and `v` not known
    /// below it, read from the source (the statements before the read, and the read): `S[base + v]` where `v < W`, else `S[size(S) + v]`, past the
    /// source's end, so the read errs where `A`'s did, and in the same way.
    fn checked_read(&mut self, x: &str, v: &str, src: &Source) -> (Vec<Stmt>, Expr) {
        let ix = fresh_name(self.taken, &format!("{x}_at"));
        let past = Expr::prim(
            Prim::Add,
            vec![Expr::size(Expr::var(&src.name)), Expr::var(v)],
        );
        let at = match &src.base {
            Some(b) => Expr::prim(Prim::Add, vec![Expr::var(b), Expr::var(v)]),
            None => Expr::var(v),
        };
        let inside = Expr::prim(Prim::Lt, vec![Expr::var(v), src.width.clone()]);
        self.rewritten += 1;
        let prelude = vec![
            Stmt::var(&ix, Type::Nat, None),
            Stmt::if_(
                inside,
                vec![Stmt::assign(&ix, AssignOp::Set, at)],
                vec![Stmt::assign(&ix, AssignOp::Set, past)],
            ),
        ];
        (prelude, Expr::index(Expr::var(&src.name), Expr::var(&ix)))
    }

    /// `block` (after the copy) with each `let x = A[v]` read from the source, `loops` the
    /// enclosing loops' indices and bounds; `false` where a read of `A` is not of that form
    /// (the count of reads catches any other).
    fn reads(
        &mut self,
        block: &mut Vec<Stmt>,
        src: &Source,
        loops: &mut Vec<(String, Expr)>,
    ) -> bool {
        let mut out = Vec::with_capacity(block.len());
        for mut s in block.drain(..) {
            match &mut s {
                Stmt::Let {
                    name,
                    ty,
                    value: Expr::Index(arr, at),
                } if matches!(arr.as_ref(), Expr::Var(x) if x == self.a) => {
                    let Expr::Var(v) = at.as_ref() else {
                        return false;
                    };
                    // `v` a loop's index over `..W`: below `W`, where `A` was filled
                    if !loops.iter().any(|(i, hi)| i == v && *hi == src.width) {
                        // else `A` of length `W` itself: `A[v]` errs where `v >= W`
                        if src.filled.is_some() || self.length.as_ref() != Some(&src.width) {
                            return false;
                        }
                        let (ix, read) = self.checked_read(name, v, src);
                        out.extend(ix);
                        out.push(Stmt::let_(name, ty.clone(), read));
                        continue;
                    }
                    let at = match &src.base {
                        Some(b) => Expr::prim(Prim::Add, vec![Expr::var(b), Expr::var(v)]),
                        None => Expr::var(v),
                    };
                    let read = Expr::index(Expr::var(&src.name), at);
                    self.rewritten += 1;
                    match &src.filled {
                        None => out.push(Stmt::let_(name, ty.clone(), read)),
                        Some(ok) => {
                            let zero = match ty {
                                Type::Int => Expr::int(0),
                                _ => Expr::nat(0),
                            };
                            out.push(Stmt::var(name, ty.clone(), Some(zero)));
                            out.push(Stmt::If {
                                cond: Expr::var(ok),
                                then: vec![Stmt::assign(name, AssignOp::Set, read)],
                                otherwise: Vec::new(),
                            });
                        }
                    }
                    continue;
                }
                // a read into a `var` (where A-normal form guarded it): any index, as above
                Stmt::Assign {
                    name,
                    op: AssignOp::Set,
                    value: Expr::Index(arr, at),
                } if matches!(arr.as_ref(), Expr::Var(x) if x == self.a) => {
                    let Expr::Var(v) = at.as_ref() else {
                        return false;
                    };
                    if src.filled.is_some() || self.length.as_ref() != Some(&src.width) {
                        return false;
                    }
                    let (ix, read) = self.checked_read(name, v, src);
                    out.extend(ix);
                    out.push(Stmt::assign(name, AssignOp::Set, read));
                    continue;
                }
                Stmt::For { var, hi, body, .. } => {
                    let mut shadowed = false;
                    visit_decls(body, &mut |d| shadowed |= d == var.as_str());
                    if !shadowed {
                        loops.push((var.clone(), hi.clone()));
                    }
                    let ok = self.reads(body, src, loops);
                    if !shadowed {
                        loops.pop();
                    }
                    if !ok {
                        return false;
                    }
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    let ok = self.reads(then, src, loops) && self.reads(otherwise, src, loops);
                    if !ok {
                        return false;
                    }
                }
                _ => {}
            }
            out.push(s);
        }
        *block = out;
        true
    }
}

/// `(k + 1) * w` where `s` is `if (k + 1) * w <= size(S) { copy }` and nothing else (the
/// copy of `a`), the
/// copy's base `k * w` and width `w`, `k` reading no array (so `k * w` reads nothing that
/// could fail where the test did not).
fn row_test(s: &Stmt, a: &str, copy: &Copy) -> Option<Expr> {
    let Stmt::If {
        cond: Expr::Prim(Prim::Le, parts),
        then,
        otherwise,
    } = s
    else {
        return None;
    };
    let ([end, Expr::Prim(Prim::Size, sz)], [body], []) =
        (parts.as_slice(), then.as_slice(), otherwise.as_slice())
    else {
        return None;
    };
    if sz.as_slice() != [Expr::var(&copy.source)] || copy_of(body, a).is_none() {
        return None;
    }
    let Expr::Prim(Prim::Mul, kw) = end else {
        return None;
    };
    let [Expr::Prim(Prim::Add, k1), w] = kw.as_slice() else {
        return None;
    };
    let [k, Expr::Lit(crate::ir::Lit::Nat(1))] = k1.as_slice() else {
        return None;
    };
    let base = Expr::prim(Prim::Mul, vec![k.clone(), w.clone()]);
    (*w == copy.width && copy.base.as_ref() == Some(&base) && !reads_arrays(k)).then(|| end.clone())
}

/// Does `e` read an element of an array?
fn reads_arrays(e: &Expr) -> bool {
    match e {
        Expr::Index(..) => true,
        Expr::Lit(_) | Expr::Var(_) => false,
        Expr::Prim(_, xs) => xs.iter().any(reads_arrays),
        Expr::Convert(_, x) => reads_arrays(x),
        Expr::Pair(a, b) => reads_arrays(a) || reads_arrays(b),
    }
}

/// The copy loop of `a` in `s`: `s` itself, or under `if`s.
fn find(s: &Stmt, a: &str) -> Option<Copy> {
    if let Some(c) = copy_of(s, a) {
        return Some(c);
    }
    if let Stmt::If {
        then, otherwise, ..
    } = s
    {
        return then.iter().chain(otherwise).find_map(|x| find(x, a));
    }
    None
}

/// `s` with the copy loop of `a` (under `if`s) replaced by `marks`.
fn replace_copy(s: &mut Stmt, a: &str, marks: &mut Option<Vec<Stmt>>) {
    if let Stmt::If {
        then, otherwise, ..
    } = s
    {
        for b in [then, otherwise] {
            let mut out = Vec::with_capacity(b.len());
            for mut x in b.drain(..) {
                if marks.is_some() && copy_of(&x, a).is_some() {
                    out.extend(marks.take().unwrap_or_default());
                } else {
                    replace_copy(&mut x, a, marks);
                    out.push(x);
                }
            }
            *b = out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Val;

    /// `a` (3 `nat`s) filled from row `k` of `s` (under the row test when `guarded`, under
    /// `k < 2` besides when `other`), then read by `for i in 0..hi { out[i] = a[i] + 1 }`
    /// and by `extra`.
    fn program(guarded: bool, hi: u64, extra: Vec<Stmt>) -> Program {
        program_with(guarded, false, hi, extra)
    }

    fn program_with(guarded: bool, other: bool, hi: u64, extra: Vec<Stmt>) -> Program {
        let k3 = Expr::prim(Prim::Mul, vec![Expr::var("k"), Expr::nat(3)]);
        let copy = Stmt::for_(
            "c",
            Expr::nat(0),
            Expr::nat(3),
            vec![Stmt::store(
                "a",
                Expr::var("c"),
                AssignOp::Add,
                Expr::index(
                    Expr::var("s"),
                    Expr::prim(Prim::Add, vec![k3, Expr::var("c")]),
                ),
            )],
        );
        let copy = if guarded {
            let end = Expr::prim(
                Prim::Mul,
                vec![
                    Expr::prim(Prim::Add, vec![Expr::var("k"), Expr::nat(1)]),
                    Expr::nat(3),
                ],
            );
            Stmt::If {
                cond: Expr::prim(Prim::Le, vec![end, Expr::size(Expr::var("s"))]),
                then: vec![copy],
                otherwise: Vec::new(),
            }
        } else {
            copy
        };
        let copy = if other {
            Stmt::If {
                cond: Expr::prim(Prim::Lt, vec![Expr::var("k"), Expr::nat(2)]),
                then: vec![copy],
                otherwise: Vec::new(),
            }
        } else {
            copy
        };
        let mut body = vec![
            Stmt::Alloc {
                name: "a".into(),
                elem: Type::Nat,
                size: Expr::nat(3),
            },
            copy,
            Stmt::Alloc {
                name: "out".into(),
                elem: Type::Nat,
                size: Expr::nat(3),
            },
            Stmt::for_(
                "i",
                Expr::nat(0),
                Expr::nat(hi),
                vec![
                    Stmt::let_("x", Type::Nat, Expr::index(Expr::var("a"), Expr::var("i"))),
                    Stmt::store(
                        "out",
                        Expr::var("i"),
                        AssignOp::Set,
                        Expr::prim(Prim::Add, vec![Expr::var("x"), Expr::nat(1)]),
                    ),
                ],
            ),
        ];
        body.extend(extra);
        Program {
            params: vec![
                ("s".into(), Type::array(Type::Nat)),
                ("k".into(), Type::Nat),
            ],
            body,
            result: Expr::var("out"),
            measure: false,
            inout: Vec::new(),
        }
    }

    fn same(p: &Program, q: &Program) {
        assert_eq!(crate::verify::verify(q), Ok(()), "{q}");
        let s = Val::array((0..9).map(|n| Val::Nat(10 + n)).collect());
        for k in 0..5 {
            let args = [s.clone(), Val::Nat(k)];
            let (want, got) = (crate::run(p, &args), crate::run(q, &args));
            match (want, got) {
                (Ok(w), Ok(g)) => assert_eq!(w.0, g.0, "k = {k}: {q}"),
                // out of the table: the copy erred, and the forwarded read errs
                (Err(_), Err(_)) => {}
                (w, g) => panic!("k = {k}: {w:?} against {g:?} in {q}"),
            }
        }
    }

    #[test]
    fn a_copied_row_is_read_where_it_is_used() {
        // unguarded; under the row's own test (its end, test and base as `let`s); under
        // another test as well (a flag set where the copy ran)
        for (guarded, other) in [(false, false), (true, false), (true, true), (false, true)] {
            let p = program_with(guarded, other, 3, Vec::new());
            let q = crate::dce::eliminate(&forward_copies(&p)).program;
            same(&p, &q);
            let text = q.to_string();
            assert!(!text.contains("a["), "{text}");
            assert!(!text.contains("alloc a"), "{text}");
            assert_eq!(text.contains("a_filled"), guarded || other, "{text}");
            assert_eq!(text.contains("let a_end"), guarded && !other, "{text}");
        }
    }

    #[test]
    fn reads_the_copy_may_not_have_made_stay() {
        // a loop over another range, a read at a literal, a second store: each left
        let literal = vec![Stmt::let_(
            "y",
            Type::Nat,
            Expr::index(Expr::var("a"), Expr::nat(1)),
        )];
        let store = vec![Stmt::store("a", Expr::nat(0), AssignOp::Set, Expr::nat(7))];
        for p in [
            program(true, 2, Vec::new()),
            program(false, 3, literal),
            program(false, 3, store),
        ] {
            assert_eq!(forward_copies(&p), p);
        }
    }
}
