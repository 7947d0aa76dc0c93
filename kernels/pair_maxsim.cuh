/**
 * pair_maxsim.cuh - launcher of the (query, doc) pair MaxSim kernel (kernels/pair_maxsim.cu).
 * CPU reference: mieb_cpu_maxsim_tile (host/cpu/cpu_kernels.c), via cpu_score_pairs.
 */
#ifndef MIEB_KERNELS_PAIR_MAXSIM_CUH
#define MIEB_KERNELS_PAIR_MAXSIM_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream: out[p] = sum over tokens t of query item qi[p] of max over tokens u of
 * doc item di[p] of dot(q[t], d[u]), for p < n; 0 when either item has no tokens.
 *   q [query tokens, dim], q_off [items + 1] (absolute rows of q);
 *   d [doc tokens, dim],   d_off [items + 1] (rows of d); all device memory.
 */
mieb_status mieb_cuda_pair_maxsim(struct mieb_kstream ks, const float *q, const int64_t *q_off, const float *d,
                                  const int64_t *d_off, int64_t dim, const int64_t *qi, const int64_t *di, int64_t n,
                                  float *out);

#ifdef __cplusplus
}
#endif
#endif
