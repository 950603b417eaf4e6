//! The lowering pipeline of issue 11 in one place: what `slic-cas lower` and `slic-cas
//! run` call, and what the tests check stage by stage.
//!
//! 0. loops whose body a later array recomputes share a table ([`crate::share`]: a Gibbs
//!    update's mass and its categorical's weights computed once).
//! 1. `summarized`: integral comparisons in one form (`z[j] + 1 <= n` as `z[j] < n`,
//!    [`crate::ranges::shift_literals`]), the point split and the histogram transform
//!    ([`crate::summarize`]), then the comparisons the loops' ranges decide
//!    ([`crate::ranges`]: the point's `i < size(as)` inside `array i of size(as)`) and the
//!    gamma ratios at the point closed ([`crate::ratios`]); skipped with `--no-histogram`.
//! 2. `anf`: the `real2prob` factors of each product taken as one logarithm under a range
//!    test ([`crate::logs`]; the draw-only program's are merged once, by
//!    `draw_only::bounded_logs`, untested where its condition bounds them), then A-normal
//!    form, loop-invariant bindings hoisted (skipped
//!    with `--no-licm`), common subexpressions shared ([`crate::normalize`]).
//!
//! 3. `ir`: the A-normal form lowered into the loop IR ([`crate::lower`]), then loops over
//!    one range fused and repeated reads shared ([`crate::fuse`]), and products whose
//!    factor is 1 off a loop-invariant set run over that set ([`crate::sparse`]); both
//!    skipped with `--no-fusion`. Then the reductions and costly values of an inner loop
//!    that read only its variable and what an outer loop leaves fixed are computed once
//!    per value of that variable ([`crate::memo`]; again once a chain's data made the
//!    loops' ranges literals), skipped with `--no-licm`.
//!
//! The term stages are core terms of the input's type, checked by `verify` here (a failure
//! is a bug, reported as such), so each can be printed as `.hk` and judged by the
//! reference interpreter; the IR is checked by the IR's verifier after each pass.

use crate::anf::normalize;
use crate::constants::fold_constants;
use crate::data_facts::{decide_data, DataFacts};
use crate::dce::eliminate;
use crate::draw_only::{bounded_logs, draw_only, DrawOnly};
use crate::fuse::fuse;
use crate::histogram::summarize;
use crate::hoist::hoist_reads;
use crate::ir::Program;
use crate::lift::lift_tests;
use crate::logs::merge_logs;
use crate::lower::{lower, LowerError};
use crate::memo::memoise;
use crate::ranges::{decide_ranges, shift_literals};
use crate::ratios::{close_ratios, shift_betas};
use crate::share::share_tables;
use crate::sparse::sparsify;
use slic_algebra::{verify, Store, TermId};

/// Which passes run (all by default; the ablation flags switch them off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passes {
    /// The point split and the histogram transform.
    pub histogram: bool,
    /// Loop-invariant code motion (bindings floated out of loops and branches).
    pub licm: bool,
    /// Loop fusion and the hoisting of repeated array reads, on the loop IR.
    pub fusion: bool,
    /// A Gibbs driver's update without its products common to every label
    /// ([`lower_draw_only`]; the full program is lowered either way).
    pub draw_only: bool,
}

impl Default for Passes {
    fn default() -> Passes {
        Passes {
            histogram: true,
            licm: true,
            fusion: true,
            draw_only: true,
        }
    }
}

/// The term-level stages of one program.
#[derive(Clone, Debug)]
pub struct TermStages {
    /// After the shared tables and the histogram transform (the tables only, when it is
    /// off).
    pub summarized: TermId,
    /// Tables shared between a loop and an array.
    pub tables: usize,
    /// After A-normal form, LICM and sharing.
    pub anf: TermId,
    /// Histograms made, sums reading them, bindings made, hoisted, shared.
    pub histograms: usize,
    pub sums_replaced: usize,
    pub bindings: usize,
    pub hoisted: usize,
    pub shared: usize,
}

/// A pass produced a term that does not type-check, or changed the type: a bug in
/// slic-codegen, never the user's doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassBug(pub String);

impl std::fmt::Display for PassBug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Runs the term-level passes on `t`.
pub fn term_stages(store: &mut Store, t: TermId, passes: Passes) -> Result<TermStages, PassBug> {
    let s = summarized_stage(store, t, passes)?;
    anf_stage(store, t, s, passes, true)
}

/// The first stage: tables shared, then (unless the histogram transform is off) the
/// point split and the histograms; `anf` not yet made.
fn summarized_stage(store: &mut Store, t: TermId, passes: Passes) -> Result<TermStages, PassBug> {
    summarized_from(store, t, t, passes)
}

/// [`summarized_stage`] of `from`, a rewrite of the program `t` (of its type).
fn summarized_from(
    store: &mut Store,
    t: TermId,
    from: TermId,
    passes: Passes,
) -> Result<TermStages, PassBug> {
    let shared = share_tables(store, from);
    check(store, t, shared.term, "sharing tables")?;
    let (summarized, histograms, sums_replaced) = if passes.histogram {
        // one form for every bounds test first (`z[j] + 1 <= n` is `z[j] < n`), so that
        // the buckets the histogram transform builds from copies of a test are equal
        let shifted = shift_literals(store, shared.term);
        let s = summarize(store, shifted);
        // the tests the point split left that the loops' ranges decide, then the gamma
        // ratios at the point they leave closed
        let r = decide_ranges(store, s.term);
        let q = close_ratios(store, r.term);
        let b = shift_betas(store, q.term);
        (b, s.histograms, s.sums_replaced)
    } else {
        (shared.term, 0, 0)
    };
    check(store, t, summarized, "summarize")?;
    Ok(TermStages {
        summarized,
        tables: shared.tables,
        anf: summarized,
        histograms,
        sums_replaced,
        bindings: 0,
        hoisted: 0,
        shared: 0,
    })
}

/// The last term stage: `s.summarized` in A-normal form, its products' logarithms merged
/// first unless `merge` is false: that was done (the draw-only program's, by
/// `draw_only::bounded_logs`).
fn anf_stage(
    store: &mut Store,
    t: TermId,
    s: TermStages,
    passes: Passes,
    merge: bool,
) -> Result<TermStages, PassBug> {
    // the `real2prob` factors of each product taken as one logarithm where a range test
    // allows; then a gamma function that reads the label only in a test, split on it, so
    // that A-normal form hoists both sides out of the loop over labels
    let merged = if merge {
        let m = merge_logs(store, s.summarized).term;
        check(store, t, m, "merging logarithms")?;
        m
    } else {
        s.summarized
    };
    let lifted = if passes.licm {
        lift_tests(store, merged).term
    } else {
        merged
    };
    check(store, t, lifted, "lifting tests")?;
    let n = normalize(store, lifted, passes.licm);
    check(store, t, n.term, "A-normal form")?;
    Ok(TermStages {
        anf: n.term,
        bindings: n.bindings,
        hoisted: n.hoisted,
        shared: n.shared,
        ..s
    })
}

fn check(store: &Store, input: TermId, out: TermId, pass: &str) -> Result<(), PassBug> {
    verify::verify(store, out)
        .map_err(|e| PassBug(format!("{pass} produced an ill-typed term: {e}")))?;
    if store.ty(out) != store.ty(input) {
        return Err(PassBug(format!(
            "{pass} changed the type from {} to {}",
            store.ty(input),
            store.ty(out)
        )));
    }
    Ok(())
}

/// Why a program could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PipelineError {
    /// The program uses something the loop IR cannot express (the user's to know).
    Unsupported(String),
    /// A pass broke its output (slic-codegen's bug).
    Bug(PassBug),
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineError::Unsupported(what) => write!(f, "cannot compile to loops: {what}"),
            PipelineError::Bug(b) => write!(f, "{b}"),
        }
    }
}

/// Every stage of one program, down to the loop IR.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub stages: TermStages,
    /// The A-normal form lowered, before fusion.
    pub unfused: Program,
    /// The program to run: fused unless fusion is off.
    pub program: Program,
}

/// Runs the whole pipeline on `t`: the term passes, lowering, fusion; the IR verified
/// after each pass.
pub fn lower_program(
    store: &mut Store,
    t: TermId,
    passes: Passes,
) -> Result<Lowered, PipelineError> {
    let stages = term_stages(store, t, passes).map_err(PipelineError::Bug)?;
    lower_stages(store, stages, passes)
}

/// The term stages' A-normal form lowered, verified and fused.
fn lower_stages(
    store: &mut Store,
    stages: TermStages,
    passes: Passes,
) -> Result<Lowered, PipelineError> {
    let unfused = lower(store, stages.anf).map_err(|e| match e {
        LowerError::Unsupported(what) => PipelineError::Unsupported(what),
        LowerError::Internal(what) => PipelineError::Bug(PassBug(format!("lowering: {what}"))),
    })?;
    let unfused = verified(unfused, "lowering")?;
    let program = if passes.fusion {
        let fused = verified(fuse(&unfused), "fusion")?;
        verified(sparsify(&fused), "the sparse products")?
    } else {
        unfused.clone()
    };
    let program = if passes.licm {
        verified(memoise(&program).program, "memoising inner reductions")?
    } else {
        program
    };
    let program = verified(eliminate(&program).program, "dead-code elimination")?;
    Ok(Lowered {
        stages,
        unfused,
        program,
    })
}

/// `p` if the IR's verifier accepts it; else `pass`'s bug.
fn verified(p: Program, pass: &str) -> Result<Program, PipelineError> {
    crate::verify::verify(&p)
        .map_err(|e| PipelineError::Bug(PassBug(format!("{pass} produced ill-formed IR: {e}"))))?;
    Ok(p)
}

/// A Gibbs update's draw-only program ([`crate::draw_only`]) lowered, and its condition.
#[derive(Clone, Debug)]
pub struct DrawOnlyLowered {
    /// Every stage of the draw-only program (its `summarized` term is the draw-only one).
    pub lowered: Lowered,
    /// `fn params: bool` over the same parameters: where it is true, the draw-only
    /// program's measure is the full program's times a constant in `(0, ∞)`.
    pub condition: Program,
    /// How many common products or sums it drops.
    pub dropped: usize,
    /// How many comparisons the chain's data decided ([`crate::data_facts`]; 0 without
    /// them).
    pub decided: usize,
    /// `Some(K)` when the program is exact only for states whose labels are all below
    /// `K`: the driver checks the initial state's and every label it writes.
    pub labels: Option<u64>,
    /// How many scalars the data alone define were computed once and baked in
    /// ([`crate::precompute`]; 0 without data).
    pub precomputed: usize,
}

/// The draw-only form of an update program `t` lowered with `passes`, or `None` where
/// there is none (no common product and nothing the data decide; draw-only off; or the
/// histogram transform off: the products are split by it). With `data` (a chain's
/// arguments), the comparisons they decide are decided first ([`crate::data_facts`]): the
/// program is then for those arguments alone, the state and the index aside.
pub fn lower_draw_only(
    store: &mut Store,
    t: TermId,
    passes: Passes,
    data: Option<&DataFacts>,
) -> Result<Option<DrawOnlyLowered>, PipelineError> {
    if !passes.histogram || !passes.draw_only {
        return Ok(None);
    }
    // the comparisons the data decide: in the form the histogram transform reads (the
    // state's bound tests kept for it: they give its prefix counts their length), then
    // those the point split made (the index against the state's length), then those the
    // point products' definedness tests made
    let mut decided = 0;
    let mut labels = None;
    let mut decide = |store: &mut Store, term: TermId, state_bounds: bool| match data {
        Some(f) => {
            let r = decide_data(store, term, f, state_bounds);
            decided += r.decided;
            labels = labels.or(r.labels);
            r.term
        }
        None => term,
    };
    let from = match data {
        Some(_) => {
            let shifted = shift_literals(store, t);
            decide(store, shifted, false)
        }
        None => t,
    };
    let mut s = summarized_from(store, t, from, passes).map_err(PipelineError::Bug)?;
    s.summarized = decide(store, s.summarized, true);
    let mut d = match draw_only(store, s.summarized) {
        Some(d) => d,
        None => DrawOnly::unchanged(store, s.summarized),
    };
    d.term = decide(store, d.term, true);
    if d.dropped == 0 && decided == 0 {
        return Ok(None);
    }
    // the logarithms of each product merged, those the condition bounds untested
    let (d, _) = bounded_logs(store, d);
    check(store, t, d.term, "draw-only").map_err(PipelineError::Bug)?;
    let stages = anf_stage(
        store,
        t,
        TermStages {
            summarized: d.term,
            ..s
        },
        passes,
        false,
    )
    .map_err(PipelineError::Bug)?;
    let mut lowered = lower_stages(store, stages, passes)?;
    // the data's sizes and scalars folded in, so that what A-normal form guarded on
    // them reads as what it is (the incremental statistics read the IR)
    // then the scalars the data alone define, computed once on them
    let mut precomputed = 0;
    if let Some(f) = data {
        let (values, sizes) = f.constants(&lowered.program.params);
        let folded = fold_constants(&lowered.program, &values, &sizes);
        let live = verified(eliminate(&folded).program, "folding the data's constants")?;
        let pre = f.precompute(&live);
        precomputed = pre.values;
        // the data's reads at the index read once, not at every point
        let params = pre.program.params.clone();
        let (hoisted, _) = hoist_reads(&pre.program, &|a, i| f.read_in_range(&params, a, i));
        let folded = fold_constants(&hoisted, &values, &sizes);
        // the loops' ranges now literals: the reductions they key memoised
        let folded = match passes.licm {
            true => memoise(&folded).program,
            false => folded,
        };
        lowered.program = verified(eliminate(&folded).program, "computing what the data fix")?;
    }
    let condition = lower(store, d.condition).map_err(|e| {
        PipelineError::Bug(PassBug(format!("lowering the draw-only condition: {e:?}")))
    })?;
    let condition = verified(condition, "lowering the draw-only condition")?;
    Ok(Some(DrawOnlyLowered {
        lowered,
        condition,
        dropped: d.dropped,
        decided,
        labels,
        precomputed,
    }))
}
