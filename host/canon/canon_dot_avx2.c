/**
 * canon_dot_avx2.c - the fixed-order dot product (canon_dot.h) with AVX2 + FMA.
 *
 * Each of the 16 canonical fma chains lives in one lane of a pair of 8-lane registers:
 * lanes 0-7 in `lo`, lanes 8-15 in `hi`, so the first level of the tree (lane l + lane
 * l+8) is lo + hi and the rest is the usual horizontal sum in the definition's order.
 *
 * Micro-tile: 3 rows of A x 4 rows of B = 12 pairs, one half of their chains at a time in
 * 12 of the 16 registers; per 8 floats of K it loads 7 vectors and issues 12 FMAs. As in the
 * AVX-512 kernel the operands are packed first, as [16-float chunk of K][row of the strip
 * or group][16], so that each micro-tile reads two sequential streams.
 *
 * Compiled with -mavx2 -mfma (CMakeLists.txt); only called when cpu_features says so.
 */
#include "canon_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define CANON_MR 3
#define CANON_NR 4
#define CANON_NB 96 /* rows of B per packed panel (288 KiB at K = 768) */
/* rows of A per block (8 strips, 72 KiB at K = 768): a B group is read from L2 once per 8
   tiles instead of once per tile; docs/DESIGN.md, canon_rate (AMD Zen 3: +2-13 % on
   the exact way's 256 x 1250 tile, +10-20 % at 1024 x 4096, same bits) */
#define CANON_MB 24

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

/* Rows [r0, r0 + rows) of X into [chunk][row][16] (nc chunks, zeros past K). */
static void pack(const float *X, int64_t ldx, int64_t r0, int rows, int64_t K, int64_t nc, float *out)
{
    for (int64_t c = 0; c < nc; c++)
        for (int r = 0; r < rows; r++) {
            const float *x = X + (r0 + r) * ldx;
            _mm256_store_ps(out + (c * rows + r) * 16, load8(x, c * 16, K));
            _mm256_store_ps(out + (c * rows + r) * 16 + 8, load8(x, c * 16 + 8, K));
        }
}

/* A full micro-tile from packed operands. The lanes 0-7 of all its pairs' chains are run
   first, then lanes 8-15 (the chains are independent, so the order between them changes no
   bit): twelve pairs fit in the sixteen registers that way, six if both halves were live. */
static inline void tile_packed(const float *ap, const float *bp, int64_t nc, float *C, int64_t ldc)
{
    __m256 half[2][CANON_MR * CANON_NR];
    for (int h = 0; h < 2; h++) {
        __m256 acc[CANON_MR * CANON_NR];
        for (int x = 0; x < CANON_MR * CANON_NR; x++)
            acc[x] = _mm256_setzero_ps();
        for (int64_t c = 0; c < nc; c++) {
            const float *a = ap + c * CANON_MR * 16 + 8 * h, *b = bp + c * CANON_NR * 16 + 8 * h;
            __m256 q[CANON_MR];
            for (int i = 0; i < CANON_MR; i++)
                q[i] = _mm256_load_ps(a + i * 16);
            for (int j = 0; j < CANON_NR; j++) {
                __m256 d = _mm256_load_ps(b + j * 16);
                for (int i = 0; i < CANON_MR; i++)
                    acc[i * CANON_NR + j] = _mm256_fmadd_ps(q[i], d, acc[i * CANON_NR + j]);
            }
        }
        for (int x = 0; x < CANON_MR * CANON_NR; x++)
            half[h][x] = acc[x];
    }
    for (int i = 0; i < CANON_MR; i++)
        for (int j = 0; j < CANON_NR; j++)
            C[i * ldc + j] = tree2(half[0][i * CANON_NR + j], half[1][i * CANON_NR + j]);
}

/* Any tile of mr <= CANON_MR rows of A x nr <= CANON_NR rows of B, read in place. */
static void tile_edge(const float *A, int64_t lda, int mr, const float *B, int64_t ldb, int nr, int64_t K,
                      float *C, int64_t ldc)
{
    __m256 lo[CANON_MR][CANON_NR], hi[CANON_MR][CANON_NR];
    for (int i = 0; i < CANON_MR; i++)
        for (int j = 0; j < CANON_NR; j++)
            lo[i][j] = hi[i][j] = _mm256_setzero_ps();
    for (int64_t c = 0; c < K; c += 16) {
        __m256 a[CANON_MR][2];
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

#include "canon_gemm_blocked.h"

void mieb_canon_gemm_avx2(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n,
                          int64_t K, float *C, int64_t ldc)
{
    canon_gemm_blocked(A, lda, m, B, ldb, n, K, C, ldc);
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
