//! Comparisons decided by the loops they sit in (`codegen::ranges`): inside `array i of n`,
//! `i + 1 <= n` is true and `n <= i` false, and the `if`s and connectives they leave fold;
//! a comparison the ranges do not decide stays; a loop that rebinds a variable of an
//! enclosing range (loop indices are canonical variables, so nested loops may share one)
//! forgets that range. `shift_literals` moves a literal added to one side of `<=` or `<`
//! across (`z[j] + 1 <= m` is `z[j] < m`), checked by evaluation on both sides of the
//! boundary.
//! Meaning: the pipeline's tests judge every corpus program's
//! summarized stage, which includes this pass.

use slic_algebra::{front, print, Node, Prim, Store, TermId, Type};
use slic_codegen::ranges::{decide_ranges, shift_literals};
use slic_semantics::{apply_args, args_from_json, eval, Env, Value};

fn decided(text: &str) -> (String, usize) {
    let mut store = Store::new();
    let t = front::load(&mut store, text).expect("loads");
    let r = decide_ranges(&mut store, t);
    (print::print_term(&store, r.term), r.decided)
}

#[test]
fn the_range_of_a_loop_decides_its_index_tests() {
    let (out, n) = decided(
        "fn n nat:\nfn m nat:\narray i of n: \
         if i + 1 <= n && (n <= i || i < m): 1 else: 2",
    );
    assert_eq!(n, 2, "{out}");
    assert!(out.contains("if i < m: 1 else: 2"), "{out}");
    let (out, n) =
        decided("fn n nat:\nfn m nat:\nsummate i from 2 to n: if 1 < i: nat2real(i) else: 0");
    assert_eq!(n, 1, "{out}");
    assert!(!out.contains("if"), "{out}");
}

#[test]
fn tests_the_range_does_not_decide_stay() {
    let text = "fn n nat:\nfn m nat:\narray i of n: if i < m: 1 else: 2";
    let (out, n) = decided(text);
    assert_eq!(n, 0);
    assert!(out.contains("if i < m"), "{out}");
}

#[test]
fn a_loop_rebinding_an_index_forgets_its_range() {
    // array v of n: summate v from 0 to 5: if v + 1 <= n: 1 else: 0. The inner v runs
    // over 0..5 whatever n is: the outer range (v < n) must not decide the test.
    let mut store = Store::new();
    let n = store.fresh_var("n", Type::Nat);
    let v = store.fresh_var("v", Type::Nat);
    let (nt, vt) = (store.var_term(n), store.var_term(v));
    let one = store.int_lit(1, Type::Nat);
    let zero = store.int_lit(0, Type::Nat);
    let five = store.int_lit(5, Type::Nat);
    let v1 = store.prim(Prim::Add, vec![vt, one], Type::Nat);
    let test = store.prim(Prim::Le, vec![v1, nt], Type::Bool);
    let body = store.intern(Node::If(test, one, zero), Type::Nat);
    let inner = store.intern(Node::Summate(v, zero, five, body), Type::Nat);
    let outer = store.intern(Node::Array(v, nt, inner), Type::array(Type::Nat));
    let t = store.intern(
        Node::Lam(n, outer),
        Type::fun(Type::Nat, Type::array(Type::Nat)),
    );
    let r = decide_ranges(&mut store, t);
    assert_eq!(r.decided, 0, "{}", print::print_term(&store, r.term));
    assert_eq!(r.term, t);
}

/// `t` evaluated at the JSON arguments.
fn run(store: &Store, t: TermId, args: &str) -> Value {
    let values = args_from_json(args, "test", store.ty(t)).expect("test arguments");
    let f = eval(store, t, &Env::new()).expect("evaluates");
    apply_args(store, &f, &values).expect("applies")
}

#[test]
fn a_literal_added_to_one_side_is_shifted_across() {
    // the labels' bounds test of a mixture: `z[j] + 1 <= m` is `z[j] < m`; `m < z[j] + 2`
    // is `m <= z[j] + 1`; a sum without a literal, or one on the other side, stays
    let text = "fn m nat:\nfn z array(nat):\nfn y int:\n\
                summate j from 0 to size(z): \
                (if z[j] + 1 <= m: 1 else: 0) + (if m < z[j] + 2: 10 else: 0) \
                + (if y + 3 <= nat2int(m): 100 else: 0) + (if z[j] <= m + 1: 1000 else: 0)";
    let mut store = Store::new();
    let t = front::load(&mut store, text).expect("loads");
    let shifted = shift_literals(&mut store, t);
    let out = print::print_term(&store, shifted);
    assert!(out.contains("if z[j] < m: 1"), "{out}");
    assert!(out.contains("if m <= z[j] + 1: 10"), "{out}");
    assert!(out.contains("if y + 2 < m: 100"), "{out}");
    assert!(out.contains("if z[j] <= m + 1: 1000"), "{out}");
    // the same numbers on every side of every boundary
    for m in 0..5 {
        for y in -4..4 {
            let args = format!("[{m}, [0, 1, 2, 3, 4, 5, 6], {y}]");
            assert_eq!(
                run(&store, t, &args),
                run(&store, shifted, &args),
                "m = {m}, y = {y}: {out}"
            );
        }
    }
}
