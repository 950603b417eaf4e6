//! What a chain's data fix, computed once (issue 12: kernel speed). A Gibbs update
//! program specialised to its data (`crate::data_facts`) still computes, at every update,
//! scalars that read nothing but the data: LDA's `Σ_v word_prior[v]` (6,906 log-sum-exps
//! an update, a third of its kernel's time) and `Σ_k topic_prior[k]`, the Gamma functions
//! of them. [`precompute`] runs those statements once, with the interpreter, on the
//! chain's arguments, and writes each scalar they define that the rest of the program
//! reads as a `let` of its value: run-time specialisation of values, as the emitter's is
//! of sizes.
//!
//! The statements computed are top-level ones (so each runs exactly once per update,
//! whatever the state) that draw, weigh and reject nothing, read no parameter but fixed
//! data (not the state, not the index), no allocated array, and no name that anything
//! else defines or changes; found to a fixed point, since a statement that stays makes
//! what it writes depend on the update. A value is written after the last statement that
//! computed it, and only where nothing that stays reads it earlier. Exact on the
//! arguments it was given: every statement computed ran on them at every update, with the
//! values they had, and the interpreter is the semantics the kernels agree with. Where the
//! computation fails (a read out of range), or a program declares a name twice (where
//! reads by name could mean two bindings), the program is left as it is.

use std::collections::{HashMap, HashSet};

use slic_algebra::Type;

use crate::interp::{run_scalars, Val};
use crate::ir::walk::Effects;
use crate::ir::{Expr, Lit, Program, Stmt};

/// What [`precompute`] did.
#[derive(Clone, Debug)]
pub struct Precomputed {
    pub program: Program,
    /// Top-level statements computed once and removed.
    pub statements: usize,
    /// Scalars written as `let`s of their values.
    pub values: usize,
}

/// `p` with what its data fix computed on `args` (its arguments, in parameter order):
/// every parameter but those named in `varying` (the state and the index) is taken to
/// keep the value it has in `args` for as long as the program is run.
pub fn precompute(p: &Program, args: &[Val], varying: &[&str]) -> Precomputed {
    let unchanged = || Precomputed {
        program: p.clone(),
        statements: 0,
        values: 0,
    };
    if args.len() != p.params.len() || declares_twice(p) {
        return unchanged();
    }
    let effects: Vec<Effects> = p.body.iter().map(Effects::scoped).collect();
    let mut banned: HashSet<String> = varying.iter().map(|x| x.to_string()).collect();
    loop {
        let Some(plan) = plan(p, &effects, &banned) else {
            return unchanged();
        };
        if plan.exported.is_empty() {
            return unchanged();
        }
        let names: Vec<String> = plan.exported.iter().map(|(x, _)| x.clone()).collect();
        let program = Program {
            params: p.params.clone(),
            body: plan.computed.iter().map(|&k| p.body[k].clone()).collect(),
            result: Expr::Lit(Lit::Bool(true)),
            measure: false,
            inout: Vec::new(),
        };
        let Ok(values) = run_scalars(&program, args, &names) else {
            return unchanged();
        };
        // a value no literal writes (a real infinity, a NaN) stays computed by the update
        let lits: Vec<Option<Lit>> = plan
            .exported
            .iter()
            .zip(&values)
            .map(|((_, ty), v)| literal(ty, v))
            .collect();
        if let Some(k) = lits.iter().position(Option::is_none) {
            banned.insert(names[k].clone());
            continue;
        }
        return rewrite(p, &plan, lits.into_iter().flatten().collect());
    }
}

/// The statements to compute once and the scalars they give the rest of the program.
struct Plan {
    /// Top-level statements computed, by position.
    computed: Vec<usize>,
    /// The scalars the others (or the result) read, with their types, and the position
    /// after which each is written.
    exported: Vec<(String, Type)>,
    after: Vec<usize>,
}

/// The fixed point of what may be computed once, where nothing named in `banned` is.
fn plan(p: &Program, effects: &[Effects], banned: &HashSet<String>) -> Option<Plan> {
    let mut banned = banned.clone();
    let mut stays: Vec<bool> = p
        .body
        .iter()
        .map(|s| matches!(s, Stmt::Alloc { .. }))
        .collect();
    loop {
        let mut changed = false;
        for (k, e) in effects.iter().enumerate() {
            if !stays[k]
                && (e.measure
                    || top_decl(&p.body[k]).is_some_and(|x| banned.contains(x))
                    || e.reads.iter().any(|x| banned.contains(x))
                    || e.writes.iter().any(|x| banned.contains(x)))
            {
                stays[k] = true;
                changed = true;
            }
        }
        // what a staying statement declares or writes depends on the update
        for (k, e) in effects.iter().enumerate() {
            if stays[k] {
                for x in e
                    .writes
                    .iter()
                    .map(String::as_str)
                    .chain(top_decl(&p.body[k]))
                {
                    changed |= banned.insert(x.to_string());
                }
            }
        }
        // a computed statement writing a name no computed statement declares at the top
        // level (an array parameter, a name declared inside another statement) stays
        let declared: HashSet<&str> = (0..p.body.len())
            .filter(|&k| !stays[k])
            .filter_map(|k| top_decl(&p.body[k]))
            .collect();
        for (k, e) in effects.iter().enumerate() {
            if !stays[k] && e.writes.iter().any(|x| !declared.contains(x.as_str())) {
                stays[k] = true;
                changed = true;
            }
        }
        // a value a staying statement reads before its last computation stays too
        for (k, s) in p.body.iter().enumerate() {
            let Some(x) = top_decl(s).filter(|_| !stays[k]) else {
                continue;
            };
            let last = last_write(p, effects, &stays, k, x);
            if (k..last).any(|j| stays[j] && effects[j].reads.contains(x)) {
                changed |= banned.insert(x.to_string());
            }
        }
        if !changed {
            break;
        }
    }
    let mut read_after: HashSet<&str> = HashSet::new();
    for (k, e) in effects.iter().enumerate() {
        if stays[k] {
            read_after.extend(e.reads.iter().map(String::as_str));
        }
    }
    let mut result_reads = HashSet::new();
    crate::ir::walk::reads(&p.result, &mut result_reads);
    read_after.extend(result_reads.iter().map(String::as_str));
    let mut exported = Vec::new();
    let mut after = Vec::new();
    let mut computed = Vec::new();
    for (k, s) in p.body.iter().enumerate() {
        if stays[k] {
            continue;
        }
        computed.push(k);
        let Some(x) = top_decl(s) else { continue };
        if !read_after.contains(x) {
            continue;
        }
        let ty = match s {
            Stmt::Let { ty, .. } | Stmt::Var { ty, .. } => ty.clone(),
            _ => return None,
        };
        exported.push((x.to_string(), ty));
        after.push(last_write(p, effects, &stays, k, x));
    }
    Some(Plan {
        computed,
        exported,
        after,
    })
}

/// The position of the last computed statement from `k` on that declares or writes `x`.
fn last_write(p: &Program, effects: &[Effects], stays: &[bool], k: usize, x: &str) -> usize {
    (k..p.body.len())
        .rev()
        .find(|&j| !stays[j] && (j == k || effects[j].writes.contains(x)))
        .unwrap_or(k)
}

/// The name a top-level statement declares for the statements after it.
fn top_decl(s: &Stmt) -> Option<&str> {
    match s {
        Stmt::Let { name, .. }
        | Stmt::Var { name, .. }
        | Stmt::Alloc { name, .. }
        | Stmt::Draw { name, .. } => Some(name),
        _ => None,
    }
}

/// `p`'s body with the computed statements gone and each exported value a `let`, placed
/// after the statement that computed it last.
fn rewrite(p: &Program, plan: &Plan, lits: Vec<Lit>) -> Precomputed {
    let computed: HashSet<usize> = plan.computed.iter().copied().collect();
    let mut lets: HashMap<usize, Vec<Stmt>> = HashMap::new();
    for (((x, ty), &at), lit) in plan.exported.iter().zip(&plan.after).zip(lits) {
        lets.entry(at)
            .or_default()
            .push(Stmt::let_(x, ty.clone(), Expr::Lit(lit)));
    }
    let mut body = Vec::with_capacity(p.body.len());
    for (k, s) in p.body.iter().enumerate() {
        if !computed.contains(&k) {
            body.push(s.clone());
        }
        if let Some(ls) = lets.remove(&k) {
            body.extend(ls);
        }
    }
    Precomputed {
        program: p.with_body(body),
        statements: plan.computed.len(),
        values: plan.exported.len(),
    }
}

/// The literal of a scalar value of type `ty`, where one writes it exactly.
fn literal(ty: &Type, v: &Val) -> Option<Lit> {
    match (ty, v) {
        (Type::Nat, Val::Nat(n)) => Some(Lit::Nat(*n)),
        (Type::Int, Val::Int(n)) => Some(Lit::Int(*n)),
        (Type::Bool, Val::Bool(b)) => Some(Lit::Bool(*b)),
        (Type::Real, Val::Real(x)) if x.is_finite() => Some(Lit::Real(*x)),
        // ln 0 is a prob literal (`prob(0.0)`); ln ∞ and NaN are not
        (Type::Prob, Val::Prob(l)) if l.is_finite() || *l == f64::NEG_INFINITY => {
            Some(Lit::Prob(*l))
        }
        _ => None,
    }
}

/// Does `p` declare some name twice at its top level (a parameter, a top-level
/// statement)? Names declared inside statements may shadow: [`Effects::scoped`] resolves
/// them by scope.
fn declares_twice(p: &Program) -> bool {
    let mut seen: HashSet<&str> = HashSet::new();
    let params = p.params.iter().map(|(x, _)| x.as_str());
    !params
        .chain(p.body.iter().filter_map(top_decl))
        .all(|x| seen.insert(x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::AssignOp;
    use slic_algebra::Prim;

    /// `fn a: array(real), st: array(nat), u: nat`: `s = Σ_j a[j]`, `t = s * 2`, `c` the
    /// points whose label is `st[u]`, then `extra` statements; returns `t + c`.
    fn program(extra: Vec<Stmt>) -> Program {
        let mut body = vec![
            Stmt::var("s", Type::Real, Some(Expr::Lit(Lit::Real(0.0)))),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::size(Expr::var("a")),
                vec![Stmt::assign(
                    "s",
                    AssignOp::Add,
                    Expr::Index(Box::new(Expr::var("a")), Box::new(Expr::var("j"))),
                )],
            ),
            Stmt::let_(
                "t",
                Type::Real,
                Expr::prim(Prim::Mul, vec![Expr::var("s"), Expr::Lit(Lit::Real(2.0))]),
            ),
            Stmt::var("c", Type::Nat, Some(Expr::nat(0))),
            Stmt::for_(
                "k",
                Expr::nat(0),
                Expr::size(Expr::var("st")),
                vec![Stmt::If {
                    cond: Expr::prim(
                        Prim::Eq,
                        vec![
                            Expr::Index(Box::new(Expr::var("st")), Box::new(Expr::var("k"))),
                            Expr::Index(Box::new(Expr::var("st")), Box::new(Expr::var("u"))),
                        ],
                    ),
                    then: vec![Stmt::assign("c", AssignOp::Add, Expr::nat(1))],
                    otherwise: Vec::new(),
                }],
            ),
        ];
        body.extend(extra);
        Program {
            params: vec![
                ("a".into(), Type::array(Type::Real)),
                ("st".into(), Type::array(Type::Nat)),
                ("u".into(), Type::Nat),
            ],
            body,
            result: Expr::prim(
                Prim::Add,
                vec![
                    Expr::var("t"),
                    Expr::Convert(slic_algebra::Coercion::Nat2Real, Box::new(Expr::var("c"))),
                ],
            ),
            measure: false,
            inout: Vec::new(),
        }
    }

    fn args(state: &[u64], u: u64) -> Vec<Val> {
        let a = Val::array(vec![Val::Real(0.5), Val::Real(1.25), Val::Real(-3.0)]);
        let st = Val::array(state.iter().map(|&k| Val::Nat(k)).collect());
        vec![a, st, Val::Nat(u)]
    }

    /// `p` and `q` answer alike at several states and indices over the same data.
    fn same_everywhere(p: &Program, q: &Program) {
        for (state, u) in [(&[0, 1, 1][..], 0), (&[2, 2, 2], 1), (&[1, 0, 1], 2)] {
            let a = args(state, u);
            assert_eq!(
                crate::run(p, &a).map(|r| r.0),
                crate::run(q, &a).map(|r| r.0)
            );
        }
    }

    #[test]
    fn what_the_data_alone_define_is_computed_once_and_the_rest_stays() {
        let p = program(Vec::new());
        let q = precompute(&p, &args(&[0, 1, 1], 0), &["st", "u"]);
        assert_eq!(crate::verify::verify(&q.program), Ok(()));
        // `var s`, its loop and `t` computed; only `t` is read afterwards
        assert_eq!((q.statements, q.values), (3, 1), "{}", q.program);
        let text = q.program.to_string();
        assert!(text.contains("let t: real = -2.5"), "{text}");
        assert!(text.contains("for k in"), "{text}");
        // the same answer at every state and index: the data did not change
        same_everywhere(&p, &q.program);
    }

    #[test]
    fn a_name_shadowed_inside_a_statement_is_read_by_its_scope() {
        // a loop over the state declaring its own `t` and `s`: its reads of them are its
        // own, so the top-level `s` and `t` still move, and its `c` stays
        let inner = Stmt::for_(
            "q",
            Expr::nat(0),
            Expr::size(Expr::var("st")),
            vec![
                Stmt::let_(
                    "t",
                    Type::Nat,
                    Expr::Index(Box::new(Expr::var("st")), Box::new(Expr::var("q"))),
                ),
                Stmt::var("s", Type::Nat, Some(Expr::var("t"))),
                Stmt::assign("s", AssignOp::Add, Expr::var("u")),
                Stmt::assign("c", AssignOp::Add, Expr::var("s")),
            ],
        );
        let p = program(vec![inner]);
        let q = precompute(&p, &args(&[0, 1, 1], 2), &["st", "u"]);
        assert_eq!(crate::verify::verify(&q.program), Ok(()));
        assert_eq!((q.statements, q.values), (3, 1), "{}", q.program);
        same_everywhere(&p, &q.program);
    }

    #[test]
    fn a_value_the_update_changes_or_reads_early_stays() {
        // `s += a[u]` after the loop: `s` depends on the index, so nothing of it moves
        let late = Stmt::assign(
            "s",
            AssignOp::Add,
            Expr::Index(Box::new(Expr::var("a")), Box::new(Expr::var("u"))),
        );
        let q = precompute(&program(vec![late]), &args(&[0, 1, 1], 1), &["st", "u"]);
        assert_eq!(q.values, 0, "{}", q.program);
        // a read of a data array out of its range fails: the program stays as it is
        let mut p = program(Vec::new());
        p.body.insert(
            0,
            Stmt::let_(
                "bad",
                Type::Real,
                Expr::Index(Box::new(Expr::var("a")), Box::new(Expr::nat(7))),
            ),
        );
        p.result = Expr::prim(Prim::Add, vec![p.result.clone(), Expr::var("bad")]);
        let q = precompute(&p, &args(&[0, 1, 1], 1), &["st", "u"]);
        assert_eq!((q.statements, q.values), (0, 0));
    }
}
