/**
 * cuda_plan.h - tile sizes for the CUDA operations, chosen so the working set fits a
 * byte budget (as faiss' chooseTileSize / bfKnn tile their searches).
 *
 * topk_block works on three nested tilings:
 *   group   - queries whose running top-k state lives on the device at once
 *             (usually all of them; fewer only when ke is very large);
 *   d_tile  - corpus items uploaded per step (double-buffered pinned -> device);
 *   q_chunk - queries per score tile Q[chunk] . D[tile]^T.
 * MaxSim adds token caps: d_tokens per corpus tile and q_tokens per query chunk, never
 * below the longest single item, since an item is never split.
 *
 * Pure host arithmetic: no CUDA call, so the planner is testable anywhere.
 */
#ifndef MIEB_CUDA_PLAN_H
#define MIEB_CUDA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps that keep each launch and staging copy a sensible size. */
#define MIEB_CUDA_D_TILE_MAX 65536               /* corpus items per tile */
#define MIEB_CUDA_Q_CHUNK_MAX 16384              /* query rows per score tile */
#define MIEB_CUDA_Q_CHUNK_MAX_MAXSIM 65535       /* grid.y of the MaxSim kernel */
#define MIEB_CUDA_Q_TOKENS_MAX 32768             /* query token rows per MaxSim chunk */
#define MIEB_CUDA_STAGE_MAX ((size_t)64 << 20)   /* bytes of corpus rows per pinned slot */
#define MIEB_CUDA_RESULT_CHUNK ((size_t)32 << 20) /* pinned bytes for downloading results */
#define MIEB_CUDA_PAIR_BATCH_MAX ((int64_t)1 << 20) /* pairs per score_pairs launch */

/** What the planner needs to know about one call. */
struct mieb_cuda_plan_in {
    int maxsim;
    int64_t dim;
    int64_t ke;                 /* kept per query (min(k, corpus items)); 0 for score_pairs */
    int64_t nq, q_rows, q_max;  /* query items, token rows, longest item in rows (1 if single-vector) */
    int64_t nd, d_rows, d_max;  /* corpus items, token rows, longest item in rows */
    int64_t n_pairs;            /* score_pairs only */
    int screen;                 /* topk_block through the int8 screen (cuda_screen.c) */
    int64_t kp;                 /* its int8 row length */
};

struct mieb_cuda_plan {
    int64_t group, q_chunk, q_tokens;
    int64_t d_tile, d_tokens;   /* d_tokens == d_tile rows for single-vector */
    int64_t pair_batch;         /* score_pairs only */
    int64_t result_rows;        /* state rows downloaded per pinned result chunk */
    int64_t ld;                 /* score tile row length: d_tile, rounded up to 4 with the screen (int32 GEMM) */
    int64_t pair_cap;           /* the screen's candidate list: a share of the score tile */
    size_t dev_bytes;           /* device scratch pool size */
    size_t pin_bytes;           /* pinned staging pool size */
};

/**
 * Largest tiles for a topk_block call whose device bytes fit `budget`, halving the
 * biggest term until they do. MIEB_ERR_TOO_LARGE (with the bytes needed) when even one
 * query, one corpus item and the longest items do not fit.
 */
mieb_status mieb_cuda_plan_topk(const struct mieb_cuda_plan_in *in, size_t budget, struct mieb_cuda_plan *p);

/** The same for score_pairs: one corpus tile at a time and batches of pairs. */
mieb_status mieb_cuda_plan_pairs(const struct mieb_cuda_plan_in *in, size_t budget, struct mieb_cuda_plan *p);

/** The screen's candidate list holds this share of a score tile's pairs (1 / this); more
    survivors hand the query group to the exact way, as the CPU screen's budget does. */
#define MIEB_CUDA_SCREEN_PAIR_SHARE 4

/* Byte sizes of the views, in the order topk_block carves them (also used to carve). */
size_t mieb_cuda_plan_state_bytes(int64_t group, int64_t ke);       /* two key buffers + thresholds */
size_t mieb_cuda_plan_slot_bytes(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p);
/** The screen's views: per tile (int8 rows, scales, norm bounds, lower bounds, the candidate
    list, the counters) and per group (lower-bound top-k state, floors); 0 without it. */
size_t mieb_cuda_plan_screen_tile_bytes(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p);
size_t mieb_cuda_plan_screen_group_bytes(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p);
/** Score tile row length and candidate list length of a plan (set into p by mieb_cuda_plan_topk). */
int64_t mieb_cuda_plan_ld(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p);
int64_t mieb_cuda_plan_pair_cap(const struct mieb_cuda_plan_in *in, const struct mieb_cuda_plan *p);

#ifdef __cplusplus
}
#endif
#endif
