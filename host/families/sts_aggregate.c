/**
 * sts_aggregate.c - mteb's aggregate Visual STS tasks (AbsTaskAggregate, PROTOCOLS.md §7 and
 * §12.12): VisualSTS17Eng, VisualSTS17Multilingual, VisualSTS-b-Eng, VisualSTS-b-Multilingual.
 *
 * How mteb 2.26 computes them (abstasks/aggregated_task.py, tasks/aggregated_tasks/):
 *  - the aggregate holds one sub-task, filtered with filter_languages(hf_subsets=[...]); a
 *    fresh run evaluates the sub-task on exactly those subsets, in the sub-task's subset
 *    order (the registry's hf_subsets of the aggregate), on all of the sub-task's splits;
 *  - task_results_to_scores: for each of the aggregate's eval_splits ("test" only), the
 *    value is TaskResult._get_score_fast(splits=[split]) of the sub-task result: a Python
 *    sum (0 + v1 + v2 + ... in subset order) of each subset's main_score (cosine_spearman)
 *    divided by their count, wrapped by np.mean into a numpy.float64;
 *  - the result holds one subset "default" with {cosine_spearman, main_score} and, as every
 *    TaskResult, hf_subset, languages, mteb_version. languages is the aggregate's
 *    eval_langs, which AggregateTaskMetadata computes as list(set(bcp47 codes of the
 *    sub-task)) -- every language of the whole sub-task, not only the kept subsets' (the
 *    filter only changes the task's hf_subsets); mteb's order is Python's set order, which
 *    changes between processes, so we write them sorted (bcp47_codes' own order);
 *  - dataset_revision is "1" (the placeholder dataset of AggregateTaskMetadata).
 *
 * We always score the kept subsets afresh. mteb would instead reuse a sub-task result found
 * in its cache and then average *every* subset in that file (e.g. en-en as well): that
 * cache-dependent value is not reproduced. Only the "test" split is scored (the dev split
 * mteb also evaluates for STS-b is never used by the aggregate).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../results/results_writer.h"
#include "../emulation/npmath.h"
#include "family.h"
#include "per_sample.h"
#include "../core/qsort_cmp.h"

/* The aggregates of mteb 2.26 and the task each one filters (tasks/aggregated_tasks/). */
static const struct {
    const char *name, *subtask;
} aggregates[] = {
    {"VisualSTS17Eng", "STS17MultilingualVisualSTS"},
    {"VisualSTS17Multilingual", "STS17MultilingualVisualSTS"},
    {"VisualSTS-b-Eng", "STSBenchmarkMultilingualVisualSTS"},
    {"VisualSTS-b-Multilingual", "STSBenchmarkMultilingualVisualSTS"},
};

const char *mieb_aggregate_subtask(const char *name)
{
    for (size_t i = 0; i < sizeof aggregates / sizeof aggregates[0]; i++)
        if (!strcmp(name, aggregates[i].name))
            return aggregates[i].subtask;
    return NULL;
}

double mieb_aggregate_round(const char *key, double x, int ndigits)
{
    (void)key;
    return mieb_np_round(x, ndigits);
}

/* Collect the strings of a JSON list into v (at most cap). */
static int collect(const cJSON *list, const char **v, int n, int cap)
{
    const cJSON *l;
    cJSON_ArrayForEach(l, list)
    {
        if (cJSON_IsString(l) && n < cap)
            v[n++] = l->valuestring;
    }
    return n;
}

/* sorted(set(every language of every subset of t)) as a new cJSON array. */
static cJSON *all_languages(const struct mieb_task *t)
{
    const char *v[512];
    int n = 0;
    if (cJSON_IsArray(t->eval_langs)) {
        n = collect(t->eval_langs, v, n, 512);
    } else {
        const cJSON *sub;
        cJSON_ArrayForEach(sub, t->eval_langs)
        {
            n = collect(sub, v, n, 512);
        }
    }
    qsort(v, (size_t)n, sizeof v[0], mieb_cmp_str_ptr);
    cJSON *out = cJSON_CreateArray();
    for (int i = 0; out && i < n; i++)
        if (i == 0 || strcmp(v[i], v[i - 1]))
            cJSON_AddItemToArray(out, cJSON_CreateString(v[i]));
    return out;
}

static bool task_has(const char *const *list, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], s))
            return true;
    return false;
}

mieb_status mieb_aggregate_score(const struct mieb_run_ctx *rc, const struct mieb_registry *reg,
                                 const struct mieb_task *agg, const char *task_data_dir, cJSON **out)
{
    const char *sub_name = mieb_aggregate_subtask(agg->name);
    const struct mieb_task *sub = sub_name ? mieb_registry_find(reg, sub_name) : NULL;
    char path[4096];
    struct mieb_taskdata *td = NULL;
    mieb_status st = MIEB_OK;
    *out = NULL;
    if (!sub)
        return mieb_fail(MIEB_ERR_CONFIG, "task %s: not an aggregate task, or its sub-task %s is not in the registry",
                         agg->name, sub_name ? sub_name : "(none)");
    if (agg->n_splits < 1 || agg->n_subsets < 1)
        return mieb_fail(MIEB_ERR_CONFIG, "task %s: an aggregate needs at least one split and one subset", agg->name);
    if (!mieb_family_driver(sub->family))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "task %s: sub-task %s has type %s, which has no driver", agg->name,
                         sub->name, sub->type);
    for (int h = 0; h < agg->n_subsets; h++)
        if (!task_has(sub->subsets, sub->n_subsets, agg->subsets[h]))
            return mieb_fail(MIEB_ERR_CONFIG, "task %s: subset %s is not a subset of %s", agg->name, agg->subsets[h],
                             sub->name);
    if (snprintf(path, sizeof path, "%s/%s.h5", task_data_dir, sub->name) >= (int)sizeof path)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "path too long");
    MIEB_TRY(mieb_taskdata_open(path, sub->name, &td));
    mieb_family_score_fn score_subset = mieb_family_driver(sub->family);
    cJSON *scores = cJSON_CreateObject();
    for (int s = 0; s < agg->n_splits && st == MIEB_OK; s++) {
        const char *split = agg->splits[s];
        double val_sum = 0.0; /* Python: val_sum = 0; val_sum += main_score ... */
        int n_val = 0;
        for (int h = 0; h < agg->n_subsets && st == MIEB_OK; h++) {
            const char *subset = agg->subsets[h];
            if (!mieb_taskdata_has_group(td, split, subset)) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: group /%s/%s is missing (aggregate task %s needs subset %s of %s)",
                               path, split, subset, agg->name, subset, sub->name);
                break;
            }
            cJSON *tmp = cJSON_CreateObject();
            st = score_subset(rc, sub, td, split, subset, tmp);
            const cJSON *ms = st == MIEB_OK ? cJSON_GetObjectItemCaseSensitive(tmp, sub->main_score) : NULL;
            if (st == MIEB_OK && !cJSON_IsNumber(ms))
                st = mieb_fail(MIEB_ERR_INTERNAL, "task %s: main score %s of %s %s/%s was not computed", agg->name,
                               sub->main_score, sub->name, split, subset);
            if (st == MIEB_OK) {
                val_sum += ms->valuedouble;
                n_val++;
                MIEB_LOGD("%s: %s %s/%s %s = %.17g", agg->name, sub->name, split, subset, sub->main_score,
                          ms->valuedouble);
            }
            cJSON_Delete(tmp);
        }
        if (st != MIEB_OK)
            break;
        double v = val_sum / (double)n_val; /* then np.mean([v]) == v, as numpy.float64 */
        st = mieb_per_sample_write_aggregate(rc, agg->name, split, sub->name, agg->subsets, agg->n_subsets);
        if (st != MIEB_OK)
            break;
        cJSON *list = cJSON_AddArrayToObject(scores, split), *d = cJSON_CreateObject();
        cJSON_AddItemToArray(list, d);
        cJSON_AddNumberToObject(d, agg->main_score, v);
        cJSON_AddNumberToObject(d, "main_score", v);
        cJSON_AddStringToObject(d, "hf_subset", "default");
        cJSON_AddItemToObject(d, "languages", all_languages(sub));
        cJSON_AddStringToObject(d, "mteb_version", MIEB_MTEB_VERSION);
    }
    mieb_taskdata_close(td);
    if (st != MIEB_OK) {
        cJSON_Delete(scores);
        return st;
    }
    *out = scores;
    return MIEB_OK;
}
