/**
 * retrieval_search.h - mteb's search, reproduced: for a tile of queries, stream the
 * corpus and build each query's results list exactly as mteb's SearchEncoderWrapper does.
 *
 * Full-corpus search (PROTOCOLS.md §8.2): the corpus is cut into mteb's chunks of 50,000
 * documents; in each chunk every query keeps its top min(1001, chunk) documents (backend
 * top-k: score descending, index ascending), which are offered in that order to the
 * emulated heapq of 1000 (mieb_pyheap). Our corpus blocks divide mteb's chunks, so any
 * memory limit gives the same lists.
 * Candidate scoring (§8.3): each query's candidates are scored, ordered best first (ties:
 * candidate-list order), the first min(1000, n) are heappush'ed.
 * The result of each query is its heap array (dict insertion order).
 */
#ifndef MIEB_FAMILIES_RETRIEVAL_SEARCH_H
#define MIEB_FAMILIES_RETRIEVAL_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "../emb/embeddings.h"
#include "../io/task_data.h"
#include "family.h"

#define MIEB_MTEB_TOP_K 1000
#define MIEB_MTEB_CORPUS_CHUNK 50000

/**
 * The offers one query's heap accepted, in offer order (--corpus-parts, host/parts/).
 * An offer the heap hands straight back changes nothing, and one refused by a heap that
 * saw only part of the corpus is refused by any heap that saw a superset before it, so
 * replaying the accepted offers of the parts in corpus order rebuilds the exact heap.
 */
struct mieb_offer_log {
    float *s;
    int64_t *d;
    int64_t n, cap;
};

/** Per-query results of one tile: query t has res_n[t] entries at res_s/res_d + t*k. */
struct mieb_search_out {
    int64_t n_queries;
    int64_t k;        /* the heap's size (mteb's top_k): the stride of res_s and res_d */
    float *res_s;     /* [n_queries, k] scores in heap-array order */
    int64_t *res_d;   /* [n_queries, k] corpus rows */
    int64_t *res_n;   /* [n_queries] */
    struct mieb_offer_log *log; /* [n_queries] when recording (mieb_search_opts.record), else NULL */
};

/** What to search: corpus items [start, end) (chunk-aligned; full search only), whether to record
 *  offers, and mteb's top_k (0: MIEB_MTEB_TOP_K, what every MIEB task uses; the public API's
 *  search takes any). */
struct mieb_search_opts {
    int64_t start, end;
    bool record;
    int64_t top_k;
};

/**
 * Search for the prepared queries `qs` (qrow[t] = row of tile query t in the task's query
 * list, used for candidates) against the corpus role.
 * block_items: corpus items per block (a divisor of 50000, or >= the corpus).
 * opts: NULL = the whole corpus, no recording. Candidate scoring always reads the whole corpus.
 * A set rc->interrupted stops the search at the next block (MIEB_ERR_INTERRUPTED).
 */
mieb_status mieb_search_tile(const struct mieb_run_ctx *rc, struct mieb_qset *qs, int64_t n_tile,
                             const int64_t *qrow, struct mieb_emb_role *corpus,
                             const struct mieb_retrieval_data *rd, int64_t block_items,
                             const struct mieb_search_opts *opts, struct mieb_search_out *out);
/** Allocate empty results for nq queries of top_k each (log arrays too when `record`). */
mieb_status mieb_search_out_alloc(struct mieb_search_out *o, int64_t nq, int64_t top_k, bool record);
void mieb_search_out_free(struct mieb_search_out *o);

/** Bytes of per-query state mieb_search_tile keeps for top_k (for tiling under --mem-limit). */
int64_t mieb_search_bytes_per_query(int64_t top_k);

#endif
