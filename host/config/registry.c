/* registry.c - loads configs/tasks.json with cJSON and answers task questions. */
#include "registry.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../json/json_alloc.h"
#include "../json/json_strict.h"
#include "core/env.h"

static enum mieb_family family_of(const char *type)
{
    static const struct { const char *type; enum mieb_family fam; } map[] = {
        {"Any2AnyRetrieval", MIEB_FAMILY_RETRIEVAL},
        {"Any2AnyMultilingualRetrieval", MIEB_FAMILY_RETRIEVAL},
        {"DocumentUnderstanding", MIEB_FAMILY_RETRIEVAL},
        {"VisionCentricQA", MIEB_FAMILY_RETRIEVAL},
        {"ImageClassification", MIEB_FAMILY_CLASSIFICATION},
        {"ZeroShotClassification", MIEB_FAMILY_ZEROSHOT},
        {"ImageClustering", MIEB_FAMILY_CLUSTERING},
        {"Compositionality", MIEB_FAMILY_COMPOSITIONALITY},
        {"VisualSTS(eng)", MIEB_FAMILY_STS},
        {"VisualSTS(multi)", MIEB_FAMILY_STS},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(type, map[i].type))
            return map[i].fam;
    return MIEB_FAMILY_UNKNOWN;
}

/* A task's name, splits and subsets name files and folders (<Task>.json, the per-query
   folders <task>/<split>/<subset>): each one path component, shown and written as it is. */
static mieb_status check_component(const char *path, const char *task, const char *what, const char *s)
{
    if (!s[0] || strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, ".."))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: task %s: %s '%s' cannot name a file (empty, '.', '..' or holding '/')",
                         path, task, what, s);
    if (mieb_has_control(s))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: task %s: %s '%s' holds a control character (shown escaped)", path,
                         task, what, s);
    return MIEB_OK;
}

static mieb_status string_list(const char *path, const char *task, const cJSON *arr, const char *key,
                               const char ***out, int *n)
{
    if (!cJSON_IsArray(arr))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: task %s: '%s' is not a list", path, task, key);
    int cnt = cJSON_GetArraySize(arr);
    const char **v = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *v);
    if (!v)
        return mieb_fail(MIEB_ERR_OOM, "registry");
    for (int i = 0; i < cnt; i++) {
        const cJSON *e = cJSON_GetArrayItem(arr, i);
        if (!cJSON_IsString(e)) {
            free(v);
            return mieb_fail(MIEB_ERR_CONFIG, "%s: task %s: '%s'[%d] is not a string", path, task, key, i);
        }
        v[i] = e->valuestring;
        mieb_status st = check_component(path, task, key, v[i]);
        if (st != MIEB_OK) {
            free(v);
            return st;
        }
    }
    *out = v;
    *n = cnt;
    return MIEB_OK;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* benchmarks.json beside the tasks file, when there is one (optional: a bare tasks.json loads). */
static mieb_status load_sibling_benchmarks(const char *tasks_path, struct mieb_registry *r)
{
    char dir[PATH_MAX], bpath[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", tasks_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    snprintf(bpath, sizeof bpath, "%sbenchmarks.json", dir);
    if (!mieb_file_exists(bpath))
        return MIEB_OK;
    mieb_status st = mieb_registry_load_benchmarks(r, bpath);
    if (st != MIEB_OK)
        mieb_registry_free(r);
    return st;
}

mieb_status mieb_registry_load(const char *path, struct mieb_registry *out)
{
    struct mieb_json_file jf;
    memset(out, 0, sizeof *out);
    /* read as Python reads it: mieb-export writes it, users edit it (json/json_strict.h) */
    MIEB_TRY(mieb_json_read_strict(path, 64u << 20, MIEB_ERR_CONFIG, &jf));
    out->root = jf.root;
    jf.root = NULL;
    mieb_json_file_free(&jf);
    if (!cJSON_IsArray(out->root)) {
        mieb_registry_free(out);
        return mieb_fail(MIEB_ERR_CONFIG, "%s: not a JSON list of tasks", path);
    }
    out->n_tasks = cJSON_GetArraySize(out->root);
    out->tasks = calloc((size_t)(out->n_tasks > 0 ? out->n_tasks : 1), sizeof *out->tasks);
    if (!out->tasks) {
        mieb_registry_free(out);
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory loading the registry", path);
    }
    for (int i = 0; i < out->n_tasks; i++) {
        const cJSON *e = cJSON_GetArrayItem(out->root, i);
        struct mieb_task *t = &out->tasks[i];
        mieb_status st;
        t->json = e;
        t->name = get_str(e, "name");
        t->type = get_str(e, "type");
        t->main_score = get_str(e, "main_score");
        t->revision = get_str(e, "hf_revision");
        if (!t->name || !t->type || !t->main_score) {
            mieb_registry_free(out);
            return mieb_fail(MIEB_ERR_CONFIG, "%s: entry %d lacks name, type or main_score", path, i);
        }
        if (!t->revision)
            t->revision = "";
        t->family = family_of(t->type);
        st = check_component(path, t->name, "name", t->name);
        if (st == MIEB_OK)
            st = string_list(path, t->name, cJSON_GetObjectItemCaseSensitive(e, "eval_splits"), "eval_splits",
                         &t->splits, &t->n_splits);
        if (st == MIEB_OK)
            st = string_list(path, t->name, cJSON_GetObjectItemCaseSensitive(e, "hf_subsets"), "hf_subsets",
                             &t->subsets, &t->n_subsets);
        if (st != MIEB_OK) {
            mieb_registry_free(out);
            return st;
        }
        t->eval_langs = cJSON_GetObjectItemCaseSensitive(e, "eval_langs");
        t->params = cJSON_GetObjectItemCaseSensitive(e, "params");
    }
    return load_sibling_benchmarks(path, out);
}

mieb_status mieb_registry_load_default(struct mieb_registry *out)
{
    const char *env = mieb_env(MIEB_ENV_REGISTRY);
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    if (env && *env)
        return mieb_registry_load(env, out);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            /* installed layout (<prefix>/bin/../share/mieb-eval) and build-tree layouts */
            const char *rel[] = {"/../share/mieb-eval/tasks.json", "/../configs/tasks.json",
                                 "/configs/tasks.json"};
            for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
                snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
                if (access(cand, R_OK) == 0)
                    return mieb_registry_load(cand, out);
            }
        }
    }
    return mieb_registry_load(MIEB_SOURCE_DIR "/configs/tasks.json", out);
}

void mieb_registry_free(struct mieb_registry *r)
{
    if (r->tasks)
        mieb_registry_free_benchmarks(r);
    if (r->tasks)
        for (int i = 0; i < r->n_tasks; i++) {
            free(r->tasks[i].splits);
            free(r->tasks[i].subsets);
        }
    free(r->tasks);
    cJSON_Delete(r->root);
    memset(r, 0, sizeof *r);
}

const struct mieb_task *mieb_registry_find(const struct mieb_registry *r, const char *name)
{
    for (int i = 0; i < r->n_tasks; i++)
        if (!strcmp(r->tasks[i].name, name))
            return &r->tasks[i];
    return NULL;
}

bool mieb_task_param_bool(const struct mieb_task *t, const char *key)
{
    const cJSON *v = t->params ? cJSON_GetObjectItemCaseSensitive(t->params, key) : NULL;
    return cJSON_IsTrue(v);
}

int64_t mieb_task_param_int(const struct mieb_task *t, const char *key, int64_t dflt)
{
    const cJSON *v = t->params ? cJSON_GetObjectItemCaseSensitive(t->params, key) : NULL;
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

cJSON *mieb_task_languages(const struct mieb_task *t, const char *subset)
{
    const cJSON *src = t->eval_langs;
    if (cJSON_IsObject(src))
        src = cJSON_GetObjectItemCaseSensitive(src, subset);
    if (!cJSON_IsArray(src))
        return cJSON_CreateArray();
    return cJSON_Duplicate(src, 1);
}
