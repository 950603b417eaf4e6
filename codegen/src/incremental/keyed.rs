//! Statistics kept per key (issue 13: LDA). The LDA update counts the topics of the
//! tokens of its own document, `doc[j] == doc[u]`, and of its own word, `w[j] == w[u]`:
//! sums over the points filtered by a test that compares a data array at the point,
//! `a[j]`, with the same array at the index, `K = a[u]` (a `let` before the loop). Such a
//! sum reads the index beyond the point split, so it is not a statistic of the points as
//! it stands. It is one row of a table: with `f(j, K)` the body's part of accumulator
//! `acc`,
//!
//! `acc = Σ_j f(j, K) = Σ_{j : a[j] = K} f(j, a[j]) = T[K]`, where `T[k] = Σ_{j : a[j] = k}
//! f(j, a[j])`,
//!
//! exactly when `f(j, K) = 0` wherever `a[j] ≠ K`: every write to `acc` happens only
//! where the test held. `T` reads no index: it is kept like any statistic (a row per key,
//! `T[a[j]]` moving with point `j`), and the update reads row `K`. A row is flat,
//! `T[a[j]·width + i]`, so a write whose `i` the accumulator would have refused (out of
//! range) is made a store past the table's end: the same error, never another row.
//!
//! [`split`] finds the keys of a loop's body (its tests `x == K` or `x /= K` where `x` is
//! `a[j]`, `a` a parameter, directly or through a `let` of one of them; `K` read nowhere
//! else), and for each accumulator shows which key filters it: with that key's tests
//! decided false (`a[j] ≠ K`), booleans and naturals propagated and the branches they
//! decide taken, the accumulator is written nowhere. An accumulator no key filters must
//! not read any key at all; one a key filters must read no other. The body it returns has
//! every key's tests decided true, so it computes `f(j, a[j])`, and reads no key.

use std::collections::{HashMap, HashSet};

use slic_algebra::Prim;

use crate::ir::walk::{map_exprs, rewrite_leaves, visit_leaves};
use crate::ir::{AssignOp, Expr, Lit, Stmt};

/// How a statistic kept per key is laid out: row `k` of `width` elements holds the part
/// of the points `j` with `array[j] = k`.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// What the points are compared with, as the update reads it: a `let` of it
    /// (`doc_at_0 = doc[u]`) or the read itself.
    pub at: Expr,
    /// The natural array parameter of the points' keys (`doc`).
    pub array: String,
    /// The accumulator's length: one row's.
    pub width: Expr,
}

/// The keys of a body and how its names read them.
struct Keys<'a> {
    /// Each key `K` with its array.
    arrays: HashMap<String, String>,
    /// `let x = K`: `x` reads `K`.
    aliases: HashMap<String, String>,
    /// `let y = a[j]`: `y` is the key of point `j` in `a`.
    reads: HashMap<String, String>,
    j: &'a str,
    /// The names that may be keys.
    candidates: &'a HashSet<String>,
}

impl Keys<'_> {
    fn key_of<'e>(&'e self, e: &'e Expr) -> Option<&'e String> {
        match e {
            Expr::Var(x) if self.candidates.contains(x) => Some(x),
            Expr::Var(x) => self.aliases.get(x),
            _ => None,
        }
    }

    fn array_of<'e>(&'e self, e: &'e Expr) -> Option<&'e String> {
        match e {
            Expr::Index(a, i) => match (a.as_ref(), i.as_ref()) {
                (Expr::Var(a), Expr::Var(i)) if i == self.j => Some(a),
                _ => None,
            },
            Expr::Var(y) => self.reads.get(y),
            _ => None,
        }
    }

    /// The key and array a comparison `a[j] ? K` tests (either way round), if it is one.
    fn pair(&self, args: &[Expr]) -> Option<(String, String)> {
        let [x, y] = args else { return None };
        [(x, y), (y, x)].into_iter().find_map(|(p, q)| {
            let k = self.key_of(q)?;
            let a = self.array_of(p)?;
            Some((k.clone(), a.clone()))
        })
    }

    /// The key a comparison tests, if it is one of a key with its own array.
    fn test(&self, args: &[Expr]) -> Option<String> {
        let (k, a) = self.pair(args)?;
        (self.arrays.get(&k) == Some(&a)).then_some(k)
    }

    /// `e` with the tests of the keys in `which` decided: `a[j] == K` is `matched`.
    fn decide(&self, e: &Expr, which: &HashSet<String>, matched: bool) -> Expr {
        match e {
            Expr::Prim(p @ (Prim::Eq | Prim::Ne), args) => match self.test(args) {
                Some(k) if which.contains(&k) => Expr::bool((*p == Prim::Eq) == matched),
                _ => Expr::Prim(
                    *p,
                    args.iter()
                        .map(|a| self.decide(a, which, matched))
                        .collect(),
                ),
            },
            Expr::Lit(_) | Expr::Var(_) => e.clone(),
            Expr::Prim(p, args) => Expr::Prim(
                *p,
                args.iter()
                    .map(|a| self.decide(a, which, matched))
                    .collect(),
            ),
            Expr::Index(a, i) => Expr::index(
                self.decide(a, which, matched),
                self.decide(i, which, matched),
            ),
            Expr::Convert(c, x) => Expr::convert(*c, self.decide(x, which, matched)),
            Expr::Pair(a, b) => Expr::Pair(
                Box::new(self.decide(a, which, matched)),
                Box::new(self.decide(b, which, matched)),
            ),
        }
    }

    /// `body` with the keys in `which` decided (see [`Keys::decide`]) and their aliases'
    /// `let`s dropped.
    fn decided(&self, body: &[Stmt], which: &HashSet<String>, matched: bool) -> Vec<Stmt> {
        let tested: Vec<Stmt> = body
            .iter()
            .map(|s| {
                let mut s = s.clone();
                map_exprs(&mut s, &mut |e| self.decide(e, which, matched));
                s
            })
            .collect();
        rewrite_leaves(&tested, &mut |s| match s {
            Stmt::Let { name, .. } if self.aliases.get(name).is_some_and(|k| which.contains(k)) => {
                None
            }
            s => Some(s.clone()),
        })
    }

    /// Why `e` reads a key other than in one of its tests, if it does.
    fn stray(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Prim(Prim::Eq | Prim::Ne, args) if self.test(args).is_some() => None,
            Expr::Var(_) => self.key_of(e).cloned(),
            Expr::Lit(_) => None,
            Expr::Prim(_, args) => args.iter().find_map(|a| self.stray(a)),
            Expr::Index(a, i) | Expr::Pair(a, i) => self.stray(a).or_else(|| self.stray(i)),
            Expr::Convert(_, x) => self.stray(x),
        }
    }
}

/// A body with its keys decided, and the key (name, array) of each accumulator one filters.
pub(super) type Split = (Vec<Stmt>, HashMap<String, (Expr, String)>);

/// The body of a loop over `j` with its keys decided true, and the key (the update's
/// expression of it, and its array) of each accumulator a key filters; `Ok(None)` where
/// the body tests none of `lets` (the `let`s before the loop that read the index) or of
/// the reads `b[u]` of a data array at the index `u`. `arrays` are the parameters a key
/// may be read from.
pub(super) fn split(
    body: &[Stmt],
    j: &str,
    u: &str,
    lets: &HashSet<String>,
    arrays: &HashSet<&str>,
    accs: &[String],
) -> Result<Option<Split>, String> {
    // each read `b[u]` named by its text, so that the rest reads keys by name alone (no
    // program declares such a name, and every one is decided away or refused below)
    let mut at: HashMap<String, Expr> = lets.iter().map(|x| (x.clone(), Expr::var(x))).collect();
    let body: Vec<Stmt> = body
        .iter()
        .map(|s| {
            let mut s = s.clone();
            map_exprs(&mut s, &mut |e| named_reads(e, u, arrays, &mut at));
            s
        })
        .collect();
    let body = body.as_slice();
    let candidates: HashSet<String> = at.keys().cloned().collect();
    let candidates = &candidates;
    let mut keys = Keys {
        arrays: HashMap::new(),
        aliases: HashMap::new(),
        reads: HashMap::new(),
        j,
        candidates,
    };
    visit_leaves(body, &mut |s| {
        if let Stmt::Let { name, value, .. } = s {
            match value {
                Expr::Var(k) if candidates.contains(k) => {
                    keys.aliases.insert(name.clone(), k.clone());
                }
                Expr::Index(a, i) => {
                    if let (Expr::Var(a), Expr::Var(i)) = (a.as_ref(), i.as_ref()) {
                        if i == j && arrays.contains(a.as_str()) {
                            keys.reads.insert(name.clone(), a.clone());
                        }
                    }
                }
                _ => {}
            }
        }
    });
    // each key's array, from its tests
    let mut arrays_of: HashMap<String, HashSet<String>> = HashMap::new();
    for s in body {
        let mut s = s.clone();
        map_exprs(&mut s, &mut |e| {
            each_test(e, &mut |args| {
                if let Some((k, a)) = keys.pair(args) {
                    arrays_of.entry(k).or_default().insert(a);
                }
            });
            e.clone()
        });
    }
    if arrays_of.is_empty() {
        return Ok(None);
    }
    for (k, arrays) in arrays_of {
        if arrays.len() > 1 {
            return Err(format!("it compares `{k}` with more than one array"));
        }
        if let Some(a) = arrays.into_iter().next() {
            keys.arrays.insert(k, a);
        }
    }
    // the keys are read only in their tests (and their aliases' lets)
    let mut stray = None;
    let unaliased = rewrite_leaves(body, &mut |s| match s {
        Stmt::Let { name, .. } if keys.aliases.contains_key(name) => None,
        s => Some(s.clone()),
    });
    for s in &unaliased {
        let mut s = s.clone();
        map_exprs(&mut s, &mut |e| {
            if stray.is_none() {
                stray = keys.stray(e);
            }
            e.clone()
        });
    }
    if let Some(k) = stray {
        return Err(format!("it reads `{k}` other than in a test of a key"));
    }
    // each accumulator: the key whose mismatch leaves it unwritten; and it reads no other
    let all: HashSet<String> = keys.arrays.keys().cloned().collect();
    let mut order: Vec<&String> = all.iter().collect();
    order.sort();
    let mut filters = HashMap::new();
    for acc in accs {
        let by = order.iter().find(|k| {
            let one = HashSet::from([(**k).clone()]);
            !writes(&super::fold_values(&keys.decided(body, &one, false)), acc)
        });
        for k in &order {
            if Some(k) != by && super::tainted(body, k, k).contains(acc.as_str()) {
                return Err(match by {
                    Some(b) => format!("`{acc}` is kept per `{b}` but also reads `{k}`"),
                    None => format!("`{acc}` reads `{k}` where a point's key differs"),
                });
            }
        }
        if let Some(k) = by {
            filters.insert(acc.clone(), (at[*k].clone(), keys.arrays[*k].clone()));
        }
    }
    Ok(Some((
        super::fold(&keys.decided(body, &all, true)),
        filters,
    )))
}

/// `e` with each read `b[u]` of a data array at the index a name of its own (recorded in
/// `at`).
fn named_reads(e: &Expr, u: &str, arrays: &HashSet<&str>, at: &mut HashMap<String, Expr>) -> Expr {
    match e {
        Expr::Index(b, i) => match (b.as_ref(), i.as_ref()) {
            (Expr::Var(b), Expr::Var(i)) if i == u && arrays.contains(b.as_str()) => {
                let name = format!("{b}[{u}]");
                at.entry(name.clone()).or_insert_with(|| e.clone());
                Expr::Var(name)
            }
            _ => Expr::index(named_reads(b, u, arrays, at), named_reads(i, u, arrays, at)),
        },
        Expr::Lit(_) | Expr::Var(_) => e.clone(),
        Expr::Prim(p, args) => Expr::Prim(
            *p,
            args.iter().map(|a| named_reads(a, u, arrays, at)).collect(),
        ),
        Expr::Convert(c, x) => Expr::convert(*c, named_reads(x, u, arrays, at)),
        Expr::Pair(a, b) => Expr::Pair(
            Box::new(named_reads(a, u, arrays, at)),
            Box::new(named_reads(b, u, arrays, at)),
        ),
    }
}

/// `f` on the arguments of every `==` and `/=` in `e`.
fn each_test(e: &Expr, f: &mut dyn FnMut(&[Expr])) {
    match e {
        Expr::Prim(Prim::Eq | Prim::Ne, args) => {
            f(args);
            args.iter().for_each(|a| each_test(a, f));
        }
        Expr::Prim(_, args) => args.iter().for_each(|a| each_test(a, f)),
        Expr::Index(a, i) | Expr::Pair(a, i) => {
            each_test(a, f);
            each_test(i, f);
        }
        Expr::Convert(_, x) => each_test(x, f),
        Expr::Lit(_) | Expr::Var(_) => {}
    }
}

/// Does `body` change `acc` (or an element of it)? Adding a literal zero does not.
fn writes(body: &[Stmt], acc: &str) -> bool {
    let zero = |op: &AssignOp, v: &Expr| {
        *op == AssignOp::Add && matches!(v, Expr::Lit(Lit::Nat(0) | Lit::Int(0)))
            || matches!(v, Expr::Lit(Lit::Real(x)) if *x == 0.0 && *op == AssignOp::Add)
    };
    let mut found = false;
    visit_leaves(body, &mut |s| match s {
        Stmt::Assign {
            name: x, op, value, ..
        }
        | Stmt::Store {
            array: x,
            op,
            value,
            ..
        } if x == acc && !zero(op, value) => found = true,
        _ => {}
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::Type;

    /// `if doc[j] == k { hist[z[j]] += 1 }; tot += 1`, plus `extra`.
    fn body(extra: Vec<Stmt>) -> Vec<Stmt> {
        let at = |a: &str| Expr::index(Expr::var(a), Expr::var("j"));
        let mut b = vec![
            Stmt::if_(
                Expr::prim(Prim::Eq, vec![at("doc"), Expr::var("k")]),
                vec![Stmt::store("hist", at("z"), AssignOp::Add, Expr::nat(1))],
                Vec::new(),
            ),
            Stmt::assign("tot", AssignOp::Add, Expr::nat(1)),
        ];
        b.extend(extra);
        b
    }

    fn run(b: &[Stmt]) -> Result<Option<Split>, String> {
        let lets = HashSet::from(["k".to_string()]);
        let accs = ["hist".to_string(), "tot".to_string()];
        split(b, "j", "u", &lets, &HashSet::from(["doc"]), &accs)
    }

    #[test]
    fn a_sum_filtered_by_a_key_is_kept_per_key() {
        let (keyed, filters) = run(&body(Vec::new())).expect("keyed").expect("a key");
        assert_eq!(filters.len(), 1, "{filters:?}");
        assert_eq!(filters["hist"], (Expr::var("k"), "doc".to_string()));
        let text: Vec<String> = keyed.iter().map(|s| s.head()).collect();
        assert!(!format!("{text:?}").contains("k)"), "{text:?}");
    }

    /// `fn doc, z: array(nat), u: nat`: `hist[z[j]] += 1` over the other points of
    /// `u`'s document, `hist` of length 2; returns `hist[0]`.
    fn per_document() -> crate::ir::Program {
        let at = |a: &str| Expr::index(Expr::var(a), Expr::var("j"));
        let body = vec![
            Stmt::let_(
                "k",
                Type::Nat,
                Expr::index(Expr::var("doc"), Expr::var("u")),
            ),
            Stmt::alloc("hist", Type::Nat, Expr::nat(2)),
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::size(Expr::var("doc")),
                vec![Stmt::if_(
                    Expr::prim(Prim::Ne, vec![Expr::var("j"), Expr::var("u")]),
                    vec![Stmt::if_(
                        Expr::prim(Prim::Eq, vec![at("doc"), Expr::var("k")]),
                        vec![Stmt::store("hist", at("z"), AssignOp::Add, Expr::nat(1))],
                        Vec::new(),
                    )],
                    Vec::new(),
                )],
            ),
        ];
        crate::ir::Program {
            params: vec![
                ("doc".into(), Type::array(Type::Nat)),
                ("z".into(), Type::array(Type::Nat)),
                ("u".into(), Type::Nat),
            ],
            body,
            result: Expr::index(Expr::var("hist"), Expr::nat(0)),
            measure: false,
            inout: Vec::new(),
        }
    }

    #[test]
    fn a_label_past_the_row_errs_as_the_accumulator_did() {
        use crate::interp::Val;
        let p = per_document();
        let inc = crate::incremental::derive(&p, "z", "u").expect("kept per document");
        assert!(inc.stats[0].key.is_some(), "{:?}", inc.stats);
        let nats = |v: &[u64]| Val::array(v.iter().map(|&n| Val::Nat(n)).collect());
        // label 2 of a point in u's document: past `hist`; and of another document
        for (z, original_errs) in [([0, 1, 1], false), ([0, 2, 1], true), ([0, 1, 2], false)] {
            let args = vec![nats(&[0, 0, 1]), nats(&z), Val::Nat(0)];
            assert_eq!(crate::run(&p, &args).is_err(), original_errs, "{z:?}");
            let all = crate::gibbs::incremental::with_stats(&inc, &args).expect("sized");
            // init sums every point: it errs wherever a label is past the row
            let init = crate::run(&inc.init, &all);
            assert_eq!(init.is_err(), z.contains(&2), "{z:?}: {init:?}");
        }
    }

    #[test]
    fn a_key_read_other_than_in_its_test_is_refused() {
        let stray = vec![Stmt::let_("x", Type::Nat, Expr::var("k"))];
        let mut b = body(Vec::new());
        b.extend(stray);
        b.push(Stmt::assign("tot", AssignOp::Add, Expr::var("x")));
        assert!(run(&b).is_err());
    }
}
