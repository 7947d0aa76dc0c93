/* results_writer.c - mteb TaskResult JSON files, written atomically. */
#include "results_writer.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "../config/registry.h"
#include "../core/fileutil.h"
#include "../core/pyfloat.h"
#include "../json/json_alloc.h"
#include "../json/json_py.h"

mieb_status mieb_results_dir(const char *out_folder, const char *model_name, const char *revision,
                             char *buf, size_t n)
{
    char model[512];
    size_t j = 0;
    for (const char *p = model_name; *p && j + 3 < sizeof model; p++) {
        if (*p == '/') { /* mteb's ModelMeta.model_name_as_path: "/" -> "__", " " -> "_" */
            model[j++] = '_';
            model[j++] = '_';
        } else {
            model[j++] = *p == ' ' ? '_' : *p;
        }
    }
    model[j] = '\0';
    int w = snprintf(buf, n, "%s/results/%s/%s", out_folder, model, revision && *revision ? revision : "no_revision_available");
    if (w < 0 || (size_t)w >= n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "results path too long");
    return MIEB_OK;
}

static double py_round_value(const char *key, double x, int ndigits)
{
    (void)key;
    return mieb_py_round(x, ndigits);
}

mieb_status mieb_results_write(const char *dir, const struct mieb_task_result *r)
{
    char path[PATH_MAX];
    struct mieb_buf buf = {0};
    mieb_status st;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return mieb_fail(MIEB_ERR_OOM, "result json");
    cJSON_AddStringToObject(root, "dataset_revision", r->dataset_revision);
    cJSON_AddStringToObject(root, "task_name", r->task_name);
    cJSON_AddStringToObject(root, "mteb_version", MIEB_MTEB_VERSION);
    mieb_json_round_numbers(r->scores, 6, r->round_fn ? r->round_fn : py_round_value);
    /* borrow the caller's trees for the dump, detach them again afterwards */
    cJSON_AddItemReferenceToObject(root, "scores", r->scores);
    cJSON_AddNumberToObject(root, "evaluation_time", r->evaluation_time);
    if (r->kg_co2_nan)
        cJSON_AddNumberToObject(root, "kg_co2_emissions", NAN);
    else
        cJSON_AddNullToObject(root, "kg_co2_emissions");
    cJSON_AddNumberToObject(root, "date", r->date);
    if (r->phases)
        cJSON_AddItemReferenceToObject(root, "evaluation_phases", r->phases);
    else
        cJSON_AddNullToObject(root, "evaluation_phases");

    st = mieb_json_py_dump(root, &buf);
    cJSON_Delete(root); /* references do not free the referenced trees */
    if (st != MIEB_OK) {
        mieb_buf_free(&buf);
        return st;
    }
    st = mieb_mkdirs(dir);
    if (st == MIEB_OK && snprintf(path, sizeof path, "%s/%s.json", dir, r->task_name) >= (int)sizeof path)
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "result path too long");
    if (st == MIEB_OK && mieb_json_alloc_failures()) /* the tree may lack a key: never write it */
        st = mieb_fail(MIEB_ERR_OOM, "%s: out of memory building the result (a JSON allocation failed); not written",
                       r->task_name);
    if (st == MIEB_OK)
        st = mieb_write_file_atomic(path, buf.data, buf.len);
    mieb_buf_free(&buf);
    return st;
}

mieb_status mieb_results_write_model_meta(const char *dir, const char *text, size_t len)
{
    char path[PATH_MAX];
    MIEB_TRY(mieb_mkdirs(dir));
    MIEB_TRY(mieb_path_join(path, sizeof path, dir, "model_meta.json"));
    return mieb_write_file_atomic(path, text, len);
}

void mieb_results_add_phase(cJSON *phases, const char *name, double start, double end, const char *split,
                            const char *subset)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", name);
    cJSON_AddNumberToObject(p, "start", start);
    cJSON_AddNumberToObject(p, "end", end);
    cJSON_AddStringToObject(p, "split", split);
    cJSON_AddStringToObject(p, "subset", subset);
    cJSON_AddItemToArray(phases, p);
}

double mieb_results_date_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

mieb_status mieb_results_finish_subset(cJSON *sub, const struct mieb_task *task, const char *subset,
                                       const char *precision)
{
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(sub, task->main_score);
    if (!cJSON_IsNumber(ms))
        return mieb_fail(MIEB_ERR_INTERNAL, "task %s: main score %s was not computed", task->name, task->main_score);
    cJSON_AddNumberToObject(sub, "main_score", ms->valuedouble);
    cJSON_AddStringToObject(sub, "hf_subset", subset);
    cJSON_AddItemToObject(sub, "languages", mieb_task_languages(task, subset));
    cJSON_AddStringToObject(sub, "mteb_version", MIEB_MTEB_VERSION);
    if (precision && strcmp(precision, "fp32"))
        cJSON_AddStringToObject(sub, "similarity_precision", precision);
    return MIEB_OK;
}
