/*
 * test_lr_predict.c - the CPU backend's lr_predict (host/cpu/cpu_logreg.h) and
 * mieb_dispatch_lr_predict / mieb_dispatch_lr_batch_available (host/dispatch/dispatch.h).
 *
 * 1. lr_predict against two references: the per-experiment predict mieb_logreg_predict
 *    (what the probe's batch fell back to before the CPU backend had the operation), bit for
 *    bit, on random models over several row blocks (1, 3 and all threads; through the CPU
 *    backend, dispatch without a backend and mieb_logreg_predict_backend); and the
 *    definition (decision values summed in double, the first maximum, a NaN as the maximum,
 *    binary: > 0) on quarter-step data whose sums are exact in float32, so that ties,
 *    decisions of exactly 0 and -0, NaN and infinite rows decide.
 * 2. dispatch with a stand-in backend: supports() refusing (quietly when the slot is NULL,
 *    with a warning for MIEB_ERR_TOO_LARGE), a run that returns MIEB_ERR_TOO_LARGE (the CPU
 *    takes over, with a warning), a run that succeeds (its answer kept), a run that fails
 *    otherwise (the error returned, not hidden by the CPU); the batch question.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_logreg.h"
#include "dispatch/dispatch.h"
#include "emulation/logreg_batch.h"
#include "emulation/logreg_lbfgs.h"

static unsigned long long rng = 12345;

static float unif(float lo, float hi) { return lo + (hi - lo) * (float)check_rng_uniform(&rng); }
/* -0.5 .. 0.5 in quarter steps: products and their sums are exact in float32 */
static float quarter(void) { return (float)((int)(check_rng_u64(&rng) % 5) - 2) * 0.25f; }

struct models {
    int64_t np, K, KK, D;
    float *coef, *icp; /* [np, KK, D], [np, KK] */
    struct mieb_logreg *m;
};

static int models_make(struct models *ms, int64_t np, int64_t K, int64_t D, int exact)
{
    ms->np = np, ms->K = K, ms->KK = K == 2 ? 1 : K, ms->D = D;
    ms->coef = malloc((size_t)(np * ms->KK * D) * sizeof(float));
    ms->icp = malloc((size_t)(np * ms->KK) * sizeof(float));
    ms->m = calloc((size_t)np, sizeof *ms->m);
    if (!ms->coef || !ms->icp || !ms->m)
        return 0;
    for (int64_t i = 0; i < np * ms->KK * D; i++)
        ms->coef[i] = exact ? quarter() : unif(-1.0f, 1.0f);
    for (int64_t i = 0; i < np * ms->KK; i++)
        ms->icp[i] = exact ? quarter() : unif(-0.5f, 0.5f);
    for (int64_t p = 0; p < np; p++) /* borrowed views: mieb_logreg_free is not called on them */
        ms->m[p] = (struct mieb_logreg){.n_classes = K, .dim = D, .coef = ms->coef + p * ms->KK * D,
                                        .intercept = ms->icp + p * ms->KK};
    return 1;
}

static void models_free(struct models *ms)
{
    free(ms->coef), free(ms->icp), free(ms->m);
}

/* X [n, D]; row 5 holds a NaN, row 6 an infinity, row 7 is all zeros (decisions = intercepts). */
static float *rows_make(int64_t n, int64_t D, int exact)
{
    float *X = malloc((size_t)(n * D) * sizeof *X);
    if (!X)
        return NULL;
    for (int64_t i = 0; i < n * D; i++)
        X[i] = exact ? quarter() : unif(-1.0f, 1.0f);
    if (n > 7) {
        X[5 * D + D / 2] = NAN;
        X[6 * D] = INFINITY;
        memset(X + 7 * D, 0, (size_t)D * sizeof *X);
    }
    return X;
}

/* The definition: decisions in double (exact for quarter-step data), np.argmax, binary > 0. */
static void predict_def(const struct models *ms, const float *X, int64_t n, int64_t *out)
{
    for (int64_t p = 0; p < ms->np; p++)
        for (int64_t i = 0; i < n; i++) {
            int64_t best = -1;
            double bv = 0.0;
            for (int64_t k = 0; k < ms->KK; k++) {
                const float *w = ms->coef + (p * ms->KK + k) * ms->D;
                double v = ms->icp[p * ms->KK + k];
                for (int64_t j = 0; j < ms->D; j++)
                    v += (double)X[i * ms->D + j] * (double)w[j];
                if (ms->KK == 1) {
                    best = v > 0.0;
                    break;
                }
                if (best < 0 || (isnan(v) && !isnan(bv)) || (!isnan(bv) && v > bv))
                    best = k, bv = v;
            }
            out[p * n + i] = best;
        }
}

static int64_t count_diff(const int64_t *a, const int64_t *b, int64_t n)
{
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

static void case_models(const char *name, int64_t np, int64_t K, int64_t D, int64_t n, int exact)
{
    struct models ms;
    float *X = rows_make(n, D, exact);
    int64_t *ref = malloc((size_t)(np * n) * sizeof *ref), *got = malloc((size_t)(np * n) * sizeof *got);
    if (!models_make(&ms, np, K, D, exact) || !X || !ref || !got) {
        CHECK_MSG(0, "%s: setup", name);
        goto done;
    }
    if (exact)
        predict_def(&ms, X, n, ref);
    else
        for (int64_t p = 0; p < np; p++)
            CHECK(mieb_logreg_predict(&ms.m[p], X, n, ref + p * n) == MIEB_OK);
    /* the CPU backend at 1, 3 and all threads; dispatch with no backend; the probe's helper */
    for (int threads = 0; threads <= 3; threads += threads ? 2 : 1) {
        struct mieb_backend *cpu = NULL;
        struct mieb_backend_opts o = {.n_threads = threads};
        CHECK(mieb_backend_init("cpu", &o, &cpu) == MIEB_OK);
        memset(got, 0xff, (size_t)(np * n) * sizeof *got);
        CHECK(mieb_dispatch_lr_predict(cpu, ms.coef, ms.icp, np, ms.KK, D, X, n, got) == MIEB_OK);
        int64_t d = count_diff(ref, got, np * n);
        CHECK_MSG(d == 0, "%s: cpu backend, %d threads: %lld of %lld classes differ", name, threads, (long long)d,
                  (long long)(np * n));
        memset(got, 0xff, (size_t)(np * n) * sizeof *got);
        CHECK(mieb_logreg_predict_backend(cpu, ms.m, np, X, n, got) == MIEB_OK);
        CHECK_MSG(count_diff(ref, got, np * n) == 0, "%s: mieb_logreg_predict_backend, %d threads", name, threads);
        mieb_backend_free(cpu);
    }
    memset(got, 0xff, (size_t)(np * n) * sizeof *got);
    CHECK(mieb_dispatch_lr_predict(NULL, ms.coef, ms.icp, np, ms.KK, D, X, n, got) == MIEB_OK);
    CHECK_MSG(count_diff(ref, got, np * n) == 0, "%s: dispatch without a backend", name);
    if (exact) { /* the per-experiment predict meets the definition too */
        for (int64_t p = 0; p < np; p++)
            CHECK(mieb_logreg_predict(&ms.m[p], X, n, got + p * n) == MIEB_OK);
        CHECK_MSG(count_diff(ref, got, np * n) == 0, "%s: mieb_logreg_predict against the definition", name);
    }
done:
    models_free(&ms);
    free(X), free(ref), free(got);
}

/* Ties that decide: two classes equal at the maximum (the first wins), NaN first, -0 vs 0. */
static void case_rules(void)
{
    /* KK = 3, D = 1, X = [1]: decisions are the coefficients plus intercepts */
    const float X[1] = {1.0f};
    struct {
        float c[3];
        int64_t want;
    } mc[] = {{{1.0f, 2.0f, 2.0f}, 1}, {{2.0f, 2.0f, 1.0f}, 0}, {{1.0f, NAN, NAN}, 1}, {{3.0f, 1.0f, NAN}, 2},
              {{-0.0f, 0.0f, -1.0f}, 0}, {{-INFINITY, -INFINITY, -INFINITY}, 0}, {{-1.0f, INFINITY, 5.0f}, 1}};
    const float zero3[3] = {0, 0, 0};
    for (size_t t = 0; t < sizeof mc / sizeof *mc; t++) {
        int64_t out = -1;
        CHECK(mieb_cpu_lr_predict(mc[t].c, zero3, 1, 3, 1, X, 1, 1, &out) == MIEB_OK);
        CHECK_MSG(out == mc[t].want, "multiclass rule %zu: class %lld, want %lld", t, (long long)out,
                  (long long)mc[t].want);
    }
    struct {
        float c, icp;
        int64_t want;
    } bc[] = {{0.0f, 0.0f, 0}, {-0.0f, 0.0f, 0}, {1.0f, -1.0f, 0}, {1e-30f, 0.0f, 1}, {NAN, 1.0f, 0},
              {INFINITY, -INFINITY, 0}, {-1e-30f, 0.0f, 0}};
    for (size_t t = 0; t < sizeof bc / sizeof *bc; t++) {
        int64_t out = -1;
        CHECK(mieb_cpu_lr_predict(&bc[t].c, &bc[t].icp, 1, 1, 1, X, 1, 1, &out) == MIEB_OK);
        CHECK_MSG(out == bc[t].want, "binary rule %zu: class %lld, want %lld", t, (long long)out,
                  (long long)bc[t].want);
    }
    int64_t out = 0;
    CHECK(mieb_cpu_lr_predict(zero3, zero3, 1, 0, 1, X, 1, 1, &out) == MIEB_ERR_INVALID_ARG);
    CHECK(mieb_cpu_lr_predict(zero3, zero3, 1, 3, 1, NULL, 1, 1, &out) == MIEB_ERR_INVALID_ARG);
    CHECK(mieb_cpu_lr_predict(NULL, NULL, 0, 3, 1, NULL, 0, 1, NULL) == MIEB_OK); /* nothing to do */
    mieb_clear_error();
}

/* ---- a stand-in backend for dispatch ---- */

static mieb_status fake_supports_answer, fake_run_answer;
static int fake_runs, warnings;

static mieb_status fake_supports(struct mieb_backend *be, const struct mieb_op_desc *op)
{
    (void)be, (void)op;
    return fake_supports_answer == MIEB_OK ? MIEB_OK : mieb_fail(fake_supports_answer, "fake: refused");
}

static mieb_status fake_predict(struct mieb_backend *be, const float *coef, const float *intercept,
                                int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out)
{
    (void)be, (void)coef, (void)intercept, (void)KK, (void)D, (void)X;
    fake_runs++;
    if (fake_run_answer != MIEB_OK)
        return mieb_fail(fake_run_answer, "fake lr_predict: failed");
    for (int64_t i = 0; i < n_problems * n; i++)
        out[i] = 7;
    return MIEB_OK;
}

static mieb_status fake_open(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems, int64_t n,
                             int64_t D, int64_t K, struct mieb_lr_set **out)
{
    (void)be, (void)X, (void)y, (void)n_problems, (void)n, (void)D, (void)K;
    *out = NULL;
    return mieb_fail(MIEB_ERR_INTERNAL, "fake: not opened");
}

static mieb_status fake_eval(struct mieb_backend *be, struct mieb_lr_set *s, int64_t n_active, const int64_t *which,
                             const float *wt, float *lossv, float *grad)
{
    (void)be, (void)s, (void)n_active, (void)which, (void)wt, (void)lossv, (void)grad;
    return MIEB_ERR_INTERNAL;
}

static void fake_close(struct mieb_backend *be, struct mieb_lr_set *s) { (void)be, (void)s; }

static void count_warnings(enum mieb_log_level lvl, const char *msg, void *user)
{
    (void)msg, (void)user;
    warnings += lvl >= MIEB_LOG_WARN;
}

/* One dispatch call on the stand-in: its status, whether the classes are the fake's 7s, the
 * CPU's, and how many runs and warnings it took. */
static void case_dispatch_one(struct mieb_backend *fake, const struct models *ms, const float *X, int64_t n,
                              const int64_t *cpu_ref, const char *name, mieb_status want_st, int want_fake,
                              int want_runs, int want_warnings)
{
    int64_t *got = malloc((size_t)(ms->np * n) * sizeof *got);
    if (!got) {
        CHECK_MSG(0, "%s: setup", name);
        return;
    }
    memset(got, 0xff, (size_t)(ms->np * n) * sizeof *got);
    fake_runs = warnings = 0;
    mieb_status st = mieb_dispatch_lr_predict(fake, ms->coef, ms->icp, ms->np, ms->KK, ms->D, X, n, got);
    CHECK_MSG(st == want_st, "%s: status %s, want %s", name, mieb_status_str(st), mieb_status_str(want_st));
    CHECK_MSG(fake_runs == want_runs, "%s: %d runs on the backend, want %d", name, fake_runs, want_runs);
    CHECK_MSG(warnings == want_warnings, "%s: %d warnings, want %d", name, warnings, want_warnings);
    if (st == MIEB_OK && want_fake) {
        int64_t d = 0;
        for (int64_t i = 0; i < ms->np * n; i++)
            d += got[i] != 7;
        CHECK_MSG(d == 0, "%s: the backend's answer was not kept (%lld classes)", name, (long long)d);
    } else if (st == MIEB_OK) {
        CHECK_MSG(count_diff(cpu_ref, got, ms->np * n) == 0, "%s: not the CPU's classes", name);
    }
    if (st == MIEB_OK)
        CHECK_MSG(!*mieb_last_error(), "%s: an error is left behind: %s", name, mieb_last_error());
    mieb_clear_error();
    free(got);
}

static void case_dispatch(void)
{
    const int64_t n = 2000, D = 24;
    struct models ms;
    float *X = rows_make(n, D, 0);
    int64_t *ref = malloc((size_t)(3 * n) * sizeof *ref);
    if (!models_make(&ms, 3, 5, D, 0) || !X || !ref) {
        CHECK_MSG(0, "dispatch: setup");
        goto done;
    }
    for (int64_t p = 0; p < 3; p++)
        CHECK(mieb_logreg_predict(&ms.m[p], X, n, ref + p * n) == MIEB_OK);
    struct mieb_backend fake = {.iface = {.name = "fake", .lr_predict = fake_predict, .supports = fake_supports}};
    mieb_log_set(count_warnings, NULL, MIEB_LOG_WARN);
    fake_supports_answer = fake_run_answer = MIEB_OK;
    case_dispatch_one(&fake, &ms, X, n, ref, "backend runs it", MIEB_OK, 1, 1, 0);
    fake_supports_answer = MIEB_ERR_TOO_LARGE;
    case_dispatch_one(&fake, &ms, X, n, ref, "supports: too large", MIEB_OK, 0, 0, 1);
    fake_supports_answer = MIEB_OK, fake_run_answer = MIEB_ERR_TOO_LARGE;
    case_dispatch_one(&fake, &ms, X, n, ref, "run: too large", MIEB_OK, 0, 1, 1);
    fake_run_answer = MIEB_ERR_OOM;
    case_dispatch_one(&fake, &ms, X, n, ref, "run: out of memory", MIEB_ERR_OOM, 0, 1, 0);
    fake_run_answer = MIEB_ERR_CUDA;
    case_dispatch_one(&fake, &ms, X, n, ref, "run: device error", MIEB_ERR_CUDA, 0, 1, 0);
    fake_supports_answer = MIEB_ERR_CUDA, fake_run_answer = MIEB_OK;
    case_dispatch_one(&fake, &ms, X, n, ref, "supports: device error", MIEB_ERR_CUDA, 0, 0, 0);
    fake_supports_answer = MIEB_OK;
    fake.iface.lr_predict = NULL;
    case_dispatch_one(&fake, &ms, X, n, ref, "no slot", MIEB_OK, 0, 0, 0);

    /* the batch question: the slots, then supports() */
    struct mieb_backend *cpu = NULL;
    CHECK(mieb_backend_init("cpu", NULL, &cpu) == MIEB_OK);
    warnings = 0;
    CHECK_MSG(!mieb_dispatch_lr_batch_available(cpu, 10, 80, D, 10), "the cpu backend has no batch");
    CHECK_MSG(!mieb_dispatch_lr_batch_available(NULL, 10, 80, D, 10), "no backend: no batch");
    CHECK_MSG(!mieb_dispatch_lr_batch_available(&fake, 10, 80, D, 10), "no batch slots: no batch");
    CHECK_MSG(warnings == 0, "a backend without the batch is no warning (%d)", warnings);
    fake.iface.lr_open = fake_open, fake.iface.lr_eval = fake_eval;
    CHECK_MSG(!mieb_dispatch_lr_batch_available(&fake, 10, 80, D, 10), "lr_close missing: no batch");
    fake.iface.lr_close = fake_close;
    CHECK_MSG(mieb_dispatch_lr_batch_available(&fake, 10, 80, D, 10), "all three slots: the batch");
    fake_supports_answer = MIEB_ERR_TOO_LARGE;
    CHECK_MSG(!mieb_dispatch_lr_batch_available(&fake, 10, 80, D, 10), "supports: too large: no batch");
    CHECK_MSG(warnings == 1, "too large is one warning (%d)", warnings);
    CHECK_MSG(!*mieb_last_error(), "the refusal is not left as an error: %s", mieb_last_error());
    mieb_log_set(NULL, NULL, MIEB_LOG_WARN);
    mieb_backend_free(cpu);
done:
    models_free(&ms);
    free(X), free(ref);
}

int main(void)
{
    case_models("binary D=64", 3, 2, 64, 4000, 0);
    case_models("K=3 D=32", 2, 3, 32, 4000, 0);
    case_models("K=37 D=100", 2, 37, 100, 3100, 0);
    case_models("K=1000 D=16", 1, 1000, 16, 1700, 0);
    case_models("exact K=10 D=16 (ties)", 3, 10, 16, 4000, 1);
    case_models("exact binary D=16 (decisions 0)", 3, 2, 16, 4000, 1);
    case_models("exact K=3 D=1", 2, 3, 1, 100, 1);
    case_rules();
    case_dispatch();
    return check_done("test_lr_predict");
}
