/**
 * report_data.h - what the HTML report reads from result files beyond the main scores the
 * leaderboard uses: recall@k curves, linear-probe experiments, per-subset (language)
 * scores and the time per stage (evaluation_time, evaluation_phases).
 *
 * The files are the ones the leaderboard scored: for each model and task, the first file
 * of that task in the model's folder. Each is parsed again whole (cJSON) and queried.
 */
#ifndef MIEB_REPORT_REPORT_DATA_H
#define MIEB_REPORT_REPORT_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../analysis/leaderboard.h"

/**
 * Parse, for every leaderboard row r (input order) and task t, the result file the
 * leaderboard used into docs[r * n_tasks + t] (NULL where there is none). A file that
 * can no longer be parsed is logged, counted in *n_bad and left NULL. Free with
 * mieb_report_data_docs_free.
 */
mieb_status mieb_report_data_docs_load(const struct mieb_leaderboard *lb, cJSON ***docs, int *n_bad);
void mieb_report_data_docs_free(cJSON **docs, int n);

/**
 * The recall@k curve of a result: for each k with a "recall_at_<k>" key in some entry
 * (any split, subset), the mean over the entries that have a number for it, in
 * increasing k. Returns how many points were written (at most cap); 0 when none.
 */
int mieb_report_data_recall_curve(const cJSON *doc, double *k, double *v, int cap);

/**
 * The values of `key` (the task's main metric) in scores_per_experiment of every entry,
 * entries in file order. Returns how many (at most cap); 0 when the result has none.
 */
int mieb_report_data_experiments(const cJSON *doc, const char *key, double *out, int cap);

/** True when some split of the result holds more than one hf_subset (a multilingual task). */
bool mieb_report_data_multi_subset(const cJSON *doc);

/**
 * main_score of the entry (split, subset), NaN when absent or null; *langs (may be NULL)
 * receives its "languages" joined by ", " into a buffer of n bytes.
 */
double mieb_report_data_subset_score(const cJSON *doc, const char *split, const char *subset, char *langs, size_t n);

/**
 * Time segments of the report, discovered from the files' phases: every phase name other
 * than "Evaluation" (summed durations; "Stage: X" shows as "X"), then "Evaluation (other)"
 * (Evaluation windows minus the "Stage: " phases inside them) when any file has
 * "Evaluation", then "unattributed" (evaluation_time minus the phases that are not
 * "Stage: " ones, at least 0; all of it when a file has no phases).
 */
#define MIEB_RP_MAX_SEGS 24
struct mieb_report_data_segs {
    int n;
    char *phase[MIEB_RP_MAX_SEGS]; /* the phase name summed, or NULL for the two derived segments */
    char *label[MIEB_RP_MAX_SEGS];
    int eval_other, unattributed;  /* indices of the derived segments (-1 when absent) */
};

/** Add the phase names of one result to *s (call for every file, then mieb_report_data_segs_finish). */
mieb_status mieb_report_data_segs_collect(struct mieb_report_data_segs *s, const cJSON *doc);
mieb_status mieb_report_data_segs_finish(struct mieb_report_data_segs *s);
void mieb_report_data_segs_free(struct mieb_report_data_segs *s);

/** Seconds per segment of one result into secs[s->n]; false when it has no evaluation_time. */
bool mieb_report_data_times(const struct mieb_report_data_segs *s, const cJSON *doc, double *secs);

#endif
