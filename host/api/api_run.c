/* api_run.c - mieb_run (include/mieb.h): `mieb-eval run` over folders through the library: the
   program's own task selection (plan/task_select.h), model_meta.json and results folder
   (io/results_writer.h), scoring loop (plan/run_loop.h) and run manifest (plan/manifest.h),
   without its terminal output, signal handlers or watchdog, which belong to a program. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../config/model_meta.h"
#include "../io/results_writer.h"
#include "../plan/manifest.h"
#include "../plan/run_loop.h"
#include "../plan/task_select.h"
#include "api_engine.h"
#include "api_hooks.h"

static mieb_status check_request(const struct mieb_run_request *rq)
{
    if (!rq || !rq->task_data || !rq->embeddings || !rq->output_folder)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_run needs a task-data folder, an embeddings folder and an output folder");
    const int32_t counts[] = {rq->n_tasks, rq->n_benchmarks, rq->n_task_types, rq->n_eval_splits, rq->n_languages};
    const void *arrays[] = {rq->tasks, rq->benchmarks, rq->task_types, rq->eval_splits, rq->languages};
    for (int i = 0; i < 5; i++)
        if (counts[i] < 0 || (counts[i] && !arrays[i]))
            return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_run: a list's count does not match its array");
    if (!rq->n_tasks && !rq->n_benchmarks)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_run needs tasks or benchmarks");
    if (rq->num_shards < 0 || rq->shard_index < 0 || (rq->num_shards && rq->shard_index >= rq->num_shards) ||
        (!rq->num_shards && rq->shard_index))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_run: shard %d of %d", (int)rq->shard_index, (int)rq->num_shards);
    const char *ow = rq->overwrite_strategy;
    if (ow && strcmp(ow, "only-missing") && strcmp(ow, "always") && strcmp(ow, "never"))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "overwrite strategy '%s' is not only-missing, always or never", ow);
    return MIEB_OK;
}

/* The model's model_meta.json (checked against the model asked for, similarity overridden
   where asked), the results folder and the copy of model_meta.json in it. meta's parsed fields
   stay; its text is freed. */
static mieb_status open_model(const struct mieb_run_request *rq, struct mieb_model_meta *meta, char *dir, size_t n)
{
    MIEB_TRY(mieb_model_meta_load(rq->embeddings, meta));
    mieb_status st = MIEB_OK;
    if ((rq->model && strcmp(rq->model, meta->name)) || (rq->model_revision && strcmp(rq->model_revision, meta->revision)))
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "%s: the embeddings are of model %s revision %s, not %s %s", meta->path,
                       meta->name, meta->revision, rq->model ? rq->model : meta->name,
                       rq->model_revision ? rq->model_revision : meta->revision);
    if (st == MIEB_OK && rq->similarity >= 0)
        st = mieb_api_similarity(rq->similarity, &meta->sim);
    if (st == MIEB_OK)
        st = mieb_results_dir(rq->output_folder, meta->name, meta->revision, dir, n);
    if (st == MIEB_OK)
        st = mieb_results_write_model_meta(dir, meta->text, meta->text_len);
    mieb_model_meta_free(meta);
    return st;
}

/* Score the list as the program does; the summary is printed before the manifest takes it. */
static mieb_status score_all(mieb_engine *e, const struct mieb_run_request *rq, const struct mieb_registry *reg,
                             const struct mieb_task_list *todo, const struct mieb_model_meta *meta, const char *dir,
                             char **summary)
{
    struct mieb_emb_source src = {.dir = rq->embeddings};
    struct mieb_run_ctx rc = mieb_api_run_ctx(e, &src, meta->sim);
    rc.per_query_dir = rq->per_query_dir;
    rc.kmeans_full = rq->kmeans_full != 0;
    rc.probe_cpu = rq->probe_cpu != 0;
    mieb_run_plan_outputs(dir, rq->per_query_dir, NULL, 0); /* no watchdog: the caller's process is not ours */
    MIEB_LOGI("scoring %d task(s) for %s on %s (similarity %s)", todo->n, meta->name, e->be->iface.name,
              mieb_sim_name(meta->sim));
    long total = 0;
    for (int i = 0; i < todo->n; i++)
        total += mieb_task_units(todo->v[i]);
    char *argv[] = {"mieb_run (C API)"};
    struct mieb_manifest man = {0};
    if (mieb_manifest_begin(&man, 1, argv, e->be->iface.name, "fp32", meta->name, meta->revision) != MIEB_OK)
        MIEB_LOGW("no run manifest: %s", mieb_last_error());
    struct mieb_run_plan plan = {.reg = reg, .rc = &rc, .task_data = rq->task_data, .results_dir = dir,
                                 .overwrite = rq->overwrite_strategy ? rq->overwrite_strategy : "only-missing",
                                 .overwrite_given = rq->overwrite_strategy != NULL, .precision = "fp32", .man = &man,
                                 .hooks = mieb_api_loop_hooks(e, total)};
    struct mieb_outcomes oc = {0};
    int failed = 0, fatal = 0;
    mieb_run_plan_score(&plan, todo, &oc, &failed, &fatal);
    cJSON *sum = mieb_outcomes_json(&oc, dir);
    *summary = sum ? cJSON_PrintUnformatted(sum) : NULL;
    char path[PATH_MAX + 128];
    if (mieb_manifest_finish(&man, sum, dir, path, sizeof path) != MIEB_OK)
        MIEB_LOGW("the run manifest was not written: %s", mieb_last_error());
    mieb_manifest_free(&man);
    mieb_outcomes_free(&oc);
    if (e->interrupted)
        return mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted; finished results are kept, run again to resume");
    if (fatal)
        return mieb_fail(mieb_api_failed_status() != MIEB_OK ? mieb_api_failed_status() : MIEB_ERR_INTERNAL,
                         "the device failed; finished results are kept");
    return *summary ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "the run's summary");
}

static mieb_status run(mieb_engine *e, const struct mieb_run_request *rq, char **results_dir, char **summary)
{
    MIEB_TRY(check_request(rq));
    struct mieb_task_select sel = {
        .purpose = MIEB_SELECT_RUN, .task_data = rq->task_data, .tasks = rq->tasks, .n_tasks = rq->n_tasks,
        .benchmarks = rq->benchmarks, .n_benchmarks = rq->n_benchmarks, .task_types = rq->task_types,
        .n_task_types = rq->n_task_types, .eval_splits = rq->eval_splits, .n_eval_splits = rq->n_eval_splits,
        .languages = rq->languages, .n_languages = rq->n_languages, .shard_index = rq->shard_index,
        .num_shards = rq->num_shards,
    };
    struct mieb_task_list *todo = malloc(sizeof *todo); /* MIEB_PLAN_MAX_TASKS pointers: not on the stack */
    struct mieb_registry reg;
    struct mieb_model_meta meta;
    char dir[PATH_MAX];
    if (!todo)
        return mieb_fail(MIEB_ERR_OOM, "the task list");
    mieb_status st = mieb_api_registry_copy(e, &reg); /* the selection narrows it (api_engine.h) */
    if (st == MIEB_OK)
        st = mieb_select_tasks(&reg, &sel, todo);
    if (st == MIEB_OK)
        st = open_model(rq, &meta, dir, sizeof dir);
    if (st == MIEB_OK)
        st = score_all(e, rq, &reg, todo, &meta, dir, summary);
    mieb_registry_free(&reg);
    free(todo);
    if (st == MIEB_OK && !(*results_dir = strdup(dir)))
        st = mieb_fail(MIEB_ERR_OOM, "the results folder's name");
    if (st != MIEB_OK) {
        free(*summary);
        *summary = NULL;
    }
    return st;
}

int mieb_run(mieb_engine *e, const struct mieb_run_request *rq, char **results_dir, char **summary_json)
{
    *results_dir = *summary_json = NULL;
    mieb_status st = mieb_api_call_begin(e);
    if (st == MIEB_OK)
        st = run(e, rq, results_dir, summary_json);
    return mieb_api_call_end(e, st);
}
