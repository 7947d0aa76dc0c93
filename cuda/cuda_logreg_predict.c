/**
 * cuda_logreg_predict.c - lr_predict (backend.h) on the GPU: the classes that n_problems
 * fitted logistic-regression models give the same rows X [n, D].
 *
 * Per call:
 *   stream: upload coef [np, KK, D] and intercept [np, KK] (small, pageable);
 *   for each chunk t of m rows of X (slot b = t % 2), as cuda_kmeans.c:
 *     host:   wait until slot b's previous upload finished, copy the rows into pinned slot b
 *     copy:   wait until compute released device slot b, upload, record ev_h2d[b]
 *     stream: wait ev_h2d[b]; per problem p: S = X[chunk] . coef_p^T (fp32 GEMM), then
 *             pred[p, chunk] = the class of each row (kernels/logreg_argmax.cu); ev_done[b]
 *   download pred [np, n] (the caller's layout) once.
 * Every row is read from the host once for all problems; S is one buffer reused by the
 * problems in stream order.
 *
 * Arithmetic: the GEMM is fp32 whatever --precision says; cuBLAS' summation order differs
 * from the CPU's sgemm / sgemv, so a class can differ from mieb_logreg_predict's only where
 * two decision values are within rounding of each other; the decision and argmax rule are
 * the CPU's (host/math/logreg_math.h). When not even one row at a time fits the memory
 * budget (supports() says so before the call, mieb_cuda_lr_predict_fits) or the allocator
 * (the run finds it), the answer is MIEB_ERR_TOO_LARGE, and host/dispatch runs the CPU
 * backend's lr_predict.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "cuda_check.h"
#include "gemm.h"
#include "logreg_argmax.cuh"

#define LP_CHUNK_MAX ((int64_t)16384) /* rows of X per chunk */

struct lp_plan {
    int64_t m; /* rows per chunk */
    size_t dev_bytes, pin_bytes;
};

/* Views carved from the pools for one call, in this order. */
struct lp_views {
    float *coef;                      /* [np, KK, D] device */
    float *icpt;                      /* [np, KK] device */
    int64_t *pred;                    /* [np, n] device */
    float *s;                         /* [m, KK] device: one problem's decision values */
    float *d_rows[MIEB_CUDA_N_SLOTS]; /* [m, D] device */
    float *p_rows[MIEB_CUDA_N_SLOTS]; /* [m, D] pinned */
};

static void lp_sizes(int64_t np, int64_t KK, int64_t D, int64_t n, int64_t m, struct lp_plan *p)
{
    const size_t rows_b = mieb_cuda_aligned((size_t)(m * D) * sizeof(float));
    p->m = m;
    p->dev_bytes = mieb_cuda_aligned((size_t)(np * KK * D) * sizeof(float)) +
                   mieb_cuda_aligned((size_t)(np * KK) * sizeof(float)) +
                   mieb_cuda_aligned((size_t)(np * n) * sizeof(int64_t)) +
                   mieb_cuda_aligned((size_t)(m * KK) * sizeof(float)) + MIEB_CUDA_N_SLOTS * rows_b;
    p->pin_bytes = MIEB_CUDA_N_SLOTS * rows_b;
}

/* Largest chunk (at most m_max rows) whose device bytes fit `budget`; TOO_LARGE if none. */
static mieb_status lp_plan(int64_t np, int64_t KK, int64_t D, int64_t n, int64_t m_max, size_t budget,
                           struct lp_plan *p)
{
    /* the fixed part alone (coef, intercept, predictions) must fit, in doubles to avoid wrapping */
    const double fixed = 4.0 * (double)np * (double)KK * ((double)D + 1.0) + 8.0 * (double)np * (double)n;
    if (fixed > (double)budget)
        return mieb_fail(MIEB_ERR_TOO_LARGE,
                         "cuda lr_predict: %lld models of %lld x %lld and %lld x %lld predictions need %.3g MiB; "
                         "%.3g MiB of the budget is left",
                         (long long)np, (long long)KK, (long long)D, (long long)np, (long long)n, fixed / 1048576.0,
                         (double)budget / 1048576.0);
    int64_t m = n < m_max ? n : m_max;
    const int64_t stage_rows = (int64_t)(MIEB_CUDA_STAGE_MAX / ((size_t)D * sizeof(float)));
    m = m > stage_rows ? stage_rows : m;
    m = m < 1 ? 1 : m;
    lp_sizes(np, KK, D, n, m, p);
    while (p->dev_bytes > budget && m > 1) {
        m = (m + 1) / 2;
        lp_sizes(np, KK, D, n, m, p);
    }
    if (p->dev_bytes > budget)
        return mieb_fail(MIEB_ERR_TOO_LARGE,
                         "cuda lr_predict: %lld models of %lld x %lld need %.3g MiB of device memory even one row at "
                         "a time; %.3g MiB of the budget is left",
                         (long long)np, (long long)KK, (long long)D, (double)p->dev_bytes / 1048576.0,
                         (double)budget / 1048576.0);
    return MIEB_OK;
}

/* Plan and reserve the pools; on an allocation failure plan again with half the rows. */
static mieb_status lp_reserve(struct mieb_cuda_ctx *ctx, int64_t np, int64_t KK, int64_t D, int64_t n,
                              struct lp_plan *p)
{
    int64_t m_max = LP_CHUNK_MAX;
    for (;;) {
        MIEB_TRY(lp_plan(np, KK, D, n, m_max, mieb_cuda_budget_left(ctx), p));
        mieb_status st = mieb_cuda_pool_reserve(ctx, &ctx->scratch, p->dev_bytes, "logistic regression predict");
        if (st == MIEB_OK)
            st = mieb_cuda_pool_reserve(ctx, &ctx->staging, p->pin_bytes, "logistic regression pinned staging");
        if (st != MIEB_ERR_OOM)
            return st;
        if (p->m == 1)
            return mieb_fail(MIEB_ERR_TOO_LARGE, "cuda lr_predict: out of memory on device %d even one row at a time",
                             ctx->device);
        mieb_clear_error();
        m_max = p->m / 2;
        MIEB_LOGW("cuda lr_predict: retrying with chunks of %lld rows", (long long)m_max);
    }
}

static mieb_status lp_carve(struct mieb_cuda_ctx *ctx, int64_t np, int64_t KK, int64_t D, int64_t n,
                            const struct lp_plan *p, struct lp_views *v)
{
    const size_t rows_b = (size_t)(p->m * D) * sizeof(float);
    memset(v, 0, sizeof *v);
    v->coef = mieb_cuda_pool_take(&ctx->scratch, (size_t)(np * KK * D) * sizeof(float));
    v->icpt = mieb_cuda_pool_take(&ctx->scratch, (size_t)(np * KK) * sizeof(float));
    v->pred = mieb_cuda_pool_take(&ctx->scratch, (size_t)(np * n) * sizeof(int64_t));
    v->s = mieb_cuda_pool_take(&ctx->scratch, (size_t)(p->m * KK) * sizeof(float));
    int ok = v->coef && v->icpt && v->pred && v->s;
    for (int b = 0; b < MIEB_CUDA_N_SLOTS; b++) {
        v->d_rows[b] = mieb_cuda_pool_take(&ctx->scratch, rows_b);
        v->p_rows[b] = mieb_cuda_pool_take(&ctx->staging, rows_b);
        ok = ok && v->d_rows[b] && v->p_rows[b];
    }
    if (!ok)
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda lr_predict: the plan's pools are smaller than its views");
    return MIEB_OK;
}

/* Host: rows [i0, i0 + rows) of X into pinned slot b; queue the upload; order the compute after it. */
static mieb_status lp_stage(struct mieb_cuda_ctx *ctx, const float *X, int64_t D, int64_t i0, int64_t rows,
                            struct lp_views *v, int b)
{
    const size_t bytes = (size_t)(rows * D) * sizeof(float);
    MIEB_CUDA_CHECK(cudaEventSynchronize(ctx->ev_h2d[b])); /* pinned slot b is free */
    memcpy(v->p_rows[b], X + i0 * D, bytes);
    MIEB_CUDA_CHECK(cudaStreamWaitEvent(ctx->copy_stream, ctx->ev_done[b], 0)); /* device slot b is free */
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_rows[b], v->p_rows[b], bytes, cudaMemcpyHostToDevice, ctx->copy_stream));
    MIEB_CUDA_CHECK(cudaEventRecord(ctx->ev_h2d[b], ctx->copy_stream));
    MIEB_CUDA_CHECK(cudaStreamWaitEvent(ctx->stream, ctx->ev_h2d[b], 0));
    return MIEB_OK;
}

/* Every problem on the chunk in slot b: S = rows . coef_p^T in fp32, then the classes. */
static mieb_status lp_chunk(struct mieb_cuda_ctx *ctx, int64_t np, int64_t KK, int64_t D, int64_t n, int64_t i0,
                            int64_t rows, struct lp_views *v, int b)
{
    const enum mieb_precision prec = ctx->precision;
    ctx->precision = MIEB_PREC_FP32;
    mieb_status st = MIEB_OK;
    for (int64_t p = 0; p < np && st == MIEB_OK; p++) {
        st = mieb_cuda_gemm_rowmajor(ctx, rows, KK, D, 1.0f, v->d_rows[b], D, false, v->coef + p * KK * D, D, true,
                                     0.0f, v->s, KK);
        if (st == MIEB_OK)
            st = mieb_cuda_logreg_argmax(mieb_cuda_ks(ctx), v->s, KK, v->icpt + p * KK, rows, KK, v->pred + p * n + i0);
    }
    ctx->precision = prec;
    MIEB_TRY(st);
    MIEB_CUDA_CHECK(cudaEventRecord(ctx->ev_done[b], ctx->stream));
    return MIEB_OK;
}

static mieb_status lp_run(struct mieb_cuda_ctx *ctx, const float *coef, const float *intercept, int64_t np,
                          int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out)
{
    struct lp_plan p = {0};
    struct lp_views v;
    MIEB_TRY(lp_reserve(ctx, np, KK, D, n, &p));
    MIEB_TRY(lp_carve(ctx, np, KK, D, n, &p, &v));
    MIEB_LOGD("cuda lr_predict: %lld models, KK %lld, D %lld, n %lld: chunks of %lld rows, %.1f MiB device",
              (long long)np, (long long)KK, (long long)D, (long long)n, (long long)p.m,
              (double)p.dev_bytes / 1048576.0);
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v.coef, coef, (size_t)(np * KK * D) * sizeof(float), cudaMemcpyHostToDevice,
                                    ctx->stream));
    MIEB_CUDA_CHECK(
        cudaMemcpyAsync(v.icpt, intercept, (size_t)(np * KK) * sizeof(float), cudaMemcpyHostToDevice, ctx->stream));
    int64_t t = 0;
    for (int64_t i0 = 0; i0 < n; i0 += p.m, t++) {
        const int b = (int)(t % MIEB_CUDA_N_SLOTS);
        const int64_t rows = n - i0 < p.m ? n - i0 : p.m;
        MIEB_TRY(lp_stage(ctx, X, D, i0, rows, &v, b));
        MIEB_TRY(lp_chunk(ctx, np, KK, D, n, i0, rows, &v, b));
    }
    MIEB_CUDA_CHECK(
        cudaMemcpyAsync(out, v.pred, (size_t)(np * n) * sizeof(int64_t), cudaMemcpyDeviceToHost, ctx->stream));
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return MIEB_OK;
}

/* The GEMM's int sizes (MIEB_ERR_TOO_LARGE). */
static mieb_status lp_int_sizes(int64_t KK, int64_t D)
{
    if (KK <= INT32_MAX - 32 && D <= INT32_MAX)
        return MIEB_OK;
    return mieb_fail(MIEB_ERR_TOO_LARGE, "cuda lr_predict: KK=%lld D=%lld exceed the GEMM's int sizes", (long long)KK,
                     (long long)D);
}

mieb_status mieb_cuda_lr_predict_fits(const struct mieb_cuda_ctx *ctx, const struct mieb_op_desc *op)
{
    const int64_t n = op->n, KK = op->k, np = op->m, D = op->dim;
    if (np < 1 || KK < 1 || D < 1 || n < 1)
        return MIEB_OK; /* nothing to do, or a bad shape the call reports */
    MIEB_TRY(lp_int_sizes(KK, D));
    struct lp_plan p;
    return lp_plan(np, KK, D, n, 1, mieb_cuda_budget_left(ctx), &p);
}

mieb_status mieb_cuda_lr_predict(struct mieb_cuda_ctx *ctx, const float *coef, const float *intercept,
                                 int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out)
{
    if (n_problems < 0 || KK < 1 || D < 1 || n < 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_predict: bad shape: %lld models of %lld x %lld, %lld rows",
                         (long long)n_problems, (long long)KK, (long long)D, (long long)n);
    if (n_problems == 0 || n == 0)
        return MIEB_OK;
    if (!coef || !intercept || !X || !out)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_predict: missing coef, intercept, X or out");
    mieb_status st = lp_int_sizes(KK, D);
    if (st == MIEB_OK)
        st = lp_run(ctx, coef, intercept, n_problems, KK, D, X, n, out);
    if (st != MIEB_OK) {
        /* leave no queued work reading the pools or the caller's memory */
        if (cudaStreamSynchronize(ctx->copy_stream) != cudaSuccess || cudaStreamSynchronize(ctx->stream) != cudaSuccess)
            (void)cudaGetLastError();
    }
    return st;
}
