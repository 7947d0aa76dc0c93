/* retrieval_search.c - mteb's full-corpus search and candidate scoring, reproduced. */
#include "retrieval_search.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "../cpu/cpu_kernels.h"
#include "../topk/topk_heap.h"
#include "../core/parallel.h"
#include "mteb_heap.h"
#include "../core/env.h"

/* A chunk keeps its top_k + 1 (torch.topk(k = top_k + 1) per chunk): chunk_k(top_k). */
static int64_t chunk_k(int64_t top_k) { return top_k + 1; }

double mieb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add_time(double *acc, double t0, double t1)
{
    if (acc)
        *acc += t1 - t0;
}

int64_t mieb_search_bytes_per_query(int64_t top_k)
{
    /* chunk accumulator + merge scratch + block top-k + result heap, each (float, int64) */
    return (chunk_k(top_k) * 3 + top_k) * (int64_t)(sizeof(float) + sizeof(int64_t));
}

void mieb_search_out_free(struct mieb_search_out *o)
{
    if (o->log)
        for (int64_t t = 0; t < o->n_queries; t++) {
            free(o->log[t].s);
            free(o->log[t].d);
        }
    free(o->log);
    free(o->res_s);
    free(o->res_d);
    free(o->res_n);
    memset(o, 0, sizeof *o);
}

mieb_status mieb_search_out_alloc(struct mieb_search_out *o, int64_t nq, int64_t top_k, bool record)
{
    memset(o, 0, sizeof *o);
    o->n_queries = nq;
    o->k = top_k;
    o->res_s = malloc(sizeof(float) * (size_t)(nq * top_k + 1));
    o->res_d = malloc(sizeof(int64_t) * (size_t)(nq * top_k + 1));
    o->res_n = calloc((size_t)nq + 1, sizeof(int64_t));
    if (record)
        o->log = calloc((size_t)nq + 1, sizeof *o->log);
    if (!o->res_s || !o->res_d || !o->res_n || (record && !o->log)) {
        mieb_search_out_free(o);
        return mieb_fail(MIEB_ERR_OOM, "search results for %lld queries", (long long)nq);
    }
    return MIEB_OK;
}

/* Append one accepted offer to a log. */
static mieb_status mieb_offer_log_push(struct mieb_offer_log *l, float s, int64_t d)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 2048;
        float *ns = realloc(l->s, sizeof(float) * (size_t)cap);
        if (ns)
            l->s = ns;
        int64_t *nd = realloc(l->d, sizeof(int64_t) * (size_t)cap);
        if (nd)
            l->d = nd;
        if (!ns || !nd)
            return mieb_fail(MIEB_ERR_OOM, "offer log of %lld entries", (long long)cap);
        l->cap = cap;
    }
    l->s[l->n] = s;
    l->d[l->n++] = d;
    return MIEB_OK;
}

/* A signal asked to stop (rc->interrupted): fail at this block boundary; the caller writes nothing. */
static mieb_status check_stop(const struct mieb_run_ctx *rc)
{
    if (rc->interrupted && *rc->interrupted)
        return mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted by signal %d", (int)*rc->interrupted);
    return MIEB_OK;
}

/* Corpus blocks for cosine are normalized by the stream's reader thread (overlapping the
   products of the block before), straight from the file's mapping where it has one. */
static const struct mieb_emb_stream_opts *stream_opts(const struct mieb_run_ctx *rc)
{
    static const struct mieb_emb_stream_opts cosine = {.prepare = mieb_cpu_l2_normalize_rows_to}, plain = {0};
    return rc->sim == MIEB_SIM_COSINE ? &cosine : &plain;
}

/* The block's rows as backend input (read-only: they may be the file's mapping). */
static void block_vecs(const struct mieb_emb_block *b, int64_t dim, struct mieb_vecs *v)
{
    v->data = b->data;
    v->offsets = b->offsets;
    v->n = b->count;
    v->rows = b->rows;
    v->dim = dim;
}

/* The fold of one corpus block into each query's chunk accumulator and, when the block ends
   an mteb chunk, the chunk's offers to the query's heap: independent per query, so the
   queries are split over threads (each part with its own merge scratch). */
#define FOLD_MAX_THREADS 64
#define FOLD_MIN_QUERIES 64 /* per thread: fewer are not worth a thread */

struct fold_job {
    int64_t nq, kb, start;
    int64_t top_k, ck; /* the heap's size, a chunk's list's (chunk_k) */
    bool chunk_end;
    const int64_t *blk_n; /* entries of each query's block list */
    const float *blk_s;
    int64_t *blk_i;
    float *acc_s, *tmp_s;
    int64_t *acc_i, *acc_n, *tmp_i;
    struct mieb_pyheap *heaps;
    struct mieb_search_out *out;
    mieb_status st[FOLD_MAX_THREADS];
};

static void fold_part(void *arg, int part, int n_parts)
{
    struct fold_job *j = arg;
    int64_t lo, hi;
    mieb_par_range(j->nq, part, n_parts, &lo, &hi);
    const int64_t ck = j->ck;
    float *tmp_s = j->tmp_s + (size_t)part * ck;
    int64_t *tmp_i = j->tmp_i + (size_t)part * ck;
    mieb_status st = MIEB_OK;
    for (int64_t t = lo; t < hi; t++) {
        const float *bs = j->blk_s + (size_t)t * j->kb;
        int64_t *bi = j->blk_i + (size_t)t * j->kb;
        float *as = j->acc_s + (size_t)t * ck;
        int64_t *ai = j->acc_i + (size_t)t * ck;
        int64_t nb = j->blk_n[t];
        for (int64_t x = 0; x < nb; x++)
            bi[x] += j->start;
        int64_t n;
        const float *os = as; /* the chunk's list as offered to the heap */
        const int64_t *oi = ai;
        if (j->acc_n[t] == 0) {
            /* the chunk's first block: the merge would be the block's list itself (nb <=
               ck), so a chunk of one block offers straight from it and leaves the
               accumulator's pages untouched (a corpus of one block never faults them in) */
            n = nb;
            if (j->chunk_end) {
                os = bs;
                oi = bi;
            } else {
                memcpy(as, bs, sizeof(float) * (size_t)n);
                memcpy(ai, bi, sizeof(int64_t) * (size_t)n);
            }
        } else {
            n = mieb_topk_merge(as, ai, j->acc_n[t], bs, bi, nb, ck, tmp_s, tmp_i);
            memcpy(as, tmp_s, sizeof(float) * (size_t)n);
            memcpy(ai, tmp_i, sizeof(int64_t) * (size_t)n);
        }
        j->acc_n[t] = n;
        if (!j->chunk_end || st != MIEB_OK)
            continue;
        /* mteb's chunk is complete: push its top-k, best first, into the heap (and log the
           offers it accepts when recording a corpus part) */
        int64_t x0 = mieb_pyheap_offer_sorted_prefix(&j->heaps[t], j->top_k, os, oi, n);
        for (int64_t x = 0; x < x0 && j->out->log && st == MIEB_OK; x++) /* all accepted */
            st = mieb_offer_log_push(&j->out->log[t], os[x], oi[x]);
        for (int64_t x = x0; x < n && st == MIEB_OK; x++)
            if (mieb_pyheap_offer(&j->heaps[t], j->top_k, os[x], oi[x]) && j->out->log &&
                (st = mieb_offer_log_push(&j->out->log[t], os[x], oi[x])) != MIEB_OK)
                break;
        j->acc_n[t] = 0;
    }
    j->st[part] = st;
}

/* MIEB_SEARCH_FLOORS=off passes no floors, so bench/bench_retrieval.py --floors-ab can set
   a backend's floored search beside its whole-list one; the results are the same. */
static bool floors_wanted(void)
{
    const char *e = mieb_env(MIEB_ENV_SEARCH_FLOORS);
    return !(e && !strcmp(e, "off"));
}

/* Full-corpus search: chunked top-1001, then the emulated heap (PROTOCOLS.md §8.2). */
static mieb_status search_full(const struct mieb_run_ctx *rc, struct mieb_qset *qs, int64_t nq,
                               struct mieb_emb_role *corpus, const struct mieb_retrieval_data *rd,
                               int64_t block_items, int64_t range_start, int64_t range_end,
                               struct mieb_search_out *out)
{
    const struct mieb_emb_info *info = mieb_emb_role_info(corpus);
    const int64_t top_k = out->k, ck = chunk_k(top_k);
    size_t per = (size_t)nq * (size_t)ck;
    float *acc_s = malloc(sizeof(float) * per), *blk_s = malloc(sizeof(float) * per);
    int64_t *acc_i = malloc(sizeof(int64_t) * per), *blk_i = malloc(sizeof(int64_t) * per);
    int64_t *acc_n = calloc((size_t)nq + 1, sizeof(int64_t)), *blk_n = malloc(sizeof(int64_t) * ((size_t)nq + 1));
    float *floor = malloc(sizeof(float) * ((size_t)nq + 1));
    const bool use_floors = floors_wanted();
    int n_fold = rc->n_threads > 0 ? rc->n_threads : mieb_par_cpus();
    if (n_fold > FOLD_MAX_THREADS)
        n_fold = FOLD_MAX_THREADS;
    if (n_fold > nq / FOLD_MIN_QUERIES)
        n_fold = nq / FOLD_MIN_QUERIES > 0 ? (int)(nq / FOLD_MIN_QUERIES) : 1;
    float *tmp_s = malloc(sizeof(float) * (size_t)ck * (size_t)n_fold);
    int64_t *tmp_i = malloc(sizeof(int64_t) * (size_t)ck * (size_t)n_fold);
    struct mieb_pyheap *heaps = calloc((size_t)nq + 1, sizeof *heaps);
    struct mieb_emb_stream *stream = NULL;
    mieb_status st = MIEB_OK;

    if (!acc_s || !blk_s || !acc_i || !blk_i || !acc_n || !blk_n || !floor || !tmp_s || !tmp_i || !heaps) {
        st = mieb_fail(MIEB_ERR_OOM, "search state for %lld queries", (long long)nq);
        goto done;
    }
    for (int64_t t = 0; t < nq; t++)
        mieb_pyheap_init(&heaps[t], out->res_s + t * top_k, out->res_d + t * top_k, top_k,
                         (const char *const *)rd->corpus_ids);
    st = mieb_emb_stream_open_opts(corpus, range_start, range_end, block_items, stream_opts(rc), &stream);
    if (st != MIEB_OK)
        goto done;
    for (;;) {
        struct mieb_emb_block blk;
        struct mieb_vecs docs;
        bool fin = false;
        double t0 = mieb_now();
        if ((st = check_stop(rc)) != MIEB_OK)
            break;
        st = mieb_emb_stream_next(stream, &blk, &fin);
        if (st != MIEB_OK || fin)
            break;
        block_vecs(&blk, info->dim, &docs);
        double t1 = mieb_now();
        int64_t kb = blk.count < ck ? blk.count : ck;
        /* What a query's block list needs: once its chunk's best ck are in, a later
           block's document must beat the last of them (its larger row loses ties); once its
           heap holds top_k, an offer below the heap's minimum is refused and changes nothing
           (heappushpop returns it): so neither needs the documents below (PROTOCOLS.md §8.2).
           A NaN floor means none (backend.h). */
        for (int64_t t = 0; use_floors && t < nq; t++) {
            floor[t] = acc_n[t] == ck ? acc_s[(size_t)t * (size_t)ck + (size_t)ck - 1] : -INFINITY;
            if (heaps[t].n == top_k && heaps[t].score[0] > floor[t])
                floor[t] = heaps[t].score[0];
        }
        st = mieb_backend_topk_block_floor(rc->be, qs, nq, &docs, kb, use_floors ? floor : NULL, blk_s, blk_i,
                                           blk_n);
        double t2 = mieb_now();
        if (rc->times) {
            add_time(&rc->times->read_wait, t0, t1);
            add_time(&rc->times->similarity, t1, t2);
        }
        if (st != MIEB_OK)
            break;
        /* fold the block's lists (block-local rows) into each query's chunk accumulator */
        int64_t end = blk.start + blk.count;
        struct fold_job fj = {.nq = nq, .kb = kb, .start = blk.start, .top_k = top_k, .ck = ck,
                              .chunk_end = end % MIEB_MTEB_CORPUS_CHUNK == 0 || end == range_end,
                              .blk_n = blk_n, .blk_s = blk_s, .blk_i = blk_i, .acc_s = acc_s, .tmp_s = tmp_s, .acc_i = acc_i,
                              .acc_n = acc_n, .tmp_i = tmp_i, .heaps = heaps, .out = out};
        mieb_par_run(n_fold, fold_part, &fj);
        for (int p = 0; p < n_fold && st == MIEB_OK; p++)
            st = fj.st[p];
        if (st != MIEB_OK)
            break;
        if (rc->times)
            add_time(&rc->times->merge, t2, mieb_now());
        if (rc->on_search_block)
            rc->on_search_block(rc->on_search_block_user, nq, end - range_start, range_end - range_start);
    }
    if (st == MIEB_OK)
        for (int64_t t = 0; t < nq; t++)
            out->res_n[t] = heaps[t].n;
done:
    mieb_emb_stream_close(stream);
    free(acc_s);
    free(blk_s);
    free(acc_i);
    free(blk_i);
    free(acc_n);
    free(blk_n);
    free(floor);
    free(tmp_s);
    free(tmp_i);
    free(heaps);
    return st;
}

/* Candidate scoring (mteb's _rerank_documents, PROTOCOLS.md §8.3). */
static mieb_status search_candidates(const struct mieb_run_ctx *rc, struct mieb_qset *qs, int64_t nq,
                                     const int64_t *qrow, struct mieb_emb_role *corpus,
                                     const struct mieb_retrieval_data *rd, int64_t block_items,
                                     struct mieb_search_out *out)
{
    const struct mieb_emb_info *info = mieb_emb_role_info(corpus);
    int64_t n_pairs = 0;
    for (int64_t t = 0; t < nq; t++)
        n_pairs += rd->cand_indptr[qrow[t] + 1] - rd->cand_indptr[qrow[t]];
    int64_t *pq = malloc(sizeof(int64_t) * (size_t)(n_pairs + 1));
    int64_t *pd = malloc(sizeof(int64_t) * (size_t)(n_pairs + 1));
    int64_t *bq = malloc(sizeof(int64_t) * (size_t)(n_pairs + 1));
    int64_t *bd = malloc(sizeof(int64_t) * (size_t)(n_pairs + 1));
    int64_t *bp = malloc(sizeof(int64_t) * (size_t)(n_pairs + 1));
    float *ps = malloc(sizeof(float) * (size_t)(n_pairs + 1));
    float *bs = malloc(sizeof(float) * (size_t)(n_pairs + 1));
    struct mieb_emb_stream *stream = NULL;
    mieb_status st = MIEB_OK;
    if (!pq || !pd || !bq || !bd || !bp || !ps || !bs) {
        st = mieb_fail(MIEB_ERR_OOM, "%lld candidate pairs", (long long)n_pairs);
        goto done;
    }
    {
        int64_t p = 0;
        for (int64_t t = 0; t < nq; t++)
            for (int64_t c = rd->cand_indptr[qrow[t]]; c < rd->cand_indptr[qrow[t] + 1]; c++) {
                pq[p] = t;
                pd[p++] = rd->cand_doc[c];
            }
    }
    /* Score the pairs block by block: the corpus may be larger than memory. */
    st = mieb_emb_stream_open_opts(corpus, 0, info->n_items, block_items, stream_opts(rc), &stream);
    if (st != MIEB_OK)
        goto done;
    for (;;) {
        struct mieb_emb_block blk;
        struct mieb_vecs docs;
        bool fin = false;
        if ((st = check_stop(rc)) != MIEB_OK)
            break;
        st = mieb_emb_stream_next(stream, &blk, &fin);
        if (st != MIEB_OK || fin)
            break;
        block_vecs(&blk, info->dim, &docs);
        int64_t m = 0;
        for (int64_t p = 0; p < n_pairs; p++)
            if (pd[p] >= blk.start && pd[p] < blk.start + blk.count) {
                bq[m] = pq[p];
                bd[m] = pd[p] - blk.start;
                bp[m++] = p;
            }
        if (m == 0)
            continue;
        st = mieb_backend_score_pairs(rc->be, qs, &docs, m, bq, bd, bs);
        if (st != MIEB_OK)
            break;
        for (int64_t j = 0; j < m; j++)
            ps[bp[j]] = bs[j];
    }
    if (st != MIEB_OK)
        goto done;
    {
        int64_t p = 0;
        for (int64_t t = 0; t < nq; t++) {
            int64_t nc = rd->cand_indptr[qrow[t] + 1] - rd->cand_indptr[qrow[t]];
            /* torch.topk(min(top_k, n)): best first; ties in candidate order */
            struct mieb_topk_heap th;
            int64_t keep = nc < out->k ? nc : out->k;
            mieb_topk_heap_init(&th, bs, bd, keep);
            for (int64_t c = 0; c < nc; c++)
                mieb_topk_heap_push(&th, ps[p + c], c);
            int64_t got = th.n;
            mieb_topk_heap_drain_sorted(&th, bs, bd);
            struct mieb_pyheap h;
            mieb_pyheap_init(&h, out->res_s + t * out->k, out->res_d + t * out->k, out->k,
                             (const char *const *)rd->corpus_ids);
            for (int64_t j = 0; j < got && st == MIEB_OK; j++) {
                mieb_pyheap_push(&h, bs[j], pd[p + bd[j]]); /* got <= top_k: every push is kept */
                if (out->log)
                    st = mieb_offer_log_push(&out->log[t], bs[j], pd[p + bd[j]]);
            }
            if (st != MIEB_OK)
                goto done;
            out->res_n[t] = h.n;
            p += nc;
        }
    }
done:
    mieb_emb_stream_close(stream);
    free(pq);
    free(pd);
    free(bq);
    free(bd);
    free(bp);
    free(ps);
    free(bs);
    return st;
}

mieb_status mieb_search_tile(const struct mieb_run_ctx *rc, struct mieb_qset *qs, int64_t n_tile,
                             const int64_t *qrow, struct mieb_emb_role *corpus,
                             const struct mieb_retrieval_data *rd, int64_t block_items,
                             const struct mieb_search_opts *opts, struct mieb_search_out *out)
{
    int64_t n_corpus = mieb_emb_role_info(corpus)->n_items;
    struct mieb_search_opts all = {0, n_corpus, false, MIEB_MTEB_TOP_K};
    if (!opts)
        opts = &all;
    int64_t top_k = opts->top_k ? opts->top_k : MIEB_MTEB_TOP_K;
    if (top_k < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "top_k %lld: must be at least 1", (long long)top_k);
    if (opts->start < 0 || opts->end > n_corpus || opts->start > opts->end ||
        (opts->start % MIEB_MTEB_CORPUS_CHUNK) || (opts->end % MIEB_MTEB_CORPUS_CHUNK && opts->end != n_corpus))
        return mieb_fail(MIEB_ERR_INTERNAL, "corpus range [%lld, %lld) is not aligned on mteb's chunks",
                         (long long)opts->start, (long long)opts->end);
    MIEB_TRY(mieb_search_out_alloc(out, n_tile, top_k, opts->record));
    mieb_status st = rd->cand_indptr
                         ? search_candidates(rc, qs, n_tile, qrow, corpus, rd, block_items, out)
                         : search_full(rc, qs, n_tile, corpus, rd, block_items, opts->start, opts->end, out);
    if (st != MIEB_OK)
        mieb_search_out_free(out);
    return st;
}
