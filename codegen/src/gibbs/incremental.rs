//! The Gibbs kernels' side of incremental statistics (issue 13, deliverable 2): the
//! programs `crate::incremental::derive` writes, run between updates by the interpreter
//! ([`InterpStats`]) or as compiled kernels sharing the update's prepared arguments
//! ([`CompiledStats`]).
//!
//! The protocol, for each update of the label at `u`: `remove` takes point `u`'s part out
//! of the statistics, the update reads them (every point but `u`), the chain draws and
//! stores the label, `add` puts `u`'s part back under it. Between updates the statistics
//! are those of every point; a check ([`Checking::Every`]) recomputes them from scratch
//! after every commit and stops at the first difference (exact for counts, 1e-12 relative
//! for real sums), naming the statistic, the element and both values.

use std::sync::Arc;

use crate::compile::CompileOptions;
use crate::emit::{Specialise, Target};
use crate::incremental::{sweep_program, Incremental, StatKind, Statistic};
use crate::interp::{run, run_inout, Val};
use crate::ir::Program;
use crate::kernel::{Compiled, KernelError, Prepared};

use super::UpdateError;

/// Whether a kernel with incremental statistics recomputes them to check itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Checking {
    #[default]
    Never,
    /// After every commit (slow: a full recomputation per update).
    Every,
}

/// `args` (the update's arguments) followed by every statistic, zero, of the length the
/// sizes program gives on these arguments.
pub(crate) fn with_stats(inc: &Incremental, args: &[Val]) -> Result<Vec<Val>, UpdateError> {
    let mut all = args.to_vec();
    all.extend(inc.stats.iter().map(|_| Val::array(Vec::new())));
    let (lens, _) = run(&inc.sizes, &all).map_err(UpdateError::Interp)?;
    let mut flat = Vec::new();
    leaves(&lens, &mut flat);
    if flat.len() != inc.stats.len() {
        return Err(UpdateError::Backend(
            "the statistics' sizes have another shape".into(),
        ));
    }
    for (k, (s, n)) in inc.stats.iter().zip(flat).enumerate() {
        let n = usize::try_from(n).map_err(|_| UpdateError::Backend("a size too large".into()))?;
        all[inc.first_stat() + k] = Val::array(vec![crate::interp::zero(&s.elem); n]);
    }
    Ok(all)
}

fn leaves(v: &Val, out: &mut Vec<u64>) {
    match v {
        Val::Pair(p) => {
            leaves(&p.0, out);
            leaves(&p.1, out);
        }
        Val::Nat(n) => out.push(*n),
        _ => {}
    }
}

/// Kept statistics equal recomputed ones (counts exactly; sums of reals to 1e-12 of the
/// statistic's largest element, or of 1): the first difference as an error.
fn compare(stats: &[Statistic], kept: &[Val], fresh: &[Val]) -> Result<(), UpdateError> {
    for ((s, a), b) in stats.iter().zip(kept).zip(fresh) {
        // the update's working tables are no statistics of the points
        let (Val::Array(a), Val::Array(b), false) = (a, b, s.kind == StatKind::Scratch) else {
            continue;
        };
        // a class's sum of reals may cancel to near 0 while its terms and the other
        // classes' sums are large: rounding is measured against the largest sum
        let scale = b
            .iter()
            .map(|y| match y {
                Val::Real(y) => y.abs(),
                _ => 0.0,
            })
            .fold(1.0, f64::max);
        for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            let same = match (x, y) {
                (Val::Real(x), Val::Real(y)) => {
                    (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(scale)
                }
                _ => x == y,
            };
            if !same {
                return Err(UpdateError::Drift {
                    statistic: s.of.clone(),
                    element: i,
                    kept: format!("{x:?}"),
                    recomputed: format!("{y:?}"),
                });
            }
        }
    }
    Ok(())
}

/// The statistics' programs run by the interpreter on the kernel's own arguments.
#[derive(Clone, Debug)]
pub(crate) struct InterpStats {
    pub(crate) inc: Incremental,
    pub(crate) checking: Checking,
}

impl InterpStats {
    /// The arguments with the statistics of every point appended.
    pub(crate) fn start(&self, args: &[Val]) -> Result<Vec<Val>, UpdateError> {
        let mut all = with_stats(&self.inc, args)?;
        run_inout(&self.inc.init, &mut all).map_err(UpdateError::Interp)?;
        Ok(all)
    }

    pub(crate) fn remove(&self, args: &mut [Val]) -> Result<(), UpdateError> {
        run_inout(&self.inc.remove, args).map_err(UpdateError::Interp)?;
        Ok(())
    }

    pub(crate) fn add(&self, args: &mut [Val]) -> Result<(), UpdateError> {
        run_inout(&self.inc.add, args).map_err(UpdateError::Interp)?;
        if self.checking == Checking::Every {
            let mut fresh = args.to_vec();
            run_inout(&self.inc.init, &mut fresh).map_err(UpdateError::Interp)?;
            let k = self.inc.first_stat();
            compare(&self.inc.stats, &args[k..], &fresh[k..])?;
        }
        Ok(())
    }
}

/// The statistics' programs as compiled kernels over the update kernel's prepared
/// arguments (one parameter list, specialised alike), shared between chains.
#[derive(Clone)]
pub(crate) struct CompiledStats {
    init: Arc<Compiled>,
    add: Arc<Compiled>,
    remove: Arc<Compiled>,
    /// The whole sweep as one kernel (`crate::incremental::sweep_program`), where the
    /// update has one.
    sweep: Option<Arc<Compiled>>,
    stats: Vec<Statistic>,
    first: usize,
    pub(crate) checking: Checking,
}

impl CompiledStats {
    /// Compiles the update and the statistics' programs for `target` over `all` (the
    /// arguments with the statistics, [`with_stats`]) with `spec`: the update first.
    pub(crate) fn build(
        inc: &Incremental,
        target: Target,
        spec: &Specialise,
        all: &[Val],
        opts: &CompileOptions,
        (state, index): (&str, &str),
    ) -> Result<(Compiled, CompiledStats), KernelError> {
        let build = |p: &Program| Compiled::build(p, target, spec, Some(all), opts);
        let sweep = match sweep_program(inc, state, index) {
            Some(p) => Some(Arc::new(build(&p)?)),
            None => None,
        };
        Ok((
            build(&inc.update)?,
            CompiledStats {
                init: Arc::new(build(&inc.init)?),
                add: Arc::new(build(&inc.add)?),
                remove: Arc::new(build(&inc.remove)?),
                sweep,
                stats: inc.stats.clone(),
                first: inc.first_stat(),
                checking: Checking::Never,
            },
        ))
    }

    /// No sweep kernel: every update through the protocol.
    pub(crate) fn drop_sweep(&mut self) {
        self.sweep = None;
    }

    /// Can these kernels run on `p` (the update kernel's prepared arguments)?
    pub(crate) fn accepts(&self, p: &Prepared) -> bool {
        self.init.accepts(p)
            && self.add.accepts(p)
            && self.remove.accepts(p)
            && self.sweep.as_ref().is_none_or(|k| k.accepts(p))
    }

    /// One sweep of the chain on `p` (the update kernel's prepared arguments, the
    /// statistics current) by the sweep kernel, drawing from `rng` (advanced): the labels
    /// that changed. `None` without a sweep kernel, or when every update is checked.
    pub(crate) fn sweep(
        &self,
        p: &mut Prepared,
        rng: &mut [u64; 4],
    ) -> Option<Result<Option<u64>, KernelError>> {
        let sweep = self
            .sweep
            .as_ref()
            .filter(|_| self.checking == Checking::Never)?;
        Some(sweep.sweep_step(p, rng).map(|s| match s.value {
            Some(Val::Nat(n)) => Some(n),
            _ => None,
        }))
    }

    pub(crate) fn init(&self, p: &mut Prepared) -> Result<(), KernelError> {
        self.init.run_prepared(p).map(drop)
    }

    pub(crate) fn remove(&self, p: &mut Prepared) -> Result<(), KernelError> {
        self.remove.run_prepared(p).map(drop)
    }

    /// Adds point `u` back (the index already set), then checks if asked.
    pub(crate) fn add(&self, p: &mut Prepared) -> Result<(), UpdateError> {
        self.add.run_prepared(p).map_err(super::backend)?;
        if self.checking == Checking::Every {
            let kept = self.current(p);
            self.init.run_prepared(p).map_err(super::backend)?;
            let fresh = self.current(p);
            // the chain goes on with the kept statistics: the check must not repair them
            for (k, v) in kept.iter().enumerate() {
                p.set_array(self.first + k, v).map_err(super::backend)?;
            }
            compare(&self.stats, &kept, &fresh)?;
        }
        Ok(())
    }

    /// Fills the update's working tables (`crate::incremental`'s `StatKind::Scratch`) as
    /// the chain's start made them: after an update or a sweep that stopped before its
    /// draw, which may have left one that a list resets with elements set.
    pub(crate) fn clear_scratch(&self, p: &mut Prepared) -> Result<(), KernelError> {
        for (k, s) in self.stats.iter().enumerate() {
            if s.kind == StatKind::Scratch {
                p.clear(self.first + k)?;
            }
        }
        Ok(())
    }

    fn current(&self, p: &Prepared) -> Vec<Val> {
        (0..self.stats.len())
            .map(|k| p.array(self.first + k).unwrap_or(Val::Unit))
            .collect()
    }
}
