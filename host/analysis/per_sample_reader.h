/**
 * per_sample_reader.h - reads the per-query / per-sample files of `run --per-query`
 * (README, host/families/per_sample.h) back into what the paired bootstrap consumes
 * (analysis/bootstrap.h), for `mieb-eval compare`.
 *
 * How a task's main score is recomputed from one unit's file:
 *   retrieval        per_query.tsv, the per-query values of the main score's measure (ndcg_at_K
 *                    -> ndcg_cut_K, map_at_K -> map_cut_K, recall_at_K -> recall_K, accuracy ->
 *                    recall_1, precision_at_K -> P_K, hit_rate_at_K -> success_K, mrr_at_K ->
 *                    mrr_cut_K); MEAN; samples are queries, paired by query id
 *   zero-shot        predictions.tsv index label prediction: accuracy = MEAN of label == prediction
 *   linear probe     index label prediction_0..: accuracy = MEAN of the per-sample share of the
 *                    experiments that predict the label (c_i / E)
 *   VOC2007          index labels ..._e: accuracy / lrap / hamming = MEAN of np.mean over e of the
 *                    per-sample column <key>_e
 *   clustering       index label cluster: nmi = NMI(label, cluster)
 *   compositionality text_acc / image_acc / accuracy = MEAN of text_correct / image_correct / correct
 *   visual STS       [cosine_|manhattan_|euclidean_]spearman|pearson = SPEARMAN|PEARSON(gold, column
 *                    similarity|cosine|manhattan|euclidean)
 * The kind of file is told by its header; samples of predictions.tsv are paired by line and
 * must agree on index and gold (label, labels or gold).
 */
#ifndef MIEB_ANALYSIS_PER_SAMPLE_READER_H
#define MIEB_ANALYSIS_PER_SAMPLE_READER_H

#include <stdint.h>

#include "../core/status.h"
#include "bootstrap.h"

/** One model's samples of one (task, split, subset). */
struct mieb_psr_unit {
    int64_t n;
    enum mieb_bs_stat stat;
    const char **ids;   /* [n] query id or index (pointers into text) */
    const char **gold;  /* [n] gold cell, NULL for retrieval */
    double *x, *y;      /* MEAN values / correlation gold and scores */
    int64_t *labels, *clusters; /* NMI */
    char *text;         /* the file's text, owned */
};

/** File name a unit of this task is read from: "per_query.tsv" (retrieval) or "predictions.tsv". */
const char *mieb_psr_file_name(int is_retrieval);

/**
 * Read one unit file for the task's main score (`is_retrieval`: the file is per_query.tsv).
 * MIEB_ERR_UNSUPPORTED (message says why) when the main score cannot be recomputed from
 * this kind of file; MIEB_ERR_BAD_DATA / MIEB_ERR_IO naming the file otherwise.
 */
mieb_status mieb_psr_read(const char *path, int is_retrieval, const char *main_score, struct mieb_psr_unit *out);

/**
 * Pair b with a: the same samples (retrieval: the same query ids, b reordered to a's order;
 * otherwise line by line, equal index and gold). MIEB_ERR_BAD_DATA naming both files otherwise.
 */
mieb_status mieb_psr_pair(struct mieb_psr_unit *a, struct mieb_psr_unit *b, const char *path_a, const char *path_b);

/** The bootstrap side of a unit. */
struct mieb_bs_side mieb_psr_side(const struct mieb_psr_unit *u);

void mieb_psr_unit_free(struct mieb_psr_unit *u);

#endif
