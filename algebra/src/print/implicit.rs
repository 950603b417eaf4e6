//! When a safe coercion may print implicitly: the part of the printer that mirrors where
//! the elaborator inserts coercions by itself (see "Coercions" in the `print` module doc).
//! It exists so that `slic-cas fmt` shows `normal(n, 1)` and `1 - p` rather than the
//! coercions the user never wrote. Every decision here must be one the elaborator
//! (`elab`, `elab/lit.rs`, `elab/call.rs`) undoes exactly: it chooses which term to print
//! in place of a `Coerce` node, never anything else, and when in doubt keeps the
//! coercion explicit.

use crate::num::Rational;

use super::is_lit;
use crate::term::{Node, Prim, Store, TermId};
use crate::types::{Coercion, Type};

/// The type a literal of value `v` has when printed bare (`3` nat, `-3` int, `1/2` prob,
/// `-1/2` real): what the elaborator joins for it at a joined position.
pub(super) fn natural_type(v: &Rational) -> Type {
    match (v.is_integer(), v.is_negative()) {
        (true, false) => Type::Nat,
        (true, true) => Type::Int,
        (false, false) => Type::Prob,
        (false, true) => Type::Real,
    }
}

/// Whether the elaborator, checking the printed form of `e` against a type, infers `e` and
/// then fits it (so a safe coercion around `e` is re-inserted): variables, built-in calls
/// and operators, coercion calls, indexing, applications and the numeric loops. Not
/// literals (re-typed instead), nor the forms that pass the expected type into their
/// parts (`if`, `match`, blocks, `simplify`, ...).
fn infers_then_fits(store: &Store, e: TermId) -> bool {
    matches!(
        store.node(e),
        Node::Var(_)
            | Node::Prim(..)
            | Node::Coerce(..)
            | Node::Index(..)
            | Node::App(..)
            | Node::Summate(..)
            | Node::Product(..)
            | Node::Integrate(..)
            | Node::Bucket(..)
    )
}

/// `e` when `t` is `Coerce(c, e)` with `c` the safe coercion from e's type to t's type and
/// `e` a form that `infers_then_fits`: where the elaborator checks `e` against t's type, it
/// inserts exactly this coercion, so `t` may print as `e` there.
pub(super) fn implicit_arg(store: &Store, t: TermId) -> Option<TermId> {
    match store.node(t) {
        Node::Coerce(c, e)
            if Coercion::safe(store.ty(*e), store.ty(t)) == Some(*c)
                && infers_then_fits(store, *e) =>
        {
            Some(*e)
        }
        _ => None,
    }
}

/// Whether `t` prints with a leading prefix minus (`-x`): in a `+` chain, such an operand
/// is read as subtracted, so a coercion around it must stay explicit there.
fn prints_negated(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Prim(Prim::Neg, a) if a.len() == 1 && !is_lit(store, a[0]))
}

/// How the elaborator raises a joined type: a `+` chain that subtracts to a ring, a `*`
/// chain that divides to a field, and so do the one-argument overloaded primitives.
#[derive(Clone, Copy)]
pub(super) enum Raise {
    Not,
    Ring,
    Field,
}

impl Raise {
    fn apply(self, t: Type) -> Option<Type> {
        match self {
            Raise::Not => Some(t),
            Raise::Ring => t.ring_above(),
            Raise::Field => t.field_above(),
        }
    }

    /// How a one-argument overloaded primitive raises its operand (`None`: it does not).
    fn of_unary(p: Prim) -> Option<Raise> {
        match p {
            Prim::Neg | Prim::Signum | Prim::Abs => Some(Raise::Ring),
            Prim::Recip | Prim::Erf | Prim::Floor => Some(Raise::Field),
            _ => None,
        }
    }
}

/// The operands to print at a position the elaborator types by joining: `items` are
/// the operands with whether each is inverted in the printed chain (`- x`, `/ x`,
/// which raise the join as `raise` says); `sum` for the operands of `+`. A safe
/// coercion of a non-literal operand prints implicitly (as its argument) when the join
/// the elaborator computes from the printed operands (literals at their natural
/// types) is still `ty`: all of them if that works, else all but the first (which,
/// explicit, keeps the join at `ty`). Literals print bare here (some operand is not
/// a literal), as `nary_checked` says.
pub(super) fn join_elision(
    s: &Store,
    ty: &Type,
    items: &[(TermId, bool)],
    sum: bool,
    raise: Raise,
) -> Vec<TermId> {
    let mut shown: Vec<TermId> = items.iter().map(|&(t, _)| t).collect();
    if !ty.is_numeric() {
        return shown;
    }
    let args: Vec<Option<TermId>> = items
        .iter()
        .map(|&(t, inverted)| {
            implicit_arg(s, t).filter(|&e| inverted || !sum || !prints_negated(s, e))
        })
        .collect();
    let Some(first) = args.iter().position(Option::is_some) else {
        return shown;
    };
    let raise = if items.iter().any(|&(_, inverted)| inverted) {
        raise
    } else {
        Raise::Not
    };
    // The chain's type when every coercion but the one at `keep` prints implicitly.
    let join = |keep: Option<usize>| -> Option<Type> {
        let mut j: Option<Type> = None;
        for (i, (&(t, _), arg)) in items.iter().zip(&args).enumerate() {
            let ti = match (s.node(t), arg) {
                (Node::Lit(v), _) => natural_type(v),
                (_, Some(e)) if keep != Some(i) => s.ty(*e).clone(),
                _ => s.ty(t).clone(),
            };
            j = Some(match j {
                None => ti,
                Some(j) => j.numeric_join(&ti)?,
            });
        }
        raise.apply(j?)
    };
    let keep = if join(None).as_ref() == Some(ty) {
        None
    } else if join(Some(first)).as_ref() == Some(ty) {
        Some(first)
    } else {
        return shown;
    };
    for (i, arg) in args.into_iter().enumerate() {
        if let (Some(e), true) = (arg, keep != Some(i)) {
            shown[i] = e;
        }
    }
    shown
}

/// The argument to print for `p(x)`, `p` a one-argument overloaded primitive: the
/// elaborator raises the operand to a ring (`-`, `abs`, `signum`) or a field (`recip`,
/// `erf`, `floor`), so the safe coercion that raising inserts prints implicitly.
pub(super) fn raised_arg(s: &Store, p: Prim, x: TermId) -> TermId {
    match (Raise::of_unary(p), implicit_arg(s, x)) {
        (Some(r), Some(e)) if r.apply(s.ty(e).clone()).as_ref() == Some(s.ty(x)) => e,
        _ => x,
    }
}
