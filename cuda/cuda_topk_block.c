/**
 * cuda_topk_block.c - topk_block on the GPU: stream a corpus block through the device in
 * tiles and keep each query's k best (score, index) pairs.
 *
 * Per query group (normally all queries):
 *   for each corpus tile t (slot b = t % 2):
 *     host:   wait until slot b's previous upload finished, copy the tile's rows into
 *             pinned slot b (this overlaps the GPU computing tile t-1)
 *     copy:   wait until compute released device slot b, upload, record ev_h2d[b]
 *     stream: wait ev_h2d[b]; per query chunk S = Q[chunk] . D[tile]^T (MaxSim: token
 *             GEMM, then the MaxSim reduction); merge S into the running top-k state
 *             (kernels/topk.cu); record ev_done[b]
 *   sort each query's kept keys (Thrust), download them through a pinned buffer and
 *   decode them into (score, index) rows on the host.
 * With floors (topk_block_floor) each query's threshold starts at its floor's key instead
 * of 0, so from the first tile on only documents scoring at least the floor are kept and
 * the kernel compacts the few that pass instead of selecting over whole tiles.
 * The kept keys encode the tie rule (kernels/topk_key.h), so the result is the CPU
 * reference's for equal scores, whatever the tiling.
 *
 * With the int8 screen (cuda_screen.c, docs/SCREEN_INT8.md) a chunk's scores are made
 * differently: each tile's rows are quantised on the device (kernels/screen_int8.cu), the
 * integer scores come from cuBLAS' int8 GEMM, each becomes the interval of its exact score,
 * the lower bounds' running k-th largest per query (kernels/topk.cu on the lower bounds)
 * with the floor gives tau, and only the pairs whose upper bound reaches tau get their
 * exact score (the fixed order, the CPU's bits); the others are -inf, below the state's
 * starting threshold. The top-k kernel then runs as without the screen, on the same bits
 * for every document that can be in the best k. A group whose candidates outgrow the list
 * (near-ties) or with a document row out of the bound's range is handed back and scored the
 * exact way, said under -v.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "cuda_check.h"
#include "gemm.h"
#include "../host/math/screen_int8_math.h"
#include "maxsim.cuh"
#include "screen_int8.cuh"
#include "thrust_shim.h"
#include "topk.cuh"
#include "topk_key.h"

/* Views carved from the pools for one call (see mieb_cuda_plan_topk for the sizes). */
struct topk_views {
    uint64_t *state[2];           /* [group, ke] kept keys, ping-pong per tile */
    uint64_t *thr;                /* [group] per-row thresholds */
    void *sort_scratch;
    size_t sort_bytes;
    float *d_rows[MIEB_CUDA_N_SLOTS];    /* device slot: tile rows [d_tokens, dim] */
    int64_t *d_off[MIEB_CUDA_N_SLOTS];   /* device slot: tile offsets, MaxSim */
    float *p_rows[MIEB_CUDA_N_SLOTS];    /* pinned slot */
    int64_t *p_off[MIEB_CUDA_N_SLOTS];
    float *scores;                /* [q_chunk, d_tile] */
    float *tok;                   /* [q_tokens, d_tokens], MaxSim */
    uint64_t *p_result;           /* [result_rows, ke] pinned */
    /* the int8 screen (NULL without it) */
    float *lb;                    /* [q_chunk, ld] lower bounds */
    uint32_t *pairs;              /* [pair_cap] candidate list */
    uint32_t pair_cap;
    int8_t *d8;                   /* [d_tile, kp] the tile's int8 rows */
    float *sd, *nd, *rnd;         /* [d_tile] their scales and norm bounds */
    struct mieb_screen_i8_counts *counts;
    uint64_t *lb_state[2];        /* [group, ke] the lower bounds' running top-k */
    uint64_t *thr_lb;             /* [group] its thresholds: the k-th largest lower bound */
    float *tau_floor;             /* [group] each query's floor (-inf without one) */
};

/* The screen's views (carve's second half). */
static int carve_screen(struct mieb_cuda_ctx *ctx, const struct mieb_cuda_plan_in *in,
                        const struct mieb_cuda_plan *p, struct topk_views *v)
{
    struct mieb_cuda_pool *dev = &ctx->scratch;
    size_t keys = (size_t)p->group * (size_t)in->ke, d = (size_t)p->d_tile;
    v->pair_cap = (uint32_t)p->pair_cap;
    if (ctx->screen_pair_cap && ctx->screen_pair_cap < v->pair_cap)
        v->pair_cap = ctx->screen_pair_cap;
    v->lb = mieb_cuda_pool_take(dev, (size_t)p->q_chunk * (size_t)p->ld * sizeof(float));
    v->pairs = mieb_cuda_pool_take(dev, (size_t)p->pair_cap * sizeof(uint32_t));
    v->d8 = mieb_cuda_pool_take(dev, d * (size_t)in->kp);
    v->sd = mieb_cuda_pool_take(dev, d * sizeof(float));
    v->nd = mieb_cuda_pool_take(dev, d * sizeof(float));
    v->rnd = mieb_cuda_pool_take(dev, d * sizeof(float));
    v->counts = mieb_cuda_pool_take(dev, sizeof(struct mieb_screen_i8_counts));
    v->lb_state[0] = mieb_cuda_pool_take(dev, keys * sizeof(uint64_t));
    v->lb_state[1] = mieb_cuda_pool_take(dev, keys * sizeof(uint64_t));
    v->thr_lb = mieb_cuda_pool_take(dev, (size_t)p->group * sizeof(uint64_t));
    v->tau_floor = mieb_cuda_pool_take(dev, (size_t)p->group * sizeof(float));
    return v->lb && v->pairs && v->d8 && v->sd && v->nd && v->rnd && v->counts && v->lb_state[0] &&
           v->lb_state[1] && v->thr_lb && v->tau_floor;
}

static mieb_status carve(struct mieb_cuda_ctx *ctx, const struct mieb_cuda_plan_in *in,
                         const struct mieb_cuda_plan *p, struct topk_views *v)
{
    struct mieb_cuda_pool *dev = &ctx->scratch, *pin = &ctx->staging;
    size_t keys = (size_t)p->group * (size_t)in->ke;
    size_t rows_b = mieb_cuda_aligned((size_t)p->d_tokens * (size_t)in->dim * sizeof(float));
    size_t off_b = (size_t)(p->d_tile + 1) * sizeof(int64_t);

    memset(v, 0, sizeof *v);
    v->state[0] = mieb_cuda_pool_take(dev, keys * sizeof(uint64_t));
    v->state[1] = mieb_cuda_pool_take(dev, keys * sizeof(uint64_t));
    v->thr = mieb_cuda_pool_take(dev, (size_t)p->group * sizeof(uint64_t));
    v->sort_bytes = mieb_cuda_aligned(mieb_cuda_segsort_scratch_bytes(p->group, in->ke));
    v->sort_scratch = v->sort_bytes ? mieb_cuda_pool_take(dev, v->sort_bytes) : NULL;
    int ok = v->state[0] && v->state[1] && v->thr && (v->sort_bytes == 0 || v->sort_scratch);
    for (int s = 0; s < MIEB_CUDA_N_SLOTS; s++) {
        v->d_rows[s] = mieb_cuda_pool_take(dev, rows_b);
        v->p_rows[s] = mieb_cuda_pool_take(pin, rows_b);
        ok = ok && v->d_rows[s] && v->p_rows[s];
        if (in->maxsim) {
            v->d_off[s] = mieb_cuda_pool_take(dev, off_b);
            v->p_off[s] = mieb_cuda_pool_take(pin, off_b);
            ok = ok && v->d_off[s] && v->p_off[s];
        }
    }
    v->scores = mieb_cuda_pool_take(dev, (size_t)p->q_chunk * (size_t)p->ld * sizeof(float));
    if (in->maxsim)
        v->tok = mieb_cuda_pool_take(dev, (size_t)p->q_tokens * (size_t)p->d_tokens * sizeof(float));
    v->p_result = mieb_cuda_pool_take(pin, (size_t)p->result_rows * (size_t)in->ke * sizeof(uint64_t));
    ok = ok && v->scores && (!in->maxsim || v->tok) && v->p_result && (!in->screen || carve_screen(ctx, in, p, v));
    if (!ok)
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda topk_block: the plan's pools are smaller than its views");
    return MIEB_OK;
}

/* Host: fill pinned slot b with tile t; then queue its upload on the copy stream. */
static mieb_status stage_tile(struct mieb_cuda_ctx *ctx, const struct mieb_vecs *docs, int maxsim,
                              const struct mieb_cuda_tile *t, struct topk_views *v, int b)
{
    size_t bytes = (size_t)(t->r1 - t->r0) * (size_t)docs->dim * sizeof(float);
    /* the pinned slot is free once its previous upload has finished */
    MIEB_CUDA_CHECK(cudaEventSynchronize(ctx->ev_h2d[b]));
    if (bytes)
        memcpy(v->p_rows[b], docs->data + t->r0 * docs->dim, bytes);
    if (maxsim)
        for (int64_t j = 0; j <= t->i1 - t->i0; j++)
            v->p_off[b][j] = docs->offsets[t->i0 + j] - t->r0;
    /* the device slot is free once the compute that read it has finished */
    MIEB_CUDA_CHECK(cudaStreamWaitEvent(ctx->copy_stream, ctx->ev_done[b], 0));
    if (bytes)
        MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_rows[b], v->p_rows[b], bytes, cudaMemcpyHostToDevice, ctx->copy_stream));
    if (maxsim)
        MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_off[b], v->p_off[b], sizeof(int64_t) * (size_t)(t->i1 - t->i0 + 1),
                                        cudaMemcpyHostToDevice, ctx->copy_stream));
    MIEB_CUDA_CHECK(cudaEventRecord(ctx->ev_h2d[b], ctx->copy_stream));
    MIEB_CUDA_CHECK(cudaStreamWaitEvent(ctx->stream, ctx->ev_h2d[b], 0));
    return MIEB_OK;
}

/* Next query chunk [qa, qb) of the group ending at g1. */
static int64_t chunk_end(const struct mieb_qset *qs, const struct mieb_cuda_plan *p, int64_t qa, int64_t g1)
{
    int64_t qb = qa + p->q_chunk < g1 ? qa + p->q_chunk : g1;
    if (qs->sim != MIEB_SIM_MAXSIM)
        return qb;
    const int64_t *off = qs->h_offsets;
    int64_t e = qa + 1; /* the plan guarantees q_tokens >= the longest query */
    while (e < qb && off[e + 1] - off[qa] <= p->q_tokens)
        e++;
    return e;
}

/* Scores of query chunk [qa, qb) against tile t (in slot b) into v->scores [qb-qa, i1-i0]. */
static mieb_status score_chunk(struct mieb_cuda_ctx *ctx, const struct mieb_qset *qs, const struct mieb_cuda_tile *t,
                               struct topk_views *v, int b, int64_t qa, int64_t qb)
{
    const int64_t dim = qs->dim, nd = t->i1 - t->i0;
    if (qs->sim != MIEB_SIM_MAXSIM)
        return mieb_cuda_scores_nt(ctx, qb - qa, nd, dim, qs->d_data + qa * dim, dim, v->d_rows[b], dim, v->scores,
                                   nd);
    const int64_t qr0 = qs->h_offsets[qa], qr1 = qs->h_offsets[qb], nr = t->r1 - t->r0;
    /* tok[query token, doc token] = Q_tokens . D_tokens^T for the chunk and the tile */
    MIEB_TRY(mieb_cuda_scores_nt(ctx, qr1 - qr0, nr, dim, qs->d_data + qr0 * dim, dim, v->d_rows[b], dim, v->tok,
                                 nr > 0 ? nr : 1));
    return mieb_cuda_maxsim(mieb_cuda_ks(ctx), v->tok, nr, qs->d_offsets + qa, qr0, qb - qa, v->d_off[b], nd,
                            v->scores, nd);
}

/* Sorted keys of group rows [0, g) -> out rows g0.., columns [0, ke) decoded, [ke, k) padded;
 * with floors, out_n[row] = the decoded row's entries not below its floor. */
static mieb_status download(struct mieb_cuda_ctx *ctx, const struct mieb_cuda_plan *p, const uint64_t *keys,
                            int64_t g0, int64_t g, int64_t ke, int64_t k, struct topk_views *v, const float *floor,
                            float *out_s, int64_t *out_i, int64_t *out_n)
{
    for (int64_t r0 = 0; r0 < g; r0 += p->result_rows) {
        int64_t rr = g - r0 < p->result_rows ? g - r0 : p->result_rows;
        MIEB_CUDA_CHECK(cudaMemcpyAsync(v->p_result, keys + r0 * ke, sizeof(uint64_t) * (size_t)(rr * ke),
                                        cudaMemcpyDeviceToHost, ctx->stream));
        MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
        for (int64_t r = 0; r < rr; r++) {
            const uint64_t *src = v->p_result + r * ke;
            float *os = out_s + (g0 + r0 + r) * k;
            int64_t *oi = out_i + (g0 + r0 + r) * k;
            for (int64_t j = 0; j < ke; j++) {
                os[j] = src[j] ? mieb_topk_key_score(src[j]) : -INFINITY;
                oi[j] = src[j] ? mieb_topk_key_index(src[j]) : -1;
            }
            for (int64_t j = ke; j < k; j++) {
                os[j] = -INFINITY;
                oi[j] = -1;
            }
            if (out_n)
                out_n[g0 + r0 + r] = mieb_topk_floor_head(os, ke, floor ? floor[g0 + r0 + r] : -INFINITY);
        }
    }
    return MIEB_OK;
}

/* The group's starting thresholds: 0, or each query's floor key. With the screen, at least
   the largest key of a -inf score (the documents out of reach score -inf, every exact score is
   finite), and each query's floor for tau (-inf without one, as the CPU screen starts). */
static mieb_status init_thresholds(struct mieb_cuda_ctx *ctx, struct topk_views *v, const float *floor, int64_t g0,
                                   int64_t g, int screen)
{
    if (!floor && !screen) {
        MIEB_CUDA_CHECK(cudaMemsetAsync(v->thr, 0, sizeof(uint64_t) * (size_t)g, ctx->stream));
        return MIEB_OK;
    }
    uint64_t *h = malloc(sizeof(uint64_t) * (size_t)g);
    float *f = malloc(sizeof(float) * (size_t)g);
    if (!h || !f) {
        free(h);
        free(f);
        return mieb_fail(MIEB_ERR_OOM, "cuda topk: %lld floor keys", (long long)g);
    }
    const uint64_t out_of_reach = mieb_topk_key(-INFINITY, 0);
    for (int64_t r = 0; r < g; r++) {
        h[r] = floor ? mieb_topk_floor_thr(floor[g0 + r]) : 0;
        if (screen && h[r] < out_of_reach)
            h[r] = out_of_reach;
        f[r] = floor && !isnan(floor[g0 + r]) ? floor[g0 + r] : -INFINITY;
    }
    /* from pageable memory the call returns once h is staged, so h may go at once */
    cudaError_t e = cudaMemcpyAsync(v->thr, h, sizeof(uint64_t) * (size_t)g, cudaMemcpyHostToDevice, ctx->stream);
    if (e == cudaSuccess && screen)
        e = cudaMemcpyAsync(v->tau_floor, f, sizeof(float) * (size_t)g, cudaMemcpyHostToDevice, ctx->stream);
    free(h);
    free(f);
    MIEB_CUDA_CHECK(e);
    return MIEB_OK;
}

/* The screen's scores of query chunk [qa, qb) against tile t (slot b, its int8 rows in v->d8)
   into v->scores [qb - qa, ld]: exact where the upper bound reaches tau, -inf elsewhere. */
static mieb_status screen_chunk(struct mieb_cuda_ctx *ctx, const struct mieb_qset *qs, const struct mieb_cuda_tile *t,
                                struct topk_views *v, int b, int64_t qa, int64_t qb, int64_t g0, int64_t ke, int cur,
                                int64_t ld)
{
    const struct mieb_kstream ks = mieb_cuda_ks(ctx);
    const int64_t nd = t->i1 - t->i0, nr = qb - qa, off = (qa - g0) * ke;
    MIEB_TRY(mieb_cuda_gemm_i8_nt(ctx, nr, nd, qs->kp, qs->d_q8 + qa * qs->kp, qs->kp, v->d8, qs->kp,
                                  (int32_t *)v->scores, ld));
    MIEB_TRY(mieb_cuda_screen_i8_bound(ks, v->scores, v->lb, ld, nr, nd, qs->d_sq + qa, qs->d_alpha + qa, qs->d_beta + qa,
                                 v->sd, v->nd, v->rnd, mieb_screen_i8_s_abs(qs->dim, 0)));
    /* tau's k-th largest lower bound, this tile's included */
    MIEB_TRY(mieb_cuda_topk_update(ks, v->lb, ld, nr, nd, t->i0, v->lb_state[cur] + off, v->lb_state[1 - cur] + off,
                                   v->thr_lb + (qa - g0), ke));
    MIEB_CUDA_CHECK(cudaMemsetAsync(&v->counts->count, 0, sizeof v->counts->count, ctx->stream));
    MIEB_TRY(mieb_cuda_screen_i8_select(ks, v->scores, ld, nr, nd, v->tau_floor + (qa - g0), v->thr_lb + (qa - g0),
                                  v->pairs, v->pair_cap, v->counts));
    return mieb_cuda_screen_i8_rescore(ks, qs->d_data + qa * qs->dim, v->d_rows[b], qs->dim, v->pairs, v->pair_cap,
                                 v->counts, v->scores, ld);
}

/* After a screened group: *handed_back = 1 when its candidates outgrew the list or a document
   row was out of the bound's range (its lists are then not the exact ones). */
static mieb_status screen_verdict(struct mieb_cuda_ctx *ctx, struct topk_views *v, int64_t g, int64_t nd,
                                  int *handed_back)
{
    struct mieb_screen_i8_counts hc;
    MIEB_CUDA_CHECK(cudaMemcpyAsync(&hc, v->counts, sizeof hc, cudaMemcpyDeviceToHost, ctx->stream));
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    *handed_back = hc.overflow || hc.bad;
    ctx->screen_stats.groups++;
    ctx->screen_stats.pairs += g * nd;
    ctx->screen_stats.scored += (int64_t)hc.scored;
    if (*handed_back) {
        ctx->screen_stats.fallbacks++;
        MIEB_LOGD("cuda top-k: int8 screen: %lld queries x %lld items handed to the exact way (%s)", (long long)g,
                  (long long)nd,
                  hc.bad ? "a row's norm is beyond the bound's range" : "more candidates than the list holds");
    }
    return MIEB_OK;
}

/* One query group [g0, g0 + g) over the block, the exact way or (screen) the int8 screen's;
   a screened group that must go the exact way sets *handed_back and writes nothing. */
static mieb_status run_group(struct mieb_cuda_ctx *ctx, const struct mieb_qset *qs, const struct mieb_vecs *docs,
                             const struct mieb_cuda_plan *p, struct topk_views *v, int64_t g0, int64_t g, int64_t ke,
                             int64_t k, const float *floor, float *out_s, int64_t *out_i, int64_t *out_n, int screen,
                             int *handed_back)
{
    const int maxsim = qs->sim == MIEB_SIM_MAXSIM;
    int cur = 0;
    *handed_back = 0;
    MIEB_CUDA_CHECK(cudaMemsetAsync(v->state[cur], 0, sizeof(uint64_t) * (size_t)(g * ke), ctx->stream));
    MIEB_TRY(init_thresholds(ctx, v, floor, g0, g, screen));
    if (screen) {
        MIEB_CUDA_CHECK(cudaMemsetAsync(v->lb_state[cur], 0, sizeof(uint64_t) * (size_t)(g * ke), ctx->stream));
        MIEB_CUDA_CHECK(cudaMemsetAsync(v->thr_lb, 0, sizeof(uint64_t) * (size_t)g, ctx->stream));
        MIEB_CUDA_CHECK(cudaMemsetAsync(v->counts, 0, sizeof *v->counts, ctx->stream));
    }
    struct mieb_cuda_tile t;
    int64_t n_tiles = 0;
    for (int64_t i0 = 0; i0 < docs->n; i0 = t.i1, n_tiles++) {
        int b = (int)(n_tiles % MIEB_CUDA_N_SLOTS);
        mieb_cuda_next_tile(docs, maxsim, p, i0, &t);
        MIEB_TRY(stage_tile(ctx, docs, maxsim, &t, v, b));
        const int64_t nd = t.i1 - t.i0, ld = screen ? (nd + 3) / 4 * 4 : nd;
        if (screen)
            MIEB_TRY(mieb_cuda_screen_i8_quantise(mieb_cuda_ks(ctx), v->d_rows[b], nd, qs->dim, qs->kp, v->d8, v->sd, v->nd,
                                            v->rnd, NULL, v->counts));
        for (int64_t qa = g0, qb; qa < g0 + g; qa = qb) {
            qb = chunk_end(qs, p, qa, g0 + g);
            if (screen)
                MIEB_TRY(screen_chunk(ctx, qs, &t, v, b, qa, qb, g0, ke, cur, ld));
            else
                MIEB_TRY(score_chunk(ctx, qs, &t, v, b, qa, qb));
            int64_t off = (qa - g0) * ke;
            MIEB_TRY(mieb_cuda_topk_update(mieb_cuda_ks(ctx), v->scores, ld, qb - qa, nd, t.i0, v->state[cur] + off,
                                           v->state[1 - cur] + off, v->thr + (qa - g0), ke));
        }
        MIEB_CUDA_CHECK(cudaEventRecord(ctx->ev_done[b], ctx->stream));
        cur = 1 - cur;
    }
    if (screen) {
        MIEB_TRY(screen_verdict(ctx, v, g, docs->n, handed_back));
        if (*handed_back)
            return MIEB_OK;
    }
    MIEB_TRY(mieb_cuda_segsort_u64_desc(ctx, v->state[cur], g, ke, v->sort_scratch, v->sort_bytes));
    return download(ctx, p, v->state[cur], g0, g, ke, k, v, floor, out_s, out_i, out_n);
}

/* Plan and reserve; a screened plan that does not fit, or (under auto) whose tiles hold too
   few documents per kept entry (its lists would fill with the k alone), is planned again
   without the screen. */
static mieb_status plan_screen(struct mieb_cuda_ctx *ctx, struct mieb_cuda_plan_in *in, int64_t ke,
                               struct mieb_cuda_plan *p)
{
    mieb_status st = mieb_cuda_plan_reserve(ctx, in, 0, p);
    if (!in->screen || (st == MIEB_OK && (ctx->screen == 2 || p->d_tile >= ke * MIEB_CUDA_SCREEN_MIN_DOCS_PER_K)))
        return st;
    if (st != MIEB_OK && st != MIEB_ERR_TOO_LARGE && st != MIEB_ERR_OOM)
        return st;
    mieb_clear_error(); /* the exact way needs less memory than the screen */
    in->screen = 0;
    return mieb_cuda_plan_reserve(ctx, in, 0, p);
}

static mieb_status topk_block(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, const struct mieb_vecs *docs,
                              int64_t k, const float *floor, float *out_scores, int64_t *out_idx, int64_t *out_n)
{
    const int maxsim = qs->sim == MIEB_SIM_MAXSIM;
    struct mieb_cuda_plan_in in;
    mieb_status st = mieb_cuda_block_plan_in(qs, docs, &in);
    if (st != MIEB_OK)
        return st;
    if (docs->n > (int64_t)MIEB_TOPK_MAX_INDEX + 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: a corpus block holds at most %lld items, got %lld",
                         (long long)MIEB_TOPK_MAX_INDEX + 1, (long long)docs->n);
    if (out_n && (k <= 0 || docs->n == 0)) /* nothing to keep: as the wrapper counts it */
        for (int64_t q = 0; q < qs->n; q++)
            out_n[q] = 0;
    if (k <= 0 || qs->n == 0)
        return MIEB_OK;
    if (!out_scores || !out_idx)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: topk_block without output arrays");
    const int64_t ke = k < docs->n ? k : docs->n;
    if (ke == 0) { /* empty block: every slot is padding */
        for (int64_t i = 0; i < qs->n * k; i++) {
            out_scores[i] = -INFINITY;
            out_idx[i] = -1;
        }
        return MIEB_OK;
    }

    in.ke = ke;
    struct mieb_cuda_plan p;
    struct topk_views v;
    if (mieb_cuda_screen_wanted(ctx, qs, docs->n, ke)) {
        MIEB_TRY(mieb_cuda_screen_queries(ctx, qs));
        in.screen = qs->i8_state == 1;
        in.kp = qs->kp;
    }
    MIEB_TRY(plan_screen(ctx, &in, ke, &p));
    MIEB_TRY(carve(ctx, &in, &p, &v));
    const int64_t groups0 = ctx->screen_stats.groups, fallbacks0 = ctx->screen_stats.fallbacks;
    const int64_t pairs0 = ctx->screen_stats.pairs, scored0 = ctx->screen_stats.scored;
    MIEB_LOGD("cuda topk: %lld queries x %lld items, k %lld: groups of %lld, tiles of %lld items (%lld rows), "
              "chunks of %lld queries (%lld rows), %.1f MiB device, %.1f MiB pinned",
              (long long)qs->n, (long long)docs->n, (long long)ke, (long long)p.group, (long long)p.d_tile,
              (long long)p.d_tokens, (long long)p.q_chunk, (long long)(maxsim ? p.q_tokens : p.q_chunk),
              (double)p.dev_bytes / 1048576.0, (double)p.pin_bytes / 1048576.0);

    for (int64_t g0 = 0; g0 < qs->n && st == MIEB_OK; g0 += p.group) {
        int64_t g = qs->n - g0 < p.group ? qs->n - g0 : p.group;
        int handed_back = 0;
        st = run_group(ctx, qs, docs, &p, &v, g0, g, ke, k, floor, out_scores, out_idx, out_n, in.screen,
                       &handed_back);
        if (st == MIEB_OK && handed_back)
            st = run_group(ctx, qs, docs, &p, &v, g0, g, ke, k, floor, out_scores, out_idx, out_n, 0, &handed_back);
    }
    if (st == MIEB_OK && in.screen) {
        ctx->screen_stats.blocks++;
        int64_t pairs = ctx->screen_stats.pairs - pairs0;
        MIEB_LOGD("cuda top-k: %lld x %lld screened (int8): %.2f%% of pairs scored exactly, %lld of %lld query "
                  "groups handed to the exact way", (long long)qs->n, (long long)docs->n,
                  pairs ? 100.0 * (double)(ctx->screen_stats.scored - scored0) / (double)pairs : 0.0,
                  (long long)(ctx->screen_stats.fallbacks - fallbacks0),
                  (long long)(ctx->screen_stats.groups - groups0));
    }
    if (st != MIEB_OK) {
        /* leave no queued work reading the pools or the caller's memory */
        if (cudaStreamSynchronize(ctx->copy_stream) != cudaSuccess || cudaStreamSynchronize(ctx->stream) != cudaSuccess)
            (void)cudaGetLastError();
    }
    return st;
}

mieb_status mieb_cuda_topk_block(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                 int64_t k, float *out_scores, int64_t *out_idx)
{
    return topk_block(ctx, qs, docs, k, NULL, out_scores, out_idx, NULL);
}

mieb_status mieb_cuda_topk_block_floor(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                       int64_t k, const float *floor, float *out_scores, int64_t *out_idx,
                                       int64_t *out_n)
{
    if (!out_n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: topk_block_floor without out_n");
    return topk_block(ctx, qs, docs, k, floor, out_scores, out_idx, out_n);
}
