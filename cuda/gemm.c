/**
 * gemm.c - mieb_cuda_gemm_rowmajor: row-major fp32 GEMM on cuBLAS, and mieb_cuda_scores_nt,
 * the similarity scores in the CPU's order or cuBLAS' (see gemm.h).
 *
 * cuBLAS is column-major. A row-major [r, c] matrix read column-major is its transpose,
 * so row-major C = op(A).op(B) is computed as column-major C^T = op(B)^T . op(A)^T:
 * the operands swap places and m/n swap, and each operand keeps its own transpose flag.
 */
#include "gemm.h"

#include "canon_gemm.cuh"

#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"

mieb_status mieb_cuda_gemm_rowmajor(struct mieb_cuda_ctx *ctx, int64_t m, int64_t n, int64_t k, float alpha,
                                    const float *A, int64_t lda, bool trans_a, const float *B, int64_t ldb,
                                    bool trans_b, float beta, float *C, int64_t ldc)
{
    MIEB_CUDA_REQUIRE(ctx && ctx->magic == MIEB_CUDA_CTX_MAGIC);
    MIEB_CUDA_REQUIRE(m >= 0 && n >= 0 && k >= 0);
    MIEB_CUDA_REQUIRE(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX);
    MIEB_CUDA_REQUIRE(lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX);
    MIEB_CUDA_REQUIRE(lda >= (trans_a ? m : k) && lda >= 1);
    MIEB_CUDA_REQUIRE(ldb >= (trans_b ? k : n) && ldb >= 1);
    MIEB_CUDA_REQUIRE(ldc >= n && ldc >= 1);
    if (m == 0 || n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(A && B && C);

    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    if (ctx->precision == MIEB_PREC_TF32)
        compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    else if (ctx->precision == MIEB_PREC_BF16)
        compute = CUBLAS_COMPUTE_32F_FAST_16BF; /* cuBLAS rounds the fp32 inputs to bf16 itself */

    /* column-major view: C^T[n, m] = op(B)^T[n, k] . op(A)^T[k, m] */
    cublasOperation_t op_first = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_second = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    MIEB_CUBLAS_CHECK(cublasSetStream(ctx->cublas, ctx->stream));
    MIEB_CUBLAS_CHECK(cublasGemmEx(ctx->cublas, op_first, op_second, (int)n, (int)m, (int)k, &alpha, B, CUDA_R_32F,
                                   (int)ldb, A, CUDA_R_32F, (int)lda, &beta, C, CUDA_R_32F, (int)ldc, compute,
                                   CUBLAS_GEMM_DEFAULT));
    if (ctx->sync_check)
        MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return MIEB_OK;
}

mieb_status mieb_cuda_scores_nt(struct mieb_cuda_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *A,
                                int64_t lda, const float *B, int64_t ldb, float *S, int64_t lds)
{
    MIEB_CUDA_REQUIRE(ctx && ctx->magic == MIEB_CUDA_CTX_MAGIC);
    if (ctx->canon_scores) /* its launcher synchronises under sync_check (MIEB_CUDA_CHECK_LAUNCH) */
        return mieb_cuda_canon_gemm_nt(mieb_cuda_ks(ctx), m, n, k, A, lda, B, ldb, S, lds);
    return mieb_cuda_gemm_rowmajor(ctx, m, n, k, 1.0f, A, lda, false, B, ldb, true, 0.0f, S, lds);
}

mieb_status mieb_cuda_gemm_i8_nt(struct mieb_cuda_ctx *ctx, int64_t m, int64_t n, int64_t kp, const int8_t *A,
                                 int64_t lda, const int8_t *B, int64_t ldb, int32_t *S, int64_t lds)
{
    MIEB_CUDA_REQUIRE(ctx && ctx->magic == MIEB_CUDA_CTX_MAGIC);
    MIEB_CUDA_REQUIRE(m >= 0 && n >= 0 && kp >= 4 && m <= INT_MAX && n <= INT_MAX && kp <= INT_MAX);
    MIEB_CUDA_REQUIRE(lda >= kp && ldb >= kp && lds >= n && lda <= INT_MAX && ldb <= INT_MAX && lds <= INT_MAX);
    MIEB_CUDA_REQUIRE(kp % 4 == 0 && lda % 4 == 0 && ldb % 4 == 0 && lds % 4 == 0);
    if (m == 0 || n == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(A && B && S);
    MIEB_CUDA_REQUIRE((uintptr_t)A % 16 == 0 && (uintptr_t)B % 16 == 0 && (uintptr_t)S % 16 == 0);
    const int32_t alpha = 1, beta = 0;
    /* column-major view, as mieb_cuda_gemm_rowmajor: S^T[n, m] = B[n, kp] . A^T[kp, m], i.e. TN */
    MIEB_CUBLAS_CHECK(cublasSetStream(ctx->cublas, ctx->stream));
    MIEB_CUBLAS_CHECK(cublasGemmEx(ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)kp, &alpha, B,
                                   CUDA_R_8I, (int)ldb, A, CUDA_R_8I, (int)lda, &beta, S, CUDA_R_32I, (int)lds,
                                   CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    if (ctx->sync_check)
        MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return MIEB_OK;
}
