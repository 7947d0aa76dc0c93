/**
 * results_reader.h - reader for mteb result folders, the input of `mieb-eval summary`.
 *
 * A revision folder results/<org>__<model>/<revision>/ holds one TaskResult JSON per task
 * (written by mieb-eval or by mteb) and usually model_meta.json. Only what the
 * leaderboard needs is kept: for each task, each (split, hf_subset) entry's main_score.
 * Python's json writes NaN, Infinity and -Infinity literally; cJSON does not accept them,
 * so the text is rewritten first (mieb_json_py_to_strict, json/json_py.h).
 * A null or absent main_score reads as NaN, i.e. "no score".
 */
#ifndef MIEB_RESULTS_RESULTS_READER_H
#define MIEB_RESULTS_RESULTS_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/status.h"

/** One element of scores[split]: its hf_subset and main_score (NaN when null or absent). */
struct mieb_result_entry {
    char *split;
    char *subset;
    double main_score;
};

/** One TaskResult file. */
struct mieb_task_result {
    char *task_name;            /* "task_name" of the file (else the file name without .json) */
    char *path;
    int n_entries;
    struct mieb_result_entry *entries; /* in file order, split by split */
};

/** One revision folder: one model at one revision. */
struct mieb_model_results {
    char *name;                 /* model_meta.json "name", else <org>__<model> with "__" -> "/" */
    char *revision;             /* model_meta.json "revision", else the folder name */
    char *dir;                  /* the revision folder */
    int n_tasks;
    struct mieb_task_result *tasks;
};

/**
 * Parse one TaskResult JSON file into *out (owned; free with mieb_task_result_free).
 * Errors (unreadable, not JSON, no "scores" object, an entry without hf_subset) name the file.
 */
mieb_status mieb_task_result_read(const char *path, struct mieb_task_result *out);
void mieb_task_result_free(struct mieb_task_result *tr);

/**
 * Find the revision folders under each of dirs[0..n_dirs) (each may be an output folder
 * holding results/, a results/ folder, a model folder or a revision folder: any folder up
 * to four levels down that holds a *.json other than model_meta.json is a revision folder)
 * and read them. Revision folders come back sorted by (name, revision, dir).
 *
 * Files that cannot be read are skipped: each is logged as an error and counted in
 * *n_bad (the caller decides the exit status). A dir that does not exist is an error
 * (MIEB_ERR_NOT_FOUND naming it). *out is owned: free with mieb_model_results_free.
 */
mieb_status mieb_results_scan(const char *const *dirs, int n_dirs, struct mieb_model_results **out, int *n_out,
                              int *n_bad);

/** Which result files a scan reads: keep(user, task name) for <task name>.json. */
typedef bool (*mieb_results_keep_fn)(void *user, const char *task);
/**
 * mieb_results_scan reading only the files keep wants (a model folder keeps its row, with the
 * tasks kept): a clone of mteb's whole results repository holds every MTEB task, and the
 * published models are read for the MIEB ones alone.
 */
mieb_status mieb_results_scan_only(const char *const *dirs, int n_dirs, mieb_results_keep_fn keep, void *user,
                                   struct mieb_model_results **out, int *n_out, int *n_bad);
void mieb_model_results_free(struct mieb_model_results *m, int n);

#endif
