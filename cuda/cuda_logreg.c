/**
 * cuda_logreg.c - the linear probe's data term on the GPU (lr_open, lr_eval, lr_close in
 * backend.h): a batch of logistic-regression problems resident on the device, evaluated
 * once per round of the host's lockstep L-BFGS (host/emulation/logreg_batch.h).
 *
 * A set is one device allocation, counted in ctx->resident like a query set, so the
 * operations that run between rounds (they carve the scratch pool) cannot invalidate it:
 *   xa    [np, n, ldx] fp32  X with a column of ones (column D): the intercept is one more
 *                            weight row, so raw = xa @ wt is one GEMM, and the intercept
 *                            gradient (the column sums of gp) is the last row of xa^T @ gp;
 *                            rows padded with zeros to ldx = D+1 rounded up to 8 floats, so
 *                            that every row starts 32-byte aligned (cuBLAS' vector loads)
 *   y     [np, n] int32
 *   wt    [np, D+1, KK]      a round's weights, compact: slot a is the a-th active problem
 *   lossv [np, n], grad [np, D+1, KK]   compact likewise
 *   raw   [n, KK]            ONE buffer for all problems: a round's problems run one after
 *                            another on ctx->stream, so problem a+1's first GEMM starts after
 *                            problem a's second GEMM has read raw; a buffer per problem
 *                            would only shrink the batch that fits
 * plus a pinned host mirror of wt, lossv and grad: one upload and two downloads per round.
 *
 * A round: the caller's weights into the pinned mirror, one upload; per active problem
 * raw = xa @ wt_a, the pointwise kernel (per-sample loss, gp = grad_pointwise / n in place,
 * kernels/logreg_pointwise.cu), grad_a = xa^T @ gp; two downloads; one synchronisation.
 * The GEMMs are fp32 whatever --precision says (they feed an optimiser, as kmeans_assign's
 * do); cuBLAS sums in its own order, so the values differ from the CPU reference
 * (mieb_logreg_loss_data) by float32 rounding (tests/gpu/gpu_logreg_cases.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "cuda_check.h"
#include "gemm.h"
#include "logreg_pointwise.cuh"

#define MIEB_CUDA_LRSET_MAGIC 0x4c525345u /* "LRSE" */
#define LR_ROW_ALIGN 8                     /* floats: 32 bytes */

static int64_t lr_ldx(int64_t D) { return (D + 1 + LR_ROW_ALIGN - 1) / LR_ROW_ALIGN * LR_ROW_ALIGN; }

struct mieb_lr_set {
    uint32_t magic;
    struct mieb_cuda_ctx *ctx; /* the context that owns the memory */
    int64_t np, n, D, K, KK;
    int64_t ldx;  /* row stride of xa: D+1 rounded up to LR_ROW_ALIGN */
    void *alloc;  /* the one device allocation behind the views below */
    size_t bytes; /* its size, counted in ctx->resident */
    float *d_xa, *d_wt, *d_raw, *d_lossv, *d_grad;
    int32_t *d_y;
    float *h_pin; /* pinned: wt [np, P], lossv [np, n], grad [np, P] */
    float *h_wt, *h_lossv, *h_grad;
};

/* Device bytes of a set; 0 when the sizes overflow (the caller reports OOM: it cannot fit). */
static size_t lr_set_bytes(int64_t np, int64_t n, int64_t D, int64_t KK)
{
    const double P = (double)(D + 1) * (double)KK;
    const double total = 4.0 * ((double)np * (double)n * (double)(lr_ldx(D) + 1) + 2.0 * (double)np * P +
                                (double)n * (double)KK + (double)np * (double)n);
    if (total > 1e18)
        return 0;
    const size_t p = (size_t)((D + 1) * KK);
    return mieb_cuda_aligned((size_t)(np * n * lr_ldx(D)) * sizeof(float)) +
           mieb_cuda_aligned((size_t)(np * n) * sizeof(int32_t)) + 2 * mieb_cuda_aligned((size_t)np * p * sizeof(float)) +
           mieb_cuda_aligned((size_t)(n * KK) * sizeof(float)) + mieb_cuda_aligned((size_t)(np * n) * sizeof(float));
}

static void lr_carve(struct mieb_lr_set *s)
{
    const size_t p = (size_t)((s->D + 1) * s->KK);
    char *c = s->alloc;
    s->d_xa = (float *)c;
    c += mieb_cuda_aligned((size_t)(s->np * s->n * s->ldx) * sizeof(float));
    s->d_y = (int32_t *)c;
    c += mieb_cuda_aligned((size_t)(s->np * s->n) * sizeof(int32_t));
    s->d_wt = (float *)c;
    c += mieb_cuda_aligned((size_t)s->np * p * sizeof(float));
    s->d_grad = (float *)c;
    c += mieb_cuda_aligned((size_t)s->np * p * sizeof(float));
    s->d_raw = (float *)c;
    c += mieb_cuda_aligned((size_t)(s->n * s->KK) * sizeof(float));
    s->d_lossv = (float *)c;
    s->h_wt = s->h_pin;
    s->h_lossv = s->h_wt + (size_t)s->np * p;
    s->h_grad = s->h_lossv + (size_t)(s->np * s->n);
}

/*
 * Give the idle scratch pool back to the device (the next operation grows it again). The
 * budget counts resident sets but not the pool, which an earlier operation may have left
 * large; without this a set the budget allows could fail to allocate.
 */
static void lr_drop_scratch(struct mieb_cuda_ctx *ctx)
{
    if (!ctx->scratch.base)
        return;
    if (cudaStreamSynchronize(ctx->copy_stream) != cudaSuccess || cudaStreamSynchronize(ctx->stream) != cudaSuccess)
        (void)cudaGetLastError();
    mieb_cuda_dev_free(ctx, ctx->scratch.base);
    ctx->scratch.base = NULL;
    ctx->scratch.cap = ctx->scratch.used = 0;
}

/* Pinned host memory with the same recovery as the pools (MIEB_ERR_OOM, error cleared). */
static mieb_status lr_pinned_alloc(struct mieb_cuda_ctx *ctx, float **p, size_t bytes)
{
    void *v = NULL;
    cudaError_t e = ctx->fail_alloc_above && bytes > ctx->fail_alloc_above ? cudaErrorMemoryAllocation
                                                                           : cudaMallocHost(&v, bytes ? bytes : 1);
    *p = NULL;
    if (e == cudaSuccess) {
        *p = v;
        return MIEB_OK;
    }
    (void)cudaGetLastError();
    if (e != cudaErrorMemoryAllocation)
        return mieb_cuda_record_error(MIEB_ERR_CUDA, "cudaMallocHost", (int)e, cudaGetErrorString(e), __func__,
                                      __FILE__, __LINE__);
    return mieb_fail(MIEB_ERR_OOM, "cuda logistic regression: cannot allocate %.1f MiB of pinned host memory",
                     (double)bytes / 1048576.0);
}

static void lr_release(struct mieb_cuda_ctx *ctx, struct mieb_lr_set *s)
{
    /* queued work may still read the set */
    if (cudaStreamSynchronize(ctx->stream) != cudaSuccess)
        (void)cudaGetLastError();
    if (s->alloc) {
        mieb_cuda_dev_free(ctx, s->alloc);
        ctx->resident -= s->bytes < ctx->resident ? s->bytes : ctx->resident;
    }
    if (s->h_pin && cudaFreeHost(s->h_pin) != cudaSuccess)
        (void)cudaGetLastError();
    s->magic = 0;
    free(s);
}

/*
 * X [rows, D] -> xa [rows, ldx]: X, the ones column, zeros, through two pinned slots of the
 * staging pool: the host fills slot b while slot 1-b is being uploaded.
 */
static mieb_status lr_upload_x(struct mieb_cuda_ctx *ctx, const float *X, int64_t rows, int64_t D, int64_t ldx,
                               float *d_xa)
{
    const size_t row_b = (size_t)ldx * sizeof(float);
    int64_t m = (int64_t)(MIEB_CUDA_STAGE_MAX / row_b);
    m = m < 1 ? 1 : m > rows ? rows : m;
    for (;;) {
        mieb_status st = mieb_cuda_pool_reserve(ctx, &ctx->staging, MIEB_CUDA_N_SLOTS * mieb_cuda_aligned((size_t)m * row_b),
                                                "logistic regression upload");
        if (st == MIEB_OK)
            break;
        if (st != MIEB_ERR_OOM || m == 1)
            return st;
        mieb_clear_error();
        m = (m + 1) / 2;
    }
    float *slot[MIEB_CUDA_N_SLOTS];
    for (int b = 0; b < MIEB_CUDA_N_SLOTS; b++)
        if (!(slot[b] = mieb_cuda_pool_take(&ctx->staging, (size_t)m * row_b)))
            return mieb_fail(MIEB_ERR_INTERNAL, "cuda lr_open: the staging pool is smaller than its slots");
    int64_t t = 0;
    for (int64_t i0 = 0; i0 < rows; i0 += m, t++) {
        const int b = (int)(t % MIEB_CUDA_N_SLOTS);
        const int64_t c = rows - i0 < m ? rows - i0 : m;
        MIEB_CUDA_CHECK(cudaEventSynchronize(ctx->ev_h2d[b])); /* slot b's last upload is done */
        for (int64_t r = 0; r < c; r++) {
            float *dst = slot[b] + r * ldx;
            memcpy(dst, X + (i0 + r) * D, (size_t)D * sizeof(float));
            dst[D] = 1.0f;
            for (int64_t j = D + 1; j < ldx; j++)
                dst[j] = 0.0f; /* never read by the GEMMs; defined all the same */
        }
        MIEB_CUDA_CHECK(
            cudaMemcpyAsync(d_xa + i0 * ldx, slot[b], (size_t)c * row_b, cudaMemcpyHostToDevice, ctx->stream));
        MIEB_CUDA_CHECK(cudaEventRecord(ctx->ev_h2d[b], ctx->stream));
    }
    return MIEB_OK;
}

static mieb_status lr_fill(struct mieb_cuda_ctx *ctx, struct mieb_lr_set *s, const float *X, const int64_t *y)
{
    const int64_t rows = s->np * s->n;
    int32_t *y32 = malloc((size_t)rows * sizeof *y32);
    if (!y32)
        return mieb_fail(MIEB_ERR_OOM, "cuda lr_open: %lld labels", (long long)rows);
    for (int64_t i = 0; i < rows; i++)
        y32[i] = (int32_t)y[i];
    mieb_status st = lr_upload_x(ctx, X, rows, s->D, s->ldx, s->d_xa);
    if (st == MIEB_OK)
        MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(s->d_y, y32, (size_t)rows * sizeof *y32, cudaMemcpyHostToDevice,
                                             ctx->stream),
                             st, done);
    if (st == MIEB_OK)
        MIEB_CUDA_CHECK_GOTO(cudaStreamSynchronize(ctx->stream), st, done);
done:
    if (st != MIEB_OK && cudaStreamSynchronize(ctx->stream) != cudaSuccess)
        (void)cudaGetLastError(); /* y32 and the staging slots may still be read */
    free(y32);
    return st;
}

/* What the GEMMs' int dimensions and the kernels' int class index allow (MIEB_ERR_TOO_LARGE). */
static mieb_status lr_int_sizes(int64_t n, int64_t D, int64_t K)
{
    if (n > INT32_MAX || D >= INT32_MAX - LR_ROW_ALIGN || K > INT32_MAX - 256)
        return mieb_fail(MIEB_ERR_TOO_LARGE, "cuda lr_open: %lld rows, %lld features, %lld classes exceed the GEMM's "
                                             "int sizes",
                         (long long)n, (long long)D, (long long)K);
    return MIEB_OK;
}

mieb_status mieb_cuda_lr_fits(const struct mieb_cuda_ctx *ctx, const struct mieb_op_desc *op)
{
    const int64_t n = op->n, D = op->dim, K = op->k;
    if (n < 1 || D < 1 || K < 2)
        return MIEB_OK; /* lr_open reports the bad shape */
    MIEB_TRY(lr_int_sizes(n, D, K));
    const size_t bytes = lr_set_bytes(1, n, D, K == 2 ? 1 : K), left = mieb_cuda_budget_left(ctx);
    if (bytes == 0 || bytes > left)
        return mieb_fail(MIEB_ERR_TOO_LARGE,
                         "cuda logistic regression: one problem of %lld x %lld (%lld classes) needs %.3g MiB of "
                         "device memory; %.3g MiB of the budget is left",
                         (long long)n, (long long)D, (long long)K, bytes ? (double)bytes / 1048576.0 : 1e12,
                         (double)left / 1048576.0);
    return MIEB_OK;
}

static mieb_status lr_check_open(const float *X, const int64_t *y, int64_t np, int64_t n, int64_t D, int64_t K)
{
    if (np < 1 || n < 1 || D < 1 || K < 2)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_open: bad shape: %lld problems of %lld rows, %lld features, %lld "
                                               "classes",
                         (long long)np, (long long)n, (long long)D, (long long)K);
    MIEB_TRY(lr_int_sizes(n, D, K));
    if (!X || !y)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_open: missing X or y");
    for (int64_t i = 0; i < np * n; i++)
        if (y[i] < 0 || y[i] >= K)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_open: problem %lld, row %lld: class %lld is not in [0, %lld)",
                             (long long)(i / n), (long long)(i % n), (long long)y[i], (long long)K);
    return MIEB_OK;
}

mieb_status mieb_cuda_lr_open(struct mieb_cuda_ctx *ctx, const float *X, const int64_t *y, int64_t n_problems,
                              int64_t n, int64_t D, int64_t K, struct mieb_lr_set **out)
{
    *out = NULL;
    MIEB_TRY(lr_check_open(X, y, n_problems, n, D, K));
    const int64_t KK = K == 2 ? 1 : K, P = (D + 1) * KK;
    const size_t bytes = lr_set_bytes(n_problems, n, D, KK);
    const size_t left = mieb_cuda_budget_left(ctx);
    if (bytes == 0 || bytes > left)
        return mieb_fail(MIEB_ERR_OOM,
                         "cuda lr_open: %lld problems of %lld x %lld (%lld classes) need %.3g MiB of device memory; "
                         "%.3g MiB of the budget is left",
                         (long long)n_problems, (long long)n, (long long)D, (long long)K,
                         bytes ? (double)bytes / 1048576.0 : 1e12, (double)left / 1048576.0);

    struct mieb_lr_set *s = calloc(1, sizeof *s);
    if (!s)
        return mieb_fail(MIEB_ERR_OOM, "cuda lr_open: set");
    s->magic = MIEB_CUDA_LRSET_MAGIC;
    s->ctx = ctx;
    s->np = n_problems, s->n = n, s->D = D, s->K = K, s->KK = KK, s->ldx = lr_ldx(D);
    mieb_status st = mieb_cuda_dev_alloc(ctx, &s->alloc, bytes, "logistic regression problems");
    if (st == MIEB_ERR_OOM && ctx->scratch.base) {
        mieb_clear_error();
        lr_drop_scratch(ctx);
        st = mieb_cuda_dev_alloc(ctx, &s->alloc, bytes, "logistic regression problems");
    }
    if (st == MIEB_OK) {
        s->bytes = bytes;
        ctx->resident += bytes;
        st = lr_pinned_alloc(ctx, &s->h_pin, ((size_t)(2 * n_problems * P) + (size_t)(n_problems * n)) * sizeof(float));
    }
    if (st == MIEB_OK) {
        lr_carve(s);
        st = lr_fill(ctx, s, X, y);
    }
    if (st != MIEB_OK) {
        lr_release(ctx, s);
        return st;
    }
    MIEB_LOGD("cuda lr_open: %lld problems, n %lld, D %lld, K %lld: %.1f MiB resident", (long long)n_problems,
              (long long)n, (long long)D, (long long)K, (double)bytes / 1048576.0);
    *out = s;
    return MIEB_OK;
}

static mieb_status lr_check_set(struct mieb_cuda_ctx *ctx, const struct mieb_lr_set *s)
{
    if (!s || s->magic != MIEB_CUDA_LRSET_MAGIC || s->ctx != ctx)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: not a logistic-regression set of this backend");
    return MIEB_OK;
}

/* Queue a round for the active problems (weights already in the pinned mirror), then wait. */
static mieb_status lr_round(struct mieb_cuda_ctx *ctx, struct mieb_lr_set *s, int64_t n_active, const int64_t *which)
{
    const int64_t n = s->n, D = s->D, KK = s->KK, P = (D + 1) * KK;
    const float fn = (float)n;
    MIEB_CUDA_CHECK(cudaMemcpyAsync(s->d_wt, s->h_wt, (size_t)(n_active * P) * sizeof(float), cudaMemcpyHostToDevice,
                                    ctx->stream));
    const enum mieb_precision prec = ctx->precision;
    ctx->precision = MIEB_PREC_FP32;
    mieb_status st = MIEB_OK;
    for (int64_t a = 0; a < n_active && st == MIEB_OK; a++) {
        const float *xa = s->d_xa + which[a] * n * s->ldx;
        st = mieb_cuda_gemm_rowmajor(ctx, n, KK, D + 1, 1.0f, xa, s->ldx, false, s->d_wt + a * P, KK, false, 0.0f,
                                     s->d_raw, KK);
        if (st == MIEB_OK)
            st = mieb_cuda_logreg_pointwise(mieb_cuda_ks(ctx), s->d_raw, KK, s->d_y + which[a] * n, n, KK, fn,
                                            s->d_lossv + a * n);
        if (st == MIEB_OK)
            st = mieb_cuda_gemm_rowmajor(ctx, D + 1, KK, n, 1.0f, xa, s->ldx, true, s->d_raw, KK, false, 0.0f,
                                         s->d_grad + a * P, KK);
    }
    ctx->precision = prec;
    MIEB_TRY(st);
    MIEB_CUDA_CHECK(cudaMemcpyAsync(s->h_lossv, s->d_lossv, (size_t)(n_active * n) * sizeof(float),
                                    cudaMemcpyDeviceToHost, ctx->stream));
    MIEB_CUDA_CHECK(cudaMemcpyAsync(s->h_grad, s->d_grad, (size_t)(n_active * P) * sizeof(float),
                                    cudaMemcpyDeviceToHost, ctx->stream));
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return MIEB_OK;
}

mieb_status mieb_cuda_lr_eval(struct mieb_cuda_ctx *ctx, struct mieb_lr_set *s, int64_t n_active,
                              const int64_t *which, const float *wt, float *lossv, float *grad)
{
    MIEB_TRY(lr_check_set(ctx, s));
    if (n_active < 0 || n_active > s->np)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_eval: %lld active problems in a set of %lld", (long long)n_active,
                         (long long)s->np);
    if (n_active == 0)
        return MIEB_OK;
    if (!which || !wt || !lossv || !grad)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_eval: missing which, wt, lossv or grad");
    for (int64_t a = 0; a < n_active; a++)
        if (which[a] < 0 || which[a] >= s->np)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "lr_eval: active problem %lld is %lld, not in [0, %lld)",
                             (long long)a, (long long)which[a], (long long)s->np);
    const int64_t P = (s->D + 1) * s->KK;
    memcpy(s->h_wt, wt, (size_t)(n_active * P) * sizeof(float));
    mieb_status st = lr_round(ctx, s, n_active, which);
    if (st != MIEB_OK) {
        /* leave no queued work reading the set or the pinned mirror */
        if (cudaStreamSynchronize(ctx->stream) != cudaSuccess)
            (void)cudaGetLastError();
        return st;
    }
    memcpy(lossv, s->h_lossv, (size_t)(n_active * s->n) * sizeof(float));
    memcpy(grad, s->h_grad, (size_t)(n_active * P) * sizeof(float));
    return MIEB_OK;
}

void mieb_cuda_lr_close(struct mieb_cuda_ctx *ctx, struct mieb_lr_set *s)
{
    if (lr_check_set(ctx, s) != MIEB_OK) {
        mieb_clear_error(); /* NULL or foreign: nothing of ours to free */
        return;
    }
    lr_release(ctx, s);
}
