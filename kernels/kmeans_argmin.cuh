/**
 * kmeans_argmin.cuh - launcher of the k-means assignment argmin (kernels/kmeans_argmin.cu).
 *
 * The assignment step of cuda/cuda_kmeans.c is one GEMM, S = -2 X . C^T, followed by this
 * kernel, which adds the centre norms and takes each row's argmin with the CPU
 * reference's rule (mieb_cpu_kmeans_assign, host/cpu/cpu_kmeans.c):
 *
 *   d[r, j]   = c_sqnorm[j] + s[r, j]          (one fp32 add, as sgemm's beta = 1 gives)
 *   labels[r] = the first j of the minimum of d[r, .], scanning j = 0, 1, ... and
 *               replacing the best only on a strictly smaller value; hence a NaN is
 *               never chosen, and a NaN at j = 0 makes the label 0.
 *
 * Computing -2 X.C^T with beta = 0 and adding the norms here rounds exactly as sgemm with
 * alpha = -2, beta = 1 onto the norms: -2 * dot is exact, so fl(-2 dot + csq) is the one
 * rounding in both (fused or not).
 */
#ifndef MIEB_KERNELS_KMEANS_ARGMIN_CUH
#define MIEB_KERNELS_KMEANS_ARGMIN_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream, for each row r < n_rows: labels[r] = argmin_j (c_sqnorm[j] + s[r, j])
 * under the rule above.
 *   s        [n_rows, ld] row-major fp32 (device), ld >= k: -2 <x_r, c_j>
 *   c_sqnorm [k] fp32 (device): squared centre norms, as given by the caller
 *   labels   [n_rows] int32 (device), written
 * Requires 1 <= k <= INT32_MAX - 1 and n_rows >= 0. MIEB_ERR_INTERNAL on a bad argument,
 * MIEB_ERR_CUDA when the launch fails.
 */
mieb_status mieb_cuda_kmeans_argmin(struct mieb_kstream ks, const float *s, int64_t ld, const float *c_sqnorm,
                                    int64_t n_rows, int64_t k, int32_t *labels);

#ifdef __cplusplus
}
#endif
#endif
