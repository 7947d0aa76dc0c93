/* task_shards.c - cost-balanced task shards (see task_shards.h). */
#include "task_shards.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* Reading and writing a task's files, in the units of mieb_task_cost (about 20 ms of one core). */
#define FIXED_COST 1e6

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0.0;
}

static double family_cost(const struct mieb_task *t)
{
    const cJSON *j = t->json, *p = t->params;
    const double n_test = num(j, "n_test"), c = num(j, "n_classes");
    switch (t->family) {
    case MIEB_FAMILY_RETRIEVAL: {
        const double q = num(j, "n_queries");
        return q * num(j, "n_corpus") + q * 2000.0;
    }
    case MIEB_FAMILY_CLASSIFICATION: {
        const double shots = num(p, "samples_per_label") > 0 ? num(p, "samples_per_label") : 16.0;
        const double e = num(p, "n_experiments") > 0 ? num(p, "n_experiments") : 5.0;
        const double l = fmin(shots * c, num(j, "n_train") > 0 ? num(j, "n_train") : shots * c);
        return e * c * (100.0 * l + n_test);
    }
    case MIEB_FAMILY_ZEROSHOT:
        return n_test * c;
    case MIEB_FAMILY_CLUSTERING:
        return 20.0 * n_test * c;
    default: /* compositionality, STS: a few products per sample */
        return 10.0 * n_test;
    }
}

double mieb_task_cost(const struct mieb_registry *reg, const struct mieb_task *t)
{
    if (t->is_aggregate) {
        const struct mieb_task *src = reg ? mieb_registry_find(reg, t->aggregate_of) : NULL;
        return src && !src->is_aggregate ? mieb_task_cost(reg, src) : FIXED_COST;
    }
    return FIXED_COST + family_cost(t);
}

struct ranked {
    double cost;
    int pos;
};

static int by_cost_desc(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

mieb_status mieb_shard_assign(const struct mieb_registry *reg, const struct mieb_task *const *tasks, int n, int k,
                              int *shard)
{
    if (k < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "shards: %d shards", k);
    struct ranked *r = malloc(((size_t)n + 1) * sizeof *r);
    double *load = calloc((size_t)k, sizeof *load);
    if (!r || !load) {
        free(r);
        free(load);
        return mieb_fail(MIEB_ERR_OOM, "shards: %d tasks over %d shards", n, k);
    }
    for (int j = 0; j < n; j++)
        r[j] = (struct ranked){mieb_task_cost(reg, tasks[j]), j};
    qsort(r, (size_t)n, sizeof *r, by_cost_desc);
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int s = 1; s < k; s++)
            if (load[s] < load[best])
                best = s;
        load[best] += r[i].cost;
        shard[r[i].pos] = best;
    }
    free(r);
    free(load);
    return MIEB_OK;
}
