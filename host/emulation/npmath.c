/*
 * npmath.c - numpy 2.x float64 reductions with numpy's exact operation order (see
 * npmath.h for why the order matters to mteb's nAUC).
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off") /* numpy's loops round every product */
#endif

#include "npmath.h"
#include "../core/qsort_cmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * numpy's DOUBLE_pairwise_sum (loops_utils.h): fewer than 8 elements are added in order
 * onto -0.0 (which keeps an all -0.0 input negative); up to 128 they go into 8 running
 * partial sums combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) plus a sequential tail;
 * larger inputs split at half rounded down to a multiple of 8 and recurse. FLOAT_pairwise_sum
 * is the same with float32 accumulators.
 */
#define NP_PAIRWISE_SUM(name, T)                                                                   \
    T name(const T *a, int64_t n)                                                                  \
    {                                                                                              \
        if (n < 8) {                                                                               \
            T res = -0.0;                                                                          \
            for (int64_t i = 0; i < n; i++)                                                        \
                res += a[i];                                                                       \
            return res;                                                                            \
        }                                                                                          \
        if (n <= 128) {                                                                            \
            T r[8];                                                                                \
            for (int j = 0; j < 8; j++)                                                            \
                r[j] = a[j];                                                                       \
            int64_t i;                                                                             \
            for (i = 8; i < n - (n % 8); i += 8)                                                   \
                for (int j = 0; j < 8; j++)                                                        \
                    r[j] += a[i + j];                                                              \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));             \
            for (; i < n; i++)                                                                     \
                res += a[i];                                                                       \
            return res;                                                                            \
        }                                                                                          \
        int64_t n2 = n / 2;                                                                        \
        n2 -= n2 % 8;                                                                              \
        return name(a, n2) + name(a + n2, n - n2);                                                 \
    }

static NP_PAIRWISE_SUM(pairwise_sum, double)
NP_PAIRWISE_SUM(mieb_np_pairwise_sum_f32, float)

double mieb_np_sum(const double *a, int64_t n)
{
    /* The reduction's output starts at add's identity and the inner loop adds onto it. */
    double acc = 0.0;
    if (n > 0)
        acc += pairwise_sum(a, n);
    return acc;
}

double mieb_np_reduceat_segment(const double *a, int64_t n)
{
    /* reduceat copies the segment's first element into the output, then reduces the rest. */
    double acc = a[0];
    acc += pairwise_sum(a + 1, n - 1);
    return acc;
}

double mieb_np_mean(const double *a, int64_t n)
{
    if (n <= 0)
        return NAN;
    return mieb_np_sum(a, n) / (double)n;
}

double mieb_np_std(const double *a, int64_t n, double *scratch)
{
    if (n <= 0)
        return NAN;
    double mean = mieb_np_sum(a, n) / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double d = a[i] - mean;
        scratch[i] = d * d;
    }
    return sqrt(mieb_np_sum(scratch, n) / (double)n);
}

/* numpy's float order: NaN after every number; equal values fall back to the index. */
static int np_less(double x, double y)
{
    return x < y || (isnan(y) && !isnan(x));
}

mieb_status mieb_np_argsort_stable(const double *a, int64_t n, int64_t *idx)
{
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    if (n < 2)
        return MIEB_OK;
    int64_t *tmp = malloc((size_t)n * sizeof *tmp);
    if (tmp == NULL)
        return mieb_fail(MIEB_ERR_OOM, "argsort: cannot allocate %lld indices", (long long)n);
    /* Bottom-up merge sort: stable by construction, takes the left run on ties. */
    int64_t *src = idx, *dst = tmp;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = np_less(a[src[j]], a[src[i]]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx)
        memcpy(idx, src, (size_t)n * sizeof *idx);
    free(tmp);
    return MIEB_OK;
}

double mieb_np_trapezoid(const double *y, const double *x, int64_t n, double *scratch)
{
    if (n < 2)
        return 0.0;
    /* Element-wise exactly as written in scipy: d * (y[1:] + y[:-1]) / 2.0. */
    for (int64_t i = 0; i + 1 < n; i++) {
        double d = x[i + 1] - x[i];
        scratch[i] = d * (y[i + 1] + y[i]) / 2.0;
    }
    return mieb_np_sum(scratch, n - 1);
}

/* numpy's power_of_ten(): a table up to 1e8, then repeated multiplication by 10. */
static double np_power_of_ten(int n)
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    if (n < 9)
        return p10[n];
    double ret = 1e9;
    while (n-- > 9)
        ret *= 10.;
    return ret;
}

double mieb_np_round(double x, int decimals)
{
    /* PyArray_Round for floats: multiply (or divide), rint in place, divide (or multiply). */
    if (decimals >= 0) {
        double f = np_power_of_ten(decimals);
        return rint(x * f) / f;
    }
    double f = np_power_of_ten(-decimals);
    return rint(x / f) * f;
}

mieb_status mieb_np_unique_inverse(const int64_t *v, int64_t n, int64_t *codes, int64_t *k)
{
    int64_t *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    if (!s)
        return mieb_fail(MIEB_ERR_OOM, "np.unique: out of memory for %lld labels", (long long)n);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, mieb_cmp_i64);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || s[i] != s[u - 1])
            s[u++] = s[i];
    for (int64_t i = 0; i < n; i++) { /* binary search of v[i] among the u distinct values */
        int64_t lo = 0, hi = u - 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (s[mid] < v[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        codes[i] = lo;
    }
    free(s);
    *k = u;
    return MIEB_OK;
}
