/**
 * canon_dot_avx2.c - the fixed-order dot product (canon_dot.h) with AVX2 + FMA.
 *
 * Each of the 16 canonical fma chains lives in one lane of a pair of 8-lane registers:
 * lanes 0-7 in `lo`, lanes 8-15 in `hi`, so the first level of the tree (lane l + lane
 * l+8) is lo + hi and the rest is the usual horizontal sum in the definition's order.
 *
 * Micro-tile: 2 rows of A x 3 rows of B = 6 pairs = 12 accumulators (of 16 registers);
 * per 16 floats of K it loads 10 vectors and issues 12 FMAs. B is walked in panels of
 * CANON_NB rows while each 2-row strip of A stays in L1.
 *
 * Compiled with -mavx2 -mfma (CMakeLists.txt); only called when cpu_features says so.
 */
#include "canon_dot.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define CANON_MR 2
#define CANON_NR 3
#define CANON_NB 192

static inline float tree2(__m256 lo, __m256 hi)
{
    __m256 s8 = _mm256_add_ps(lo, hi);
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

/* Lanes [c, c + 8) of a row, zeros past K (the definition's padding). */
static inline __m256 load8(const float *p, int64_t c, int64_t K)
{
    if (c + 8 <= K)
        return _mm256_loadu_ps(p + c);
    if (c >= K)
        return _mm256_setzero_ps();
    int64_t n = K - c;
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lane);
    return _mm256_maskload_ps(p + c, mask);
}

/* mr <= 2 rows of A x nr <= 3 rows of B; full tiles take the unmasked loop. */
static inline void tile(const float *A, int64_t lda, int mr, const float *B, int64_t ldb, int nr, int64_t K,
                        float *C, int64_t ldc)
{
    __m256 lo[2][3], hi[2][3];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            lo[i][j] = hi[i][j] = _mm256_setzero_ps();
    int64_t c = 0;
    if (mr == 2 && nr == 3)
        for (; c + 16 <= K; c += 16) {
            __m256 a0 = _mm256_loadu_ps(A + c), a1 = _mm256_loadu_ps(A + lda + c);
            for (int j = 0; j < 3; j++) {
                __m256 b = _mm256_loadu_ps(B + j * ldb + c);
                lo[0][j] = _mm256_fmadd_ps(a0, b, lo[0][j]);
                lo[1][j] = _mm256_fmadd_ps(a1, b, lo[1][j]);
            }
            a0 = _mm256_loadu_ps(A + c + 8);
            a1 = _mm256_loadu_ps(A + lda + c + 8);
            for (int j = 0; j < 3; j++) {
                __m256 b = _mm256_loadu_ps(B + j * ldb + c + 8);
                hi[0][j] = _mm256_fmadd_ps(a0, b, hi[0][j]);
                hi[1][j] = _mm256_fmadd_ps(a1, b, hi[1][j]);
            }
        }
    for (; c < K; c += 16) {
        __m256 a[2][2];
        for (int i = 0; i < mr; i++) {
            a[i][0] = load8(A + i * lda, c, K);
            a[i][1] = load8(A + i * lda, c + 8, K);
        }
        for (int j = 0; j < nr; j++) {
            __m256 b0 = load8(B + j * ldb, c, K), b1 = load8(B + j * ldb, c + 8, K);
            for (int i = 0; i < mr; i++) {
                lo[i][j] = _mm256_fmadd_ps(a[i][0], b0, lo[i][j]);
                hi[i][j] = _mm256_fmadd_ps(a[i][1], b1, hi[i][j]);
            }
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            C[i * ldc + j] = tree2(lo[i][j], hi[i][j]);
}

void mieb_canon_gemm_avx2(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n,
                          int64_t K, float *C, int64_t ldc)
{
    for (int64_t j0 = 0; j0 < n; j0 += CANON_NB) {
        int64_t j1 = n - j0 < CANON_NB ? n : j0 + CANON_NB;
        for (int64_t i = 0; i < m; i += CANON_MR) {
            int mr = m - i < CANON_MR ? (int)(m - i) : CANON_MR;
            for (int64_t j = j0; j < j1; j += CANON_NR) {
                int nr = j1 - j < CANON_NR ? (int)(j1 - j) : CANON_NR;
                if (mr == CANON_MR && nr == CANON_NR)
                    tile(A + i * lda, lda, CANON_MR, B + j * ldb, ldb, CANON_NR, K, C + i * ldc + j, ldc);
                else
                    tile(A + i * lda, lda, mr, B + j * ldb, ldb, nr, K, C + i * ldc + j, ldc);
            }
        }
    }
}

void mieb_canon_dot_rows_avx2(const float *x, const float *B, int64_t ldb, const int32_t *rows, int64_t n,
                              int64_t K, float *out)
{
    for (int64_t j = 0; j < n; j += 3) {
        int nr = n - j < 3 ? (int)(n - j) : 3;
        const float *b[3];
        __m256 lo[3], hi[3];
        for (int r = 0; r < 3; r++) {
            b[r] = B + (int64_t)rows[j + (r < nr ? r : 0)] * ldb;
            lo[r] = hi[r] = _mm256_setzero_ps();
        }
        for (int64_t c = 0; c < K; c += 16) {
            __m256 x0 = load8(x, c, K), x1 = load8(x, c + 8, K);
            for (int r = 0; r < 3; r++) {
                lo[r] = _mm256_fmadd_ps(x0, load8(b[r], c, K), lo[r]);
                hi[r] = _mm256_fmadd_ps(x1, load8(b[r], c + 8, K), hi[r]);
            }
        }
        for (int r = 0; r < nr; r++)
            out[j + r] = tree2(lo[r], hi[r]);
    }
}
#endif
