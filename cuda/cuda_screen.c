/**
 * cuda_screen.c - the int8 screen of topk_block on the GPU (docs/SCREEN_INT8.md): when it
 * runs, and the queries' int8 copy. The per-tile steps are in cuda_topk_block.c, the
 * kernels in kernels/screen_int8.cu.
 *
 * The queries are quantised once per query set, on the device by the kernel that runs the
 * CPU screen's own quantiser (math/screen_int8_math.h); their norm bounds come back to the
 * host, which folds them into each query's two bound coefficients with the same function
 * the CPU uses, and sends those up. A set with a row beyond the bound's range (a norm past
 * 2^60, NaN or inf) is not screened: its blocks go the exact way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/math/screen_int8_math.h"
#include "cuda_ops.h"
#include "cuda_check.h"
#include "screen_int8.cuh"

int mieb_cuda_screen_wanted(const struct mieb_cuda_ctx *ctx, const struct mieb_qset *qs, int64_t nd, int64_t ke)
{
    if (!ctx->screen || !ctx->canon_scores || qs->sim == MIEB_SIM_MAXSIM || qs->dim > MIEB_SCREEN_I8_MAX_K ||
        qs->i8_state < 0 || nd < 1 || qs->n < 1)
        return 0;
    if (ctx->screen == 2)
        return 1;
    return nd >= MIEB_CUDA_SCREEN_MIN_DOCS && nd >= ke * MIEB_CUDA_SCREEN_MIN_DOCS_PER_K;
}

void mieb_cuda_screen_release(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs)
{
    if (!qs->i8_alloc)
        return;
    if (cudaStreamSynchronize(ctx->stream) != cudaSuccess) /* queued work may still read it */
        (void)cudaGetLastError();
    mieb_cuda_dev_free(ctx, qs->i8_alloc);
    ctx->resident -= qs->i8_bytes < ctx->resident ? qs->i8_bytes : ctx->resident;
    qs->i8_alloc = NULL;
    qs->i8_bytes = 0;
}

/* The coefficients from the norm bounds that came down in alpha (N), beta (R) and h (H). */
static void fold_coefs(int64_t n, int64_t K, float *alpha, float *beta, const float *h)
{
    for (int64_t q = 0; q < n; q++)
        mieb_screen_i8_query_coefs(K, alpha[q], beta[q], h[q], 1.0f, 0, &alpha[q], &beta[q]);
}

/* Quantise the set on the device, fold the bounds on the host; *usable = 0 for a row out of range. */
static mieb_status build(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, size_t fl_b, int *usable)
{
    const int64_t n = qs->n;
    struct mieb_screen_i8_counts *cnt = (struct mieb_screen_i8_counts *)((char *)qs->d_beta + fl_b);
    float *d_h = (float *)((char *)cnt + mieb_cuda_aligned(sizeof *cnt));
    float *h = malloc(3 * sizeof(float) * (size_t)n);
    struct mieb_screen_i8_counts hc;
    if (!h)
        return mieb_fail(MIEB_ERR_OOM, "cuda screen: %lld query bounds", (long long)n);
    mieb_status st = MIEB_OK;
    MIEB_CUDA_CHECK_GOTO(cudaMemsetAsync(cnt, 0, sizeof *cnt, ctx->stream), st, done);
    /* N and R land in alpha and beta, whose coefficients replace them below */
    st = mieb_cuda_screen_i8_quantise(mieb_cuda_ks(ctx), qs->d_data, n, qs->dim, qs->kp, qs->d_q8, qs->d_sq, qs->d_alpha,
                                qs->d_beta, d_h, cnt);
    if (st != MIEB_OK)
        goto done;
    MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(&hc, cnt, sizeof hc, cudaMemcpyDeviceToHost, ctx->stream), st, done);
    MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(h, qs->d_alpha, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost,
                                         ctx->stream), st, done);
    MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(h + n, qs->d_beta, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost,
                                         ctx->stream), st, done);
    MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(h + 2 * n, d_h, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost,
                                         ctx->stream), st, done);
    MIEB_CUDA_CHECK_GOTO(cudaStreamSynchronize(ctx->stream), st, done);
    *usable = hc.bad == 0;
    if (!*usable)
        goto done;
    fold_coefs(n, qs->dim, h, h + n, h + 2 * n);
    MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(qs->d_alpha, h, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice,
                                         ctx->stream), st, done);
    MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(qs->d_beta, h + n, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice,
                                         ctx->stream), st, done);
    MIEB_CUDA_CHECK_GOTO(cudaStreamSynchronize(ctx->stream), st, done); /* before h goes */
done:
    free(h);
    return st;
}

mieb_status mieb_cuda_screen_queries(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs)
{
    if (qs->i8_state != 0)
        return MIEB_OK;
    qs->i8_state = -1;
    const int64_t n = qs->n;
    qs->kp = (qs->dim + 15) / 16 * 16; /* 16-byte rows: cuBLAS' int8 rules (gemm.h) */
    /* [n, kp] int8; sq, alpha, beta, counters and H, each its own aligned view */
    size_t q8_b = mieb_cuda_aligned((size_t)n * (size_t)qs->kp), fl_b = mieb_cuda_aligned(sizeof(float) * (size_t)n);
    size_t bytes = q8_b + 4 * fl_b + mieb_cuda_aligned(sizeof(struct mieb_screen_i8_counts));
    if (bytes > mieb_cuda_budget_left(ctx)) {
        MIEB_LOGD("cuda screen: no room for the int8 queries (%.1f MiB): the exact way", (double)bytes / 1048576.0);
        return MIEB_OK;
    }
    mieb_status st = mieb_cuda_dev_alloc(ctx, &qs->i8_alloc, bytes, "int8 queries");
    if (st == MIEB_ERR_OOM) {
        mieb_clear_error(); /* the exact way needs no more memory than it had */
        return MIEB_OK;
    }
    MIEB_TRY(st);
    qs->i8_bytes = bytes;
    ctx->resident += bytes;
    qs->d_q8 = (int8_t *)qs->i8_alloc;
    qs->d_sq = (float *)((char *)qs->i8_alloc + q8_b);
    qs->d_alpha = (float *)((char *)qs->d_sq + fl_b);
    qs->d_beta = (float *)((char *)qs->d_alpha + fl_b);
    int usable = 0;
    st = build(ctx, qs, fl_b, &usable);
    if (st != MIEB_OK || !usable) {
        if (st == MIEB_OK)
            MIEB_LOGD("cuda screen: a query's norm is beyond the int8 bound's range: the exact way");
        mieb_cuda_screen_release(ctx, qs);
        return st;
    }
    qs->i8_state = 1;
    return MIEB_OK;
}
