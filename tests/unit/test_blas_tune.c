/**
 * test_blas_tune.c - the OpenBLAS core-type startup fix (host/cpu/blas_tune.c).
 *
 * Checks the pure decision (which detected cores are overridden, and with what), that
 * the loaded OpenBLAS reports a real core name, that on an AVX2+FMA CPU the core in
 * effect after tuning is not a generic fallback, and - by running this executable
 * again as a child with a pretended detection - that the re-exec happens exactly once,
 * respects a user's OPENBLAS_CORETYPE and stops at the loop-guard marker.
 * No timing assertions: speed is bench/sgemm_rate.c's job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cpu/blas_tune.h"
#include "check.h"

#define CHILD_FLAG "--blas-tune-child"

/* Child mode: what main() of mieb-eval does, then report. "start" is printed before the
 * startup hook, so a re-exec shows up as a second "start" line. */
static int child_main(int argc, char **argv)
{
    printf("start\n");
    mieb_blas_tune_startup(argc, argv);
    const char *ct = getenv("OPENBLAS_CORETYPE");
    printf("core=%s coretype=%s marker=%s\n", mieb_blas_corename(), ct ? ct : "-",
           getenv("MIEB_BLAS_TUNE_REEXEC") ? "set" : "-");
    return 0;
}

struct child_out {
    int starts;
    char core[64], coretype[64], marker[16];
};

/* Run this executable in child mode under `env_prefix` (an `env` argument list). */
static int run_child(const char *env_prefix, struct child_out *out)
{
    char self[4096], cmd[8192], line[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    snprintf(cmd, sizeof cmd, "env %s '%s' " CHILD_FLAG " extra-arg", env_prefix, self);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    while (fgets(line, sizeof line, p)) {
        if (!strcmp(line, "start\n"))
            out->starts++;
        else
            sscanf(line, "core=%63s coretype=%63s marker=%15s", out->core, out->coretype,
                   out->marker);
    }
    return pclose(p) == 0;
}

static void test_pick(void)
{
    /* generic fallbacks on an AVX2+FMA CPU are replaced by a fast AVX2 core */
    const char *generic[] = {"Prescott", "Core2", "Barcelona", "Nehalem", "Unknown",
                             "Sandybridge", "prescott", "", NULL};
    for (int i = 0; i < 9; i++) {
        const char *p = mieb_blas_pick_core(generic[i], 1);
        CHECK_MSG(p != NULL, "detected '%s'", generic[i] ? generic[i] : "(null)");
        if (p) {
            CHECK(!mieb_blas_is_generic_core(p));
            CHECK(mieb_blas_is_known_core(p));
            CHECK(!strcasecmp(p, "Haswell") || !strcasecmp(p, "Zen"));
        }
        /* ... but never without AVX2+FMA: a forced AVX2 core would die with SIGILL */
        CHECK(mieb_blas_pick_core(generic[i], 0) == NULL);
    }
    /* real detections are kept, including ones needing more than AVX2 */
    const char *real[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake", "Excavator",
                          "SomeFutureCore"};
    for (int i = 0; i < 6; i++) {
        CHECK_MSG(mieb_blas_pick_core(real[i], 1) == NULL, "detected '%s'", real[i]);
        CHECK(mieb_blas_pick_core(real[i], 0) == NULL);
    }
    CHECK(mieb_blas_is_known_core("Zen"));
    CHECK(mieb_blas_is_known_core("Prescott"));
    CHECK(!mieb_blas_is_known_core("Unknown"));
    CHECK(!mieb_blas_is_known_core("garbage"));
    CHECK(!mieb_blas_is_known_core(NULL));
}

static void test_loaded_core(void)
{
    const char *core = mieb_blas_corename();
    int avx2 = mieb_blas_cpu_has_avx2_fma();
    printf("OpenBLAS core: %s, AVX2+FMA: %s, OPENBLAS_CORETYPE=%s\n", core, avx2 ? "yes" : "no",
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)");
    CHECK(core != NULL && core[0] != '\0');
    CHECK_MSG(mieb_blas_is_known_core(core), "core '%s'", core);
    /* A user-forced core is theirs to answer for; otherwise the core in effect after
     * the startup fix (what pick would force, else what OpenBLAS detected) must be fast. */
    if (avx2 && !getenv("OPENBLAS_CORETYPE")) {
        const char *pick = mieb_blas_pick_core(core, avx2);
        const char *effective = pick ? pick : core;
        CHECK_MSG(!mieb_blas_is_generic_core(effective), "effective core '%s'", effective);
    }
    mieb_blas_set_threads(1); /* must not crash; OpenBLAS has no getter to check against */
    mieb_blas_set_threads(0);
}

static void test_reexec(void)
{
    struct child_out o;
    int avx2 = mieb_blas_cpu_has_avx2_fma();
    const char *clean = "-u OPENBLAS_CORETYPE -u MIEB_BLAS_TUNE -u MIEB_BLAS_TUNE_REEXEC";
    char env[512];

    /* 1. Pretend OpenBLAS fell back to Prescott: one re-exec onto the fast core. */
    snprintf(env, sizeof env, "%s MIEB_BLAS_TUNE_TEST_DETECTED=Prescott", clean);
    CHECK(run_child(env, &o));
    if (avx2) {
        const char *pick = mieb_blas_pick_core("Prescott", 1);
        CHECK_MSG(o.starts == 2, "starts=%d", o.starts);
        CHECK_MSG(pick && !strcmp(o.core, pick), "core '%s'", o.core);
        CHECK_MSG(pick && !strcmp(o.coretype, pick), "coretype '%s'", o.coretype);
        CHECK_MSG(!strcmp(o.marker, "-"), "marker '%s' left for children", o.marker);
    } else {
        CHECK_MSG(o.starts == 1, "starts=%d (no AVX2: nothing to fix)", o.starts);
    }

    /* 2. A user's OPENBLAS_CORETYPE is respected, even a slow one. */
    snprintf(env, sizeof env,
             "%s OPENBLAS_CORETYPE=Nehalem MIEB_BLAS_TUNE_TEST_DETECTED=Prescott", clean);
    CHECK(run_child(env, &o));
    CHECK_MSG(o.starts == 1, "starts=%d", o.starts);
    CHECK_MSG(!strcmp(o.core, "Nehalem"), "core '%s'", o.core);

    /* 3. The loop guard: with the marker already present there is no second exec. */
    snprintf(env, sizeof env,
             "%s MIEB_BLAS_TUNE_REEXEC=Prescott MIEB_BLAS_TUNE_TEST_DETECTED=Prescott", clean);
    CHECK(run_child(env, &o));
    CHECK_MSG(o.starts == 1, "starts=%d", o.starts);

    /* 4. MIEB_BLAS_TUNE=0 switches the fix off. */
    snprintf(env, sizeof env, "%s MIEB_BLAS_TUNE=0 MIEB_BLAS_TUNE_TEST_DETECTED=Prescott",
             clean);
    CHECK(run_child(env, &o));
    CHECK_MSG(o.starts == 1, "starts=%d", o.starts);

    /* 5. A real detection is left alone (whatever this machine's OpenBLAS finds). */
    snprintf(env, sizeof env, "%s MIEB_BLAS_TUNE_TEST_DETECTED=Zen", clean);
    CHECK(run_child(env, &o));
    CHECK_MSG(o.starts == 1, "starts=%d", o.starts);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], CHILD_FLAG))
        return child_main(argc, argv);
    test_pick();
    test_loaded_core();
    test_reexec();
    return check_done("test_blas_tune");
}
