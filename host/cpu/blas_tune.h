/**
 * blas_tune.h - make the linked BLAS run its fast single-precision kernels without the
 * user doing anything.
 *
 * Debian's OpenBLAS does not recognise some CPU models (for example AMD Zen 3 under KVM)
 * and silently falls back to slow generic kernels. OpenBLAS reads its core type only
 * at library load time, so this is called first thing in main(): when the detected
 * core is a generic fallback on a CPU that has AVX2+FMA, it sets the core type that the
 * benchmark in bench/ measured to be fastest and re-executes the program once.
 * A user's own OPENBLAS_CORETYPE is always respected.
 */
#ifndef MIEB_CPU_BLAS_TUNE_H
#define MIEB_CPU_BLAS_TUNE_H

/**
 * Call before any BLAS use. May not return (re-exec); never exits on failure.
 * Does nothing when OPENBLAS_CORETYPE is set or MIEB_BLAS_TUNE=0; after its re-exec it
 * logs the chosen core once at info level.
 */
void mieb_blas_tune_startup(int argc, char **argv);
/** The OpenBLAS core in use ("Haswell", "Zen", ...), for logs and result metadata. */
const char *mieb_blas_corename(void);

/**
 * The startup decision, pure so it can be tested without re-executing: the core type to
 * force when OpenBLAS detected `detected` (may be NULL) on a CPU with (has_avx2_fma != 0)
 * or without AVX2+FMA, or NULL to keep the detected one. Ignores the environment.
 */
const char *mieb_blas_pick_core(const char *detected, int has_avx2_fma);
/** 1 when `name` is one of OpenBLAS's generic/pre-AVX2 fallback cores (NULL and "" count). */
int mieb_blas_is_generic_core(const char *name);
/** 1 when `name` is a core name OpenBLAS reports on x86-64 ("Unknown" is not). */
int mieb_blas_is_known_core(const char *name);
/** 1 when the CPU and the OS support AVX2 and FMA (always 0 off x86). */
int mieb_blas_cpu_has_avx2_fma(void);
/** OpenBLAS's own thread count for later calls; n <= 0 means one per online CPU. */
void mieb_blas_set_threads(int n);

#endif
