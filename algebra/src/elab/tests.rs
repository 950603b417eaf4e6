//! Tests of the elaborator on hand-built surface trees (the parser is tested separately;
//! the `.hk`-text tables live in `front`'s tests).

use num_bigint::BigUint;
use num_rational::BigRational;

use super::elaborate;
use crate::diag::Span;
use crate::syntax::ast::{ChainOp, Expr, ExprKind, Ident, TypeExpr, TypeExprKind};
use crate::term::{Node, Store, TermId};

fn e(kind: ExprKind) -> Expr {
    Expr::new(kind, Span::default())
}
fn var(n: &str) -> Expr {
    e(ExprKind::Var(n.to_string()))
}
fn nat(n: u32) -> Expr {
    e(ExprKind::Nat(BigUint::from(n)))
}
fn dec(n: i64, d: i64) -> Expr {
    e(ExprKind::Decimal(BigRational::new(n.into(), d.into())))
}
fn neg(x: Expr) -> Expr {
    e(ExprKind::Neg(Box::new(x)))
}
fn call(f: &str, args: Vec<Expr>) -> Expr {
    e(ExprKind::Call(Box::new(var(f)), args))
}
fn chain(first: Expr, rest: Vec<(ChainOp, Expr)>) -> Expr {
    e(ExprKind::OpChain(Box::new(first), rest))
}
fn ident(n: &str) -> Ident {
    Ident {
        name: n.to_string(),
        span: Span::default(),
    }
}
fn ty(n: &str) -> TypeExpr {
    TypeExpr {
        kind: TypeExprKind::Name(n.to_string()),
        span: Span::default(),
    }
}
fn lam(x: &str, t: &str, body: Expr) -> Expr {
    e(ExprKind::Lam(ident(x), ty(t), Box::new(body)))
}
fn bind(x: &str, m: Expr, body: Expr) -> Expr {
    e(ExprKind::Bind(ident(x), Box::new(m), Box::new(body)))
}
fn let_(x: &str, rhs: Expr, body: Expr) -> Expr {
    e(ExprKind::Let(ident(x), Box::new(rhs), Box::new(body)))
}
fn ret(x: Expr) -> Expr {
    e(ExprKind::Return(Box::new(x)))
}

/// A core term as compact text: literals with their types, other nodes by constructor.
pub(crate) fn show(s: &Store, t: TermId) -> String {
    let args = |xs: &[TermId]| {
        xs.iter()
            .map(|&x| show(s, x))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match s.node(t) {
        Node::Var(v) => s.var_name(*v).to_string(),
        Node::Bool(b) => b.to_string(),
        Node::Lit(v) => format!("Lit({v}):{}", s.ty(t)),
        Node::Prim(p, xs) => format!("{p:?}[{}]", args(xs)),
        Node::Coerce(c, x) => format!("Coerce({}, {})", c.name(), show(s, *x)),
        Node::Dist(d, xs) => format!("{}({})", d.name(), args(xs)),
        Node::Lam(v, b) => format!("Lam({}, {})", s.var_name(*v), show(s, *b)),
        Node::Bind(v, m, b) => {
            format!("Bind({}, {}, {})", s.var_name(*v), show(s, *m), show(s, *b))
        }
        Node::Let(v, m, b) => format!("Let({}, {}, {})", s.var_name(*v), show(s, *m), show(s, *b)),
        other => {
            let name = format!("{other:?}");
            let head = name.split(['(', ' ']).next().unwrap_or("?").to_string();
            format!("{head}({})", args(&other.children()))
        }
    }
}

fn check_core(program: Expr, ty: &str, core: &str) {
    let mut s = Store::new();
    let t = match elaborate(&mut s, &program) {
        Ok(t) => t,
        Err(errs) => panic!("{program:?}: {errs:?}"),
    };
    assert_eq!(s.ty(t).to_string(), ty, "type of {program:?}");
    assert_eq!(show(&s, t), core, "core of {program:?}");
}

#[test]
fn trees_elaborate_with_coercions_and_folding() {
    use ChainOp::*;
    check_core(
        call("normal", vec![nat(0), nat(1)]),
        "measure(real)",
        "normal(Lit(0):real, Lit(1):prob)",
    );
    check_core(
        lam("n", "nat", ret(chain(var("n"), vec![(Add, dec(1, 2))]))),
        "nat -> measure(prob)",
        "Lam(n, Dirac(Add[Coerce(nat2prob, n), Lit(1/2):prob]))",
    );
    check_core(
        lam("x", "real", chain(var("x"), vec![(Sub, nat(3))])),
        "real -> real",
        "Lam(x, Add[x, Lit(-3):real])",
    );
    check_core(chain(nat(1), vec![(Div, nat(2))]), "prob", "Lit(1/2):prob");
    check_core(
        neg(chain(nat(1), vec![(Div, nat(2))])),
        "real",
        "Lit(-1/2):real",
    );
    check_core(
        bind(
            "x",
            call("normal", vec![nat(0), nat(1)]),
            let_("y", var("x"), ret(var("y"))),
        ),
        "measure(real)",
        "Bind(x, normal(Lit(0):real, Lit(1):prob), Let(y, x, Dirac(y)))",
    );
}

#[test]
fn ten_thousand_statements_do_not_recurse() {
    let mut program = ret(var("x0"));
    for i in (0..10_000).rev() {
        let rhs = if i == 0 {
            nat(1)
        } else {
            var(&format!("x{}", i - 1))
        };
        program = let_(&format!("x{i}"), rhs, program);
    }
    // The final expression names the last variable.
    let mut s = Store::new();
    let ok = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let r = elaborate(&mut s, &program).map(|t| s.ty(t).to_string());
            // Dropping the tree recurses once per level (that is the syntax tree's
            // concern, not the elaborator's), so it is not dropped on this small stack.
            std::mem::forget(program);
            r
        })
        .map(|h| h.join());
    match ok {
        Ok(Ok(Ok(ty))) => assert_eq!(ty, "measure(nat)"),
        other => panic!("elaboration failed: {other:?}"),
    }
}

/// Runs `f` on a thread with `kib` KiB of stack and reports whether it finished.
fn within_stack(kib: usize, f: impl FnOnce() + Send + 'static) -> bool {
    std::thread::Builder::new()
        .stack_size(kib * 1024)
        .spawn(f)
        .map(|h| h.join().is_ok())
        .unwrap_or(false)
}

#[test]
fn nesting_is_limited_not_overflowing() {
    use ChainOp::*;
    type Nest = fn(Expr) -> Expr;
    let shapes: [(&str, Nest); 5] = [
        ("sqrt", |x| call("sqrt", vec![x])),
        ("sum", |x| chain(nat(1), vec![(Add, x)])),
        ("neg", |x| neg(chain(var("p"), vec![(Mul, x)]))),
        ("pair", |x| e(ExprKind::Pair(Box::new(x), Box::new(nat(1))))),
        ("if", |x| {
            e(ExprKind::If(
                Box::new(var("true")),
                Box::new(x),
                Box::new(var("p")),
            ))
        }),
    ];
    for (name, nest) in shapes {
        for depth in [super::MAX_DEPTH - 10, 5000] {
            // Test threads get 2 MiB; the limit must hold well inside that.
            let ok = within_stack(2048, move || {
                let mut x = var("p");
                for _ in 0..depth {
                    x = nest(x);
                }
                let program = lam("p", "prob", x);
                let mut s = Store::new();
                let r = elaborate(&mut s, &program);
                if depth > super::MAX_DEPTH {
                    let errs = r.err().unwrap_or_default();
                    assert_eq!(errs.len(), 1, "{errs:?}");
                    assert!(errs[0].message.contains("nested too deeply"), "{errs:?}");
                }
                std::mem::forget(program);
            });
            assert!(ok, "{name} nested {depth} deep");
        }
    }
}
