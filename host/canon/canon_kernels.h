/**
 * canon_kernels.h - what the per-instruction-set kernel files of canon_dot.h share, below the
 * dispatch (canon_dot.c): their entry points and their per-thread workspace
 * (canon_workspace.c). The kernel files include this header only, never canon_dot.h, so the
 * dispatch sits on top of them and they use nothing above.
 */
#ifndef MIEB_CANON_CANON_KERNELS_H
#define MIEB_CANON_CANON_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/**
 * A 64-byte aligned buffer of at least `bytes` for the calling thread's kernels (their
 * packed operands), kept and grown across calls and freed when the thread ends. NULL when
 * out of memory: the kernels then read their operands in place (same bits, slower).
 */
void *mieb_canon_workspace(size_t bytes);

/* The kernels behind the dispatch (canon_dot_avx2.c, canon_dot_avx512.c); call them only
   when mieb_canon_isa_supported() says the CPU runs them. */
void mieb_canon_gemm_avx2(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n,
                          int64_t K, float *C, int64_t ldc);
void mieb_canon_dot_rows_avx2(const float *x, const float *B, int64_t ldb, const int32_t *rows, int64_t n,
                              int64_t K, float *out);
void mieb_canon_gemm_avx512(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n,
                            int64_t K, float *C, int64_t ldc);
void mieb_canon_dot_rows_avx512(const float *x, const float *B, int64_t ldb, const int32_t *rows, int64_t n,
                                int64_t K, float *out);

#endif
