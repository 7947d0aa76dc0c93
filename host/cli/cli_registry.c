/* cli_registry.c - opening the task registry for a command (cli_registry.h). */
#include "cli_registry.h"

#include <stdio.h>

#include "progress.h"
#include "../core/escape.h"

bool mieb_cli_registry(const char *cmd, const char *path, const struct mieb_cli_log *log, struct mieb_registry *reg)
{
    mieb_status st = path ? mieb_registry_load(path, reg) : mieb_registry_load_default(reg);
    if (st == MIEB_OK)
        return true;
    if (log) /* the log's sink was installed from *log by mieb_cli_start */
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
    else
        mieb_fprintf_esc(stderr, "mieb-eval %s: %s\n", cmd, mieb_last_error());
    return false;
}
