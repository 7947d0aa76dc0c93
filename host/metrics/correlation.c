/*
 * correlation.c - scipy's pearsonr and spearmanr (float64), in scipy's and numpy's order of
 * operations; see correlation.h for the NaN rules and the exactness claims.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off") /* numpy rounds every product */
#endif

#include "correlation.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../emulation/npmath.h"

static bool is_constant(const double *x, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (!(x[i] == x[0]))
            return false;
    return true; /* NaN == NaN is false, so an input holding NaN is never "constant" */
}

/* max(|v|) with np.max's NaN propagation. */
static double max_abs(const double *v, int64_t n)
{
    double m = fabs(v[0]);
    for (int64_t i = 1; i < n; i++) {
        double a = fabs(v[i]);
        if (isnan(a))
            return a;
        if (a > m)
            m = a;
    }
    return m;
}

/*
 * scipy 1.17 pearsonr (one axis, numpy namespace):
 *   xm = x - mean(x); xmax = max|xm|; normxm = xmax * sqrt(sum((xm/xmax)^2))
 *   r = vecdot(xm/normxm, ym/normym); clip to [-1, 1]; NaN if an input is constant;
 *   n == 2: r = round(r).
 */
double mieb_pearsonr(const double *x, const double *y, int64_t n, double *scratch)
{
    if (n < 2 || is_constant(x, n) || is_constant(y, n))
        return NAN;
    double *xm = scratch, *ym = scratch + n;
    double xmean = mieb_np_mean(x, n), ymean = mieb_np_mean(y, n);
    for (int64_t i = 0; i < n; i++) {
        xm[i] = x[i] - xmean;
        ym[i] = y[i] - ymean;
    }
    double xmax = max_abs(xm, n), ymax = max_abs(ym, n);
    /* np.linalg.norm(xm / xmax): sqrt(np.add.reduce(v * v)); the squares overwrite xm, ym */
    for (int64_t i = 0; i < n; i++) {
        double s = xm[i] / xmax, t = ym[i] / ymax;
        xm[i] = s * s;
        ym[i] = t * t;
    }
    double normx = xmax * sqrt(mieb_np_sum(xm, n)), normy = ymax * sqrt(mieb_np_sum(ym, n));
    double r = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double a = (x[i] - xmean) / normx, b = (y[i] - ymean) / normy;
        r += a * b;
    }
    if (isnan(r))
        return r;
    if (r > 1.0)
        r = 1.0;
    else if (r < -1.0)
        r = -1.0;
    if (n == 2)
        r = nearbyint(r); /* np.round: half to even */
    return r;
}

struct val_idx {
    double v;
    int64_t i;
};

static int cmp_val(const void *a, const void *b)
{
    double x = ((const struct val_idx *)a)->v, y = ((const struct val_idx *)b)->v;
    return (x > y) - (x < y);
}

/* twice[i] = 2 * average rank of x[i] (an integer: 2*first + count - 1, ranks 1-based). */
static mieb_status twice_ranks(const double *x, int64_t n, int64_t *twice)
{
    struct val_idx *s = malloc(sizeof *s * (size_t)(n > 0 ? n : 1));
    if (!s)
        return mieb_fail(MIEB_ERR_OOM, "rankdata: %lld values", (long long)n);
    for (int64_t i = 0; i < n; i++)
        s[i] = (struct val_idx){x[i], i};
    qsort(s, (size_t)n, sizeof *s, cmp_val);
    for (int64_t a = 0; a < n;) {
        int64_t b = a + 1;
        while (b < n && s[b].v == s[a].v)
            b++;
        /* ordinal ranks a+1 .. b: average = (a+1) + (b-a-1)/2 */
        int64_t t = 2 * (a + 1) + (b - a - 1);
        for (int64_t k = a; k < b; k++)
            twice[s[k].i] = t;
        a = b;
    }
    free(s);
    return MIEB_OK;
}

mieb_status mieb_rankdata_average(const double *x, int64_t n, double *ranks)
{
    int64_t *t = malloc(sizeof *t * (size_t)(n > 0 ? n : 1));
    if (!t)
        return mieb_fail(MIEB_ERR_OOM, "rankdata: %lld values", (long long)n);
    mieb_status st = twice_ranks(x, n, t);
    for (int64_t i = 0; st == MIEB_OK && i < n; i++)
        ranks[i] = (double)t[i] / 2.0;
    free(t);
    return st;
}

/*
 * np.corrcoef of the two rank vectors, as numpy computes it: X -= mean (the mean rank is
 * (n+1)/2 exactly), c = X @ X.T (exact here: the centred ranks are multiples of 1/2, so
 * every product and partial sum is a multiple of 1/4 well inside 2^53), c *= 1/(n-1),
 * then c[1,0] / sqrt(c[1,1]) / sqrt(c[0,0]) and a clip to [-1, 1].
 */
mieb_status mieb_spearmanr(const double *x, const double *y, int64_t n, double *out)
{
    *out = NAN;
    if (n <= 1 || is_constant(x, n) || is_constant(y, n))
        return MIEB_OK;
    for (int64_t i = 0; i < n; i++)
        if (isnan(x[i]) || isnan(y[i]))
            return MIEB_OK;
    int64_t *tx = malloc(sizeof *tx * (size_t)n), *ty = malloc(sizeof *ty * (size_t)n);
    mieb_status st = (!tx || !ty) ? mieb_fail(MIEB_ERR_OOM, "spearmanr: %lld values", (long long)n) : MIEB_OK;
    if (st == MIEB_OK)
        st = twice_ranks(x, n, tx);
    if (st == MIEB_OK)
        st = twice_ranks(y, n, ty);
    if (st == MIEB_OK) {
        /* centred ranks times 2: a_i = 2 r_i - (n + 1), integers */
        __int128 sxx = 0, syy = 0, sxy = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t a = tx[i] - (n + 1), b = ty[i] - (n + 1);
            sxx += (__int128)a * a;
            syy += (__int128)b * b;
            sxy += (__int128)a * b;
        }
        double inv = 1.0 / (double)(n - 1);
        double c00 = ((double)sxx / 4.0) * inv, c11 = ((double)syy / 4.0) * inv, c10 = ((double)sxy / 4.0) * inv;
        double r = (c10 / sqrt(c11)) / sqrt(c00);
        if (r > 1.0)
            r = 1.0;
        else if (r < -1.0)
            r = -1.0;
        *out = r;
    }
    free(tx);
    free(ty);
    return st;
}
