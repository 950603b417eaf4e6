//! Run-time values of the reference interpreter and the environments that bind them.
//!
//! A [`Value`] is what a closed term evaluates to. Numbers follow their Hakaru type:
//! `nat` is a `u64`, `int` an `i64`, `real` an `f64`, and **`prob` is stored in log
//! space**: `Value::Prob(l)` means the non-negative number `exp(l)` (`l = -inf` is 0,
//! `l = +inf` is ∞). Log space keeps products of many densities and `exp(1000)` exact in
//! range; [`Value::prob`] and [`Value::as_f64`] convert from and to the linear scale.
//!
//! Functions and measures are values too: a closure (environment, parameter, body) and a
//! measure closure (environment, measure term). Evaluating a measure term never samples
//! it; sampling (`sample`) and integration (`expect`) happen later, on these values.
//! Compound values share their parts through `Rc`, so copying is cheap.
//!
//! This module does no evaluation; it only builds, inspects and compares values.

use std::fmt;
use std::rc::Rc;

use slic_algebra::{Store, TermId, Type, VarId};

/// A function value: `fn var: body`, closed over `env`.
#[derive(Clone, Debug)]
pub struct Closure {
    pub env: Env,
    pub var: VarId,
    pub body: TermId,
}

/// A measure value: the measure term `term` (a measure constructor such as `dirac`,
/// `weight`, `x <~ m`, a primitive...) closed over `env`. Not sampled yet.
#[derive(Clone, Debug)]
pub struct MeasureVal {
    pub env: Env,
    pub term: TermId,
}

/// A run-time value. See the module doc for the number representations.
#[derive(Clone, Debug)]
pub enum Value {
    Nat(u64),
    Int(i64),
    /// The natural logarithm of a non-negative number.
    Prob(f64),
    Real(f64),
    Bool(bool),
    Unit,
    Pair(Rc<(Value, Value)>),
    Left(Rc<Value>),
    Right(Rc<Value>),
    Just(Rc<Value>),
    Nothing,
    Array(Rc<[Value]>),
    Closure(Rc<Closure>),
    Measure(Rc<MeasureVal>),
}

impl Value {
    /// The prob value of a linear non-negative number (`x` must be `>= 0`; a negative or
    /// NaN `x` gives NaN in log space).
    pub fn prob(x: f64) -> Value {
        Value::Prob(x.ln())
    }

    pub fn pair(a: Value, b: Value) -> Value {
        Value::Pair(Rc::new((a, b)))
    }

    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(items.into())
    }

    /// A numeric value on the linear scale (`prob` is exponentiated); `None` if not numeric.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Nat(n) => Some(*n as f64),
            Value::Int(i) => Some(*i as f64),
            Value::Prob(l) => Some(l.exp()),
            Value::Real(x) => Some(*x),
            _ => None,
        }
    }

    /// A short description of the value's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Nat(_) => "a nat",
            Value::Int(_) => "an int",
            Value::Prob(_) => "a prob",
            Value::Real(_) => "a real",
            Value::Bool(_) => "a bool",
            Value::Unit => "unit",
            Value::Pair(_) => "a pair",
            Value::Left(_) | Value::Right(_) => "an either",
            Value::Just(_) | Value::Nothing => "a maybe",
            Value::Array(_) => "an array",
            Value::Closure(_) => "a function",
            Value::Measure(_) => "a measure",
        }
    }

    /// Some value of type `t`, used as the placeholder outcome of a zero-weight draw
    /// (`reject`): zero, false, unit, empty arrays, `nothing`, left of the default. Function
    /// and measure types have no data default and give unit.
    pub fn default_of(t: &Type) -> Value {
        match t {
            Type::Nat => Value::Nat(0),
            Type::Int => Value::Int(0),
            Type::Prob => Value::Prob(f64::NEG_INFINITY),
            Type::Real => Value::Real(0.0),
            Type::Bool => Value::Bool(false),
            Type::Unit => Value::Unit,
            Type::Array(_) => Value::array(Vec::new()),
            Type::Pair(a, b) => Value::pair(Value::default_of(a), Value::default_of(b)),
            Type::Either(a, _) => Value::Left(Rc::new(Value::default_of(a))),
            Type::Maybe(_) => Value::Nothing,
            Type::Measure(_) | Type::Fun(..) => Value::Unit,
        }
    }

    /// Structural equality of data values (numbers compare by value, so `Prob` compares
    /// logs); functions and measures are equal only when they are the same allocation.
    pub fn data_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Nat(a), Value::Nat(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Prob(a), Value::Prob(b)) | (Value::Real(a), Value::Real(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Unit, Value::Unit) | (Value::Nothing, Value::Nothing) => true,
            (Value::Pair(a), Value::Pair(b)) => a.0.data_eq(&b.0) && a.1.data_eq(&b.1),
            (Value::Left(a), Value::Left(b))
            | (Value::Right(a), Value::Right(b))
            | (Value::Just(a), Value::Just(b)) => a.data_eq(b),
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.data_eq(y))
            }
            (Value::Closure(a), Value::Closure(b)) => Rc::ptr_eq(a, b),
            (Value::Measure(a), Value::Measure(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        self.data_eq(other)
    }
}

/// Values print as their JSON text (see `json`); functions and measures as `<function>`
/// and `<measure>`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match crate::json::value_to_json(self) {
            serde_json::Value::String(s) => f.write_str(&s),
            j => write!(f, "{j}"),
        }
    }
}

struct EnvNode {
    var: VarId,
    val: Value,
    next: Env,
}

/// A persistent environment: a shared linked list of bindings, newest first. Binding is
/// O(1) and shares the tail; lookup walks to the nearest binding of the variable. Since
/// variables are unique [`VarId`]s, shadowing never hides a different variable of the
/// same name.
#[derive(Clone, Default)]
pub struct Env(Option<Rc<EnvNode>>);

impl Env {
    pub fn new() -> Env {
        Env(None)
    }

    /// This environment extended with `var = val`.
    pub fn bind(&self, var: VarId, val: Value) -> Env {
        Env(Some(Rc::new(EnvNode {
            var,
            val,
            next: self.clone(),
        })))
    }

    pub fn lookup(&self, var: VarId) -> Option<&Value> {
        let mut cur = &self.0;
        while let Some(node) = cur {
            if node.var == var {
                return Some(&node.val);
            }
            cur = &node.next.0;
        }
        None
    }

    /// The variables bound, newest first, with their names from `store` (for debugging).
    pub fn describe(&self, store: &Store) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = &self.0;
        while let Some(node) = cur {
            out.push(format!("{} = {}", store.var_name(node.var), node.val));
            cur = &node.next.0;
        }
        out
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut n = 0usize;
        let mut cur = &self.0;
        while let Some(node) = cur {
            n += 1;
            cur = &node.next.0;
        }
        write!(f, "Env({n} bindings)")
    }
}

/// Dropping a long chain of uniquely owned bindings iteratively, so a deep environment
/// cannot overflow the stack when it is freed.
impl Drop for Env {
    fn drop(&mut self) {
        let mut cur = self.0.take();
        while let Some(rc) = cur {
            match Rc::try_unwrap(rc) {
                Ok(mut node) => cur = node.next.0.take(),
                Err(_) => break,
            }
        }
    }
}
