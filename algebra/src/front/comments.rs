//! Attaching a program's `#` comments to its statements, for `slic-cas fmt`.
//!
//! The lexer hands back the comments with their positions, the elaborator the variable
//! each statement binds; this module decides, from positions alone, which statement (or
//! final expression) each comment belongs to, and builds the printer's side table
//! ([`Comments`]). The rule, chosen so that printing and reading back agree:
//! - the *anchors* are the statements of every block (`x = e`, `x <~ m`, `def`, and the
//!   file's own `fn x T:` lines) and each block's final expression after its statements
//!   (the file's final expression is one even without statements);
//! - a comment alone on its line goes before the first anchor that starts after it (or
//!   after the whole program when none does);
//! - a comment that ends a line of code goes after the last anchor that starts before it.
//!
//! A comment inside a multi-line expression thus moves to the end of that expression's
//! statement (or, on a line of its own, before the next statement): `fmt` keeps every
//! comment but not every position. Nothing here recurses on the program's nesting: the
//! surface tree is walked with an explicit stack.

use rustc_hash::FxHashMap;

use crate::diag::Span;
use crate::print::{Anchor, Comments, Note};
use crate::syntax::ast::{Expr, ExprKind};
use crate::syntax::Comment;
use crate::term::VarId;

/// The side table for `comments` of `program` (parsed from `text`), given the variable
/// each statement's name bound (`elab::elaborate_with_binders`).
pub(super) fn attach(
    text: &str,
    program: &Expr,
    comments: &[Comment],
    statements: &[(Span, VarId)],
) -> Comments {
    let mut table = Comments::default();
    if comments.is_empty() {
        return table;
    }
    let anchors = anchors(program, statements);
    // comments among the leading `import` and `data` lines print above them
    let mut body = program;
    while let ExprKind::Import(_, rest) | ExprKind::Data(_, rest) = &body.kind {
        body = rest;
    }
    let head_end = if std::ptr::eq(body, program) {
        0
    } else {
        body.span.start
    };
    for c in comments {
        let note = Note {
            pos: c.span.start,
            text: text
                .get(c.span.range())
                .unwrap_or("#")
                .trim_end()
                .to_string(),
        };
        if c.span.start < head_end {
            table.top.push(note);
            continue;
        }
        // anchors are sorted by start: the first starting after the comment
        let after = anchors.partition_point(|&(start, _)| start <= c.span.start);
        if c.own_line {
            match anchors.get(after) {
                Some(&(_, a)) => table.before.entry(a).or_default().push(note),
                None => table.end.push(note),
            }
        } else {
            match after.checked_sub(1).and_then(|i| anchors.get(i)) {
                Some(&(_, a)) => table.trailing.entry(a).or_default().push(note),
                // code before a comment on its line is inside some anchor; this only
                // guards that invariant
                None => table.end.push(note),
            }
        }
    }
    table
}

/// Every anchor of the program with the byte offset where it starts, sorted by start.
fn anchors(program: &Expr, statements: &[(Span, VarId)]) -> Vec<(u32, Anchor)> {
    let var_of: FxHashMap<(u32, u32), VarId> = statements
        .iter()
        .map(|(s, v)| ((s.start, s.end), *v))
        .collect();
    let mut out = Vec::new();
    // the leading `import` and `data` lines print as a header of their own (`Prelude`)
    let mut program = program;
    while let ExprKind::Import(_, rest) | ExprKind::Data(_, rest) = &program.kind {
        program = rest;
    }
    if statement(program, true).is_none() {
        out.push((program.span.start, Anchor::Top));
    }
    // (expression, whether it is on the file's top statement spine)
    let mut stack: Vec<(&Expr, bool)> = vec![(program, true)];
    while let Some((e, top)) = stack.pop() {
        if let Some((name, rest)) = statement(e, top) {
            if let Some(&v) = var_of.get(&(name.start, name.end)) {
                out.push((e.span.start, Anchor::Stmt(v)));
                if statement(rest, top).is_none() {
                    out.push((rest.span.start, Anchor::Tail(v)));
                }
            }
        }
        push_children(e, top, &mut stack);
    }
    out.sort_by_key(|&(start, _)| start);
    out
}

/// If `e` is a statement (a `fn` only on the file's top spine, where the printer writes
/// it as a line of its own), the span of the name it binds and the rest of its block.
fn statement(e: &Expr, top: bool) -> Option<(Span, &Expr)> {
    match &e.kind {
        ExprKind::Let(x, _, rest) | ExprKind::Bind(x, _, rest) => Some((x.span, rest)),
        ExprKind::Def { name, rest, .. } => Some((name.span, rest)),
        ExprKind::Import(x, rest) => Some((x.span, rest)),
        ExprKind::Data(d, rest) => Some((d.name.span, rest)),
        ExprKind::Lam(x, _, rest) if top => Some((x.span, rest)),
        _ => None,
    }
}

/// Push the sub-expressions of `e`; only the rest of a top-spine statement stays on the
/// top spine.
fn push_children<'e>(e: &'e Expr, top: bool, stack: &mut Vec<(&'e Expr, bool)>) {
    use ExprKind::*;
    let spine = statement(e, top).is_some() && top;
    let mut push = |x: &'e Expr| stack.push((x, false));
    match &e.kind {
        Var(_) | Nat(_) | Decimal(_) | Infinity | Unit | RNop => {}
        Pair(a, b) | Index(a, b) | Pow(_, a, b) | Compare(_, a, b) | RFanout(a, b) => {
            push(a);
            push(b);
        }
        ArrayLit(xs) => xs.iter().for_each(push),
        Call(f, xs) => {
            push(f);
            xs.iter().for_each(push);
        }
        OpChain(first, rest) => {
            push(first);
            rest.iter().for_each(|(_, x)| push(x));
        }
        Neg(a) | Plus(a) | Ann(a, _) | Return(a) | RAdd(a) => push(a),
        If(c, a, b) | RSplit(c, a, b) => {
            push(c);
            push(a);
            push(b);
        }
        Match(x, arms) => {
            push(x);
            arms.iter().for_each(|(_, b)| push(b));
        }
        Let(_, a, rest) | Bind(_, a, rest) => {
            push(a);
            stack.push((rest, spine));
        }
        Def { body, rest, .. } => {
            stack.push((body, false));
            stack.push((rest, spine));
        }
        Lam(_, _, body) | Import(_, body) | Data(_, body) => stack.push((body, spine)),
        Array(_, a, b) | Plate(_, a, b) | Expect(_, a, b) => {
            push(a);
            push(b);
        }
        Summate(_, a, b, c)
        | Product(_, a, b, c)
        | Integrate(_, a, b, c)
        | Chain(_, a, b, c)
        | Bucket(_, a, b, c)
        | RIndex(_, a, b, c) => {
            push(a);
            push(b);
            push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::alpha::alpha_eq;
    use crate::front::{load, load_with_comments};
    use crate::print::{print_with_comments, PrintOptions};
    use crate::term::Store;

    /// `slic-cas fmt` on `src`.
    fn fmt(store: &mut Store, src: &str, opts: &PrintOptions) -> String {
        match load_with_comments(store, src) {
            Ok((t, comments)) => print_with_comments(store, t, opts, comments),
            Err(e) => panic!("{src}\ndoes not load: {e:?}"),
        }
    }

    /// `fmt` of `src` is `expect`, keeps every comment of `src`, is a fixpoint (at the
    /// default width and a narrow one), and reads back to an alpha-equivalent term.
    fn check(src: &str, expect: &str) {
        let mut store = Store::new();
        let opts = PrintOptions::default();
        let out = fmt(&mut store, src, &opts);
        assert_eq!(out, expect, "\n--- got ---\n{out}--- want ---\n{expect}");
        for line in src.lines() {
            if let Some(i) = line.find('#') {
                let comment = line[i..].trim_end();
                assert!(out.contains(comment), "{comment:?} lost:\n{out}");
            }
        }
        let narrow = PrintOptions {
            width: 20,
            ..PrintOptions::default()
        };
        for opts in [opts, narrow] {
            let once = fmt(&mut store, src, &opts);
            let twice = fmt(&mut store, &once, &opts);
            assert_eq!(once, twice, "not a fixpoint at width {}", opts.width);
        }
        let (Ok(a), Ok(b)) = (load(&mut store, src), load(&mut store, &out)) else {
            panic!("does not load");
        };
        assert!(alpha_eq(&store, a, b), "different term:\n{out}");
    }

    #[test]
    fn comments_before_statements_at_line_ends_and_at_the_end() {
        check(
            "# One noisy measurement.\nfn mu real: # the prior mean\n# the latent location\nx <~ normal(mu, 1)   # prior\ny <~ normal(x, 1) # likelihood\n\n# what we see\nreturn y # done\n# end of file\n",
            "# One noisy measurement.\nfn mu real: # the prior mean\n# the latent location\nx <~ normal(mu, 1) # prior\ny <~ normal(x, 1) # likelihood\n# what we see\nreturn y # done\n# end of file\n",
        );
    }

    #[test]
    fn comments_inside_blocks() {
        check(
            "def sq(x real) real: # square\n    # multiply\n    y = x * x # the product\n    y\n# draws\nz <~ plate i of 3:\n        # one draw\n        w <~ normal(0, 1)\n        return w # each\nreturn sq(z[0])\n",
            "def sq(x real) real: # square\n    # multiply\n    y = x * x # the product\n    y\n# draws\nz <~ plate i of 3:\n    # one draw\n    w <~ normal(0, 1)\n    return w # each\nreturn sq(z[0])\n",
        );
        check(
            "x <~ normal(0, 1)\n# by sign\nif x < 0: # negative\n    return 0. real\nelse:\n    return x # positive\n",
            "x <~ normal(0, 1)\n# by sign\nif x < 0: return 0. real else: return x # negative # positive\n",
        );
    }

    #[test]
    fn comments_before_fn_and_def() {
        check(
            "# parameters\nfn a real:\n# second\nfn b real: # b\n# helper\ndef f(c real) real: c + 1\nreturn f(a + b)\n",
            "# parameters\nfn a real:\n# second\nfn b real: # b\n# helper\ndef f(c real) real: c + 1\nreturn f(a + b)\n",
        );
    }

    #[test]
    fn comments_of_a_file_without_statements() {
        check(
            "# just a number\n3 # three\n",
            "# just a number\n3 # three\n",
        );
        check(
            "# only a comment after\nreturn 1\n#\n",
            "# only a comment after\nreturn 1\n#\n",
        );
    }

    #[test]
    fn comments_next_to_a_block_inside_a_call() {
        check(
            "weight(1/2, x <~ normal(0, 1) # draw\n            return x) # weighted\n",
            "weight(1/2,\n       x <~ normal(0, 1) # draw\n       return x # weighted\n)\n",
        );
    }
}
