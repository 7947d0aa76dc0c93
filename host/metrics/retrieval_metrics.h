/**
 * retrieval_metrics.h - mteb's retrieval scores, bit for bit (PROTOCOLS.md §8.4-8.5).
 *
 * Per query: trec_eval 9.0.8 semantics for ndcg_cut, map_cut, recall, P and success
 * (ranking by score descending, ties by doc id string descending, relevance_level 1),
 * mteb's MRR, and the nAUC confidence features (max, std, diff1) over the results dict.
 * Over queries: mteb's averaging (Python sequential sum / n, rounded to 5 decimals for
 * the trec measures; MRR unrounded), and nAUC with numpy's exact arithmetic (pairwise
 * summation, stable argsort, trapezoid). Queries are added in results-dict order, which
 * is the order of the task's (filtered) query list.
 */
#ifndef MIEB_METRICS_RETRIEVAL_H
#define MIEB_METRICS_RETRIEVAL_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "../core/status.h"
#include "trec_measures.h"

struct mieb_ret_eval; /* opaque accumulator of per-query values */

mieb_status mieb_ret_eval_new(struct mieb_ret_eval **out);
/** Compute and keep this query's per-query values. Copies what it needs; q may be reused. */
mieb_status mieb_ret_eval_add(struct mieb_ret_eval *ev, const struct mieb_ret_query_result *q);

/**
 * Fills *q with the i-th query of a batch, on worker `worker` (0 .. workers - 1); q's arrays
 * must stay valid until the next call on the same worker. A non-OK status stops the batch.
 */
typedef mieb_status (*mieb_ret_query_fill_fn)(void *user, int64_t i, int worker, struct mieb_ret_query_result *q);

/** How many workers mieb_ret_eval_add_batch uses for n queries with n_threads (0: all cores). */
int mieb_ret_eval_batch_workers(int64_t n, int n_threads);

/**
 * n calls of mieb_ret_eval_add, for the queries fill gives, on the workers
 * mieb_ret_eval_batch_workers(n, n_threads) says, each a contiguous range of the batch.
 * Every query's values are computed alone, so the result is the same for any thread
 * count; on failure the error is the first failing query's, as the calls in turn give it.
 */
mieb_status mieb_ret_eval_add_batch(struct mieb_ret_eval *ev, int64_t n, int n_threads,
                                    mieb_ret_query_fill_fn fill, void *user);
/**
 * Append mteb's 148 metric keys, in make_score_dict order, to the JSON object `scores`
 * (ndcg_at_K, map_at_K, recall_at_K, accuracy, precision_at_K, mrr_at_K,
 * nauc_{ndcg,map,recall,precision}_at_K_{max,std,diff1}, nauc_mrr_at_K_{...}, hit_rate_at_K).
 * Values are doubles with mteb's internal rounding applied (NaN where mteb gives NaN);
 * the 6-decimal write-time rounding is the results writer's job.
 * Fails with MIEB_ERR_BAD_DATA when no query was added (mteb divides by zero there).
 */
mieb_status mieb_ret_eval_finish(struct mieb_ret_eval *ev, cJSON *scores);
int64_t mieb_ret_eval_count(const struct mieb_ret_eval *ev);

/**
 * Round one of the values above as mteb's TaskResult.to_disk does (round(v, ndigits)).
 * In mteb the nAUC values (keys "nauc_...") are numpy.float64 objects, so Python's
 * round() dispatches to numpy's rounding (mieb_np_round); every other retrieval value is
 * a Python float (mieb_py_round). The two differ only near a decimal tie.
 */
double mieb_ret_round_for_write(const char *key, double x, int ndigits);
void mieb_ret_eval_free(struct mieb_ret_eval *ev);

/* ---- per-query values (--per-query): what the averages above are computed from ---- */

/** Per-query measures, in the order mieb_ret_eval_query fills them. */
#define MIEB_RET_NMEASURES 6
/**
 * One measure's two names, as trec_eval's measure table gives each measure one descriptor:
 * trec, in trec_eval's style "<trec>_<K>" (the per_query.tsv columns): "ndcg_cut", "map_cut",
 * "recall", "P", "success" (trec_eval 9.0.8, relevance level 1) and "mrr_cut" (mteb's MRR@K:
 * 1/rank of the first doc with qrels > 0 within the top K); mteb, mteb's key "<mteb>_at_<K>"
 * (and "nauc_<mteb>_at_<K>_..."): ndcg, map, recall, precision, hit_rate, mrr.
 */
struct mieb_ret_measure {
    const char *trec, *mteb;
};
extern const struct mieb_ret_measure mieb_ret_measures[MIEB_RET_NMEASURES];

/** The i-th added query's values, unrounded: out[measure][k index] (k = mieb_ret_k_values). */
mieb_status mieb_ret_eval_query(const struct mieb_ret_eval *ev, int64_t i,
                                double out[MIEB_RET_NMEASURES][MIEB_RET_NK]);

/** The mean over queries of one measure as mteb takes it (sequential sum / n), before rounding. */
double mieb_ret_eval_mean(const struct mieb_ret_eval *ev, int measure, int ki);

#endif
