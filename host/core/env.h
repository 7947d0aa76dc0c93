/**
 * env.h - every MIEB_* environment variable the program reads, read in one place (env.c).
 *
 * The variables are switches for measurements and tests, and the registry's location; each is
 * documented in docs/ENVIRONMENT.md, one row per entry of enum mieb_env_var (a test checks that
 * no other file reads a MIEB_* variable and that every one has its row). What a value means
 * stays with the code that reads it: mieb_env gives the text as the environment holds it.
 */
#ifndef MIEB_CORE_ENV_H
#define MIEB_CORE_ENV_H

enum mieb_env_var {
    MIEB_ENV_REGISTRY,                /* tasks.json to load instead of the built-in one */
    MIEB_ENV_PROGRESS_INTERVAL,       /* seconds between plain progress lines */
    MIEB_ENV_CPU_ISA,                 /* scalar | avx2 | avx512: the canonical dot kernels */
    MIEB_ENV_CPU_SCREEN,              /* the CPU retrieval screen's kernel, or off */
    MIEB_ENV_SCREEN_MIX,              /* off: the bf16 screen without its floored mix */
    MIEB_ENV_STREAM_MMAP,             /* off | 0: read embedding blocks instead of mapping them */
    MIEB_ENV_STREAM_WINDOW_BYTES,     /* bytes of rows prepared from one mapping at a time */
    MIEB_ENV_SEARCH_FLOORS,           /* off: retrieval search without score floors */
    MIEB_ENV_CUDA_GEMM,               /* cublas: cuBLAS' order instead of the CPU's bits */
    MIEB_ENV_CUDA_SCREEN,             /* auto | int8 | off: the CUDA retrieval screen */
    MIEB_ENV_CUDA_SYNC_CHECK,         /* not 0: synchronise after every CUDA launch */
    MIEB_ENV_BLAS_TUNE,               /* 0: no OpenBLAS core-type re-exec at start */
    MIEB_ENV_BLAS_TUNE_REEXEC,        /* set by the program for its own re-exec (the detected core) */
    MIEB_ENV_BLAS_TUNE_TEST_DETECTED, /* tests: the OpenBLAS core to act as if detected */
    MIEB_ENV_COUNT
};

/** The variable's name, "MIEB_REGISTRY" ... (to set it, or to name it in a message). */
const char *mieb_env_name(enum mieb_env_var v);

/** The variable's value as the environment holds it (possibly empty), or NULL when unset. */
const char *mieb_env(enum mieb_env_var v);

#endif
