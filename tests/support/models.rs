//! A generator of random small scalar *models*, for the simplifier's property test: `.hk`
//! programs of up to four random choices among normal, beta, gamma, poisson, categorical
//! and uniform, with parameters drawn from earlier variables or literals, observations
//! and weights in between, returning one or two of the variables (the others are latent).
//! It exists because the simplifier's rules interact (conjugacy, summing out discrete
//! variables, restrictions) in ways hand-written cases do not reach.
//!
//! The generator writes *text*, which the test loads with the front end: models are read
//! the way users write them, and a failing case prints as a program one can paste into
//! `slic-cas equiv`. Every model is well typed and defines a measure for every value of its
//! parameters (`fn m real`, `fn s prob` at most): distribution parameters are positive by
//! construction (a standard deviation is a literal or `v + 1/2`, never a bare draw that
//! may be 0), a categorical over a beta draw `p` is `[p, real2prob(1 - p)]`, and a uniform's
//! upper bound is its lower bound plus 2.
//!
//! Like `gen`, generation reads a *choice sequence* of bytes (0 past its end), and option 0
//! of every decision is the simplest, so proptest's shrinking of the bytes shrinks models.
//! The generator must not depend on the simplifier it tests.

use std::fmt;

use proptest::prelude::*;

/// A generated model: its program text (`fn` parameters first), and a *mutant*: the same
/// program with one parameter of the returned variable's distribution changed (a scale
/// times 3/2, a shape or rate plus 1, categorical weights reversed, a uniform widened),
/// which a meaning check should almost always tell apart from it.
#[derive(Clone)]
pub struct Model {
    pub text: String,
    pub mutant: String,
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Model:\n{}", self.text)
    }
}

/// Random models from random choice sequences.
pub fn arb_model() -> impl Strategy<Value = Model> {
    prop::collection::vec(any::<u8>(), 0..48).prop_map(|bytes| model_from_choices(&bytes))
}

/// What a variable holds, which decides where it may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Real,
    /// A positive prob (a gamma draw, the parameter `s`).
    Positive,
    /// A prob in (0, 1) (a beta draw).
    Unit,
    /// A nat of unbounded support (a poisson draw).
    Count,
    /// A nat in 0..n (a categorical draw over n literal weights).
    Index(u8),
}

struct Var {
    name: String,
    kind: Kind,
}

/// A distribution drawn by [`Builder::dist`].
struct Drawn {
    text: String,
    mutant: String,
    kind: Kind,
    at: Option<&'static str>,
}

/// Choices read from a sequence of random bytes (the one reader of both model
/// generators, `models` and `array_models`).
pub(crate) struct Chooser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Chooser<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Chooser<'a> {
        Chooser { bytes, pos: 0 }
    }

    /// A choice in `0..n` (`n >= 1`); 0 once the sequence is exhausted.
    pub(crate) fn pick(&mut self, n: usize) -> usize {
        let b = self.bytes.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        usize::from(b) % n.max(1)
    }

    pub(crate) fn one_of<'v>(&mut self, xs: &[&'v str]) -> &'v str {
        xs[self.pick(xs.len())]
    }
}

const REAL_LITS: [&str; 5] = ["0", "1", "-1", "1/2", "-3/2"];
const POS_LITS: [&str; 4] = ["1", "2", "1/2", "3"];

struct Builder<'a> {
    c: Chooser<'a>,
    vars: Vec<Var>,
}

impl Builder<'_> {
    fn of_kind(&self, ok: impl Fn(Kind) -> bool) -> Vec<usize> {
        (0..self.vars.len())
            .filter(|&i| ok(self.vars[i].kind))
            .collect()
    }

    fn choose_var(&mut self, ok: impl Fn(Kind) -> bool) -> Option<String> {
        let ids = self.of_kind(ok);
        if ids.is_empty() {
            return None;
        }
        let i = ids[self.c.pick(ids.len())];
        Some(self.vars[i].name.clone())
    }

    /// A real expression: a literal, a variable (nat and prob ones are coerced), an
    /// affine image of one, or a choice by a categorical index.
    fn real(&mut self) -> String {
        let lit = |b: &mut Self| b.c.one_of(&REAL_LITS).to_string();
        match self.c.pick(5) {
            1 => self.choose_var(|_| true).unwrap_or_else(|| lit(self)),
            2 => match self.choose_var(|_| true) {
                Some(v) => format!("{v} + {}", lit(self)),
                None => lit(self),
            },
            3 => match self.choose_var(|k| k == Kind::Real) {
                Some(v) => format!("2 * {v}"),
                None => lit(self),
            },
            4 => match self.choose_var(|k| matches!(k, Kind::Index(_))) {
                Some(k) => {
                    let (a, b) = (lit(self), lit(self));
                    format!("(if {k} == 0: {a} else: {b})")
                }
                None => lit(self),
            },
            _ => lit(self),
        }
    }

    /// A prob expression bounded away from 0: a positive literal, a prob draw plus 1/2,
    /// a nat plus 1, or `exp` of half a real variable.
    fn positive(&mut self) -> String {
        let lit = |b: &mut Self| b.c.one_of(&POS_LITS).to_string();
        match self.c.pick(4) {
            1 => match self.choose_var(|k| matches!(k, Kind::Positive | Kind::Unit)) {
                Some(v) => format!("{v} + 1/2"),
                None => lit(self),
            },
            2 => match self.choose_var(|k| matches!(k, Kind::Count | Kind::Index(_))) {
                Some(v) => format!("{v} + 1"),
                None => lit(self),
            },
            3 => match self.choose_var(|k| k == Kind::Real) {
                Some(v) => format!("exp({v} / 2)"),
                None => lit(self),
            },
            _ => lit(self),
        }
    }

    /// A primitive distribution with the kind of its draws, a value to observe it at
    /// (`None`: not observed, a uniform whose support is random), and a mutant: the
    /// same distribution with one parameter changed noticeably.
    fn dist(&mut self) -> Drawn {
        let d = |text: String, mutant: String, kind, at| Drawn {
            text,
            mutant,
            kind,
            at,
        };
        match self.c.pick(6) {
            1 => {
                let (a, b) = (self.positive(), self.positive());
                d(
                    format!("beta({a}, {b})"),
                    format!("beta({a} + 1, {b})"),
                    Kind::Unit,
                    Some("1/3"),
                )
            }
            2 => {
                let (a, b) = (self.positive(), self.positive());
                d(
                    format!("gamma({a}, {b})"),
                    format!("gamma({a} + 1, {b})"),
                    Kind::Positive,
                    Some("3/2"),
                )
            }
            3 => {
                let r = self.positive();
                d(
                    format!("poisson({r})"),
                    format!("poisson({r} + 1)"),
                    Kind::Count,
                    Some("2"),
                )
            }
            4 => {
                let two = |b: &mut Self| match b.choose_var(|k| k == Kind::Unit) {
                    Some(p) if b.c.pick(2) == 1 => (
                        format!("categorical([{p}, real2prob(1 - {p})])"),
                        format!("categorical([real2prob(1 - {p}), {p}])"),
                    ),
                    _ => (
                        "categorical([1, 2])".to_string(),
                        "categorical([2, 1])".to_string(),
                    ),
                };
                match self.c.pick(2) {
                    1 => d(
                        "categorical([1/2, 1, 3/2])".to_string(),
                        "categorical([3/2, 1, 1/2])".to_string(),
                        Kind::Index(3),
                        Some("2"),
                    ),
                    _ => {
                        let (text, mutant) = two(self);
                        d(text, mutant, Kind::Index(2), Some("1"))
                    }
                }
            }
            5 => {
                let lo = self.real();
                d(
                    format!("uniform({lo}, {lo} + 2)"),
                    format!("uniform({lo}, {lo} + 3)"),
                    Kind::Real,
                    None,
                )
            }
            _ => {
                let (m, s) = (self.real(), self.positive());
                d(
                    format!("normal({m}, {s})"),
                    format!("normal({m}, ({s}) * 3/2)"),
                    Kind::Real,
                    Some("1/2"),
                )
            }
        }
    }

    /// An observation statement: of a distribution whose parameter is the variable just
    /// drawn, in the conjugate shape where there is one (normal mean, Bernoulli bias,
    /// Poisson rate), or of a random distribution.
    fn observation(&mut self) -> String {
        let last = self.vars.last().map(|v| (v.name.clone(), v.kind));
        let likelihood = match last {
            Some((x, Kind::Real | Kind::Count | Kind::Index(_))) if self.c.pick(3) != 2 => {
                Some((format!("normal({x}, 1)"), "1/2"))
            }
            Some((p, Kind::Unit)) if self.c.pick(3) != 2 => {
                Some((format!("categorical([{p}, real2prob(1 - {p})])"), "0"))
            }
            Some((l, Kind::Positive)) if self.c.pick(3) != 2 => {
                Some((format!("poisson({l})"), "2"))
            }
            _ => None,
        };
        if let Some((d, v)) = likelihood {
            return format!("_ <~ observe({d}, {v})\n");
        }
        let obs = self.dist();
        match obs.at {
            Some(v) => format!("_ <~ observe({}, {v})\n", obs.text),
            None => String::new(),
        }
    }

    /// A weight bounded by a constant: a logistic sigmoid, a Gaussian bump, or a literal.
    fn weight(&mut self) -> String {
        match self.c.pick(3) {
            1 => match self.choose_var(|k| k == Kind::Real) {
                Some(v) => format!("recip(1 + exp(-{v}))"),
                None => "1/2".to_string(),
            },
            2 => {
                let r = self.real();
                format!("exp(-({r}) ^ 2 / 2)")
            }
            _ => "1/2".to_string(),
        }
    }
}

/// The model a choice sequence describes (see the module doc).
pub fn model_from_choices(bytes: &[u8]) -> Model {
    let mut b = Builder {
        c: Chooser { bytes, pos: 0 },
        vars: Vec::new(),
    };
    let mut head = String::new();
    let params = b.c.pick(3);
    if params >= 1 {
        head.push_str("fn m real:\n");
        b.vars.push(Var {
            name: "m".into(),
            kind: Kind::Real,
        });
    }
    if params >= 2 {
        head.push_str("fn s prob:\n");
        b.vars.push(Var {
            name: "s".into(),
            kind: Kind::Positive,
        });
    }
    // per draw: its statement (original and mutant) and what follows it
    let mut draws: Vec<(String, String, String)> = Vec::new();
    let binds = 1 + b.c.pick(4);
    for i in 0..binds {
        let drawn = b.dist();
        let name = format!("x{i}");
        let mut after = String::new();
        b.vars.push(Var {
            name: name.clone(),
            kind: drawn.kind,
        });
        match b.c.pick(4) {
            1 => after = b.observation(),
            2 => after = format!("_ <~ factor({})\n", b.weight()),
            _ => {}
        }
        draws.push((
            format!("{name} <~ {}\n", drawn.text),
            format!("{name} <~ {}\n", drawn.mutant),
            after,
        ));
    }
    // the last draw is returned unless a choice returns another, or two
    let n = draws.len();
    let first = n - 1 - b.c.pick(n);
    let ret = if n > 1 && b.c.pick(2) == 1 {
        let second = (first + 1 + b.c.pick(n - 1)) % n;
        format!("(x{first}, x{second})")
    } else {
        format!("x{first}")
    };
    let (mut text, mut mutant) = (head.clone(), head);
    for (i, (stmt, changed, after)) in draws.iter().enumerate() {
        text.push_str(stmt);
        mutant.push_str(if i == first { changed } else { stmt });
        text.push_str(after);
        mutant.push_str(after);
    }
    text.push_str(&format!("return {ret}\n"));
    mutant.push_str(&format!("return {ret}\n"));
    Model { text, mutant }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_choice_sequence_is_the_simplest_model() {
        let m = model_from_choices(&[]);
        assert_eq!(m.text, "x0 <~ normal(0, 1)\nreturn x0\n");
        assert_eq!(m.mutant, "x0 <~ normal(0, (1) * 3/2)\nreturn x0\n");
    }
}
