/**
 * radix_sort.h - ordering floats without comparisons: order-preserving integer keys and a
 * stable LSD radix sort of 64-bit keys. Used where a sort of a few thousand scores per query
 * dominated (the reservoir's final order, trec_eval's ranking, the screen's k-th bound).
 */
#ifndef MIEB_CORE_RADIX_SORT_H
#define MIEB_CORE_RADIX_SORT_H

#include <stdint.h>
#include <string.h>

/**
 * An unsigned key in the order of the float (finite or infinite, not NaN): a < b exactly
 * when key(a) < key(b). -0 and +0 get the same key, as they compare equal.
 */
static inline uint32_t mieb_float_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (u == 0x80000000u)
        u = 0;
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/** The float of a key (the inverse of mieb_float_key; -0 comes back as +0). */
static inline float mieb_key_float(uint32_t key)
{
    uint32_t u = key & 0x80000000u ? key & 0x7FFFFFFFu : ~key;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/**
 * The 64-bit key that ranks best first when sorted ascending: score descending (by
 * mieb_float_key), then the 32-bit index ascending.
 */
static inline uint64_t mieb_best_first_key(float score, uint32_t index)
{
    return ((uint64_t)~mieb_float_key(score) << 32) | index;
}

/**
 * Sort keys[0..n) ascending, stably, by their bytes byte_lo .. byte_hi - 1 (0 = least
 * significant), carrying vals[j] (NULL: no values) with keys[j]. A byte that is the same in
 * every key costs one counting pass and no move. tmp_keys and tmp_vals (when vals is not
 * NULL) are scratch of n entries; the result is left in keys and vals.
 */
void mieb_radix_sort_u64(uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals, int64_t n,
                         int byte_lo, int byte_hi);

#endif
