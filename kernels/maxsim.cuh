/**
 * maxsim.cuh - launcher of the MaxSim reduction kernel (kernels/maxsim.cu).
 *
 * Turns a tile of token-level dot products into item-level late-interaction scores.
 * CPU reference: mieb_cpu_maxsim_tile (host/cpu/cpu_kernels.c).
 */
#ifndef MIEB_KERNELS_MAXSIM_CUH
#define MIEB_KERNELS_MAXSIM_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream: out[i * ld_out + j] = sum over query tokens t of item i of
 * (max over doc tokens u of item j of tok[t - q_row0, u]), for i < n_q, j < n_d.
 *   tok   [query token rows of the chunk, ld_tok] fp32 = Q_tokens . D_tokens^T (device)
 *   q_off [n_q + 1] token offsets of the chunk's query items, absolute (device);
 *         q_row0 = q_off[0], the first token row held in tok
 *   d_off [n_d + 1] token offsets of the tile's doc items, relative to the tile (device)
 * An item without tokens scores 0, as in the CPU reference. Token maxima are summed in
 * token order, as the CPU reference does. n_q <= 65535 (grid y).
 */
mieb_status mieb_cuda_maxsim(struct mieb_kstream ks, const float *tok, int64_t ld_tok, const int64_t *q_off,
                             int64_t q_row0, int64_t n_q, const int64_t *d_off, int64_t n_d, float *out,
                             int64_t ld_out);

#ifdef __cplusplus
}
#endif
#endif
