/*
 * classification_metrics.c - sklearn 1.9's accuracy / precision / recall / F1 (macro and
 * weighted) and binary average precision, with numpy's summation order, for the zero-shot
 * and linear-probe families (see classification_metrics.h for the definitions).
 */
#include "classification_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../emulation/npmath.h"
#include "../core/qsort_cmp.h"

const char *const mieb_clf_keys[9] = {"accuracy", "f1", "f1_weighted", "precision", "precision_weighted",
                                      "recall", "recall_weighted", "ap", "ap_weighted"};

double mieb_clf_scores_value(const struct mieb_clf_scores *s, int i)
{
    switch (i) {
    case 0: return s->accuracy;
    case 1: return s->f1;
    case 2: return s->f1_weighted;
    case 3: return s->precision;
    case 4: return s->precision_weighted;
    case 5: return s->recall;
    case 6: return s->recall_weighted;
    case 7: return s->ap;
    default: return s->ap_weighted;
    }
}

/* Sorted distinct values of a (n) and b (m) into a new array; *k receives the count. */
static mieb_status sorted_union(const int64_t *a, int64_t n, const int64_t *b, int64_t m,
                                int64_t **out, int64_t *k)
{
    int64_t *u = malloc((size_t)(n + m + 1) * sizeof *u);
    if (!u)
        return mieb_fail(MIEB_ERR_OOM, "classification metrics: out of memory for %lld labels", (long long)(n + m));
    memcpy(u, a, (size_t)n * sizeof *u);
    if (m)
        memcpy(u + n, b, (size_t)m * sizeof *u);
    qsort(u, (size_t)(n + m), sizeof *u, mieb_cmp_i64);
    int64_t w = 0;
    for (int64_t i = 0; i < n + m; i++)
        if (w == 0 || u[w - 1] != u[i])
            u[w++] = u[i];
    *out = u;
    *k = w;
    return MIEB_OK;
}

static int64_t label_pos(const int64_t *labels, int64_t k, int64_t v)
{
    const int64_t *p = bsearch(&v, labels, (size_t)k, sizeof *labels, mieb_cmp_i64);
    return p - labels;
}

mieb_status mieb_clf_n_unique(const int64_t *y, int64_t n, int64_t *out)
{
    int64_t *u;
    MIEB_TRY(sorted_union(y, n, NULL, 0, &u, out));
    free(u);
    return MIEB_OK;
}

/* np.average(v) (weights NULL) or np.average(v, weights=w): pairwise sums, as numpy. */
static double np_average(const double *v, const double *w, int64_t k, double *scratch)
{
    if (!w)
        return mieb_np_sum(v, k) / (double)k;
    for (int64_t i = 0; i < k; i++)
        scratch[i] = v[i] * w[i];
    return mieb_np_sum(scratch, k) / mieb_np_sum(w, k);
}

mieb_status mieb_clf_label_metrics(const int64_t *y_true, const int64_t *y_pred, int64_t n,
                                   struct mieb_clf_scores *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "classification metrics: no samples");
    int64_t *labels, k;
    MIEB_TRY(sorted_union(y_true, n, y_pred, n, &labels, &k));
    /* tp, true and pred counts per label, then 3 per-label metric arrays, the weights and scratch */
    double *buf = calloc((size_t)k * 8, sizeof *buf);
    if (!buf) {
        free(labels);
        return mieb_fail(MIEB_ERR_OOM, "classification metrics: out of memory for %lld classes", (long long)k);
    }
    double *tp = buf, *tru = buf + k, *pred = buf + 2 * k, *prec = buf + 3 * k, *rec = buf + 4 * k,
           *f1 = buf + 5 * k, *scratch = buf + 6 * k;
    int64_t correct = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = label_pos(labels, k, y_true[i]), p = label_pos(labels, k, y_pred[i]);
        tru[t] += 1.0;
        pred[p] += 1.0;
        if (t == p) {
            tp[t] += 1.0;
            correct++;
        }
    }
    /* sklearn's _prf_divide: 0/0 -> 0.0 (zero_division "warn" behaves like 0). */
    for (int64_t j = 0; j < k; j++) {
        prec[j] = pred[j] != 0.0 ? tp[j] / pred[j] : 0.0;
        rec[j] = tru[j] != 0.0 ? tp[j] / tru[j] : 0.0;
        double den = tru[j] + pred[j]; /* beta^2 * true + pred with beta = 1 */
        f1[j] = den != 0.0 ? (2.0 * tp[j]) / den : 0.0;
    }
    /* accuracy: mean of the 0/1 match vector; the pairwise sum of integers is exact. */
    out->accuracy = (double)correct / (double)n;
    out->f1 = np_average(f1, NULL, k, scratch);
    out->f1_weighted = np_average(f1, tru, k, scratch);
    out->precision = np_average(prec, NULL, k, scratch);
    out->precision_weighted = np_average(prec, tru, k, scratch);
    out->recall = np_average(rec, NULL, k, scratch);
    out->recall_weighted = np_average(rec, tru, k, scratch);
    out->has_ap = false;
    free(buf);
    free(labels);
    return MIEB_OK;
}

/* Sort order for the precision-recall curve: score descending (ties in any order: only the
 * counts at the end of each tie group enter the curve). */
struct scored { double s; int pos; };
static int cmp_scored_desc(const void *a, const void *b)
{
    double x = ((const struct scored *)a)->s, y = ((const struct scored *)b)->s;
    return (x < y) - (x > y);
}

mieb_status mieb_clf_binary_ap(const int64_t *y_true, const double *score, int64_t n, double *out)
{
    int has_one = 0;
    for (int64_t i = 0; i < n; i++) {
        if (y_true[i] == 1)
            has_one = 1;
        if (!isfinite(score[i]))
            return mieb_fail(MIEB_ERR_BAD_DATA, "average_precision_score: score %lld is not finite "
                             "(sklearn rejects NaN and infinity)", (long long)i);
    }
    if (!has_one)
        return mieb_fail(MIEB_ERR_BAD_DATA, "average_precision_score: pos_label=1 is not a valid label: "
                         "y_true has two classes and neither is 1 (sklearn raises ValueError here)");
    struct scored *v = malloc((size_t)n * sizeof *v);
    double *tps = malloc((size_t)n * sizeof *tps), *fps = malloc((size_t)n * sizeof *fps);
    double *terms = malloc((size_t)(n + 1) * sizeof *terms);
    if (!v || !tps || !fps || !terms) {
        free(v), free(tps), free(fps), free(terms);
        return mieb_fail(MIEB_ERR_OOM, "average_precision_score: out of memory for %lld samples", (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        v[i].s = score[i];
        v[i].pos = y_true[i] == 1;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_scored_desc);
    /* thresholds at the last index of each group of equal scores (sklearn's threshold_idxs) */
    int64_t m = 0;
    double cum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        cum += v[i].pos;
        if (i == n - 1 || v[i + 1].s != v[i].s) {
            tps[m] = cum;
            fps[m] = 1.0 + (double)i - cum;
            m++;
        }
    }
    double total = tps[m - 1];
    /* Reversed curve: precision_r = [p_{m-1} .. p_0, 1], recall_r = [r_{m-1} .. r_0, 0];
     * terms[j] = (recall_r[j+1] - recall_r[j]) * precision_r[j]. */
    for (int64_t j = 0; j < m; j++) {
        int64_t a = m - 1 - j;
        double pa = tps[a] / (tps[a] + fps[a]);
        double ra = total != 0.0 ? tps[a] / total : 1.0;
        double rnext = (j + 1 < m) ? (total != 0.0 ? tps[a - 1] / total : 1.0) : 0.0;
        terms[j] = (rnext - ra) * pa;
    }
    double s = -mieb_np_sum(terms, m);
    *out = s > 0.0 ? s : 0.0; /* Python max(0.0, s): -0.0 and NaN give 0.0 */
    free(v), free(tps), free(fps), free(terms);
    return MIEB_OK;
}
