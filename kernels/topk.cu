/**
 * topk.cu - merge a score tile into each query's running top-k, by radix selection.
 *
 * One thread block per query row. Candidates are the row's kept keys plus the tile's
 * keys above the row's threshold `thr` (no key at or below it can enter: the row already
 * holds ke keys above it, or the caller's floor excludes it). The kernel
 *   1. counts the real kept keys and the tile candidates, compacting the candidates
 *      into shared memory when they fit (the usual case after the first tiles);
 *   2. if there are more than ke, finds the ke-th largest key T by an MSB-first radix
 *      select over 8-bit digits, stopping as soon as a digit bin holds exactly the
 *      number still wanted (keys are unique, so it always stops by the last digit);
 *   3. writes every candidate >= T (exactly ke of them) to state_out, pads with the 0
 *      sentinel, and stores T as the row's new threshold (when there were more than ke;
 *      otherwise the threshold stays).
 * Because keys encode (score, index) uniquely, the kept set is exactly the CPU
 * reference's, whatever order the threads run in.
 */
#include <limits.h>

#include "cuda_check.h"
#include "topk.cuh"
#include "topk_key.h"

#define TOPK_THREADS 256
#define TOPK_CAND_MAX 3072 /* tile candidates kept in shared memory (24 KiB) */
#define RADIX_BINS 256

struct topk_smem {
    uint64_t cand[TOPK_CAND_MAX];
    unsigned int hist[RADIX_BINS];
    unsigned int n_cand, n_real, n_out;
    unsigned int sel_digit, k_rem, done;
};

/* Warp-aggregated slot reservation: every lane calls it; lanes with take get distinct
 * consecutive positions from *counter, one shared-memory atomic per warp. */
static __device__ __forceinline__ unsigned int warp_reserve(bool take, unsigned int *counter)
{
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int ballot = __ballot_sync(0xffffffffu, take);
    unsigned int base = 0;
    if (ballot) {
        const int leader = __ffs(ballot) - 1;
        if ((int)lane == leader)
            base = atomicAdd(counter, (unsigned int)__popc(ballot));
        base = __shfl_sync(0xffffffffu, base, leader);
    }
    return base + (unsigned int)__popc(ballot & ((1u << lane) - 1u));
}

/* Calls f(key, valid) for every candidate of the row, the same number of times in every
 * lane of a warp (loops step by whole blocks), so f may use warp intrinsics. */
template <typename F>
static __device__ __forceinline__ void for_each_candidate(const uint64_t *sin, int ke, const float *srow,
                                                          int n_cols, uint32_t col_base, uint64_t t_old,
                                                          const struct topk_smem &sm, bool compact,
                                                          unsigned int n_cand, F f)
{
    for (int base = 0; base < ke; base += TOPK_THREADS) {
        const int i = base + (int)threadIdx.x;
        const uint64_t key = i < ke ? sin[i] : 0;
        f(key, key != 0);
    }
    if (compact) {
        for (unsigned int base = 0; base < n_cand; base += TOPK_THREADS) {
            const unsigned int i = base + threadIdx.x;
            const bool v = i < n_cand;
            f(v ? sm.cand[i] : 0, v);
        }
    } else {
        for (int base = 0; base < n_cols; base += TOPK_THREADS) {
            const int j = base + (int)threadIdx.x;
            uint64_t key = 0;
            if (j < n_cols)
                key = mieb_topk_key(srow[j], col_base + (uint32_t)j);
            f(key, j < n_cols && key > t_old);
        }
    }
}

static __global__ void __launch_bounds__(TOPK_THREADS)
    topk_update_kernel(const float *__restrict__ scores, int64_t ld, int n_cols, uint32_t col_base,
                       const uint64_t *__restrict__ state_in, uint64_t *__restrict__ state_out,
                       uint64_t *__restrict__ thr, int ke)
{
    __shared__ struct topk_smem sm;
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    const float *srow = scores + (int64_t)row * ld;
    const uint64_t *sin = state_in + (int64_t)row * ke;
    uint64_t *sout = state_out + (int64_t)row * ke;
    const uint64_t t_old = thr[row];

    if (tid == 0) {
        sm.n_cand = 0;
        sm.n_real = 0;
        sm.n_out = 0;
    }
    __syncthreads();

    /* 1. count kept keys; count and compact the tile's keys above the threshold */
    unsigned int my_real = 0;
    for (int i = tid; i < ke; i += TOPK_THREADS)
        my_real += sin[i] != 0;
    if (my_real)
        atomicAdd(&sm.n_real, my_real);
    for (int base = 0; base < n_cols; base += TOPK_THREADS) {
        const int j = base + tid;
        uint64_t key = 0;
        if (j < n_cols)
            key = mieb_topk_key(srow[j], col_base + (uint32_t)j);
        const bool take = j < n_cols && key > t_old;
        const unsigned int pos = warp_reserve(take, &sm.n_cand);
        if (take && pos < TOPK_CAND_MAX)
            sm.cand[pos] = key;
    }
    __syncthreads();
    const unsigned int n_cand = sm.n_cand;
    const bool compact = n_cand <= TOPK_CAND_MAX;
    const int64_t total = (int64_t)sm.n_real + (int64_t)n_cand;

    /* 2. T = the ke-th largest candidate, when there are more than ke */
    uint64_t T = 0;
    if (total > ke) {
        uint64_t prefix = 0, mask = 0;
        unsigned int k_rem = (unsigned int)ke;
        for (int shift = 56; shift >= 0; shift -= 8) {
            for (int b = tid; b < RADIX_BINS; b += TOPK_THREADS)
                sm.hist[b] = 0;
            __syncthreads();
            for_each_candidate(sin, ke, srow, n_cols, col_base, t_old, sm, compact, n_cand,
                               [&](uint64_t key, bool v) {
                                   const unsigned int d = (v && (key & mask) == prefix)
                                                              ? (unsigned int)(key >> shift) & 0xffu
                                                              : RADIX_BINS;
                                   const unsigned int peers = __match_any_sync(0xffffffffu, d);
                                   if (d < RADIX_BINS && (int)(threadIdx.x & 31u) == __ffs(peers) - 1)
                                       atomicAdd(&sm.hist[d], (unsigned int)__popc(peers));
                               });
            __syncthreads();
            if (tid == 0) {
                /* walk the bins from the top until the k_rem-th key is inside one */
                unsigned int cum = 0;
                int d = RADIX_BINS - 1;
                for (; d > 0; d--) {
                    if (cum + sm.hist[d] >= k_rem)
                        break;
                    cum += sm.hist[d];
                }
                sm.sel_digit = (unsigned int)d;
                sm.k_rem = k_rem - cum;
                sm.done = sm.hist[d] == k_rem - cum;
            }
            __syncthreads();
            prefix |= (uint64_t)sm.sel_digit << shift;
            mask |= (uint64_t)0xffu << shift;
            k_rem = sm.k_rem;
            const bool done = sm.done != 0;
            __syncthreads(); /* everyone has read sm.* before the next round rewrites it */
            if (done)
                break;
        }
        T = prefix; /* candidates >= T are exactly the ke largest */
    }

    /* 3. write the kept set (unordered), pad with the sentinel, store the threshold */
    for_each_candidate(sin, ke, srow, n_cols, col_base, t_old, sm, compact, n_cand, [&](uint64_t key, bool v) {
        const bool take = v && key >= T;
        const unsigned int pos = warp_reserve(take, &sm.n_out);
        if (take && pos < (unsigned int)ke)
            sout[pos] = key;
    });
    __syncthreads();
    const int n_out = sm.n_out < (unsigned int)ke ? (int)sm.n_out : ke;
    for (int i = n_out + tid; i < ke; i += TOPK_THREADS)
        sout[i] = 0;
    /* Without an overflow the old bound still holds: either nothing was kept before
     * (t_old is 0 or the caller's floor) or the tile brought no candidate at all, and
     * resetting to 0 then would send the whole next tile down the uncompacted path. */
    if (tid == 0)
        thr[row] = total > ke ? T : t_old;
}

extern "C" mieb_status mieb_cuda_topk_update(struct mieb_kstream ks, const float *scores, int64_t ld,
                                             int64_t n_rows, int64_t n_cols, int64_t col_base,
                                             const uint64_t *state_in, uint64_t *state_out, uint64_t *thr,
                                             int64_t ke)
{
    MIEB_CUDA_REQUIRE(n_rows >= 0 && n_rows <= INT_MAX);
    MIEB_CUDA_REQUIRE(n_cols >= 0 && n_cols <= INT_MAX && ld >= n_cols);
    MIEB_CUDA_REQUIRE(col_base >= 0 && col_base + n_cols <= (int64_t)MIEB_TOPK_MAX_INDEX + 1);
    MIEB_CUDA_REQUIRE(ke >= 1 && ke <= INT_MAX);
    if (n_rows == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(state_in && state_out && thr && state_in != state_out);
    MIEB_CUDA_REQUIRE(scores || n_cols == 0);
    topk_update_kernel<<<(unsigned int)n_rows, TOPK_THREADS, 0, ks.stream>>>(
        scores, ld, (int)n_cols, (uint32_t)col_base, state_in, state_out, thr, (int)ke);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
