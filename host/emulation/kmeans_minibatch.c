/*
 * kmeans_minibatch.c - scikit-learn 1.9.1 MiniBatchKMeans.fit as mteb calls it
 * (PROTOCOLS.md §4 with the §13 errata), dense fp32, unit sample weights, n_init = 1:
 *   1. validation indices randint(0, n, init_size) (drawn, then unused: one init only);
 *   2. init subsample randint(0, n, init_size) when init_size < n;
 *   3. k-means++ on it (kmeans_init.c);
 *   4. per step: choice(n, batch, p=uniform) (random_sample + searchsorted 'right'),
 *      assignment (backend kmeans_assign), fp32 inertia, _minibatch_update_dense,
 *      reassignment of light centres through permutation(batch)[:m];
 *   5. EWA-of-inertia early stopping (max_no_improvement 10; tol 0 disables the other test);
 *   6. labels_ = full assignment to the final centres.
 * fp32 arithmetic follows sklearn's Cython loops statement by statement (volatile
 * temporaries keep the compiler from contracting or reordering them).
 */
#define _GNU_SOURCE /* qsort_r */
#include "kmeans.h"

#include "../core/stop.h"

#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_kmeans.h"
#include "../dispatch/dispatch.h"
#include "np_randomstate.h"
#include "sk_threads.h"

/* sklearn's _inertia_dense: prange(schedule='static') over the batch on `threads` threads,
   each adding its block's fp32 distances in order, the partials then added in thread order
   (libgomp's static split: the first n % T threads take one row more). */
float mieb_kmeans_batch_inertia(const float *xb, int64_t bs, int64_t dim, const float *c, const int32_t *lab,
                                int threads)
{
    int64_t T = threads < 1 ? 1 : threads > bs ? (bs > 0 ? bs : 1) : threads;
    int64_t q = bs / T, r = bs % T, i = 0;
    float total = 0.0f;
    for (int64_t t = 0; t < T; t++) {
        int64_t end = i + q + (t < r);
        float part = 0.0f;
        for (; i < end; i++) {
            volatile float dsq = mieb_sk_sqdist_f32(xb + i * dim, c + (int64_t)lab[i] * dim, dim);
            volatile float w = dsq * 1.0f;
            part = part + w;
        }
        total = total + part;
    }
    return total;
}

struct mieb_kmeans_opts mieb_kmeans_mteb_opts(int64_t k)
{
    return (struct mieb_kmeans_opts){
        .k = k, .batch_size = 500, .seed = 42, .max_iter = 100, .max_no_improvement = 10,
        .reassignment_ratio = 0.01, .sk_threads = mieb_sk_openmp_threads()};
}

/* _minibatch_update_dense for one step (unit weights). */
static void minibatch_update(const float *xb, int64_t bs, int64_t dim, const float *co, float *cn, float *ws,
                             const int32_t *lab, int64_t k, int64_t *idx)
{
    for (int64_t j = 0; j < k; j++) {
        int64_t m = 0;
        volatile float wsum = 0.0f;
        for (int64_t i = 0; i < bs; i++)
            if (lab[i] == j)
                idx[m++] = i, wsum = wsum + 1.0f;
        const float *o = co + j * dim;
        float *c = cn + j * dim;
        if (wsum > 0.0f) {
            for (int64_t f = 0; f < dim; f++) {
                volatile float v = o[f] * ws[j];
                c[f] = v;
            }
            for (int64_t t = 0; t < m; t++)
                for (int64_t f = 0; f < dim; f++) {
                    volatile float v = xb[idx[t] * dim + f] * 1.0f;
                    c[f] = c[f] + v;
                }
            ws[j] = ws[j] + wsum;
            volatile float alpha = 1.0f / ws[j];
            for (int64_t f = 0; f < dim; f++)
                c[f] = c[f] * alpha;
        } else {
            memcpy(c, o, (size_t)dim * sizeof *c);
        }
    }
}

static int cmp_ws_idx(const void *a, const void *b, void *ctx)
{
    const float *ws = ctx;
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    if (ws[i] != ws[j])
        return ws[i] < ws[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* The reassignment block of _mini_batch_step (random_reassign and ratio > 0). */
static mieb_status reassign(const float *xb, int64_t bs, int64_t dim, float *cn, float *ws, int64_t k,
                            double ratio, struct mieb_rs *rs, int64_t *scratch_k, char *to, int64_t *perm)
{
    float mx = ws[0];
    for (int64_t j = 1; j < k; j++)
        mx = ws[j] > mx ? ws[j] : mx;
    volatile float thr = (float)ratio * mx; /* NEP 50: the Python float becomes fp32 */
    int64_t cnt = 0;
    for (int64_t j = 0; j < k; j++)
        cnt += to[j] = ws[j] < thr;
    if ((double)cnt > 0.5 * (double)bs) {
        /* keep the int(0.5*bs) lightest; numpy's argsort here is an unstable quicksort, so
         * the choice among equal weights may differ (only possible with k > bs/2). */
        for (int64_t j = 0; j < k; j++)
            scratch_k[j] = j;
        qsort_r(scratch_k, (size_t)k, sizeof *scratch_k, cmp_ws_idx, ws);
        for (int64_t t = (int64_t)(0.5 * (double)bs); t < k; t++)
            to[scratch_k[t]] = 0;
        cnt = 0;
        for (int64_t j = 0; j < k; j++)
            cnt += to[j];
    }
    if (cnt) {
        mieb_rs_permutation(rs, bs, perm); /* choice(bs, replace=False, size=cnt) */
        int64_t t = 0;
        for (int64_t j = 0; j < k; j++)
            if (to[j])
                memcpy(cn + j * dim, xb + perm[t++] * dim, (size_t)dim * sizeof *cn);
    }
    float mn = 0.0f;
    int have = 0;
    for (int64_t j = 0; j < k; j++)
        if (!to[j] && (!have || ws[j] < mn))
            mn = ws[j], have = 1;
    if (have)
        for (int64_t j = 0; j < k; j++)
            if (to[j])
                ws[j] = mn;
    return MIEB_OK;
}

mieb_status mieb_kmeans_minibatch(struct mieb_backend *be, const float *x, int64_t n, int64_t dim,
                                  const struct mieb_kmeans_opts *o, int32_t *labels, struct mieb_kmeans_info *info)
{
    int64_t k = o->k;
    if (k < 1 || n < k)
        return mieb_fail(MIEB_ERR_BAD_DATA, "MiniBatchKMeans: n_samples=%lld should be >= n_clusters=%lld",
                         (long long)n, (long long)k);
    int64_t bs = o->batch_size < n ? o->batch_size : n;
    int64_t init_size = 3 * bs;
    if (init_size < k)
        init_size = 3 * k;
    if (init_size > n)
        init_size = n;
    struct mieb_rs rs;
    mieb_rs_seed(&rs, o->seed);
    mieb_status st = MIEB_OK;
    size_t kd = (size_t)k * (size_t)dim;
    int64_t *vidx = malloc((size_t)init_size * sizeof *vidx), *bidx = malloc((size_t)bs * sizeof *bidx);
    int64_t *upd = malloc((size_t)bs * sizeof *upd), *perm = malloc((size_t)bs * sizeof *perm);
    int64_t *sk = malloc((size_t)k * sizeof *sk);
    float *xs = NULL, *c = malloc(kd * sizeof *c), *cn = malloc(kd * sizeof *cn);
    float *xb = malloc((size_t)bs * (size_t)dim * sizeof *xb), *ws = calloc((size_t)k, sizeof *ws);
    float *csq = malloc((size_t)k * sizeof *csq);
    double *cdf = malloc((size_t)n * sizeof *cdf);
    int32_t *lab = malloc((size_t)bs * sizeof *lab);
    char *to = malloc((size_t)k);
    if (!vidx || !bidx || !upd || !perm || !sk || !c || !cn || !xb || !ws || !csq || !cdf || !lab || !to) {
        st = mieb_fail(MIEB_ERR_OOM, "MiniBatchKMeans: out of memory (n=%lld, k=%lld, dim=%lld)", (long long)n,
                       (long long)k, (long long)dim);
        goto out;
    }
    mieb_rs_randint(&rs, n, init_size, vidx); /* step 1: validation set of the (single) init */
    const float *xinit = x;
    if (init_size < n) {
        mieb_rs_randint(&rs, n, init_size, vidx);
        if (!(xs = malloc((size_t)init_size * (size_t)dim * sizeof *xs))) {
            st = mieb_fail(MIEB_ERR_OOM, "MiniBatchKMeans: out of memory for the init subsample");
            goto out;
        }
        for (int64_t i = 0; i < init_size; i++)
            memcpy(xs + i * dim, x + vidx[i] * dim, (size_t)dim * sizeof *xs);
        xinit = xs;
    }
    if ((st = mieb_kmeans_plusplus(xinit, init_size, dim, k, &rs, c)) != MIEB_OK)
        goto out;
    double p = (double)(1.0f / (float)n), acc = 0.0;
    for (int64_t i = 0; i < n; i++)
        cdf[i] = acc += p;
    for (int64_t i = 0; i < n; i++)
        cdf[i] /= acc;
    int64_t n_steps = ((int64_t)o->max_iter * n) / bs, n_since = 0, no_impr = 0, step = 0;
    double ewa = 0.0, ewa_min = 0.0;
    int have_ewa = 0, have_min = 0;
    for (step = 0; step < n_steps; step++) {
        if ((st = mieb_stop_check()) != MIEB_OK) /* a stop signal: once per step (core/stop.h) */
            goto out;
        mieb_rs_choice_cdf(&rs, cdf, n, bs, bidx);
        for (int64_t i = 0; i < bs; i++)
            memcpy(xb + i * dim, x + bidx[i] * dim, (size_t)dim * sizeof *xb);
        /* _random_reassign(): evaluated before the step, on the counts before the update */
        int any_zero = 0;
        for (int64_t j = 0; j < k && !any_zero; j++)
            any_zero = ws[j] == 0.0f;
        n_since += bs;
        int do_reassign = 0;
        if (any_zero || n_since >= 10 * k)
            n_since = 0, do_reassign = 1;
        mieb_np_row_sqnorms_f32(c, k, dim, csq);
        if ((st = mieb_dispatch_kmeans_assign(be, xb, bs, c, csq, k, dim, lab)) != MIEB_OK)
            goto out;
        float inertia = mieb_kmeans_batch_inertia(xb, bs, dim, c, lab, o->sk_threads);
        minibatch_update(xb, bs, dim, c, cn, ws, lab, k, upd);
        if (do_reassign && o->reassignment_ratio > 0)
            reassign(xb, bs, dim, cn, ws, k, o->reassignment_ratio, &rs, sk, to, perm);
        float *t = c;
        c = cn, cn = t;
        /* _mini_batch_convergence (Python floats) */
        double bi = (double)inertia / (double)bs;
        if (step + 1 == 1)
            continue;
        if (!have_ewa) {
            ewa = bi, have_ewa = 1;
        } else {
            double alpha = (double)bs * 2.0 / (double)(n + 1);
            alpha = alpha < 1.0 ? alpha : 1.0;
            ewa = ewa * (1 - alpha) + bi * alpha;
        }
        if (!have_min || ewa < ewa_min)
            no_impr = 0, ewa_min = ewa, have_min = 1;
        else
            no_impr++;
        if (no_impr >= o->max_no_improvement) {
            step++;
            break;
        }
    }
    if (info)
        info->n_steps = step;
    mieb_np_row_sqnorms_f32(c, k, dim, csq);
    st = mieb_dispatch_kmeans_assign(be, x, n, c, csq, k, dim, labels);
out:
    free(vidx), free(bidx), free(upd), free(perm), free(sk), free(xs), free(c), free(cn), free(xb), free(ws);
    free(csq), free(cdf), free(lab), free(to);
    return st;
}
