/**
 * maxsim.cu - ColBERT late interaction from a token-score tile.
 *
 * Block (doc item j, query item i); each warp takes one query token at a time and its
 * lanes stride over the doc item's tokens for the max; thread 0 then adds the warps'
 * maxima in token order, so the sum is accumulated exactly as the CPU reference does
 * (at fp32 the token products are the CPU's bits too: kernels/canon_gemm.cu).
 */
#include <limits.h>
#include <math.h>

#include "cuda_check.h"
#include "maxsim.cuh"

#define MAXSIM_WARPS 4

static __global__ void __launch_bounds__(MAXSIM_WARPS * 32)
    maxsim_kernel(const float *__restrict__ tok, int64_t ld_tok, const int64_t *__restrict__ q_off, int64_t q_row0,
                  const int64_t *__restrict__ d_off, float *__restrict__ out, int64_t ld_out)
{
    __shared__ float tmax[MAXSIM_WARPS];
    const int64_t j = blockIdx.x, i = blockIdx.y;
    const int warp = (int)(threadIdx.x >> 5), lane = (int)(threadIdx.x & 31u);
    const int64_t t0 = q_off[i] - q_row0, t1 = q_off[i + 1] - q_row0;
    const int64_t u0 = d_off[j], u1 = d_off[j + 1];
    float total = 0.0f; /* meaningful in thread 0 only */

    if (u1 > u0) {
        for (int64_t tb = t0; tb < t1; tb += MAXSIM_WARPS) {
            const int64_t t = tb + warp;
            if (t < t1) { /* uniform per warp */
                const float *row = tok + t * ld_tok;
                float m = -INFINITY;
                for (int64_t u = u0 + lane; u < u1; u += 32) {
                    const float v = row[u];
                    m = v > m ? v : m;
                }
                for (int o = 16; o > 0; o >>= 1) {
                    const float w = __shfl_down_sync(0xffffffffu, m, o);
                    m = w > m ? w : m;
                }
                if (lane == 0)
                    tmax[warp] = m;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                const int nw = t1 - tb < MAXSIM_WARPS ? (int)(t1 - tb) : MAXSIM_WARPS;
                for (int w = 0; w < nw; w++)
                    total += tmax[w];
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0)
        out[i * ld_out + j] = total;
}

extern "C" mieb_status mieb_cuda_maxsim(struct mieb_kstream ks, const float *tok, int64_t ld_tok,
                                        const int64_t *q_off, int64_t q_row0, int64_t n_q, const int64_t *d_off,
                                        int64_t n_d, float *out, int64_t ld_out)
{
    MIEB_CUDA_REQUIRE(n_q >= 0 && n_q <= 65535 && n_d >= 0 && n_d <= INT_MAX);
    MIEB_CUDA_REQUIRE(ld_out >= n_d && ld_tok >= 0 && q_row0 >= 0);
    if (n_q == 0 || n_d == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(q_off && d_off && out);
    MIEB_CUDA_REQUIRE(tok || ld_tok == 0);
    dim3 grid((unsigned int)n_d, (unsigned int)n_q);
    maxsim_kernel<<<grid, MAXSIM_WARPS * 32, 0, ks.stream>>>(tok, ld_tok, q_off, q_row0, d_off, out, ld_out);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
