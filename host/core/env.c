/* env.c - the MIEB_* environment variables, read here only (env.h, docs/ENVIRONMENT.md). */
#include "env.h"

#include <stdlib.h>

/* In enum mieb_env_var order. */
static const char *const names[MIEB_ENV_COUNT] = {
    [MIEB_ENV_REGISTRY] = "MIEB_REGISTRY",
    [MIEB_ENV_PROGRESS_INTERVAL] = "MIEB_PROGRESS_INTERVAL",
    [MIEB_ENV_CPU_ISA] = "MIEB_CPU_ISA",
    [MIEB_ENV_CPU_SCREEN] = "MIEB_CPU_SCREEN",
    [MIEB_ENV_SCREEN_MIX] = "MIEB_SCREEN_MIX",
    [MIEB_ENV_STREAM_MMAP] = "MIEB_STREAM_MMAP",
    [MIEB_ENV_STREAM_WINDOW_BYTES] = "MIEB_STREAM_WINDOW_BYTES",
    [MIEB_ENV_SEARCH_FLOORS] = "MIEB_SEARCH_FLOORS",
    [MIEB_ENV_CUDA_GEMM] = "MIEB_CUDA_GEMM",
    [MIEB_ENV_CUDA_SCREEN] = "MIEB_CUDA_SCREEN",
    [MIEB_ENV_CUDA_SYNC_CHECK] = "MIEB_CUDA_SYNC_CHECK",
    [MIEB_ENV_BLAS_TUNE] = "MIEB_BLAS_TUNE",
    [MIEB_ENV_BLAS_TUNE_REEXEC] = "MIEB_BLAS_TUNE_REEXEC",
    [MIEB_ENV_BLAS_TUNE_TEST_DETECTED] = "MIEB_BLAS_TUNE_TEST_DETECTED",
};

const char *mieb_env_name(enum mieb_env_var v)
{
    return (unsigned)v < MIEB_ENV_COUNT ? names[v] : NULL;
}

const char *mieb_env(enum mieb_env_var v)
{
    const char *name = mieb_env_name(v);
    return name ? getenv(name) : NULL;
}
