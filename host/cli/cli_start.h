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

#include "cli/progress.h"

/** A command as the opening needs it: its name and its --help (cli_options.h). */
struct mieb_cli_spec;

/** What a command's parser found on its command line. */
enum mieb_cli_parsed {
    MIEB_CLI_GO,       /* a good command line: the command runs */
    MIEB_CLI_HELP,     /* -h or --help: the help on stdout, exit status 0 */
    MIEB_CLI_BAD,      /* a usage error, said on stderr; the synopsis line and the --help hint follow */
    MIEB_CLI_BAD_SAID, /* a usage error said in full on stderr (a bad value, named): nothing follows */
};

/** -v/--verbose, -q/--quiet and --log-format, for the commands that log (run, merge). */
struct mieb_cli_log {
    bool verbose, quiet;
    enum mieb_log_format format;
};

/** -h or --help. */
bool mieb_cli_is_help(const char *arg);

/**
 * The opening: true when the command is to run (its logging set up from *log, when log is
 * not NULL); false when it ends here with *exit_status (0 after --help, MIEB_EXIT_USAGE
 * after a usage error, the messages printed).
 */
bool mieb_cli_start(const struct mieb_cli_spec *cmd, enum mieb_cli_parsed parsed, const struct mieb_cli_log *log,
                    int *exit_status);

#endif
