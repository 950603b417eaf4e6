//! Tests of the sparse products (`slic_codegen::sparse`): a product inside an outer loop
//! whose factor is 1 where a loop-invariant test holds runs over the indices where it
//! fails. proptest: on random histograms (mostly zero, empty, and an empty outer loop),
//! the rewritten program gives the same value as the original, bit for bit, and runs
//! fewer iterations where the histogram is sparse; a test that reads the outer loop's
//! index, or an array the outer loop writes, is left alone.

use proptest::prelude::*;
use slic_algebra::{Coercion, Prim, Type};
use slic_codegen::sparse::sparsify;
use slic_codegen::{run, verify, AssignOp, Expr, Program, Stmt, Val};

/// `Σ_{i<K} Π_{k<size(d)} (if d[k] == 0: 1 else: x[k] · (i + d[k]))`, with the test
/// `test` (reading `dk`, and perhaps `i`).
fn program(test: Expr, write_d_inside: bool) -> Program {
    let x_k = Expr::index(Expr::var("x"), Expr::var("k"));
    let i_plus = Expr::prim(Prim::Add, vec![Expr::var("i"), Expr::var("dk")]);
    let factor = Expr::prim(
        Prim::Mul,
        vec![x_k, Expr::convert(Coercion::Nat2Prob, i_plus)],
    );
    let inner = Stmt::for_(
        "k",
        Expr::nat(0),
        Expr::size(Expr::var("h")),
        vec![
            Stmt::let_("dk", Type::Nat, Expr::index(Expr::var("h"), Expr::var("k"))),
            Stmt::let_("z", Type::Bool, test),
            Stmt::var("v", Type::Prob, None),
            Stmt::if_(
                Expr::var("z"),
                vec![Stmt::assign("v", AssignOp::Set, Expr::prob(1.0))],
                vec![Stmt::assign("v", AssignOp::Set, factor)],
            ),
            Stmt::assign("acc", AssignOp::Mul, Expr::var("v")),
        ],
    );
    let mut outer = vec![Stmt::var("acc", Type::Prob, Some(Expr::prob(1.0)))];
    if write_d_inside {
        outer.push(Stmt::store("h", Expr::nat(0), AssignOp::Add, Expr::nat(0)));
    }
    outer.push(inner);
    outer.push(Stmt::assign("total", AssignOp::Add, Expr::var("acc")));
    // h: a copy of d (an allocated array, which the body may write)
    let copy = Stmt::for_(
        "c",
        Expr::nat(0),
        Expr::size(Expr::var("d")),
        vec![Stmt::store(
            "h",
            Expr::var("c"),
            AssignOp::Set,
            Expr::index(Expr::var("d"), Expr::var("c")),
        )],
    );
    Program {
        params: vec![
            ("d".into(), Type::array(Type::Nat)),
            ("x".into(), Type::array(Type::Prob)),
            ("K".into(), Type::Nat),
        ],
        body: vec![
            Stmt::alloc("h", Type::Nat, Expr::size(Expr::var("d"))),
            copy,
            Stmt::var("total", Type::Prob, Some(Expr::prob(0.0))),
            Stmt::for_("i", Expr::nat(0), Expr::var("K"), outer),
        ],
        result: Expr::var("total"),
        measure: false,
        inout: Vec::new(),
    }
}

fn is_zero(of: &str) -> Expr {
    Expr::prim(Prim::Eq, vec![Expr::var(of), Expr::nat(0)])
}

fn args(d: &[u64], x: &[f64], k: u64) -> Vec<Val> {
    vec![
        Val::array(d.iter().map(|&n| Val::Nat(n)).collect()),
        Val::array(x.iter().map(|&p| Val::prob(p)).collect()),
        Val::Nat(k),
    ]
}

fn made_sparse(p: &Program) -> bool {
    p.to_string().contains("ks_")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sparse_products_keep_their_value(
        d in prop::collection::vec(prop_oneof![4 => Just(0u64), 1 => 1u64..4], 0..40),
        seed in 0.1f64..3.0,
        k in 0u64..4,
    ) {
        let p = program(is_zero("dk"), false);
        let s = sparsify(&p);
        verify(&s).expect("the sparse program verifies");
        prop_assert!(made_sparse(&s));
        let x: Vec<f64> = (0..d.len()).map(|j| seed + j as f64 / 7.0).collect();
        let a = args(&d, &x, k);
        let (want, before) = run(&p, &a).expect("the original runs");
        let (got, after) = run(&s, &a).expect("the sparse program runs");
        // the same products in the same order
        prop_assert_eq!(want, got);
        // the list costs one pass over the histogram; each outer iteration then skips
        // the zeros
        let zeros = d.iter().filter(|&&n| n == 0).count() as u64;
        prop_assert_eq!(
            after.iterations + k * zeros,
            before.iterations + if k > 0 { d.len() as u64 } else { 0 }
        );
    }
}

#[test]
fn a_test_that_varies_with_the_outer_loop_is_left_alone() {
    let reads_i = Expr::prim(Prim::Eq, vec![Expr::var("dk"), Expr::var("i")]);
    let p = program(reads_i, false);
    assert!(!made_sparse(&sparsify(&p)));
    // the histogram written inside the outer loop: its test is not fixed
    let p = program(is_zero("dk"), true);
    assert!(!made_sparse(&sparsify(&p)));
    // and the rewritten programs still agree where they are left alone
    let a = args(&[0, 2, 0, 1], &[0.5, 1.5, 2.0, 0.25], 3);
    assert_eq!(run(&p, &a).unwrap().0, run(&sparsify(&p), &a).unwrap().0);
}
