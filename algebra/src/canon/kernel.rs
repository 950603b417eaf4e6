//! The kernel table of a canonicalisation session: the map between [`Kernel`]s (the
//! things a canonical form treats as polynomial variables) and the `u32` indices that
//! [`crate::poly::Poly`] works with, plus what the laws need to know about each kernel.
//!
//! Indices are given out in the order kernels are met, so they are NOT a canonical
//! order; anything that reaches output goes through the structural order of
//! `canon::order` instead. This file only stores; it builds no terms and applies no law.

use rustc_hash::FxHashMap;

use super::normal::Normal;
use crate::num::Rational;
use crate::term::TermId;
use crate::types::Type;

/// A polynomial variable of a canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// A canonical term that is not arithmetic: a variable, `a[i]`, `log(x)`, `erf(x)`,
    /// an unclosed `summate`, a piecewise `if`, ...; it keeps its own type.
    Atom(TermId),
    /// `e^s` for a non-zero exponent `s` (in this session's kernel numbering).
    Exp(Normal),
    /// `b^r` for a NON-NEGATIVE base `b` (a canonical prob term) and a rational `r`
    /// with `0 < r < 1` (integer parts of exponents are ordinary polynomial powers).
    /// Symbolic powers `b ** y` are `Exp(y * log b)`.
    Pow(TermId, Rational),
    /// The constant `pi`.
    Pi,
}

/// What the session knows of one kernel.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    pub kernel: Kernel,
    /// The kernel as a term of its natural type (`ty`): the atom itself, `exp(s)`,
    /// `sqrt(b)`, `natroot(b, n)`, `b ** r`, `pi`. `None` until first needed for an
    /// `Exp` kernel (writing a long exponent is the costly part of making one, and most
    /// intermediate ones merge away before output).
    pub term: Option<TermId>,
    pub ty: Type,
    /// Known to be `>= 0` (prob and nat atoms, and every `Exp`, `Pow`, `Pi`).
    pub nonneg: bool,
    /// For `Exp`: the exponent's canonical form.
    pub exp_arg: Option<Normal>,
    /// For `Pow`: the base's canonical form. For an atom `log(b)`: `b` (a prob term) and
    /// its canonical form, so `exp(k * log b)` can become `b^k`.
    pub base: Option<(TermId, Normal)>,
    /// For `Atom(log(b))`: true (then `base` is `b`).
    pub is_log: bool,
}

/// The `Kernel <-> u32` table.
#[derive(Clone, Debug, Default)]
pub struct KernelTable {
    infos: Vec<KernelInfo>,
    index: FxHashMap<Kernel, u32>,
}

impl KernelTable {
    pub fn new() -> KernelTable {
        KernelTable::default()
    }

    /// The index of a kernel already in the table.
    pub fn find(&self, k: &Kernel) -> Option<u32> {
        self.index.get(k).copied()
    }

    /// The index of `info.kernel`, adding `info` if the kernel is new.
    pub fn intern(&mut self, info: KernelInfo) -> u32 {
        if let Some(&i) = self.index.get(&info.kernel) {
            return i;
        }
        let i = u32::try_from(self.infos.len()).unwrap_or(u32::MAX);
        self.index.insert(info.kernel.clone(), i);
        self.infos.push(info);
        i
    }

    /// What is known of kernel `i`. Indices come only from this table, so a missing
    /// one is a bug in the session; callers treat it as an opaque real kernel.
    pub fn get(&self, i: u32) -> Option<&KernelInfo> {
        self.infos.get(i as usize)
    }

    /// Record the natural term of kernel `i` (see [`KernelInfo::term`]).
    pub fn set_term(&mut self, i: u32, t: TermId) {
        if let Some(info) = self.infos.get_mut(i as usize) {
            info.term = Some(t);
        }
    }

    pub fn len(&self) -> usize {
        self.infos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }
}
