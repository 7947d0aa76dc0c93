/**
 * canon_gemm.cu - C = A . B^T with every element in the CPU backend's fixed summation order
 * (host/canon/canon_dot.h), so that a score computed here has the same bits as on the CPU,
 * whatever the tiling, the GPU or the cuBLAS release.
 *
 * The order fixes which products are chained into which accumulator: lane l of 16 owns the
 * elements k = l, l + 16, l + 32, ... in that order, and the 16 lane sums meet in a fixed
 * tree. So a half-warp computes a micro-tile of CG_RM x CG_RN outputs, its lane l keeping
 * the lane-l accumulators of all of them (one fma chain each, in k order), and at the end
 * canon_lanes_sum() reduces each output across the half-warp in the tree's order.
 *
 * Block: CG_THREADS threads = 16 half-warps in a 4 x 4 grid of 8 x 8 micro-tiles, a 32 x 32
 * tile of C. K advances in chunks of CG_KC (4 steps of 16) staged in shared memory, rows
 * beyond m or n and elements beyond K read as zeros. A step of 16 that lies wholly past K
 * is skipped: the definition has no such step, and fma(0, 0, -0) would turn a -0 lane into
 * +0. Shared rows are padded by 2 floats so that the two half-warps of a warp, which read
 * B rows 8 apart, fall on different banks.
 */
#include <limits.h>

#include "canon_gemm.cuh"
#include "canon_lanes.cuh"
#include "cuda_check.h"

#define CG_THREADS 256
#define CG_RM 8
#define CG_RN 8
#define CG_BM 32 /* 4 micro-tile rows */
#define CG_BN 32 /* 4 micro-tile columns */
#define CG_KC 64
#define CG_PAD 2
static_assert(CG_BM == CG_BN, "the staging loop fills As and Bs row for row");

static __global__ void __launch_bounds__(CG_THREADS)
    canon_gemm_kernel(int64_t m, int64_t n, int64_t K, const float *__restrict__ A, int64_t lda,
                      const float *__restrict__ B, int64_t ldb, float *__restrict__ C, int64_t ldc)
{
    __shared__ float As[CG_BM][CG_KC + CG_PAD];
    __shared__ float Bs[CG_BN][CG_KC + CG_PAD];
    const int t = (int)threadIdx.x, lane = t & 15, half = t >> 4;
    const int hy = half >> 2, hx = half & 3; /* this half-warp's micro-tile in the block tile */
    const int64_t i0 = (int64_t)blockIdx.y * CG_BM, j0 = (int64_t)blockIdx.x * CG_BN;
    float acc[CG_RM][CG_RN];
#pragma unroll
    for (int r = 0; r < CG_RM; r++)
#pragma unroll
        for (int q = 0; q < CG_RN; q++)
            acc[r][q] = 0.0f;

    for (int64_t k0 = 0; k0 < K; k0 += CG_KC) {
        /* stage the chunk: consecutive threads take consecutive k of a row (coalesced) */
        for (int e = t; e < CG_BM * CG_KC; e += CG_THREADS) {
            const int row = e / CG_KC, col = e % CG_KC;
            const int64_t gk = k0 + col;
            As[row][col] = i0 + row < m && gk < K ? A[(i0 + row) * lda + gk] : 0.0f;
            Bs[row][col] = j0 + row < n && gk < K ? B[(j0 + row) * ldb + gk] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int s = 0; s < CG_KC / CANON_LANES; s++) {
            if (k0 + s * CANON_LANES >= K)
                break; /* uniform over the block: no step of the definition is left */
            const int c = s * CANON_LANES + lane;
            float a[CG_RM], b[CG_RN];
#pragma unroll
            for (int r = 0; r < CG_RM; r++)
                a[r] = As[hy * CG_RM + r][c];
#pragma unroll
            for (int q = 0; q < CG_RN; q++)
                b[q] = Bs[hx * CG_RN + q][c];
#pragma unroll
            for (int r = 0; r < CG_RM; r++)
#pragma unroll
                for (int q = 0; q < CG_RN; q++)
                    acc[r][q] = fmaf(a[r], b[q], acc[r][q]);
        }
        __syncthreads();
    }

    /* every lane of the half-warp gets each output's tree sum; lane q < CG_RN stores column q */
#pragma unroll
    for (int r = 0; r < CG_RM; r++) {
        const int64_t i = i0 + hy * CG_RM + r;
        float mine = 0.0f;
#pragma unroll
        for (int q = 0; q < CG_RN; q++) {
            const float v = canon_lanes_sum(acc[r][q]);
            mine = q == lane ? v : mine;
        }
        const int64_t j = j0 + hx * CG_RN + lane;
        if (lane < CG_RN && i < m && j < n)
            C[i * ldc + j] = mine;
    }
}

extern "C" mieb_status mieb_cuda_canon_gemm_nt(struct mieb_kstream ks, int64_t m, int64_t n, int64_t K,
                                               const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                                               int64_t ldc)
{
    MIEB_CUDA_REQUIRE(m >= 0 && n >= 0 && K >= 0);
    MIEB_CUDA_REQUIRE(lda >= K && ldb >= K && ldc >= n);
    if (m == 0 || n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(A && B && C);
    const int64_t bx = (n + CG_BN - 1) / CG_BN;
    MIEB_CUDA_REQUIRE(bx <= INT_MAX);
    /* gridDim.y is at most 65535: tall A goes in slices of rows */
    const int64_t rows_per_launch = (int64_t)65535 * CG_BM;
    for (int64_t r0 = 0; r0 < m; r0 += rows_per_launch) {
        const int64_t mr = m - r0 < rows_per_launch ? m - r0 : rows_per_launch;
        dim3 grid((unsigned int)bx, (unsigned int)((mr + CG_BM - 1) / CG_BM));
        canon_gemm_kernel<<<grid, CG_THREADS, 0, ks.stream>>>(mr, n, K, A + r0 * lda, lda, B, ldb, C + r0 * ldc,
                                                               ldc);
        MIEB_CUDA_CHECK_LAUNCH(ks);
    }
    return MIEB_OK;
}
