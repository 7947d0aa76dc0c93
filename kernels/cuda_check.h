/**
 * cuda_check.h - the check macros for CUDA runtime and cuBLAS calls: every call is checked where it is made, and a failure names the call, file and line.
 *
 * Every macro is built from one generator, MIEB_CHECK_GEN_, which evaluates the call
 * once, and on failure records the statement text, the function, file, line, the current
 * device and the library's own error string in the thread-local last-error record
 * (mieb_fail, host/core/status.h), then runs the caller's failure action:
 *
 *   MIEB_CUDA_CHECK(cudaMemsetAsync(p, 0, n, s));          // returns MIEB_ERR_CUDA
 *   MIEB_CUBLAS_CHECK(cublasSetStream(h, s));              // returns MIEB_ERR_CUBLAS
 *   MIEB_CUDA_CHECK_GOTO(cudaMemcpy(...), st, cleanup);    // st = MIEB_ERR_CUDA; goto cleanup
 *   MIEB_CUDA_CHECK_LAUNCH(ks);                            // after a kernel launch (kstream.h)
 *
 * MIEB_CUDA_CHECK_LAUNCH checks the launch itself and, when the stream's sync_check flag
 * is on (compile with -DMIEB_CUDA_SYNC_CHECK=1, or run with MIEB_CUDA_SYNC_CHECK=1 in the
 * environment), synchronises the compute stream so that an asynchronous fault is
 * reported at the launch that caused it rather than at some later call.
 *
 * Helpers that wrap CUDA calls return the cudaError_t so that the caller's macro reports
 * the caller's line. Allocation failures do not go through these macros: they are
 * recoverable (mieb_cuda_dev_alloc in cuda/cuda_ctx.h).
 *
 * C and CUDA C++ both include this header, the kernel launchers (kernels/) and the CUDA
 * backend (cuda/) alike; it never appears in the CPU-only build. The error record is
 * cuda_check.c.
 */
#ifndef MIEB_CUDA_CHECK_H
#define MIEB_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Record a failed CUDA/cuBLAS call in the last-error record and return st. `code` is
 * the library's numeric error, `what` its string. Also clears a non-sticky CUDA error
 * (cudaGetLastError) so the next unrelated check does not report it a second time.
 */
mieb_status mieb_cuda_record_error(mieb_status st, const char *stmt, int code, const char *what,
                                   const char *func, const char *file, int line);

#ifdef __cplusplus
}
#endif

/* The one generator: evaluate stmt once; on error record everything, then on_fail. */
#define MIEB_CHECK_GEN_(stmt, err_type, success, str_fn, status, on_fail)                      \
    do {                                                                                       \
        err_type mieb_chk_err_ = (stmt);                                                       \
        if (mieb_chk_err_ != (success)) {                                                      \
            mieb_cuda_record_error((status), #stmt, (int)mieb_chk_err_, str_fn(mieb_chk_err_), \
                                   __func__, __FILE__, __LINE__);                              \
            on_fail;                                                                           \
        }                                                                                      \
    } while (0)

#define MIEB_CUDA_CHECK(stmt) \
    MIEB_CHECK_GEN_(stmt, cudaError_t, cudaSuccess, cudaGetErrorString, MIEB_ERR_CUDA, return MIEB_ERR_CUDA)
#define MIEB_CUBLAS_CHECK(stmt)                                                                     \
    MIEB_CHECK_GEN_(stmt, cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString, MIEB_ERR_CUBLAS, \
                    return MIEB_ERR_CUBLAS)

#define MIEB_CUDA_CHECK_GOTO(stmt, st, label)                                             \
    MIEB_CHECK_GEN_(stmt, cudaError_t, cudaSuccess, cudaGetErrorString, MIEB_ERR_CUDA, { \
        (st) = MIEB_ERR_CUDA;                                                             \
        goto label;                                                                       \
    })
#define MIEB_CUBLAS_CHECK_GOTO(stmt, st, label)                                                  \
    MIEB_CHECK_GEN_(stmt, cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString, MIEB_ERR_CUBLAS, { \
        (st) = MIEB_ERR_CUBLAS;                                                                  \
        goto label;                                                                              \
    })

/* After a kernel launch on ks.stream (kstream.h): the launch error, then (debug) the execution. */
#define MIEB_CUDA_CHECK_LAUNCH(ks)                                   \
    do {                                                             \
        MIEB_CUDA_CHECK(cudaGetLastError());                         \
        if ((ks).sync_check)                                         \
            MIEB_CUDA_CHECK(cudaStreamSynchronize((ks).stream));     \
    } while (0)

/*
 * A launcher's or helper's precondition. A failure is a bug in mieb-eval, never bad user
 * data (callers validate that first), so it reports MIEB_ERR_INTERNAL instead of aborting.
 */
#define MIEB_CUDA_REQUIRE(cond)                                                              \
    do {                                                                                     \
        if (!(cond))                                                                         \
            return mieb_fail(MIEB_ERR_INTERNAL, "%s: precondition failed: %s (%s:%d)", __func__, \
                             #cond, __FILE__, __LINE__);                                     \
    } while (0)

/* Propagate a non-OK status to a cleanup label: `MIEB_TRY_GOTO(f(), st, done);` */
#define MIEB_TRY_GOTO(expr, st, label) \
    do {                               \
        (st) = (expr);                 \
        if ((st) != MIEB_OK)           \
            goto label;                \
    } while (0)

#endif
