/**
 * retrieval.c - the retrieval family driver (Any2AnyRetrieval, Any2AnyMultilingualRetrieval,
 * DocumentUnderstanding, VisionCentricQA): PROTOCOLS.md §8.
 *
 * Reads the ground truth, keeps the queries mteb keeps (those with at least one qrels
 * entry), scores them in tiles sized by --mem-limit (retrieval_search.c), applies
 * skip_first_result, and hands each query's results dict to the metric accumulator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include "../backend/cpu_kernels.h"
#include "../core/fileutil.h"
#include "../core/pyfloat.h"
#include "../metrics/retrieval_metrics.h"
#include "retrieval_search.h"

/* A (doc row, qrels value) pair, sorted by row for lookups. */
struct qrel { int64_t doc; int32_t score; };

static int cmp_qrel(const void *a, const void *b)
{
    const struct qrel *x = a, *y = b;
    return (x->doc > y->doc) - (x->doc < y->doc);
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
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
    qsort(s, (size_t)n, sizeof *s, cmp_str_ptr);
    for (int64_t i = 1; i < n; i++)
        if (!strcmp(s[i - 1], s[i])) {
            mieb_status st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s: duplicate id '%s'", path, grp, what, s[i]);
            free(s);
            return st;
        }
    free(s);
    return MIEB_OK;
}

/* Largest divisor of mteb's 50,000-document chunk that is <= cap (blocks never straddle chunks). */
static int64_t chunk_divisor_at_most(int64_t cap)
{
    if (cap >= MIEB_MTEB_CORPUS_CHUNK)
        return MIEB_MTEB_CORPUS_CHUNK;
    for (int64_t d = cap; d > 1; d--)
        if (MIEB_MTEB_CORPUS_CHUNK % d == 0)
            return d;
    return 1;
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
static int64_t skip_first(float *s, int64_t *d, int64_t n)
{
    /* insertion sort keeps equal scores in their heap-array order (stable), n <= 1000 */
    for (int64_t i = 1; i < n; i++) {
        float ks = s[i];
        int64_t kd = d[i], j = i - 1;
        while (j >= 0 && s[j] < ks) {
            s[j + 1] = s[j];
            d[j + 1] = d[j];
            j--;
        }
        s[j + 1] = ks;
        d[j + 1] = kd;
    }
    if (n == 0)
        return 0;
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
    int warned_space;
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
        snprintf(pq->tmp[i], sizeof pq->tmp[i], "%s.tmp.%ld", pq->path[i], (long)getpid());
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

static int has_space(const char *s)
{
    for (; *s; s++)
        if (isspace((unsigned char)*s))
            return 1;
    return 0;
}

/* TREC run lines of one query, in trec_eval's ranking, and its qrels lines. */
static mieb_status pq_write_query(struct pq_files *pq, const struct mieb_ret_query_result *r, const char *qid,
                                  const struct mieb_retrieval_data *rd, const struct qrel *qr, int64_t nqr,
                                  size_t *order)
{
    if (!pq->warned_space && has_space(qid)) {
        MIEB_LOGW("--per-query: query id '%s' holds white space; the TREC files will not parse", qid);
        pq->warned_space = 1;
    }
    MIEB_TRY(mieb_ret_trec_order(r, order));
    for (int64_t k = 0; k < r->n; k++) {
        size_t j = order[k];
        fprintf(pq->f[PQ_RUN], "%s Q0 %s %lld %.9g mieb-eval\n", qid, r->doc_ids[j], (long long)(k + 1),
                (double)r->scores[j]);
    }
    for (int64_t j = 0; j < nqr; j++)
        fprintf(pq->f[PQ_QRELS], "%s 0 %s %d\n", qid, rd->corpus_ids[qr[j].doc], (int)qr[j].score);
    return MIEB_OK;
}

/* trec_eval -q style: "measure \t qid \t value" per query, then "measure \t all \t mean". */
static mieb_status pq_write_measures(struct pq_files *pq, const struct mieb_ret_eval *ev,
                                     const struct mieb_retrieval_data *rd, const int64_t *kept)
{
    double v[MIEB_RET_NMEASURES][MIEB_RET_NK];
    char num[64];
    FILE *f = pq->f[PQ_MEASURES];
    for (int64_t i = 0; i < mieb_ret_eval_count(ev); i++) {
        MIEB_TRY(mieb_ret_eval_query(ev, i, v));
        for (int m = 0; m < MIEB_RET_NMEASURES; m++)
            for (int ki = 0; ki < MIEB_RET_NK; ki++) {
                mieb_py_repr(v[m][ki], num, sizeof num);
                fprintf(f, "%s_%d\t%s\t%s\n", mieb_ret_measure_names[m], mieb_ret_k_values[ki],
                        rd->query_ids[kept[i]], num);
            }
    }
    for (int m = 0; m < MIEB_RET_NMEASURES; m++)
        for (int ki = 0; ki < MIEB_RET_NK; ki++) {
            mieb_py_repr(mieb_ret_eval_mean(ev, m, ki), num, sizeof num);
            fprintf(f, "%s_%d\tall\t%s\n", mieb_ret_measure_names[m], mieb_ret_k_values[ki], num);
        }
    return MIEB_OK;
}

/* Hand each query's results dict to the metric accumulator. */
static mieb_status add_tile_metrics(struct mieb_ret_eval *ev, const struct mieb_retrieval_data *rd,
                                    const int64_t *qrow, struct mieb_search_out *so, bool skip,
                                    struct pq_files *pq)
{
    const char **ids = malloc(sizeof(char *) * MIEB_MTEB_TOP_K);
    struct pos_doc *pd = malloc(sizeof *pd * MIEB_MTEB_TOP_K);
    int32_t *rel = malloc(sizeof(int32_t) * MIEB_MTEB_TOP_K);
    size_t *order = pq ? malloc(sizeof(size_t) * MIEB_MTEB_TOP_K) : NULL;
    struct qrel *qr = NULL;
    int64_t qr_cap = 0;
    mieb_status st = MIEB_OK;
    if (!ids || !rel || !pd || (pq && !order)) {
        st = mieb_fail(MIEB_ERR_OOM, "metric buffers");
        goto done;
    }
    for (int64_t t = 0; t < so->n_queries && st == MIEB_OK; t++) {
        int64_t q = qrow[t], q0 = rd->qrels_indptr[q], nqr = rd->qrels_indptr[q + 1] - q0;
        float *s = so->res_s + t * MIEB_MTEB_TOP_K;
        int64_t *d = so->res_d + t * MIEB_MTEB_TOP_K;
        int64_t n = rd->cand_indptr ? collapse_dict(s, d, so->res_n[t], pd) : so->res_n[t];
        if (skip)
            n = skip_first(s, d, n);
        if (nqr > qr_cap) {
            free(qr);
            qr_cap = nqr;
            qr = malloc(sizeof *qr * (size_t)qr_cap);
            if (!qr) {
                st = mieb_fail(MIEB_ERR_OOM, "qrels lookup");
                break;
            }
        }
        for (int64_t j = 0; j < nqr; j++) {
            qr[j].doc = rd->qrels_doc[q0 + j];
            qr[j].score = rd->qrels_score[q0 + j];
        }
        qsort(qr, (size_t)nqr, sizeof *qr, cmp_qrel);
        for (int64_t j = 1; j < nqr; j++)
            if (qr[j].doc == qr[j - 1].doc) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "query '%s' lists document '%s' twice in its qrels",
                               rd->query_ids[q], rd->corpus_ids[qr[j].doc]);
                break;
            }
        if (st != MIEB_OK)
            break;
        for (int64_t j = 0; j < n; j++) {
            struct qrel key = {d[j], 0};
            struct qrel *hit = bsearch(&key, qr, (size_t)nqr, sizeof *qr, cmp_qrel);
            ids[j] = rd->corpus_ids[d[j]];
            rel[j] = hit ? hit->score : 0;
        }
        struct mieb_ret_query_result r = {
            .n = n, .scores = s, .doc_ids = ids, .rel = rel,
            .n_qrels = nqr, .qrels_values = rd->qrels_score + q0,
        };
        st = mieb_ret_eval_add(ev, &r);
        if (st == MIEB_OK && pq)
            st = pq_write_query(pq, &r, rd->query_ids[q], rd, qr, nqr, order);
    }
done:
    free(order);
    free(pd);
    free(ids);
    free(rel);
    free(qr);
    return st;
}

static mieb_status open_roles(const struct mieb_run_ctx *rc, const char *task, const char *split,
                              const char *subset, const struct mieb_retrieval_data *rd,
                              struct mieb_emb_role **qrole, struct mieb_emb_role **crole)
{
    MIEB_TRY(mieb_emb_role_open(rc->emb_dir, task, split, subset, "queries", qrole));
    mieb_status st = mieb_emb_role_open(rc->emb_dir, task, split, subset, "corpus", crole);
    if (st != MIEB_OK)
        return st;
    const struct mieb_emb_info *qi = mieb_emb_role_info(*qrole), *ci = mieb_emb_role_info(*crole);
    if (qi->n_items != rd->n_queries)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld query embeddings but the task data has %lld query_ids",
                         mieb_emb_role_path(*qrole), (long long)qi->n_items, (long long)rd->n_queries);
    if (ci->n_items != rd->n_corpus)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld corpus embeddings but the task data has %lld corpus_ids",
                         mieb_emb_role_path(*crole), (long long)ci->n_items, (long long)rd->n_corpus);
    if (qi->dim != ci->dim)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension %lld differs from %s: dimension %lld",
                         mieb_emb_role_path(*qrole), (long long)qi->dim, mieb_emb_role_path(*crole),
                         (long long)ci->dim);
    bool want_multi = rc->sim == MIEB_SIM_MAXSIM;
    if (qi->multivector != want_multi || ci->multivector != want_multi)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: similarity %s needs %s embeddings (/offsets %s)",
                         mieb_emb_role_path(qi->multivector != want_multi ? *qrole : *crole),
                         mieb_sim_name(rc->sim), want_multi ? "multi-vector" : "single-vector",
                         want_multi ? "required" : "not allowed");
    return MIEB_OK;
}

mieb_status mieb_retrieval_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                        struct mieb_taskdata *td, const char *split, const char *subset,
                                        cJSON *scores)
{
    struct mieb_retrieval_data rd = {0};
    struct mieb_emb_role *qrole = NULL, *crole = NULL;
    struct mieb_ret_eval *ev = NULL;
    int64_t *kept = NULL, n_kept = 0;
    struct pq_files pqf, *pq = NULL;
    char grp[512];
    mieb_status st;

    snprintf(grp, sizeof grp, "/%s/%s", split, subset);
    st = mieb_taskdata_read_retrieval(td, split, subset, &rd);
    if (st == MIEB_OK)
        st = check_unique(mieb_taskdata_path(td), grp, "query_ids", rd.query_ids, rd.n_queries);
    if (st == MIEB_OK)
        st = check_unique(mieb_taskdata_path(td), grp, "corpus_ids", rd.corpus_ids, rd.n_corpus);
    if (st == MIEB_OK)
        st = open_roles(rc, task->name, split, subset, &rd, &qrole, &crole);
    if (st == MIEB_OK)
        st = mieb_ret_eval_new(&ev);
    if (st == MIEB_OK && rc->per_query_dir) {
        st = pq_open(&pqf, rc->per_query_dir, task->name, split, subset);
        if (st == MIEB_OK)
            pq = &pqf;
    }
    if (st != MIEB_OK)
        goto done;

    /* mteb drops queries without qrels entries; all-zero qrels are kept (§8.1) */
    kept = malloc(sizeof(int64_t) * (size_t)(rd.n_queries + 1));
    if (!kept) {
        st = mieb_fail(MIEB_ERR_OOM, "query list");
        goto done;
    }
    for (int64_t q = 0; q < rd.n_queries; q++)
        if (rd.qrels_indptr[q + 1] > rd.qrels_indptr[q])
            kept[n_kept++] = q;
    if (n_kept == 0) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: no query has a qrels entry (mteb cannot score this subset)",
                       mieb_taskdata_path(td), grp);
        goto done;
    }

    {
        const struct mieb_emb_info *qi = mieb_emb_role_info(qrole), *ci = mieb_emb_role_info(crole);
        double q_rows_per_item = (double)qi->n_rows / (double)(qi->n_items ? qi->n_items : 1);
        double c_rows_per_item = (double)ci->n_rows / (double)(ci->n_items ? ci->n_items : 1);
        /* Budget: half for corpus blocks (double-buffered by the stream), half for query tiles. */
        double half = (double)rc->mem_limit / 2.0;
        double per_doc = 2.0 * c_rows_per_item * (double)ci->dim * sizeof(float) + 16.0;
        double per_query = q_rows_per_item * (double)qi->dim * sizeof(float) + (double)mieb_search_bytes_per_query();
        int64_t cap_docs = (int64_t)(half / per_doc);
        int64_t be_cap = mieb_backend_max_block_rows(rc->be, NULL, ci->dim, MIEB_MTEB_TOP_K + 1);
        if (cap_docs > be_cap)
            cap_docs = be_cap;
        if (cap_docs < 1)
            cap_docs = 1;
        int64_t block_items = chunk_divisor_at_most(cap_docs);
        int64_t tile = (int64_t)(half / per_query);
        if (tile < 1)
            tile = 1;
        bool skip = mieb_task_param_bool(task, "skip_first_result");
        MIEB_LOGD("%s %s: %lld of %lld queries kept, corpus %lld, blocks of %lld docs, query tiles of %lld",
                  task->name, grp, (long long)n_kept, (long long)rd.n_queries, (long long)rd.n_corpus,
                  (long long)block_items, (long long)tile);

        for (int64_t t0 = 0; t0 < n_kept && st == MIEB_OK; t0 += tile) {
            int64_t nt = n_kept - t0 < tile ? n_kept - t0 : tile;
            float *qdata = NULL;
            int64_t *qoffs = NULL;
            struct mieb_vecs qv = {0};
            struct mieb_qset *qs = NULL;
            struct mieb_search_out so = {0};
            st = load_query_tile(rc, qrole, kept + t0, nt, &qdata, &qoffs, &qv);
            if (st == MIEB_OK)
                st = mieb_backend_prepare_queries(rc->be, &qv, rc->sim, &qs);
            if (st == MIEB_OK)
                st = mieb_search_tile(rc, qs, nt, kept + t0, crole, &rd, block_items, &so);
            double tm = mieb_now();
            if (st == MIEB_OK)
                st = add_tile_metrics(ev, &rd, kept + t0, &so, skip, pq);
            if (rc->times)
                rc->times->metrics += mieb_now() - tm;
            mieb_search_out_free(&so);
            mieb_backend_release_queries(rc->be, qs);
            free(qdata);
            free(qoffs);
        }
    }
    if (st == MIEB_OK) {
        double tm = mieb_now();
        st = mieb_ret_eval_finish(ev, scores);
        if (st == MIEB_OK && pq)
            st = pq_write_measures(pq, ev, &rd, kept);
        if (st == MIEB_OK && pq)
            st = pq_commit(pq);
        if (rc->times)
            rc->times->metrics += mieb_now() - tm;
    }
done:
    if (st != MIEB_OK && !strstr(mieb_last_error(), mieb_taskdata_path(td)))
        mieb_fail_context(st, "%s %s (%s)", task->name, grp, mieb_taskdata_path(td));
    if (pq)
        pq_abort(pq); /* after a failure: no partial per-query files */
    mieb_ret_eval_free(ev);
    mieb_emb_role_close(qrole);
    mieb_emb_role_close(crole);
    mieb_retrieval_data_free(&rd);
    free(kept);
    return st;
}
