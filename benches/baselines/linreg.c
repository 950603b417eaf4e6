// linreg.c: the hand-written C baseline of corpus/cases/22-linear-regression.hk, the
// LinearRegression example of the arrays paper's section 6.3: one exact solve, the
// posterior's parameters that 22-linear-regression.simplified.hk computes, from five sums
// in one pass over the data (issue 12, deliverable 6). A baseline to measure generated
// kernels against; it is not part of slic-cas and must not grow features it lacks.
//
// Model (the .hk's parameters x, y, size(y) == size(x) = n): y[i] ~ normal(a x[i] + b,
// 1/sqrt(invNoise)), invNoise ~ gamma(1, 1), a ~ normal(0, 1/sqrt(invNoise)),
// b ~ normal(5, sqrt(10/3)/sqrt(invNoise)). With sx, sxx, sy, sxy, syy the sums of x, x^2,
// y, x y, y^2: ca = 1 + sxx, dd = n + 3/10 - sx^2/ca, ee = sy + 3/2 - sx sxy/ca,
// ff = syy + 15/2 - sxy^2/ca - ee^2/dd, rr = 1 + ff/2, the posterior is
//   invNoise ~ gamma(shape n/2 + 1, scale 1/rr)
//   b | invNoise ~ normal(ee/dd, 1/sqrt(invNoise dd))
//   a | invNoise, b ~ normal((sxy - b sx)/ca, 1/sqrt(invNoise ca))
// with the evidence Gamma(n/2 + 1) sqrt(3/(10 dd)) / ((2 pi)^(n/2) sqrt(ca) rr^(n/2 + 1))
// (the simplified program draws a before b: the same joint law).
//
// ABI (C11, -lm):
//   void linreg_solve(const double *x, const double *y, int64_t n, double out[8])
//     out[0] the log evidence; out[1] invNoise's shape, out[2] its rate rr (scale 1/rr);
//     out[3] b's mean ee/dd, out[4] dd (b's precision over invNoise); out[5] ca (a's
//     precision over invNoise), out[6] sxy/ca and out[7] sx/ca (a's mean is
//     out[6] - out[7] b).
#include <math.h>
#include <stdint.h>

#define LOG_2PI 1.8378770664093454836

void linreg_solve(const double *x, const double *y, int64_t n, double out[8]) {
    double sx = 0.0, sxx = 0.0, sy = 0.0, sxy = 0.0, syy = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double xi = x[i], yi = y[i];
        sx += xi;
        sxx += xi * xi;
        sy += yi;
        sxy += xi * yi;
        syy += yi * yi;
    }
    double m = (double)n;
    double ca = 1.0 + sxx;
    double dd = m + 0.3 - sx * sx / ca;
    double ee = sy + 1.5 - sx * sxy / ca;
    double ff = syy + 7.5 - sxy * sxy / ca - ee * ee / dd;
    double rr = 1.0 + ff / 2.0;
    double shape = m / 2.0 + 1.0;
    out[0] = lgamma(shape) + 0.5 * log(0.3 / dd) - (m / 2.0) * LOG_2PI - 0.5 * log(ca)
             - shape * log(rr);
    out[1] = shape;
    out[2] = rr;
    out[3] = ee / dd;
    out[4] = dd;
    out[5] = ca;
    out[6] = sxy / ca;
    out[7] = sx / ca;
}
