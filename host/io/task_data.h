/**
 * task_data.h - reader for task-data files <task-data>/<TaskName>.h5 (FORMAT.md §1).
 *
 * Every function validates what it reads against the data contract and, on failure,
 * returns MIEB_ERR_BAD_DATA / MIEB_ERR_NOT_FOUND / MIEB_ERR_HDF5 with a last-error
 * message that names the file, the dataset path and what is wrong.
 */
#ifndef MIEB_IO_TASK_DATA_H
#define MIEB_IO_TASK_DATA_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/status.h"

struct mieb_taskdata; /* opaque: an open task-data file */

/**
 * Open and check the root attributes: format == "mieb-task", format_version == 1,
 * task_name == expect_task (when expect_task != NULL). dataset_revision is kept.
 */
mieb_status mieb_taskdata_open(const char *path, const char *expect_task, struct mieb_taskdata **out);
void mieb_taskdata_close(struct mieb_taskdata *td);
const char *mieb_taskdata_path(const struct mieb_taskdata *td);
const char *mieb_taskdata_revision(const struct mieb_taskdata *td);
/** True if the group /<split>/<subset> exists. */
bool mieb_taskdata_has_group(struct mieb_taskdata *td, const char *split, const char *subset);

/** Ground truth of one retrieval split/subset. All arrays are owned (freed by _free). */
struct mieb_retrieval_data {
    int64_t n_queries, n_corpus;
    char **query_ids;        /* [n_queries] UTF-8, NUL-terminated */
    char **corpus_ids;       /* [n_corpus] */
    int64_t *qrels_indptr;   /* [n_queries+1], qrels_indptr[0] == 0, non-decreasing */
    int64_t *qrels_doc;      /* [nnz] rows of corpus_ids, each in [0, n_corpus) */
    int32_t *qrels_score;    /* [nnz] */
    int64_t *cand_indptr;    /* [n_queries+1] or NULL when the task has no candidates */
    int64_t *cand_doc;       /* [m] rows of corpus_ids, or NULL */
};

/** Read and validate /<split>/<subset>/ of a retrieval-family task. */
mieb_status mieb_taskdata_read_retrieval(struct mieb_taskdata *td, const char *split, const char *subset,
                                         struct mieb_retrieval_data *out);
void mieb_retrieval_data_free(struct mieb_retrieval_data *rd);

/* ---- generic typed readers for the other families (one dataset under /<split>/<subset>/) ---- */

/** Read a 1-D (or, with ncols != NULL, 2-D) int64 dataset. *out is malloc'd. */
mieb_status mieb_taskdata_read_i64(struct mieb_taskdata *td, const char *split, const char *subset,
                                   const char *name, int64_t **out, int64_t *nrows, int64_t *ncols);
mieb_status mieb_taskdata_read_f64(struct mieb_taskdata *td, const char *split, const char *subset,
                                   const char *name, double **out, int64_t *n);
/** Attribute of the group /<split>/<subset> (int64 or float64). */
mieb_status mieb_taskdata_group_attr_i64(struct mieb_taskdata *td, const char *split, const char *subset,
                                         const char *name, int64_t *out);
mieb_status mieb_taskdata_group_attr_f64(struct mieb_taskdata *td, const char *split, const char *subset,
                                         const char *name, double *out);
bool mieb_taskdata_has_dataset(struct mieb_taskdata *td, const char *split, const char *subset, const char *name);

#endif
