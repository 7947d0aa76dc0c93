/* run_outcome.c - a run's outcomes task by task, for its closing summary (see run_outcome.h). */
#include "run_outcome.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../json/json_py.h"
#include "../results/results_reader.h"

static const char *const KIND_NAMES[] = {"scored", "skipped", "failed"};

mieb_status mieb_outcome_add(struct mieb_outcomes *o, const char *task, enum mieb_outcome_kind kind, double seconds,
                             const char *note, int missing_input)
{
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 64;
        struct mieb_outcome *v = realloc(o->v, (size_t)cap * sizeof *v);
        if (!v)
            return mieb_fail(MIEB_ERR_OOM, "run summary");
        o->v = v;
        o->cap = cap;
    }
    char *copy = note ? strdup(note) : NULL;
    o->v[o->n++] = (struct mieb_outcome){task, kind, NAN, seconds, copy, missing_input, MIEB_OK};
    o->counts[kind]++;
    return MIEB_OK;
}

void mieb_outcome_status(struct mieb_outcomes *o, mieb_status st)
{
    if (o->n)
        o->v[o->n - 1].status = st;
}

mieb_status mieb_outcomes_device_failure(const struct mieb_outcomes *o)
{
    for (int i = 0; i < o->n; i++)
        if (o->v[i].status == MIEB_ERR_CUDA || o->v[i].status == MIEB_ERR_CUBLAS)
            return o->v[i].status;
    return MIEB_OK;
}

void mieb_outcome_score_from(struct mieb_outcomes *o, const char *result_path)
{
    if (!o->n)
        return;
    struct mieb_task_result tr;
    if (mieb_task_result_read(result_path, &tr) != MIEB_OK) {
        mieb_clear_error();
        return;
    }
    double sum = 0.0;
    for (int i = 0; i < tr.n_entries; i++)
        sum += tr.entries[i].main_score; /* NaN in any entry: NaN, as np.mean */
    o->v[o->n - 1].main_score = tr.n_entries ? sum / tr.n_entries : NAN;
    mieb_task_result_free(&tr);
}

cJSON *mieb_outcomes_json(const struct mieb_outcomes *o, const char *results_dir)
{
    cJSON *root = cJSON_CreateObject(), *tasks = cJSON_CreateArray();
    if (!root || !tasks) {
        cJSON_Delete(root);
        cJSON_Delete(tasks);
        return NULL;
    }
    for (int k = 0; k < 3; k++)
        cJSON_AddNumberToObject(root, KIND_NAMES[k], o->counts[k]);
    if (results_dir)
        cJSON_AddStringToObject(root, "results", results_dir);
    for (int i = 0; i < o->n; i++) {
        const struct mieb_outcome *e = &o->v[i];
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "task", e->task);
        cJSON_AddStringToObject(t, "outcome", KIND_NAMES[e->kind]);
        cJSON_AddItemToObject(t, "main_score", mieb_json_num_or_null(e->main_score));
        cJSON_AddItemToObject(t, "seconds", mieb_json_num_or_null(e->seconds));
        if (e->note)
            cJSON_AddStringToObject(t, e->kind == MIEB_OUTCOME_FAILED ? "error" : "reason", e->note);
        cJSON_AddItemToArray(tasks, t);
    }
    cJSON_AddItemToObject(root, "tasks", tasks);
    return root;
}

void mieb_outcomes_free(struct mieb_outcomes *o)
{
    for (int i = 0; i < o->n; i++)
        free(o->v[i].note);
    free(o->v);
    *o = (struct mieb_outcomes){0};
}
