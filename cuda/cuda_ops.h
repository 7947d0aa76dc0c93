/**
 * cuda_ops.h - what the CUDA backend's source files share: the resident query set, corpus
 * tiles and their planning (cuda_tiling.c), and each operation's entry point, called by the
 * operations table (cuda_backend.c), which sits above them all (not a public header:
 * the rest of mieb-eval sees only backend.h and cuda_init.h).
 */
#ifndef MIEB_CUDA_OPS_H
#define MIEB_CUDA_OPS_H

#include <stdint.h>

#include "backend/backend.h"
#include "cuda_ctx.h"
#include "cuda_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MIEB_CUDA_QSET_MAGIC 0x51534554u /* "QSET" */

/** A query set resident on the device (prepare_queries). */
struct mieb_qset {
    uint32_t magic;
    enum mieb_sim sim;
    int64_t n, rows, dim;
    int64_t max_item_rows; /* longest item in rows (1 for single-vector) */
    float *d_data;         /* [rows, dim] device */
    int64_t *d_offsets;    /* [n + 1] device, MaxSim only (a view into the same allocation) */
    int64_t *h_offsets;    /* [n + 1] host copy, MaxSim only: query chunks are cut on the host */
    void *alloc;           /* the one device allocation behind d_data and d_offsets */
    size_t bytes;          /* its size, counted in ctx->resident */
    /* the int8 screen's copy of the queries (cuda_screen.c), made for the first screened block */
    int i8_state;          /* 0 not made yet, 1 ready, -1 the screen cannot take this set */
    int64_t kp;            /* int8 row length: dim rounded up to 16 */
    int8_t *d_q8;          /* [n, kp] device */
    float *d_sq, *d_alpha, *d_beta; /* [n] device: scales and bound coefficients */
    void *i8_alloc;        /* the device allocation behind them */
    size_t i8_bytes;       /* its size, counted in ctx->resident */
};

/** A run of corpus items [i0, i1) and the rows [r0, r1) of `docs` they occupy. */
struct mieb_cuda_tile {
    int64_t i0, i1, r0, r1;
};

/** The next corpus tile starting at item i0 under plan p (never splits an item). */
void mieb_cuda_next_tile(const struct mieb_vecs *docs, int maxsim, const struct mieb_cuda_plan *p, int64_t i0,
                         struct mieb_cuda_tile *t);

/**
 * Check a host vector set: sizes, data pointer, and for multi-vector sets offsets that
 * start at 0, never decrease and end at rows. *max_item_rows gets the longest item.
 */
mieb_status mieb_cuda_check_vecs(const struct mieb_vecs *v, int multi, const char *what, int64_t *max_item_rows);

/**
 * The checks of a corpus block against the query set qs that an operation runs first (the
 * block as mieb_cuda_check_vecs, under MaxSim a multi-vector one; the queries' dimension),
 * then *in zeroed and given the similarity and the sizes of both sets: what topk_block and
 * score_pairs plan with, less their own fields (ke, n_pairs, the screen's).
 */
mieb_status mieb_cuda_block_plan_in(const struct mieb_qset *qs, const struct mieb_vecs *docs,
                                    struct mieb_cuda_plan_in *in);

/**
 * Plan, then reserve the scratch and staging pools; on an allocation failure plan again
 * within half the bytes that failed (OOM recovered by tiling smaller). MIEB_ERR_OOM only
 * when even the smallest tiles cannot be allocated; MIEB_ERR_TOO_LARGE when they exceed
 * the budget. `pairs` selects mieb_cuda_plan_pairs instead of mieb_cuda_plan_topk.
 */
mieb_status mieb_cuda_plan_reserve(struct mieb_cuda_ctx *ctx, const struct mieb_cuda_plan_in *in, int pairs,
                                   struct mieb_cuda_plan *p);

/* ---- the int8 screen (cuda_screen.c; docs/SCREEN_INT8.md) ---- */

/** Blocks of at least this many documents, and this many per kept entry, take the screen
    under MIEB_CUDA_SCREEN=auto (int8: every single-vector block; off, the default: none). Its tiles must hold this
    many documents per k too, or the k kept per query would fill its candidate list. */
#define MIEB_CUDA_SCREEN_MIN_DOCS 2048
#define MIEB_CUDA_SCREEN_MIN_DOCS_PER_K 20

/** 1 when a block of nd documents at ke kept per query takes the int8 screen (mode,
    similarity, score order, dimension, and under auto the sizes above). */
int mieb_cuda_screen_wanted(const struct mieb_cuda_ctx *ctx, const struct mieb_qset *qs, int64_t nd, int64_t ke);

/** Make qs's int8 copy on the device once (i8_state 1), or mark the set unusable for the
    screen (i8_state -1: a norm beyond the bound's range, or no memory; not an error). */
mieb_status mieb_cuda_screen_queries(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs);

/** Free qs's int8 copy (release_qset). */
void mieb_cuda_screen_release(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs);

/* The operations with their own files (cuda_topk_block.c, cuda_score_pairs.c). */
mieb_status mieb_cuda_topk_block(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                 int64_t k, float *out_scores, int64_t *out_idx);
/* topk_block_floor (backend.h): each query's threshold starts at its floor (cuda_topk_block.c). */
mieb_status mieb_cuda_topk_block_floor(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                       int64_t k, const float *floor, float *out_scores, int64_t *out_idx,
                                       int64_t *out_n);
mieb_status mieb_cuda_score_pairs(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                  int64_t n_pairs, const int64_t *qi, const int64_t *di, float *out);

/**
 * kmeans_assign (backend.h) on the device (cuda_kmeans.c): validates the shape as the CPU
 * reference does, uploads X per call in budget-sized chunks, and returns
 * MIEB_ERR_TOO_LARGE (host/dispatch/ then runs the CPU reference) when even one row at a
 * time exceeds the memory budget.
 */
mieb_status mieb_cuda_kmeans_assign(struct mieb_cuda_ctx *ctx, const float *x, int64_t n, const float *c,
                                    const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels);

/**
 * Whether kmeans_assign, sts_pairs or compo_scores (op) fits the budget left one row, pair
 * or sample at a time, the least their plans take: MIEB_OK, else MIEB_ERR_TOO_LARGE with
 * the message the operation itself would give (the backend's supports()).
 */
mieb_status mieb_cuda_kmeans_fits(const struct mieb_cuda_ctx *ctx, int64_t n, int64_t k, int64_t dim);
mieb_status mieb_cuda_pairwise_fits(const struct mieb_cuda_ctx *ctx, const struct mieb_op_desc *op);
/* supports() of the logistic-regression batch (cuda_logreg.c: the int sizes, one problem
   within the budget left) and of lr_predict (cuda_logreg_predict.c: the int sizes, one row
   at a time within the budget left); MIEB_ERR_TOO_LARGE when not. */
mieb_status mieb_cuda_lr_fits(const struct mieb_cuda_ctx *ctx, const struct mieb_op_desc *op);
mieb_status mieb_cuda_lr_predict_fits(const struct mieb_cuda_ctx *ctx, const struct mieb_op_desc *op);

/**
 * sts_pairs and compo_scores (backend.h) on the device (cuda_pairwise.c): the CPU
 * reference's bits; MIEB_ERR_TOO_LARGE when not even one pair or sample fits the budget.
 */
mieb_status mieb_cuda_sts_pairs(struct mieb_cuda_ctx *ctx, const float *a, const float *b, int64_t n, int64_t dim,
                                bool sklearn_f64, enum mieb_sim model_sim, const struct mieb_sts_pair_out *out);
mieb_status mieb_cuda_compo_scores(struct mieb_cuda_ctx *ctx, const float *img, enum mieb_emb_dtype img_dtype,
                                   const float *txt, enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img,
                                   int64_t n_txt, int64_t dim, float *scores);

/**
 * lr_open / lr_eval / lr_close (backend.h) on the device (cuda_logreg.c): a set is one
 * device allocation counted in ctx->resident plus a pinned mirror of a round's weights,
 * losses and gradients; lr_open returns MIEB_ERR_OOM when it exceeds the budget or the
 * allocator says no (the caller retries with fewer problems). lr_close(NULL) is a no-op.
 */
mieb_status mieb_cuda_lr_open(struct mieb_cuda_ctx *ctx, const float *X, const int64_t *y, int64_t n_problems,
                              int64_t n, int64_t D, int64_t K, struct mieb_lr_set **out);
mieb_status mieb_cuda_lr_eval(struct mieb_cuda_ctx *ctx, struct mieb_lr_set *s, int64_t n_active,
                              const int64_t *which, const float *wt, float *lossv, float *grad);
void mieb_cuda_lr_close(struct mieb_cuda_ctx *ctx, struct mieb_lr_set *s);
/**
 * lr_predict (backend.h) on the device (cuda_logreg_predict.c): X streamed in budget-sized
 * chunks; MIEB_ERR_TOO_LARGE when even one row at a time exceeds the budget or the
 * allocator (host/dispatch then runs the CPU backend's).
 */
mieb_status mieb_cuda_lr_predict(struct mieb_cuda_ctx *ctx, const float *coef, const float *intercept,
                                 int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
