/**
 * clustering_metrics.h - mteb's ImageClustering metrics (PROTOCOLS.md §4), as
 * AbsTaskClusteringLegacy._compute_metrics computes them with scikit-learn / scipy:
 * v_measure_score, normalized_mutual_info_score (arithmetic), adjusted_rand_score and
 * cluster accuracy = max one-to-one matching of confusion_matrix(labels, pred) / n
 * (scipy.optimize.linear_sum_assignment(maximize=True)). All four are Python floats.
 */
#ifndef MIEB_METRICS_CLUSTERING_METRICS_H
#define MIEB_METRICS_CLUSTERING_METRICS_H

#include <stdint.h>

#include "../core/status.h"

struct mieb_cluster_scores {
    double v_measure;
    double nmi;
    double ari;
    double cluster_accuracy;
};

/**
 * Score predicted cluster ids `pred` against true labels `labels` (n each, arbitrary
 * int64 values). n == 0 gives sklearn's empty-input values (1, 1, 1) and accuracy NaN.
 */
mieb_status mieb_cluster_scores(const int64_t *labels, const int64_t *pred, int64_t n,
                                struct mieb_cluster_scores *out);

/**
 * Maximum-weight one-to-one assignment of an r x c non-negative integer matrix (row-major):
 * the sum of the matched entries, as linear_sum_assignment(M, maximize=True) yields it.
 * The optimum value is unique even when the matching is not.
 */
mieb_status mieb_max_assignment(const int64_t *m, int64_t r, int64_t c, int64_t *best);

/** Number of distinct values of v[0..n) (the k of mteb's MiniBatchKMeans). */
mieb_status mieb_count_distinct(const int64_t *v, int64_t n, int64_t *k);

#endif
