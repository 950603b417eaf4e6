//! Recognition of continuous factors: operator, then the family whose operator has the
//! same coefficient ratio on the same support, then the weight.
//!
//! The log-derivative `r = f'/f` ([`crate::ode::first_order`]) is read on the support,
//! moved to the family's standard support by an affine map where there is one:
//! - reals: `r = c1 x + c0` is normal (`c1 < 0`); `r = -c (x - m) / ((x - m)^2 + q)` is
//!   Student-t (`c > 1`, `q > 0`; Cauchy is `c = 2`);
//! - `(lo, ∞)` (or `(-∞, hi)`, reflected): with `x = lo + u`, `r = c0/u + c1` is gamma
//!   (`c0 > -1`, `c1 < 0`; the exponential is `c0 = 0`);
//! - `(lo, hi)`: with `x = lo + (hi - lo) u`, `r = (a-1)/u - (b-1)/(1-u)` is beta
//!   (`a, b > 0`), and `r = 0` is uniform.
//!
//! Every inequality is proved before an answer is given: structurally (a positive
//! constant, or a quotient of polynomials with positive coefficients over kernels that
//! are never negative and one strictly positive term) or by `cond::decide` under the
//! context; otherwise the answer is [`Miss::Unproved`] (a constant that fails is
//! [`Miss::NoFamily`]). Prob-typed variables and array elements are taken to be strictly
//! positive: a zero scale or shape lies outside every family's parameter space, and the
//! simplifier's parameters are used as such.
//!
//! The weight: `f` and the family's kernel `K` satisfy the same first-order ODE on the
//! connected support, so `f = C K` there with `C` free of `x`, and `∫ f = C Z` with `Z`
//! the kernel's exact integral. `C Z` is read as the canonical form of `f / K · Z`; when
//! that still mentions `x` (two spellings of one function that canon does not identify,
//! like `x` and `real2prob(x)`), it is evaluated at an interior point of the support
//! instead, which the ODE makes exact. All work happens in one `canon` session, so the
//! factor is canonicalised once.

use slic_algebra::assume::{Context, Tri};
use slic_algebra::canon::{Canon, Kernel, Normal};
use slic_algebra::poly::{Monomial, Poly};
use slic_algebra::{cond, Node, Prim, Rational, Store, TermId, Type, VarId};

use super::Miss;
use crate::diff::{self, MAX_DEPTH};
use crate::family::continuous::{self as table, Unnormalised};
use crate::family::{Affine, Family, Recognised};
use crate::ode::{self, FirstOrder};
use crate::support::{is_infinite, Support};
use crate::terms;

pub(super) fn recognise(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    x: VarId,
    support: &Support,
) -> Result<Recognised, Miss> {
    let Support::Real { lo, hi } = *support else {
        return Err(Miss::NoFamily);
    };
    let lo = lo.filter(|&t| !is_infinite(store, t));
    let hi = hi.filter(|&t| !is_infinite(store, t));
    let mut canon = Canon::new(store, ctx.clone());
    let op = ode::first_order(&mut canon, f, x)?;
    let mut s = Session {
        canon,
        x,
        f,
        op,
        positive_atoms: Default::default(),
        square_sums: Default::default(),
        grams: Vec::new(),
    };
    let candidate = match (lo, hi) {
        (None, None) => s.on_reals()?,
        (Some(lo), None) => s.gamma(lo, false)?,
        (None, Some(hi)) => s.gamma(hi, true)?,
        (Some(lo), Some(hi)) => s.interval(lo, hi)?,
    };
    s.finish(candidate)
}

/// A family that fits the operator, before the weight is known.
struct Candidate {
    family: Family,
    map: Affine,
    /// `K(x)`, the family's kernel at the recognised variable, and `∫ K(x) dx` over
    /// the support.
    kernel: Unnormalised,
    /// An interior point of the support (real).
    point: TermId,
}

/// One recognition: the `canon` session, the factor and its operator.
struct Session<'s> {
    canon: Canon<'s>,
    x: VarId,
    f: TermId,
    op: FirstOrder,
    /// Atoms proved positive by [`Session::prove_positive_atoms`]: a sum of positive
    /// elements over a range the context proves non-empty, or a coercion to prob of a
    /// value the context proves positive.
    positive_atoms: rustc_hash::FxHashSet<TermId>,
    /// Loop kernels `Σ_{j<N} f(j)` read by [`Session::find_square_sums`], each with the
    /// kernel of `Σ_{j<N} f(j)^2` and `N` as a polynomial: what
    /// [`Session::positive_by_cauchy_schwarz`] bounds the loop's square by.
    square_sums: rustc_hash::FxHashMap<u32, (u32, Poly)>,
    /// Gram matrices of loop kernels found by [`Session::find_grams`], for
    /// [`Session::positive_gram`].
    grams: Vec<Gram>,
}

/// `G[a][b] = Σ_{j<N} φ_a(j) φ_b(j)` for features `φ` (the constant 1, whose entry is
/// `N`, and loop bodies `f` whose `Σ f` and `Σ f^2` are both kernels), each entry one
/// kernel: a Gram matrix, positive semi-definite whatever the data.
#[derive(Clone, Debug)]
struct Gram {
    entries: Vec<Vec<u32>>,
}

/// The most features a Gram matrix is built over (its determinant has `k!` terms).
const MAX_GRAM: usize = 4;

/// The determinant of a square matrix of polynomials, by cofactor expansion along the
/// first row (small matrices only: [`MAX_GRAM`]).
fn det(m: &[Vec<Poly>]) -> Poly {
    match m.len() {
        0 => Poly::one(),
        1 => m[0][0].clone(),
        k => {
            let mut acc = Poly::zero();
            for col in 0..k {
                let minor: Vec<Vec<Poly>> = m[1..]
                    .iter()
                    .map(|row| {
                        row.iter()
                            .enumerate()
                            .filter(|&(c, _)| c != col)
                            .map(|(_, p)| p.clone())
                            .collect()
                    })
                    .collect();
                let term = m[0][col].mul(&det(&minor));
                acc = if col % 2 == 0 {
                    acc.add(&term)
                } else {
                    acc.sub(&term)
                };
            }
            acc
        }
    }
}

/// `Overflow` of a `Normal` operation, as a budget miss.
fn budget<T>(r: Result<T, slic_algebra::canon::Overflow>) -> Result<T, Miss> {
    r.map_err(|_| Miss::Budget)
}

/// The highest degree in the variable any family's operator has (a Weibull's of shape
/// 8, `r u = 7 - c u^8`); a higher one fits no family and is never expanded into a dense
/// list.
const MAX_DEGREE: u32 = 8;

/// The coefficients of `p` in kernel `x`, lowest degree first (dense), or `None` above
/// [`MAX_DEGREE`].
fn dense(p: &Poly, x: u32) -> Option<Vec<Poly>> {
    let degree = p.degree_in(x);
    if degree > MAX_DEGREE {
        return None;
    }
    let mut out = vec![Poly::zero(); degree as usize + 1];
    for (d, c) in p.coefficients_in(x) {
        if let Some(slot) = out.get_mut(d as usize) {
            *slot = c;
        }
    }
    Some(out)
}

impl Session<'_> {
    fn store(&mut self) -> &mut Store {
        self.canon.store_mut()
    }

    /// The variable as a real term.
    fn var_real(&mut self) -> TermId {
        let x = self.x;
        let t = self.store().var_term(x);
        terms::real(self.store(), t)
    }

    /// `n` as a canonical term of type `ty`.
    fn term(&mut self, n: &Normal, ty: &Type) -> Result<TermId, Miss> {
        let t = self.canon.to_term(n, ty).map_err(|_| Miss::NotHolonomic)?;
        Ok(self.canon.canonicalize(t))
    }

    fn canonical(&mut self, t: TermId) -> TermId {
        self.canon.canonicalize(t)
    }

    /// The coefficients of `n` as a polynomial in the variable (lowest degree first):
    /// `Ok(None)` when its denominator mentions the variable, [`Miss::NoFamily`] when its
    /// degree is above every family's.
    fn coefficients(&self, n: &Normal) -> Result<Option<Vec<Normal>>, Miss> {
        let x = self.op.x;
        if n.den().degree_in(x) > 0 {
            return Ok(None);
        }
        let den = n.den().clone();
        let cs = dense(n.num(), x).ok_or(Miss::NoFamily)?;
        Ok(Some(
            cs.into_iter()
                .map(|c| Normal::from_parts(c, den.clone()).unwrap_or_else(Normal::zero))
                .collect(),
        ))
    }

    /// `σ · r(shift + σ u)`: the log-derivative in `u` for `x = shift + σ u`.
    fn compose(&self, r: &Normal, shift: &Normal, scale: &Normal) -> Result<Normal, Miss> {
        let x = self.op.x;
        let u = diff::mul(scale, &Normal::kernel(x))?;
        let value = diff::add(shift, &u)?;
        let s = diff::substitute(r, x, &value)?;
        diff::mul(&s, scale)
    }

    // ---- the families ----------------------------------------------------------------

    /// On the reals: normal when `r` is a polynomial, else Student-t.
    fn on_reals(&mut self) -> Result<Candidate, Miss> {
        let r = self.op.r.clone();
        match self.coefficients(&r)? {
            Some(cs) => self.normal(&cs),
            None => self.student(&r),
        }
    }

    /// `r = c1 x + c0`, `c1 < 0`: normal(-c0/c1, sqrt(-1/c1)).
    fn normal(&mut self, cs: &[Normal]) -> Result<Candidate, Miss> {
        let [c0, c1] = cs else {
            return Err(Miss::NoFamily);
        };
        let c1t = self.term(c1, &Type::Real)?;
        let c0t = self.term(c0, &Type::Real)?;
        let neg_c1 = terms::neg(self.store(), c1t);
        let neg_c1 = self.canonical(neg_c1);
        self.require_positive(neg_c1)?;
        let var = terms::recip(self.store(), neg_c1, &Type::Prob);
        let var = self.canonical(var);
        let sd = terms::sqrt(self.store(), var);
        let sd = self.canonical(sd);
        let neg_c0 = terms::neg(self.store(), c0t);
        let mean = terms::div(self.store(), neg_c0, c1t, &Type::Real);
        let mean = self.canonical(mean);
        let x = self.var_real();
        let kernel = table::normal_kernel(self.store(), x, c1t, c0t, var);
        let point = terms::int(self.store(), 0, Type::Real);
        Ok(Candidate {
            family: Family::Normal { mean, sd },
            map: Affine::default(),
            kernel,
            point,
        })
    }

    /// `r = -c (x - m) / ((x - m)^2 + q)`, `c > 1`, `q > 0`: Student-t with `nu = c - 1`,
    /// location `m`, scale `sqrt(q / nu)`.
    fn student(&mut self, r: &Normal) -> Result<Candidate, Miss> {
        let x = self.op.x;
        let ns = dense(r.num(), x).ok_or(Miss::NoFamily)?;
        let ds = dense(r.den(), x).ok_or(Miss::NoFamily)?;
        let (n0, n1) = match ns.as_slice() {
            [n0] => (n0.clone(), Poly::zero()),
            [n0, n1] => (n0.clone(), n1.clone()),
            _ => return Err(Miss::NoFamily),
        };
        let [d0, d1, d2] = ds.as_slice() else {
            return Err(Miss::NoFamily);
        };
        // -c d2 (x - m) with m = -d1 / (2 d2): the numerator vanishes where the
        // denominator is smallest, i.e. 2 d2 n0 = n1 d1
        let two = slic_algebra::Rational::from_integer(2);
        if d2.mul(&n0).scale(&two) != n1.mul(d1) || n1.is_zero() {
            return Err(Miss::NoFamily);
        }
        let over_d2 =
            |p: &Poly| Normal::from_parts(p.clone(), d2.clone()).unwrap_or_else(Normal::zero);
        let m = Normal::from_parts(d1.neg(), d2.scale(&two)).unwrap_or_else(Normal::zero);
        let m2 = diff::mul(&m, &m)?;
        let q = diff::sub(&over_d2(d0), &m2)?;
        let c = over_d2(&n1.neg());
        let mt = self.term(&m, &Type::Real)?;
        let qr = self.term(&q, &Type::Real)?;
        let ct = self.term(&c, &Type::Real)?;
        let one = terms::int(self.store(), 1, Type::Real);
        let nu_r = terms::sub(self.store(), ct, one);
        let nu_r = self.canonical(nu_r);
        self.require_positive(nu_r)?;
        self.require_positive(qr)?;
        let nu = terms::prob(self.store(), nu_r);
        let nu = self.canonical(nu);
        let qp = terms::prob(self.store(), qr);
        let qp = self.canonical(qp);
        let ratio = terms::div(self.store(), qp, nu, &Type::Prob);
        let scale = terms::sqrt(self.store(), ratio);
        let scale = self.canonical(scale);
        let xr = self.var_real();
        let kernel = table::student_kernel(self.store(), xr, mt, qp, ct, nu);
        Ok(Candidate {
            family: Family::StudentT { nu, loc: mt, scale },
            map: Affine::default(),
            kernel,
            point: mt,
        })
    }

    /// On `(bound, ∞)` (or `(-∞, bound)` when `reflected`), with `x = bound ± u`:
    /// `r(u) = c0/u + c1`, `c0 > -1`, `c1 < 0`: gamma(c0 + 1, -1/c1).
    fn gamma(&mut self, bound: TermId, reflected: bool) -> Result<Candidate, Miss> {
        let bound = terms::real(self.store(), bound);
        let bound = self.canonical(bound);
        if !reflected {
            if let Some(c) = self.pareto(bound)? {
                return Ok(c);
            }
        }
        let at_zero = !reflected && terms::is_literal(self.store(), bound, 0);
        let bn = self.canon.normal(bound).map_err(|_| Miss::NotHolonomic)?;
        let sigma = Normal::constant(slic_algebra::Rational::from_integer(if reflected {
            -1
        } else {
            1
        }));
        let ru = self.compose(&self.op.r.clone(), &bn, &sigma)?;
        let q = diff::mul(&ru, &Normal::kernel(self.op.x))?;
        let cs = self.coefficients(&q)?.ok_or(Miss::NoFamily)?;
        let (c0, c1) = match cs.as_slice() {
            [c0, c1] => (c0.clone(), c1.clone()),
            [q0, mid @ .., qk] if at_zero && mid.iter().all(Normal::is_zero) => {
                return self.weibull(&q0.clone(), &qk.clone(), cs.len() - 1)
            }
            _ => return Err(Miss::NoFamily),
        };
        let c1t = self.term(&c1, &Type::Real)?;
        let c0t = self.term(&c0, &Type::Real)?;
        let neg_c1 = terms::neg(self.store(), c1t);
        let neg_c1 = self.canonical(neg_c1);
        self.require_positive(neg_c1)?;
        let one = terms::int(self.store(), 1, Type::Real);
        let shape_r = terms::add(self.store(), vec![c0t, one], &Type::Real);
        let shape_r = self.canonical(shape_r);
        self.require_positive(shape_r)?;
        let shape = terms::prob(self.store(), shape_r);
        let shape = self.canonical(shape);
        let scale = terms::recip(self.store(), neg_c1, &Type::Prob);
        let scale = self.canonical(scale);
        let xr = self.var_real();
        let (u, point, map_scale) = if reflected {
            let u = terms::sub(self.store(), bound, xr);
            let p = terms::sub(self.store(), bound, one);
            let m = terms::int(self.store(), -1, Type::Real);
            (u, p, Some(m))
        } else {
            let u = terms::sub(self.store(), xr, bound);
            let p = terms::add(self.store(), vec![bound, one], &Type::Real);
            (u, p, None)
        };
        let kernel = table::gamma_kernel(self.store(), u, c1t, c0t, shape, scale);
        let shift = (!terms::is_literal(self.store(), bound, 0)).then_some(bound);
        Ok(Candidate {
            family: Family::Gamma { shape, scale },
            map: Affine {
                shift,
                scale: map_scale,
            },
            kernel,
            point,
        })
    }

    /// On `(xm, ∞)`, `xm > 0`: `r = c0/x`, a power of `x` itself, with `c0 < -1` is
    /// pareto(xm, -c0 - 1), kernel `x^c0`, integral `xm^(c0 + 1) / (-c0 - 1)`. `Ok(None)`
    /// when `r x` mentions `x` or `xm > 0` is not proved (then it is no pareto, and the
    /// gamma shapes are tried).
    fn pareto(&mut self, xm: TermId) -> Result<Option<Candidate>, Miss> {
        let q = diff::mul(&self.op.r.clone(), &Normal::kernel(self.op.x))?;
        if q.is_zero() || !diff::free_of(&self.canon, &q, self.x) {
            return Ok(None);
        }
        if self.require_positive(xm).is_err() {
            return Ok(None);
        }
        let c0 = self.term(&q, &Type::Real)?;
        let one = terms::int(self.store(), 1, Type::Real);
        let neg = terms::neg(self.store(), c0);
        let alpha_r = terms::sub(self.store(), neg, one);
        let alpha_r = self.canonical(alpha_r);
        self.require_positive(alpha_r)?;
        let alpha = terms::prob(self.store(), alpha_r);
        let alpha = self.canonical(alpha);
        let xm_p = terms::prob(self.store(), xm);
        let xm_p = self.canonical(xm_p);
        let xr = self.var_real();
        let factor = terms::real_pow(self.store(), xr, c0);
        let minus_alpha = terms::neg(self.store(), alpha_r);
        let top = terms::real_pow(self.store(), xm_p, minus_alpha);
        let z = terms::div(self.store(), top, alpha, &Type::Prob);
        let point = terms::add(self.store(), vec![xm, one], &Type::Real);
        Ok(Some(Candidate {
            family: Family::Pareto { xm: xm_p, alpha },
            map: Affine::default(),
            kernel: Unnormalised {
                factor,
                exponent: None,
                z,
                z_exponent: None,
            },
            point,
        }))
    }

    /// On `(0, ∞)`: `r(u) = q0/u + qk u^(k-1)` with `q0 = k - 1` (a whole `k >= 2`) and
    /// `qk < 0` is weibull(k, (k / -qk)^(1/k)), kernel `u^(k-1) exp(qk u^k / k)`, integral
    /// `1 / -qk` (by `v = u^k`).
    fn weibull(&mut self, q0: &Normal, qk: &Normal, k: usize) -> Result<Candidate, Miss> {
        let kk = i64::try_from(k).map_err(|_| Miss::NoFamily)?;
        if q0.as_constant() != Some(Rational::from_integer(kk - 1)) {
            return Err(Miss::NoFamily);
        }
        let qkt = self.term(qk, &Type::Real)?;
        let c = terms::neg(self.store(), qkt);
        let c = self.canonical(c);
        self.require_positive(c)?;
        let cp = terms::prob(self.store(), c);
        let xr = self.var_real();
        let factor = terms::pow(self.store(), xr, kk - 1);
        let factor = terms::prob(self.store(), factor);
        let xk = terms::pow(self.store(), xr, kk);
        let inv_k = terms::ratio(self.store(), 1, kk, Type::Real);
        let exponent = terms::mul(self.store(), vec![qkt, xk, inv_k], &Type::Real);
        let z = terms::recip(self.store(), cp, &Type::Prob);
        let kp = terms::int(self.store(), kk, Type::Prob);
        let base = terms::div(self.store(), kp, cp, &Type::Prob);
        let lambda = terms::real_pow(self.store(), base, inv_k);
        let lambda = self.canonical(lambda);
        let point = terms::int(self.store(), 1, Type::Real);
        Ok(Candidate {
            family: Family::Weibull { k: kp, lambda },
            map: Affine::default(),
            kernel: Unnormalised {
                factor,
                exponent: Some(exponent),
                z,
                z_exponent: None,
            },
            point,
        })
    }

    /// On `(lo, hi)`, `lo > 0` (not the literal 0, where the beta takes it): `r = k/x` for
    /// a non-zero rational `k` is the power `x^k`, integral `(hi^(k+1) - lo^(k+1))/(k+1)`,
    /// or `log(hi) - log(lo)` for `k = -1`. `Ok(None)` for any other shape.
    fn power(&mut self, lo: TermId, hi: TermId, point: TermId) -> Result<Option<Candidate>, Miss> {
        if terms::is_literal(self.store(), lo, 0) {
            return Ok(None);
        }
        let q = diff::mul(&self.op.r.clone(), &Normal::kernel(self.op.x))?;
        let Some(k) = q.as_constant().filter(|k| !k.is_zero()) else {
            return Ok(None);
        };
        if self.require_positive(lo).is_err() {
            return Ok(None);
        }
        let kt = terms::lit(self.store(), k.clone(), Type::Real);
        let xr = self.var_real();
        let factor = terms::real_pow(self.store(), xr, kt);
        let (lo_p, hi_p) = (terms::prob(self.store(), lo), terms::prob(self.store(), hi));
        let k1 = &k + &Rational::from_integer(1);
        let z_real = if k1.is_zero() {
            let lh = self.store().prim(Prim::Log, vec![hi_p], Type::Real);
            let ll = self.store().prim(Prim::Log, vec![lo_p], Type::Real);
            terms::sub(self.store(), lh, ll)
        } else {
            let k1t = terms::lit(self.store(), k1.clone(), Type::Real);
            let ph = terms::real_pow(self.store(), hi_p, k1t);
            let pl = terms::real_pow(self.store(), lo_p, k1t);
            let (ph, pl) = (terms::real(self.store(), ph), terms::real(self.store(), pl));
            let d = terms::sub(self.store(), ph, pl);
            let inv = terms::lit(self.store(), k1.recip().ok_or(Miss::NoFamily)?, Type::Real);
            terms::mul(self.store(), vec![d, inv], &Type::Real)
        };
        let z = terms::prob(self.store(), z_real);
        Ok(Some(Candidate {
            family: Family::Power { k: kt, lo, hi },
            map: Affine::default(),
            kernel: Unnormalised {
                factor,
                exponent: None,
                z,
                z_exponent: None,
            },
            point,
        }))
    }

    /// On `(lo, hi)`, with `x = lo + w u`, `w = hi - lo > 0`: `r = 0` is uniform(lo, hi);
    /// `r(u) = (a-1)/u - (b-1)/(1-u)`, `a, b > 0`, is beta(a, b).
    fn interval(&mut self, lo: TermId, hi: TermId) -> Result<Candidate, Miss> {
        let lo = terms::real(self.store(), lo);
        let lo = self.canonical(lo);
        let hi = terms::real(self.store(), hi);
        let hi = self.canonical(hi);
        let w = terms::sub(self.store(), hi, lo);
        let w = self.canonical(w);
        self.require_positive(w)?;
        let half = terms::ratio(self.store(), 1, 2, Type::Real);
        let hw = terms::mul(self.store(), vec![half, w], &Type::Real);
        let point = terms::add(self.store(), vec![lo, hw], &Type::Real);
        let wp = terms::prob(self.store(), w);
        let wp = self.canonical(wp);
        let ln = self.canon.normal(lo).map_err(|_| Miss::NotHolonomic)?;
        let wn = self.canon.normal(w).map_err(|_| Miss::NotHolonomic)?;
        let ru = self.compose(&self.op.r.clone(), &ln, &wn)?;
        if ru.is_zero() {
            let kernel = table::uniform_kernel(self.store(), wp);
            return Ok(Candidate {
                family: Family::Uniform { lo, hi },
                map: Affine::default(),
                kernel,
                point,
            });
        }
        if let Some(c) = self.power(lo, hi, point)? {
            return Ok(c);
        }
        // q = r(u) u (1 - u) = (a-1)(1-u) - (b-1) u
        let x = self.op.x;
        let u1 = Poly::var(x).mul(&Poly::one().sub(&Poly::var(x)));
        let q = diff::mul(&ru, &Normal::from_poly(u1))?;
        let cs = self.coefficients(&q)?.ok_or(Miss::NoFamily)?;
        let (q0, q1) = match cs.as_slice() {
            [q0] => (q0.clone(), q0.clone()),
            [q0, k] => (q0.clone(), diff::add(q0, k)?),
            _ => return Err(Miss::NoFamily),
        };
        let am1 = self.term(&q0, &Type::Real)?;
        let bm1 = self.term(&q1.neg(), &Type::Real)?;
        let one = terms::int(self.store(), 1, Type::Real);
        let a_r = terms::add(self.store(), vec![am1, one], &Type::Real);
        let a_r = self.canonical(a_r);
        let b_r = terms::add(self.store(), vec![bm1, one], &Type::Real);
        let b_r = self.canonical(b_r);
        self.require_positive(a_r)?;
        self.require_positive(b_r)?;
        let a = terms::prob(self.store(), a_r);
        let a = self.canonical(a);
        let b = terms::prob(self.store(), b_r);
        let b = self.canonical(b);
        let xr = self.var_real();
        let d = terms::sub(self.store(), xr, lo);
        let u = terms::div(self.store(), d, w, &Type::Real);
        let mut kernel = table::beta_kernel(self.store(), u, am1, bm1, a, b);
        kernel.z = terms::mul(self.store(), vec![kernel.z, wp], &Type::Prob);
        let shift = (!terms::is_literal(self.store(), lo, 0)).then_some(lo);
        let scale = (!terms::is_literal(self.store(), w, 1)).then_some(w);
        Ok(Candidate {
            family: Family::Beta { a, b },
            map: Affine { shift, scale },
            kernel,
            point,
        })
    }

    // ---- the weight ------------------------------------------------------------------

    /// The canonical form of `f / K · Z`. When `f`'s canonical form is `R · e^s` (one
    /// exponential, the usual conjugate shape), the exponents of `f`, `K` and `Z` are
    /// added as canonical forms before one `exp` is taken, so a long exponent (the
    /// normal posterior under many observations) is built once, never written and read
    /// back, and not merged three times.
    fn ratio_normal(&mut self, k: &Unnormalised) -> Result<Normal, Miss> {
        let inv = terms::recip(self.store(), k.factor, &Type::Prob);
        let other = terms::mul(self.store(), vec![inv, k.z], &Type::Prob);
        let other = self.form(other)?;
        let mut exps = Vec::new();
        if let Some(t) = k.exponent {
            exps.push(self.form(t)?.neg());
        }
        if let Some(t) = k.z_exponent {
            exps.push(self.form(t)?);
        }
        let f = self.op.f.clone();
        let rest = match peel_exp(&self.canon, &f) {
            Some((rest, s)) if !exps.is_empty() => {
                // f's exponent first: the short ones merge into it, the long one last
                exps.insert(0, s);
                rest
            }
            _ => f,
        };
        let mut e = Normal::zero();
        for x in exps {
            e = self.sum(&e, &x)?;
        }
        let ex = budget(self.canon.exp(&e))?;
        let w = budget(self.canon.mul(&rest, &ex))?;
        budget(self.canon.mul(&w, &other))
    }

    /// `a + b` for canonical forms: plain polynomial addition when both are
    /// polynomials (no monomial is multiplied, so the laws still hold), the session's
    /// addition otherwise.
    fn sum(&mut self, a: &Normal, b: &Normal) -> Result<Normal, Miss> {
        if a.is_polynomial() && b.is_polynomial() {
            Ok(Normal::from_poly(a.num().add(b.num())))
        } else {
            budget(self.canon.add(a, b))
        }
    }

    /// The term `f / K · Z` (for evaluation at a point).
    fn ratio_term(&mut self, k: &Unnormalised) -> TermId {
        let inv = terms::recip(self.store(), k.factor, &Type::Prob);
        let mut factors = vec![self.f, inv, k.z];
        let mut exps = Vec::new();
        if let Some(e) = k.exponent {
            exps.push(terms::neg(self.store(), e));
        }
        if let Some(e) = k.z_exponent {
            exps.push(e);
        }
        if !exps.is_empty() {
            let sum = terms::add(self.store(), exps, &Type::Real);
            factors.push(terms::exp(self.store(), sum));
        }
        terms::mul(self.store(), factors, &Type::Prob)
    }

    fn form(&mut self, t: TermId) -> Result<Normal, Miss> {
        self.canon.normal(t).map_err(|_| Miss::NotHolonomic)
    }

    /// `C · Z` with `f = C K` (see the module doc).
    fn finish(mut self, c: Candidate) -> Result<Recognised, Miss> {
        let mut n = self.ratio_normal(&c.kernel)?;
        if !diff::free_of(&self.canon, &n, self.x) {
            let ratio = self.ratio_term(&c.kernel);
            let x = self.x;
            let ty = self.store().var_type(x).clone();
            let p = terms::coerce(self.store(), c.point, &ty);
            let at = slic_algebra::vars::substitute1(self.store(), ratio, x, p);
            n = self.form(at)?;
            if !diff::free_of(&self.canon, &n, self.x) {
                return Err(Miss::Unproved);
            }
        }
        let weight = self
            .canon
            .to_term(&n, &Type::Prob)
            .map_err(|_| Miss::NotHolonomic)?;
        Ok(Recognised {
            weight,
            family: c.family,
            map: c.map,
        })
    }

    // ---- proofs ----------------------------------------------------------------------

    /// `Ok` when `t > 0` is proved; [`Miss::NoFamily`] when `t` is a constant that is
    /// not positive, [`Miss::Unproved`] otherwise.
    fn require_positive(&mut self, t: TermId) -> Result<(), Miss> {
        let n = self.canon.normal(t).map_err(|_| Miss::NotHolonomic)?;
        if let Some(c) = n.as_constant() {
            return if c.is_positive() {
                Ok(())
            } else {
                Err(Miss::NoFamily)
            };
        }
        self.prove_positive_atoms(&n);
        self.find_square_sums(&n);
        self.find_grams(&n);
        if self.positive_form(&n, 0) {
            return Ok(());
        }
        let ctx = self.canon.context().clone();
        let store = self.store();
        let zero = terms::int(store, 0, Type::Real);
        let tr = terms::real(store, t);
        let lt = store.prim(Prim::Lt, vec![zero, tr], Type::Bool);
        match cond::decide(store, &ctx, lt) {
            Tri::True => Ok(()),
            _ => Err(Miss::Unproved),
        }
    }

    /// Records the atoms of `n` that are strictly positive given the context:
    /// - a sum of strictly positive elements (prob array elements or variables) over a
    ///   range `lo..hi` the context proves non-empty (`summate j from i + 1 to n: a[j]`
    ///   inside a plate of `n - 1`), positive under the module's assumption on prob
    ///   elements;
    /// - a coercion to prob of a value, or a real or integer variable, the context proves
    ///   positive (`real2prob(s)` or `s` under `s <~ uniform(3, 8)`, the thermometer's
    ///   noise).
    fn prove_positive_atoms(&mut self, n: &Normal) {
        for k in kernels_of(n) {
            let Some(info) = self.canon.kernels().get(k) else {
                continue;
            };
            let Kernel::Atom(t) = info.kernel else {
                continue;
            };
            if self.positive_atoms.contains(&t) {
                continue;
            }
            // `lo < hi`, with `None` for 0.
            let claim = {
                let store = self.canon.store();
                match *store.node(t) {
                    Node::Summate(_, lo, hi, body)
                        if *store.ty(body) == Type::Prob
                            && matches!(store.node(body), Node::Var(_) | Node::Index(..)) =>
                    {
                        Some((Some(lo), hi))
                    }
                    Node::Coerce(_, e) if *store.ty(t) == Type::Prob => Some((None, e)),
                    Node::Var(_) if matches!(store.ty(t), Type::Real | Type::Int) => {
                        Some((None, t))
                    }
                    _ => None,
                }
            };
            let Some((lo, hi)) = claim else {
                continue;
            };
            let ctx = self.canon.context().clone();
            let store = self.store();
            let lo = lo.unwrap_or_else(|| terms::int(store, 0, store.ty(hi).clone()));
            let lt = store.prim(Prim::Lt, vec![lo, hi], Type::Bool);
            if cond::decide(store, &ctx, lt) == Tri::True {
                self.positive_atoms.insert(t);
            }
        }
    }

    /// Records, for each kernel of `n` that is a loop `Σ_{j<N} f(j)` from 0, the kernel of
    /// `Σ_{j<N} f(j)^2` over the same range and `N` (a polynomial over the session's
    /// kernels), for [`Self::positive_by_cauchy_schwarz`]. Issue 10: the precision of a
    /// regression coefficient once another is integrated out, and the rate of a noise
    /// precision once the mean is, are positive only by Cauchy-Schwarz
    /// (`N Σ y^2 - (Σ y)^2 >= 0`), which no sign of the separate terms shows.
    fn find_square_sums(&mut self, n: &Normal) {
        let ks = kernels_of(n);
        for k in ks {
            if self.square_sums.contains_key(&k) {
                continue;
            }
            let Some(info) = self.canon.kernels().get(k) else {
                continue;
            };
            let Kernel::Atom(t) = info.kernel else {
                continue;
            };
            let (j, lo, hi, body) = match *self.canon.store().node(t) {
                Node::Summate(j, lo, hi, body) => (j, lo, hi, body),
                _ => continue,
            };
            // from 0 to a nat bound, the loop has exactly N terms (an empty range is
            // N = 0, never a negative count)
            let from_zero = matches!(self.canon.store().node(lo), Node::Lit(q) if q.is_zero());
            if !from_zero || *self.canon.store().ty(hi) != Type::Nat {
                continue;
            }
            let store = self.store();
            let ty = store.ty(body).clone();
            let sty = store.ty(t).clone();
            let two = terms::int(store, 2, Type::Nat);
            let sq = store.prim(Prim::Pow, vec![body, two], ty);
            let s2 = store.intern(Node::Summate(j, lo, hi, sq), sty);
            let (Ok(w), Ok(count)) = (self.canon.normal(s2), self.canon.normal(hi)) else {
                continue;
            };
            let Some((w, c)) = w.as_scaled_kernel() else {
                continue;
            };
            if !c.is_one() || w == k || count.den().as_constant().is_none_or(|d| !d.is_one()) {
                continue;
            }
            self.square_sums.insert(k, (w, count.num().clone()));
        }
    }

    /// Records the Gram matrices (see [`Gram`]) over the loops of `n` that
    /// [`Self::find_square_sums`] read: per loop range, the features are the bodies `f`
    /// with `Σ f` and `Σ f^2` kernels, with the constant 1 first when `N` is a kernel;
    /// every cross sum `Σ f g` must be a kernel too.
    fn find_grams(&mut self, n: &Normal) {
        let mut ranges: Vec<(VarId, TermId)> = Vec::new();
        let mut features: Vec<Vec<(u32, TermId)>> = Vec::new();
        let used: Vec<u32> = n
            .num()
            .terms()
            .iter()
            .chain(n.den().terms().iter())
            .flat_map(|(m, _)| m.pairs().iter().map(|&(k, _)| k).collect::<Vec<_>>())
            .collect();
        // a feature's loop and its square's both occur in `n` (building `Σ f^2` to look
        // for it made a kernel; one not in `n` says nothing about its terms)
        let mut linear: Vec<u32> = self
            .square_sums
            .iter()
            .filter(|(k, (w, _))| used.contains(k) && used.contains(w))
            .map(|(k, _)| *k)
            .collect();
        linear.sort_unstable();
        for k in linear {
            let Some(Kernel::Atom(t)) = self.canon.kernels().get(k).map(|i| i.kernel.clone())
            else {
                continue;
            };
            let Node::Summate(j, _, hi, body) = *self.canon.store().node(t) else {
                continue;
            };
            match ranges.iter().position(|r| *r == (j, hi)) {
                Some(at) => features[at].push((k, body)),
                None => {
                    ranges.push((j, hi));
                    features.push(vec![(k, body)]);
                }
            }
        }
        for ((j, hi), fs) in ranges.into_iter().zip(features) {
            let Ok(count) = self.canon.normal(hi) else {
                continue;
            };
            let Some((nk, c)) = count.as_scaled_kernel() else {
                continue;
            };
            let with_one = c.is_one() && used.contains(&nk);
            let k = fs.len() + usize::from(with_one);
            if !(2..=MAX_GRAM).contains(&k) {
                continue;
            }
            let mut entries = vec![vec![0u32; k]; k];
            let off = usize::from(with_one);
            if with_one {
                entries[0][0] = nk;
                for (a, &(s, _)) in fs.iter().enumerate() {
                    entries[0][a + 1] = s;
                    entries[a + 1][0] = s;
                }
            }
            let mut ok = true;
            for a in 0..fs.len() {
                for b in a..fs.len() {
                    let e = if a == b {
                        self.square_sums.get(&fs[a].0).map(|&(w, _)| w)
                    } else {
                        self.cross_sum(j, hi, fs[a].1, fs[b].1)
                    };
                    let Some(e) = e else {
                        ok = false;
                        break;
                    };
                    entries[a + off][b + off] = e;
                    entries[b + off][a + off] = e;
                }
            }
            if ok {
                self.grams.push(Gram { entries });
            }
        }
    }

    /// The kernel of `Σ_{j<hi} f g`, when that loop is one kernel with coefficient 1.
    fn cross_sum(&mut self, j: VarId, hi: TermId, f: TermId, g: TermId) -> Option<u32> {
        let store = self.store();
        let ty = if *store.ty(f) == Type::Prob && *store.ty(g) == Type::Prob {
            Type::Prob
        } else {
            Type::Real
        };
        let fr = if ty == Type::Real {
            terms::real(store, f)
        } else {
            f
        };
        let gr = if ty == Type::Real {
            terms::real(store, g)
        } else {
            g
        };
        let prod = store.prim(Prim::Mul, vec![fr, gr], ty.clone());
        let zero = terms::int(store, 0, Type::Nat);
        let s = store.intern(Node::Summate(j, zero, hi, prod), ty);
        let (k, c) = self.canon.normal(s).ok()?.as_scaled_kernel()?;
        c.is_one().then_some(k)
    }

    /// `p = c · det(G + D)` for a Gram matrix `G` of [`Self::grams`] (see [`Gram`]), a
    /// constant `c > 0` and a constant symmetric positive definite `D` (the priors'
    /// precisions): `G + D` is positive definite, so `p > 0`. `c` and `D` are read from
    /// the coefficients of `p` (of `Π G_ii`, of `Π_{i≠a} G_ii`, of `G_ab Π_{i∉{a,b}}
    /// G_ii`), then `p` is checked equal to the expanded determinant. Issue 10: the
    /// rate of a regression's noise precision once slope and intercept are integrated
    /// out is `det(G + D) / det(G' + D')` over the data's sums `n, Σx, Σy, Σx^2, ..`.
    fn positive_gram(&self, p: &Poly) -> bool {
        self.grams.iter().any(|g| {
            let k = g.entries.len();
            let var = |a: usize, b: usize| g.entries[a][b];
            let diag_but = |skip: &[usize]| {
                Monomial::from_pairs((0..k).filter(|i| !skip.contains(i)).map(|i| (var(i, i), 1)))
            };
            let coef = |m: &Monomial| {
                p.terms()
                    .iter()
                    .find(|(t, _)| t == m)
                    .map(|(_, c)| c.clone())
                    .unwrap_or_else(Rational::zero)
            };
            let c = coef(&diag_but(&[]));
            let Some(inv_c) = c.recip().filter(|_| c.is_positive()) else {
                return false;
            };
            let half = Rational::from_integer(-2)
                .recip()
                .unwrap_or_else(Rational::zero);
            // D_aa from `Π_{i≠a} G_ii`; D_ab from the transposition of a and b, whose
            // `-(G_ab + D_ab)^2` gives `-2 D_ab G_ab Π_{i∉{a,b}} G_ii`
            let d: Vec<Vec<Rational>> = (0..k)
                .map(|a| {
                    (0..k)
                        .map(|b| {
                            if a == b {
                                &coef(&diag_but(&[a])) * &inv_c
                            } else {
                                let m = diag_but(&[a, b]).mul(&Monomial::var(var(a, b), 1));
                                &(&coef(&m) * &inv_c) * &half
                            }
                        })
                        .collect()
                })
                .collect();
            // D positive definite: every leading principal minor positive (Sylvester)
            for size in 1..=k {
                let minor: Vec<Vec<Poly>> = (0..size)
                    .map(|a| (0..size).map(|b| Poly::constant(d[a][b].clone())).collect())
                    .collect();
                if !det(&minor).as_constant().is_some_and(|v| v.is_positive()) {
                    return false;
                }
            }
            let m: Vec<Vec<Poly>> = (0..k)
                .map(|a| {
                    (0..k)
                        .map(|b| Poly::var(var(a, b)).add(&Poly::constant(d[a][b].clone())))
                        .collect()
                })
                .collect();
            det(&m).scale(&c) == *p
        })
    }

    /// Is `n` positive by its form: numerator and denominator both (or both negated)
    /// positive polynomials?
    fn positive_form(&self, n: &Normal, depth: u32) -> bool {
        let (num, den) = (n.num(), n.den());
        (self.positive_poly(num, depth) && self.positive_poly(den, depth))
            || (self.positive_poly(&num.neg(), depth) && self.positive_poly(&den.neg(), depth))
    }

    /// Positive by form: positive coefficients over never-negative factors (kernels known
    /// `>= 0`, or any kernel to an even power), with one term whose kernels are all
    /// strictly positive (`1 + y^2/2`); or a quadratic `a v^2 + b v + c` in one kernel
    /// with `a > 0` and `4ac - b^2 > 0` (`(y - mu)^2 + 2` expanded), recursively.
    fn positive_poly(&self, p: &Poly, depth: u32) -> bool {
        let kernels = self.canon.kernels();
        let by_terms = !p.is_zero()
            && p.terms().iter().all(|(m, c)| {
                c.is_positive()
                    && m.pairs()
                        .iter()
                        .all(|&(k, e)| e % 2 == 0 || kernels.get(k).is_some_and(|i| i.nonneg))
            })
            && p.terms().iter().any(|(m, _)| {
                m.pairs()
                    .iter()
                    .all(|&(k, _)| self.strictly_positive(k, depth))
            });
        by_terms
            || (depth < MAX_DEPTH.min(8) && self.positive_quadratic(p, depth + 1))
            || (depth < MAX_DEPTH.min(8) && self.positive_with_complement(p, depth + 1))
            || (depth < MAX_DEPTH.min(8) && self.positive_cofactor(p, depth + 1))
            || (depth < MAX_DEPTH.min(8) && self.positive_by_cauchy_schwarz(p, depth + 1))
            || self.positive_gram(p)
    }

    /// `p = m·q` with `m` a product of strictly positive kernels common to every term
    /// (`invNoise·(...)`, a precision scaled by the noise's): `p > 0` when `q > 0`.
    fn positive_cofactor(&self, p: &Poly, depth: u32) -> bool {
        let Some((first, _)) = p.terms().first() else {
            return false;
        };
        let common: Vec<(u32, u32)> = first
            .pairs()
            .iter()
            .filter_map(|&(k, _)| {
                let e = p.terms().iter().map(|(m, _)| m.degree_in(k)).min()?;
                (e > 0 && self.strictly_positive(k, depth)).then_some((k, e))
            })
            .collect();
        if common.is_empty() {
            return false;
        }
        let m = Monomial::from_pairs(common);
        let mut terms = Vec::with_capacity(p.terms().len());
        for (t, c) in p.terms() {
            let Some(q) = t.div(&m) else {
                return false;
            };
            terms.push((q, c.clone()));
        }
        self.positive_poly(&Poly::from_terms(terms), depth)
    }

    /// `p = -k (v + e)^2 + r1 w + r0` with `v = Σ_{j<N} f(j)`, `w = Σ_{j<N} f(j)^2` (see
    /// [`Self::find_square_sums`]), `k > 0` and `e` constants, and `r1 = k (N + g)` with a
    /// constant `g >= 0`: by Cauchy-Schwarz on `(f(0), .., f(N-1), e/√g)` and `(1, .., 1,
    /// √g)`, `(v + e)^2 <= (N + g)(w + e^2/g)` (`g = 0` needs `e = 0`: `v^2 <= N w`), so
    /// `p >= r0 - k (N + g) e^2/g`, and that positive by form proves `p > 0`
    /// (`(n + 1)(Σ y^2 + 25) - (Σ y + 5)^2 + 2 (n + 1)`, a normal-gamma posterior's rate).
    fn positive_by_cauchy_schwarz(&self, p: &Poly, depth: u32) -> bool {
        p.vars().into_iter().any(|v| {
            let Some((w, count)) = self.square_sums.get(&v) else {
                return false;
            };
            if p.degree_in(v) != 2 || p.degree_in(*w) > 1 {
                return false;
            }
            let (a, b, c) = quadratic_in(p, v);
            let (Some(a), Some(b)) = (a.as_constant(), b.as_constant()) else {
                return false;
            };
            if !a.is_negative() {
                return false;
            }
            let k = -a;
            let two_k = &k * &Rational::from_integer(2);
            let Some(inv_two_k) = two_k.recip() else {
                return false;
            };
            // -k v^2 + b v = -k (v + e)^2 + k e^2 with e = -b / (2k)
            let e = -(&b * &inv_two_k);
            let r = c.add(&Poly::constant(&k * &(&e * &e)));
            let (mut r1, mut r0) = (Poly::zero(), Poly::zero());
            for (d, coef) in r.coefficients_in(*w) {
                if d == 1 {
                    r1 = coef;
                } else {
                    r0 = coef;
                }
            }
            let Some(inv_k) = k.recip() else {
                return false;
            };
            let Some(g) = r1.sub(&count.scale(&k)).as_constant().map(|d| &d * &inv_k) else {
                return false;
            };
            if g.is_negative() {
                return false;
            }
            let d = match g.recip() {
                Some(inv_g) => &(&e * &e) * &inv_g,
                None if e.is_zero() => Rational::zero(),
                None => return false,
            };
            let q = r0.sub(&count.add(&Poly::constant(g)).scale(&(&k * &d)));
            self.positive_poly(&q, depth)
        })
    }

    /// `p = q + c·(N - K)` where `K` is a count `Σ_{j<N} [cond]` (a loop of 0/1 terms
    /// over `0..N`, so `K <= N`) appearing in `p` as `-c·K`: `p >= q`, so `q` positive by
    /// form proves `p` positive (`b + n - #trues > 0` for a beta's second parameter).
    fn positive_with_complement(&self, p: &Poly, depth: u32) -> bool {
        let kernels = self.canon.kernels();
        p.terms().iter().any(|(m, c)| {
            let [(k, 1)] = m.pairs() else {
                return false;
            };
            if !c.is_negative() {
                return false;
            }
            let Some(info) = kernels.get(*k) else {
                return false;
            };
            let Kernel::Atom(t) = info.kernel else {
                return false;
            };
            let store = self.canon.store();
            let Node::Summate(_, lo, hi, body) = *store.node(t) else {
                return false;
            };
            let zero_lo = matches!(store.node(lo), Node::Lit(q) if q.is_zero());
            let indicator = match store.node(body) {
                Node::If(_, a, b) => [*a, *b]
                    .iter()
                    .all(|&x| matches!(store.node(x), Node::Lit(q) if q.is_zero() || q.is_one())),
                _ => false,
            };
            if !zero_lo || !indicator {
                return false;
            }
            let Some(n) = kernels.find(&Kernel::Atom(hi)) else {
                return false;
            };
            let neg = -c.clone();
            let q = p
                .add(&Poly::term(Monomial::from_pairs([(*k, 1)]), neg.clone()))
                .sub(&Poly::term(Monomial::from_pairs([(n, 1)]), neg));
            self.positive_poly(&q, depth)
        })
    }

    /// `p = a v^2 + b v + c` for some kernel `v` (a, b, c free of it) with `a > 0` and
    /// `4ac - b^2 > 0` proved by form: then `p > 0` for every real `v`.
    fn positive_quadratic(&self, p: &Poly, depth: u32) -> bool {
        p.vars().into_iter().any(|v| {
            if p.degree_in(v) != 2 {
                return false;
            }
            let (a, b, c) = quadratic_in(p, v);
            let four = Rational::from_integer(4);
            let disc = a.mul(&c).scale(&four).sub(&b.mul(&b));
            self.positive_poly(&a, depth) && self.positive_poly(&disc, depth)
        })
    }

    /// Is kernel `k` strictly positive (`e^s`, `pi`, a power of a positive base, and by
    /// the module's assumption prob variables and array elements)?
    fn strictly_positive(&self, k: u32, depth: u32) -> bool {
        let Some(info) = self.canon.kernels().get(k) else {
            return false;
        };
        match &info.kernel {
            Kernel::Exp(_) | Kernel::Pi => true,
            Kernel::Pow(..) => {
                depth < MAX_DEPTH.min(8)
                    && info
                        .base
                        .as_ref()
                        .is_some_and(|(_, b)| self.positive_form(b, depth + 1))
            }
            Kernel::Atom(t) => {
                let store = self.canon.store();
                (*store.ty(*t) == Type::Prob
                    && matches!(store.node(*t), Node::Var(_) | Node::Index(..)))
                    || self.positive_atoms.contains(t)
            }
        }
    }
}

/// `n = R · e^s` with a monomial numerator holding one `Exp` kernel: `(R, s)`.
fn peel_exp(canon: &Canon, n: &Normal) -> Option<(Normal, Normal)> {
    let [(m, c)] = n.num().terms() else {
        return None;
    };
    let mut found = None;
    for &(k, e) in m.pairs() {
        let info = canon.kernels().get(k)?;
        if let Kernel::Exp(_) = info.kernel {
            if found.is_some() || e != 1 {
                return None;
            }
            found = Some((k, info.exp_arg.clone()?));
        }
    }
    let (k, s) = found?;
    let rest = Monomial::from_pairs(m.pairs().iter().copied().filter(|p| p.0 != k));
    let rest = Normal::from_parts(Poly::term(rest, c.clone()), n.den().clone())?;
    Some((rest, s))
}

/// The kernels of `n`'s numerator and denominator, in the order met (repeats kept).
fn kernels_of(n: &Normal) -> Vec<u32> {
    n.num()
        .terms()
        .iter()
        .chain(n.den().terms().iter())
        .flat_map(|(m, _)| m.pairs().iter().map(|&(k, _)| k).collect::<Vec<_>>())
        .collect()
}

/// `p`, of degree 2 in the kernel `v`, as `a v^2 + b v + c` (a, b, c free of `v`).
fn quadratic_in(p: &Poly, v: u32) -> (Poly, Poly, Poly) {
    let (mut a, mut b, mut c) = (Poly::zero(), Poly::zero(), Poly::zero());
    for (d, coef) in p.coefficients_in(v) {
        match d {
            2 => a = coef,
            1 => b = coef,
            _ => c = coef,
        }
    }
    (a, b, c)
}
