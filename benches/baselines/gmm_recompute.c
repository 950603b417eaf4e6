// gmm_recompute.c: the hand-written C baseline of corpus/cases/18-gmm-gibbs.hk (the
// collapsed Gibbs update of one label of a one-dimensional Gaussian mixture), in the form
// the paper's generated code takes: every update recomputes the per-class statistics over
// all points, O(n + K) per update, O(n^2) per sweep (issue 12, deliverable 6). Its twin
// gmm_incremental.c keeps them between updates. Both are baselines to measure generated
// kernels against; they are not part of slic-cas and must not grow features it lacks.
//
// Model (the .hk's parameters s, as, z, t, u): K = size(as) classes, class means
// mu[k] ~ normal(0, s), points t[i] ~ normal(mu[z[i]], 1), labels under theta ~
// dirichlet(as). With cnt[k] and sm[k] the count and sum of the points i /= u (i < n =
// size(t)) of class k, prec = 1/s^2 + cnt[k], the weight of zNew = k is
//   (as[k] + cnt[k]) * N(t[u]; sm[k]/prec, sd = sqrt(1 + 1/prec)),
// the categorical the simplified program (18-gmm-gibbs.simplified.hk) draws from.
//
// ABI (C11, -lm; the same symbols as gmm_incremental.c, so one loader drives both):
//   gmm *gmm_new(double s, const double *as, int64_t k, int64_t *z, const double *t,
//                int64_t n)   s > 0 linear; as[k]; z[n] (labels < k, borrowed: commit and
//                             sweep write it); t[n]. NULL when out of memory.
//   void gmm_free(gmm *g);
//   void gmm_weights(gmm *g, int64_t u, double *logw)    logw[k]: unnormalised natural-log
//                             weights of zNew = 0..k-1 for point u < n.
//   void gmm_commit(gmm *g, int64_t u, int64_t knew)     z[u] = knew.
//   void gmm_sweep(gmm *g, const int64_t *order, int64_t m, const double *uniforms)
//                             for j < m: u = order[j]; draw z[u] from its weights by the
//                             uniform uniforms[j] in [0, 1) (inverse CDF); commit.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "draw.h"

#define LOG_2PI 1.8378770664093454836

typedef struct gmm {
    double s2;          // s^2
    const double *as;
    int64_t k;
    int64_t *z;
    const double *t;
    int64_t n;
    int64_t *cnt;       // scratch: per-class counts of the points but u
    double *sm;         // scratch: per-class sums of the points but u
    double *w;          // scratch: weights of one update
} gmm;

gmm *gmm_new(double s, const double *as, int64_t k, int64_t *z, const double *t, int64_t n) {
    gmm *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->s2 = s * s;
    g->as = as;
    g->k = k;
    g->z = z;
    g->t = t;
    g->n = n;
    g->cnt = calloc((size_t)k + 1, sizeof *g->cnt);
    g->sm = calloc((size_t)k + 1, sizeof *g->sm);
    g->w = calloc((size_t)k + 1, sizeof *g->w);
    if (!g->cnt || !g->sm || !g->w) {
        free(g->cnt); free(g->sm); free(g->w); free(g);
        return NULL;
    }
    return g;
}

void gmm_free(gmm *g) {
    if (!g) return;
    free(g->cnt); free(g->sm); free(g->w); free(g);
}

// the predictive log weight of class k from the statistics of the other points
static double class_weight(const gmm *g, int64_t k, int64_t cnt, double sm, double tu) {
    double prec = 1.0 / g->s2 + (double)cnt;
    double var = 1.0 + 1.0 / prec;
    double d = tu - sm / prec;
    return log(g->as[k] + (double)cnt) - 0.5 * (LOG_2PI + log(var)) - d * d / (2.0 * var);
}

void gmm_weights(gmm *g, int64_t u, double *logw) {
    for (int64_t c = 0; c < g->k; c++) { g->cnt[c] = 0; g->sm[c] = 0.0; }
    for (int64_t i = 0; i < g->n; i++) {
        if (i == u) continue;
        g->cnt[g->z[i]] += 1;
        g->sm[g->z[i]] += g->t[i];
    }
    for (int64_t c = 0; c < g->k; c++)
        logw[c] = class_weight(g, c, g->cnt[c], g->sm[c], g->t[u]);
}

void gmm_commit(gmm *g, int64_t u, int64_t knew) {
    g->z[u] = knew;
}

void gmm_sweep(gmm *g, const int64_t *order, int64_t m, const double *uniforms) {
    for (int64_t j = 0; j < m; j++) {
        int64_t u = order[j];
        gmm_weights(g, u, g->w);
        gmm_commit(g, u, draw(g->w, g->k, uniforms[j]));
    }
}
