/*
 * kmeans_init.c - scikit-learn's k-means++ seeding (_kmeans_plusplus) with unit sample
 * weights, reproducing its RandomState draws and its fp32/fp64 mix: distances are computed
 * in fp64 (sklearn's _euclidean_distances_upcast: -2<x,y> + |x|^2 + |y|^2, one dgemm) and
 * stored as fp32; the candidate cdf is an fp32 running sum compared in fp64.
 * The potentials are numpy matmuls of fp32 distances with the fp32 unit weights, which numpy
 * hands to BLAS: `closest_dist_sq @ sample_weight` (one row) as sdot, and the candidates'
 * `distance_to_candidates @ sample_weight` as a row-major sgemv. The same calls here give
 * the same bits as long as both sides run the same OpenBLAS kernels single-threaded; a
 * correctly rounded sum, used before, differed in the last bit often enough to change which
 * candidate won a near-tie (20,000 x 256, k = 500: centre 259).
 */
#include "kmeans.h"

#include "../core/stop.h"

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
    float *ones = malloc((size_t)ns * sizeof *ones), *pots = malloc((size_t)trials * sizeof *pots);
    if (!xd || !xx || !cdf || !cand || !cn || !g || !closest || !dc || !cum || !cid || !ones || !pots) {
        st = mieb_fail(MIEB_ERR_OOM, "k-means++: out of memory for %lld x %lld rows", (long long)ns,
                       (long long)dim);
        goto out;
    }
    for (int64_t i = 0; i < ns * dim; i++)
        xd[i] = xs[i];
    for (int64_t i = 0; i < ns; i++)
        ones[i] = 1.0f; /* sample_weight, fp32 like X */
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
    float pot = cblas_sdot((int)ns, closest, 1, ones, 1); /* closest_dist_sq @ sample_weight */
    for (int64_t c = 1; c < k; c++) {
        if ((st = mieb_stop_check()) != MIEB_OK) /* a stop signal: once per centre (core/stop.h) */
            goto out;
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
        for (int64_t t = 0; t < trials; t++) {
            float *row = dc + t * ns;
            for (int64_t j = 0; j < ns; j++) /* np.minimum(closest, d); NaN cannot occur */
                row[j] = closest[j] < row[j] ? closest[j] : row[j];
        }
        /* candidates_pot = distance_to_candidates @ sample_weight, then argmin (the first) */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)trials, (int)ns, 1.0f, dc, (int)ns, ones, 1, 0.0f, pots, 1);
        int64_t best = 0;
        float best_pot = pots[0];
        for (int64_t t = 1; t < trials; t++)
            if (pots[t] < best_pot)
                best_pot = pots[t], best = t;
        pot = best_pot;
        memcpy(closest, dc + best * ns, (size_t)ns * sizeof *closest);
        memcpy(centers + c * dim, xs + cid[best] * dim, (size_t)dim * sizeof *centers);
    }
out:
    free(xd), free(xx), free(cdf), free(cand), free(cn), free(g), free(closest), free(dc), free(cum), free(cid);
    free(ones), free(pots);
    return st;
}
