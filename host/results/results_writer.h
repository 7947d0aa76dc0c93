/**
 * results_writer.h - mteb TaskResult files (PROTOCOLS.md §10, FORMAT.md §3).
 *
 * Layout: <out>/results/<org>__<model>/<revision>/<TaskName>.json, keys in TaskResult
 * order (dataset_revision, task_name, mteb_version, scores, evaluation_time,
 * kg_co2_emissions, date, evaluation_phases), every float under "scores" rounded to 6
 * decimals with Python's round, serialised as Python's json.dump(indent=2), written
 * atomically. model_meta.json is copied verbatim beside the results.
 */
#ifndef MIEB_RESULTS_RESULTS_WRITER_H
#define MIEB_RESULTS_RESULTS_WRITER_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "../core/status.h"
#include "../json/json_py.h"

/** The mteb release whose scoring mieb-eval reproduces; written as mteb_version. */
#define MIEB_MTEB_VERSION "2.26.24"

struct mieb_task_result {
    const char *dataset_revision;
    const char *task_name;
    cJSON *scores;            /* {split: [subset dicts]}; the writer rounds it in place */
    double evaluation_time;   /* seconds */
    double date;              /* Unix time */
    cJSON *phases;            /* list of {name, start, end, split, subset}, or NULL */
    /* Python's round(v, 6) as mteb applies it to each value; NULL = Python floats throughout
       (a family whose values include numpy.float64 supplies its own, see families.c) */
    mieb_round_fn round_fn;
    /* kg_co2_emissions is written as NaN instead of null: mteb's aggregate tasks sum their
       sub-tasks' emissions and get np.nan when those are null (AbsTaskAggregate.combine_task_results) */
    bool kg_co2_nan;
};

/**
 * Directory for a model's results: <out>/results/<org>__<model>/<revision>
 * (the model name's '/' becomes "__", as mteb's result cache does).
 */
mieb_status mieb_results_dir(const char *out_folder, const char *model_name, const char *revision,
                             char *buf, size_t n);
/** Append one evaluation phase {name, start, end, split, subset} (seconds from the task's start) to phases. */
void mieb_results_add_phase(cJSON *phases, const char *name, double start, double end, const char *split,
                            const char *subset);
/** The result's "date": Unix time now, with microseconds. */
double mieb_results_date_now(void);

struct mieb_task;
/**
 * What every scored subset of a TaskResult carries after its metrics, in mteb's order:
 * main_score (the task's main metric, which must be in `sub`: MIEB_ERR_INTERNAL names it
 * otherwise), hf_subset, languages, mteb_version, and similarity_precision when it is not
 * fp32. Shared by run and merge so that both write the same subset objects.
 */
mieb_status mieb_results_finish_subset(cJSON *sub, const struct mieb_task *task, const char *subset,
                                       const char *precision);
/** Serialise and write one task result atomically to <dir>/<task_name>.json. */
mieb_status mieb_results_write(const char *dir, const struct mieb_task_result *r);
/** Write <dir>/model_meta.json (atomically): the bytes of <emb>/model_meta.json that were
    checked (mieb_model_meta_load), not a second read of a file that may have changed. */
mieb_status mieb_results_write_model_meta(const char *dir, const char *text, size_t len);

#endif
