/**
 * gemm.h - the one GEMM wrapper: ROW-MAJOR, not BLAS column-major.
 *
 * Nothing else in mieb-eval calls cublasSgemm or cublasGemmEx (one wrapper for every GEMM, so precision and layout are decided in one place): the
 * operand swap that maps row-major onto column-major cuBLAS, the int range checks and
 * the choice of arithmetic live here once.
 */
#ifndef MIEB_CUDA_GEMM_H
#define MIEB_CUDA_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * C = alpha * op(A) . op(B) + beta * C on ctx->stream, all matrices row-major fp32 in
 * device memory, with unit inner stride:
 *   op(A) is [m, k]: A is [m, k] with lda >= k, or (trans_a) [k, m] with lda >= m;
 *   op(B) is [k, n]: B is [k, n] with ldb >= n, or (trans_b) [n, k] with ldb >= k;
 *   C is [m, n] with ldc >= n.
 * Scores Q.D^T are `gemm_rowmajor(ctx, nq, nd, dim, 1, Q, dim, false, D, dim, true, 0, S, nd)`.
 *
 * Arithmetic follows ctx->precision: fp32 (default; exact fp32 products and sums, in
 * cuBLAS' order), TF32 or BF16 tensor-core inputs with fp32 accumulation only when the
 * run asked for them. Every dimension and leading dimension must fit in int.
 * Returns MIEB_ERR_CUBLAS (last error names the call) or MIEB_ERR_INTERNAL on a bad shape.
 */
mieb_status mieb_cuda_gemm_rowmajor(struct mieb_cuda_ctx *ctx, int64_t m, int64_t n, int64_t k, float alpha,
                                    const float *A, int64_t lda, bool trans_a, const float *B, int64_t ldb,
                                    bool trans_b, float beta, float *C, int64_t ldc);

/**
 * Similarity scores S = A . B^T (A [m, k], B [n, k], S [m, n], row-major, device memory):
 * at fp32 each score is the CPU backend's fixed-order dot product (host/canon/canon_dot.h,
 * kernels/canon_gemm.cu), so CUDA and CPU rank by the same bits and no tiling changes them;
 * with --precision tf32/bf16 (or MIEB_CUDA_GEMM=cublas) cuBLAS computes them.
 */
mieb_status mieb_cuda_scores_nt(struct mieb_cuda_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *A,
                                int64_t lda, const float *B, int64_t ldb, float *S, int64_t lds);

/**
 * Integer scores S = A . B^T of int8 rows (A [m, kp], B [n, kp], row-major, device memory)
 * into int32 S [m, n] (row-major, lds apart): cublasGemmEx with CUDA_R_8I inputs, CUDA_R_32I
 * output and CUBLAS_COMPUTE_32I, whose sums are exact while |S| < 2^31 (the int8 screen's
 * K <= 133,000). cuBLAS' int8 rules hold by construction and are checked: alpha 1 and beta
 * 0 (int32), the operands transposed as TN (what the row-major swap gives), kp, lda, ldb
 * and lds multiples of 4, and every matrix 16-byte aligned.
 */
mieb_status mieb_cuda_gemm_i8_nt(struct mieb_cuda_ctx *ctx, int64_t m, int64_t n, int64_t kp, const int8_t *A,
                                 int64_t lda, const int8_t *B, int64_t ldb, int32_t *S, int64_t lds);

#ifdef __cplusplus
}
#endif
#endif
