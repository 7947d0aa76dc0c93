/* bootstrap.c - paired bootstrap of two models' task scores (see bootstrap.h). */
#include "bootstrap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../metrics/correlation.h"
#include "../emulation/npmath.h"
#include "../core/qsort_cmp.h"

void mieb_bs_result_free(struct mieb_bs_result *r)
{
    if (r) {
        free(r->reps);
        r->reps = NULL;
    }
}

static int cmp_f64(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sklearn's _entropy of label counts c[0..k) (zeros skipped), n = their sum: pairwise np.sum. */
static double entropy(const int64_t *c, int64_t k, double n, double *terms)
{
    int64_t m = 0;
    for (int64_t i = 0; i < k; i++)
        if (c[i])
            terms[m++] = (double)c[i];
    if (m <= 1)
        return 0.0;
    double ln = log(n);
    for (int64_t i = 0; i < m; i++)
        terms[i] = (terms[i] / n) * (log(terms[i]) - ln);
    return -mieb_np_sum(terms, m);
}

/* sklearn's normalized_mutual_info_score (average_method="arithmetic") of two labelings. */
static mieb_status mieb_bs_nmi(const int64_t *labels, const int64_t *clusters, int64_t n, double *out)
{
    if (n == 0) { /* no samples: both labellings have zero entropy, sklearn returns 1.0 */
        *out = 1.0;
        return MIEB_OK;
    }
    int64_t *cl = malloc((size_t)n * sizeof *cl), *ck = malloc((size_t)n * sizeof *ck), kc = 0, kk = 0;
    int64_t *key = malloc((size_t)n * sizeof *key), *a = NULL, *b = NULL;
    double *terms = malloc((size_t)n * sizeof *terms);
    mieb_status st = cl && ck && key && terms ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "nmi: %lld samples", (long long)n);
    if (st == MIEB_OK)
        st = mieb_np_unique_inverse(labels, n, cl, &kc);
    if (st == MIEB_OK)
        st = mieb_np_unique_inverse(clusters, n, ck, &kk);
    if (st == MIEB_OK && (!(a = calloc((size_t)kc, sizeof *a)) || !(b = calloc((size_t)kk, sizeof *b))))
        st = mieb_fail(MIEB_ERR_OOM, "nmi: %lld x %lld contingency", (long long)kc, (long long)kk);
    if (st != MIEB_OK)
        goto done;
    if (kc == 1 && kk == 1) {
        *out = 1.0;
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        a[cl[i]]++, b[ck[i]]++;
        key[i] = cl[i] * kk + ck[i]; /* < n * n: codes are below n */
    }
    double mi = 0.0, dn = (double)n;
    if (kc > 1 && kk > 1) {
        /* mutual_info_score on the sparse contingency, in its (class, cluster) order */
        qsort(key, (size_t)n, sizeof *key, mieb_cmp_i64);
        double ln = log(dn);
        int64_t m = 0;
        for (int64_t i = 0; i < n;) {
            int64_t j = i;
            while (j < n && key[j] == key[i])
                j++;
            double v = (double)(j - i), cnm = v / dn;
            int64_t outer = a[key[i] / kk] * b[key[i] % kk];
            double log_outer = -log((double)outer) + ln + ln;
            double t = cnm * (log(v) - ln) + cnm * log_outer;
            terms[m++] = fabs(t) < 2.220446049250313e-16 ? 0.0 : t;
            i = j;
        }
        mi = mieb_np_sum(terms, m);
        if (mi < 0.0)
            mi = 0.0;
    }
    if (mi == 0.0) {
        *out = 0.0;
        goto done;
    }
    double ha = entropy(a, kc, dn, terms), hb = entropy(b, kk, dn, terms);
    *out = mi / ((ha + hb) / 2.0);
done:
    free(cl), free(ck), free(key), free(terms), free(a), free(b);
    return st;
}

/* The statistic of one model on samples idx[0..m) of unit u (idx NULL: all n samples, in order). */
static mieb_status mieb_bs_unit_stat(const struct mieb_bs_unit *u, const struct mieb_bs_side *s, const int64_t *idx,
                              int64_t m, double *out)
{
    mieb_status st = MIEB_OK;
    int two = u->stat == MIEB_BS_SPEARMAN || u->stat == MIEB_BS_PEARSON;
    if (u->stat == MIEB_BS_NMI) {
        int64_t *l = malloc((size_t)(m > 0 ? m : 1) * sizeof *l), *c = malloc((size_t)(m > 0 ? m : 1) * sizeof *c);
        if (!l || !c) {
            free(l), free(c);
            return mieb_fail(MIEB_ERR_OOM, "bootstrap: %lld samples", (long long)m);
        }
        for (int64_t i = 0; i < m; i++) {
            int64_t k = idx ? idx[i] : i;
            l[i] = s->labels[k];
            c[i] = s->clusters[k];
        }
        st = mieb_bs_nmi(l, c, m, out);
        free(l), free(c);
        return st;
    }
    double *x = malloc((size_t)(m > 0 ? m : 1) * sizeof *x * (two ? 4 : 1));
    if (!x)
        return mieb_fail(MIEB_ERR_OOM, "bootstrap: %lld samples", (long long)m);
    double *y = x + m;
    for (int64_t i = 0; i < m; i++) {
        int64_t k = idx ? idx[i] : i;
        x[i] = s->x[k];
        if (two)
            y[i] = s->y[k];
    }
    if (u->stat == MIEB_BS_MEAN)
        *out = mieb_np_mean(x, m);
    else if (u->stat == MIEB_BS_SPEARMAN)
        st = mieb_spearmanr(x, y, m, out);
    else /* pearsonr needs two samples (scipy raises); fewer is undefined here */
        *out = m < 2 ? NAN : mieb_pearsonr(x, y, m, y + m);
    free(x);
    return st;
}

/* np.percentile(sorted[0..n), 100 * q) with numpy's default linear method; n >= 1, sorted ascending. */
static double mieb_bs_percentile(const double *sorted, int64_t n, double q)
{
    /* numpy's 'linear' method: virtual index (n - 1) * q, then its _lerp */
    double v = (double)n * q + (1.0 - q) - 1.0;
    if (v < 0.0)
        return sorted[0];
    if (v >= (double)(n - 1))
        return sorted[n - 1];
    int64_t lo = (int64_t)floor(v);
    double t = v - (double)lo, a = sorted[lo], b = sorted[lo + 1], d = b - a;
    return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

/* n_valid, CI and p of r from r->reps and r->delta. */
static mieb_status summarise(struct mieb_bs_result *r, double alpha)
{
    double *v = malloc((size_t)(r->n_resamples > 0 ? r->n_resamples : 1) * sizeof *v);
    if (!v)
        return mieb_fail(MIEB_ERR_OOM, "bootstrap: %lld replicates", (long long)r->n_resamples);
    int64_t m = 0, extreme = 0;
    for (int64_t k = 0; k < r->n_resamples; k++)
        if (!isnan(r->reps[k])) {
            v[m++] = r->reps[k];
            extreme += fabs(r->reps[k] - r->delta) >= fabs(r->delta);
        }
    r->n_valid = m;
    r->ci_low = r->ci_high = r->p_value = NAN;
    if (m > 0) {
        qsort(v, (size_t)m, sizeof *v, cmp_f64);
        r->ci_low = mieb_bs_percentile(v, m, alpha / 2.0);
        r->ci_high = mieb_bs_percentile(v, m, 1.0 - alpha / 2.0);
        if (!isnan(r->delta) && r->resampled)
            r->p_value = (double)(1 + extreme) / (double)(1 + m);
    }
    free(v);
    return MIEB_OK;
}

mieb_status mieb_bs_task(struct mieb_rs *rs, const struct mieb_bs_unit *units, int n_units, int64_t R, double alpha,
                         struct mieb_bs_result *out)
{
    memset(out, 0, sizeof *out);
    if (n_units < 1 || R < 1 || !(alpha > 0.0 && alpha < 1.0))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "bootstrap: %d units, %lld resamples, alpha %g", n_units, (long long)R,
                         alpha);
    int64_t nmax = 1;
    for (int u = 0; u < n_units; u++) {
        if (units[u].n < 1)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "bootstrap: unit %d has no samples", u);
        nmax = units[u].n > nmax ? units[u].n : nmax;
        out->resampled |= units[u].n >= 2;
    }
    /* va/vb [n_units][R]: each unit's statistic per replicate; pa/pb the points */
    double *va = malloc((size_t)n_units * (size_t)R * sizeof *va), *vb = malloc((size_t)n_units * (size_t)R * sizeof *vb);
    double *pa = malloc((size_t)n_units * sizeof *pa), *pb = malloc((size_t)n_units * sizeof *pb);
    double *ta = malloc((size_t)n_units * sizeof *ta), *tb = malloc((size_t)n_units * sizeof *tb);
    int64_t *idx = malloc((size_t)nmax * sizeof *idx);
    out->reps = malloc((size_t)R * sizeof *out->reps);
    out->n_resamples = R;
    mieb_status st = va && vb && pa && pb && ta && tb && idx && out->reps
                         ? MIEB_OK
                         : mieb_fail(MIEB_ERR_OOM, "bootstrap: %d units x %lld resamples", n_units, (long long)R);
    for (int u = 0; u < n_units && st == MIEB_OK; u++) {
        const struct mieb_bs_unit *un = &units[u];
        st = mieb_bs_unit_stat(un, &un->a, NULL, un->n, &pa[u]);
        if (st == MIEB_OK)
            st = mieb_bs_unit_stat(un, &un->b, NULL, un->n, &pb[u]);
        for (int64_t r = 0; r < R && st == MIEB_OK; r++) {
            mieb_rs_randint(rs, un->n, un->n, idx); /* row r of rs.randint(0, n, size=(R, n)) */
            st = mieb_bs_unit_stat(un, &un->a, idx, un->n, &va[(size_t)u * (size_t)R + (size_t)r]);
            if (st == MIEB_OK)
                st = mieb_bs_unit_stat(un, &un->b, idx, un->n, &vb[(size_t)u * (size_t)R + (size_t)r]);
        }
    }
    if (st == MIEB_OK) {
        out->a = mieb_np_mean(pa, n_units);
        out->b = mieb_np_mean(pb, n_units);
        out->delta = out->a - out->b;
        for (int64_t r = 0; r < R; r++) {
            for (int u = 0; u < n_units; u++) {
                ta[u] = va[(size_t)u * (size_t)R + (size_t)r];
                tb[u] = vb[(size_t)u * (size_t)R + (size_t)r];
            }
            out->reps[r] = mieb_np_mean(ta, n_units) - mieb_np_mean(tb, n_units);
        }
        st = summarise(out, alpha);
    }
    free(va), free(vb), free(pa), free(pb), free(ta), free(tb), free(idx);
    if (st != MIEB_OK)
        mieb_bs_result_free(out);
    return st;
}

mieb_status mieb_bs_mean_of(const struct mieb_bs_result *const *parts, int n_parts, double alpha,
                            struct mieb_bs_result *out)
{
    memset(out, 0, sizeof *out);
    if (n_parts < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "bootstrap: an aggregate of no tasks");
    int64_t R = parts[0]->n_resamples;
    for (int i = 1; i < n_parts; i++)
        if (parts[i]->n_resamples != R)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "bootstrap: parts with %lld and %lld resamples", (long long)R,
                             (long long)parts[i]->n_resamples);
    double *t = malloc((size_t)n_parts * sizeof *t);
    out->reps = malloc((size_t)R * sizeof *out->reps);
    out->n_resamples = R;
    if (!t || !out->reps) {
        free(t);
        mieb_bs_result_free(out);
        return mieb_fail(MIEB_ERR_OOM, "bootstrap aggregate");
    }
    double *pt[3] = {&out->a, &out->b, &out->delta};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < n_parts; i++)
            t[i] = k == 0 ? parts[i]->a : k == 1 ? parts[i]->b : parts[i]->delta;
        *pt[k] = mieb_np_mean(t, n_parts);
    }
    for (int i = 0; i < n_parts; i++)
        out->resampled |= parts[i]->resampled;
    for (int64_t r = 0; r < R; r++) {
        for (int i = 0; i < n_parts; i++)
            t[i] = parts[i]->reps[r];
        out->reps[r] = mieb_np_mean(t, n_parts); /* NaN when any part's replicate is */
    }
    free(t);
    mieb_status st = summarise(out, alpha);
    if (st != MIEB_OK)
        mieb_bs_result_free(out);
    return st;
}
