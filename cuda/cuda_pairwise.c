/**
 * cuda_pairwise.c - sts_pairs and compo_scores (backend.h) on the GPU.
 *
 * Both are small next to a retrieval search (thousands of pairs or samples), so each runs
 * in chunks that fit the scratch pool: upload the chunk's rows, launch, download,
 * synchronise. A chunk that does not fit is halved until it does (out-of-memory is
 * recovered by tiling smaller, as elsewhere in the backend); when not even one pair or
 * sample fits the budget the operation returns MIEB_ERR_TOO_LARGE before queuing any work,
 * and host/dispatch/ has the CPU reference compute the same values.
 */
#include <stdlib.h>
#include <string.h>

#include "compo_scores.cuh"
#include "cuda_ops.h"
#include "cuda_check.h"
#include "sts_pairs.cuh"

/* Most items one chunk takes, so a chunk's host copies stay a modest size. */
#define PW_CHUNK_MAX ((int64_t)1 << 18)

/* Device bytes per pair (sts_pairs) and per sample (compo_scores), with their views' alignment. */
static size_t sts_per_pair(int64_t dim)
{
    return 2 * (size_t)dim * sizeof(float) + 4 * sizeof(double) + 2 * MIEB_CUDA_ALIGN;
}

static size_t compo_per_sample(int64_t ni, int64_t nt, int64_t dim)
{
    const size_t img_b = (size_t)ni * (size_t)dim * sizeof(float), txt_b = (size_t)nt * (size_t)dim * sizeof(float);
    return img_b + txt_b + (size_t)(ni + nt) * sizeof(float) + (size_t)(ni * nt) * sizeof(float) + 4 * MIEB_CUDA_ALIGN;
}

/* The budget check of pw_reserve for one item: MIEB_ERR_TOO_LARGE when it does not fit. */
static mieb_status pw_one_fits(const struct mieb_cuda_ctx *ctx, size_t per_item, int n_views, const char *what)
{
    size_t bytes = per_item + (size_t)n_views * MIEB_CUDA_ALIGN;
    size_t left = mieb_cuda_budget_left(ctx);
    if (bytes > left)
        return mieb_fail(MIEB_ERR_TOO_LARGE, "cuda %s: one item needs %.1f MiB, %.1f MiB of the budget is left", what,
                         (double)bytes / 1048576.0, (double)left / 1048576.0);
    return MIEB_OK;
}

mieb_status mieb_cuda_pairwise_fits(const struct mieb_cuda_ctx *ctx, const struct mieb_op_desc *op)
{
    if (op->op == MIEB_OP_STS_PAIRS && op->n > 0 && op->dim >= 0)
        return pw_one_fits(ctx, sts_per_pair(op->dim), 6, "sts_pairs");
    if (op->op == MIEB_OP_COMPO_SCORES && op->n > 0 && op->k >= 0 && op->m >= 0 && op->dim >= 0 &&
        op->n * op->k * op->m > 0)
        return pw_one_fits(ctx, compo_per_sample(op->k, op->m, op->dim), 4, "compo_scores");
    return MIEB_OK;
}

/*
 * Reserve the scratch pool for the largest chunk (at most *m items, each `per_item` device
 * bytes in `n_views` aligned views) that the budget and the device allow; *m is updated.
 */
static mieb_status pw_reserve(struct mieb_cuda_ctx *ctx, size_t per_item, int n_views, int64_t *m, const char *what)
{
    for (;;) {
        size_t bytes = (size_t)*m * per_item + (size_t)n_views * MIEB_CUDA_ALIGN;
        if (bytes > mieb_cuda_budget_left(ctx)) {
            if (*m == 1)
                return pw_one_fits(ctx, per_item, n_views, what);
            *m = (*m + 1) / 2;
            continue;
        }
        mieb_status st = mieb_cuda_pool_reserve(ctx, &ctx->scratch, bytes, what);
        if (st != MIEB_ERR_OOM)
            return st;
        if (*m == 1)
            return mieb_fail(MIEB_ERR_OOM, "cuda %s: out of memory on device %d even one item at a time", what,
                             ctx->device);
        *m = (*m + 1) / 2;
        mieb_clear_error();
        MIEB_LOGW("cuda %s: retrying with chunks of %lld", what, (long long)*m);
    }
}

/* After a failure: leave no queued work reading the pool or the caller's memory. */
static void pw_drain(struct mieb_cuda_ctx *ctx)
{
    if (cudaStreamSynchronize(ctx->stream) != cudaSuccess)
        (void)cudaGetLastError();
}

static mieb_status sts_run(struct mieb_cuda_ctx *ctx, const float *a, const float *b, int64_t n, int64_t dim,
                           bool f64, enum mieb_sim sim, const struct mieb_sts_pair_out *out)
{
    const size_t row_b = (size_t)dim * sizeof(float);
    const size_t per_pair = sts_per_pair(dim);
    int64_t m = n < PW_CHUNK_MAX ? n : PW_CHUNK_MAX;
    MIEB_TRY(pw_reserve(ctx, per_pair, 6, &m, "sts_pairs"));
    float *da = mieb_cuda_pool_take(&ctx->scratch, (size_t)m * row_b + 1);
    float *db = mieb_cuda_pool_take(&ctx->scratch, (size_t)m * row_b + 1);
    double *dv[4];
    for (int j = 0; j < 4; j++)
        dv[j] = mieb_cuda_pool_take(&ctx->scratch, (size_t)m * sizeof(double));
    if (!da || !db || !dv[0] || !dv[1] || !dv[2] || !dv[3])
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda sts_pairs: the pool is smaller than its views");
    double *hv[4] = {out->cosine, out->manhattan, out->euclidean, out->model};
    for (int64_t p0 = 0; p0 < n; p0 += m) {
        int64_t c = n - p0 < m ? n - p0 : m;
        size_t bytes = (size_t)c * row_b;
        if (bytes) {
            MIEB_CUDA_CHECK(cudaMemcpyAsync(da, a + p0 * dim, bytes, cudaMemcpyHostToDevice, ctx->stream));
            MIEB_CUDA_CHECK(cudaMemcpyAsync(db, b + p0 * dim, bytes, cudaMemcpyHostToDevice, ctx->stream));
        }
        MIEB_TRY(mieb_cuda_sts_pairs_launch(mieb_cuda_ks(ctx), da, db, c, dim, f64, sim == MIEB_SIM_COSINE, dv[0],
                                            dv[1], dv[2], dv[3]));
        for (int j = 0; j < 4; j++)
            MIEB_CUDA_CHECK(cudaMemcpyAsync(hv[j] + p0, dv[j], (size_t)c * sizeof(double), cudaMemcpyDeviceToHost,
                                            ctx->stream));
        MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    }
    return MIEB_OK;
}

mieb_status mieb_cuda_sts_pairs(struct mieb_cuda_ctx *ctx, const float *a, const float *b, int64_t n, int64_t dim,
                                bool sklearn_f64, enum mieb_sim model_sim, const struct mieb_sts_pair_out *out)
{
    if (model_sim != MIEB_SIM_COSINE && model_sim != MIEB_SIM_DOT)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "STS pair scores: similarity %s is not supported", mieb_sim_name(model_sim));
    if (n < 0 || dim < 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "sts_pairs: bad shape n=%lld dim=%lld", (long long)n, (long long)dim);
    if (n == 0)
        return MIEB_OK;
    if (!a || !b || !out || !out->cosine || !out->manhattan || !out->euclidean || !out->model)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "sts_pairs: missing input or output array");
    mieb_status st = sts_run(ctx, a, b, n, dim, sklearn_f64, model_sim, out);
    if (st != MIEB_OK && st != MIEB_ERR_TOO_LARGE)
        pw_drain(ctx);
    return st;
}

static mieb_status compo_run(struct mieb_cuda_ctx *ctx, const float *img, int dti, const float *txt, int dtt,
                             int64_t ns, int64_t ni, int64_t nt, int64_t dim, float *scores)
{
    const size_t img_b = (size_t)ni * (size_t)dim * sizeof(float), txt_b = (size_t)nt * (size_t)dim * sizeof(float);
    const size_t per_sample = compo_per_sample(ni, nt, dim);
    int64_t m = ns < PW_CHUNK_MAX ? ns : PW_CHUNK_MAX;
    MIEB_TRY(pw_reserve(ctx, per_sample, 4, &m, "compo_scores"));
    float *di = mieb_cuda_pool_take(&ctx->scratch, (size_t)m * img_b + 1);
    float *dt = mieb_cuda_pool_take(&ctx->scratch, (size_t)m * txt_b + 1);
    float *dn = mieb_cuda_pool_take(&ctx->scratch, (size_t)m * (size_t)(ni + nt) * sizeof(float) + 1);
    float *ds = mieb_cuda_pool_take(&ctx->scratch, (size_t)m * (size_t)(ni * nt) * sizeof(float) + 1);
    if (!di || !dt || !dn || !ds)
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda compo_scores: the pool is smaller than its views");
    for (int64_t s0 = 0; s0 < ns; s0 += m) {
        int64_t c = ns - s0 < m ? ns - s0 : m;
        if (img_b)
            MIEB_CUDA_CHECK(cudaMemcpyAsync(di, img + s0 * ni * dim, (size_t)c * img_b, cudaMemcpyHostToDevice,
                                            ctx->stream));
        if (txt_b)
            MIEB_CUDA_CHECK(cudaMemcpyAsync(dt, txt + s0 * nt * dim, (size_t)c * txt_b, cudaMemcpyHostToDevice,
                                            ctx->stream));
        MIEB_TRY(mieb_cuda_compo_scores_launch(mieb_cuda_ks(ctx), di, dti, dt, dtt, c, ni, nt, dim, dn, ds));
        if (ni * nt > 0)
            MIEB_CUDA_CHECK(cudaMemcpyAsync(scores + s0 * ni * nt, ds, (size_t)(c * ni * nt) * sizeof(float),
                                            cudaMemcpyDeviceToHost, ctx->stream));
        MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    }
    return MIEB_OK;
}

mieb_status mieb_cuda_compo_scores(struct mieb_cuda_ctx *ctx, const float *img, enum mieb_emb_dtype img_dtype,
                                   const float *txt, enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img,
                                   int64_t n_txt, int64_t dim, float *scores)
{
    if (n_samples < 0 || n_img < 0 || n_txt < 0 || dim < 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "compo_scores: bad shape");
    if (n_samples * n_img * n_txt == 0)
        return MIEB_OK;
    if (!img || !txt || !scores)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "compo_scores: missing input or output array");
    mieb_status st =
        compo_run(ctx, img, (int)img_dtype, txt, (int)txt_dtype, n_samples, n_img, n_txt, dim, scores);
    if (st != MIEB_OK && st != MIEB_ERR_TOO_LARGE)
        pw_drain(ctx);
    return st;
}
