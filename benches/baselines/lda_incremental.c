// lda_incremental.c: the hand-written C baseline of corpus/cases/20-lda-gibbs.hk (the
// collapsed Gibbs update of one token's topic in Latent Dirichlet Allocation), written the
// way a careful person (and every LDA sampler) writes it: the document-topic, topic-word
// and topic counts of all tokens are kept between updates; an update reads them less
// token u itself (O(K)), and a commit moves u from its old topic to its new one (O(1));
// a sweep is O(tokens K) (issues 12 and 13). Its twin lda_recompute.c recounts at every
// update. Both are baselines to measure generated kernels against; they are not part of
// slic-cas and must not grow features it lacks.
//
// Model and weights: as in lda_recompute.c (the .hk's parameters topic_prior, word_prior,
// numDocs, w, doc, z, wordUpdate), computed by the same code from the same integer counts.
//
// ABI: exactly lda_recompute.c's (lda_new, lda_free, lda_weights, lda_commit, lda_sweep);
// z must change only through lda_commit and lda_sweep, or the kept counts go stale.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "draw.h"

typedef struct lda {
    const double *tp, *wp;
    int64_t k, v, ndocs, ntok;
    const int64_t *w, *doc;
    int64_t *z;
    double b;           // sum of word_prior
    int32_t *ndk;       // ndocs x K: the documents' topic counts
    int32_t *nkw;       // V x K: the words' topic counts (a word's row is contiguous)
    int64_t *nk;        // the topics' token counts
    int64_t *a, *bw, *c; // scratch: the three rows of one update, u left out
    double *wk;         // scratch: weights of one update
} lda;

void lda_free(lda *g) {
    if (!g) return;
    free(g->ndk); free(g->nkw); free(g->nk); free(g->a); free(g->bw); free(g->c);
    free(g->wk); free(g);
}

lda *lda_new(const double *topic_prior, int64_t k, const double *word_prior, int64_t v,
             int64_t ndocs, const int64_t *w, const int64_t *doc, int64_t *z, int64_t ntok) {
    lda *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->tp = topic_prior; g->wp = word_prior; g->k = k; g->v = v;
    g->ndocs = ndocs; g->w = w; g->doc = doc; g->z = z; g->ntok = ntok;
    for (int64_t i = 0; i < v; i++) g->b += word_prior[i];
    g->ndk = calloc((size_t)(ndocs * k) + 1, sizeof *g->ndk);
    g->nkw = calloc((size_t)(v * k) + 1, sizeof *g->nkw);
    g->nk = calloc((size_t)k + 1, sizeof *g->nk);
    g->a = calloc((size_t)k + 1, sizeof *g->a);
    g->bw = calloc((size_t)k + 1, sizeof *g->bw);
    g->c = calloc((size_t)k + 1, sizeof *g->c);
    g->wk = calloc((size_t)k + 1, sizeof *g->wk);
    if (!g->ndk || !g->nkw || !g->nk || !g->a || !g->bw || !g->c || !g->wk) {
        lda_free(g);
        return NULL;
    }
    for (int64_t n = 0; n < ntok; n++) {
        g->ndk[doc[n] * k + z[n]] += 1;
        g->nkw[w[n] * k + z[n]] += 1;
        g->nk[z[n]] += 1;
    }
    return g;
}

// the weights from counts that leave token u out; the same code in both baselines, so
// equal counts give bit-equal weights
static void weights_from(const lda *g, int64_t u, const int64_t *ndk, const int64_t *nkw,
                         const int64_t *nk, double *logw) {
    double wpv = g->wp[g->w[u]];
    for (int64_t c = 0; c < g->k; c++)
        logw[c] = log(((double)ndk[c] + g->tp[c]) * ((double)nkw[c] + wpv)
                      / ((double)nk[c] + g->b));
}

void lda_weights(lda *g, int64_t u, double *logw) {
    const int32_t *dr = g->ndk + g->doc[u] * g->k, *wr = g->nkw + g->w[u] * g->k;
    int64_t zu = g->z[u];
    for (int64_t c = 0; c < g->k; c++) {
        int64_t self = c == zu;
        g->a[c] = dr[c] - self;
        g->bw[c] = wr[c] - self;
        g->c[c] = g->nk[c] - self;
    }
    weights_from(g, u, g->a, g->bw, g->c, logw);
}

void lda_commit(lda *g, int64_t u, int64_t knew) {
    int64_t old = g->z[u];
    if (old == knew) return;
    int32_t *dr = g->ndk + g->doc[u] * g->k, *wr = g->nkw + g->w[u] * g->k;
    dr[old] -= 1; dr[knew] += 1;
    wr[old] -= 1; wr[knew] += 1;
    g->nk[old] -= 1; g->nk[knew] += 1;
    g->z[u] = knew;
}

void lda_sweep(lda *g, const int64_t *order, int64_t m, const double *uniforms) {
    for (int64_t j = 0; j < m; j++) {
        int64_t u = order[j];
        lda_weights(g, u, g->wk);
        lda_commit(g, u, draw(g->wk, g->k, uniforms[j]));
    }
}
