/**
 * cuda_tiling.c - what the CUDA operations share below the operations table (cuda_ops.h):
 * the input checks of a set of vectors, and of a corpus block with the plan input it gives;
 * the next corpus tile under a plan; and planning with the device memory reserved, retried
 * with smaller tiles when the device is out of memory.
 */
#include "cuda_ops.h"

#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"

mieb_status mieb_cuda_check_vecs(const struct mieb_vecs *v, int multi, const char *what, int64_t *max_item_rows)
{
    *max_item_rows = multi ? 0 : 1;
    if (!v || v->n < 0 || v->rows < 0 || v->dim < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: %s: bad shape", what);
    if (v->rows > 0 && !v->data)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: %s: no data", what);
    if (!multi) {
        if (v->offsets)
            return mieb_fail(MIEB_ERR_INVALID_ARG,
                             "cuda backend: %s: multi-vector input needs MaxSim and only MaxSim accepts it", what);
        if (v->rows != v->n)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: %s: %lld rows for %lld items", what,
                             (long long)v->rows, (long long)v->n);
        return MIEB_OK;
    }
    if (!v->offsets)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: %s: MaxSim needs multi-vector input (offsets)", what);
    if (v->offsets[0] != 0 || v->offsets[v->n] != v->rows)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: %s: offsets must run from 0 to %lld", what,
                         (long long)v->rows);
    for (int64_t i = 0; i < v->n; i++) {
        int64_t len = v->offsets[i + 1] - v->offsets[i];
        if (len < 0)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: %s: offsets decrease at item %lld", what,
                             (long long)i);
        if (len > *max_item_rows)
            *max_item_rows = len;
    }
    return MIEB_OK;
}

mieb_status mieb_cuda_block_plan_in(const struct mieb_qset *qs, const struct mieb_vecs *docs,
                                    struct mieb_cuda_plan_in *in)
{
    const int maxsim = qs->sim == MIEB_SIM_MAXSIM;
    int64_t d_max = 0;
    MIEB_TRY(mieb_cuda_check_vecs(docs, maxsim, "corpus block", &d_max));
    if (docs->dim != qs->dim)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cuda backend: query dim %lld != corpus dim %lld",
                         (long long)qs->dim, (long long)docs->dim);
    memset(in, 0, sizeof *in);
    in->maxsim = maxsim;
    in->dim = qs->dim;
    in->nq = qs->n;
    in->q_rows = qs->rows;
    in->q_max = qs->max_item_rows;
    in->nd = docs->n;
    in->d_rows = docs->rows;
    in->d_max = d_max;
    return MIEB_OK;
}

void mieb_cuda_next_tile(const struct mieb_vecs *docs, int maxsim, const struct mieb_cuda_plan *p, int64_t i0,
                         struct mieb_cuda_tile *t)
{
    t->i0 = i0;
    if (!maxsim) {
        t->i1 = i0 + p->d_tile < docs->n ? i0 + p->d_tile : docs->n;
        t->r0 = i0;
        t->r1 = t->i1;
        return;
    }
    /* whole items only; the plan guarantees d_tokens >= the longest item */
    const int64_t *off = docs->offsets;
    int64_t i1 = i0 + 1;
    while (i1 < docs->n && i1 - i0 < p->d_tile && off[i1 + 1] - off[i0] <= p->d_tokens)
        i1++;
    t->i1 = i1;
    t->r0 = off[i0];
    t->r1 = off[i1];
}

mieb_status mieb_cuda_plan_reserve(struct mieb_cuda_ctx *ctx, const struct mieb_cuda_plan_in *in, int pairs,
                                   struct mieb_cuda_plan *p)
{
    size_t budget = mieb_cuda_budget_left(ctx);
    int shrunk_for_oom = 0;
    for (;;) {
        mieb_status st = pairs ? mieb_cuda_plan_pairs(in, budget, p) : mieb_cuda_plan_topk(in, budget, p);
        if (st == MIEB_ERR_TOO_LARGE && shrunk_for_oom)
            return mieb_fail(MIEB_ERR_OOM, "cuda: out of device memory: even the smallest tiles could not be "
                                           "allocated on device %d", ctx->device);
        if (st != MIEB_OK)
            return st;
        st = mieb_cuda_pool_reserve(ctx, &ctx->scratch, p->dev_bytes, "scratch tiles");
        if (st == MIEB_OK)
            st = mieb_cuda_pool_reserve(ctx, &ctx->staging, p->pin_bytes, "pinned staging");
        if (st != MIEB_ERR_OOM)
            return st;
        /* The allocator said no although the budget said yes (other processes, or
         * fragmentation): plan again within half of what failed. */
        size_t failed = ctx->scratch.cap < p->dev_bytes ? p->dev_bytes : p->pin_bytes;
        budget = failed / 2 < budget ? failed / 2 : budget / 2;
        shrunk_for_oom = 1;
        MIEB_LOGW("cuda: retrying with tiles planned for %.1f MiB", (double)budget / 1048576.0);
        if (budget == 0)
            return mieb_fail(MIEB_ERR_OOM, "cuda: out of memory on device %d", ctx->device);
    }
}

/* ---- the operations table ---- */
