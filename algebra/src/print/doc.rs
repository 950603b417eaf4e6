//! A small layout engine (in the style of Wadler's "prettier printer") for the `.hk`
//! printer: documents made of text, soft and hard line breaks, groups that are printed on
//! one line when they fit, and indentation that is either relative (`nest`) or pinned to
//! the current column (`align`).
//!
//! It exists so that the printer can build one document per term (binding names exactly
//! once, in scope order) and let the layout decide line breaks afterwards. It knows
//! nothing of Hakaru: the offside-rule guarantees (a block's lines start at its column,
//! continuation lines are further right) follow from how `print` uses `align` and `nest`.
//!
//! A comment (`Doc::comment`) runs to the end of its line: whatever text follows it is
//! moved to the next line, and a group containing one never lays out flat. A trailing
//! comment (`Doc::trail`) goes at the end of the first line of the document it follows,
//! wherever the layout breaks that document.
//!
//! Every document caches its one-line width (`None` when it contains a hard break), so
//! deciding whether a group fits costs O(1) and the whole layout is linear in the size of
//! the document. Layout recursion follows document nesting, which the printer keeps
//! proportional to term nesting (statement chains are one flat `concat`); it moves to a
//! fresh stack segment when the stack runs low, and dropping a document is iterative, so
//! even a term nested 100,000 deep (which only a program transformation can build) lays
//! out without overflowing the stack.

/// A document to lay out.
#[derive(Debug)]
pub struct Doc {
    kind: Kind,
    /// The width of the document on one line; `None` if it contains a hard line break.
    flat: Option<usize>,
}

#[derive(Debug)]
enum Kind {
    /// Text without line breaks.
    Text(String),
    /// A `#` comment: the line must end after it.
    Comment(String),
    /// A comment printed at the end of the first line of the document.
    Trail(String, Box<Doc>),
    /// A space when its group is flat, a line break otherwise.
    Line,
    /// Always a line break; forces every enclosing group to break.
    HardLine,
    Concat(Vec<Doc>),
    /// Increase the indentation of line breaks inside by this many columns.
    Nest(usize, Box<Doc>),
    /// Set the indentation of line breaks inside to the column where this starts.
    Align(Box<Doc>),
    /// Lay out flat if it fits in the remaining width, broken otherwise.
    Group(Box<Doc>),
}

impl Doc {
    pub fn text(s: impl Into<String>) -> Doc {
        let s = s.into();
        let w = s.chars().count();
        Doc {
            kind: Kind::Text(s),
            flat: Some(w),
        }
    }

    /// A `#` comment (the text includes any space before the `#`); the next text starts
    /// a new line.
    pub fn comment(s: impl Into<String>) -> Doc {
        Doc {
            kind: Kind::Comment(s.into()),
            flat: None,
        }
    }

    /// `d` with the comment `s` (including any space before the `#`) at the end of its
    /// first line.
    pub fn trail(s: impl Into<String>, d: Doc) -> Doc {
        let flat = d.flat;
        Doc {
            kind: Kind::Trail(s.into(), Box::new(d)),
            flat,
        }
    }

    pub fn line() -> Doc {
        Doc {
            kind: Kind::Line,
            flat: Some(1),
        }
    }

    pub fn hard() -> Doc {
        Doc {
            kind: Kind::HardLine,
            flat: None,
        }
    }

    pub fn concat(parts: Vec<Doc>) -> Doc {
        let flat = parts
            .iter()
            .try_fold(0usize, |acc, d| d.flat.map(|w| acc.saturating_add(w)));
        Doc {
            kind: Kind::Concat(parts),
            flat,
        }
    }

    pub fn nest(n: usize, d: Doc) -> Doc {
        let flat = d.flat;
        Doc {
            kind: Kind::Nest(n, Box::new(d)),
            flat,
        }
    }

    pub fn align(d: Doc) -> Doc {
        let flat = d.flat;
        Doc {
            kind: Kind::Align(Box::new(d)),
            flat,
        }
    }

    pub fn group(d: Doc) -> Doc {
        let flat = d.flat;
        Doc {
            kind: Kind::Group(Box::new(d)),
            flat,
        }
    }

    /// Lay the document out in `width` columns, starting at column 0.
    pub fn render(&self, width: usize) -> String {
        let mut r = Renderer {
            out: String::new(),
            col: 0,
            width,
            after_comment: false,
            first_line: Vec::new(),
        };
        r.layout(self, 0, false);
        r.out
    }
}

impl Drop for Doc {
    // The derived drop recurses once per nesting level; take the children out instead.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        take_children(&mut self.kind, &mut stack);
        while let Some(mut d) = stack.pop() {
            take_children(&mut d.kind, &mut stack);
        }
    }
}

fn take_children(k: &mut Kind, out: &mut Vec<Doc>) {
    match k {
        Kind::Concat(parts) => out.append(parts),
        Kind::Nest(_, inner) | Kind::Align(inner) | Kind::Group(inner) | Kind::Trail(_, inner) => {
            out.push(std::mem::replace(&mut **inner, Doc::text("")));
        }
        Kind::Text(_) | Kind::Comment(_) | Kind::Line | Kind::HardLine => {}
    }
}

struct Renderer {
    out: String,
    col: usize,
    width: usize,
    /// The current line ends in a comment: the next text must start a new line.
    after_comment: bool,
    /// Trailing comments waiting for the end of the current line.
    first_line: Vec<String>,
}

impl Renderer {
    fn newline(&mut self, indent: usize) {
        self.after_comment = false;
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        for c in self.first_line.drain(..) {
            self.out.push_str(&c);
        }
        self.out.push('\n');
        self.out.push_str(&" ".repeat(indent));
        self.col = indent;
    }

    fn layout(&mut self, d: &Doc, indent: usize, flat: bool) {
        crate::stack::grow(|| self.layout_here(d, indent, flat));
    }

    fn layout_here(&mut self, d: &Doc, indent: usize, flat: bool) {
        match &d.kind {
            Kind::Text(s) => {
                if self.after_comment && !s.is_empty() {
                    self.newline(indent);
                }
                self.out.push_str(s);
                self.col += d.flat.unwrap_or(0);
            }
            Kind::Comment(s) => {
                self.out.push_str(s);
                self.col += s.chars().count();
                self.after_comment = true;
            }
            Kind::Line => {
                if flat && !self.after_comment {
                    self.out.push(' ');
                    self.col += 1;
                } else {
                    self.newline(indent);
                }
            }
            Kind::HardLine => self.newline(indent),
            Kind::Concat(parts) => {
                for p in parts {
                    self.layout(p, indent, flat);
                }
            }
            Kind::Trail(c, inner) => {
                let depth = self.first_line.len();
                self.first_line.push(c.clone());
                self.layout(inner, indent, flat);
                // no line break inside: the comment ends the document's only line
                if self.first_line.len() > depth {
                    for c in self.first_line.split_off(depth) {
                        self.col += c.chars().count();
                        self.out.push_str(&c);
                    }
                    self.after_comment = true;
                }
            }
            Kind::Nest(n, inner) => self.layout(inner, indent + n, flat),
            Kind::Align(inner) => {
                let col = self.col;
                self.layout(inner, col, flat);
            }
            Kind::Group(inner) => {
                let fits = flat
                    || inner
                        .flat
                        .is_some_and(|w| self.col.saturating_add(w) <= self.width);
                self.layout(inner, indent, fits);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &[&str]) -> Doc {
        let mut parts = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                parts.push(Doc::text(","));
                parts.push(Doc::line());
            }
            parts.push(Doc::text(*a));
        }
        Doc::group(Doc::concat(vec![
            Doc::text("f("),
            Doc::align(Doc::concat(parts)),
            Doc::text(")"),
        ]))
    }

    #[test]
    fn groups_break_only_when_too_wide() {
        assert_eq!(call(&["a", "b"]).render(80), "f(a, b)");
        assert_eq!(call(&["aaaa", "bbbb"]).render(8), "f(aaaa,\n  bbbb)");
    }

    #[test]
    fn text_after_a_comment_starts_a_new_line() {
        let d = Doc::concat(vec![
            Doc::text("f("),
            Doc::align(Doc::concat(vec![Doc::text("x"), Doc::comment(" # c")])),
            Doc::text(")"),
        ]);
        assert_eq!(d.render(80), "f(x # c\n)");
        let d = Doc::group(Doc::concat(vec![
            Doc::comment("# c"),
            Doc::line(),
            Doc::text("x"),
        ]));
        assert_eq!(d.flat, None);
        assert_eq!(d.render(80), "# c\nx");
    }

    #[test]
    fn a_trailing_comment_ends_the_first_line() {
        let body = || {
            Doc::concat(vec![
                Doc::text("head:"),
                Doc::nest(4, Doc::concat(vec![Doc::hard(), Doc::text("body")])),
            ])
        };
        assert_eq!(Doc::trail(" # c", body()).render(80), "head: # c\n    body");
        let d = Doc::concat(vec![Doc::trail(" # c", Doc::text("x")), Doc::text(")")]);
        assert_eq!(d.render(80), "x # c\n)");
    }

    #[test]
    fn hard_lines_force_breaks_and_nest_indents() {
        let d = Doc::group(Doc::concat(vec![
            Doc::text("fn x real:"),
            Doc::nest(4, Doc::concat(vec![Doc::line(), Doc::text("x")])),
        ]));
        assert_eq!(d.render(80), "fn x real: x");
        let d = Doc::concat(vec![
            Doc::text("fn x real:"),
            Doc::nest(4, Doc::concat(vec![Doc::hard(), Doc::text("x")])),
        ]);
        assert_eq!(d.flat, None);
        assert_eq!(d.render(80), "fn x real:\n    x");
    }
}
