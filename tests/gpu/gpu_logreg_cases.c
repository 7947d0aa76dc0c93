/**
 * gpu_logreg_cases.c - the CUDA backend's logistic-regression slots (the linear probe,
 * cuda/cuda_logreg*.c) against the CPU reference on the same seeded inputs:
 *
 *  1. lr_eval vs mieb_logreg_loss_data (the CPU data term): per-sample losses and the
 *     gradient's data term for binary (K = 2, one weight vector), K = 3, K = 37 and a wide
 *     K = 1000 problem, at w = 0, at random w and at large w (logits in every range of the
 *     binomial loss, saturated softmax), all problems and a permuted subset of them. Only
 *     the GEMMs' summation order differs, so each value must be within
 *     LR_RTOL * (|cpu| + s) of the CPU's, s being the sum of the magnitudes that went into
 *     it (the absolute-value GEMM): a rounding bound, while a wrong index, a lost intercept
 *     or a wrong class is off by the order of s itself. A set must also survive other
 *     operations between rounds (they reuse the scratch pool): bit-identical rounds.
 *  2. lr_predict vs mieb_logreg_predict: identical classes, except on rows whose top two
 *     decision values (recomputed in double) are within 1e-4 of the row's magnitude; exact
 *     inputs (quarter steps: every sum exact in fp32, ties everywhere) must be identical,
 *     first-maximum rule included; NaN rows; chunked under a small budget. Through
 *     mieb_dispatch_lr_predict: the CPU backend's classes (mieb_logreg_predict's bits) where
 *     supports() refuses a tiny budget, and where the allocator refuses although the budget
 *     allows (the run's MIEB_ERR_TOO_LARGE).
 *  3. Whole fits: mieb_logreg_fit_backend + mieb_logreg_predict_backend vs mieb_logreg_fit
 *     + mieb_logreg_predict per problem, 5 problems per batch, binary and multiclass,
 *     max_iter 100 and 5, and ill-conditioned (correlated, badly scaled) features: held-out
 *     accuracy within 0.001 (2000 test rows); again under a memory limit that does not
 *     hold the 5 problems at once (the batch is split).
 *  4. Misuse: classes out of range, a problem index out of range, budgets and failed
 *     allocations give their statuses, and the backend works afterwards.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_ctx.h"
#include "dispatch/dispatch.h"
#include "gpu_logreg_cases.h"
#include "gpu_test_util.h"
#include "emulation/logreg_batch.h"
#include "emulation/logreg_lbfgs.h"
#include "emulation/logreg_loss.h"

#define LR_RTOL 1e-4      /* of |cpu| + the magnitudes summed: far above fp32 rounding */
#define LR_ATOL 1e-12     /* only for values that are exactly 0 on both sides */
#define LR_MARGIN 1e-4    /* predictions may differ where the top two are this close (relative) */
#define LR_ACC_TOL 0.001  /* held-out accuracy, fit on GPU vs CPU */

static float unif(float lo, float hi) { return lo + (hi - lo) * (float)(gt_rand() % 1000001) / 1000000.0f; }

/* ---- 1. lr_eval against the CPU data term ---- */

struct lr_err {
    double worst;   /* largest |gpu - cpu| / tolerance */
    double max_abs; /* largest |gpu - cpu| */
    int64_t bad;
    char first[160];
};

static void lr_cmp(struct lr_err *e, const char *what, int64_t i, int64_t k, double g, double c, double s)
{
    double err = fabs(g - c), tol = LR_ATOL + LR_RTOL * (fabs(c) + s);
    int nan_bad = isnan(g) != isnan(c);
    if (!isnan(err)) {
        e->worst = err / tol > e->worst ? err / tol : e->worst;
        e->max_abs = err > e->max_abs ? err : e->max_abs;
    }
    if (nan_bad || err > tol) {
        if (e->bad++ == 0)
            snprintf(e->first, sizeof e->first, "%s[%lld, %lld]: cuda %.9g, cpu %.9g (tolerance %.3g)", what,
                     (long long)i, (long long)k, g, c, tol);
    }
}

/* Compare one problem's lossv [n] and grad [D+1, KK] with the CPU data term at wt. */
static void lr_check_problem(struct lr_err *e, const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K,
                             const float *wt, const float *lossv, const float *grad)
{
    struct mieb_logreg_loss p;
    if (mieb_logreg_loss_init(&p, X, y, n, D, K) != MIEB_OK) {
        e->bad++;
        snprintf(e->first, sizeof e->first, "CPU data term: %s", mieb_last_error());
        return;
    }
    const int64_t KK = p.KK;
    memcpy(p.wt, wt, (size_t)((D + 1) * KK) * sizeof(float));
    mieb_logreg_loss_data(&p, 1);
    /* a_i: the magnitude of row i's logits as summed (the absolute-value GEMM) */
    double *a = malloc((size_t)n * sizeof *a);
    double *gs = calloc((size_t)((D + 1) * KK), sizeof *gs);
    if (!a || !gs) {
        e->bad++;
        snprintf(e->first, sizeof e->first, "out of memory");
        free(a), free(gs), mieb_logreg_loss_free(&p);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        a[i] = 0.0;
        for (int64_t k = 0; k < KK; k++) {
            double s = fabs((double)wt[D * KK + k]);
            for (int64_t j = 0; j < D; j++)
                s += fabs((double)X[i * D + j] * wt[j * KK + k]);
            a[i] = s > a[i] ? s : a[i];
        }
        lr_cmp(e, "lossv", i, 0, lossv[i], p.lossv[i], a[i]);
    }
    /* the gradient sums x_ij * gp_ik over i, gp carrying row i's logit error over n */
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < KK; k++) {
            double t = fabs((double)p.raw[i * KK + k]) + a[i] / (double)n;
            for (int64_t j = 0; j < D; j++)
                gs[j * KK + k] += fabs((double)X[i * D + j]) * t;
            gs[D * KK + k] += t;
        }
    for (int64_t j = 0; j <= D; j++)
        for (int64_t k = 0; k < KK; k++)
            lr_cmp(e, "grad", j, k, grad[j * KK + k], p.graw[j * KK + k], gs[j * KK + k]);
    free(a), free(gs);
    mieb_logreg_loss_free(&p);
}

/* w kind 0: zeros; 1: logits of order 1; 2: large logits (every binomial range, saturated softmax) */
static void lr_weights(float *wt, int64_t D, int64_t KK, int kind)
{
    float s = kind == 2 ? 40.0f / sqrtf((float)D) : 3.0f / sqrtf((float)D);
    for (int64_t i = 0; i < (D + 1) * KK; i++)
        wt[i] = kind == 0 ? 0.0f : unif(-s, s);
}

/* One set of np problems: every w kind on all problems, then a permuted subset. */
static int lr_eval_case(struct mieb_backend *gpu, const char *name, int64_t np, int64_t n, int64_t D, int64_t K)
{
    const int64_t KK = K == 2 ? 1 : K, P = (D + 1) * KK;
    float *X = malloc((size_t)(np * n * D) * sizeof *X);
    int64_t *y = malloc((size_t)(np * n) * sizeof *y);
    float *wt = malloc((size_t)(np * P) * sizeof *wt), *lossv = malloc((size_t)(np * n) * sizeof *lossv);
    float *grad = malloc((size_t)(np * P) * sizeof *grad);
    int64_t *which = malloc((size_t)np * sizeof *which);
    struct mieb_lr_set *set = NULL;
    int ok = X && y && wt && lossv && grad && which;
    if (ok) {
        for (int64_t i = 0; i < np * n * D; i++)
            X[i] = unif(-1.0f, 1.0f);
        for (int64_t i = 0; i < np * n; i++)
            y[i] = (int64_t)(gt_rand() % (uint32_t)K);
        mieb_status st = mieb_backend_lr_open(gpu, X, y, np, n, D, K, &set);
        if (st != MIEB_OK) {
            fprintf(stderr, "  %s: lr_open: %s: %s\n", name, mieb_status_str(st), mieb_last_error());
            ok = 0;
        }
    }
    for (int kind = 0; ok && kind < 3; kind++)
        for (int subset = 0; ok && subset < 2; subset++) {
            /* subset: every other problem backwards from the last: compact slots a != which[a] */
            int64_t na = 0;
            for (int64_t p = np - 1; p >= 0; p--)
                if (!subset || (np - 1 - p) % 2 == 0)
                    which[na++] = subset ? p : np - 1 - p;
            lr_weights(wt, D, KK * na, kind); /* na problems' [D+1, KK] back to back: (D+1) x (KK*na) values */
            mieb_status st = mieb_backend_lr_eval(gpu, set, na, which, wt, lossv, grad);
            if (st != MIEB_OK) {
                fprintf(stderr, "  %s: lr_eval: %s: %s\n", name, mieb_status_str(st), mieb_last_error());
                ok = 0;
                break;
            }
            struct lr_err e = {0};
            for (int64_t a = 0; a < na; a++)
                lr_check_problem(&e, X + which[a] * n * D, y + which[a] * n, n, D, K, wt + a * P, lossv + a * n,
                                 grad + a * P);
            printf("  lr_eval %-26s w %s%s: max error %.3g (%.3g of the tolerance)%s\n", name,
                   kind == 0 ? "= 0  " : kind == 1 ? "~ 1  " : "large", subset ? ", subset" : "        ", e.max_abs,
                   e.worst, e.bad ? " MISMATCH" : "");
            if (e.bad) {
                fprintf(stderr, "  %s: %lld values off, first %s\n", name, (long long)e.bad, e.first);
                ok = 0;
            }
        }
    mieb_backend_lr_close(gpu, set);
    free(X), free(y), free(wt), free(lossv), free(grad), free(which);
    return ok;
}

/* A set stays valid while other operations (here kmeans_assign) reuse the scratch pool. */
static int lr_survives_case(struct mieb_backend *gpu)
{
    const int64_t np = 2, n = 300, D = 40, K = 5, P = (D + 1) * K, kn = 20000, kk = 50;
    float *X = malloc((size_t)(np * n * D) * sizeof *X), *wt = malloc((size_t)(np * P) * sizeof *wt);
    float *l1 = malloc((size_t)(np * n) * sizeof *l1), *l2 = malloc((size_t)(np * n) * sizeof *l2);
    float *g1 = malloc((size_t)(np * P) * sizeof *g1), *g2 = malloc((size_t)(np * P) * sizeof *g2);
    float *kx = malloc((size_t)(kn * D) * sizeof *kx), *kc = malloc((size_t)(kk * D) * sizeof *kc);
    float *kcs = calloc((size_t)kk, sizeof *kcs);
    int32_t *lab = malloc((size_t)kn * sizeof *lab);
    int64_t *y = malloc((size_t)(np * n) * sizeof *y), which[2] = {0, 1};
    struct mieb_lr_set *set = NULL;
    int ok = X && wt && l1 && l2 && g1 && g2 && kx && kc && kcs && lab && y;
    if (ok) {
        for (int64_t i = 0; i < np * n * D; i++)
            X[i] = unif(-1.0f, 1.0f);
        for (int64_t i = 0; i < np * n; i++)
            y[i] = (int64_t)(gt_rand() % K);
        lr_weights(wt, D, K * np, 1);
        gt_fill_exact(kx, kn * D);
        gt_fill_exact(kc, kk * D);
        ok = mieb_backend_lr_open(gpu, X, y, np, n, D, K, &set) == MIEB_OK &&
             mieb_backend_lr_eval(gpu, set, np, which, wt, l1, g1) == MIEB_OK &&
             mieb_dispatch_kmeans_assign(gpu, kx, kn, kc, kcs, kk, D, lab) == MIEB_OK &&
             mieb_backend_lr_eval(gpu, set, np, which, wt, l2, g2) == MIEB_OK;
        if (!ok)
            fprintf(stderr, "  set across operations: %s\n", mieb_last_error());
        ok = ok && !memcmp(l1, l2, (size_t)(np * n) * sizeof *l1) && !memcmp(g1, g2, (size_t)(np * P) * sizeof *g1);
    }
    mieb_backend_lr_close(gpu, set);
    free(X), free(wt), free(l1), free(l2), free(g1), free(g2), free(kx), free(kc), free(kcs), free(lab), free(y);
    return ok;
}

/* ---- 2. lr_predict against mieb_logreg_predict ---- */

/* Classes may differ only where the top two decision values are within LR_MARGIN of the row's magnitude. */
static int lr_near_tie(const float *x, const float *coef, const float *icpt, int64_t KK, int64_t D)
{
    double best = -INFINITY, second = -INFINITY, scale = 0.0;
    for (int64_t k = 0; k < KK; k++) {
        double v = icpt[k], s = fabs((double)icpt[k]);
        for (int64_t j = 0; j < D; j++) {
            v += (double)x[j] * coef[k * D + j];
            s += fabs((double)x[j] * coef[k * D + j]);
        }
        scale = s > scale ? s : scale;
        if (KK == 1)
            return fabs(v) < LR_MARGIN * scale; /* binary: the decision's distance from 0 */
        if (v > best)
            second = best, best = v;
        else if (v > second)
            second = v;
    }
    return best - second < LR_MARGIN * scale;
}

/* kind 0: random; 1: quarter steps (exact in fp32, ties: must be identical). Row 5 holds a NaN. */
static int lr_predict_case(struct mieb_backend *gpu, const char *name, int64_t np, int64_t n, int64_t D, int64_t K,
                           int kind, int exact)
{
    const int64_t KK = K == 2 ? 1 : K;
    struct mieb_logreg *m = calloc((size_t)np, sizeof *m);
    float *X = malloc((size_t)(n * D) * sizeof *X);
    int64_t *g = malloc((size_t)(np * n) * sizeof *g), *c = malloc((size_t)(np * n) * sizeof *c);
    int ok = m && X && g && c;
    for (int64_t p = 0; ok && p < np; p++) {
        m[p] = (struct mieb_logreg){.n_classes = K, .dim = D};
        m[p].coef = malloc((size_t)(KK * D) * sizeof(float));
        m[p].intercept = malloc((size_t)KK * sizeof(float));
        ok = m[p].coef && m[p].intercept;
        for (int64_t i = 0; ok && i < KK * D; i++)
            m[p].coef[i] = kind ? (float)((int)(gt_rand() % 5) - 2) * 0.25f : unif(-1.0f, 1.0f);
        for (int64_t k = 0; ok && k < KK; k++)
            m[p].intercept[k] = kind ? (float)((int)(gt_rand() % 3) - 1) * 0.25f : unif(-0.5f, 0.5f);
    }
    if (ok) {
        for (int64_t i = 0; i < n * D; i++)
            X[i] = kind ? (float)((int)(gt_rand() % 5) - 2) * 0.25f : unif(-1.0f, 1.0f);
        if (n > 5)
            X[5 * D + D / 2] = NAN; /* every decision value NaN: class 0 on both */
        mieb_status st = mieb_logreg_predict_backend(gpu, m, np, X, n, g);
        if (st != MIEB_OK) {
            fprintf(stderr, "  %s: %s: %s\n", name, mieb_status_str(st), mieb_last_error());
            ok = 0;
        }
        for (int64_t p = 0; ok && p < np; p++)
            ok = mieb_logreg_predict(&m[p], X, n, c + p * n) == MIEB_OK;
    }
    int64_t ties = 0, bad = 0;
    for (int64_t p = 0; ok && p < np; p++)
        for (int64_t i = 0; i < n; i++) {
            if (g[p * n + i] == c[p * n + i])
                continue;
            if (!exact && lr_near_tie(X + i * D, m[p].coef, m[p].intercept, KK, D)) {
                ties++;
                continue;
            }
            if (bad++ < 3)
                fprintf(stderr, "  %s: model %lld row %lld: cuda class %lld, cpu %lld\n", name, (long long)p,
                        (long long)i, (long long)g[p * n + i], (long long)c[p * n + i]);
        }
    if (ok)
        printf("  lr_predict %-34s %lld classes differ at near-ties, %lld elsewhere\n", name, (long long)ties,
               (long long)bad);
    for (int64_t p = 0; m && p < np; p++)
        mieb_logreg_free(&m[p]);
    free(m), free(X), free(g), free(c);
    return ok && bad == 0;
}

/* ---- 3. whole fits ---- */

/*
 * Rows of K Gaussian-ish classes around shared centres (noisy enough not to separate).
 * corr: feature j scaled by 10^(-2.5 j / D) and mixed with feature j-1, an ill-conditioned
 * problem that takes the optimiser more iterations (as real embeddings do).
 */
static void lr_draw(const float *mu, int64_t K, int64_t D, int corr, float *X, int64_t *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        y[i] = i < K ? i : (int64_t)(gt_rand() % (uint32_t)K);
        for (int64_t j = 0; j < D; j++) {
            float v = mu[y[i] * D + j] + unif(-1.0f, 1.0f) + unif(-1.0f, 1.0f);
            X[i * D + j] = !corr ? v
                           : v * powf(10.0f, -2.5f * (float)j / (float)D) + (j ? 0.5f * X[i * D + j - 1] : 0.0f);
        }
    }
}

static int lr_fit_case(struct mieb_backend *gpu, const char *name, int64_t n, int64_t D, int64_t K, int corr,
                       int max_iter)
{
    const int64_t np = 5, nt = 2000;
    float *mu = malloc((size_t)(K * D) * sizeof *mu), *X = malloc((size_t)(np * n * D) * sizeof *X);
    float *Xt = malloc((size_t)(nt * D) * sizeof *Xt);
    int64_t *y = malloc((size_t)(np * n) * sizeof *y), *yt = malloc((size_t)nt * sizeof *yt);
    int64_t *pg = malloc((size_t)(np * nt) * sizeof *pg), *pc = malloc((size_t)nt * sizeof *pc);
    struct mieb_logreg *mg = calloc((size_t)np, sizeof *mg), mc = {0};
    int ok = mu && X && Xt && y && yt && pg && pc && mg;
    if (ok) {
        for (int64_t i = 0; i < K * D; i++)
            mu[i] = unif(corr ? -0.5f : -0.35f, corr ? 0.5f : 0.35f);
        for (int64_t p = 0; p < np; p++)
            lr_draw(mu, K, D, corr, X + p * n * D, y + p * n, n);
        lr_draw(mu, K, D, corr, Xt, yt, nt);
        mieb_status st = mieb_logreg_fit_backend(gpu, X, y, np, n, D, K, max_iter, 2, 0, mg);
        if (st == MIEB_OK)
            st = mieb_logreg_predict_backend(gpu, mg, np, Xt, nt, pg);
        if (st != MIEB_OK) {
            fprintf(stderr, "  %s: %s: %s\n", name, mieb_status_str(st), mieb_last_error());
            ok = 0;
        }
    }
    for (int64_t p = 0; ok && p < np; p++) {
        if (mieb_logreg_fit(X + p * n * D, y + p * n, n, D, K, max_iter, &mc) != MIEB_OK ||
            mieb_logreg_predict(&mc, Xt, nt, pc) != MIEB_OK) {
            fprintf(stderr, "  %s: CPU fit: %s\n", name, mieb_last_error());
            ok = 0;
            break;
        }
        int64_t hit_g = 0, hit_c = 0, diff = 0;
        for (int64_t i = 0; i < nt; i++) {
            hit_g += pg[p * nt + i] == yt[i];
            hit_c += pc[i] == yt[i];
            diff += pg[p * nt + i] != pc[i];
        }
        double acc_g = (double)hit_g / (double)nt, acc_c = (double)hit_c / (double)nt;
        int good = fabs(acc_g - acc_c) <= LR_ACC_TOL + 1e-12;
        printf("  fit %-30s problem %lld: accuracy cuda %.4f cpu %.4f, n_iter cuda %d cpu %d, %lld of %lld "
               "predictions differ%s\n",
               name, (long long)p, acc_g, acc_c, mg[p].n_iter, mc.n_iter, (long long)diff, (long long)nt,
               good ? "" : " MISMATCH");
        ok = ok && good;
        mieb_logreg_free(&mc);
    }
    for (int64_t p = 0; mg && p < np; p++)
        mieb_logreg_free(&mg[p]);
    free(mu), free(X), free(Xt), free(y), free(yt), free(pg), free(pc), free(mg);
    return ok;
}

/* ---- 4. misuse, budgets, failed allocations ---- */

static void lr_misuse(struct mieb_backend *gpu)
{
    const int64_t n = 50, D = 8, K = 4;
    float X[50 * 8], wt[(8 + 1) * 4] = {0}, lossv[50], grad[(8 + 1) * 4];
    int64_t y[50], bad_which = 1;
    for (int64_t i = 0; i < n * D; i++)
        X[i] = unif(-1.0f, 1.0f);
    for (int64_t i = 0; i < n; i++)
        y[i] = i % K;
    struct mieb_lr_set *set = NULL;
    y[17] = K;
    gt_result("lr_open: class out of range is MIEB_ERR_INVALID_ARG",
              mieb_backend_lr_open(gpu, X, y, 1, n, D, K, &set) == MIEB_ERR_INVALID_ARG && !set);
    y[17] = 17 % K;
    mieb_status st = mieb_backend_lr_open(gpu, X, y, 1, n, D, K, &set);
    gt_result("lr_open: 1 problem", st == MIEB_OK);
    if (st == MIEB_OK) {
        gt_result("lr_eval: problem out of range is MIEB_ERR_INVALID_ARG",
                  mieb_backend_lr_eval(gpu, set, 1, &bad_which, wt, lossv, grad) == MIEB_ERR_INVALID_ARG);
        int64_t w0 = 0;
        st = mieb_backend_lr_eval(gpu, set, 1, &w0, wt, lossv, grad);
        /* w = 0: every loss is log(K), every class 1/K */
        int exact = st == MIEB_OK;
        for (int64_t i = 0; exact && i < n; i++)
            exact = fabsf(lossv[i] - logf((float)K)) < 1e-6f;
        gt_result("lr_eval: usable after a refused call; w = 0 gives log(K)", exact);
    }
    mieb_backend_lr_close(gpu, set);
    mieb_backend_lr_close(gpu, NULL);

    /* a budget that holds 1 problem but not 5: MIEB_ERR_OOM (the caller halves the batch) */
    float *Xb = malloc(sizeof(float) * 5 * 400 * 32);
    int64_t *yb = malloc(sizeof(int64_t) * 5 * 400);
    struct mieb_backend *small = gt_cuda_new((size_t)150 << 10, MIEB_PREC_FP32);
    if (Xb && yb && small) {
        for (int64_t i = 0; i < 5 * 400 * 32; i++)
            Xb[i] = unif(-1.0f, 1.0f);
        for (int64_t i = 0; i < 5 * 400; i++)
            yb[i] = i % 6;
        set = NULL;
        gt_result("lr_open: 5 problems over the budget is MIEB_ERR_OOM",
                  mieb_backend_lr_open(small, Xb, yb, 5, 400, 32, 6, &set) == MIEB_ERR_OOM && !set);
        st = mieb_backend_lr_open(small, Xb, yb, 1, 400, 32, 6, &set);
        gt_result("lr_open: 1 problem fits the same budget", st == MIEB_OK);
        mieb_backend_lr_close(small, set);
        /* the allocator says no although the budget says yes: MIEB_ERR_OOM, then fine again */
        struct mieb_cuda_ctx *ctx = small->ctx;
        ctx->fail_alloc_above = (size_t)16 << 10;
        set = NULL;
        gt_result("lr_open: failed allocation is MIEB_ERR_OOM",
                  mieb_backend_lr_open(small, Xb, yb, 1, 400, 32, 6, &set) == MIEB_ERR_OOM && !set);
        ctx->fail_alloc_above = 0;
        st = mieb_backend_lr_open(small, Xb, yb, 1, 400, 32, 6, &set);
        gt_result("lr_open: works again after a failed allocation", st == MIEB_OK && ctx->resident > 0);
        mieb_backend_lr_close(small, set);
        gt_result("lr_close: the budget is whole again", ctx->resident == 0);
    } else {
        gt_result("lr misuse (setup)", 0);
    }
    mieb_backend_free(small);
    free(Xb), free(yb);
}

/*
 * A budget that holds the predict but an allocator that refuses it (a fresh backend: no pool
 * left by an earlier operation): the run itself answers MIEB_ERR_TOO_LARGE, and dispatch
 * gives the CPU backend's classes, exactly.
 */
static void lr_predict_refused(void)
{
    struct mieb_backend *be = gt_cuda_new((size_t)256 << 10, MIEB_PREC_FP32);
    const int64_t np = 2, n = 300, D = 32, KK = 6;
    float *coef = malloc(sizeof(float) * np * KK * D), *icp = malloc(sizeof(float) * np * KK);
    float *X = malloc(sizeof(float) * n * D);
    int64_t *out = malloc(sizeof(int64_t) * np * n);
    if (!be || !coef || !icp || !X || !out) {
        gt_result("lr_predict refused by the allocator (setup)", 0);
    } else {
        for (int64_t i = 0; i < np * KK * D; i++)
            coef[i] = unif(-1.0f, 1.0f);
        for (int64_t i = 0; i < np * KK; i++)
            icp[i] = unif(-0.5f, 0.5f);
        for (int64_t i = 0; i < n * D; i++)
            X[i] = unif(-1.0f, 1.0f);
        struct mieb_cuda_ctx *ctx = be->ctx;
        const struct mieb_op_desc lp = {.op = MIEB_OP_LR_PREDICT, .n = n, .k = KK, .m = np, .dim = D};
        ctx->fail_alloc_above = 1024;
        gt_result("lr_predict: the budget allows it", mieb_backend_supports(be, &lp) == MIEB_OK);
        mieb_status st = be->iface.lr_predict(be, coef, icp, np, KK, D, X, n, out);
        gt_result("lr_predict: a refusing allocator is MIEB_ERR_TOO_LARGE", st == MIEB_ERR_TOO_LARGE);
        mieb_clear_error();
        gt_result("lr_predict refused by the allocator: CPU",
                  lr_predict_case(be, "allocator refuses K=6 (CPU, exact)", np, n, D, KK, 0, 1));
        ctx->fail_alloc_above = 0;
        gt_result("lr_predict: on the device again", lr_predict_case(be, "after a refusal K=6", np, n, D, KK, 0, 0));
    }
    mieb_backend_free(be);
    free(coef), free(icp), free(X), free(out);
}

void test_logreg_ops(struct mieb_backend *gpu)
{
    gt_result("lr: the cuda backend runs batches", mieb_dispatch_lr_batch_available(gpu, 5, 400, 24, 6));
    struct mieb_op_desc lp = {.op = MIEB_OP_LR_PREDICT, .n = 500, .k = 20, .m = 2, .dim = 128};
    gt_result("lr_predict: supports() says yes", mieb_backend_supports(gpu, &lp) == MIEB_OK);
    gt_result("lr_eval binary K=2 D=33", lr_eval_case(gpu, "binary K=2 D=33 n=500", 3, 500, 33, 2));
    gt_result("lr_eval K=3 D=20", lr_eval_case(gpu, "K=3 D=20 n=301", 3, 301, 20, 3));
    gt_result("lr_eval K=37 D=100", lr_eval_case(gpu, "K=37 D=100 n=777", 2, 777, 100, 37));
    gt_result("lr_eval wide K=1000 D=64", lr_eval_case(gpu, "wide K=1000 D=64 n=2000", 1, 2000, 64, 1000));
    gt_result("lr_eval: a set survives other operations", lr_survives_case(gpu));

    gt_result("lr_predict binary", lr_predict_case(gpu, "binary K=2 D=64", 3, 3000, 64, 2, 0, 0));
    gt_result("lr_predict K=3", lr_predict_case(gpu, "K=3 D=32", 2, 2000, 32, 3, 0, 0));
    gt_result("lr_predict K=37", lr_predict_case(gpu, "K=37 D=100", 2, 1500, 100, 37, 0, 0));
    gt_result("lr_predict K=1000", lr_predict_case(gpu, "K=1000 D=64", 2, 1000, 64, 1000, 0, 0));
    gt_result("lr_predict exact K=10 (ties)", lr_predict_case(gpu, "exact K=10 D=16 (ties)", 3, 2000, 16, 10, 1, 1));
    gt_result("lr_predict exact binary (ties at 0)",
              lr_predict_case(gpu, "exact binary D=16 (decisions 0)", 2, 2000, 16, 2, 1, 1));
    struct mieb_backend *small = gt_cuda_new((size_t)256 << 10, MIEB_PREC_FP32);
    struct mieb_backend *tiny = gt_cuda_new((size_t)4 << 10, MIEB_PREC_FP32);
    if (small && tiny) {
        gt_result("lr_predict chunked (256 KiB)", lr_predict_case(small, "chunked K=20 D=128 (256 KiB)", 3, 5000,
                                                                    128, 20, 0, 0));
        gt_result("lr_predict over budget: supports() says MIEB_ERR_TOO_LARGE",
                  mieb_backend_supports(tiny, &lp) == MIEB_ERR_TOO_LARGE);
        mieb_clear_error();
        gt_result("lr_predict over budget: CPU", lr_predict_case(tiny, "over budget K=20 (CPU, exact)", 2, 500, 128,
                                                                 20, 0, 1));
    } else {
        gt_result("lr_predict budgets (setup)", 0);
    }
    mieb_backend_free(tiny);
    lr_predict_refused();

    gt_result("lr fit binary max_iter 100", lr_fit_case(gpu, "binary D=24 n=400 it=100", 400, 24, 2, 0, 100));
    gt_result("lr fit binary max_iter 5", lr_fit_case(gpu, "binary D=24 n=400 it=5", 400, 24, 2, 0, 5));
    gt_result("lr fit K=6 max_iter 100", lr_fit_case(gpu, "K=6 D=40 n=480 it=100", 480, 40, 6, 0, 100));
    gt_result("lr fit K=6 max_iter 5", lr_fit_case(gpu, "K=6 D=40 n=480 it=5", 480, 40, 6, 0, 5));
    gt_result("lr fit binary correlated", lr_fit_case(gpu, "binary D=128 n=200 correlated", 200, 128, 2, 1, 100));
    gt_result("lr fit K=20 correlated", lr_fit_case(gpu, "K=20 D=200 n=400 correlated", 400, 200, 20, 1, 100));
    if (small) {
        /* 256 KiB hold 2 of these problems (about 95 KiB each), not 5: the batch is split */
        float Xs[480 * 40];
        int64_t ys[480];
        struct mieb_lr_set *probe = NULL;
        for (int64_t i = 0; i < 480 * 40; i++)
            Xs[i] = 0.0f;
        for (int64_t i = 0; i < 480; i++)
            ys[i] = i % 6;
        float *X5 = malloc(sizeof Xs * 5);
        int64_t *y5 = malloc(sizeof ys * 5);
        int split = 0;
        if (X5 && y5) {
            for (int p = 0; p < 5; p++)
                memcpy(X5 + p * 480 * 40, Xs, sizeof Xs), memcpy(y5 + p * 480, ys, sizeof ys);
            split = mieb_backend_lr_open(small, X5, y5, 5, 480, 40, 6, &probe) == MIEB_ERR_OOM;
            mieb_backend_lr_close(small, probe);
            mieb_clear_error();
        }
        free(X5), free(y5);
        gt_result("lr fit: 5 problems do not fit 256 KiB at once", split);
        gt_result("lr fit K=6 split batch (256 KiB)",
                  lr_fit_case(small, "K=6 D=40 n=480 split (256 KiB)", 480, 40, 6, 0, 100));
    }
    mieb_backend_free(small);
    lr_misuse(gpu);
}
