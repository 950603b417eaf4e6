//! Canonical forms of numeric expressions: the hub of the simplifier (issue 3).
//!
//! A numeric term is read bottom-up into a [`Normal`]: a rational function with rational
//! coefficients over *kernels* ([`Kernel`]: atoms such as variables, `a[i]`, `log(x)`,
//! unclosed sums; `e^s`; powers `b^r` of non-negative bases; `pi`), with the laws of
//! `laws` applied on the way (`exp(a)*exp(b) = exp(a+b)`, `log` of products, merging
//! powers of one base, exact radicals, ...), then written back as a term of the requested
//! type ([`Canon::to_term`]), coercions on the leaves. Two polynomially equal
//! expressions get the same form, output order never depends on the order kernels were
//! met, and canonicalising a canonical term gives it back.
//!
//! ```
//! use slic_algebra::{canon, front, print, Store};
//! use slic_algebra::assume::Context;
//! let mut store = Store::new();
//! let t = front::load(&mut store, "fn x real: fn y real: (x + y)^2 - 2*x*y").unwrap();
//! let c = canon::canonicalize(&mut store, &Context::new(), t);
//! assert_eq!(print::print_term(&store, c), "fn x real:\nfn y real:\nx ^ 2 + y ^ 2\n");
//! ```
//!
//! [`canonicalize`] works on any term: measures, binders and loops are kept, with every
//! numeric subterm canonical (sums and products over symbolic bounds keep their shape
//! with canonical bodies, closed by `sums` when one of its rules applies). Expansions that would exceed
//! [`CanonConfig::max_terms`] keep the offending sum, product or power as an atom and are
//! counted in [`Canon::budget_hits`]; canonicalisation never fails.
//!
//! Conditions are made canonical and decided under the session's [`Context`] by `cond`
//! and `piecewise` (so `if i < n` inside `summate i from 0 to n` loses its dead branch);
//! the context grows under binders (loop ranges) and branches (their conditions), and
//! canonical forms are memoised per context.
//!
//! Identities that make a form cheaper only sometimes (gamma shifts, merged radicals)
//! are not part of the canonical form; [`shift_gammas`] and [`merge_radicals`] apply
//! them when the structural cost (`crate::cost`) says they pay.
//!
//! Architecture invariant: this module applies only laws that hold for every value of
//! the variables allowed by their types (up to the usual removable singularities of
//! cancelling `x / x`), and it evaluates nothing in floating point. `real2prob(e)` and
//! `int2nat(e)` are read as `e` when the canonical form of `e` is evidently in the
//! smaller type and kept as non-negative atoms otherwise; `real2int` is an atom.

mod build;
mod forms;
mod kernel;
mod laws;
mod normal;
mod tidy;
mod write;

pub use forms::{cheapest_form, FormsStop};
pub use kernel::{Kernel, KernelInfo, KernelTable};
pub use normal::{Normal, Overflow};
pub use tidy::{gamma_value, merge_radicals, shift_gammas, GammaValue};

use rustc_hash::FxHashMap;

use crate::assume::Context;
use crate::term::{Store, TermId};
use crate::types::Type;

/// Limits of a canonicalisation session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanonConfig {
    /// The most terms an expansion may produce (numerator or denominator of one
    /// intermediate result); beyond it the expression stays unexpanded, as an atom.
    pub max_terms: usize,
}

impl Default for CanonConfig {
    fn default() -> Self {
        CanonConfig { max_terms: 5000 }
    }
}

/// Why a request to the session could not be answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CanonError {
    /// The term or requested type is not numeric (`normal`, `to_term`, `collect`).
    NotNumeric { ty: Type },
    /// `collect` was asked for a term that is not a single kernel (`x`, `exp(x)`, ...).
    NotAKernel { term: TermId },
    /// `collect`: the expression is not a polynomial in that kernel (it occurs in a
    /// denominator).
    NotPolynomial { term: TermId },
}

impl std::fmt::Display for CanonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CanonError::NotNumeric { ty } => write!(f, "expected a numeric type, found {ty}"),
            CanonError::NotAKernel { term } => {
                write!(f, "term #{} is not a single kernel", term.index())
            }
            CanonError::NotPolynomial { term } => write!(
                f,
                "the expression is not a polynomial in term #{}",
                term.index()
            ),
        }
    }
}

impl std::error::Error for CanonError {}

/// A canonicalisation session: the store, the kernel table and the context.
///
/// Kernel indices are session-local; a [`Normal`] from one session means nothing in
/// another.
pub struct Canon<'s> {
    store: &'s mut Store,
    kernels: KernelTable,
    config: CanonConfig,
    ctx: Context,
    budget_hits: usize,
    /// Memo of `mentions_infinity` (terms whose subtree contains `∞`).
    infinite: FxHashMap<TermId, bool>,
    pi: Option<u32>,
    /// How deep `laws::fix` has re-entered itself.
    fix_depth: u32,
    /// Canonical forms already computed, by term and context generation.
    memo: FxHashMap<(TermId, u32), Normal>,
    /// The generation of the current context, and the last one given out.
    generation: u32,
    next_generation: u32,
}

impl<'s> Canon<'s> {
    pub fn new(store: &'s mut Store, ctx: Context) -> Canon<'s> {
        Canon::with_config(store, ctx, CanonConfig::default())
    }

    pub fn with_config(store: &'s mut Store, ctx: Context, config: CanonConfig) -> Canon<'s> {
        Canon {
            store,
            kernels: KernelTable::new(),
            config,
            ctx,
            budget_hits: 0,
            infinite: FxHashMap::default(),
            pi: None,
            fix_depth: 0,
            memo: FxHashMap::default(),
            generation: 0,
            next_generation: 0,
        }
    }

    pub fn store(&self) -> &Store {
        self.store
    }

    pub fn store_mut(&mut self) -> &mut Store {
        self.store
    }

    pub fn kernels(&self) -> &KernelTable {
        &self.kernels
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// How many times an expansion hit [`CanonConfig::max_terms`] and was kept as an
    /// atom instead.
    pub fn budget_hits(&self) -> usize {
        self.budget_hits
    }

    /// The canonical form of a numeric term.
    pub fn normal(&mut self, t: TermId) -> Result<Normal, CanonError> {
        let ty = self.store.ty(t);
        if !ty.is_numeric() {
            return Err(CanonError::NotNumeric { ty: ty.clone() });
        }
        Ok(self.normal_of(t))
    }

    /// The canonical form of any term (see the module doc).
    pub fn canonicalize(&mut self, t: TermId) -> TermId {
        self.canon(t)
    }

    /// A numeric term fully expanded: its canonical form (canonical forms are expanded
    /// polynomials over a common denominator, within the budget).
    pub fn expand(&mut self, t: TermId) -> Result<TermId, CanonError> {
        let n = self.normal(t)?;
        let ty = self.store.ty(t).clone();
        self.to_term(&n, &ty)
    }

    /// `t` as a polynomial in the kernel `k` (a variable or any term that canonicalises
    /// to a single kernel): `(degree, coefficient)` pairs, degree decreasing, each
    /// coefficient a canonical term of `t`'s type free of `k` (it may contain the other
    /// kernels and a denominator free of `k`): the Q(params)[x] view.
    pub fn collect(&mut self, t: TermId, k: TermId) -> Result<Vec<(u32, TermId)>, CanonError> {
        let nk = self.normal(k)?;
        let kernel = match nk.as_scaled_kernel() {
            Some((i, c)) if c.is_one() => i,
            _ => return Err(CanonError::NotAKernel { term: k }),
        };
        let n = self.normal(t)?;
        if n.den().degree_in(kernel) > 0 {
            return Err(CanonError::NotPolynomial { term: k });
        }
        let ty = self.store.ty(t).clone();
        let mut out = Vec::new();
        for (d, c) in n.num().coefficients_in(kernel) {
            let coef = Normal::from_parts(c, n.den().clone()).unwrap_or_else(Normal::zero);
            let term = self.to_term(&coef, &ty)?;
            out.push((d, term));
        }
        Ok(out)
    }
}

/// The canonical form of any term under `ctx` (a one-shot [`Canon`] session with the
/// default configuration).
pub fn canonicalize(store: &mut Store, ctx: &Context, t: TermId) -> TermId {
    let key = (ctx.facts().to_vec(), t);
    if let Some(&r) = store.canon_memo.get(&key) {
        return r;
    }
    let r = Canon::new(store, ctx.clone()).canonicalize(t);
    if store.interchanging {
        return r;
    }
    if store.canon_memo.len() >= CANON_CACHE {
        store.canon_memo.clear();
    }
    store.canon_memo.insert(key, r);
    r
}

/// How many one-shot canonical forms the store keeps before it starts afresh.
const CANON_CACHE: usize = 1 << 16;

#[cfg(test)]
mod prop;
#[cfg(test)]
#[rustfmt::skip]
mod tests;
