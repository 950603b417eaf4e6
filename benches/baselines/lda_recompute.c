// lda_recompute.c: the hand-written C baseline of corpus/cases/20-lda-gibbs.hk (the
// collapsed Gibbs update of one token's topic in Latent Dirichlet Allocation), in the form
// the paper's generated code takes: every update recounts, over all tokens, the three
// statistics its weights read (document doc[u]'s topic counts, word w[u]'s topic counts,
// the topics' token counts), O(tokens + K) per update, O(tokens^2) per sweep (issue 12,
// deliverable 6). Its twin lda_incremental.c keeps the counts between updates. Both are
// baselines to measure generated kernels against; they are not part of slic-cas and must
// not grow features it lacks.
//
// Model (the .hk's parameters topic_prior, word_prior, numDocs, w, doc, z, wordUpdate = u):
// K = size(topic_prior) topics, V = size(word_prior) words, token n has word w[n] in
// document doc[n] < numDocs and topic z[n]. With every count over the tokens n /= u,
// d = doc[u], v = w[u], B = sum(word_prior): ndk[k] the tokens of document d in topic k,
// nkw[k] the tokens of word v in topic k, nk[k] the tokens in topic k, the weight of
// zNew = k is
//   (ndk[k] + topic_prior[k]) * (nkw[k] + word_prior[v]) / (nk[k] + B),
// the categorical of 20-lda-gibbs.simplified.hk.
//
// ABI (C11, -lm; the same symbols as lda_incremental.c, so one loader drives both):
//   lda *lda_new(const double *topic_prior, int64_t k, const double *word_prior, int64_t v,
//                int64_t ndocs, const int64_t *w, const int64_t *doc, int64_t *z,
//                int64_t ntok)   w[ntok] < v, doc[ntok] < ndocs, z[ntok] topics < k
//                                (borrowed: commit and sweep write it). NULL when out of
//                                memory.
//   void lda_free(lda *g);
//   void lda_weights(lda *g, int64_t u, double *logw)   logw[k]: unnormalised natural-log
//                                weights of zNew = 0..k-1 for token u < ntok.
//   void lda_commit(lda *g, int64_t u, int64_t knew)    z[u] = knew.
//   void lda_sweep(lda *g, const int64_t *order, int64_t m, const double *uniforms)
//                                for j < m: u = order[j]; draw z[u] from its weights by
//                                the uniform uniforms[j] in [0, 1) (inverse CDF); commit.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"

typedef struct lda {
    const double *tp, *wp;
    int64_t k, v, ndocs, ntok;
    const int64_t *w, *doc;
    int64_t *z;
    double b;           // sum of word_prior
    int64_t *ndk;       // scratch: doc[u]'s topic counts, u left out
    int64_t *nkw;       // scratch: w[u]'s topic counts, u left out
    int64_t *nk;        // scratch: the topics' token counts, u left out
    double *wk;         // scratch: weights of one update
} lda;

void lda_free(lda *g) {
    if (!g) return;
    free(g->ndk); free(g->nkw); free(g->nk); free(g->wk); free(g);
}

lda *lda_new(const double *topic_prior, int64_t k, const double *word_prior, int64_t v,
             int64_t ndocs, const int64_t *w, const int64_t *doc, int64_t *z, int64_t ntok) {
    lda *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->tp = topic_prior; g->wp = word_prior; g->k = k; g->v = v;
    g->ndocs = ndocs; g->w = w; g->doc = doc; g->z = z; g->ntok = ntok;
    for (int64_t i = 0; i < v; i++) g->b += word_prior[i];
    g->ndk = calloc((size_t)k + 1, sizeof *g->ndk);
    g->nkw = calloc((size_t)k + 1, sizeof *g->nkw);
    g->nk = calloc((size_t)k + 1, sizeof *g->nk);
    g->wk = calloc((size_t)k + 1, sizeof *g->wk);
    if (!g->ndk || !g->nkw || !g->nk || !g->wk) {
        lda_free(g);
        return NULL;
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
    int64_t d = g->doc[u], v = g->w[u];
    memset(g->ndk, 0, (size_t)g->k * sizeof *g->ndk);
    memset(g->nkw, 0, (size_t)g->k * sizeof *g->nkw);
    memset(g->nk, 0, (size_t)g->k * sizeof *g->nk);
    for (int64_t n = 0; n < g->ntok; n++) {
        if (n == u) continue;
        int64_t c = g->z[n];
        g->nk[c] += 1;
        g->ndk[c] += g->doc[n] == d;
        g->nkw[c] += g->w[n] == v;
    }
    weights_from(g, u, g->ndk, g->nkw, g->nk, logw);
}

void lda_commit(lda *g, int64_t u, int64_t knew) {
    g->z[u] = knew;
}

void lda_sweep(lda *g, const int64_t *order, int64_t m, const double *uniforms) {
    for (int64_t j = 0; j < m; j++) {
        int64_t u = order[j];
        lda_weights(g, u, g->wk);
        lda_commit(g, u, draw(g->wk, g->k, uniforms[j]));
    }
}
