/* run_loop.c - the scoring and merge loops over a task list (see run_loop.h). */
#include "run_loop.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../core/set_aside.h"
#include "../core/stop.h"
#include "../core/tmpfiles.h"
#include "../results/results_check.h"
#include "../results/results_writer.h"
#include "../io/task_data.h"

long mieb_task_units(const struct mieb_task *t)
{
    if (mieb_aggregate_subtask(t->name))
        return 1;
    long n = (long)t->n_splits * (long)t->n_subsets;
    return n > 0 ? n : 1;
}

/* The stage totals of one subset, laid end to end inside its evaluation window [ts, te]. */
static void add_stage_phases(cJSON *phases, const struct mieb_task *task, const char *split, const char *subset,
                             const struct mieb_stage_times *times, double ts, double te)
{
    mieb_results_add_phase(phases, "Evaluation", ts, te, split, subset);
    const struct { const char *name; double secs; } stages[] = {
        {"Stage: waiting for reads", times->read_wait},
        {"Stage: similarity and top-k", times->similarity},
        {"Stage: merge and heap", times->merge},
        {"Stage: metrics", times->metrics},
    };
    double at = ts;
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        mieb_results_add_phase(phases, stages[i].name, at, at + stages[i].secs, split, subset);
        at += stages[i].secs;
    }
    MIEB_LOGD("%s %s/%s: read wait %.3f s, similarity %.3f s, merge %.3f s, metrics %.3f s, total %.3f s",
              task->name, split, subset, times->read_wait, times->similarity, times->merge, times->metrics, te - ts);
}

/* A task being scored: its file, its open task data and what it has gathered so far. */
struct task_scoring {
    const struct mieb_run_plan *plan;
    const struct mieb_task *task;
    mieb_family_score_fn score_subset;
    const char *path; /* the task-data file */
    struct mieb_taskdata *td;
    cJSON *scores, *phases;
    double t0;
};

/* Score one (split, subset) into list and record its phases. */
static mieb_status score_one_subset(struct task_scoring *ts, const char *split, const char *subset, cJSON *list)
{
    const struct mieb_run_plan *plan = ts->plan;
    double start = mieb_now() - ts->t0;
    if (*plan->rc->interrupted)
        return mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted by signal %d", (int)*plan->rc->interrupted);
    if (!mieb_taskdata_has_group(ts->td, split, subset))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: group /%s/%s is missing (task %s evaluates split %s, subset %s)",
                         ts->path, split, subset, ts->task->name, split, subset);
    plan->hooks->subset_begin(plan->hooks_user, split, subset);
    cJSON *sub = cJSON_CreateObject();
    cJSON_AddItemToArray(list, sub);
    struct mieb_stage_times times = {0};
    struct mieb_run_ctx rcs = *plan->rc;
    rcs.times = &times;
    MIEB_TRY(ts->score_subset(&rcs, ts->task, ts->td, split, subset, sub));
    MIEB_TRY(mieb_results_finish_subset(sub, ts->task, subset, plan->precision));
    add_stage_phases(ts->phases, ts->task, split, subset, &times, start, mieb_now() - ts->t0);
    plan->hooks->unit_done(plan->hooks_user);
    return MIEB_OK;
}

/* Score every split and subset of one task and write its result file. */
static mieb_status score_task(const struct mieb_run_plan *plan, const struct mieb_task *task)
{
    char path[PATH_MAX];
    struct task_scoring ts = {.plan = plan, .task = task, .path = path, .t0 = mieb_now()};
    mieb_status st;

    ts.score_subset = mieb_family_driver(task->family);
    if (!ts.score_subset)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "task %s: type %s is not supported yet by this mieb-eval",
                         task->name, task->type);
    if (snprintf(path, sizeof path, "%s/%s.h5", plan->task_data, task->name) >= (int)sizeof path)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "path too long");
    st = mieb_taskdata_open(path, task->name, &ts.td);
    if (st != MIEB_OK)
        return st;
    ts.scores = cJSON_CreateObject();
    ts.phases = cJSON_CreateArray();
    mieb_results_add_phase(ts.phases, "Data loading", 0.0, mieb_now() - ts.t0, "", "");
    for (int s = 0; s < task->n_splits && st == MIEB_OK; s++) {
        cJSON *list = cJSON_AddArrayToObject(ts.scores, task->splits[s]);
        for (int h = 0; h < task->n_subsets && st == MIEB_OK; h++)
            st = score_one_subset(&ts, task->splits[s], task->subsets[h], list);
    }
    if (st == MIEB_OK) {
        struct mieb_task_result r = {
            .dataset_revision = mieb_taskdata_revision(ts.td)[0] ? mieb_taskdata_revision(ts.td) : task->revision,
            .task_name = task->name,
            .scores = ts.scores,
            .evaluation_time = mieb_now() - ts.t0,
            .date = mieb_results_date_now(),
            .phases = ts.phases,
            .round_fn = mieb_family_round_fn(task->family),
        };
        st = mieb_results_write(plan->results_dir, &r);
    }
    cJSON_Delete(ts.scores);
    cJSON_Delete(ts.phases);
    mieb_taskdata_close(ts.td);
    return st;
}

/* An aggregate task, scored from its sub-task (families/sts_aggregate.c). */
static mieb_status score_aggregate(const struct mieb_run_plan *plan, const struct mieb_task *task)
{
    double t0 = mieb_now();
    cJSON *scores = NULL;
    MIEB_TRY(mieb_aggregate_score(plan->rc, plan->reg, task, plan->task_data, &scores));
    struct mieb_task_result r = {
        .dataset_revision = MIEB_AGGREGATE_REVISION,
        .task_name = task->name,
        .scores = scores,
        .evaluation_time = mieb_now() - t0,
        .date = mieb_results_date_now(),
        .phases = NULL, /* mteb's combined result has no evaluation_phases */
        .round_fn = mieb_aggregate_round,
        .kg_co2_nan = true,
    };
    mieb_status st = mieb_results_write(plan->results_dir, &r);
    cJSON_Delete(scores);
    return st;
}

/*
 * The resume decision of --overwrite-strategy never|only-missing: MIEB_OK when the task's
 * result is there and whole (results/results_check.h: this task's, every split and subset this run
 * would write), so the task is skipped; MIEB_ERR_NOT_FOUND when it is to be scored: absent, or
 * not a result and now set aside with a warning. Any other status (an I/O error, out of
 * memory) leaves the file as it is and the task unscored.
 */
static mieb_status result_present(const struct mieb_task *t, const char *path)
{
    static const char *const aggregate_subsets[] = {"default"}; /* sts_aggregate.c writes only it */
    bool agg = mieb_aggregate_subtask(t->name) != NULL;
    char why[1024], aside[PATH_MAX + 64];
    mieb_status st = mieb_result_check(path, t->name, t->splits, t->n_splits, agg ? aggregate_subsets : t->subsets,
                                       agg ? 1 : t->n_subsets);
    if (st != MIEB_ERR_BAD_DATA && st != MIEB_ERR_TOO_LARGE)
        return st;
    snprintf(why, sizeof why, "%s", mieb_last_error());
    MIEB_TRY(mieb_set_aside(path, aside, sizeof aside));
    MIEB_LOGW("%s: the file there is not a whole result of the task (%s); kept as %s, scoring the task again",
              t->name, why, aside);
    return MIEB_ERR_NOT_FOUND;
}

/* Score (or write the corpus part of) a task to be scored, its inputs fingerprinted first;
   *written: the partials a corpus part wrote (1 otherwise). */
static mieb_status score_inputs(const struct mieb_run_plan *plan, const struct mieb_task *t, bool as_part,
                                int *written)
{
    *written = 1;
    char p[PATH_MAX + 256];
    mieb_task_data_file(plan->task_data, t, p, sizeof p);
    mieb_manifest_task(plan->man, t->name, p, plan->rc->emb.dir); /* before the task reads them */
    mieb_clear_error();
    return as_part                            ? mieb_corpus_part_task(plan->rc, t, plan->part, written)
           : mieb_aggregate_subtask(t->name) ? score_aggregate(plan, t)
                                              : score_task(plan, t);
}

/* One task of the loop: 0 to go on, 1 when a signal stopped it. */
static int run_one(const struct mieb_run_plan *plan, int i, const struct mieb_task *t, struct mieb_outcomes *oc,
                   int *failed, int *fatal)
{
    const struct mieb_loop_hooks *h = plan->hooks;
    void *u = plan->hooks_user;
    const struct mieb_part_opts *part = plan->part;
    char p[PATH_MAX + 256];
    bool as_part = part && t->family == MIEB_FAMILY_RETRIEVAL;
    h->task_begin(u, i, t->name);
    snprintf(p, sizeof p, "%s/%s.json", plan->results_dir, t->name);
    if (part && !as_part && part->part != 0) {
        MIEB_LOGI("%s: not a retrieval task, scored by corpus part 0 only: skipped", t->name);
        mieb_outcome_add(oc, t->name, MIEB_OUTCOME_SKIPPED, 0.0, "scored by corpus part 0", 0);
        h->task_end(u, t->name, "skipped", mieb_task_units(t));
        return 0;
    }
    mieb_clear_error();
    mieb_status st = !as_part && strcmp(plan->overwrite, "always") ? result_present(t, p) : MIEB_ERR_NOT_FOUND;
    if (st == MIEB_OK) {
        MIEB_LOGI("%s: result exists, skipped (--overwrite-strategy %s)", t->name, plan->overwrite);
        mieb_outcome_add(oc, t->name, MIEB_OUTCOME_SKIPPED, 0.0,
                         plan->overwrite_given ? "result exists" : "result exists (--overwrite-strategy always rescores)",
                         0);
        mieb_outcome_score_from(oc, p);
        h->task_end(u, t->name, "skipped", mieb_task_units(t));
        return 0;
    }
    double t0 = mieb_now();
    int written = 0;
    if (st == MIEB_ERR_NOT_FOUND)
        st = score_inputs(plan, t, as_part, &written);
    if (st == MIEB_ERR_INTERRUPTED || (st != MIEB_OK && *plan->rc->interrupted))
        return 1; /* a read cut short by the signal (EINTR) is the stop, not a bad input */
    if (st != MIEB_OK) {
        h->task_failed(u, t->name, "scored", st);
        if (mieb_outcome_add(oc, t->name, MIEB_OUTCOME_FAILED, mieb_now() - t0, mieb_last_error(),
                             st == MIEB_ERR_NOT_FOUND) == MIEB_OK)
            mieb_outcome_status(oc, st);
        (*failed)++;
        if (st == MIEB_ERR_CUDA || st == MIEB_ERR_CUBLAS)
            *fatal = 1;
        h->task_end(u, t->name, "failed", mieb_task_units(t));
        return 0;
    }
    h->task_context(u, t->name); /* task-level line */
    if (as_part && written == 0) { /* every partial of this part was there, complete: nothing was scored */
        mieb_outcome_add(oc, t->name, MIEB_OUTCOME_SKIPPED, 0.0, "corpus part exists", 0);
        h->task_end(u, t->name, "skipped", mieb_task_units(t));
        return 0;
    }
    MIEB_LOGD("%s: scored in %.2f s -> %s", t->name, mieb_now() - t0, as_part ? part->dir : p);
    mieb_outcome_add(oc, t->name, MIEB_OUTCOME_SCORED, mieb_now() - t0, as_part ? "corpus part" : NULL, 0);
    if (!as_part)
        mieb_outcome_score_from(oc, p);
    h->task_end(u, t->name, "scored", mieb_task_units(t));
    return 0;
}

void mieb_run_plan_score(const struct mieb_run_plan *plan, const struct mieb_task_list *todo,
                         struct mieb_outcomes *oc, int *failed, int *fatal)
{
    long units = 0;
    for (int i = 0; i < todo->n; i++)
        units += mieb_task_units(todo->v[i]); /* --per-query: every family writes its files */
    plan->hooks->run_begin(plan->hooks_user, todo->n, units);
    for (int i = 0; i < todo->n && !*plan->rc->interrupted; i++)
        if (run_one(plan, i, todo->v[i], oc, failed, fatal))
            break;
}

void mieb_run_plan_merge(const struct mieb_merge_opts *mo, const struct mieb_task_list *todo,
                         const struct mieb_loop_hooks *hooks, void *hooks_user, int *merged, int *failed)
{
    for (int i = 0; i < todo->n; i++) {
        mieb_clear_error();
        hooks->task_context(hooks_user, todo->v[i]->name);
        mieb_status st = mieb_merge_task(todo->v[i], mo);
        if (st != MIEB_OK) {
            hooks->task_failed(hooks_user, todo->v[i]->name, "merged", st);
            (*failed)++;
            continue;
        }
        (*merged)++;
        MIEB_LOGI("%s: merged -> %s/%s.json", todo->v[i]->name, mo->results_dir, todo->v[i]->name);
    }
    hooks->task_context(hooks_user, NULL);
}

/* The results folder is swept one level down too: its .mieb-eval/ holds the run manifest,
   written last, so a process killed at the end leaves its temporary there. */
void mieb_run_plan_outputs(const char *results_dir, const char *per_query, const char *partials_dir, int watch)
{
    mieb_clean_stale_tmp(results_dir, 1);
    if (per_query)
        mieb_clean_stale_tmp(per_query, 3); /* <dir>/<task>/<split>/<subset>/ */
    if (partials_dir)
        mieb_clean_stale_tmp(partials_dir, 3);
    if (!watch)
        return;
    mieb_stop_watch_tmp(results_dir, 1);
    if (per_query)
        mieb_stop_watch_tmp(per_query, 3);
    if (partials_dir)
        mieb_stop_watch_tmp(partials_dir, 3);
}
