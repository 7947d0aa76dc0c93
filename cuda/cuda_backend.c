/**
 * cuda_backend.c - the CUDA implementation of the operations table (backend.h):
 * the vtable, mieb_backend_cuda_init (cuda_init.h), supports(), resident query sets and
 * max_block_rows: the top of cuda/. topk_block, score_pairs, kmeans_assign, sts_pairs,
 * compo_scores and the logistic-regression slots (cuda_logreg.c, cuda_logreg_predict.c) live in
 * their own files, over the helpers they share (cuda_tiling.c: input checks, corpus tiles,
 * plan-and-reserve with OOM recovery).
 *
 * Every operation first refuses to run on a context that saw a CUDA error (some faults
 * leave the CUDA context unusable until the process restarts) and marks the context
 * broken when it returns MIEB_ERR_CUDA itself.
 */
#include "cuda_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "cuda_init.h"
#include "topk_key.h"

/* topk_block calls per max_block_rows answer: each call ends with a sort and a download
 * of the per-query lists, so a block spans several tiles to amortise that. */
#define MIEB_CUDA_TILES_PER_BLOCK 8
/* Rows per item assumed for MaxSim when max_block_rows is asked without a query set:
 * about one ColPali page. Longer items still work (topk_block tiles by tokens). */
#define MIEB_CUDA_MAXSIM_ROWS_HINT 1024

static struct mieb_cuda_ctx *ctx_of(struct mieb_backend *be) { return (struct mieb_cuda_ctx *)be->ctx; }

static mieb_status usable(struct mieb_cuda_ctx *ctx)
{
    if (ctx->broken)
        return mieb_fail(MIEB_ERR_CUDA, "cuda backend: unusable after an earlier CUDA error on device %d", ctx->device);
    return MIEB_OK;
}

/* Remember a CUDA failure: later calls fail fast instead of touching a dead context. */
static mieb_status settle(struct mieb_cuda_ctx *ctx, mieb_status st)
{
    if (st == MIEB_ERR_CUDA)
        ctx->broken = 1;
    return st;
}

static void cuda_free(struct mieb_backend *be)
{
    mieb_cuda_ctx_free(ctx_of(be));
    free(be);
}

static void release_qset(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs)
{
    if (!qs)
        return;
    mieb_cuda_screen_release(ctx, qs);
    if (qs->alloc) {
        /* queued work may still read the queries */
        if (cudaStreamSynchronize(ctx->stream) != cudaSuccess)
            (void)cudaGetLastError();
        mieb_cuda_dev_free(ctx, qs->alloc);
        ctx->resident -= qs->bytes < ctx->resident ? qs->bytes : ctx->resident;
    }
    free(qs->h_offsets);
    qs->magic = 0;
    free(qs);
}

static void cuda_release_queries(struct mieb_backend *be, struct mieb_qset *qs)
{
    release_qset(ctx_of(be), qs);
}

static mieb_status prepare(struct mieb_cuda_ctx *ctx, const struct mieb_vecs *q, enum mieb_sim sim,
                           struct mieb_qset **out)
{
    int multi = sim == MIEB_SIM_MAXSIM;
    int64_t max_rows = 0;
    mieb_status st = mieb_cuda_check_vecs(q, multi, "queries", &max_rows);
    if (st != MIEB_OK)
        return st;
    size_t data_b = mieb_cuda_aligned((size_t)q->rows * (size_t)q->dim * sizeof(float));
    size_t off_b = multi ? mieb_cuda_aligned((size_t)(q->n + 1) * sizeof(int64_t)) : 0;
    if (data_b + off_b > mieb_cuda_budget_left(ctx))
        return mieb_fail(MIEB_ERR_TOO_LARGE,
                         "cuda: %lld query rows of dim %lld need %.1f MiB; %.1f MiB of the device budget is left",
                         (long long)q->rows, (long long)q->dim, (double)(data_b + off_b) / 1048576.0,
                         (double)mieb_cuda_budget_left(ctx) / 1048576.0);

    struct mieb_qset *qs = calloc(1, sizeof *qs);
    if (!qs)
        return mieb_fail(MIEB_ERR_OOM, "cuda: query set");
    qs->magic = MIEB_CUDA_QSET_MAGIC;
    qs->sim = sim;
    qs->n = q->n;
    qs->rows = q->rows;
    qs->dim = q->dim;
    qs->max_item_rows = max_rows;
    if (multi) {
        qs->h_offsets = malloc(sizeof(int64_t) * (size_t)(q->n + 1));
        if (!qs->h_offsets) {
            free(qs);
            return mieb_fail(MIEB_ERR_OOM, "cuda: query offsets");
        }
        memcpy(qs->h_offsets, q->offsets, sizeof(int64_t) * (size_t)(q->n + 1));
    }
    st = mieb_cuda_dev_alloc(ctx, &qs->alloc, data_b + off_b, "queries");
    if (st != MIEB_OK) {
        release_qset(ctx, qs);
        return st;
    }
    qs->bytes = data_b + off_b;
    ctx->resident += qs->bytes;
    qs->d_data = (float *)qs->alloc;
    if (multi)
        qs->d_offsets = (int64_t *)((char *)qs->alloc + data_b);
    /* Pageable source: the copy is staged by the driver; once per query set is fine. */
    if (q->rows > 0)
        MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(qs->d_data, q->data, (size_t)q->rows * (size_t)q->dim * sizeof(float),
                                             cudaMemcpyHostToDevice, ctx->stream),
                             st, fail);
    if (multi)
        MIEB_CUDA_CHECK_GOTO(cudaMemcpyAsync(qs->d_offsets, q->offsets, sizeof(int64_t) * (size_t)(q->n + 1),
                                             cudaMemcpyHostToDevice, ctx->stream),
                             st, fail);
    MIEB_CUDA_CHECK_GOTO(cudaStreamSynchronize(ctx->stream), st, fail);
    *out = qs;
    return MIEB_OK;
fail:
    release_qset(ctx, qs);
    return st;
}

static mieb_status cuda_prepare_queries(struct mieb_backend *be, const struct mieb_vecs *q, enum mieb_sim sim,
                                        struct mieb_qset **out)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    *out = NULL;
    MIEB_TRY(usable(ctx));
    return settle(ctx, prepare(ctx, q, sim, out));
}

static mieb_status check_qset(struct mieb_qset *qs)
{
    if (!qs || qs->magic != MIEB_CUDA_QSET_MAGIC)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: not a query set of this backend");
    return MIEB_OK;
}

static mieb_status cuda_topk_block(struct mieb_backend *be, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                   int64_t k, float *out_scores, int64_t *out_idx)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    MIEB_TRY(check_qset(qs));
    return settle(ctx, mieb_cuda_topk_block(ctx, qs, docs, k, out_scores, out_idx));
}

static mieb_status cuda_topk_block_floor(struct mieb_backend *be, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                         int64_t k, const float *floor, float *out_scores, int64_t *out_idx,
                                         int64_t *out_n)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    MIEB_TRY(check_qset(qs));
    return settle(ctx, mieb_cuda_topk_block_floor(ctx, qs, docs, k, floor, out_scores, out_idx, out_n));
}

static mieb_status cuda_score_pairs(struct mieb_backend *be, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                    int64_t n_pairs, const int64_t *qi, const int64_t *di, float *out)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    MIEB_TRY(check_qset(qs));
    return settle(ctx, mieb_cuda_score_pairs(ctx, qs, docs, n_pairs, qi, di, out));
}

static mieb_status cuda_kmeans_assign(struct mieb_backend *be, const float *x, int64_t n, const float *c,
                                      const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    return settle(ctx, mieb_cuda_kmeans_assign(ctx, x, n, c, c_sqnorm, k, dim, labels));
}

static mieb_status cuda_sts_pairs(struct mieb_backend *be, const float *a, const float *b, int64_t n, int64_t dim,
                                  bool sklearn_f64, enum mieb_sim model_sim, const struct mieb_sts_pair_out *out)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    return settle(ctx, mieb_cuda_sts_pairs(ctx, a, b, n, dim, sklearn_f64, model_sim, out));
}

static mieb_status cuda_compo_scores(struct mieb_backend *be, const float *img, enum mieb_emb_dtype img_dtype,
                                     const float *txt, enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img,
                                     int64_t n_txt, int64_t dim, float *scores)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    return settle(ctx, mieb_cuda_compo_scores(ctx, img, img_dtype, txt, txt_dtype, n_samples, n_img, n_txt, dim, scores));
}

static mieb_status cuda_lr_open(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems,
                                int64_t n, int64_t D, int64_t K, struct mieb_lr_set **out)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    *out = NULL;
    MIEB_TRY(usable(ctx));
    return settle(ctx, mieb_cuda_lr_open(ctx, X, y, n_problems, n, D, K, out));
}

static mieb_status cuda_lr_eval(struct mieb_backend *be, struct mieb_lr_set *s, int64_t n_active,
                                const int64_t *which, const float *wt, float *lossv, float *grad)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    return settle(ctx, mieb_cuda_lr_eval(ctx, s, n_active, which, wt, lossv, grad));
}

static void cuda_lr_close(struct mieb_backend *be, struct mieb_lr_set *s)
{
    mieb_cuda_lr_close(ctx_of(be), s); /* also after an error: the memory is ours to free */
}

static mieb_status cuda_lr_predict(struct mieb_backend *be, const float *coef, const float *intercept,
                                   int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    MIEB_TRY(usable(ctx));
    return settle(ctx, mieb_cuda_lr_predict(ctx, coef, intercept, n_problems, KK, D, X, n, out));
}

/*
 * Corpus items per topk_block call: several tiles of the plan for this query set (or,
 * without one, 1024 single-vector queries), at most what a block-local index can hold.
 * topk_block tiles internally, so a larger block still works; this is the size that
 * keeps the per-call sort and download cheap relative to the scoring.
 */
static int64_t cuda_max_block_rows(struct mieb_backend *be, struct mieb_qset *qs, int64_t dim, int64_t k)
{
    struct mieb_cuda_ctx *ctx = ctx_of(be);
    int maxsim = qs && qs->magic == MIEB_CUDA_QSET_MAGIC && qs->sim == MIEB_SIM_MAXSIM;
    const int64_t big = (int64_t)MIEB_TOPK_MAX_INDEX + 1;
    struct mieb_cuda_plan_in in = {0};
    struct mieb_cuda_plan p;

    in.maxsim = maxsim;
    in.dim = dim > 0 ? dim : 1;
    in.ke = k > 0 ? k : 1;
    in.nq = qs ? qs->n : 1024;
    in.q_rows = qs ? qs->rows : in.nq;
    in.q_max = qs ? qs->max_item_rows : 1;
    in.nd = big;
    in.d_max = maxsim ? MIEB_CUDA_MAXSIM_ROWS_HINT : 1;
    in.d_rows = maxsim ? big : in.nd;
    if (mieb_cuda_plan_topk(&in, mieb_cuda_budget_left(ctx), &p) != MIEB_OK) {
        mieb_clear_error();
        return 1; /* topk_block itself will report the budget problem */
    }
    int64_t items = maxsim ? p.d_tokens / MIEB_CUDA_MAXSIM_ROWS_HINT : p.d_tile;
    if (items < 1)
        items = 1;
    items *= MIEB_CUDA_TILES_PER_BLOCK;
    return items < big ? items : big;
}

/*
 * Whether an operation runs here at these sizes: the k-means argmin kernel's int indices
 * need k < INT32_MAX, the GEMMs' int sizes must hold the logistic-regression shapes, and one
 * row, pair, sample or problem must fit the budget left (what the operations' plans need at
 * the least; a plan that still finds it too small, as after an allocation failure, returns
 * MIEB_ERR_TOO_LARGE itself, or MIEB_ERR_OOM from lr_open, whose caller takes fewer problems).
 */
static mieb_status cuda_supports(struct mieb_backend *be, const struct mieb_op_desc *op)
{
    const struct mieb_cuda_ctx *ctx = be->ctx;
    if (op->op == MIEB_OP_KMEANS_ASSIGN && op->k == INT32_MAX)
        return mieb_fail(MIEB_ERR_TOO_LARGE, "cuda kmeans_assign: k=%lld", (long long)op->k);
    if (op->op == MIEB_OP_KMEANS_ASSIGN)
        return mieb_cuda_kmeans_fits(ctx, op->n, op->k, op->dim);
    if (op->op == MIEB_OP_LR_BATCH)
        return mieb_cuda_lr_fits(ctx, op);
    if (op->op == MIEB_OP_LR_PREDICT)
        return mieb_cuda_lr_predict_fits(ctx, op);
    return mieb_cuda_pairwise_fits(ctx, op);
}

/* The GPU, its similarity arithmetic and its screen, for the run manifest. */
static void cuda_describe(struct mieb_backend *be, mieb_describe_fn put, void *user)
{
    const struct mieb_cuda_ctx *ctx = be->ctx;
    char cc[16];
    snprintf(cc, sizeof cc, "sm_%d%d", ctx->cc_major, ctx->cc_minor);
    put(user, "device_name", ctx->name);
    put(user, "compute_capability", cc);
    put(user, "similarity_gemm", ctx->canon_scores                  ? "fp32 fixed order"
                                 : ctx->precision == MIEB_PREC_TF32 ? "tf32 cuBLAS"
                                 : ctx->precision == MIEB_PREC_BF16 ? "bf16 cuBLAS"
                                                                    : "fp32 cuBLAS");
    put(user, "screen", ctx->screen == 2 ? "int8 every block" : ctx->screen ? "int8 where it pays" : "off");
}

static const struct mieb_backend_i cuda_iface = {
    /* .name            = */ "cuda",
    /* .free            = */ cuda_free,
    /* .prepare_queries = */ cuda_prepare_queries,
    /* .release_queries = */ cuda_release_queries,
    /* .topk_block      = */ cuda_topk_block,
    /* .score_pairs     = */ cuda_score_pairs,
    /* .max_block_rows  = */ cuda_max_block_rows,
    /* .kmeans_assign   = */ cuda_kmeans_assign,
    /* .sts_pairs       = */ cuda_sts_pairs,
    /* .compo_scores    = */ cuda_compo_scores,
    /* .lr_open         = */ cuda_lr_open,
    /* .lr_eval         = */ cuda_lr_eval,
    /* .lr_close        = */ cuda_lr_close,
    /* .lr_predict      = */ cuda_lr_predict,
    /* the GEMM is the same; the floor lets the top-k kernel compact the few scores that can
       still enter from the first tile on, instead of selecting over whole tiles */
    /* .topk_block_floor = */ cuda_topk_block_floor,
    /* .supports         = */ cuda_supports,
    /* .describe         = */ cuda_describe,
};

mieb_status mieb_backend_cuda_init(const struct mieb_backend_opts *opts, struct mieb_backend **out)
{
    struct mieb_cuda_ctx *ctx = NULL;
    *out = NULL;
    mieb_status st = mieb_cuda_ctx_init(opts, &ctx);
    if (st != MIEB_OK)
        return st;
    struct mieb_backend *be = calloc(1, sizeof *be);
    if (!be) {
        mieb_cuda_ctx_free(ctx);
        return mieb_fail(MIEB_ERR_OOM, "cuda backend");
    }
    be->iface = cuda_iface;
    be->ctx = ctx;
    if (opts)
        be->opts = *opts;
    *out = be;
    return MIEB_OK;
}
