/**
 * canon_dot.h - the CPU backend's fp32 dot product, summed in one fixed order.
 *
 * Why a fixed order: a BLAS SGEMM's last bits depend on the shape of the call, on the
 * kernel set the BLAS picked for the CPU and on how it blocks K. Retrieval ranks by these
 * scores, and near-ties decide which document mteb's heap sees first, so a score that
 * changes with --mem-limit, --threads, a corpus split or the machine changes results.
 * The CPU backend therefore defines every retrieval score (single-vector top-k, MaxSim
 * token products, candidate pairs) as this one sequence of IEEE-754 binary32 operations,
 * each rounded to nearest even:
 *
 *     acc[l] = +0                                   for l = 0 .. 15
 *     for c = 0, 16, 32, ... while c < K:
 *         acc[l] = fma(a[c+l], b[c+l], acc[l])      (a[k] = b[k] = 0 for k >= K)
 *     s8[l] = acc[l] + acc[l+8]   (l < 8)
 *     s4[l] = s8[l]  + s8[l+4]    (l < 4)
 *     s2[l] = s4[l]  + s4[l+2]    (l < 2)
 *     dot   = s2[0]  + s2[1]
 *
 * The scalar code (fmaf), the AVX2 kernels (each 16-lane accumulator as two 8-lane
 * halves) and the AVX-512 kernels (one register) perform exactly these operations, so a
 * score is a function of its two vectors alone: tests/unit/test_canon_dot.c checks that
 * every kernel gives the scalar bits. The SIMD kernels run at the BLAS's SGEMM rate
 * (docs/DESIGN.md), so nothing is paid for this.
 *
 * The error of the result against the real dot product is at most
 * (K/16 + 4) * 2^-24 * sum_k |a_k b_k| (one rounding per step of the longest chain), which
 * host/screen/screen.c relies on when it bounds scores it has not computed yet.
 */
#ifndef MIEB_CANON_CANON_DOT_H
#define MIEB_CANON_CANON_DOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Lanes of the fixed summation order (the width of one AVX-512 register of floats). */
#define MIEB_CANON_LANES 16

/** Instruction sets the kernels exist for, slowest first. */
enum mieb_canon_isa {
    MIEB_CANON_SCALAR = 0, /**< portable C (fmaf): the definition, and the fallback */
    MIEB_CANON_AVX2 = 1,   /**< AVX2 + FMA (x86-64 since 2013) */
    MIEB_CANON_AVX512 = 2, /**< AVX-512 F/DQ/BW/VL */
};

/** The scalar definition above: one dot product of K floats. */
float mieb_canon_dot(const float *a, const float *b, int64_t K);

/**
 * C[i * ldc + j] = dot(A + i * lda, B + j * ldb) for i < m, j < n (A and B row-major, K
 * floats per row): the product A B^T with every element in the fixed order, through the
 * fastest kernel this CPU runs. C must not overlap A or B.
 */
void mieb_canon_gemm(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n, int64_t K,
                     float *C, int64_t ldc);

/**
 * out[j] = dot(x, B + rows[j] * ldb) for j < n: one vector against chosen rows (the
 * rescoring of screened candidates, host/screen/screen.c). Same bits as mieb_canon_gemm.
 */
void mieb_canon_dot_rows(const float *x, const float *B, int64_t ldb, const int32_t *rows, int64_t n, int64_t K,
                         float *out);

/**
 * The kernel set in use: the best this CPU and OS support, unless MIEB_CPU_ISA
 * (scalar|avx2|avx512) asks for a lower one (for tests and benchmarks; a set the CPU
 * lacks is refused with a warning). Decided once per process.
 */
enum mieb_canon_isa mieb_canon_isa(void);
/** The best kernel set this CPU and OS can run (ignores MIEB_CPU_ISA). */
enum mieb_canon_isa mieb_canon_isa_supported(void);
/** Use `isa` from now on (tests); returns -1, changing nothing, when the CPU cannot run it. */
int mieb_canon_set_isa(enum mieb_canon_isa isa);
const char *mieb_canon_isa_name(enum mieb_canon_isa isa);


#ifdef __cplusplus
}
#endif
#endif
