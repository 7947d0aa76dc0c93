/*
 * cmd_report.c - `mieb-eval report DIR [DIR ...] [-b BENCHMARK] --html OUT.html`: one
 * self-contained HTML page (inline CSS and SVG, no script, no external reference) over
 * the models' result folders: the leaderboard summary (the numbers of `summary`), charts
 * per task type, a radar, per-task deltas, linear-probe spread, recall@k curves,
 * per-language scores and time per task and stage (host/report/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "config/registry.h"
#include "core/fileutil.h"
#include "io/results_reader.h"
#include "metrics/leaderboard.h"
#include "report/report_data.h"
#include "report/report_page.h"

static void report_usage(FILE *f)
{
    fputs("usage: mieb-eval report DIR [DIR ...] --html OUT.html [-b BENCHMARK] [--baseline MODEL]\n"
          "\n"
          "Writes one self-contained HTML page (inline CSS and SVG; no script, nothing fetched)\n"
          "about the models whose mteb result folders are given (as for `summary`): the leaderboard\n"
          "summary, a bar chart per task type, a radar over task types, the per-task table with\n"
          "deltas against a baseline model, linear-probe spread across experiments, recall@k\n"
          "curves of retrieval tasks, per-language scores of multilingual tasks, and the time\n"
          "spent per task and stage (evaluation_time, evaluation_phases). Prints the page's path.\n"
          "\n"
          "  --html FILE        the page to write (atomically)\n"
          "  -b, --benchmark B  a benchmark's task list (as for summary); default: every registry\n"
          "                     task found in any result folder\n"
          "  --baseline MODEL   the model deltas are taken against (its name, or name@revision);\n"
          "                     default: the first model found in the first DIR\n"
          "  --registry FILE    tasks.json to use (benchmarks.json is read beside it)\n"
          "\n"
          "Exit status: 0 ok; 1 some result file could not be read (named on stderr) or no\n"
          "result folder was found; 2 bad command line or unknown baseline; 4 registry\n"
          "unreadable or the page could not be written.\n",
          f);
}

/* Row index of the baseline: --baseline by name or name@revision, else the first model under dirs[0]. */
static int find_baseline(const struct mieb_leaderboard *lb, const char *want, const char *first_dir)
{
    for (int i = 0; i < lb->n_models; i++) {
        const struct mieb_model_results *m = lb->rows[i].model;
        if (want) {
            size_t ln = strlen(m->name);
            if (!strcmp(want, m->name) ||
                (!strncmp(want, m->name, ln) && want[ln] == '@' && !strcmp(want + ln + 1, m->revision)))
                return i;
            continue;
        }
        size_t l = strlen(first_dir);
        while (l > 1 && first_dir[l - 1] == '/')
            l--;
        if (!strncmp(m->dir, first_dir, l) && (m->dir[l] == '\0' || m->dir[l] == '/'))
            return i;
    }
    return want ? -1 : 0;
}

int mieb_cmd_report(int argc, char **argv)
{
    const char *dirs[256], *bench_name = NULL, *html = NULL, *registry = NULL, *baseline = NULL;
    int n_dirs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            report_usage(stdout);
            return MIEB_EXIT_OK;
        }
        const char **dst = !strcmp(a, "-b") || !strcmp(a, "--benchmark") ? &bench_name
                           : !strcmp(a, "--html")                           ? &html
                           : !strcmp(a, "--baseline")                       ? &baseline
                           : !strcmp(a, "--registry")                       ? &registry
                                                                            : NULL;
        if (dst) {
            if (!val) {
                fprintf(stderr, "mieb-eval report: %s needs a value\n", a);
                return MIEB_EXIT_USAGE;
            }
            if ((dst == &html || dst == &registry) && !mieb_cli_path("report", a, val))
                return MIEB_EXIT_USAGE;
            *dst = val;
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "mieb-eval report: unknown option '%s'\n", a);
            report_usage(stderr);
            return MIEB_EXIT_USAGE;
        } else if (!mieb_cli_path("report", "result folder", a)) {
            return MIEB_EXIT_USAGE;
        } else if (n_dirs < (int)(sizeof dirs / sizeof *dirs)) {
            dirs[n_dirs++] = a;
        } else {
            fprintf(stderr, "mieb-eval report: at most %d result folders\n", (int)(sizeof dirs / sizeof *dirs));
            return MIEB_EXIT_USAGE;
        }
    }
    if (!n_dirs || !html) {
        fprintf(stderr, "mieb-eval report: %s\n", !n_dirs ? "name at least one result folder" : "--html FILE is needed");
        report_usage(stderr);
        return MIEB_EXIT_USAGE;
    }
    struct mieb_registry reg;
    mieb_status st = registry ? mieb_registry_load(registry, &reg) : mieb_registry_load_default(&reg);
    if (st != MIEB_OK) {
        fprintf(stderr, "mieb-eval report: %s\n", mieb_last_error());
        return MIEB_EXIT_FATAL;
    }
    const struct mieb_benchmark *bench = NULL;
    if (bench_name && !(bench = mieb_registry_benchmark(&reg, bench_name))) {
        fprintf(stderr, "mieb-eval report: %s\n", mieb_last_error());
        mieb_registry_free(&reg);
        return MIEB_EXIT_USAGE;
    }
    struct mieb_model_results *models = NULL;
    int n_models = 0, n_bad = 0, rc = MIEB_EXIT_OK, base = 0;
    const struct mieb_task **tasks = NULL;
    int n_tasks = 0;
    struct mieb_leaderboard lb = {0};
    struct mieb_html page = {0};
    cJSON **docs = NULL;
    st = mieb_results_scan(dirs, n_dirs, &models, &n_models, &n_bad);
    if (st == MIEB_OK)
        st = mieb_lb_pick_tasks(&reg, bench, models, n_models, &tasks, &n_tasks);
    if (st == MIEB_OK)
        st = mieb_leaderboard_compute(tasks, n_tasks, models, n_models, &lb);
    if (st == MIEB_OK && n_models)
        st = mieb_rp_docs_load(&lb, &docs, &n_bad);
    if (st != MIEB_OK) {
        fprintf(stderr, "mieb-eval report: %s\n", mieb_last_error());
        rc = st == MIEB_ERR_NOT_FOUND ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_FATAL;
        goto done;
    }
    if (!n_models) {
        fprintf(stderr, "mieb-eval report: no result files found under the folders given\n");
        rc = MIEB_EXIT_TASK_FAILED;
        goto done;
    }
    if ((base = find_baseline(&lb, baseline, dirs[0])) < 0) {
        fprintf(stderr, "mieb-eval report: --baseline %s: no such model in the result folders\n", baseline);
        rc = MIEB_EXIT_USAGE;
        goto done;
    }
    st = mieb_report_page(&lb, docs, base, bench ? bench->name : NULL, &page);
    if (st == MIEB_OK)
        st = mieb_write_file_atomic(html, page.buf.data, page.buf.len);
    if (st != MIEB_OK) {
        fprintf(stderr, "mieb-eval report: %s: %s\n", html, mieb_last_error());
        rc = MIEB_EXIT_FATAL;
        goto done;
    }
    printf("%s\n", html);
    if (n_bad) {
        fprintf(stderr, "mieb-eval report: %d result file(s) could not be read (see above)\n", n_bad);
        rc = MIEB_EXIT_TASK_FAILED;
    }
done:
    mieb_html_free(&page);
    mieb_rp_docs_free(docs, n_models * n_tasks);
    mieb_leaderboard_free(&lb);
    free(tasks);
    mieb_model_results_free(models, n_models);
    mieb_registry_free(&reg);
    return rc;
}
