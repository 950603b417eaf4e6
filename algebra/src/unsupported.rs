//! What slic-cas can read but not yet run: transforms that the elaborator accepts (so that
//! `check` and `fmt` work on programs that use them) but that no later stage implements.
//! `summarize(e)` is the histogram transform of the arrays paper; until codegen exists,
//! evaluating or simplifying a program that contains it would silently drop it, so the
//! commands that give a program a meaning (`sample`, `simplify`, `equiv`) ask
//! [`first_unimplemented`] first and refuse with its diagnostic.
//!
//! This module only finds; it must not rewrite or evaluate anything.

use rustc_hash::FxHashSet;

use crate::diag::{Diagnostic, Span, SpanMap};
use crate::term::{Node, Store, TermId, Transform};

/// Is this transform implemented by every stage that gives a term its meaning?
fn implemented(t: Transform) -> bool {
    match t {
        // the simplifier expands it; the interpreter reads it as its argument
        Transform::Simplify => true,
        // the histogram transform belongs to codegen, which does not exist yet
        Transform::Summarize => false,
        // computed by `slic_simplify::expand_transforms` before a term is given a meaning
        Transform::Disint | Transform::Density | Transform::Mh | Transform::Mcmc => true,
    }
}

/// The unimplemented transform in `term` that comes first in the source (by the span
/// `spans` gives it; a term without a span counts as being at the start), as an error
/// naming it: ``transform 'summarize' is not implemented yet``. `None` when there is none.
///
/// ```
/// use slic_algebra::{front, unsupported, Store};
/// let mut store = Store::new();
/// let (t, spans) = front::load_with_spans(&mut store, "summarize(normal(0, 1))").unwrap();
/// let d = unsupported::first_unimplemented(&store, t, &spans).unwrap();
/// assert_eq!(d.message, "transform 'summarize' is not implemented yet");
/// assert_eq!((d.span.start, d.span.end), (0, 23));
/// ```
pub fn first_unimplemented(store: &Store, term: TermId, spans: &SpanMap) -> Option<Diagnostic> {
    // terms are shared, so the walk visits each node once (a DAG may be exponentially
    // larger as a tree)
    let mut seen = FxHashSet::default();
    let mut work = vec![term];
    let mut first: Option<(Span, Transform)> = None;
    while let Some(t) = work.pop() {
        if !seen.insert(t) {
            continue;
        }
        let node = store.node(t);
        if let Node::Transform(tr, _) = node {
            if !implemented(*tr) {
                let span = spans.get(t).unwrap_or_default();
                if first.is_none_or(|(s, _)| span.start < s.start) {
                    first = Some((span, *tr));
                }
            }
        }
        work.extend(node.children());
    }
    first.map(|(span, tr)| {
        Diagnostic::new(
            span,
            format!("transform '{}' is not implemented yet", tr.name()),
        )
        .with_note(
            "slic-cas can check and format this program, but not sample, simplify or compare it",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front;

    /// The message and the text under the span of the first unimplemented transform.
    fn check(src: &str, expect: Option<(&str, &str)>) {
        let mut store = Store::new();
        let (t, spans) = front::load_with_spans(&mut store, src).expect("loads");
        let got = first_unimplemented(&store, t, &spans);
        let got = got
            .as_ref()
            .map(|d| (d.message.as_str(), &src[d.span.range()]));
        assert_eq!(got, expect, "{src}");
    }

    #[test]
    fn finds_the_first_summarize_in_source_order() {
        check("normal(0, 1)", None);
        check("simplify(normal(0, 1))", None);
        check(
            "x <~ summarize(normal(0, 1))\nreturn x",
            Some((
                "transform 'summarize' is not implemented yet",
                "summarize(normal(0, 1))",
            )),
        );
        check(
            "fn a real:\nx <~ normal(a, 1)\ny <~ summarize(normal(x, 1))\nz <~ summarize(normal(y, 2))\nreturn z",
            Some(("transform 'summarize' is not implemented yet", "summarize(normal(x, 1))")),
        );
        // inside a function that is never applied still counts: the program contains it
        check(
            "def f(m measure(real)) measure(real):\n    summarize(m)\nnormal(0, 1)",
            Some((
                "transform 'summarize' is not implemented yet",
                "summarize(m)",
            )),
        );
    }
}
