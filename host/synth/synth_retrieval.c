/*
 * synth_retrieval.c - synthetic data for the retrieval family (PROTOCOLS.md §8):
 * Any2AnyRetrieval, Any2AnyMultilingualRetrieval, DocumentUnderstanding, VisionCentricQA.
 *
 * Planted structure, per split and subset:
 *  - topics (random centres); documents = centre + noise whose size sets their grade
 *    (tight = 3, loose = 1); queries = centre + noise, judged against docs of their topic
 *    with the docs' grades, so good rankings score well and nDCG sees graded gains;
 *  - ~4% duplicate documents (same vector, different id) so exact score ties happen and
 *    the doc-id tie rule matters; ids mix ASCII and non-ASCII UTF-8 and sort differently
 *    as strings than as numbers;
 *  - ~5% queries without qrels (mteb drops them), ~3% judged only 0, judged 0-score
 *    negatives on ~30% and a negative score on ~3%;
 *  - skip_first_result tasks: the corpus starts with every query's own image (same vector,
 *    same id), judged relevant, so the self match ranks first;
 *  - multiple-choice tasks (VisionCentricQA, or a note saying so): 2-4 choices per query,
 *    one scored 1 and the rest 0, and candidates = the qrels docs in qrels order (BLINK).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

/* Growing int64/int32 arrays for the CSR qrels and candidates. */
struct csr {
    int64_t *indptr, *doc;
    int32_t *score;
    int64_t n, cap;
};

static bool csr_push(struct csr *c, int64_t doc, int32_t score)
{
    if (c->n == c->cap) {
        int64_t cap = c->cap ? c->cap * 2 : 256;
        int64_t *d = realloc(c->doc, (size_t)cap * sizeof *d);
        if (d)
            c->doc = d;
        int32_t *s = realloc(c->score, (size_t)cap * sizeof *s);
        if (s)
            c->score = s;
        if (!d || !s)
            return false;
        c->cap = cap;
    }
    c->doc[c->n] = doc;
    c->score[c->n] = score;
    c->n++;
    return true;
}

static void csr_free(struct csr *c)
{
    free(c->indptr);
    free(c->doc);
    free(c->score);
}

#define ID_BYTES 48

static void query_id(char *buf, int64_t i)
{
    if (i % 11 == 3)
        snprintf(buf, ID_BYTES, "q-\xc3\xbc%lld", (long long)i); /* q-ü */
    else if (i % 7 == 5)
        snprintf(buf, ID_BYTES, "\xd0\xb7\xd0\xb0\xd0\xbf\xd1\x80\xd0\xbe\xd1\x81-%lld", (long long)i); /* запрос */
    else
        snprintf(buf, ID_BYTES, "q%lld", (long long)i);
}

static void doc_id(char *buf, int64_t j)
{
    if (j % 13 == 4)
        snprintf(buf, ID_BYTES, "\xe6\x96\x87\xe6\xa1\xa3%lld", (long long)j); /* 文档 */
    else if (j % 5 == 2)
        snprintf(buf, ID_BYTES, "doc-\xc3\xa9%lld", (long long)j); /* doc-é */
    else if (j % 17 == 9)
        snprintf(buf, ID_BYTES, "D%lld", (long long)j);
    else
        snprintf(buf, ID_BYTES, "d%lld", (long long)j);
}

static bool is_multiple_choice(const struct mieb_task *t)
{
    if (!strcmp(t->type, "VisionCentricQA"))
        return true;
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(t->json, "notes"), *n;
    cJSON_ArrayForEach(n, notes)
    {
        if (cJSON_IsString(n) && (strstr(n->valuestring, "multiple-choice") || strstr(n->valuestring, "multi-choice") ||
                                  strstr(n->valuestring, "multiple choice") || strstr(n->valuestring, "top_ranked")))
            return true;
    }
    return false;
}

/* Everything one (split, subset) group needs; owned arrays freed by gen_free. */
struct gen {
    int64_t nq, nd;
    int32_t *qv, *dv;      /* [nq, dim], [nd, dim] integer vectors */
    char *qid_buf, *did_buf;
    const char **qid, **did;
    struct csr qrels, cand;
    bool has_cand;
};

static void gen_free(struct gen *g)
{
    free(g->qv), free(g->dv), free(g->qid_buf), free(g->did_buf), free(g->qid), free(g->did);
    csr_free(&g->qrels);
    csr_free(&g->cand);
}

/* Add doc d to query q's list unless already there (mark[d] == q). */
static bool add_rel(struct gen *g, int64_t *mark, int64_t q, int64_t d, int32_t score)
{
    if (mark[d] == q)
        return true;
    mark[d] = q;
    return csr_push(&g->qrels, d, score);
}

/* A multiple-choice query i (u: its draw in [0, 100)): 2 to 4 candidates, one of them the answer
   the query is moved next to; 2% of queries (u < 2) have no candidates at all. False when out of
   memory. */
static bool choice_query(struct gen *g, int64_t *mark, int64_t i, uint64_t u, int dim, struct mieb_rng *rng)
{
    const int64_t nd = g->nd;
    bool ok = true;
    int64_t nc = 2 + (int64_t)mieb_rng_below(rng, 3), start = g->qrels.n;
    nc = nc > nd ? nd : nc;
    if (u < 2)
        return true;
    for (int64_t tries = 0; g->qrels.n - start < nc && tries < 64 * nc; tries++)
        ok = ok && add_rel(g, mark, i, (int64_t)mieb_rng_below(rng, (uint64_t)nd), 0);
    int64_t got = g->qrels.n - start;
    if (ok && got > 0) { /* got >= 2 unless out of memory: nd >= 6 */
        int64_t ans = (int64_t)mieb_rng_below(rng, (uint64_t)got);
        if (u >= 4) /* 2% of queries have no correct choice: all judged 0, still kept */
            g->qrels.score[start + ans] = 1;
        for (int c = 0; c < dim; c++)
            g->qv[i * dim + c] = g->dv[g->qrels.doc[start + ans] * dim + c] + mieb_rng_noise(rng, 160);
        for (int64_t k = start; k < g->qrels.n && ok; k++)
            ok = csr_push(&g->cand, g->qrels.doc[k], 0);
    }
    return ok;
}

static mieb_status generate(const struct mieb_synth_opts *o, const struct mieb_task *t, const char *split,
                            const char *subset, struct gen *g)
{
    static const int32_t amp_of_grade[4] = {0, 160, 96, 48};
    const int dim = o->dim;
    const bool mc = is_multiple_choice(t), self = mieb_task_param_bool(t, "skip_first_result");
    const int parts = t->n_splits * t->n_subsets;
    const cJSON *jq = cJSON_GetObjectItemCaseSensitive(t->json, "n_queries");
    const cJSON *jc = cJSON_GetObjectItemCaseSensitive(t->json, "n_corpus");
    int64_t nq = mieb_synth_count(cJSON_IsNumber(jq) ? jq->valuedouble : 100, o->scale, parts, 5);
    int64_t nd = mieb_synth_count(cJSON_IsNumber(jc) ? jc->valuedouble : 500, o->scale, parts, 6);
    if (self && nd < nq)
        nd = nq; /* the corpus holds every query's own image */
    const int64_t first = self ? nq : 0; /* docs [0, first) are the queries' self matches */
    int64_t n_topics = nd / 6 < 2 ? 2 : nd / 6;
    struct mieb_rng rng;
    mieb_rng_seed_for(&rng, o->seed, t->name, split, subset, "retrieval");

    g->nq = nq, g->nd = nd, g->has_cand = mc;
    g->qv = malloc((size_t)nq * dim * sizeof *g->qv);
    g->dv = malloc((size_t)nd * dim * sizeof *g->dv);
    g->qid_buf = malloc((size_t)nq * ID_BYTES), g->did_buf = malloc((size_t)nd * ID_BYTES);
    g->qid = malloc((size_t)nq * sizeof *g->qid), g->did = malloc((size_t)nd * sizeof *g->did);
    g->qrels.indptr = malloc((size_t)(nq + 1) * sizeof(int64_t));
    g->cand.indptr = malloc((size_t)(nq + 1) * sizeof(int64_t));
    int32_t *centre = malloc((size_t)n_topics * dim * sizeof *centre);
    int64_t *qt = malloc((size_t)nq * sizeof *qt), *dt = malloc((size_t)nd * sizeof *dt);
    int64_t *mstart = calloc((size_t)n_topics + 1, sizeof *mstart), *members = malloc((size_t)nd * sizeof *members);
    int64_t *mark = malloc((size_t)nd * sizeof *mark);
    int32_t *dg = malloc((size_t)nd * sizeof *dg);
    mieb_status st = MIEB_OK;
    if (!g->qv || !g->dv || !g->qid_buf || !g->did_buf || !g->qid || !g->did || !g->qrels.indptr ||
        !g->cand.indptr || !centre || !qt || !dt || !mstart || !members || !mark || !dg) {
        st = mieb_fail(MIEB_ERR_OOM, "synth %s: out of memory (%lld queries, %lld docs)", t->name, (long long)nq,
                       (long long)nd);
        goto done;
    }
    for (int64_t k = 0; k < n_topics * dim; k++)
        centre[k] = (int32_t)mieb_rng_below(&rng, 1025) - 512;
    for (int64_t i = 0; i < nq; i++) {
        qt[i] = (int64_t)mieb_rng_below(&rng, (uint64_t)n_topics);
        for (int c = 0; c < dim; c++)
            g->qv[i * dim + c] = centre[qt[i] * dim + c] + mieb_rng_noise(&rng, 64);
        g->qid[i] = g->qid_buf + i * ID_BYTES;
        query_id(g->qid_buf + i * ID_BYTES, i);
    }
    for (int64_t j = 0; j < nd; j++) {
        int32_t *v = g->dv + j * dim;
        g->did[j] = g->did_buf + j * ID_BYTES;
        if (j < first) { /* the query's own image: same vector, same id */
            memcpy(v, g->qv + j * dim, (size_t)dim * sizeof *v);
            dt[j] = qt[j], dg[j] = 1;
            memcpy(g->did_buf + j * ID_BYTES, g->qid[j], ID_BYTES);
            continue;
        }
        doc_id(g->did_buf + j * ID_BYTES, j);
        if (j > first && mieb_rng_chance(&rng, 1, 25)) { /* duplicate of an earlier doc */
            int64_t src = first + (int64_t)mieb_rng_below(&rng, (uint64_t)(j - first));
            memcpy(v, g->dv + src * dim, (size_t)dim * sizeof *v);
            dt[j] = dt[src], dg[j] = dg[src];
            continue;
        }
        dt[j] = (int64_t)mieb_rng_below(&rng, (uint64_t)n_topics);
        dg[j] = 1 + (int32_t)mieb_rng_below(&rng, 3);
        for (int c = 0; c < dim; c++)
            v[c] = centre[dt[j] * dim + c] + mieb_rng_noise(&rng, amp_of_grade[dg[j]]);
    }
    /* members of each topic, in doc order (counting sort) */
    for (int64_t j = 0; j < nd; j++)
        mstart[dt[j] + 1]++;
    for (int64_t k = 0; k < n_topics; k++)
        mstart[k + 1] += mstart[k];
    memcpy(mark, mstart, (size_t)n_topics * sizeof *mark); /* mark[] doubles as the fill cursor */
    for (int64_t j = 0; j < nd; j++)
        members[mark[dt[j]]++] = j;
    for (int64_t j = 0; j < nd; j++)
        mark[j] = -1;

    g->qrels.indptr[0] = g->cand.indptr[0] = 0;
    for (int64_t i = 0; i < nq && st == MIEB_OK; i++) {
        uint64_t u = mieb_rng_below(&rng, 100);
        bool ok = true;
        if (mc) {
            ok = choice_query(g, mark, i, u, dim, &rng);
        } else if (u >= 5 && u < 8) { /* judged, but only as non-relevant */
            int64_t nz = 1 + (int64_t)mieb_rng_below(&rng, 2);
            for (int64_t k = 0; k < nz && ok; k++)
                ok = add_rel(g, mark, i, (int64_t)mieb_rng_below(&rng, (uint64_t)nd), 0);
        } else if (u >= 8) {
            int64_t t0 = mstart[qt[i]], m = mstart[qt[i] + 1] - t0, want = 1 + (int64_t)mieb_rng_below(&rng, 4);
            int64_t start = g->qrels.n;
            if (self)
                ok = add_rel(g, mark, i, i, 1);
            for (int64_t tries = 0; ok && m > 0 && g->qrels.n - start < want + self && tries < 4 * want; tries++) {
                int64_t d = members[t0 + (int64_t)mieb_rng_below(&rng, (uint64_t)m)];
                ok = add_rel(g, mark, i, d, self ? 1 : dg[d]);
            }
            if (ok && g->qrels.n == start)
                ok = add_rel(g, mark, i, (int64_t)mieb_rng_below(&rng, (uint64_t)nd), 1);
            if (ok && mieb_rng_chance(&rng, 30, 100))
                for (int64_t k = 0, nz = 1 + (int64_t)mieb_rng_below(&rng, 2); k < nz && ok; k++)
                    ok = add_rel(g, mark, i, (int64_t)mieb_rng_below(&rng, (uint64_t)nd), 0);
            if (ok && mieb_rng_chance(&rng, 3, 100))
                ok = add_rel(g, mark, i, (int64_t)mieb_rng_below(&rng, (uint64_t)nd), -1);
        }
        if (!ok)
            st = mieb_fail(MIEB_ERR_OOM, "synth %s: out of memory for qrels", t->name);
        g->qrels.indptr[i + 1] = g->qrels.n;
        g->cand.indptr[i + 1] = g->cand.n;
    }
done:
    free(centre), free(qt), free(dt), free(mstart), free(members), free(mark), free(dg);
    return st;
}

/* Write the group's datasets into the open task file, then the two roles. */
static mieb_status write_group(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file,
                               const char *split, const char *subset, const struct gen *g)
{
    char gp[1024];
    hid_t grp;
    if (snprintf(gp, sizeof gp, "/%s/%s", split, subset) >= (int)sizeof gp)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "synth %s: group name too long", t->name);
    MIEB_TRY(mieb_h5w_group(file, gp, &grp));
    int64_t nip = g->nq + 1;
    mieb_status st = mieb_h5w_strings(grp, "query_ids", g->qid, g->nq);
    if (st == MIEB_OK)
        st = mieb_h5w_strings(grp, "corpus_ids", g->did, g->nd);
    if (st == MIEB_OK)
        st = mieb_h5w_i64(grp, "qrels_indptr", g->qrels.indptr, 1, &nip);
    if (st == MIEB_OK)
        st = mieb_h5w_i64(grp, "qrels_doc", g->qrels.doc, 1, &g->qrels.n);
    if (st == MIEB_OK)
        st = mieb_h5w_i32(grp, "qrels_score", g->qrels.score, g->qrels.n);
    if (st == MIEB_OK && g->has_cand)
        st = mieb_h5w_i64(grp, "candidates_indptr", g->cand.indptr, 1, &nip);
    if (st == MIEB_OK && g->has_cand)
        st = mieb_h5w_i64(grp, "candidates_doc", g->cand.doc, 1, &g->cand.n);
    mieb_h5w_group_close(grp);
    if (st != MIEB_OK)
        return mieb_fail_context(st, "synth %s %s", t->name, gp);
    MIEB_TRY(mieb_synth_write_role(o, t, split, subset, "queries", g->qv, g->nq));
    return mieb_synth_write_role(o, t, split, subset, "corpus", g->dv, g->nd);
}

struct ret_totals {
    int64_t nq, nd, nnz;
};

static mieb_status ret_group(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file, const char *split,
                             const char *subset, void *arg, int64_t *n_out)
{
    struct ret_totals *tot = arg;
    struct gen g = {0};
    mieb_status st = generate(o, t, split, subset, &g);
    if (st == MIEB_OK)
        st = write_group(o, t, file, split, subset, &g);
    tot->nq += g.nq, tot->nd += g.nd, tot->nnz += g.qrels.n;
    *n_out = g.nq;
    gen_free(&g);
    return st;
}

mieb_status mieb_synth_retrieval(const struct mieb_synth_opts *o, const struct mieb_task *t)
{
    struct ret_totals tot = {0};
    MIEB_TRY(mieb_synth_groups(o, t, ret_group, &tot, NULL));
    MIEB_LOGI("synth: %s: %d split(s) x %d subset(s), %lld queries, %lld documents, %lld qrels", t->name,
              t->n_splits, t->n_subsets, (long long)tot.nq, (long long)tot.nd, (long long)tot.nnz);
    return MIEB_OK;
}
