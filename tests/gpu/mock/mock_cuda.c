/**
 * mock_cuda.c - a CPU stand-in for the CUDA runtime, cuBLAS, the kernel launchers and the
 * Thrust shim, so that the CUDA backend's host code (the cuda/ sources: planning, tiling, staging,
 * OOM recovery, result decoding) runs and is tested on machines without a GPU.
 *
 * Everything is synchronous; "device" memory is host memory with a fixed capacity
 * (MOCK_DEVICE_BYTES) so that allocation failures happen as on a real device.
 * cublasGemmEx follows cuBLAS' column-major definition literally, which checks the
 * row-major operand swap in cuda/gemm.c. The launchers implement each kernel's contract
 * (the kernels/ headers) with plain loops and check their preconditions; the kernels' own code
 * is checked by tests/gpu/emu/ instead.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda_ctx.h"
#include "kernel_image.h"
#include "kmeans_argmin.cuh"
#include "logreg_argmax.cuh"
#include "logreg_pointwise.cuh"
#include "maxsim.cuh"
#include "pair_dot.cuh"
#include "pair_maxsim.cuh"
#include "canon/canon_dot.h"
#include "screen/screen_base.h"
#include "../../../host/math/screen_int8_math.h"
#include "screen_int8.cuh"
#include "../../../host/math/logreg_math.h"
#include "../../../host/math/pair_math.h"
#include "canon_gemm.cuh"
#include "compo_scores.cuh"
#include "sts_pairs.cuh"
#include "thrust_shim.h"
#include "topk.cuh"
#include "topk_key.h"

#define MOCK_DEVICE_BYTES ((size_t)8 << 30)

/* ---- device memory with a capacity ---- */
struct mock_alloc {
    void *p;
    size_t n;
};
static struct mock_alloc allocs[4096];
static size_t used_bytes;
static cudaError_t last_err = cudaSuccess;
static char dummy_objects[64];

static cudaError_t fail(cudaError_t e)
{
    last_err = e;
    return e;
}

cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = NULL;
    if (n > MOCK_DEVICE_BYTES - used_bytes)
        return fail(cudaErrorMemoryAllocation);
    for (int i = 0; i < 4096; i++)
        if (!allocs[i].p) {
            allocs[i].p = malloc(n ? n : 1);
            if (!allocs[i].p)
                return fail(cudaErrorMemoryAllocation);
            allocs[i].n = n;
            used_bytes += n;
            *p = allocs[i].p;
            return cudaSuccess;
        }
    return fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void *p)
{
    if (!p)
        return cudaSuccess;
    for (int i = 0; i < 4096; i++)
        if (allocs[i].p == p) {
            free(p);
            used_bytes -= allocs[i].n;
            allocs[i].p = NULL;
            return cudaSuccess;
        }
    fprintf(stderr, "mock: cudaFree of an unknown pointer %p\n", p);
    return fail(cudaErrorInvalidValue);
}

cudaError_t cudaMallocHost(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
    *free_b = MOCK_DEVICE_BYTES - used_bytes;
    *total = MOCK_DEVICE_BYTES;
    return cudaSuccess;
}

/* ---- errors, devices, streams, events: synchronous no-ops ---- */
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_err;
    last_err = cudaSuccess;
    return e;
}
const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "mock error"; }
cudaError_t cudaGetDeviceCount(int *n)
{
    const char *no = getenv("MOCK_CUDA_NO_DEVICE");
    if (no && *no == '1') {
        *n = 0;
        return fail(cudaErrorNoDevice);
    }
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "mock device %d", d);
    p->major = 9;
    const char *cc = getenv("MOCK_CUDA_CC"); /* "M.m": another compute capability */
    if (cc && sscanf(cc, "%d.%d", &p->major, &p->minor) != 2)
        p->major = 9, p->minor = 0;
    return cudaSuccess;
}
/* cuda/kernel_image.cu's probe: MOCK_CUDA_NO_KERNEL_IMAGE=1 plays a GPU this build has no image for */
cudaError_t mieb_cuda_probe_kernel_image(void)
{
    const char *no = getenv("MOCK_CUDA_NO_KERNEL_IMAGE");
    return no && *no == '1' ? cudaErrorNoKernelImageForDevice : cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int f)
{
    *s = (cudaStream_t)(dummy_objects + 1);
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f) { return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int f)
{
    *e = (cudaEvent_t)(dummy_objects + 2);
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    memcpy(dst, src, n);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    memset(p, v, n);
    return cudaSuccess;
}

/* ---- cuBLAS ---- */
cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = (cublasHandle_t)(dummy_objects + 3);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) { return CUBLAS_STATUS_SUCCESS; }
const char *cublasGetStatusString(cublasStatus_t s) { return s ? "mock cublas error" : "success"; }

/* cuBLAS' int8 path (CUDA_R_8I in, CUDA_R_32I out, CUBLAS_COMPUTE_32I), its rules enforced as
   strictly as cuda/gemm.h promises them (alpha 1 and beta 0, TN, k and the leading dimensions
   multiples of 4, 16-byte aligned matrices); the sums are exact integers, and one that would
   not fit int32 fails the call. */
static cublasStatus_t gemm_i8(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
                              const void *A, cudaDataType bt, int lda, const void *B, int ldb, const void *beta,
                              void *C, cudaDataType ct, int ldc, cublasComputeType_t comp)
{
    const int8_t *a = A, *b = B;
    int32_t *c = C;
    if (bt != CUDA_R_8I || ct != CUDA_R_32I || comp != CUBLAS_COMPUTE_32I || ta != CUBLAS_OP_T ||
        tb != CUBLAS_OP_N || *(const int32_t *)alpha != 1 || *(const int32_t *)beta != 0 || m < 0 || n < 0 ||
        k < 0 || k % 4 || lda % 4 || ldb % 4 || ldc % 4 || lda < k || ldb < k || ldc < m ||
        (uintptr_t)A % 16 || (uintptr_t)B % 16 || (uintptr_t)C % 16) {
        fprintf(stderr, "mock: cublasGemmEx int8: outside cuBLAS' int8 rules (m %d n %d k %d lda %d ldb %d ldc %d)\n",
                m, n, k, lda, ldb, ldc);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            int64_t acc = 0; /* C[i, j] = sum_l A^T[i, l] B[l, j] = A[l + i lda] B[l + j ldb] */
            for (int l = 0; l < k; l++)
                acc += (int64_t)a[l + (size_t)i * lda] * (int64_t)b[l + (size_t)j * ldb];
            if (acc > INT32_MAX || acc < INT32_MIN) {
                fprintf(stderr, "mock: cublasGemmEx int8: a sum beyond int32 (%lld)\n", (long long)acc);
                return CUBLAS_STATUS_EXECUTION_FAILED;
            }
            c[i + (size_t)j * ldc] = (int32_t)acc;
        }
    return CUBLAS_STATUS_SUCCESS;
}

/* Column-major C[m, n] = alpha op(A)[m, k] op(B)[k, n] + beta C, exactly as cuBLAS defines it. */
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt,
                            int ldb, const void *beta, void *C, cudaDataType ct, int ldc, cublasComputeType_t comp,
                            cublasGemmAlgo_t algo)
{
    if (at == CUDA_R_8I)
        return gemm_i8(ta, tb, m, n, k, alpha, A, bt, lda, B, ldb, beta, C, ct, ldc, comp);
    const float *a = A, *b = B, al = *(const float *)alpha, be = *(const float *)beta;
    float *c = C;
    if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F || m < 0 || n < 0 || k < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (lda < (ta == CUBLAS_OP_N ? (m > 1 ? m : 1) : (k > 1 ? k : 1)) ||
        ldb < (tb == CUBLAS_OP_N ? (k > 1 ? k : 1) : (n > 1 ? n : 1)) || ldc < (m > 1 ? m : 1)) {
        fprintf(stderr, "mock: cublasGemmEx: bad leading dimension (m %d n %d k %d lda %d ldb %d ldc %d)\n", m, n,
                k, lda, ldb, ldc);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float s = 0.0f;
            for (int l = 0; l < k; l++) {
                float x = ta == CUBLAS_OP_N ? a[i + (size_t)l * lda] : a[l + (size_t)i * lda];
                float y = tb == CUBLAS_OP_N ? b[l + (size_t)j * ldb] : b[j + (size_t)l * ldb];
                s += x * y;
            }
            c[i + (size_t)j * ldc] = al * s + (be != 0.0f ? be * c[i + (size_t)j * ldc] : 0.0f);
        }
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- the launchers' contracts ---- */
#define REQUIRE(c)                                                                                      \
    do {                                                                                                \
        if (!(c))                                                                                       \
            return mieb_fail(MIEB_ERR_INTERNAL, "mock %s: precondition failed: %s", __func__, #c);       \
    } while (0)

static int cmp_desc(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a < b) - (a > b);
}

mieb_status mieb_cuda_topk_update(struct mieb_kstream ks, const float *scores, int64_t ld, int64_t n_rows,
                                  int64_t n_cols, int64_t col_base, const uint64_t *state_in, uint64_t *state_out,
                                  uint64_t *thr, int64_t ke)
{
    REQUIRE(n_rows >= 0 && n_cols >= 0 && ld >= n_cols && col_base >= 0);
    REQUIRE(col_base + n_cols <= (int64_t)MIEB_TOPK_MAX_INDEX + 1 && ke >= 1 && state_in != state_out);
    uint64_t *cand = malloc(sizeof(uint64_t) * (size_t)(ke + n_cols + 1));
    REQUIRE(cand != NULL);
    for (int64_t r = 0; r < n_rows; r++) {
        int64_t n = 0;
        for (int64_t i = 0; i < ke; i++)
            if (state_in[r * ke + i])
                cand[n++] = state_in[r * ke + i];
        for (int64_t j = 0; j < n_cols; j++) {
            uint64_t key = mieb_topk_key(scores[r * ld + j], (uint32_t)(col_base + j));
            if (key > thr[r])
                cand[n++] = key;
        }
        qsort(cand, (size_t)n, sizeof *cand, cmp_desc);
        for (int64_t i = 1; i < n; i++)
            if (cand[i] == cand[i - 1]) {
                long long twice = (long long)mieb_topk_key_index(cand[i]);
                free(cand);
                return mieb_fail(MIEB_ERR_INTERNAL, "mock topk: index %lld offered twice (a tile processed twice?)",
                                 twice);
            }
        for (int64_t i = 0; i < ke; i++)
            state_out[r * ke + i] = i < n ? cand[i] : 0;
        thr[r] = n > ke ? cand[ke - 1] : thr[r]; /* kernels/topk.cuh: unchanged without an overflow */
    }
    free(cand);
    return MIEB_OK;
}

mieb_status mieb_cuda_maxsim(struct mieb_kstream ks, const float *tok, int64_t ld_tok, const int64_t *q_off,
                             int64_t q_row0, int64_t n_q, const int64_t *d_off, int64_t n_d, float *out,
                             int64_t ld_out)
{
    REQUIRE(n_q >= 0 && n_q <= 65535 && n_d >= 0 && ld_out >= n_d && q_row0 >= 0);
    REQUIRE(n_q == 0 || n_d == 0 || q_off[0] == q_row0);
    for (int64_t i = 0; i < n_q; i++)
        for (int64_t j = 0; j < n_d; j++) {
            int64_t u0 = d_off[j], u1 = d_off[j + 1];
            REQUIRE(u1 >= u0 && u1 <= ld_tok);
            float total = 0.0f;
            if (u1 > u0)
                for (int64_t t = q_off[i] - q_row0; t < q_off[i + 1] - q_row0; t++) {
                    float m = tok[t * ld_tok + u0];
                    for (int64_t u = u0 + 1; u < u1; u++)
                        m = tok[t * ld_tok + u] > m ? tok[t * ld_tok + u] : m;
                    total += m;
                }
            out[i * ld_out + j] = total;
        }
    return MIEB_OK;
}

mieb_status mieb_cuda_pair_dot(struct mieb_kstream ks, const float *q, const float *d, int64_t dim,
                               const int64_t *qi, const int64_t *di, int64_t n, float *out)
{
    REQUIRE(n >= 0 && dim >= 1);
    for (int64_t p = 0; p < n; p++)
        out[p] = mieb_canon_dot(q + qi[p] * dim, d + di[p] * dim, dim);
    return MIEB_OK;
}

/* kernels/canon_gemm.cuh's contract is the CPU's own definition, which the kernel's code
   is held to bit for bit on the emulator (tests/gpu/emu) */
mieb_status mieb_cuda_canon_gemm_nt(struct mieb_kstream ks, int64_t m, int64_t n, int64_t K, const float *A,
                                    int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc)
{
    REQUIRE(m >= 0 && n >= 0 && K >= 0 && lda >= K && ldb >= K && ldc >= n);
    if (m == 0 || n == 0)
        return MIEB_OK;
    REQUIRE(A && B && C);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            C[i * ldc + j] = mieb_canon_dot(A + i * lda, B + j * ldb, K);
    return MIEB_OK;
}

/* The pair_math.h functions are the kernels' own per-thread bodies: the mock loops over
   the threads' index space (the kernels' indexing is checked by tests/gpu/emu). */
mieb_status mieb_cuda_sts_pairs_launch(struct mieb_kstream ks, const float *a, const float *b, int64_t n,
                                       int64_t dim, int f64, int cosine, double *cos, double *man, double *euc,
                                       double *model)
{
    REQUIRE(n >= 0 && dim >= 0);
    for (int64_t p = 0; p < n; p++) {
        const float *x = a + p * dim, *y = b + p * dim;
        struct mieb_pm_sts r = f64 ? mieb_pm_sts_sklearn_f64(x, y, dim) : mieb_pm_sts_sklearn_f32(x, y, dim);
        cos[p] = r.cosine;
        man[p] = r.manhattan;
        euc[p] = r.euclidean;
        model[p] = mieb_pm_torch_pair_sim(x, y, dim, cosine);
    }
    return MIEB_OK;
}

mieb_status mieb_cuda_compo_scores_launch(struct mieb_kstream ks, const float *img, int img_dtype,
                                          const float *txt, int txt_dtype, int64_t ns, int64_t ni, int64_t nt,
                                          int64_t dim, float *norms, float *scores)
{
    REQUIRE(ns >= 0 && ni >= 0 && nt >= 0 && dim >= 0);
    int sdt = img_dtype == txt_dtype ? img_dtype : 0;
    for (int64_t r = 0; r < ns * ni; r++)
        norms[r] = mieb_pm_torch_norm(img + r * dim, dim, img_dtype);
    for (int64_t r = 0; r < ns * nt; r++)
        norms[ns * ni + r] = mieb_pm_torch_norm(txt + r * dim, dim, txt_dtype);
    for (int64_t c = 0; c < ns * ni * nt; c++) {
        int64_t s = c / (ni * nt), i = (c / nt) % ni, j = c % nt, u = s * ni + i, v = s * nt + j;
        scores[c] = mieb_pm_compo_score(img + u * dim, norms[u], img_dtype, txt + v * dim, norms[ns * ni + v],
                                        txt_dtype, dim, sdt);
    }
    return MIEB_OK;
}

mieb_status mieb_cuda_pair_maxsim(struct mieb_kstream ks, const float *q, const int64_t *q_off, const float *d,
                                  const int64_t *d_off, int64_t dim, const int64_t *qi, const int64_t *di, int64_t n,
                                  float *out)
{
    REQUIRE(n >= 0 && dim >= 1);
    for (int64_t p = 0; p < n; p++) {
        float total = 0.0f;
        int64_t u0 = d_off[di[p]], u1 = d_off[di[p] + 1];
        if (u1 > u0)
            for (int64_t t = q_off[qi[p]]; t < q_off[qi[p] + 1]; t++) {
                float m = -1e30f;
                for (int64_t u = u0; u < u1; u++) {
                    float s = mieb_canon_dot(q + t * dim, d + u * dim, dim);
                    m = s > m ? s : m;
                }
                total += m;
            }
        out[p] = total;
    }
    return MIEB_OK;
}

/* The CPU reference's scan itself (cpu_kmeans.c): strictly smaller replaces, from j = 0. */
mieb_status mieb_cuda_kmeans_argmin(struct mieb_kstream ks, const float *s, int64_t ld, const float *c_sqnorm,
                                    int64_t n_rows, int64_t k, int32_t *labels)
{
    REQUIRE(n_rows >= 0 && k >= 1 && k < INT32_MAX && ld >= k);
    REQUIRE(n_rows == 0 || (s && c_sqnorm && labels));
    for (int64_t r = 0; r < n_rows; r++) {
        float best = c_sqnorm[0] + s[r * ld];
        int32_t lab = 0;
        for (int64_t j = 1; j < k; j++) {
            float d = c_sqnorm[j] + s[r * ld + j];
            if (d < best)
                best = d, lab = (int32_t)j;
        }
        labels[r] = lab;
    }
    return MIEB_OK;
}

/* The CPU reference's rows (logreg_loss.c rows_fn / binomial_point) through logreg_math.h:
   the max from r[0] replaced by strictly larger values, the exps summed in k order. */
mieb_status mieb_cuda_logreg_pointwise(struct mieb_kstream ks, float *raw, int64_t ld, const int32_t *y,
                                       int64_t n, int64_t KK, float fn, float *lossv)
{
    REQUIRE(n >= 0 && KK >= 1 && KK <= INT32_MAX - 256 && ld >= KK);
    REQUIRE(n == 0 || (raw && y && lossv));
    for (int64_t i = 0; i < n; i++) {
        float *r = raw + i * ld;
        if (KK == 1) {
            REQUIRE(y[i] == 0 || y[i] == 1);
            float g = mieb_lr_binomial_point((double)y[i], r[0], &lossv[i]);
            r[0] = g / fn;
            continue;
        }
        REQUIRE(y[i] >= 0 && y[i] < KK);
        double mx = r[0], se = 0.0;
        for (int64_t k = 1; k < KK; k++)
            if (mx < r[k])
                mx = r[k];
        float r_y = r[y[i]];
        for (int64_t k = 0; k < KK; k++) {
            r[k] = mieb_lr_exp_shifted(r[k], mx);
            se += r[k];
        }
        for (int64_t k = 0; k < KK; k++)
            r[k] = mieb_lr_grad_elem(r[k], (float)se, k == y[i], fn);
        lossv[i] = mieb_lr_row_loss(se, mx, r_y);
    }
    return MIEB_OK;
}

/* The CPU backend's predict scan (host/cpu/cpu_logreg.c) through logreg_math.h: a larger value
   or the first NaN replaces. */
mieb_status mieb_cuda_logreg_argmax(struct mieb_kstream ks, const float *s, int64_t ld, const float *intercept,
                                    int64_t n, int64_t KK, int64_t *out)
{
    REQUIRE(n >= 0 && KK >= 1 && KK <= INT32_MAX - 32 && ld >= KK);
    REQUIRE(n == 0 || (s && intercept && out));
    for (int64_t i = 0; i < n; i++) {
        const float *v = s + i * ld;
        if (KK == 1) {
            out[i] = mieb_lr_binary_class(mieb_lr_decision(v[0], intercept[0]));
            continue;
        }
        out[i] = mieb_lr_row_class(v, intercept, KK);
    }
    return MIEB_OK;
}

/* ---- the int8 screen's kernels (kernels/screen_int8.cuh): the CPU screen's own functions ---- */
mieb_status mieb_cuda_screen_i8_quantise(struct mieb_kstream ks, const float *X, int64_t n, int64_t K, int64_t KP,
                                   int8_t *out, float *s, float *nrm, float *rnrm, float *hnrm,
                                   struct mieb_screen_i8_counts *counts)
{
    REQUIRE(n >= 0 && K >= 1 && KP >= K && K <= MIEB_SCREEN_I8_MAX_K);
    int16_t *row = malloc(sizeof(int16_t) * (size_t)KP);
    REQUIRE(row != NULL);
    for (int64_t r = 0; r < n; r++) {
        float h;
        if (!mieb_screen_i8_quantise(X + r * K, K, KP, row, &s[r], &nrm[r], &rnrm[r], hnrm ? &hnrm[r] : &h))
            counts->bad = 1;
        for (int64_t k = 0; k < KP; k++)
            out[r * KP + k] = (int8_t)row[k];
    }
    free(row);
    return MIEB_OK;
}

mieb_status mieb_cuda_screen_i8_bound(struct mieb_kstream ks, float *S, float *lb, int64_t ld, int64_t n_rows,
                                int64_t n_cols, const float *sq, const float *alpha, const float *beta,
                                const float *sd, const float *nd, const float *rnd, float s_abs)
{
    REQUIRE(n_rows >= 0 && n_rows <= 65535 && n_cols >= 0 && ld >= n_cols);
    for (int64_t r = 0; r < n_rows; r++)
        for (int64_t j = 0; j < n_cols; j++) {
            int32_t I;
            memcpy(&I, &S[r * ld + j], sizeof I);
            /* the CPU screen's interval (screen_int8.c's offer) */
            float a = (float)I * (sq[r] * sd[j]);
            float e = fmaf(alpha[r], nd[j], fmaf(beta[r], rnd[j], s_abs));
            S[r * ld + j] = a + e;
            lb[r * ld + j] = a - e;
        }
    return MIEB_OK;
}

mieb_status mieb_cuda_screen_i8_select(struct mieb_kstream ks, float *S, int64_t ld, int64_t n_rows, int64_t n_cols,
                                 const float *tau_floor, const uint64_t *thr_lb, uint32_t *pairs, uint32_t cap,
                                 struct mieb_screen_i8_counts *counts)
{
    REQUIRE(n_rows >= 0 && n_rows <= 65535 && n_cols >= 0 && ld >= n_cols && cap >= 1);
    REQUIRE(n_rows * ld <= (int64_t)UINT32_MAX);
    for (int64_t r = 0; r < n_rows; r++) {
        float tau = tau_floor[r];
        if (thr_lb[r] && mieb_topk_key_score(thr_lb[r]) > tau)
            tau = mieb_topk_key_score(thr_lb[r]);
        for (int64_t j = 0; j < n_cols; j++) {
            if (S[r * ld + j] >= tau) {
                if (counts->count < cap)
                    pairs[counts->count] = (uint32_t)(r * ld + j);
                else
                    counts->overflow = 1;
                counts->count++;
            }
            S[r * ld + j] = -INFINITY;
        }
    }
    return MIEB_OK;
}

mieb_status mieb_cuda_screen_i8_rescore(struct mieb_kstream ks, const float *Q, const float *D, int64_t K,
                                  const uint32_t *pairs, uint32_t cap, struct mieb_screen_i8_counts *counts, float *S,
                                  int64_t ld)
{
    REQUIRE(K >= 1 && ld >= 1 && cap >= 1);
    uint32_t n = counts->count < cap ? counts->count : cap;
    for (uint32_t p = 0; p < n; p++) {
        int64_t r = pairs[p] / ld, j = pairs[p] % ld;
        S[pairs[p]] = mieb_canon_dot(Q + r * K, D + j * K, K);
    }
    counts->scored += n;
    return MIEB_OK;
}

/* ---- the Thrust shim ---- */
size_t mieb_cuda_segsort_scratch_bytes(int64_t n_seg, int64_t seg_len)
{
    if (n_seg <= 0 || seg_len <= 1)
        return 0;
    size_t n = (size_t)n_seg * (size_t)seg_len;
    return mieb_cuda_aligned(n * 4) + n * 13 + n / 2 + ((size_t)256 << 10);
}

mieb_status mieb_cuda_segsort_u64_desc(struct mieb_cuda_ctx *ctx, uint64_t *keys, int64_t n_seg, int64_t seg_len,
                                       void *scratch, size_t scratch_bytes)
{
    REQUIRE(ctx && n_seg >= 0 && seg_len >= 0);
    REQUIRE(seg_len <= 1 || scratch_bytes >= mieb_cuda_segsort_scratch_bytes(n_seg, seg_len));
    for (int64_t s = 0; s < n_seg; s++)
        qsort(keys + s * seg_len, (size_t)seg_len, sizeof *keys, cmp_desc);
    return MIEB_OK;
}
