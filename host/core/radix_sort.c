/* radix_sort.c - the stable LSD radix sort of radix_sort.h. */
#include "radix_sort.h"

void mieb_radix_sort_u64(uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals, int64_t n,
                         int byte_lo, int byte_hi)
{
    uint64_t *a = keys, *b = tmp_keys;
    uint32_t *va = vals, *vb = tmp_vals;
    if (n <= 1)
        return;
    for (int d = byte_lo; d < byte_hi; d++) {
        int64_t count[256] = {0};
        int sh = 8 * d;
        for (int64_t j = 0; j < n; j++)
            count[(a[j] >> sh) & 255]++;
        if (count[(a[0] >> sh) & 255] == n)
            continue; /* every key has this byte */
        int64_t pos = 0;
        for (int v = 0; v < 256; v++) {
            int64_t c = count[v];
            count[v] = pos;
            pos += c;
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t at = count[(a[j] >> sh) & 255]++;
            b[at] = a[j];
            if (va)
                vb[at] = va[j];
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
