/*
 * cmd_report.c - `mieb-eval report DIR [DIR ...] [-b BENCHMARK] --html OUT.html`: one
 * self-contained HTML page (inline CSS and SVG, no script, no external reference) over
 * the models' result folders: the leaderboard summary (the numbers of `summary`), charts
 * per task type, a radar, per-task deltas, linear-probe spread, recall@k curves,
 * per-language scores and time per task and stage (host/report/, over the library's board,
 * host/board/).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/compare.h"
#include "cli_options.h"
#include "cli_start.h"
#include "cli_registry.h"
#include "commands.h"
#include "../board/board_report.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../core/fileutil.h"

/* --per-query MODEL=DIR, --resamples, --seed, --alpha, and what they give. */
struct ci_opts {
    const char *spec[256];
    int n;
    long long R, seed;
    double alpha;
};

/* --per-query MODEL=DIR: appended to the list (its model and folder are checked once the
   result folders are read). */
static bool per_query_ok(const char *cmd, const char *opt, const char *val, void *field)
{
    struct ci_opts *o = field;
    const char *eq = strchr(val, '=');
    if (!eq || eq == val || !eq[1] || o->n == (int)(sizeof o->spec / sizeof *o->spec)) {
        mieb_fprintf_esc(stderr, "mieb-eval %s: %s %s: expected MODEL=DIR\n", cmd, opt, val);
        return false;
    }
    o->spec[o->n++] = val;
    return true;
}

/* For every model named by --per-query other than the baseline, compare it with the baseline
   (cmp[row], NULL elsewhere). 2: a usage error (reported), 4: out of memory, 0: done. */
static int compare_models(const struct ci_opts *o, const struct mieb_registry *reg, const struct mieb_board *bd,
                          int base, struct mieb_cmp **cmp)
{
    const struct mieb_leaderboard *lb = &bd->lb;
    const char **dir = calloc((size_t)lb->n_models + 1, sizeof *dir);
    int rc = 0;
    if (!dir)
        return MIEB_EXIT_FATAL;
    for (int k = 0; k < o->n && !rc; k++) {
        const char *eq = strchr(o->spec[k], '=');
        char name[1024];
        snprintf(name, sizeof name, "%.*s", (int)(eq - o->spec[k]), o->spec[k]);
        int row = mieb_board_find_model(bd, name, NULL);
        if (row < 0 || !mieb_dir_exists(eq + 1)) {
            mieb_fprintf_esc(stderr, "mieb-eval report: --per-query %s: %s\n", o->spec[k],
                    row < 0 ? "no such model in the result folders" : "no such folder");
            rc = MIEB_EXIT_USAGE;
        } else {
            dir[row] = eq + 1;
        }
    }
    if (!rc && !dir[base]) {
        mieb_fprintf_esc(stderr, "mieb-eval report: --per-query: the baseline %s has no per-query folder\n",
                lb->rows[base].model->name);
        rc = MIEB_EXIT_USAGE;
    }
    for (int i = 0; !rc && i < lb->n_models; i++) {
        if (i == base || !dir[i])
            continue;
        if (!(cmp[i] = calloc(1, sizeof *cmp[i])) ||
            mieb_cmp_run(cmp[i], reg, bd->tasks, bd->n_tasks, dir[i], dir[base], o->R, o->alpha, (uint32_t)o->seed) != MIEB_OK) {
            mieb_fprintf_esc(stderr, "mieb-eval report: %s\n", mieb_last_error());
            rc = MIEB_EXIT_FATAL;
            break;
        }
        for (int k = 0; k < cmp[i]->n_notes; k++)
            mieb_fprintf_esc(stderr, "mieb-eval report: %s against the baseline: %s %s: %s\n", lb->rows[i].model->name,
                    cmp[i]->notes[k].is_error ? "error:" : "no interval for", cmp[i]->notes[k].task,
                    cmp[i]->notes[k].reason);
    }
    free(dir);
    return rc;
}

/* The command line of report. */
struct report_args {
    const char *dirs[256], *bench_name, *html, *registry, *baseline, *published;
    int n_dirs;
    long long top;
    struct ci_opts ci;
};

/* A result folder: a path, one of at most 256. */
static enum mieb_cli_parsed result_folder(const char *cmd, const char *word, void *opts)
{
    struct report_args *ra = opts;
    int cap = (int)(sizeof ra->dirs / sizeof *ra->dirs);
    if (!mieb_cli_path(cmd, "result folder", word))
        return MIEB_CLI_BAD_SAID;
    if (ra->n_dirs == cap) {
        mieb_fprintf_esc(stderr, "mieb-eval %s: at most %d result folders\n", cmd, cap);
        return MIEB_CLI_BAD_SAID;
    }
    ra->dirs[ra->n_dirs++] = word;
    return MIEB_CLI_GO;
}

#define RA(f) offsetof(struct report_args, f)
static const struct mieb_cli_opt report_opts[] = {
    {"--html", .kind = MIEB_OPT_PATH, .at = RA(html),
     .help = "  --html FILE        the page to write (atomically)\n"},
    {"--benchmark", "-b", .kind = MIEB_OPT_STRING, .at = RA(bench_name),
     .help = "  -b, --benchmark B  a benchmark's task list (as for summary); default: every registry\n"
             "                     task found in any result folder\n"},
    {"--baseline", .kind = MIEB_OPT_STRING, .at = RA(baseline),
     .help = "  --baseline MODEL   the model deltas are taken against (its name, or name@revision);\n"
             "                     default: the first model found in the first DIR\n"},
    {"--published", .kind = MIEB_OPT_PATH, .at = RA(published),
     .help = "  --published DIR    the published results (as for summary): the page ranks your models\n"
             "                     among them, shows yours starred and highlighted with the --top best\n"
             "                     published ones, and opens with where yours stand among all of them\n"},
    {"--top", .kind = MIEB_OPT_INT, .at = RA(top), .width = sizeof(long long), .lo = 0, .hi = 100000, .def = "15",
     .help = "  --top N            with --published: the N best published models shown (default 15)\n"},
    {"--registry", .kind = MIEB_OPT_PATH, .at = RA(registry),
     .help = "  --registry FILE    tasks.json to use (benchmarks.json is read beside it)\n"},
    {"--per-query", .kind = MIEB_OPT_CHECK, .at = RA(ci), .check = per_query_ok,
     .help = "  --per-query MODEL=DIR  the `run --per-query` folder of a model (name or name@revision);\n"
             "                     give the baseline's and others': each other model's deltas then show\n"
             "                     the paired bootstrap interval and '*' where p < alpha, exactly as\n"
             "                     `mieb-eval compare DIR BASELINE_DIR -t <the page's tasks> --seed S`\n"
             "                     computes them (README \"Comparing two models\")\n"},
    {"--resamples", .kind = MIEB_OPT_INT, .at = RA(ci.R), .width = sizeof(long long), .lo = 1,
     .hi = MIEB_CLI_RESAMPLES_MAX, .def = "1000",
     .help = "  --resamples N      bootstrap replicates (default 1000)\n"},
    {"--seed", .kind = MIEB_OPT_INT, .at = RA(ci.seed), .width = sizeof(long long), .lo = 0, .hi = MIEB_CLI_SEED_MAX,
     .def = "42", .help = "  --seed S           numpy RandomState seed, 0 .. 2^32-1 (default 42)\n"},
    {"--alpha", .kind = MIEB_OPT_CHECK, .at = RA(ci.alpha), .check = mieb_cli_alpha, .def = "0.05",
     .help = "  --alpha A          1 - confidence level (default 0.05)\n"},
    {0}};
#undef RA

const struct mieb_cli_spec mieb_report_spec = {
    .name = "report",
    .opts = report_opts,
    .size = sizeof(struct report_args),
    .head = "usage: mieb-eval report DIR [DIR ...] --html OUT.html [-b BENCHMARK] [--baseline MODEL]\n"
            "                       [--published DIR [--top N]] [--per-query MODEL=DIR ...]\n"
            "                       [--resamples N] [--seed S] [--alpha A]\n"
            "\n"
            "Writes one self-contained HTML page (inline CSS and SVG; no script, nothing fetched)\n"
            "about the models whose mteb result folders are given (as for `summary`): the leaderboard\n"
            "summary, a bar chart per task type, a radar over task types, the per-task table with\n"
            "deltas against a baseline model, linear-probe spread across experiments, recall@k\n"
            "curves of retrieval tasks, per-language scores of multilingual tasks, and the time\n"
            "spent per task and stage (evaluation_time, evaluation_phases). Prints the page's path.\n"
            "\n",
    .tail = "\n"
            "Exit status: 0 ok; 1 some result file could not be read (named on stderr) or no\n"
            "result folder was found; 2 bad command line, unknown baseline or --per-query model, or\n"
            "no per-query folder for the baseline; 4 registry unreadable or the page could not be\n"
            "written.\n",
    .unknown = "option",
    .missing = MIEB_CLI_BAD_SAID,
    .bad_value = MIEB_CLI_BAD_SAID,
    .positional = result_folder,
};

static enum mieb_cli_parsed parse_args(int argc, char **argv, struct report_args *ra)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_report_spec, argc, argv, ra);
    if (r == MIEB_CLI_GO && (!ra->n_dirs || !ra->html)) {
        mieb_fprintf_esc(stderr, "mieb-eval report: %s\n", !ra->n_dirs ? "name at least one result folder" : "--html FILE is needed");
        return MIEB_CLI_BAD;
    }
    return r;
}

/* The board of the folders (board/board.h) as one page, with --per-query's intervals. */
int mieb_cmd_report(int argc, char **argv)
{
    struct report_args ra;
    int rc, base = 0;
    if (!mieb_cli_start(&mieb_report_spec, parse_args(argc, argv, &ra), NULL, &rc))
        return rc;
    struct mieb_registry reg;
    struct mieb_board bd;
    struct mieb_cmp **cmp = NULL; /* [n_models] with --per-query */
    if (!mieb_cli_registry("report", ra.registry, NULL, &reg))
        return MIEB_EXIT_FATAL;
    struct mieb_board_opts bo = {.benchmark = ra.bench_name, .published = ra.published, .top = (int)ra.top,
                                 .with_docs = 1};
    mieb_status st = mieb_board_open(&bd, &reg, &bo, ra.dirs, ra.n_dirs);
    if (st != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval report: %s\n", mieb_last_error());
        rc = bd.unknown_benchmark ? MIEB_EXIT_USAGE : st == MIEB_ERR_NOT_FOUND ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_FATAL;
    } else if ((base = mieb_board_find_model(&bd, ra.baseline, ra.dirs[0])) < 0) {
        mieb_fprintf_esc(stderr, "mieb-eval report: --baseline %s: no such model in the result folders\n", ra.baseline);
        rc = MIEB_EXIT_USAGE;
    } else if (ra.ci.n && !(cmp = calloc((size_t)bd.n_models + 1, sizeof *cmp))) {
        rc = MIEB_EXIT_FATAL;
    } else if (!ra.ci.n || (rc = compare_models(&ra.ci, &reg, &bd, base, cmp)) == 0) {
        if (mieb_board_write_report(&bd, base, (const struct mieb_cmp *const *)cmp, ra.ci.alpha, ra.html) != MIEB_OK) {
            mieb_fprintf_esc(stderr, "mieb-eval report: %s: %s\n", ra.html, mieb_last_error());
            rc = MIEB_EXIT_FATAL;
        } else {
            mieb_printf_esc("%s\n", ra.html);
            if (bd.n_bad) {
                mieb_fprintf_esc(stderr, "mieb-eval report: %d result file(s) could not be read (see above)\n",
                                 bd.n_bad);
                rc = MIEB_EXIT_TASK_FAILED;
            }
        }
    }
    for (int i = 0; cmp && i < bd.n_models; i++)
        if (cmp[i]) {
            mieb_cmp_free(cmp[i]);
            free(cmp[i]);
        }
    free(cmp);
    mieb_board_free(&bd);
    mieb_registry_free(&reg);
    return rc;
}
