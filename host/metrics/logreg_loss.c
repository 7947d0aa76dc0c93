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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

/* numpy's pairwise summation (8-way unrolled blocks of 128) in float32, as np.sum(float32). */
static float np_sum_f32(const float *a, int64_t n)
{
    if (n < 8) {
        float s = -0.0f;
        for (int64_t i = 0; i < n; i++)
            s += a[i];
        return s;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        int64_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + j];
        float s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            s += a[i];
        return s;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return np_sum_f32(a, n2) + np_sum_f32(a + n2, n - n2);
}

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

struct par_call {
    void (*fn)(void *, int, int);
    void *arg;
    int t, nt;
};

static void *par_entry(void *a)
{
    struct par_call *c = a;
    c->fn(c->arg, c->t, c->nt);
    return NULL;
}

void mieb_logreg_par_run(int nt, void (*fn)(void *arg, int t, int nt), void *arg)
{
    enum { MAXT = 256 };
    if (nt > MAXT)
        nt = MAXT;
    if (nt <= 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_t th[MAXT];
    struct par_call calls[MAXT];
    int started[MAXT];
    for (int t = 1; t < nt; t++) {
        calls[t] = (struct par_call){fn, arg, t, nt};
        started[t] = pthread_create(&th[t], NULL, par_entry, &calls[t]) == 0;
    }
    fn(arg, 0, nt);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            fn(arg, t, nt); /* no thread: the same part, here */
    }
}

mieb_status mieb_logreg_loss_init(struct mieb_logreg_loss *p, const float *X, const int64_t *y, int64_t n, int64_t D,
                                  int64_t K)
{
    memset(p, 0, sizeof *p);
    p->X = X, p->y = y, p->n = n, p->D = D, p->K = K;
    p->binary = K == 2;
    p->KK = p->binary ? 1 : K;
    p->l2 = 1.0 / (double)n;
    p->x_finite = 1;
    for (int64_t i = 0; i < n * D && p->x_finite; i++)
        p->x_finite = isfinite(X[i]);
    p->wt = malloc((size_t)(p->KK * (D + 1)) * sizeof(float));
    p->raw = malloc((size_t)(n * p->KK) * sizeof(float));
    p->lossv = malloc((size_t)n * sizeof(float));
    p->gx = malloc((size_t)(p->KK * D + p->KK) * sizeof(float)); /* + KK column sums */
    if (!p->wt || !p->raw || !p->lossv || !p->gx) {
        mieb_logreg_loss_free(p);
        return mieb_fail(MIEB_ERR_OOM, "logistic regression: out of memory for %lld x %lld logits", (long long)n,
                         (long long)p->KK);
    }
    return MIEB_OK;
}

void mieb_logreg_loss_free(struct mieb_logreg_loss *p)
{
    free(p->wt), free(p->raw), free(p->lossv), free(p->gx);
    p->wt = p->raw = p->lossv = p->gx = NULL;
}

/* Half-binomial loss and gradient of one sample (sklearn's Cython, double inside). */
static void binomial_point(double yt, float *r, float *loss)
{
    double rp = (double)*r, lo, gr;
    if (rp <= -37) {
        gr = exp(rp);
        lo = gr - yt * rp;
        gr -= yt;
    } else if (rp <= -2) {
        gr = exp(rp);
        lo = log1p(gr) - yt * rp;
        gr = ((1 - yt) * gr - yt) / (1 + gr);
    } else if (rp <= 18) {
        gr = exp(-rp);
        lo = log1p(gr) + (1 - yt) * rp;
        gr = ((1 - yt) - yt * gr) / (1 + gr);
    } else {
        gr = exp(-rp);
        lo = gr + (1 - yt) * rp;
        gr = ((1 - yt) - yt * gr) / (1 + gr);
    }
    *loss = (float)lo;
    *r = (float)gr;
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
    for (int64_t i = lo; i < hi; i++) {
        float *r = p->raw + i * K;
        for (int64_t k = 0; k < K; k++)
            r[k] += b[k];
        /* sum_exp_minus_max: max and sum of the float32 exps in double */
        double mx = r[0], se = 0.0;
        for (int64_t k = 1; k < K; k++)
            if (mx < r[k])
                mx = r[k];
        int64_t yi = p->y[i];
        float ryi = r[yi];
        for (int64_t k = 0; k < K; k++) {
            float e = (float)exp((double)r[k] - mx);
            se += e;
            r[k] = e;
        }
        float sum_exps = (float)se, max_value = (float)mx;
        float l = (float)(log((double)sum_exps) + (double)max_value);
        p->lossv[i] = l - ryi;
        for (int64_t k = 0; k < K; k++) {
            float q = r[k] / sum_exps;
            r[k] = (q - (float)(yi == k)) / fn;
        }
    }
}

struct classes_arg {
    struct mieb_logreg_loss *p;
    double *g;
};

/* Class block of the multiclass backward pass: grad_pointwise.T @ X + l2 W, intercept sums. */
static void classes_fn(void *arg, int t, int nt)
{
    struct classes_arg *a = arg;
    struct mieb_logreg_loss *p = a->p;
    int64_t k0, k1, K = p->K, D = p->D, n = p->n;
    mieb_logreg_part(K, t, nt, &k0, &k1);
    if (k1 <= k0)
        return;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(k1 - k0), (int)D, (int)n, 1.0f, p->raw + k0, (int)K,
                p->X, (int)D, 0.0f, p->gx + k0 * D, (int)D);
    float fl2 = (float)p->l2, *cs = p->gx + K * D; /* column sums [K] after gx */
    for (int64_t k = k0; k < k1; k++) {
        for (int64_t j = 0; j < D; j++)
            a->g[j * K + k] = p->gx[k * D + j] + fl2 * p->wt[j * K + k];
        cs[k] = 0.0f;
    }
    for (int64_t i = 0; i < n; i++) /* np.sum(axis=0) of a C-contiguous [n, K]: row after row */
        for (int64_t k = k0; k < k1; k++)
            cs[k] += p->raw[i * K + k];
    for (int64_t k = k0; k < k1; k++)
        a->g[D * K + k] = cs[k];
}

double mieb_logreg_loss_grad(struct mieb_logreg_loss *p, const double *w, double *g, int n_threads)
{
    int64_t n = p->n, D = p->D, KK = p->KK, P = KK * (D + 1);
    int zero_w = p->x_finite;
    for (int64_t i = 0; i < P; i++) {
        p->wt[i] = (float)w[i]; /* scipy's layout is already [D+1, KK] row-major */
        if (i < D * KK && p->wt[i] != 0.0f)
            zero_w = 0;
    }
    const float fn = (float)n, fl2 = (float)p->l2;
    if (p->binary) {
        /* raw = X @ w + b (sgemv, as numpy's matmul with a vector) */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)D, 1.0f, p->X, (int)D, p->wt, 1, 0.0f, p->raw, 1);
        for (int64_t i = 0; i < n; i++) {
            p->raw[i] += p->wt[D];
            binomial_point((double)p->y[i], &p->raw[i], &p->lossv[i]);
            p->raw[i] /= fn;
        }
    } else {
        struct rows_arg ra = {p, zero_w};
        mieb_logreg_par_run(mieb_logreg_threads_for(n, D, KK, n_threads), rows_fn, &ra);
    }
    double loss = (double)(np_sum_f32(p->lossv, n) / fn);
    /* l2 penalty: float(0.5 * l2 * np.dot(w, w)), the weights contiguous in scipy's layout */
    float norm2 = cblas_sdot((int)(D * KK), p->wt, 1, p->wt, 1);
    loss += (double)((float)(0.5 * p->l2) * norm2);
    if (p->binary) {
        /* grad = X.T @ grad_pointwise + l2 w (sgemv); intercept = np.sum(grad_pointwise) */
        cblas_sgemv(CblasRowMajor, CblasTrans, (int)n, (int)D, 1.0f, p->X, (int)D, p->raw, 1, 0.0f, p->gx, 1);
        for (int64_t j = 0; j < D; j++)
            g[j] = p->gx[j] + fl2 * p->wt[j];
        g[D] = np_sum_f32(p->raw, n);
    } else {
        struct classes_arg ca = {p, g};
        mieb_logreg_par_run(mieb_logreg_threads_for(KK, n, D, n_threads), classes_fn, &ca);
    }
    return loss;
}
