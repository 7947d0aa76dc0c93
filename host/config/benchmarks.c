/*
 * benchmarks.c - loads configs/benchmarks.json (the MIEB benchmarks' ordered task lists
 * and mteb's aggregate tasks, as the pinned mteb defines them) into a loaded registry and
 * answers benchmark look-ups by name or short key.
 */
#include "benchmarks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/fileutil.h"
#include "../json/json_alloc.h"
#include "../json/json_strict.h"
#include "suggest.h"

static void benchmarks_clear(struct mieb_registry *r)
{
    if (r->benchmarks)
        for (int i = 0; i < r->n_benchmarks; i++)
            free(r->benchmarks[i].tasks);
    free(r->benchmarks);
    cJSON_Delete(r->bench_root);
    free(r->bench_path);
    r->benchmarks = NULL;
    r->bench_root = NULL;
    r->bench_path = NULL;
    r->n_benchmarks = 0;
    for (int i = 0; i < r->n_tasks; i++) {
        r->tasks[i].is_aggregate = false;
        r->tasks[i].aggregate_of = NULL;
    }
}

/* Fill one benchmark from its JSON object; path is for messages. */
static mieb_status load_one(struct mieb_registry *r, const char *path, int idx, const cJSON *o,
                            struct mieb_benchmark *b)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(o, "tasks");
    if (!cJSON_IsString(name) || !cJSON_IsString(key) || !cJSON_IsArray(tasks))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: benchmarks[%d] needs string 'name', 'key' and a list 'tasks'",
                         path, idx);
    b->name = name->valuestring;
    b->key = key->valuestring;
    b->n_tasks = cJSON_GetArraySize(tasks);
    b->tasks = calloc((size_t)(b->n_tasks > 0 ? b->n_tasks : 1), sizeof *b->tasks);
    if (!b->tasks)
        return mieb_fail(MIEB_ERR_OOM, "benchmarks");
    for (int j = 0; j < b->n_tasks; j++) {
        const cJSON *e = cJSON_GetArrayItem(tasks, j);
        const struct mieb_task *t = cJSON_IsString(e) ? mieb_registry_find(r, e->valuestring) : NULL;
        if (!t)
            return mieb_fail(MIEB_ERR_CONFIG, "%s: benchmark %s: task %d (%s) is not in the task registry", path,
                             b->name, j, cJSON_IsString(e) ? e->valuestring : "not a string");
        for (int k = 0; k < j; k++)
            if (b->tasks[k] == t)
                return mieb_fail(MIEB_ERR_CONFIG, "%s: benchmark %s lists task %s twice", path, b->name, t->name);
        b->tasks[j] = t;
    }
    return MIEB_OK;
}

static mieb_status load_aggregates(struct mieb_registry *r, const char *path, const cJSON *agg)
{
    if (!agg)
        return MIEB_OK;
    if (!cJSON_IsObject(agg))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: 'aggregate_tasks' is not an object", path);
    const cJSON *e;
    cJSON_ArrayForEach(e, agg)
    {
        struct mieb_task *t = (struct mieb_task *)mieb_registry_find(r, e->string);
        if (!t || !cJSON_IsString(e) || !mieb_registry_find(r, e->valuestring))
            return mieb_fail(MIEB_ERR_CONFIG, "%s: aggregate_tasks: %s -> %s: both must be registry tasks", path,
                             e->string, cJSON_IsString(e) ? e->valuestring : "(not a string)");
        t->is_aggregate = true;
        t->aggregate_of = e->valuestring;
    }
    return MIEB_OK;
}

mieb_status mieb_registry_load_benchmarks(struct mieb_registry *r, const char *path)
{
    struct mieb_json_file jf;
    mieb_status st;
    benchmarks_clear(r);
    MIEB_TRY(mieb_json_read_strict(path, 16u << 20, MIEB_ERR_CONFIG, &jf));
    r->bench_root = jf.root;
    jf.root = NULL;
    mieb_json_file_free(&jf);
    r->bench_path = strdup(path);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(r->bench_root, "benchmarks");
    if (!r->bench_path || !cJSON_IsArray(list)) {
        st = r->bench_path ? mieb_fail(MIEB_ERR_CONFIG, "%s: not a JSON object with a list 'benchmarks'", path)
                           : mieb_fail(MIEB_ERR_OOM, "%s: out of memory loading the benchmarks", path);
        benchmarks_clear(r);
        return st;
    }
    int n = cJSON_GetArraySize(list);
    r->benchmarks = calloc((size_t)(n > 0 ? n : 1), sizeof *r->benchmarks);
    if (!r->benchmarks) {
        benchmarks_clear(r);
        return mieb_fail(MIEB_ERR_OOM, "benchmarks");
    }
    r->n_benchmarks = n;
    for (int i = 0; i < n; i++) {
        st = load_one(r, path, i, cJSON_GetArrayItem(list, i), &r->benchmarks[i]);
        if (st != MIEB_OK) {
            benchmarks_clear(r);
            return st;
        }
    }
    st = load_aggregates(r, path, cJSON_GetObjectItemCaseSensitive(r->bench_root, "aggregate_tasks"));
    if (st != MIEB_OK)
        benchmarks_clear(r);
    return st;
}

/* Called by mieb_registry_free (registry.c). */
void mieb_registry_free_benchmarks(struct mieb_registry *r)
{
    benchmarks_clear(r);
}

const struct mieb_benchmark *mieb_registry_benchmark(const struct mieb_registry *r, const char *name)
{
    for (int i = 0; i < r->n_benchmarks; i++) {
        const struct mieb_benchmark *b = &r->benchmarks[i];
        const char *paren = strchr(b->name, '(');
        if (!strcasecmp(name, b->name) || !strcasecmp(name, b->key) || (paren && !strcasecmp(name, paren)))
            return b;
    }
    if (!r->n_benchmarks) {
        mieb_fail(MIEB_ERR_CONFIG, "unknown benchmark '%s': no benchmarks.json was loaded", name);
        return NULL;
    }
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < r->n_benchmarks && used < sizeof known; i++) {
        int w = snprintf(known + used, sizeof known - used, "%s%s (%s)", i ? ", " : "", r->benchmarks[i].name,
                         r->benchmarks[i].key);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    const char *close = mieb_suggest_benchmark(r, name);
    if (close)
        mieb_fail(MIEB_ERR_CONFIG, "unknown benchmark '%s': did you mean '%s'? (known: %s)", name, close, known);
    else
        mieb_fail(MIEB_ERR_CONFIG, "unknown benchmark '%s' (known: %s)", name, known);
    return NULL;
}
