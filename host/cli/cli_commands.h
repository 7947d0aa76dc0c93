/**
 * cli_commands.h - the commands of mieb-eval in one table (cli_commands.c). main's dispatch,
 * the list of commands in its --help, the list options it names, and the reading of each
 * command's lists (cli_style.c, through the command's option table) all come from it: a new
 * command is one entry here.
 */
#ifndef MIEB_CLI_COMMANDS_TABLE_H
#define MIEB_CLI_COMMANDS_TABLE_H

#include "cli_options.h"

struct mieb_command {
    const char *name;                  /* "list-tasks", as typed after mieb-eval */
    int (*run)(int argc, char **argv); /* its main (argv[0] the command): an exit status (commands.h) */
    const struct mieb_cli_spec *spec;  /* its command line: the option table its parser reads */
    int column;                        /* the width of the name's column on its line of the top-level
                                          --help (8 for run and synth, 12 for the rest: the recorded
                                          help, tests/cli_record) */
    const char *summary;               /* the rest of that line */
};

/** Every command, in the order the top-level --help lists them; the last entry's name is NULL. */
extern const struct mieb_command mieb_commands[];

/** The command called name, or NULL. */
const struct mieb_command *mieb_command_named(const char *name);

#endif
