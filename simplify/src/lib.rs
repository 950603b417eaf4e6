//! The simplifier (issue 5; paper section 3.1, Fig. 4): a measure term to an equivalent
//! one that makes fewer random choices and names the distributions it recognised.
//!
//! Three steps, as in Carette and Shan's simplifier: `integrate` turns a measure into an
//! expression patently linear in an abstract `h` (Fig. 3; the [`lin`] normal form),
//! `improve` simplifies that expression strategically (integrating out latent variables
//! through `slic-holonomic`, summing out finite discrete ones, cancelling weights), and
//! `rebuild` recognises a measure back from it in the input's bind order. Last, every
//! weight is written in the cheapest of its equal forms (`slic_algebra::canon::
//! cheapest_form`: factored, powers merged); until then everything is canonical.
//!
//! ```
//! use slic_algebra::{front, print, Store};
//! use slic_simplify::{simplify, SimplifyConfig};
//! let mut store = Store::new();
//! let t = front::load(&mut store, "fn w prob: weight(w, weight(2, normal(0, 1))) <|> reject").unwrap();
//! let s = simplify(&mut store, t, &SimplifyConfig::default());
//! assert_eq!(print::print_term(&store, s.term), "fn w prob:\nweight(2 * w, normal(0, 1))\n");
//! ```
//!
//! The program's `fn` parameters are free symbols (their types are what is assumed of
//! them); `def`s are inlined; a `simplify(...)` anywhere in the file is expanded; every
//! measure in the term is simplified and every other expression canonicalised.
//!
//! Architecture invariant: every step keeps the meaning. A step that cannot finish (an
//! unrecognised density, an exhausted budget) leaves its part of the term equivalent and
//! unsimplified, and says so in [`Simplified::notes`]; it never guesses. If the improved
//! form is costlier than the input (more draws on a path, more weights on drawn
//! variables, or more than twice as large), the input is kept.

mod arrays;
mod convolve;
mod density;
mod dirichlet;
mod disint;
mod expand;
mod improve;
mod integrate;
mod lin;
mod monotone;
mod prepare;
mod rebuild;
mod support;
mod terms;

use std::time::Instant;

use rustc_hash::FxHashSet;
use slic_algebra::assume::Context;
use slic_algebra::{alpha, canon, Node, Pattern, Store, TermId, VarId};

use density::Densities;

pub use disint::{density, disint, observe, DisintError};
pub use expand::expand_transforms;

/// Limits of one simplification.
#[derive(Clone, Debug, Default)]
pub struct SimplifyConfig {
    /// Stop improving when this instant has passed (the output is still equivalent).
    pub deadline: Option<Instant>,
}

/// The result of [`simplify`]: an equivalent term of the same type, and why any step
/// stopped short.
#[derive(Clone, Debug)]
pub struct Simplified {
    pub term: TermId,
    /// One line per step that stopped short ("stopped: time budget exhausted while ...")
    /// and exactly one per variable left drawn that a step tried to remove or name
    /// ("`x` could not be integrated out: its density (...) is not holonomic ..."), in the
    /// user's words, for the command's stderr.
    pub notes: Vec<String>,
}

/// Simplify every measure in `t` (the whole program, `fn` parameters being free symbols
/// whose types are assumptions), and canonicalise every other expression.
pub fn simplify(store: &mut Store, t: TermId, config: &SimplifyConfig) -> Simplified {
    // `disint`, `density` and observations of compound measures are computed first (the
    // commands do this before, with the program's spans for their errors; a caller that
    // did not gets the term kept as it is, with the reason as a note)
    let t = match expand_transforms(store, t, &slic_algebra::SpanMap::default()) {
        Ok(t) => t,
        Err(d) => {
            let term = canon::canonicalize(store, &Context::new(), t);
            return Simplified {
                term,
                notes: vec![format!("stopped: {}", d.message)],
            };
        }
    };
    let prepared = match prepare::Prepare::new(store).run(t) {
        Ok(p) => p,
        Err(prepare::TooBig) => {
            let term = canon::canonicalize(store, &Context::new(), t);
            return Simplified {
                term,
                notes: vec![format!(
                    "stopped: inlining the definitions visits more than {} terms; the program \
                     is only canonicalised",
                    prepare::PREPARE_BUDGET
                )],
            };
        }
    };
    let dens = Densities::new(store);
    let mut s = Simp {
        store,
        dens,
        deadline: config.deadline,
        notes: Vec::new(),
        out_of_time: false,
        left: Vec::new(),
        visible: FxHashSet::default(),
    };
    s.visible = slic_algebra::vars::occurring(s.store, prepared);
    let first = s.walk(prepared, 0);
    // nothing improved: the program as written (its definitions kept), canonical
    if first == canon::canonicalize(s.store, &Context::new(), prepared) {
        s.left_notes();
        let term = canon::canonicalize(s.store, &Context::new(), t);
        let term = cheapest_weights(s.store, term);
        return Simplified {
            term,
            notes: s.notes,
        };
    }
    // simplify until nothing changes (a recognised density can make another step
    // possible), so that simplifying the output again gives it back
    let mut term = first;
    for _ in 1..MAX_PASSES {
        if s.out_of_time {
            break;
        }
        s.left.clear();
        s.visible = slic_algebra::vars::occurring(s.store, term);
        let next = s.walk(term, 0);
        if alpha::alpha_eq(s.store, next, term) {
            break;
        }
        term = next;
    }
    s.left_notes();
    let term = dirichlet::fold(s.store, term);
    let term = cheapest_weights(s.store, term);
    Simplified {
        term,
        notes: s.notes,
    }
}

/// `t` with every weight in the cheapest form `canon::cheapest_form` finds (factored,
/// powers merged). Those forms are not canonical, so this is the last step: everything
/// before it compares and rebuilds canonical terms.
fn cheapest_weights(store: &mut Store, t: TermId) -> TermId {
    store.rebuild(t, &mut |store, old, node| {
        let Node::Weight(w, m) = *node else {
            return None;
        };
        let cheap = stable_cheapest_form(store, w);
        let ty = store.ty(old).clone();
        (cheap != w).then(|| store.intern(Node::Weight(cheap, m), ty))
    })
}

/// `canon::cheapest_form` of the weight `w`, kept only when it settles (canonical form,
/// then tidied) to what `w` settles to. Simplifying the output again starts from the
/// settled form of each weight: if the cheap form settled to another one (radicals have
/// more than one canonical shape: `sqrt(a) / a ^ 3` and `1 / (sqrt(a) * a ^ 2)`), the
/// second run could pick another cheap form and simplification would not be idempotent.
fn stable_cheapest_form(store: &mut Store, w: TermId) -> TermId {
    let cheap = canon::cheapest_form(store, w).0;
    if cheap == w {
        return w;
    }
    if settled(store, cheap) == settled(store, w) {
        cheap
    } else {
        w
    }
}

/// What simplifying a weight again makes of it before choosing its cheap form: its
/// canonical form, tidied as `rebuild` tidies weights.
fn settled(store: &mut Store, w: TermId) -> TermId {
    let c = canon::canonicalize(store, &Context::new(), w);
    let c = canon::shift_gammas(store, c);
    canon::merge_radicals(store, c)
}

/// How many times the whole term is simplified at most (until it no longer changes).
const MAX_PASSES: usize = 4;

/// How deep the walk over non-measure structure (pairs of measures, `fn`s, ...) goes
/// before it only canonicalises.
const MAX_WALK_DEPTH: usize = 10_000;

/// One simplification session: the store, the density table, the budget and the notes.
pub(crate) struct Simp<'s> {
    pub store: &'s mut Store,
    pub dens: Densities,
    pub deadline: Option<Instant>,
    pub notes: Vec<String>,
    /// The deadline has passed (noted once).
    pub out_of_time: bool,
    /// Variables this pass leaves drawn although it tried to remove them or name their
    /// law, with why (one note each at the end).
    pub left: Vec<LeftInPlace>,
    /// The variables of the term being simplified: a note may show a density only if it
    /// mentions no others (the simplifier's own, such as the variable of a final draw,
    /// would be names the user never wrote).
    pub visible: FxHashSet<VarId>,
}

impl Simp<'_> {
    /// Has the time budget run out? Notes it the first time, naming `doing`.
    pub(crate) fn expired(&mut self, doing: &str) -> bool {
        if self.out_of_time {
            return true;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.out_of_time = true;
            self.notes
                .push(format!("stopped: time budget exhausted while {doing}"));
            return true;
        }
        false
    }

    pub(crate) fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// Every measure in `t` simplified, everything else canonical.
    fn walk(&mut self, t: TermId, depth: usize) -> TermId {
        if depth > MAX_WALK_DEPTH {
            return canon::canonicalize(self.store, &Context::new(), t);
        }
        let ty = self.store.ty(t).clone();
        if ty.measure_of().is_some() {
            if let Some(r) = self.walk_match_arms(t, depth) {
                return r;
            }
            return self.measure(t);
        }
        let node = self.store.node(t).clone();
        match node {
            Node::Lam(x, body) => {
                let body = slic_algebra::stack::grow(|| self.walk(body, depth + 1));
                self.store.intern(Node::Lam(x, body), ty)
            }
            _ if contains_measure(self.store, t) => {
                let ch = node.children();
                let new: Vec<TermId> = ch
                    .iter()
                    .map(|&c| slic_algebra::stack::grow(|| self.walk(c, depth + 1)))
                    .collect();
                let r = if new == ch {
                    t
                } else {
                    self.store.intern(node.with_children(&new), ty)
                };
                canon::canonicalize(self.store, &Context::new(), r)
            }
            _ => {
                let r = prepare::reduce(self.store, t);
                canon::canonicalize(self.store, &Context::new(), r)
            }
        }
    }

    /// A measure `match e: p1: m1 ...` whose arm the scrutinee does not decide (a
    /// parameter `t` matched as `(m1, m2)`, what `disint` of a pair of observations
    /// gives): each arm's measure simplified on its own, with the pattern's variables
    /// free, as a function's body is. `None` when the scrutinee picks an arm, which the
    /// integrator then follows.
    fn walk_match_arms(&mut self, t: TermId, depth: usize) -> Option<TermId> {
        let Node::Match(e, arms) = self.store.node(t).clone() else {
            return None;
        };
        let scrutinee = prepare::reduce(self.store, e);
        let first = arms.first()?;
        if prepare::match_pattern(self.store, &first.0, scrutinee).is_some() {
            return None;
        }
        let arms: Vec<(Pattern, TermId)> = arms
            .into_iter()
            .map(|(p, body)| (p, slic_algebra::stack::grow(|| self.walk(body, depth + 1))))
            .collect();
        let ty = self.store.ty(t).clone();
        Some(self.store.intern(Node::Match(e, arms), ty))
    }

    /// One measure term simplified (see the module doc). Three candidates are ranked by
    /// [`rebuild::cost`]: the improved sum rebuilt, the sum rebuilt without improving,
    /// and the input itself (canonical); the earlier wins ties unless it is more than
    /// twice as large by structural size, so the input is kept when nothing paid.
    fn measure(&mut self, m: TermId) -> TermId {
        let elem = terms::measure_elem(self.store, m);
        let input = canon::canonicalize(self.store, &Context::new(), m);
        let lin = match integrate::Integrator::new(self.store, &self.dens).run(m) {
            Ok(l) => l,
            Err(stop) => {
                self.note(format!(
                    "stopped: {stop}; the measure is only canonicalised"
                ));
                return input;
            }
        };
        if let Some(n) = lin
            .iter()
            .map(|t| t.binds.len())
            .max()
            .filter(|&n| n > MAX_BINDS)
        {
            self.note(format!(
                "stopped: a term of the measure has {n} draws (more than {MAX_BINDS}); it is \
                 only canonicalised"
            ));
            return input;
        }
        if self.expired("reading the measure") {
            for t in &lin {
                self.note_latent(t, |_, _| "the time budget ran out first".to_string());
            }
            return input;
        }
        let plain = self.normalise_all(lin);
        let improved = self.improve(plain.clone());
        let mut candidates: Vec<(TermId, Vec<LeftInPlace>)> = Vec::new();
        let start = self.left.len();
        let out = self.rebuild(&improved, &elem);
        candidates.push((out, self.left.split_off(start)));
        // the plain sum is rebuilt only if it could rank above the improved one: it has
        // at least one draw per bind on its longest path (rebuilding tries recognition,
        // which is the costly part)
        let lower = plain.iter().map(|t| t.binds.len()).max().unwrap_or(0);
        let improved_cost = rebuild::cost(self.store, out);
        if improved != plain && !self.out_of_time && (improved_cost.0, improved_cost.1) > (lower, 0)
        {
            let out = self.rebuild(&plain, &elem);
            candidates.push((out, self.left.split_off(start)));
        }
        candidates.push((input, Vec::new()));
        let mut best = 0;
        let mut best_cost = rebuild::cost(self.store, candidates[0].0);
        for (k, c) in candidates.iter().enumerate().skip(1) {
            let cost = rebuild::cost(self.store, c.0);
            let fewer = (cost.0, cost.1) < (best_cost.0, best_cost.1);
            // on equal draws and weights the earlier (more improved) candidate stays,
            // unless it is more than twice as large (inlined lets can blow a program up)
            let shorter = (cost.0, cost.1) == (best_cost.0, best_cost.1)
                && best_cost.2 > cost.2.saturating_mul(2);
            if fewer || shorter {
                best = k;
                best_cost = cost;
            }
        }
        let kept_input = best + 1 == candidates.len();
        let (chosen, misses) = candidates.swap_remove(best);
        self.left.extend(misses);
        if kept_input {
            // the latent variables of the input are all still drawn; those the improved
            // form had removed need a note too (the ones it could not have theirs already)
            for t in &plain {
                self.note_latent(t, |_, _| {
                    "the result was not simpler than the program as written, which is kept"
                        .to_string()
                });
            }
        }
        chosen
    }

    /// One note per variable left in place: why it was not integrated out if it is
    /// latent, else why its density was not recognised (the first reason found).
    fn left_notes(&mut self) {
        let left = std::mem::take(&mut self.left);
        let mut named: Vec<&str> = Vec::new();
        for latent in [true, false] {
            for l in left.iter().filter(|l| l.latent == latent) {
                if !named.contains(&l.name.as_str()) {
                    named.push(&l.name);
                    self.note(l.note.clone());
                }
            }
        }
    }
}

/// The most draws one term may have for the simplifier to try improving it.
const MAX_BINDS: usize = 200;

/// A variable still drawn in the output although a step tried to integrate it out
/// (`latent`) or to name its law, and the note that says why, in the user's words.
#[derive(Clone, Debug)]
pub(crate) struct LeftInPlace {
    pub name: String,
    pub note: String,
    pub latent: bool,
}

impl Simp<'_> {
    /// ` (proportional to `f`)` for a note, when `f` prints on one short line and
    /// mentions only variables of the program (see [`Simp::visible`]); else nothing (a
    /// note is one line, and a long density would bury the reason).
    pub(crate) fn shown(&self, f: TermId) -> String {
        if !slic_algebra::vars::occurring(self.store, f).is_subset(&self.visible) {
            return String::new();
        }
        let text = slic_algebra::print::print_term(self.store, f);
        let text = text.trim();
        if text.contains('\n') || text.chars().count() > 60 {
            String::new()
        } else {
            format!(" (proportional to `{text}`)")
        }
    }
}

/// Does `t` contain a measure-typed subterm (or a `simplify`)?
fn contains_measure(store: &Store, t: TermId) -> bool {
    store
        .subterms(t)
        .any(|x| store.ty(x).measure_of().is_some())
}

#[cfg(test)]
mod tests;
