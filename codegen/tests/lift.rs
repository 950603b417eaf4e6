//! Tests lifted out of gamma functions (`codegen::lift`): a gamma function whose argument
//! reads a loop's index only in a test is split on the test, what both sides share bound
//! once outside it, so that the lowered program evaluates both gamma functions outside
//! the loop; a test whose variable the rest also reads is left alone. Meaning: the
//! reference interpreter on both terms, and the IR interpreter on the lowered program
//! against the program lowered without LICM (which skips the lift).

use slic_algebra::{front, print, Store, TermId};
use slic_codegen::lift::lift_tests;
use slic_codegen::{lower_program, run, Passes, Val};
use slic_semantics::{apply_args, args_from_json, eval, Env, Value};

/// `t` evaluated at the JSON arguments.
fn reference(store: &Store, t: TermId, args: &str) -> Value {
    let values = args_from_json(args, "test", store.ty(t)).expect("test arguments");
    let f = eval(store, t, &Env::new()).expect("evaluates");
    apply_args(store, &f, &values).expect("applies")
}

/// The weight of label `i` reads `i` only in the last class's test, and a sum over the
/// points that both sides share.
const LAST_CLASS: &str = "fn as array(prob):\nfn z array(nat):\n\
    array i of size(as): gammaFunc(prob2real(as[0]) + nat2real((summate j from 0 to size(z): \
    if z[j] == 1: 1 else: 0) + (if i == 1: 1 else: 0)))";

#[test]
fn a_gamma_function_of_a_test_is_split_and_hoisted() {
    let mut store = Store::new();
    let t = front::load(&mut store, LAST_CLASS).expect("loads");
    let l = lift_tests(&mut store, t);
    assert_eq!(l.lifted, 1);
    let out = print::print_term(&store, l.term);
    assert!(out.contains("if i == 1:"), "{out}");
    for args in [
        "[[0.5, 1.5, 2.0], [0, 1, 1, 2]]",
        "[[3.0, 0.25], [1, 1, 0]]",
    ] {
        assert_eq!(
            reference(&store, t, args),
            reference(&store, l.term, args),
            "{args}"
        );
    }
    // lowered, no gamma function (and no sum over the points) is left in the loop over i
    let lowered = lower_program(&mut store, t, Passes::default()).expect("lowers");
    let text = lowered.program.to_string();
    let inner = &text[text.find("for i").expect("a loop over the labels")..];
    assert!(!inner.contains("gammaFunc"), "{text}");
    assert!(!inner.contains("for j"), "{text}");
    let plain = lower_program(
        &mut store,
        t,
        Passes {
            licm: false,
            ..Passes::default()
        },
    )
    .expect("lowers");
    let args = [
        Val::array(vec![Val::prob(0.5), Val::prob(1.5), Val::prob(2.0)]),
        Val::array(vec![Val::Nat(0), Val::Nat(1), Val::Nat(1), Val::Nat(2)]),
    ];
    let (a, _) = run(&lowered.program, &args).expect("runs");
    let (b, _) = run(&plain.program, &args).expect("runs");
    let (Val::Array(a), Val::Array(b)) = (a, b) else {
        panic!("arrays");
    };
    for (x, y) in a.iter().zip(b.iter()) {
        let (Val::Prob(x), Val::Prob(y)) = (x, y) else {
            panic!("probs");
        };
        assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "{x} against {y}");
    }
}

#[test]
fn a_test_whose_variable_the_rest_reads_stays() {
    let text = "fn as array(prob):\narray i of size(as): \
                gammaFunc(nat2real(i) + (if i == 1: 1 else: 0))";
    let mut store = Store::new();
    let t = front::load(&mut store, text).expect("loads");
    let l = lift_tests(&mut store, t);
    assert_eq!(l.lifted, 0);
    assert_eq!(l.term, t);
}
