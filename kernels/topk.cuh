/**
 * topk.cuh - launcher of the top-k merge kernel (kernels/topk.cu).
 *
 * Keeps, for each query row, the ke best (score, index) pairs seen so far as 64-bit keys
 * (topk_key.h) and merges one score tile into them. The kept set is unordered between
 * tiles; the caller sorts each row once at the end (thrust_shim.h).
 * CPU reference: mieb_topk_heap_push_row (host/topk/topk_heap.h), via the CPU backend.
 */
#ifndef MIEB_KERNELS_TOPK_CUH
#define MIEB_KERNELS_TOPK_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream, for each row r < n_rows:
 *   state_out[r] = the ke largest keys of state_in[r] U { key(scores[r, j], col_base + j) > thr[r] : j < n_cols },
 * with unused slots 0 (a row holds fewer than ke real keys until ke candidates were seen).
 *   scores    [n_rows, ld] row-major fp32 (device), ld >= n_cols
 *   state_in  [n_rows, ke] keys, state_out [n_rows, ke] keys (device, distinct buffers)
 *   thr       [n_rows] per-row bound, read and updated in place: keys at or below it are
 *             not candidates. Before a row's first tile: 0 (every key), or the caller's floor
 *             (mieb_topk_floor_thr: only scores >= the floor are kept). After a tile with
 *             more than ke candidates it is the ke-th largest kept key; otherwise unchanged.
 * So with a floor the state holds the ke largest keys above the initial bound, fewer (and
 * zero slots) where fewer exist.
 * Any k works (k = 1, 1001, k >= the block size): the kernel selects by radix, not by a
 * fixed-size heap. Requires col_base + n_cols - 1 <= MIEB_TOPK_MAX_INDEX.
 */
mieb_status mieb_cuda_topk_update(struct mieb_kstream ks, const float *scores, int64_t ld, int64_t n_rows,
                                  int64_t n_cols, int64_t col_base, const uint64_t *state_in, uint64_t *state_out,
                                  uint64_t *thr, int64_t ke);

#ifdef __cplusplus
}
#endif
#endif
