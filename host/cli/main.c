/* main.c - mieb-eval entry point: picks the subcommand; the only place that exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/escape.h"
#include "../cpu/blas_tune.h"
#include "commands.h"
#include "../json/json_alloc.h"

static void usage(FILE *f)
{
    fputs("usage: mieb-eval <command> [options]\n"
          "\n"
          "commands:\n"
          "  run     score tasks from task-data and embedding files, write mteb results\n"
          "  synth   generate a deterministic synthetic suite (task data + embeddings)\n"
          "  list-tasks  list the registry's tasks (type, family support, splits, subsets, main score)\n"
          "  inspect     check the task data and embeddings a run needs, before scoring\n"
          "  summary     MIEB leaderboard numbers (Mean(TaskType), Borda rank) of result folders\n"
          "  merge       merge corpus parts (run --corpus-parts) of retrieval tasks into results files\n"
          "  report      a self-contained HTML report (charts, deltas, time) of result folders\n"
          "  compare     paired bootstrap CIs and p-values of model A vs B from --per-query folders\n"
          "  parity      compare two result folders key by key with per-family tolerances\n"
          "\n"
          "'mieb-eval <command> --help' describes each command. Options may be written --opt value or\n"
          "--opt=value, and mteb's spellings with underscores (--output_folder) are accepted. A list\n"
          "option (-t, --task-types, --eval-splits, -l) takes its values as words or comma-separated,\n"
          "in every command: -t A B and -t A,B are the same.\n"
          "\n"
          "Exit status: each command's help lists its own; 2 for an unknown command.\n",
          f);
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    /* Before any BLAS call: make OpenBLAS use fast kernels on CPUs it does not know. */
    mieb_blas_tune_startup(argc, argv);
    mieb_json_alloc_hooks(); /* a JSON allocation failure must never leave a key out of a result */
    int n = 0;
    char **args = mieb_cli_normalize(argc, argv, 1, &n);
    if (!args) {
        fputs("mieb-eval: out of memory\n", stderr);
        return MIEB_EXIT_FATAL;
    }
    int rc = dispatch(n, args);
    free(args);
    return rc;
}

static int dispatch(int argc, char **argv)
{

    if (argc < 2) {
        usage(stderr);
        return MIEB_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return MIEB_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        mieb_printf_esc("mieb-eval %s\n", MIEB_VERSION);
        return MIEB_EXIT_OK;
    }
    if (!mieb_cli_refuse_controls(argv[1], argc - 1, argv + 1))
        return MIEB_EXIT_USAGE;
    if (!strcmp(argv[1], "run"))
        return mieb_cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "synth"))
        return mieb_cmd_synth(argc - 1, argv + 1);
    if (!strcmp(argv[1], "list-tasks"))
        return mieb_cmd_list_tasks(argc - 1, argv + 1);
    if (!strcmp(argv[1], "inspect"))
        return mieb_cmd_inspect(argc - 1, argv + 1);
    if (!strcmp(argv[1], "summary"))
        return mieb_cmd_summary(argc - 1, argv + 1);
    if (!strcmp(argv[1], "merge"))
        return mieb_cmd_merge(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report"))
        return mieb_cmd_report(argc - 1, argv + 1);
    if (!strcmp(argv[1], "compare"))
        return mieb_cmd_compare(argc - 1, argv + 1);
    if (!strcmp(argv[1], "parity"))
        return mieb_cmd_parity(argc - 1, argv + 1);
    mieb_fprintf_esc(stderr, "mieb-eval: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return MIEB_EXIT_USAGE;
}
