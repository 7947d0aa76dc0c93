/**
 * kmeans_argmin.cu - per-row argmin of the k-means distances d = c_sqnorm + (-2 X.C^T),
 * with the CPU reference's tie rule (see kmeans_argmin.cuh).
 *
 * One warp per row, KM_WARPS rows per block (k is small for clustering tasks, tens to a
 * few hundred, so a block per row would leave most threads idle). Lane l scans columns
 * l, l + 32, ... in increasing order and keeps the lexicographically smallest
 * (value, index) pair; a butterfly over the warp then combines the 32 candidates with the
 * same order (warp_argbest.cuh). Under that order the winner is the smallest index among
 * the columns that equal the row's minimum, which is what the CPU's sequential "strictly
 * smaller replaces" scan returns, whatever the lane split. NaN compares false both ways, so it is never a
 * candidate; the CPU's special case (a NaN at column 0 is never replaced, so the label
 * stays 0) is applied at the end by lane 0.
 */
#include <limits.h>
#include <math.h>

#include "cuda_check.h"
#include "kmeans_argmin.cuh"
#include "warp_argbest.cuh"

#define KM_WARPS 8
#define KM_NONE INT_MAX /* index of "nothing seen yet": every real index is < k < INT_MAX */

/* (v, j) comes before (bv, bj): a smaller value, or an equal value at a smaller index.
 * False whenever v is NaN, so a NaN never enters. */
static __device__ __forceinline__ bool km_before(float v, int j, float bv, int bj)
{
    return v < bv || (v == bv && j < bj);
}

static __global__ void __launch_bounds__(KM_WARPS * 32)
    kmeans_argmin_kernel(const float *__restrict__ s, int64_t ld, const float *__restrict__ csq, int n_rows, int k,
                         int32_t *__restrict__ labels)
{
    const int lane = (int)(threadIdx.x & 31u);
    const int64_t row = (int64_t)blockIdx.x * KM_WARPS + (int64_t)(threadIdx.x >> 5);
    if (row >= n_rows) /* the whole warp leaves together: no intrinsic below sees a gap */
        return;
    const float *srow = s + row * ld;

    /* (+inf, KM_NONE) is beaten by any non-NaN value, +inf included */
    float bv = INFINITY;
    int bj = KM_NONE;
    /* the one rounding of sgemm's beta = 1 */
    warp_argbest<km_before>(lane, k, [&](int j) { return csq[j] + srow[j]; }, bv, bj);
    if (lane == 0) {
        const float d0 = csq[0] + srow[0];
        /* d0 != d0: NaN at column 0 (not isnan, so the emulator needs no device math) */
        labels[row] = (d0 != d0 || bj == KM_NONE) ? 0 : (int32_t)bj;
    }
}

extern "C" mieb_status mieb_cuda_kmeans_argmin(struct mieb_kstream ks, const float *s, int64_t ld,
                                               const float *c_sqnorm, int64_t n_rows, int64_t k, int32_t *labels)
{
    MIEB_CUDA_REQUIRE(n_rows >= 0 && n_rows <= INT_MAX);
    MIEB_CUDA_REQUIRE(k >= 1 && k < (int64_t)INT_MAX && ld >= k);
    if (n_rows == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(s && c_sqnorm && labels);
    const int64_t blocks = (n_rows + KM_WARPS - 1) / KM_WARPS;
    kmeans_argmin_kernel<<<(unsigned int)blocks, KM_WARPS * 32, 0, ks.stream>>>(s, ld, c_sqnorm, (int)n_rows,
                                                                                 (int)k, labels);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
