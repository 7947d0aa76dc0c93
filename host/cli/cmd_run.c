/**
 * cmd_run.c - `mieb-eval run`: score tasks and write mteb results (FORMAT.md §4).
 *
 *   mieb-eval run (--task-data DIR --embeddings DIR | --export DIR) -t TASK [TASK ...] --output-folder DIR ...
 *
 * (its options: run_options.h). The tasks are selected, the model and backend opened, every
 * task scored with progress, then a closing summary and the run manifest.
 *
 * A task whose inputs are invalid is reported on stderr (file, dataset, what is wrong),
 * nothing is written for it, the other tasks are still scored, and the exit status is
 * MIEB_EXIT_TASK_FAILED.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dispatch/dispatch.h"
#include "cli_registry.h"
#include "cli_start.h"
#include "commands.h"
#include "progress.h"
#include "run_options.h"
#include "../config/model_meta.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../core/mem_default.h"
#include "../core/stop.h"
#include "../io/results_writer.h"
#include "../plan/run_loop.h"
#include "../plan/task_select.h"

/* The signal that asked us to stop (SIGINT/SIGTERM: interrupted; SIGUSR1: pre-empted), or 0,
   set by core/stop.c's handler. Checked between tasks and subsets here, between corpus
   blocks by the retrieval search (mieb_run_ctx.interrupted), and once per block of work by
   the library's long loops (core/stop.h's flag), so a stop comes within about a second and
   never leaves a half-written result; a read that does not return is ended by stop.c's
   watchdog. */
static volatile sig_atomic_t interrupted;

/* The run's closing summary: counts, each task's main score, each failure's first error, a hint
   to inspect when inputs are missing; with --log-format json one record. Then the manifest. */
static void closing_summary(const struct run_opts *o, struct mieb_outcomes *oc, struct mieb_manifest *man,
                            const char *results_dir)
{
    static const char *const kind[] = {"scored", "skipped", "FAILED"};
    int missing = 0;
    /* -q: nothing on success, only the failures otherwise; json logs: one record, text: a table */
    if ((!o->log.quiet || oc->counts[MIEB_OUTCOME_FAILED]) &&
        !mieb_cli_record("summary", "summary", mieb_outcomes_json(oc, results_dir))) {
        mieb_cli_say(MIEB_LOG_INFO, "mieb-eval: ", "summary: %d scored, %d skipped, %d failed; results in %s",
                     oc->counts[MIEB_OUTCOME_SCORED], oc->counts[MIEB_OUTCOME_SKIPPED],
                     oc->counts[MIEB_OUTCOME_FAILED], results_dir);
        for (int i = 0; i < oc->n; i++) {
            const struct mieb_outcome *e = &oc->v[i];
            char score[32] = "-";
            if (!isnan(e->main_score))
                snprintf(score, sizeof score, "%.4f", e->main_score);
            if (e->kind == MIEB_OUTCOME_FAILED || !o->log.quiet)
                mieb_cli_say(MIEB_LOG_INFO, "", "  %-44s %-8s %8s %8.1f s%s%s", e->task, kind[e->kind], score,
                             e->seconds, e->note ? "  " : "", e->note ? e->note : "");
        }
    }
    for (int i = 0; i < oc->n; i++)
        missing |= oc->v[i].missing_input;
    if (missing)
        mieb_cli_say(MIEB_LOG_INFO, "mieb-eval: ",
                     "hint: inputs are missing; `mieb-eval inspect --task-data %s --embeddings %s -t TASK` "
                     "lists what each task needs and what is there",
                     o->task_data, o->emb);
    char path[PATH_MAX + 128];
    if (mieb_manifest_finish(man, mieb_outcomes_json(oc, results_dir), results_dir, path, sizeof path) == MIEB_OK)
        MIEB_LOGD("run manifest: %s", path);
    else
        MIEB_LOGW("the run manifest was not written: %s", mieb_last_error());
}


/* --mem-limit unset: half of RAM, of the cgroup's limit or of Slurm's allocation (mem_default.h). */
static size_t default_mem_limit(void)
{
    char why[512];
    size_t v = mieb_mem_default_here(why, sizeof why);
    MIEB_LOGD("--mem-limit default: %s", why);
    return v;
}

/* The ordered task list of this process (plan/task_select.h): an exit status. */
static int select_tasks(const struct run_opts *o, struct mieb_registry *reg, struct mieb_task_list *todo)
{
    struct mieb_task_select sel = {
        .purpose = MIEB_SELECT_RUN, .task_data = o->task_data,
        .tasks = o->tasks, .n_tasks = o->n_tasks, .benchmarks = o->benchmarks, .n_benchmarks = o->n_benchmarks,
        .task_types = o->task_types, .n_task_types = o->n_task_types,
        .eval_splits = o->eval_splits, .n_eval_splits = o->n_eval_splits,
        .languages = o->languages, .n_languages = o->n_languages,
        .shard_index = o->shard_index, .num_shards = o->num_shards,
    };
    mieb_status st = mieb_select_tasks(reg, &sel, todo);
    if (st == MIEB_OK)
        return MIEB_EXIT_OK;
    bool usage = st == MIEB_ERR_INVALID_ARG;
    mieb_cli_say(MIEB_LOG_ERROR, usage ? "mieb-eval run: " : "mieb-eval: error: ", "%s", mieb_last_error());
    return usage ? MIEB_EXIT_USAGE : MIEB_EXIT_FATAL;
}

/* The model (model_meta.json, checked against -m/--model-revision, --similarity applied), the
   backend and the results folder (model_meta.json copied there): an exit status; on success
   *be is the backend and meta's parsed fields stay (its text is freed). */
static int open_model(const struct run_opts *o, struct mieb_model_meta *meta, struct mieb_backend **be,
                      char *results_dir, size_t n)
{
    struct mieb_backend_opts bo = {0};
    mieb_status st;
    if (mieb_model_meta_load(o->emb, meta) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        return MIEB_EXIT_FATAL;
    }
    int rc = MIEB_EXIT_OK;
    if ((o->model && strcmp(o->model, meta->name)) || (o->model_revision && strcmp(o->model_revision, meta->revision))) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "%s: the embeddings are of model %s revision %s, not %s %s",
                     meta->path, meta->name, meta->revision, o->model ? o->model : meta->name,
                     o->model_revision ? o->model_revision : meta->revision);
        rc = MIEB_EXIT_USAGE;
    } else if (o->sim_override && mieb_sim_parse(o->sim_override, &meta->sim) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "--similarity: %s", mieb_last_error());
        rc = MIEB_EXIT_USAGE;
    }
    bo.mem_limit = o->mem_limit;
    bo.n_threads = o->threads;
    bo.precision = !strcmp(o->precision, "tf32") ? MIEB_PREC_TF32 : !strcmp(o->precision, "bf16") ? MIEB_PREC_BF16 : MIEB_PREC_FP32;
    if (rc == MIEB_EXIT_OK && (st = mieb_backend_init(o->device, &bo, be)) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        rc = st == MIEB_ERR_NO_DEVICE ? MIEB_EXIT_NO_DEVICE : MIEB_EXIT_USAGE;
    } else if (rc == MIEB_EXIT_OK && bo.precision != MIEB_PREC_FP32 && !strcmp((*be)->iface.name, "cpu")) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ",
                     "--precision %s needs the CUDA backend; the CPU backend computes in fp32", o->precision);
        rc = MIEB_EXIT_USAGE;
    } else if (rc == MIEB_EXIT_OK &&
               (mieb_results_dir(o->out, meta->name, meta->revision, results_dir, n) != MIEB_OK ||
                mieb_results_write_model_meta(results_dir, meta->text, meta->text_len) != MIEB_OK)) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        rc = MIEB_EXIT_FATAL;
    }
    mieb_model_meta_free(meta); /* copied: only the parsed fields are used from here */
    if (rc != MIEB_EXIT_OK && *be) {
        mieb_backend_free(*be);
        *be = NULL;
    }
    return rc;
}

/* The exit status of a run that scored what it could: a stop signal's, else 4 after a device
   failure, 1 after a task failure, 0. */
static int run_exit(int failed, int fatal)
{
    if (interrupted == SIGUSR1) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "pre-empted (SIGUSR1); finished results are kept, rerun the same command with "
                     "--overwrite-strategy only-missing to resume");
        return MIEB_EXIT_PREEMPTED;
    }
    if (interrupted) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "interrupted; finished results are kept, rerun with --overwrite-strategy only-missing to resume");
        return MIEB_EXIT_INTERRUPTED;
    }
    return fatal ? MIEB_EXIT_FATAL : failed ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_OK;
}

/* Score the list (plan/run_loop.h) with progress, then the closing summary and the manifest. */
static int score_all(const struct run_opts *o, const struct mieb_registry *reg, const struct mieb_task_list *todo,
                     const struct mieb_model_meta *meta, struct mieb_backend *be, const char *results_dir,
                     int argc, char **argv)
{
    mieb_run_plan_outputs(results_dir, o->per_query, o->partials_dir, 1);
    if (mieb_stop_install(&interrupted) != MIEB_OK) /* SIGUSR1: pre-emption notice (MIEB_EXIT_PREEMPTED) */
        MIEB_LOGW("%s; a run stuck after SIGINT/SIGTERM will not be ended", mieb_last_error());
    struct mieb_run_ctx rc = {.emb = {.dir = o->emb}, .be = be, .sim = meta->sim, .mem_limit = o->mem_limit,
                              .kmeans_full = o->kmeans_full, .probe_cpu = o->probe_cpu, .n_threads = o->threads,
                              .per_query_dir = o->per_query, .interrupted = &interrupted};
    MIEB_LOGI("scoring %d task(s) for %s on %s (similarity %s)", todo->n, meta->name, be->iface.name,
              mieb_sim_name(meta->sim));
    long total_units = 0;
    for (int i = 0; i < todo->n; i++)
        total_units += mieb_task_units(todo->v[i]); /* --per-query: every family writes its files */
    mieb_progress_start(o->progress, todo->n, total_units, 0.0);
    struct mieb_outcomes outcomes = {0};
    struct mieb_manifest man;
    if (mieb_manifest_begin(&man, argc, argv, be->iface.name, o->precision, meta->name, meta->revision) != MIEB_OK)
        MIEB_LOGW("no run manifest: %s", mieb_last_error());
    /* corpus parts: retrieval tasks write this part's partials, host/parts/corpus_parts.h */
    struct mieb_part_opts part = {.dir = o->partials_dir, .part = o->corpus_part, .n_parts = o->corpus_parts,
                                  .task_data = o->task_data, .skip_existing = strcmp(o->overwrite, "always") != 0,
                                  .meta = meta, .precision = o->precision};
    struct mieb_run_plan plan = {.reg = reg, .rc = &rc, .task_data = o->task_data, .results_dir = results_dir,
                                 .overwrite = o->overwrite, .overwrite_given = o->overwrite_given,
                                 .precision = o->precision, .part = o->corpus_parts ? &part : NULL, .man = &man,
                                 .hooks = &mieb_cli_loop_hooks};
    int failed = 0, fatal = 0;
    mieb_run_plan_score(&plan, todo, &outcomes, &failed, &fatal);
    mieb_progress_stop();
    closing_summary(o, &outcomes, &man, results_dir);
    int rc_exit = run_exit(failed, fatal);
    mieb_printf_esc("%s\n", results_dir);
    mieb_outcomes_free(&outcomes);
    mieb_manifest_free(&man);
    return rc_exit;
}

int mieb_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    struct mieb_registry reg = {0};
    struct mieb_model_meta meta;
    struct mieb_backend *be = NULL;
    char results_dir[PATH_MAX];
    struct mieb_task_list todo;
    int rc;

    if (!mieb_cli_start(&mieb_run_spec, mieb_run_parse(argc, argv, &o), &o.log, &rc))
        return rc;
    if (!o.mem_limit)
        o.mem_limit = default_mem_limit();
    if (!mieb_cli_registry("run", NULL, &o.log, &reg))
        return MIEB_EXIT_FATAL;
    rc = select_tasks(&o, &reg, &todo);
    if (rc == MIEB_EXIT_OK)
        rc = open_model(&o, &meta, &be, results_dir, sizeof results_dir);
    if (rc == MIEB_EXIT_OK)
        rc = score_all(&o, &reg, &todo, &meta, be, results_dir, argc, argv);
    mieb_backend_free(be);
    mieb_registry_free(&reg);
    return rc;
}
