/*
 * test_ret_eval_batch.c - mieb_ret_eval_add_batch (queries measured on several threads)
 * against mieb_ret_eval_add called query by query, which the Python tests hold to
 * pytrec_eval and mteb: every per-query value and every metric key the same bits for 1 to
 * 5 threads, on random results dicts with tied scores, empty dicts, graded and negative
 * qrels; and a failure inside a worker's range (a callback error, a NaN score) reported as
 * the first failing query's error, as the calls in turn report it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/status.h"
#include "metrics/retrieval_metrics.h"

#define NQ 700
#define MAXN 60

struct query {
    int64_t n, n_qrels;
    float scores[MAXN];
    const char *ids[MAXN];
    int32_t rel[MAXN];
    int32_t qrels[MAXN + 4];
};

static struct query queries[NQ];
static char doc_names[MAXN][8];

struct fill_ctx {
    int64_t offset;   /* the batch's query i is queries[offset + i] */
    int64_t fail_at;  /* the callback fails at this query (-1: never) */
    int64_t nan_at;   /* this query gets a NaN score (-1: none) */
};

static void make_queries(unsigned long long seed)
{
    for (int j = 0; j < MAXN; j++)
        snprintf(doc_names[j], sizeof doc_names[j], "d%02d", j);
    for (int q = 0; q < NQ; q++) {
        struct query *x = &queries[q];
        x->n = (int64_t)(check_rng_u64(&seed) % (MAXN + 1)); /* 0 .. MAXN, empty dicts included */
        int levels = 1 + (int)(check_rng_u64(&seed) % 4);     /* few levels: many tied scores */
        x->n_qrels = 0;
        for (int64_t j = 0; j < x->n; j++) {
            x->scores[j] = (float)(check_rng_u64(&seed) % (unsigned)(levels * 3)) / (float)levels;
            x->ids[j] = doc_names[(j * 7 + q) % MAXN]; /* unique within the dict */
            int r = (int)(check_rng_u64(&seed) % 6) - 1; /* -1 .. 4, 0 and negative included */
            x->rel[j] = r > 0 && r < 4 ? r : 0;
            if (r > 0 && r < 4)
                x->qrels[x->n_qrels++] = r;
        }
        /* judged documents that were not retrieved, and negative judgements */
        int extra = (int)(check_rng_u64(&seed) % 4);
        for (int e = 0; e < extra; e++)
            x->qrels[x->n_qrels++] = (int32_t)(check_rng_u64(&seed) % 4) - 1;
    }
}

static void view(int64_t i, const struct fill_ctx *c, struct mieb_ret_query_result *r, float *nan_buf)
{
    const struct query *x = &queries[i];
    const float *s = x->scores;
    if (i == c->nan_at && x->n > 0) {
        memcpy(nan_buf, x->scores, sizeof(float) * (size_t)x->n);
        nan_buf[x->n / 2] = NAN;
        s = nan_buf;
    }
    *r = (struct mieb_ret_query_result){.n = x->n, .scores = s, .doc_ids = x->ids, .rel = x->rel,
                                        .n_qrels = x->n_qrels, .qrels_values = x->qrels};
}

static _Thread_local float worker_nan_buf[MAXN];

static mieb_status fill(void *user, int64_t i, int worker, struct mieb_ret_query_result *q)
{
    const struct fill_ctx *c = user;
    (void)worker;
    i += c->offset;
    if (i == c->fail_at)
        return mieb_fail(MIEB_ERR_BAD_DATA, "query %lld refused", (long long)i);
    view(i, c, q, worker_nan_buf);
    return MIEB_OK;
}

/* The reference: one mieb_ret_eval_add per query, in order, stopping at the first failure. */
static mieb_status sequential(struct mieb_ret_eval *ev, const struct fill_ctx *c, int64_t n)
{
    float nan_buf[MAXN];
    for (int64_t i = 0; i < n; i++) {
        if (i == c->fail_at)
            return mieb_fail(MIEB_ERR_BAD_DATA, "query %lld refused", (long long)i);
        struct mieb_ret_query_result r;
        view(i, c, &r, nan_buf);
        mieb_status st = mieb_ret_eval_add(ev, &r);
        if (st != MIEB_OK)
            return st;
    }
    return MIEB_OK;
}

static char *finish_json(struct mieb_ret_eval *ev)
{
    cJSON *o = cJSON_CreateObject();
    mieb_status st = mieb_ret_eval_finish(ev, o);
    char *s = st == MIEB_OK ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

static void check_same_values(int threads, int64_t n, int64_t first_batch)
{
    struct fill_ctx c = {.fail_at = -1, .nan_at = -1};
    struct mieb_ret_eval *a = NULL, *b = NULL;
    CHECK(mieb_ret_eval_new(&a) == MIEB_OK && mieb_ret_eval_new(&b) == MIEB_OK);
    CHECK(sequential(a, &c, n) == MIEB_OK);
    /* two batches, as two query tiles of a subset give them */
    CHECK(mieb_ret_eval_add_batch(b, first_batch, threads, fill, &c) == MIEB_OK);
    struct fill_ctx second = c;
    second.offset = first_batch;
    CHECK(mieb_ret_eval_add_batch(b, n - first_batch, threads, fill, &second) == MIEB_OK);
    CHECK(mieb_ret_eval_count(a) == n && mieb_ret_eval_count(b) == n);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double va[MIEB_RET_NMEASURES][MIEB_RET_NK], vb[MIEB_RET_NMEASURES][MIEB_RET_NK];
        CHECK(mieb_ret_eval_query(a, i, va) == MIEB_OK && mieb_ret_eval_query(b, i, vb) == MIEB_OK);
        bad += memcmp(va, vb, sizeof va) != 0;
    }
    CHECK_MSG(bad == 0, "%d of %lld queries differ with %d threads", bad, (long long)n, threads);
    char *ja = finish_json(a), *jb = finish_json(b);
    CHECK_MSG(ja && jb && strcmp(ja, jb) == 0, "metric keys differ with %d threads", threads);
    cJSON_free(ja);
    cJSON_free(jb);
    mieb_ret_eval_free(a);
    mieb_ret_eval_free(b);
}

static void check_first_error(int threads, int64_t n, struct fill_ctx c, const char *what)
{
    struct mieb_ret_eval *a = NULL, *b = NULL;
    CHECK(mieb_ret_eval_new(&a) == MIEB_OK && mieb_ret_eval_new(&b) == MIEB_OK);
    mieb_clear_error();
    mieb_status sa = sequential(a, &c, n);
    char want[2048];
    snprintf(want, sizeof want, "%s", mieb_last_error());
    mieb_clear_error();
    mieb_status sb = mieb_ret_eval_add_batch(b, n, threads, fill, &c);
    CHECK_MSG(sa != MIEB_OK && sb == sa, "%s, %d threads: status %d, want %d", what, threads, sb, sa);
    CHECK_MSG(strcmp(mieb_last_error(), want) == 0, "%s, %d threads: '%s', want '%s'", what, threads,
              mieb_last_error(), want);
    /* a failed batch adds nothing */
    CHECK(mieb_ret_eval_count(b) == 0);
    mieb_ret_eval_free(a);
    mieb_ret_eval_free(b);
}

int main(void)
{
    make_queries(20261201);
    for (int threads = 1; threads <= 5; threads++) {
        check_same_values(threads, NQ, 333);
        check_same_values(threads, 40, 3); /* below the size that gets a second worker */
    }
    /* a query with a NaN score late in the batch, a refusal later still, and one early */
    int64_t nan_q = -1;
    for (int64_t i = NQ - 100; i < NQ && nan_q < 0; i++)
        if (queries[i].n > 2)
            nan_q = i;
    CHECK(nan_q >= 0);
    for (int threads = 1; threads <= 5; threads++) {
        check_first_error(threads, NQ, (struct fill_ctx){.fail_at = -1, .nan_at = nan_q}, "NaN score");
        check_first_error(threads, NQ, (struct fill_ctx){.fail_at = NQ - 3, .nan_at = nan_q}, "NaN then refusal");
        check_first_error(threads, NQ, (struct fill_ctx){.fail_at = 5, .nan_at = nan_q}, "refusal then NaN");
    }
    return check_done("test_ret_eval_batch");
}
