//! Summaries of Markov chains' draws, one column (a scalar of the state) at a time:
//! mean, standard deviation, effective sample size and split-R-hat.
//!
//! - ESS of one chain: `n / τ` with the integrated autocorrelation time
//!   `τ = -1 + 2 Σ_k P_k`, `P_k = ρ_{2k} + ρ_{2k+1}` summed while positive and made
//!   non-increasing (Geyer's initial monotone sequence estimator, Statistical Science
//!   1992), autocorrelations up to lag [`MAX_LAG`]; several chains' ESS is the sum of
//!   theirs.
//! - split-R-hat (Gelman et al., Bayesian Data Analysis, 3rd ed., section 11.4): every
//!   chain cut in two halves of equal length `h`; with `W` the mean of the halves'
//!   variances and `B/h` the variance of their means, `R = sqrt(((h-1)/h W + B/h) / W)`.
//!
//! Where a value is undefined (a constant column, too few draws) it is `None`, never NaN.

/// Autocorrelations are summed up to this lag at most: a chain that mixes slower than
/// this has its ESS overstated (the note says so).
pub const MAX_LAG: usize = 2048;

/// The mean and standard deviation (n - 1 denominator) of `xs`; `None` for fewer than
/// two draws.
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    Some((m, v.sqrt()))
}

/// The effective sample size of one chain's draws; `None` for fewer than four draws or a
/// constant chain.
pub fn ess(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 4 {
        return None;
    }
    let m = xs.iter().sum::<f64>() / n as f64;
    let d: Vec<f64> = xs.iter().map(|x| x - m).collect();
    let acov = |t: usize| {
        d[..n - t]
            .iter()
            .zip(&d[t..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / n as f64
    };
    let g0 = acov(0);
    if g0 <= 0.0 || !g0.is_finite() {
        return None;
    }
    let mut sum = 0.0;
    let mut prev = f64::INFINITY;
    let mut k = 0;
    while 2 * k + 1 < n.min(MAX_LAG) {
        let p = (acov(2 * k) + acov(2 * k + 1)) / g0;
        if p <= 0.0 {
            break;
        }
        let p = p.min(prev);
        sum += p;
        prev = p;
        k += 1;
    }
    let tau = (-1.0 + 2.0 * sum).max(1.0 / n as f64);
    Some(n as f64 / tau)
}

/// Split-R-hat of chains of draws (cut to the shortest chain's length); `None` with
/// fewer than two draws per half or no variance within them.
pub fn split_rhat(chains: &[&[f64]]) -> Option<f64> {
    let n = chains.iter().map(|c| c.len()).min()?;
    let h = n / 2;
    if h < 2 {
        return None;
    }
    let halves: Vec<&[f64]> = chains
        .iter()
        .flat_map(|c| [&c[..h], &c[n - h..n]])
        .collect();
    let stats: Vec<(f64, f64)> = halves.iter().map(|s| mean_sd(s)).collect::<Option<_>>()?;
    let m = halves.len() as f64;
    let w = stats.iter().map(|(_, sd)| sd * sd).sum::<f64>() / m;
    if w <= 0.0 || !w.is_finite() {
        return None;
    }
    let grand = stats.iter().map(|(mu, _)| mu).sum::<f64>() / m;
    let hf = h as f64;
    let b = hf / (m - 1.0)
        * stats
            .iter()
            .map(|(mu, _)| (mu - grand).powi(2))
            .sum::<f64>();
    let var_plus = (hf - 1.0) / hf * w + b / hf;
    Some((var_plus / w).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An AR(1) series `x_t = φ x_{t-1} + e_t` from a fixed generator.
    fn ar1(phi: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = crate::sampler::Rng::seed_from_u64(seed);
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                // a normal draw by Box-Muller from two uniforms
                let (u1, u2) = (rng.uniform_open(), rng.uniform());
                let e = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                x = phi * x + e;
                x
            })
            .collect()
    }

    #[test]
    fn ess_of_independent_draws_is_about_their_number() {
        let xs = ar1(0.0, 20_000, 1);
        let e = ess(&xs).expect("defined");
        assert!((15_000.0..25_000.0).contains(&e), "{e}");
    }

    #[test]
    fn ess_of_an_ar1_chain_follows_its_autocorrelation_time() {
        // τ = (1 + φ) / (1 - φ) = 19 for φ = 0.9: ESS about n / 19
        let xs = ar1(0.9, 50_000, 2);
        let e = ess(&xs).expect("defined");
        let expected = 50_000.0 / 19.0;
        assert!((e / expected - 1.0).abs() < 0.25, "{e} vs {expected}");
    }

    #[test]
    fn constant_and_short_chains_have_no_ess() {
        assert_eq!(ess(&[1.0; 100]), None);
        assert_eq!(ess(&[1.0, 2.0]), None);
    }

    #[test]
    fn split_rhat_by_hand_and_on_mixed_and_stuck_chains() {
        // halves [1, 2], [3, 4], [1, 3], [2, 4]: means 1.5, 3.5, 2, 3 around 2.5;
        // variances 0.5, 0.5, 2, 2, so W = 1.25; h = 2, B = h / (4 - 1) Σ (mean - 2.5)^2
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [1.0, 3.0, 2.0, 4.0];
        let w: f64 = 1.25;
        let grand: f64 = 2.5;
        let b_h = 2.0 / 3.0
            * [1.5f64, 3.5, 2.0, 3.0]
                .iter()
                .map(|m| (m - grand).powi(2))
                .sum::<f64>();
        let expected = ((0.5 * w + b_h / 2.0) / w).sqrt();
        let r = split_rhat(&[&a, &b]).expect("defined");
        assert!((r - expected).abs() < 1e-12, "{r} vs {expected}");
        // chains of one stationary process: about 1
        let (x, y) = (ar1(0.5, 4000, 3), ar1(0.5, 4000, 4));
        let r = split_rhat(&[&x, &y]).expect("defined");
        assert!((r - 1.0).abs() < 0.02, "{r}");
        // one chain shifted by 5 standard deviations: far above 1
        let z: Vec<f64> = y.iter().map(|v| v + 5.0).collect();
        let r = split_rhat(&[&x, &z]).expect("defined");
        assert!(r > 1.5, "{r}");
        assert_eq!(split_rhat(&[&[1.0, 2.0, 3.0]]), None);
    }
}
