/**
 * cmd_merge.c - `mieb-eval merge`: the partial files of corpus-sharded retrieval
 * (`run --corpus-parts K --corpus-part I --partials-dir DIR`) -> mteb results files
 * identical to a single process's (host/cluster/corpus_parts.h).
 *
 *   mieb-eval merge --partials-dir DIR --task-data DIR --embeddings DIR --output-folder DIR
 *                   (-t TASK [TASK ...] | -b BENCHMARK) [--per-query DIR] [-v | -q]
 *                   [--log-format text|json]
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_start.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "config/model_meta.h"
#include "config/registry.h"
#include "core/escape.h"
#include "io/results_writer.h"
#include "plan/run_loop.h"
#include "plan/task_select.h"

#define MAX_TASKS MIEB_PLAN_MAX_TASKS

struct merge_args {
    const char *partials, *task_data, *emb, *out, *per_query;
    const char *tasks[MAX_TASKS];
    int n_tasks;
    const char *benchmarks[16];
    int n_benchmarks;
    int threads;
    struct mieb_cli_log log; /* -v, -q, --log-format */
};

static void merge_usage(FILE *f)
{
    fputs("usage: mieb-eval merge --partials-dir DIR --task-data DIR --embeddings DIR --output-folder DIR\n"
          "                       (-t TASK [TASK ...] | -b BENCHMARK) [--per-query DIR] [-v | -q]\n"
          "                       [--threads N] [--log-format text|json]\n"
          "\n"
          "Merges the partial files that `mieb-eval run ... --corpus-parts K --corpus-part I --partials-dir DIR`\n"
          "wrote for each part I of each retrieval task into the task's results file, the same file a single\n"
          "process writes (apart from evaluation_time, date and evaluation_phases). Tasks of other families\n"
          "were scored by part 0 of run and are skipped here.\n"
          "\n"
          "  --partials-dir DIR   where the parts were written (DIR/<task>/<split>/<subset>/part-IIIII-of-KKKKK.h5)\n"
          "  --task-data DIR      the task data the parts were computed from\n"
          "  --embeddings DIR     the embeddings the parts were computed from (model_meta.json, and a\n"
          "                       fingerprint check: queries and a sample of the corpus are read)\n"
          "  --output-folder DIR  results go to DIR/results/<org>__<model>/<revision>/<TaskName>.json\n"
          "  -t, --tasks TASK...  tasks to merge\n"
          "  -b, --benchmark B    every retrieval task of a benchmark whose task data is present\n"
          "  --per-query DIR      as for run: DIR/<task>/<split>/<subset>/{run.trec,per_query.tsv,qrels.trec}\n"
          "  --threads N          CPU threads for the metrics [the CPUs this process may use]\n"
          "  -v, -q, --log-format as for run\n"
          "\n"
          "A task is merged only when every part 0..K-1 of every split and subset is present and all parts\n"
          "agree (same inputs, model, similarity, K); otherwise nothing is written for it and every missing\n"
          "part file or disagreeing attribute is listed on stderr.\n"
          "\n"
          "exit status: 0 every task merged; 1 at least one task not merged (missing or inconsistent parts,\n"
          "invalid inputs); 2 bad command line (also a bad option value, an empty path, an input folder\n"
          "that is not one); 4 could not run at all (registry, model_meta.json, output folder not writable)\n",
          f);
}

/* The command line into a; -v with -q is refused by mieb_cli_start. */
static enum mieb_cli_parsed parse_args(int argc, char **argv, struct merge_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        const char **dst = NULL;
        int r;
        if (mieb_cli_is_help(o)) {
            return MIEB_CLI_HELP;
        } else if ((r = mieb_cli_log_option("merge", &a->log, argc, argv, &i)) != 0) {
            if (r < 0)
                return MIEB_CLI_BAD;
            continue;
        } else if (!strcmp(o, "-t") || !strcmp(o, "--tasks")) {
            int got = 0;
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                if (a->n_tasks >= MAX_TASKS) {
                    mieb_fprintf_esc(stderr, "mieb-eval merge: too many tasks\n");
                    return MIEB_CLI_BAD;
                }
                a->tasks[a->n_tasks++] = argv[++i];
                got++;
            }
            if (!got) {
                mieb_fprintf_esc(stderr, "mieb-eval merge: %s needs at least one task name\n", o);
                return MIEB_CLI_BAD;
            }
            continue;
        }
        if (!val) {
            mieb_fprintf_esc(stderr, "mieb-eval merge: %s needs a value\n", o);
            return MIEB_CLI_BAD;
        }
        /* dst names an input folder (else one that may be absent: an output folder, or the
           partials folder, whose absence merge reports as missing parts, exit 1) */
        bool in_dir = true;
        if (!strcmp(o, "--partials-dir"))
            dst = &a->partials, in_dir = false;
        else if (!strcmp(o, "--task-data"))
            dst = &a->task_data;
        else if (!strcmp(o, "--embeddings"))
            dst = &a->emb;
        else if (!strcmp(o, "--output-folder") || !strcmp(o, "--output_folder"))
            dst = &a->out, in_dir = false;
        else if (!strcmp(o, "--per-query"))
            dst = &a->per_query, in_dir = false;
        else if (!strcmp(o, "-b") || !strcmp(o, "--benchmark") || !strcmp(o, "--benchmarks")) {
            if (a->n_benchmarks >= 16) {
                mieb_fprintf_esc(stderr, "mieb-eval merge: too many benchmarks\n");
                return MIEB_CLI_BAD;
            }
            a->benchmarks[a->n_benchmarks++] = val;
            i++;
            continue;
        } else if (!strcmp(o, "--threads")) {
            long long n;
            if (!mieb_cli_int("merge", o, val, 0, 4096, &n))
                return MIEB_CLI_BAD;
            a->threads = (int)n;
            i++;
            continue;
        } else {
            mieb_fprintf_esc(stderr, "mieb-eval merge: unknown option '%s'\n", o);
            return MIEB_CLI_BAD;
        }
        if (!(in_dir ? mieb_cli_dir : mieb_cli_out_dir)("merge", o, val))
            return MIEB_CLI_BAD;
        *dst = val;
        i++;
    }
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

static const struct mieb_cli_command merge_command = {"merge", merge_usage};

int mieb_cmd_merge(int argc, char **argv)
{
    struct merge_args a;
    struct mieb_registry reg = {0};
    struct mieb_model_meta meta;
    struct mieb_task_list todo;
    char results_dir[PATH_MAX];
    int failed = 0, merged = 0, rc;

    if (!mieb_cli_start(&merge_command, parse_args(argc, argv, &a), &a.log, &rc))
        return rc;
    if (mieb_registry_load_default(&reg) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        return MIEB_EXIT_FATAL;
    }
    struct mieb_task_select sel = {.purpose = MIEB_SELECT_MERGE, .task_data = a.task_data, .tasks = a.tasks,
                                   .n_tasks = a.n_tasks, .benchmarks = a.benchmarks, .n_benchmarks = a.n_benchmarks};
    if (mieb_select_tasks(&reg, &sel, &todo) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval merge: ", "%s", mieb_last_error());
        mieb_registry_free(&reg);
        return MIEB_EXIT_USAGE;
    }
    if (open_results(&a, &meta, results_dir, sizeof results_dir) != MIEB_EXIT_OK) {
        mieb_registry_free(&reg);
        return MIEB_EXIT_FATAL;
    }
    mieb_run_plan_outputs(results_dir, a.per_query, NULL, 0); /* left by a merge on this host that was killed */
    struct mieb_merge_opts mo = {.dir = a.partials, .task_data = a.task_data, .emb_dir = a.emb,
                                 .per_query_dir = a.per_query, .meta = &meta, .results_dir = results_dir,
                                 .n_threads = a.threads};
    MIEB_LOGI("merging %d retrieval task(s) for %s from %s", todo.n, meta.name, a.partials);
    mieb_run_plan_merge(&mo, &todo, &mieb_cli_loop_hooks, &merged, &failed);
    MIEB_LOGI("%d task(s) merged, %d not merged", merged, failed);
    mieb_printf_esc("%s\n", results_dir);
    mieb_registry_free(&reg);
    return failed ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_OK;
}
