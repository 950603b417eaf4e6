// nb_recompute.c: the hand-written C baseline of corpus/cases/19-naive-bayes-gibbs.hk (the
// collapsed Gibbs update of one document's topic in a Dirichlet-multinomial Naive Bayes
// model), in the form the paper's generated code takes: every update rebuilds the topic
// counts of the other documents and their topic-by-word histogram over all tokens, O(K V +
// tokens) per update (issue 12, deliverable 6). Its twin nb_incremental.c keeps them
// between updates. Both are baselines to measure generated kernels against; they are not
// part of slic-cas and must not grow features it lacks.
//
// Model (the .hk's parameters topic_prior, word_prior, z, w, doc, u): K = size(topic_prior)
// topics, V = size(word_prior) words, D = size(z) documents, token n has word w[n] in
// document doc[n]. With cnt[k] the documents d /= u of topic k, other[k][v] the tokens of
// word v in those documents, tot[k] = sum_v other[k][v], B = sum(word_prior), and doc u's
// tokens j = 0..L-1 (in index order) of words v_j, seen_j the earlier tokens of doc u with
// word v_j, the weight of zNew = k is
//   (topic_prior[k] + cnt[k]) * Gamma(B + tot[k]) / Gamma(B + tot[k] + L)
//     * prod_j (word_prior[v_j] + other[k][v_j] + seen_j)
// (the product is prod_v Gamma(wp[v] + other[k][v] + mine[v]) / Gamma(wp[v] + other[k][v])
// written as rising factorials), the categorical of 19-naive-bayes-gibbs.simplified.hk.
//
// ABI (C11, -lm; the same symbols as nb_incremental.c, so one loader drives both):
//   nb *nb_new(const double *topic_prior, int64_t k, const double *word_prior, int64_t v,
//              int64_t *z, int64_t ndocs, const int64_t *w, const int64_t *doc,
//              int64_t ntok)   z[ndocs] topics < k (borrowed: commit and sweep write it);
//                              w[ntok] < v, doc[ntok] < ndocs. NULL when out of memory.
//   void nb_free(nb *g);
//   void nb_weights(nb *g, int64_t u, double *logw)   logw[k]: unnormalised natural-log
//                              weights of zNew = 0..k-1 for document u < ndocs.
//   void nb_commit(nb *g, int64_t u, int64_t knew)    z[u] = knew.
//   void nb_sweep(nb *g, const int64_t *order, int64_t m, const double *uniforms)
//                              for j < m: u = order[j]; draw z[u] from its weights by the
//                              uniform uniforms[j] in [0, 1) (inverse CDF); commit.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"

typedef struct nb {
    const double *tp, *wp;
    int64_t k, v, ndocs, ntok;
    int64_t *z;
    const int64_t *w, *doc;
    double b;           // sum of word_prior
    int64_t *start;     // document d's words are words[start[d] .. start[d+1])
    int64_t *words;
    int32_t *mine;      // scratch, all 0 between updates: doc u's count of each word
    int32_t *seen;      // scratch: seen_j of doc u's tokens
    int64_t *cnt;       // scratch: topics of the documents but u
    int32_t *other;     // scratch: K x V histogram of the other documents' words
    int64_t *tot;       // scratch: row sums of other
    double *wk;         // scratch: weights of one update
} nb;

void nb_free(nb *g) {
    if (!g) return;
    free(g->start); free(g->words); free(g->mine); free(g->seen);
    free(g->cnt); free(g->other); free(g->tot); free(g->wk); free(g);
}

nb *nb_new(const double *topic_prior, int64_t k, const double *word_prior, int64_t v,
           int64_t *z, int64_t ndocs, const int64_t *w, const int64_t *doc, int64_t ntok) {
    nb *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->tp = topic_prior; g->wp = word_prior; g->k = k; g->v = v;
    g->z = z; g->ndocs = ndocs; g->w = w; g->doc = doc; g->ntok = ntok;
    for (int64_t i = 0; i < v; i++) g->b += word_prior[i];
    g->start = calloc((size_t)ndocs + 2, sizeof *g->start);
    g->words = calloc((size_t)ntok + 1, sizeof *g->words);
    g->mine = calloc((size_t)v + 1, sizeof *g->mine);
    g->seen = calloc((size_t)ntok + 1, sizeof *g->seen);
    g->cnt = calloc((size_t)k + 1, sizeof *g->cnt);
    g->other = calloc((size_t)(k * v) + 1, sizeof *g->other);
    g->tot = calloc((size_t)k + 1, sizeof *g->tot);
    g->wk = calloc((size_t)k + 1, sizeof *g->wk);
    if (!g->start || !g->words || !g->mine || !g->seen || !g->cnt || !g->other || !g->tot
        || !g->wk) {
        nb_free(g);
        return NULL;
    }
    // the documents' words, grouped by document in token order (counting sort)
    for (int64_t n = 0; n < ntok; n++) g->start[doc[n] + 2] += 1;
    for (int64_t d = 0; d < ndocs; d++) g->start[d + 2] += g->start[d + 1];
    for (int64_t n = 0; n < ntok; n++) g->words[g->start[doc[n] + 1]++] = w[n];
    return g;
}

// the weights of doc u from per-topic statistics: cnt (documents), tot (tokens) and other
// (K x V tokens by word) of the documents in topic c less doc u itself when c == self
// (self = -1: they already leave doc u out). The same code in both baselines, so equal
// counts give bit-equal weights.
static void weights_from(nb *g, int64_t u, const int64_t *cnt, const int64_t *tot,
                         const int32_t *other, int64_t self, double *logw) {
    const int64_t *ws = g->words + g->start[u];
    int64_t len = g->start[u + 1] - g->start[u];
    for (int64_t j = 0; j < len; j++) g->seen[j] = g->mine[ws[j]]++;
    for (int64_t c = 0; c < g->k; c++) {
        int is_self = c == self;
        double tc = (double)(tot[c] - (is_self ? len : 0));
        double lw = log(g->tp[c] + (double)(cnt[c] - is_self)) + lgamma(g->b + tc)
                    - lgamma(g->b + tc + (double)len);
        const int32_t *row = other + c * g->v;
        for (int64_t j = 0; j < len; j++) {
            int64_t wv = ws[j];
            int32_t o = row[wv] - (is_self ? g->mine[wv] : 0);
            lw += log(g->wp[wv] + (double)o + (double)g->seen[j]);
        }
        logw[c] = lw;
    }
    for (int64_t j = 0; j < len; j++) g->mine[ws[j]] = 0;
}

void nb_weights(nb *g, int64_t u, double *logw) {
    memset(g->cnt, 0, (size_t)g->k * sizeof *g->cnt);
    memset(g->tot, 0, (size_t)g->k * sizeof *g->tot);
    memset(g->other, 0, (size_t)(g->k * g->v) * sizeof *g->other);
    for (int64_t d = 0; d < g->ndocs; d++)
        if (d != u) g->cnt[g->z[d]] += 1;
    for (int64_t n = 0; n < g->ntok; n++) {
        int64_t d = g->doc[n];
        if (d == u) continue;
        int64_t c = g->z[d];
        g->other[c * g->v + g->w[n]] += 1;
        g->tot[c] += 1;
    }
    weights_from(g, u, g->cnt, g->tot, g->other, -1, logw);
}

void nb_commit(nb *g, int64_t u, int64_t knew) {
    g->z[u] = knew;
}

void nb_sweep(nb *g, const int64_t *order, int64_t m, const double *uniforms) {
    for (int64_t j = 0; j < m; j++) {
        int64_t u = order[j];
        nb_weights(g, u, g->wk);
        nb_commit(g, u, draw(g->wk, g->k, uniforms[j]));
    }
}
