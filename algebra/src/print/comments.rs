//! The comments `slic-cas fmt` prints back: a side table from the statements of a core
//! term to the `#` comments written next to them.
//!
//! It exists because core terms are hash-consed and carry no comments (nor positions),
//! while a program printed as written must keep them. Statements are the one thing of a
//! program that both the source and the core term name uniquely: each binds a fresh
//! variable, so a [`VarId`] says which statement a comment belongs to whatever the term's
//! sharing. `front::load_with_comments` builds the table from the source; the printer
//! ([`super::print_with_comments`]) takes each entry out as it prints its anchor, so a
//! comment prints once, and prints the entries it never reached at the end of the file
//! rather than dropping them. Only `fmt` uses this: `simplify` prints new terms and no
//! comments.

use rustc_hash::FxHashMap;

use crate::term::VarId;

/// Where a comment is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// A statement of a block: `x = e`, `x <~ m`, `def x(...)`, or one of the file's
    /// `fn x T:` lines, by the variable it binds.
    Stmt(VarId),
    /// The final expression of the block whose last statement binds this variable.
    Tail(VarId),
    /// The file's final expression when its top block has no statement.
    Top,
}

/// One comment: its text (from `#`, without trailing blanks) and its position in the
/// source, which orders comments that end up in one place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub pos: u32,
    pub text: String,
}

/// The comments of a program, by where they print.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comments {
    /// Comment lines printed just before the anchor, at its column.
    pub before: FxHashMap<Anchor, Vec<Note>>,
    /// Comments printed at the end of the anchor's last line (several join on one line).
    pub trailing: FxHashMap<Anchor, Vec<Note>>,
    /// Comment lines after the last line of the program.
    pub end: Vec<Note>,
    /// Comment lines before the first line of the program (among its `import` and
    /// `data` lines, which print before the term).
    pub top: Vec<Note>,
    /// The `import` lines and `data` declarations to print before the term.
    pub prelude: super::Prelude,
}

impl Comments {
    pub fn is_empty(&self) -> bool {
        self.before.is_empty()
            && self.trailing.is_empty()
            && self.end.is_empty()
            && self.top.is_empty()
            && self.prelude.is_empty()
    }

    /// The comments to print before `a`, removed from the table.
    pub(super) fn take_before(&mut self, a: Anchor) -> Vec<Note> {
        self.before.remove(&a).unwrap_or_default()
    }

    /// The comments to print after `a`, removed from the table.
    pub(super) fn take_trailing(&mut self, a: Anchor) -> Vec<Note> {
        self.trailing.remove(&a).unwrap_or_default()
    }

    /// Everything not printed yet, in source order: the end-of-file lines, and any entry
    /// whose anchor the printed term did not contain.
    pub(super) fn take_rest(&mut self) -> Vec<Note> {
        let mut rest = std::mem::take(&mut self.end);
        rest.extend(self.before.drain().flat_map(|(_, v)| v));
        rest.extend(self.trailing.drain().flat_map(|(_, v)| v));
        rest.sort_by_key(|n| n.pos);
        rest
    }
}
