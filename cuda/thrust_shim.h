/**
 * thrust_shim.h - the few Thrust algorithms the CUDA backend needs, behind a C interface.
 *
 * Thrust is C++ and reports failures by throwing; these wrappers catch everything and
 * return a status, so no exception ever crosses into C. Temporary storage comes from
 * the caller's scratch view first (so the memory budget holds), and only what does
 * not fit is allocated with cudaMalloc and freed before returning.
 * Everything runs on ctx->stream without synchronising the host.
 */
#ifndef MIEB_CUDA_THRUST_SHIM_H
#define MIEB_CUDA_THRUST_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Scratch bytes mieb_cuda_segsort_u64_desc needs for these segments (an estimate; 0 when
 * there is nothing to sort). */
size_t mieb_cuda_segsort_scratch_bytes(int64_t n_seg, int64_t seg_len);

/**
 * Sort each of n_seg consecutive segments of seg_len 64-bit keys (keys is
 * [n_seg, seg_len] row-major on the device) into descending order, in place.
 * scratch/scratch_bytes: a device view, ideally mieb_cuda_segsort_scratch_bytes(n_seg,
 * seg_len) long. MIEB_ERR_OOM when temporary memory cannot be had, MIEB_ERR_CUDA when a
 * kernel fails.
 */
mieb_status mieb_cuda_segsort_u64_desc(struct mieb_cuda_ctx *ctx, uint64_t *keys, int64_t n_seg, int64_t seg_len,
                                       void *scratch, size_t scratch_bytes);

#ifdef __cplusplus
}
#endif
#endif
