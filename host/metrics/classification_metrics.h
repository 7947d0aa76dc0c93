/**
 * classification_metrics.h - sklearn.metrics as mteb's classification families call them.
 *
 * Zero-shot classification (PROTOCOLS.md §5) and the linear probe (§2.3) both report
 * accuracy_score, f1/precision/recall_score with average="macro" and "weighted", and, when
 * y_true holds exactly two distinct values, average_precision_score. These functions
 * reproduce scikit-learn 1.9's definitions and arithmetic order:
 *   - the label set is the sorted union of y_true and y_pred (sklearn's unique_labels);
 *   - ill-defined precision / recall / F (no predicted, or no true, samples of a label)
 *     count as 0.0 (zero_division="warn", the default mteb uses);
 *   - macro = np.average over labels (pairwise sum / K), weighted = np.average with the
 *     true supports as weights (pairwise sum of p*w / pairwise sum of w);
 *   - F1 per label = 2*tp / (true + pred), as sklearn 1.9's fbeta for beta = 1.
 * All of them return Python floats in sklearn (float(...)), so results round with
 * Python's round at write time.
 */
#ifndef MIEB_METRICS_CLASSIFICATION_METRICS_H
#define MIEB_METRICS_CLASSIFICATION_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/status.h"

/** One evaluation's scores, in mteb's key order (ClassificationMetrics TypedDict). */
struct mieb_clf_scores {
    double accuracy;
    double f1, f1_weighted;
    double precision, precision_weighted;
    double recall, recall_weighted;
    bool has_ap;            /* false: ap / ap_weighted are None (JSON null) */
    double ap, ap_weighted; /* binary y_true only; both equal the single binary AP */
};

/** mteb's key names, in order; index i matches mieb_clf_scores_value(s, i). */
extern const char *const mieb_clf_keys[9];
/** Value i (0..6) of s; for 7, 8: ap, ap_weighted (caller checks has_ap). */
double mieb_clf_scores_value(const struct mieb_clf_scores *s, int i);

/**
 * accuracy, f1, precision, recall (macro and weighted) of hard predictions.
 * n >= 1. Fails only on allocation. has_ap is set to false; see mieb_clf_binary_ap.
 */
mieb_status mieb_clf_label_metrics(const int64_t *y_true, const int64_t *y_pred, int64_t n,
                                   struct mieb_clf_scores *out);

/**
 * Number of distinct values of y (len(np.unique(y))). Fails only on allocation.
 */
mieb_status mieb_clf_n_unique(const int64_t *y, int64_t n, int64_t *out);

/**
 * average_precision_score(y_true, score) with sklearn's default pos_label=1, for a y_true
 * that holds exactly two distinct values: precision_recall_curve at every distinct score
 * (descending), then max(0, -np.sum(np.diff(recall) * precision[:-1])).
 * y_true without the label 1 is an error in sklearn ("pos_label=1 is not a valid label"):
 * MIEB_ERR_BAD_DATA here, with that message, for the caller to put in context.
 */
mieb_status mieb_clf_binary_ap(const int64_t *y_true, const double *score, int64_t n, double *out);

#endif
