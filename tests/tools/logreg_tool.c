/*
 * logreg_tool.c - test driver for host/metrics/logreg_lbfgs.c.
 * argv[1]: a raw file: int64 n, D, K, max_iter, n_test; float32 X[n*D]; int64 y[n] (class
 * indices); float32 Xt[n_test*D]. stdout: "n_iter converged", then the n_test predicted
 * class indices, then the K' x (D+1) coefficients (intercept last), one per line (%.9g).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/status.h"
#include "metrics/logreg_lbfgs.h"

int main(int argc, char **argv)
{
    if (argc != 2)
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
    if (mieb_logreg_fit(X, y, n, D, K, (int)h[3], &m) != MIEB_OK) {
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
