/*
 * test_radix_sort.c - host/core/radix_sort.h against comparisons: the float keys order
 * every pair of floats as < does (subnormals, +-0, +-inf, neighbours one ulp apart); the
 * radix sort equals a stable comparison sort on random keys full of duplicates, for every
 * byte range, with and without values, for n = 0, 1, 2 and up to 5,000.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/radix_sort.h"

static unsigned long long rng = 0x6A09E667F3BCC909ull;
static uint64_t next_u64(void) { return check_rng_u64(&rng); }

static float any_float(void)
{
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, 1e-45f, -1e-45f, 1.17549435e-38f, 3.4e38f, 1.0f};
    uint64_t r = next_u64();
    if (r % 4 == 0)
        return special[(r >> 8) % (sizeof special / sizeof special[0])];
    uint32_t u = (uint32_t)(r >> 16);
    float f;
    memcpy(&f, &u, sizeof f);
    return isnan(f) ? 0.5f : f;
}

static void check_keys(void)
{
    int bad = 0;
    for (int t = 0; t < 200000; t++) {
        float a = any_float(), b = t % 3 ? any_float() : nextafterf(a, INFINITY);
        if (isnan(b))
            continue;
        uint32_t ka = mieb_float_key(a), kb = mieb_float_key(b);
        int want = (a > b) - (a < b), got = (ka > kb) - (ka < kb);
        if (want != got || !(mieb_key_float(ka) == a)) {
            if (bad++ < 3)
                fprintf(stderr, "key: %a vs %a: order %d, keys say %d\n", a, b, want, got);
        }
    }
    CHECK_MSG(bad == 0, "%d float pairs ordered wrongly by their keys", bad);
}

struct kv {
    uint64_t k;
    uint32_t v;
};
static int g_lo, g_hi;
static uint64_t masked(uint64_t k)
{
    uint64_t m = g_hi >= 8 ? ~0ull : ((1ull << (8 * g_hi)) - 1);
    return (k & m) >> (8 * g_lo) << (8 * g_lo);
}
static int cmp_kv(const void *x, const void *y)
{
    const struct kv *a = x, *b = y;
    uint64_t ka = masked(a->k), kb = masked(b->k);
    if (ka != kb)
        return ka < kb ? -1 : 1;
    return (a->v > b->v) - (a->v < b->v); /* the original position: a stable sort */
}

static void check_sort(void)
{
    int bad = 0;
    for (int rep = 0; rep < 300; rep++) {
        int64_t n = rep < 3 ? rep : (int64_t)(next_u64() % 5000);
        g_lo = (int)(next_u64() % 8);
        g_hi = g_lo + 1 + (int)(next_u64() % (8 - g_lo));
        uint64_t *k = malloc(sizeof *k * (size_t)(2 * n + 1));
        uint32_t *v = malloc(sizeof *v * (size_t)(2 * n + 1));
        struct kv *ref = malloc(sizeof *ref * (size_t)(n + 1));
        int distinct = 1 + (int)(next_u64() % 50);
        for (int64_t j = 0; j < n; j++) {
            k[j] = rep % 2 ? next_u64() % (uint64_t)distinct * 0x0101010101010101ull : next_u64();
            v[j] = (uint32_t)j;
            ref[j].k = k[j];
            ref[j].v = (uint32_t)j;
        }
        qsort(ref, (size_t)n, sizeof *ref, cmp_kv);
        int with_vals = rep % 3 != 0;
        mieb_radix_sort_u64(k, with_vals ? v : NULL, k + n, with_vals ? v + n : NULL, n, g_lo, g_hi);
        for (int64_t j = 0; j < n; j++)
            if (masked(k[j]) != masked(ref[j].k) || (with_vals && v[j] != ref[j].v)) {
                if (bad++ < 3)
                    fprintf(stderr, "sort n %lld bytes [%d, %d): position %lld differs\n", (long long)n, g_lo, g_hi,
                            (long long)j);
                break;
            }
        free(k);
        free(v);
        free(ref);
    }
    CHECK_MSG(bad == 0, "%d radix sorts differ from the stable comparison sort", bad);
}

int main(void)
{
    check_keys();
    check_sort();
    return check_done("test_radix_sort");
}
