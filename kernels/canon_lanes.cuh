/**
 * canon_lanes.cuh - device code for the CPU backend's fixed-order dot product
 * (host/canon/canon_dot.h), shared by the kernels that must give its bits:
 *
 *     acc[l] = +0;  for c = 0, 16, ... while c < K: acc[l] = fma(a[c+l], b[c+l], acc[l])
 *     dot = ((acc[0..7] + acc[8..15]) pairwise down to one), the tree of canon_dot.h
 *
 * canon_lanes_sum() is that tree across a half-warp whose lane l (threadIdx.x & 15) holds
 * acc[l]: a butterfly with xor masks 8, 4, 2, 1. Each step adds exactly the operands the
 * tree adds (lane l and lane l ^ m hold the same pair, and a + b == b + a in IEEE-754),
 * so every lane of the half-warp ends with the tree's bits. The masks stay inside a
 * half-warp, so the two halves of a warp reduce independently; all 32 lanes must call it.
 *
 * canon_dot_serial() is the definition computed by one thread (16 accumulators in
 * registers), for kernels whose threads each own a whole dot product.
 *
 * fmaf and the plain additions are single IEEE-754 operations on the device (nvcc does not
 * reassociate, and an addition without a product cannot be contracted), as on the CPU.
 */
#ifndef MIEB_KERNELS_CANON_LANES_CUH
#define MIEB_KERNELS_CANON_LANES_CUH

#include <stdint.h>

#define CANON_LANES 16 /* = MIEB_CANON_LANES */

static __device__ __forceinline__ float canon_lanes_sum(float acc)
{
    acc += __shfl_xor_sync(0xffffffffu, acc, 8);
    acc += __shfl_xor_sync(0xffffffffu, acc, 4);
    acc += __shfl_xor_sync(0xffffffffu, acc, 2);
    acc += __shfl_xor_sync(0xffffffffu, acc, 1);
    return acc;
}

static __device__ __forceinline__ float canon_dot_serial(const float *__restrict__ a, const float *__restrict__ b,
                                                         int64_t K)
{
    float acc[CANON_LANES];
#pragma unroll
    for (int l = 0; l < CANON_LANES; l++)
        acc[l] = 0.0f;
    int64_t c = 0;
    for (; c + CANON_LANES <= K; c += CANON_LANES) {
#pragma unroll
        for (int l = 0; l < CANON_LANES; l++)
            acc[l] = fmaf(a[c + l], b[c + l], acc[l]);
    }
    if (c < K) { /* the last, partial step: the missing elements are zeros, as defined */
#pragma unroll
        for (int l = 0; l < CANON_LANES; l++)
            acc[l] = fmaf(c + l < K ? a[c + l] : 0.0f, c + l < K ? b[c + l] : 0.0f, acc[l]);
    }
#pragma unroll
    for (int w = CANON_LANES / 2; w >= 1; w >>= 1) {
#pragma unroll
        for (int l = 0; l < w; l++)
            acc[l] = acc[l] + acc[l + w];
    }
    return acc[0];
}

#endif
