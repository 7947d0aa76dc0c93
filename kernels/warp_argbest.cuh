/**
 * warp_argbest.cuh - device code for a row's best (value, index) over one warp, under an order
 * the kernel gives, shared by the argmin and argmax kernels (kmeans_argmin.cu,
 * logreg_argmax.cu) whose tie rules differ.
 *
 * warp_argbest<before>(lane, n, value, bv, bj): lane l scans j = l, l + 32, ... < n in
 * increasing order, keeping (value(j), j) when before(value(j), j, bv, bj); a butterfly over
 * the warp (xor masks 16 .. 1) then combines the 32 candidates with the same test, so every
 * lane ends with the same pair. (bv, bj) come in as the candidate held before any is seen.
 * When `before` is a total order on (value, index) pairs with distinct indices whose first
 * element is what the kernel's sequential scan returns, the result is that scan's, whatever
 * the lane split. All 32 lanes of the warp must call it (the shuffles).
 */
#ifndef MIEB_KERNELS_WARP_ARGBEST_CUH
#define MIEB_KERNELS_WARP_ARGBEST_CUH

template <bool (*before)(float v, int j, float bv, int bj), typename Value>
static __device__ __forceinline__ void warp_argbest(int lane, int n, Value value, float &bv, int &bj)
{
    for (int j = lane; j < n; j += 32) {
        const float v = value(j);
        if (before(v, j, bv, bj)) {
            bv = v;
            bj = j;
        }
    }
    for (int m = 16; m >= 1; m >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bv, m);
        const int oj = __shfl_xor_sync(0xffffffffu, bj, m);
        if (before(ov, oj, bv, bj)) {
            bv = ov;
            bj = oj;
        }
    }
}

#endif
