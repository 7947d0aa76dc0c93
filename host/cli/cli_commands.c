/* cli_commands.c - the table of mieb-eval's commands (cli_commands.h). */
#include "cli_commands.h"

#include <string.h>

#include "commands.h"
#include "run_options.h"

const struct mieb_command mieb_commands[] = {
    {"run", mieb_cmd_run, &mieb_run_spec, 8, "score tasks from task-data and embedding files, write mteb results"},
    {"synth", mieb_cmd_synth, &mieb_synth_spec, 8,
     "generate a deterministic synthetic suite (task data + embeddings)"},
    {"list-tasks", mieb_cmd_list_tasks, &mieb_list_tasks_spec, 12,
     "list the registry's tasks (type, family support, splits, subsets, main score)"},
    {"inspect", mieb_cmd_inspect, &mieb_inspect_spec, 12,
     "check the task data and embeddings a run needs, before scoring"},
    {"summary", mieb_cmd_summary, &mieb_summary_spec, 12,
     "MIEB leaderboard numbers (Mean(TaskType), Borda rank) of result folders"},
    {"merge", mieb_cmd_merge, &mieb_merge_spec, 12,
     "merge corpus parts (run --corpus-parts) of retrieval tasks into results files"},
    {"report", mieb_cmd_report, &mieb_report_spec, 12,
     "a self-contained HTML report (charts, deltas, time) of result folders"},
    {"compare", mieb_cmd_compare, &mieb_compare_spec, 12,
     "paired bootstrap CIs and p-values of model A vs B from --per-query folders"},
    {"parity", mieb_cmd_parity, &mieb_parity_spec, 12,
     "compare two result folders key by key with per-family tolerances"},
    {0}};

const struct mieb_command *mieb_command_named(const char *name)
{
    for (const struct mieb_command *c = mieb_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}
