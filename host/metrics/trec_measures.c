/*
 * trec_measures.c - one query's retrieval values as mteb obtains them: trec_eval 9.0.8
 * (through pytrec_eval) for ndcg_cut, map_cut, recall, P and success, mteb's own mrr(),
 * and mteb's confidence_scores() features for nAUC.
 *
 * The trec loops follow m_ndcg_cut.c, m_map_cut.c, m_recall.c, m_P.c and m_success.c
 * statement by statement, so every double is produced by the same operations in the same
 * order. Relevance level is 1. trec_eval marks retrieved docs without a qrels entry -1 and
 * negative qrels -2; every measure here only asks "rel >= 1" or "gain > 0", so the raw
 * qrels value (0 for no entry) gives the same answers.
 */
#define _GNU_SOURCE /* qsort_r */

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off") /* no fused multiply-add: trec_eval has none */
#endif

#include "trec_measures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../emulation/npmath.h"
#include "../core/radix_sort.h"

const int mieb_ret_k_values[MIEB_RET_NK] = {1, 3, 5, 10, 20, 100, 1000};

void mieb_ret_scratch_free(struct mieb_ret_scratch *s)
{
    free(s->order);
    free(s->rel_rank);
    free(s->gains);
    free(s->dbl);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

static mieb_status scratch_reserve(struct mieb_ret_scratch *s, int64_t n_docs, int64_t n_qrels)
{
    if (n_docs > s->cap_docs) {
        size_t n = (size_t)n_docs;
        size_t *o = realloc(s->order, n * sizeof *o);
        if (o)
            s->order = o;
        int64_t *r = realloc(s->rel_rank, n * sizeof *r);
        if (r)
            s->rel_rank = r;
        double *d = realloc(s->dbl, n * sizeof *d);
        if (d)
            s->dbl = d;
        uint64_t *k = realloc(s->keys, 2 * n * sizeof *k);
        if (k)
            s->keys = k;
        if (!o || !r || !d || !k)
            return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot allocate for %lld docs",
                             (long long)n_docs);
        s->cap_docs = n_docs;
    }
    if (n_qrels > s->cap_qrels) {
        int64_t *g = realloc(s->gains, (size_t)n_qrels * sizeof *g);
        if (!g)
            return mieb_fail(MIEB_ERR_OOM, "retrieval metrics: cannot allocate for %lld qrels",
                             (long long)n_qrels);
        s->gains = g;
        s->cap_qrels = n_qrels;
    }
    return MIEB_OK;
}

/*
 * trec_eval's comp_sim_docno: score descending, then docno by strcmp descending. mteb's
 * mrr() sorts by the (score, doc_id) tuple in reverse, the same order (UTF-8 byte order
 * is code point order). Doc ids are unique, so the order is total and qsort deterministic.
 */
static int cmp_rank(const void *pa, const void *pb, void *ctx)
{
    const struct mieb_ret_query_result *q = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    float sa = q->scores[a], sb = q->scores[b];
    if (sa > sb)
        return -1;
    if (sa < sb)
        return 1;
    return strcmp(q->doc_ids[b], q->doc_ids[a]);
}

static int cmp_docid_desc(const void *pa, const void *pb, void *ctx)
{
    const struct mieb_ret_query_result *q = ctx;
    return strcmp(q->doc_ids[*(const size_t *)pb], q->doc_ids[*(const size_t *)pa]);
}

/*
 * The order of cmp_rank without a comparison sort over the whole list (that qsort was most
 * of the metric time): an LSD radix sort on order-preserving keys of the scores (-0 keyed
 * as +0, since they compare equal), stable, then each run of equal scores sorted by doc id.
 * keys: 2n scratch. The scores must not be NaN (callers reject them first).
 */
static void rank_order(const struct mieb_ret_query_result *q, size_t *order, uint64_t *keys)
{
    int64_t n = q->n;
    for (int64_t i = 0; i < n; i++) /* ascending key = score descending; the index keeps it stable */
        keys[i] = mieb_best_first_key(q->scores[i], (uint32_t)i);
    mieb_radix_sort_u64(keys, NULL, keys + n, NULL, n, 4, 8);
    for (int64_t i = 0; i < n; i++)
        order[i] = (size_t)(keys[i] & 0xFFFFFFFFu);
    for (int64_t i = 0; i < n;) { /* ties: doc id descending, as trec_eval */
        int64_t j = i + 1;
        while (j < n && (keys[j] >> 32) == (keys[i] >> 32))
            j++;
        if (j - i > 1)
            qsort_r(order + i, (size_t)(j - i), sizeof *order, cmp_docid_desc, (void *)q);
        i = j;
    }
}

static int cmp_int64_desc(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a < b) - (a > b);
}

/* m_ndcg_cut.c: DCG over the ranking, then each cutoff divided by the ideal DCG at it. */
static void trec_ndcg_cut(const int64_t *rel, int64_t n, const int64_t *gains, int64_t n_pos,
                          double *out)
{
    const int *cut = mieb_ret_k_values;
    int ci = 0;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (i == cut[ci]) {
            out[ci] = sum;
            if (++ci == MIEB_RET_NK)
                break;
        }
        double gain = (double)rel[i];
        if (gain > 0)
            sum += gain / log2((double)(i + 2)); /* doc i has rank i+1 */
    }
    while (ci < MIEB_RET_NK)
        out[ci++] = sum;

    /* Ideal ranking: every positive qrels value, retrieved or not, highest first; trec
     * walks its rel_levels histogram down to level 1, which yields this sequence. */
    ci = 0;
    double ideal_dcg = 0.0;
    for (int64_t i = 0; i < n_pos; i++) {
        if (i == cut[ci]) {
            if (ideal_dcg > 0.0)
                out[ci] /= ideal_dcg;
            if (++ci == MIEB_RET_NK)
                break;
        }
        double gain = (double)gains[i];
        ideal_dcg += gain / (double)log2((double)(i + 2));
    }
    while (ci < MIEB_RET_NK) {
        if (ideal_dcg > 0.0)
            out[ci] /= ideal_dcg;
        ci++;
    }
}

/* m_map_cut.c: precision at each relevant rank, summed, divided by R (not min(K, R)). */
static void trec_map_cut(const int64_t *rel, int64_t n, int64_t num_rel, double *out)
{
    const int *cut = mieb_ret_k_values;
    int ci = 0;
    long rel_so_far = 0;
    double sum = 0.0;
    if (num_rel == 0)
        return; /* values stay at the zero pytrec_eval initialises them to */
    for (int64_t i = 0; i < n; i++) {
        if (i == cut[ci]) {
            out[ci] = sum / (double)num_rel;
            if (++ci == MIEB_RET_NK)
                break;
        }
        if (rel[i] >= 1) {
            rel_so_far++;
            sum += (double)rel_so_far / (double)(i + 1);
        }
    }
    while (ci < MIEB_RET_NK)
        out[ci++] = sum / (double)num_rel;
}

/* m_recall.c, m_P.c and m_success.c share one walk: relevant docs within each cutoff. */
static void trec_counts(const int64_t *rel, int64_t n, int64_t num_rel, double *recall,
                        double *prec, double *success)
{
    const int *cut = mieb_ret_k_values;
    int ci = 0;
    long rel_so_far = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == cut[ci]) {
            if (num_rel != 0)
                recall[ci] = (double)rel_so_far / (double)num_rel;
            prec[ci] = (double)rel_so_far / (double)i;
            success[ci] = rel_so_far ? 1.0 : 0.0;
            if (++ci == MIEB_RET_NK)
                break;
        }
        if (rel[i] >= 1)
            rel_so_far++;
    }
    for (; ci < MIEB_RET_NK; ci++) {
        if (num_rel != 0)
            recall[ci] = (double)rel_so_far / (double)num_rel;
        /* P: cutoffs beyond the list count the missing docs as non-relevant. */
        prec[ci] = (double)rel_so_far / (double)cut[ci];
        success[ci] = rel_so_far ? 1.0 : 0.0;
    }
}

mieb_status mieb_ret_trec_order(const struct mieb_ret_query_result *q, size_t *order)
{
    if (q == NULL || (q->n > 0 && (order == NULL || q->scores == NULL || q->doc_ids == NULL)))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "retrieval metrics: bad query arrays");
    int nan = 0;
    for (int64_t i = 0; i < q->n; i++)
        nan |= isnan(q->scores[i]);
    uint64_t *keys = nan || q->n > UINT32_MAX ? NULL : malloc(sizeof *keys * (size_t)(2 * q->n + 1));
    if (keys) {
        rank_order(q, order, keys);
        free(keys);
        return MIEB_OK;
    }
    for (int64_t i = 0; i < q->n; i++) /* NaN (not ranked by keys) or no memory: the comparison sort */
        order[i] = (size_t)i;
    if (q->n > 1)
        qsort_r(order, (size_t)q->n, sizeof *order, cmp_rank, (void *)q);
    return MIEB_OK;
}

mieb_status mieb_ret_query_compute(const struct mieb_ret_query_result *q,
                                   struct mieb_ret_scratch *s,
                                   struct mieb_ret_query_values *out)
{
    int64_t n = q->n, nq = q->n_qrels;
    if (n < 0 || nq < 0 || (n > 0 && (!q->scores || !q->doc_ids || !q->rel)) ||
        (nq > 0 && !q->qrels_values))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "retrieval metrics: bad query arrays");
    for (int64_t i = 0; i < n; i++)
        if (isnan(q->scores[i]))
            return mieb_fail(MIEB_ERR_BAD_DATA,
                             "retrieval metrics: NaN similarity for doc %s", q->doc_ids[i]);
    MIEB_TRY(scratch_reserve(s, n, nq));
    memset(out, 0, sizeof *out);

    if (n > 0)
        rank_order(q, s->order, s->keys); /* no NaN: refused above */
    for (int64_t i = 0; i < n; i++)
        s->rel_rank[i] = q->rel[s->order[i]];

    /* R counts qrels >= relevance level 1; the ideal ranking uses the values > 0. A query
     * whose qrels are all <= -2 crashes pytrec_eval (form_res_rels memsets a negative
     * size); it gets the natural zeros here. */
    int64_t num_rel = 0, n_pos = 0;
    for (int64_t j = 0; j < nq; j++) {
        if (q->qrels_values[j] >= 1)
            num_rel++;
        if (q->qrels_values[j] > 0)
            s->gains[n_pos++] = q->qrels_values[j];
    }
    if (n_pos > 1)
        qsort(s->gains, (size_t)n_pos, sizeof *s->gains, cmp_int64_desc);

    trec_ndcg_cut(s->rel_rank, n, s->gains, n_pos, out->m[MIEB_RET_NDCG]);
    trec_map_cut(s->rel_rank, n, num_rel, out->m[MIEB_RET_MAP]);
    trec_counts(s->rel_rank, n, num_rel, out->m[MIEB_RET_RECALL], out->m[MIEB_RET_P],
                out->m[MIEB_RET_SUCCESS]);

    /* mteb mrr(): 1/(rank) of the first doc with qrels > 0 within the top k (k <= 1000). */
    for (int ki = 0; ki < MIEB_RET_NK; ki++) {
        int64_t lim = n < mieb_ret_k_values[ki] ? n : mieb_ret_k_values[ki];
        double rr = 0.0;
        for (int64_t r = 0; r < lim; r++) {
            if (s->rel_rank[r] > 0) {
                rr = 1.0 / (double)(r + 1);
                break;
            }
        }
        out->m[MIEB_RET_MRR][ki] = rr;
    }

    /* confidence_scores(): max, np.std over the dict values in insertion order, top1-top2;
     * all zero for an empty dict. */
    if (n > 0) {
        out->conf[MIEB_CONF_MAX] = (double)q->scores[s->order[0]];
        for (int64_t i = 0; i < n; i++)
            s->dbl[i] = (double)q->scores[i];
        /* mieb_np_std may square in place: the mean is taken before the overwrite. */
        out->conf[MIEB_CONF_STD] = mieb_np_std(s->dbl, n, s->dbl);
        if (n > 1)
            out->conf[MIEB_CONF_DIFF1] =
                (double)q->scores[s->order[0]] - (double)q->scores[s->order[1]];
    }
    return MIEB_OK;
}
