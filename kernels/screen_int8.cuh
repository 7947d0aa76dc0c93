/**
 * screen_int8.cuh - launchers of the int8 screen's kernels (kernels/screen_int8.cu): the GPU side
 * of docs/SCREEN_INT8.md. The integer scores between them come from cuBLAS
 * (mieb_cuda_gemm_i8_nt, cuda/gemm.h); cuda/cuda_screen.c drives them per corpus tile.
 * CPU references: backend/screen_int8_math.h (the same functions run on the host) and
 * host/canon/canon_dot.h (the rescoring), bit for bit on the emulator (tests/gpu/emu).
 */
#ifndef MIEB_KERNELS_SCREEN_I8_CUH
#define MIEB_KERNELS_SCREEN_I8_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The screen's device counters for one query group (zeroed by the caller at its start). */
struct mieb_screen_i8_counts {
    unsigned int count;       /* candidates appended by the last select (reset before each) */
    unsigned int overflow;    /* 1: a select found more candidates than the list holds */
    unsigned int bad;         /* 1: a row's norm is beyond what the bound covers (2^60, NaN, inf) */
    unsigned int pad;
    unsigned long long scored; /* candidates rescored so far */
};

/**
 * Rows X [n, K] (row-major fp32, device) to int8 rows out [n, KP] (zeros from K to KP), their
 * scales s [n] and norm bounds nrm, rnrm [n] (and hnrm [n] unless NULL), each row exactly as
 * mieb_screen_i8_quantise_row does; sets counts->bad when a row's norm is out of range.
 */
mieb_status mieb_cuda_screen_i8_quantise(struct mieb_kstream ks, const float *X, int64_t n, int64_t K, int64_t KP,
                                   int8_t *out, float *s, float *nrm, float *rnrm, float *hnrm,
                                   struct mieb_screen_i8_counts *counts);

/**
 * For r < n_rows, j < n_cols: the integer score I = ((const int32_t *)S)[r * ld + j] becomes
 * its interval (mieb_screen_i8_interval with query r's sq, alpha, beta and document j's sd, nd,
 * rnd): S[r * ld + j] = ub (float, in place) and lb[r * ld + j] = lb.
 */
mieb_status mieb_cuda_screen_i8_bound(struct mieb_kstream ks, float *S, float *lb, int64_t ld, int64_t n_rows,
                                int64_t n_cols, const float *sq, const float *alpha, const float *beta,
                                const float *sd, const float *nd, const float *rnd, float s_abs);

/**
 * Candidates: with tau_r = max(tau_floor[r], the score of key thr_lb[r] when it is not 0),
 * every (r, j) with ub = S[r * ld + j] >= tau_r is appended as r * ld + j to pairs (in any
 * order; at most cap, counts->overflow = 1 past it) and counts->count counts them; every
 * S[r * ld + j] (j < n_cols) becomes -inf, which the rescoring overwrites for the candidates.
 */
mieb_status mieb_cuda_screen_i8_select(struct mieb_kstream ks, float *S, int64_t ld, int64_t n_rows, int64_t n_cols,
                                 const float *tau_floor, const uint64_t *thr_lb, uint32_t *pairs, uint32_t cap,
                                 struct mieb_screen_i8_counts *counts);

/**
 * The candidates' exact scores: for the first min(counts->count, cap) entries p = r * ld + j
 * of pairs, S[p] = mieb_canon_dot(Q + r * K, D + j * K, K) (host/canon/canon_dot.h's order);
 * counts->scored grows by their number.
 */
mieb_status mieb_cuda_screen_i8_rescore(struct mieb_kstream ks, const float *Q, const float *D, int64_t K,
                                  const uint32_t *pairs, uint32_t cap, struct mieb_screen_i8_counts *counts, float *S,
                                  int64_t ld);

#ifdef __cplusplus
}
#endif
#endif
