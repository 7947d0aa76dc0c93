/**
 * compare.h - paired bootstrap comparison of two models' `run --per-query` folders, task by
 * task, then per task type, Mean(Task) and Mean(TaskType): what `mieb-eval compare` prints and
 * what `mieb-eval report --per-query` marks on its deltas.
 *
 * For every task present in both folders, its main score is recomputed from the per-query /
 * per-sample files of all its (split, subset) units (per_sample_reader.h) and a paired
 * bootstrap gives delta = A - B, its percentile interval and a two-sided p-value
 * (analysis/bootstrap.h). One RandomState(seed) serves the tasks in the order given, so the
 * numbers are reproducible with numpy (README "Comparing two models").
 */
#ifndef MIEB_ANALYSIS_COMPARE_H
#define MIEB_ANALYSIS_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "../config/registry.h"
#include "../core/status.h"
#include "bootstrap.h"

struct mieb_cmp_row {
    const struct mieb_task *task; /* NULL for the aggregate rows */
    const char *kind;             /* "task", "type" or "mean" */
    const char *name;             /* task name, task type, "Mean(Task)" / "Mean(TaskType)" */
    const char *type;
    enum mieb_bs_stat stat;
    int n_units;
    int64_t n_samples;
    struct mieb_bs_result res;
};

/** A task that was not compared: skipped (is_error 0: absent, incomplete) or an error (a bad file). */
struct mieb_cmp_note {
    const char *task;
    char reason[600];
    int is_error;
};

struct mieb_cmp {
    const char *dir[2]; /* A, B */
    int64_t R;
    double alpha;
    struct mieb_rs rs;
    struct mieb_cmp_row *rows; /* the compared tasks, then the task types, then Mean(Task), Mean(TaskType) */
    int n_rows, n_task_rows;
    struct mieb_cmp_note *notes;
    int n_notes, cap_notes, n_errors;
};

/**
 * Compare tasks[0..n) (a task named twice once) of folders a and b with R resamples, level
 * alpha and RandomState(seed), then add the aggregate rows. Tasks that cannot be compared go to
 * the notes. Fails only on out of memory. Free with mieb_cmp_free, also after a failure.
 */
mieb_status mieb_cmp_run(struct mieb_cmp *c, const struct mieb_registry *reg, const struct mieb_task *const *tasks,
                         int n, const char *a, const char *b, int64_t R, double alpha, uint32_t seed);
/** A note for a folder entry that is not a registry task, as compare lists them. */
void mieb_cmp_note(struct mieb_cmp *c, const char *task, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** The row of `name` ("task", "type" or "mean" kind), or NULL. */
const struct mieb_cmp_row *mieb_cmp_find(const struct mieb_cmp *c, const char *kind, const char *name);
/** p < alpha. */
bool mieb_cmp_significant(const struct mieb_cmp_row *r, double alpha);
const char *mieb_cmp_stat_name(enum mieb_bs_stat s);
void mieb_cmp_free(struct mieb_cmp *c);

#endif
