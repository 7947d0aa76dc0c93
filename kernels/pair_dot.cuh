/**
 * pair_dot.cuh - launcher of the (query, doc) pair dot-product kernel (kernels/pair_dot.cu).
 * CPU reference: mieb_canon_dot (host/canon/canon_dot.h), via cpu_score_pairs, bit for bit.
 */
#ifndef MIEB_KERNELS_PAIR_DOT_CUH
#define MIEB_KERNELS_PAIR_DOT_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream: out[p] = dot(q[qi[p]], d[di[p]]) for p < n, all device memory;
 * q is [*, dim] and d is [*, dim] row-major fp32, qi/di are row numbers into them.
 */
mieb_status mieb_cuda_pair_dot(struct mieb_kstream ks, const float *q, const float *d, int64_t dim,
                               const int64_t *qi, const int64_t *di, int64_t n, float *out);

#ifdef __cplusplus
}
#endif
#endif
