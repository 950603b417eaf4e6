//! Kernel emission (issue 12, deliverables 1-2): a verified loop-IR [`Program`] written
//! out as a self-contained C11 or Rust source file whose header documents its ABI.
//!
//! [`emit`] builds the template context (`context.rs`: statements, expressions, types,
//! sanitised names, error sites) and renders it with the target's `tera` templates,
//! embedded from `codegen/templates/{c,rust}/`. The text of each language lives in its
//! templates only, never in Rust code; user identifiers reach the output only as
//! `v_<alnum>_<n>` and as comment text stripped to a safe alphabet, so no name can inject
//! code. [`Specialise`] bakes chosen parameters (scalar values, array lengths) into the
//! source as constants: run-time specialisation, compiled by `compile.rs`.
//!
//! Every primitive and coercion the IR interpreter (`interp.rs`) supports is emitted
//! with the interpreter's meaning, `prob` in log space: `+` a log-sum-exp, `*` a sum of
//! logarithms with `0 · ∞ = 0`, `lgamma` for gamma and beta functions (the Rust prelude
//! carries its own, std has none). Failures the interpreter reports (an index out of
//! bounds, integer overflow, an unsafe coercion, a bad draw parameter) set an error code
//! and a site; [`Emitted::sites`] maps each site back to its statement, so the driver
//! (`kernel.rs`) returns the same kind of `RunError`.
//!
//! This module never spawns a compiler and never runs code.

mod cold;
mod context;
mod inline;
mod linear;
mod monomial;
mod nodes;
mod safe;
pub(crate) use safe::NARROW_MIN_LEN;
mod prefetch;
mod products;
mod tables;

use crate::ir::Program;
use crate::verify::verify;
use context::{Builder, FixedVal};
use std::fmt;

/// The language of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// C11, linked with `-lm` only.
    C,
    /// Rust for plain `rustc` (no cargo, no crates).
    Rust,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::C => "c",
            Target::Rust => "rust",
        }
    }
}

/// Which parameters are fixed data, baked into the source as constants: a scalar's
/// value, an array's length. `fixed[k]` for parameter `k`; the default fixes nothing.
/// `narrow[k]`: the `nat` array parameter `k` is laid out as 32-bit elements (a Gibbs
/// chain's large count tables, which never exceed its number of points: half the
/// memory traffic); a store of a value past `u32::MAX` into it is an error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Specialise {
    pub fixed: Vec<bool>,
    pub narrow: Vec<bool>,
}

impl Specialise {
    /// Every parameter fixed.
    pub fn all(params: usize) -> Specialise {
        Specialise {
            fixed: vec![true; params],
            narrow: Vec::new(),
        }
    }

    /// Is anything fixed?
    pub fn any(&self) -> bool {
        self.fixed.iter().any(|f| *f)
    }
}

/// What an error site is, so the driver can say what failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// An element read or store of the named array.
    Index { array: String },
    /// An arithmetic failure of the named operation (overflow, an unsafe coercion).
    Arith { what: String },
    /// An allocation (its size out of range, or memory exhausted).
    Alloc,
    /// A draw or an observation from the named distribution.
    Draw { dist: &'static str },
}

/// A place where a kernel can fail: the statement's first line (as the interpreter's
/// errors name it) and what happens there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub at: String,
    pub kind: SiteKind,
}

/// Why a program could not be emitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// The program is ill formed (the verifier's message).
    Verify(String),
    /// The program uses something kernels cannot express yet (nested arrays, ...).
    Unsupported(String),
    /// A specialisation does not match the parameters (count or kind of value).
    Specialise(String),
    /// A template failed to render: a bug in slic-codegen.
    Internal(String),
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::Verify(e) => write!(f, "ill-formed program: {e}"),
            EmitError::Unsupported(what) => write!(f, "cannot emit a kernel: {what}"),
            EmitError::Specialise(what) => write!(f, "cannot specialise: {what}"),
            EmitError::Internal(what) => write!(f, "kernel emission bug: {what}"),
        }
    }
}

impl std::error::Error for EmitError {}

/// A kernel's source and what the driver needs to call it.
#[derive(Clone, Debug)]
pub struct Emitted {
    pub target: Target,
    pub source: String,
    /// Error sites by number (`slic_ctl.site`).
    pub sites: Vec<Site>,
    /// Parameters baked in: their values (scalars) or lengths (arrays), by position.
    pub(crate) fixed: Vec<Option<FixedVal>>,
    /// `nat` array parameters laid out as 32-bit elements, by position.
    pub(crate) narrow: Vec<bool>,
    /// The result's leaves in order (`scalar`/`array`/`unit` with the scalar type).
    pub(crate) leaves: Vec<(&'static str, &'static str)>,
    pub measure: bool,
}

/// Emits `p` for `target`, unspecialised.
pub fn emit(p: &Program, target: Target) -> Result<Emitted, EmitError> {
    emit_with(p, target, &[], &[])
}

/// Emits `p` for `target` with the parameters in `fixed` baked in (`None`: a parameter
/// read at run time), and those `narrow` marks laid out as 32-bit `nat`s.
pub(crate) fn emit_with(
    p: &Program,
    target: Target,
    fixed: &[Option<FixedVal>],
    narrow: &[bool],
) -> Result<Emitted, EmitError> {
    verify(p).map_err(|e| EmitError::Verify(e.to_string()))?;
    let p = &crate::peel::peel_loops(p);
    let p = &tables::invariant_conversions(&tables::linear_tables(p));
    let p = &inline::inline_sum_terms(&monomial::gather_monomials(p));
    let p = &products::linear_products(p);
    let mut b = Builder::new(fixed, narrow);
    let kernel = b.kernel(p)?;
    let leaves = kernel.result.iter().map(|l| (l.kind, l.ty)).collect();
    let source = render(target, &kernel)?;
    Ok(Emitted {
        target,
        source,
        sites: b.sites,
        fixed: fixed.to_vec(),
        narrow: narrow.to_vec(),
        leaves,
        measure: p.measure,
    })
}

/// The templates of each target, embedded at build time.
const C_TEMPLATES: [(&str, &str); 3] = [
    (
        "c/kernel.c",
        include_str!("../../templates/c/kernel.c.tera"),
    ),
    (
        "c/prelude.c",
        include_str!("../../templates/c/prelude.c.tera"),
    ),
    (
        "c/macros.c",
        include_str!("../../templates/c/macros.c.tera"),
    ),
];
const RUST_TEMPLATES: [(&str, &str); 3] = [
    (
        "rust/kernel.rs",
        include_str!("../../templates/rust/kernel.rs.tera"),
    ),
    (
        "rust/prelude.rs",
        include_str!("../../templates/rust/prelude.rs.tera"),
    ),
    (
        "rust/macros.rs",
        include_str!("../../templates/rust/macros.rs.tera"),
    ),
];

fn render(target: Target, kernel: &context::Kernel) -> Result<String, EmitError> {
    let (templates, main) = match target {
        Target::C => (&C_TEMPLATES, "c/kernel.c"),
        Target::Rust => (&RUST_TEMPLATES, "rust/kernel.rs"),
    };
    let mut tera = tera::Tera::default();
    // generated code is not HTML: no escaping anywhere
    tera.autoescape_on(vec![]);
    tera.add_raw_templates(templates.iter().copied())
        .map_err(|e| EmitError::Internal(error_chain(&e)))?;
    let mut ctx =
        tera::Context::from_serialize(kernel).map_err(|e| EmitError::Internal(error_chain(&e)))?;
    // the one copy of the bound `linear.rs` proves its sums under, for the preludes' test
    ctx.insert("lin_limit", &format!("{:.1}", linear::EXP_LIMIT));
    let text = tera
        .render(main, &ctx)
        .map_err(|e| EmitError::Internal(error_chain(&e)))?;
    Ok(tidy(&text))
}

/// A tera error with its causes (the first line alone rarely says which macro failed).
fn error_chain(e: &tera::Error) -> String {
    let mut s = e.to_string();
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Trailing blanks dropped and runs of blank lines collapsed: what template whitespace
/// control leaves behind, not a change of text.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

pub(crate) use context::FixedVal as Fixed;
