/**
 * sts_pairs.cuh - launcher of the Visual STS pair kernel (kernels/sts_pairs.cu).
 * CPU reference: mieb_cpu_sts_pairs (host/cpu/cpu_pairwise.c); both are pair_math.h.
 */
#ifndef MIEB_KERNELS_STS_PAIRS_CUH
#define MIEB_KERNELS_STS_PAIRS_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream, for p < n (all device memory; a, b are [n, dim] row-major fp32):
 * cos/man/euc[p] = sklearn's cosine, -manhattan, -euclidean of (a[p], b[p]) in float64
 * when f64 != 0 else float32; model[p] = torch's cosine (cosine != 0) or dot.
 */
mieb_status mieb_cuda_sts_pairs_launch(struct mieb_kstream ks, const float *a, const float *b, int64_t n,
                                       int64_t dim, int f64, int cosine, double *cos, double *man, double *euc,
                                       double *model);

#ifdef __cplusplus
}
#endif
#endif
