/*
 * nauc.c - mteb's nAUC (evaluate_abstention / nauc / abstention_curve in mteb 2.26's
 * _evaluators/retrieval_metrics.py) with numpy's exact arithmetic.
 *
 * For abstention rates 0, 0.1, ..., 0.9 the curve is the mean metric of the queries kept
 * after dropping the round(rate*n) least confident ones. Since mteb #5613 queries with
 * equal confidence count with their group's mean metric, so the cut inside a tied group
 * no longer depends on input order. nAUC rescales the area under that curve between the
 * flat curve (no useful abstention) and the oracle curve (confidence = the metric).
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off") /* numpy rounds every product: no fused ops */
#endif

#include <math.h>

#include "npmath.h"
#include "retrieval_internal.h"

/* np.linspace(0, 1, 11)[:-1]: arange(11) * step + start with step = (1 - 0) / 10. */
static void abstention_rates(double rates[MIEB_NAUC_NRATES])
{
    const double step = 1.0 / 10.0;
    for (int i = 0; i < MIEB_NAUC_NRATES; i++)
        rates[i] = (double)i * step + 0.0;
}

void mieb_ret_abstention_curve(const double *conf, const int64_t *order, const double *metric,
                               int64_t n, double *scratch, double curve[MIEB_NAUC_NRATES])
{
    double rates[MIEB_NAUC_NRATES];
    abstention_rates(rates);
    if (n <= 0) {
        for (int i = 0; i < MIEB_NAUC_NRATES; i++)
            curve[i] = NAN; /* np.full(len(rates), np.nan) */
        return;
    }
    double *sm = scratch; /* sorted_metrics, then replaced by the group means */
    for (int64_t i = 0; i < n; i++)
        sm[i] = metric[order[i]];
    /* Groups of equal sorted confidence (sorted_conf[1:] != sorted_conf[:-1] starts a new
     * one, so each NaN is a group of its own). Mean = np.add.reduceat segment / size. */
    int64_t s = 0;
    while (s < n) {
        int64_t e = s + 1;
        while (e < n && conf[order[e]] == conf[order[e - 1]])
            e++;
        double mean = mieb_np_reduceat_segment(sm + s, e - s) / (double)(e - s);
        for (int64_t i = s; i < e; i++)
            sm[i] = mean;
        s = e;
    }
    for (int r = 0; r < MIEB_NAUC_NRATES; r++) {
        /* min(round(rate * n), n - 1); Python's round of an np.float64 is half to even,
         * which nearbyint gives in the default rounding mode. */
        double kd = nearbyint(rates[r] * (double)n);
        int64_t k = (int64_t)kd;
        if (k > n - 1)
            k = n - 1;
        curve[r] = mieb_np_mean(sm + k, n - k);
    }
}

double mieb_ret_nauc_from_curves(const double abst[MIEB_NAUC_NRATES],
                                 const double oracle[MIEB_NAUC_NRATES])
{
    double rates[MIEB_NAUC_NRATES], tmp[MIEB_NAUC_NRATES];
    abstention_rates(rates);
    /* sklearn.metrics.auc(rates, curve): rates increase, so direction is 1. */
    double abst_auc = mieb_np_trapezoid(abst, rates, MIEB_NAUC_NRATES, tmp);
    double or_auc = mieb_np_trapezoid(oracle, rates, MIEB_NAUC_NRATES, tmp);
    double flat_auc = oracle[0] * (rates[MIEB_NAUC_NRATES - 1] - rates[0]);
    if (or_auc == flat_auc)
        return NAN;
    return (abst_auc - flat_auc) / (or_auc - flat_auc);
}
