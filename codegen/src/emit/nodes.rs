//! The records of a kernel's template context (issue 12): expressions, statements,
//! parameters, the result's leaves, outlined branches and the whole kernel, each
//! serialisable for the C and Rust templates, and the names the templates give scalar
//! types. `context.rs` builds them from a loop-IR program; `linear.rs`, `safe.rs` and
//! `cold.rs` read or build parts of them; nothing here decides anything.

use serde::Serialize;
use slic_algebra::Type;

/// A scalar type as the templates name it: `nat`, `int`, `real`, `prob`, `bool`.
pub(crate) fn scalar_name(t: &Type) -> Option<&'static str> {
    Some(match t {
        Type::Nat => "nat",
        Type::Int => "int",
        Type::Real => "real",
        Type::Prob => "prob",
        Type::Bool => "bool",
        _ => return None,
    })
}

/// A number as text both targets read as a literal of its type: `finite` is false for
/// the infinities and NaN, which the templates spell by name.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Num {
    pub text: String,
    /// `finite`, `posinf`, `neginf`, `nan`, or `intmin` (i64::MIN, which has no literal)
    pub class: &'static str,
}

pub(crate) fn float_num(x: f64) -> Num {
    if x.is_nan() {
        Num {
            text: String::new(),
            class: "nan",
        }
    } else if x == f64::INFINITY {
        Num {
            text: String::new(),
            class: "posinf",
        }
    } else if x == f64::NEG_INFINITY {
        Num {
            text: String::new(),
            class: "neginf",
        }
    } else {
        // `{:e}` is the shortest round-tripping digits with an exponent: `1.5e0`, `-1e-300`
        Num {
            text: format!("{x:e}"),
            class: "finite",
        }
    }
}

/// A pure expression, as the templates' `expr` macro renders it.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub(crate) enum ENode {
    /// A literal of scalar type `ty`.
    Lit { ty: &'static str, num: Num },
    /// A scalar variable (parameter, let, accumulator, loop index, draw).
    Var { name: String },
    /// `arr[idx]` with a bounds check: `ity` the index's type, `ety` the element's.
    Read {
        arr: String,
        ety: &'static str,
        ity: &'static str,
        idx: Box<ENode>,
        site: u32,
    },
    /// `arr[idx]` without a check: `safe.rs` proved `idx` (a `nat`) in bounds.
    Get {
        arr: String,
        ety: &'static str,
        idx: Box<ENode>,
    },
    /// An element at an index already checked (the read half of `a[i] += e`).
    Elem {
        arr: String,
        ety: &'static str,
        ix: String,
    },
    /// `size(arr)`: the array's length.
    Size { arr: String },
    /// A prelude helper: `f(args)`, or `f(ctl, site, args)` when it can fail.
    Call {
        f: &'static str,
        args: Vec<ENode>,
        site: Option<u32>,
    },
    /// An arithmetic or comparison operator (`add`, `mul`, `lt`, `le`, `eq`, `ne`) over
    /// its arguments, left to right; arithmetic on reals, and `add` on the `nat` or `int`
    /// accumulators `safe.rs` proved cannot overflow (other types go through helpers,
    /// which keep log space and check overflow).
    Op { op: &'static str, args: Vec<ENode> },
}

/// One leaf of a result: a scalar, an array (copied out), or `()`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Leaf {
    /// `scalar`, `array` or `unit`
    pub kind: &'static str,
    pub ty: &'static str,
    pub value: Option<ENode>,
    /// the array's name (an `array` leaf)
    pub arr: Option<String>,
}

/// A statement, as the templates' `block` macro renders it.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub(crate) enum SNode {
    /// `let` (`mutable` false) or `var` (true; `value` absent when unwritten).
    Decl {
        name: String,
        ty: &'static str,
        value: Option<ENode>,
        mutable: bool,
        check: bool,
    },
    /// `name = value` (compound assignments are already combined into `value`).
    Set {
        name: String,
        value: ENode,
        check: bool,
    },
    /// A zero-filled array of `size` elements of `ety`.
    Alloc {
        name: String,
        ety: &'static str,
        size: ENode,
        site: u32,
        check: bool,
    },
    /// `arr[idx] = value`: the index checked into `ix` first (no `site`: proven in bounds
    /// by `safe.rs`, copied unchecked); `value` may read `arr[ix]`; `check`: `value` can
    /// fail.
    Store {
        arr: String,
        ety: &'static str,
        ity: &'static str,
        ix: String,
        idx: ENode,
        value: ENode,
        site: Option<u32>,
        check: bool,
    },
    For {
        var: String,
        ty: &'static str,
        lo: ENode,
        hi: ENode,
        lo_name: String,
        hi_name: String,
        check: bool,
        /// what the loop came from, safe for a comment
        note: String,
        body: Vec<SNode>,
    },
    If {
        cond: ENode,
        /// the condition's temporary, where evaluating it can fail
        cname: String,
        check: bool,
        then: Vec<SNode>,
        otherwise: Vec<SNode>,
    },
    /// A categorical draw: the choice script's next value, or a stop.
    Categorical {
        name: String,
        arr: String,
        site: u32,
        tail: bool,
    },
    /// A draw the kernel cannot enumerate: its law checked, then `not finite`.
    OtherDraw {
        name: String,
        ty: &'static str,
        dist: &'static str,
        args: Vec<ENode>,
        site: u32,
        check: bool,
    },
    Factor {
        value: ENode,
        check: bool,
    },
    Observe {
        dist: &'static str,
        args: Vec<ENode>,
        /// a categorical's weights (its one argument, an array)
        arr: Option<String>,
        value: ENode,
        site: u32,
        check: bool,
    },
    Reject,
    /// A hint with no effect on any value: `arr[idx]` requested from memory, where `var +
    /// dist` is below `hi` and `src`'s length (`idx` reads `src[var + dist]`) and `idx`
    /// below `arr`'s length (`prefetch.rs`).
    Prefetch {
        arr: String,
        src: String,
        var: String,
        hi: String,
        dist: u64,
        idx: ENode,
    },
    /// A call of an outlined slow branch (`cold.rs`): `f(K, &out, result, args...)`,
    /// returning its code where it fails, else `result = out`.
    Cold {
        f: String,
        result: String,
        ty: &'static str,
        args: Vec<String>,
        out: String,
    },
    /// A comment line (safe text).
    Note {
        text: String,
    },
}

/// A parameter as the templates bind it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Param {
    /// position in the argument vector
    pub pos: usize,
    /// the user's name, safe for a comment
    pub note: String,
    pub name: String,
    /// `scalar` or `array`
    pub kind: &'static str,
    pub ty: &'static str,
    /// a specialised scalar's value, or a specialised array's length
    pub fixed: Option<Num>,
    /// an `inout` array: the kernel stores into the caller's buffer
    pub inout: bool,
}

/// A loop's slow branch emitted as a function of its own (`cold.rs`): it takes the
/// control block, `result`'s current value and `params`, runs `body`, and hands `result`
/// back through a pointer.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Outlined {
    pub name: String,
    pub result: String,
    pub result_ty: &'static str,
    pub params: Vec<ColdParam>,
    pub body: Vec<SNode>,
}

/// A scalar an outlined branch reads, under its kernel name.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ColdParam {
    pub name: String,
    pub ty: &'static str,
}

/// The whole kernel's context.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Kernel {
    /// the loops' slow branches, emitted before the body (`cold.rs`)
    pub cold: Vec<Outlined>,
    pub params: Vec<Param>,
    pub body: Vec<SNode>,
    pub result: Vec<Leaf>,
    pub result_note: String,
    pub measure: bool,
    pub specialised: bool,
    /// the IR program, line by line, safe for a comment
    pub ir_lines: Vec<String>,
}

/// A specialised parameter's baked-in value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FixedVal {
    Nat(u64),
    Int(i64),
    Real(f64),
    Bool(bool),
    /// an array's length
    Len(u64),
}
