/**
 * logreg_argmax.cu - the class of each row from its decision scores (lr_predict,
 * cuda/cuda_logreg_predict.c), with the rule of the CPU backend's lr_predict (the decision
 * value, the scan and the binary class of host/math/logreg_math.h; logreg_argmax.cuh).
 *
 * KK > 1: one warp per row, LRA_WARPS rows per block, rows grid-strided. Lane l scans
 * k = l, l + 32, ... in increasing order with the CPU's sequential rule
 * (mieb_lr_argmax_takes), then a butterfly (warp_argbest.cuh) combines the 32 candidates
 * with the order "a NaN before any number, among NaNs the lower index, among numbers the
 * larger, among equal numbers the lower index". That order is total on (value, index)
 * pairs with distinct indices and its first element is what the sequential scan returns
 * (the first NaN if any, else the first maximum; +0 and -0 are equal, so the first of
 * them), whatever the lane split.
 * KK == 1: one thread per row, decision > 0.
 */
#include <limits.h>

#include "../host/math/logreg_math.h"
#include "core/host_device.h"
#include "cuda_check.h"
#include "logreg_argmax.cuh"
#include "warp_argbest.cuh"

#define LRA_WARPS 8
#define LRA_THREADS 256 /* binary: rows per block */
#define LRA_NONE INT_MAX /* index of "nothing seen yet": every real index is < KK < INT_MAX */
#define LRA_MAX_BLOCKS 65535

/* (v, j) comes before (bv, bj) in the order above; a NONE candidate never comes first. */
static __device__ __forceinline__ bool lra_before(float v, int j, float bv, int bj)
{
    if (j == LRA_NONE)
        return false;
    if (bj == LRA_NONE)
        return true;
    /* the sequential scan's rule, seen from whichever of the two indices comes later */
    return j > bj ? mieb_lr_argmax_takes(v, bv) : !mieb_lr_argmax_takes(bv, v);
}

static __global__ void __launch_bounds__(LRA_WARPS * 32)
    logreg_argmax_kernel(const float *__restrict__ s, int64_t ld, const float *__restrict__ intercept, int64_t n,
                         int KK, int64_t *__restrict__ out)
{
    const int lane = (int)(threadIdx.x & 31u);
    /* the whole warp shares its row, so the shuffles below never see a missing lane */
    for (int64_t row = (int64_t)blockIdx.x * LRA_WARPS + (threadIdx.x >> 5); row < n;
         row += (int64_t)gridDim.x * LRA_WARPS) {
        const float *srow = s + row * ld;
        float bv = 0.0f;
        int bj = LRA_NONE;
        warp_argbest<lra_before>(lane, KK, [&](int k) { return mieb_lr_decision(srow[k], intercept[k]); }, bv, bj);
        if (lane == 0)
            out[row] = bj; /* lane 0 saw k = 0, so bj is a real index */
    }
}

static __global__ void __launch_bounds__(LRA_THREADS)
    logreg_binary_kernel(const float *__restrict__ s, int64_t ld, const float *__restrict__ intercept, int64_t n,
                         int64_t *__restrict__ out)
{
    for (int64_t i = (int64_t)blockIdx.x * LRA_THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * LRA_THREADS)
        out[i] = mieb_lr_binary_class(mieb_lr_decision(s[i * ld], intercept[0])); /* NaN and -0: class 0 */
}

static inline unsigned int lra_blocks(int64_t n, int64_t rows_per_block)
{
    const int64_t b = (n + rows_per_block - 1) / rows_per_block;
    return (unsigned int)(b < LRA_MAX_BLOCKS ? b : LRA_MAX_BLOCKS);
}

extern "C" mieb_status mieb_cuda_logreg_argmax(struct mieb_kstream ks, const float *s, int64_t ld,
                                               const float *intercept, int64_t n, int64_t KK, int64_t *out)
{
    MIEB_CUDA_REQUIRE(n >= 0 && KK >= 1 && KK <= INT_MAX - 32 && ld >= KK);
    if (n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(s && intercept && out);
    if (KK == 1)
        logreg_binary_kernel<<<lra_blocks(n, LRA_THREADS), LRA_THREADS, 0, ks.stream>>>(s, ld, intercept, n, out);
    else
        logreg_argmax_kernel<<<lra_blocks(n, LRA_WARPS), LRA_WARPS * 32, 0, ks.stream>>>(s, ld, intercept, n,
                                                                                        (int)KK, out);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
