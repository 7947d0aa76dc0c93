/*
 * logreg_lbfgs.c - multinomial / binomial logistic regression fitted like sklearn 1.9's
 * lbfgs solver on float32 data (see logreg_lbfgs.h): the loss-gradient in sklearn's
 * float32 arithmetic (logreg_loss.c) driven by scipy's unbounded L-BFGS-B (lbfgs.c), and
 * the predictions.
 */
#include "logreg_lbfgs.h"

#include <math.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include <cblas.h>

#include "../core/stop.h"
#include "../cpu/cpu_logreg.h"
#include "lbfgs.h"
#include "logreg_loss.h"

/* Threads for the next loss evaluation: the caller's share of par's threads, at least 1. */
static int par_threads(const struct mieb_logreg_par *par)
{
    if (!par || par->n_threads <= 1)
        return 1;
    int share = par->share ? atomic_load(par->share) : 1;
    int nt = par->n_threads / (share > 1 ? share : 1);
    return nt > 1 ? nt : 1;
}

mieb_status mieb_logreg_fit(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                            struct mieb_logreg *out)
{
    return mieb_logreg_fit_par(X, y, n, D, K, max_iter, NULL, out);
}

mieb_status mieb_logreg_fit_par(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                                const struct mieb_logreg_par *par, struct mieb_logreg *out)
{
    memset(out, 0, sizeof *out);
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1); /* our threads split the products; see logreg_lbfgs.h */
    struct mieb_logreg_loss p;
    struct mieb_lbfgs s;
    MIEB_TRY(mieb_logreg_loss_init(&p, X, y, n, D, K));
    int64_t KK = p.KK, P = KK * (D + 1);
    mieb_status st = mieb_lbfgs_init(&s, P, max_iter);
    out->coef = malloc((size_t)(KK * D) * sizeof(float));
    out->intercept = malloc((size_t)KK * sizeof(float));
    if (st != MIEB_OK || !out->coef || !out->intercept) {
        mieb_lbfgs_free(&s);
        mieb_logreg_loss_free(&p);
        mieb_logreg_free(out);
        return mieb_fail(MIEB_ERR_OOM, "logistic regression: out of memory for %lld x %lld parameters",
                         (long long)KK, (long long)(D + 1));
    }
    double f;
    do { /* a stop signal ends the fit between two evaluations (core/stop.h) */
        if ((st = mieb_stop_check()) != MIEB_OK) {
            mieb_lbfgs_free(&s);
            mieb_logreg_loss_free(&p);
            mieb_logreg_free(out);
            return st;
        }
        f = mieb_logreg_loss_grad(&p, s.x, s.g, par_threads(par));
    } while (mieb_lbfgs_tell(&s, f));
    mieb_logreg_store(&s, K, D, out);
    mieb_logreg_loss_free(&p);
    mieb_lbfgs_free(&s);
    return MIEB_OK;
}

void mieb_logreg_store(const struct mieb_lbfgs *s, int64_t K, int64_t D, struct mieb_logreg *out)
{
    int64_t KK = K == 2 ? 1 : K;
    for (int64_t k = 0; k < KK; k++) {
        for (int64_t j = 0; j < D; j++)
            out->coef[k * D + j] = (float)s->x[j * KK + k];
        out->intercept[k] = (float)s->x[D * KK + k];
    }
    out->n_classes = K, out->dim = D, out->n_iter = s->n_iter, out->converged = s->converged;
}

/* Rows per sgemm in predict: the CPU backend's blocks (a multiple of MIEB_LOGREG_ROW_ALIGN). */
#define PRED_ROWS MIEB_CPU_LR_PRED_ROWS
_Static_assert(PRED_ROWS % MIEB_LOGREG_ROW_ALIGN == 0, "predict's row blocks keep the threads' alignment");

struct pred_arg {
    const struct mieb_logreg *m;
    const float *X;
    int64_t n;
    float *scratch; /* [nt][PRED_ROWS * K] */
    int64_t *out;
};

/* Row blocks of predict: the CPU backend's kernel (cpu_logreg.h), numpy's sgemm and first maximum. */
static void pred_fn(void *arg, int t, int nt)
{
    struct pred_arg *a = arg;
    int64_t lo, hi, K = a->m->n_classes, D = a->m->dim;
    float *s = a->scratch + (int64_t)t * PRED_ROWS * K;
    mieb_logreg_part(a->n, t, nt, &lo, &hi);
    for (int64_t r0 = lo; r0 < hi; r0 += PRED_ROWS) {
        int64_t rows = hi - r0 < PRED_ROWS ? hi - r0 : PRED_ROWS;
        mieb_cpu_lr_predict_block(a->m->coef, a->m->intercept, K, D, a->X + r0 * D, rows, s, a->out + r0);
    }
}

mieb_status mieb_logreg_predict(const struct mieb_logreg *m, const float *X, int64_t n, int64_t *out)
{
    return mieb_logreg_predict_par(m, X, n, NULL, out);
}

mieb_status mieb_logreg_predict_par(const struct mieb_logreg *m, const float *X, int64_t n,
                                    const struct mieb_logreg_par *par, int64_t *out)
{
    int64_t K = m->n_classes, D = m->dim;
    if (n <= 0)
        return MIEB_OK;
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1);
    if (K == 2) {
        /* decision = X @ coef.T + intercept, coef one row: numpy's matmul makes it an sgemv */
        float *s = malloc((size_t)n * sizeof *s);
        if (!s)
            return mieb_fail(MIEB_ERR_OOM, "logistic regression predict: %lld scores", (long long)n);
        mieb_cpu_lr_predict_binary(m->coef, m->intercept[0], X, n, D, s, out);
        free(s);
        return MIEB_OK;
    }
    int nt = mieb_logreg_threads_for(n, D, K, par_threads(par));
    float *scratch = malloc((size_t)nt * PRED_ROWS * (size_t)K * sizeof *scratch);
    if (!scratch)
        return mieb_fail(MIEB_ERR_OOM, "logistic regression predict: %d x %d x %lld scores", nt, PRED_ROWS,
                         (long long)K);
    struct pred_arg a = {m, X, n, scratch, out};
    mieb_par_run(nt, pred_fn, &a);
    free(scratch);
    return MIEB_OK;
}

void mieb_logreg_free(struct mieb_logreg *m)
{
    free(m->coef);
    free(m->intercept);
    m->coef = m->intercept = NULL;
}
