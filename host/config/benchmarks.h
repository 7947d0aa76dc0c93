/**
 * benchmarks.h - the benchmarks of configs/benchmarks.json (the MIEB benchmarks' ordered task
 * lists and mteb's aggregate tasks) in a loaded task list (benchmarks.c).
 */
#ifndef MIEB_CONFIG_BENCHMARKS_H
#define MIEB_CONFIG_BENCHMARKS_H

#include "task_list.h"

/**
 * Load benchmark definitions (configs/benchmarks.json format) into a loaded registry,
 * replacing any loaded before. Every task named must be in the registry.
 */
mieb_status mieb_registry_load_benchmarks(struct mieb_registry *r, const char *path);

/**
 * A benchmark by its name ("MIEB(lite)"), its short key ("lite") or its name without the
 * "MIEB" prefix ("(lite)"), case-insensitively; NULL when unknown. On NULL the last error
 * says which names exist (or that no benchmarks.json was loaded).
 */
const struct mieb_benchmark *mieb_registry_benchmark(const struct mieb_registry *r, const char *name);

/** Drop the loaded benchmarks and aggregate flags (registry.c frees with it). */
void mieb_registry_free_benchmarks(struct mieb_registry *r);

#endif
