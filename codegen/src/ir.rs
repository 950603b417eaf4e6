//! The loop IR (issue 11, deliverable 3): what simplified terms are lowered into before
//! C or Rust kernels are written. A [`Program`] is typed parameters, a body of statements
//! and a result expression. Statements are imperative (immutable `let`s, mutable scalar
//! accumulators, zero-filled arrays of a size known at allocation, element updates,
//! `for` loops over explicit half-open ranges, `if`); expressions are pure and use the
//! algebra's own primitives (`slic_algebra::Prim`) and coercions (`Coercion`), so the IR
//! has no second list of operations.
//!
//! `prob` values are stored in log space (a `prob` is an `f64` holding `ln p`), as the
//! reference interpreter stores them: the printer and the interpreter read the type to
//! know it, and a change of representation is always an explicit [`Expr::Convert`].
//!
//! A measure program also draws (`draw x ~ normal(m, s)`), weights (`factor w`) and
//! rejects: one run of its body is one weighted outcome.
//!
//! This file holds data and its printer only: whether a program is well formed is
//! `verify.rs`'s question, what it computes is `interp.rs`'s. There is no parser: programs
//! are built by lowering passes (and by hand in tests).

use slic_algebra::{Coercion, Dist, Prim, Type};

pub(crate) mod walk;
use std::fmt;

/// A literal. `Prob` holds the natural logarithm of the value (log space).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lit {
    Nat(u64),
    Int(i64),
    Real(f64),
    /// `ln p` of a non-negative `p`.
    Prob(f64),
    Bool(bool),
    /// `()`: only as the result of a measure over `unit` (its mass is the answer).
    Unit,
}

impl Lit {
    /// The prob literal of a linear value `p >= 0` (stored as `ln p`).
    pub fn prob(p: f64) -> Lit {
        Lit::Prob(p.ln())
    }

    /// The literal's type.
    pub fn ty(self) -> Type {
        match self {
            Lit::Nat(_) => Type::Nat,
            Lit::Int(_) => Type::Int,
            Lit::Real(_) => Type::Real,
            Lit::Prob(_) => Type::Prob,
            Lit::Bool(_) => Type::Bool,
            Lit::Unit => Type::Unit,
        }
    }
}

/// A pure expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Lit),
    /// A parameter, `let`, accumulator, loop index or array, by name.
    Var(String),
    /// A primitive of the algebra applied to its arguments; the result type follows from
    /// the arguments' types (`verify::expr_type`). `Prim::Size` reads an array's length;
    /// `Prim::Reduce` takes a function and has no place here (the verifier rejects it).
    Prim(Prim, Vec<Expr>),
    /// `a[i]`: an element of an array (an array of arrays is read `a[i][j]`).
    Index(Box<Expr>, Box<Expr>),
    /// An explicit change of type, e.g. `prob2real` out of log space.
    Convert(Coercion, Box<Expr>),
    /// `(a, b)`: a pair, only where a program returns one (a measure over pairs).
    Pair(Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn var(name: &str) -> Expr {
        Expr::Var(name.to_string())
    }
    pub fn nat(n: u64) -> Expr {
        Expr::Lit(Lit::Nat(n))
    }
    pub fn int(n: i64) -> Expr {
        Expr::Lit(Lit::Int(n))
    }
    pub fn real(x: f64) -> Expr {
        Expr::Lit(Lit::Real(x))
    }
    /// A prob literal of linear value `p`.
    pub fn prob(p: f64) -> Expr {
        Expr::Lit(Lit::prob(p))
    }
    pub fn bool(b: bool) -> Expr {
        Expr::Lit(Lit::Bool(b))
    }
    pub fn prim(p: Prim, args: Vec<Expr>) -> Expr {
        Expr::Prim(p, args)
    }
    /// `a[i]`
    pub fn index(a: Expr, i: Expr) -> Expr {
        Expr::Index(Box::new(a), Box::new(i))
    }
    pub fn convert(c: Coercion, e: Expr) -> Expr {
        Expr::Convert(c, Box::new(e))
    }
    /// `size(a)`
    pub fn size(a: Expr) -> Expr {
        Expr::Prim(Prim::Size, vec![a])
    }
}

/// How an assignment combines the new value with the old one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `x = e`: the only assignment that does not read `x`.
    Set,
    /// `x += e` (for `prob`, a log-sum-exp of the two logarithms).
    Add,
    /// `x *= e`
    Mul,
    /// `x max= e`: the running maximum of a log-sum-exp.
    Max,
}

impl AssignOp {
    fn symbol(self) -> &'static str {
        match self {
            AssignOp::Set => "=",
            AssignOp::Add => "+=",
            AssignOp::Mul => "*=",
            AssignOp::Max => "max=",
        }
    }
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let x: T = e`: an immutable scalar.
    Let { name: String, ty: Type, value: Expr },
    /// `var x: T` or `var x: T = e`: a mutable scalar accumulator, unwritten until
    /// assigned when `init` is `None`.
    Var {
        name: String,
        ty: Type,
        init: Option<Expr>,
    },
    /// `x op e` on an accumulator.
    Assign {
        name: String,
        op: AssignOp,
        value: Expr,
    },
    /// `alloc a: array(T) of n`: a zero-filled array of scalars, its size evaluated once.
    Alloc {
        name: String,
        elem: Type,
        size: Expr,
    },
    /// `a[i] op e` on an allocated array.
    Store {
        array: String,
        index: Expr,
        op: AssignOp,
        value: Expr,
    },
    /// `for i in lo..hi { body }`, `hi` exclusive; `i` has the bounds' type.
    For {
        var: String,
        lo: Expr,
        hi: Expr,
        body: Vec<Stmt>,
    },
    /// `if c { then } else { otherwise }`
    If {
        cond: Expr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    /// `draw x: T ~ d(args)`: a draw from a primitive distribution (measure programs
    /// only). `categorical` takes an array of `prob` weights (normalised when drawn; all
    /// zero is the zero measure). A finite draw is enumerated by exact inference, others
    /// are sampled.
    Draw {
        name: String,
        ty: Type,
        dist: Dist,
        args: Vec<Expr>,
    },
    /// `factor w`: the run's weight is multiplied by the `prob` `w` (measure programs only).
    Factor(Expr),
    /// `observe d(args) at v`: the run's weight is multiplied by the density of `d(args)`
    /// at `v` (with respect to lebesgue on reals and probs, counting on naturals): Hakaru's
    /// `observe(d(args), v)` (measure programs only).
    Observe {
        dist: Dist,
        args: Vec<Expr>,
        value: Expr,
    },
    /// `reject`: the run has weight 0 and stops (measure programs only).
    Reject,
}

impl Stmt {
    pub fn let_(name: &str, ty: Type, value: Expr) -> Stmt {
        Stmt::Let {
            name: name.to_string(),
            ty,
            value,
        }
    }
    pub fn var(name: &str, ty: Type, init: Option<Expr>) -> Stmt {
        Stmt::Var {
            name: name.to_string(),
            ty,
            init,
        }
    }
    pub fn assign(name: &str, op: AssignOp, value: Expr) -> Stmt {
        Stmt::Assign {
            name: name.to_string(),
            op,
            value,
        }
    }
    pub fn alloc(name: &str, elem: Type, size: Expr) -> Stmt {
        Stmt::Alloc {
            name: name.to_string(),
            elem,
            size,
        }
    }
    pub fn store(array: &str, index: Expr, op: AssignOp, value: Expr) -> Stmt {
        Stmt::Store {
            array: array.to_string(),
            index,
            op,
            value,
        }
    }
    pub fn for_(var: &str, lo: Expr, hi: Expr, body: Vec<Stmt>) -> Stmt {
        Stmt::For {
            var: var.to_string(),
            lo,
            hi,
            body,
        }
    }
    pub fn draw(name: &str, ty: Type, dist: Dist, args: Vec<Expr>) -> Stmt {
        Stmt::Draw {
            name: name.to_string(),
            ty,
            dist,
            args,
        }
    }
    pub fn if_(cond: Expr, then: Vec<Stmt>, otherwise: Vec<Stmt>) -> Stmt {
        Stmt::If {
            cond,
            then,
            otherwise,
        }
    }

    /// The statement's first printed line, without indentation: what errors name.
    pub fn head(&self) -> String {
        match self {
            Stmt::Let { name, ty, value } => format!("let {name}: {ty} = {value}"),
            Stmt::Var {
                name,
                ty,
                init: None,
            } => format!("var {name}: {ty}"),
            Stmt::Var {
                name,
                ty,
                init: Some(e),
            } => format!("var {name}: {ty} = {e}"),
            Stmt::Assign { name, op, value } => format!("{name} {} {value}", op.symbol()),
            Stmt::Alloc { name, elem, size } => format!("alloc {name}: array({elem}) of {size}"),
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                format!("{array}[{index}] {} {value}", op.symbol())
            }
            Stmt::For { var, lo, hi, .. } => format!("for {var} in {lo}..{hi} {{"),
            Stmt::If { cond, .. } => format!("if {cond} {{"),
            Stmt::Draw {
                name,
                ty,
                dist,
                args,
            } => {
                let args: Vec<String> = args.iter().map(ToString::to_string).collect();
                format!("draw {name}: {ty} ~ {}({})", dist.name(), args.join(", "))
            }
            Stmt::Factor(w) => format!("factor {w}"),
            Stmt::Observe { dist, args, value } => {
                let args: Vec<String> = args.iter().map(ToString::to_string).collect();
                format!("observe {}({}) at {value}", dist.name(), args.join(", "))
            }
            Stmt::Reject => "reject".to_string(),
        }
    }
}

/// A program: typed parameters, a body, a result. A measure program (`measure` set) may
/// draw, weight and reject: one run of its body is one weighted outcome, and its meaning
/// is the measure of the result over all runs. Other programs never draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub params: Vec<(String, Type)>,
    pub body: Vec<Stmt>,
    pub result: Expr,
    pub measure: bool,
    /// The array parameters the body may store into (`inout`): a caller's array is
    /// changed in place (`interp::run_inout`, a kernel's prepared arguments). Empty for
    /// every program a term lowers to; the incremental statistics of a Gibbs update
    /// (`incremental.rs`) are kept in such arrays between calls.
    pub inout: Vec<String>,
}

impl Program {
    /// The program with another body (parameters, result and kind kept): what a pass
    /// that rewrites statements returns.
    pub fn with_body(&self, body: Vec<Stmt>) -> Program {
        Program {
            params: self.params.clone(),
            body,
            result: self.result.clone(),
            measure: self.measure,
            inout: self.inout.clone(),
        }
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lit::Nat(n) => write!(f, "{n}"),
            Lit::Int(n) => write!(f, "{n}"),
            // `{:?}` keeps the decimal point, so a real never reads as an integer
            Lit::Real(x) => write!(f, "{x:?}"),
            // the linear value, marked: the reader sees the number, the type says log space;
            // one too small or too large for an f64 by its logarithm
            Lit::Prob(l) if l.is_finite() && (l.exp() == 0.0 || l.exp().is_infinite()) => {
                write!(f, "exp_prob({l:?})")
            }
            Lit::Prob(l) => write!(f, "prob({:?})", l.exp()),
            Lit::Bool(b) => write!(f, "{b}"),
            Lit::Unit => write!(f, "()"),
        }
    }
}

/// The infix spelling of a primitive, where it has one.
fn infix(p: Prim) -> Option<&'static str> {
    Some(match p {
        Prim::Add => "+",
        Prim::Mul => "*",
        Prim::Lt => "<",
        Prim::Le => "<=",
        Prim::Eq => "==",
        Prim::Ne => "/=",
        Prim::And => "&&",
        Prim::Or => "||",
        Prim::Pow => "^",
        _ => return None,
    })
}

/// The name a primitive is called by when printed as a call.
fn call_name(p: Prim) -> String {
    match p {
        Prim::Pi => "pi".to_string(),
        Prim::Infinity => "∞".to_string(),
        Prim::Size => "size".to_string(),
        _ => p
            .name()
            .map_or_else(|| format!("{p:?}").to_lowercase(), str::to_string),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Lit(l) => write!(f, "{l}"),
            Expr::Var(x) => write!(f, "{x}"),
            Expr::Index(a, i) => write!(f, "{a}[{i}]"),
            Expr::Convert(c, e) => write!(f, "{}({e})", c.name()),
            Expr::Pair(a, b) => write!(f, "({a}, {b})"),
            Expr::Prim(Prim::Neg, args) if args.len() == 1 => write!(f, "-({})", args[0]),
            // fully parenthesised: the text is for reading, never for precedence puzzles
            Expr::Prim(p, args) => match infix(*p) {
                Some(op) if args.len() >= 2 => {
                    write!(f, "(")?;
                    for (k, a) in args.iter().enumerate() {
                        if k > 0 {
                            write!(f, " {op} ")?;
                        }
                        write!(f, "{a}")?;
                    }
                    write!(f, ")")
                }
                _ if args.is_empty() => write!(f, "{}", call_name(*p)),
                _ => {
                    write!(f, "{}(", call_name(*p))?;
                    for (k, a) in args.iter().enumerate() {
                        if k > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{a}")?;
                    }
                    write!(f, ")")
                }
            },
        }
    }
}

fn write_block(f: &mut fmt::Formatter<'_>, body: &[Stmt], depth: usize) -> fmt::Result {
    for s in body {
        write_stmt(f, s, depth)?;
    }
    Ok(())
}

fn write_stmt(f: &mut fmt::Formatter<'_>, s: &Stmt, depth: usize) -> fmt::Result {
    let pad = "    ".repeat(depth);
    writeln!(f, "{pad}{}", s.head())?;
    match s {
        Stmt::For { body, .. } => {
            write_block(f, body, depth + 1)?;
            writeln!(f, "{pad}}}")
        }
        Stmt::If {
            then, otherwise, ..
        } => {
            write_block(f, then, depth + 1)?;
            if otherwise.is_empty() {
                writeln!(f, "{pad}}}")
            } else {
                writeln!(f, "{pad}}} else {{")?;
                write_block(f, otherwise, depth + 1)?;
                writeln!(f, "{pad}}}")
            }
        }
        _ => Ok(()),
    }
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_stmt(f, self, 0)
    }
}

/// One statement a line, blocks indented by four spaces, the result last.
impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fn(")?;
        for (k, (x, t)) in self.params.iter().enumerate() {
            if k > 0 {
                write!(f, ", ")?;
            }
            if self.inout.contains(x) {
                write!(f, "{x}: inout {t}")?;
            } else {
                write!(f, "{x}: {t}")?;
            }
        }
        if self.measure {
            writeln!(f, ") measure {{")?;
        } else {
            writeln!(f, ") {{")?;
        }
        write_block(f, &self.body, 1)?;
        writeln!(f, "    return {}", self.result)?;
        writeln!(f, "}}")
    }
}
