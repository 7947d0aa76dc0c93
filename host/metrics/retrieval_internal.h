/*
 * retrieval_internal.h - pieces shared by the retrieval metric files (not public API):
 * the per-query values and their computation (trec_measures.c).
 */
#ifndef MIEB_METRICS_RETRIEVAL_INTERNAL_H
#define MIEB_METRICS_RETRIEVAL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "retrieval_metrics.h"

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
