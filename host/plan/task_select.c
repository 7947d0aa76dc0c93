/* task_select.c - a command's ordered task list (see task_select.h). */
#include "task_select.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config/suggest.h"
#include "../core/fileutil.h"
#include "../families/family.h"
#include "task_shards.h"

void mieb_task_data_file(const char *task_data, const struct mieb_task *t, char *p, size_t n)
{
    const char *data_of = mieb_aggregate_subtask(t->name);
    snprintf(p, n, "%s/%s.h5", task_data, data_of ? data_of : t->name);
}

/* A benchmark or --task-types run scores what is present: 1 when `t` can be scored here (for
   merge: its parts can be merged), else 0 after saying why it is skipped. */
static int present_here(const struct mieb_task_select *s, const struct mieb_task *t)
{
    char p[PATH_MAX + 256];
    mieb_task_data_file(s->task_data, t, p, sizeof p);
    if (!mieb_file_exists(p)) {
        MIEB_LOGW("skipping %s: no task-data file %s", t->name, p);
        return 0;
    }
    if (s->purpose == MIEB_SELECT_RUN && !mieb_family_driver(t->family)) {
        MIEB_LOGW("skipping %s: type %s is not supported yet", t->name, t->type);
        return 0;
    }
    return 1;
}

/* -l/--languages: does a language of the subset match one asked for (mteb: "eng" matches "eng-Latn")? */
static bool language_wanted(const struct mieb_task_select *s, const struct mieb_task *t, const char *subset)
{
    cJSON *langs = mieb_task_languages(t, subset), *l;
    bool hit = false;
    cJSON_ArrayForEach(l, langs)
    {
        if (!cJSON_IsString(l))
            continue;
        for (int i = 0; i < s->n_languages && !hit; i++) {
            size_t n = strlen(s->languages[i]);
            hit = !strcmp(l->valuestring, s->languages[i]) ||
                  (!strncmp(l->valuestring, s->languages[i], n) && l->valuestring[n] == '-');
        }
    }
    cJSON_Delete(langs);
    return hit;
}

static bool split_wanted(const struct mieb_task_select *s, const char *split)
{
    for (int e = 0; e < s->n_eval_splits; e++)
        if (!strcmp(split, s->eval_splits[e]))
            return true;
    return s->n_eval_splits == 0;
}

/* --eval-splits and -l/--languages: a view of every registry task, a copy whose splits and
   subsets are the wanted ones in the task's order (the registry is left as loaded). */
static mieb_status make_views(const struct mieb_registry *reg, const struct mieb_task_select *s,
                              struct mieb_task_list *out)
{
    size_t names = 0;
    for (int i = 0; i < reg->n_tasks; i++)
        names += (size_t)reg->tasks[i].n_splits + (size_t)reg->tasks[i].n_subsets;
    out->views = calloc((size_t)reg->n_tasks + 1, sizeof *out->views);
    out->view_names = calloc(names + 1, sizeof *out->view_names);
    if (!out->views || !out->view_names)
        return mieb_fail(MIEB_ERR_OOM, "out of memory for the selected splits and subsets");
    const char **next = out->view_names;
    for (int i = 0; i < reg->n_tasks; i++) {
        const struct mieb_task *t = &reg->tasks[i];
        struct mieb_task *v = &out->views[i];
        *v = *t;
        v->splits = next;
        v->n_splits = 0;
        for (int k = 0; k < t->n_splits; k++)
            if (split_wanted(s, t->splits[k]))
                v->splits[v->n_splits++] = t->splits[k];
        next += v->n_splits;
        v->subsets = next;
        v->n_subsets = 0;
        for (int k = 0; k < t->n_subsets; k++)
            if (!s->n_languages || language_wanted(s, t, t->subsets[k]))
                v->subsets[v->n_subsets++] = t->subsets[k];
        next += v->n_subsets;
    }
    return MIEB_OK;
}

void mieb_selection_free(struct mieb_task_list *l)
{
    free(l->views);
    free((void *)l->view_names);
    l->views = NULL;
    l->view_names = NULL;
    l->n = 0;
}

/* --task-types: a misspelt type would select nothing and exit 0 */
static bool type_known(const struct mieb_registry *reg, const char *type)
{
    for (int i = 0; i < reg->n_tasks; i++)
        if (!strcmp(reg->tasks[i].type, type))
            return true;
    return false;
}

static int type_wanted(const struct mieb_task_select *s, const struct mieb_task *t)
{
    for (int i = 0; i < s->n_task_types; i++)
        if (!strcmp(s->task_types[i], t->type))
            return 1;
    return s->n_task_types == 0;
}

static bool listed(const struct mieb_task_list *l, const struct mieb_task *t)
{
    int dup = 0;
    for (int j = 0; j < l->n; j++)
        dup |= l->v[j] == t;
    return dup;
}

/* The -t names. RUN and INSPECT keep them as given; MERGE keeps each retrieval task once. */
static mieb_status add_named(const struct mieb_registry *reg, const struct mieb_task_select *s,
                             struct mieb_task_list *out)
{
    for (int i = 0; i < s->n_tasks && (s->purpose != MIEB_SELECT_INSPECT || out->n < MIEB_PLAN_MAX_TASKS); i++) {
        const struct mieb_task *t = mieb_registry_find(reg, s->tasks[i]);
        if (!t) {
            char msg[512];
            mieb_unknown_task_msg(reg, s->tasks[i], msg, sizeof msg);
            return mieb_fail(MIEB_ERR_INVALID_ARG, "%s", msg);
        }
        if (s->purpose == MIEB_SELECT_MERGE) {
            if (listed(out, t))
                continue;
            if (t->family != MIEB_FAMILY_RETRIEVAL) {
                MIEB_LOGI("%s: not a retrieval task (type %s): part 0 of run scored it, nothing to merge", t->name,
                          t->type);
                continue;
            }
        }
        out->v[out->n++] = t;
    }
    return MIEB_OK;
}

/* Each benchmark's tasks in mteb's order: all of them for INSPECT; for RUN and MERGE those not
   listed yet that are present (a benchmark run scores what is there and says what it skips). */
static mieb_status add_benchmarks(const struct mieb_registry *reg, const struct mieb_task_select *s,
                                  struct mieb_task_list *out)
{
    for (int b = 0; b < s->n_benchmarks; b++) {
        const struct mieb_benchmark *bm = mieb_registry_benchmark(reg, s->benchmarks[b]);
        if (!bm)
            return MIEB_ERR_INVALID_ARG; /* the registry named the benchmark in the last error */
        for (int i = 0; i < bm->n_tasks && out->n < MIEB_PLAN_MAX_TASKS; i++) {
            const struct mieb_task *t = bm->tasks[i];
            if (s->purpose == MIEB_SELECT_INSPECT) {
                out->v[out->n++] = t;
                continue;
            }
            if (listed(out, t))
                continue;
            if (s->purpose == MIEB_SELECT_MERGE ? t->family == MIEB_FAMILY_RETRIEVAL && present_here(s, t)
                                                : type_wanted(s, t) && present_here(s, t))
                out->v[out->n++] = t;
        }
    }
    return MIEB_OK;
}

/* RUN: --task-types with -t keeps the named tasks of those types; --eval-splits and --languages
   drop the tasks they leave without a split or a subset. */
static void keep_wanted(const struct mieb_task_select *s, struct mieb_task_list *l)
{
    int kept = 0;
    for (int j = 0; j < l->n; j++) {
        const struct mieb_task *t = l->v[j];
        if (!type_wanted(s, t)) {
            MIEB_LOGI("skipping %s: type %s is not in --task-types", t->name, t->type);
            continue;
        }
        if (s->n_eval_splits && t->n_splits == 0) {
            MIEB_LOGW("skipping %s: none of its splits is in --eval-splits", t->name);
            continue;
        }
        if (s->n_languages && t->n_subsets == 0) {
            MIEB_LOGI("skipping %s: none of its subsets is in --languages", t->name);
            continue;
        }
        l->v[kept++] = t;
    }
    l->n = kept;
}

/* RUN --shard-index I --num-shards K: this process's share of the final list, split by cost
   (task_shards.h). */
static mieb_status keep_shard(const struct mieb_registry *reg, const struct mieb_task_select *s,
                              struct mieb_task_list *l)
{
    int kept = 0, *shard = malloc(((size_t)l->n + 1) * sizeof *shard);
    if (!shard || mieb_shard_assign(reg, l->v, l->n, (int)s->num_shards, shard) != MIEB_OK) {
        free(shard);
        return mieb_fail(MIEB_ERR_OOM, "out of memory for the task shards");
    }
    for (int j = 0; j < l->n; j++)
        if (shard[j] == s->shard_index)
            l->v[kept++] = l->v[j];
    free(shard);
    MIEB_LOGI("shard %ld of %ld: %d of %d task(s)", s->shard_index, s->num_shards, kept, l->n);
    l->n = kept;
    return MIEB_OK;
}

static mieb_status select_for_run(const struct mieb_registry *reg, const struct mieb_task_select *s,
                                  struct mieb_task_list *out)
{
    for (int i = 0; i < s->n_task_types; i++)
        if (!type_known(reg, s->task_types[i]))
            return mieb_fail(MIEB_ERR_INVALID_ARG, "bad --task-types '%s' (no registry task has this type)",
                             s->task_types[i]);
    MIEB_TRY(add_named(reg, s, out));
    MIEB_TRY(add_benchmarks(reg, s, out));
    /* --task-types alone: every registry task of those types that is present */
    for (int i = 0; !s->n_tasks && !s->n_benchmarks && i < reg->n_tasks && out->n < MIEB_PLAN_MAX_TASKS; i++)
        if (type_wanted(s, &reg->tasks[i]) && present_here(s, &reg->tasks[i]))
            out->v[out->n++] = &reg->tasks[i];
    if (s->n_eval_splits || s->n_languages) {
        MIEB_TRY(make_views(reg, s, out));
        for (int j = 0; j < out->n; j++) /* every listed task is the registry's: its view stands for it */
            out->v[j] = &out->views[out->v[j] - reg->tasks];
    }
    keep_wanted(s, out);
    return s->num_shards ? keep_shard(reg, s, out) : MIEB_OK;
}

mieb_status mieb_select_tasks(const struct mieb_registry *reg, const struct mieb_task_select *s,
                              struct mieb_task_list *out)
{
    out->n = 0;
    out->views = NULL;
    out->view_names = NULL;
    switch (s->purpose) {
    case MIEB_SELECT_RUN:
        return select_for_run(reg, s, out);
    case MIEB_SELECT_MERGE:
        MIEB_TRY(add_named(reg, s, out));
        return add_benchmarks(reg, s, out);
    case MIEB_SELECT_INSPECT:
        MIEB_TRY(add_benchmarks(reg, s, out));
        return add_named(reg, s, out);
    }
    return mieb_fail(MIEB_ERR_INTERNAL, "unknown task selection %d", (int)s->purpose);
}
