//! Accuracy up to relabelling (issue 12, deliverable 5): a Gibbs sampler's labels are
//! exchangeable, so class 3 of a run may be class 0 of the truth. The accuracy of a
//! labelling is the fraction of points whose label, renamed by the best one-to-one
//! matching of labels to true labels, is the true one; the best matching is a maximum
//! weight assignment on the confusion counts, found by the Hungarian algorithm
//! (Kuhn-Munkres with potentials, O(K³)), written here.
//!
//! It must stay exact: the matching's weight is the maximum over all permutations (a
//! proptest compares it with brute force for K <= 6). It does no IO and never panics on
//! its input: labels are compacted to `0..k` first, so label values may be anything.

use std::fmt;

/// The most distinct labels [`accuracy`] matches: O(K³) must stay well under a sweep.
pub const MAX_LABELS: usize = 2048;

/// Why the accuracy could not be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// The labelling and the truth have different lengths.
    Length { labels: usize, truth: usize },
    /// More than [`MAX_LABELS`] distinct labels on one side.
    TooManyLabels(usize),
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatchError::Length { labels, truth } => {
                write!(f, "the state has {labels} labels but the truth has {truth}")
            }
            MatchError::TooManyLabels(k) => write!(
                f,
                "{k} distinct labels: accuracy up to relabelling matches at most {MAX_LABELS}"
            ),
        }
    }
}

impl std::error::Error for MatchError {}

/// For a square matrix of weights (`weights[i][j]`, row `i` matched to column `j`), a
/// permutation `m` maximising `Σ_i weights[i][m[i]]`. Rows must all have the matrix's
/// length (shorter rows are read as zero-padded).
pub fn best_matching(weights: &[Vec<u64>]) -> Vec<usize> {
    let n = weights.len();
    if n == 0 {
        return Vec::new();
    }
    let max = weights
        .iter()
        .flat_map(|r| r.iter().copied())
        .max()
        .unwrap_or(0);
    // maximise w by minimising max - w: the costs are non-negative, as i128 so that
    // potentials of sums of up to n costs cannot overflow
    let cost = |i: usize, j: usize| -> i128 {
        i128::from(max) - i128::from(weights[i].get(j).copied().unwrap_or(0))
    };
    const INF: i128 = i128::MAX / 4;
    // 1-based rows and columns; column 0 is the virtual start of each augmenting path
    let mut u = vec![0i128; n + 1];
    let mut v = vec![0i128; n + 1];
    // p[j]: the row matched to column j (0: none); way[j]: the previous column on the path
    let mut p = vec![0usize; n + 1];
    let mut way = vec![0usize; n + 1];
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0usize;
        let mut minv = vec![INF; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = INF;
            let mut j1 = 0usize;
            for j in 1..=n {
                if !used[j] {
                    let cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        // flip the augmenting path back to the start
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut m = vec![0usize; n];
    for j in 1..=n {
        if p[j] != 0 {
            m[p[j] - 1] = j - 1;
        }
    }
    m
}

/// Dense ids `0..k` for the distinct values of `xs`, and `k`.
fn compact(xs: &[u64]) -> (Vec<usize>, usize) {
    let mut distinct: Vec<u64> = xs.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let ids = xs
        .iter()
        .map(|x| distinct.binary_search(x).unwrap_or(0))
        .collect();
    (ids, distinct.len())
}

/// The fraction of points whose label, under the best one-to-one renaming of `labels`
/// onto `truth`'s labels, equals the true one (1 for no points).
///
/// ```
/// use slic_codegen::gibbs::accuracy;
/// // the same clustering with 0 and 1 swapped, one point wrong
/// assert_eq!(accuracy(&[1, 1, 0, 0, 0], &[0, 0, 1, 1, 0]), Ok(0.8));
/// ```
pub fn accuracy(labels: &[u64], truth: &[u64]) -> Result<f64, MatchError> {
    if labels.len() != truth.len() {
        return Err(MatchError::Length {
            labels: labels.len(),
            truth: truth.len(),
        });
    }
    if labels.is_empty() {
        return Ok(1.0);
    }
    let (a, ka) = compact(labels);
    let (b, kb) = compact(truth);
    let k = ka.max(kb);
    if k > MAX_LABELS {
        return Err(MatchError::TooManyLabels(k));
    }
    let mut counts = vec![vec![0u64; k]; k];
    for (&x, &y) in a.iter().zip(&b) {
        counts[x][y] += 1;
    }
    let m = best_matching(&counts);
    let matched: u64 = m.iter().enumerate().map(|(i, &j)| counts[i][j]).sum();
    Ok(matched as f64 / labels.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_assignment() {
        // the diagonal is not the best: 9 + 8 + 7 beats 1 + 1 + 1
        let w = vec![vec![1, 9, 0], vec![0, 1, 8], vec![7, 0, 1]];
        assert_eq!(best_matching(&w), vec![1, 2, 0]);
    }

    #[test]
    fn lengths_must_agree() {
        assert_eq!(
            accuracy(&[0, 1], &[0]),
            Err(MatchError::Length {
                labels: 2,
                truth: 1
            })
        );
        assert_eq!(accuracy(&[], &[]), Ok(1.0));
        // more labels than true labels: the extra class matches nothing
        assert_eq!(accuracy(&[0, 1, 2, 2], &[5, 5, 7, 7]), Ok(0.75));
    }
}
