/*
 * retrieval_metrics.c - the accumulator behind retrieval_metrics.h: keeps every query's
 * values (trec_measures.c) and reduces them over queries the way mteb 2.26's
 * calculate_retrieval_scores / parse_metrics_from_scores / make_score_dict do.
 *
 * pytrec_eval reports every query of the results dict that has qrels, in dict order, and
 * a query with an EMPTY results dict is reported too, with zeros (checked against
 * pytrec_eval-terrier 0.5.x); so the per-query lists, the MRR list and the confidence
 * arrays all have one entry per added query, aligned.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "retrieval_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/pyfloat.h"
#include "npmath.h"
#include "retrieval_internal.h"

struct mieb_ret_eval {
    struct mieb_ret_query_values *rows; /* one per added query, in order */
    int64_t n, cap;
    struct mieb_ret_scratch scratch;
};

mieb_status mieb_ret_eval_new(struct mieb_ret_eval **out)
{
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot allocate the accumulator");
    return MIEB_OK;
}

void mieb_ret_eval_free(struct mieb_ret_eval *ev)
{
    if (ev == NULL)
        return;
    free(ev->rows);
    mieb_ret_scratch_free(&ev->scratch);
    free(ev);
}

int64_t mieb_ret_eval_count(const struct mieb_ret_eval *ev)
{
    return ev->n;
}

mieb_status mieb_ret_eval_add(struct mieb_ret_eval *ev, const struct mieb_ret_query_result *q)
{
    if (ev == NULL || q == NULL)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "retrieval metrics: NULL argument");
    if (ev->n == ev->cap) {
        int64_t cap = ev->cap ? ev->cap * 2 : 256;
        struct mieb_ret_query_values *r = realloc(ev->rows, (size_t)cap * sizeof *r);
        if (r == NULL)
            return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot grow to %lld queries",
                             (long long)cap);
        ev->rows = r;
        ev->cap = cap;
    }
    MIEB_TRY(mieb_ret_query_compute(q, &ev->scratch, &ev->rows[ev->n]));
    ev->n++;
    return MIEB_OK;
}

/* Python's built-in sum() over floats as CPython 3.11 runs it: left to right from 0.
 * (CPython >= 3.12 uses compensated summation instead; see the parity notes.) */
static double py_sum(const double *v, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

static mieb_status add_number(cJSON *obj, const char *key, double v)
{
    if (cJSON_AddNumberToObject(obj, key, v) == NULL)
        return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot add %s", key);
    return MIEB_OK;
}

/* Work arrays for the reduction over queries. */
struct finish_ws {
    double *col;                   /* one per-query metric column */
    double *conf[MIEB_CONF_N];     /* confidence features, query order */
    int64_t *conf_order[MIEB_CONF_N]; /* np.argsort(conf, stable=True) */
    int64_t *m_order;              /* np.argsort(metric, stable=True) for the oracle */
    double *tmp;
};

static void ws_free(struct finish_ws *w)
{
    free(w->col);
    free(w->m_order);
    free(w->tmp);
    for (int f = 0; f < MIEB_CONF_N; f++) {
        free(w->conf[f]);
        free(w->conf_order[f]);
    }
}

static void column(const struct mieb_ret_eval *ev, int fam, int ki, double *col)
{
    for (int64_t i = 0; i < ev->n; i++)
        col[i] = ev->rows[i].m[fam][ki];
}

/* ndcg/map/recall/precision/hit_rate: round(sum(values) / len(scores), 5). */
static mieb_status add_means(const struct mieb_ret_eval *ev, struct finish_ws *w, cJSON *scores,
                             int fam, const char *name, int rounded)
{
    char key[64];
    for (int ki = 0; ki < MIEB_RET_NK; ki++) {
        column(ev, fam, ki, w->col);
        double v = py_sum(w->col, ev->n) / (double)ev->n;
        if (rounded)
            v = mieb_py_round(v, 5);
        snprintf(key, sizeof key, "%s_at_%d", name, mieb_ret_k_values[ki]);
        MIEB_TRY(add_number(scores, key, v));
    }
    return MIEB_OK;
}

/* nauc_<name>_at_K_{max,std,diff1}: mteb's nAUC of one metric family against each feature. */
static mieb_status add_naucs(const struct mieb_ret_eval *ev, struct finish_ws *w, cJSON *scores,
                             int fam, const char *name)
{
    static const char *const fct[MIEB_CONF_N] = {"max", "std", "diff1"};
    char key[64];
    double oracle[MIEB_NAUC_NRATES], abst[MIEB_NAUC_NRATES];
    for (int ki = 0; ki < MIEB_RET_NK; ki++) {
        column(ev, fam, ki, w->col);
        MIEB_TRY(mieb_np_argsort_stable(w->col, ev->n, w->m_order));
        mieb_ret_abstention_curve(w->col, w->m_order, w->col, ev->n, w->tmp, oracle);
        for (int f = 0; f < MIEB_CONF_N; f++) {
            mieb_ret_abstention_curve(w->conf[f], w->conf_order[f], w->col, ev->n, w->tmp, abst);
            snprintf(key, sizeof key, "nauc_%s_at_%d_%s", name, mieb_ret_k_values[ki], fct[f]);
            MIEB_TRY(add_number(scores, key, mieb_ret_nauc_from_curves(abst, oracle)));
        }
    }
    return MIEB_OK;
}

static mieb_status finish(const struct mieb_ret_eval *ev, struct finish_ws *w, cJSON *scores)
{
    size_t n = (size_t)ev->n;
    w->col = malloc(n * sizeof *w->col);
    w->m_order = malloc(n * sizeof *w->m_order);
    w->tmp = malloc(n * sizeof *w->tmp);
    if (!w->col || !w->m_order || !w->tmp)
        return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot allocate for %zu queries", n);
    for (int f = 0; f < MIEB_CONF_N; f++) {
        w->conf[f] = malloc(n * sizeof *w->conf[f]);
        w->conf_order[f] = malloc(n * sizeof *w->conf_order[f]);
        if (!w->conf[f] || !w->conf_order[f])
            return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot allocate for %zu queries",
                             n);
        for (size_t i = 0; i < n; i++)
            w->conf[f][i] = ev->rows[i].conf[f];
        MIEB_TRY(mieb_np_argsort_stable(w->conf[f], ev->n, w->conf_order[f]));
    }

    /* make_score_dict order. */
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_NDCG, "ndcg", 1));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_MAP, "map", 1));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_RECALL, "recall", 1));
    /* accuracy is recall["Recall@1"], already rounded. */
    column(ev, MIEB_RET_RECALL, 0, w->col);
    MIEB_TRY(add_number(scores, "accuracy", mieb_py_round(py_sum(w->col, ev->n) / (double)n, 5)));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_P, "precision", 1));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_MRR, "mrr", 0)); /* avg_mrr: not rounded */
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_NDCG, "ndcg"));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_MAP, "map"));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_RECALL, "recall"));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_P, "precision"));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_MRR, "mrr"));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_SUCCESS, "hit_rate", 1));
    return MIEB_OK;
}

mieb_status mieb_ret_eval_finish(struct mieb_ret_eval *ev, cJSON *scores)
{
    if (ev == NULL || scores == NULL)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "retrieval metrics: NULL argument");
    if (ev->n == 0)
        return mieb_fail(MIEB_ERR_BAD_DATA,
                         "retrieval metrics: no query to score (mteb divides by zero here)");
    struct finish_ws w;
    memset(&w, 0, sizeof w);
    mieb_status st = finish(ev, &w, scores);
    ws_free(&w);
    return st;
}
