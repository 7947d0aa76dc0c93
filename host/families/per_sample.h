/**
 * per_sample.h - `run --per-query DIR` per-sample files of the linear probe, VOC2007,
 * compositionality, visual STS and the STS aggregates (zero-shot and clustering:
 * per_query.h; retrieval: retrieval.c). Each is DIR/<task>/<split>/<subset>/predictions.tsv,
 * tab-separated, a header line first, one line per evaluated sample in task-data order,
 * written atomically; numbers are Python reprs (exact round trip). Columns:
 *
 *   linear probe      index  label  prediction_0 .. prediction_{E-1}  (one per experiment)
 *   VOC2007           index  labels  then per experiment e: prediction_e  accuracy_e  lrap_e
 *                     hamming_e (labels / prediction_e: sorted label ids joined by ',', empty
 *                     for none; accuracy_e exact-set match, lrap_e sklearn's per-row label
 *                     ranking average precision of the 0/1 predictions, hamming_e mteb's
 *                     |T & P| / |T | P| -- their means over samples are the experiment's keys)
 *   compositionality  index  text_correct  image_correct  correct  (0/1; means: text_acc,
 *                     image_acc, accuracy)
 *   visual STS        index  gold  similarity  cosine  manhattan  euclidean  (gold
 *                     normalised as mteb correlates it; the columns are what pearson /
 *                     spearman, cosine_*, manhattan_*, euclidean_* correlate with it:
 *                     the model's similarity, cosine, -manhattan, -euclidean distance)
 *   STS aggregate     DIR/<aggregate>/<split>/default/aggregate.tsv: task  split  subset, the
 *                     sub-task units whose predictions.tsv the aggregate averages
 *
 * Every writer is a no-op (MIEB_OK) when rc->per_query_dir is NULL.
 */
#ifndef MIEB_FAMILIES_PER_SAMPLE_H
#define MIEB_FAMILIES_PER_SAMPLE_H

#include <stdint.h>

#include "../metrics/compositionality.h"
#include "family.h"

/** Linear probe: labels [n], preds [n_exp * n] (experiment-major, predicted label values). */
mieb_status mieb_per_sample_write_probe(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                const char *subset, const int64_t *labels, const int64_t *preds, int64_t n,
                                int64_t n_exp);

/**
 * VOC2007: classes [L] (the label id of each column), ytrue [n * L] and preds
 * [n_exp * n * L] of 0/1 (experiment-major).
 */
mieb_status mieb_per_sample_write_multilabel(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                     const char *subset, const int64_t *classes, int64_t L, const uint8_t *ytrue,
                                     const uint8_t *preds, int64_t n, int64_t n_exp);

/**
 * mieb_compo_add_sample, also recording the sample's flags when flags != NULL:
 * flags[0] = text_correct, flags[1] = image_correct.
 */
void mieb_per_sample_compo_add(struct mieb_compo_counts *c, const float *s, int64_t n_img, int64_t n_txt, uint8_t *flags);

/** Compositionality: flags [2 * n] from mieb_per_sample_compo_add. */
mieb_status mieb_per_sample_write_compo(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                const char *subset, const uint8_t *flags, int64_t n);

/** Visual STS: the normalised gold and the four similarity columns, n pairs. */
mieb_status mieb_per_sample_write_sts(const struct mieb_run_ctx *rc, const char *task, const char *split,
                              const char *subset, const double *gold, const double *model, const double *cosine,
                              const double *manhattan, const double *euclidean, int64_t n);

/** STS aggregate: aggregate.tsv listing (subtask, split, subsets[i]). */
mieb_status mieb_per_sample_write_aggregate(const struct mieb_run_ctx *rc, const char *aggregate, const char *split,
                                    const char *subtask, const char *const *subsets, int n_subsets);

#endif
