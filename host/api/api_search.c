/* api_search.c - mieb_search (include/mieb.h): mteb's retrieval search on two arrays, through
   the retrieval driver's own search (families/retrieval_post.h) over memory roles. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../families/retrieval_post.h"
#include "api_engine.h"

#define SEARCH_TASK "search" /* the names the two memory roles go by in messages */

/* The output arrays and the order asked for: the search's tile callback fills them. */
struct search_sink {
    const struct mieb_search_request *rq;
    mieb_engine *e;
    int64_t queries_done; /* of the tiles handed over so far */
    char **ids;
    float *scores;
    int64_t *indices, *counts;
    int64_t top_k;
};

struct ranked {
    float s;
    int64_t d;
    const char *id;
};

/* sorted((score, id) tuples, reverse=True): score descending, then id descending */
static int by_rank(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s > b->s ? -1 : 1;
    return -strcmp(a->id, b->id);
}

static mieb_status take_tile(void *user, const int64_t *qrow, struct mieb_search_out *so)
{
    struct search_sink *k = user;
    struct ranked *tmp = k->rq->order == MIEB_ORDER_RANK ? malloc(sizeof *tmp * (size_t)k->top_k) : NULL;
    if (k->rq->order == MIEB_ORDER_RANK && !tmp)
        return mieb_fail(MIEB_ERR_OOM, "search output");
    for (int64_t t = 0; t < so->n_queries; t++) {
        int64_t q = qrow[t], n = so->res_n[t];
        const float *s = so->res_s + t * so->k;
        const int64_t *d = so->res_d + t * so->k;
        float *os = k->scores + q * k->top_k;
        int64_t *od = k->indices + q * k->top_k;
        if (tmp) {
            for (int64_t j = 0; j < n; j++)
                tmp[j] = (struct ranked){s[j], d[j], k->ids[d[j]]};
            qsort(tmp, (size_t)n, sizeof *tmp, by_rank);
            for (int64_t j = 0; j < n; j++)
                os[j] = tmp[j].s, od[j] = tmp[j].d;
        } else {
            memcpy(os, s, sizeof(float) * (size_t)n);
            memcpy(od, d, sizeof(int64_t) * (size_t)n);
        }
        k->counts[q] = n;
    }
    k->queries_done += so->n_queries;
    free(tmp);
    return MIEB_OK;
}

/* After each corpus block: pairs searched so far, of queries x corpus. */
static void block_done(void *user, int64_t tile_queries, int64_t items_done, int64_t items_total)
{
    const struct search_sink *k = user;
    (void)items_total;
    int64_t nd = k->rq->corpus.rows;
    k->e->progress(k->queries_done * nd + tile_queries * items_done, k->rq->queries.rows * nd, k->e->progress_user);
}

static mieb_status check_request(const struct mieb_search_request *rq)
{
    const struct mieb_array *q = &rq->queries, *c = &rq->corpus;
    if (q->rows < 0 || c->rows < 0 || q->dim < 1 || c->dim < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "queries (%lld, %lld) and corpus (%lld, %lld): shapes must be (n, dim >= 1)",
                         (long long)q->rows, (long long)q->dim, (long long)c->rows, (long long)c->dim);
    if (q->dim != c->dim)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "queries have dimension %lld, the corpus %lld", (long long)q->dim,
                         (long long)c->dim);
    if (rq->top_k < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "top_k %lld: must be at least 1", (long long)rq->top_k);
    if (rq->order != MIEB_ORDER_RANK && rq->order != MIEB_ORDER_HEAP)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "order %d is not rank (0) or heap (1)", (int)rq->order);
    if ((rq->cand_indptr == NULL) != (rq->cand_doc == NULL))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "candidates need both cand_indptr and cand_doc");
    if (!rq->cand_indptr)
        return MIEB_OK;
    if (rq->cand_indptr[0] != 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cand_indptr[0] is %lld, not 0", (long long)rq->cand_indptr[0]);
    for (int64_t i = 0; i < q->rows; i++) {
        if (rq->cand_indptr[i + 1] < rq->cand_indptr[i])
            return mieb_fail(MIEB_ERR_INVALID_ARG, "cand_indptr decreases at query %lld", (long long)i);
        for (int64_t j = rq->cand_indptr[i]; j < rq->cand_indptr[i + 1]; j++)
            if (rq->cand_doc[j] < 0 || rq->cand_doc[j] >= c->rows)
                return mieb_fail(MIEB_ERR_INVALID_ARG, "query %lld: candidate %lld is not a corpus row (0..%lld)",
                                 (long long)i, (long long)rq->cand_doc[j], (long long)c->rows - 1);
    }
    return MIEB_OK;
}

/* The retrieval driver's subset, made from the request: every query kept, the caller's ids
   (or decimal row numbers) for the corpus, the candidates when reranking. */
static mieb_status make_subset(const struct mieb_search_request *rq, struct mieb_ret_subset *s)
{
    int64_t nq = rq->queries.rows, nd = rq->corpus.rows;
    memset(s, 0, sizeof *s);
    snprintf(s->grp, sizeof s->grp, "/arrays");
    s->td_path = "mieb_search";
    s->rd.n_queries = nq;
    s->rd.n_corpus = nd;
    /* one block, pointers then bytes, as the task-data reader makes it (mieb_retrieval_data_free) */
    size_t bytes = 0;
    for (int64_t i = 0; i < nd; i++)
        bytes += (rq->corpus_ids ? strlen(rq->corpus_ids[i]) : 20) + 1;
    s->rd.corpus_ids = malloc(sizeof(char *) * ((size_t)nd + 1) + bytes);
    s->kept = malloc(sizeof(int64_t) * ((size_t)nq + 1));
    if (!s->rd.corpus_ids || !s->kept)
        return mieb_fail(MIEB_ERR_OOM, "search of %lld queries over %lld documents", (long long)nq, (long long)nd);
    for (int64_t i = 0; i < nq; i++)
        s->kept[i] = i;
    s->n_kept = nq;
    char *pool = (char *)(s->rd.corpus_ids + nd + 1);
    for (int64_t i = 0; i < nd; i++) {
        s->rd.corpus_ids[i] = pool;
        if (rq->corpus_ids) {
            size_t l = strlen(rq->corpus_ids[i]);
            memcpy(pool, rq->corpus_ids[i], l + 1);
            pool += l + 1;
        } else {
            pool += sprintf(pool, "%" PRId64, i) + 1;
        }
    }
    if (rq->cand_indptr) {
        int64_t m = rq->cand_indptr[nq];
        s->rd.cand_indptr = malloc(sizeof(int64_t) * ((size_t)nq + 1));
        s->rd.cand_doc = malloc(sizeof(int64_t) * ((size_t)m + 1));
        if (!s->rd.cand_indptr || !s->rd.cand_doc)
            return mieb_fail(MIEB_ERR_OOM, "%lld candidates", (long long)m);
        memcpy(s->rd.cand_indptr, rq->cand_indptr, sizeof(int64_t) * ((size_t)nq + 1));
        memcpy(s->rd.cand_doc, rq->cand_doc, sizeof(int64_t) * (size_t)m);
    }
    return MIEB_OK;
}

static mieb_status search(mieb_engine *e, const struct mieb_search_request *rq, struct search_sink *sink)
{
    enum mieb_sim sim;
    struct mieb_emb_memory mem[2];
    struct mieb_ret_subset s;
    struct mieb_ret_roles roles = {0};
    MIEB_TRY(check_request(rq));
    MIEB_TRY(mieb_api_similarity(rq->similarity, &sim));
    mem[0] = mieb_api_memory_role(&rq->queries, NULL, NULL, SEARCH_TASK, "-", "-", "queries");
    mem[1] = mieb_api_memory_role(&rq->corpus, NULL, NULL, SEARCH_TASK, "-", "-", "corpus");
    struct mieb_emb_source src = {.mem = mem, .n_mem = 2};
    struct mieb_run_ctx rc = mieb_api_run_ctx(e, &src, sim);
    if (e->progress && !rq->cand_indptr) {
        rc.on_search_block = block_done;
        rc.on_search_block_user = sink;
    }
    mieb_status st = make_subset(rq, &s);
    if (st == MIEB_OK)
        st = mieb_ret_roles_open(&src, sim, SEARCH_TASK, "-", "-", &s, &roles);
    sink->ids = s.rd.corpus_ids;
    struct mieb_search_opts range = {0, rq->corpus.rows, false, rq->top_k};
    if (st == MIEB_OK && s.n_kept > 0 && rq->corpus.rows > 0)
        st = mieb_ret_search(&rc, SEARCH_TASK, &s, &roles, &range, take_tile, sink);
    mieb_ret_roles_close(&roles);
    mieb_ret_subset_free(&s);
    return st;
}

int mieb_search(mieb_engine *e, const struct mieb_search_request *rq, float *scores, int64_t *indices,
                int64_t *counts)
{
    int64_t nq = rq->queries.rows > 0 ? rq->queries.rows : 0, k = rq->top_k > 0 ? rq->top_k : 0;
    for (int64_t i = 0; i < nq * k; i++)
        scores[i] = -INFINITY, indices[i] = -1;
    for (int64_t i = 0; i < nq; i++)
        counts[i] = 0;
    struct search_sink sink = {.rq = rq, .e = e, .scores = scores, .indices = indices, .counts = counts, .top_k = k};
    mieb_status st = mieb_api_call_begin(e);
    return mieb_api_call_end(e, st == MIEB_OK ? search(e, rq, &sink) : st);
}
