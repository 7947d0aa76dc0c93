/**
 * retrieval_post.h - the retrieval driver's steps, shared by `run` (retrieval.c) and by
 * corpus parts and `merge` (host/parts/): load a subset's ground truth, search the kept
 * queries tile by tile, and turn each tile's results dicts into mteb's metrics (and the
 * --per-query files).
 *
 *   mieb_ret_subset_load -> mieb_ret_roles_open -> mieb_ret_post_open
 *       -> mieb_ret_search (tiles handed to a callback, e.g. mieb_ret_post_add)
 *       -> mieb_ret_post_finish
 *
 * `merge` replays partial search results into mieb_search_out tiles and calls
 * mieb_ret_post_add/finish itself, so both paths compute the metrics with the same code.
 */
#ifndef MIEB_FAMILIES_RETRIEVAL_POST_H
#define MIEB_FAMILIES_RETRIEVAL_POST_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "family.h"
#include "retrieval_search.h"

/** One subset's ground truth, checked (unique ids), and the queries mteb keeps. */
struct mieb_ret_subset {
    struct mieb_retrieval_data rd;
    int64_t *kept;      /* rows of the queries with at least one qrels entry (§8.1), increasing */
    int64_t n_kept;
    bool skip_first;    /* the task's skip_first_result */
    char grp[512];      /* "/<split>/<subset>" for messages */
    const char *td_path;
};

mieb_status mieb_ret_subset_load(const struct mieb_task *task, struct mieb_taskdata *td, const char *split,
                                 const char *subset, struct mieb_ret_subset *out);
void mieb_ret_subset_free(struct mieb_ret_subset *s);

/** The query and corpus roles, checked against the ground truth and the similarity. */
struct mieb_ret_roles {
    struct mieb_emb_role *q, *c;
};
mieb_status mieb_ret_roles_open(const struct mieb_emb_source *src, enum mieb_sim sim, const char *task, const char *split,
                                const char *subset, const struct mieb_ret_subset *s, struct mieb_ret_roles *out);
void mieb_ret_roles_close(struct mieb_ret_roles *r);

/** Receives each searched tile: qrow[t] = query row of tile query t (n = so->n_queries). */
typedef mieb_status (*mieb_ret_tile_fn)(void *user, const int64_t *qrow, struct mieb_search_out *so);

/**
 * Search the kept queries, in tiles sized by rc->mem_limit, against the corpus items of
 * `range` (NULL: the whole corpus), handing every tile to fn. Fails when no query is kept.
 * With range->record the tiles carry the accepted offers (mieb_search_out.log).
 */
mieb_status mieb_ret_search(const struct mieb_run_ctx *rc, const char *task, const struct mieb_ret_subset *s,
                            struct mieb_ret_roles *roles, const struct mieb_search_opts *range,
                            mieb_ret_tile_fn fn, void *user);

/** Metric accumulator (+ --per-query files when per_query_dir is set) of one subset; each tile's
    queries are prepared and measured on n_threads threads (0: all; one with per-query files). */
struct mieb_ret_post;
mieb_status mieb_ret_post_open(const struct mieb_ret_subset *s, const char *per_query_dir, const char *task,
                               const char *split, const char *subset, int n_threads, struct mieb_ret_post **out);
/** Score a tile of results dicts (heap arrays; applies dict collapse and skip_first_result in place). */
mieb_status mieb_ret_post_add(void *post, const int64_t *qrow, struct mieb_search_out *so);
/** The metric keys, in mteb's order, into `scores`; the --per-query files are renamed into place. */
mieb_status mieb_ret_post_finish(struct mieb_ret_post *p, cJSON *scores);
/** Free; per-query files not yet finished are removed. */
void mieb_ret_post_free(struct mieb_ret_post *p);

#endif
