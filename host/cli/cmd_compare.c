/*
 * cmd_compare.c - `mieb-eval compare A B [-t T ...] [-b BENCHMARK] [--resamples N] [--seed S]
 * [--alpha A] [--json F] [--csv F] [--registry F]`: is model A really better than model B?
 *
 * A and B are the `run --per-query` folders of the two models (the same task data). For every
 * task present in both, its main score is recomputed from the per-query / per-sample files of
 * all its (split, subset) units (analysis/per_sample_reader.h) and a paired bootstrap gives the
 * delta A - B, its percentile confidence interval and a two-sided p-value
 * (analysis/bootstrap.h); then the same per task type, Mean(Task) and Mean(TaskType) over the
 * compared tasks. One RandomState(seed) serves all tasks in table order, so the numbers are
 * reproducible (README "Comparing two models" says how to recompute them with numpy).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
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
#include "../config/suggest.h"
#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../core/pyfloat.h"
#include "../io/csv.h"
#include "../json/json_py.h"
#include "../analysis/per_sample_reader.h"
#include "../analysis/compare.h"
#include "../analysis/bootstrap.h"
#include "../plan/task_select.h"

static void fmt_pct(double x, char *b, size_t n)
{
    if (isnan(x))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%.2f", x * 100.0);
}

static void fmt_p(double p, char *b, size_t n)
{
    if (isnan(p))
        snprintf(b, n, "-");
    else if (p < 0.0001)
        snprintf(b, n, "%.1e", p);
    else
        snprintf(b, n, "%.4f", p);
}

static void print_table(const struct mieb_cmp *c)
{
    size_t wn = 4, wt = 4;
    for (int i = 0; i < c->n_rows; i++) {
        size_t l = mieb_escape(NULL, 0, c->rows[i].name, (size_t)-1, MIEB_ESC_DISPLAY), /* as shown */
               t = mieb_escape(NULL, 0, c->rows[i].type, (size_t)-1, MIEB_ESC_DISPLAY);
        wn = l > wn ? l : wn;
        wt = t > wt ? t : wt;
    }
    mieb_printf_esc("A: %s\nB: %s\n", c->dir[0], c->dir[1]);
    mieb_printf_esc("paired bootstrap, %lld resamples, %g%% CI (percentile), two-sided p (shift method); scores x 100\n",
           (long long)c->R, 100.0 * (1.0 - c->alpha));
    mieb_printf_esc("%-*s  %-*s  %8s  %8s  %8s  %8s  %8s  %8s  %8s\n", (int)wn, "task", (int)wt, "type", "n", "A", "B",
           "delta", "ci_low", "ci_high", "p");
    for (int i = 0; i < c->n_rows; i++) {
        const struct mieb_cmp_row *r = &c->rows[i];
        char a[32], b[32], d[32], lo[32], hi[32], p[32], n[32];
        if (i == c->n_task_rows)
            mieb_printf_esc("\n");
        fmt_pct(r->res.a, a, sizeof a), fmt_pct(r->res.b, b, sizeof b), fmt_pct(r->res.delta, d, sizeof d);
        fmt_pct(r->res.ci_low, lo, sizeof lo), fmt_pct(r->res.ci_high, hi, sizeof hi), fmt_p(r->res.p_value, p, sizeof p);
        snprintf(n, sizeof n, "%lld", (long long)r->n_samples);
        mieb_printf_esc("%-*s  %-*s  %8s  %8s  %8s  %8s  %8s  %8s  %8s%s\n", (int)wn, r->name, (int)wt, r->task ? r->type : "", n, a, b, d, lo,
               hi, p, mieb_cmp_significant(r, c->alpha) ? " *" : "");
    }
    if (c->n_task_rows)
        mieb_printf_esc("* p < %g\n", c->alpha);
    for (int i = 0; i < c->n_notes; i++)
        mieb_printf_esc("%s %s: %s\n", c->notes[i].is_error ? "error:" : "skipped:", c->notes[i].task, c->notes[i].reason);
}

static void add_result(cJSON *o, const struct mieb_cmp_row *r, double alpha)
{
    cJSON_AddNumberToObject(o, "n_samples", (double)r->n_samples);
    cJSON_AddItemToObject(o, "a", mieb_json_num_or_null(r->res.a));
    cJSON_AddItemToObject(o, "b", mieb_json_num_or_null(r->res.b));
    cJSON_AddItemToObject(o, "delta", mieb_json_num_or_null(r->res.delta));
    cJSON_AddItemToObject(o, "ci_low", mieb_json_num_or_null(r->res.ci_low));
    cJSON_AddItemToObject(o, "ci_high", mieb_json_num_or_null(r->res.ci_high));
    cJSON_AddItemToObject(o, "p_value", mieb_json_num_or_null(r->res.p_value));
    cJSON_AddBoolToObject(o, "significant", mieb_cmp_significant(r, alpha));
    cJSON_AddNumberToObject(o, "n_valid", (double)r->res.n_valid);
}

static mieb_status write_json(const struct mieb_cmp *c, uint32_t seed, const char *path)
{
    cJSON *root = cJSON_CreateObject(), *m = cJSON_CreateObject(), *tasks = cJSON_CreateArray(),
          *types = cJSON_CreateArray(), *means = cJSON_CreateArray(), *skipped = cJSON_CreateArray(),
          *errors = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "a", c->dir[0]);
    cJSON_AddStringToObject(root, "b", c->dir[1]);
    cJSON_AddNumberToObject(m, "resamples", (double)c->R);
    cJSON_AddNumberToObject(m, "seed", (double)seed);
    cJSON_AddItemToObject(m, "alpha", mieb_json_num_or_null(c->alpha));
    cJSON_AddStringToObject(m, "resampling", "numpy.random.RandomState(seed).randint(0, n, size=(resamples, n)) per "
                                             "(split, subset) unit, units in order, tasks in order");
    cJSON_AddStringToObject(m, "ci", "numpy.percentile(valid replicate deltas, [50 * alpha, 100 - 50 * alpha])");
    cJSON_AddStringToObject(m, "p_value", "paired bootstrap, shift method: (1 + #{|delta_r - delta| >= |delta|}) / "
                                          "(1 + n_valid)");
    cJSON_AddItemToObject(root, "method", m);
    for (int i = 0; i < c->n_rows; i++) {
        const struct mieb_cmp_row *r = &c->rows[i];
        cJSON *o = cJSON_CreateObject();
        if (!strcmp(r->kind, "task")) {
            cJSON_AddStringToObject(o, "task", r->name);
            cJSON_AddStringToObject(o, "type", r->type);
            cJSON_AddStringToObject(o, "main_score", r->task->main_score);
            cJSON_AddStringToObject(o, "statistic", mieb_cmp_stat_name(r->stat));
            cJSON_AddNumberToObject(o, "n_units", r->n_units);
        } else {
            cJSON_AddStringToObject(o, !strcmp(r->kind, "type") ? "type" : "name", r->name);
            cJSON_AddNumberToObject(o, !strcmp(r->kind, "type") ? "n_tasks" : "n_parts", r->n_units);
        }
        add_result(o, r, c->alpha);
        cJSON_AddItemToArray(!strcmp(r->kind, "task") ? tasks : !strcmp(r->kind, "type") ? types : means, o);
    }
    for (int i = 0; i < c->n_notes; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "task", c->notes[i].task);
        cJSON_AddStringToObject(o, "reason", c->notes[i].reason);
        cJSON_AddItemToArray(c->notes[i].is_error ? errors : skipped, o);
    }
    cJSON_AddItemToObject(root, "tasks", tasks);
    cJSON_AddItemToObject(root, "task_types", types);
    cJSON_AddItemToObject(root, "means", means);
    cJSON_AddItemToObject(root, "skipped", skipped);
    cJSON_AddItemToObject(root, "errors", errors);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return mieb_fail(MIEB_ERR_OOM, "compare JSON");
    mieb_status st = mieb_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

static mieb_status write_csv(const struct mieb_cmp *c, const char *path)
{
    static const char *hdr[] = {"kind", "name", "type", "main_score", "statistic", "n_samples", "a", "b", "delta",
                                "ci_low", "ci_high", "p_value", "significant", "n_valid", "resamples"};
    struct mieb_buf b = {0};
    mieb_status st = MIEB_OK;
    size_t nh = sizeof hdr / sizeof *hdr;
    for (size_t i = 0; i < nh && st == MIEB_OK; i++)
        st = mieb_csv_field(&b, hdr[i], i == 0);
    if (st == MIEB_OK)
        st = mieb_buf_append(&b, "\n", 1);
    for (int i = 0; i < c->n_rows && st == MIEB_OK; i++) {
        const struct mieb_cmp_row *r = &c->rows[i];
        char v[8][40];
        const double x[6] = {r->res.a, r->res.b, r->res.delta, r->res.ci_low, r->res.ci_high, r->res.p_value};
        for (int k = 0; k < 6; k++) {
            if (isnan(x[k]))
                v[k][0] = '\0';
            else
                mieb_py_repr(x[k], v[k], sizeof v[k]);
        }
        snprintf(v[6], sizeof v[6], "%lld", (long long)r->n_samples);
        snprintf(v[7], sizeof v[7], "%lld", (long long)r->res.n_valid);
        char rs[32];
        snprintf(rs, sizeof rs, "%lld", (long long)c->R);
        const char *f[] = {r->kind, r->name, r->type, r->task ? r->task->main_score : "",
                           r->task ? mieb_cmp_stat_name(r->stat) : "", v[6], v[0], v[1], v[2], v[3], v[4], v[5],
                           mieb_cmp_significant(r, c->alpha) ? "true" : "false", v[7], rs};
        for (size_t k = 0; k < nh && st == MIEB_OK; k++)
            st = mieb_csv_field(&b, f[k], k == 0);
        if (st == MIEB_OK)
            st = mieb_buf_append(&b, "\n", 1);
    }
    if (st == MIEB_OK)
        st = mieb_write_file_atomic(path, b.data ? b.data : "", b.len);
    mieb_buf_free(&b);
    return st;
}

/* Folders of A or B that name no registry task: listed as skipped. */
static void note_unknown_dirs(struct mieb_cmp *c, const struct mieb_registry *reg, char ***names, int *n_names)
{
    for (int s = 0; s < 2; s++) {
        DIR *d = opendir(c->dir[s]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char p[PATH_MAX];
            if (e->d_name[0] == '.' || mieb_registry_find(reg, e->d_name))
                continue;
            snprintf(p, sizeof p, "%s/%s", c->dir[s], e->d_name);
            bool dup = false;
            for (int i = 0; i < *n_names && !dup; i++)
                dup = !strcmp((*names)[i], e->d_name);
            if (!mieb_dir_exists(p) || dup)
                continue;
            char **nn = realloc(*names, (size_t)(*n_names + 1) * sizeof *nn);
            if (!nn)
                break;
            *names = nn;
            if (!(nn[*n_names] = strdup(e->d_name)))
                break;
            mieb_cmp_note(c, nn[(*n_names)++], 0, "not a task of the registry");
        }
        if (d)
            closedir(d);
    }
}

/* The task list, in table (and random stream) order: the benchmark's, the -t names' (each a name
   or a comma-separated list), or every registry task with a folder in A or B. *tasks has room for
   the registry's tasks and argc more, and grows with the names. An exit status. */
static int pick_tasks(const struct mieb_registry *reg, const char *bench_name, const char **tnames, int n_t,
                      const char *const dirs[2], size_t argc, const struct mieb_task ***tasks, int *n_tasks)
{
    if (bench_name) {
        const struct mieb_benchmark *b = mieb_registry_benchmark(reg, bench_name);
        if (!b) {
            mieb_fprintf_esc(stderr, "mieb-eval compare: %s\n", mieb_last_error());
            return MIEB_EXIT_USAGE;
        }
        for (int i = 0; i < b->n_tasks; i++)
            (*tasks)[(*n_tasks)++] = b->tasks[i];
    } else if (n_t) {
        for (int i = 0; i < n_t; i++) {
            char *list = strdup(tnames[i]), *save = NULL;
            for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
                const struct mieb_task *t = mieb_registry_find(reg, tok);
                if (!t) {
                    char msg[512];
                    mieb_unknown_task_msg(reg, tok, msg, sizeof msg);
                    mieb_fprintf_esc(stderr, "mieb-eval compare: %s\n", msg);
                    free(list);
                    return MIEB_EXIT_USAGE;
                }
                const struct mieb_task **nt = realloc(*tasks, ((size_t)reg->n_tasks + argc + (size_t)*n_tasks + 2) * sizeof *nt);
                if (!nt) {
                    free(list);
                    return MIEB_EXIT_FATAL;
                }
                *tasks = nt;
                (*tasks)[(*n_tasks)++] = t;
            }
            free(list);
        }
    } else {
        for (int i = 0; i < reg->n_tasks; i++) {
            char p[2][PATH_MAX];
            snprintf(p[0], sizeof p[0], "%s/%s", dirs[0], reg->tasks[i].name);
            snprintf(p[1], sizeof p[1], "%s/%s", dirs[1], reg->tasks[i].name);
            if (mieb_dir_exists(p[0]) || mieb_dir_exists(p[1]))
                (*tasks)[(*n_tasks)++] = &reg->tasks[i];
        }
    }
    return MIEB_EXIT_OK;
}

/* The command line of compare. */
struct compare_args {
    const char *dirs[2], *bench_name, *csv, *json, *registry;
    const char *tnames[MIEB_PLAN_MAX_TASKS]; /* the -t words */
    int n_t, n_dirs;
    long long R, seed;
    double alpha;
};

/* A or B: a third folder is refused (their checks follow once both are known). */
static enum mieb_cli_parsed folder(const char *cmd, const char *word, void *opts)
{
    struct compare_args *ca = opts;
    if (ca->n_dirs < 2) {
        ca->dirs[ca->n_dirs++] = word;
        return MIEB_CLI_GO;
    }
    mieb_fprintf_esc(stderr, "mieb-eval %s: name exactly two folders (A and B); '%s' is a third\n", cmd, word);
    return MIEB_CLI_BAD_SAID;
}

#define CA(f) offsetof(struct compare_args, f)
static const struct mieb_cli_opt compare_opts[] = {
    {"--tasks", "-t", .kind = MIEB_OPT_LIST, .at = CA(tnames), .count_at = CA(n_t), .cap = MIEB_PLAN_MAX_TASKS,
     .flags = MIEB_OPT_OF_TASKS, .help = "  -t, --tasks T ...   compare these tasks (default: every registry task with a folder in A or B)\n"},
    {"--benchmark", "-b", .kind = MIEB_OPT_STRING, .at = CA(bench_name),
     .help = "  -b, --benchmark B   compare a benchmark's tasks (MIEB(eng), MIEB(lite), lite, ...)\n"},
    {"--resamples", .kind = MIEB_OPT_INT, .at = CA(R), .width = sizeof(long long), .lo = 1,
     .hi = MIEB_CLI_RESAMPLES_MAX, .def = "1000", .help = "  --resamples N       bootstrap replicates (default 1000)\n"},
    {"--seed", .kind = MIEB_OPT_INT, .at = CA(seed), .width = sizeof(long long), .lo = 0, .hi = MIEB_CLI_SEED_MAX,
     .def = "42", .help = "  --seed S            numpy RandomState seed, 0 .. 2^32-1 (default 42)\n"},
    {"--alpha", .kind = MIEB_OPT_CHECK, .at = CA(alpha), .check = mieb_cli_alpha, .def = "0.05",
     .help = "  --alpha A           1 - confidence level; '*' marks p < A (default 0.05)\n"},
    {"--csv", .kind = MIEB_OPT_PATH, .at = CA(csv), .help = "  --csv FILE          write every row (tasks, task types, means) as CSV\n"},
    {"--json", .kind = MIEB_OPT_PATH, .at = CA(json), .help = "  --json FILE         write the comparison as JSON\n"},
    {"--registry", .kind = MIEB_OPT_PATH, .at = CA(registry), .help = "  --registry FILE     tasks.json to use (benchmarks.json is read beside it)\n"},
    {0}};
#undef CA

const struct mieb_cli_spec mieb_compare_spec = {
    .name = "compare",
    .opts = compare_opts,
    .size = sizeof(struct compare_args),
    .head = "usage: mieb-eval compare A B [-t TASK ...] [-b BENCHMARK] [--resamples N] [--seed S]\n"
            "                         [--alpha A] [--json FILE] [--csv FILE] [--registry FILE]\n"
            "\n"
            "A and B are the --per-query folders of two `mieb-eval run`s (two models, the same task\n"
            "data). For each task present in both, the main score is recomputed from the per-query /\n"
            "per-sample files and a paired bootstrap (the same resampled queries or samples for both\n"
            "models) gives delta = A - B, its confidence interval and a two-sided p-value; then per\n"
            "task type, Mean(Task) and Mean(TaskType) over the compared tasks. Tasks found in one\n"
            "folder only, or with units missing, are listed as skipped. Scores are shown x 100;\n"
            "CSV and JSON hold the exact values.\n"
            "\n",
    .tail = "\n"
            "Method: resample each (split, subset) unit's n samples with replacement, R times, with\n"
            "numpy.random.RandomState(seed).randint(0, n, size=(R, n)), units in order, tasks in table\n"
            "order; recompute the main score of A and B on each resample (mean of per-sample values, or\n"
            "Spearman / Pearson / NMI recomputed); CI = percentiles alpha/2, 1-alpha/2 of the replicate\n"
            "deltas; two-sided p of the paired bootstrap test by the shift method,\n"
            "p = (1 + #{|delta_r - delta| >= |delta|}) / (1 + R_valid) over the valid (non-NaN) replicates.\n"
            "\n"
            "Exit status: 0 compared; 1 a per-sample file is unreadable or malformed, the two folders\n"
            "hold different samples for a task, or no task could be compared; 2 bad command line;\n"
            "4 registry unreadable or output not writable.\n",
    .unknown = "option",
    .missing = MIEB_CLI_BAD_SAID,
    .bad_value = MIEB_CLI_BAD_SAID,
    .positional = folder,
};

static enum mieb_cli_parsed parse_args(int argc, char **argv, struct compare_args *ca)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_compare_spec, argc, argv, ca);
    if (r != MIEB_CLI_GO)
        return r;
    if (ca->n_dirs != 2 || (ca->n_t && ca->bench_name)) {
        mieb_fprintf_esc(stderr, "mieb-eval compare: %s\n", ca->n_dirs != 2 ? "name two --per-query folders, A and B"
                                                                    : "-t and -b cannot be combined");
        return MIEB_CLI_BAD;
    }
    for (int s = 0; s < 2; s++)
        if (!mieb_cli_dir("compare", s ? "folder B" : "folder A", ca->dirs[s]))
            return MIEB_CLI_BAD_SAID;
    return MIEB_CLI_GO;
}

int mieb_cmd_compare(int argc, char **argv)
{
    static struct compare_args ca; /* MIEB_PLAN_MAX_TASKS names: not on the stack */
    int rc;
    if (!mieb_cli_start(&mieb_compare_spec, parse_args(argc, argv, &ca), NULL, &rc))
        return rc;
    const char *const *dirs = ca.dirs, *bench_name = ca.bench_name, *csv = ca.csv, *json = ca.json;
    const char **tnames = ca.tnames;
    int n_t = ca.n_t;
    long long R = ca.R, seed = ca.seed;
    double alpha = ca.alpha;
    struct mieb_registry reg;
    mieb_status st;
    if (!mieb_cli_registry("compare", ca.registry, NULL, &reg))
        return MIEB_EXIT_FATAL;
    /* the task list, in table (and random stream) order */
    const struct mieb_task **tasks = calloc((size_t)reg.n_tasks + (size_t)argc + 1, sizeof *tasks);
    char **unknown = NULL;
    int n_tasks = 0, n_unknown = 0;
    struct mieb_cmp c = {0};
    if (!tasks) {
        rc = MIEB_EXIT_FATAL;
        goto done;
    }
    if ((rc = pick_tasks(&reg, bench_name, tnames, n_t, dirs, (size_t)argc, &tasks, &n_tasks)) != MIEB_EXIT_OK)
        goto done;
    st = mieb_cmp_run(&c, &reg, tasks, n_tasks, dirs[0], dirs[1], (int64_t)R, alpha, (uint32_t)seed);
    if (st == MIEB_OK && !bench_name && !n_t)
        note_unknown_dirs(&c, &reg, &unknown, &n_unknown);
    if (st != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval compare: %s\n", mieb_last_error());
        rc = MIEB_EXIT_FATAL;
        goto done;
    }
    print_table(&c);
    for (int i = 0; i < c.n_notes; i++)
        if (c.notes[i].is_error)
            mieb_fprintf_esc(stderr, "mieb-eval compare: %s: %s\n", c.notes[i].task, c.notes[i].reason);
    if (csv && (st = write_csv(&c, csv)) != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval compare: %s: %s\n", csv, mieb_last_error());
        rc = MIEB_EXIT_FATAL;
    }
    if (json && (st = write_json(&c, (uint32_t)seed, json)) != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval compare: %s: %s\n", json, mieb_last_error());
        rc = MIEB_EXIT_FATAL;
    }
    if (rc == MIEB_EXIT_OK && (c.n_errors || c.n_task_rows == 0)) {
        if (!c.n_task_rows)
            mieb_fprintf_esc(stderr, "mieb-eval compare: no task could be compared\n");
        rc = MIEB_EXIT_TASK_FAILED;
    }
done:
    mieb_cmp_free(&c);
    for (int i = 0; i < n_unknown; i++)
        free(unknown[i]);
    free(unknown), free(tasks);
    mieb_registry_free(&reg);
    return rc;
}
