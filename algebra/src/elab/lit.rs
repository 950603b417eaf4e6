//! Literals and numeric operators: literal folding (signs and `/`-only literal chains),
//! n-ary `+ -` / `* /` chains, `&&` / `||` chains, prefix minus, powers and comparisons.
//! Everything here follows the "join, raise, fit" rule stated in the `elab` module doc;
//! nothing here folds arithmetic beyond what that doc lists.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

use super::{Elab, Failed, R};
use crate::diag::Span;
use crate::syntax::ast::{ChainOp, CmpOp, Expr, ExprKind, PowOp};
use crate::term::{Prim, TermId};
use crate::types::Type;

/// A numeric operand before its final type is known: a literal (value, natural type) or
/// an inferred term.
pub(super) enum Num {
    Lit(BigRational, Type),
    Term(TermId, Span),
}

/// One operand of an n-ary chain: the number and the unary primitive (`Neg` or `Recip`)
/// that wraps it once the chain's type is known.
struct Operand {
    num: Num,
    wrap: Option<Prim>,
}

/// The type of the negation of a literal of type `t`: int for integral, real otherwise.
fn negated_type(t: &Type) -> Type {
    if t.is_integral() {
        Type::Int
    } else {
        Type::Real
    }
}

/// Which precedence level a chain operator belongs to.
fn op_class(op: ChainOp) -> u8 {
    match op {
        ChainOp::Add | ChainOp::Sub => 0,
        ChainOp::Mul | ChainOp::Div => 1,
        ChainOp::And => 2,
        ChainOp::Or => 3,
        ChainOp::Superpose => 4,
    }
}

impl Elab<'_> {
    /// The value and natural type of a literal-only expression, or `None` if `e` is not
    /// one. Errors only on a literal division by zero.
    pub(super) fn literal(&mut self, e: &Expr) -> R<Option<(BigRational, Type)>> {
        // Signs are peeled in a loop, so `- - - 3` does not recurse.
        let mut signs = Vec::new();
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Neg(x) => {
                    signs.push(true);
                    cur = x;
                }
                ExprKind::Plus(x) => {
                    signs.push(false);
                    cur = x;
                }
                _ => break,
            }
        }
        let (mut value, mut ty) = match &cur.kind {
            ExprKind::Nat(n) => (
                BigRational::from_integer(BigInt::from(n.clone())),
                Type::Nat,
            ),
            ExprKind::Decimal(q) => (q.clone(), Type::Prob),
            ExprKind::OpChain(first, rest) if rest.iter().all(|(op, _)| *op == ChainOp::Div) => {
                let Some(folded) = self.nested(cur.span, |cx| cx.fold_division(first, rest))?
                else {
                    return Ok(None);
                };
                folded
            }
            _ => return Ok(None),
        };
        for &negative in signs.iter().rev() {
            if negative {
                value = -value;
                ty = negated_type(&ty);
            } else {
                ty = ty.ring_above().unwrap_or(ty);
            }
        }
        Ok(Some((value, ty)))
    }

    /// Folds `a / b / ...` when every operand is a literal.
    fn fold_division(
        &mut self,
        first: &Expr,
        rest: &[(ChainOp, Expr)],
    ) -> R<Option<(BigRational, Type)>> {
        let Some((mut value, mut ty)) = self.literal(first)? else {
            return Ok(None);
        };
        let mut divisors = Vec::with_capacity(rest.len());
        for (_, x) in rest {
            match self.literal(x)? {
                Some(d) => divisors.push((d, x.span)),
                None => return Ok(None),
            }
        }
        for ((d, dty), span) in divisors {
            if d.is_zero() {
                return Err(self.err(span, "division by zero"));
            }
            value /= d;
            ty = ty
                .numeric_join(&dty)
                .and_then(|j| j.field_above())
                .unwrap_or(Type::Real);
        }
        Ok(Some((value, ty)))
    }

    /// A numeric operand: a literal, or an inferred term that must be numeric.
    pub(super) fn num(&mut self, e: &Expr, who: Option<&str>) -> R<Num> {
        if let Some(n) = self.literal_num(e)? {
            return Ok(n);
        }
        let t = self.infer(e)?;
        let ty = self.ty(t);
        if !ty.is_numeric() {
            let failed = self.not_numeric(e.span, &ty, who);
            self.hint_for(t, None);
            return Err(failed);
        }
        Ok(Num::Term(t, e.span))
    }

    fn literal_num(&mut self, e: &Expr) -> R<Option<Num>> {
        Ok(self.literal(e)?.map(|(v, t)| Num::Lit(v, t)))
    }

    pub(super) fn not_numeric(&mut self, span: Span, ty: &Type, who: Option<&str>) -> Failed {
        match who {
            Some(name) => self.err(span, format!("'{name}' expects a number, found {ty}")),
            None => self.err(span, format!("expected a number, found {ty}")),
        }
    }

    pub(super) fn num_type(&self, n: &Num) -> Type {
        match n {
            Num::Lit(_, t) => t.clone(),
            Num::Term(t, _) => self.ty(*t),
        }
    }

    /// The operand as a term of type `ty` (which is at or above its type).
    pub(super) fn num_to(&mut self, n: Num, ty: &Type) -> R<TermId> {
        match n {
            Num::Lit(v, _) => Ok(self.store.lit(v, ty.clone())),
            Num::Term(t, span) => self.coerce(t, ty, span),
        }
    }

    /// The join of the operands' types (all numeric by construction).
    pub(super) fn join_nums<'a>(&self, nums: impl IntoIterator<Item = &'a Num>) -> Type {
        let mut j: Option<Type> = None;
        for n in nums {
            let t = self.num_type(n);
            j = Some(match j {
                None => t,
                Some(j) => j.numeric_join(&t).unwrap_or(Type::Real),
            });
        }
        j.unwrap_or(Type::Nat)
    }

    /// Operands fitted to their join: `min`, `max`, comparisons, bounds.
    pub(super) fn joined(&mut self, nums: Vec<Num>) -> R<(Vec<TermId>, Type)> {
        let j = self.join_nums(&nums);
        let mut out = Vec::with_capacity(nums.len());
        for n in nums {
            out.push(self.num_to(n, &j)?);
        }
        Ok((out, j))
    }

    /// A chain of one precedence level that is not all-literal division.
    pub(super) fn op_chain(
        &mut self,
        first: &Expr,
        rest: &[(ChainOp, Expr)],
        span: Span,
    ) -> R<TermId> {
        let Some((op0, _)) = rest.first() else {
            return self.infer(first);
        };
        if rest.iter().any(|(op, _)| op_class(*op) != op_class(*op0)) {
            return Err(self.err(span, "internal error: mixed operators in one chain"));
        }
        match op0 {
            ChainOp::Add | ChainOp::Sub => self.arith(first, rest, false),
            ChainOp::Mul | ChainOp::Div => self.arith(first, rest, true),
            ChainOp::And => self.logic(first, rest, Prim::And),
            ChainOp::Or => self.logic(first, rest, Prim::Or),
            ChainOp::Superpose => self.superpose(first, rest, None, span),
        }
    }

    /// `a + b - c ...` (one `Add`) or `a * b / c ...` (one `Mul`).
    fn arith(&mut self, first: &Expr, rest: &[(ChainOp, Expr)], mul: bool) -> R<TermId> {
        let ops = self.arith_operands(first, rest, mul)?;
        self.arith_build(ops, mul)
    }

    fn arith_operands(
        &mut self,
        first: &Expr,
        rest: &[(ChainOp, Expr)],
        mul: bool,
    ) -> R<Vec<Operand>> {
        let mut ops = Vec::with_capacity(rest.len() + 1);
        let mut failed = false;
        let mut r = self.chain_operand(first, false, mul);
        for (op, x) in rest {
            match r {
                Ok(o) => ops.push(o),
                Err(Failed) => failed = true,
            }
            let inverted = matches!(op, ChainOp::Sub | ChainOp::Div);
            r = self.chain_operand(x, inverted, mul);
        }
        match r {
            Ok(o) if !failed => {
                ops.push(o);
                Ok(ops)
            }
            _ => Err(Failed),
        }
    }

    /// The chain's type (join, raised to a ring or field if it negates or divides), and
    /// every operand fitted to it.
    fn arith_build(&mut self, ops: Vec<Operand>, mul: bool) -> R<TermId> {
        let mut j = self.join_nums(ops.iter().map(|o| &o.num));
        if ops.iter().any(|o| o.wrap.is_some()) {
            let raised = if mul { j.field_above() } else { j.ring_above() };
            j = raised.unwrap_or(Type::Real);
        }
        let mut terms = Vec::with_capacity(ops.len());
        for o in ops {
            let base = self.num_to(o.num, &j)?;
            terms.push(match o.wrap {
                Some(p) => self.store.prim(p, vec![base], j.clone()),
                None => base,
            });
        }
        let p = if mul { Prim::Mul } else { Prim::Add };
        Ok(self.store.prim(p, terms, j))
    }

    /// One operand of an arithmetic chain; `inverted` for the right of `-` or `/`.
    fn chain_operand(&mut self, x: &Expr, inverted: bool, mul: bool) -> R<Operand> {
        if let Some(o) = self.literal_operand(x, inverted, mul)? {
            return Ok(o);
        }
        let (inner, wrap) = match (&x.kind, inverted, mul) {
            (_, true, true) => (x, Some(Prim::Recip)),
            (_, true, false) => (x, Some(Prim::Neg)),
            // A negated operand in a sum (`-a + b`, `a + -b`) joins the chain's type
            // like a subtracted one.
            (ExprKind::Neg(inner), false, false) => (&**inner, Some(Prim::Neg)),
            _ => (x, None),
        };
        let num = self.num(inner, None)?;
        Ok(Operand { num, wrap })
    }

    /// A literal operand of an arithmetic chain (`None` if `x` is not a literal).
    fn literal_operand(&mut self, x: &Expr, inverted: bool, mul: bool) -> R<Option<Operand>> {
        let Some((v, t)) = self.literal(x)? else {
            return Ok(None);
        };
        Ok(Some(match (inverted, mul) {
            (false, _) => Operand {
                num: Num::Lit(v, t),
                wrap: None,
            },
            (true, true) => {
                if v.is_zero() {
                    return Err(self.err(x.span, "division by zero"));
                }
                Operand {
                    num: Num::Lit(v, t),
                    wrap: Some(Prim::Recip),
                }
            }
            // `x - 3` is `x + (-3)`: the literal's sign is folded.
            (true, false) => Operand {
                num: Num::Lit(-v, negated_type(&t)),
                wrap: None,
            },
        }))
    }

    /// `a && b && ...` / `a || b || ...`: every operand checked against bool.
    fn logic(&mut self, first: &Expr, rest: &[(ChainOp, Expr)], p: Prim) -> R<TermId> {
        let mut terms = Vec::with_capacity(rest.len() + 1);
        let mut failed = false;
        for x in std::iter::once(first).chain(rest.iter().map(|(_, x)| x)) {
            match self.check(x, &Type::Bool) {
                Ok(t) => terms.push(t),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        Ok(self.store.prim(p, terms, Type::Bool))
    }

    /// Prefix `-e` for a non-literal `e`: the operand is raised to its ring.
    pub(super) fn negate(&mut self, x: &Expr) -> R<TermId> {
        let n = self.num(x, None)?;
        let ring = self.num_type(&n).ring_above().unwrap_or(Type::Real);
        let t = self.num_to(n, &ring)?;
        Ok(self.store.prim(Prim::Neg, vec![t], ring))
    }

    /// `a ^ n` (numeric base, nat exponent) and `a ** b` (prob, real -> prob).
    pub(super) fn pow(&mut self, op: PowOp, a: &Expr, b: &Expr) -> R<TermId> {
        match op {
            PowOp::Pow => {
                let base = self.num(a, Some("^"));
                let exp = self.check_arg(b, &Type::Nat, "^");
                let (base, exp) = (base?, exp?);
                let ty = self.num_type(&base);
                let base = self.num_to(base, &ty)?;
                Ok(self.store.prim(Prim::Pow, vec![base, exp], ty))
            }
            PowOp::RealPow => {
                let base = self.check_arg(a, &Type::Prob, "**");
                let exp = self.check_arg(b, &Type::Real, "**");
                let (base, exp) = (base?, exp?);
                Ok(self.store.prim(Prim::RealPow, vec![base, exp], Type::Prob))
            }
        }
    }

    /// `<`, `<=`, `>`, `>=` (numeric), `==`, `/=` (numeric, bool or unit).
    pub(super) fn compare(&mut self, op: CmpOp, a: &Expr, b: &Expr) -> R<TermId> {
        let sym = match op {
            CmpOp::Lt => "<",
            CmpOp::Gt => ">",
            CmpOp::Le => "<=",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "/=",
        };
        let (prim, swap) = match op {
            CmpOp::Lt => (Prim::Lt, false),
            CmpOp::Gt => (Prim::Lt, true),
            CmpOp::Le => (Prim::Le, false),
            CmpOp::Ge => (Prim::Le, true),
            CmpOp::Eq => (Prim::Eq, false),
            CmpOp::Ne => (Prim::Ne, false),
        };
        let equality = matches!(op, CmpOp::Eq | CmpOp::Ne);
        let (x, y) = if equality {
            let x = self.comparand(a);
            let y = self.comparand(b);
            (x?, y?)
        } else {
            let x = self.num(a, Some(sym));
            let y = self.num(b, Some(sym));
            (Cmp::Num(x?), Cmp::Num(y?))
        };
        let (mut args, _) = match (x, y) {
            (Cmp::Num(x), Cmp::Num(y)) => self.joined(vec![x, y])?,
            (Cmp::Other(x), Cmp::Other(y)) => {
                let (tx, ty) = (self.ty(x), self.ty(y));
                if tx != ty {
                    return Err(self.mismatch(b.span, &tx, &ty));
                }
                (vec![x, y], tx)
            }
            (Cmp::Num(x), Cmp::Other(y)) => {
                let tx = self.num_type(&x);
                let ty = self.ty(y);
                return Err(self.mismatch(b.span, &tx, &ty));
            }
            (Cmp::Other(x), Cmp::Num(y)) => {
                let tx = self.ty(x);
                let ty = self.num_type(&y);
                return Err(self.mismatch(b.span, &tx, &ty));
            }
        };
        if swap {
            args.reverse();
        }
        Ok(self.store.prim(prim, args, Type::Bool))
    }

    /// An operand of `==` / `/=`: numeric, or a bool / unit term.
    fn comparand(&mut self, e: &Expr) -> R<Cmp> {
        if let Some((v, t)) = self.literal(e)? {
            return Ok(Cmp::Num(Num::Lit(v, t)));
        }
        let t = self.infer(e)?;
        let ty = self.ty(t);
        if ty.is_numeric() {
            Ok(Cmp::Num(Num::Term(t, e.span)))
        } else if matches!(ty, Type::Bool | Type::Unit) {
            Ok(Cmp::Other(t))
        } else {
            Err(self.err(
                e.span,
                format!("'==' and '/=' compare numbers, bools or units, found {ty}"),
            ))
        }
    }
}

/// An operand of `==` / `/=`.
enum Cmp {
    Num(Num),
    Other(TermId),
}
