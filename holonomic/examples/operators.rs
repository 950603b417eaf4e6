//! The operators of continuous factors, as JSON, for the independent SymPy oracle
//! (`tests/oracle/holonomic_sympy.py`, issue 4 item 5).
//!
//! Reads programs from standard input, one a line (`fn mu real: fn x real:
//! exp(-(x-mu)^2/2)`; the LAST `fn` parameter is the variable; empty lines and `#`
//! comments are skipped), computes [`slic_holonomic::ode::operator`] of each body, and
//! prints one JSON object a line: the input, the variable and the symbols with their
//! types, the factor and the operator's coefficients written in SymPy's syntax (or the
//! miss, or why the line could not be read). Subterms free of the variable that SymPy
//! has no syntax for (`y[j]`, a `summate` over another index, a piecewise constant) are
//! written as fresh symbols, one per canonical term, so the factor and the coefficients
//! name them alike.
//!
//! This is a test driver: it decides nothing, and it must not fix up or filter our
//! answers before the oracle sees them.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};

use serde_json::{json, Value};
use slic_algebra::assume::Context;
use slic_algebra::canon::canonicalize;
use slic_algebra::vars::mentions;
use slic_algebra::{front, Coercion, Node, Prim, Store, TermId, Type, VarId};
use slic_holonomic::ode::operator;

/// Deeper terms than this are refused (the formatter recurses on term nesting).
const MAX_DEPTH: usize = 500;

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("operators: cannot read standard input: {e}");
                std::process::exit(2);
            }
        };
        let src = line.trim();
        if src.is_empty() || src.starts_with('#') {
            continue;
        }
        let v = one(src);
        if writeln!(out, "{v}").is_err() {
            std::process::exit(2);
        }
    }
}

/// The JSON answer for one program.
fn one(src: &str) -> Value {
    let mut store = Store::new();
    let mut t = match front::load(&mut store, src) {
        Ok(t) => t,
        Err(ds) => {
            let msg: Vec<String> = ds.iter().map(|d| d.message.clone()).collect();
            return json!({"src": src, "error": msg.join("; ")});
        }
    };
    let mut vars = Vec::new();
    while let Node::Lam(v, b) = store.node(t) {
        vars.push(*v);
        t = *b;
    }
    let Some(&x) = vars.last() else {
        return json!({"src": src, "error": "no fn parameter to be the variable"});
    };
    let mut fmt = Formatter {
        x,
        opaque: BTreeMap::new(),
        symbols: BTreeMap::new(),
    };
    for &v in &vars {
        let ty = store.var_type(v).clone();
        if ty.is_numeric() {
            let name = fmt.var_name(&store, v);
            fmt.symbols.insert(name, kind(&ty));
        }
    }
    let f = match fmt.format(&mut store, t, 0) {
        Ok(s) => s,
        Err(e) => return json!({"src": src, "error": e}),
    };
    let var = fmt.var_name(&store, x);
    let mut answer = json!({"src": src, "var": var, "f": f});
    match operator(&mut store, &Context::new(), t, x) {
        Ok(ode) => {
            let mut coeffs = Vec::new();
            for &c in &ode.coeffs {
                match fmt.format(&mut store, c, 0) {
                    Ok(s) => coeffs.push(Value::String(s)),
                    Err(e) => return json!({"src": src, "error": format!("coefficient: {e}")}),
                }
            }
            answer["order"] = json!(ode.order());
            answer["coeffs"] = Value::Array(coeffs);
        }
        Err(miss) => answer["miss"] = json!(format!("{miss:?}")),
    }
    answer["symbols"] = json!(fmt.symbols);
    answer
}

/// SymPy assumptions for a symbol of this type.
fn kind(ty: &Type) -> &'static str {
    match ty {
        Type::Prob => "positive",
        Type::Nat => "nonnegative_integer",
        Type::Int => "integer",
        _ => "real",
    }
}

/// Terms to SymPy's syntax, with the symbols it names.
struct Formatter {
    x: VarId,
    /// Canonical opaque term -> its symbol name.
    opaque: BTreeMap<TermId, String>,
    /// Symbol name -> SymPy assumption.
    symbols: BTreeMap<String, &'static str>,
}

impl Formatter {
    fn var_name(&self, store: &Store, v: VarId) -> String {
        let clean: String = store
            .var_name(v)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("v{}_{clean}", v.index())
    }

    fn format(&mut self, store: &mut Store, t: TermId, depth: usize) -> Result<String, String> {
        if depth > MAX_DEPTH {
            return Err("term too deep".into());
        }
        let d = depth + 1;
        let node = store.node(t).clone();
        let args = |this: &mut Self, store: &mut Store, xs: &[TermId]| {
            xs.iter()
                .map(|&a| this.format(store, a, d))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(match node {
            Node::Var(v) => self.var_name(store, v),
            Node::Lit(q) => format!("({}/{})", q.numer(), q.denom()),
            Node::Coerce(c, a) if c != Coercion::Real2Int => self.format(store, a, d)?,
            Node::Prim(p, xs) if is_arithmetic(p) || sympy_function(p).is_some() => {
                let a = args(self, store, &xs)?;
                match (p, a.as_slice()) {
                    (Prim::Add, _) => format!("({})", a.join(" + ")),
                    (Prim::Mul, _) => format!("({})", a.join(" * ")),
                    (Prim::Neg, [u]) => format!("(-{u})"),
                    (Prim::Recip, [u]) => format!("(1/{u})"),
                    (Prim::Pow | Prim::RealPow, [u, v]) => format!("({u}**{v})"),
                    (Prim::NatRoot, [u, v]) => format!("({u}**(1/{v}))"),
                    (Prim::Pi, []) => "pi".into(),
                    (Prim::Infinity, []) => "oo".into(),
                    (p, _) => match sympy_function(p) {
                        Some(name) => format!("{name}({})", a.join(", ")),
                        None => return Err(format!("{p:?} with {} arguments", a.len())),
                    },
                }
            }
            _ => return self.opaque(store, t),
        })
    }

    /// A subterm SymPy cannot write: a fresh symbol when it is free of the variable.
    fn opaque(&mut self, store: &mut Store, t: TermId) -> Result<String, String> {
        if mentions(store, t, self.x) || !store.ty(t).is_numeric() {
            return Err(format!("no SymPy syntax for {:?}", store.node(t)));
        }
        let c = canonicalize(store, &Context::new(), t);
        if let Some(name) = self.opaque.get(&c) {
            return Ok(name.clone());
        }
        let name = format!("k{}", self.opaque.len());
        self.opaque.insert(c, name.clone());
        self.symbols.insert(name.clone(), kind(store.ty(c)));
        Ok(name)
    }
}

/// The operators written with SymPy's operator syntax.
fn is_arithmetic(p: Prim) -> bool {
    use Prim::*;
    matches!(
        p,
        Add | Mul | Neg | Recip | Pow | RealPow | NatRoot | Pi | Infinity
    )
}

/// SymPy's name for a primitive function.
fn sympy_function(p: Prim) -> Option<&'static str> {
    Some(match p {
        Prim::Exp => "exp",
        Prim::Log => "log",
        Prim::Sqrt => "sqrt",
        Prim::Abs => "Abs",
        Prim::Signum => "sign",
        Prim::Floor => "floor",
        Prim::Erf => "erf",
        Prim::Choose => "binomial",
        Prim::GammaFunc => "gamma",
        Prim::BetaFunc => "beta",
        Prim::Min => "Min",
        Prim::Max => "Max",
        Prim::Sin => "sin",
        Prim::Cos => "cos",
        Prim::Tan => "tan",
        Prim::Asin => "asin",
        Prim::Acos => "acos",
        Prim::Atan => "atan",
        Prim::Sinh => "sinh",
        Prim::Cosh => "cosh",
        Prim::Tanh => "tanh",
        Prim::Asinh => "asinh",
        Prim::Acosh => "acosh",
        Prim::Atanh => "atanh",
        _ => return None,
    })
}
