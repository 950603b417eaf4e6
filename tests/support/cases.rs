//! The corpus as test cases: which files are inputs, their case numbers and short names,
//! the files beside them, and the argument tuples a case is compared on (its `# args:`
//! example, then random tuples: any values of the parameter types for a scalar case, and
//! for an array case tuples that respect its `# assume:` header with the sizes 0 and 1
//! steered for); every program the lowering pipeline is run on ([`lowering_programs`]).
//! Shared by the simplifier's, the lowering's and the kernels' corpus tests.

use std::path::{Path, PathBuf};

use crate::assume::{parameter_names, sized_tuples, Assumption, Tuples};
use crate::{header, header_args};
use slic_algebra::{Store, TermId};
use slic_codegen::Val;
use slic_semantics::{random_args, Rng, Value};

/// A program the lowering tests run: the file, the file whose headers give its arguments
/// (the input's, for a simplified output), and the harness kind.
pub struct LoweringProgram {
    pub path: PathBuf,
    pub headers: PathBuf,
    pub kind: Kind,
}

/// Every corpus program the lowering pipeline is run on: the cases, the simplifier's
/// corpus, the examples and the lowering programs, without the expected forms.
pub fn lowering_programs() -> Vec<LoweringProgram> {
    let mut out = Vec::new();
    for p in crate::corpus_files("cases")
        .into_iter()
        .chain(crate::corpus_files("simplify"))
        .chain(crate::corpus_files("examples"))
        .chain(crate::corpus_files("lowering"))
    {
        let name = p.to_string_lossy().into_owned();
        if name.ends_with(".expected.hk") {
            continue;
        }
        let kind = if name.contains("/cases/") && case_number(&p).is_some_and(|n| n >= 11) {
            Kind::Array
        } else {
            Kind::Scalar
        };
        let headers = if is_input(&p) {
            p.clone()
        } else {
            PathBuf::from(name.replace(".simplified.hk", ".hk"))
        };
        out.push(LoweringProgram {
            path: p,
            headers,
            kind,
        });
    }
    out
}

/// Random argument tuples per case besides the `# args:` example.
pub const RANDOM_TUPLES: usize = 3;

pub fn is_input(p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
    name.is_some_and(|n| !n.ends_with(".expected.hk") && !n.ends_with(".simplified.hk"))
}

/// The CASES.md number of a file of `corpus/cases/` (its name's first two digits).
pub fn case_number(p: &Path) -> Option<u32> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    name.get(..2)?.parse().ok()
}

/// `NAME.hk` -> `NAME.<suffix>.hk` beside it.
pub fn beside(p: &Path, suffix: &str) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    p.with_file_name(format!("{stem}.{suffix}.hk"))
}

pub fn short(p: &Path) -> String {
    let root = crate::root().join("corpus");
    p.strip_prefix(&root).unwrap_or(p).display().to_string()
}

/// A deterministic seed per file, so random arguments differ between cases but not runs.
pub fn seed_of(p: &Path) -> u64 {
    short(p).bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Which harness a case runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Any arguments of the parameter types are valid; the expected form is compared on
    /// the example.
    Scalar,
    /// Arguments respect the `# assume:` header and the sizes 0 and 1 are steered for;
    /// the expected form is compared on every tuple.
    Array,
}

/// The argument tuples a case is compared on: its example, then random ones (a program
/// without parameters has one, empty, tuple). For an array case the example must satisfy
/// the assumption, and the sizes no tuple can have under it are returned beside.
pub fn argument_tuples(
    store: &Store,
    t: TermId,
    path: &Path,
    text: &str,
    kind: Kind,
) -> Result<Tuples, String> {
    let ty = store.ty(t);
    let example = header_args(text, ty)?;
    if example.is_empty() {
        return Ok(Tuples {
            tuples: vec![example],
            impossible: Vec::new(),
        });
    }
    let mut tuples = vec![example];
    if kind == Kind::Scalar {
        let mut rng = Rng::seed_from_u64(seed_of(path));
        for _ in 0..RANDOM_TUPLES {
            tuples.push(random_args(ty, &mut rng)?);
        }
        return Ok(Tuples {
            tuples,
            impossible: Vec::new(),
        });
    }
    let assumption = header(text, "assume")
        .map(|e| Assumption::load(store, t, &e))
        .transpose()?;
    if let Some(a) = &assumption {
        if a.holds(&tuples[0]) != Ok(true) {
            return Err(format!(
                "the '# args:' example does not satisfy the assumption:\n{}",
                a.text()
            ));
        }
    }
    let names = parameter_names(store, t);
    let drawn = sized_tuples(ty, &names, assumption.as_ref(), seed_of(path), 1)?;
    tuples.extend(drawn.tuples);
    Ok(Tuples {
        tuples,
        impossible: drawn.impossible,
    })
}

pub fn args_json(args: &[Value]) -> String {
    slic_semantics::args_to_json(args)
}

/// An argument of the reference interpreter as the loop IR's value (`None` for kinds the
/// IR does not hold), for the tests that run both on one corpus tuple.
pub fn to_val(v: &Value) -> Option<Val> {
    Some(match v {
        Value::Nat(n) => Val::Nat(*n),
        Value::Int(n) => Val::Int(*n),
        Value::Real(x) => Val::Real(*x),
        Value::Prob(l) => Val::Prob(*l),
        Value::Bool(b) => Val::Bool(*b),
        Value::Array(xs) => Val::array(xs.iter().map(to_val).collect::<Option<_>>()?),
        Value::Pair(p) => Val::pair(to_val(&p.0)?, to_val(&p.1)?),
        _ => return None,
    })
}
