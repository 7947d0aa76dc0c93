/*
 * kmeans_lloyd.c - the explicit full-batch mode (--kmeans full): the same seeding as
 * MiniBatchKMeans (same RandomState(42) draws, same k-means++ centres), then Lloyd
 * iterations over all rows until no label changes or max_iter passes: assignment through
 * the backend (one GEMM + argmin per pass), centre update as fp64 per-cluster means. An
 * empty cluster keeps its centre. Not mteb's algorithm: results record "kmeans_mode": "full".
 */
#include "kmeans.h"

#include "../core/stop.h"

#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_kmeans.h"
#include "../dispatch/dispatch.h"
#include "np_randomstate.h"

mieb_status mieb_kmeans_full(struct mieb_backend *be, const float *x, int64_t n, int64_t dim,
                             const struct mieb_kmeans_opts *o, int32_t *labels, struct mieb_kmeans_info *info)
{
    int64_t k = o->k;
    if (k < 1 || n < k)
        return mieb_fail(MIEB_ERR_BAD_DATA, "k-means: n_samples=%lld should be >= n_clusters=%lld", (long long)n,
                         (long long)k);
    int64_t bs = o->batch_size < n ? o->batch_size : n;
    int64_t init_size = 3 * bs < k ? 3 * k : 3 * bs;
    init_size = init_size < n ? init_size : n;
    struct mieb_rs rs;
    mieb_rs_seed(&rs, o->seed);
    mieb_status st = MIEB_OK;
    size_t kd = (size_t)k * (size_t)dim;
    int64_t *idx = malloc((size_t)init_size * sizeof *idx), *cnt = malloc((size_t)k * sizeof *cnt);
    float *xs = NULL, *c = malloc(kd * sizeof *c), *csq = malloc((size_t)k * sizeof *csq);
    double *sum = malloc(kd * sizeof *sum);
    int32_t *prev = malloc((size_t)n * sizeof *prev);
    if (!idx || !cnt || !c || !csq || !sum || !prev) {
        st = mieb_fail(MIEB_ERR_OOM, "k-means: out of memory (n=%lld, k=%lld, dim=%lld)", (long long)n, (long long)k,
                       (long long)dim);
        goto out;
    }
    mieb_rs_randint(&rs, n, init_size, idx); /* the validation draw, kept so the seeds match */
    const float *xinit = x;
    if (init_size < n) {
        mieb_rs_randint(&rs, n, init_size, idx);
        if (!(xs = malloc((size_t)init_size * (size_t)dim * sizeof *xs))) {
            st = mieb_fail(MIEB_ERR_OOM, "k-means: out of memory for the init subsample");
            goto out;
        }
        for (int64_t i = 0; i < init_size; i++)
            memcpy(xs + i * dim, x + idx[i] * dim, (size_t)dim * sizeof *xs);
        xinit = xs;
    }
    if ((st = mieb_kmeans_plusplus(xinit, init_size, dim, k, &rs, c)) != MIEB_OK)
        goto out;
    int it = 0;
    for (; it < o->max_iter; it++) {
        if ((st = mieb_stop_check()) != MIEB_OK) /* a stop signal: once per iteration (core/stop.h) */
            goto out;
        mieb_np_row_sqnorms_f32(c, k, dim, csq);
        if ((st = mieb_dispatch_kmeans_assign(be, x, n, c, csq, k, dim, labels)) != MIEB_OK)
            goto out;
        if (it > 0 && !memcmp(prev, labels, (size_t)n * sizeof *labels))
            break;
        memcpy(prev, labels, (size_t)n * sizeof *labels);
        memset(sum, 0, kd * sizeof *sum);
        memset(cnt, 0, (size_t)k * sizeof *cnt);
        for (int64_t i = 0; i < n; i++) {
            double *s = sum + (int64_t)labels[i] * dim;
            const float *r = x + i * dim;
            cnt[labels[i]]++;
            for (int64_t f = 0; f < dim; f++)
                s[f] += r[f];
        }
        for (int64_t j = 0; j < k; j++)
            if (cnt[j])
                for (int64_t f = 0; f < dim; f++)
                    c[j * dim + f] = (float)(sum[j * dim + f] / (double)cnt[j]);
    }
    if (it == o->max_iter) { /* stopped by max_iter: labels_ must follow the last update */
        mieb_np_row_sqnorms_f32(c, k, dim, csq);
        st = mieb_dispatch_kmeans_assign(be, x, n, c, csq, k, dim, labels);
    }
    if (info)
        info->n_steps = it;
out:
    free(idx), free(cnt), free(xs), free(c), free(csq), free(sum), free(prev);
    return st;
}
