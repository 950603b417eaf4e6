//! Derivatives of canonical forms with respect to a variable, by the chain rule through
//! kernels (`d/dx e^s = e^s s'`, `d/dx b^r = r b^r b'/b`, `d/dx log b = b'/b`); a kernel
//! that mentions the variable in any other way (`erf(x)`, `a[x]`, `floor(x)`) has no
//! derivative here. The basis of [`crate::ode::operator`].
//!
//! A [`Calculus`] borrows a `canon` session and works on its [`Normal`]s: each kernel is
//! classified once ([`Role`]) and its derivative memoised, so a product of fifty
//! likelihood factors (one `Exp` kernel after canonicalisation) costs one derivative of
//! one exponent. `real2prob(e)` asserts that `e` is non-negative and has `e`'s value
//! there (canon reads it the same way), so its derivative is `e'`, and
//! [`Calculus::algebraic`] replaces it by `e` in results: `real2prob(x) ** 2` for a real
//! `x` has the log-derivative `2 / x`.
//!
//! Results are exact rational functions over the session's kernels but not necessarily
//! canonical (no `exp`/power laws are re-applied to derivatives): a caller may rely on
//! the value, never on a non-canonical result being recognised. This file builds no
//! terms and decides nothing about distributions.

use rustc_hash::FxHashMap;
use slic_algebra::canon::{Canon, Kernel, Normal};
use slic_algebra::poly::Poly;
use slic_algebra::vars::mentions;
use slic_algebra::{Coercion, Node, Rational, VarId};

use crate::recognise::Miss;

/// The most terms one intermediate numerator or denominator may have (the default
/// budget of a `canon` session).
pub const MAX_TERMS: usize = 5000;

/// How deep kernels may nest inside one another's exponents and bases before the
/// derivative gives up ([`Miss::Budget`]); keeps recursion on user structure bounded.
pub const MAX_DEPTH: u32 = 64;

/// The highest degree in the variable of the argument `e` of a `real2prob(e)` kernel
/// (after its own coercions are read as their arguments) that derivatives accept; every
/// family needs at most 2, and higher ones make the log-derivative a quotient of long
/// polynomials whose reduction costs far more than it could ever win
/// ([`Miss::Budget`]).
pub const MAX_ALGEBRAIC_DEGREE: u32 = 16;

/// How a kernel depends on the variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// It does not mention the variable: a constant.
    Free,
    /// The variable itself.
    Var,
    /// `real2prob(e)` with `e` mentioning the variable: its value is `e` (this form).
    Algebraic(Normal),
    /// `e^s` or `b^r` mentioning the variable: its log-derivative `k'/k`.
    Hyper(Normal),
    /// `log(b)` with `b` mentioning the variable: its derivative `b'/b`.
    Log(Normal),
}

/// Derivatives in one variable within one `canon` session (see the module doc).
pub struct Calculus<'c, 's> {
    canon: &'c mut Canon<'s>,
    var: VarId,
    x: u32,
    roles: FxHashMap<u32, Role>,
    derivatives: FxHashMap<u32, Normal>,
    depth: u32,
}

/// `Overflow` of a `Normal` operation, as the recognition answer it leads to.
fn budget<T>(r: Result<T, slic_algebra::canon::Overflow>) -> Result<T, Miss> {
    r.map_err(|_| Miss::Budget)
}

/// The most terms the denominator of a sum or product may reach. Log-derivatives of
/// families have denominators of one or two small factors; a product of many distinct
/// factors (`Π real2prob(x - a_i)`) would make every addition a gcd of ever longer
/// polynomials (seconds at a dozen factors), for an answer that cannot be a family.
pub const MAX_DEN_TERMS: usize = 256;

fn den_len(n: &Normal) -> usize {
    n.den().terms().len()
}

/// `a + b` within [`MAX_TERMS`] and [`MAX_DEN_TERMS`].
pub fn add(a: &Normal, b: &Normal) -> Result<Normal, Miss> {
    if a.den() != b.den() && den_len(a).saturating_mul(den_len(b)) > MAX_DEN_TERMS {
        return Err(Miss::Budget);
    }
    budget(a.add(b, MAX_TERMS))
}

/// `a - b` within the budgets of [`add`].
pub fn sub(a: &Normal, b: &Normal) -> Result<Normal, Miss> {
    add(a, &b.neg())
}

/// `a * b` within [`MAX_TERMS`] and [`MAX_DEN_TERMS`].
pub fn mul(a: &Normal, b: &Normal) -> Result<Normal, Miss> {
    if den_len(a).saturating_mul(den_len(b)) > MAX_DEN_TERMS {
        return Err(Miss::Budget);
    }
    budget(a.mul(b, MAX_TERMS))
}

/// `a / b` within [`MAX_TERMS`]; `None` when `b` is zero.
pub fn div(a: &Normal, b: &Normal) -> Result<Option<Normal>, Miss> {
    budget(a.div(b, MAX_TERMS))
}

impl<'c, 's> Calculus<'c, 's> {
    /// A calculus in `var` over `canon`'s kernels (the atom `var` is added to the table
    /// if it is not there yet).
    pub fn new(canon: &'c mut Canon<'s>, var: VarId) -> Result<Calculus<'c, 's>, Miss> {
        let t = canon.store_mut().var_term(var);
        let n = canon.normal(t).map_err(|_| Miss::NotHolonomic)?;
        let x = match n.as_scaled_kernel() {
            Some((k, c)) if c.is_one() => k,
            _ => return Err(Miss::NotHolonomic),
        };
        let mut roles = FxHashMap::default();
        roles.insert(x, Role::Var);
        Ok(Calculus {
            canon,
            var,
            x,
            roles,
            derivatives: FxHashMap::default(),
            depth: 0,
        })
    }

    /// The session's kernel index of the variable.
    pub fn var_kernel(&self) -> u32 {
        self.x
    }

    pub fn canon(&mut self) -> &mut Canon<'s> {
        self.canon
    }

    /// How kernel `k` depends on the variable; [`Miss::NotHolonomic`] for a kernel that
    /// mentions it in a way with no derivative rule.
    pub fn role(&mut self, k: u32) -> Result<Role, Miss> {
        if let Some(r) = self.roles.get(&k) {
            return Ok(r.clone());
        }
        if self.depth >= MAX_DEPTH {
            return Err(Miss::Budget);
        }
        self.depth += 1;
        let r = self.classify(k);
        self.depth -= 1;
        let r = r?;
        self.roles.insert(k, r.clone());
        Ok(r)
    }

    fn classify(&mut self, k: u32) -> Result<Role, Miss> {
        let Some(info) = self.canon.kernels().get(k) else {
            return Err(Miss::NotHolonomic);
        };
        let (kernel, base, is_log) = (info.kernel.clone(), info.base.clone(), info.is_log);
        match kernel {
            Kernel::Pi => Ok(Role::Free),
            Kernel::Exp(s) => {
                if !self.mentions(&s)? {
                    return Ok(Role::Free);
                }
                Ok(Role::Hyper(self.derivative(&s)?))
            }
            Kernel::Pow(b, r) => {
                let bn = match base {
                    Some((_, bn)) => bn,
                    None => self.normal(b)?,
                };
                if !self.mentions(&bn)? {
                    return Ok(Role::Free);
                }
                let ld = self.log_derivative(&bn)?;
                Ok(Role::Hyper(ld.scale(&r)))
            }
            Kernel::Atom(t) => {
                if !mentions(self.canon.store(), t, self.var) {
                    return Ok(Role::Free);
                }
                if is_log {
                    let bn = match base {
                        Some((_, bn)) => bn,
                        None => return Err(Miss::NotHolonomic),
                    };
                    return Ok(Role::Log(self.log_derivative(&bn)?));
                }
                match *self.canon.store().node(t) {
                    Node::Coerce(Coercion::Real2Prob, e) => {
                        let en = self.normal(e)?;
                        // inner coercions first (their roles are memoised), so every
                        // algebraic form is free of them and one substitution pass
                        // suffices
                        let en = self.algebraic(&en)?;
                        let x = self.x;
                        if en.num().degree_in(x).max(en.den().degree_in(x)) > MAX_ALGEBRAIC_DEGREE {
                            return Err(Miss::Budget);
                        }
                        Ok(Role::Algebraic(en))
                    }
                    _ => Err(Miss::NotHolonomic),
                }
            }
        }
    }

    fn normal(&mut self, t: slic_algebra::TermId) -> Result<Normal, Miss> {
        self.canon.normal(t).map_err(|_| Miss::NotHolonomic)
    }

    /// Does `n` mention the variable (through any of its kernels)?
    pub fn mentions(&mut self, n: &Normal) -> Result<bool, Miss> {
        for p in [n.num(), n.den()] {
            for v in p.vars() {
                if self.role(v)? != Role::Free {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Is every kernel of `n` that mentions the variable the variable itself (so `n` is
    /// a rational function of it over the other symbols)?
    pub fn is_rational_in_var(&mut self, n: &Normal) -> Result<bool, Miss> {
        for p in [n.num(), n.den()] {
            for v in p.vars() {
                match self.role(v)? {
                    Role::Free | Role::Var => {}
                    _ => return Ok(false),
                }
            }
        }
        Ok(true)
    }

    /// `dk/dx` for kernel `k` (memoised).
    pub fn kernel_derivative(&mut self, k: u32) -> Result<Normal, Miss> {
        if let Some(d) = self.derivatives.get(&k) {
            return Ok(d.clone());
        }
        let d = self.kernel_derivative_here(k)?;
        self.derivatives.insert(k, d.clone());
        Ok(d)
    }

    fn kernel_derivative_here(&mut self, k: u32) -> Result<Normal, Miss> {
        Ok(match self.role(k)? {
            Role::Free => Normal::zero(),
            Role::Var => Normal::one(),
            Role::Algebraic(e) => {
                self.enter()?;
                let d = self.derivative(&e);
                self.depth -= 1;
                d?
            }
            Role::Hyper(ld) => mul(&Normal::kernel(k), &ld)?,
            Role::Log(d) => d,
        })
    }

    fn enter(&mut self) -> Result<(), Miss> {
        if self.depth >= MAX_DEPTH {
            return Err(Miss::Budget);
        }
        self.depth += 1;
        Ok(())
    }

    /// `dp/dx` for a polynomial over the kernels.
    pub fn poly_derivative(&mut self, p: &Poly) -> Result<Normal, Miss> {
        let mut acc = Normal::zero();
        for v in p.vars() {
            let dv = self.kernel_derivative(v)?;
            if dv.is_zero() {
                continue;
            }
            let partial = Normal::from_poly(p.derivative(v));
            let term = mul(&partial, &dv)?;
            acc = add(&acc, &term)?;
        }
        Ok(acc)
    }

    /// `dn/dx` (quotient rule over the numerator and denominator).
    pub fn derivative(&mut self, n: &Normal) -> Result<Normal, Miss> {
        let dnum = self.poly_derivative(n.num())?;
        let (num, den) = (Normal::from_poly(n.num().clone()), n.den());
        if den.as_constant().is_some() {
            let d = Normal::from_poly(den.clone());
            return div(&dnum, &d).map(|q| q.unwrap_or_else(Normal::zero));
        }
        let dden = self.poly_derivative(den)?;
        let den = Normal::from_poly(den.clone());
        // (N' D - N D') / D^2
        let top = mul(&dnum, &den)?;
        let minus = mul(&num, &dden)?;
        let top = sub(&top, &minus)?;
        let den2 = mul(&den, &den)?;
        Ok(div(&top, &den2)?.unwrap_or_else(Normal::zero))
    }

    /// `n'/n` (zero for zero): `N'/N - D'/D`, with the log-derivative of each monomial
    /// factor summed kernel by kernel so that `e^s` contributes `s'` and never itself.
    pub fn log_derivative(&mut self, n: &Normal) -> Result<Normal, Miss> {
        if n.is_zero() {
            return Ok(Normal::zero());
        }
        let a = self.poly_log_derivative(n.num())?;
        let b = self.poly_log_derivative(n.den())?;
        sub(&a, &b)
    }

    /// `p'/p` for a non-zero polynomial.
    pub fn poly_log_derivative(&mut self, p: &Poly) -> Result<Normal, Miss> {
        if let [(m, _)] = p.terms() {
            let mut acc = Normal::zero();
            for &(k, e) in m.pairs() {
                let ld = self.kernel_log_derivative(k)?;
                let w = Rational::from_integer(i64::from(e));
                acc = add(&acc, &ld.scale(&w))?;
            }
            return Ok(acc);
        }
        let d = self.poly_derivative(p)?;
        let pn = Normal::from_poly(p.clone());
        Ok(div(&d, &pn)?.unwrap_or_else(Normal::zero))
    }

    /// `k'/k` for kernel `k`.
    pub fn kernel_log_derivative(&mut self, k: u32) -> Result<Normal, Miss> {
        match self.role(k)? {
            Role::Free => Ok(Normal::zero()),
            Role::Hyper(ld) => Ok(ld),
            _ => {
                let d = self.kernel_derivative(k)?;
                Ok(div(&d, &Normal::kernel(k))?.unwrap_or_else(Normal::zero))
            }
        }
    }

    /// `n` with every `real2prob(e)` kernel that mentions the variable replaced by `e`
    /// (recursively: `e` may hold such kernels too; their [`Role::Algebraic`] forms are
    /// already free of them, so one pass suffices).
    pub fn algebraic(&mut self, n: &Normal) -> Result<Normal, Miss> {
        let mut subs: Vec<(u32, Normal)> = Vec::new();
        for p in [n.num(), n.den()] {
            for v in p.vars() {
                if let Role::Algebraic(e) = self.role(v)? {
                    if !subs.iter().any(|s| s.0 == v) {
                        subs.push((v, e));
                    }
                }
            }
        }
        if subs.is_empty() {
            return Ok(n.clone());
        }
        // numerator and denominator separately, divided once at the end: a polynomial
        // stays a polynomial under polynomial values, with no gcd on the way
        let mut num = Normal::from_poly(n.num().clone());
        let mut den = Normal::from_poly(n.den().clone());
        for (v, e) in subs {
            num = substitute(&num, v, &e)?;
            den = substitute(&den, v, &e)?;
        }
        if den.num().terms().len() > MAX_DEN_TERMS || den_len(&num) > MAX_DEN_TERMS {
            return Err(Miss::Budget);
        }
        div(&num, &den)?.ok_or(Miss::NotHolonomic)
    }
}

/// `p` with kernel `v` replaced by `value` (Horner's scheme in `Normal` arithmetic).
pub fn substitute_poly(p: &Poly, v: u32, value: &Normal) -> Result<Normal, Miss> {
    let cs = p.coefficients_in(v);
    let mut acc = Normal::zero();
    let mut iter = cs.iter().peekable();
    while let Some((d, c)) = iter.next() {
        acc = add(&acc, &Normal::from_poly(c.clone()))?;
        let next = iter.peek().map_or(0, |n| n.0);
        let step = i64::from(d - next);
        if step > 0 {
            let pw = budget(value.pow(step, MAX_TERMS))?.ok_or(Miss::NotHolonomic)?;
            acc = mul(&acc, &pw)?;
        }
    }
    Ok(acc)
}

/// `n` with kernel `v` replaced by `value`; [`Miss::NotHolonomic`] if the denominator
/// becomes zero.
pub fn substitute(n: &Normal, v: u32, value: &Normal) -> Result<Normal, Miss> {
    if n.is_polynomial() {
        return substitute_poly(n.num(), v, value);
    }
    let num = substitute_poly(n.num(), v, value)?;
    let den = substitute_poly(n.den(), v, value)?;
    div(&num, &den)?.ok_or(Miss::NotHolonomic)
}

/// Is `n` free of `var` (no kernel's term or exponent mentions it)? Kernels nested
/// deeper than [`MAX_DEPTH`] count as mentioning it.
pub fn free_of(canon: &Canon, n: &Normal, var: VarId) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    normal_free_of(canon, n, var, 0, &mut seen)
}

/// Each kernel is looked at once (`seen`), so a long exponent costs one pass over its
/// terms, not a sort of its variables.
fn normal_free_of(
    canon: &Canon,
    n: &Normal,
    var: VarId,
    depth: u32,
    seen: &mut rustc_hash::FxHashSet<u32>,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    for p in [n.num(), n.den()] {
        for (m, _) in p.terms() {
            for &(k, _) in m.pairs() {
                if !seen.insert(k) {
                    continue;
                }
                let Some(info) = canon.kernels().get(k) else {
                    return false;
                };
                let free = match &info.kernel {
                    Kernel::Pi => true,
                    Kernel::Atom(t) | Kernel::Pow(t, _) => !mentions(canon.store(), *t, var),
                    Kernel::Exp(s) => normal_free_of(canon, s, var, depth + 1, seen),
                };
                if !free {
                    return false;
                }
            }
        }
    }
    true
}
