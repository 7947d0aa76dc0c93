/*
 * logreg_loss.c - sklearn 1.9's LinearModelLoss.loss_gradient for LogisticRegression on
 * float32 X (see logreg_loss.h), and the row-block threads that the fit and predict share.
 *
 * numpy's operations, in order (sklearn/linear_model/_linear_loss.py, multiclass):
 *   raw = X @ weights.T + intercept      one sgemm [n, D] x [D, K] (weights.T is scipy's
 *                                        Fortran-ravelled w, row-major [D, K]) + a row add
 *   loss_i, grad_pointwise = Cython half-multinomial (double exp/log, float32 out)
 *   loss = float(np.sum(loss_i) / n) + float(0.5 * l2 * np.dot(w, w))   (pairwise sum, sdot)
 *   grad_pointwise /= n
 *   grad[:, :D] = grad_pointwise.T @ X + l2 * weights                   one sgemm [K, n] x [n, D]
 *   grad[:, D] = np.sum(grad_pointwise, axis=0)                          row after row
 * Binary (one weight vector): X @ w and X.T @ grad_pointwise are matrix-vector products,
 * which numpy makes with sgemv (a 1-column sgemm gives other bits).
 * Threads: the first sgemm and the per-sample loss run on row blocks of X, the second
 * sgemm and the intercept sums on class blocks; BLAS runs single-threaded inside each.
 */
#include "logreg_loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "../math/logreg_math.h"
#include "../core/seq_max.h"
#include "npmath.h"

int mieb_logreg_threads_for(int64_t n, int64_t k, int64_t m, int n_threads)
{
    if (n_threads <= 1 || (double)n * (double)k * (double)m < 4e6)
        return 1; /* a thread start costs more than the product */
    int64_t blocks = (n + MIEB_LOGREG_ROW_ALIGN - 1) / MIEB_LOGREG_ROW_ALIGN;
    return blocks < n_threads ? (int)blocks : n_threads;
}

void mieb_logreg_part(int64_t n, int t, int nt, int64_t *lo, int64_t *hi)
{
    int64_t blocks = (n + MIEB_LOGREG_ROW_ALIGN - 1) / MIEB_LOGREG_ROW_ALIGN;
    int64_t per = (blocks + nt - 1) / nt * MIEB_LOGREG_ROW_ALIGN;
    *lo = (int64_t)t * per < n ? (int64_t)t * per : n;
    *hi = *lo + per < n ? *lo + per : n;
}

mieb_status mieb_logreg_loss_init(struct mieb_logreg_loss *p, const float *X, const int64_t *y, int64_t n, int64_t D,
                                  int64_t K)
{
    memset(p, 0, sizeof *p);
    p->X = X, p->y = y, p->n = n, p->D = D, p->K = K;
    p->binary = K == 2;
    p->KK = p->binary ? 1 : K;
    p->x_finite = 1;
    for (int64_t i = 0; i < n * D && p->x_finite; i++)
        p->x_finite = isfinite(X[i]);
    p->wt = malloc((size_t)(p->KK * (D + 1)) * sizeof(float));
    p->raw = malloc((size_t)(n * p->KK) * sizeof(float));
    p->lossv = malloc((size_t)n * sizeof(float));
    p->gx = malloc((size_t)(p->KK * D) * sizeof(float));
    p->graw = malloc((size_t)(p->KK * (D + 1)) * sizeof(float));
    if (!p->wt || !p->raw || !p->lossv || !p->gx || !p->graw) {
        mieb_logreg_loss_free(p);
        return mieb_fail(MIEB_ERR_OOM, "logistic regression: out of memory for %lld x %lld logits", (long long)n,
                         (long long)p->KK);
    }
    return MIEB_OK;
}

void mieb_logreg_loss_free(struct mieb_logreg_loss *p)
{
    free(p->wt), free(p->raw), free(p->lossv), free(p->gx), free(p->graw);
    p->wt = p->raw = p->lossv = p->gx = p->graw = NULL;
}

struct rows_arg {
    struct mieb_logreg_loss *p;
    int zero_w; /* weights all zero and X finite: X @ W.T is exactly 0, no product needed */
};

/* Row block of the multiclass forward pass: logits, per-sample loss, grad_pointwise / n. */
static void rows_fn(void *arg, int t, int nt)
{
    struct rows_arg *a = arg;
    struct mieb_logreg_loss *p = a->p;
    int64_t lo, hi, K = p->K, D = p->D;
    mieb_logreg_part(p->n, t, nt, &lo, &hi);
    if (hi <= lo)
        return;
    float *raw = p->raw + lo * K;
    const float *b = p->wt + D * K, fn = (float)p->n;
    if (a->zero_w)
        memset(raw, 0, (size_t)((hi - lo) * K) * sizeof *raw);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(hi - lo), (int)K, (int)D, 1.0f, p->X + lo * D,
                    (int)D, p->wt, (int)K, 0.0f, raw, (int)K);
    /* Rows go in groups of ROWS: each row's double sum of its exps is one chain of dependent
       additions in class order (sklearn's), so the group's chains are interleaved, class by
       class, to keep the adder busy; every row still adds in its own order. */
    enum { ROWS = 8 };
    for (int64_t i0 = lo; i0 < hi; i0 += ROWS) {
        int nb = hi - i0 < ROWS ? (int)(hi - i0) : ROWS;
        double mx[ROWS], se[ROWS] = {0};
        float ryi[ROWS];
        for (int j = 0; j < nb; j++) {
            float *r = p->raw + (i0 + j) * K;
            for (int64_t k = 0; k < K; k++)
                r[k] += b[k];
            /* sum_exp_minus_max: max and sum of the float32 exps in double */
            mx[j] = mieb_seq_max(r, K); /* r - mx, exp and log(se) + mx do not see a zero's sign */
            ryi[j] = r[p->y[i0 + j]];
            for (int64_t k = 0; k < K; k++)
                r[k] = mieb_lr_exp_shifted(r[k], mx[j]);
        }
        const float *e0 = p->raw + i0 * K;
        if (nb == ROWS)
            for (int64_t k = 0; k < K; k++)
                for (int j = 0; j < ROWS; j++)
                    se[j] += e0[j * K + k];
        else
            for (int j = 0; j < nb; j++)
                for (int64_t k = 0; k < K; k++)
                    se[j] += e0[j * K + k];
        for (int j = 0; j < nb; j++) {
            float *r = p->raw + (i0 + j) * K;
            int64_t yi = p->y[i0 + j];
            p->lossv[i0 + j] = mieb_lr_row_loss(se[j], mx[j], ryi[j]);
            float sum_exps = (float)se[j], e_y = r[yi];
            /* mieb_lr_grad_elem for k != y: x - 0.0f is x (x >= 0 here), so the loop is
               plain divisions the compiler vectorises; then y on its own */
            for (int64_t k = 0; k < K; k++)
                r[k] = r[k] / sum_exps / fn;
            r[yi] = mieb_lr_grad_elem(e_y, sum_exps, 1, fn);
        }
    }
}

/* Class block of the multiclass backward pass: grad_pointwise.T @ X, intercept sums, into graw. */
static void classes_fn(void *arg, int t, int nt)
{
    struct mieb_logreg_loss *p = arg;
    int64_t k0, k1, K = p->K, D = p->D, n = p->n;
    mieb_logreg_part(K, t, nt, &k0, &k1);
    if (k1 <= k0)
        return;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(k1 - k0), (int)D, (int)n, 1.0f, p->raw + k0, (int)K,
                p->X, (int)D, 0.0f, p->gx + k0 * D, (int)D);
    float *cs = p->graw + D * K; /* column sums [K]: the intercept row */
    for (int64_t k = k0; k < k1; k++) {
        for (int64_t j = 0; j < D; j++)
            p->graw[j * K + k] = p->gx[k * D + j];
        cs[k] = 0.0f;
    }
    for (int64_t i = 0; i < n; i++) /* np.sum(axis=0) of a C-contiguous [n, K]: row after row */
        for (int64_t k = k0; k < k1; k++)
            cs[k] += p->raw[i * K + k];
}

void mieb_logreg_loss_data(struct mieb_logreg_loss *p, int n_threads)
{
    int64_t n = p->n, D = p->D, KK = p->KK;
    int zero_w = p->x_finite;
    for (int64_t i = 0; i < D * KK && zero_w; i++)
        zero_w = p->wt[i] == 0.0f;
    const float fn = (float)n;
    if (p->binary) {
        /* raw = X @ w + b (sgemv, as numpy's matmul with a vector) */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)D, 1.0f, p->X, (int)D, p->wt, 1, 0.0f, p->raw, 1);
        for (int64_t i = 0; i < n; i++) {
            p->raw[i] += p->wt[D];
            p->raw[i] = mieb_lr_binomial_point((double)p->y[i], p->raw[i], &p->lossv[i]);
            p->raw[i] /= fn;
        }
        /* X.T @ grad_pointwise (sgemv); intercept = np.sum(grad_pointwise) */
        cblas_sgemv(CblasRowMajor, CblasTrans, (int)n, (int)D, 1.0f, p->X, (int)D, p->raw, 1, 0.0f, p->graw, 1);
        p->graw[D] = mieb_np_pairwise_sum_f32(p->raw, n);
        return;
    }
    struct rows_arg ra = {p, zero_w};
    mieb_par_run(mieb_logreg_threads_for(n, D, KK, n_threads), rows_fn, &ra);
    mieb_par_run(mieb_logreg_threads_for(KK, n, D, n_threads), classes_fn, p);
}

double mieb_logreg_loss_finish(const float *lossv, int64_t n, const float *wt, const float *graw, int64_t D,
                               int64_t KK, double *g)
{
    const float fn = (float)n, l2 = (float)(1.0 / (double)n);
    double loss = (double)(mieb_np_pairwise_sum_f32(lossv, n) / fn);
    /* l2 penalty: float(0.5 * l2 * np.dot(w, w)), the weights contiguous in scipy's layout */
    float norm2 = cblas_sdot((int)(D * KK), wt, 1, wt, 1);
    loss += (double)((float)(0.5 * (1.0 / (double)n)) * norm2);
    for (int64_t i = 0; i < D * KK; i++)
        g[i] = graw[i] + l2 * wt[i];
    for (int64_t k = 0; k < KK; k++)
        g[D * KK + k] = graw[D * KK + k];
    return loss;
}

double mieb_logreg_loss_grad(struct mieb_logreg_loss *p, const double *w, double *g, int n_threads)
{
    int64_t P = p->KK * (p->D + 1);
    for (int64_t i = 0; i < P; i++)
        p->wt[i] = (float)w[i]; /* scipy's layout is already [D+1, KK] row-major */
    mieb_logreg_loss_data(p, n_threads);
    return mieb_logreg_loss_finish(p->lossv, p->n, p->wt, p->graw, p->D, p->KK, g);
}
