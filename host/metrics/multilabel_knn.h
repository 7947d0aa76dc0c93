/**
 * multilabel_knn.h - the classifier and metrics of mteb's AbsTaskMultilabelClassification
 * as mteb 2.26.24 runs VOC2007 (PROTOCOLS.md §3, §12 item 1): scikit-learn 1.9's
 * KNeighborsClassifier(n_neighbors=5) (uniform weights, Minkowski p=2) fitted on a binary
 * indicator matrix, and _calculate_scores (accuracy, lrap, f1, hamming).
 *
 * Neighbours (brute force, sklearn's EuclideanArgKmin32, used when D > 15 or
 * k >= n_fit // 2): float32 rows upcast to float64; squared norms |x|^2 and the middle term
 * -2 x.y as float64 dot products; d = max(0, (|x|^2 + (-2 x.y)) + |y|^2); fit rows pushed in
 * row order into sklearn's fixed-size max-heap (utils/_heap.pyx heap_push: a value >= the
 * root is rejected, so among equal distances the earlier fit row is kept, and sift-down
 * prefers the left child on equal children). sklearn sums the dot products with BLAS; we sum
 * left to right, so the two agree bit for bit whenever the products' sums are exact in
 * float64 (e.g. embeddings with few significant bits) and otherwise differ only at
 * distances equal to within a few ulps. With D <= 15 and k < n_fit // 2 sklearn uses a
 * KDTree: distances are then sum((x-y)^2) in float64 as KDTree computes them; the heap is
 * the same, the order in which the tree visits equal-distance rows is not emulated.
 *
 * Vote: each label column is predicted as the class with the most neighbours; with two
 * classes a tie goes to class 0 (argmax of predict_proba); a column with one class in the
 * fit rows always predicts it.
 */
#ifndef MIEB_METRICS_MULTILABEL_KNN_H
#define MIEB_METRICS_MULTILABEL_KNN_H

#include <stdint.h>

#include "../core/status.h"

/** Squared L2 norms of n float32 rows of length D, as float64 sums of float64 squares. */
void mieb_knn_sqnorms(const float *X, int64_t n, int64_t D, double *out);

/**
 * The k nearest fit rows of each query row, as sklearn's kneighbors finds them (see above).
 * Xq [nq, D] with norms xn [nq]; Y [ny, D] with norms yn [ny]; k <= ny.
 * kd_tree != 0 selects KDTree's distance (sum of squared differences).
 * idx [nq, k] receives fit-row indices (the neighbour set; order unspecified).
 */
mieb_status mieb_knn_argkmin(const float *Xq, const double *xn, int64_t nq, const float *Y, const double *yn,
                             int64_t ny, int64_t D, int64_t k, int kd_tree, int64_t *idx);

/**
 * Majority vote per label: Yfit [ny, L] of 0/1, idx [nq, k] from mieb_knn_argkmin,
 * pred [nq, L] receives 0/1.
 */
void mieb_knn_vote(const uint8_t *Yfit, int64_t L, const int64_t *idx, int64_t nq, int64_t k, uint8_t *pred);

/** One experiment's scores, in mteb's key order. */
struct mieb_multilabel_scores {
    double accuracy; /* classifier.score: subset accuracy (exact row match) */
    double lrap;     /* label_ranking_average_precision_score(y_true, y_pred) on the 0/1 predictions */
    double f1;       /* f1_score(average="macro"), 0 for a label never true nor predicted */
    double hamming;  /* mteb's hamming_score: mean per-row |T & P| / |T | P|, 1 for two empty rows */
};

/** mteb's four multilabel keys, in order. */
extern const char *const mieb_multilabel_keys[4];

/** The value of key i (mieb_multilabel_keys order). */
double mieb_multilabel_scores_value(const struct mieb_multilabel_scores *s, int i);

/**
 * One row's subset accuracy (1 or 0), lrap (sklearn: 1 when the row has no or only true
 * labels) and hamming (1 for two empty rows), t and p of L 0/1 values; scratch holds L
 * doubles. mieb_multilabel_metrics averages these; --per-query writes them per sample.
 */
void mieb_multilabel_row_scores(const uint8_t *t, const uint8_t *p, int64_t L, double *scratch, double *accuracy,
                        double *lrap, double *hamming);

/**
 * The four metrics of 0/1 matrices y_true, y_pred [n, L] with numpy's summation order
 * (pairwise means) and sklearn's formulas. n >= 1, L >= 1.
 */
mieb_status mieb_multilabel_metrics(const uint8_t *y_true, const uint8_t *y_pred, int64_t n, int64_t L,
                            struct mieb_multilabel_scores *out);

#endif
