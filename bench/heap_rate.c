/**
 * heap_rate.c - filling mteb's emulated heap (host/families/mteb_heap.h) with a chunk's
 * list of 1,001 entries, best first, as the search does for each query: one offer at a time
 * (CPython's heappush / heappushpop, operation for operation) against the run taken as a
 * fixed permutation (mieb_pyheap_offer_sorted_prefix) and the rest offered one at a time.
 * Lists: distinct scores (the whole run is taken), and a tie at entry 500 whose ids rise (the
 * run ends there). The heap arrays are checked equal. Interleaved, best of 21 rounds.
 *
 *   cmake --build build --target heap_rate && build/bench/heap_rate
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "families/mteb_heap.h"

#define N 1001
#define TOP 1000
#define REPS 2000

static void fill(struct mieb_pyheap *h, const float *s, const int64_t *d, int use_prefix)
{
    int64_t x0 = use_prefix ? mieb_pyheap_offer_sorted_prefix(h, TOP, s, d, N) : 0;
    for (int64_t x = x0; x < N; x++)
        mieb_pyheap_offer(h, TOP, s[x], d[x]);
}

static int run_case(const char *name, const float *s, const int64_t *d, const char *const *ids)
{
    float hs[2][TOP];
    int64_t hd[2][TOP];
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < 21; round++)
        for (int v = 0; v < 2; v++) {
            double t0 = bench_now();
            for (int r = 0; r < REPS; r++) {
                struct mieb_pyheap h;
                mieb_pyheap_init(&h, hs[v], hd[v], TOP, ids);
                fill(&h, s, d, v);
            }
            double dt = (bench_now() - t0) / REPS;
            best[v] = dt < best[v] ? dt : best[v];
        }
    int same = !memcmp(hs[0], hs[1], sizeof hs[0]) && !memcmp(hd[0], hd[1], sizeof hd[0]);
    printf("%-28s one at a time %7.2f us, run + rest %7.2f us: %5.2fx%s\n", name, best[0] * 1e6, best[1] * 1e6,
           best[0] / best[1], same ? "" : "  HEAPS DIFFER");
    return same;
}

int main(void)
{
    static float s[N];
    static int64_t d[N];
    static char names[N][16];
    const char *ids[N];
    for (int i = 0; i < N; i++) {
        s[i] = 0.9f - (float)i / 4096.0f; /* best first, distinct */
        d[i] = i;
        snprintf(names[i], sizeof names[i], "doc%06d", i);
        ids[i] = names[i];
    }
    int ok = run_case("distinct scores", s, d, ids);
    s[500] = s[499]; /* a tie; row 500's id is larger, so the tuple rises there */
    ok &= run_case("a tie at entry 500", s, d, ids);
    return ok ? 0 : 1;
}
