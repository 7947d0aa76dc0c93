/**
 * run_loop.h - the scoring loop of `run` and the merge loop of `merge`, over the task list of
 * task_select.h: per task the resume decision (--overwrite-strategy: a whole result is kept,
 * one that is not is set aside), scoring or writing this corpus part, the outcome for the
 * closing summary, and the stop at a signal. What the operator sees on the way (progress,
 * the failures) goes through the command's hooks, since the command owns the terminal.
 */
#ifndef MIEB_PLAN_RUN_LOOP_H
#define MIEB_PLAN_RUN_LOOP_H

#include <signal.h>

#include "../parts/corpus_parts.h"
#include "../families/family.h"
#include "manifest.h"
#include "run_outcome.h"
#include "task_select.h"

/* The caller's side of the loop; every hook must be set, and each gets the plan's hooks_user
   (the caller's state: the program's terminal, the public API's call). */
struct mieb_loop_hooks {
    void (*run_begin)(void *user, int n_tasks, long units); /* before the first task: the work ahead */
    void (*task_begin)(void *user, int index, const char *task);
    void (*subset_begin)(void *user, const char *split, const char *subset);
    void (*unit_done)(void *user);
    void (*task_end)(void *user, const char *task, const char *outcome, long units);
    /* say that a task failed with st (its detail is mieb_last_error()); verb: "scored", "merged" */
    void (*task_failed)(void *user, const char *task, const char *verb, mieb_status st);
    void (*task_context)(void *user, const char *task); /* NULL: none */
};

/* What `run` decided from its command line. */
struct mieb_run_plan {
    const struct mieb_registry *reg;
    const struct mieb_run_ctx *rc;     /* rc->interrupted is the stop flag; it must be set */
    const char *task_data;
    const char *results_dir;           /* <output-folder>/results/<org>__<model>/<revision> */
    const char *overwrite;             /* "always", "never", "only-missing" */
    int overwrite_given;               /* the summary says when the default skipped a task */
    const char *precision;             /* "fp32", "tf32", "bf16" */
    const struct mieb_part_opts *part; /* corpus parts, or NULL */
    struct mieb_manifest *man;
    const struct mieb_loop_hooks *hooks;
    void *hooks_user;
};

/** Units of progress of a task: its (split, subset) pairs; an aggregate counts one. */
long mieb_task_units(const struct mieb_task *t);

/**
 * Score the tasks in order until the list ends or a signal stops it (*plan->rc->interrupted),
 * after telling hooks->run_begin the work ahead. Each task's outcome, with its status, is added
 * to oc; *failed counts the failed tasks and *fatal is set when a failure leaves the device
 * unusable (CUDA, cuBLAS).
 */
void mieb_run_plan_score(const struct mieb_run_plan *plan, const struct mieb_task_list *todo,
                         struct mieb_outcomes *oc, int *failed, int *fatal);

/** Merge each task's corpus parts into its result (`merge`); *merged and *failed count them. */
void mieb_run_plan_merge(const struct mieb_merge_opts *mo, const struct mieb_task_list *todo,
                         const struct mieb_loop_hooks *hooks, void *hooks_user, int *merged, int *failed);

/**
 * Before a command writes into results_dir, per_query and partials_dir (each may be NULL but
 * results_dir): remove the temporaries of an earlier run on this host that was killed
 * (core/tmpfiles.h) and, with watch, have the watchdog of a stuck run remove this run's
 * (core/stop.h).
 */
void mieb_run_plan_outputs(const char *results_dir, const char *per_query, const char *partials_dir, int watch);

#endif
