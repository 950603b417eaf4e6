//! Working tables of an update reset by their lists (issue 13: kernel speed). The update's
//! tables are kept from one update to the next (`scratch.rs`) and, by default, refilled
//! with zeros at every update, what a fresh allocation holds. For Naive Bayes that is the moved document's
//! word histogram and the list of its words (`crate::touched`): 2 x 50,000 elements
//! written per update for a document of a hundred words, and the cache they pass through
//! emptied of the tables the update reads.
//!
//! Where the update writes a list `ks` only as `ks[n] = e; n += 1` (the two statements
//! adjacent, `n` a `var` of 0 assigned nowhere else), its elements past the first `n`
//! are never written: after the update only `ks[0..n]` can be nonzero. Where the update
//! writes a `nat` table `d` only as
//!
//! ```text
//! if d[e] == 0 { ks[n] = e; n += 1 }
//! d[e] += c            // c a positive literal
//! ```
//!
//! an element of `d` becomes nonzero only where it is listed, and stays listed: after the
//! update only `d[ks[0..n]]` can be nonzero. [`Lists::reset`] sets those elements back to
//! 0 once they are last read, so both hold zeros at the next update as a fresh allocation
//! would, and [`Lists::covers`] tells `scratch.rs` which refills that makes unneeded.

use std::collections::{HashMap, HashSet};

use slic_algebra::{Prim, Type};

use crate::ir::walk::{visit_leaves, Effects};
use crate::ir::{AssignOp, Expr, Lit, Stmt};

/// The lists of an update and the tables each lists.
#[derive(Default)]
pub(super) struct Lists {
    /// Each list and its count.
    counts: HashMap<String, String>,
    /// Each listed table and its list.
    tables: HashMap<String, String>,
}

impl Lists {
    /// The lists of `body` (an update's top-level block) whose count is declared at its
    /// top level, and the `nat` tables they list.
    pub(super) fn of(body: &[Stmt]) -> Lists {
        let mut found = Patterns::default();
        found.block(body);
        let writes = write_counts(body);
        let top_vars: HashSet<&str> = body
            .iter()
            .filter_map(|s| match s {
                Stmt::Var {
                    name,
                    ty: Type::Nat,
                    init: Some(Expr::Lit(Lit::Nat(0))),
                } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let nat_tables: HashSet<&str> = body
            .iter()
            .filter_map(|s| match s {
                Stmt::Alloc {
                    name,
                    elem: Type::Nat,
                    ..
                } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let decls = crate::ir::walk::decl_counts(body);
        let once = |x: &str| decls.get(x) == Some(&1);
        let mut counts = HashMap::new();
        for ((list, n), uses) in &found.appends {
            // every write of the list and of its count is one of these appends
            let all = writes.get(list) == Some(uses) && writes.get(n) == Some(uses);
            let one_count = found.appends.keys().filter(|(l, _)| l == list).count() == 1;
            if all && one_count && top_vars.contains(n.as_str()) && once(list) && once(n) {
                counts.insert(list.clone(), n.clone());
            }
        }
        let mut tables = HashMap::new();
        for ((table, list), uses) in &found.listed {
            let by_one = found.listed.keys().filter(|(t, _)| t == table).count() == 1;
            if writes.get(table) == Some(uses)
                && by_one
                && counts.contains_key(list)
                && nat_tables.contains(table.as_str())
                && once(table)
            {
                tables.insert(table.clone(), list.clone());
            }
        }
        Lists { counts, tables }
    }

    /// Is `name` a list or a listed table, whose zeros [`Lists::reset`] restores when
    /// its list is among `kept`?
    pub(super) fn covers(&self, name: &str, kept: &HashSet<String>) -> bool {
        match self.tables.get(name) {
            Some(list) => kept.contains(list) && kept.contains(name),
            None => self.counts.contains_key(name) && kept.contains(name),
        }
    }

    /// The list of the listed table `name`.
    pub(super) fn list_of(&self, name: &str) -> Option<&str> {
        self.tables.get(name).map(String::as_str)
    }

    /// After the update: for each list in `kept`, `for t in 0..n { d[ks[t]] = 0 (each
    /// table d it lists, in kept); ks[t] = 0 }`, `t` named by `fresh`.
    pub(super) fn reset(
        &self,
        kept: &HashSet<String>,
        fresh: &mut dyn FnMut(&str) -> String,
    ) -> Vec<Stmt> {
        let mut lists: Vec<(&String, &String)> = self
            .counts
            .iter()
            .filter(|(l, _)| kept.contains(*l))
            .collect();
        lists.sort();
        let mut out = Vec::new();
        for (list, n) in lists {
            let t = fresh("t");
            let at = Expr::index(Expr::var(list), Expr::var(&t));
            let mut tables: Vec<&String> = self
                .tables
                .iter()
                .filter(|(d, l)| *l == list && kept.contains(*d))
                .map(|(d, _)| d)
                .collect();
            tables.sort();
            let mut body: Vec<Stmt> = tables
                .into_iter()
                .map(|d| Stmt::store(d, at.clone(), AssignOp::Set, Expr::nat(0)))
                .collect();
            body.push(Stmt::store(
                list,
                Expr::var(&t),
                AssignOp::Set,
                Expr::nat(0),
            ));
            out.push(Stmt::for_(&t, Expr::nat(0), Expr::var(n), body));
        }
        out
    }
}

/// How often each name is written anywhere in `body` (a store to an array, an
/// assignment to a `var`, a draw into a name).
fn write_counts(body: &[Stmt]) -> HashMap<String, usize> {
    let mut out: HashMap<String, usize> = HashMap::new();
    visit_leaves(body, &mut |s| {
        for w in Effects::of(std::slice::from_ref(s)).writes {
            *out.entry(w).or_default() += 1;
        }
    });
    out
}

/// The append and listing patterns found, with how often each occurs.
#[derive(Default)]
struct Patterns {
    /// `ks[n] = e; n += 1`, by `(ks, n)`.
    appends: HashMap<(String, String), usize>,
    /// `if d[e] == 0 { ks[n] = e; n += 1 }; d[e] += c`, by `(d, ks)`.
    listed: HashMap<(String, String), usize>,
}

impl Patterns {
    fn block(&mut self, block: &[Stmt]) {
        for (k, s) in block.iter().enumerate() {
            if let Some(pair) = append(block, k) {
                *self.appends.entry(pair).or_default() += 1;
            }
            if let Some(pair) = listed(block, k) {
                *self.listed.entry(pair).or_default() += 1;
            }
            match s {
                Stmt::For { body, .. } => self.block(body),
                Stmt::If {
                    then, otherwise, ..
                } => {
                    self.block(then);
                    self.block(otherwise);
                }
                _ => {}
            }
        }
    }
}

/// `block[k]` and `block[k + 1]` as `ks[n] = e; n += 1`: `(ks, n)`, where `e` reads
/// neither.
fn append(block: &[Stmt], k: usize) -> Option<(String, String)> {
    let (
        Stmt::Store {
            array,
            index: Expr::Var(n),
            op: AssignOp::Set,
            value,
        },
        Some(Stmt::Assign {
            name,
            op: AssignOp::Add,
            value: Expr::Lit(Lit::Nat(1)),
        }),
    ) = (&block[k], block.get(k + 1))
    else {
        return None;
    };
    let mut r = HashSet::new();
    crate::ir::walk::reads(value, &mut r);
    (n == name && array != n && !r.contains(n) && !r.contains(array))
        .then(|| (array.clone(), n.clone()))
}

/// `block[k - 1]` and `block[k]` as `if d[e] == 0 { ks[n] = e; n += 1 }; d[e] += c`, `e`
/// a name or a literal other than `d`, `ks` and `n`, `c` a positive literal: `(d, ks)`.
fn listed(block: &[Stmt], k: usize) -> Option<(String, String)> {
    let Stmt::Store {
        array: d,
        index: e,
        op: AssignOp::Add,
        value: Expr::Lit(Lit::Nat(c)),
    } = &block[k]
    else {
        return None;
    };
    let before = block.get(k.checked_sub(1)?)?;
    let Stmt::If {
        cond: Expr::Prim(Prim::Eq, args),
        then,
        otherwise,
    } = before
    else {
        return None;
    };
    let tests = matches!(args.as_slice(),
        [Expr::Index(a, i), Expr::Lit(Lit::Nat(0))]
            if **a == Expr::var(d) && **i == *e);
    if then.len() != 2 || !otherwise.is_empty() {
        return None;
    }
    let (list, n) = append(then, 0)?;
    let lists_e = matches!(&then[0], Stmt::Store { value, .. } if value == e);
    let plain = match e {
        Expr::Var(x) => x != d && *x != list && *x != n,
        Expr::Lit(_) => true,
        _ => false,
    };
    (*c > 0 && tests && lists_e && plain).then_some((d.clone(), list))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(d: &str, ks: &str, n: &str, e: Expr) -> Vec<Stmt> {
        vec![
            Stmt::if_(
                Expr::prim(
                    Prim::Eq,
                    vec![Expr::index(Expr::var(d), e.clone()), Expr::nat(0)],
                ),
                vec![
                    Stmt::store(ks, Expr::var(n), AssignOp::Set, e.clone()),
                    Stmt::assign(n, AssignOp::Add, Expr::nat(1)),
                ],
                Vec::new(),
            ),
            Stmt::store(d, e, AssignOp::Add, Expr::nat(1)),
        ]
    }

    fn update(extra: Vec<Stmt>) -> Vec<Stmt> {
        let mut body = vec![
            Stmt::Alloc {
                name: "d".into(),
                elem: Type::Nat,
                size: Expr::nat(10),
            },
            Stmt::var("n", Type::Nat, Some(Expr::nat(0))),
            Stmt::Alloc {
                name: "ks".into(),
                elem: Type::Nat,
                size: Expr::nat(10),
            },
            Stmt::for_(
                "j",
                Expr::nat(0),
                Expr::nat(4),
                listing("d", "ks", "n", Expr::var("j")),
            ),
        ];
        body.extend(extra);
        body
    }

    fn all() -> HashSet<String> {
        ["d", "ks"].iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_listed_table_and_its_list_are_reset_by_the_list() {
        let lists = Lists::of(&update(Vec::new()));
        assert!(lists.covers("d", &all()) && lists.covers("ks", &all()));
        let mut k = 0;
        let reset = lists.reset(&all(), &mut |b| {
            k += 1;
            format!("{b}{k}")
        });
        let want = Stmt::for_(
            "t1",
            Expr::nat(0),
            Expr::var("n"),
            vec![
                Stmt::store(
                    "d",
                    Expr::index(Expr::var("ks"), Expr::var("t1")),
                    AssignOp::Set,
                    Expr::nat(0),
                ),
                Stmt::store("ks", Expr::var("t1"), AssignOp::Set, Expr::nat(0)),
            ],
        );
        assert_eq!(reset, vec![want]);
        // the table alone is not reset where its list is refilled instead
        let only_d: HashSet<String> = HashSet::from(["d".to_string()]);
        assert!(!lists.covers("d", &only_d));
    }

    #[test]
    fn any_other_write_keeps_the_refill() {
        // a write of the table that is not listed
        let lists = Lists::of(&update(vec![Stmt::store(
            "d",
            Expr::nat(3),
            AssignOp::Add,
            Expr::nat(1),
        )]));
        assert!(!lists.covers("d", &all()) && lists.covers("ks", &all()));
        // a table set rather than added to
        let mut body = update(Vec::new());
        if let Stmt::For { body: b, .. } = &mut body[3] {
            b[1] = Stmt::store("d", Expr::var("j"), AssignOp::Set, Expr::nat(1));
        }
        assert!(!Lists::of(&body).covers("d", &all()));
        // the count moved elsewhere: neither is reset
        let lists = Lists::of(&update(vec![Stmt::assign(
            "n",
            AssignOp::Add,
            Expr::nat(1),
        )]));
        assert!(!lists.covers("d", &all()) && !lists.covers("ks", &all()));
        // the list written past its count
        let lists = Lists::of(&update(vec![Stmt::store(
            "ks",
            Expr::nat(9),
            AssignOp::Set,
            Expr::nat(1),
        )]));
        assert!(!lists.covers("d", &all()) && !lists.covers("ks", &all()));
    }
}
