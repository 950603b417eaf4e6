//! Sums of probabilities computed in linear space where that is exact enough (issue 12:
//! kernel speed). A `prob` is a logarithm in the kernels, so `a + b` is a log-sum-exp (an
//! `exp` and a `log1p`) and `nat2prob(n)` a `log`: the weight `s² · n + 1` of a Gaussian
//! mixture's class costs four calls into libm per class and per update. Computed as a real,
//! `exp(s²) · n + 1.0` (the `exp` read of a variable the loop does not change, which the C
//! and Rust compilers hoist), it costs one `log`.
//!
//! [`Lin::of`] reads a `prob` expression, already built in log space, as the same value in
//! linear space: sums and products of prob literals, `nat2prob` of a name, and prob names
//! (a name whose own value has a linear form is read through it; any other is read as
//! `exp` of it). The linear value is used only when it cannot have lost precision:
//! - no subtraction exists in prob arithmetic, so the sum has no cancellation: each term
//!   and the sum carry a relative error of a few ulps;
//! - every expanded term is a product of naturals (exact, or a zero that is exact), at most
//!   one literal within `[2^-64, 2^64]`, and at most one read through `exp`, of one name
//!   throughout; at run time that name's logarithm must lie within `±600`
//!   ([`EXP_LIMIT`]), so a term that is not exactly zero lies above `2^-64 e^-600`, far
//!   inside the normal range: no term underflows;
//! - the sum itself must be a normal finite double (an overflow, a NaN or an exact zero
//!   fails the test).
//!
//! A quotient `N / D` (a product whose last factor is a `recip`, as `monomial.rs` writes
//! the GMM's variance ratio) is one more form: `N` and `D` each meet the rules above on
//! their own, so each is exact enough or not a normal finite double, and the division
//! rounds once. A zero, an infinity or a NaN on either side leaves a quotient that is
//! zero, infinite, NaN or (`x / ∞`) zero, and a quotient below the normal range is not
//! normal: the test fails in every such case. Nothing combines a quotient further (a sum
//! of quotients could cancel nothing, but a product of one could leave the normal range
//! unseen).
//!
//! Where the test fails, at run time, the log-space expression is evaluated as before
//! (`context.rs` emits both, the second in the branch not taken), so the meaning is the
//! interpreter's whatever the arguments. Only names the kernel never reassigns are read,
//! so the linear expression, evaluated where the sum is, reads the values it was built
//! from.

use rustc_hash::{FxHashMap, FxHashSet};

use super::nodes::{float_num, ENode};

/// The largest `|ln x|` of the one name a linear form reads through `exp` (see the module
/// documentation; the preludes' `slic_lin_ok` tests it).
pub(crate) const EXP_LIMIT: f64 = 600.0;

/// The smallest and largest literal a term may carry.
const LIT_MIN: f64 = 1.0 / 18_446_744_073_709_551_616.0;
const LIT_MAX: f64 = 18_446_744_073_709_551_616.0;

/// Nodes a linear form may have (a bound on inlining through names).
const MAX_NODES: usize = 24;

/// A `prob` expression's value in linear space.
#[derive(Clone, Debug)]
pub(crate) struct Lin {
    /// A `real` expression of the value.
    pub node: ENode,
    /// The one name read through `exp` (its C name), if any.
    pub leaf: Option<String>,
    /// The most literal factors in one expanded term.
    lits: u8,
    /// The most `exp` reads in one expanded term.
    leaves: u8,
    /// Whether it adds: only then does the linear form save work.
    pub sum: bool,
    /// Whether it divides (`N / D`, one division last): nothing may combine it further.
    quot: bool,
    nodes: usize,
}

/// What the linear forms may read: names with linear forms of their own, names that are
/// never reassigned, and names the current loop does not change.
#[derive(Default)]
pub(crate) struct Scope {
    /// Linear forms of the `prob` names built so far (by C name).
    pub forms: FxHashMap<String, Lin>,
    /// C names that are assigned after their declaration (`var`s).
    pub mutable: FxHashSet<String>,
    /// The loop depth at which each C name was declared.
    pub depth: FxHashMap<String, usize>,
    /// The loop depth being built.
    pub loop_depth: usize,
}

impl Scope {
    /// A name a linear form may read: never reassigned.
    fn fixed(&self, name: &str) -> bool {
        !self.mutable.contains(name)
    }

    /// A name declared outside the innermost loop being built (its `exp` is hoisted).
    fn invariant(&self, name: &str) -> bool {
        self.depth.get(name).is_some_and(|&d| d < self.loop_depth)
    }
}

impl Lin {
    /// `e`, a `prob` expression in log space, in linear space, if it has such a form.
    pub fn of(e: &ENode, scope: &Scope) -> Option<Lin> {
        let lin = match e {
            ENode::Lit { ty: "prob", num } => {
                let v = match num.class {
                    "neginf" => 0.0,
                    "finite" => num.text.parse::<f64>().ok()?.exp(),
                    _ => return None,
                };
                let zero = v == 0.0;
                if !zero && !(LIT_MIN..=LIT_MAX).contains(&v) {
                    return None;
                }
                Lin {
                    node: ENode::Lit {
                        ty: "real",
                        num: float_num(v),
                    },
                    leaf: None,
                    lits: u8::from(!zero),
                    leaves: 0,
                    sum: false,
                    quot: false,
                    nodes: 1,
                }
            }
            ENode::Call {
                f: "nat2prob",
                args,
                site: None,
            } => match args.as_slice() {
                [n @ (ENode::Var { .. } | ENode::Lit { .. })] => {
                    if let ENode::Var { name } = n {
                        if !scope.fixed(name) {
                            return None;
                        }
                    }
                    Lin {
                        node: ENode::Call {
                            f: "nat2real",
                            args: vec![n.clone()],
                            site: None,
                        },
                        leaf: None,
                        lits: 0,
                        leaves: 0,
                        sum: false,
                        quot: false,
                        nodes: 2,
                    }
                }
                _ => return None,
            },
            ENode::Var { name } => {
                if let Some(l) = scope.forms.get(name) {
                    return Some(l.clone());
                }
                if !(scope.fixed(name) && scope.invariant(name)) {
                    return None;
                }
                Lin {
                    node: ENode::Call {
                        f: "prob2real",
                        args: vec![e.clone()],
                        site: None,
                    },
                    leaf: Some(name.clone()),
                    lits: 0,
                    leaves: 1,
                    sum: false,
                    quot: false,
                    nodes: 2,
                }
            }
            ENode::Call {
                f: "prob_recip",
                args,
                site: None,
            } => {
                let [d] = args.as_slice() else {
                    return None;
                };
                let one = ENode::Lit {
                    ty: "real",
                    num: float_num(1.0),
                };
                Lin::quotient(None, Lin::of(d, scope)?, one)?
            }
            ENode::Call {
                f: "prob_mul",
                args,
                site: None,
            } if matches!(
                args.as_slice(),
                [
                    _,
                    ENode::Call {
                        f: "prob_recip",
                        ..
                    }
                ]
            ) =>
            {
                let [n, ENode::Call { args: d, .. }] = args.as_slice() else {
                    return None;
                };
                let [d] = d.as_slice() else {
                    return None;
                };
                let n = Lin::of(n, scope)?;
                let node = n.node.clone();
                Lin::quotient(Some(n), Lin::of(d, scope)?, node)?
            }
            ENode::Call {
                f: f @ ("prob_add" | "prob_mul"),
                args,
                site: None,
            } => {
                let [a, b] = args.as_slice() else {
                    return None;
                };
                let (a, b) = (Lin::of(a, scope)?, Lin::of(b, scope)?);
                if a.quot || b.quot {
                    return None;
                }
                let leaf = match (a.leaf, b.leaf) {
                    (Some(x), Some(y)) if x != y => return None,
                    (x, y) => x.or(y),
                };
                let add = *f == "prob_add";
                let (lits, leaves) = if add {
                    (a.lits.max(b.lits), a.leaves.max(b.leaves))
                } else {
                    (a.lits + b.lits, a.leaves + b.leaves)
                };
                if lits > 1 || leaves > 1 {
                    return None;
                }
                Lin {
                    node: ENode::Op {
                        op: if add { "add" } else { "mul" },
                        args: vec![a.node, b.node],
                    },
                    leaf,
                    lits,
                    leaves,
                    sum: add || a.sum || b.sum,
                    quot: false,
                    nodes: a.nodes + b.nodes + 1,
                }
            }
            _ => return None,
        };
        (lin.nodes <= MAX_NODES).then_some(lin)
    }

    /// `n / d` (`num` the numerator's node, `1.0` without one): each side meets the
    /// rules of a form on its own, and neither divides.
    fn quotient(n: Option<Lin>, d: Lin, num: ENode) -> Option<Lin> {
        let (lits, leaves, leaf, sum, nodes) = match n {
            Some(n) => {
                if n.quot {
                    return None;
                }
                let leaf = match (n.leaf, d.leaf.clone()) {
                    (Some(x), Some(y)) if x != y => return None,
                    (x, y) => x.or(y),
                };
                (
                    n.lits.max(d.lits),
                    n.leaves.max(d.leaves),
                    leaf,
                    n.sum || d.sum,
                    n.nodes + d.nodes + 1,
                )
            }
            None => (d.lits, d.leaves, d.leaf.clone(), d.sum, d.nodes + 2),
        };
        if d.quot {
            return None;
        }
        Some(Lin {
            node: ENode::Op {
                op: "div",
                args: vec![num, d.node],
            },
            leaf,
            lits,
            leaves,
            sum,
            quot: true,
            nodes,
        })
    }

    /// This form as the name `c_lin` it was stored in (what later forms read).
    pub fn named(&self, c_lin: &str) -> Lin {
        Lin {
            node: ENode::Var {
                name: c_lin.to_string(),
            },
            nodes: 1,
            ..self.clone()
        }
    }

    /// The run-time test that the linear value `c_lin` is exact enough: a normal finite
    /// double, and the `exp`-read name within [`EXP_LIMIT`].
    pub fn test(&self, c_lin: &str) -> ENode {
        let x = match &self.leaf {
            Some(name) => ENode::Var { name: name.clone() },
            None => ENode::Lit {
                ty: "real",
                num: float_num(0.0),
            },
        };
        ENode::Call {
            f: "lin_ok",
            args: vec![
                ENode::Var {
                    name: c_lin.to_string(),
                },
                x,
            ],
            site: None,
        }
    }
}
