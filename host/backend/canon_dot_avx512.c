/**
 * canon_dot_avx512.c - the fixed-order dot product (canon_dot.h) with AVX-512.
 *
 * One 16-lane register holds the 16 fma chains of one (row of A, row of B) pair, so the
 * canonical order is simply the register's natural use; the pairwise tree at the end is
 * done for 16 pairs at once by a shuffle network whose every addition adds the same two
 * lanes the scalar definition adds (the bits are checked by tests/unit/test_canon_dot.c).
 *
 * Micro-tile: 4 rows of A x 4 rows of B = 16 accumulators; per 16 floats of K it loads
 * 8 vectors and issues 16 FMAs. B is walked in panels of CANON_NB rows (768 KiB at
 * K = 768, L2-resident) while each 4-row strip of A (12 KiB) stays in L1: measured at the
 * rate of OpenBLAS's SkylakeX SGEMM on the same shapes (bench/README.md).
 *
 * Compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma (CMakeLists.txt); only
 * called when cpu_features says the CPU and OS run AVX-512.
 */
#include "canon_dot.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define CANON_MR 4
#define CANON_NR 4
#define CANON_NB 256 /* rows of B per panel */

/* The tree of one accumulator: lanes (l, l+8), then (l, l+4), (l, l+2), (l, l+1). */
static inline float tree1(__m512 v)
{
    __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

/* The tree of 16 accumulators a[0..15] at once. Returns r with r[4c + p] = tree(a[4p + c]). */
static inline __m512 tree16(const __m512 a[16])
{
    __m512 t[8], w[4], y[2];
    for (int p = 0; p < 8; p++) /* s8: lanes l + l+8 of a[2p] into lanes 0-7, of a[2p+1] into 8-15 */
        t[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0xEE));
    for (int r = 0; r < 4; r++) /* s4: block c = s4 of a[4r + c] */
        w[r] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * r], t[2 * r + 1], 0x88),
                             _mm512_shuffle_f32x4(t[2 * r], t[2 * r + 1], 0xDD));
    for (int s = 0; s < 2; s++) /* s2: block c = s2 of a[8s + c], then of a[8s + 4 + c] */
        y[s] = _mm512_add_ps(_mm512_shuffle_ps(w[2 * s], w[2 * s + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(w[2 * s], w[2 * s + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    return _mm512_add_ps(_mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Full 4 x 4 tile: C[i][j] = dot(A_i, B_j). */
static inline void tile4x4(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t K, float *C,
                           int64_t ldc)
{
    __m512 acc[16];
    for (int x = 0; x < 16; x++)
        acc[x] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 16 <= K; c += 16) {
        __m512 q0 = _mm512_loadu_ps(A + c), q1 = _mm512_loadu_ps(A + lda + c);
        __m512 q2 = _mm512_loadu_ps(A + 2 * lda + c), q3 = _mm512_loadu_ps(A + 3 * lda + c);
        for (int j = 0; j < 4; j++) {
            __m512 d = _mm512_loadu_ps(B + j * ldb + c);
            acc[0 + j] = _mm512_fmadd_ps(q0, d, acc[0 + j]);
            acc[4 + j] = _mm512_fmadd_ps(q1, d, acc[4 + j]);
            acc[8 + j] = _mm512_fmadd_ps(q2, d, acc[8 + j]);
            acc[12 + j] = _mm512_fmadd_ps(q3, d, acc[12 + j]);
        }
    }
    if (c < K) { /* the tail reads as zeros, as in the definition */
        __mmask16 m = (__mmask16)((1u << (K - c)) - 1u);
        __m512 q[4];
        for (int i = 0; i < 4; i++)
            q[i] = _mm512_maskz_loadu_ps(m, A + i * lda + c);
        for (int j = 0; j < 4; j++) {
            __m512 d = _mm512_maskz_loadu_ps(m, B + j * ldb + c);
            for (int i = 0; i < 4; i++)
                acc[4 * i + j] = _mm512_fmadd_ps(q[i], d, acc[4 * i + j]);
        }
    }
    /* acc[4i + j] is (A_i, B_j); tree16 puts its dot at lane 4j + i: gather lane 4i + j from there */
    __m512 r = tree16(acc);
    const __m512i to_rows = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    r = _mm512_permutexvar_ps(to_rows, r);
    _mm_storeu_ps(C, _mm512_castps512_ps128(r));
    _mm_storeu_ps(C + ldc, _mm512_extractf32x4_ps(r, 1));
    _mm_storeu_ps(C + 2 * ldc, _mm512_extractf32x4_ps(r, 2));
    _mm_storeu_ps(C + 3 * ldc, _mm512_extractf32x4_ps(r, 3));
}

/* Edge tile, mr <= 4 rows of A x nr <= 4 rows of B, one tree per accumulator. */
static void tile_edge(const float *A, int64_t lda, int mr, const float *B, int64_t ldb, int nr, int64_t K,
                      float *C, int64_t ldc)
{
    __m512 acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            acc[i][j] = _mm512_setzero_ps();
    for (int64_t c = 0; c < K; c += 16) {
        __mmask16 m = K - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (K - c)) - 1u);
        __m512 q[4];
        for (int i = 0; i < mr; i++)
            q[i] = _mm512_maskz_loadu_ps(m, A + i * lda + c);
        for (int j = 0; j < nr; j++) {
            __m512 d = _mm512_maskz_loadu_ps(m, B + j * ldb + c);
            for (int i = 0; i < mr; i++)
                acc[i][j] = _mm512_fmadd_ps(q[i], d, acc[i][j]);
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            C[i * ldc + j] = tree1(acc[i][j]);
}

void mieb_canon_gemm_avx512(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n,
                            int64_t K, float *C, int64_t ldc)
{
    for (int64_t j0 = 0; j0 < n; j0 += CANON_NB) {
        int64_t j1 = n - j0 < CANON_NB ? n : j0 + CANON_NB;
        for (int64_t i = 0; i < m; i += CANON_MR) {
            int mr = m - i < CANON_MR ? (int)(m - i) : CANON_MR;
            for (int64_t j = j0; j < j1; j += CANON_NR) {
                int nr = j1 - j < CANON_NR ? (int)(j1 - j) : CANON_NR;
                if (mr == CANON_MR && nr == CANON_NR)
                    tile4x4(A + i * lda, lda, B + j * ldb, ldb, K, C + i * ldc + j, ldc);
                else
                    tile_edge(A + i * lda, lda, mr, B + j * ldb, ldb, nr, K, C + i * ldc + j, ldc);
            }
        }
    }
}

void mieb_canon_dot_rows_avx512(const float *x, const float *B, int64_t ldb, const int32_t *rows, int64_t n,
                                int64_t K, float *out)
{
    /* 8 rows at a time: the rows come from L2 (rescoring gathers them), so the more loads
       in flight the better; x stays in L1 */
    for (int64_t j = 0; j < n; j += 8) {
        int nr = n - j < 8 ? (int)(n - j) : 8;
        const float *b[8];
        __m512 acc[8];
        for (int r = 0; r < 8; r++) {
            b[r] = B + (int64_t)rows[j + (r < nr ? r : 0)] * ldb;
            acc[r] = _mm512_setzero_ps();
        }
        int64_t c = 0;
        for (; c + 16 <= K; c += 16) {
            __m512 v = _mm512_loadu_ps(x + c);
            for (int r = 0; r < 8; r++)
                acc[r] = _mm512_fmadd_ps(v, _mm512_loadu_ps(b[r] + c), acc[r]);
        }
        if (c < K) {
            __mmask16 m = (__mmask16)((1u << (K - c)) - 1u);
            __m512 v = _mm512_maskz_loadu_ps(m, x + c);
            for (int r = 0; r < 8; r++)
                acc[r] = _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, b[r] + c), acc[r]);
        }
        for (int r = 0; r < nr; r++)
            out[j + r] = tree1(acc[r]);
    }
}
#endif
