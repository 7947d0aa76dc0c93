/*
 * cpu_logreg.c - lr_predict on the CPU (cpu_logreg.h). The work is cut into items that are
 * each one BLAS call of a one-thread predict: a block of MIEB_CPU_LR_PRED_ROWS rows of one
 * multiclass model, or all rows of one binary model; threads take whole items, so the
 * classes are the same bits whatever the thread count.
 */
#include "cpu_logreg.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <cblas.h>

#include "../math/logreg_math.h"
#include "../core/parallel.h"

void mieb_cpu_lr_predict_block(const float *coef, const float *intercept, int64_t KK, int64_t D, const float *X,
                               int64_t rows, float *scratch, int64_t *out)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)KK, (int)D, 1.0f, X, (int)D, coef, (int)D,
                0.0f, scratch, (int)KK);
    for (int64_t i = 0; i < rows; i++)
        out[i] = mieb_lr_row_class(scratch + i * KK, intercept, KK);
}

void mieb_cpu_lr_predict_binary(const float *coef, float intercept, const float *X, int64_t n, int64_t D,
                                float *scratch, int64_t *out)
{
    cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)D, 1.0f, X, (int)D, coef, 1, 0.0f, scratch, 1);
    for (int64_t i = 0; i < n; i++)
        out[i] = mieb_lr_binary_class(mieb_lr_decision(scratch[i], intercept));
}

struct lp_job {
    const float *coef, *intercept, *X;
    int64_t KK, D, n, n_blocks, n_items; /* n_blocks per model; n_items in all */
    int64_t *out;
    atomic_int failed; /* a thread found no scratch */
};

static void lp_part(void *arg, int t, int nt)
{
    struct lp_job *j = arg;
    int64_t lo, hi;
    mieb_par_range(j->n_items, t, nt, &lo, &hi);
    if (lo >= hi)
        return;
    size_t cap = j->KK == 1 ? (size_t)j->n : (size_t)MIEB_CPU_LR_PRED_ROWS * (size_t)j->KK;
    float *s = malloc(cap * sizeof *s);
    if (!s) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t it = lo; it < hi; it++) {
        int64_t p = it / j->n_blocks, r0 = (it % j->n_blocks) * MIEB_CPU_LR_PRED_ROWS;
        const float *coef = j->coef + p * j->KK * j->D, *icp = j->intercept + p * j->KK;
        int64_t *out = j->out + p * j->n;
        if (j->KK == 1) {
            mieb_cpu_lr_predict_binary(coef, icp[0], j->X, j->n, j->D, s, out);
        } else {
            int64_t rows = j->n - r0 < MIEB_CPU_LR_PRED_ROWS ? j->n - r0 : MIEB_CPU_LR_PRED_ROWS;
            mieb_cpu_lr_predict_block(coef, icp, j->KK, j->D, j->X + r0 * j->D, rows, s, out + r0);
        }
    }
    free(s);
}

mieb_status mieb_cpu_lr_predict(const float *coef, const float *intercept, int64_t n_problems, int64_t KK, int64_t D,
                                const float *X, int64_t n, int n_threads, int64_t *out)
{
    if (n_problems < 0 || KK < 1 || D < 1 || n < 0 || KK > INT32_MAX || D > INT32_MAX || n > INT32_MAX)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cpu lr_predict: bad shape: %lld models of %lld x %lld, %lld rows",
                         (long long)n_problems, (long long)KK, (long long)D, (long long)n);
    if (n_problems == 0 || n == 0)
        return MIEB_OK;
    if (!coef || !intercept || !X || !out)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cpu lr_predict: missing coef, intercept, X or out");
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1); /* numpy's bits come from one BLAS thread; ours split the items */
    struct lp_job j = {.coef = coef, .intercept = intercept, .X = X, .KK = KK, .D = D, .n = n, .out = out};
    j.n_blocks = KK == 1 ? 1 : (n + MIEB_CPU_LR_PRED_ROWS - 1) / MIEB_CPU_LR_PRED_ROWS;
    j.n_items = n_problems * j.n_blocks;
    atomic_init(&j.failed, 0);
    int64_t nt = n_threads > 0 ? n_threads : mieb_par_cpus();
    nt = nt < j.n_items ? nt : j.n_items;
    nt = nt < MIEB_PAR_MAX_PARTS ? nt : MIEB_PAR_MAX_PARTS;
    mieb_par_run((int)nt, lp_part, &j);
    if (atomic_load(&j.failed))
        return mieb_fail(MIEB_ERR_OOM, "cpu lr_predict: scores of %lld rows x %lld classes",
                         (long long)(KK == 1 ? n : MIEB_CPU_LR_PRED_ROWS), (long long)KK);
    return MIEB_OK;
}
