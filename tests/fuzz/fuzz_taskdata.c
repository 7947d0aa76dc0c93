/*
 * fuzz_taskdata.c - task-data files (<task-data>/<TaskName>.h5) through mieb_taskdata_open,
 * mieb_taskdata_read_retrieval and the generic typed readers every family uses, on the
 * group /test/default (where `mieb-eval synth` writes, so its files are the seeds).
 * The input is the file's bytes.
 */
#include "fuzz_common.h"

#include <math.h>

#include "io/task_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[700];
    snprintf(path, sizeof path, "%s/Task.h5", fuzz_tmpdir());
    fuzz_write(path, data, size);

    struct mieb_taskdata *td = NULL;
    if (mieb_taskdata_open(path, NULL, &td) != MIEB_OK)
        return 0;
    (void)mieb_taskdata_revision(td);
    const char *sp = "test", *ss = "default";
    if (mieb_taskdata_has_group(td, sp, ss)) {
        struct mieb_retrieval_data rd;
        memset(&rd, 0, sizeof rd);
        if (mieb_taskdata_read_retrieval(td, sp, ss, &rd) == MIEB_OK) {
            /* the contract the readers promise (task_data.h) */
            if (rd.qrels_indptr[0] != 0)
                abort();
            for (int64_t q = 0; q < rd.n_queries; q++) {
                if (rd.qrels_indptr[q + 1] < rd.qrels_indptr[q] || !rd.query_ids[q])
                    abort();
                for (int64_t j = rd.qrels_indptr[q]; j < rd.qrels_indptr[q + 1]; j++)
                    if (rd.qrels_doc[j] < 0 || rd.qrels_doc[j] >= rd.n_corpus)
                        abort();
            }
            mieb_retrieval_data_free(&rd);
        }
        static const char *const i64_names[] = {"eval_labels", "train_labels", "train_labels_indptr",
                                                "train_labels_flat", "eval_labels_indptr", "eval_labels_flat"};
        for (size_t k = 0; k < sizeof i64_names / sizeof i64_names[0]; k++) {
            int64_t *v = NULL, n = 0;
            if (mieb_taskdata_has_dataset(td, sp, ss, i64_names[k]) &&
                mieb_taskdata_read_i64(td, sp, ss, i64_names[k], &v, &n, NULL) == MIEB_OK)
                free(v);
        }
        int64_t *ti = NULL, rows = 0, cols = 0;
        if (mieb_taskdata_read_i64(td, sp, ss, "train_idx", &ti, &rows, &cols) == MIEB_OK)
            free(ti);
        double *gold = NULL, lo = 0;
        int64_t n = 0, a = 0;
        if (mieb_taskdata_read_f64(td, sp, ss, "gold", &gold, &n) == MIEB_OK) {
            for (int64_t i = 0; i < n; i++) /* the readers refuse NaN and Inf (h5_util.h) */
                if (!isfinite(gold[i]))
                    abort();
            free(gold);
        }
        if (mieb_taskdata_group_attr_f64(td, sp, ss, "min_score", &lo) == MIEB_OK && !isfinite(lo))
            abort();
        if (mieb_taskdata_group_attr_f64(td, sp, ss, "max_score", &lo) == MIEB_OK && !isfinite(lo))
            abort();
        (void)mieb_taskdata_group_attr_i64(td, sp, ss, "n_samples", &a);
        (void)mieb_taskdata_group_attr_i64(td, sp, ss, "n_texts", &a);
    }
    mieb_taskdata_close(td);
    return 0;
}
