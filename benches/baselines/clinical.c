// clinical.c: the hand-written C baseline of corpus/cases/21-clinical-trial.hk, the
// ClinicalTrial example of the arrays paper's section 6.3: one exact solve, the closed
// form 21-clinical-trial.simplified.hk computes, in one pass over the data (issue 12,
// deliverable 6). A baseline to measure generated kernels against; it is not part of
// slic-cas and must not grow features it lacks.
//
// Model (the .hk's parameters n, control, treated): isEffective ~ bern(1/2); if effective,
// control and treated outcomes have their own success probabilities (beta(1, 1) each),
// else one shared one. With cT and tT the true outcomes among control[0..n) and
// treated[0..n), B the beta function, the posterior is the two-point measure
//   true:  1/2 B(cT + 1, n - cT + 1) B(tT + 1, n - tT + 1)
//   false: 1/2 B(cT + tT + 1, 2n - cT - tT + 1).
//
// ABI (C11, -lm):
//   void clinical_solve(int64_t n, const uint8_t *control, const uint8_t *treated,
//                       double out[4])
//     control[n], treated[n]: outcomes, 0 or 1. out[0], out[1]: the natural logs of the
//     weights of true and false; out[2] the log evidence (their log-sum-exp); out[3] the
//     posterior probability that the treatment is effective.
#include <math.h>
#include <stdint.h>

static double lbeta(double a, double b) {
    return lgamma(a) + lgamma(b) - lgamma(a + b);
}

void clinical_solve(int64_t n, const uint8_t *control, const uint8_t *treated, double out[4]) {
    int64_t ct = 0, tt = 0;
    for (int64_t i = 0; i < n; i++) {
        ct += control[i] != 0;
        tt += treated[i] != 0;
    }
    double c = (double)ct, t = (double)tt, m = (double)n, half = log(0.5);
    double yes = half + lbeta(c + 1.0, m - c + 1.0) + lbeta(t + 1.0, m - t + 1.0);
    double no = half + lbeta(c + t + 1.0, 2.0 * m - c - t + 1.0);
    double hi = yes > no ? yes : no;
    out[0] = yes;
    out[1] = no;
    out[2] = hi + log(exp(yes - hi) + exp(no - hi));
    out[3] = 1.0 / (1.0 + exp(no - yes));
}
