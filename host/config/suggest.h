/**
 * suggest.h - "did you mean" for a mistyped task, benchmark or option name: the closest name
 * by edit distance (insertions, deletions, substitutions and swaps of two neighbours, case
 * ignored), when it is close enough to be a typo.
 */
#ifndef MIEB_CONFIG_SUGGEST_H
#define MIEB_CONFIG_SUGGEST_H

#include "task_list.h"

/**
 * The closest of the n candidates to name (a NULL candidate is skipped), or NULL when none is
 * within a third of the longer name's length (at least 2 edits). Ties go to the earlier one.
 */
const char *mieb_suggest(const char *name, const char *const *candidates, int n);
/** The closest benchmark name or short key (returned as the benchmark's name), or NULL. */
const char *mieb_suggest_benchmark(const struct mieb_registry *r, const char *name);
/** "unknown task 'NAME' (not in the task registry[; did you mean 'X'?])" into buf. */
void mieb_unknown_task_msg(const struct mieb_registry *r, const char *name, char *buf, size_t n);

#endif
