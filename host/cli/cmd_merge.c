/**
 * cmd_merge.c - `mieb-eval merge`: the partial files of corpus-sharded retrieval
 * (`run --corpus-parts K --corpus-part I --partials-dir DIR`) -> mteb results files
 * identical to a single process's (host/parts/corpus_parts.h).
 *
 *   mieb-eval merge --partials-dir DIR --task-data DIR --embeddings DIR --output-folder DIR
 *                   (-t TASK [TASK ...] | -b BENCHMARK) [--per-query DIR] [-v | -q]
 *                   [--log-format text|json]
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "cli_registry.h"
#include "cli_start.h"
#include "commands.h"
#include "progress.h"
#include "../config/model_meta.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../results/results_writer.h"
#include "../plan/run_loop.h"
#include "../plan/task_select.h"

#define MAX_TASKS MIEB_PLAN_MAX_TASKS
#define MAX_BENCHMARKS 16

struct merge_args {
    const char *partials, *task_data, *emb, *out, *per_query;
    const char *tasks[MAX_TASKS];
    int n_tasks;
    const char *benchmarks[MAX_BENCHMARKS];
    int n_benchmarks;
    int threads;
    struct mieb_cli_log log; /* -v, -q, --log-format */
};

#define MA(f) offsetof(struct merge_args, f)
/* --partials-dir may be absent: merge reports that as missing parts (exit 1). */
static const struct mieb_cli_opt merge_opts[] = {
    {"--partials-dir", .kind = MIEB_OPT_OUT_DIR, .at = MA(partials), .help = "  --partials-dir DIR   where the parts were written (DIR/<task>/<split>/<subset>/part-IIIII-of-KKKKK.h5)\n"},
    {"--task-data", .kind = MIEB_OPT_IN_DIR, .at = MA(task_data), .help = "  --task-data DIR      the task data the parts were computed from\n"},
    {"--embeddings", .kind = MIEB_OPT_IN_DIR, .at = MA(emb), .help = "  --embeddings DIR     the embeddings the parts were computed from (model_meta.json, and a\n"
             "                       fingerprint check: queries and a sample of the corpus are read)\n"},
    {"--output-folder", .kind = MIEB_OPT_OUT_DIR, .at = MA(out), .help = "  --output-folder DIR  results go to DIR/results/<org>__<model>/<revision>/<TaskName>.json\n"},
    {"--tasks", "-t", .kind = MIEB_OPT_LIST, .at = MA(tasks), .count_at = MA(n_tasks), .cap = MAX_TASKS,
     .flags = MIEB_OPT_NEED_ONE | MIEB_OPT_OF_TASKS, .help = "  -t, --tasks TASK...  tasks to merge\n"},
    {"--benchmark", "-b", "--benchmarks", .kind = MIEB_OPT_EACH, .at = MA(benchmarks), .count_at = MA(n_benchmarks),
     .cap = MAX_BENCHMARKS, .help = "  -b, --benchmark B    every retrieval task of a benchmark whose task data is present\n"},
    {"--per-query", .kind = MIEB_OPT_OUT_DIR, .at = MA(per_query), .help = "  --per-query DIR      as for run: DIR/<task>/<split>/<subset>/{run.trec,per_query.tsv,qrels.trec}\n"},
    {"--threads", .kind = MIEB_OPT_INT, .at = MA(threads), .width = sizeof(int), .lo = 0, .hi = 4096,
     .help = "  --threads N          CPU threads for the metrics [the CPUs this process may use]\n"},
    MIEB_CLI_LOG_OPTS(MA(log), "  -v, -q, --log-format as for run\n", NULL, NULL),
    {0}};
#undef MA

const struct mieb_cli_spec mieb_merge_spec = {
    .name = "merge",
    .opts = merge_opts,
    .size = sizeof(struct merge_args),
    .head = "usage: mieb-eval merge --partials-dir DIR --task-data DIR --embeddings DIR --output-folder DIR\n"
            "                       (-t TASK [TASK ...] | -b BENCHMARK) [--per-query DIR] [-v | -q]\n"
            "                       [--threads N] [--log-format text|json]\n"
            "\n"
            "Merges the partial files that `mieb-eval run ... --corpus-parts K --corpus-part I --partials-dir DIR`\n"
            "wrote for each part I of each retrieval task into the task's results file, the same file a single\n"
            "process writes (apart from evaluation_time, date and evaluation_phases). Tasks of other families\n"
            "were scored by part 0 of run and are skipped here.\n"
            "\n",
    .tail = "\n"
            "A task is merged only when every part 0..K-1 of every split and subset is present and all parts\n"
            "agree (same inputs, model, similarity, K); otherwise nothing is written for it and every missing\n"
            "part file or disagreeing attribute is listed on stderr.\n"
            "\n"
            "exit status: 0 every task merged; 1 at least one task not merged (missing or inconsistent parts,\n"
            "invalid inputs); 2 bad command line (also a bad option value, an empty path, an input folder\n"
            "that is not one); 4 could not run at all (registry, model_meta.json, output folder not writable)\n",
    .unknown = "option",
    .missing = MIEB_CLI_BAD,
    .bad_value = MIEB_CLI_BAD,
    .value_first = true,
};

/* The command line into a; -v with -q is refused by mieb_cli_start. */
static enum mieb_cli_parsed parse_args(int argc, char **argv, struct merge_args *a)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_merge_spec, argc, argv, a);
    if (r != MIEB_CLI_GO)
        return r;
    if (!a->partials || !a->task_data || !a->emb || !a->out) {
        mieb_fprintf_esc(stderr, "mieb-eval merge: --partials-dir, --task-data, --embeddings and --output-folder are required\n");
        return MIEB_CLI_BAD;
    }
    if (!a->n_tasks && !a->n_benchmarks) {
        mieb_fprintf_esc(stderr, "mieb-eval merge: name tasks with -t or a benchmark with -b\n");
        return MIEB_CLI_BAD;
    }
    return MIEB_CLI_GO;
}

/* The results folder of the embeddings' model, with model_meta.json copied there: an exit
   status (a failure said). */
static int open_results(const struct merge_args *a, struct mieb_model_meta *meta, char *results_dir, size_t n)
{
    bool ok = mieb_model_meta_load(a->emb, meta) == MIEB_OK &&
              mieb_results_dir(a->out, meta->name, meta->revision, results_dir, n) == MIEB_OK &&
              mieb_results_write_model_meta(results_dir, meta->text, meta->text_len) == MIEB_OK;
    mieb_model_meta_free(meta); /* only the parsed fields are used from here */
    if (!ok)
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
    return ok ? MIEB_EXIT_OK : MIEB_EXIT_FATAL;
}

int mieb_cmd_merge(int argc, char **argv)
{
    struct merge_args a;
    struct mieb_registry reg = {0};
    struct mieb_model_meta meta;
    struct mieb_task_list todo;
    char results_dir[PATH_MAX];
    int failed = 0, merged = 0, rc;

    if (!mieb_cli_start(&mieb_merge_spec, parse_args(argc, argv, &a), &a.log, &rc))
        return rc;
    if (!mieb_cli_registry("merge", NULL, &a.log, &reg))
        return MIEB_EXIT_FATAL;
    struct mieb_task_select sel = {.purpose = MIEB_SELECT_MERGE, .task_data = a.task_data, .tasks = a.tasks,
                                   .n_tasks = a.n_tasks, .benchmarks = a.benchmarks, .n_benchmarks = a.n_benchmarks};
    if (mieb_select_tasks(&reg, &sel, &todo) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval merge: ", "%s", mieb_last_error());
        mieb_selection_free(&todo);
        mieb_registry_free(&reg);
        return MIEB_EXIT_USAGE;
    }
    if (open_results(&a, &meta, results_dir, sizeof results_dir) != MIEB_EXIT_OK) {
        mieb_selection_free(&todo);
        mieb_registry_free(&reg);
        return MIEB_EXIT_FATAL;
    }
    mieb_run_plan_outputs(results_dir, a.per_query, NULL, 0); /* left by a merge on this host that was killed */
    struct mieb_merge_opts mo = {.dir = a.partials, .task_data = a.task_data, .emb_dir = a.emb,
                                 .per_query_dir = a.per_query, .meta = &meta, .results_dir = results_dir,
                                 .n_threads = a.threads};
    MIEB_LOGI("merging %d retrieval task(s) for %s from %s", todo.n, meta.name, a.partials);
    mieb_run_plan_merge(&mo, &todo, &mieb_cli_loop_hooks, NULL, &merged, &failed);
    MIEB_LOGI("%d task(s) merged, %d not merged", merged, failed);
    mieb_printf_esc("%s\n", results_dir);
    mieb_selection_free(&todo);
    mieb_registry_free(&reg);
    return failed ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_OK;
}
