//! Sums of independent draws (issue 14): a result `Σ c_i·x_i + b` whose summands `x_i`
//! are drawn from primitives of one family closed under convolution, and used nowhere
//! else, is one draw `t` of the sum's law and the result `t + b`.
//!
//! - normals: `Σ c_i·x_i ~ normal(Σ c_i·μ_i, sqrt(Σ c_i²·σ_i²))` for non-zero rationals
//!   `c_i`;
//! - gammas: `c_i·x_i ~ gamma(a_i, c_i·s_i)` for positive rationals `c_i`, so summands
//!   whose `c_i·s_i` are one scale `s` sum to `gamma(Σ a_i, s)` (exponentials of one
//!   scale to an Erlang, a gamma of whole shape); other scales do not merge;
//! - poissons: `Σ x_i ~ poisson(Σ λ_i)` (coefficients 1 only);
//! - squares of centred normals: `x ~ normal(0, σ)` gives `x² ~ gamma(1/2, 2σ²)` (the
//!   chi-square with one degree of freedom, scaled), so a summand `c·x²` (`c > 0`
//!   rational, `x` nowhere else in the result) joins the gammas of scale `2cσ²`: a sum of
//!   `n` squared standard normals is `gamma(n/2, 2)`, the chi-square with `n` degrees.
//!
//! Why it is sound: a summand is mentioned by no factor, guard, later draw or other part
//! of the result, so, given everything drawn before it, the summands are independent
//! (none's law mentions another: that would be a use) and each is a probability measure
//! (a primitive draw). Their joint law is the product of theirs, and the law of the
//! linear combination is their convolution, which for these families is the named law
//! above. The new draw comes after every other (so after every variable the summands'
//! parameters mention; nothing else reads it, so no other draw moves across a use). The result is rewritten by substitution (one summand
//! becomes `t / c_j`, the others 0), which gives `t + b` because the canonical form of
//! the result is affine in the summands with exactly those coefficients. Anything else
//! leaves the term as it was.

use rustc_hash::FxHashMap;

use slic_algebra::assume::Context;
use slic_algebra::num::Rational;
use slic_algebra::vars;
use slic_algebra::{canon, Dist, Node, Prim, Store, TermId, Type, VarId};

use crate::lin::{Base, Bind, LTerm};
use crate::{terms, Simp};

/// How many groups of summands one term is merged over at most.
const MAX_MERGES: usize = 8;

/// A family closed under sums of independent draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Normal,
    Gamma,
    Poisson,
}

/// One summand `coef·var^power`: the bind's position, its variable, its coefficient and
/// power in the result, and the family and parameters of the law of `var^power`.
#[derive(Clone, Debug)]
struct Summand {
    at: usize,
    var: VarId,
    coef: Rational,
    power: u32,
    family: Family,
    params: Vec<TermId>,
}

impl Simp<'_> {
    /// `t` with every group of summands of one family (see the module doc) drawn as one
    /// variable; `t` itself when there is none.
    pub(crate) fn sum_of_draws(&mut self, mut t: LTerm) -> LTerm {
        for _ in 0..MAX_MERGES {
            match self.merge_summands(&t) {
                Some(better) => match self.normalise(better) {
                    Some(n) => t = n,
                    // a zero term stays as it was (normalising it gave nothing to keep)
                    None => return t,
                },
                None => return t,
            }
        }
        t
    }

    /// One group of two or more summands of `t` merged into one draw, if there is one.
    fn merge_summands(&mut self, t: &LTerm) -> Option<LTerm> {
        let ty = self.store.ty(t.result).clone();
        if !matches!(ty, Type::Real | Type::Prob | Type::Nat | Type::Int) {
            return None;
        }
        let real = terms::coerce(self.store, t.result, &Type::Real);
        let real = canon::canonicalize(self.store, &Context::new(), real);
        let mut all: Vec<Summand> = Vec::new();
        for i in 0..t.binds.len() {
            if let Some(s) = self.summand(t, i, real) {
                all.push(s);
            }
        }
        let group = self.best_group(&all)?;
        // the rest of the result, b = result - Σ c_i·x_i, must be free of the summands
        let mut parts = vec![real];
        for s in &group {
            let x = self.store.var_term(s.var);
            let x = terms::coerce(self.store, x, &Type::Real);
            let c = terms::lit(self.store, &-&s.coef, &Type::Real);
            let mut factors = vec![c];
            factors.extend(std::iter::repeat_n(x, s.power as usize));
            parts.push(self.store.prim(Prim::Mul, factors, Type::Real));
        }
        let b = self.store.prim(Prim::Add, parts, Type::Real);
        let b = canon::canonicalize(self.store, &Context::new(), b);
        let members: Vec<VarId> = group.iter().map(|s| s.var).collect();
        if vars::mentions_any(self.store, b, &members) {
            return None;
        }
        let (dist, tty) = self.sum_law(&group)?;
        let name = self.store.var_name(group[group.len() - 1].var).to_string();
        let tv = self.store.fresh_var(&name, tty);
        let tt = self.store.var_term(tv);
        // the result with one summand `t / c_j` (a square's variable `sqrt(t / c_j)`,
        // `t` being a gamma draw, so a prob) and the others 0: `t + b`
        let first = group.iter().position(|s| s.power == 1).unwrap_or(0);
        let mut map = FxHashMap::default();
        for (k, s) in group.iter().enumerate() {
            let xty = self.store.var_type(s.var).clone();
            let value = if k == first && s.power == 1 {
                let inv = terms::lit(self.store, &s.coef.recip()?, &xty);
                let tx = terms::coerce(self.store, tt, &xty);
                self.store.prim(Prim::Mul, vec![inv, tx], xty)
            } else if k == first {
                let inv = terms::lit(self.store, &s.coef.recip()?, &Type::Prob);
                let scaled = self.store.prim(Prim::Mul, vec![inv, tt], Type::Prob);
                let root = self.store.prim(Prim::Sqrt, vec![scaled], Type::Prob);
                terms::coerce(self.store, root, &xty)
            } else {
                terms::int(self.store, 0, &xty)
            };
            map.insert(s.var, value);
        }
        let result = vars::substitute(self.store, t.result, &map);
        let result = canon::canonicalize(self.store, &Context::new(), result);
        if vars::mentions_any(self.store, result, &members) {
            return None;
        }
        let mut out = t.clone();
        let gone: Vec<usize> = group.iter().map(|s| s.at).collect();
        let mut k = 0;
        out.binds.retain(|_| {
            let keep = !gone.contains(&k);
            k += 1;
            keep
        });
        // last of all: after every variable the summands' laws mention, and (variables
        // being ordered by creation) where a reader of the printed output creates it too
        out.binds.push(Bind {
            var: tv,
            base: Base::Prim(dist),
        });
        out.result = result;
        Some(out)
    }

    /// The `i`-th bind of `t` as a summand of `real` (the result as a real term), when it
    /// is a draw from a primitive of a closed family, used nowhere but the result, and
    /// the result is affine in it with a non-zero rational coefficient; or a draw from a
    /// centred normal and the result is affine in its square with a positive one.
    fn summand(&mut self, t: &LTerm, i: usize, real: TermId) -> Option<Summand> {
        let b = &t.binds[i];
        let Base::Prim(d) = b.base else {
            return None;
        };
        let (family, params) = match self.store.node(d) {
            Node::Dist(Dist::Normal, a) if a.len() == 2 => (Family::Normal, a.clone()),
            Node::Dist(Dist::Gamma, a) if a.len() == 2 => (Family::Gamma, a.clone()),
            Node::Dist(Dist::Poisson, a) if a.len() == 1 => (Family::Poisson, a.clone()),
            _ => return None,
        };
        let x = b.var;
        let s = &*self.store;
        let used_elsewhere = t.factors.iter().any(|f| vars::mentions(s, f.term, x))
            || t.guards.iter().any(|&g| vars::mentions(s, g, x))
            || t.binds
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && o.base.terms().iter().any(|&m| vars::mentions(s, m, x)));
        if used_elsewhere || !vars::mentions(s, real, x) {
            return None;
        }
        let xt = self.store.var_term(x);
        let coeffs = canon::Canon::new(self.store, Context::new())
            .collect(real, xt)
            .ok()?;
        let mut coef = None;
        for (deg, c) in coeffs {
            match deg {
                0 if !vars::mentions(self.store, c, x) => {}
                1 | 2 if coef.is_none() => {
                    coef = Some((deg, terms::lit_value(self.store, c)?));
                }
                _ => return None,
            }
        }
        let (power, coef) = coef.filter(|(_, c)| !c.is_zero())?;
        let (family, params) = match power {
            1 => (family, params),
            2 => self.square_law(family, &params, &coef)?,
            _ => return None,
        };
        Some(Summand {
            at: i,
            var: x,
            coef,
            power,
            family,
            params,
        })
    }

    /// The law of `x²` for `x` drawn from `family(params)`, when it is a gamma: `x ~
    /// normal(0, σ)` gives `gamma(1/2, 2σ²)`, and the square's coefficient must be
    /// positive to join other gammas.
    fn square_law(
        &mut self,
        family: Family,
        params: &[TermId],
        coef: &Rational,
    ) -> Option<(Family, Vec<TermId>)> {
        if family != Family::Normal || !coef.is_positive() {
            return None;
        }
        let mean = terms::lit_value(self.store, params[0])?;
        if !mean.is_zero() {
            return None;
        }
        let half = terms::lit(self.store, &Rational::ratio(1, 2)?, &Type::Prob);
        let two = terms::int(self.store, 2, &Type::Prob);
        let sd = params[1];
        let scale = self.store.prim(Prim::Mul, vec![two, sd, sd], Type::Prob);
        let scale = canon::canonicalize(self.store, &Context::new(), scale);
        Some((Family::Gamma, vec![half, scale]))
    }

    /// The largest group of summands that sum to a law of their family (two or more;
    /// on a tie the first found): every normal; the poissons of coefficient 1; the gammas
    /// of positive coefficient whose scaled scales `c_i·s_i` are one term.
    fn best_group(&mut self, all: &[Summand]) -> Option<Vec<Summand>> {
        let mut groups: Vec<(Option<TermId>, Vec<Summand>)> = Vec::new();
        for s in all {
            let key = match s.family {
                Family::Normal => None,
                Family::Poisson if s.coef.is_one() => None,
                Family::Poisson => continue,
                Family::Gamma if s.coef.is_positive() => Some(self.scaled_scale(s)),
                Family::Gamma => continue,
            };
            match groups
                .iter_mut()
                .find(|(k, g)| *k == key && g[0].family == s.family)
            {
                Some((_, g)) => g.push(s.clone()),
                None => groups.push((key, vec![s.clone()])),
            }
        }
        let mut best: Option<Vec<Summand>> = None;
        for (_, g) in groups {
            if g.len() >= 2 && best.as_ref().is_none_or(|b| g.len() > b.len()) {
                best = Some(g);
            }
        }
        best
    }

    /// `c·s` of a gamma summand `c·x`, `x ~ gamma(a, s)`: the scale of `c·x`, canonical.
    fn scaled_scale(&mut self, s: &Summand) -> TermId {
        let c = terms::lit(self.store, &s.coef, &Type::Prob);
        let cs = self.store.prim(Prim::Mul, vec![c, s.params[1]], Type::Prob);
        canon::canonicalize(self.store, &Context::new(), cs)
    }

    /// The law of the group's sum `Σ c_i·x_i` and its value type.
    fn sum_law(&mut self, group: &[Summand]) -> Option<(TermId, Type)> {
        let family = group.first()?.family;
        let ctx = Context::new();
        let sum = |store: &mut Store, xs: Vec<TermId>, ty: Type| {
            let s = store.prim(Prim::Add, xs, ty);
            canon::canonicalize(store, &ctx, s)
        };
        match family {
            Family::Normal => {
                let mut means = Vec::new();
                let mut vars2 = Vec::new();
                for s in group {
                    let c = terms::lit(self.store, &s.coef, &Type::Real);
                    means.push(self.store.prim(Prim::Mul, vec![c, s.params[0]], Type::Real));
                    let c2 = terms::lit(self.store, &(&s.coef * &s.coef), &Type::Prob);
                    let sd = s.params[1];
                    vars2.push(self.store.prim(Prim::Mul, vec![c2, sd, sd], Type::Prob));
                }
                let mean = sum(self.store, means, Type::Real);
                let var = sum(self.store, vars2, Type::Prob);
                let sd = self.store.prim(Prim::Sqrt, vec![var], Type::Prob);
                let sd = canon::canonicalize(self.store, &ctx, sd);
                let d = self.store.intern(
                    Node::Dist(Dist::Normal, vec![mean, sd]),
                    Type::measure(Type::Real),
                );
                Some((d, Type::Real))
            }
            Family::Gamma => {
                let scale = self.scaled_scale(&group[0]);
                let shapes = group.iter().map(|s| s.params[0]).collect();
                let shape = sum(self.store, shapes, Type::Prob);
                let d = self.store.intern(
                    Node::Dist(Dist::Gamma, vec![shape, scale]),
                    Type::measure(Type::Prob),
                );
                Some((d, Type::Prob))
            }
            Family::Poisson => {
                let rates = group.iter().map(|s| s.params[0]).collect();
                let rate = sum(self.store, rates, Type::Prob);
                let d = self.store.intern(
                    Node::Dist(Dist::Poisson, vec![rate]),
                    Type::measure(Type::Nat),
                );
                Some((d, Type::Nat))
            }
        }
    }
}
