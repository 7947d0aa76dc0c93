/* main.c - mieb-eval entry point: picks the subcommand; the only place that exits. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/escape.h"
#include "../cpu/blas_tune.h"
#include "cli_commands.h"
#include "commands.h"
#include "../json/json_alloc.h"

/* Whether opt is the first list option spelled as it is (its short name, else its name) among
   the commands' tables up to opt, so that the help names each spelling once. */
static bool first_list_spelling(const struct mieb_command *cmd, const struct mieb_cli_opt *opt)
{
    const char *s = opt->short_name ? opt->short_name : opt->name;
    for (const struct mieb_command *c = mieb_commands; c <= cmd; c++)
        for (const struct mieb_cli_opt *o = c->spec->opts; o->name && o != opt; o++)
            if (mieb_cli_takes_list(o) && !strcmp(s, o->short_name ? o->short_name : o->name))
                return false;
    return true;
}

/* The top-level help: the commands of cli_commands.c's table, and every list option of theirs. */
static void usage(FILE *f)
{
    fputs("usage: mieb-eval <command> [options]\n"
          "\n"
          "commands:\n",
          f);
    for (const struct mieb_command *c = mieb_commands; c->name; c++)
        fprintf(f, "  %-*s%s\n", c->column, c->name, c->summary);
    fputs("\n"
          "'mieb-eval <command> --help' describes each command. Options may be written --opt value or\n"
          "--opt=value, and mteb's spellings with underscores (--output_folder) are accepted. A list\n"
          "option (",
          f);
    const char *sep = "";
    for (const struct mieb_command *c = mieb_commands; c->name; c++)
        for (const struct mieb_cli_opt *o = c->spec->opts; o->name; o++)
            if (mieb_cli_takes_list(o) && first_list_spelling(c, o)) {
                fprintf(f, "%s%s", sep, o->short_name ? o->short_name : o->name);
                sep = ", ";
            }
    fputs(") takes its values as words or comma-separated,\n"
          "in every command: -t A B and -t A,B are the same.\n"
          "\n"
          "Exit status: each command's help lists its own; 2 for an unknown command.\n",
          f);
}

static int dispatch(int argc, char **argv, const struct mieb_command *cmd);

int main(int argc, char **argv)
{
    /* Before any BLAS call: make OpenBLAS use fast kernels on CPUs it does not know. */
    mieb_blas_tune_startup(argc, argv);
    mieb_json_alloc_hooks(); /* a JSON allocation failure must never leave a key out of a result */
    /* the command's table says which of its options take lists (cli_style.c) */
    const struct mieb_command *cmd = argc > 1 ? mieb_command_named(argv[1]) : NULL;
    int n = 0;
    char **args = mieb_cli_normalize(argc, argv, 1, cmd ? cmd->spec : NULL, &n);
    if (!args) {
        fputs("mieb-eval: out of memory\n", stderr);
        return MIEB_EXIT_FATAL;
    }
    int rc = dispatch(n, args, cmd);
    free(args);
    return rc;
}

static int dispatch(int argc, char **argv, const struct mieb_command *cmd)
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
    if (cmd)
        return cmd->run(argc - 1, argv + 1);
    mieb_fprintf_esc(stderr, "mieb-eval: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return MIEB_EXIT_USAGE;
}
