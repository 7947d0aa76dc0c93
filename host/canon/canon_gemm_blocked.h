/**
 * canon_gemm_blocked.h - the blocking loop of the SIMD canon_dot kernels, written once.
 *
 * Included by canon_dot_avx2.c and canon_dot_avx512.c after they define CANON_MR, CANON_NR,
 * CANON_NB and three static functions for their instruction set:
 *   pack(X, ldx, r0, rows, K, nc, out)       rows r0.. of X into [16-float chunk][row][16]
 *   tile_packed(ap, bp, nc, C, ldc)          a full CANON_MR x CANON_NR tile, packed operands
 *   tile_edge(A, lda, mr, B, ldb, nr, K, C, ldc)  any smaller tile, operands in place
 * Each file's copy is compiled for its own instruction set, with its kernels inlined.
 *
 * A is packed whole in strips of CANON_MR rows; B one panel of CANON_NB rows at a time, in
 * groups of CANON_NR rows. Within a panel, A is taken in blocks of CANON_MB rows (a file may
 * define it; the default, one strip, runs each strip against the whole panel): each group of
 * B then serves every strip of the block from L1 while the block's strips come from L2. The
 * order of the tiles changes no bit, only which operand streams. Edges, and everything when
 * no workspace could be had, take tile_edge: the same bits, slower.
 */
#ifndef CANON_MB
#define CANON_MB CANON_MR
#endif
static void canon_gemm_blocked(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n,
                               int64_t K, float *C, int64_t ldc)
{
    int64_t nc = (K + 15) / 16, mfull = m / CANON_MR * CANON_MR;
    size_t a_floats = (size_t)(mfull * nc * 16), b_floats = (size_t)(CANON_NB * nc * 16);
    /* B's panel starts 1 KiB + 64 bytes past A's strips: at a multiple of 4 KiB both would
       map their streams onto the same L1 sets */
    size_t gap = 272;
    float *ap = mieb_canon_workspace(sizeof(float) * (a_floats + gap + b_floats));
    float *bp = ap ? ap + a_floats + gap : NULL;
    if (ap)
        for (int64_t i = 0; i < mfull; i += CANON_MR)
            pack(A, lda, i, CANON_MR, K, nc, ap + i * nc * 16);
    for (int64_t j0 = 0; j0 < n; j0 += CANON_NB) {
        int64_t j1 = n - j0 < CANON_NB ? n : j0 + CANON_NB;
        int64_t jfull = j0 + (j1 - j0) / CANON_NR * CANON_NR;
        if (ap)
            for (int64_t j = j0; j < jfull; j += CANON_NR)
                pack(B, ldb, j, CANON_NR, K, nc, bp + (j - j0) * nc * 16);
        for (int64_t i0 = 0; i0 < m; i0 += CANON_MB) {
            int64_t i1 = m - i0 < CANON_MB ? m : i0 + CANON_MB;
            for (int64_t j = j0; j < j1; j += CANON_NR) {
                int nr = j1 - j < CANON_NR ? (int)(j1 - j) : CANON_NR;
                for (int64_t i = i0; i < i1; i += CANON_MR) {
                    int mr = m - i < CANON_MR ? (int)(m - i) : CANON_MR;
                    if (ap && mr == CANON_MR && nr == CANON_NR)
                        tile_packed(ap + i * nc * 16, bp + (j - j0) * nc * 16, nc, C + i * ldc + j, ldc);
                    else
                        tile_edge(A + i * lda, lda, mr, B + j * ldb, ldb, nr, K, C + i * ldc + j, ldc);
                }
            }
        }
    }
}
