/**
 * trec_measures.h - one query's results dict as mteb holds it, trec_eval's ranking of it, and
 * the query's measures computed from it (trec_measures.c): the bottom of the retrieval metrics,
 * under the accumulator of retrieval_metrics.h, which alone is their public face.
 */
#ifndef MIEB_METRICS_TREC_MEASURES_H
#define MIEB_METRICS_TREC_MEASURES_H

#include <stddef.h>
#include <stdint.h>

#include "../core/status.h"

#define MIEB_RET_NK 7
/** mteb's k_values: 1, 3, 5, 10, 20, 100, 1000. */
extern const int mieb_ret_k_values[MIEB_RET_NK];

/**
 * One query's results dict exactly as mteb holds it when metrics are computed, i.e. after
 * the top-1000 heap and after skip_first_result: n entries in dict insertion order.
 * An empty dict (n == 0) is a scored query with zeros, as pytrec_eval reports it.
 * Preconditions (a dict guarantees them in mteb): doc ids are unique, and rel[i] is the
 * value of doc i's entry among qrels_values. A NaN score is refused (MIEB_ERR_BAD_DATA).
 * A query whose qrels are all <= -2 crashes pytrec_eval; here it scores zeros.
 */
struct mieb_ret_query_result {
    int64_t n;                    /* entries in the results dict (0 .. 1000) */
    const float *scores;          /* [n] similarity (fp32, as torch produced it) */
    const char *const *doc_ids;   /* [n] corpus id strings */
    const int32_t *rel;           /* [n] qrels value of each doc; 0 when the doc has no qrels entry */
    int64_t n_qrels;              /* all qrels entries of this query (any value, retrieved or not) */
    const int32_t *qrels_values;  /* [n_qrels] */
};

/**
 * trec_eval's ranking of a results dict (score descending, ties by doc id string
 * descending): order[r] = index in q of the doc at rank r+1. order has q->n entries.
 */
mieb_status mieb_ret_trec_order(const struct mieb_ret_query_result *q, size_t *order);

/* Per-query metric families, in the order mteb builds its dicts. */
enum mieb_ret_family {
    MIEB_RET_NDCG = 0,   /* trec ndcg_cut */
    MIEB_RET_MAP = 1,    /* trec map_cut */
    MIEB_RET_RECALL = 2, /* trec recall */
    MIEB_RET_P = 3,      /* trec P */
    MIEB_RET_SUCCESS = 4,/* trec success (mteb's hit_rate) */
    MIEB_RET_MRR = 5,    /* mteb's mrr() */
    MIEB_RET_NFAMILY = 6
};

/* mteb's confidence_scores() features, in its dict order. */
enum mieb_ret_conf { MIEB_CONF_MAX = 0, MIEB_CONF_STD = 1, MIEB_CONF_DIFF1 = 2, MIEB_CONF_N = 3 };

/** Everything mteb keeps about one query: raw per-query metric values and confidences. */
struct mieb_ret_query_values {
    double m[MIEB_RET_NFAMILY][MIEB_RET_NK];
    double conf[MIEB_CONF_N];
};

/** Reusable per-query work space (grown on demand, freed with mieb_ret_scratch_free). */
struct mieb_ret_scratch {
    size_t *order;     /* ranking: indices into the results dict */
    int64_t *rel_rank; /* qrels value at each rank */
    int64_t *gains;    /* positive qrels values, highest first (ideal ranking) */
    double *dbl;       /* np.std work space */
    uint64_t *keys;    /* [2 * cap_docs] radix sort of the ranking */
    int64_t cap_docs, cap_qrels;
};
void mieb_ret_scratch_free(struct mieb_ret_scratch *s);

/**
 * Compute one query's values: trec_eval 9.0.8's ndcg_cut, map_cut, recall, P and success,
 * mteb's reciprocal ranks and its confidence features. Fails with MIEB_ERR_BAD_DATA on a
 * NaN score, MIEB_ERR_INVALID_ARG on NULL arrays, MIEB_ERR_OOM.
 */
mieb_status mieb_ret_query_compute(const struct mieb_ret_query_result *q,
                                   struct mieb_ret_scratch *s,
                                   struct mieb_ret_query_values *out);

#endif
