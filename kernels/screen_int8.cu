/**
 * screen_int8.cu - the int8 screen's kernels (docs/SCREEN_INT8.md, its GPU section): rows to
 * int8 with their scales and norm bounds, integer scores to intervals, intervals to
 * candidates, and the candidates' exact scores. The integer scores themselves are cuBLAS'
 * (cublasGemmEx, int8 in, int32 out: exact), between the first two.
 *
 *  - quantise: one thread per row runs mieb_screen_i8_quantise_row, the function the CPU screen
 *    runs (math/screen_int8_math.h), so the integers, scales and bounds are its bits. A
 *    row is K elements read twice by one thread; at K = 512 a tile of 65,536 rows is 256 MiB
 *    of reads, small beside the tile's GEMMs.
 *  - bound: one thread per (query, document) pair, mieb_screen_i8_interval in place of the
 *    integer: the upper bound stays in the score tile, the lower bound goes to its own tile
 *    (whose running k-th largest, kept by kernels/topk.cu, is each query's tau).
 *  - select: the pairs whose upper bound reaches tau are appended to a list (one atomic per
 *    warp), and every score of the tile becomes -inf.
 *  - rescore: one half-warp per listed pair, the fixed-order dot product of canon_lanes.cuh
 *    (as kernels/pair_dot.cu), written over the pair's -inf.
 * The top-k kernel then reads the tile as it reads an exact one.
 */
#include <limits.h>

#include "../host/math/screen_int8_math.h"
#include "canon_lanes.cuh"
#include "cuda_check.h"
#include "screen_int8.cuh"
#include "topk_key.h"

#define SCREEN_I8_THREADS 256
#define SCREEN_I8_RESCORE_BLOCKS_MAX 4096 /* the rescoring's grid: it strides over the list */

static __global__ void __launch_bounds__(SCREEN_I8_THREADS)
    screen_i8_quantise_kernel(const float *__restrict__ X, int64_t n, int64_t K, int64_t KP, int8_t *__restrict__ out,
                        float *__restrict__ s, float *__restrict__ nrm, float *__restrict__ rnrm,
                        float *__restrict__ hnrm, struct mieb_screen_i8_counts *__restrict__ counts)
{
    const int64_t r = (int64_t)blockIdx.x * SCREEN_I8_THREADS + threadIdx.x;
    if (r >= n)
        return;
    float h;
    if (!mieb_screen_i8_quantise_row(X + r * K, K, KP, out + r * KP, nullptr, &s[r], &nrm[r], &rnrm[r],
                               hnrm ? &hnrm[r] : &h))
        counts->bad = 1u; /* every writer stores the same value */
}

static __global__ void __launch_bounds__(SCREEN_I8_THREADS)
    screen_i8_bound_kernel(float *S, float *__restrict__ lb, int64_t ld, int n_cols, const float *__restrict__ sq,
                     const float *__restrict__ alpha, const float *__restrict__ beta, const float *__restrict__ sd,
                     const float *__restrict__ nd, const float *__restrict__ rnd, float s_abs)
{
    const int64_t r = blockIdx.y;
    const int j = (int)(blockIdx.x * SCREEN_I8_THREADS + threadIdx.x);
    if (j >= n_cols)
        return;
    const int64_t at = r * ld + j;
    const int32_t I = __float_as_int(S[at]); /* the int32 cuBLAS wrote, before this thread overwrites it */
    float l, u;
    mieb_screen_i8_interval(I, sq[r], sd[j], alpha[r], beta[r], nd[j], rnd[j], s_abs, &l, &u);
    S[at] = u;
    lb[at] = l;
}

static __global__ void __launch_bounds__(SCREEN_I8_THREADS)
    screen_i8_select_kernel(float *__restrict__ S, int64_t ld, int n_cols, const float *__restrict__ tau_floor,
                      const uint64_t *__restrict__ thr_lb, uint32_t *__restrict__ pairs, uint32_t cap,
                      struct mieb_screen_i8_counts *__restrict__ counts)
{
    const int64_t r = blockIdx.y;
    const int j = (int)(blockIdx.x * SCREEN_I8_THREADS + threadIdx.x);
    float tau = tau_floor[r];
    const uint64_t t = thr_lb[r];
    if (t) { /* the k-th largest lower bound so far: at most the k-th best score */
        const float kth = mieb_topk_key_score(t);
        tau = kth > tau ? kth : tau;
    }
    bool take = false;
    if (j < n_cols) {
        take = S[r * ld + j] >= tau; /* >=: a document tied at the k-th score stays */
        S[r * ld + j] = -INFINITY;
    }
    /* every lane of the warp reaches the ballot (no early return above) */
    const unsigned int lane = threadIdx.x & 31u, ballot = __ballot_sync(0xffffffffu, take);
    if (!ballot)
        return;
    const int leader = __ffs(ballot) - 1;
    unsigned int base = 0;
    if ((int)lane == leader)
        base = atomicAdd(&counts->count, (unsigned int)__popc(ballot));
    base = __shfl_sync(0xffffffffu, base, leader);
    const unsigned int pos = base + (unsigned int)__popc(ballot & ((1u << lane) - 1u));
    if (take) {
        if (pos < cap)
            pairs[pos] = (uint32_t)(r * ld + j);
        else
            counts->overflow = 1u;
    }
}

static __global__ void __launch_bounds__(SCREEN_I8_THREADS)
    screen_i8_rescore_kernel(const float *__restrict__ Q, const float *__restrict__ D, int64_t K,
                       const uint32_t *__restrict__ pairs, uint32_t cap, struct mieb_screen_i8_counts *counts,
                       float *__restrict__ S, int64_t ld)
{
    const unsigned int c = counts->count, n = c < cap ? c : cap;
    const int lane = (int)(threadIdx.x & 15u);
    const int64_t half = ((int64_t)blockIdx.x * SCREEN_I8_THREADS + threadIdx.x) >> 4;
    const int64_t halves = ((int64_t)gridDim.x * SCREEN_I8_THREADS) >> 4;
    /* the two halves of a warp take pairs p0 and p0 + 1: the loop's trip count is the warp's,
       so both reach canon_lanes_sum's shuffles together */
    for (int64_t p0 = half & ~(int64_t)1; p0 < (int64_t)n; p0 += halves) {
        const int64_t p = p0 + (half & 1);
        const bool live = p < (int64_t)n;
        const int64_t code = live ? (int64_t)pairs[p] : 0, r = code / ld, j = code % ld;
        const float *a = Q + r * K, *b = D + j * K;
        float acc = 0.0f;
        for (int64_t c0 = 0; c0 < K; c0 += CANON_LANES) { /* the last step is padded with zeros */
            const int64_t x = c0 + lane;
            acc = fmaf(live && x < K ? a[x] : 0.0f, live && x < K ? b[x] : 0.0f, acc);
        }
        acc = canon_lanes_sum(acc);
        if (live && lane == 0)
            S[code] = acc;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        counts->scored += n; /* the only writer of scored; count is only read here */
}

extern "C" mieb_status mieb_cuda_screen_i8_quantise(struct mieb_kstream ks, const float *X, int64_t n, int64_t K,
                                              int64_t KP, int8_t *out, float *s, float *nrm, float *rnrm,
                                              float *hnrm, struct mieb_screen_i8_counts *counts)
{
    MIEB_CUDA_REQUIRE(n >= 0 && K >= 1 && KP >= K && K <= MIEB_SCREEN_I8_MAX_K);
    if (n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(X && out && s && nrm && rnrm && counts);
    const int64_t blocks = (n + SCREEN_I8_THREADS - 1) / SCREEN_I8_THREADS;
    MIEB_CUDA_REQUIRE(blocks <= INT_MAX);
    screen_i8_quantise_kernel<<<(unsigned int)blocks, SCREEN_I8_THREADS, 0, ks.stream>>>(X, n, K, KP, out, s, nrm, rnrm, hnrm,
                                                                             counts);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}

extern "C" mieb_status mieb_cuda_screen_i8_bound(struct mieb_kstream ks, float *S, float *lb, int64_t ld, int64_t n_rows,
                                           int64_t n_cols, const float *sq, const float *alpha, const float *beta,
                                           const float *sd, const float *nd, const float *rnd, float s_abs)
{
    MIEB_CUDA_REQUIRE(n_rows >= 0 && n_rows <= 65535 && n_cols >= 0 && n_cols <= INT_MAX - SCREEN_I8_THREADS);
    MIEB_CUDA_REQUIRE(ld >= n_cols);
    if (n_rows == 0 || n_cols == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(S && lb && sq && alpha && beta && sd && nd && rnd);
    dim3 grid((unsigned int)((n_cols + SCREEN_I8_THREADS - 1) / SCREEN_I8_THREADS), (unsigned int)n_rows);
    screen_i8_bound_kernel<<<grid, SCREEN_I8_THREADS, 0, ks.stream>>>(S, lb, ld, (int)n_cols, sq, alpha, beta, sd, nd, rnd,
                                                          s_abs);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}

extern "C" mieb_status mieb_cuda_screen_i8_select(struct mieb_kstream ks, float *S, int64_t ld, int64_t n_rows,
                                            int64_t n_cols, const float *tau_floor, const uint64_t *thr_lb,
                                            uint32_t *pairs, uint32_t cap, struct mieb_screen_i8_counts *counts)
{
    MIEB_CUDA_REQUIRE(n_rows >= 0 && n_rows <= 65535 && n_cols >= 0 && n_cols <= INT_MAX - SCREEN_I8_THREADS);
    MIEB_CUDA_REQUIRE(ld >= n_cols && n_rows * ld <= (int64_t)UINT32_MAX);
    if (n_rows == 0 || n_cols == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(S && tau_floor && thr_lb && pairs && counts && cap >= 1);
    dim3 grid((unsigned int)((n_cols + SCREEN_I8_THREADS - 1) / SCREEN_I8_THREADS), (unsigned int)n_rows);
    screen_i8_select_kernel<<<grid, SCREEN_I8_THREADS, 0, ks.stream>>>(S, ld, (int)n_cols, tau_floor, thr_lb, pairs, cap,
                                                           counts);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}

extern "C" mieb_status mieb_cuda_screen_i8_rescore(struct mieb_kstream ks, const float *Q, const float *D, int64_t K,
                                             const uint32_t *pairs, uint32_t cap, struct mieb_screen_i8_counts *counts,
                                             float *S, int64_t ld)
{
    MIEB_CUDA_REQUIRE(K >= 1 && ld >= 1 && cap >= 1);
    MIEB_CUDA_REQUIRE(Q && D && pairs && counts && S);
    /* the list's length is on the device: a grid for the whole capacity, striding past it */
    const int64_t per_block = SCREEN_I8_THREADS / 16;
    int64_t blocks = ((int64_t)cap + per_block - 1) / per_block;
    blocks = blocks < SCREEN_I8_RESCORE_BLOCKS_MAX ? blocks : SCREEN_I8_RESCORE_BLOCKS_MAX;
    screen_i8_rescore_kernel<<<(unsigned int)blocks, SCREEN_I8_THREADS, 0, ks.stream>>>(Q, D, K, pairs, cap, counts, S, ld);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
