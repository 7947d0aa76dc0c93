/**
 * cli_registry.h - the task registry as the commands that read it open it (cli_registry.c).
 */
#ifndef MIEB_CLI_REGISTRY_H
#define MIEB_CLI_REGISTRY_H

#include <stdbool.h>

#include "cli_options.h"
#include "../config/registry.h"

/**
 * The registry of --registry PATH, or the default one (MIEB_REGISTRY, else the built-in) when
 * path is NULL, into *reg: true; false after saying why on stderr, and the command exits
 * MIEB_EXIT_FATAL (an unreadable registry is no usage error). A command that logs (log: its
 * -v/-q/--log-format, run and merge) says it as its other errors, through the log: "mieb-eval:
 * error: <why>", or a JSON line under --log-format json; any other (log NULL) says one line
 * "mieb-eval <cmd>: <why>".
 */
bool mieb_cli_registry(const char *cmd, const char *path, const struct mieb_cli_log *log, struct mieb_registry *reg);

#endif
