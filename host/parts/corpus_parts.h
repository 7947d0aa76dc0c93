/**
 * corpus_parts.h - retrieval split over processes by corpus.
 *
 * `run --corpus-parts K --corpus-part I --partials-dir DIR`: for every (split, subset) of a
 * retrieval-family task, part I searches ALL kept queries against its own contiguous range
 * of mteb's 50,000-document chunks (mieb_partial_range) and writes the offers each query's
 * heap accepted (partial.h). `merge` replays the K parts' offers in chunk order through
 * mteb's heap emulation, which rebuilds exactly the heap a single process builds, then
 * computes the metrics with the retrieval driver's own code (retrieval_post.h) and writes
 * the normal results file.
 */
#ifndef MIEB_PARTS_CORPUS_PARTS_H
#define MIEB_PARTS_CORPUS_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "../config/model_meta.h"
#include "../config/registry.h"
#include "../families/family.h"

struct mieb_part_opts {
    const char *dir;            /* --partials-dir */
    int64_t part, n_parts;      /* --corpus-part I --corpus-parts K */
    const char *task_data;      /* --task-data */
    bool skip_existing;         /* --overwrite-strategy never|only-missing: keep a complete partial */
    const struct mieb_model_meta *meta;
    const char *precision;      /* --precision: "fp32", "tf32", "bf16" */
};

/**
 * Write this part's partial for every (split, subset) of a retrieval-family task; *written
 * counts the partials written (a complete one kept under skip_existing is not: when none was
 * written the task was skipped, not scored). A stop signal (rc->interrupted) ends it with
 * MIEB_ERR_INTERRUPTED and leaves no file for the subset being searched.
 */
mieb_status mieb_corpus_part_task(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                  const struct mieb_part_opts *o, int *written);

struct mieb_merge_opts {
    const char *dir;            /* --partials-dir */
    const char *task_data;      /* --task-data */
    const char *emb_dir;        /* --embeddings (fingerprint check, model_meta.json) */
    const char *per_query_dir;  /* --per-query, or NULL */
    const struct mieb_model_meta *meta;
    const char *results_dir;    /* <output-folder>/results/<org>__<model>/<revision> */
    int n_threads;              /* --threads (metrics); 0 = the CPUs this process may use */
};

/**
 * Merge the parts of every (split, subset) of a retrieval task into its results file.
 * Every part file is checked first (all present, same inputs, the expected chunk ranges);
 * on any problem nothing is written and the last error lists every missing file or
 * disagreeing attribute (MIEB_ERR_NOT_FOUND for missing parts, else MIEB_ERR_BAD_DATA).
 */
mieb_status mieb_merge_task(const struct mieb_task *task, const struct mieb_merge_opts *o);

#endif
