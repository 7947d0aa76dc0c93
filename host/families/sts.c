/**
 * sts.c - the Visual STS family driver (VisualSTS(eng), VisualSTS(multi)): PROTOCOLS.md §7,
 * mteb's AbsTaskSTS with the AnySTSEvaluator.
 *
 * Reads the gold scores and the min_score / max_score attributes, normalises the gold as
 * (score - min_score) / (max_score - min_score), scores every pair of the roles sentence1
 * and sentence2 (row i of each is pair i) in blocks sized by --mem-limit with cosine,
 * -Manhattan, -Euclidean (sklearn's arithmetic) and the model's similarity (torch's), and
 * correlates each with the gold: scipy's pearsonr and spearmanr. Keys, in mteb's order:
 * pearson, spearman (model similarity), cosine_pearson, cosine_spearman, manhattan_pearson,
 * manhattan_spearman, euclidean_pearson, euclidean_spearman.
 *
 * What mteb cannot score is refused with the reason: fewer than 2 pairs (pearsonr raises),
 * max_score == min_score (division by zero), multi-vector embeddings (sklearn's paired
 * distances take 2-D arrays). A constant gold or similarity column is not an error: scipy
 * returns NaN and mteb writes NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dispatch/dispatch.h"
#include "../emb/embeddings.h"
#include "../metrics/correlation.h"
#include "family.h"
#include "per_sample.h"

static mieb_status open_role(const struct mieb_run_ctx *rc, const struct mieb_task *task, const char *split,
                             const char *subset, const char *role, int64_t n_pairs, struct mieb_emb_role **r)
{
    MIEB_TRY(mieb_emb_source_open(&rc->emb, task->name, split, subset, role, MIEB_EMB_EVERY_ROW, r));
    const struct mieb_emb_info *in = mieb_emb_role_info(*r);
    if (in->multivector)
        return mieb_fail(MIEB_ERR_BAD_DATA,
                         "%s: multi-vector embeddings (/offsets) cannot be scored: mteb's STS evaluator computes "
                         "sklearn paired distances, which take one vector per item",
                         mieb_emb_role_path(*r));
    if (in->n_items != n_pairs)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld rows, but the task data has %lld gold scores",
                         mieb_emb_role_path(*r), (long long)in->n_items, (long long)n_pairs);
    return MIEB_OK;
}

/* Append "<prefix>pearson" and "<prefix>spearman" for one similarity column. */
static mieb_status add_corr(cJSON *scores, const char *prefix, const double *gold, const double *v, int64_t n,
                            double *scratch)
{
    char kp[64], ks[64];
    double sp;
    snprintf(kp, sizeof kp, "%spearson", prefix);
    snprintf(ks, sizeof ks, "%sspearman", prefix);
    MIEB_TRY(mieb_spearmanr(gold, v, n, &sp));
    if (!cJSON_AddNumberToObject(scores, kp, mieb_pearsonr(gold, v, n, scratch)) ||
        !cJSON_AddNumberToObject(scores, ks, sp))
        return mieb_fail(MIEB_ERR_OOM, "STS scores");
    return MIEB_OK;
}

mieb_status mieb_sts_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                  struct mieb_taskdata *td, const char *split, const char *subset, cJSON *scores)
{
    const char *path = mieb_taskdata_path(td);
    struct mieb_emb_role *r1 = NULL, *r2 = NULL;
    double *gold = NULL, *col = NULL, *scratch = NULL;
    float *a = NULL, *b = NULL;
    int64_t n = 0;
    double lo = 0, hi = 0;
    mieb_status st;

    if (rc->sim == MIEB_SIM_MAXSIM) {
        st = mieb_fail(MIEB_ERR_UNSUPPORTED,
                       "%s: similarity MaxSim: mteb's STS evaluator cannot score multi-vector embeddings "
                       "(sklearn paired distances take one vector per item)",
                       task->name);
        goto done;
    }
    st = mieb_taskdata_read_f64(td, split, subset, "gold", &gold, &n);
    if (st == MIEB_OK)
        st = mieb_taskdata_group_attr_f64(td, split, subset, "min_score", &lo);
    if (st == MIEB_OK)
        st = mieb_taskdata_group_attr_f64(td, split, subset, "max_score", &hi);
    if (st != MIEB_OK)
        goto done;
    if (!(hi - lo != 0.0) || !isfinite(hi - lo)) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s: min_score = %g and max_score = %g cannot normalise the gold "
                       "scores (mteb divides by max_score - min_score)", path, split, subset, lo, hi);
        goto done;
    }
    if (n < 2) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/gold: %lld pair(s); scipy's pearsonr needs at least 2, so mteb "
                       "cannot score this subset", path, split, (long long)n);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) /* AbsTaskSTS._normalize, in Python floats */
        gold[i] = (gold[i] - lo) / (hi - lo);
    {
        int64_t i = 1;
        while (i < n && gold[i] == gold[0])
            i++;
        if (i == n) /* scipy warns (ConstantInputWarning) and returns NaN; mteb writes NaN */
            MIEB_LOGW("%s /%s/%s: the gold scores are constant: every correlation is NaN, as in mteb", task->name,
                      split, subset);
    }
    st = open_role(rc, task, split, subset, "sentence1", n, &r1);
    if (st == MIEB_OK)
        st = open_role(rc, task, split, subset, "sentence2", n, &r2);
    if (st != MIEB_OK)
        goto done;
    const struct mieb_emb_info *i1 = mieb_emb_role_info(r1), *i2 = mieb_emb_role_info(r2);
    const int64_t dim = i1->dim;
    if (i2->dim != dim) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension %lld differs from %s: dimension %lld", mieb_emb_role_path(r1),
                       (long long)dim, mieb_emb_role_path(r2), (long long)i2->dim);
        goto done;
    }
    /* sklearn keeps float32 only when both inputs are float32 */
    const bool f64 = !(i1->dtype == MIEB_EMB_F32 && i2->dtype == MIEB_EMB_F32);

    col = malloc(sizeof(double) * (size_t)n * 4);
    scratch = malloc(sizeof(double) * (size_t)n * 2);
    double per_pair = 2.0 * (double)dim * sizeof(float);
    int64_t block = (int64_t)((double)rc->mem_limit / (per_pair > 1 ? per_pair : 1));
    block = block < 1 ? 1 : block > n ? n : block;
    a = malloc(sizeof(float) * (size_t)(block * dim + 1));
    b = malloc(sizeof(float) * (size_t)(block * dim + 1));
    if (!col || !scratch || !a || !b) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %lld pairs", task->name, (long long)n);
        goto done;
    }
    double *cosv = col, *manv = col + n, *eucv = col + 2 * n, *modv = col + 3 * n;
    for (int64_t p0 = 0; p0 < n && st == MIEB_OK; p0 += block) {
        int64_t nb = n - p0 < block ? n - p0 : block;
        double t0 = mieb_now();
        st = mieb_emb_role_read(r1, p0, nb, a, NULL);
        if (st == MIEB_OK)
            st = mieb_emb_role_read(r2, p0, nb, b, NULL);
        double t1 = mieb_now();
        struct mieb_sts_pair_out o = {cosv + p0, manv + p0, eucv + p0, modv + p0};
        if (st == MIEB_OK)
            st = mieb_dispatch_sts_pairs(rc->be, a, b, nb, dim, f64, rc->sim, &o);
        if (rc->times) {
            rc->times->read_wait += t1 - t0;
            rc->times->similarity += mieb_now() - t1;
        }
    }
    double tm = mieb_now();
    if (st == MIEB_OK)
        st = add_corr(scores, "", gold, modv, n, scratch);
    if (st == MIEB_OK)
        st = add_corr(scores, "cosine_", gold, cosv, n, scratch);
    if (st == MIEB_OK)
        st = add_corr(scores, "manhattan_", gold, manv, n, scratch);
    if (st == MIEB_OK)
        st = add_corr(scores, "euclidean_", gold, eucv, n, scratch);
    if (st == MIEB_OK)
        st = mieb_per_sample_write_sts(rc, task->name, split, subset, gold, modv, cosv, manv, eucv, n);
    if (rc->times)
        rc->times->metrics += mieb_now() - tm;
done:
    if (st != MIEB_OK && !strstr(mieb_last_error(), path))
        mieb_fail_context(st, "%s /%s/%s (%s)", task->name, split, subset, path);
    free(gold);
    free(col);
    free(scratch);
    free(a);
    free(b);
    mieb_emb_role_close(r1);
    mieb_emb_role_close(r2);
    return st;
}
