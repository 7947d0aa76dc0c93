/**
 * cli_registry.h - the task registry as the commands that read it open it (cli_registry.c).
 */
#ifndef MIEB_CLI_REGISTRY_H
#define MIEB_CLI_REGISTRY_H

#include <stdbool.h>

#include "../config/registry.h"

/**
 * The registry of --registry PATH, or the default one (MIEB_REGISTRY, else the built-in) when
 * path is NULL, into *reg: true; false after one line "mieb-eval <cmd>: <why>" on stderr, and
 * the command exits MIEB_EXIT_FATAL (an unreadable registry is no usage error).
 */
bool mieb_cli_registry(const char *cmd, const char *path, struct mieb_registry *reg);

#endif
