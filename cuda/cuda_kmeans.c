/**
 * cuda_kmeans.c - kmeans_assign on the GPU (backend.h): for each row x_i of X, the first
 * j of the minimum of d[i, j] = c_sqnorm[j] - 2 <x_i, c_j>, as the CPU reference
 * mieb_cpu_kmeans_assign (host/cpu/cpu_kmeans.c) computes it. Over the memory budget it
 * returns MIEB_ERR_TOO_LARGE and host/dispatch/ runs the CPU reference instead.
 *
 * Per call:
 *   stream: upload C [k, dim] and c_sqnorm [k] (small, pageable);
 *   for each chunk t of m rows of X (slot b = t % 2):
 *     host:   wait until slot b's previous upload finished, copy the rows into pinned
 *             slot b (overlaps the GPU working on chunk t-1)
 *     copy:   wait until compute released device slot b, upload, record ev_h2d[b]
 *     stream: wait ev_h2d[b]; S = -2 X[chunk] . C^T (gemm.h, fp32); labels[chunk] =
 *             argmin_j (c_sqnorm[j] + S[., j]) (kernels/kmeans_argmin.cu); ev_done[b]
 *   download the labels [n] once.
 *
 * Arithmetic: the GEMM is always fp32, whatever --precision says (labels feed back into
 * the next iteration: TF32/BF16 would change the clustering, not just round a score).
 * The norms are the caller's (numpy's order), added with the one rounding that sgemm's
 * beta = 1 gives; only cuBLAS' summation order differs from the CPU's BLAS, so labels
 * are identical wherever the dot products are exact and may differ only at near-ties
 * elsewhere. sklearn's 256-row chunks only matter for its BLAS; chunks here are sized by
 * the memory budget.
 *
 * Residency: X is uploaded on every call. The API passes a host pointer whose contents
 * may change between calls (MiniBatchKMeans refills one batch buffer), so a device copy
 * cannot be reused on pointer identity; verifying the contents would cost a host pass as
 * long as the staging copy itself.
 *
 * Inertia: not part of this operation. The callers (host/emulation/kmeans_*.c) sum
 * sklearn's _euclidean_dense_dense distances on the host in its sequential order.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "cuda_check.h"
#include "gemm.h"
#include "kmeans_argmin.cuh"

#define KM_CHUNK_MAX ((int64_t)16384) /* rows of X per GEMM + argmin */

struct km_plan {
    int64_t m; /* rows per chunk */
    size_t dev_bytes, pin_bytes;
};

/* Views carved from the pools for one call, in this order. */
struct km_views {
    float *c;                         /* [k, dim] device */
    float *csq;                       /* [k] device */
    int32_t *labels;                  /* [n] device */
    float *s;                         /* [m, k] device: -2 X[chunk] . C^T */
    float *d_rows[MIEB_CUDA_N_SLOTS]; /* [m, dim] device */
    float *p_rows[MIEB_CUDA_N_SLOTS]; /* [m, dim] pinned */
};

static void km_sizes(int64_t n, int64_t k, int64_t dim, int64_t m, struct km_plan *p)
{
    size_t rows_b = mieb_cuda_aligned((size_t)m * (size_t)dim * sizeof(float));
    p->m = m;
    p->dev_bytes = mieb_cuda_aligned((size_t)k * (size_t)dim * sizeof(float)) +
                   mieb_cuda_aligned((size_t)k * sizeof(float)) + mieb_cuda_aligned((size_t)n * sizeof(int32_t)) +
                   mieb_cuda_aligned((size_t)m * (size_t)k * sizeof(float)) + MIEB_CUDA_N_SLOTS * rows_b;
    p->pin_bytes = MIEB_CUDA_N_SLOTS * rows_b;
}

static mieb_status km_one_row_fails(int64_t n, int64_t k, int64_t dim, const struct km_plan *p, size_t budget)
{
    return mieb_fail(MIEB_ERR_TOO_LARGE,
                     "cuda kmeans_assign: n=%lld k=%lld dim=%lld needs %.1f MiB of device memory even one row "
                     "at a time; %.1f MiB of the budget is left",
                     (long long)n, (long long)k, (long long)dim, (double)p->dev_bytes / 1048576.0,
                     (double)budget / 1048576.0);
}

mieb_status mieb_cuda_kmeans_fits(const struct mieb_cuda_ctx *ctx, int64_t n, int64_t k, int64_t dim)
{
    struct km_plan p;
    size_t budget = mieb_cuda_budget_left(ctx);
    if (n <= 0 || k <= 0 || dim <= 0 || k >= INT32_MAX || dim > INT32_MAX)
        return MIEB_OK; /* nothing to run, or a shape the operation refuses on every backend */
    km_sizes(n, k, dim, 1, &p);
    return p.dev_bytes > budget ? km_one_row_fails(n, k, dim, &p, budget) : MIEB_OK;
}

/* Largest chunk (at most m_max rows) whose device bytes fit `budget`. */
static mieb_status km_plan(int64_t n, int64_t k, int64_t dim, int64_t m_max, size_t budget, struct km_plan *p)
{
    int64_t m = n < m_max ? n : m_max;
    int64_t stage_rows = (int64_t)(MIEB_CUDA_STAGE_MAX / ((size_t)dim * sizeof(float)));
    if (m > stage_rows)
        m = stage_rows;
    if (m < 1)
        m = 1;
    km_sizes(n, k, dim, m, p);
    while (p->dev_bytes > budget && m > 1) {
        m = (m + 1) / 2;
        km_sizes(n, k, dim, m, p);
    }
    if (p->dev_bytes > budget)
        return km_one_row_fails(n, k, dim, p, budget);
    return MIEB_OK;
}

/* Plan and reserve the pools; on an allocation failure plan again with half the rows. */
static mieb_status km_reserve(struct mieb_cuda_ctx *ctx, int64_t n, int64_t k, int64_t dim, struct km_plan *p)
{
    int64_t m_max = KM_CHUNK_MAX;
    for (;;) {
        MIEB_TRY(km_plan(n, k, dim, m_max, mieb_cuda_budget_left(ctx), p));
        mieb_status st = mieb_cuda_pool_reserve(ctx, &ctx->scratch, p->dev_bytes, "k-means chunks");
        if (st == MIEB_OK)
            st = mieb_cuda_pool_reserve(ctx, &ctx->staging, p->pin_bytes, "k-means pinned staging");
        if (st != MIEB_ERR_OOM)
            return st;
        if (p->m == 1)
            return mieb_fail(MIEB_ERR_OOM, "cuda kmeans_assign: out of memory on device %d even one row at a time",
                             ctx->device);
        m_max = p->m / 2;
        MIEB_LOGW("cuda kmeans_assign: retrying with chunks of %lld rows", (long long)m_max);
    }
}

static mieb_status km_carve(struct mieb_cuda_ctx *ctx, int64_t n, int64_t k, int64_t dim, const struct km_plan *p,
                            struct km_views *v)
{
    size_t rows_b = (size_t)p->m * (size_t)dim * sizeof(float);
    memset(v, 0, sizeof *v);
    v->c = mieb_cuda_pool_take(&ctx->scratch, (size_t)k * (size_t)dim * sizeof(float));
    v->csq = mieb_cuda_pool_take(&ctx->scratch, (size_t)k * sizeof(float));
    v->labels = mieb_cuda_pool_take(&ctx->scratch, (size_t)n * sizeof(int32_t));
    v->s = mieb_cuda_pool_take(&ctx->scratch, (size_t)p->m * (size_t)k * sizeof(float));
    int ok = v->c && v->csq && v->labels && v->s;
    for (int b = 0; b < MIEB_CUDA_N_SLOTS; b++) {
        v->d_rows[b] = mieb_cuda_pool_take(&ctx->scratch, rows_b);
        v->p_rows[b] = mieb_cuda_pool_take(&ctx->staging, rows_b);
        ok = ok && v->d_rows[b] && v->p_rows[b];
    }
    if (!ok)
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda kmeans_assign: the plan's pools are smaller than its views");
    return MIEB_OK;
}

/* Host: rows [i0, i0 + rows) of x into pinned slot b; queue the upload; order the compute after it. */
static mieb_status km_stage(struct mieb_cuda_ctx *ctx, const float *x, int64_t dim, int64_t i0, int64_t rows,
                            struct km_views *v, int b)
{
    size_t bytes = (size_t)rows * (size_t)dim * sizeof(float);
    MIEB_CUDA_CHECK(cudaEventSynchronize(ctx->ev_h2d[b])); /* pinned slot b is free */
    memcpy(v->p_rows[b], x + i0 * dim, bytes);
    MIEB_CUDA_CHECK(cudaStreamWaitEvent(ctx->copy_stream, ctx->ev_done[b], 0)); /* device slot b is free */
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_rows[b], v->p_rows[b], bytes, cudaMemcpyHostToDevice, ctx->copy_stream));
    MIEB_CUDA_CHECK(cudaEventRecord(ctx->ev_h2d[b], ctx->copy_stream));
    MIEB_CUDA_CHECK(cudaStreamWaitEvent(ctx->stream, ctx->ev_h2d[b], 0));
    return MIEB_OK;
}

/* S = -2 X[chunk] . C^T in fp32 whatever ctx->precision says, then the argmin. */
static mieb_status km_chunk(struct mieb_cuda_ctx *ctx, int64_t k, int64_t dim, int64_t i0, int64_t rows,
                            struct km_views *v, int b)
{
    enum mieb_precision prec = ctx->precision;
    ctx->precision = MIEB_PREC_FP32;
    mieb_status st =
        mieb_cuda_gemm_rowmajor(ctx, rows, k, dim, -2.0f, v->d_rows[b], dim, false, v->c, dim, true, 0.0f, v->s, k);
    ctx->precision = prec;
    MIEB_TRY(st);
    MIEB_TRY(mieb_cuda_kmeans_argmin(mieb_cuda_ks(ctx), v->s, k, v->csq, rows, k, v->labels + i0));
    MIEB_CUDA_CHECK(cudaEventRecord(ctx->ev_done[b], ctx->stream));
    return MIEB_OK;
}

static mieb_status km_run(struct mieb_cuda_ctx *ctx, const float *x, int64_t n, const float *c,
                          const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels)
{
    struct km_plan p;
    struct km_views v;
    MIEB_TRY(km_reserve(ctx, n, k, dim, &p));
    MIEB_TRY(km_carve(ctx, n, k, dim, &p, &v));
    MIEB_LOGD("cuda kmeans_assign: n %lld, k %lld, dim %lld: chunks of %lld rows, %.1f MiB device, %.1f MiB pinned",
              (long long)n, (long long)k, (long long)dim, (long long)p.m, (double)p.dev_bytes / 1048576.0,
              (double)p.pin_bytes / 1048576.0);
    /* pageable sources: the driver stages them; small next to X */
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v.c, c, (size_t)k * (size_t)dim * sizeof(float), cudaMemcpyHostToDevice,
                                    ctx->stream));
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v.csq, c_sqnorm, (size_t)k * sizeof(float), cudaMemcpyHostToDevice, ctx->stream));
    int64_t t = 0;
    for (int64_t i0 = 0; i0 < n; i0 += p.m, t++) {
        int b = (int)(t % MIEB_CUDA_N_SLOTS);
        int64_t rows = n - i0 < p.m ? n - i0 : p.m;
        MIEB_TRY(km_stage(ctx, x, dim, i0, rows, &v, b));
        MIEB_TRY(km_chunk(ctx, k, dim, i0, rows, &v, b));
    }
    MIEB_CUDA_CHECK(
        cudaMemcpyAsync(labels, v.labels, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToHost, ctx->stream));
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return MIEB_OK;
}

mieb_status mieb_cuda_kmeans_assign(struct mieb_cuda_ctx *ctx, const float *x, int64_t n, const float *c,
                                    const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels)
{
    /* the CPU reference's shape rule, then what the kernel's int indices need */
    if (n < 0 || k <= 0 || dim <= 0 || k > INT32_MAX || dim > INT32_MAX)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "kmeans_assign: bad shape n=%lld k=%lld dim=%lld", (long long)n,
                         (long long)k, (long long)dim);
    if (!c || !c_sqnorm || (n > 0 && (!x || !labels)))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "kmeans_assign: missing input or output array");
    if (n == 0)
        return MIEB_OK;
    /* k == INT32_MAX: refused by the backend's supports(), so host/dispatch/ runs the CPU */
    mieb_status st = k < INT32_MAX ? km_run(ctx, x, n, c, c_sqnorm, k, dim, labels)
                                   : mieb_fail(MIEB_ERR_TOO_LARGE, "cuda kmeans_assign: k=%lld", (long long)k);
    /* MIEB_ERR_TOO_LARGE (over --mem-limit) is planned before any work is queued:
       host/dispatch/ then runs the CPU reference, which gives the same labels */
    if (st != MIEB_OK && st != MIEB_ERR_TOO_LARGE) {
        /* leave no queued work reading the pools or the caller's memory */
        if (cudaStreamSynchronize(ctx->copy_stream) != cudaSuccess || cudaStreamSynchronize(ctx->stream) != cudaSuccess)
            (void)cudaGetLastError();
    }
    return st;
}
