//! Inner reductions computed once per key (issue 13: kernel speed). The stick-breaking
//! Dirichlet that Naive Bayes simplifies to weighs each proposed class `i` by a product
//! over the classes `k`, and each factor sums the counts and the priors of the classes
//! after `k`: `for i { for k { ... var s = 0; for c in k + 1..K { s += a[c] } ... } }`.
//! The sum reads `k` and nothing that changes with `i`, yet it is rebuilt for every `i`:
//! `O(K³)` log-sum-exps an update, where `O(K²)` are distinct.
//!
//! [`memoise`] finds such a reduction, `var s: T = lit` (or a run of such, fused) followed
//! by a loop that writes only them (and its own names), draws nothing, and reads only
//! the variable `k` of a loop
//! inside an outer loop `L`, the `let`s of `k`'s body before it that read only such
//! names, and names that nothing inside `L` declares or writes; the loop over `k` runs
//! over `0..n`, `n` a literal, a name or a size that `L` does not change. Before `L` it
//! allocates a table of `n` values per accumulator and one of `n` flags (zero); the
//! reduction becomes
//!
//! ```text
//! var s: T = lit
//! if have_s[k] == 1 { s = memo_s[k] } else { for c ... { s += ... }; memo_s[k] = s; have_s[k] = 1 }
//! ```
//!
//! A `let` is costly when it computes a transcendental (a logarithm, an exponential, a
//! gamma function, a conversion into or out of log space) or, at `prob` type, adds: a
//! log-sum-exp. The stick-breaking factor's `S_k + A_k` is read for every class below the
//! proposed one, `O(K²)` log-sum-exps an update until it is memoised.
//!
//! Two such computations of one form (the same code once `k`'s own `let`s are replaced
//! by their values and their own names by position: the stick-breaking factor's three
//! branches each sum the same suffix) share their tables.
//!
//! Exact: the reduction is a function of `k` alone while `L` runs (every name it reads
//! is fixed there), so a later evaluation at the same `k` would give the stored value;
//! the first evaluation at each `k` happens where it happened before, so every error it
//! could raise is raised at the same point, and the values are the same bits. Only the
//! allocation of the tables is new: two arrays of `n`, where `n` is a literal, a name or
//! a size (evaluating it cannot fail).

use std::collections::{HashMap, HashSet};

use slic_algebra::{Prim, Type};

use crate::ir::walk::{can_fail, fresh_name, map_exprs, reads, substitute, visit_decls, Effects};
use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};

/// What [`memoise`] did.
#[derive(Clone, Debug)]
pub struct Memoised {
    pub program: Program,
    /// Reductions now computed once per key.
    pub reductions: usize,
    /// Values (`let`s, or their parts) now computed once per key.
    pub values: usize,
}

/// `p` with each reduction of an inner loop that reads only the inner loop's variable and
/// what an outer loop leaves fixed computed once per value of that variable (see the
/// module documentation).
pub fn memoise(p: &Program) -> Memoised {
    let mut taken: HashSet<String> = p.params.iter().map(|(x, _)| x.clone()).collect();
    visit_decls(&p.body, &mut |d| {
        taken.insert(d.to_string());
    });
    let mut types = p.params.clone();
    crate::ir::walk::visit_leaves(&p.body, &mut |s| match s {
        Stmt::Let { name, ty, .. } | Stmt::Var { name, ty, .. } => {
            types.push((name.clone(), ty.clone()))
        }
        _ => {}
    });
    for_vars(&p.body, &mut types);
    let mut m = Memo {
        taken,
        types,
        reductions: 0,
        values: 0,
        shared: HashMap::new(),
    };
    let mut body = p.body.clone();
    m.block(&mut body);
    Memoised {
        program: p.with_body(body),
        reductions: m.reductions,
        values: m.values,
    }
}

/// Every loop variable of `body`, a `nat`.
fn for_vars(body: &[Stmt], out: &mut Vec<(String, Type)>) {
    for s in body {
        match s {
            Stmt::For { var, body, .. } => {
                out.push((var.clone(), Type::Nat));
                for_vars(body, out);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                for_vars(then, out);
                for_vars(otherwise, out);
            }
            _ => {}
        }
    }
}

struct Memo {
    taken: HashSet<String>,
    /// The type of every name the program declares (names are unique once lowered).
    types: Vec<(String, Type)>,
    reductions: usize,
    values: usize,
    /// The tables made so far before the current outer loop, by the key's variable and
    /// the computation's form: the value tables, then the flags.
    shared: HashMap<(String, String), (Vec<String>, String)>,
}

/// The loop over `k` a reduction is keyed by, as seen from the outer loop.
#[derive(Clone)]
struct Key<'a> {
    var: &'a str,
    /// The names fixed while the outer loop runs, `k`, and `k`'s own `let`s so far.
    fixed: HashSet<String>,
    /// What each of `k`'s own names computes, in names fixed outside the key loop: its
    /// `let`s by their values, a memoised value by its table, `k` as `@k`. Two
    /// computations of one form share their tables.
    canon: HashMap<String, Expr>,
    /// The loop's length (its range is `0..len`).
    len: Expr,
}

impl Memo {
    /// Each outermost loop of `block` (under `if`s only) with its reductions memoised,
    /// their tables allocated right before it.
    fn block(&mut self, block: &mut Vec<Stmt>) {
        let mut k = 0;
        while k < block.len() {
            match &mut block[k] {
                Stmt::For { var, body, .. } => {
                    let eff = Effects::of(body);
                    let mut varying: HashSet<String> =
                        eff.writes.union(&eff.decls).cloned().collect();
                    varying.insert(var.clone());
                    self.shared.clear();
                    let mut tables = Vec::new();
                    self.keys_in(body, &varying, &mut tables);
                    let n = tables.len();
                    block.splice(k..k, tables);
                    k += n + 1;
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    self.block(then);
                    self.block(otherwise);
                    k += 1;
                }
                _ => k += 1,
            }
        }
    }

    /// Every loop inside the outer loop's `body` (whose changing names are `varying`)
    /// tried as a key, its reductions memoised; the tables' allocations into `tables`.
    fn keys_in(&mut self, body: &mut [Stmt], varying: &HashSet<String>, tables: &mut Vec<Stmt>) {
        for s in body.iter_mut() {
            match s {
                Stmt::For { var, lo, hi, body } => {
                    let fixed_range = *lo == Expr::nat(0) && simple(hi) && {
                        let mut r = HashSet::new();
                        reads(hi, &mut r);
                        r.is_disjoint(varying)
                    };
                    if fixed_range {
                        let key = Key {
                            var,
                            fixed: HashSet::from([var.clone()]),
                            canon: HashMap::from([(var.clone(), Expr::var("@k"))]),
                            len: hi.clone(),
                        };
                        self.reductions_in(body, key, varying, tables);
                    }
                    self.keys_in(body, varying, tables);
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    self.keys_in(then, varying, tables);
                    self.keys_in(otherwise, varying, tables);
                }
                _ => {}
            }
        }
    }

    /// The reductions of `block` (in the key loop's body, under `if`s) keyed by `key`.
    fn reductions_in(
        &mut self,
        block: &mut Vec<Stmt>,
        mut key: Key<'_>,
        varying: &HashSet<String>,
        tables: &mut Vec<Stmt>,
    ) {
        let fixed = |x: &String, key: &Key<'_>| !varying.contains(x) || key.fixed.contains(x);
        let mut k = 0;
        while k < block.len() {
            if let Stmt::Let { name, ty, value } = &block[k] {
                let mut r = HashSet::new();
                reads(value, &mut r);
                if r.iter().all(|x| fixed(x, &key)) {
                    let (name, ty, value) = (name.clone(), ty.clone(), value.clone());
                    key.fixed.insert(name.clone());
                    key.canon
                        .insert(name.clone(), substitute(&value, &key.canon));
                    if costly_at(&ty, &value) {
                        // the whole value, a function of `k`: computed once per `k`
                        let memo = self.memoised(&name, ty, value, &mut key, tables);
                        block.splice(k..=k, memo);
                        self.values += 1;
                        k += 2;
                        continue;
                    }
                } else {
                    // its parts that are functions of `k`, cannot fail, and cost a
                    // transcendental: named and computed once per `k`
                    let mut parts = Vec::new();
                    let value = self.parts(value.clone(), &key, varying, &mut parts);
                    if !parts.is_empty() {
                        let mut memos = Vec::new();
                        for (part, e) in parts {
                            // the types of the names the part reads (a name may be
                            // declared twice in the program, in two scopes)
                            let mut r = HashSet::new();
                            reads(&e, &mut r);
                            let mut env: Vec<(String, Type)> = Vec::new();
                            for (x, t) in self.types.iter().rev() {
                                if r.remove(x) {
                                    env.push((x.clone(), t.clone()));
                                }
                            }
                            let Ok(ty) = crate::verify::expr_type(&env, &e) else {
                                memos.clear();
                                break;
                            };
                            self.types.push((part.clone(), ty.clone()));
                            key.fixed.insert(part.clone());
                            memos.extend(self.memoised(&part, ty, e, &mut key, tables));
                            self.values += 1;
                        }
                        if !memos.is_empty() {
                            let n = memos.len();
                            if let Stmt::Let { value: v, .. } = &mut block[k] {
                                *v = value;
                            }
                            block.splice(k..k, memos);
                            k += n;
                        }
                    }
                }
            }
            if let Stmt::If {
                then, otherwise, ..
            } = &mut block[k]
            {
                self.reductions_in(then, key.clone(), varying, tables);
                self.reductions_in(otherwise, key.clone(), varying, tables);
            }
            // a loop after a run of `var`s with literal values, writing only them
            let accs = match &block[k] {
                Stmt::For { var, lo, hi, body } => {
                    let declared: Vec<(String, Type)> = block[..k]
                        .iter()
                        .rev()
                        .map_while(|s| match s {
                            Stmt::Var {
                                name,
                                ty,
                                init: Some(Expr::Lit(_)),
                            } => Some((name.clone(), ty.clone())),
                            _ => None,
                        })
                        .collect();
                    let eff = Effects::of(body).free();
                    let mut r = eff.reads;
                    r.remove(var);
                    reads(lo, &mut r);
                    reads(hi, &mut r);
                    let accs: Vec<(String, Type)> = declared
                        .into_iter()
                        .rev()
                        .filter(|(x, _)| eff.writes.contains(x))
                        .collect();
                    r.retain(|x| !accs.iter().any(|(a, _)| a == x));
                    let only_accs = !accs.is_empty() && eff.writes.len() == accs.len();
                    (only_accs && !eff.measure && r.iter().all(|x| fixed(x, &key))).then_some(accs)
                }
                _ => None,
            };
            let Some(accs) = accs else {
                k += 1;
                continue;
            };
            let form = reduction_form(&block[..=k], &accs, &key.canon);
            let names: Vec<(String, Type)> = accs
                .iter()
                .map(|(s, ty)| (format!("memo_{s}"), ty.clone()))
                .collect();
            let (memos, have) = self.tables(form, &names, &key, tables);
            let at = || Expr::var(key.var);
            let mut recall = Vec::new();
            let mut compute = vec![block.remove(k)];
            for ((s, _), memo) in accs.iter().zip(&memos) {
                recall.push(Stmt::assign(
                    s,
                    AssignOp::Set,
                    Expr::index(Expr::var(memo), at()),
                ));
                compute.push(Stmt::store(memo, at(), AssignOp::Set, Expr::var(s)));
                key.canon.insert(s.clone(), Expr::var(&format!("@{memo}")));
            }
            compute.push(Stmt::store(
                &have,
                at(),
                AssignOp::Set,
                Expr::Lit(Lit::Nat(1)),
            ));
            let known = Expr::prim(
                Prim::Eq,
                vec![Expr::index(Expr::var(&have), at()), Expr::nat(1)],
            );
            block.insert(k, Stmt::if_(known, recall, compute));
            // the accumulators, written nowhere after, are functions of `k` from here
            let later = Effects::of(&block[k + 1..]).writes;
            for (s, _) in &accs {
                if !later.contains(s) {
                    key.fixed.insert(s.clone());
                } else {
                    key.canon.remove(s);
                }
            }
            self.reductions += 1;
            k += 1;
        }
    }
}

impl Memo {
    /// `var x: ty` set from the table where key `k` has been seen, else to `value`,
    /// stored; the tables' allocations into `tables`.
    fn memoised(
        &mut self,
        x: &str,
        ty: Type,
        value: Expr,
        key: &mut Key<'_>,
        tables: &mut Vec<Stmt>,
    ) -> Vec<Stmt> {
        let form = format!("{ty} = {}", substitute(&value, &key.canon));
        let names = [(format!("memo_{x}"), ty.clone())];
        let (memos, have) = self.tables(form, &names, key, tables);
        let memo = memos.into_iter().next().unwrap_or_default();
        key.canon
            .insert(x.to_string(), Expr::var(&format!("@{memo}")));
        let at = || Expr::var(key.var);
        let known = Expr::prim(
            Prim::Eq,
            vec![Expr::index(Expr::var(&have), at()), Expr::nat(1)],
        );
        let recall = vec![Stmt::assign(
            x,
            AssignOp::Set,
            Expr::index(Expr::var(&memo), at()),
        )];
        let compute = vec![
            Stmt::assign(x, AssignOp::Set, value),
            Stmt::store(&memo, at(), AssignOp::Set, Expr::var(x)),
            Stmt::store(&have, at(), AssignOp::Set, Expr::Lit(Lit::Nat(1))),
        ];
        vec![Stmt::var(x, ty, None), Stmt::if_(known, recall, compute)]
    }

    /// The value tables (one per name of `names`, with its type) and the flags of a
    /// computation of `form` keyed by `key`: those made for the same form under this
    /// outer loop, or new ones allocated into `tables`. Sharing is exact: a computation
    /// of the same form at the same `k` reads the same values, so the stored value is
    /// the one it would compute, without error where the first one had none.
    fn tables(
        &mut self,
        form: String,
        names: &[(String, Type)],
        key: &Key<'_>,
        tables: &mut Vec<Stmt>,
    ) -> (Vec<String>, String) {
        let id = (format!("{} < {}", key.var, key.len), form);
        if let Some((memos, have)) = self.shared.get(&id) {
            if memos.len() == names.len() {
                return (memos.clone(), have.clone());
            }
        }
        let mut memos = Vec::new();
        for (base, ty) in names {
            let memo = fresh_name(&mut self.taken, base);
            tables.push(Stmt::alloc(&memo, ty.clone(), key.len.clone()));
            memos.push(memo);
        }
        let have = fresh_name(
            &mut self.taken,
            &format!(
                "have_{}",
                names
                    .first()
                    .map_or("", |n| n.0.trim_start_matches("memo_"))
            ),
        );
        tables.push(Stmt::alloc(&have, Type::Nat, key.len.clone()));
        self.shared.insert(id, (memos.clone(), have.clone()));
        (memos, have)
    }

    /// `e` with its largest parts that read only what `key` fixes, cannot fail, and
    /// cost a transcendental replaced by fresh names (into `parts`, with the parts).
    fn parts(
        &mut self,
        e: Expr,
        key: &Key<'_>,
        varying: &HashSet<String>,
        parts: &mut Vec<(String, Expr)>,
    ) -> Expr {
        let mut r = HashSet::new();
        reads(&e, &mut r);
        let fixed = r
            .iter()
            .all(|x| !varying.contains(x) || key.fixed.contains(x));
        if fixed && costly(&e) && !can_fail(&e) {
            let x = fresh_name(&mut self.taken, "part");
            parts.push((x.clone(), e));
            return Expr::var(&x);
        }
        match e {
            Expr::Prim(p, args) => Expr::Prim(
                p,
                args.into_iter()
                    .map(|a| self.parts(a, key, varying, parts))
                    .collect(),
            ),
            Expr::Convert(c, x) => Expr::convert(c, self.parts(*x, key, varying, parts)),
            e => e,
        }
    }
}

/// `body` with each memoised value that is no longer costly computed where it is read:
/// `if have[k] == 1 { x = memo[k] } else { x = e; memo[k] = x; have[k] = 1 }` becomes `x =
/// e` where `e` computes nothing [`costly`]. A later rewrite can make a memoised value
/// cheap (`crate::incremental`'s tables turn `prob2real(a[k])` into a read), and a flag
/// tested per use then costs what it saves. Exact: a stored value is the value `e`
/// computes at that key (see the module documentation), and `e` is evaluated where the
/// first use evaluated it before; the tables left unread go with dead code.
pub(crate) fn undo_cheap(body: &[Stmt]) -> Vec<Stmt> {
    let mut types = HashMap::new();
    crate::ir::walk::visit_leaves(body, &mut |s| {
        if let Stmt::Var { name, ty, .. } = s {
            types.insert(name.clone(), ty.clone());
        }
    });
    undo_cheap_in(body, &types)
}

fn undo_cheap_in(body: &[Stmt], types: &HashMap<String, Type>) -> Vec<Stmt> {
    body.iter()
        .map(|s| match (s, memo_site(s)) {
            (_, Some(m)) if !types.get(m.name).is_some_and(|t| costly_at(t, m.value)) => {
                Stmt::assign(m.name, AssignOp::Set, m.value.clone())
            }
            (
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                },
                _,
            ) => Stmt::If {
                cond: cond.clone(),
                then: undo_cheap_in(then, types),
                otherwise: undo_cheap_in(otherwise, types),
            },
            (Stmt::For { var, lo, hi, body }, _) => Stmt::For {
                var: var.clone(),
                lo: lo.clone(),
                hi: hi.clone(),
                body: undo_cheap_in(body, types),
            },
            (s, _) => s.clone(),
        })
        .collect()
}

/// A memoised value (the form [`Memo::memoised`] writes): the name it sets, the value it
/// computes where its key is new, its table of values and its table of flags.
pub(crate) struct MemoSite<'a> {
    pub name: &'a str,
    pub value: &'a Expr,
    pub memo: &'a str,
    pub have: &'a str,
}

/// The memoised value `s` is, if it is one.
pub(crate) fn memo_site(s: &Stmt) -> Option<MemoSite<'_>> {
    let Stmt::If {
        cond,
        then,
        otherwise,
    } = s
    else {
        return None;
    };
    let Expr::Prim(Prim::Eq, args) = cond else {
        return None;
    };
    let [Expr::Index(have, key), Expr::Lit(Lit::Nat(1))] = args.as_slice() else {
        return None;
    };
    let [Stmt::Assign {
        name: x,
        op: AssignOp::Set,
        value: Expr::Index(memo, key1),
    }] = then.as_slice()
    else {
        return None;
    };
    let [Stmt::Assign {
        name: x2,
        op: AssignOp::Set,
        value: e,
    }, Stmt::Store {
        array: memo2,
        index: key2,
        op: AssignOp::Set,
        value: Expr::Var(x3),
    }, Stmt::Store {
        array: have2,
        index: key3,
        op: AssignOp::Set,
        value: Expr::Lit(Lit::Nat(1)),
    }] = otherwise.as_slice()
    else {
        return None;
    };
    let same_key = key == key1 && **key == *key2 && **key == *key3;
    let same_tables = **memo == Expr::var(memo2) && **have == Expr::var(have2);
    (same_key && same_tables && x == x2 && x == x3).then_some(MemoSite {
        name: x,
        value: e,
        memo: memo2,
        have: have2,
    })
}

/// Does `e`, of type `ty`, compute a transcendental ([`costly`]) or add probabilities (a
/// log-sum-exp: an `exp` and a `log1p` in the kernels)? The stick-breaking factor's
/// `S_k + A_k`, read for every class below the proposed one, is such a sum.
fn costly_at(ty: &Type, e: &Expr) -> bool {
    costly(e) || (*ty == Type::Prob && adds_probs(e))
}

/// Whether the `prob` expression `e` adds (its arithmetic stays in `prob` down to the
/// sum: sums, products, reciprocals and powers keep their operands' type).
fn adds_probs(e: &Expr) -> bool {
    match e {
        Expr::Prim(Prim::Add, _) => true,
        Expr::Prim(Prim::Mul | Prim::Recip, args) => args.iter().any(adds_probs),
        Expr::Prim(Prim::Pow, args) => args.first().is_some_and(adds_probs),
        _ => false,
    }
}

/// Does `e` compute a transcendental (a logarithm, an exponential, a gamma function)?
/// Probabilities are logarithms: converting to or from them is one.
fn costly(e: &Expr) -> bool {
    use slic_algebra::Coercion::{Nat2Prob, Prob2Real, Real2Prob};
    match e {
        Expr::Convert(Prob2Real | Real2Prob | Nat2Prob, _) => true,
        Expr::Prim(Prim::GammaFunc | Prim::BetaFunc | Prim::Log | Prim::Exp, _) => true,
        Expr::Prim(_, args) => args.iter().any(costly),
        Expr::Convert(_, x) => costly(x),
        Expr::Index(a, i) => costly(a) || costly(i),
        Expr::Pair(a, b) => costly(a) || costly(b),
        Expr::Var(_) | Expr::Lit(_) => false,
    }
}

/// The form of a reduction (its accumulators' `var`s, then its loop, the last of
/// `block`): the accumulators, the loop's variable and its own names renamed by
/// position, every other name of the key's replaced by what it computes.
fn reduction_form(
    block: &[Stmt],
    accs: &[(String, Type)],
    canon: &HashMap<String, Expr>,
) -> String {
    let Some(looped) = block.last() else {
        return String::new();
    };
    let mut ren: HashMap<String, String> = HashMap::new();
    for (i, (a, _)) in accs.iter().enumerate() {
        ren.insert(a.clone(), format!("@a{i}"));
    }
    if let Stmt::For { var, body, .. } = looped {
        ren.insert(var.clone(), "@c".into());
        let mut n = 0;
        visit_decls(body, &mut |d| {
            ren.insert(d.to_string(), format!("@l{n}"));
            n += 1;
        });
    }
    // the loop's own names are its own, whatever the key's names outside
    let outer: HashMap<String, Expr> = canon
        .iter()
        .filter(|(x, _)| !ren.contains_key(*x))
        .map(|(x, e)| (x.clone(), e.clone()))
        .collect();
    let mut st = looped.clone();
    map_exprs(&mut st, &mut |e| substitute(e, &outer));
    let mut one = [st];
    crate::ir::walk::rename_block(&mut one, &ren);
    let inits: Vec<String> = block
        .iter()
        .filter_map(|s| match s {
            Stmt::Var { name, ty, init } if accs.iter().any(|(a, _)| a == name) => Some(format!(
                "{}: {ty} = {}",
                ren.get(name).map_or("", |x| x.as_str()),
                init.as_ref().map_or(String::new(), |e| e.to_string())
            )),
            _ => None,
        })
        .collect();
    format!("{} | {}", inits.join(", "), one[0])
}

/// A length whose evaluation cannot fail: a literal, a name, or an array's size.
fn simple(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Var(_) => true,
        Expr::Prim(Prim::Size, a) => matches!(a.as_slice(), [Expr::Var(_)]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Val;

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    /// `for i in 0..3 { for k in 0..n { (the suffix sums of a and b after k, a function
    /// of k) (a sum of b up to i, not one) ... total *= w } }`.
    fn program() -> Program {
        use slic_algebra::Coercion::{Nat2Prob, Nat2Real, Prob2Real, Real2Prob};
        let plus = |a: Expr, b: Expr| Expr::prim(Prim::Add, vec![a, b]);
        let suffix = Stmt::for_(
            "c",
            v("kk"),
            Expr::size(v("a")),
            vec![
                Stmt::let_("x", Type::Prob, Expr::index(v("a"), v("c"))),
                Stmt::assign("s", AssignOp::Add, v("x")),
                Stmt::let_("y", Type::Nat, Expr::index(v("b"), v("c"))),
                Stmt::assign("t", AssignOp::Add, v("y")),
            ],
        );
        let prefix = Stmt::for_(
            "c2",
            Expr::nat(0),
            v("i"),
            vec![Stmt::assign(
                "r",
                AssignOp::Add,
                Expr::index(v("b"), v("c2")),
            )],
        );
        let w = Expr::prim(
            Prim::Mul,
            vec![
                Expr::convert(Nat2Prob, v("t")),
                Expr::convert(Nat2Prob, plus(v("i"), plus(v("r"), Expr::nat(1)))),
                Expr::convert(Real2Prob, v("e")),
            ],
        );
        let k_body = vec![
            Stmt::let_("kk", Type::Nat, plus(v("k"), Expr::nat(1))),
            Stmt::var("s", Type::Prob, Some(Expr::prob(0.0))),
            Stmt::var("t", Type::Nat, Some(Expr::nat(0))),
            suffix,
            Stmt::var("r", Type::Nat, Some(Expr::nat(0))),
            prefix,
            Stmt::let_(
                "e",
                Type::Real,
                plus(
                    Expr::convert(Prob2Real, v("s")),
                    Expr::convert(Nat2Real, v("t")),
                ),
            ),
            Stmt::let_("w", Type::Prob, w),
            Stmt::assign("total", AssignOp::Mul, v("w")),
        ];
        nested(Type::Nat, k_body)
    }

    /// `var total: prob = 1; for i in 0..3 { for k in 0..n { k_body } }; return total`
    /// over `a: array(prob)`, `b: array(b_elem)` and `n: nat`.
    fn nested(b_elem: Type, k_body: Vec<Stmt>) -> Program {
        Program {
            params: vec![
                ("a".into(), Type::array(Type::Prob)),
                ("b".into(), Type::array(b_elem)),
                ("n".into(), Type::Nat),
            ],
            body: vec![
                Stmt::var("total", Type::Prob, Some(Expr::prob(1.0))),
                Stmt::for_(
                    "i",
                    Expr::nat(0),
                    Expr::nat(3),
                    vec![Stmt::for_("k", Expr::nat(0), v("n"), k_body)],
                ),
            ],
            result: v("total"),
            measure: false,
            inout: Vec::new(),
        }
    }

    #[test]
    fn a_reduction_of_the_inner_key_alone_is_computed_once_per_key() {
        let p = program();
        let m = memoise(&p);
        let q = m.program;
        assert_eq!(crate::verify::verify(&q), Ok(()), "{q}");
        // the suffix sums (one fused loop), `e` and `nat2prob(t)`; not the prefix over
        // `i`, nor `w`, which reads it
        assert_eq!((m.reductions, m.values), (1, 2), "{q}");
        let text = q.to_string();
        assert!(text.contains("memo_s") && text.contains("memo_t"), "{text}");
        assert!(
            !text.contains("memo_r") && !text.contains("memo_w"),
            "{text}"
        );
        let mut rng = crate::sampler::Rng::seed_from_u64(7);
        for case in 0..40 {
            let len = 1 + (rng.uniform() * 5.0) as usize;
            // b shorter than a now and then: the suffix sum's read errs, in both
            let blen = if case % 5 == 0 { len - 1 } else { len };
            let a = Val::array((0..len).map(|_| Val::prob(rng.uniform() + 0.1)).collect());
            let b = Val::array(
                (0..blen)
                    .map(|_| Val::Nat((rng.uniform() * 4.0) as u64))
                    .collect(),
            );
            let n = Val::Nat((rng.uniform() * (len as f64 + 1.0)) as u64);
            let args = [a, b, n];
            crate::interp::assert_same_run(&p, &args, &q, &args, &format!("case {case}"));
        }
    }

    /// `for i in 0..3 { for k in 0..n { if k < i { (Σ_{c > k} a[c]) } else { (Σ_{c > k}
    /// of `other`) } } }`: one suffix sum in two branches when `other` is `a`.
    fn two_branches(other: &str) -> Program {
        let suffix = |s: &str, c: &str, arr: &str| {
            vec![
                Stmt::let_(
                    &format!("kk_{s}"),
                    Type::Nat,
                    Expr::prim(Prim::Add, vec![v("k"), Expr::nat(1)]),
                ),
                Stmt::var(s, Type::Prob, Some(Expr::prob(0.0))),
                Stmt::for_(
                    c,
                    v(&format!("kk_{s}")),
                    Expr::size(v(arr)),
                    vec![Stmt::assign(s, AssignOp::Add, Expr::index(v(arr), v(c)))],
                ),
                Stmt::assign("total", AssignOp::Mul, v(s)),
            ]
        };
        let k_body = vec![Stmt::if_(
            Expr::prim(Prim::Lt, vec![v("k"), v("i")]),
            suffix("s", "c", "a"),
            suffix("s2", "c2", other),
        )];
        nested(Type::Prob, k_body)
    }

    #[test]
    fn one_computation_in_two_branches_shares_its_tables() {
        for (other, flags) in [("a", 1), ("b", 2)] {
            let p = two_branches(other);
            let m = memoise(&p);
            let q = m.program;
            let text = q.to_string();
            assert_eq!(m.reductions, 2, "{text}");
            assert_eq!(text.matches("alloc have").count(), flags, "{other}: {text}");
            let mut rng = crate::sampler::Rng::seed_from_u64(3);
            for case in 0..20 {
                let len = 1 + (rng.uniform() * 5.0) as usize;
                let probs = |rng: &mut crate::sampler::Rng, n: usize| {
                    Val::array((0..n).map(|_| Val::prob(rng.uniform() + 0.1)).collect())
                };
                // b shorter now and then: its sum errs where it reads past the end
                let blen = if case % 4 == 0 { len - 1 } else { len };
                let args = [
                    probs(&mut rng, len),
                    probs(&mut rng, blen),
                    Val::Nat(len as u64),
                ];
                match (crate::run(&p, &args), crate::run(&q, &args)) {
                    (Ok(w), Ok(g)) => assert_eq!(w.0, g.0, "{other} case {case}: {q}"),
                    (Err(_), Err(_)) => {}
                    (w, g) => panic!("{other} case {case}: {w:?} against {g:?} in {q}"),
                }
            }
        }
    }

    #[test]
    fn a_sum_of_probabilities_of_the_key_is_computed_once_per_key() {
        // `let x: prob = a[k] + a[0]` (a log-sum-exp, no transcendental written out) and
        // `let y: real = x_real + 1`, beside the nat sum `let m = k + 1`, which stays
        let plus = |a: Expr, b: Expr| Expr::prim(Prim::Add, vec![a, b]);
        let k_body = vec![
            Stmt::let_(
                "x",
                Type::Prob,
                plus(
                    Expr::index(v("a"), v("k")),
                    Expr::index(v("a"), Expr::nat(0)),
                ),
            ),
            Stmt::let_("m", Type::Nat, plus(v("k"), Expr::nat(1))),
            Stmt::assign(
                "total",
                AssignOp::Mul,
                Expr::prim(
                    Prim::Mul,
                    vec![
                        v("x"),
                        Expr::convert(slic_algebra::Coercion::Nat2Prob, v("m")),
                    ],
                ),
            ),
        ];
        let p = nested(Type::Nat, k_body);
        let m = memoise(&p);
        let q = m.program;
        assert_eq!(crate::verify::verify(&q), Ok(()), "{q}");
        let text = q.to_string();
        assert!(text.contains("memo_x[k] = x"), "{text}");
        assert!(!text.contains("memo_m"), "{text}");
        // kept by `undo_cheap`: the sum still costs a log-sum-exp
        assert_eq!(undo_cheap(&q.body), q.body);
        let mut rng = crate::sampler::Rng::seed_from_u64(9);
        for case in 0..20 {
            let len = (rng.uniform() * 4.0) as usize;
            let a = Val::array((0..len).map(|_| Val::prob(rng.uniform())).collect());
            let b = Val::array(Vec::new());
            let n = (rng.uniform() * 5.0) as u64;
            let args = [a, b, Val::Nat(n)];
            crate::interp::assert_same_run(&p, &args, &q, &args, &format!("case {case}"));
        }
    }

    #[test]
    fn a_key_loop_whose_range_the_outer_loop_changes_is_left_alone() {
        let mut p = program();
        // `for k in 0..i`: the key's range moves with the outer loop
        if let Stmt::For { body, .. } = &mut p.body[1] {
            if let Stmt::For { hi, .. } = &mut body[0] {
                *hi = v("i");
            }
        }
        let m = memoise(&p);
        assert_eq!((m.reductions, m.values), (0, 0), "{}", m.program);
    }

    #[test]
    fn a_memoised_value_made_cheap_is_computed_where_it_is_read() {
        use slic_algebra::Coercion::Prob2Real;
        // `let x: real = prob2real(a[k])` memoised per key, inside a loop over i
        let k_body = vec![
            Stmt::let_(
                "x",
                Type::Real,
                Expr::convert(Prob2Real, Expr::index(v("a"), v("k"))),
            ),
            Stmt::assign(
                "total",
                AssignOp::Mul,
                Expr::convert(
                    slic_algebra::Coercion::Real2Prob,
                    Expr::prim(Prim::Add, vec![v("x"), Expr::real(1.0)]),
                ),
            ),
        ];
        let p = nested(Type::Real, k_body);
        let m = memoise(&p);
        assert_eq!(m.values, 1, "{}", m.program);
        // still costly: kept
        assert_eq!(undo_cheap(&m.program.body), m.program.body);
        // the conversion replaced by a read of `b` (as a table would): computed where
        // read, and its tables left to dead code
        let cheap = m
            .program
            .body
            .iter()
            .map(|s| {
                let mut s = s.clone();
                map_exprs(&mut s, &mut |e| match e {
                    Expr::Convert(Prob2Real, x) => match &**x {
                        Expr::Index(_, i) => Expr::index(v("b"), (**i).clone()),
                        x => x.clone(),
                    },
                    e => e.clone(),
                });
                s
            })
            .collect::<Vec<_>>();
        let undone = m.program.with_body(undo_cheap(&cheap));
        let q = crate::dce::eliminate(&undone).program;
        let text = q.to_string();
        assert!(!text.contains("have_") && !text.contains("memo_"), "{text}");
        assert_eq!(crate::verify::verify(&q), Ok(()), "{q}");
        // the same value as the memoised program it came from, on random inputs
        let memoised = m.program.with_body(cheap);
        let mut rng = crate::sampler::Rng::seed_from_u64(5);
        for case in 0..20 {
            let len = 1 + (rng.uniform() * 4.0) as usize;
            let a = Val::array((0..len).map(|_| Val::prob(rng.uniform())).collect());
            let b = Val::array((0..len).map(|_| Val::Real(rng.uniform())).collect());
            let args = [a, b, Val::Nat(len as u64)];
            let (want, got) = (crate::run(&memoised, &args), crate::run(&q, &args));
            assert_eq!(want.expect("runs").0, got.expect("runs").0, "case {case}");
        }
    }
}
