/**
 * cpu_kmeans.h - CPU reference of the k-means assignment operation (backend.h
 * kmeans_assign) and the numpy/scikit-learn fp32 building blocks around it.
 */
#ifndef MIEB_CPU_KMEANS_H
#define MIEB_CPU_KMEANS_H

#include <stdint.h>

#include "../backend/backend.h"

/** The CPU backend's kmeans_assign slot (see backend.h). */
mieb_status mieb_cpu_kmeans_assign(struct mieb_backend *be, const float *x, int64_t n, const float *c,
                                   const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels);

/**
 * Squared row norms in fp32 exactly as numpy 2.x (x86-64-v2 baseline) computes
 * np.einsum("ij,ij->i", x, x), i.e. sklearn's row_norms(squared=True) for float32:
 * 4 SSE lanes, 4-vector unrolled multiply-then-add, pairwise horizontal sum.
 */
void mieb_np_row_sqnorms_f32(const float *x, int64_t n, int64_t dim, float *out);

/** sklearn's _euclidean_dense_dense(a, b, squared=True) in fp32 (4-way unrolled). */
float mieb_sk_sqdist_f32(const float *a, const float *b, int64_t dim);

#endif
