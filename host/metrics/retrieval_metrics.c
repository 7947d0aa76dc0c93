/*
 * retrieval_metrics.c - the accumulator behind retrieval_metrics.h: keeps every query's
 * values (trec_measures.c) and reduces them over queries the way mteb 2.26's
 * calculate_retrieval_scores / parse_metrics_from_scores / make_score_dict do, including
 * nAUC (evaluate_abstention / nauc / abstention_curve) with numpy's exact arithmetic.
 *
 * nAUC: for abstention rates 0, 0.1, ..., 0.9 the curve is the mean metric of the queries
 * kept after dropping the round(rate*n) least confident ones. Since mteb #5613 queries
 * with equal confidence count with their group's mean metric, so the cut inside a tied
 * group no longer depends on input order. nAUC rescales the area under that curve between
 * the flat curve (no useful abstention) and the oracle curve (confidence = the metric).
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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/parallel.h"
#include "../core/pyfloat.h"
#include "../core/stop.h"
#include "../emulation/npmath.h"
#include "trec_measures.h"

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

/* Room for `need` queries' values, doubling from 256. */
static mieb_status reserve_rows(struct mieb_ret_eval *ev, int64_t need)
{
    if (need <= ev->cap)
        return MIEB_OK;
    int64_t cap = ev->cap ? ev->cap : 256;
    while (cap < need)
        cap *= 2;
    struct mieb_ret_query_values *r = realloc(ev->rows, (size_t)cap * sizeof *r);
    if (r == NULL)
        return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot grow to %lld queries", (long long)cap);
    ev->rows = r;
    ev->cap = cap;
    return MIEB_OK;
}

mieb_status mieb_ret_eval_add(struct mieb_ret_eval *ev, const struct mieb_ret_query_result *q)
{
    if (ev == NULL || q == NULL)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "retrieval metrics: NULL argument");
    MIEB_TRY(reserve_rows(ev, ev->n + 1));
    MIEB_TRY(mieb_ret_query_compute(q, &ev->scratch, &ev->rows[ev->n]));
    ev->n++;
    return MIEB_OK;
}

/* Queries per worker below which a thread costs more than it saves (about 50 us a query). */
#define BATCH_MIN_QUERIES 64
#define BATCH_MAX_WORKERS 64

int mieb_ret_eval_batch_workers(int64_t n, int n_threads)
{
    int nt = n_threads > 0 ? n_threads : mieb_par_cpus();
    if (nt > BATCH_MAX_WORKERS)
        nt = BATCH_MAX_WORKERS;
    if ((int64_t)nt > n / BATCH_MIN_QUERIES)
        nt = (int)(n / BATCH_MIN_QUERIES);
    return nt < 1 ? 1 : nt;
}

struct batch_job {
    struct mieb_ret_query_values *rows; /* [n], the batch's slots in ev->rows */
    int64_t n;
    mieb_ret_query_fill_fn fill;
    void *user;
    mieb_status st[BATCH_MAX_WORKERS];
    char msg[BATCH_MAX_WORKERS][512];   /* its message (the record is per thread) */
};

#define STOP_EVERY 16

static void batch_part(void *arg, int t, int nt)
{
    struct batch_job *j = arg;
    struct mieb_ret_scratch scratch = {0};
    int64_t lo, hi;
    mieb_par_range(j->n, t, nt, &lo, &hi);
    j->st[t] = MIEB_OK;
    for (int64_t i = lo; i < hi; i++) {
        struct mieb_ret_query_result q;
        /* a stop signal: once per STOP_EVERY queries (core/stop.h) */
        mieb_status st = (i - lo) % STOP_EVERY == 0 ? mieb_stop_check() : MIEB_OK;
        if (st == MIEB_OK)
            st = j->fill(j->user, i, t, &q);
        if (st == MIEB_OK)
            st = mieb_ret_query_compute(&q, &scratch, &j->rows[i]);
        if (st != MIEB_OK) {
            j->st[t] = st;
            snprintf(j->msg[t], sizeof j->msg[t], "%s", mieb_last_error());
            break;
        }
    }
    mieb_ret_scratch_free(&scratch);
}

mieb_status mieb_ret_eval_add_batch(struct mieb_ret_eval *ev, int64_t n, int n_threads,
                                    mieb_ret_query_fill_fn fill, void *user)
{
    if (ev == NULL || fill == NULL || n < 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "retrieval metrics: bad batch");
    MIEB_TRY(reserve_rows(ev, ev->n + n));
    struct batch_job *j = malloc(sizeof *j);
    if (j == NULL)
        return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: batch state");
    *j = (struct batch_job){.rows = ev->rows + ev->n, .n = n, .fill = fill, .user = user};
    int nt = mieb_ret_eval_batch_workers(n, n_threads);
    mieb_par_run(nt, batch_part, j);
    /* parts are contiguous and each stops at its first failure: the lowest part's is the first */
    mieb_status st = MIEB_OK;
    for (int t = 0; t < nt && st == MIEB_OK; t++)
        if (j->st[t] != MIEB_OK)
            st = mieb_fail(j->st[t], "%s", j->msg[t]);
    if (st == MIEB_OK)
        ev->n += n;
    free(j);
    return st;
}

#define MIEB_NAUC_NRATES 10

/* np.linspace(0, 1, 11)[:-1]: arange(11) * step + start with step = (1 - 0) / 10. */
static void abstention_rates(double rates[MIEB_NAUC_NRATES])
{
    const double step = 1.0 / 10.0;
    for (int i = 0; i < MIEB_NAUC_NRATES; i++)
        rates[i] = (double)i * step + 0.0;
}

/*
 * mteb's abstention_curve(conf, metric) for n queries: `order` is
 * np.argsort(conf, stable=True), `scratch` holds n doubles.
 */
static void abstention_curve(const double *conf, const int64_t *order, const double *metric,
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

/* nauc(): NaN when the oracle area equals the flat one (an exact comparison, as mteb's). */
static double nauc_from_curves(const double abst[MIEB_NAUC_NRATES],
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

/* Each measure's trec_eval and mteb names: the per-query file's columns and the result keys. */
_Static_assert(MIEB_RET_NFAMILY == MIEB_RET_NMEASURES, "measure count");
const struct mieb_ret_measure mieb_ret_measures[MIEB_RET_NMEASURES] = {
    [MIEB_RET_NDCG] = {"ndcg_cut", "ndcg"},      [MIEB_RET_MAP] = {"map_cut", "map"},
    [MIEB_RET_RECALL] = {"recall", "recall"},    [MIEB_RET_P] = {"P", "precision"},
    [MIEB_RET_SUCCESS] = {"success", "hit_rate"}, [MIEB_RET_MRR] = {"mrr_cut", "mrr"},
};

/* ndcg/map/recall/precision/hit_rate: round(sum(values) / len(scores), 5). */
static mieb_status add_means(const struct mieb_ret_eval *ev, struct finish_ws *w, cJSON *scores, int fam,
                             int rounded)
{
    char key[64];
    for (int ki = 0; ki < MIEB_RET_NK; ki++) {
        column(ev, fam, ki, w->col);
        double v = py_sum(w->col, ev->n) / (double)ev->n;
        if (rounded)
            v = mieb_py_round(v, 5);
        snprintf(key, sizeof key, "%s_at_%d", mieb_ret_measures[fam].mteb, mieb_ret_k_values[ki]);
        MIEB_TRY(add_number(scores, key, v));
    }
    return MIEB_OK;
}

/* nauc_<name>_at_K_{max,std,diff1}: mteb's nAUC of one metric family against each feature. */
static mieb_status add_naucs(const struct mieb_ret_eval *ev, struct finish_ws *w, cJSON *scores, int fam)
{
    static const char *const fct[MIEB_CONF_N] = {"max", "std", "diff1"};
    char key[64];
    double oracle[MIEB_NAUC_NRATES], abst[MIEB_NAUC_NRATES];
    for (int ki = 0; ki < MIEB_RET_NK; ki++) {
        column(ev, fam, ki, w->col);
        MIEB_TRY(mieb_np_argsort_stable(w->col, ev->n, w->m_order));
        abstention_curve(w->col, w->m_order, w->col, ev->n, w->tmp, oracle);
        for (int f = 0; f < MIEB_CONF_N; f++) {
            abstention_curve(w->conf[f], w->conf_order[f], w->col, ev->n, w->tmp, abst);
            snprintf(key, sizeof key, "nauc_%s_at_%d_%s", mieb_ret_measures[fam].mteb, mieb_ret_k_values[ki], fct[f]);
            MIEB_TRY(add_number(scores, key, nauc_from_curves(abst, oracle)));
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
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_NDCG, 1));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_MAP, 1));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_RECALL, 1));
    /* accuracy is recall["Recall@1"], already rounded. */
    column(ev, MIEB_RET_RECALL, 0, w->col);
    MIEB_TRY(add_number(scores, "accuracy", mieb_py_round(py_sum(w->col, ev->n) / (double)n, 5)));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_P, 1));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_MRR, 0)); /* avg_mrr: not rounded */
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_NDCG));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_MAP));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_RECALL));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_P));
    MIEB_TRY(add_naucs(ev, w, scores, MIEB_RET_MRR));
    MIEB_TRY(add_means(ev, w, scores, MIEB_RET_SUCCESS, 1));
    return MIEB_OK;
}

double mieb_ret_round_for_write(const char *key, double x, int ndigits)
{
    /* nauc() returns (abst_auc - flat_auc) / (...) with flat_auc an np.float64, hence an
     * np.float64; its NaN is the Python float np.nan, which both roundings leave alone. */
    if (key != NULL && strncmp(key, "nauc_", 5) == 0)
        return mieb_np_round(x, ndigits);
    return mieb_py_round(x, ndigits);
}

/* ---- per-query values ---- */

mieb_status mieb_ret_eval_query(const struct mieb_ret_eval *ev, int64_t i,
                                double out[MIEB_RET_NMEASURES][MIEB_RET_NK])
{
    if (ev == NULL || i < 0 || i >= ev->n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "retrieval metrics: no query %lld", (long long)i);
    memcpy(out, ev->rows[i].m, sizeof ev->rows[i].m);
    return MIEB_OK;
}

double mieb_ret_eval_mean(const struct mieb_ret_eval *ev, int measure, int ki)
{
    if (ev == NULL || ev->n == 0 || measure < 0 || measure >= MIEB_RET_NMEASURES || ki < 0 || ki >= MIEB_RET_NK)
        return NAN;
    double s = 0.0;
    for (int64_t i = 0; i < ev->n; i++)
        s += ev->rows[i].m[measure][ki];
    return s / (double)ev->n;
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
