/*
 * logreg_batch.c - logistic-regression fits in lockstep (logreg_batch.h).
 *
 * A round: every problem whose optimiser still wants an evaluation packs float32(x) (what
 * sklearn's loss sees), the evaluator computes all their data terms at once, and each
 * problem finishes its loss and gradient (L2 term, numpy's sums: mieb_logreg_loss_finish,
 * the same function the single fit uses) and advances its L-BFGS state. Problems that
 * converge early drop out of later rounds. The host work of a round (packing, finishing,
 * the two-loop recursion over P = (D+1)*K values) runs one problem per thread: at the
 * ImageNet shape a problem's L-BFGS memory alone is 20 vectors of 769,000 doubles.
 */
#include "logreg_batch.h"

#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "../core/stop.h"
#include "../dispatch/dispatch.h"
#include "lbfgs.h"
#include "logreg_loss.h"

struct round {
    struct mieb_lbfgs *s;
    const int64_t *act; /* problems of this round */
    int64_t n_act, n, D, KK, P;
    float *wt, *lossv, *grad; /* [n_act, P], [n_act, n], [n_act, P] */
};

static void pack_fn(void *arg, int t, int nt)
{
    struct round *r = arg;
    for (int64_t a = t; a < r->n_act; a += nt) {
        const double *x = r->s[r->act[a]].x;
        float *w = r->wt + a * r->P;
        for (int64_t i = 0; i < r->P; i++)
            w[i] = (float)x[i];
    }
}

static void tell_fn(void *arg, int t, int nt)
{
    struct round *r = arg;
    for (int64_t a = t; a < r->n_act; a += nt) {
        struct mieb_lbfgs *s = &r->s[r->act[a]];
        double f = mieb_logreg_loss_finish(r->lossv + a * r->n, r->n, r->wt + a * r->P, r->grad + a * r->P, r->D,
                                           r->KK, s->g);
        mieb_lbfgs_tell(s, f);
    }
}

static void free_all(struct mieb_logreg *out, int64_t n)
{
    for (int64_t p = 0; p < n; p++)
        mieb_logreg_free(&out[p]);
    memset(out, 0, (size_t)n * sizeof *out);
}

mieb_status mieb_logreg_fit_batch(const struct mieb_lr_evaluator *ev, int64_t n_problems, int64_t n, int64_t D,
                                  int64_t K, int max_iter, int n_threads, struct mieb_logreg *out)
{
    memset(out, 0, (size_t)n_problems * sizeof *out);
    if (n_problems <= 0)
        return MIEB_OK;
    if (K < 2 || n < 1 || D < 1)
        return mieb_fail(MIEB_ERR_INTERNAL, "logistic regression batch: n %lld, D %lld, K %lld", (long long)n,
                         (long long)D, (long long)K);
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1); /* the sdot of the L2 term as numpy's (logreg_lbfgs.h) */
    int64_t KK = K == 2 ? 1 : K, P = KK * (D + 1);
    struct mieb_lbfgs *s = calloc((size_t)n_problems, sizeof *s);
    int64_t *act = malloc((size_t)n_problems * sizeof *act);
    float *wt = malloc((size_t)(n_problems * P) * sizeof *wt), *lossv = malloc((size_t)(n_problems * n) * sizeof *lossv);
    float *grad = malloc((size_t)(n_problems * P) * sizeof *grad);
    mieb_status st = (s && act && wt && lossv && grad) ? MIEB_OK : MIEB_ERR_OOM;
    for (int64_t p = 0; st == MIEB_OK && p < n_problems; p++) {
        out[p].coef = malloc((size_t)(KK * D) * sizeof(float));
        out[p].intercept = malloc((size_t)KK * sizeof(float));
        st = out[p].coef && out[p].intercept ? mieb_lbfgs_init(&s[p], P, max_iter) : MIEB_ERR_OOM;
    }
    if (st != MIEB_OK) {
        st = mieb_fail(MIEB_ERR_OOM, "logistic regression batch: out of memory for %lld problems of %lld x %lld "
                       "parameters", (long long)n_problems, (long long)KK, (long long)(D + 1));
        goto done;
    }
    for (;;) {
        int64_t n_act = 0;
        for (int64_t p = 0; p < n_problems; p++)
            if (!s[p].done)
                act[n_act++] = p;
        if (n_act == 0)
            break;
        if ((st = mieb_stop_check()) != MIEB_OK) /* a stop signal: between two rounds (core/stop.h) */
            goto done;
        struct round r = {s, act, n_act, n, D, KK, P, wt, lossv, grad};
        int nt = n_threads < 1 ? 1 : n_threads;
        if (nt > n_act)
            nt = (int)n_act;
        mieb_par_run(nt, pack_fn, &r);
        if ((st = ev->eval(ev->ctx, n_act, act, wt, lossv, grad)) != MIEB_OK)
            goto done;
        mieb_par_run(nt, tell_fn, &r);
    }
    for (int64_t p = 0; p < n_problems; p++)
        mieb_logreg_store(&s[p], K, D, &out[p]);
done:
    if (s)
        for (int64_t p = 0; p < n_problems; p++)
            mieb_lbfgs_free(&s[p]);
    free(s), free(act), free(wt), free(lossv), free(grad);
    if (st != MIEB_OK)
        free_all(out, n_problems);
    return st;
}

/* ---- through a backend's batch slots ---- */

struct backend_eval {
    struct mieb_backend *be;
    struct mieb_lr_set *set;
};

static mieb_status backend_eval_fn(void *ctx, int64_t n_active, const int64_t *which, const float *wt, float *lossv,
                                   float *grad)
{
    struct backend_eval *b = ctx;
    return mieb_backend_lr_eval(b->be, b->set, n_active, which, wt, lossv, grad);
}

size_t mieb_logreg_host_bytes(int64_t n, int64_t D, int64_t K)
{
    size_t P = (size_t)((K == 2 ? 1 : K) * (D + 1));
    return P * (5 + 2 * MIEB_LBFGS_M) * sizeof(double) /* lbfgs.c's vectors */
           + 2 * P * sizeof(float) + (size_t)n * sizeof(float) /* wt, grad, lossv of a round */
           + (size_t)(K == 2 ? 1 : K) * (size_t)(D + 1) * sizeof(float); /* the fitted model */
}

mieb_status mieb_logreg_fit_backend(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems,
                                    int64_t n, int64_t D, int64_t K, int max_iter, int n_threads, int64_t max_batch,
                                    struct mieb_logreg *out)
{
    memset(out, 0, (size_t)n_problems * sizeof *out);
    int64_t batch = max_batch > 0 && max_batch < n_problems ? max_batch : n_problems, p0 = 0;
    mieb_status st = MIEB_OK;
    while (p0 < n_problems) {
        int64_t m = n_problems - p0 < batch ? n_problems - p0 : batch;
        struct mieb_lr_set *set = NULL;
        st = mieb_backend_lr_open(be, X + p0 * n * D, y + p0 * n, m, n, D, K, &set);
        if (st == MIEB_ERR_OOM && m > 1) {
            /* recoverable: fewer problems per batch */
            MIEB_LOGI("logistic regression: %lld problems of %lld x %lld do not fit the %s backend at once; trying %lld",
                      (long long)m, (long long)n, (long long)D, be->iface.name, (long long)((m + 1) / 2));
            mieb_clear_error();
            batch = (m + 1) / 2;
            continue;
        }
        if (st != MIEB_OK)
            break;
        struct backend_eval b = {be, set};
        struct mieb_lr_evaluator ev = {&b, backend_eval_fn};
        st = mieb_logreg_fit_batch(&ev, m, n, D, K, max_iter, n_threads, out + p0);
        mieb_backend_lr_close(be, set);
        if (st != MIEB_OK)
            break;
        p0 += m;
    }
    if (st != MIEB_OK)
        free_all(out, p0);
    return st;
}

mieb_status mieb_logreg_predict_backend(struct mieb_backend *be, const struct mieb_logreg *models,
                                        int64_t n_problems, const float *X, int64_t n, int64_t *out)
{
    if (n_problems <= 0 || n <= 0)
        return MIEB_OK;
    int64_t K = models[0].n_classes, D = models[0].dim, KK = K == 2 ? 1 : K;
    for (int64_t p = 1; p < n_problems; p++)
        if (models[p].n_classes != K || models[p].dim != D)
            return mieb_fail(MIEB_ERR_INTERNAL, "logistic regression predict: model %lld is %lld x %lld, model 0 "
                             "%lld x %lld", (long long)p, (long long)models[p].n_classes, (long long)models[p].dim,
                             (long long)K, (long long)D);
    float *coef = malloc((size_t)(n_problems * KK * D) * sizeof *coef);
    float *icp = malloc((size_t)(n_problems * KK) * sizeof *icp);
    if (!coef || !icp) {
        free(coef), free(icp);
        return mieb_fail(MIEB_ERR_OOM, "logistic regression predict: %lld models", (long long)n_problems);
    }
    for (int64_t p = 0; p < n_problems; p++) {
        memcpy(coef + p * KK * D, models[p].coef, (size_t)(KK * D) * sizeof *coef);
        memcpy(icp + p * KK, models[p].intercept, (size_t)KK * sizeof *icp);
    }
    mieb_status st = mieb_dispatch_lr_predict(be, coef, icp, n_problems, KK, D, X, n, out);
    free(coef), free(icp);
    return st;
}
