/*
 * logreg_tool.c - test driver for host/emulation/logreg_lbfgs.c and logreg_batch.c.
 * argv[1]: a raw file: int64 n, D, K, max_iter, n_test; float32 X[n*D]; int64 y[n] (class
 * indices); float32 Xt[n_test*D]. stdout: "n_iter converged", then the n_test predicted
 * class indices, then the K' x (D+1) coefficients (intercept last), one per line (%.9g).
 *
 * argv[2] == "--batch": also fit, in lockstep through mieb_logreg_fit_batch with an
 * evaluator that computes the data term as the CPU reference does (mieb_logreg_loss_data),
 * the problem and two variants of it (X halved: a different trajectory; labels rotated),
 * and check each against its own mieb_logreg_fit bit for bit (coefficients, intercepts,
 * n_iter, converged); exit 3 naming the first difference. The printed model is then the
 * batch fit of the problem itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "emulation/logreg_batch.h"
#include "emulation/logreg_lbfgs.h"
#include "emulation/logreg_loss.h"

#define N_VARIANTS 3

/* The CPU reference as a batch evaluator: one loss struct per problem. */
struct cpu_eval {
    struct mieb_logreg_loss *ls;
    int64_t P;
};

static mieb_status cpu_eval_fn(void *ctx, int64_t n_active, const int64_t *which, const float *wt, float *lossv,
                               float *grad)
{
    struct cpu_eval *c = ctx;
    for (int64_t a = 0; a < n_active; a++) {
        struct mieb_logreg_loss *p = &c->ls[which[a]];
        memcpy(p->wt, wt + a * c->P, (size_t)c->P * sizeof *p->wt);
        mieb_logreg_loss_data(p, 1);
        memcpy(lossv + a * p->n, p->lossv, (size_t)p->n * sizeof *lossv);
        memcpy(grad + a * c->P, p->graw, (size_t)c->P * sizeof *grad);
    }
    return MIEB_OK;
}

static int same_model(const struct mieb_logreg *a, const struct mieb_logreg *b, int64_t KK, int64_t D, int v)
{
    if (a->n_iter != b->n_iter || a->converged != b->converged) {
        fprintf(stderr, "variant %d: batch %d iterations (converged %d), single %d (%d)\n", v, a->n_iter,
                a->converged, b->n_iter, b->converged);
        return 0;
    }
    if (memcmp(a->coef, b->coef, (size_t)(KK * D) * sizeof(float)) ||
        memcmp(a->intercept, b->intercept, (size_t)KK * sizeof(float))) {
        fprintf(stderr, "variant %d: batch and single coefficients differ\n", v);
        return 0;
    }
    return 1;
}

/* Fit the problem and its variants both ways; 0 when every bit agrees. */
static int batch_check(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                       struct mieb_logreg *first)
{
    int64_t KK = K == 2 ? 1 : K, P = KK * (D + 1);
    float *Xb = malloc((size_t)(N_VARIANTS * n * D) * sizeof *Xb);
    int64_t *yb = malloc((size_t)(N_VARIANTS * n) * sizeof *yb);
    struct mieb_logreg_loss ls[N_VARIANTS];
    struct mieb_logreg fb[N_VARIANTS], fs;
    if (!Xb || !yb)
        return 2;
    for (int64_t i = 0; i < n * D; i++) {
        Xb[i] = Xb[2 * n * D + i] = X[i];
        Xb[n * D + i] = X[i] * 0.5f;
    }
    for (int64_t i = 0; i < n; i++)
        yb[i] = yb[n + i] = y[i], yb[2 * n + i] = (y[i] + 1) % K;
    for (int v = 0; v < N_VARIANTS; v++)
        if (mieb_logreg_loss_init(&ls[v], Xb + v * n * D, yb + v * n, n, D, K) != MIEB_OK)
            return 2;
    struct cpu_eval ce = {ls, P};
    struct mieb_lr_evaluator ev = {&ce, cpu_eval_fn};
    if (mieb_logreg_fit_batch(&ev, N_VARIANTS, n, D, K, max_iter, 2, fb) != MIEB_OK) {
        fprintf(stderr, "%s\n", mieb_last_error());
        return 2;
    }
    int ok = 1;
    for (int v = 0; v < N_VARIANTS; v++) {
        if (mieb_logreg_fit(Xb + v * n * D, yb + v * n, n, D, K, max_iter, &fs) != MIEB_OK)
            return 2;
        ok = ok && same_model(&fb[v], &fs, KK, D, v);
        fprintf(stderr, "variant %d: %d iterations\n", v, fs.n_iter);
        mieb_logreg_free(&fs);
        mieb_logreg_loss_free(&ls[v]);
    }
    *first = fb[0];
    for (int v = 1; v < N_VARIANTS; v++)
        mieb_logreg_free(&fb[v]);
    free(Xb), free(yb);
    return ok ? 0 : 3;
}

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "--batch")))
        return 2;
    FILE *f = fopen(argv[1], "rb");
    int64_t h[5];
    if (!f || fread(h, sizeof h, 1, f) != 1)
        return 2;
    int64_t n = h[0], D = h[1], K = h[2], nt = h[4];
    float *X = malloc((size_t)(n * D) * 4), *Xt = malloc((size_t)(nt * D + 1) * 4);
    int64_t *y = malloc((size_t)n * 8), *pred = malloc((size_t)(nt + 1) * 8);
    if (fread(X, 4, (size_t)(n * D), f) != (size_t)(n * D) || fread(y, 8, (size_t)n, f) != (size_t)n ||
        fread(Xt, 4, (size_t)(nt * D), f) != (size_t)(nt * D))
        return 2;
    fclose(f);
    struct mieb_logreg m;
    if (argc == 3) {
        int rc = batch_check(X, y, n, D, K, (int)h[3], &m);
        if (rc)
            return rc;
    } else if (mieb_logreg_fit(X, y, n, D, K, (int)h[3], &m) != MIEB_OK) {
        fprintf(stderr, "%s\n", mieb_last_error());
        return 1;
    }
    if (mieb_logreg_predict(&m, Xt, nt, pred) != MIEB_OK) {
        fprintf(stderr, "%s\n", mieb_last_error());
        mieb_logreg_free(&m);
        return 1;
    }
    printf("%d %d\n", m.n_iter, m.converged);
    for (int64_t i = 0; i < nt; i++)
        printf("%lld\n", (long long)pred[i]);
    int64_t KK = K == 2 ? 1 : K;
    for (int64_t k = 0; k < KK; k++) {
        for (int64_t j = 0; j < D; j++)
            printf("%.9g\n", m.coef[k * D + j]);
        printf("%.9g\n", m.intercept[k]);
    }
    mieb_logreg_free(&m);
    free(X), free(Xt), free(y), free(pred);
    return 0;
}
