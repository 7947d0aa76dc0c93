/**
 * pair_dot.cu - dot products of explicit (query, doc) pairs in the CPU backend's fixed order
 * (host/canon/canon_dot.h): one half-warp per pair, lane l chaining the elements l, l + 16,
 * ... into its accumulator, then canon_lanes_sum()'s tree, so each score has the CPU's bits.
 */
#include "canon_lanes.cuh"
#include "cuda_check.h"
#include "pair_dot.cuh"

#define PAIR_DOT_WARPS 8
#define PAIR_DOT_PER_BLOCK (PAIR_DOT_WARPS * 2) /* two pairs per warp */

static __global__ void __launch_bounds__(PAIR_DOT_WARPS * 32)
    pair_dot_kernel(const float *__restrict__ q, const float *__restrict__ d, int64_t dim,
                    const int64_t *__restrict__ qi, const int64_t *__restrict__ di, int64_t n,
                    float *__restrict__ out)
{
    const int64_t p = (int64_t)blockIdx.x * PAIR_DOT_PER_BLOCK + (threadIdx.x >> 4);
    const int lane = (int)(threadIdx.x & 15u);
    /* a half-warp past n still takes part in the shuffles, on zeros */
    const float *a = p < n ? q + qi[p] * dim : nullptr, *b = p < n ? d + di[p] * dim : nullptr;
    float acc = 0.0f;
    for (int64_t c = 0; c < dim; c += CANON_LANES) { /* the last step is padded with zeros */
        const int64_t x = c + lane;
        acc = fmaf(a && x < dim ? a[x] : 0.0f, b && x < dim ? b[x] : 0.0f, acc);
    }
    acc = canon_lanes_sum(acc);
    if (p < n && lane == 0)
        out[p] = acc;
}

extern "C" mieb_status mieb_cuda_pair_dot(struct mieb_kstream ks, const float *q, const float *d, int64_t dim,
                                          const int64_t *qi, const int64_t *di, int64_t n, float *out)
{
    MIEB_CUDA_REQUIRE(n >= 0 && dim >= 1);
    if (n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(q && d && qi && di && out);
    int64_t blocks = (n + PAIR_DOT_PER_BLOCK - 1) / PAIR_DOT_PER_BLOCK;
    MIEB_CUDA_REQUIRE(blocks <= 0x7fffffff);
    pair_dot_kernel<<<(unsigned int)blocks, PAIR_DOT_WARPS * 32, 0, ks.stream>>>(q, d, dim, qi, di, n, out);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
