/**
 * cuda_score_pairs.c - score_pairs on the GPU: similarities of explicit (query, doc)
 * pairs (mteb's top_ranked candidate lists).
 *
 * The corpus block may not fit the device, so pairs are grouped by corpus tile on the
 * host (a counting sort), each tile with pairs is uploaded once, and its pairs are
 * scored in batches by kernels/pair_dot.cu or kernels/pair_maxsim.cu. Results are
 * scattered back to the caller's order. Pairs are few compared with a full search, so
 * each batch simply synchronises.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "cuda_check.h"
#include "pair_dot.cuh"
#include "pair_maxsim.cuh"

struct pair_views {
    float *d_rows, *p_rows;     /* tile rows */
    int64_t *d_off, *p_off;     /* tile offsets (MaxSim) */
    int64_t *d_qi, *d_di, *p_qi, *p_di;
    float *d_out, *p_out;
};

static mieb_status carve(struct mieb_cuda_ctx *ctx, const struct mieb_cuda_plan_in *in,
                         const struct mieb_cuda_plan *p, struct pair_views *v)
{
    struct mieb_cuda_pool *dev = &ctx->scratch, *pin = &ctx->staging;
    size_t rows_b = (size_t)p->d_tokens * (size_t)in->dim * sizeof(float);
    size_t off_b = (size_t)(p->d_tile + 1) * sizeof(int64_t);
    size_t idx_b = (size_t)p->pair_batch * sizeof(int64_t), out_b = (size_t)p->pair_batch * sizeof(float);

    memset(v, 0, sizeof *v);
    v->d_rows = mieb_cuda_pool_take(dev, rows_b);
    v->p_rows = mieb_cuda_pool_take(pin, rows_b);
    if (in->maxsim) {
        v->d_off = mieb_cuda_pool_take(dev, off_b);
        v->p_off = mieb_cuda_pool_take(pin, off_b);
    }
    v->d_qi = mieb_cuda_pool_take(dev, idx_b);
    v->d_di = mieb_cuda_pool_take(dev, idx_b);
    v->d_out = mieb_cuda_pool_take(dev, out_b);
    v->p_qi = mieb_cuda_pool_take(pin, idx_b);
    v->p_di = mieb_cuda_pool_take(pin, idx_b);
    v->p_out = mieb_cuda_pool_take(pin, out_b);
    if (!v->d_rows || !v->p_rows || (in->maxsim && (!v->d_off || !v->p_off)) || !v->d_qi || !v->d_di || !v->d_out ||
        !v->p_qi || !v->p_di || !v->p_out)
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda score_pairs: the plan's pools are smaller than its views");
    return MIEB_OK;
}

/* Upload tile t's rows (and rebased offsets) into the device slot, synchronously. */
static mieb_status upload_tile(struct mieb_cuda_ctx *ctx, const struct mieb_vecs *docs, int maxsim,
                               const struct mieb_cuda_tile *t, struct pair_views *v)
{
    size_t bytes = (size_t)(t->r1 - t->r0) * (size_t)docs->dim * sizeof(float);
    if (bytes) {
        memcpy(v->p_rows, docs->data + t->r0 * docs->dim, bytes);
        MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_rows, v->p_rows, bytes, cudaMemcpyHostToDevice, ctx->stream));
    }
    if (maxsim) {
        for (int64_t j = 0; j <= t->i1 - t->i0; j++)
            v->p_off[j] = docs->offsets[t->i0 + j] - t->r0;
        MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_off, v->p_off, sizeof(int64_t) * (size_t)(t->i1 - t->i0 + 1),
                                        cudaMemcpyHostToDevice, ctx->stream));
    }
    /* the pinned slot is refilled for the next tile only after this copy */
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return MIEB_OK;
}

/* Score pairs order[0 .. n) (all in tile t) and scatter the results into out. */
static mieb_status score_batch(struct mieb_cuda_ctx *ctx, const struct mieb_qset *qs, const struct mieb_cuda_tile *t,
                               struct pair_views *v, const int64_t *order, int64_t n, const int64_t *qi,
                               const int64_t *di, float *out)
{
    for (int64_t j = 0; j < n; j++) {
        v->p_qi[j] = qi[order[j]];
        v->p_di[j] = di[order[j]] - t->i0; /* row (or item) within the tile */
    }
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_qi, v->p_qi, sizeof(int64_t) * (size_t)n, cudaMemcpyHostToDevice, ctx->stream));
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v->d_di, v->p_di, sizeof(int64_t) * (size_t)n, cudaMemcpyHostToDevice, ctx->stream));
    if (qs->sim == MIEB_SIM_MAXSIM)
        MIEB_TRY(mieb_cuda_pair_maxsim(mieb_cuda_ks(ctx), qs->d_data, qs->d_offsets, v->d_rows, v->d_off, qs->dim,
                                       v->d_qi, v->d_di, n, v->d_out));
    else
        MIEB_TRY(mieb_cuda_pair_dot(mieb_cuda_ks(ctx), qs->d_data, v->d_rows, qs->dim, v->d_qi, v->d_di, n, v->d_out));
    MIEB_CUDA_CHECK(cudaMemcpyAsync(v->p_out, v->d_out, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost, ctx->stream));
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    for (int64_t j = 0; j < n; j++)
        out[order[j]] = v->p_out[j];
    return MIEB_OK;
}

/* Tile index of item `d` given the tiles' first items (ascending, n_tiles of them). */
static int64_t tile_of(const int64_t *start, int64_t n_tiles, int64_t d)
{
    int64_t lo = 0, hi = n_tiles - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (start[mid] <= d)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

mieb_status mieb_cuda_score_pairs(struct mieb_cuda_ctx *ctx, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                  int64_t n_pairs, const int64_t *qi, const int64_t *di, float *out)
{
    const int maxsim = qs->sim == MIEB_SIM_MAXSIM;
    struct mieb_cuda_plan_in in;
    mieb_status st = mieb_cuda_block_plan_in(qs, docs, &in);
    if (st != MIEB_OK)
        return st;
    if (n_pairs <= 0)
        return MIEB_OK;
    if (!qi || !di || !out)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: score_pairs without pair arrays");
    for (int64_t p = 0; p < n_pairs; p++)
        if (qi[p] < 0 || qi[p] >= qs->n || di[p] < 0 || di[p] >= docs->n)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: pair %lld (%lld, %lld) out of range", (long long)p,
                             (long long)qi[p], (long long)di[p]);

    in.n_pairs = n_pairs;
    struct mieb_cuda_plan p;
    struct pair_views v;
    MIEB_TRY(mieb_cuda_plan_reserve(ctx, &in, 1, &p));
    MIEB_TRY(carve(ctx, &in, &p, &v));

    /* Tiles of the block, then the pairs grouped by tile (counting sort, stable). */
    int64_t n_tiles = 0, cap = 16;
    int64_t *start = malloc(sizeof(int64_t) * (size_t)cap);
    int64_t *tile = malloc(sizeof(int64_t) * (size_t)n_pairs);
    int64_t *order = malloc(sizeof(int64_t) * (size_t)n_pairs);
    int64_t *first = NULL;
    struct mieb_cuda_tile t;
    if (!start || !tile || !order) {
        st = mieb_fail(MIEB_ERR_OOM, "cuda score_pairs: %lld pairs", (long long)n_pairs);
        goto done;
    }
    for (int64_t i0 = 0; i0 < docs->n; i0 = t.i1) {
        mieb_cuda_next_tile(docs, maxsim, &p, i0, &t);
        if (n_tiles == cap) {
            int64_t *s2 = realloc(start, sizeof(int64_t) * (size_t)(cap * 2));
            if (!s2) {
                st = mieb_fail(MIEB_ERR_OOM, "cuda score_pairs: tile list");
                goto done;
            }
            start = s2;
            cap *= 2;
        }
        start[n_tiles++] = i0;
    }
    first = calloc((size_t)n_tiles + 1, sizeof(int64_t));
    if (!first) {
        st = mieb_fail(MIEB_ERR_OOM, "cuda score_pairs: tile counts");
        goto done;
    }
    for (int64_t q = 0; q < n_pairs; q++) {
        tile[q] = tile_of(start, n_tiles, di[q]);
        first[tile[q] + 1]++;
    }
    for (int64_t i = 0; i < n_tiles; i++)
        first[i + 1] += first[i];
    {
        int64_t *pos = malloc(sizeof(int64_t) * (size_t)(n_tiles + 1));
        if (!pos) {
            st = mieb_fail(MIEB_ERR_OOM, "cuda score_pairs: tile positions");
            goto done;
        }
        memcpy(pos, first, sizeof(int64_t) * (size_t)(n_tiles + 1));
        for (int64_t q = 0; q < n_pairs; q++)
            order[pos[tile[q]]++] = q;
        free(pos);
    }

    for (int64_t i = 0; i < n_tiles && st == MIEB_OK; i++) {
        if (first[i + 1] == first[i])
            continue; /* no pair reads this tile: skip its upload */
        mieb_cuda_next_tile(docs, maxsim, &p, start[i], &t);
        st = upload_tile(ctx, docs, maxsim, &t, &v);
        for (int64_t b = first[i]; b < first[i + 1] && st == MIEB_OK; b += p.pair_batch) {
            int64_t n = first[i + 1] - b < p.pair_batch ? first[i + 1] - b : p.pair_batch;
            st = score_batch(ctx, qs, &t, &v, order + b, n, qi, di, out);
        }
    }
done:
    if (st != MIEB_OK && cudaStreamSynchronize(ctx->stream) != cudaSuccess)
        (void)cudaGetLastError();
    free(start);
    free(tile);
    free(order);
    free(first);
    return st;
}
