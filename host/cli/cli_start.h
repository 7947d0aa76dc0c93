/**
 * cli_start.h - the opening every command shares (cli_start.c).
 *
 * A command parses its own arguments into its own options (their meaning stays with the
 * command) and says what it found; mieb_cli_start acts on that the same way for every
 * command: --help printed on stdout, a usage error closed with one line of synopsis and
 * where the whole help is, -v and -q refused together, and the log sink installed for the
 * commands that log. A command's main then reads:
 *
 *     struct my_opts o;
 *     int rc;
 *     if (!mieb_cli_start(&my_spec, parse_args(argc, argv, &o), &o.log, &rc))
 *         return rc;
 *     return do_the_work(&o);
 */
#ifndef MIEB_CLI_START_H
#define MIEB_CLI_START_H

#include <stdbool.h>
#include <stdio.h>

#include "cli_options.h"

/**
 * The opening: true when the command is to run (its logging set up from *log, when log is
 * not NULL); false when it ends here with *exit_status (0 after --help, MIEB_EXIT_USAGE
 * after a usage error, the messages printed).
 */
bool mieb_cli_start(const struct mieb_cli_spec *cmd, enum mieb_cli_parsed parsed, const struct mieb_cli_log *log,
                    int *exit_status);

#endif
