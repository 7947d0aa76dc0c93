/**
 * correlation.h - scipy.stats.pearsonr and scipy.stats.spearmanr as mteb's STS tasks call
 * them (AbsTaskSTS._calculate_scores: `float(pearsonr(gold, scores)[0])`,
 * `float(spearmanr(gold, scores)[0])`), in float64, with scipy's rules for undefined
 * values (PROTOCOLS.md §7):
 *
 *  - pearsonr needs n >= 2 (scipy raises ValueError otherwise, so mteb's task fails);
 *    a constant input (every value == the first) gives NaN; n == 2 gives exactly +-1.
 *  - spearmanr gives NaN for n <= 1, for a constant input and when a value is NaN
 *    (nan_policy="propagate"); otherwise Pearson's r of the average ranks
 *    (scipy.stats.rankdata(method="average")) computed as np.corrcoef does.
 *
 * Spearman is bit-identical to scipy for n up to about 2e5 (the rank products are exact
 * integers, then np.corrcoef's three roundings are applied in numpy's order). Pearson
 * follows scipy's algorithm step by step (np.mean, centring, max-scaled norms); its final
 * dot product is a plain float64 loop where numpy calls BLAS ddot, so the last bit or two
 * can differ (tested to 1e-12 against scipy, tests/py/test_correlation.py).
 */
#ifndef MIEB_METRICS_CORRELATION_H
#define MIEB_METRICS_CORRELATION_H

#include <stdint.h>

#include "../core/status.h"

/**
 * scipy.stats.pearsonr(x, y).statistic. n must be >= 2 (callers report scipy's
 * ValueError themselves). `scratch` holds 2*n doubles. NaN when x or y is constant or
 * holds a NaN.
 */
double mieb_pearsonr(const double *x, const double *y, int64_t n, double *scratch);

/**
 * Average ranks, 1-based (scipy.stats.rankdata(x, method="average")): tied values get the
 * mean of the ordinal ranks they span; -0.0 ties with 0.0. x must hold no NaN.
 * Fails only on allocation.
 */
mieb_status mieb_rankdata_average(const double *x, int64_t n, double *ranks);

/** scipy.stats.spearmanr(x, y).statistic into *out (NaN cases above). Fails only on allocation. */
mieb_status mieb_spearmanr(const double *x, const double *y, int64_t n, double *out);

#endif
