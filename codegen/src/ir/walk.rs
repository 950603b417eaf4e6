//! Walks over loop-IR statements and expressions shared by the passes that rewrite
//! programs (fusion, incremental statistics, precompute, the sweep): what a block reads,
//! writes and declares ([`Effects`], and resolved by scope where names are shadowed,
//! [`Effects::scoped`]), the names an expression reads (and how often), how often each
//! name is declared, whether an expression can fail ([`can_fail`], the one such test of
//! the loop IR), renaming a variable, rewriting every expression of a statement in place,
//! and visiting declarations and blocks. Data in, data out: no pass's policy lives here.

use super::{Expr, Stmt};
use slic_algebra::Coercion;
use std::collections::{HashMap, HashSet};

/// What a statement (with everything nested in it) reads, writes and declares.
#[derive(Default)]
pub(crate) struct Effects {
    pub(crate) reads: HashSet<String>,
    pub(crate) writes: HashSet<String>,
    pub(crate) decls: HashSet<String>,
    /// It draws, weights or rejects.
    pub(crate) measure: bool,
}

impl Effects {
    pub(crate) fn of(stmts: &[Stmt]) -> Effects {
        let mut e = Effects::default();
        for s in stmts {
            e.stmt(s);
        }
        e
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { name, value, .. } => {
                reads(value, &mut self.reads);
                self.decls.insert(name.clone());
            }
            Stmt::Var { name, init, .. } => {
                if let Some(e) = init {
                    reads(e, &mut self.reads);
                }
                self.decls.insert(name.clone());
            }
            Stmt::Assign { name, value, .. } => {
                reads(value, &mut self.reads);
                self.writes.insert(name.clone());
            }
            Stmt::Alloc { name, size, .. } => {
                reads(size, &mut self.reads);
                self.decls.insert(name.clone());
            }
            Stmt::Store {
                array,
                index,
                value,
                ..
            } => {
                reads(index, &mut self.reads);
                reads(value, &mut self.reads);
                self.writes.insert(array.clone());
            }
            Stmt::For { var, lo, hi, body } => {
                reads(lo, &mut self.reads);
                reads(hi, &mut self.reads);
                self.decls.insert(var.clone());
                for s in body {
                    self.stmt(s);
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                reads(cond, &mut self.reads);
                for s in then.iter().chain(otherwise) {
                    self.stmt(s);
                }
            }
            Stmt::Draw { name, args, .. } => {
                for a in args {
                    reads(a, &mut self.reads);
                }
                self.decls.insert(name.clone());
                self.measure = true;
            }
            Stmt::Factor(w) => {
                reads(w, &mut self.reads);
                self.measure = true;
            }
            Stmt::Observe { args, value, .. } => {
                for a in args {
                    reads(a, &mut self.reads);
                }
                reads(value, &mut self.reads);
                self.measure = true;
            }
            Stmt::Reject => self.measure = true,
        }
    }

    /// What `s` reads and writes of the names declared outside it, each read and write
    /// resolved by the scopes inside it (a name declared inside a loop or a branch
    /// shadows an outer one from its declaration to the end of its block), and whether it
    /// draws, weighs or rejects: [`Self::free`] where names may be declared twice.
    pub(crate) fn scoped(s: &Stmt) -> Effects {
        let mut e = Effects::default();
        e.scoped_block(std::slice::from_ref(s), &mut Vec::new());
        e
    }

    fn scoped_block(&mut self, block: &[Stmt], scopes: &mut Vec<HashSet<String>>) {
        let local = |scopes: &[HashSet<String>], x: &str| scopes.iter().any(|sc| sc.contains(x));
        let read = |scopes: &[HashSet<String>], x: &Expr, e: &mut Effects| {
            let mut names = HashSet::new();
            reads(x, &mut names);
            e.reads
                .extend(names.into_iter().filter(|n| !local(scopes, n)));
        };
        scopes.push(HashSet::new());
        for s in block {
            // the statement's own expressions are read before what it declares is in scope
            match s {
                Stmt::Let { value, .. } => read(scopes, value, self),
                Stmt::Var { init, .. } => {
                    if let Some(v) = init {
                        read(scopes, v, self);
                    }
                }
                Stmt::Alloc { size, .. } => read(scopes, size, self),
                Stmt::Assign { name, value, .. } => {
                    read(scopes, value, self);
                    if !local(scopes, name) {
                        self.writes.insert(name.clone());
                    }
                }
                Stmt::Store {
                    array,
                    index,
                    value,
                    ..
                } => {
                    read(scopes, index, self);
                    read(scopes, value, self);
                    if !local(scopes, array) {
                        self.writes.insert(array.clone());
                    }
                }
                Stmt::For { var, lo, hi, body } => {
                    read(scopes, lo, self);
                    read(scopes, hi, self);
                    scopes.push(HashSet::from([var.clone()]));
                    self.scoped_block(body, scopes);
                    scopes.pop();
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    read(scopes, cond, self);
                    self.scoped_block(then, scopes);
                    self.scoped_block(otherwise, scopes);
                }
                Stmt::Draw { args, .. } => {
                    args.iter().for_each(|a| read(scopes, a, self));
                    self.measure = true;
                }
                Stmt::Factor(w) => {
                    read(scopes, w, self);
                    self.measure = true;
                }
                Stmt::Observe { args, value, .. } => {
                    args.iter().for_each(|a| read(scopes, a, self));
                    read(scopes, value, self);
                    self.measure = true;
                }
                Stmt::Reject => self.measure = true,
            }
            let declared = match s {
                Stmt::Let { name, .. }
                | Stmt::Var { name, .. }
                | Stmt::Alloc { name, .. }
                | Stmt::Draw { name, .. } => Some(name),
                _ => None,
            };
            if let (Some(x), Some(sc)) = (declared, scopes.last_mut()) {
                sc.insert(x.clone());
            }
        }
        scopes.pop();
    }

    /// Reads and writes of names declared outside (a statement's own locals removed).
    pub(crate) fn free(mut self) -> Effects {
        self.reads.retain(|x| !self.decls.contains(x));
        self.writes.retain(|x| !self.decls.contains(x));
        self
    }
}

/// `e` with each name `map` knows replaced by its expression.
pub(crate) fn substitute(e: &Expr, map: &HashMap<String, Expr>) -> Expr {
    match e {
        Expr::Var(x) => map.get(x).cloned().unwrap_or_else(|| e.clone()),
        Expr::Lit(_) => e.clone(),
        Expr::Prim(p, args) => Expr::Prim(*p, args.iter().map(|a| substitute(a, map)).collect()),
        Expr::Index(a, i) => Expr::index(substitute(a, map), substitute(i, map)),
        Expr::Convert(c, x) => Expr::convert(*c, substitute(x, map)),
        Expr::Pair(a, b) => Expr::Pair(Box::new(substitute(a, map)), Box::new(substitute(b, map))),
    }
}

/// Whether evaluating `e` can fail at run time (an array read, an unsafe coercion,
/// integer arithmetic that may overflow, a primitive with a partial domain): such an
/// operand of `&&`/`||` is lowered under an `if`, and only what cannot fail is
/// memoised or folded into a test (`memo`, `incremental`). Conservative: `true` when
/// unsure.
pub(crate) fn can_fail(e: &Expr) -> bool {
    use slic_algebra::Prim;
    match e {
        Expr::Lit(_) | Expr::Var(_) => false,
        Expr::Index(..) => true,
        Expr::Convert(c, x) => !c.is_safe() || *c == slic_algebra::Coercion::Nat2Int || can_fail(x),
        Expr::Pair(a, b) => can_fail(a) || can_fail(b),
        Expr::Prim(p, args) => {
            let total = matches!(
                p,
                Prim::Lt
                    | Prim::Le
                    | Prim::Eq
                    | Prim::Ne
                    | Prim::And
                    | Prim::Or
                    | Prim::Not
                    | Prim::Xor
                    | Prim::Iff
                    | Prim::Impl
                    | Prim::Nand
                    | Prim::Nor
                    | Prim::Size
                    | Prim::Exp
                    | Prim::Log
                    | Prim::Sqrt
                    | Prim::Pi
                    | Prim::Infinity
                    | Prim::Erf
            ) || p.is_trig();
            !total || args.iter().any(can_fail)
        }
    }
}

pub(crate) fn reads(e: &Expr, out: &mut HashSet<String>) {
    match e {
        Expr::Lit(_) => {}
        Expr::Var(x) => {
            out.insert(x.clone());
        }
        Expr::Prim(_, args) => args.iter().for_each(|a| reads(a, out)),
        Expr::Index(a, i) => {
            reads(a, out);
            reads(i, out);
        }
        Expr::Convert(_, x) => reads(x, out),
        Expr::Pair(a, b) => {
            reads(a, out);
            reads(b, out);
        }
    }
}

/// `f` on each block nested directly in `s` (a loop's body, both branches of an `if`).
pub(crate) fn each_block_mut(s: &mut Stmt, f: &mut dyn FnMut(&mut Vec<Stmt>)) {
    match s {
        Stmt::For { body, .. } => f(body),
        Stmt::If {
            then, otherwise, ..
        } => {
            f(then);
            f(otherwise);
        }
        _ => {}
    }
}

/// `e` with the variable `from` renamed `to`.
pub(crate) fn rename_expr(e: &Expr, from: &str, to: &str) -> Expr {
    match e {
        Expr::Var(x) if x == from => Expr::Var(to.to_string()),
        Expr::Lit(_) | Expr::Var(_) => e.clone(),
        Expr::Prim(p, args) => {
            Expr::Prim(*p, args.iter().map(|a| rename_expr(a, from, to)).collect())
        }
        Expr::Index(a, i) => Expr::index(rename_expr(a, from, to), rename_expr(i, from, to)),
        Expr::Convert(c, x) => Expr::convert(*c, rename_expr(x, from, to)),
        Expr::Pair(a, b) => Expr::Pair(
            Box::new(rename_expr(a, from, to)),
            Box::new(rename_expr(b, from, to)),
        ),
    }
}

/// `f` on every expression of `s` (and of what is nested in it), in program order.
pub(crate) fn for_each_expr(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    match s {
        Stmt::Let { value, .. } | Stmt::Assign { value, .. } | Stmt::Factor(value) => f(value),
        Stmt::Var { init, .. } => {
            if let Some(e) = init {
                f(e);
            }
        }
        Stmt::Alloc { size, .. } => f(size),
        Stmt::Store { index, value, .. } => {
            f(index);
            f(value);
        }
        Stmt::For { lo, hi, body, .. } => {
            f(lo);
            f(hi);
            body.iter().for_each(|s| for_each_expr(s, f));
        }
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            f(cond);
            then.iter()
                .chain(otherwise.iter())
                .for_each(|s| for_each_expr(s, f));
        }
        Stmt::Draw { args, .. } => args.iter().for_each(&mut *f),
        Stmt::Observe { args, value, .. } => {
            args.iter().for_each(&mut *f);
            f(value);
        }
        Stmt::Reject => {}
    }
}

/// Every expression of `s` (and of what is nested in it) rewritten by `f`.
pub(crate) fn map_exprs(s: &mut Stmt, f: &mut dyn FnMut(&Expr) -> Expr) {
    match s {
        Stmt::Let { value, .. } | Stmt::Assign { value, .. } => *value = f(value),
        Stmt::Var { init, .. } => {
            if let Some(e) = init {
                *e = f(e);
            }
        }
        Stmt::Alloc { size, .. } => *size = f(size),
        Stmt::Store { index, value, .. } => {
            *index = f(index);
            *value = f(value);
        }
        Stmt::For { lo, hi, body, .. } => {
            *lo = f(lo);
            *hi = f(hi);
            for s in body {
                map_exprs(s, f);
            }
        }
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            *cond = f(cond);
            for s in then.iter_mut().chain(otherwise.iter_mut()) {
                map_exprs(s, f);
            }
        }
        Stmt::Draw { args, .. } => {
            for a in args {
                *a = f(a);
            }
        }
        Stmt::Factor(w) => *w = f(w),
        Stmt::Observe { args, value, .. } => {
            for a in args {
                *a = f(a);
            }
            *value = f(value);
        }
        Stmt::Reject => {}
    }
}

/// `body` with every statement that is not a `for` or an `if` passed through `f` (kept
/// as it returns, or dropped on `None`), loops and branches rebuilt around their rewritten
/// bodies.
pub(crate) fn rewrite_leaves(body: &[Stmt], f: &mut dyn FnMut(&Stmt) -> Option<Stmt>) -> Vec<Stmt> {
    body.iter()
        .filter_map(|s| match s {
            Stmt::For { var, lo, hi, body } => Some(Stmt::For {
                var: var.clone(),
                lo: lo.clone(),
                hi: hi.clone(),
                body: rewrite_leaves(body, f),
            }),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => Some(Stmt::If {
                cond: cond.clone(),
                then: rewrite_leaves(then, f),
                otherwise: rewrite_leaves(otherwise, f),
            }),
            s => f(s),
        })
        .collect()
}

/// Every statement of `body` that is not a `for` or an `if`, nested ones included, in
/// program order.
pub(crate) fn visit_leaves<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for s in body {
        match s {
            Stmt::For { body, .. } => visit_leaves(body, f),
            Stmt::If {
                then, otherwise, ..
            } => {
                visit_leaves(then, f);
                visit_leaves(otherwise, f);
            }
            s => f(s),
        }
    }
}

/// `f` on the name of every declaration in `body`, at any depth, in order: `let`, `var`,
/// `alloc`, a loop's index, a draw.
pub(crate) fn visit_decls<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a str)) {
    for s in body {
        match s {
            Stmt::Let { name, .. }
            | Stmt::Var { name, .. }
            | Stmt::Alloc { name, .. }
            | Stmt::Draw { name, .. } => f(name),
            Stmt::For { var, body, .. } => {
                f(var);
                visit_decls(body, f);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                visit_decls(then, f);
                visit_decls(otherwise, f);
            }
            Stmt::Assign { .. }
            | Stmt::Store { .. }
            | Stmt::Factor(_)
            | Stmt::Observe { .. }
            | Stmt::Reject => {}
        }
    }
}

/// `base`, or `base_1`, `base_2`, ... : the first not in `taken`, added to it (the one
/// way passes name what they make).
pub(crate) fn fresh_name(taken: &mut HashSet<String>, base: &str) -> String {
    let mut name = base.to_string();
    let mut k = 0;
    while taken.contains(&name) {
        k += 1;
        name = format!("{base}_{k}");
    }
    taken.insert(name.clone());
    name
}

/// `block` with the names of `map` renamed, where declared and where read or written.
pub(crate) fn rename_block(block: &mut [Stmt], map: &HashMap<String, String>) {
    let to = |x: &mut String| {
        if let Some(n) = map.get(x.as_str()) {
            *x = n.clone();
        }
    };
    for s in block.iter_mut() {
        map_exprs(s, &mut |e| {
            map.iter()
                .fold(e.clone(), |e, (from, to)| rename_expr(&e, from, to))
        });
        rename_decls(s, &to);
    }
}

fn rename_decls(s: &mut Stmt, to: &dyn Fn(&mut String)) {
    match s {
        Stmt::Let { name, .. }
        | Stmt::Var { name, .. }
        | Stmt::Assign { name, .. }
        | Stmt::Alloc { name, .. }
        | Stmt::Draw { name, .. } => to(name),
        Stmt::Store { array, .. } => to(array),
        Stmt::For { var, body, .. } => {
            to(var);
            for s in body {
                rename_decls(s, to);
            }
        }
        Stmt::If {
            then, otherwise, ..
        } => {
            for s in then.iter_mut().chain(otherwise.iter_mut()) {
                rename_decls(s, to);
            }
        }
        Stmt::Factor(_) | Stmt::Observe { .. } | Stmt::Reject => {}
    }
}

/// Counts, per name, its reads in `e` (`all`) and those that are `prob2real` of it
/// (`converted`): a name read only through the conversion has both counts equal.
pub(crate) fn tally(
    e: &Expr,
    all: &mut HashMap<String, usize>,
    converted: &mut HashMap<String, usize>,
) {
    match e {
        Expr::Var(x) => *all.entry(x.clone()).or_default() += 1,
        Expr::Lit(_) => {}
        Expr::Convert(Coercion::Prob2Real, x) => {
            if let Expr::Var(x) = x.as_ref() {
                *converted.entry(x.clone()).or_default() += 1;
            }
            tally(x, all, converted);
        }
        Expr::Convert(_, x) => tally(x, all, converted),
        Expr::Prim(_, args) => args.iter().for_each(|a| tally(a, all, converted)),
        Expr::Index(a, i) | Expr::Pair(a, i) => {
            tally(a, all, converted);
            tally(i, all, converted);
        }
    }
}

/// Counts, per name, its reads in `e` into `uses`.
pub(crate) fn count_reads(e: &Expr, uses: &mut HashMap<String, usize>) {
    match e {
        Expr::Var(x) => *uses.entry(x.clone()).or_default() += 1,
        Expr::Lit(_) => {}
        Expr::Prim(_, args) => args.iter().for_each(|a| count_reads(a, uses)),
        Expr::Index(a, i) | Expr::Pair(a, i) => {
            count_reads(a, uses);
            count_reads(i, uses);
        }
        Expr::Convert(_, x) => count_reads(x, uses),
    }
}

/// How many times each name is declared in `body`.
pub(crate) fn decl_counts(body: &[Stmt]) -> HashMap<String, usize> {
    let mut out: HashMap<String, usize> = HashMap::new();
    visit_decls(body, &mut |x| *out.entry(x.to_string()).or_default() += 1);
    out
}
