/**
 * cuda_ctx.h - the CUDA backend's context: one device, its streams, events, cuBLAS handle
 * and memory pools (a context owns resources, functions borrow them).
 *
 * Streams: `stream` runs every GEMM, kernel and sort; `copy_stream` carries corpus tiles
 * host -> device, so that uploading tile t+1 overlaps computing tile t. The two per-slot
 * event pairs order the double-buffered tiles between them (cuda_topk_block.c).
 *
 * Memory: device scratch and pinned host staging are each one allocation (a pool) carved
 * into views for one operation, grown when an operation needs more and kept until
 * mieb_cuda_ctx_free. Query sets (prepare_queries) are separate allocations counted in
 * `resident`. Everything counts against `budget` (the --mem-limit, capped by the free
 * device memory seen at start-up).
 *
 * Allocation failure is recoverable: mieb_cuda_dev_alloc / mieb_cuda_pool_reserve clear
 * the CUDA error, log the MiB asked for and return MIEB_ERR_OOM so the caller can retry
 * with smaller tiles. Any other CUDA error marks the context `broken`: the backend then
 * refuses further work (some CUDA faults leave the context unusable until the process
 * restarts; host/dispatch/ chose the CPU at start-up only when no device was usable).
 *
 * One context is used by one thread at a time.
 */
#ifndef MIEB_CUDA_CTX_H
#define MIEB_CUDA_CTX_H

#include <stddef.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "backend/backend.h"
#include "core/status.h"
#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MIEB_CUDA_CTX_MAGIC 0x4d494542u /* "MIEB": catches a stale or foreign pointer */
#define MIEB_CUDA_N_SLOTS 2             /* double-buffered corpus tiles */
#define MIEB_CUDA_ALIGN 256             /* every view in a pool starts on this boundary */

/** One allocation carved into views by a bump pointer; reset per operation. */
struct mieb_cuda_pool {
    void *base;
    size_t cap;  /* bytes allocated */
    size_t used; /* bytes handed out since the last reserve */
    int pinned;  /* 1: page-locked host memory (cudaMallocHost), 0: device memory */
};

struct mieb_cuda_ctx {
    uint32_t magic;
    int device;
    char name[256];
    int cc_major, cc_minor;
    size_t total_mem;
    size_t budget;   /* device bytes this backend may hold: query sets + scratch */
    size_t resident; /* bytes held by prepared query sets */

    cudaStream_t stream;      /* compute: GEMMs, kernels, sorts */
    cudaStream_t copy_stream; /* host -> device corpus tiles */
    cudaEvent_t ev_h2d[MIEB_CUDA_N_SLOTS];  /* slot's upload done: its pinned buffer is free */
    cudaEvent_t ev_done[MIEB_CUDA_N_SLOTS]; /* slot's compute done: its device buffer is free */
    cublasHandle_t cublas;

    struct mieb_cuda_pool scratch; /* device */
    struct mieb_cuda_pool staging; /* pinned host */

    enum mieb_precision precision; /* arithmetic of the similarity GEMM (opts.precision) */
    int canon_scores;              /* fp32 scores in the CPU backend's fixed order (gemm.h), not cuBLAS' */
    int sync_check;                /* synchronise after every launch (debug) */
    /* The int8 screen (cuda_screen.c, docs/SCREEN_INT8.md): MIEB_CUDA_SCREEN=auto (1: blocks
       where it pays), int8 (2: every single-vector block) or off (0, the default); only
       with canon_scores, whose bits it reproduces. */
    int screen;
    /** What the screen did (summed over calls; the -v lines and the tests read it). */
    struct {
        int64_t blocks, groups, fallbacks; /* screened calls; query groups; groups handed to the exact way */
        int64_t pairs, scored;             /* (query, document) pairs screened; of those, scored exactly */
    } screen_stats;
    /** Test hook: the most candidate pairs a tile's list may hold (0 = the plan's share), so
     * that the tests can make near-ties overflow it and hand the block to the exact way. */
    uint32_t screen_pair_cap;
    int broken;                    /* a CUDA error happened: refuse further work */
    /** Test hook: a single allocation larger than this fails as if the device were full
     * (0 = off). Lets the GPU tests exercise OOM recovery deterministically. */
    size_t fail_alloc_above;
};

/** The stream and debug flag the kernel launchers (kernels/) take. */
static inline struct mieb_kstream mieb_cuda_ks(const struct mieb_cuda_ctx *ctx)
{
    struct mieb_kstream ks = {ctx->stream, ctx->sync_check};
    return ks;
}

/**
 * Select opts->device_index, create streams, events and the cuBLAS handle, and compute
 * the budget. MIEB_ERR_NO_DEVICE (with the driver's reason in the last error) when there
 * is no driver, no device, or no such device; nothing is left allocated then.
 * On success *out is owned by the caller (mieb_cuda_ctx_free).
 */
mieb_status mieb_cuda_ctx_init(const struct mieb_backend_opts *opts, struct mieb_cuda_ctx **out);
/** Wait for outstanding work, release everything. NULL is allowed. */
void mieb_cuda_ctx_free(struct mieb_cuda_ctx *ctx);

/**
 * cudaMalloc with recovery: on failure the CUDA error is cleared, a warning names the
 * MiB requested and `what`, and MIEB_ERR_OOM is returned with *p == NULL.
 */
mieb_status mieb_cuda_dev_alloc(struct mieb_cuda_ctx *ctx, void **p, size_t bytes, const char *what);
void mieb_cuda_dev_free(struct mieb_cuda_ctx *ctx, void *p);

/**
 * Make `pool` hold at least `bytes` and reset its bump pointer. Growing frees the old
 * block first (after synchronising the device), so on MIEB_ERR_OOM the pool is empty.
 */
mieb_status mieb_cuda_pool_reserve(struct mieb_cuda_ctx *ctx, struct mieb_cuda_pool *pool,
                                   size_t bytes, const char *what);
/** Next `bytes` of a reserved pool, MIEB_CUDA_ALIGN-aligned; NULL if the reserve was short. */
void *mieb_cuda_pool_take(struct mieb_cuda_pool *pool, size_t bytes);

/** Bytes a view of `bytes` occupies in a pool (rounded up to MIEB_CUDA_ALIGN). */
static inline size_t mieb_cuda_aligned(size_t bytes)
{
    return (bytes + (MIEB_CUDA_ALIGN - 1)) & ~(size_t)(MIEB_CUDA_ALIGN - 1);
}

/** Bytes still free under the budget after the resident query sets. */
size_t mieb_cuda_budget_left(const struct mieb_cuda_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
