/**
 * sts_pairs.cu - Visual STS per-pair similarities: one thread per pair runs the
 * pair_math.h arithmetic, which the CPU backend runs too, so the values are the same bits.
 * Pairs are few (thousands) and each is a few passes over one row pair, so a thread per
 * pair with no shared memory is enough; the point of this kernel is keeping the data on
 * the device, not speed.
 */
#include "../host/math/pair_math.h"
#include "cuda_check.h"
#include "sts_pairs.cuh"

#define STS_THREADS 128

static __global__ void __launch_bounds__(STS_THREADS)
    sts_pairs_kernel(const float *__restrict__ a, const float *__restrict__ b, int64_t n, int64_t dim, int f64,
                     int cosine, double *__restrict__ cos, double *__restrict__ man, double *__restrict__ euc,
                     double *__restrict__ model)
{
    const int64_t p = (int64_t)blockIdx.x * STS_THREADS + threadIdx.x;
    if (p >= n)
        return;
    const float *x = a + p * dim, *y = b + p * dim;
    struct mieb_pm_sts r = f64 ? mieb_pm_sts_sklearn_f64(x, y, dim) : mieb_pm_sts_sklearn_f32(x, y, dim);
    cos[p] = r.cosine;
    man[p] = r.manhattan;
    euc[p] = r.euclidean;
    model[p] = mieb_pm_torch_pair_sim(x, y, dim, cosine);
}

extern "C" mieb_status mieb_cuda_sts_pairs_launch(struct mieb_kstream ks, const float *a, const float *b,
                                                  int64_t n, int64_t dim, int f64, int cosine, double *cos,
                                                  double *man, double *euc, double *model)
{
    MIEB_CUDA_REQUIRE(n >= 0 && dim >= 0);
    if (n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(a && b && cos && man && euc && model);
    int64_t blocks = (n + STS_THREADS - 1) / STS_THREADS;
    MIEB_CUDA_REQUIRE(blocks <= 0x7fffffff);
    sts_pairs_kernel<<<(unsigned int)blocks, STS_THREADS, 0, ks.stream>>>(a, b, n, dim, f64, cosine, cos, man, euc,
                                                                           model);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
