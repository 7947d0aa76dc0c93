/**
 * manifest.h - the provenance of a run, written beside its results without touching mteb's
 * result files: <revision folder>/.mieb-eval/run-<UTC time>-<pid>.json (a hidden folder, so
 * mteb's and mieb-eval's readers of the revision folder never take it for a result).
 *
 * It holds the tool (mieb-eval's version and the commit it was built from), the command line,
 * the device, the kernels (the CPU's, and a GPU's: dispatch.h) and the precision used, the
 * model, the start and end times, the run's closing summary, and per task a fingerprint of each input file it read: the path, the
 * size, the modification time and an FNV-1a hash of the first and last 64 KiB. The
 * fingerprint identifies the files cheaply (a corpus of many gigabytes is not read again); it
 * is not a proof that no byte in between changed. `summary` and `report` read the newest
 * manifest of a revision folder to say which tool and precision produced a row.
 */
#ifndef MIEB_PLAN_MANIFEST_H
#define MIEB_PLAN_MANIFEST_H

#include <cjson/cJSON.h>

#include "../core/status.h"

struct mieb_leaderboard; /* analysis/leaderboard.h */
struct mieb_backend;     /* backend/backend.h */

struct mieb_manifest {
    cJSON *root;
    cJSON *tasks; /* object: task name -> its inputs */
    char stamp[32];
};

/** Start a manifest for this command line, backend (its name and kernels, as its describe slot
    and dispatch's name them), precision and model. */
mieb_status mieb_manifest_begin(struct mieb_manifest *m, int argc, char **argv, struct mieb_backend *be,
                                const char *precision, const char *model, const char *revision);
/** Record the input files of a task: its task-data file and every file under <emb>/<task>/. */
void mieb_manifest_task(struct mieb_manifest *m, const char *task, const char *task_data_file, const char *emb_dir);
/** Add the closing summary (moved in) and the end time, and write it under results_dir/.mieb-eval/. */
mieb_status mieb_manifest_finish(struct mieb_manifest *m, cJSON *summary, const char *results_dir, char *path,
                                 size_t path_n);
void mieb_manifest_free(struct mieb_manifest *m);

/**
 * mieb_manifest_produced_by of every leaderboard row's folder, by row index, read once for all
 * the tables a command writes. *out has lb->n_models malloc'd strings; free with
 * mieb_manifest_produced_by_free.
 */
mieb_status mieb_manifest_produced_by_rows(const struct mieb_leaderboard *lb, char ***out);
void mieb_manifest_produced_by_free(char **by, int n);

#endif
