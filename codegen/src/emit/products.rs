//! Products of `real2prob` factors multiplied as reals, one logarithm per many factors
//! (issue 13: kernel speed). A `prob` is its logarithm in the kernels, so a loop that
//! multiplies `P *= real2prob(r)` takes a `log` of every factor: Naive Bayes' evidence of a
//! class takes one per word of the document (the rising products `ratios.rs` writes), for
//! every class and document, and those logarithms were half of a sweep.
//!
//! [`linear_products`] finds a loop whose body writes a `prob` accumulator `P`, declared
//! outside it, only as `P *= e` (never reading it otherwise; inside branches, not inside
//! a nested loop), and rewrites each `P *= real2prob(r)` as
//!
//! ```text
//! if 2^-300 <= r && r <= 2^300 {
//!     lin *= r
//!     if !(2^-300 <= lin && lin <= 2^300) { P *= real2prob(lin); lin = 1.0 }
//! } else {
//!     P *= real2prob(r)
//! }
//! ```
//!
//! with `var lin: real = 1.0` before the loop and `P *= real2prob(lin)` after it (the
//! fold is written as two tests of `lin`'s range, one folding and one resetting, so that
//! each rare branch assigns one name and `cold.rs` can emit it out of the loop's way:
//! [`rare_branch`]).
//! - **The value.** `lin` is the product of the factors it took since it was last folded
//!   into `P`, so `P`'s final value is the product of the same factors, in another order
//!   and grouping: only rounding differs (a relative error of an ulp per factor, against an
//!   ulp of the logarithm per factor before). `lin` lies within `[2^-300, 2^300]` after
//!   every step and each factor it takes does too, so no product leaves `[2^-600, 2^600]`:
//!   none overflows, underflows or loses precision to a subnormal.
//! - **Errors.** Every factor outside the range (a negative, a NaN, a zero, an infinity, or
//!   a value past `2^±300`) takes the branch that multiplies `real2prob(r)` as before,
//!   where it fails, or not, as it did; `real2prob(lin)` reads a positive finite real and
//!   cannot fail. `P` is not read in the loop, so nothing sees it before the last fold.
//!
//! Where the factor arrives through a variable, `var w: prob; if c { ...; w = a } else {
//! ...; w = b }; let v = w; P *= v` with `w` and `v` read nowhere else, the multiplication
//! first moves into the branches (`P *= a` and `P *= b`): the GMM and Naive Bayes kernels
//! write their guarded factors that way.

use std::collections::{HashMap, HashSet};

use slic_algebra::{Coercion, Prim, Type};

use crate::ir::walk::{count_reads, for_each_expr, fresh_name, visit_decls, Effects};
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};

/// The bounds of the factors and the running product multiplied as reals: `2^-300` and
/// `2^300`, so that a product of two stays within `[2^-600, 2^600]`.
const LOW: f64 = 4.909_093_465_297_727e-91;
const HIGH: f64 = 2.037_035_976_334_486e90;

/// What the rewrite reads of the whole program.
struct Names {
    /// Reads of each name, in every expression of the program.
    reads: HashMap<String, usize>,
    /// Names declared exactly once (parameters included) as `var x: prob`.
    probs: HashSet<String>,
    /// Every name declared, for fresh ones.
    taken: HashSet<String>,
}

/// `p` with its loops' products of `real2prob` factors multiplied as reals (see the module
/// documentation).
pub(crate) fn linear_products(p: &Program) -> Program {
    let mut names = Names {
        reads: HashMap::new(),
        probs: HashSet::new(),
        taken: p.params.iter().map(|(x, _)| x.clone()).collect(),
    };
    let mut decls: HashMap<String, usize> = HashMap::new();
    visit_decls(&p.body, &mut |x| {
        *decls.entry(x.to_string()).or_default() += 1
    });
    for x in p.params.iter().map(|(x, _)| x) {
        *decls.entry(x.clone()).or_default() += 1;
    }
    names.taken.extend(decls.keys().cloned());
    prob_vars(&p.body, &decls, &mut names.probs);
    count_all(&p.body, &mut names.reads);
    count_reads(&p.result, &mut names.reads);
    let mut body = p.body.clone();
    rewrite_block(&mut body, &mut names);
    Program { body, ..p.clone() }
}

/// The `var x: prob` declared once in the program.
fn prob_vars(block: &[Stmt], decls: &HashMap<String, usize>, out: &mut HashSet<String>) {
    for s in block {
        match s {
            Stmt::Var {
                name,
                ty: Type::Prob,
                ..
            } if decls.get(name) == Some(&1) => {
                out.insert(name.clone());
            }
            Stmt::For { body, .. } => prob_vars(body, decls, out),
            Stmt::If {
                then, otherwise, ..
            } => {
                prob_vars(then, decls, out);
                prob_vars(otherwise, decls, out);
            }
            _ => {}
        }
    }
}

/// Reads of every name in `block`'s expressions, nested ones included.
fn count_all(block: &[Stmt], reads: &mut HashMap<String, usize>) {
    for s in block {
        for_each_expr(s, &mut |e| count_reads(e, reads));
    }
}

/// Rewrites the loops of `block`, innermost first.
fn rewrite_block(block: &mut Vec<Stmt>, names: &mut Names) {
    let mut i = 0;
    while i < block.len() {
        match &mut block[i] {
            Stmt::For { body, .. } => rewrite_block(body, names),
            Stmt::If {
                then, otherwise, ..
            } => {
                rewrite_block(then, names);
                rewrite_block(otherwise, names);
            }
            _ => {}
        }
        i += match rewrite_loop(block, i, names) {
            Some(added) => added + 1,
            None => 1,
        };
    }
}

/// Rewrites the loop at `block[at]` for each accumulator it qualifies for; the number of
/// statements added around it (the loop then sits at `at + added / 2`).
fn rewrite_loop(block: &mut Vec<Stmt>, at: usize, names: &mut Names) -> Option<usize> {
    let Stmt::For { body, .. } = &block[at] else {
        return None;
    };
    let inner = Effects::of(body);
    let mut accs: Vec<String> = inner
        .writes
        .iter()
        .filter(|x| names.probs.contains(*x) && !inner.decls.contains(*x))
        .cloned()
        .collect();
    accs.sort();
    let mut added = 0;
    let mut loop_at = at;
    for acc in accs {
        let Stmt::For { body, .. } = &block[loop_at] else {
            return None;
        };
        if !only_multiplied(body, &acc, false) {
            continue;
        }
        let mut new_body = body.clone();
        sink_block(&mut new_body, &acc, names);
        let lin = fresh_name(&mut names.taken, &format!("lin_{acc}"));
        if !linear_sites(&mut new_body, &acc, &lin, names) {
            continue;
        }
        if let Stmt::For { body, .. } = &mut block[loop_at] {
            *body = new_body;
        }
        block.insert(loop_at, Stmt::var(&lin, Type::Real, Some(Expr::real(1.0))));
        loop_at += 1;
        block.insert(
            loop_at + 1,
            Stmt::assign(&acc, AssignOp::Mul, real2prob(Expr::var(&lin))),
        );
        added += 2;
    }
    (added > 0).then_some(added)
}

/// Whether `acc` appears in `block` only as `acc *= e` outside nested loops (`nested`:
/// `block` is inside one), never read.
fn only_multiplied(block: &[Stmt], acc: &str, nested: bool) -> bool {
    block.iter().all(|s| {
        let mut read = false;
        for_each_expr(s, &mut |e| {
            let mut r = HashMap::new();
            count_reads(e, &mut r);
            read |= r.contains_key(acc);
        });
        !read
            && match s {
                Stmt::Assign { name, op, .. } if name == acc => *op == AssignOp::Mul && !nested,
                Stmt::For { body, .. } => only_multiplied(body, acc, true),
                Stmt::If {
                    then, otherwise, ..
                } => only_multiplied(then, acc, nested) && only_multiplied(otherwise, acc, nested),
                _ => true,
            }
    })
}

/// Moves each `acc *= v` of `block` (and of its branches) whose factor arrives through a
/// variable set last in both branches of an `if` into those branches.
fn sink_block(block: &mut Vec<Stmt>, acc: &str, names: &Names) {
    for s in block.iter_mut() {
        if let Stmt::If {
            then, otherwise, ..
        } = s
        {
            sink_block(then, acc, names);
            sink_block(otherwise, acc, names);
        }
    }
    let mut k = 0;
    while k < block.len() {
        if !sink_one(block, k, acc, names) {
            k += 1;
        }
    }
}

/// Sinks `block[k]` if it is `acc *= v` of the form [`sink_block`] takes; whether it did
/// (the statement is then gone).
fn sink_one(block: &mut Vec<Stmt>, k: usize, acc: &str, names: &Names) -> bool {
    let Stmt::Assign {
        name,
        op: AssignOp::Mul,
        value: Expr::Var(v),
    } = &block[k]
    else {
        return false;
    };
    if name != acc {
        return false;
    }
    let read_once = |x: &str| names.reads.get(x) == Some(&1);
    // `let v = w` chains, each name read once
    let mut chain = Vec::new();
    let mut w = v.clone();
    loop {
        if !read_once(&w) {
            return false;
        }
        let bound = block[..k]
            .iter()
            .position(|s| matches!(s, Stmt::Let { name, value: Expr::Var(_), .. } if *name == w));
        match bound {
            Some(j) => {
                let Stmt::Let {
                    value: Expr::Var(x),
                    ..
                } = &block[j]
                else {
                    return false;
                };
                chain.push(j);
                w = x.clone();
            }
            None => break,
        }
    }
    let Some(d) = block[..k]
        .iter()
        .position(|s| matches!(s, Stmt::Var { name, ty: Type::Prob, init: None } if *name == w))
    else {
        return false;
    };
    // the one statement that sets `w`: an `if`, every branch ending in `w = e`
    let setters: Vec<usize> = (d + 1..k)
        .filter(|&j| {
            Effects::of(std::slice::from_ref(&block[j]))
                .writes
                .contains(&w)
        })
        .collect();
    let [j] = setters[..] else {
        return false;
    };
    let mut branchy = block[j].clone();
    if !matches!(branchy, Stmt::If { .. })
        || !sink_tail(std::slice::from_mut(&mut branchy), &w, acc)
        || Effects::of(std::slice::from_ref(&branchy))
            .writes
            .contains(&w)
    {
        return false;
    }
    block[j] = branchy;
    let mut gone: Vec<usize> = chain;
    gone.push(d);
    gone.push(k);
    gone.sort_unstable();
    for g in gone.into_iter().rev() {
        block.remove(g);
    }
    true
}

/// Rewrites the last statement of `block`, `w = e`, as `acc *= e` (through `if`s, in both
/// branches); whether every path ended so.
fn sink_tail(block: &mut [Stmt], w: &str, acc: &str) -> bool {
    match block.last_mut() {
        Some(Stmt::Assign {
            name,
            op: AssignOp::Set,
            ..
        }) if name == w => {
            if let Some(Stmt::Assign { name, op, .. }) = block.last_mut() {
                *name = acc.to_string();
                *op = AssignOp::Mul;
            }
            true
        }
        Some(Stmt::If {
            then, otherwise, ..
        }) => sink_tail(then, w, acc) && sink_tail(otherwise, w, acc),
        _ => false,
    }
}

/// Rewrites each `acc *= real2prob(r)` of `block` and its branches (see the module
/// documentation); whether there was one.
fn linear_sites(block: &mut Vec<Stmt>, acc: &str, lin: &str, names: &mut Names) -> bool {
    let mut any = false;
    let mut k = 0;
    while k < block.len() {
        if let Stmt::If {
            then, otherwise, ..
        } = &mut block[k]
        {
            let a = linear_sites(then, acc, lin, names);
            let b = linear_sites(otherwise, acc, lin, names);
            any |= a || b;
        }
        let factor = match &block[k] {
            Stmt::Assign {
                name,
                op: AssignOp::Mul,
                value: Expr::Convert(Coercion::Real2Prob, r),
            } if name == acc => Some(r.as_ref().clone()),
            _ => None,
        };
        let Some(r) = factor else {
            k += 1;
            continue;
        };
        any = true;
        let mut made = Vec::new();
        let r = match r {
            Expr::Var(_) | Expr::Lit(_) => r,
            r => {
                let t = fresh_name(&mut names.taken, "factor");
                made.push(Stmt::let_(&t, Type::Real, r));
                Expr::var(&t)
            }
        };
        // the fold in two tests of one value (`acc` first, then `lin` reset), each branch
        // assigning one name: `cold.rs` moves the first out of the loop's way
        let out_of_range = || Expr::prim(Prim::Not, vec![in_range(Expr::var(lin))]);
        let fold = [
            Stmt::If {
                cond: out_of_range(),
                then: vec![Stmt::assign(acc, AssignOp::Mul, real2prob(Expr::var(lin)))],
                otherwise: Vec::new(),
            },
            Stmt::If {
                cond: out_of_range(),
                then: vec![Stmt::assign(lin, AssignOp::Set, Expr::real(1.0))],
                otherwise: Vec::new(),
            },
        ];
        let mut then = vec![Stmt::assign(lin, AssignOp::Mul, r.clone())];
        then.extend(fold);
        made.push(Stmt::If {
            cond: in_range(r.clone()),
            then,
            otherwise: vec![Stmt::assign(acc, AssignOp::Mul, real2prob(r))],
        });
        let n = made.len();
        block.splice(k..k + 1, made);
        k += n;
    }
    any
}

/// Which branch of a test this module writes is the rare one: `Some(false)` for the
/// `else` of `in_range(x)` (a factor out of the range), `Some(true)` for the `then` of
/// `not(in_range(x))` (the running product folded); `None` for any other test.
/// `cold.rs` emits that branch out of the loop's way.
pub(crate) fn rare_branch(cond: &Expr) -> Option<bool> {
    let is_range = |e: &Expr| match e {
        Expr::Prim(Prim::And, args) => match args.as_slice() {
            [Expr::Prim(Prim::Le, a), Expr::Prim(Prim::Le, b)] => {
                matches!(a.as_slice(), [Expr::Lit(Lit::Real(lo)), x] if *lo == LOW && b.first() == Some(x))
                    && matches!(b.as_slice(), [_, Expr::Lit(Lit::Real(hi))] if *hi == HIGH)
            }
            _ => false,
        },
        _ => false,
    };
    match cond {
        Expr::Prim(Prim::Not, args) if args.len() == 1 && is_range(&args[0]) => Some(true),
        e if is_range(e) => Some(false),
        _ => None,
    }
}

/// `2^-300 <= x && x <= 2^300`
fn in_range(x: Expr) -> Expr {
    Expr::prim(
        Prim::And,
        vec![
            Expr::prim(Prim::Le, vec![Expr::real(LOW), x.clone()]),
            Expr::prim(Prim::Le, vec![x, Expr::real(HIGH)]),
        ],
    )
}

fn real2prob(x: Expr) -> Expr {
    Expr::convert(Coercion::Real2Prob, x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{run, Val};
    use proptest::prelude::*;

    #[test]
    fn the_bounds_are_powers_of_two() {
        assert_eq!(LOW, 2f64.powi(-300));
        assert_eq!(HIGH, 2f64.powi(300));
    }

    /// `fn a: array(real)`: `var p: prob = 1; for i < size(a) { body(a[i]) }; p`.
    fn over(body: Vec<Stmt>) -> Program {
        Program {
            params: vec![("a".into(), Type::array(Type::Real))],
            body: vec![
                Stmt::var("p", Type::Prob, Some(Expr::prob(1.0))),
                Stmt::For {
                    var: "i".into(),
                    lo: Expr::nat(0),
                    hi: Expr::size(Expr::var("a")),
                    body,
                },
            ],
            result: Expr::var("p"),
            measure: false,
            inout: Vec::new(),
        }
    }

    fn a_i() -> Expr {
        Expr::index(Expr::var("a"), Expr::var("i"))
    }

    /// `p *= real2prob(a[i] · a[i])`
    fn direct() -> Program {
        over(vec![Stmt::assign(
            "p",
            AssignOp::Mul,
            real2prob(Expr::prim(Prim::Mul, vec![a_i(), a_i()])),
        )])
    }

    /// `var w: prob; if 0 < a[i] { w = real2prob(a[i]) } else { w = real2prob(-a[i]) };
    /// let v = w; p *= v`, or with `p *= w` also read by `extra` when given
    fn through_a_variable(extra: Option<Stmt>) -> Program {
        let mut body = vec![
            Stmt::var("w", Type::Prob, None),
            Stmt::If {
                cond: Expr::prim(Prim::Lt, vec![Expr::real(0.0), a_i()]),
                then: vec![Stmt::assign("w", AssignOp::Set, real2prob(a_i()))],
                otherwise: vec![Stmt::assign(
                    "w",
                    AssignOp::Set,
                    real2prob(Expr::prim(Prim::Neg, vec![a_i()])),
                )],
            },
            Stmt::let_("v", Type::Prob, Expr::var("w")),
            Stmt::assign("p", AssignOp::Mul, Expr::var("v")),
        ];
        body.extend(extra);
        over(body)
    }

    /// The same value within `1e-9` of its logarithm, or both the same kind of error.
    fn assert_close(p: &Program, q: &Program, a: &[f64]) {
        let args = [Val::Array(a.iter().map(|&x| Val::Real(x)).collect())];
        match (run(p, &args), run(q, &args)) {
            (Ok((Val::Prob(x), _)), Ok((Val::Prob(y), _))) => assert!(
                x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                "{x} against {y} on {a:?} in {q}"
            ),
            (Err(x), Err(y)) => assert_eq!(
                std::mem::discriminant(&x),
                std::mem::discriminant(&y),
                "{x} against {y} on {a:?}"
            ),
            (x, y) => panic!("{x:?} against {y:?} on {a:?} in {q}"),
        }
    }

    #[test]
    fn a_product_of_real2prob_factors_is_multiplied_as_reals() {
        let p = direct();
        let q = linear_products(&p);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(text.contains("var lin_p: real = 1.0"), "{text}");
        assert!(text.contains("lin_p *= factor"), "{text}");
        assert!(text.contains("p *= real2prob(lin_p)"), "{text}");
        // a long product that leaves the range of doubles many times over, a zero, a
        // negative (an error, as before), huge and tiny factors, an infinity
        let long: Vec<f64> = (0..400).map(|k| 1e10 + k as f64).collect();
        let tiny: Vec<f64> = (0..400).map(|k| 1e-10 / (k + 1) as f64).collect();
        for a in [
            vec![],
            vec![2.0, 3.0],
            long,
            tiny,
            vec![1e200, 1e-200, 3.0],
            vec![1.0, 0.0, 5.0],
            vec![2.0, f64::NAN, 1.0],
            vec![1e160, f64::INFINITY],
        ] {
            assert_close(&p, &q, &a);
        }
        // a negative factor of the unsquared form fails where it did
        let neg = over(vec![Stmt::assign("p", AssignOp::Mul, real2prob(a_i()))]);
        let q = linear_products(&neg);
        assert_ne!(q, neg);
        assert_close(&neg, &q, &[2.0, -1.0, 3.0]);
    }

    #[test]
    fn the_range_tests_name_their_rare_branch() {
        let x = Expr::var("x");
        assert_eq!(rare_branch(&in_range(x.clone())), Some(false));
        let folded = Expr::prim(Prim::Not, vec![in_range(x.clone())]);
        assert_eq!(rare_branch(&folded), Some(true));
        // another bound, or two names, is another test
        let other = Expr::prim(
            Prim::And,
            vec![
                Expr::prim(Prim::Le, vec![Expr::real(1.0), x.clone()]),
                Expr::prim(Prim::Le, vec![x.clone(), Expr::real(HIGH)]),
            ],
        );
        assert_eq!(rare_branch(&other), None);
        let two = Expr::prim(
            Prim::And,
            vec![
                Expr::prim(Prim::Le, vec![Expr::real(LOW), x]),
                Expr::prim(Prim::Le, vec![Expr::var("y"), Expr::real(HIGH)]),
            ],
        );
        assert_eq!(rare_branch(&two), None);
    }

    #[test]
    fn a_factor_set_in_both_branches_moves_into_them() {
        let p = through_a_variable(None);
        let q = linear_products(&p);
        assert_eq!(crate::verify::verify(&q), Ok(()));
        let text = q.to_string();
        assert!(!text.contains("var w"), "{text}");
        assert!(!text.contains("p *= v"), "{text}");
        assert_eq!(text.matches("lin_p *=").count(), 2, "{text}");
        assert_close(&p, &q, &[1.5, -2.0, 0.0, 1e250, -1e-250]);
    }

    #[test]
    fn a_product_read_in_its_loop_or_a_factor_read_twice_stays() {
        // `p` read inside the loop
        let read = over(vec![
            Stmt::assign("p", AssignOp::Mul, real2prob(a_i())),
            Stmt::let_("seen", Type::Prob, Expr::var("p")),
        ]);
        assert_eq!(linear_products(&read), read);
        // `p` added to, not only multiplied
        let added = over(vec![
            Stmt::assign("p", AssignOp::Mul, real2prob(a_i())),
            Stmt::assign("p", AssignOp::Add, Expr::prob(1.0)),
        ]);
        assert_eq!(linear_products(&added), added);
        // `w` read by a second statement: the multiplication cannot move, and `p *= v`
        // has no `real2prob` factor of its own
        let p = through_a_variable(Some(Stmt::let_("again", Type::Prob, Expr::var("w"))));
        assert_eq!(linear_products(&p), p);
    }

    proptest! {
        #[test]
        fn linear_products_keep_meaning(
            a in proptest::collection::vec(
                prop_oneof![
                    4 => 1e-3f64..1e3,
                    1 => -1e3f64..1e3,
                    1 => Just(0.0),
                    1 => 1e150f64..1e300,
                    1 => 1e-300f64..1e-150,
                    // within the range, but a few of them carry the product out of it
                    2 => 1e40f64..1e89,
                    2 => 1e-89f64..1e-40,
                ],
                0..60,
            )
        ) {
            for p in [direct(), through_a_variable(None)] {
                assert_close(&p, &linear_products(&p), &a);
            }
        }
    }
}
