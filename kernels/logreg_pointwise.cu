/**
 * logreg_pointwise.cu - the per-sample part of the logistic-regression loss between the two
 * GEMMs of lr_eval (cuda/cuda_logreg.c): per-sample loss and grad_pointwise / n, in the
 * arithmetic of host/math/logreg_math.h, which the CPU reference runs too.
 *
 * Multiclass (KK > 1): a group of G threads per row (G = 32, 64, 128 or 256, the smallest
 * that covers KK, so that K = 3 does not leave 250 threads of a block idle), rows
 * grid-strided over the blocks. Thread t of a group owns the classes k = t, t + G, ...;
 * it reads them, exponentiates them in place and rewrites them as the gradient, so no
 * class is touched by two threads and the logit of the true class, which the loss needs
 * after the row has been overwritten, stays in the register of the thread that owns it
 * (that thread writes the loss).
 *   max: the CPU takes mx = r[0] and replaces it by a strictly larger r[k], so a NaN never
 *        replaces and a NaN at k = 0 stays; here each thread keeps the largest non-NaN
 *        value it saw and the group combines them, then r[0] is used if it is NaN. Among
 *        equal values the CPU keeps the first, which matters only for the sign of a zero
 *        maximum, and that sign changes nothing (exp(+-0) = 1, log(se) + (+-0) is the
 *        same float): ties prefer +0 only so that every lane ends with the same bits.
 *   sum: se in double, each thread over its classes in increasing k from 0.0, then a
 *        butterfly over each warp and the group's warps in increasing order. The CPU sums
 *        in k order, so se (and what depends on it) may differ from it in the last bits;
 *        tests/gpu/emu/test_kernels_emu.cpp replays this order exactly.
 * Binomial (KK == 1): one thread per row, mieb_lr_binomial_point.
 */
#include <limits.h>
#include <math.h>

#include "../host/math/logreg_math.h"
#include "cuda_check.h"
#include "logreg_pointwise.cuh"

#define LRP_THREADS 256
#define LRP_WARPS (LRP_THREADS / 32)
#define LRP_MAX_BLOCKS 65535 /* rows beyond blocks x rows per block are grid-strided */

/* The larger of a and b, NaN meaning "nothing yet" (never wins over a number); equal values
 * prefer +0 over -0 so that the result does not depend on the operands' order. */
static __device__ __forceinline__ float lrp_max2(float a, float b)
{
    return (b > a || a != a || (b == a && signbit(a))) ? b : a;
}

static __device__ __forceinline__ double lrp_add(double a, double b) { return MIEB_DADD(a, b); }

/*
 * op-reduction over the G threads of each row group (G a multiple of 32 dividing
 * LRP_THREADS): a butterfly in each warp, then (G > 32) the group's warps in order through
 * shared memory. Every thread of the block calls it: it holds __syncthreads. With op
 * commutative (lrp_max2's tie rule, a + b == b + a) every lane of a warp ends with the same
 * bits. Used for the row maximum (float) and the double sum of the exps.
 */
template <typename T, T (*op)(T, T)> static __device__ T lrp_group_reduce(T v, int G, T *sh)
{
    for (int m = 16; m >= 1; m >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, m));
    if (G == 32)
        return v;
    const int first = (int)(threadIdx.x / (unsigned)G) * (G / 32);
    if ((threadIdx.x & 31u) == 0)
        sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh[first];
    for (int w = 1; w < G / 32; w++)
        v = op(v, sh[first + w]);
    __syncthreads(); /* sh is written again by the next call */
    return v;
}

static __global__ void __launch_bounds__(LRP_THREADS)
    logreg_softmax_kernel(float *__restrict__ raw, int64_t ld, const int32_t *__restrict__ y, int64_t n, int KK, int G,
                          float fn, float *__restrict__ lossv)
{
    __shared__ float sh_max[LRP_WARPS];
    __shared__ double sh_sum[LRP_WARPS];
    const int t = (int)(threadIdx.x % (unsigned)G);
    const int64_t groups = LRP_THREADS / G;
    /* base is the same for the whole block, so every thread reaches the __syncthreads */
    for (int64_t base = (int64_t)blockIdx.x * groups; base < n; base += (int64_t)gridDim.x * groups) {
        const int64_t i = base + (int64_t)(threadIdx.x / (unsigned)G);
        const bool live = i < n;
        float *r = raw + (live ? i : 0) * ld;
        const int yi = live ? y[i] : -1;
        const bool y_ok = yi >= 0 && yi < KK;
        /* r[0] is read before its owner overwrites it (lanes of a warp need not run in step).
         * With G <= 32 only shuffles lie between this read and that write, and a shuffle
         * orders execution, not memory: __syncwarp does both (with G > 32 the reduction's
         * __syncthreads does). Every thread of the block is here: the loop is block-uniform. */
        const float r0 = live ? r[0] : 0.0f;
        __syncwarp();
        float m = NAN, r_y = 0.0f;
        if (live)
            for (int k = t; k < KK; k += G) {
                const float v = r[k];
                m = lrp_max2(m, v);
                if (k == yi)
                    r_y = v;
            }
        m = lrp_group_reduce<float, lrp_max2>(m, G, sh_max);
        const double mx = r0 != r0 ? (double)r0 : (double)m; /* the CPU's NaN-at-0 rule */

        double se = 0.0;
        if (live)
            for (int k = t; k < KK; k += G) {
                const float e = mieb_lr_exp_shifted(r[k], mx);
                r[k] = e;
                se = MIEB_DADD(se, (double)e);
            }
        se = lrp_group_reduce<double, lrp_add>(se, G, sh_sum);
        if (!live)
            continue;
        const float sum_exps = (float)se;
        for (int k = t; k < KK; k += G)
            r[k] = mieb_lr_grad_elem(r[k], sum_exps, k == yi, fn);
        if (y_ok ? yi % G == t : t == 0) /* a class out of range: NaN, not a stale value */
            lossv[i] = y_ok ? mieb_lr_row_loss(se, mx, r_y) : NAN;
    }
}

static __global__ void __launch_bounds__(LRP_THREADS)
    logreg_binomial_kernel(float *__restrict__ raw, int64_t ld, const int32_t *__restrict__ y, int64_t n, float fn,
                           float *__restrict__ lossv)
{
    for (int64_t i = (int64_t)blockIdx.x * LRP_THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * LRP_THREADS) {
        float loss;
        const float g = mieb_lr_binomial_point((double)y[i], raw[i * ld], &loss);
        raw[i * ld] = MIEB_FDIV(g, fn);
        lossv[i] = loss;
    }
}

/* Threads per row for KK classes: the smallest multiple of 32 in {32, 64, 128, 256} >= KK. */
static inline int lrp_group_size(int64_t KK)
{
    return KK <= 32 ? 32 : KK <= 64 ? 64 : KK <= 128 ? 128 : 256;
}

static inline unsigned int lrp_blocks(int64_t n, int64_t rows_per_block)
{
    const int64_t b = (n + rows_per_block - 1) / rows_per_block;
    return (unsigned int)(b < LRP_MAX_BLOCKS ? b : LRP_MAX_BLOCKS);
}

extern "C" mieb_status mieb_cuda_logreg_pointwise(struct mieb_kstream ks, float *raw, int64_t ld,
                                                  const int32_t *y, int64_t n, int64_t KK, float fn, float *lossv)
{
    MIEB_CUDA_REQUIRE(n >= 0 && KK >= 1 && KK <= INT_MAX - LRP_THREADS && ld >= KK);
    if (n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(raw && y && lossv);
    if (KK == 1) {
        logreg_binomial_kernel<<<lrp_blocks(n, LRP_THREADS), LRP_THREADS, 0, ks.stream>>>(raw, ld, y, n, fn, lossv);
    } else {
        const int G = lrp_group_size(KK);
        logreg_softmax_kernel<<<lrp_blocks(n, LRP_THREADS / G), LRP_THREADS, 0, ks.stream>>>(raw, ld, y, n, (int)KK,
                                                                                           G, fn, lossv);
    }
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
