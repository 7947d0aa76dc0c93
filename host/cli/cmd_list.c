/*
 * cmd_list.c - `mieb-eval list-tasks [-b BENCHMARK] [--task-types T...] [--json]`: one line
 * per registry task (or per task of a benchmark, in mteb's order): name, type, whether this
 * build has a driver for its family, eval splits, number of subsets, main score.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_options.h"
#include "cli_start.h"
#include "cli_registry.h"
#include "commands.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../families/family.h"

/* True when type is one of the comma-separated list (NULL list: every type). */
static bool type_selected(const char *list, const char *type)
{
    if (!list)
        return true;
    size_t n = strlen(type);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, type, n))
            return true;
        p += len + (comma ? 1 : 0);
    }
    return false;
}

/* Every name in the list must be a type some registry task has. */
static bool types_known(const struct mieb_registry *reg, const char *list)
{
    char name[128];
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool known = false;
        for (int t = 0; t < reg->n_tasks && !known; t++)
            known = strlen(reg->tasks[t].type) == len && !strncmp(reg->tasks[t].type, p, len);
        if (!known) {
            snprintf(name, sizeof name, "%.*s", (int)(len < 100 ? len : 100), p);
            mieb_fprintf_esc(stderr, "mieb-eval list-tasks: unknown task type '%s'\n", name);
            return false;
        }
        p += len + (comma ? 1 : 0);
    }
    return true;
}

static void print_task(const struct mieb_task *t, cJSON *json_list)
{
    bool supported = t->is_aggregate ? mieb_family_driver(MIEB_FAMILY_STS) != NULL
                                     : mieb_family_driver(t->family) != NULL;
    if (json_list) {
        cJSON *o = cJSON_CreateObject(), *splits = cJSON_CreateArray();
        cJSON_AddStringToObject(o, "name", t->name);
        cJSON_AddStringToObject(o, "type", t->type);
        cJSON_AddBoolToObject(o, "supported", supported);
        for (int i = 0; i < t->n_splits; i++)
            cJSON_AddItemToArray(splits, cJSON_CreateString(t->splits[i]));
        cJSON_AddItemToObject(o, "eval_splits", splits);
        cJSON_AddNumberToObject(o, "n_subsets", t->n_subsets);
        cJSON *subsets = cJSON_AddArrayToObject(o, "hf_subsets");
        for (int i = 0; i < t->n_subsets; i++)
            cJSON_AddItemToArray(subsets, cJSON_CreateString(t->subsets[i]));
        cJSON_AddStringToObject(o, "main_score", t->main_score);
        cJSON_AddBoolToObject(o, "aggregate", t->is_aggregate);
        cJSON_AddItemToArray(json_list, o);
        return;
    }
    char splits[128] = "";
    size_t used = 0;
    for (int i = 0; i < t->n_splits && used < sizeof splits; i++) {
        int w = snprintf(splits + used, sizeof splits - used, "%s%s", i ? "," : "", t->splits[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    mieb_printf_esc("%-48s %-30s %-11s %-15s %4d  %s%s\n", t->name, t->type, supported ? "supported" : "unsupported",
           splits, t->n_subsets, t->main_score, t->is_aggregate ? " (aggregate)" : "");
}

/* The command line of list-tasks. */
struct list_args {
    const char *bench_name, *types, *registry;
    bool json;
};

#define LA(f) offsetof(struct list_args, f)
static const struct mieb_cli_opt list_opts[] = {
    {"--benchmark", "-b", .kind = MIEB_OPT_STRING, .at = LA(bench_name),
     .help = "  -b, --benchmark B     only the tasks of a benchmark, in mteb's order (MIEB(eng),\n"
             "                        MIEB(Multilingual), MIEB(lite), MIEB(Img), or eng, multilingual, lite, img)\n"},
    /* one comma-separated word (main joins the words); empty, it would list every task as if
       no type had been named */
    {"--task-types", .kind = MIEB_OPT_STRING, .at = LA(types), .empty = "a comma-separated list of task types",
     .flags = MIEB_OPT_JOINED, .help = "  --task-types T...     only tasks of these mteb types (e.g. Any2AnyRetrieval ImageClustering)\n"},
    {"--json", .kind = MIEB_OPT_FLAG, .at = LA(json)},       /* described above the options */
    {"--registry", .kind = MIEB_OPT_PATH, .at = LA(registry)}, /* in the synopsis */
    {0}};
#undef LA

const struct mieb_cli_spec mieb_list_tasks_spec = {
    .name = "list-tasks",
    .opts = list_opts,
    .size = sizeof(struct list_args),
    .head = "usage: mieb-eval list-tasks [-b BENCHMARK] [--task-types T...] [--json] [--registry FILE]\n"
            "\n"
            "One line per task: name, type, 'supported' when this build can score the task's family\n"
            "(else 'unsupported'), eval splits, number of hf_subsets, main score; '(aggregate)' marks\n"
            "tasks computed from another task's results. --json prints a JSON list instead.\n"
            "\n",
    .tail = "\n"
            "Exit status: 0 ok; 2 bad command line (unknown option, benchmark or task type, an empty\n"
            "value); 4 registry unreadable.\n",
    .unknown = "argument",
    .missing = MIEB_CLI_BAD,
    .bad_value = MIEB_CLI_BAD_SAID,
};

int mieb_cmd_list_tasks(int argc, char **argv)
{
    struct list_args la;
    int rc;
    if (!mieb_cli_start(&mieb_list_tasks_spec, mieb_cli_parse(&mieb_list_tasks_spec, argc, argv, &la), NULL, &rc))
        return rc;
    const char *bench_name = la.bench_name, *types = la.types;
    bool json = la.json;
    struct mieb_registry reg;
    if (!mieb_cli_registry("list-tasks", la.registry, NULL, &reg))
        return MIEB_EXIT_FATAL;
    const struct mieb_benchmark *b = NULL;
    if (bench_name && !(b = mieb_registry_benchmark(&reg, bench_name))) {
        mieb_fprintf_esc(stderr, "mieb-eval list-tasks: %s\n", mieb_last_error());
        rc = MIEB_EXIT_USAGE;
    } else if (types && !types_known(&reg, types)) {
        rc = MIEB_EXIT_USAGE;
    } else {
        cJSON *list = json ? cJSON_CreateArray() : NULL;
        int n = b ? b->n_tasks : reg.n_tasks;
        for (int i = 0; i < n; i++) {
            const struct mieb_task *t = b ? b->tasks[i] : &reg.tasks[i];
            if (type_selected(types, t->type))
                print_task(t, list);
        }
        if (list) {
            char *text = cJSON_Print(list);
            if (text)
                puts(text); /* JSON: cJSON escaped its strings */
            free(text);
            cJSON_Delete(list);
        }
    }
    mieb_registry_free(&reg);
    return rc;
}
