/*
 * clustering_metrics.c - v_measure, nmi, ari and cluster accuracy as scikit-learn 1.9 and
 * scipy compute them (see clustering_metrics.h). The contingency table is built sparse
 * (sorted (class, cluster) pairs) because all-distinct labellings make a dense one n x n.
 */
#include "clustering_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../emulation/npmath.h"

mieb_status mieb_count_distinct(const int64_t *v, int64_t n, int64_t *k)
{
    int64_t *codes = malloc((size_t)(n ? n : 1) * sizeof *codes);
    if (!codes)
        return mieb_fail(MIEB_ERR_OOM, "out of memory counting %lld labels", (long long)n);
    mieb_status st = mieb_np_unique_inverse(v, n, codes, k);
    free(codes);
    return st;
}

/* sklearn _entropy: -sum(p_i * (log(c_i) - log(n))) over class counts c_i. */
static double entropy_of(const int64_t *counts, int64_t k, int64_t n)
{
    if (k <= 1)
        return 0.0;
    double h = 0.0, ln = log((double)n);
    for (int64_t i = 0; i < k; i++)
        if (counts[i])
            h -= ((double)counts[i] / (double)n) * (log((double)counts[i]) - ln);
    return h;
}

mieb_status mieb_max_assignment(const int64_t *m, int64_t r, int64_t c, int64_t *best)
{
    /* Hungarian algorithm (shortest augmenting paths with potentials) minimising -M over
     * the smaller side; integer potentials keep it exact. O(min^2 * max). */
    int transpose = r > c;
    int64_t n = transpose ? c : r, mm = transpose ? r : c;
    *best = 0;
    if (n == 0)
        return MIEB_OK;
    int64_t *u = calloc((size_t)n + 1, sizeof *u), *v = calloc((size_t)mm + 1, sizeof *v);
    int64_t *p = calloc((size_t)mm + 1, sizeof *p), *way = calloc((size_t)mm + 1, sizeof *way);
    int64_t *minv = malloc(((size_t)mm + 1) * sizeof *minv);
    char *used = malloc((size_t)mm + 1);
    if (!u || !v || !p || !way || !minv || !used) {
        free(u), free(v), free(p), free(way), free(minv), free(used);
        return mieb_fail(MIEB_ERR_OOM, "cluster accuracy: out of memory for a %lld x %lld assignment",
                         (long long)r, (long long)c);
    }
#define COST(i, j) (-(transpose ? m[(j) * c + (i)] : m[(i) * c + (j)]))
    for (int64_t i = 1; i <= n; i++) {
        p[0] = i;
        int64_t j0 = 0;
        for (int64_t j = 0; j <= mm; j++)
            minv[j] = INT64_MAX, used[j] = 0;
        do {
            used[j0] = 1;
            int64_t i0 = p[j0], delta = INT64_MAX, j1 = 0;
            for (int64_t j = 1; j <= mm; j++) {
                if (used[j])
                    continue;
                int64_t cur = COST(i0 - 1, j - 1) - u[i0] - v[j];
                if (cur < minv[j])
                    minv[j] = cur, way[j] = j0;
                if (minv[j] < delta)
                    delta = minv[j], j1 = j;
            }
            for (int64_t j = 0; j <= mm; j++) {
                if (used[j])
                    u[p[j]] += delta, v[j] -= delta;
                else
                    minv[j] -= delta;
            }
            j0 = j1;
        } while (p[j0] != 0);
        do {
            int64_t j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0);
    }
    int64_t s = 0;
    for (int64_t j = 1; j <= mm; j++)
        if (p[j])
            s -= COST(p[j] - 1, j - 1);
#undef COST
    *best = s;
    free(u), free(v), free(p), free(way), free(minv), free(used);
    return MIEB_OK;
}

struct pair { int64_t a, b; };

static int cmp_pair(const void *x, const void *y)
{
    const struct pair *p = x, *q = y;
    if (p->a != q->a)
        return (p->a > q->a) - (p->a < q->a);
    return (p->b > q->b) - (p->b < q->b);
}

mieb_status mieb_cluster_scores(const int64_t *labels, const int64_t *pred, int64_t n,
                                struct mieb_cluster_scores *out)
{
    if (n == 0) { /* sklearn: v=1, nmi=1, ari=1; accuracy 0/0 */
        *out = (struct mieb_cluster_scores){1.0, 1.0, 1.0, NAN};
        return MIEB_OK;
    }
    mieb_status st = MIEB_OK;
    int64_t kc = 0, kk = 0, nnz = 0, *dense = NULL;
    int64_t *cc = malloc((size_t)n * sizeof *cc), *ck = malloc((size_t)n * sizeof *ck);
    struct pair *pr = malloc((size_t)n * sizeof *pr);
    int64_t *a = NULL, *b = NULL, *val = NULL;
    if (!cc || !ck || !pr) {
        st = mieb_fail(MIEB_ERR_OOM, "clustering metrics: out of memory for %lld labels", (long long)n);
        goto out;
    }
    if ((st = mieb_np_unique_inverse(labels, n, cc, &kc)) != MIEB_OK ||
        (st = mieb_np_unique_inverse(pred, n, ck, &kk)) != MIEB_OK)
        goto out;
    for (int64_t i = 0; i < n; i++)
        pr[i] = (struct pair){cc[i], ck[i]};
    qsort(pr, (size_t)n, sizeof *pr, cmp_pair);
    a = calloc((size_t)kc, sizeof *a);  /* class sizes */
    b = calloc((size_t)kk, sizeof *b);  /* cluster sizes */
    val = malloc((size_t)n * sizeof *val);
    if (!a || !b || !val) {
        st = mieb_fail(MIEB_ERR_OOM, "clustering metrics: out of memory for %lld labels", (long long)n);
        goto out;
    }
    for (int64_t i = 0; i < n; i++) {
        a[pr[i].a]++, b[pr[i].b]++;
        if (i == 0 || cmp_pair(&pr[i], &pr[i - 1])) {
            pr[nnz] = pr[i];
            val[nnz++] = 1;
        } else {
            val[nnz - 1]++;
        }
    }
    /* mutual_info_score on the sparse contingency (natural logs, tiny terms zeroed, clip at 0) */
    double mi = 0.0;
    if (kc > 1 && kk > 1) {
        double ln = log((double)n);
        for (int64_t t = 0; t < nnz; t++) {
            double cnm = (double)val[t] / (double)n;
            double outer = (double)(a[pr[t].a] * b[pr[t].b]);
            double log_outer = -log(outer) + ln + ln;
            double term = cnm * (log((double)val[t]) - ln) + cnm * log_outer;
            if (fabs(term) < 2.220446049250313e-16)
                term = 0.0;
            mi += term;
        }
        if (mi < 0.0)
            mi = 0.0;
    }
    double hc = entropy_of(a, kc, n), hk = entropy_of(b, kk, n);
    double hom = hc != 0.0 ? mi / hc : 1.0, com = hk != 0.0 ? mi / hk : 1.0;
    out->v_measure = hom + com == 0.0 ? 0.0 : 2.0 * hom * com / (hom + com);
    if (kc == 1 && kk == 1)
        out->nmi = 1.0;
    else if (mi == 0.0)
        out->nmi = 0.0;
    else
        out->nmi = mi / ((hc + hk) / 2.0);
    /* adjusted_rand_score from the pair confusion matrix, with exact 128-bit products as
     * Python's integers give them */
    __int128 sum_sq = 0, dot_k = 0, dot_c = 0, N = n;
    for (int64_t t = 0; t < nnz; t++) {
        sum_sq += (__int128)val[t] * val[t];
        dot_k += (__int128)val[t] * b[pr[t].b];
        dot_c += (__int128)val[t] * a[pr[t].a];
    }
    __int128 tp = sum_sq - N, fp = dot_k - sum_sq, fn = dot_c - sum_sq;
    __int128 tn = N * N - fp - fn - sum_sq;
    if (fn == 0 && fp == 0) {
        out->ari = 1.0;
    } else {
        __int128 num = tp * tn - fn * fp, den = (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn);
        out->ari = 2.0 * (double)num / (double)den;
    }
    /* cluster accuracy: the optimum of the confusion matrix over the union of label values
     * equals the optimum of the class x cluster contingency (extra rows/columns are zero) */
    int64_t r = kc < kk ? kc : kk, c = kc < kk ? kk : kc;
    if ((double)r * (double)c > (double)(1LL << 30)) {
        st = mieb_fail(MIEB_ERR_TOO_LARGE,
                       "cluster accuracy: %lld classes x %lld clusters is too large a matching",
                       (long long)kc, (long long)kk);
        goto out;
    }
    dense = calloc((size_t)kc * (size_t)kk, sizeof *dense);
    if (!dense) {
        st = mieb_fail(MIEB_ERR_OOM, "cluster accuracy: out of memory for %lld x %lld",
                       (long long)kc, (long long)kk);
        goto out;
    }
    for (int64_t t = 0; t < nnz; t++)
        dense[pr[t].a * kk + pr[t].b] = val[t];
    int64_t best = 0;
    if ((st = mieb_max_assignment(dense, kc, kk, &best)) != MIEB_OK)
        goto out;
    out->cluster_accuracy = (double)best / (double)n;
out:
    free(cc), free(ck), free(pr), free(a), free(b), free(val), free(dense);
    return st;
}
