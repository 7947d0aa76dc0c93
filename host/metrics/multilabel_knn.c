/*
 * multilabel_knn.c - sklearn KNeighborsClassifier(5) on a multilabel indicator matrix and
 * mteb's multilabel metrics (multilabel_knn.h gives the exact rules and their sources).
 */
#include "multilabel_knn.h"

#include <float.h>
#include <stdlib.h>

#include "../core/stop.h"
#include "../emulation/npmath.h"

const char *const mieb_multilabel_keys[4] = {"accuracy", "lrap", "f1", "hamming"};

double mieb_multilabel_scores_value(const struct mieb_multilabel_scores *s, int i)
{
    switch (i) {
    case 0: return s->accuracy;
    case 1: return s->lrap;
    case 2: return s->f1;
    default: return s->hamming;
    }
}

void mieb_knn_sqnorms(const float *X, int64_t n, int64_t D, double *out)
{
    for (int64_t i = 0; i < n; i++) {
        const float *x = X + i * D;
        double s = 0.0;
        for (int64_t d = 0; d < D; d++)
            s += (double)x[d] * (double)x[d];
        out[i] = s;
    }
}

/* sklearn/utils/_heap.pyx heap_push on a max-heap of `size` (values, indices). */
static void heap_push(double *values, int64_t *indices, int64_t size, double val, int64_t val_idx)
{
    if (val >= values[0])
        return;
    values[0] = val;
    indices[0] = val_idx;
    int64_t cur = 0;
    for (;;) {
        int64_t l = 2 * cur + 1, r = l + 1, sw;
        if (l >= size)
            break;
        else if (r >= size) {
            if (values[l] > val)
                sw = l;
            else
                break;
        } else if (values[l] >= values[r]) {
            if (val < values[l])
                sw = l;
            else
                break;
        } else {
            if (val < values[r])
                sw = r;
            else
                break;
        }
        values[cur] = values[sw];
        indices[cur] = indices[sw];
        cur = sw;
    }
    values[cur] = val;
    indices[cur] = val_idx;
}

mieb_status mieb_knn_argkmin(const float *Xq, const double *xn, int64_t nq, const float *Y, const double *yn,
                             int64_t ny, int64_t D, int64_t k, int kd_tree, int64_t *idx)
{
    if (k < 1 || k > ny)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "kneighbors: k = %lld with %lld fit rows", (long long)k, (long long)ny);
    double *heap = malloc((size_t)k * sizeof *heap), *xq = malloc((size_t)(D > 0 ? D : 1) * sizeof *xq);
    if (!heap || !xq) {
        free(heap), free(xq);
        return mieb_fail(MIEB_ERR_OOM, "kneighbors buffers");
    }
    for (int64_t i = 0; i < nq; i++) {
        if (mieb_stop_requested()) { /* a stop signal: once per query (core/stop.h) */
            free(heap), free(xq);
            return mieb_stop_check();
        }
        for (int64_t d = 0; d < D; d++)
            xq[d] = (double)Xq[i * D + d];
        int64_t *ind = idx + i * k;
        for (int64_t t = 0; t < k; t++) {
            heap[t] = DBL_MAX;
            ind[t] = -1;
        }
        for (int64_t j = 0; j < ny; j++) {
            const float *y = Y + j * D;
            double dist = 0.0;
            if (kd_tree) {
                for (int64_t d = 0; d < D; d++) {
                    double t = xq[d] - (double)y[d];
                    dist += t * t;
                }
            } else {
                double dot = 0.0;
                for (int64_t d = 0; d < D; d++)
                    dot += xq[d] * (double)y[d];
                dist = (xn[i] + -2.0 * dot) + yn[j];
                if (!(dist > 0.0)) /* max(0., d): -0. and cancellation (inputs are finite) */
                    dist = 0.0;
            }
            heap_push(heap, ind, k, dist, j);
        }
    }
    free(heap), free(xq);
    return MIEB_OK;
}

void mieb_knn_vote(const uint8_t *Yfit, int64_t L, const int64_t *idx, int64_t nq, int64_t k, uint8_t *pred)
{
    for (int64_t i = 0; i < nq; i++)
        for (int64_t c = 0; c < L; c++) {
            int64_t pos = 0;
            for (int64_t t = 0; t < k; t++)
                pos += Yfit[idx[i * k + t] * L + c] != 0;
            /* argmax over the column's classes; with both present a tie goes to 0; with only
             * one class present every neighbour has it, so the same rule gives that class */
            pred[i * L + c] = pos > k - pos;
        }
}

void mieb_multilabel_row_scores(const uint8_t *t, const uint8_t *p, int64_t L, double *scratch, double *accuracy,
                        double *lrap, double *hamming)
{
    int64_t nr = 0, in = 0, un = 0, same = 1;
    for (int64_t c = 0; c < L; c++) {
        int tv = t[c] != 0, pv = p[c] != 0;
        nr += tv;
        in += tv && pv;
        un += tv || pv;
        same &= tv == pv;
    }
    *accuracy = (double)same;
    *hamming = un == 0 ? 1.0 : (double)in / (double)un;
    if (nr == 0 || nr == L) { /* sklearn: the ranking means nothing, the row scores 1 */
        *lrap = 1.0;
        return;
    }
    /* (L_j / rank_j).mean() over the relevant labels j, ranks rankdata(-score, "max") */
    int64_t m = 0;
    for (int64_t j = 0; j < L; j++) {
        if (!t[j])
            continue;
        int64_t rank = 0, lr = 0;
        for (int64_t c = 0; c < L; c++)
            if ((p[c] != 0) >= (p[j] != 0)) {
                rank++;
                lr += t[c] != 0;
            }
        scratch[m++] = (double)lr / (double)rank;
    }
    *lrap = mieb_np_mean(scratch, m);
}

mieb_status mieb_multilabel_metrics(const uint8_t *y_true, const uint8_t *y_pred, int64_t n, int64_t L,
                            struct mieb_multilabel_scores *out)
{
    double *acc_row = calloc((size_t)n, sizeof *acc_row), *ham_row = calloc((size_t)n, sizeof *ham_row);
    double *b = malloc((size_t)L * sizeof *b);
    int64_t *tp = calloc((size_t)L, sizeof *tp), *ts = calloc((size_t)L, sizeof *ts), *ps = calloc((size_t)L, sizeof *ps);
    if (!acc_row || !ham_row || !b || !tp || !ts || !ps) {
        free(acc_row), free(ham_row), free(b), free(tp), free(ts), free(ps);
        return mieb_fail(MIEB_ERR_OOM, "multilabel metrics (%lld x %lld)", (long long)n, (long long)L);
    }
    /* accuracy_score and hamming_score: means of the rows' values; LRAP: Python-float
     * accumulation of the rows' values */
    double lrap_sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double lrap;
        mieb_multilabel_row_scores(y_true + i * L, y_pred + i * L, L, b, &acc_row[i], &lrap, &ham_row[i]);
        lrap_sum += lrap;
    }
    out->accuracy = mieb_np_mean(acc_row, n);
    out->lrap = lrap_sum / (double)n;
    out->hamming = mieb_np_mean(ham_row, n);
    /* f1_score macro: per label 2 tp / (true + pred), 0 when both are 0, then np.mean */
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < L; c++) {
            int tv = y_true[i * L + c] != 0, pv = y_pred[i * L + c] != 0;
            tp[c] += tv && pv;
            ts[c] += tv;
            ps[c] += pv;
        }
    for (int64_t c = 0; c < L; c++) {
        double denom = 1.0 * (double)ts[c] + (double)ps[c];
        b[c] = denom == 0.0 ? 0.0 : (2.0 * (double)tp[c]) / denom;
    }
    out->f1 = mieb_np_mean(b, L);
    free(acc_row), free(ham_row), free(b), free(tp), free(ts), free(ps);
    return MIEB_OK;
}
