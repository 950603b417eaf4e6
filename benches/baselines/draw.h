// draw.h: the one categorical draw the Gibbs baselines share (issue 12, deliverable 6):
// a class drawn by inverse CDF from unnormalised log weights, with the uniform the sweep
// is given, so a recomputing and an incremental baseline driven by the same uniforms take
// the same path. Included by the *_recompute.c and *_incremental.c files only; it must
// stay free of anything model-specific.
#ifndef SLIC_BASELINE_DRAW_H
#define SLIC_BASELINE_DRAW_H

#include <math.h>
#include <stdint.h>

// the inverse-CDF draw of a class from unnormalised log weights (overwritten)
static inline int64_t draw(double *logw, int64_t k, double uniform) {
    double m = -INFINITY;
    for (int64_t c = 0; c < k; c++) if (logw[c] > m) m = logw[c];
    double total = 0.0;
    for (int64_t c = 0; c < k; c++) { logw[c] = exp(logw[c] - m); total += logw[c]; }
    double target = uniform * total, acc = 0.0;
    int64_t last = 0;
    for (int64_t c = 0; c < k; c++) {
        if (logw[c] > 0.0) last = c;
        acc += logw[c];
        if (target < acc) return c;
    }
    return last;
}

#endif
