/**
 * bootstrap.h - paired bootstrap comparison of two models scored on the same samples
 * (`mieb-eval compare`, README "Comparing two models").
 *
 * A task is a list of units (its (split, subset) pairs); each unit holds, for model A and
 * model B, the per-sample data of the same n samples in the same order. The task score of
 * a model is np.mean over the units of the unit statistic:
 *   MEAN      np.mean(x)                          (per-query / per-sample values)
 *   SPEARMAN  scipy.stats.spearmanr(x, y)         (x gold, y the model's similarity)
 *   PEARSON   scipy.stats.pearsonr(x, y)
 *   NMI       sklearn normalized_mutual_info_score(labels, clusters) (arithmetic mean)
 * and delta = score(A) - score(B).
 *
 * Replicates (reproducible with numpy): rs = np.random.RandomState(seed) is shared by all the
 * tasks of a comparison, in order; for each unit in order, idx = rs.randint(0, n, size=(R, n))
 * (row r is replicate r; a unit with n == 1 draws nothing, as numpy does). Replicate r
 * recomputes every unit statistic of both models on the samples idx[r] (the same indices
 * for A and B: paired), and the task scores and delta from them. A replicate whose delta is
 * NaN (e.g. a constant resample under Spearman) is dropped; n_valid counts the others.
 *
 * Confidence interval: np.percentile(valid deltas, [100 * alpha / 2, 100 * (1 - alpha / 2)])
 * (linear interpolation). p-value, two-sided, paired bootstrap test by the shift method:
 * p = (1 + #{r : |delta_r - delta| >= |delta|}) / (1 + n_valid), i.e. how often the
 * bootstrap distribution centred on zero reaches the observed difference; identical
 * models give delta = 0 and p = 1. p is NaN when delta is NaN, when no replicate is valid,
 * or when no unit has two samples (nothing to resample).
 *
 * Aggregates (per task type, Mean(Task), ...): the mean over their parts of the parts'
 * points and of their replicate deltas, replicate by replicate (each part resampled
 * within itself), summarised the same way.
 */
#ifndef MIEB_ANALYSIS_BOOTSTRAP_H
#define MIEB_ANALYSIS_BOOTSTRAP_H

#include <stdint.h>

#include "../core/status.h"
#include "../emulation/np_randomstate.h"

enum mieb_bs_stat { MIEB_BS_MEAN = 0, MIEB_BS_SPEARMAN, MIEB_BS_PEARSON, MIEB_BS_NMI };

/** One model's per-sample data of one unit. */
struct mieb_bs_side {
    const double *x;         /* MEAN: values; SPEARMAN / PEARSON: gold */
    const double *y;         /* SPEARMAN / PEARSON: the model's scores */
    const int64_t *labels;   /* NMI: true labels */
    const int64_t *clusters; /* NMI: predicted clusters */
};

struct mieb_bs_unit {
    enum mieb_bs_stat stat;
    int64_t n; /* samples, >= 1 */
    struct mieb_bs_side a, b;
};

struct mieb_bs_result {
    double a, b, delta;     /* point estimates (the whole samples) */
    double ci_low, ci_high; /* percentile interval of the valid replicate deltas (NaN if none) */
    double p_value;         /* see the file comment; NaN when undefined */
    int64_t n_resamples;    /* R */
    int64_t n_valid;        /* replicates with a non-NaN delta */
    int resampled;          /* some unit has n >= 2 */
    double *reps;           /* [R] replicate deltas (NaN: dropped), owned */
};

/**
 * Paired bootstrap of one task: draws from rs (advancing it as documented above), fills
 * *out (free with mieb_bs_result_free). R >= 1, 0 < alpha < 1, n_units >= 1, every n >= 1.
 */
mieb_status mieb_bs_task(struct mieb_rs *rs, const struct mieb_bs_unit *units, int n_units, int64_t R, double alpha,
                         struct mieb_bs_result *out);

/**
 * Aggregate of n_parts results with the same R: np.mean of their a, b, delta and, per
 * replicate, of their replicate deltas (NaN if any part's is NaN).
 */
mieb_status mieb_bs_mean_of(const struct mieb_bs_result *const *parts, int n_parts, double alpha,
                            struct mieb_bs_result *out);

void mieb_bs_result_free(struct mieb_bs_result *r);

#endif
