/**
 * canon_dot_avx512.c - the fixed-order dot product (canon_dot.h) with AVX-512.
 *
 * One 16-lane register holds the 16 fma chains of one (row of A, row of B) pair, so the
 * canonical order is simply the register's natural use; the pairwise tree at the end is
 * done for 16 pairs at once by a shuffle network whose every addition adds the same two
 * lanes the scalar definition adds (the bits are checked by tests/unit/test_canon_dot.c).
 *
 * Micro-tile: 6 rows of A x 4 rows of B = 24 accumulators; per 16 floats of K it loads 10
 * vectors and issues 24 FMAs. Both operands are first packed so that each micro-tile reads
 * two sequential streams: A in strips of 6 rows, B in panels of CANON_NB rows, both as
 * [16-float chunk of K][row of the strip or group][16] (zero-padded past K, which is the
 * definition's padding). Measured at 0.83-0.91 of OpenBLAS's SkylakeX SGEMM on the same
 * shapes (bench/canon_rate.c, bench/README.md); reading the rows in place reached 0.6-0.7.
 *
 * Compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma (CMakeLists.txt); only
 * called when cpu_features says the CPU and OS run AVX-512.
 */
#include "canon_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define CANON_MR 6
#define CANON_NR 4
#define CANON_NB 64 /* rows of B per packed panel (192 KiB at K = 768) */

/* Lanes [c, c + 16) of a row that has K elements, as a load mask (zeros past K). */
static inline __mmask16 lanes(int64_t c, int64_t K)
{
    return K - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (K - c)) - 1u);
}

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

/* Rows [r0, r0 + rows) of X into [chunk][row][16] (nc chunks, zeros past K). */
static void pack(const float *X, int64_t ldx, int64_t r0, int rows, int64_t K, int64_t nc, float *out)
{
    for (int64_t c = 0; c < nc; c++)
        for (int r = 0; r < rows; r++)
            _mm512_store_ps(out + (c * rows + r) * 16, _mm512_maskz_loadu_ps(lanes(c * 16, K), X + (r0 + r) * ldx + c * 16));
}

/* A full micro-tile from packed operands: C[i][j] = dot(A_i, B_j). */
static inline void tile_packed(const float *ap, const float *bp, int64_t nc, float *C, int64_t ldc)
{
    enum { NACC = CANON_MR * CANON_NR, NGRP = (NACC + 15) / 16 };
    __m512 acc[NACC];
    for (int x = 0; x < NACC; x++)
        acc[x] = _mm512_setzero_ps();
    for (int64_t c = 0; c < nc; c++) {
        __m512 q[CANON_MR];
        for (int i = 0; i < CANON_MR; i++)
            q[i] = _mm512_load_ps(ap + (c * CANON_MR + i) * 16);
        for (int j = 0; j < CANON_NR; j++) {
            __m512 d = _mm512_load_ps(bp + (c * CANON_NR + j) * 16);
            for (int i = 0; i < CANON_MR; i++)
                acc[i * CANON_NR + j] = _mm512_fmadd_ps(q[i], d, acc[i * CANON_NR + j]);
        }
    }
    /* tree16 puts the dot of acc[16g + 4p + c] at lane 4c + p of group g: permute to natural order */
    const __m512i nat = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    float out[NGRP * 16] __attribute__((aligned(64)));
    for (int g = 0; g < NGRP; g++) {
        __m512 grp[16];
        for (int x = 0; x < 16; x++)
            grp[x] = 16 * g + x < NACC ? acc[16 * g + x] : _mm512_setzero_ps();
        _mm512_store_ps(out + 16 * g, _mm512_permutexvar_ps(nat, tree16(grp)));
    }
    for (int i = 0; i < CANON_MR; i++)
        for (int j = 0; j < CANON_NR; j++)
            C[i * ldc + j] = out[i * CANON_NR + j];
}

/* Any tile of mr <= CANON_MR rows of A x nr <= CANON_NR rows of B, read in place. */
static void tile_edge(const float *A, int64_t lda, int mr, const float *B, int64_t ldb, int nr, int64_t K,
                      float *C, int64_t ldc)
{
    __m512 acc[CANON_MR][CANON_NR];
    for (int i = 0; i < CANON_MR; i++)
        for (int j = 0; j < CANON_NR; j++)
            acc[i][j] = _mm512_setzero_ps();
    for (int64_t c = 0; c < K; c += 16) {
        __mmask16 m = lanes(c, K);
        __m512 q[CANON_MR];
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

#include "canon_gemm_blocked.h"

void mieb_canon_gemm_avx512(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n,
                            int64_t K, float *C, int64_t ldc)
{
    canon_gemm_blocked(A, lda, m, B, ldb, n, K, C, ldc);
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
        for (int64_t c = 0; c < K; c += 16) {
            __mmask16 m = lanes(c, K);
            __m512 v = _mm512_maskz_loadu_ps(m, x + c);
            for (int r = 0; r < 8; r++)
                acc[r] = _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, b[r] + c), acc[r]);
        }
        for (int r = 0; r < nr; r++)
            out[j + r] = tree1(acc[r]);
    }
}
#endif
