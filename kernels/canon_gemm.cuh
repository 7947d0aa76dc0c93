/**
 * canon_gemm.cuh - launcher of the fixed-order score GEMM (kernels/canon_gemm.cu).
 * CPU reference: mieb_canon_gemm (host/canon/canon_dot.h), bit for bit.
 */
#ifndef MIEB_KERNELS_CANON_GEMM_CUH
#define MIEB_KERNELS_CANON_GEMM_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream: C[i * ldc + j] = mieb_canon_dot(A + i * lda, B + j * ldb, K) for i < m,
 * j < n; A [m, K] and B [n, K] row-major fp32 (scores Q . D^T), C [m, n], device memory.
 */
mieb_status mieb_cuda_canon_gemm_nt(struct mieb_kstream ks, int64_t m, int64_t n, int64_t K, const float *A,
                                    int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc);

#ifdef __cplusplus
}
#endif
#endif
