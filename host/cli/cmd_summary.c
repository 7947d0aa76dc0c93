/*
 * cmd_summary.c - `mieb-eval summary DIR [DIR ...] [-b BENCHMARK] [--csv FILE] [--json FILE]`:
 * reads mteb result folders and prints the MIEB leaderboard numbers of every model
 * (Mean(TaskType), Mean(Task), per-type means, Borda rank; host/analysis/leaderboard.h),
 * sorted as the leaderboard sorts them; writes CSV and JSON on request.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_options.h"
#include "cli_start.h"
#include "cli_registry.h"
#include "commands.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../core/pyfloat.h"
#include "../io/csv.h"
#include "../json/json_py.h"
#include "../io/results_reader.h"
#include "../analysis/leaderboard.h"
#include "../analysis/placement.h"
#include "../plan/manifest.h"

/* A number as Python's repr would print it, or "" for a missing value (CSV). */
static void fmt_num(double x, char *buf, size_t n)
{
    if (isnan(x))
        buf[0] = '\0';
    else
        mieb_py_repr(x, buf, n);
}

static void fmt_pct(double x, char *buf, size_t n)
{
    if (isnan(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", mieb_py_round(x * 100.0, 2));
}

/* "own" or "published" when published rows are there (summary --published), else nothing. */
static const char *source(const struct mieb_leaderboard *lb, const struct mieb_lb_row *row)
{
    bool any = false;
    for (int i = 0; i < lb->n_models; i++)
        any |= lb->rows[i].published;
    return !any ? NULL : row->published ? "published" : "own";
}

static void print_table(const struct mieb_leaderboard *lb, char *const *by)
{
    char b1[32], b2[32];
    size_t wname = 5, wrev = 8;
    const char *src = source(lb, &lb->rows[0]);
    for (int i = 0; i < lb->n_models; i++) {
        size_t l = mieb_escape(NULL, 0, lb->rows[i].model->name, (size_t)-1, MIEB_ESC_DISPLAY), /* as shown */
               r = mieb_escape(NULL, 0, lb->rows[i].model->revision, (size_t)-1, MIEB_ESC_DISPLAY);
        wname = l > wname ? l : wname;
        wrev = r > wrev ? r : wrev;
    }
    if (src)
        mieb_printf_esc("%-9s  ", "Source");
    mieb_printf_esc("%-4s  %-*s  %-*s  %14s  %10s  %11s  %9s", "Rank", (int)wname, "Model", (int)wrev, "Revision",
           "Mean(TaskType)", "Mean(Task)", "Rank(Borda)", "Tasks");
    for (int k = 0; k < lb->n_types; k++)
        mieb_printf_esc("  %s", lb->types[k]);
    mieb_printf_esc("  Produced by\n");
    for (int p = 0; p < lb->n_models; p++) {
        const struct mieb_lb_row *row = &lb->rows[lb->order[p]];
        char tasks[32], brank[16];
        fmt_pct(row->mean_task_type, b1, sizeof b1);
        fmt_pct(row->mean_task, b2, sizeof b2);
        snprintf(tasks, sizeof tasks, "%d/%d", row->n_complete, lb->n_tasks);
        if (row->borda_rank)
            snprintf(brank, sizeof brank, "%d", row->borda_rank);
        else
            snprintf(brank, sizeof brank, "-");
        if (src)
            mieb_printf_esc("%-9s  ", source(lb, row));
        mieb_printf_esc("%-4d  %-*s  %-*s  %14s  %10s  %11s  %9s", row->rank, (int)wname, row->model->name, (int)wrev,
               row->model->revision, b1, b2, brank, tasks);
        for (int k = 0; k < lb->n_types; k++) {
            fmt_pct(row->type_mean[k], b1, sizeof b1);
            mieb_printf_esc("  %*s", (int)strlen(lb->types[k]), b1);
        }
        mieb_printf_esc("  %s\n", by[lb->order[p]][0] ? by[lb->order[p]] : "-");
    }
}

static mieb_status write_csv(const struct mieb_leaderboard *lb, char *const *by, const char *path)
{
    struct mieb_buf b = {0};
    char num[40];
    mieb_status st = MIEB_OK;
    const char *fixed[] = {"Rank", "model", "revision", "Mean(TaskType)", "Mean(Task)", "Rank(Borda)",
                           "n_tasks_scored", "n_tasks"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && st == MIEB_OK; i++)
        st = mieb_csv_field(&b, fixed[i], i == 0);
    for (int k = 0; k < lb->n_types && st == MIEB_OK; k++)
        st = mieb_csv_field(&b, lb->types[k], false);
    for (int t = 0; t < lb->n_tasks && st == MIEB_OK; t++)
        st = mieb_csv_field(&b, lb->tasks[t]->name, false);
    if (st == MIEB_OK)
        st = mieb_csv_field(&b, "produced_by", false);
    if (st == MIEB_OK && source(lb, &lb->rows[0]))
        st = mieb_csv_field(&b, "source", false);
    if (st == MIEB_OK)
        st = mieb_buf_append(&b, "\n", 1);
    for (int p = 0; p < lb->n_models && st == MIEB_OK; p++) {
        const struct mieb_lb_row *row = &lb->rows[lb->order[p]];
        snprintf(num, sizeof num, "%d", row->rank);
        st = mieb_csv_field(&b, num, true);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, row->model->name, false);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, row->model->revision, false);
        fmt_num(row->mean_task_type, num, sizeof num);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        fmt_num(row->mean_task, num, sizeof num);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        if (row->borda_rank)
            snprintf(num, sizeof num, "%d", row->borda_rank);
        else
            num[0] = '\0';
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        snprintf(num, sizeof num, "%d", row->n_complete);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        snprintf(num, sizeof num, "%d", lb->n_tasks);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        for (int k = 0; k < lb->n_types && st == MIEB_OK; k++) {
            fmt_num(row->type_mean[k], num, sizeof num);
            st = mieb_csv_field(&b, num, false);
        }
        for (int t = 0; t < lb->n_tasks && st == MIEB_OK; t++) {
            fmt_num(row->task_score[t], num, sizeof num);
            st = mieb_csv_field(&b, num, false);
        }
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, by[lb->order[p]], false);
        if (st == MIEB_OK && source(lb, row))
            st = mieb_csv_field(&b, source(lb, row), false);
        if (st == MIEB_OK)
            st = mieb_buf_append(&b, "\n", 1);
    }
    if (st == MIEB_OK)
        st = mieb_write_file_atomic(path, b.data ? b.data : "", b.len);
    mieb_buf_free(&b);
    return st;
}

static mieb_status write_json(const struct mieb_leaderboard *lb, char *const *by, const char *bench,
                              const struct mieb_placement *place, int n_place, const char *path)
{
    cJSON *root = cJSON_CreateObject(), *models = cJSON_CreateArray(), *tasks = cJSON_CreateArray(),
          *types = cJSON_CreateArray();
    cJSON_AddItemToObject(root, "benchmark", bench ? cJSON_CreateString(bench) : cJSON_CreateNull());
    for (int t = 0; t < lb->n_tasks; t++)
        cJSON_AddItemToArray(tasks, cJSON_CreateString(lb->tasks[t]->name));
    for (int k = 0; k < lb->n_types; k++)
        cJSON_AddItemToArray(types, cJSON_CreateString(lb->types[k]));
    cJSON_AddItemToObject(root, "tasks", tasks);
    cJSON_AddItemToObject(root, "task_types", types);
    for (int p = 0; p < lb->n_models; p++) {
        const struct mieb_lb_row *row = &lb->rows[lb->order[p]];
        cJSON *m = cJSON_CreateObject(), *tm = cJSON_CreateObject(), *ts = cJSON_CreateObject(),
              *missing = cJSON_CreateArray();
        cJSON_AddNumberToObject(m, "Rank", row->rank);
        cJSON_AddStringToObject(m, "model", row->model->name);
        cJSON_AddStringToObject(m, "revision", row->model->revision);
        cJSON_AddStringToObject(m, "path", row->model->dir);
        if (source(lb, row))
            cJSON_AddStringToObject(m, "source", source(lb, row));
        const char *made = by[lb->order[p]];
        cJSON_AddItemToObject(m, "produced_by", made[0] ? cJSON_CreateString(made) : cJSON_CreateNull());
        cJSON_AddItemToObject(m, "Mean(TaskType)", mieb_json_num_or_null(row->mean_task_type));
        cJSON_AddItemToObject(m, "Mean(Task)", mieb_json_num_or_null(row->mean_task));
        cJSON_AddItemToObject(m, "Rank(Borda)",
                              row->borda_rank ? cJSON_CreateNumber(row->borda_rank) : cJSON_CreateNull());
        cJSON_AddItemToObject(m, "borda_points", mieb_json_num_or_null(row->borda_points));
        for (int k = 0; k < lb->n_types; k++)
            cJSON_AddItemToObject(tm, lb->types[k], mieb_json_num_or_null(row->type_mean[k]));
        for (int t = 0; t < lb->n_tasks; t++) {
            cJSON_AddItemToObject(ts, lb->tasks[t]->name, mieb_json_num_or_null(row->task_score[t]));
            if (isnan(row->task_score[t]))
                cJSON_AddItemToArray(missing, cJSON_CreateString(lb->tasks[t]->name));
        }
        cJSON_AddItemToObject(m, "task_types", tm);
        cJSON_AddItemToObject(m, "task_scores", ts);
        cJSON_AddItemToObject(m, "incomplete_tasks", missing);
        cJSON_AddItemToArray(models, m);
    }
    cJSON_AddItemToObject(root, "models", models);
    if (source(lb, &lb->rows[0]))
        cJSON_AddItemToObject(root, "placement", mieb_placement_json(lb, place, n_place));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return mieb_fail(MIEB_ERR_OOM, "summary JSON");
    mieb_status st = mieb_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

/* The command line of summary. */
struct summary_args {
    const char *dirs[256], *bench_name, *csv, *json, *registry, *published;
    int n_dirs;
};

/* A result folder: a path, one of at most 256 (never dropped: the table would lack a model). */
static enum mieb_cli_parsed result_folder(const char *cmd, const char *word, void *opts)
{
    struct summary_args *sa = opts;
    int cap = (int)(sizeof sa->dirs / sizeof *sa->dirs);
    if (!mieb_cli_path(cmd, "result folder", word))
        return MIEB_CLI_BAD_SAID;
    if (sa->n_dirs == cap) {
        mieb_fprintf_esc(stderr, "mieb-eval %s: at most %d result folders\n", cmd, cap);
        return MIEB_CLI_BAD_SAID;
    }
    sa->dirs[sa->n_dirs++] = word;
    return MIEB_CLI_GO;
}

#define SA(f) offsetof(struct summary_args, f)
static const struct mieb_cli_opt summary_opts[] = {
    {"--benchmark", "-b", .kind = MIEB_OPT_STRING, .at = SA(bench_name),
     .help = "  -b, --benchmark B  score over a benchmark's task list (MIEB(eng), MIEB(Multilingual),\n"
             "                     MIEB(lite), MIEB(Img), or eng, multilingual, lite, img); default:\n"
             "                     every registry task found in any result folder\n"},
    {"--csv", .kind = MIEB_OPT_PATH, .at = SA(csv),
     .help = "  --csv FILE         write the table (exact values, every task column) as CSV\n"},
    {"--json", .kind = MIEB_OPT_PATH, .at = SA(json),
     .help = "  --json FILE        write the table as JSON\n"},
    {"--published", .kind = MIEB_OPT_PATH, .at = SA(published),
     .help = "  --published DIR    the published results (a clone of mteb's results repository, or\n"
             "                     ~/.cache/mteb/remote after mteb's ResultCache download): rank the\n"
             "                     models of the folders given among them, with the nearest published\n"
             "                     models above and below and the tasks a model lacks (docs/RUNNING.md,\n"
             "                     \"Where your model stands\"); nothing is downloaded\n"},
    {"--registry", .kind = MIEB_OPT_PATH, .at = SA(registry),
     .help = "  --registry FILE    tasks.json to use (benchmarks.json is read beside it)\n"},
    {0}};
#undef SA

const struct mieb_cli_spec mieb_summary_spec = {
    .name = "summary",
    .opts = summary_opts,
    .size = sizeof(struct summary_args),
    .head = "usage: mieb-eval summary DIR [DIR ...] [-b BENCHMARK] [--published DIR] [--csv FILE] [--json FILE]\n"
            "\n"
            "Reads mteb result folders (DIR: an output folder holding results/, a results/ folder, a\n"
            "model folder or a revision folder) and prints, per model and revision, the MIEB\n"
            "leaderboard numbers as mteb computes them: Mean(TaskType), Mean(Task), one mean per task\n"
            "type and the Borda rank. A task without a complete score (missing file, split or\n"
            "subset, NaN main_score) leaves the aggregates empty. The table shows 100 x score,\n"
            "rounded to 2 decimals as the leaderboard does; CSV and JSON hold the exact values.\n"
            "\n",
    .tail = "\n"
            "Exit status: 0 ok; 1 some result file could not be read (named on stderr) or no\n"
            "result folder was found; 2 bad command line; 4 registry unreadable or output not writable.\n",
    .unknown = "option",
    .missing = MIEB_CLI_BAD_SAID,
    .bad_value = MIEB_CLI_BAD_SAID,
    .positional = result_folder,
};

static enum mieb_cli_parsed parse_args(int argc, char **argv, struct summary_args *sa)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_summary_spec, argc, argv, sa);
    if (r == MIEB_CLI_GO && !sa->n_dirs) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: name at least one result folder\n");
        return MIEB_CLI_BAD;
    }
    return r;
}

/* The task set: a benchmark's list, or every registry task that some folder has a file for. */
int mieb_cmd_summary(int argc, char **argv)
{
    struct summary_args sa;
    int rc;
    if (!mieb_cli_start(&mieb_summary_spec, parse_args(argc, argv, &sa), NULL, &rc))
        return rc;
    const char **dirs = sa.dirs, *bench_name = sa.bench_name, *csv = sa.csv, *json = sa.json;
    int n_dirs = sa.n_dirs;
    struct mieb_registry reg;
    mieb_status st;
    if (!mieb_cli_registry("summary", sa.registry, NULL, &reg))
        return MIEB_EXIT_FATAL;
    const struct mieb_benchmark *bench = NULL;
    if (bench_name && !(bench = mieb_registry_benchmark(&reg, bench_name))) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: %s\n", mieb_last_error());
        mieb_registry_free(&reg);
        return MIEB_EXIT_USAGE;
    }
    struct mieb_model_results *models = NULL;
    int n_models = 0, n_bad = 0;
    const struct mieb_task **tasks = NULL;
    int n_tasks = 0;
    struct mieb_leaderboard lb = {0};
    char **by = NULL; /* [n_models] by row index: what produced each row (plan/manifest.h) */
    struct mieb_placement *place = NULL;
    int n_own = 0, n_place = 0;
    st = mieb_results_scan(dirs, n_dirs, &models, &n_models, &n_bad);
    n_own = n_models;
    if (st == MIEB_OK && sa.published && n_own)
        st = mieb_published_append(sa.published, &models, &n_models, &n_bad);
    if (st == MIEB_OK)
        st = mieb_lb_pick_tasks(&reg, bench, models, n_models, &tasks, &n_tasks);
    if (st == MIEB_OK)
        st = mieb_leaderboard_compute(tasks, n_tasks, models, n_models, &lb);
    if (st == MIEB_OK && sa.published) {
        mieb_lb_mark_published(&lb, n_own);
        st = mieb_placement_compute(&lb, &place, &n_place);
    }
    if (st != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: %s\n", mieb_last_error());
        rc = st == MIEB_ERR_NOT_FOUND ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_FATAL;
        goto done;
    }
    if (!n_models) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: no result files found under the folders given\n");
        rc = MIEB_EXIT_TASK_FAILED;
        goto done;
    }
    mieb_printf_esc("benchmark: %s (%d tasks, %d task types), %d model revisions\n", bench ? bench->name : "(tasks found)",
           n_tasks, lb.n_types, n_models);
    if ((st = mieb_manifest_produced_by_rows(&lb, &by)) != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: %s\n", mieb_last_error());
        rc = MIEB_EXIT_FATAL;
        goto done;
    }
    print_table(&lb, by);
    mieb_placement_print(&lb, place, n_place);
    if (csv && (st = write_csv(&lb, by, csv)) != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: %s: %s\n", csv, mieb_last_error());
        rc = MIEB_EXIT_FATAL;
    }
    if (json && (st = write_json(&lb, by, bench ? bench->name : NULL, place, n_place, json)) != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: %s: %s\n", json, mieb_last_error());
        rc = MIEB_EXIT_FATAL;
    }
    if (rc == MIEB_EXIT_OK && n_bad) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: %d result file(s) could not be read (see above)\n", n_bad);
        rc = MIEB_EXIT_TASK_FAILED;
    }
done:
    mieb_placement_free(place, n_place);
    mieb_manifest_produced_by_free(by, lb.n_models);
    mieb_leaderboard_free(&lb);
    free(tasks);
    mieb_model_results_free(models, n_models);
    mieb_registry_free(&reg);
    return rc;
}
