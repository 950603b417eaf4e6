//! The shared tables of `codegen::share` (issue 12): a loop whose body a later array
//! recomputes is tabulated once. Meaning is kept (the judge, `slic_semantics::compare`,
//! on random arguments and at sizes 0 and 1); the rewrite fires on the Gibbs shapes and
//! not where the loop might not have been evaluated or a name of its body is rebound.

use proptest::prelude::*;
use slic_algebra::{front, print, verify, Store, TermId};
use slic_codegen::share_tables;
use slic_semantics::{args_from_json, compare, CompareConfig, Value};

fn shared(src: &str) -> (Store, TermId, TermId, usize) {
    let mut store = Store::new();
    let t = front::load(&mut store, src).expect("test program elaborates");
    let s = share_tables(&mut store, t);
    verify::verify(&store, s.term).expect("well typed");
    assert_eq!(store.ty(s.term), store.ty(t));
    (store, t, s.term, s.tables)
}

const PARAMS: &str = "fn n nat:\nfn x array(prob):\nfn z array(nat):\n";

/// Shapes that share a table: the mass and the weights of a Gibbs update (a product, a
/// sum of products with extra factors, under a guard), and a `let` read by an array.
const SHARED: &[&str] = &[
    "weight((summate l from 0 to n: x[l] * 2 * nat2prob(l)) / 3, \
            categorical(array i of n: x[i] * 2 * nat2prob(i) / 5))",
    "if 1 <= n: weight(summate l from 0 to n: x[l] * nat2prob(z[l] + l), \
                       categorical(array i of n: nat2prob(z[i] + i) * x[i] / nat2prob(n))) \
     else: reject. measure(nat)",
    "s = product l from 0 to n: x[l] + 1\n\
     weight(s, categorical(array i of n: (x[i] + 1) * s))",
];

/// Shapes that must not: the loop under a branch (not always evaluated), over another
/// range, or its body's name rebound before the array.
const UNSHARED: &[&str] = &[
    "weight(if n == 2: summate l from 0 to n: x[l] else: 1, \
            categorical(array i of n: x[i]))",
    "weight(summate l from 0 to size(z): x[l], categorical(array i of n: x[i]))",
    "s = summate l from 0 to n: x[l]\n\
     x <~ return(array k of n: s)\n\
     weight(s, categorical(array i of n: x[i]))",
];

fn program(body: &str) -> String {
    format!("{PARAMS}{body}\n")
}

fn agree(src: &str, args: &str) -> Result<(), String> {
    let (store, t, out, _) = shared(src);
    let values: Vec<Value> = args_from_json(args, "test", store.ty(t)).expect("arguments");
    let config = CompareConfig {
        seed: 3,
        ..CompareConfig::default()
    };
    let v = compare(&store, t, out, &values, &config);
    // discrete measures are compared exactly: anything but equal (or, where the input
    // fails, an error both sides share) is a failure
    let both_fail = v.kind() == "unknown" && fails(&store, t, &values);
    if !(v.is_equal() || both_fail) {
        let text = print::print_term(&store, out);
        return Err(format!("changed the meaning on {args}:\n{text}\n{v:?}"));
    }
    Ok(())
}

/// Does running `t` on `args` fail (an index out of range, say)?
fn fails(store: &Store, t: TermId, args: &[Value]) -> bool {
    let f = slic_semantics::eval(store, t, &slic_semantics::Env::new());
    f.and_then(|f| slic_semantics::apply_args(store, &f, args))
        .and_then(|m| slic_semantics::mass(store, &m))
        .is_err()
}

/// The comparison the proptest uses tells a wrong table apart.
#[test]
fn a_wrong_table_is_caught() {
    let mut store = Store::new();
    let good = front::load(&mut store, &program(SHARED[0])).expect("elaborates");
    let bad = program(
        "weight((summate l from 0 to n: x[l] * 2 * nat2prob(l)) / 3, \
                categorical(array i of n: x[i] * 2 * nat2prob(i + 1) / 5))",
    );
    let bad = front::load(&mut store, &bad).expect("elaborates");
    let args = "[3, [0.5, 1.0, 0.25], [0, 1, 2]]";
    let values = args_from_json(args, "test", store.ty(good)).expect("arguments");
    let v = compare(&store, good, bad, &values, &CompareConfig::default());
    assert!(v.is_different(), "{v:?}");
}

#[test]
fn the_gibbs_shapes_share_one_table() {
    for shape in SHARED {
        let (store, _, out, tables) = shared(&program(shape));
        let text = print::print_term(&store, out);
        assert_eq!(tables, 1, "{text}");
        assert!(text.contains("tab = array"), "{text}");
    }
}

#[test]
fn a_loop_that_may_not_run_or_another_range_is_not_shared() {
    for shape in UNSHARED {
        let (store, t, out, tables) = shared(&program(shape));
        assert_eq!(tables, 0, "{}", print::print_term(&store, out));
        assert_eq!(out, t);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn sharing_keeps_meaning(
        shape in 0..SHARED.len(),
        xs in proptest::collection::vec(0u32..8, 0..4),
        zs in proptest::collection::vec(0u64..4, 0..4),
        n in 0u64..4,
    ) {
        let xs: Vec<String> = xs.iter().map(|&x| format!("{:.2}", f64::from(x) / 4.0)).collect();
        let zs: Vec<String> = zs.iter().map(ToString::to_string).collect();
        let args = format!("[{n}, [{}], [{}]]", xs.join(", "), zs.join(", "));
        let r = agree(&program(SHARED[shape]), &args);
        prop_assert!(r.is_ok(), "{}", r.err().unwrap_or_default());
    }
}
