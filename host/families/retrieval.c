/**
 * retrieval.c - the retrieval family driver (Any2AnyRetrieval, Any2AnyMultilingualRetrieval,
 * DocumentUnderstanding, VisionCentricQA): PROTOCOLS.md §8.
 *
 * Reads the ground truth, keeps the queries mteb keeps (those with at least one qrels
 * entry), scores them in tiles sized by --mem-limit (retrieval_search.c), applies
 * skip_first_result, and hands each query's results dict to the metric accumulator.
 * The steps are public (retrieval_post.h) so corpus parts and `merge` (host/parts/)
 * search part of the corpus, or replay partial results, through the same metric path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include "../cpu/cpu_kernels.h"
#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../core/tmpfiles.h"
#include "../core/pyfloat.h"
#include "../metrics/retrieval_metrics.h"
#include "mteb_heap.h"
#include "retrieval_post.h"
#include "retrieval_search.h"
#include "../core/qsort_cmp.h"
#include "../core/stop.h"

/* A (doc row, qrels value) pair, sorted by row for lookups. */
struct qrel { int64_t doc; int32_t score; };

static int cmp_qrel(const void *a, const void *b)
{
    const struct qrel *x = a, *y = b;
    return (x->doc > y->doc) - (x->doc < y->doc);
}

/* mteb keys queries and documents by id: duplicated ids would silently merge there. */
static mieb_status check_unique(const char *path, const char *grp, const char *what, char **ids, int64_t n)
{
    if (n < 2)
        return MIEB_OK;
    char **s = malloc(sizeof(char *) * (size_t)n);
    if (!s)
        return mieb_fail(MIEB_ERR_OOM, "id check");
    memcpy(s, ids, sizeof(char *) * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, mieb_cmp_str_ptr);
    for (int64_t i = 1; i < n; i++)
        if (!strcmp(s[i - 1], s[i])) {
            mieb_status st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s: duplicate id '%s'", path, grp, what, s[i]);
            free(s);
            return st;
        }
    free(s);
    return MIEB_OK;
}

/*
 * Corpus items per block: the largest divisor of mteb's 50,000-document chunk that is
 * <= cap and a multiple of the backend grid's MIEB_GRID_D (blocks never straddle chunks,
 * and every block starts on the grid, so scores do not depend on the block size:
 * backend.h). Never below one grid tile.
 */
static int64_t chunk_divisor_at_most(int64_t cap)
{
    if (cap >= MIEB_MTEB_CORPUS_CHUNK)
        return MIEB_MTEB_CORPUS_CHUNK;
    for (int64_t d = cap / MIEB_GRID_D * MIEB_GRID_D; d > MIEB_GRID_D; d -= MIEB_GRID_D)
        if (MIEB_MTEB_CORPUS_CHUNK % d == 0)
            return d;
    return MIEB_GRID_D;
}

/* mteb: results = dict(heap) -- a repeated doc keeps its first position and its last score.
   Only candidate lists can repeat a document (full search offers each row once). */
struct pos_doc { int64_t doc, pos; };

static int cmp_pos_doc(const void *a, const void *b)
{
    const struct pos_doc *x = a, *y = b;
    if (x->doc != y->doc)
        return (x->doc > y->doc) - (x->doc < y->doc);
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static int64_t collapse_dict(float *s, int64_t *d, int64_t n, struct pos_doc *tmp)
{
    int64_t m = 0, dups = 0;
    for (int64_t i = 0; i < n; i++)
        tmp[i] = (struct pos_doc){d[i], i};
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_pos_doc);
    for (int64_t i = 1; i < n; i++)
        dups += tmp[i].doc == tmp[i - 1].doc;
    if (!dups)
        return n;
    /* keep[i]: -1 = dropped, else the entry survives; its score becomes the last duplicate's */
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j + 1 < n && tmp[j + 1].doc == tmp[i].doc)
            j++;
        s[tmp[i].pos] = s[tmp[j].pos];
        for (int64_t x = i + 1; x <= j; x++)
            d[tmp[x].pos] = -1;
        i = j + 1;
    }
    for (int64_t i = 0; i < n; i++)
        if (d[i] >= 0) {
            s[m] = s[i];
            d[m++] = d[i];
        }
    return m;
}

/* skip_first_result: dict(sorted(items, key=score, reverse=True)[1:]) -- a stable sort. */
static int64_t skip_first(float *s, int64_t *d, int64_t n, uint64_t *scratch)
{
    if (n == 0)
        return 0;
    mieb_py_sort_score_desc(s, d, n, scratch);
    memmove(s, s + 1, sizeof(float) * (size_t)(n - 1));
    memmove(d, d + 1, sizeof(int64_t) * (size_t)(n - 1));
    return n - 1;
}

/* Read items [a, b) of the query role, keep those in `rows` (sorted), normalise for cosine. */
static mieb_status load_query_tile(const struct mieb_run_ctx *rc, struct mieb_emb_role *qrole,
                                   const int64_t *rows, int64_t n, float **data, int64_t **offs,
                                   struct mieb_vecs *v)
{
    const struct mieb_emb_info *qi = mieb_emb_role_info(qrole);
    int64_t a = rows[0], b = rows[n - 1] + 1, span_rows = b - a;
    int64_t *span_off = NULL;
    float *span = NULL;
    mieb_status st;
    *data = NULL;
    *offs = NULL;
    if (qi->multivector) {
        MIEB_TRY(mieb_emb_role_rows_of(qrole, a, b - a, &span_rows));
        span_off = malloc(sizeof(int64_t) * (size_t)(b - a + 1));
        if (!span_off)
            return mieb_fail(MIEB_ERR_OOM, "query offsets");
    }
    span = malloc(sizeof(float) * (size_t)(span_rows * qi->dim + 1));
    if (!span) {
        free(span_off);
        return mieb_fail(MIEB_ERR_OOM, "query tile of %lld rows", (long long)span_rows);
    }
    st = mieb_emb_role_read(qrole, a, b - a, span, span_off);
    if (st != MIEB_OK) {
        free(span);
        free(span_off);
        return st;
    }
    /* compact to the kept queries, in place (kept rows are increasing) */
    if (!qi->multivector) {
        for (int64_t t = 0; t < n; t++)
            memmove(span + t * qi->dim, span + (rows[t] - a) * qi->dim, sizeof(float) * (size_t)qi->dim);
        v->rows = n;
    } else {
        int64_t w = 0;
        int64_t *o = malloc(sizeof(int64_t) * (size_t)(n + 1));
        if (!o) {
            free(span);
            free(span_off);
            return mieb_fail(MIEB_ERR_OOM, "query offsets");
        }
        o[0] = 0;
        for (int64_t t = 0; t < n; t++) {
            int64_t r0 = span_off[rows[t] - a], r1 = span_off[rows[t] - a + 1];
            memmove(span + w * qi->dim, span + r0 * qi->dim, sizeof(float) * (size_t)((r1 - r0) * qi->dim));
            w += r1 - r0;
            o[t + 1] = w;
        }
        free(span_off);
        *offs = o;
        v->rows = w;
    }
    if (rc->sim == MIEB_SIM_COSINE)
        mieb_cpu_l2_normalize_rows(span, v->rows, qi->dim);
    *data = span;
    v->data = span;
    v->offsets = *offs;
    v->n = n;
    v->dim = qi->dim;
    return MIEB_OK;
}

/* ---- --per-query: <DIR>/<task>/<split>/<subset>/{run.trec,per_query.tsv,qrels.trec} ---- */
enum { PQ_RUN = 0, PQ_MEASURES = 1, PQ_QRELS = 2, PQ_NFILES = 3 };
static const char *const pq_names[PQ_NFILES] = {"run.trec", "per_query.tsv", "qrels.trec"};

struct pq_files {
    FILE *f[PQ_NFILES];
    char tmp[PQ_NFILES][PATH_MAX + 64], path[PQ_NFILES][PATH_MAX + 64];
};

static void pq_abort(struct pq_files *pq)
{
    for (int i = 0; i < PQ_NFILES; i++)
        if (pq->f[i]) {
            fclose(pq->f[i]);
            pq->f[i] = NULL;
            unlink(pq->tmp[i]);
        }
}

static mieb_status pq_open(struct pq_files *pq, const char *dir, const char *task, const char *split,
                           const char *subset)
{
    char d[PATH_MAX];
    memset(pq, 0, sizeof *pq);
    if (snprintf(d, sizeof d, "%s/%s/%s/%s", dir, task, split, subset) >= (int)sizeof d)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--per-query: path too long");
    MIEB_TRY(mieb_mkdirs(d));
    for (int i = 0; i < PQ_NFILES; i++) {
        snprintf(pq->path[i], sizeof pq->path[i], "%s/%s", d, pq_names[i]);
        if (mieb_tmp_path(pq->path[i], pq->tmp[i], sizeof pq->tmp[i]) != MIEB_OK) {
            pq_abort(pq);
            return mieb_fail(MIEB_ERR_INVALID_ARG, "--per-query: path too long: %s", pq->path[i]);
        }
        pq->f[i] = fopen(pq->tmp[i], "w");
        if (!pq->f[i]) {
            mieb_status st = mieb_fail(MIEB_ERR_IO, "--per-query: cannot create %s: %s", pq->tmp[i], strerror(errno));
            pq_abort(pq);
            return st;
        }
    }
    return MIEB_OK;
}

/* Close and rename every file into place (a reader never sees half a file). */
static mieb_status pq_commit(struct pq_files *pq)
{
    mieb_status st = MIEB_OK;
    for (int i = 0; i < PQ_NFILES; i++) {
        if (!pq->f[i])
            continue;
        int bad = ferror(pq->f[i]) | fflush(pq->f[i]) | fsync(fileno(pq->f[i]));
        bad |= fclose(pq->f[i]);
        pq->f[i] = NULL;
        if (st == MIEB_OK && bad)
            st = mieb_fail(MIEB_ERR_IO, "--per-query: cannot write %s: %s", pq->tmp[i], strerror(errno));
        if (st == MIEB_OK && rename(pq->tmp[i], pq->path[i]) != 0)
            st = mieb_fail(MIEB_ERR_IO, "--per-query: cannot rename %s: %s", pq->tmp[i], strerror(errno));
        if (st != MIEB_OK)
            unlink(pq->tmp[i]);
    }
    return st;
}

/* TREC run lines of one query, in trec_eval's ranking, and its qrels lines. */
static mieb_status pq_write_query(struct pq_files *pq, const struct mieb_ret_query_result *r, const char *qid,
                                  const struct mieb_retrieval_data *rd, const struct qrel *qr, int64_t nqr,
                                  size_t *order)
{
    MIEB_TRY(mieb_ret_trec_order(r, order));
    /* ids with white space, control characters or backslashes are escaped (core/escape.h) */
    for (int64_t k = 0; k < r->n; k++) {
        size_t j = order[k];
        mieb_escape_put(pq->f[PQ_RUN], qid, MIEB_ESC_WORD);
        fputs(" Q0 ", pq->f[PQ_RUN]);
        mieb_escape_put(pq->f[PQ_RUN], r->doc_ids[j], MIEB_ESC_WORD);
        fprintf(pq->f[PQ_RUN], " %lld %.9g mieb-eval\n", (long long)(k + 1), (double)r->scores[j]);
    }
    for (int64_t j = 0; j < nqr; j++) {
        mieb_escape_put(pq->f[PQ_QRELS], qid, MIEB_ESC_WORD);
        fputs(" 0 ", pq->f[PQ_QRELS]);
        mieb_escape_put(pq->f[PQ_QRELS], rd->corpus_ids[qr[j].doc], MIEB_ESC_WORD);
        fprintf(pq->f[PQ_QRELS], " %d\n", (int)qr[j].score);
    }
    return MIEB_OK;
}

/* A query id in per_query.tsv: escaped as in the TREC files, and the id "all" written as
   \x61ll (the same after one unescaping pass), so that it is not read as trec_eval's row of
   means, which `compare` skips. */
static void pq_put_qid(FILE *f, const char *qid)
{
    if (!strcmp(qid, "all"))
        fputs("\\x61ll", f);
    else
        mieb_escape_put(f, qid, MIEB_ESC_WORD);
}

/* trec_eval -q style: "measure \t qid \t value" per query, then "measure \t all \t mean". */
static mieb_status pq_write_measures(struct pq_files *pq, const struct mieb_ret_eval *ev,
                                     const struct mieb_retrieval_data *rd, const int64_t *kept)
{
    double v[MIEB_RET_NMEASURES][MIEB_RET_NK];
    char num[64];
    FILE *f = pq->f[PQ_MEASURES];
    for (int64_t i = 0; i < mieb_ret_eval_count(ev); i++) {
        if (i % 1024 == 0) /* a stop signal: once per 1024 queries (core/stop.h); the caller drops the file */
            MIEB_TRY(mieb_stop_check());
        MIEB_TRY(mieb_ret_eval_query(ev, i, v));
        for (int m = 0; m < MIEB_RET_NMEASURES; m++)
            for (int ki = 0; ki < MIEB_RET_NK; ki++) {
                mieb_py_repr(v[m][ki], num, sizeof num);
                fprintf(f, "%s_%d\t", mieb_ret_measures[m].trec, mieb_ret_k_values[ki]);
                pq_put_qid(f, rd->query_ids[kept[i]]);
                fprintf(f, "\t%s\n", num);
            }
    }
    for (int m = 0; m < MIEB_RET_NMEASURES; m++)
        for (int ki = 0; ki < MIEB_RET_NK; ki++) {
            mieb_py_repr(mieb_ret_eval_mean(ev, m, ki), num, sizeof num);
            fprintf(f, "%s_%d\tall\t%s\n", mieb_ret_measures[m].trec, mieb_ret_k_values[ki], num);
        }
    return MIEB_OK;
}

/* A result is looked up in its query's qrels only when its document's bit is set in a
   filter of the qrels' documents: most of the 1,000 results are in no qrels, and the
   binary search's branches, taken for every one of them, were most of fill_query. */
#define QREL_FILTER_BITS 4096

static inline uint32_t qrel_bit(int64_t doc)
{
    return (uint32_t)(((uint64_t)doc * 0x9E3779B97F4A7C15ull) >> 52); /* 12 bits: QREL_FILTER_BITS */
}

static int32_t qrel_lookup(const struct qrel *qr, int64_t nqr, int64_t doc)
{
    int64_t lo = 0, hi = nqr; /* the first entry with qr[].doc >= doc */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (qr[mid].doc < doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nqr && qr[lo].doc == doc ? qr[lo].score : 0;
}

/* One worker's buffers for preparing results dicts (add_tile_metrics). */
struct tile_worker {
    const char **ids;   /* [top_k] doc id of each entry */
    struct pos_doc *pd; /* [top_k] collapse_dict's work space */
    int32_t *rel;       /* [top_k] qrels value of each entry */
    uint64_t *sort_tmp; /* [4 top_k] skip_first's sort */
    size_t *order;      /* [top_k] the per-query file's ranking */
    struct qrel *qr;    /* [qr_cap] the query's qrels, sorted by doc */
    int64_t qr_cap;
    uint64_t qr_filter[QREL_FILTER_BITS / 64]; /* the query's qrels docs, hashed (qrel_bit) */
};

struct tile_fill {
    const struct mieb_retrieval_data *rd;
    const int64_t *qrow;
    struct mieb_search_out *so;
    bool skip;
    struct pq_files *pq; /* written in query order: one worker only */
    struct tile_worker *w;
};

static void tile_worker_free(struct tile_worker *w)
{
    free(w->ids);
    free(w->pd);
    free(w->rel);
    free(w->sort_tmp);
    free(w->order);
    free(w->qr);
}

static mieb_status tile_worker_alloc(struct tile_worker *w, bool skip, bool pq)
{
    w->ids = malloc(sizeof(char *) * MIEB_MTEB_TOP_K);
    w->pd = malloc(sizeof *w->pd * MIEB_MTEB_TOP_K);
    w->rel = malloc(sizeof(int32_t) * MIEB_MTEB_TOP_K);
    w->sort_tmp = skip ? malloc(sizeof(uint64_t) * 4 * MIEB_MTEB_TOP_K) : NULL;
    w->order = pq ? malloc(sizeof(size_t) * MIEB_MTEB_TOP_K) : NULL;
    if (!w->ids || !w->pd || !w->rel || (skip && !w->sort_tmp) || (pq && !w->order))
        return mieb_fail(MIEB_ERR_OOM, "metric buffers");
    return MIEB_OK;
}

/* Query t of the tile as mteb's results dict (mieb_ret_query_fill_fn). */
static mieb_status fill_query(void *user, int64_t t, int worker, struct mieb_ret_query_result *r)
{
    const struct tile_fill *f = user;
    const struct mieb_retrieval_data *rd = f->rd;
    struct tile_worker *w = &f->w[worker];
    int64_t q = f->qrow[t], q0 = rd->qrels_indptr[q], nqr = rd->qrels_indptr[q + 1] - q0;
    float *s = f->so->res_s + t * f->so->k;
    int64_t *d = f->so->res_d + t * f->so->k;
    int64_t n = rd->cand_indptr ? collapse_dict(s, d, f->so->res_n[t], w->pd) : f->so->res_n[t];
    if (f->skip)
        n = skip_first(s, d, n, w->sort_tmp);
    if (nqr > w->qr_cap) {
        free(w->qr);
        w->qr_cap = nqr;
        w->qr = malloc(sizeof *w->qr * (size_t)w->qr_cap);
        if (!w->qr) {
            w->qr_cap = 0;
            return mieb_fail(MIEB_ERR_OOM, "qrels lookup");
        }
    }
    struct qrel *qr = w->qr;
    for (int64_t j = 0; j < nqr; j++) {
        qr[j].doc = rd->qrels_doc[q0 + j];
        qr[j].score = rd->qrels_score[q0 + j];
    }
    qsort(qr, (size_t)nqr, sizeof *qr, cmp_qrel);
    for (int64_t j = 1; j < nqr; j++)
        if (qr[j].doc == qr[j - 1].doc)
            return mieb_fail(MIEB_ERR_BAD_DATA, "query '%s' lists document '%s' twice in its qrels",
                             rd->query_ids[q], rd->corpus_ids[qr[j].doc]);
    uint64_t *filt = w->qr_filter;
    memset(filt, 0, sizeof w->qr_filter);
    for (int64_t j = 0; j < nqr; j++) {
        uint32_t b = qrel_bit(qr[j].doc);
        filt[b >> 6] |= (uint64_t)1 << (b & 63);
    }
    for (int64_t j = 0; j < n; j++) {
        uint32_t b = qrel_bit(d[j]);
        w->ids[j] = rd->corpus_ids[d[j]];
        w->rel[j] = (filt[b >> 6] >> (b & 63)) & 1 ? qrel_lookup(qr, nqr, d[j]) : 0;
    }
    *r = (struct mieb_ret_query_result){
        .n = n, .scores = s, .doc_ids = w->ids, .rel = w->rel,
        .n_qrels = nqr, .qrels_values = rd->qrels_score + q0,
    };
    return f->pq ? pq_write_query(f->pq, r, rd->query_ids[q], rd, qr, nqr, w->order) : MIEB_OK;
}

/* The tile's queries into the accumulator, on n_threads workers (one with per-query files,
   which are written in query order). */
static mieb_status add_tile_metrics(struct mieb_ret_eval *ev, const struct mieb_retrieval_data *rd,
                                    const int64_t *qrow, struct mieb_search_out *so, bool skip,
                                    struct pq_files *pq, int n_threads)
{
    int threads = pq ? 1 : n_threads;
    int nw = mieb_ret_eval_batch_workers(so->n_queries, threads);
    struct tile_worker *w = calloc((size_t)nw, sizeof *w);
    mieb_status st = w ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "metric buffers");
    for (int i = 0; i < nw && st == MIEB_OK; i++)
        st = tile_worker_alloc(&w[i], skip, pq != NULL);
    if (st == MIEB_OK) {
        struct tile_fill f = {.rd = rd, .qrow = qrow, .so = so, .skip = skip, .pq = pq, .w = w};
        st = mieb_ret_eval_add_batch(ev, so->n_queries, threads, fill_query, &f);
    }
    for (int i = 0; w && i < nw; i++)
        tile_worker_free(&w[i]);
    free(w);
    return st;
}

/* ---- the shared steps (retrieval_post.h) ---- */

mieb_status mieb_ret_subset_load(const struct mieb_task *task, struct mieb_taskdata *td, const char *split,
                                 const char *subset, struct mieb_ret_subset *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->grp, sizeof out->grp, "/%s/%s", split, subset);
    out->td_path = mieb_taskdata_path(td);
    out->skip_first = mieb_task_param_bool(task, "skip_first_result");
    mieb_status st = mieb_taskdata_read_retrieval(td, split, subset, &out->rd);
    if (st == MIEB_OK)
        st = check_unique(out->td_path, out->grp, "query_ids", out->rd.query_ids, out->rd.n_queries);
    if (st == MIEB_OK)
        st = check_unique(out->td_path, out->grp, "corpus_ids", out->rd.corpus_ids, out->rd.n_corpus);
    if (st == MIEB_OK) {
        /* mteb drops queries without qrels entries; all-zero qrels are kept (§8.1) */
        out->kept = malloc(sizeof(int64_t) * (size_t)(out->rd.n_queries + 1));
        if (!out->kept)
            st = mieb_fail(MIEB_ERR_OOM, "query list");
    }
    if (st != MIEB_OK) {
        mieb_ret_subset_free(out);
        return st;
    }
    for (int64_t q = 0; q < out->rd.n_queries; q++)
        if (out->rd.qrels_indptr[q + 1] > out->rd.qrels_indptr[q])
            out->kept[out->n_kept++] = q;
    return MIEB_OK;
}

void mieb_ret_subset_free(struct mieb_ret_subset *s)
{
    mieb_retrieval_data_free(&s->rd);
    free(s->kept);
    s->kept = NULL;
    s->n_kept = 0;
}

mieb_status mieb_ret_roles_open(const struct mieb_emb_source *src, enum mieb_sim sim, const char *task, const char *split,
                                const char *subset, const struct mieb_ret_subset *s, struct mieb_ret_roles *out)
{
    const struct mieb_retrieval_data *rd = &s->rd;
    memset(out, 0, sizeof *out);
    mieb_status st = mieb_emb_source_open(src, task, split, subset, "queries", MIEB_EMB_EVERY_ROW, &out->q);
    if (st == MIEB_OK)
        st = mieb_emb_source_open(src, task, split, subset, "corpus", MIEB_EMB_EVERY_ROW, &out->c);
    if (st != MIEB_OK) {
        mieb_ret_roles_close(out);
        return st;
    }
    const struct mieb_emb_info *qi = mieb_emb_role_info(out->q), *ci = mieb_emb_role_info(out->c);
    bool want_multi = sim == MIEB_SIM_MAXSIM;
    if (qi->n_items != rd->n_queries)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld query embeddings but the task data has %lld query_ids",
                       mieb_emb_role_path(out->q), (long long)qi->n_items, (long long)rd->n_queries);
    else if (ci->n_items != rd->n_corpus)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld corpus embeddings but the task data has %lld corpus_ids",
                       mieb_emb_role_path(out->c), (long long)ci->n_items, (long long)rd->n_corpus);
    else if (qi->dim != ci->dim)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension %lld differs from %s: dimension %lld",
                       mieb_emb_role_path(out->q), (long long)qi->dim, mieb_emb_role_path(out->c),
                       (long long)ci->dim);
    else if (qi->multivector != want_multi || ci->multivector != want_multi)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: similarity %s needs %s embeddings (/offsets %s)",
                       mieb_emb_role_path(qi->multivector != want_multi ? out->q : out->c), mieb_sim_name(sim),
                       want_multi ? "multi-vector" : "single-vector", want_multi ? "required" : "not allowed");
    if (st != MIEB_OK)
        mieb_ret_roles_close(out);
    return st;
}

void mieb_ret_roles_close(struct mieb_ret_roles *r)
{
    mieb_emb_role_close(r->q);
    mieb_emb_role_close(r->c);
    r->q = r->c = NULL;
}

mieb_status mieb_ret_search(const struct mieb_run_ctx *rc, const char *task, const struct mieb_ret_subset *s,
                            struct mieb_ret_roles *roles, const struct mieb_search_opts *range,
                            mieb_ret_tile_fn fn, void *user)
{
    const struct mieb_retrieval_data *rd = &s->rd;
    const int64_t *kept = s->kept;
    int64_t n_kept = s->n_kept;
    mieb_status st = MIEB_OK;
    if (n_kept == 0)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: no query has a qrels entry (mteb cannot score this subset)",
                         s->td_path, s->grp);
    const struct mieb_emb_info *qi = mieb_emb_role_info(roles->q), *ci = mieb_emb_role_info(roles->c);
    double q_rows_per_item = (double)qi->n_rows / (double)(qi->n_items ? qi->n_items : 1);
    double c_rows_per_item = (double)ci->n_rows / (double)(ci->n_items ? ci->n_items : 1);
    /* Budget: half for corpus blocks (double-buffered by the stream), half for query tiles. */
    double half = (double)rc->mem_limit / 2.0;
    double per_doc = 2.0 * c_rows_per_item * (double)ci->dim * sizeof(float) + 16.0;
    const int64_t top_k = range && range->top_k ? range->top_k : MIEB_MTEB_TOP_K;
    double per_query = q_rows_per_item * (double)qi->dim * sizeof(float) + (double)mieb_search_bytes_per_query(top_k);
    /* A corpus part's offer logs (range->record) are not budgeted here: their size is known
       only as the heap accepts offers (typically a few thousand entries per query, at most
       1001 per chunk of the part). Tiles need not match a single run's: the grid makes the
       scores independent of them. */
    int64_t cap_docs = (int64_t)(half / per_doc);
    int64_t be_cap = mieb_backend_max_block_rows(rc->be, NULL, ci->dim, top_k + 1);
    if (cap_docs > be_cap)
        cap_docs = be_cap;
    if (cap_docs < 1)
        cap_docs = 1;
    int64_t block_items = chunk_divisor_at_most(cap_docs);
    /* query tiles: whole MIEB_GRID_Q steps of the kept list (backend.h), at least one */
    int64_t tile = (int64_t)(half / per_query) / MIEB_GRID_Q * MIEB_GRID_Q;
    if (tile < MIEB_GRID_Q)
        tile = MIEB_GRID_Q;
    if ((block_items > cap_docs && block_items < rd->n_corpus) || (tile * per_query > half && tile < n_kept))
        MIEB_LOGW("%s %s: --mem-limit is below one grid tile (%d queries, %d documents: %.1f MiB); using that "
                  "much so that scores do not depend on the limit", task, s->grp, MIEB_GRID_Q, MIEB_GRID_D,
                  (MIEB_GRID_Q * per_query + MIEB_GRID_D * per_doc) / 1048576.0);
    MIEB_LOGD("%s %s: %lld of %lld queries kept, corpus %lld, blocks of %lld docs, query tiles of %lld", task,
              s->grp, (long long)n_kept, (long long)rd->n_queries, (long long)rd->n_corpus,
              (long long)block_items, (long long)tile);

    for (int64_t t0 = 0; t0 < n_kept && st == MIEB_OK; t0 += tile) {
        int64_t nt = n_kept - t0 < tile ? n_kept - t0 : tile;
        float *qdata = NULL;
        int64_t *qoffs = NULL;
        struct mieb_vecs qv = {0};
        struct mieb_qset *qs = NULL;
        struct mieb_search_out so = {0};
        st = load_query_tile(rc, roles->q, kept + t0, nt, &qdata, &qoffs, &qv);
        if (st == MIEB_OK)
            st = mieb_backend_prepare_queries(rc->be, &qv, rc->sim, &qs);
        if (st == MIEB_OK)
            st = mieb_search_tile(rc, qs, nt, kept + t0, roles->c, rd, block_items, range, &so);
        double tm = mieb_now();
        if (st == MIEB_OK)
            st = fn(user, kept + t0, &so);
        if (rc->times)
            rc->times->metrics += mieb_now() - tm;
        mieb_search_out_free(&so);
        mieb_backend_release_queries(rc->be, qs);
        free(qdata);
        free(qoffs);
    }
    return st;
}

struct mieb_ret_post {
    const struct mieb_ret_subset *s;
    struct mieb_ret_eval *ev;
    struct pq_files pqf, *pq;
    int n_threads;
};

mieb_status mieb_ret_post_open(const struct mieb_ret_subset *s, const char *per_query_dir, const char *task,
                               const char *split, const char *subset, int n_threads, struct mieb_ret_post **out)
{
    struct mieb_ret_post *p = calloc(1, sizeof *p);
    if (!p)
        return mieb_fail(MIEB_ERR_OOM, "metric state");
    p->s = s;
    p->n_threads = n_threads;
    mieb_status st = mieb_ret_eval_new(&p->ev);
    if (st == MIEB_OK && per_query_dir) {
        st = pq_open(&p->pqf, per_query_dir, task, split, subset);
        if (st == MIEB_OK)
            p->pq = &p->pqf;
    }
    if (st != MIEB_OK) {
        mieb_ret_post_free(p);
        return st;
    }
    *out = p;
    return MIEB_OK;
}

mieb_status mieb_ret_post_add(void *post, const int64_t *qrow, struct mieb_search_out *so)
{
    struct mieb_ret_post *p = post;
    return add_tile_metrics(p->ev, &p->s->rd, qrow, so, p->s->skip_first, p->pq, p->n_threads);
}

mieb_status mieb_ret_post_finish(struct mieb_ret_post *p, cJSON *scores)
{
    mieb_status st = mieb_ret_eval_finish(p->ev, scores);
    if (st == MIEB_OK && p->pq)
        st = pq_write_measures(p->pq, p->ev, &p->s->rd, p->s->kept);
    if (st == MIEB_OK && p->pq)
        st = pq_commit(p->pq);
    return st;
}

void mieb_ret_post_free(struct mieb_ret_post *p)
{
    if (!p)
        return;
    if (p->pq)
        pq_abort(p->pq); /* after a failure: no partial per-query files */
    mieb_ret_eval_free(p->ev);
    free(p);
}

/* ---- the family driver ---- */

mieb_status mieb_retrieval_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                        struct mieb_taskdata *td, const char *split, const char *subset,
                                        cJSON *scores)
{
    struct mieb_ret_subset s;
    struct mieb_ret_roles roles = {0};
    struct mieb_ret_post *post = NULL;
    mieb_status st = mieb_ret_subset_load(task, td, split, subset, &s);
    if (st == MIEB_OK) {
        st = mieb_ret_roles_open(&rc->emb, rc->sim, task->name, split, subset, &s, &roles);
        if (st == MIEB_OK)
            st = mieb_ret_post_open(&s, rc->per_query_dir, task->name, split, subset, rc->n_threads, &post);
        if (st == MIEB_OK)
            st = mieb_ret_search(rc, task->name, &s, &roles, NULL, mieb_ret_post_add, post);
        if (st == MIEB_OK) {
            double tm = mieb_now();
            st = mieb_ret_post_finish(post, scores);
            if (rc->times)
                rc->times->metrics += mieb_now() - tm;
        }
    }
    if (st != MIEB_OK && !strstr(mieb_last_error(), mieb_taskdata_path(td)))
        mieb_fail_context(st, "%s /%s/%s (%s)", task->name, split, subset, mieb_taskdata_path(td));
    mieb_ret_post_free(post);
    mieb_ret_roles_close(&roles);
    mieb_ret_subset_free(&s); /* idempotent: a failed load has already freed and zeroed it */
    return st;
}
