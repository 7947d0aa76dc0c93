/**
 * registry.h - the task registry as the commands load it: the task list of configs/tasks.json
 * (task_list.h: the types and what a task answers) and, beside it, configs/benchmarks.json
 * (benchmarks.h).
 */
#ifndef MIEB_CONFIG_REGISTRY_H
#define MIEB_CONFIG_REGISTRY_H

#include "benchmarks.h"
#include "task_list.h"

/**
 * Load a registry file (configs/tasks.json format) and, when a benchmarks.json lies in the
 * same directory, the benchmark definitions (a benchmarks.json that is present but invalid,
 * or names a task the registry lacks, is an error naming that file).
 */
mieb_status mieb_registry_load(const char *path, struct mieb_registry *out);
/** Load the default registry: $MIEB_REGISTRY, else <exe dir>/../configs/tasks.json, else the source tree's. */
mieb_status mieb_registry_load_default(struct mieb_registry *out);
void mieb_registry_free(struct mieb_registry *r);

#endif
