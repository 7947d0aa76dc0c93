/*
 * cmd_summary.c - `mieb-eval summary DIR [DIR ...] [-b BENCHMARK] [--csv FILE] [--json FILE]`:
 * reads mteb result folders and prints the MIEB leaderboard numbers of every model
 * (Mean(TaskType), Mean(Task), per-type means, Borda rank: the library's board,
 * host/board/), sorted as the leaderboard sorts them; writes CSV and JSON on request.
 */
#include <stddef.h>
#include <stdio.h>

#include "cli_options.h"
#include "cli_start.h"
#include "cli_registry.h"
#include "commands.h"
#include "../board/board_summary.h"
#include "../config/registry.h"
#include "../core/escape.h"

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

/* The board of the folders (board/board.h): its table on stdout, CSV and JSON on request. The
   task set: a benchmark's list, or every registry task that some folder has a file for. */
int mieb_cmd_summary(int argc, char **argv)
{
    struct summary_args sa;
    int rc;
    if (!mieb_cli_start(&mieb_summary_spec, parse_args(argc, argv, &sa), NULL, &rc))
        return rc;
    struct mieb_registry reg;
    struct mieb_board bd;
    if (!mieb_cli_registry("summary", sa.registry, NULL, &reg))
        return MIEB_EXIT_FATAL;
    struct mieb_board_opts bo = {.benchmark = sa.bench_name, .published = sa.published, .top = -1};
    mieb_status st = mieb_board_open(&bd, &reg, &bo, sa.dirs, sa.n_dirs);
    if (st != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval summary: %s\n", mieb_last_error());
        rc = bd.unknown_benchmark ? MIEB_EXIT_USAGE
             : st == MIEB_ERR_NOT_FOUND ? MIEB_EXIT_TASK_FAILED
                                        : MIEB_EXIT_FATAL;
    } else {
        mieb_board_print_table(stdout, &bd);
        if (sa.csv && mieb_board_write_csv(&bd, sa.csv) != MIEB_OK) {
            mieb_fprintf_esc(stderr, "mieb-eval summary: %s: %s\n", sa.csv, mieb_last_error());
            rc = MIEB_EXIT_FATAL;
        }
        if (sa.json && mieb_board_write_json(&bd, sa.json) != MIEB_OK) {
            mieb_fprintf_esc(stderr, "mieb-eval summary: %s: %s\n", sa.json, mieb_last_error());
            rc = MIEB_EXIT_FATAL;
        }
        if (rc == MIEB_EXIT_OK && bd.n_bad) {
            mieb_fprintf_esc(stderr, "mieb-eval summary: %d result file(s) could not be read (see above)\n", bd.n_bad);
            rc = MIEB_EXIT_TASK_FAILED;
        }
    }
    mieb_board_free(&bd);
    mieb_registry_free(&reg);
    return rc;
}
