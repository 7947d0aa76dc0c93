/**
 * blas_tune.c - pick fast OpenBLAS kernels when OpenBLAS itself picked slow ones.
 *
 * OpenBLAS (DYNAMIC_ARCH builds, as in Debian/Ubuntu) chooses its kernel set from the
 * CPUID family/model once, when the library is loaded. Versions that predate a CPU
 * (for example Zen 3 on OpenBLAS < 0.3.13, which maps it to "Barcelona"), or a
 * hypervisor that reports an odd family/model, leave it on SSE-era kernels that run
 * SGEMM at 1/5 to 2/3 of the AVX2 rate (bench/README.md has the numbers). The choice
 * can only be changed through OPENBLAS_CORETYPE before the library loads, so the
 * startup hook sets it and re-executes the program once.
 *
 * What is decided, and why:
 *  - A user's OPENBLAS_CORETYPE (even an odd one) is always respected: they may be
 *    working around something we do not know about.
 *  - Only cores from a fixed list of generic/pre-AVX2 fallbacks are overridden, and only
 *    when the CPU and OS support AVX2 and FMA (a forced core whose instructions the CPU
 *    lacks dies with SIGILL: OpenBLAS does not check a forced core type).
 *  - The replacement is "Haswell": on the reference machine (Zen 3, see bench/README.md)
 *    it runs SGEMM as fast as "Zen" - both use the same sgemm_kernel_8x4_haswell_2
 *    kernel and blocking in OpenBLAS 0.3.21 - and it is the kernel set OpenBLAS itself
 *    uses for unrecognised AVX2 CPUs of either vendor.
 *  - The re-exec happens at most once (marker variable) and any failure is a warning:
 *    a slow BLAS gives the same results, only later.
 *
 * Environment: OPENBLAS_CORETYPE (user override, respected), MIEB_BLAS_TUNE=0 (disable),
 * MIEB_BLAS_TUNE_REEXEC (internal marker; holds the core OpenBLAS detected),
 * MIEB_BLAS_TUNE_TEST_DETECTED (tests only: pretend OpenBLAS detected this core).
 */
#include "blas_tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cblas.h>

#include "../core/env.h"
#include "../core/status.h"

#define MARKER_ENV mieb_env_name(MIEB_ENV_BLAS_TUNE_REEXEC)

/* The core type forced on AVX2+FMA CPUs that OpenBLAS did not recognise (measured: see
 * the file comment and bench/README.md). */
#define MIEB_BLAS_FAST_CORE "Haswell"

/* OpenBLAS x86-64 core names whose SGEMM kernels predate AVX2+FMA, i.e. what OpenBLAS
 * falls back to for CPUs it does not know ("Unknown" when it knows nothing at all).
 * Deliberately a deny-list: any other name (Haswell, Zen, SkylakeX, Cooperlake, the
 * AMD Bulldozer family chosen on real Bulldozer hardware, names from newer OpenBLAS
 * releases) is assumed to be a real detection and left alone. */
static const char *const generic_cores[] = {
    "Unknown",  "Katmai",     "Coppermine", "Northwood",    "Prescott", "Banias",
    "Atom",     "Core2",      "Penryn",     "Dunnington",   "Nehalem",  "Athlon",
    "Opteron",  "Opteron_SSE3", "Barcelona", "Nano",        "Bobcat",   "Sandybridge",
};

/* Names this OpenBLAS generation can report on x86-64 (its corename[] table) plus the
 * later additions, so the tests can tell a real core name from garbage. */
static const char *const known_cores[] = {
    "Haswell",   "Zen",       "SkylakeX",   "Cooperlake", "SapphireRapids",
    "Bulldozer", "Piledriver", "Steamroller", "Excavator",
};

int mieb_blas_is_generic_core(const char *name)
{
    if (!name || !name[0])
        return 1; /* no name at all is as uninformative as "Unknown" */
    for (size_t i = 0; i < sizeof generic_cores / sizeof generic_cores[0]; i++)
        if (!strcasecmp(name, generic_cores[i]))
            return 1;
    return 0;
}

int mieb_blas_is_known_core(const char *name)
{
    if (!name || !name[0])
        return 0;
    if (mieb_blas_is_generic_core(name))
        return strcasecmp(name, "Unknown") != 0;
    for (size_t i = 0; i < sizeof known_cores / sizeof known_cores[0]; i++)
        if (!strcasecmp(name, known_cores[i]))
            return 1;
    return 0;
}

const char *mieb_blas_pick_core(const char *detected, int has_avx2_fma)
{
    if (!has_avx2_fma)
        return NULL; /* nothing faster can run here: the fallback is correct */
    if (!mieb_blas_is_generic_core(detected))
        return NULL;
    return MIEB_BLAS_FAST_CORE;
}

int mieb_blas_cpu_has_avx2_fma(void)
{
#if defined(__x86_64__) || defined(__i386__)
    /* libgcc's check includes the OS (XCR0) enabling the YMM state, which is what
     * OpenBLAS's own support_avx2() tests too. */
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

const char *mieb_blas_corename(void)
{
    const char *name = openblas_get_corename();
    return name && name[0] ? name : "unknown";
}

void mieb_blas_set_threads(int n)
{
    if (n <= 0)
        n = openblas_get_num_procs();
    openblas_set_num_threads(n > 0 ? n : 1);
}

/* execv wants argv[argc] == NULL; main()'s argv guarantees it, other callers might not. */
static void reexec(int argc, char **argv)
{
    char *fallback_argv[2] = {(char *)"mieb-eval", NULL};
    char **av = argv;
    char **copy = NULL;
    if (!argv || argc <= 0) {
        av = fallback_argv;
    } else if (argv[argc] != NULL) {
        copy = calloc((size_t)argc + 1, sizeof *copy);
        if (!copy) {
            MIEB_LOGW("blas tune: out of memory preparing re-exec; keeping the slow BLAS kernels");
            return;
        }
        memcpy(copy, argv, sizeof *copy * (size_t)argc);
        av = copy;
    }
    /* Anything buffered would be lost (or printed twice) across exec. */
    fflush(NULL);
    execv("/proc/self/exe", av);
    int err = errno;
    MIEB_LOGW("blas tune: re-exec of /proc/self/exe (%s) failed: %s; SGEMM keeps the slow "
              "'%s' kernels. Setting OPENBLAS_CORETYPE=%s avoids this.",
              av[0], strerror(err), mieb_blas_corename(), MIEB_BLAS_FAST_CORE);
    free(copy);
}

void mieb_blas_tune_startup(int argc, char **argv)
{
    const char *marker = mieb_env(MIEB_ENV_BLAS_TUNE_REEXEC);
    if (marker) {
        /* Second life after our re-exec: report once, drop the marker so programs we
         * start do not mistake themselves for re-executed (they inherit the core type). */
        MIEB_LOGI("blas: OpenBLAS core '%s' (detected '%s', set by mieb-eval)", mieb_blas_corename(),
                  marker);
        unsetenv(MARKER_ENV);
        return;
    }
    const char *off = mieb_env(MIEB_ENV_BLAS_TUNE);
    if (off && !strcmp(off, "0"))
        return;
    if (getenv("OPENBLAS_CORETYPE"))
        return; /* the user's choice, right or wrong */

    const char *detected = mieb_env(MIEB_ENV_BLAS_TUNE_TEST_DETECTED);
    if (!detected)
        detected = mieb_blas_corename();
    const char *pick = mieb_blas_pick_core(detected, mieb_blas_cpu_has_avx2_fma());
    if (!pick)
        return;

    /* debug only: the re-executed process logs the outcome once at info level */
    MIEB_LOGD("blas: OpenBLAS chose the generic '%s' kernels on an AVX2+FMA CPU; restarting "
              "with OPENBLAS_CORETYPE=%s", detected, pick);
    if (setenv("OPENBLAS_CORETYPE", pick, 1) != 0 || setenv(MARKER_ENV, detected, 1) != 0) {
        MIEB_LOGW("blas tune: cannot set OPENBLAS_CORETYPE (%s); keeping the '%s' kernels",
                  strerror(errno), detected);
        unsetenv("OPENBLAS_CORETYPE");
        unsetenv(MARKER_ENV);
        return;
    }
    reexec(argc, argv);
    /* Only reached when exec failed: leave the environment as the user gave it. */
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(MARKER_ENV);
}
