/*
 * test_topk_reservoir.c - the reservoir (topk_reservoir.h) on its own: its best k equal a
 * full sort under the backend tie rule for rows of every kind its cuts branch on:
 * continuous scores, scores with few distinct values (ties across the sampled cut's
 * candidates) and scores on adjacent floats; rows in random, ascending, descending,
 * constant and sawtooth order; k from 1 to 1001 and rows from half of k to 40 k, offered in
 * chunks of every size and one at a time, with and without a floor.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "topk/topk_reservoir.h"
#include "check.h"
#include "check_ranked.h"

static unsigned long long rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t next_u64(void) { return check_rng_u64(&rng_state); }
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

enum order { ORD_RANDOM, ORD_ASC, ORD_DESC, ORD_CONST, ORD_SAW, N_ORDERS };

static int cmp_asc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* levels: 0 = continuous, > 0 that many distinct values, < 0 -levels adjacent floats
   (a threshold one float off then changes the result) */
static void fill_row(float *s, int64_t n, int levels, enum order ord)
{
    for (int64_t j = 0; j < n; j++) {
        double u = uniform();
        if (levels < 0)
            s[j] = 0.5f + (float)ldexp(floor(u * -levels), -24);
        else
            s[j] = levels ? (float)(floor(u * levels) / levels) : (float)(u * 2.0 - 1.0);
    }
    if (ord == ORD_ASC || ord == ORD_DESC) {
        qsort(s, (size_t)n, sizeof *s, cmp_asc);
        if (ord == ORD_DESC)
            for (int64_t j = 0; j < n / 2; j++) {
                float t = s[j];
                s[j] = s[n - 1 - j];
                s[n - 1 - j] = t;
            }
    } else if (ord == ORD_CONST) {
        for (int64_t j = 0; j < n; j++)
            s[j] = 0.25f;
    } else if (ord == ORD_SAW) {
        for (int64_t j = 0; j < n; j++)
            s[j] = (float)(j % 97) + (levels ? 0.0f : (float)uniform());
    }
}

static int check_row(const float *s, int64_t n, int64_t k, int64_t chunk, float floor, const char *what)
{
    float *rs = malloc(sizeof(float) * (size_t)(2 * k));
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)(2 * k));
    struct pair *ref = malloc(sizeof(struct pair) * (size_t)(n > 0 ? n : 1));
    struct mieb_topk_res r;
    mieb_topk_res_init_floor(&r, rs, ri, k, floor);
    for (int64_t j = 0; j < n; j += chunk) {
        int64_t len = n - j < chunk ? n - j : chunk;
        if (chunk == 1)
            mieb_topk_res_push(&r, s[j], j);
        else
            mieb_topk_res_push_row(&r, s + j, len, j);
    }
    int64_t got = mieb_topk_res_finish(&r);
    /* the reference: the entries at or above the floor, sorted, the first k of them */
    int64_t m = 0;
    for (int64_t j = 0; j < n; j++)
        if (s[j] >= floor) {
            ref[m].s = s[j];
            ref[m].i = j;
            m++;
        }
    int64_t keep = m < k ? m : k;
    int ok = 1;
    CHECK_MSG(got == keep, "%s: kept %lld, want %lld", what, (long long)got, (long long)keep);
    if (got == keep)
        ok = check_ranked_row(ref, m, keep, rs, ri, what);
    else
        ok = 0;
    free(rs);
    free(ri);
    free(ref);
    return ok;
}

int main(void)
{
    static const int64_t ks[] = {1, 10, 127, 128, 500, 1000, 1001};
    static const int levels[] = {0, 7, 300, 5000, -60};
    static const double lengths[] = {0.5, 1.0, 2.0, 2.001, 5.3, 40.0};
    int bad = 0;
    for (size_t a = 0; a < sizeof ks / sizeof ks[0] && !bad; a++) {
        int64_t k = ks[a];
        for (size_t b = 0; b < sizeof lengths / sizeof lengths[0] && !bad; b++) {
            int64_t n = (int64_t)(lengths[b] * (double)k) + (int64_t)(next_u64() % 3);
            float *s = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
            for (size_t c = 0; c < sizeof levels / sizeof levels[0] && !bad; c++)
                for (int ord = 0; ord < N_ORDERS && !bad; ord++) {
                    fill_row(s, n, levels[c], (enum order)ord);
                    int64_t chunks[] = {1, 5, 16, 1250, n > 0 ? n : 1};
                    for (size_t d = 0; d < sizeof chunks / sizeof chunks[0] && !bad; d++) {
                        char what[200];
                        snprintf(what, sizeof what, "k=%lld n=%lld levels=%d order=%d chunk=%lld", (long long)k,
                                 (long long)n, levels[c], ord, (long long)chunks[d]);
                        bad |= !check_row(s, n, k, chunks[d], -INFINITY, what);
                        /* a floor at one of the row's scores: ties at it are admitted */
                        if (n > 0) {
                            float floor = s[next_u64() % (uint64_t)n];
                            snprintf(what, sizeof what, "k=%lld n=%lld levels=%d order=%d chunk=%lld floor=%g",
                                     (long long)k, (long long)n, levels[c], ord, (long long)chunks[d], floor);
                            bad |= !check_row(s, n, k, chunks[d], floor, what);
                        }
                    }
                }
            free(s);
        }
    }
    /* many random rows at the retrieval shape: the sampled cut's candidates land on every
       side of k, so its fallback and its ties are met many times */
    float *s = malloc(sizeof(float) * 21600);
    for (int rep = 0; rep < 300 && !bad; rep++) {
        int lv = (int)(next_u64() % 5);
        int64_t n = 1500 + (int64_t)(next_u64() % 20000);
        fill_row(s, n, levels[lv], ORD_RANDOM);
        char what[120];
        snprintf(what, sizeof what, "rep %d: k=1001 n=%lld levels=%d", rep, (long long)n, levels[lv]);
        bad |= !check_row(s, n, 1001, 1250, -INFINITY, what);
    }
    free(s);
    return check_done("test_topk_reservoir");
}
