/**
 * sort_rate.c - the radix sort of host/core/radix_sort.h against libc's qsort on the
 * same keys, in one run, as microseconds per sort and a ratio.
 *
 * Retrieval sorts about a thousand entries per query several times: a reservoir's survivors
 * best first (all 8 bytes of (score key, index)), trec_eval's ranking (the score bytes 4..8,
 * stably), skip_first_result (as the reservoir). Keys are built as the callers build them:
 * mieb_best_first_key of cosine-like scores in a narrow range (their top bytes agree) and
 * document rows below 50,000. qsort compares the masked key and then the position, so that it
 * sorts stably, as the radix sort does; both results are checked equal. The two run
 * interleaved, one sort of each per round; each figure is the best of --reps rounds (noise
 * only slows a run down).
 *
 *   cmake --build build --target sort_rate && build/bench/sort_rate [--reps 15]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "core/radix_sort.h"

static uint64_t g_mask;

struct kp {
    uint64_t k;
    uint32_t pos;
};

static int cmp_kp(const void *a, const void *b)
{
    const struct kp *x = a, *y = b;
    uint64_t kx = x->k & g_mask, ky = y->k & g_mask;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;

/* one case: n keys, sorted on bytes [lo, 8); 0 when the two sorts disagree */
static int run_case(int64_t n, int lo, int reps)
{
    uint64_t *k0 = malloc(sizeof(uint64_t) * (size_t)n), *k = malloc(sizeof(uint64_t) * (size_t)(2 * n));
    struct kp *q = malloc(sizeof(struct kp) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        k0[i] = mieb_best_first_key((float)(0.2 + 0.1 * bench_uniform(&rng)), (uint32_t)(bench_uniform(&rng) * 50000));
    g_mask = lo == 0 ? UINT64_MAX : ~0ull << (8 * lo);
    double best_r = 1e30, best_q = 1e30;
    int same = 1;
    for (int r = 0; r < reps; r++) {
        memcpy(k, k0, sizeof(uint64_t) * (size_t)n);
        double t0 = bench_now();
        mieb_radix_sort_u64(k, NULL, k + n, NULL, n, lo, 8);
        double t1 = bench_now();
        for (int64_t i = 0; i < n; i++)
            q[i] = (struct kp){k0[i], (uint32_t)i};
        double t2 = bench_now();
        qsort(q, (size_t)n, sizeof *q, cmp_kp);
        double t3 = bench_now();
        best_r = t1 - t0 < best_r ? t1 - t0 : best_r;
        best_q = t3 - t2 < best_q ? t3 - t2 : best_q;
        for (int64_t i = 0; i < n; i++)
            same &= k[i] == q[i].k;
    }
    printf("%8lld keys, bytes %d..8: radix %9.2f us, qsort %9.2f us, qsort / radix %5.2fx%s\n", (long long)n, lo,
           best_r * 1e6, best_q * 1e6, best_q / best_r, same ? "" : "  RESULTS DIFFER");
    free(k0);
    free(k);
    free(q);
    return same;
}

int main(int argc, char **argv)
{
    int reps = 15;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: sort_rate [--reps N]\n");
            return 2;
        }
    if (reps < 1)
        reps = 1;
    int ok = 1;
    const int64_t sizes[] = {1001, 2002, 20000};
    for (int s = 0; s < 3; s++) {
        ok &= run_case(sizes[s], 0, reps);
        ok &= run_case(sizes[s], 4, reps);
    }
    return ok ? 0 : 1;
}
