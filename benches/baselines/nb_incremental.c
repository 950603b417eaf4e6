// nb_incremental.c: the hand-written C baseline of corpus/cases/19-naive-bayes-gibbs.hk
// (the collapsed Gibbs update of one document's topic in a Dirichlet-multinomial Naive
// Bayes model), written the way a careful person writes it: the topic counts of all
// documents and their topic-by-word histogram are kept between updates; an update reads
// them less document u's own words (O(K L) for a document of L tokens), and a commit moves
// u's words from its old topic to its new one (O(L)) (issues 12 and 13). Its twin
// nb_recompute.c rebuilds them at every update. Both are baselines to measure generated
// kernels against; they are not part of slic-cas and must not grow features it lacks.
//
// Model and weights: as in nb_recompute.c (the .hk's parameters topic_prior, word_prior,
// z, w, doc, u), computed by the same code from the same integer counts.
//
// ABI: exactly nb_recompute.c's (nb_new, nb_free, nb_weights, nb_commit, nb_sweep); z must
// change only through nb_commit and nb_sweep, or the kept statistics go stale.
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
    int64_t *cnt;       // topics of all documents
    int32_t *other;     // K x V histogram of all documents' words by topic
    int64_t *tot;       // row sums of other
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
    for (int64_t d = 0; d < ndocs; d++) g->cnt[z[d]] += 1;
    for (int64_t n = 0; n < ntok; n++) {
        int64_t c = z[doc[n]];
        g->other[c * v + w[n]] += 1;
        g->tot[c] += 1;
    }
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
    weights_from(g, u, g->cnt, g->tot, g->other, g->z[u], logw);
}

void nb_commit(nb *g, int64_t u, int64_t knew) {
    int64_t old = g->z[u];
    if (old == knew) return;
    const int64_t *ws = g->words + g->start[u];
    int64_t len = g->start[u + 1] - g->start[u];
    int32_t *from = g->other + old * g->v, *to = g->other + knew * g->v;
    for (int64_t j = 0; j < len; j++) {
        from[ws[j]] -= 1;
        to[ws[j]] += 1;
    }
    g->tot[old] -= len;
    g->tot[knew] += len;
    g->cnt[old] -= 1;
    g->cnt[knew] += 1;
    g->z[u] = knew;
}

void nb_sweep(nb *g, const int64_t *order, int64_t m, const double *uniforms) {
    for (int64_t j = 0; j < m; j++) {
        int64_t u = order[j];
        nb_weights(g, u, g->wk);
        nb_commit(g, u, draw(g->wk, g->k, uniforms[j]));
    }
}
