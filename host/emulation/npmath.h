/**
 * npmath.h - numpy 2.x float64 reductions, with numpy's exact operation order.
 *
 * mteb's nAUC and its confidence features go through np.sum / np.mean / np.std,
 * np.add.reduceat, np.argsort(stable=True) and scipy's trapezoid. Their results depend on
 * numpy's summation order (pairwise, 8-way unrolled blocks of 128), so a plain loop
 * differs in the last bits and, through nAUC's exact-equality test, sometimes by NaN.
 * Verified against numpy 2.4 (tests/py/test_retrieval_metrics.py).
 */
#ifndef MIEB_EMULATION_NPMATH_H
#define MIEB_EMULATION_NPMATH_H

#include <stdint.h>

#include "../core/status.h"

/**
 * np.add.reduce(a) (np.sum) of a contiguous float64 array: numpy starts from the add
 * identity 0.0 and adds the pairwise sum of all n elements (0.0 for n == 0, so
 * np.sum([-0.0]) is 0.0). numpy 2.x does not split contiguous inputs into buffer-sized
 * chunks, so the pairwise recursion covers the whole array.
 */
double mieb_np_sum(const double *a, int64_t n);

/**
 * numpy's pairwise summation of a contiguous float32 array with float32 partial sums (the
 * inner loop of np.sum on float32, without the identity: -0.0 for n == 0).
 */
float mieb_np_pairwise_sum_f32(const float *a, int64_t n);

/**
 * np.unique(v, return_inverse=True) of int64 labels: codes[i] = the rank of v[i] among the
 * k distinct values in ascending order (0 .. k-1). MIEB_ERR_OOM only.
 */
mieb_status mieb_np_unique_inverse(const int64_t *v, int64_t n, int64_t *codes, int64_t *k);

/**
 * One segment of np.add.reduceat(a, starts): the first element is copied into the output
 * and the pairwise sum of the remaining n-1 is added to it (a different rounding from
 * mieb_np_sum). n must be >= 1.
 */
double mieb_np_reduceat_segment(const double *a, int64_t n);

/** np.mean(a) = np.sum(a) / n. NaN for n == 0, as numpy returns (with a warning). */
double mieb_np_mean(const double *a, int64_t n);

/**
 * np.std(a) with ddof 0: mean = sum/n, then sum((a-mean)^2)/n, sqrt. `scratch` holds n
 * doubles and may be `a` itself (then a is overwritten). NaN for n == 0.
 */
double mieb_np_std(const double *a, int64_t n, double *scratch);

/**
 * np.argsort(a, stable=True): idx[0..n) such that a[idx] is ascending, equal values keep
 * their index order, NaNs go last (numpy's order). Fails only on allocation.
 */
mieb_status mieb_np_argsort_stable(const double *a, int64_t n, int64_t *idx);

/**
 * scipy.integrate.trapezoid(y, x) as sklearn.metrics.auc calls it:
 * np.sum((x[1:]-x[:-1]) * (y[1:]+y[:-1]) / 2.0). `scratch` holds n-1 doubles.
 * 0.0 for n < 2.
 */
double mieb_np_trapezoid(const double *y, const double *x, int64_t n, double *scratch);

/**
 * round(np.float64(x), decimals), i.e. numpy's ndarray.round: rint(x * 10^d) / 10^d for
 * d >= 0, rint(x / 10^-d) * 10^-d for d < 0 (10^d from numpy's power_of_ten). Unlike
 * Python's round on a float this rounds the product, so values near a decimal tie
 * (0.1234565) can round the other way. mteb's TaskResult.to_disk calls round(v, 6) on
 * every score; numpy.float64 values (a float subclass) take this path.
 */
double mieb_np_round(double x, int decimals);

#endif
