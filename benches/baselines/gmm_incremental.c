// gmm_incremental.c: the hand-written C baseline of corpus/cases/18-gmm-gibbs.hk (the
// collapsed Gibbs update of one label of a one-dimensional Gaussian mixture), written the
// way a careful person writes it: the per-class counts and sums of all points are kept
// between updates, an update reads them less point u's own contribution (O(K)), and a
// commit moves u from its old class to its new one (O(1)); a sweep is O(nK) (issues 12
// and 13). Its twin gmm_recompute.c recomputes them at every update. Both are baselines to
// measure generated kernels against; they are not part of slic-cas and must not grow
// features it lacks.
//
// Model and weights: as in gmm_recompute.c (the .hk's parameters s, as, z, t, u; the
// weight of zNew = k is (as[k] + cnt[k]) * N(t[u]; sm[k]/prec, sqrt(1 + 1/prec)) with
// prec = 1/s^2 + cnt[k], counts and sums over the points i /= u).
//
// ABI: exactly gmm_recompute.c's (gmm_new, gmm_free, gmm_weights, gmm_commit, gmm_sweep);
// z must change only through gmm_commit and gmm_sweep, or the kept statistics go stale.
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
    int64_t *cnt;       // per-class counts of all points
    double *sm;         // per-class sums of all points
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
    for (int64_t i = 0; i < n; i++) {
        g->cnt[z[i]] += 1;
        g->sm[z[i]] += t[i];
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
    int64_t zu = g->z[u];
    double tu = g->t[u];
    for (int64_t c = 0; c < g->k; c++) {
        int64_t cnt = g->cnt[c] - (c == zu);
        double sm = c == zu ? g->sm[c] - tu : g->sm[c];
        logw[c] = class_weight(g, c, cnt, sm, tu);
    }
}

void gmm_commit(gmm *g, int64_t u, int64_t knew) {
    int64_t old = g->z[u];
    if (old == knew) return;
    g->cnt[old] -= 1;
    g->sm[old] -= g->t[u];
    g->cnt[knew] += 1;
    g->sm[knew] += g->t[u];
    g->z[u] = knew;
}

void gmm_sweep(gmm *g, const int64_t *order, int64_t m, const double *uniforms) {
    for (int64_t j = 0; j < m; j++) {
        int64_t u = order[j];
        gmm_weights(g, u, g->w);
        gmm_commit(g, u, draw(g->w, g->k, uniforms[j]));
    }
}
