/**
 * pair_maxsim.cu - late interaction for explicit (query, doc) pairs, without a GEMM:
 * one block per pair; for each query token in order, every thread takes doc tokens,
 * computes their dots in the CPU backend's fixed order (canon_dot_serial), and the block
 * reduces the max; thread 0 adds the maxima in token order, as the CPU reference does.
 * Candidate lists are short (mteb's top_ranked), so simplicity wins over tensor cores.
 */
#include <math.h>

#include "canon_lanes.cuh"
#include "cuda_check.h"
#include "pair_maxsim.cuh"

#define PAIR_MAXSIM_THREADS 128

static __global__ void __launch_bounds__(PAIR_MAXSIM_THREADS)
    pair_maxsim_kernel(const float *__restrict__ q, const int64_t *__restrict__ q_off, const float *__restrict__ d,
                       const int64_t *__restrict__ d_off, int64_t dim, const int64_t *__restrict__ qi,
                       const int64_t *__restrict__ di, float *__restrict__ out)
{
    __shared__ float red[PAIR_MAXSIM_THREADS / 32];
    const int64_t p = blockIdx.x;
    const int warp = (int)(threadIdx.x >> 5), lane = (int)(threadIdx.x & 31u);
    const int64_t t0 = q_off[qi[p]], t1 = q_off[qi[p] + 1];
    const int64_t u0 = d_off[di[p]], u1 = d_off[di[p] + 1];
    float total = 0.0f; /* meaningful in thread 0 only */

    if (u1 > u0) {
        for (int64_t t = t0; t < t1; t++) {
            const float *qt = q + t * dim;
            float m = -INFINITY;
            for (int64_t u = u0 + threadIdx.x; u < u1; u += PAIR_MAXSIM_THREADS) {
                const float s = canon_dot_serial(qt, d + u * dim, dim);
                m = s > m ? s : m;
            }
            for (int o = 16; o > 0; o >>= 1) {
                const float w = __shfl_down_sync(0xffffffffu, m, o);
                m = w > m ? w : m;
            }
            if (lane == 0)
                red[warp] = m;
            __syncthreads();
            if (threadIdx.x == 0) {
                float mm = red[0];
                for (int w = 1; w < PAIR_MAXSIM_THREADS / 32; w++)
                    mm = red[w] > mm ? red[w] : mm;
                total += mm;
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0)
        out[p] = total;
}

extern "C" mieb_status mieb_cuda_pair_maxsim(struct mieb_kstream ks, const float *q, const int64_t *q_off,
                                             const float *d, const int64_t *d_off, int64_t dim, const int64_t *qi,
                                             const int64_t *di, int64_t n, float *out)
{
    MIEB_CUDA_REQUIRE(n >= 0 && n <= 0x7fffffff && dim >= 1);
    if (n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(q && q_off && d && d_off && qi && di && out);
    pair_maxsim_kernel<<<(unsigned int)n, PAIR_MAXSIM_THREADS, 0, ks.stream>>>(q, q_off, d, d_off, dim, qi, di,
                                                                               out);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
