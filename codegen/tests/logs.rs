//! Products of `real2prob` factors taken as one logarithm (`codegen::logs`):
//! - LDA's shape (a factor, a factor in a branch beside a gamma ratio, a factor under a
//!   `let`, a divisor) becomes one `real2prob` of a product and quotient under a range
//!   test, and the lowered program's loop over the labels takes one `log` per label where
//!   it took three;
//! - proptest: on random arguments, zeros, negatives and values far from 1 included, the
//!   reference interpreter gives the same value (to 1e-12 in log space) or the same
//!   failure on both terms, and so does the IR interpreter on both lowered programs;
//! - a `let` whose name is bound twice, or read outside its factor, stays where it is
//!   (nothing captured: the values are the reference interpreter's);
//! - a product of one logarithm is left as it is.

use proptest::prelude::*;
use slic_algebra::{front, print, Coercion, Node, Prim, Store, TermId, Type, VarId};
use slic_codegen::logs::merge_logs;
use slic_codegen::{lower_program, run, Passes, Val};
use slic_semantics::{apply_args, args_from_json, eval, Env, Value};

/// `t` evaluated at the JSON arguments, or why it failed.
fn reference(store: &Store, t: TermId, args: &str) -> Result<Value, String> {
    let values = args_from_json(args, "test", store.ty(t)).expect("test arguments");
    let f = eval(store, t, &Env::new()).map_err(|e| format!("{e:?}"))?;
    apply_args(store, &f, &values).map_err(|e| format!("{e:?}"))
}

/// The weight of topic `i` as LDA's update writes it: the document's count, the word's
/// count (a gamma ratio where the word is the last one), the last topic's count under a
/// `let` and shifted at one label, and the topic's total as a divisor.
const TOPIC: &str = "fn a array(real):
fn b array(real):
fn d array(real):
fn x real:
fn last bool:
array i of size(a):
    real2prob(a[i])
        * (if last: gammaFunc(b[i] + 1) * recip(gammaFunc(b[i])) else: real2prob(b[i]))
        * (y = x + 1
           if i == 0: real2prob(y) else: 1)
        * recip(real2prob(d[i]))
";

/// The log-space values of an array of probs, or the failure.
fn logs_of(v: Result<Value, String>) -> Result<Vec<f64>, String> {
    match v? {
        Value::Array(xs) => Ok(xs
            .iter()
            .map(|x| match x {
                Value::Prob(l) => *l,
                other => panic!("not a prob: {other:?}"),
            })
            .collect()),
        other => panic!("not an array: {other:?}"),
    }
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0))
}

#[test]
fn the_topic_weight_takes_one_logarithm() {
    let mut store = Store::new();
    let t = front::load(&mut store, TOPIC).expect("loads");
    let m = merge_logs(&mut store, t);
    assert_eq!(m.merged, 1);
    let out = print::print_term(&store, m.term);
    assert!(out.contains("real2prob(f"), "{out}");
    // lowered: one `real2prob` on the fast path of the loop over the labels, none else
    // but in the branch not taken
    let lowered = lower_program(&mut store, t, Passes::default()).expect("lowers");
    let text = lowered.program.to_string();
    let fast = text.find("if t").map(|at| &text[at..]).unwrap_or(&text);
    let first = fast.find("real2prob").expect("the merged logarithm");
    let slow = fast.find("} else {").expect("the fallback");
    assert!(first < slow, "{text}");
    assert_eq!(
        fast[..slow].matches("real2prob").count(),
        1,
        "one logarithm on the fast path: {text}"
    );
}

/// `fn a real: fn b real: body`.
fn closed(store: &mut Store, a: VarId, b: VarId, body: TermId) -> TermId {
    let inner = store.intern(Node::Lam(b, body), Type::fun(Type::Real, Type::Prob));
    let ty = store.ty(inner).clone();
    store.intern(Node::Lam(a, inner), Type::fun(Type::Real, ty))
}

#[test]
fn a_let_whose_name_is_read_elsewhere_stays() {
    // passes may copy a binder, so one name can be bound in two factors, or in a factor
    // and around the product: moving such a `let` around the product would capture
    let mut store = Store::new();
    let (a, b, y) = (
        store.fresh_var("a", Type::Real),
        store.fresh_var("b", Type::Real),
        store.fresh_var("y", Type::Real),
    );
    let (at, bt, yt) = (store.var_term(a), store.var_term(b), store.var_term(y));
    let one = store.int_lit(1, Type::Real);
    let b1 = store.prim(Prim::Add, vec![bt, one], Type::Real);
    let log = |store: &mut Store, x: TermId| {
        store.intern(Node::Coerce(Coercion::Real2Prob, x), Type::Prob)
    };
    let ry = log(&mut store, yt);
    let rb = log(&mut store, bt);
    // `real2prob(b) · (y = b + 1; real2prob(y)) · real2prob(y)` under an outer `y = a`
    let inner = store.intern(Node::Let(y, b1, ry), Type::Prob);
    let product = store.prim(Prim::Mul, vec![rb, inner, ry], Type::Prob);
    let outer = store.intern(Node::Let(y, at, product), Type::Prob);
    // `(y = a; real2prob(y)) · (y = b + 1; real2prob(y))`: one name bound twice
    let first = store.intern(Node::Let(y, at, ry), Type::Prob);
    let twice = store.prim(Prim::Mul, vec![first, inner], Type::Prob);
    for body in [outer, twice] {
        let t = closed(&mut store, a, b, body);
        let m = merge_logs(&mut store, t);
        for args in ["[2.0, 3.0]", "[0.5, -1.0]", "[1e300, 1e300]", "[0.0, 7.0]"] {
            let want = reference(&store, t, args);
            let got = reference(&store, m.term, args);
            match (want, got) {
                (Ok(Value::Prob(w)), Ok(Value::Prob(g))) => assert!(
                    w == g || (w - g).abs() <= 1e-12 * w.abs().max(1.0),
                    "{args}: {w} against {g}"
                ),
                (Err(_), Err(_)) => {}
                (w, g) => panic!("{args}: {w:?} against {g:?}"),
            }
        }
    }
}

#[test]
fn one_logarithm_is_left_alone() {
    let text = "fn a real:\nfn p prob:\nreal2prob(a) * p * 2";
    let mut store = Store::new();
    let t = front::load(&mut store, text).expect("loads");
    let m = merge_logs(&mut store, t);
    assert_eq!(m.merged, 0);
    assert_eq!(m.term, t);
}

/// A real: mostly moderate, sometimes 0, negative, or far from 1 either way.
fn real() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.01f64..50.0,
        1 => Just(0.0),
        1 => -5.0f64..-0.01,
        1 => prop_oneof![Just(1e-200), Just(1e200), Just(1e-80), Just(1e80)],
    ]
}

fn json(xs: &[f64]) -> String {
    let s: Vec<String> = xs.iter().map(|x| format!("{x:e}")).collect();
    format!("[{}]", s.join(", "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn merged_products_mean_what_they_did(
        rows in prop::collection::vec((real(), real(), real()), 1..5),
        x in real(),
        last in any::<bool>(),
    ) {
        let a: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let b: Vec<f64> = rows.iter().map(|r| r.1).collect();
        let d: Vec<f64> = rows.iter().map(|r| r.2).collect();
        let args = format!("[{}, {}, {}, {x:e}, {last}]", json(&a), json(&b), json(&d));
        let mut store = Store::new();
        let t = front::load(&mut store, TOPIC).expect("loads");
        let m = merge_logs(&mut store, t);
        let want = logs_of(reference(&store, t, &args));
        let got = logs_of(reference(&store, m.term, &args));
        match (&want, &got) {
            (Ok(w), Ok(g)) => prop_assert!(close(w, g), "{args}: {w:?} against {g:?}"),
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "{args}: {want:?} against {got:?}"),
        }
        // and lowered, against the program lowered without the pass's help: the
        // reference interpreter's answer
        let lowered = lower_program(&mut store, t, Passes::default()).expect("lowers");
        let vals = vec![
            Val::array(a.iter().map(|&v| Val::Real(v)).collect()),
            Val::array(b.iter().map(|&v| Val::Real(v)).collect()),
            Val::array(d.iter().map(|&v| Val::Real(v)).collect()),
            Val::Real(x),
            Val::Bool(last),
        ];
        let ran = run(&lowered.program, &vals).map(|(v, _)| v);
        match (&want, ran) {
            (Ok(w), Ok(Val::Array(vs))) => {
                let g: Vec<f64> = vs
                    .iter()
                    .map(|v| match v {
                        Val::Prob(l) => *l,
                        other => panic!("not a prob: {other:?}"),
                    })
                    .collect();
                prop_assert!(close(w, &g), "{args}: lowered {g:?} against {w:?}");
            }
            (Err(_), Err(_)) => {}
            (w, r) => prop_assert!(false, "{args}: lowered {r:?} against {w:?}"),
        }
    }
}
