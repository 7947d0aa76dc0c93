/*
 * test_maxsim.c - the CPU MaxSim scores (host/cpu/cpu_kernels.h) and the CPU backend's
 * MaxSim top-k.
 *
 * 1. mieb_cpu_maxsim_tile equals, bit for bit, the definition computed pair by pair: for
 *    each query token, the running maximum (`if (s > m) m = s`) of mieb_canon_dot over the
 *    doc's tokens in order, summed over the query's tokens in order in float32 (0 for an
 *    item without tokens). Items are ragged: no tokens, one, a few, and more than one
 *    product takes (query runs of over 192 tokens, doc runs of over 2048), on tiles that
 *    start anywhere and leave columns of the output untouched; values include repeated
 *    tokens (ties) and zero vectors (maxima of +0 and -0).
 * 2. The backend's score_pairs (candidate lists) gives the same scores, pair by pair.
 * 3. The backend's topk_block with MaxSim, on 1 to 3 threads, equals a full sort of those
 *    scores under the tie rule (score descending, index ascending), for k below and above
 *    the corpus size, with the docs of one query split over the threads and merged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "canon/canon_dot.h"
#include "cpu/cpu_kernels.h"
#include "check.h"
#include "check_ranked.h"

static unsigned long long rng = 0x51ED270B27AE4F3Dull;
static uint64_t next_u64(void) { return check_rng_u64(&rng); }
static double uni(void) { return check_rng_uniform(&rng); }

struct items {
    float *data;
    int64_t *off;
    int64_t n, rows, dim;
};

/* n items; token counts mostly small, some zero, a few longer than `big`. Values: normals
   in [-1, 1) steps of 1/8 (many exact ties), repeated tokens and zero vectors. */
static void make_items(struct items *it, int64_t n, int64_t dim, int64_t small, int64_t big)
{
    it->n = n, it->dim = dim;
    it->off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    it->off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next_u64() % 20;
        int64_t t = r == 0 ? 0 : r == 1 ? big + (int64_t)(next_u64() % 64) : 1 + (int64_t)(next_u64() % small);
        it->off[i + 1] = it->off[i] + t;
    }
    it->rows = it->off[n];
    it->data = malloc(sizeof(float) * (size_t)((it->rows > 0 ? it->rows : 1) * dim));
    for (int64_t r = 0; r < it->rows; r++) {
        float *v = it->data + r * dim;
        uint64_t kind = next_u64() % 10;
        if (kind == 0 && r > 0)
            memcpy(v, it->data + (int64_t)(next_u64() % (uint64_t)r) * dim, sizeof(float) * (size_t)dim);
        else if (kind == 1)
            for (int64_t x = 0; x < dim; x++)
                v[x] = (x & 1) ? -0.0f : 0.0f;
        else
            for (int64_t x = 0; x < dim; x++)
                v[x] = (float)((int)(uni() * 16.0) - 8) / 8.0f + (kind == 2 ? (float)(uni() * 1e-3) : 0.0f);
    }
}

static void free_items(struct items *it)
{
    free(it->data);
    free(it->off);
}

static float ref_maxsim(const struct items *q, int64_t i, const struct items *d, int64_t j)
{
    float total = 0.0f;
    if (d->off[j + 1] == d->off[j])
        return total;
    for (int64_t t = q->off[i]; t < q->off[i + 1]; t++) {
        float m = mieb_canon_dot(q->data + t * q->dim, d->data + d->off[j] * d->dim, q->dim);
        for (int64_t u = d->off[j] + 1; u < d->off[j + 1]; u++) {
            float s = mieb_canon_dot(q->data + t * q->dim, d->data + u * d->dim, q->dim);
            if (s > m)
                m = s;
        }
        total += m;
    }
    return total;
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static void check_tiles(int64_t nq, int64_t nd, int64_t dim, int64_t qsmall, int64_t dsmall)
{
    struct items q, d;
    make_items(&q, nq, dim, qsmall, 200);
    make_items(&d, nd, dim, dsmall, 2100);
    struct mieb_vecs qv = {q.data, q.off, q.n, q.rows, dim}, dv = {d.data, d.off, d.n, d.rows, dim};
    float *ref = malloc(sizeof(float) * (size_t)(nq * nd));
    for (int64_t i = 0; i < nq; i++)
        for (int64_t j = 0; j < nd; j++)
            ref[i * nd + j] = ref_maxsim(&q, i, &d, j);
    struct mieb_maxsim_scratch ws = {0}; /* reused by every call below */
    int bad = 0;
    for (int rep = 0; rep < 6 && !bad; rep++) {
        int64_t q0 = rep == 0 ? 0 : (int64_t)(next_u64() % (uint64_t)nq);
        int64_t q1 = rep == 0 ? nq : q0 + 1 + (int64_t)(next_u64() % (uint64_t)(nq - q0));
        int64_t d0 = rep == 0 ? 0 : (int64_t)(next_u64() % (uint64_t)nd);
        int64_t d1 = rep == 0 ? nd : d0 + 1 + (int64_t)(next_u64() % (uint64_t)(nd - d0));
        int64_t ldo = d1 - d0 + 3;
        float *out = malloc(sizeof(float) * (size_t)((q1 - q0) * ldo));
        for (int64_t x = 0; x < (q1 - q0) * ldo; x++)
            out[x] = 12345.0f;
        CHECK(mieb_cpu_maxsim_tile(&qv, q0, q1, &dv, d0, d1, out, ldo, &ws) == MIEB_OK);
        for (int64_t i = q0; i < q1 && !bad; i++) {
            for (int64_t j = d0; j < d1 && !bad; j++)
                if (!same_bits(out[(i - q0) * ldo + j - d0], ref[i * nd + j])) {
                    CHECK_MSG(0, "dim %lld tile [%lld,%lld)x[%lld,%lld): query %lld (%lld tokens) doc %lld (%lld "
                              "tokens): %.9g, want %.9g", (long long)dim, (long long)q0, (long long)q1,
                              (long long)d0, (long long)d1, (long long)i, (long long)(q.off[i + 1] - q.off[i]),
                              (long long)j, (long long)(d.off[j + 1] - d.off[j]), out[(i - q0) * ldo + j - d0],
                              ref[i * nd + j]);
                    bad = 1;
                }
            for (int64_t x = d1 - d0; x < ldo && !bad; x++)
                if (out[(i - q0) * ldo + x] != 12345.0f) {
                    CHECK_MSG(0, "column %lld past the tile was written", (long long)x);
                    bad = 1;
                }
        }
        free(out);
    }
    CHECK(!bad);
    /* the backend's candidate pairs (cpu_score_pairs: one query and one doc per call, its
       scratch kept), every pair once in a shuffled order */
    int64_t np_ = nq * nd;
    int64_t *pq = malloc(sizeof(int64_t) * (size_t)np_), *pd = malloc(sizeof(int64_t) * (size_t)np_);
    float *ps = malloc(sizeof(float) * (size_t)np_);
    for (int64_t x = 0; x < np_; x++)
        pq[x] = x / nd, pd[x] = x % nd;
    for (int64_t x = np_ - 1; x > 0; x--) {
        int64_t y = (int64_t)(next_u64() % (uint64_t)(x + 1)), tq = pq[x], tdoc = pd[x];
        pq[x] = pq[y], pd[x] = pd[y], pq[y] = tq, pd[y] = tdoc;
    }
    struct mieb_backend *be = NULL;
    struct mieb_backend_opts opts = {.n_threads = 1};
    struct mieb_qset *qs = NULL;
    CHECK(mieb_backend_cpu_init(&opts, &be) == MIEB_OK);
    CHECK(mieb_backend_prepare_queries(be, &qv, MIEB_SIM_MAXSIM, &qs) == MIEB_OK);
    CHECK(mieb_backend_score_pairs(be, qs, &dv, np_, pq, pd, ps) == MIEB_OK);
    for (int64_t x = 0; x < np_ && !bad; x++)
        if (!same_bits(ps[x], ref[pq[x] * nd + pd[x]])) {
            CHECK_MSG(0, "score_pairs: query %lld doc %lld: %.9g, want %.9g", (long long)pq[x], (long long)pd[x],
                      ps[x], ref[pq[x] * nd + pd[x]]);
            bad = 1;
        }
    mieb_backend_release_queries(be, qs);
    mieb_backend_free(be);
    free(pq);
    free(pd);
    free(ps);
    free(ws.s);
    free(ref);
    free_items(&q);
    free_items(&d);
}


static void check_topk(int threads, int64_t nq, int64_t nd, int64_t dim, int64_t k)
{
    struct items q, d;
    make_items(&q, nq, dim, 24, 30);
    make_items(&d, nd, dim, 12, 50);
    struct mieb_vecs qv = {q.data, q.off, q.n, q.rows, dim}, dv = {d.data, d.off, d.n, d.rows, dim};
    struct mieb_backend *be = NULL;
    struct mieb_backend_opts opts = {.n_threads = threads};
    struct mieb_qset *qs = NULL;
    float *os = malloc(sizeof(float) * (size_t)(nq * k));
    int64_t *oi = malloc(sizeof(int64_t) * (size_t)(nq * k));
    struct pair *ref = malloc(sizeof(struct pair) * (size_t)nd);
    CHECK(mieb_backend_cpu_init(&opts, &be) == MIEB_OK);
    CHECK(mieb_backend_prepare_queries(be, &qv, MIEB_SIM_MAXSIM, &qs) == MIEB_OK);
    CHECK(mieb_backend_topk_block(be, qs, &dv, k, os, oi) == MIEB_OK);
    int64_t keep = k < nd ? k : nd;
    int bad = 0;
    for (int64_t r = 0; r < nq && !bad; r++) {
        for (int64_t j = 0; j < nd; j++)
            ref[j] = (struct pair){ref_maxsim(&q, r, &d, j), j};
        char what[160];
        snprintf(what, sizeof what, "threads %d nq %lld nd %lld k %lld: query %lld", threads, (long long)nq,
                 (long long)nd, (long long)k, (long long)r);
        bad = !check_ranked_row(ref, nd, keep, os + r * k, oi + r * k, what);
    }
    mieb_backend_release_queries(be, qs);
    mieb_backend_free(be);
    free(os);
    free(oi);
    free(ref);
    free_items(&q);
    free_items(&d);
}

int main(void)
{
    static const int64_t dims[] = {1, 15, 16, 17, 128, 130};
    for (size_t x = 0; x < sizeof dims / sizeof dims[0]; x++) {
        check_tiles(23, 37, dims[x], 30, 60);
        check_tiles(9, 150, dims[x], 3, 400); /* many doc tokens: doc runs of 2048 end inside the corpus */
    }
    check_tiles(60, 8, 16, 40, 3); /* query runs of 192 tokens end inside the query set */
    for (int threads = 1; threads <= 3; threads++) {
        check_topk(threads, 7, 90, 16, 10);
        check_topk(threads, 30, 60, 32, 100); /* k above the corpus size */
        check_topk(threads, 2, 1400, 8, 1000); /* more docs than one 1250-doc tile */
        check_topk(threads, 1, 2600, 8, 1000); /* one query: the docs split over the threads, merged */
    }
    return check_done("test_maxsim");
}
