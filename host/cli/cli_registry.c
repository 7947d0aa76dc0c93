/* cli_registry.c - opening the task registry for a command (cli_registry.h). */
#include "cli_registry.h"

#include <stdio.h>

#include "../core/escape.h"

bool mieb_cli_registry(const char *cmd, const char *path, struct mieb_registry *reg)
{
    mieb_status st = path ? mieb_registry_load(path, reg) : mieb_registry_load_default(reg);
    if (st == MIEB_OK)
        return true;
    mieb_fprintf_esc(stderr, "mieb-eval %s: %s\n", cmd, mieb_last_error());
    return false;
}
