/**
 * pair_dot.cu - dot products of explicit (query, doc) pairs: one warp per pair, lanes
 * stride over the dimension, then a shuffle tree adds the 32 partial sums.
 */
#include "cuda_check.h"
#include "pair_dot.cuh"

#define PAIR_DOT_WARPS 8

static __global__ void __launch_bounds__(PAIR_DOT_WARPS * 32)
    pair_dot_kernel(const float *__restrict__ q, const float *__restrict__ d, int64_t dim,
                    const int64_t *__restrict__ qi, const int64_t *__restrict__ di, int64_t n,
                    float *__restrict__ out)
{
    const int64_t p = (int64_t)blockIdx.x * PAIR_DOT_WARPS + (threadIdx.x >> 5);
    const int lane = (int)(threadIdx.x & 31u);
    if (p >= n)
        return; /* whole warp leaves together */
    const float *a = q + qi[p] * dim, *b = d + di[p] * dim;
    float s = 0.0f;
    for (int64_t x = lane; x < dim; x += 32)
        s += a[x] * b[x];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0)
        out[p] = s;
}

extern "C" mieb_status mieb_cuda_pair_dot(struct mieb_cuda_ctx *ctx, const float *q, const float *d, int64_t dim,
                                          const int64_t *qi, const int64_t *di, int64_t n, float *out)
{
    MIEB_CUDA_REQUIRE(ctx && ctx->magic == MIEB_CUDA_CTX_MAGIC);
    MIEB_CUDA_REQUIRE(n >= 0 && dim >= 1);
    if (n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(q && d && qi && di && out);
    int64_t blocks = (n + PAIR_DOT_WARPS - 1) / PAIR_DOT_WARPS;
    MIEB_CUDA_REQUIRE(blocks <= 0x7fffffff);
    pair_dot_kernel<<<(unsigned int)blocks, PAIR_DOT_WARPS * 32, 0, ctx->stream>>>(q, d, dim, qi, di, n, out);
    MIEB_CUDA_CHECK_LAUNCH(ctx);
    return MIEB_OK;
}
