/**
 * leaderboard.h - the MIEB leaderboard numbers of a set of models, as mteb computes them
 * (PROTOCOLS.md §0.2 and §1.2; mteb results/task_result.py, benchmarks/_benchmark_metrics.py,
 * benchmarks/_create_table.py).
 *
 * - Task score: TaskResult.validate_and_filter_scores then get_score(): the mean of
 *   main_score over the task's eval_splits x hf_subsets. Splits and subsets the task does
 *   not define are ignored; a missing one counts as NaN, so the task score is missing
 *   (NaN). Aggregate tasks keep only their "default" subset.
 * - Per task type: mean of the task scores of that type; Mean(TaskType): mean of the
 *   per-type means; Mean(Task): mean of all task scores. Any missing task score (no
 *   result file, a missing split/subset, a NaN or null main_score) makes the aggregate
 *   missing (None), as skipna=False does on the leaderboard. A per-type mean is missing
 *   only when a task of that type is.
 * - Borda rank (_borda_rank_from_long): the long frame holds one row per defined
 *   (split, subset), NaN turned to null; per (model, task) the mean of the non-null rows
 *   (null when none); per task, rank(method="average", descending) among the models with a
 *   value; each model earns n_models - rank points per task it has; the sums are ranked
 *   with rank(method="min", descending). n_models counts the models that have at least one
 *   complete task score (the leaderboard's rows); other models get no rank.
 * - Leaderboard order: Mean(TaskType) descending, missing last, ties in input order; the
 *   "Rank" column is the 1-based position.
 */
#ifndef MIEB_ANALYSIS_LEADERBOARD_H
#define MIEB_ANALYSIS_LEADERBOARD_H

#include <stdbool.h>

#include "../config/registry.h"
#include "../core/status.h"
#include "../results/results_reader.h"

/** One model's row; NaN means missing (None). Arrays are indexed like the leaderboard's tasks/types. */
struct mieb_lb_row {
    const struct mieb_model_results *model; /* borrowed */
    double *task_score;    /* [n_tasks] get_score() semantics */
    double *borda_score;   /* [n_tasks] the long-frame per-task mean used for the Borda count */
    double *type_mean;     /* [n_types] */
    double mean_task_type; /* Mean(TaskType) */
    double mean_task;      /* Mean(Task) */
    double borda_points;   /* sum of n_models - rank */
    int borda_rank;        /* 1-based; 0 when the model has no complete task score */
    int rank;              /* 1-based position in the leaderboard order */
    int n_complete;        /* tasks with a complete score */
    bool published;        /* read from a published folder, not one of the caller's models (placement.h) */
};

struct mieb_leaderboard {
    int n_tasks;
    const struct mieb_task **tasks; /* borrowed from the registry */
    int n_types;
    const char **types;             /* task types in order of first appearance in tasks */
    int *task_type;                 /* [n_tasks] index into types */
    int n_models;
    struct mieb_lb_row *rows;       /* in input order */
    int *order;                     /* [n_models] row indices, leaderboard order */
};

/**
 * Compute the leaderboard of models[0..n_models) over tasks[0..n_tasks) (a benchmark's
 * list, or any task set). Result files of tasks outside the set are ignored. *out is
 * owned: free with mieb_leaderboard_free.
 */
mieb_status mieb_leaderboard_compute(const struct mieb_task *const *tasks, int n_tasks,
                                     const struct mieb_model_results *models, int n_models,
                                     struct mieb_leaderboard *out);
void mieb_leaderboard_free(struct mieb_leaderboard *lb);

/**
 * The task set of a leaderboard (summary, report): the benchmark's list in mteb's order when
 * b is given, else every registry task that some model has a result for, in registry order.
 * *out is malloc'd (the caller frees it); *n receives its length.
 */
mieb_status mieb_lb_pick_tasks(const struct mieb_registry *reg, const struct mieb_benchmark *b,
                               const struct mieb_model_results *m, int nm, const struct mieb_task ***out, int *n);

#endif
