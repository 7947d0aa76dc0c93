/*
 * kmeans_init.c - scikit-learn's k-means++ seeding (_kmeans_plusplus) with unit sample
 * weights, reproducing its RandomState draws and its fp32/fp64 mix: distances are computed
 * in fp64 (sklearn's _euclidean_distances_upcast: -2<x,y> + |x|^2 + |y|^2, one dgemm) and
 * stored as fp32; the candidate cdf is an fp32 running sum compared in fp64.
 * The potentials (closest_dist_sq @ sample_weight) are an fp32 BLAS dot in sklearn; here
 * they are the correctly rounded sum, which can differ from the BLAS kernel in the last bit.
 */
#include "kmeans.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "np_randomstate.h"

/* out[t*ns + j] = fp32(max(0, -2<a_t, x_j> + |a_t|^2 + |x_j|^2)) computed in fp64. */
static void upcast_dists(const double *a, const double *aa, int64_t t, const double *xd, const double *xx,
                         int64_t ns, int64_t dim, double *g, float *out)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)t, (int)ns, (int)dim, 1.0, a, (int)dim, xd, (int)dim,
                0.0, g, (int)ns);
    for (int64_t i = 0; i < t; i++)
        for (int64_t j = 0; j < ns; j++) {
            double d = -2.0 * g[i * ns + j];
            d += aa[i];
            d += xx[j];
            float f = (float)d;
            out[i * ns + j] = f > 0.0f ? f : 0.0f; /* np.maximum(distances, 0) on fp32 (keeps NaN out) */
        }
}

/* fp32 potential: sum of the fp32 distances, correctly rounded. */
static float potential(const float *d, int64_t ns)
{
    double s = 0.0;
    for (int64_t j = 0; j < ns; j++)
        s += d[j];
    return (float)s;
}

static double sqnorm64(const double *r, int64_t dim)
{
    double s = 0.0;
    for (int64_t j = 0; j < dim; j++)
        s += r[j] * r[j];
    return s;
}

mieb_status mieb_kmeans_plusplus(const float *xs, int64_t ns, int64_t dim, int64_t k, struct mieb_rs *rs,
                                 float *centers)
{
    int64_t trials = 2 + (int64_t)log((double)k);
    mieb_status st = MIEB_OK;
    double *xd = malloc((size_t)ns * (size_t)dim * sizeof *xd), *xx = malloc((size_t)ns * sizeof *xx);
    double *cdf = malloc((size_t)ns * sizeof *cdf), *cand = malloc((size_t)trials * (size_t)dim * sizeof *cand);
    double *cn = malloc((size_t)trials * sizeof *cn), *g = malloc((size_t)trials * (size_t)ns * sizeof *g);
    float *closest = malloc((size_t)ns * sizeof *closest);
    float *dc = malloc((size_t)trials * (size_t)ns * sizeof *dc), *cum = malloc((size_t)ns * sizeof *cum);
    int64_t *cid = malloc((size_t)trials * sizeof *cid);
    if (!xd || !xx || !cdf || !cand || !cn || !g || !closest || !dc || !cum || !cid) {
        st = mieb_fail(MIEB_ERR_OOM, "k-means++: out of memory for %lld x %lld rows", (long long)ns,
                       (long long)dim);
        goto out;
    }
    for (int64_t i = 0; i < ns * dim; i++)
        xd[i] = xs[i];
    for (int64_t i = 0; i < ns; i++)
        xx[i] = sqnorm64(xd + i * dim, dim);
    /* first centre: choice(ns, p=w/sum(w)); p is fp32 1/ns widened, cdf = cumsum / cdf[-1] */
    double p = (double)(1.0f / (float)ns), acc = 0.0;
    for (int64_t i = 0; i < ns; i++)
        cdf[i] = acc += p;
    for (int64_t i = 0; i < ns; i++)
        cdf[i] /= acc;
    int64_t first;
    mieb_rs_choice_cdf(rs, cdf, ns, 1, &first);
    memcpy(centers, xs + first * dim, (size_t)dim * sizeof *centers);
    cn[0] = xx[first];
    upcast_dists(xd + first * dim, cn, 1, xd, xx, ns, dim, g, closest);
    float pot = potential(closest, ns);
    for (int64_t c = 1; c < k; c++) {
        float run = 0.0f;
        for (int64_t j = 0; j < ns; j++) /* np.cumsum(sample_weight * closest_dist_sq), fp32 */
            cum[j] = run = run + 1.0f * closest[j];
        for (int64_t t = 0; t < trials; t++) {
            double r = mieb_rs_random_sample(rs) * (double)pot;
            int64_t lo = 0, hi = ns; /* searchsorted left on fp32 values compared as fp64 */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if ((double)cum[mid] < r)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            cid[t] = lo < ns ? lo : ns - 1;
            memcpy(cand + t * dim, xd + cid[t] * dim, (size_t)dim * sizeof *cand);
            cn[t] = xx[cid[t]];
        }
        upcast_dists(cand, cn, trials, xd, xx, ns, dim, g, dc);
        int64_t best = 0;
        float best_pot = 0.0f;
        for (int64_t t = 0; t < trials; t++) {
            float *row = dc + t * ns;
            for (int64_t j = 0; j < ns; j++) /* np.minimum(closest, d); NaN cannot occur */
                row[j] = closest[j] < row[j] ? closest[j] : row[j];
            float cp = potential(row, ns);
            if (t == 0 || cp < best_pot)
                best_pot = cp, best = t;
        }
        pot = best_pot;
        memcpy(closest, dc + best * ns, (size_t)ns * sizeof *closest);
        memcpy(centers + c * dim, xs + cid[best] * dim, (size_t)dim * sizeof *centers);
    }
out:
    free(xd), free(xx), free(cdf), free(cand), free(cn), free(g), free(closest), free(dc), free(cum), free(cid);
    return st;
}
