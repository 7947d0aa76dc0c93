/**
 * topk_rate.c - the CPU backend's best-k selection of one query row (k = 1,001, the search's
 * top 1000 plus skip_first_result's extra), offered in tiles of 1,250 scores as the exact
 * way offers them: the reservoir (host/topk/topk_reservoir.h, what the CPU backend runs)
 * against the bounded heap (topk_heap.h, the scalar reference of the CUDA kernel), on the
 * same rows, their best-first lists checked equal. Rows: continuous scores in random order
 * (what a corpus gives a query), 1,000 distinct values (ties), ascending (every score
 * enters) and descending (none after the first 2k). Interleaved, median of 9 rounds.
 *
 *   cmake --build build --target topk_rate && build/bench/topk_rate
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "topk/topk_heap.h"
#include "topk/topk_reservoir.h"

#define K 1001
#define TILE 1250
#define ROUNDS 9

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static int cmp_asc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int cmp_desc(const void *a, const void *b) { return cmp_asc(b, a); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum kind { RANDOM, TIES, ASCENDING, DESCENDING };
static const char *const kind_name[] = {"random", "1,000 values", "ascending", "descending"};

static void fill(float *s, int64_t n, enum kind kind)
{
    for (int64_t j = 0; j < n; j++) {
        double u = bench_uniform(&rng);
        s[j] = kind == TIES ? (float)(floor(u * 1000) / 1000) : (float)(0.4 * u - 0.1);
    }
    if (kind == ASCENDING)
        qsort(s, (size_t)n, sizeof *s, cmp_asc);
    else if (kind == DESCENDING)
        qsort(s, (size_t)n, sizeof *s, cmp_desc);
}

/* one row through each selector; returns the count kept */
static int64_t by_reservoir(const float *s, int64_t n, float *rs, int64_t *ri)
{
    struct mieb_topk_res r;
    mieb_topk_res_init(&r, rs, ri, K);
    for (int64_t d = 0; d < n; d += TILE)
        mieb_topk_res_push_row(&r, s + d, n - d < TILE ? n - d : TILE, d);
    return mieb_topk_res_finish(&r);
}

static int64_t by_heap(const float *s, int64_t n, float *hs, int64_t *hi)
{
    struct mieb_topk_heap h;
    mieb_topk_heap_init(&h, hs, hi, K);
    for (int64_t d = 0; d < n; d += TILE)
        mieb_topk_heap_push_row(&h, s + d, n - d < TILE ? n - d : TILE, d);
    int64_t got = h.n;
    mieb_topk_heap_drain_sorted(&h, hs, hi);
    return got;
}

static int run_case(int64_t n, int64_t rows, enum kind kind)
{
    float *s = malloc(sizeof(float) * (size_t)(n * rows));
    float *rs = malloc(sizeof(float) * 2 * K), *hs = malloc(sizeof(float) * K);
    int64_t *ri = malloc(sizeof(int64_t) * 2 * K), *hi = malloc(sizeof(int64_t) * K);
    for (int64_t q = 0; q < rows; q++)
        fill(s + q * n, n, kind);
    int same = 1;
    for (int64_t q = 0; q < rows && same; q++) {
        int64_t a = by_reservoir(s + q * n, n, rs, ri), b = by_heap(s + q * n, n, hs, hi);
        same = a == b && !memcmp(rs, hs, sizeof(float) * (size_t)a) && !memcmp(ri, hi, sizeof(int64_t) * (size_t)a);
    }
    double t[2][ROUNDS];
    for (int round = 0; round < ROUNDS; round++)
        for (int v = 0; v < 2; v++) {
            double t0 = bench_now();
            for (int64_t q = 0; q < rows; q++)
                v ? by_heap(s + q * n, n, hs, hi) : by_reservoir(s + q * n, n, rs, ri);
            t[v][round] = (bench_now() - t0) / (double)rows;
        }
    qsort(t[0], ROUNDS, sizeof(double), cmp_double);
    qsort(t[1], ROUNDS, sizeof(double), cmp_double);
    printf("n %7lld  %-13s reservoir %8.2f us  heap %8.2f us  heap / reservoir %5.2fx%s\n", (long long)n,
           kind_name[kind], t[0][ROUNDS / 2] * 1e6, t[1][ROUNDS / 2] * 1e6, t[1][ROUNDS / 2] / t[0][ROUNDS / 2],
           same ? "" : "  LISTS DIFFER");
    free(s);
    free(rs);
    free(hs);
    free(ri);
    free(hi);
    return same;
}

int main(void)
{
    /* corpus sizes: VQA2IT2TRetrieval at a quarter and at full size, a 100,000 block */
    static const int64_t sizes[] = {5399, 21597, 100000};
    int ok = 1;
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
        for (int kind = RANDOM; kind <= DESCENDING; kind++)
            ok &= run_case(sizes[a], sizes[a] > 50000 ? 150 : 1000, (enum kind)kind);
    return ok ? 0 : 1;
}
