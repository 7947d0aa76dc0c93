/**
 * cuda_ctx.c - device selection, streams, events, cuBLAS handle and memory pools (see
 * cuda_ctx.h; the check macros' error record is kernels/cuda_check.c).
 */
#include "cuda_ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "cuda_check.h"
#include "kernel_image.h"

#ifndef MIEB_CUDA_ARCHS /* set by CMakeLists.txt from CMAKE_CUDA_ARCHITECTURES */
#define MIEB_CUDA_ARCHS "(not recorded)"
#endif

/* Headroom left to the CUDA runtime, cuBLAS' own workspace and other processes when the
 * budget comes from the free device memory: the larger of 512 MiB and 1/16 of it. */
#define MIEB_CUDA_HEADROOM_MIN ((size_t)512 << 20)

static double mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

size_t mieb_cuda_budget_left(const struct mieb_cuda_ctx *ctx)
{
    return ctx->budget > ctx->resident ? ctx->budget - ctx->resident : 0;
}

mieb_status mieb_cuda_dev_alloc(struct mieb_cuda_ctx *ctx, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    if (bytes == 0)
        bytes = 1; /* a valid, freeable pointer keeps callers simple */
    cudaError_t e;
    if (ctx->fail_alloc_above && bytes > ctx->fail_alloc_above)
        e = cudaErrorMemoryAllocation; /* test hook: behave as a full device would */
    else
        e = cudaMalloc(p, bytes);
    if (e == cudaSuccess)
        return MIEB_OK;
    *p = NULL;
    (void)cudaGetLastError(); /* out-of-memory is not sticky: clear it and carry on */
    if (e != cudaErrorMemoryAllocation)
        return mieb_cuda_record_error(MIEB_ERR_CUDA, "cudaMalloc", (int)e, cudaGetErrorString(e), __func__,
                                      __FILE__, __LINE__);
    MIEB_LOGW("cuda: cudaMalloc of %.1f MiB for %s failed (%s)", mib(bytes), what, cudaGetErrorString(e));
    return mieb_fail(MIEB_ERR_OOM, "cuda: cannot allocate %.1f MiB of device memory for %s", mib(bytes), what);
}

void mieb_cuda_dev_free(struct mieb_cuda_ctx *ctx, void *p)
{
    (void)ctx;
    if (p && cudaFree(p) != cudaSuccess)
        (void)cudaGetLastError(); /* nothing useful to do on a failed free */
}

static void pool_release(struct mieb_cuda_pool *pool)
{
    if (pool->base) {
        cudaError_t e = pool->pinned ? cudaFreeHost(pool->base) : cudaFree(pool->base);
        if (e != cudaSuccess)
            (void)cudaGetLastError();
    }
    pool->base = NULL;
    pool->cap = pool->used = 0;
}

mieb_status mieb_cuda_pool_reserve(struct mieb_cuda_ctx *ctx, struct mieb_cuda_pool *pool, size_t bytes,
                                   const char *what)
{
    pool->used = 0;
    if (bytes <= pool->cap)
        return MIEB_OK;
    /* Views of the old block may still be in use by queued work: wait before freeing. */
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->copy_stream));
    MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    pool_release(pool);
    cudaError_t e;
    if (ctx->fail_alloc_above && bytes > ctx->fail_alloc_above)
        e = cudaErrorMemoryAllocation;
    else
        e = pool->pinned ? cudaMallocHost(&pool->base, bytes) : cudaMalloc(&pool->base, bytes);
    if (e != cudaSuccess) {
        pool->base = NULL;
        (void)cudaGetLastError();
        if (e != cudaErrorMemoryAllocation)
            return mieb_cuda_record_error(MIEB_ERR_CUDA, pool->pinned ? "cudaMallocHost" : "cudaMalloc", (int)e,
                                          cudaGetErrorString(e), __func__, __FILE__, __LINE__);
        MIEB_LOGW("cuda: %s of %.1f MiB for %s failed (%s)", pool->pinned ? "cudaMallocHost" : "cudaMalloc",
                  mib(bytes), what, cudaGetErrorString(e));
        return mieb_fail(MIEB_ERR_OOM, "cuda: cannot allocate %.1f MiB of %s memory for %s", mib(bytes),
                         pool->pinned ? "pinned host" : "device", what);
    }
    pool->cap = bytes;
    return MIEB_OK;
}

void *mieb_cuda_pool_take(struct mieb_cuda_pool *pool, size_t bytes)
{
    size_t need = mieb_cuda_aligned(bytes ? bytes : 1);
    if (!pool->base || pool->used + need > pool->cap)
        return NULL;
    void *p = (char *)pool->base + pool->used;
    pool->used += need;
    return p;
}

/* A switch of the environment: set, and neither empty nor "0". */
static int env_flag(enum mieb_env_var var)
{
    const char *v = mieb_env(var);
    return v && *v && strcmp(v, "0") != 0;
}

mieb_status mieb_cuda_ctx_init(const struct mieb_backend_opts *opts, struct mieb_cuda_ctx **out)
{
    struct mieb_backend_opts o = opts ? *opts : (struct mieb_backend_opts){0};
    struct mieb_cuda_ctx *ctx = NULL;
    mieb_status st = MIEB_OK;
    int n_dev = 0;

    *out = NULL;
    /* No driver, no device or a driver too old: all come back as errors here, never a
     * crash; this is the path every machine without a GPU takes. */
    cudaError_t e = cudaGetDeviceCount(&n_dev);
    if (e != cudaSuccess || n_dev <= 0) {
        (void)cudaGetLastError();
        return mieb_fail(MIEB_ERR_NO_DEVICE, "no usable CUDA device: %s",
                         e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices");
    }
    if (o.device_index < 0 || o.device_index >= n_dev)
        return mieb_fail(MIEB_ERR_NO_DEVICE, "CUDA device %d does not exist (%d device%s present)",
                         o.device_index, n_dev, n_dev == 1 ? "" : "s");
    e = cudaSetDevice(o.device_index);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return mieb_fail(MIEB_ERR_NO_DEVICE, "cannot use CUDA device %d: %s", o.device_index,
                         cudaGetErrorString(e));
    }

    ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return mieb_fail(MIEB_ERR_OOM, "cuda: context");
    ctx->magic = MIEB_CUDA_CTX_MAGIC;
    ctx->device = o.device_index;
    ctx->precision = o.precision;
    /* fp32 retrieval scores are the CPU backend's bits (kernels/canon_gemm.cu) unless
       MIEB_CUDA_GEMM=cublas asks for cuBLAS' order (benchmarks; last bits then differ) */
    const char *gemm_env = mieb_env(MIEB_ENV_CUDA_GEMM);
    ctx->canon_scores = o.precision == MIEB_PREC_FP32 && !(gemm_env && !strcmp(gemm_env, "cublas"));
    /* the int8 screen gives the fixed order's bits, so it runs only where they are the scores.
       Off unless asked for: on an H200 it lost the documents tied at the k-th score of a
       50,000-document block (tests/py/test_retrieval_e2e.py::test_search_floors[dot]; the
       CPU, the mock runtime and the emulator keep them), so it is for measuring only until
       that is found (docs/SCREEN_INT8.md, "Known failure on an H200"). */
    const char *scr = mieb_env(MIEB_ENV_CUDA_SCREEN);
    ctx->screen = 0;
    if (scr && *scr && strcmp(scr, "off") != 0 && strcmp(scr, "0") != 0) {
        if (!strcmp(scr, "auto"))
            ctx->screen = 1;
        else if (!strcmp(scr, "int8"))
            ctx->screen = 2;
        else
            MIEB_LOGW("MIEB_CUDA_SCREEN=%s is not auto, off or int8; using off", scr);
        if (ctx->screen)
            MIEB_LOGW("MIEB_CUDA_SCREEN=%s: the GPU int8 screen has lost documents tied at the k-th score on "
                      "an H200 (docs/SCREEN_INT8.md); for measuring only", scr);
    }
    if (!ctx->canon_scores)
        ctx->screen = 0;
    ctx->staging.pinned = 1;
#ifdef MIEB_CUDA_SYNC_CHECK
    ctx->sync_check = 1;
#else
    ctx->sync_check = env_flag(MIEB_ENV_CUDA_SYNC_CHECK);
#endif

    struct cudaDeviceProp prop;
    MIEB_CUDA_CHECK_GOTO(cudaGetDeviceProperties(&prop, ctx->device), st, fail);
    snprintf(ctx->name, sizeof ctx->name, "%s", prop.name);
    ctx->cc_major = prop.major;
    ctx->cc_minor = prop.minor;
    if (prop.major < 7) {
        /* the top-k kernel needs __match_any_sync (compute capability 7.0) */
        st = mieb_fail(MIEB_ERR_NO_DEVICE, "CUDA device %d (%s) has compute capability %d.%d; 7.0 or newer is needed",
                       ctx->device, prop.name, prop.major, prop.minor);
        goto fail;
    }
    const cudaError_t img = mieb_cuda_probe_kernel_image();
    if (img != cudaSuccess) {
        st = mieb_fail(MIEB_ERR_NO_DEVICE,
                       "CUDA device %d (%s) has compute capability %d.%d, and this mieb-eval holds no kernels "
                       "it can run (%s; built for CUDA architectures %s): rebuild with "
                       "-DCMAKE_CUDA_ARCHITECTURES=%d%d",
                       ctx->device, prop.name, prop.major, prop.minor, cudaGetErrorString(img), MIEB_CUDA_ARCHS,
                       prop.major, prop.minor);
        goto fail;
    }

    MIEB_CUDA_CHECK_GOTO(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking), st, fail);
    MIEB_CUDA_CHECK_GOTO(cudaStreamCreateWithFlags(&ctx->copy_stream, cudaStreamNonBlocking), st, fail);
    for (int s = 0; s < MIEB_CUDA_N_SLOTS; s++) {
        MIEB_CUDA_CHECK_GOTO(cudaEventCreateWithFlags(&ctx->ev_h2d[s], cudaEventDisableTiming), st, fail);
        MIEB_CUDA_CHECK_GOTO(cudaEventCreateWithFlags(&ctx->ev_done[s], cudaEventDisableTiming), st, fail);
    }
    MIEB_CUBLAS_CHECK_GOTO(cublasCreate(&ctx->cublas), st, fail);
    MIEB_CUBLAS_CHECK_GOTO(cublasSetStream(ctx->cublas, ctx->stream), st, fail);
    /* fp32 stays fp32 unless the run asked otherwise (the GEMM wrapper picks the compute type) */
    MIEB_CUBLAS_CHECK_GOTO(cublasSetMathMode(ctx->cublas, CUBLAS_DEFAULT_MATH), st, fail);

    size_t free_b = 0, total_b = 0;
    MIEB_CUDA_CHECK_GOTO(cudaMemGetInfo(&free_b, &total_b), st, fail);
    ctx->total_mem = total_b;
    size_t headroom = free_b / 16 > MIEB_CUDA_HEADROOM_MIN ? free_b / 16 : MIEB_CUDA_HEADROOM_MIN;
    ctx->budget = free_b > headroom ? free_b - headroom : free_b / 2;
    if (o.mem_limit && o.mem_limit < ctx->budget)
        ctx->budget = o.mem_limit;
    MIEB_LOGI("cuda: device %d %s (sm_%d%d), %.0f MiB free of %.0f MiB, budget %.1f MiB, %s%s%s",
              ctx->device, ctx->name, ctx->cc_major, ctx->cc_minor, mib(free_b), mib(total_b), mib(ctx->budget),
              ctx->canon_scores                  ? "fp32 scores in the CPU's fixed order"
              : ctx->precision == MIEB_PREC_TF32 ? "tf32 GEMM"
              : ctx->precision == MIEB_PREC_BF16 ? "bf16 GEMM"
                                                 : "fp32 cuBLAS GEMM",
              ctx->screen == 2 ? ", int8 screen on every block" : ctx->screen ? ", int8 screen where it pays" : "",
              ctx->sync_check ? ", sync-check on" : "");
    *out = ctx;
    return MIEB_OK;

fail:
    mieb_cuda_ctx_free(ctx);
    return st;
}

void mieb_cuda_ctx_free(struct mieb_cuda_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->stream && cudaStreamSynchronize(ctx->stream) != cudaSuccess)
        (void)cudaGetLastError();
    if (ctx->copy_stream && cudaStreamSynchronize(ctx->copy_stream) != cudaSuccess)
        (void)cudaGetLastError();
    pool_release(&ctx->scratch);
    pool_release(&ctx->staging);
    if (ctx->cublas)
        cublasDestroy(ctx->cublas);
    for (int s = 0; s < MIEB_CUDA_N_SLOTS; s++) {
        if (ctx->ev_h2d[s])
            cudaEventDestroy(ctx->ev_h2d[s]);
        if (ctx->ev_done[s])
            cudaEventDestroy(ctx->ev_done[s]);
    }
    if (ctx->copy_stream)
        cudaStreamDestroy(ctx->copy_stream);
    if (ctx->stream)
        cudaStreamDestroy(ctx->stream);
    (void)cudaGetLastError();
    ctx->magic = 0;
    free(ctx);
}
