/* report_data.c - details of result files for the HTML report (see report_data.h). */
#include "report_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileutil.h"
#include "../results/results_reader.h"
#include "../json/json_py.h"

#define RESULT_MAX_BYTES (256u << 20)

static cJSON *parse_result(const char *path)
{
    char *text = NULL, *strict = NULL;
    size_t len = 0, slen = 0;
    if (mieb_read_file(path, RESULT_MAX_BYTES, &text, &len) != MIEB_OK)
        return NULL;
    mieb_status st = mieb_json_py_to_strict(text, len, &strict, &slen);
    free(text);
    if (st != MIEB_OK)
        return NULL;
    cJSON *root = cJSON_ParseWithLength(strict, slen);
    free(strict);
    if (!root)
        mieb_fail(MIEB_ERR_BAD_DATA, "%s: not valid JSON", path);
    return root;
}

mieb_status mieb_report_data_docs_load(const struct mieb_leaderboard *lb, cJSON ***docs, int *n_bad)
{
    size_t n = (size_t)lb->n_models * (size_t)lb->n_tasks;
    *docs = calloc(n + 1, sizeof **docs);
    if (!*docs)
        return mieb_fail(MIEB_ERR_OOM, "report");
    for (int r = 0; r < lb->n_models; r++) {
        const struct mieb_model_results *m = lb->rows[r].model;
        for (int t = 0; t < lb->n_tasks; t++)
            for (int i = 0; i < m->n_tasks; i++)
                if (!strcmp(m->tasks[i].task_name, lb->tasks[t]->name)) { /* the leaderboard's rule: first file */
                    cJSON *d = parse_result(m->tasks[i].path);
                    if (!d) {
                        MIEB_LOGE("%s", mieb_last_error());
                        (*n_bad)++;
                    }
                    (*docs)[(size_t)r * lb->n_tasks + t] = d;
                    break;
                }
    }
    return MIEB_OK;
}

void mieb_report_data_docs_free(cJSON **docs, int n)
{
    if (!docs)
        return;
    for (int i = 0; i < n; i++)
        cJSON_Delete(docs[i]);
    free(docs);
}

/* Loops over every entry e of scores[split][i], all splits in file order. */
#define FOR_EACH_ENTRY(doc, split, e)                                                                             \
    for (const cJSON *split = cJSON_GetObjectItemCaseSensitive(doc, "scores") ?                                   \
                                  cJSON_GetObjectItemCaseSensitive(doc, "scores")->child : NULL;                  \
         split; split = split->next)                                                                              \
        for (const cJSON *e = cJSON_IsArray(split) ? split->child : NULL; e; e = e->next)

int mieb_report_data_recall_curve(const cJSON *doc, double *k, double *v, int cap)
{
    int n = 0, cnt[64] = {0};
    if (cap > 64)
        cap = 64;
    FOR_EACH_ENTRY(doc, split, e)
    for (const cJSON *m = cJSON_IsObject(e) ? e->child : NULL; m; m = m->next) {
        char *end;
        if (!m->string || strncmp(m->string, "recall_at_", 10) != 0)
            continue;
        long kk = strtol(m->string + 10, &end, 10);
        if (*end || kk <= 0 || !cJSON_IsNumber(m) || isnan(m->valuedouble))
            continue;
        int j = 0;
        while (j < n && k[j] != (double)kk)
            j++;
        if (j == n) {
            if (n == cap)
                continue;
            k[n] = (double)kk;
            v[n] = 0.0;
            n++;
        }
        v[j] += m->valuedouble;
        cnt[j]++;
    }
    for (int i = 0; i < n; i++)
        v[i] /= cnt[i];
    for (int i = 1; i < n; i++) /* insertion sort by k */
        for (int j = i; j > 0 && k[j - 1] > k[j]; j--) {
            double a = k[j], b = v[j];
            int c = cnt[j];
            k[j] = k[j - 1], v[j] = v[j - 1], cnt[j] = cnt[j - 1];
            k[j - 1] = a, v[j - 1] = b, cnt[j - 1] = c;
        }
    return n;
}

int mieb_report_data_experiments(const cJSON *doc, const char *key, double *out, int cap)
{
    int n = 0;
    FOR_EACH_ENTRY(doc, split, e)
    {
        const cJSON *exps = cJSON_GetObjectItemCaseSensitive(e, "scores_per_experiment"), *x;
        cJSON_ArrayForEach(x, (cJSON_IsArray(exps) ? exps : NULL))
        {
            const cJSON *val = cJSON_GetObjectItemCaseSensitive(x, key);
            if (n < cap && cJSON_IsNumber(val) && !isnan(val->valuedouble))
                out[n++] = val->valuedouble;
        }
    }
    return n;
}

bool mieb_report_data_multi_subset(const cJSON *doc)
{
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(doc, "scores"), *split;
    cJSON_ArrayForEach(split, (cJSON_IsObject(scores) ? scores : NULL))
    if (cJSON_IsArray(split) && cJSON_GetArraySize(split) > 1)
        return true;
    return false;
}

double mieb_report_data_subset_score(const cJSON *doc, const char *split, const char *subset, char *langs, size_t n)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "scores"), split);
    const cJSON *e;
    if (langs && n)
        langs[0] = '\0';
    cJSON_ArrayForEach(e, (cJSON_IsArray(list) ? list : NULL))
    {
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(e, "hf_subset");
        if (!cJSON_IsString(sub) || strcmp(sub->valuestring, subset) != 0)
            continue;
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, "languages"), *x;
        size_t used = 0;
        cJSON_ArrayForEach(x, (langs && cJSON_IsArray(l) ? l : NULL))
        if (cJSON_IsString(x) && used + 1 < n) {
            int w = snprintf(langs + used, n - used, "%s%s", used ? ", " : "", x->valuestring);
            used = w > 0 && (size_t)w < n - used ? used + (size_t)w : n - 1;
        }
        const cJSON *ms = cJSON_GetObjectItemCaseSensitive(e, "main_score");
        return cJSON_IsNumber(ms) ? ms->valuedouble : NAN;
    }
    return NAN;
}

/* ---- time per stage ---- */

static bool is_stage(const char *name) { return !strncmp(name, "Stage: ", 7); }

static int seg_of(const struct mieb_report_data_segs *s, const char *phase)
{
    for (int i = 0; i < s->n; i++)
        if (s->phase[i] && !strcmp(s->phase[i], phase))
            return i;
    return -1;
}

static mieb_status add_seg(struct mieb_report_data_segs *s, const char *phase, const char *label)
{
    if (s->n == MIEB_RP_MAX_SEGS)
        return MIEB_OK; /* more distinct phase names than a chart can show: the rest count as unattributed */
    s->phase[s->n] = phase ? strdup(phase) : NULL;
    s->label[s->n] = strdup(label);
    if ((phase && !s->phase[s->n]) || !s->label[s->n])
        return mieb_fail(MIEB_ERR_OOM, "report");
    s->n++;
    return MIEB_OK;
}

mieb_status mieb_report_data_segs_collect(struct mieb_report_data_segs *s, const cJSON *doc)
{
    const cJSON *phases = cJSON_GetObjectItemCaseSensitive(doc, "evaluation_phases"), *p;
    cJSON_ArrayForEach(p, (cJSON_IsArray(phases) ? phases : NULL))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        if (!cJSON_IsString(name))
            continue;
        if (!strcmp(name->valuestring, "Evaluation")) {
            s->eval_other = 1; /* marks "seen"; placed by mieb_report_data_segs_finish */
            continue;
        }
        if (seg_of(s, name->valuestring) < 0)
            MIEB_TRY(add_seg(s, name->valuestring,
                             is_stage(name->valuestring) ? name->valuestring + 7 : name->valuestring));
    }
    return MIEB_OK;
}

mieb_status mieb_report_data_segs_finish(struct mieb_report_data_segs *s)
{
    bool eval_seen = s->eval_other == 1;
    s->eval_other = s->unattributed = -1;
    if (eval_seen) {
        MIEB_TRY(add_seg(s, NULL, "Evaluation (other)"));
        s->eval_other = s->n - 1;
    }
    MIEB_TRY(add_seg(s, NULL, "unattributed"));
    s->unattributed = s->n - 1;
    return MIEB_OK;
}

void mieb_report_data_segs_free(struct mieb_report_data_segs *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->phase[i]);
        free(s->label[i]);
    }
    memset(s, 0, sizeof *s);
}

bool mieb_report_data_times(const struct mieb_report_data_segs *s, const cJSON *doc, double *secs)
{
    const cJSON *et = cJSON_GetObjectItemCaseSensitive(doc, "evaluation_time");
    const cJSON *phases = cJSON_GetObjectItemCaseSensitive(doc, "evaluation_phases"), *p;
    double eval = 0.0, stages = 0.0, top = 0.0;
    for (int i = 0; i < s->n; i++)
        secs[i] = 0.0;
    if (!cJSON_IsNumber(et) || isnan(et->valuedouble))
        return false;
    cJSON_ArrayForEach(p, (cJSON_IsArray(phases) ? phases : NULL))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(p, "start"), *b = cJSON_GetObjectItemCaseSensitive(p, "end");
        if (!cJSON_IsString(name) || !cJSON_IsNumber(a) || !cJSON_IsNumber(b))
            continue;
        double d = b->valuedouble - a->valuedouble;
        if (!(d > 0))
            continue;
        if (!strcmp(name->valuestring, "Evaluation")) {
            eval += d;
            top += d;
            continue;
        }
        int k = seg_of(s, name->valuestring);
        if (k < 0)
            continue; /* beyond the segment cap: stays in "Evaluation (other)" or "unattributed" */
        if (is_stage(name->valuestring))
            stages += d;
        else
            top += d;
        secs[k] += d;
    }
    if (s->eval_other >= 0)
        secs[s->eval_other] = fmax(eval - stages, 0.0);
    secs[s->unattributed] = fmax(et->valuedouble - top, 0.0);
    return true;
}
