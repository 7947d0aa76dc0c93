/**
 * run_outcome.h - what a run did, task by task, for its closing summary: scored, skipped or
 * failed, the task's main score (as mteb's TaskResult.get_score: the mean of main_score over
 * the result's splits and subsets), the seconds it took and, for a failure, its first error.
 */
#ifndef MIEB_PLAN_RUN_OUTCOME_H
#define MIEB_PLAN_RUN_OUTCOME_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../core/status.h"

enum mieb_outcome_kind { MIEB_OUTCOME_SCORED = 0, MIEB_OUTCOME_SKIPPED, MIEB_OUTCOME_FAILED };

struct mieb_outcome {
    const char *task;
    enum mieb_outcome_kind kind;
    double main_score;   /* NaN when unknown (skipped, failed, a corpus part) */
    double seconds;
    char *note;          /* failure: its first error; skip: why; owned, may be NULL */
    int missing_input;   /* the failure was an input that is not there (a hint to inspect) */
    mieb_status status;  /* a failure's status (MIEB_OK otherwise) */
};

struct mieb_outcomes {
    struct mieb_outcome *v;
    int n, cap;
    int counts[3]; /* by kind */
};

/** Record one task's outcome (note is copied). Out of memory is reported and the entry dropped. */
mieb_status mieb_outcome_add(struct mieb_outcomes *o, const char *task, enum mieb_outcome_kind kind, double seconds,
                             const char *note, int missing_input);
/** The status the last entry, a failure, failed with. */
void mieb_outcome_status(struct mieb_outcomes *o, mieb_status st);
/** The status of the first failure that left the device unusable (CUDA, cuBLAS), else MIEB_OK. */
mieb_status mieb_outcomes_device_failure(const struct mieb_outcomes *o);
/** The main score of a result file (TaskResult.get_score), for the last scored entry; NaN when unreadable. */
void mieb_outcome_score_from(struct mieb_outcomes *o, const char *result_path);
/** The summary as one JSON object: counts, and per task its outcome, main score, seconds, note. */
cJSON *mieb_outcomes_json(const struct mieb_outcomes *o, const char *results_dir);
void mieb_outcomes_free(struct mieb_outcomes *o);

#endif
