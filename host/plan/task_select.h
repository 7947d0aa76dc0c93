/**
 * task_select.h - the ordered task list of a command: the tasks named with -t, each benchmark's
 * tasks in mteb's order, or every registry task of the --task-types, kept to the types, splits
 * and languages asked for, and cut to this process's shard. `run`, `merge` and `inspect` build
 * theirs here, each with its own rules (select_for).
 */
#ifndef MIEB_PLAN_TASK_SELECT_H
#define MIEB_PLAN_TASK_SELECT_H

#include "../config/registry.h"
#include "../core/status.h"

#define MIEB_PLAN_MAX_TASKS 512

/* Whose list it is. RUN: -t names as given, then each benchmark's tasks not yet listed whose
   task data is present and whose type is supported (each one skipped said why), then the
   filters and the shard. MERGE: retrieval tasks only, each once, a benchmark's only where its
   task data is present. INSPECT: the benchmark's tasks, then the -t names, as given. */
enum mieb_select_for { MIEB_SELECT_RUN = 0, MIEB_SELECT_MERGE, MIEB_SELECT_INSPECT };

/* The options a command fills in; lists are borrowed. */
struct mieb_task_select {
    enum mieb_select_for purpose;
    const char *task_data; /* --task-data: where a benchmark's tasks must be present */
    const char *const *tasks;
    int n_tasks;
    const char *const *benchmarks;
    int n_benchmarks;
    const char *const *task_types; /* RUN: keep only tasks of these mteb types */
    int n_task_types;
    const char *const *eval_splits; /* RUN: keep only these splits in each task */
    int n_eval_splits;
    const char *const *languages; /* RUN: keep only the subsets in these languages */
    int n_languages;
    long shard_index, num_shards; /* RUN: num_shards 0 is no sharding */
};

struct mieb_task_list {
    const struct mieb_task *v[MIEB_PLAN_MAX_TASKS];
    int n;
    /* RUN with --eval-splits or --languages: views of the registry's tasks, each a copy whose
       splits and subsets are the kept ones (v points at them), and the arrays they hold; the
       registry stays as loaded. NULL otherwise. */
    struct mieb_task *views;
    const char **view_names;
};

/**
 * Build the list from reg, which is only read: RUN keeps, in views of the listed tasks, the
 * splits and subsets of --eval-splits and --languages. MIEB_ERR_INVALID_ARG names a bad
 * command line in the last error (an unknown task, benchmark or task type); MIEB_ERR_OOM when
 * the views or the shards could not be made. mieb_task_list_free follows either way.
 */
mieb_status mieb_select_tasks(const struct mieb_registry *reg, const struct mieb_task_select *s,
                              struct mieb_task_list *out);
void mieb_selection_free(struct mieb_task_list *l);

/** The task-data file a task reads: its own, or an aggregate's sub-task's. */
void mieb_task_data_file(const char *task_data, const struct mieb_task *t, char *p, size_t n);

#endif
