/**
 * cuda_plan.c - tile sizes from a byte budget (see cuda_plan.h).
 *
 * Start from the largest sensible tiles, then halve whichever term of the working set
 * is biggest until the sum fits. Halving the biggest term first keeps the GEMMs as large
 * as the budget allows; every step strictly shrinks one size, so the loop ends.
 */
#include "cuda_plan.h"

#include "cuda_ctx.h"
#include "thrust_shim.h"

/* Largest single score or token tile (elements * 4 bytes): big enough to saturate a GPU. */
#define TILE_BYTES_MAX ((size_t)1 << 30)

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t half_up(int64_t x) { return (x + 1) / 2; }
static double mib(size_t b) { return (double)b / 1048576.0; }

size_t mieb_cuda_plan_state_bytes(int64_t group, int64_t ke)
{
    return 2 * mieb_cuda_aligned((size_t)group * (size_t)ke * sizeof(uint64_t)) +
           mieb_cuda_aligned((size_t)group * sizeof(uint64_t));
}

size_t mieb_cuda_plan_slot_bytes(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p)
{
    size_t b = mieb_cuda_aligned((size_t)p->d_tokens * (size_t)in->dim * sizeof(float));
    if (in->maxsim)
        b += mieb_cuda_aligned((size_t)(p->d_tile + 1) * sizeof(int64_t));
    return b;
}

int64_t mieb_cuda_plan_ld(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p)
{
    return in->screen ? (p->d_tile + 3) / 4 * 4 : p->d_tile;
}

int64_t mieb_cuda_plan_pair_cap(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p)
{
    return in->screen ? max64(1, p->q_chunk * mieb_cuda_plan_ld(in, p) / MIEB_CUDA_SCREEN_PAIR_SHARE) : 0;
}

/* sizeof(struct mieb_screen_i8_counts) is 24 bytes: one aligned view */
size_t mieb_cuda_plan_screen_tile_bytes(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p)
{
    if (!in->screen)
        return 0;
    size_t d = (size_t)p->d_tile;
    return mieb_cuda_aligned((size_t)p->q_chunk * (size_t)mieb_cuda_plan_ld(in, p) * sizeof(float)) +
           mieb_cuda_aligned((size_t)mieb_cuda_plan_pair_cap(in, p) * sizeof(uint32_t)) +
           mieb_cuda_aligned(d * (size_t)in->kp) + 3 * mieb_cuda_aligned(d * sizeof(float)) + mieb_cuda_aligned(24);
}

size_t mieb_cuda_plan_screen_group_bytes(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p)
{
    if (!in->screen)
        return 0;
    return mieb_cuda_plan_state_bytes(p->group, in->ke) + mieb_cuda_aligned((size_t)p->group * sizeof(float));
}

/* The four terms of a topk_block working set, in device bytes. */
enum { T_STATE, T_SLOTS, T_SCORES, T_TOKENS, T_COUNT };

static void topk_terms(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p, size_t t[T_COUNT])
{
    t[T_STATE] = mieb_cuda_plan_state_bytes(p->group, in->ke) +
                 mieb_cuda_aligned(mieb_cuda_segsort_scratch_bytes(p->group, in->ke)) +
                 mieb_cuda_plan_screen_group_bytes(in, p);
    t[T_SLOTS] = MIEB_CUDA_N_SLOTS * mieb_cuda_plan_slot_bytes(in, p);
    t[T_SCORES] = mieb_cuda_aligned((size_t)p->q_chunk * (size_t)mieb_cuda_plan_ld(in, p) * sizeof(float)) +
                  mieb_cuda_plan_screen_tile_bytes(in, p);
    t[T_TOKENS] = in->maxsim ? mieb_cuda_aligned((size_t)p->q_tokens * (size_t)p->d_tokens * sizeof(float)) : 0;
}

/* Shrink term `which` by one step; 0 when it is already minimal. */
static int topk_shrink(const struct mieb_cuda_plan_in *in, struct mieb_cuda_plan *p, int which)
{
    switch (which) {
    case T_STATE:
        if (p->group <= 1)
            return 0;
        p->group = half_up(p->group);
        p->q_chunk = min64(p->q_chunk, p->group);
        return 1;
    case T_SLOTS:
        if (in->maxsim && p->d_tokens > in->d_max) {
            p->d_tokens = max64(in->d_max, half_up(p->d_tokens));
            return 1;
        }
        if (p->d_tile <= 1)
            return 0;
        p->d_tile = half_up(p->d_tile);
        if (!in->maxsim)
            p->d_tokens = p->d_tile;
        return 1;
    case T_SCORES:
        if (p->q_chunk > 1) {
            p->q_chunk = half_up(p->q_chunk);
            return 1;
        }
        if (p->d_tile <= 1)
            return 0;
        p->d_tile = half_up(p->d_tile);
        if (!in->maxsim)
            p->d_tokens = p->d_tile;
        return 1;
    case T_TOKENS:
        if (p->q_tokens > in->q_max) {
            p->q_tokens = max64(in->q_max, half_up(p->q_tokens));
            return 1;
        }
        if (p->d_tokens > in->d_max) {
            p->d_tokens = max64(in->d_max, half_up(p->d_tokens));
            return 1;
        }
        return 0;
    }
    return 0;
}

mieb_status mieb_cuda_plan_topk(const struct mieb_cuda_plan_in *in, size_t budget, struct mieb_cuda_plan *p)
{
    const int64_t stage_rows = max64(1, (int64_t)(MIEB_CUDA_STAGE_MAX / ((size_t)in->dim * sizeof(float))));
    *p = (struct mieb_cuda_plan){0};
    p->group = max64(1, in->nq);
    if (in->maxsim) {
        p->q_chunk = min64(p->group, MIEB_CUDA_Q_CHUNK_MAX_MAXSIM);
        p->q_tokens = max64(1, max64(in->q_max, min64(in->q_rows, MIEB_CUDA_Q_TOKENS_MAX)));
        p->d_tile = max64(1, min64(in->nd, MIEB_CUDA_D_TILE_MAX));
        p->d_tokens = max64(1, max64(in->d_max, min64(in->d_rows, stage_rows)));
    } else {
        p->q_chunk = min64(p->group, MIEB_CUDA_Q_CHUNK_MAX);
        p->d_tile = max64(1, min64(in->nd, min64(MIEB_CUDA_D_TILE_MAX, stage_rows)));
        p->d_tokens = p->d_tile;
    }

    for (;;) {
        size_t t[T_COUNT], total = 0;
        topk_terms(in, p, t);
        for (int i = 0; i < T_COUNT; i++)
            total += t[i];
        int over_tile = t[T_SCORES] > TILE_BYTES_MAX || t[T_TOKENS] > TILE_BYTES_MAX;
        if (total <= budget && !over_tile) {
            p->dev_bytes = total;
            break;
        }
        /* Shrink the biggest term that still can; an oversized tile first. */
        int order[T_COUNT] = {T_STATE, T_SLOTS, T_SCORES, T_TOKENS};
        for (int i = 0; i < T_COUNT; i++)
            for (int j = i + 1; j < T_COUNT; j++)
                if (t[order[j]] > t[order[i]]) {
                    int x = order[i];
                    order[i] = order[j];
                    order[j] = x;
                }
        int shrunk = 0;
        if (over_tile)
            shrunk = topk_shrink(in, p, t[T_SCORES] > TILE_BYTES_MAX ? T_SCORES : T_TOKENS);
        for (int i = 0; i < T_COUNT && !shrunk; i++)
            shrunk = topk_shrink(in, p, order[i]);
        if (!shrunk)
            return mieb_fail(MIEB_ERR_TOO_LARGE,
                             "cuda: the smallest tiles for top-%lld of %lld-dim vectors need %.1f MiB of device "
                             "memory; the budget left is %.1f MiB (raise --mem-limit)",
                             (long long)in->ke, (long long)in->dim, mib(total), mib(budget));
    }

    p->ld = mieb_cuda_plan_ld(in, p);
    p->pair_cap = mieb_cuda_plan_pair_cap(in, p);
    int64_t per_row = in->ke * (int64_t)sizeof(uint64_t);
    p->result_rows = max64(1, min64(p->group, (int64_t)MIEB_CUDA_RESULT_CHUNK / max64(1, per_row)));
    p->pin_bytes = MIEB_CUDA_N_SLOTS * mieb_cuda_plan_slot_bytes(in, p) +
                   mieb_cuda_aligned((size_t)p->result_rows * (size_t)per_row);
    return MIEB_OK;
}

static size_t pair_batch_bytes(int64_t batch)
{
    return 2 * mieb_cuda_aligned((size_t)batch * sizeof(int64_t)) + mieb_cuda_aligned((size_t)batch * sizeof(float));
}

mieb_status mieb_cuda_plan_pairs(const struct mieb_cuda_plan_in *in, size_t budget, struct mieb_cuda_plan *p)
{
    const int64_t stage_rows = max64(1, (int64_t)(MIEB_CUDA_STAGE_MAX / ((size_t)in->dim * sizeof(float))));
    *p = (struct mieb_cuda_plan){0};
    p->group = p->q_chunk = max64(1, in->nq);
    p->pair_batch = max64(1, min64(in->n_pairs, MIEB_CUDA_PAIR_BATCH_MAX));
    if (in->maxsim) {
        p->d_tile = max64(1, min64(in->nd, MIEB_CUDA_D_TILE_MAX));
        p->d_tokens = max64(1, max64(in->d_max, min64(in->d_rows, stage_rows)));
    } else {
        p->d_tile = max64(1, min64(in->nd, stage_rows));
        p->d_tokens = p->d_tile;
    }
    for (;;) {
        size_t slot = mieb_cuda_plan_slot_bytes(in, p), batch = pair_batch_bytes(p->pair_batch);
        if (slot + batch <= budget) {
            p->dev_bytes = slot + batch;
            p->pin_bytes = slot + batch;
            return MIEB_OK;
        }
        int shrunk = 0;
        if (slot >= batch || p->pair_batch <= 1) {
            if (in->maxsim && p->d_tokens > in->d_max) {
                p->d_tokens = max64(in->d_max, half_up(p->d_tokens));
                shrunk = 1;
            } else if (p->d_tile > 1) {
                p->d_tile = half_up(p->d_tile);
                if (!in->maxsim)
                    p->d_tokens = p->d_tile;
                shrunk = 1;
            }
        }
        if (!shrunk && p->pair_batch > 1) {
            p->pair_batch = half_up(p->pair_batch);
            shrunk = 1;
        }
        if (!shrunk)
            return mieb_fail(MIEB_ERR_TOO_LARGE,
                             "cuda: scoring pairs of %lld-dim vectors needs %.1f MiB of device memory; the budget "
                             "left is %.1f MiB (raise --mem-limit)",
                             (long long)in->dim, mib(slot + batch), mib(budget));
    }
}
