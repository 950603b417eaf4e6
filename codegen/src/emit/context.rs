//! The template context of one kernel (issue 12): a verified loop-IR [`Program`] turned
//! into a tree of serialisable records (statements, expressions, types, sanitised names,
//! error sites) that the C and Rust templates render. Every decision lives here: which
//! operation each primitive at each type is (a prelude helper's name, or an arithmetic
//! operator on reals), which operations can fail and where (an error site the driver maps
//! back to a `RunError` naming the statement), which names the user's identifiers become.
//!
//! It must not write target-language text: no C or Rust spelling is assembled here (the
//! only strings are sanitised identifiers, numbers and comment text stripped to a safe
//! alphabet); the templates own the syntax. It knows nothing of compilers.

use crate::ir::{AssignOp, Expr, Lit, Program, Stmt};
use slic_algebra::{Coercion, Dist, Prim, Type};
use std::collections::HashSet;

use super::cold;
use super::linear::{self, Lin};
pub(crate) use super::nodes::{
    float_num, scalar_name, ColdParam, ENode, FixedVal, Kernel, Leaf, Num, Outlined, Param, SNode,
};
use super::prefetch;
use super::products;
use super::safe::{self, Safe};
use super::{EmitError, Site, SiteKind};

/// What the builder tracks about a name in scope.
#[derive(Clone, Debug)]
struct Bound {
    ir: String,
    c: String,
    ty: Type,
    /// a `nat` array stored as 32-bit elements (`safe.rs`): element type `nat32`
    narrow: bool,
    /// a parameter laid out so by the caller ([`super::Specialise::narrow`]): its
    /// stores are checked to fit
    narrow_param: bool,
}

impl Bound {
    /// The element type the templates store this array's elements as.
    fn stored(&self, elem: &Type) -> Result<&'static str, EmitError> {
        if self.narrow {
            Ok("nat32")
        } else {
            scalar(elem)
        }
    }
}

pub(crate) struct Builder<'a> {
    scopes: Vec<Vec<Bound>>,
    counter: usize,
    pub sites: Vec<Site>,
    /// fixed values by parameter position (a specialised kernel)
    fixed: &'a [Option<FixedVal>],
    /// `nat` array parameters laid out as 32-bit elements, by position
    narrow: &'a [bool],
    /// the checks that can never fire (`safe.rs`), for the program being built
    safe: Safe,
    /// what sums of probs may be computed in linear space from (`linear.rs`)
    lin: linear::Scope,
    /// while a store's value is built: its array, its index, and its element at the index
    /// the store checked
    stored: Option<(String, Expr, ENode)>,
    /// array parameters whose baked-in length makes their reads worth requesting ahead
    /// (`prefetch.rs`)
    large: HashSet<String>,
    /// the slow branches emitted as functions so far (`cold.rs`)
    outlined: Vec<Outlined>,
}

/// Text safe inside a C block comment and a Rust line comment: printable ASCII without
/// `/`, `*`, `\` or backquotes, one line, at most 160 characters.
pub(crate) fn safe_note(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || " _.,:;()[]{}+-<=>!&|^%#@~?'$".contains(c) {
                c
            } else {
                '?'
            }
        })
        .collect();
    if out.len() > 160 {
        out.truncate(157);
        out.push_str("...");
    }
    out
}

/// `v_<alnum of the name, at most 20>_<n>`: never a keyword, never a collision (the
/// counter is unique per declaration), never anything but `[A-Za-z0-9_]`.
fn sanitise(name: &str, n: usize) -> String {
    let base: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(20)
        .collect();
    format!("v_{base}_{n}")
}

fn bug(what: impl Into<String>) -> EmitError {
    EmitError::Internal(what.into())
}

impl<'a> Builder<'a> {
    pub(crate) fn new(fixed: &'a [Option<FixedVal>], narrow: &'a [bool]) -> Builder<'a> {
        Builder {
            scopes: vec![Vec::new()],
            counter: 0,
            sites: Vec::new(),
            fixed,
            narrow,
            safe: Safe::default(),
            lin: linear::Scope::default(),
            stored: None,
            large: HashSet::new(),
            outlined: Vec::new(),
        }
    }

    fn declare(&mut self, ir: &str, ty: Type) -> String {
        self.counter += 1;
        let c = sanitise(ir, self.counter);
        self.lin.depth.insert(c.clone(), self.lin.loop_depth);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(Bound {
                ir: ir.to_string(),
                c: c.clone(),
                ty,
                narrow: false,
                narrow_param: false,
            });
        }
        c
    }

    /// A fresh name for a temporary of the kernel's own.
    fn temp(&mut self, what: &str) -> String {
        self.counter += 1;
        format!("t_{what}_{}", self.counter)
    }

    fn lookup(&self, ir: &str) -> Result<&Bound, EmitError> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|b| b.ir == ir)
            .ok_or_else(|| bug(format!("`{ir}` is not in scope (unverified program?)")))
    }

    fn site(&mut self, at: &str, kind: SiteKind) -> u32 {
        self.sites.push(Site {
            at: at.to_string(),
            kind,
        });
        (self.sites.len() - 1) as u32
    }

    pub(crate) fn kernel(&mut self, p: &Program) -> Result<Kernel, EmitError> {
        let mut params = Vec::new();
        for (pos, (name, ty)) in p.params.iter().enumerate() {
            let fixed = self.fixed.get(pos).cloned().flatten();
            let (kind, elem) = match ty {
                Type::Array(e) if scalar_name(e).is_some() => ("array", e.as_ref()),
                t if scalar_name(t).is_some() => ("scalar", t),
                t => {
                    return Err(EmitError::Unsupported(format!(
                        "parameter `{name}` has type {t}: kernels take scalars and flat \
                         arrays of scalars only (nested arrays are not flattened yet)"
                    )))
                }
            };
            if let (Some(FixedVal::Len(n)), "array") = (&fixed, kind) {
                if *n >= prefetch::MIN_LEN {
                    self.large.insert(name.clone());
                }
            }
            let c = self.declare(name, ty.clone());
            let narrow = kind == "array"
                && *elem == Type::Nat
                && self.narrow.get(pos).copied().unwrap_or(false);
            if narrow {
                if let Some(b) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
                    b.narrow = true;
                    b.narrow_param = true;
                }
            }
            params.push(Param {
                pos,
                note: safe_note(name),
                name: c,
                kind,
                ty: if narrow {
                    "nat32"
                } else {
                    scalar_name(elem).unwrap_or("real")
                },
                fixed: fixed.map(|f| match f {
                    FixedVal::Nat(n) | FixedVal::Len(n) => Num {
                        text: n.to_string(),
                        class: "finite",
                    },
                    FixedVal::Int(n) => int_num(n),
                    FixedVal::Real(x) => float_num(x),
                    FixedVal::Bool(b) => Num {
                        text: u8::from(b).to_string(),
                        class: "finite",
                    },
                }),
                inout: p.inout.contains(name),
            });
        }
        let tails = tail_draws(p);
        self.safe = safe::analyse(p, self.fixed);
        self.scopes.push(Vec::new());
        let body = self.block(&p.body, &tails)?;
        let at = format!("return {}", p.result);
        let mut result = Vec::new();
        self.leaves(&p.result, &at, &mut result)?;
        // the body's scope stays open while the result is read, as in the interpreter
        self.scopes.pop();
        Ok(Kernel {
            params,
            body,
            result,
            result_note: safe_note(&p.result.to_string()),
            measure: p.measure,
            specialised: self.fixed.iter().any(Option::is_some),
            ir_lines: p.to_string().lines().map(safe_note).collect(),
            cold: std::mem::take(&mut self.outlined),
        })
    }

    /// `body`, a loop's slow branch as built, replaced by a call of a function that runs
    /// it (`cold.rs`), where its plan's names are all scalars in scope; else left as it is.
    fn outline(&mut self, body: &mut Vec<SNode>) {
        let Some(plan) = cold::plan(body) else {
            return;
        };
        let ty_of = |c: &str| {
            self.scopes
                .iter()
                .rev()
                .flat_map(|s| s.iter().rev())
                .find(|b| b.c == c)
                .and_then(|b| scalar_name(&b.ty))
        };
        let Some(result_ty) = ty_of(&plan.result) else {
            return;
        };
        let mut params = Vec::new();
        for x in &plan.reads {
            match ty_of(x) {
                Some(ty) => params.push(ColdParam {
                    name: x.clone(),
                    ty,
                }),
                None => return,
            }
        }
        let name = self.temp("cold");
        let call = SNode::Cold {
            f: name.clone(),
            result: plan.result.clone(),
            ty: result_ty,
            args: plan.reads.clone(),
            out: self.temp("out"),
        };
        self.outlined.push(Outlined {
            name,
            result: plan.result,
            result_ty,
            params,
            body: std::mem::replace(body, vec![call]),
        });
    }

    /// The prefetches that start the body of a loop over `var` (C name `c`, its end
    /// `hi`): [`prefetch::plan`]'s reads whose index reads natural scalars only.
    fn prefetches(
        &mut self,
        var: &str,
        body: &[Stmt],
        c: &str,
        hi: &str,
    ) -> Result<Vec<SNode>, EmitError> {
        if self.large.is_empty() {
            return Ok(Vec::new());
        }
        let large = self.large.clone();
        let mut out = Vec::new();
        for a in prefetch::plan(var, body, &|x| large.contains(x)) {
            let nats = prefetch::names(&a.index)
                .iter()
                .all(|x| self.lookup(x).is_ok_and(|b| b.ty == Type::Nat));
            let source = self.lookup(&a.source)?.clone();
            let table = self.lookup(&a.table)?.clone();
            if !nats || source.ty.array_of() != Some(&Type::Nat) || table.ty.array_of().is_none() {
                continue;
            }
            let idx = self.ahead_index(&a.index, &source, c)?;
            out.push(SNode::Prefetch {
                arr: table.c,
                src: source.c,
                var: c.to_string(),
                hi: hi.to_string(),
                dist: prefetch::DISTANCE,
                idx,
            });
        }
        Ok(out)
    }

    /// A prefetch's index as an expression: `source[c + D]` for [`prefetch::AHEAD`]
    /// (unchecked: the template tests `c + D` against `source`'s length first), names and
    /// natural literals as they are, `+` and `*` unchecked (an index that overflows fails
    /// the template's test against the table's length, or requests another element).
    fn ahead_index(&self, e: &Expr, source: &Bound, c: &str) -> Result<ENode, EmitError> {
        let nat = |n: u64| ENode::Lit {
            ty: "nat",
            num: Num {
                text: n.to_string(),
                class: "finite",
            },
        };
        Ok(match e {
            Expr::Var(x) if x == prefetch::AHEAD => ENode::Get {
                arr: source.c.clone(),
                ety: source.stored(&Type::Nat)?,
                idx: Box::new(ENode::Op {
                    op: "add",
                    args: vec![
                        ENode::Var {
                            name: c.to_string(),
                        },
                        nat(prefetch::DISTANCE),
                    ],
                }),
            },
            Expr::Var(x) => ENode::Var {
                name: self.lookup(x)?.c.clone(),
            },
            Expr::Lit(Lit::Nat(n)) => nat(*n),
            Expr::Prim(p @ (Prim::Add | Prim::Mul), args) => ENode::Op {
                op: if *p == Prim::Add { "add" } else { "mul" },
                args: args
                    .iter()
                    .map(|a| self.ahead_index(a, source, c))
                    .collect::<Result<_, _>>()?,
            },
            _ => return Err(bug("a prefetch index outside its grammar")),
        })
    }

    fn leaves(&mut self, e: &Expr, at: &str, out: &mut Vec<Leaf>) -> Result<(), EmitError> {
        match e {
            Expr::Pair(a, b) => {
                self.leaves(a, at, out)?;
                self.leaves(b, at, out)
            }
            Expr::Lit(Lit::Unit) => {
                out.push(Leaf {
                    kind: "unit",
                    ty: "unit",
                    value: None,
                    arr: None,
                });
                Ok(())
            }
            Expr::Var(x) if self.lookup(x)?.ty.array_of().is_some() => {
                let b = self.lookup(x)?;
                let ety =
                    b.ty.array_of()
                        .and_then(scalar_name)
                        .ok_or_else(|| bug("a result array of arrays"))?;
                out.push(Leaf {
                    kind: "array",
                    ty: ety,
                    value: None,
                    arr: Some(b.c.clone()),
                });
                Ok(())
            }
            _ => {
                let (value, ty) = self.expr(e, at)?;
                out.push(Leaf {
                    kind: "scalar",
                    ty: scalar_name(&ty)
                        .ok_or_else(|| EmitError::Unsupported(format!("a result of type {ty}")))?,
                    value: Some(value),
                    arr: None,
                });
                Ok(())
            }
        }
    }

    fn block(&mut self, body: &[Stmt], tails: &[*const Stmt]) -> Result<Vec<SNode>, EmitError> {
        let mut out = Vec::new();
        for s in body {
            self.stmt(s, tails, &mut out)?;
        }
        Ok(out)
    }

    fn scoped(&mut self, body: &[Stmt], tails: &[*const Stmt]) -> Result<Vec<SNode>, EmitError> {
        self.scopes.push(Vec::new());
        let r = self.block(body, tails);
        self.scopes.pop();
        r
    }

    /// `c = v`, a sum of probs `v` in log space, computed in linear space where that is
    /// exact enough (`linear.rs`), else as `v`: the linear value named, the test, and `v`
    /// in the branch not taken.
    fn linear_sum(
        &mut self,
        c: String,
        v: ENode,
        lin: Lin,
        out: &mut Vec<SNode>,
    ) -> Result<(), EmitError> {
        let c_lin = self.temp("lin");
        let test = lin.test(&c_lin);
        out.push(SNode::Decl {
            name: c_lin.clone(),
            ty: "real",
            value: Some(lin.node.clone()),
            mutable: false,
            check: false,
        });
        out.push(SNode::Decl {
            name: c.clone(),
            ty: "prob",
            value: None,
            mutable: true,
            check: false,
        });
        let set = |value| SNode::Set {
            name: c.clone(),
            value,
            check: false,
        };
        let log = ENode::Call {
            f: "lin_log",
            args: vec![ENode::Var {
                name: c_lin.clone(),
            }],
            site: None,
        };
        out.push(SNode::If {
            cond: test,
            cname: self.temp("c"),
            check: false,
            then: vec![set(log)],
            otherwise: vec![set(v)],
        });
        self.lin.forms.insert(c, lin.named(&c_lin));
        Ok(())
    }

    fn stmt(
        &mut self,
        s: &Stmt,
        tails: &[*const Stmt],
        out: &mut Vec<SNode>,
    ) -> Result<(), EmitError> {
        let head = s.head();
        let at = head.as_str();
        let before = self.sites.len();
        // did building this statement's expressions add an error site (can it fail)?
        let fallible = |b: &Builder<'_>| b.sites.len() > before;
        match s {
            Stmt::Let { name, ty, value } => {
                let (v, _) = self.expr(value, at)?;
                let check = fallible(self);
                let c = self.declare(name, ty.clone());
                let lin = if *ty == Type::Prob && !check {
                    Lin::of(&v, &self.lin)
                } else {
                    None
                };
                if let Some(lin) = lin {
                    if lin.sum {
                        return self.linear_sum(c, v, lin, out);
                    }
                    self.lin.forms.insert(c.clone(), lin);
                }
                out.push(SNode::Decl {
                    name: c,
                    ty: scalar(ty)?,
                    value: Some(v),
                    mutable: false,
                    check,
                });
            }
            Stmt::Var { name, ty, init } => {
                let v = match init {
                    Some(e) => Some(self.expr(e, at)?.0),
                    None => None,
                };
                let check = fallible(self);
                let c = self.declare(name, ty.clone());
                self.lin.mutable.insert(c.clone());
                out.push(SNode::Decl {
                    name: c,
                    ty: scalar(ty)?,
                    value: v,
                    mutable: true,
                    check,
                });
            }
            Stmt::Assign { name, op, value } => {
                let (v, _) = self.expr(value, at)?;
                let b = self.lookup(name)?.clone();
                let old = ENode::Var { name: b.c.clone() };
                let combined = self.combine(*op, &b.ty, old, v, self.safe.add(s), at)?;
                let check = fallible(self);
                out.push(SNode::Set {
                    name: b.c,
                    value: combined,
                    check,
                });
            }
            Stmt::Alloc { name, elem, size } => {
                let (v, _) = self.expr(size, at)?;
                let site = self.site(at, SiteKind::Alloc);
                let c = self.declare(name, Type::array(elem.clone()));
                let narrow = self.safe.narrow(s);
                if narrow {
                    if let Some(b) = self.scopes.last_mut().and_then(|sc| sc.last_mut()) {
                        b.narrow = true;
                    }
                }
                out.push(SNode::Alloc {
                    name: c,
                    ety: if narrow { "nat32" } else { scalar(elem)? },
                    size: v,
                    site,
                    check: true,
                });
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let (idx, ity) = self.expr(index, at)?;
                let before_value = self.sites.len();
                let b = self.lookup(array)?.clone();
                let elem =
                    b.ty.array_of()
                        .cloned()
                        .ok_or_else(|| bug("a store into a scalar"))?;
                let ety = b.stored(&elem)?;
                let ix = self.temp("ix");
                let old = ENode::Elem {
                    arr: b.c.clone(),
                    ety,
                    ix: ix.clone(),
                };
                // the value's reads of the element being stored (`a[i] = f(a[i])`, as an
                // incremental update's `remove` writes a count less one) read it at the
                // index the store has already computed and checked
                self.stored = Some((array.clone(), index.clone(), old.clone()));
                let v = self.expr(value, at);
                self.stored = None;
                let (v, _) = v?;
                let mut combined = self.combine(*op, &elem, old, v, self.safe.add(s), at)?;
                if b.narrow_param {
                    // a caller's 32-bit table: a value past it is an error, never cut
                    let site = self.site(
                        at,
                        SiteKind::Arith {
                            what: "a 32-bit count".into(),
                        },
                    );
                    combined = ENode::Call {
                        f: "to_nat32",
                        args: vec![combined],
                        site: Some(site),
                    };
                }
                let check = self.sites.len() > before_value;
                let site = (!self.safe.store(s)).then(|| {
                    self.site(
                        at,
                        SiteKind::Index {
                            array: array.clone(),
                        },
                    )
                });
                out.push(SNode::Store {
                    arr: b.c,
                    ety,
                    ity: scalar(&ity)?,
                    ix,
                    idx,
                    value: combined,
                    site,
                    check,
                });
            }
            Stmt::For { var, lo, hi, body } => {
                let (l, ty) = self.expr(lo, at)?;
                let (h, _) = self.expr(hi, at)?;
                let check = fallible(self);
                let lo_name = self.temp("lo");
                let hi_name = self.temp("hi");
                self.scopes.push(Vec::new());
                self.lin.loop_depth += 1;
                let c = self.declare(var, ty.clone());
                let inner = self.block(body, tails).and_then(|mut inner| {
                    if ty == Type::Nat {
                        let ahead = self.prefetches(var, body, &c, &hi_name)?;
                        inner.splice(0..0, ahead);
                    }
                    Ok(inner)
                });
                self.lin.loop_depth -= 1;
                self.scopes.pop();
                out.push(SNode::For {
                    var: c,
                    ty: scalar(&ty)?,
                    lo: l,
                    hi: h,
                    lo_name,
                    hi_name,
                    check,
                    note: safe_note(at.trim_end_matches(" {")),
                    body: inner?,
                });
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let (c, _) = self.expr(cond, at)?;
                let check = fallible(self);
                let cname = self.temp("c");
                let (ir_then, ir_otherwise) = (then, otherwise);
                let mut then = self.scoped(ir_then, tails)?;
                let mut otherwise = self.scoped(ir_otherwise, tails)?;
                if self.lin.loop_depth > 0 {
                    let rare = products::rare_branch(cond);
                    if rare == Some(false) || cold::candidate(ir_otherwise, ir_then) {
                        self.outline(&mut otherwise);
                    } else if rare == Some(true) || cold::candidate(ir_then, ir_otherwise) {
                        self.outline(&mut then);
                    }
                }
                out.push(SNode::If {
                    cond: c,
                    cname,
                    check,
                    then,
                    otherwise,
                });
            }
            Stmt::Draw {
                name,
                ty,
                dist,
                args,
            } => {
                out.push(SNode::Note {
                    text: safe_note(at),
                });
                if *dist == Dist::Categorical {
                    let arr = match args.as_slice() {
                        [Expr::Var(a)] => self.lookup(a)?.c.clone(),
                        _ => {
                            return Err(EmitError::Unsupported(
                                "a categorical over an array expression other than a name".into(),
                            ))
                        }
                    };
                    let site = self.site(at, SiteKind::Draw { dist: dist.name() });
                    let c = self.declare(name, ty.clone());
                    out.push(SNode::Categorical {
                        name: c,
                        arr,
                        site,
                        tail: tails.contains(&(s as *const Stmt)),
                    });
                } else {
                    let mut vs = Vec::new();
                    for a in args {
                        vs.push(self.expr(a, at)?.0);
                    }
                    let site = self.site(at, SiteKind::Draw { dist: dist.name() });
                    let c = self.declare(name, ty.clone());
                    out.push(SNode::OtherDraw {
                        name: c,
                        ty: scalar(ty)?,
                        dist: dist.name(),
                        args: vs,
                        site,
                        check: true,
                    });
                }
            }
            Stmt::Factor(w) => {
                let (v, _) = self.expr(w, at)?;
                let check = fallible(self);
                out.push(SNode::Factor { value: v, check });
            }
            Stmt::Observe { dist, args, value } => {
                let mut vs = Vec::new();
                let mut arr = None;
                if *dist == Dist::Categorical {
                    arr = Some(self.array_name(args)?);
                } else {
                    for a in args {
                        vs.push(self.expr(a, at)?.0);
                    }
                }
                let (v, _) = self.expr(value, at)?;
                let site = self.site(at, SiteKind::Draw { dist: dist.name() });
                out.push(SNode::Observe {
                    dist: dist.name(),
                    args: vs,
                    arr,
                    value: v,
                    site,
                    check: true,
                });
            }
            Stmt::Reject => out.push(SNode::Reject),
        }
        Ok(())
    }

    /// The sanitised name of a categorical's one argument, an array.
    fn array_name(&self, args: &[Expr]) -> Result<String, EmitError> {
        match args {
            [Expr::Var(a)] => Ok(self.lookup(a)?.c.clone()),
            _ => Err(EmitError::Unsupported(
                "a categorical over an array expression other than a name".into(),
            )),
        }
    }

    /// `old op v` at type `t` (a compound assignment), as one expression; `unchecked`: an
    /// addition `safe.rs` proved cannot overflow, a plain `add` on a `nat` or `int`.
    fn combine(
        &mut self,
        op: AssignOp,
        t: &Type,
        old: ENode,
        v: ENode,
        unchecked: bool,
        at: &str,
    ) -> Result<ENode, EmitError> {
        let p = match op {
            AssignOp::Set => return Ok(v),
            AssignOp::Add if unchecked && matches!(t, Type::Nat | Type::Int) => {
                return Ok(ENode::Op {
                    op: "add",
                    args: vec![old, v],
                })
            }
            AssignOp::Add => Prim::Add,
            AssignOp::Mul => Prim::Mul,
            AssignOp::Max => Prim::Max,
        };
        self.prim_node(p, vec![(old, t.clone()), (v, t.clone())], at)
            .map(|(e, _)| e)
    }

    /// An expression node and its type.
    fn expr(&mut self, e: &Expr, at: &str) -> Result<(ENode, Type), EmitError> {
        Ok(match e {
            Expr::Lit(l) => {
                let num = match *l {
                    Lit::Nat(n) => Num {
                        text: n.to_string(),
                        class: "finite",
                    },
                    Lit::Int(n) => int_num(n),
                    Lit::Real(x) | Lit::Prob(x) => float_num(x),
                    Lit::Bool(b) => Num {
                        text: b.to_string(),
                        class: "finite",
                    },
                    Lit::Unit => {
                        return Err(EmitError::Unsupported("`()` inside an expression".into()))
                    }
                };
                let ty = l.ty();
                (
                    ENode::Lit {
                        ty: scalar(&ty)?,
                        num,
                    },
                    ty,
                )
            }
            Expr::Var(x) => {
                let b = self.lookup(x)?;
                if b.ty.array_of().is_some() {
                    return Err(EmitError::Unsupported(format!(
                        "the array `{x}` used as a value"
                    )));
                }
                (ENode::Var { name: b.c.clone() }, b.ty.clone())
            }
            Expr::Index(a, i) if matches!((a.as_ref(), &self.stored), (Expr::Var(x), Some((arr, ix, _))) if x == arr && **i == *ix) =>
            {
                let Some((arr, _, elem)) = self.stored.clone() else {
                    return Err(bug("the stored element vanished"));
                };
                let ty = self
                    .lookup(&arr)?
                    .ty
                    .array_of()
                    .cloned()
                    .ok_or_else(|| bug(format!("`{arr}` stored into but not an array")))?;
                (elem, ty)
            }
            Expr::Index(a, i) => {
                let Expr::Var(x) = a.as_ref() else {
                    return Err(EmitError::Unsupported(
                        "an element of an array of arrays (nested arrays are not flattened yet)"
                            .into(),
                    ));
                };
                // a row's base plus a column, proven in bounds and unable to overflow:
                // added unchecked
                let (idx, ity) = match i.as_ref() {
                    Expr::Prim(Prim::Add, parts) if self.safe.index_add(i) && parts.len() == 2 => {
                        let (l, _) = self.expr(&parts[0], at)?;
                        let (r, _) = self.expr(&parts[1], at)?;
                        (
                            ENode::Op {
                                op: "add",
                                args: vec![l, r],
                            },
                            Type::Nat,
                        )
                    }
                    _ => self.expr(i, at)?,
                };
                let b = self.lookup(x)?.clone();
                let elem =
                    b.ty.array_of()
                        .cloned()
                        .ok_or_else(|| bug(format!("`{x}` indexed but not an array")))?;
                if self.safe.read(e) && ity == Type::Nat {
                    return Ok((
                        ENode::Get {
                            ety: b.stored(&elem)?,
                            arr: b.c,
                            idx: Box::new(idx),
                        },
                        elem,
                    ));
                }
                let site = self.site(
                    at,
                    SiteKind::Index {
                        array: a.to_string(),
                    },
                );
                (
                    ENode::Read {
                        ety: b.stored(&elem)?,
                        arr: b.c,
                        ity: scalar(&ity)?,
                        idx: Box::new(idx),
                        site,
                    },
                    elem,
                )
            }
            // `int2nat(nat2int(a) + -nat2int(b))`, a count taken down (`remove`): one
            // helper, failing as the four conversions and operations would
            Expr::Convert(Coercion::Int2Nat, x) if nat_difference(x).is_some() => {
                let Some((a, b)) = nat_difference(x) else {
                    return Err(bug("a natural difference that is not one"));
                };
                let (va, _) = self.expr(a, at)?;
                let (vb, _) = self.expr(b, at)?;
                let mut site = |what: &str| {
                    self.site(
                        at,
                        SiteKind::Arith {
                            what: what.to_string(),
                        },
                    )
                };
                let (sa, sb, sr) = (site("nat2int"), site("nat2int"), site("int2nat"));
                let lit = |n: u32| ENode::Lit {
                    ty: "nat",
                    num: Num {
                        text: n.to_string(),
                        class: "finite",
                    },
                };
                (
                    ENode::Call {
                        f: "nat_sub",
                        args: vec![lit(sb), lit(sr), va, vb],
                        site: Some(sa),
                    },
                    Type::Nat,
                )
            }
            Expr::Convert(c, x) => {
                let (v, _) = self.expr(x, at)?;
                let (f, fallible) = match c {
                    Coercion::Nat2Int => ("nat2int", true),
                    Coercion::Nat2Prob => ("nat2prob", false),
                    Coercion::Nat2Real => ("nat2real", false),
                    Coercion::Int2Real => ("int2real", false),
                    Coercion::Prob2Real => ("prob2real", false),
                    Coercion::Int2Nat => ("int2nat", true),
                    Coercion::Real2Prob => ("real2prob", true),
                    Coercion::Real2Int => ("real2int", true),
                };
                let site = fallible.then(|| {
                    self.site(
                        at,
                        SiteKind::Arith {
                            what: c.name().to_string(),
                        },
                    )
                });
                (
                    ENode::Call {
                        f,
                        args: vec![v],
                        site,
                    },
                    c.to_type(),
                )
            }
            Expr::Pair(..) => {
                return Err(EmitError::Unsupported(
                    "a pair inside an expression (pairs are results only)".into(),
                ))
            }
            Expr::Prim(Prim::Size, args) => {
                let Some(Expr::Var(x)) = args.first() else {
                    return Err(EmitError::Unsupported(
                        "the size of an array expression other than a name".into(),
                    ));
                };
                let b = self.lookup(x)?;
                (ENode::Size { arr: b.c.clone() }, Type::Nat)
            }
            Expr::Prim(p, args) => {
                let mut vs = Vec::new();
                for a in args {
                    vs.push(self.expr(a, at)?);
                }
                self.prim_node(*p, vs, at)?
            }
        })
    }

    /// A primitive over built arguments: the helper (or operator) for its types.
    fn prim_node(
        &mut self,
        p: Prim,
        args: Vec<(ENode, Type)>,
        at: &str,
    ) -> Result<(ENode, Type), EmitError> {
        use Prim::*;
        let t0 = args.first().map(|a| a.1.clone()).unwrap_or(Type::Prob);
        let ty0 = scalar_name(&t0);
        let unsupported = || EmitError::Unsupported(format!("primitive {p:?} at type {t0}"));
        let mut site_for = |b: &mut Builder<'_>| {
            b.site(
                at,
                SiteKind::Arith {
                    what: format!("{p:?}"),
                },
            )
        };
        let nodes: Vec<ENode> = args.iter().map(|a| a.0.clone()).collect();
        // n-ary arithmetic: an operator on reals, a left fold of helpers otherwise
        let fold = |b: &mut Builder<'_>,
                    f: &'static str,
                    fallible: bool,
                    nodes: Vec<ENode>,
                    site_for: &mut dyn FnMut(&mut Builder<'_>) -> u32|
         -> Result<ENode, EmitError> {
            let mut it = nodes.into_iter();
            let mut acc = it.next().ok_or_else(|| bug("an empty sum"))?;
            for x in it {
                let site = fallible.then(|| site_for(b));
                acc = ENode::Call {
                    f,
                    args: vec![acc, x],
                    site,
                };
            }
            Ok(acc)
        };
        let call = |f: &'static str, nodes: Vec<ENode>, site: Option<u32>| ENode::Call {
            f,
            args: nodes,
            site,
        };
        let (node, ty) = match (p, ty0) {
            (Add, Some("real")) => (
                ENode::Op {
                    op: "add",
                    args: nodes,
                },
                t0,
            ),
            (Mul, Some("real")) => (
                ENode::Op {
                    op: "mul",
                    args: nodes,
                },
                t0,
            ),
            (Add | Mul | Min | Max, Some(t)) => {
                let (f, fallible) = match (p, t) {
                    (Add, "nat") => ("nat_add", true),
                    (Add, "int") => ("int_add", true),
                    (Add, "prob") => ("prob_add", false),
                    (Mul, "nat") => ("nat_mul", true),
                    (Mul, "int") => ("int_mul", true),
                    (Mul, "prob") => ("prob_mul", false),
                    (Min, "nat") => ("nat_min", false),
                    (Max, "nat") => ("nat_max", false),
                    (Min, "int") => ("int_min", false),
                    (Max, "int") => ("int_max", false),
                    (Min, "real" | "prob") => ("float_min", false),
                    (Max, "real" | "prob") => ("float_max", false),
                    _ => return Err(unsupported()),
                };
                (fold(self, f, fallible, nodes, &mut site_for)?, t0)
            }
            (Neg, Some("int")) => {
                let s = site_for(self);
                (call("int_neg", nodes, Some(s)), t0)
            }
            (Neg, Some("real")) => (call("real_neg", nodes, None), t0),
            (Recip, Some("real")) => (call("real_recip", nodes, None), t0),
            (Recip, Some("prob")) => (call("prob_recip", nodes, None), t0),
            (Pow, Some(t)) => {
                let (f, fallible) = match t {
                    "nat" => ("nat_pow", true),
                    "int" => ("int_pow", true),
                    "real" => ("real_pow", false),
                    "prob" => ("prob_pow", false),
                    _ => return Err(unsupported()),
                };
                let site = fallible.then(|| site_for(self));
                (call(f, nodes, site), t0)
            }
            (RealPow, _) => (call("prob_realpow", nodes, None), Type::Prob),
            (NatRoot, _) => {
                let s = site_for(self);
                (call("prob_natroot", nodes, Some(s)), Type::Prob)
            }
            (Exp, _) => (call("real_exp", nodes, None), Type::Prob),
            (Log, _) => (call("prob_log", nodes, None), Type::Real),
            (Sqrt, _) => (call("prob_sqrt", nodes, None), Type::Prob),
            (Pi, _) => (call("prob_pi", nodes, None), Type::Prob),
            (Infinity, _) => (call("prob_infinity", nodes, None), Type::Prob),
            (Abs, Some("int")) => (call("int_abs", nodes, None), Type::Nat),
            (Abs, Some("real")) => (call("real_abs", nodes, None), Type::Prob),
            (Signum, Some("int")) => (call("int_signum", nodes, None), t0),
            (Signum, Some("real")) => (call("real_signum", nodes, None), t0),
            (Floor, Some("prob")) => {
                let s = site_for(self);
                (call("prob_floor", nodes, Some(s)), Type::Nat)
            }
            (Floor, Some("real")) => {
                let s = site_for(self);
                (call("real2int", nodes, Some(s)), Type::Int)
            }
            (Erf, Some("real")) => (call("real_erf", nodes, None), t0),
            (Erf, Some("prob")) => (call("prob_erf", nodes, None), t0),
            (Choose, _) => {
                let s = site_for(self);
                (call("nat_choose", nodes, Some(s)), Type::Nat)
            }
            (GammaFunc, _) => {
                let s = site_for(self);
                (call("real_gamma", nodes, Some(s)), Type::Prob)
            }
            (BetaFunc, _) => {
                let s = site_for(self);
                (call("prob_beta", nodes, Some(s)), Type::Prob)
            }
            (Sin, _) => (call("real_sin", nodes, None), Type::Real),
            (Cos, _) => (call("real_cos", nodes, None), Type::Real),
            (Tan, _) => (call("real_tan", nodes, None), Type::Real),
            (Asin, _) => (call("real_asin", nodes, None), Type::Real),
            (Acos, _) => (call("real_acos", nodes, None), Type::Real),
            (Atan, _) => (call("real_atan", nodes, None), Type::Real),
            (Sinh, _) => (call("real_sinh", nodes, None), Type::Real),
            (Cosh, _) => (call("real_cosh", nodes, None), Type::Real),
            (Tanh, _) => (call("real_tanh", nodes, None), Type::Real),
            (Asinh, _) => (call("real_asinh", nodes, None), Type::Real),
            (Acosh, _) => (call("real_acosh", nodes, None), Type::Real),
            (Atanh, _) => (call("real_atanh", nodes, None), Type::Real),
            (Lt | Le | Eq | Ne, Some(_)) => {
                let op = match p {
                    Lt => "lt",
                    Le => "le",
                    Eq => "eq",
                    _ => "ne",
                };
                (ENode::Op { op, args: nodes }, Type::Bool)
            }
            (And, _) => (
                fold(self, "bool_and", false, nodes, &mut site_for)?,
                Type::Bool,
            ),
            (Or, _) => (
                fold(self, "bool_or", false, nodes, &mut site_for)?,
                Type::Bool,
            ),
            (Not, _) => (call("bool_not", nodes, None), Type::Bool),
            (Xor, _) => (call("bool_xor", nodes, None), Type::Bool),
            (Iff, _) => (call("bool_iff", nodes, None), Type::Bool),
            (Impl, _) => (call("bool_impl", nodes, None), Type::Bool),
            (Nand, _) => (call("bool_nand", nodes, None), Type::Bool),
            (Nor, _) => (call("bool_nor", nodes, None), Type::Bool),
            _ => return Err(unsupported()),
        };
        Ok((node, ty))
    }
}

fn int_num(n: i64) -> Num {
    if n == i64::MIN {
        Num {
            text: String::new(),
            class: "intmin",
        }
    } else {
        Num {
            text: n.to_string(),
            class: "finite",
        }
    }
}

fn scalar(t: &Type) -> Result<&'static str, EmitError> {
    scalar_name(t).ok_or_else(|| EmitError::Unsupported(format!("a value of type {t}")))
}

/// The categorical draws in tail position: at the top level or in `if` branches (never
/// in a loop), followed only by copies of the drawn value into accumulators, with
/// nothing after the enclosing `if`s, and the result one of those names. At such a draw
/// the driver reads every value's weight off one stop and replays nothing.
fn tail_draws(p: &Program) -> Vec<*const Stmt> {
    let Expr::Var(result) = &p.result else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // walk the top-level body; only its last statement (and nested `if`s' last ones)
    // can hold a tail draw
    fn walk(body: &[Stmt], result: &str, out: &mut Vec<*const Stmt>) -> bool {
        // from the end: copies `acc = x`, then either the draw of x or an `if`
        let mut names: Vec<&str> = vec![result];
        for s in body.iter().rev() {
            match s {
                Stmt::Assign {
                    name,
                    op: AssignOp::Set,
                    value: Expr::Var(x),
                } if names.contains(&name.as_str()) => names.push(x),
                Stmt::Draw {
                    name,
                    dist: Dist::Categorical,
                    ..
                } if names.contains(&name.as_str()) => {
                    out.push(s as *const Stmt);
                    return true;
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    for n in names.iter() {
                        walk(then, n, out);
                        walk(otherwise, n, out);
                    }
                    return true;
                }
                _ => return false,
            }
        }
        false
    }
    walk(&p.body, result, &mut out);
    out
}

/// `(a, b)` where `e` is `nat2int(a) + -nat2int(b)` (both naturals): the difference of
/// two naturals as an integer, which `int2nat` takes back.
fn nat_difference(e: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Prim(Prim::Add, parts) = e else {
        return None;
    };
    let [Expr::Convert(Coercion::Nat2Int, a), Expr::Prim(Prim::Neg, neg)] = parts.as_slice() else {
        return None;
    };
    let [Expr::Convert(Coercion::Nat2Int, b)] = neg.as_slice() else {
        return None;
    };
    Some((a, b))
}
