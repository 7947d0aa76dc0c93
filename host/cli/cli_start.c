/* cli_start.c - the opening every command shares: help, usage errors, logging (cli_start.h). */
#include "cli_start.h"

#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "commands.h"
#include "../core/escape.h"

/* On a usage error: the first line of the command's synopsis and where the whole help is, on stderr. */
static void brief_usage(const struct mieb_cli_spec *cmd)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        mieb_cli_help(cmd, mem);
        fclose(mem);
    }
    /* one line: the synopsis's first line, not the whole help */
    const char *end = text ? strchr(text, '\n') : NULL;
    if (text && end)
        mieb_fprintf_esc(stderr, "%.*s%s\n", (int)(end - text), text, end[1] && end[1] != '\n' ? " ..." : "");
    mieb_fprintf_esc(stderr, "Try 'mieb-eval %s --help' for the options and exit statuses.\n", cmd->name);
    free(text);
}

const char *const mieb_cli_log_formats[] = {"text", "json", NULL};

/* a CHOICE option stores its index in an int: the enum must be one */
_Static_assert(sizeof(enum mieb_log_format) == sizeof(int), "--log-format is stored as an int");

bool mieb_cli_start(const struct mieb_cli_spec *cmd, enum mieb_cli_parsed parsed, const struct mieb_cli_log *log,
                    int *exit_status)
{
    if (parsed == MIEB_CLI_GO && log && log->verbose && log->quiet) {
        mieb_fprintf_esc(stderr, "mieb-eval %s: -v and -q exclude each other\n", cmd->name);
        parsed = MIEB_CLI_BAD;
    }
    if (parsed == MIEB_CLI_HELP)
        mieb_cli_help(cmd, stdout);
    else if (parsed == MIEB_CLI_BAD)
        brief_usage(cmd);
    if (parsed != MIEB_CLI_GO) {
        *exit_status = parsed == MIEB_CLI_HELP ? MIEB_EXIT_OK : MIEB_EXIT_USAGE;
        return false;
    }
    if (log)
        mieb_cli_log_init(log->format, log->verbose ? MIEB_LOG_DEBUG : log->quiet ? MIEB_LOG_WARN : MIEB_LOG_INFO);
    *exit_status = MIEB_EXIT_OK;
    return true;
}
