//! Test support for the polynomial modules: a tiny parser for polynomial literals, so
//! tests are one-line tables (`"x^2 - 2*x + 1"`, `"(x + y)^3"`, `"1/2*x*z"`).
//!
//! Variables `x, y, z, w` (and `x0`..`x9`) are 0, 1, 2, 3 (0..9). Test-only: it panics on
//! malformed input, which is a test bug.

use super::Poly;
use crate::num::Rational;

/// Parses a polynomial literal (see the module doc).
pub fn p(s: &str) -> Poly {
    let toks: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    let mut parser = Parser { toks, pos: 0 };
    let out = parser.expr();
    assert_eq!(parser.pos, parser.toks.len(), "trailing input in {s:?}");
    out
}

/// A rational literal `"3"`, `"-1/2"`.
pub fn q(s: &str) -> Rational {
    p(s).as_constant().expect("a constant")
}

struct Parser {
    toks: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.toks.get(self.pos).copied()
    }

    fn expr(&mut self) -> Poly {
        let mut acc = self.term();
        while let Some(c @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let t = self.term();
            acc = if c == '+' { acc.add(&t) } else { acc.sub(&t) };
        }
        acc
    }

    fn term(&mut self) -> Poly {
        let mut acc = self.factor();
        while let Some(c @ ('*' | '/')) = self.peek() {
            self.pos += 1;
            let f = self.factor();
            acc = if c == '*' {
                acc.mul(&f)
            } else {
                let k = f
                    .as_constant()
                    .and_then(|k| k.recip())
                    .expect("constant divisor");
                acc.scale(&k)
            };
        }
        acc
    }

    fn factor(&mut self) -> Poly {
        if self.peek() == Some('-') {
            self.pos += 1;
            return self.factor().neg();
        }
        let base = self.atom();
        if self.peek() == Some('^') {
            self.pos += 1;
            let e = self.number();
            return base.pow(e as u32);
        }
        base
    }

    fn number(&mut self) -> i64 {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let s: String = self.toks[start..self.pos].iter().collect();
        s.parse().expect("a number")
    }

    fn atom(&mut self) -> Poly {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let e = self.expr();
                assert_eq!(self.peek(), Some(')'));
                self.pos += 1;
                e
            }
            Some(c) if c.is_ascii_digit() => Poly::constant(Rational::from_integer(self.number())),
            Some(c) => {
                self.pos += 1;
                let v = match c {
                    'x' if self.peek().is_some_and(|d| d.is_ascii_digit()) => self.number() as u32,
                    'x' => 0,
                    'y' => 1,
                    'z' => 2,
                    'w' => 3,
                    _ => panic!("unexpected {c:?}"),
                };
                Poly::var(v)
            }
            None => panic!("unexpected end"),
        }
    }
}
