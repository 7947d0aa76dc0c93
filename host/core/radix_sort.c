/* radix_sort.c - the stable LSD radix sort of radix_sort.h. */
#include "radix_sort.h"

void mieb_radix_sort_u64(uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals, int64_t n,
                         int byte_lo, int byte_hi)
{
    uint64_t *a = keys, *b = tmp_keys;
    uint32_t *va = vals, *vb = tmp_vals;
    if (n <= 1 || byte_lo >= byte_hi)
        return;
    /* All eight byte histograms in one read of the keys, unrolled: a counting pass per byte
       (the skipped bytes included) was a third of the sort of a thousand keys, and the
       eight independent counters hide each other's store-to-load latency. Measured 1.5x
       faster for 1,001 and 20,000 keys sorted on all bytes, 1.1-1.2x on bytes 4..8. */
    int64_t count[8][256];
    memset(count, 0, sizeof count);
    for (int64_t j = 0; j < n; j++) {
        uint64_t x = a[j];
        count[0][x & 255]++;
        count[1][(x >> 8) & 255]++;
        count[2][(x >> 16) & 255]++;
        count[3][(x >> 24) & 255]++;
        count[4][(x >> 32) & 255]++;
        count[5][(x >> 40) & 255]++;
        count[6][(x >> 48) & 255]++;
        count[7][x >> 56]++;
    }
    for (int d = byte_lo; d < byte_hi; d++) {
        int64_t *c = count[d];
        int sh = 8 * d;
        if (c[(a[0] >> sh) & 255] == n)
            continue; /* every key has this byte */
        int64_t pos = 0;
        for (int v = 0; v < 256; v++) {
            int64_t m = c[v];
            c[v] = pos;
            pos += m;
        }
        if (va) {
            for (int64_t j = 0; j < n; j++) {
                int64_t at = c[(a[j] >> sh) & 255]++;
                b[at] = a[j];
                vb[at] = va[j];
            }
        } else {
            for (int64_t j = 0; j < n; j++) {
                uint64_t x = a[j];
                b[c[(x >> sh) & 255]++] = x;
            }
        }
        uint64_t *t = a;
        a = b;
        b = t;
        uint32_t *tv = va;
        va = vb;
        vb = tv;
    }
    if (a != keys) { /* an odd number of moves: the result is in the scratch */
        memcpy(keys, a, sizeof *keys * (size_t)n);
        if (vals)
            memcpy(vals, va, sizeof *vals * (size_t)n);
    }
}
