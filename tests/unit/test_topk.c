/*
 * test_topk.c - the CPU backend's top-k equals a full sort under the backend tie rule
 * (score descending, index ascending) for k = 1, 10, 1000, 1001 and k >= corpus size,
 * on inputs whose dot products are exact in fp32 and full of ties, for 1..3 threads
 * (3 threads with few queries exercises the split-by-doc-range merge path).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "topk/topk_heap.h"
#include "check.h"
#include "check_ranked.h"

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) { return check_rng_u64(&rng_state); }


static void fill_exact(float *v, int64_t n, int64_t dim)
{
    /* entries in {-1, 0, 1}: every dot product is a small integer, exact in fp32 */
    for (int64_t i = 0; i < n * dim; i++)
        v[i] = (float)((int)(next_u64() % 3) - 1);
}

static void check_case(int threads, int64_t nq, int64_t nd, int64_t dim, int64_t k)
{
    float *q = malloc(sizeof(float) * nq * dim), *d = malloc(sizeof(float) * nd * dim);
    float *os = malloc(sizeof(float) * nq * k);
    int64_t *oi = malloc(sizeof(int64_t) * nq * k);
    struct pair *ref = malloc(sizeof(struct pair) * nd);
    struct mieb_backend *be = NULL;
    struct mieb_backend_opts opts = {.n_threads = threads};
    struct mieb_qset *qs = NULL;
    fill_exact(q, nq, dim);
    fill_exact(d, nd, dim);
    struct mieb_vecs qv = {q, NULL, nq, nq, dim}, dv = {d, NULL, nd, nd, dim};
    CHECK(mieb_backend_cpu_init(&opts, &be) == MIEB_OK);
    CHECK(mieb_backend_prepare_queries(be, &qv, MIEB_SIM_DOT, &qs) == MIEB_OK);
    CHECK(mieb_backend_topk_block(be, qs, &dv, k, os, oi) == MIEB_OK);
    int64_t keep = k < nd ? k : nd;
    int bad = 0;
    for (int64_t r = 0; r < nq && !bad; r++) {
        for (int64_t j = 0; j < nd; j++) {
            float s = 0;
            for (int64_t x = 0; x < dim; x++)
                s += q[r * dim + x] * d[j * dim + x];
            ref[j].s = s;
            ref[j].i = j;
        }
        char what[160];
        snprintf(what, sizeof what, "threads=%d nq=%lld nd=%lld k=%lld: query %lld", threads, (long long)nq,
                 (long long)nd, (long long)k, (long long)r);
        bad = !check_ranked_row(ref, nd, keep, os + r * k, oi + r * k, what);
    }
    mieb_backend_release_queries(be, qs);
    mieb_backend_free(be);
    free(q);
    free(d);
    free(os);
    free(oi);
    free(ref);
}

static void check_merge(void)
{
    float a[] = {5, 3, 3, 1}, b[] = {4, 3, 2};
    int64_t ia[] = {0, 2, 7, 9}, ib[] = {1, 5, 3};
    float os[7];
    int64_t oi[7];
    int64_t n = mieb_topk_merge(a, ia, 4, b, ib, 3, 5, os, oi);
    CHECK(n == 5);
    int64_t want[] = {0, 1, 2, 5, 7};
    for (int j = 0; j < 5; j++)
        CHECK(oi[j] == want[j]);
}

int main(void)
{
    int64_t ks[] = {1, 10, 1000, 1001, 5000};
    for (int t = 1; t <= 3; t++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            check_case(t, 7, 3000, 8, ks[i]);     /* few queries: doc-range split when t > 1 */
            check_case(t, 300, 1200, 6, ks[i]);   /* several query tiles */
        }
    check_case(2, 3, 1001, 5, 1001);              /* k == corpus size */
    check_case(2, 3, 1, 5, 10);                   /* one document */
    check_merge();
    return check_done("test_topk");
}
