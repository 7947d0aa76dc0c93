/**
 * topk_key.h - the 64-bit ranking key shared by the CUDA top-k kernel and its host-side
 * decoder: one unsigned compare orders (score, index) pairs by the backend tie rule,
 * score descending, then index ascending (backend.h).
 *
 *   key = ord(score) << 32 | ~index        (larger key = ranks earlier)
 *
 * ord() maps a float to a uint32 that sorts like the float: -0 and +0 both map to
 * ord(+0) because they compare equal (and so tie on index, as in the CPU reference);
 * NaN maps to 0, below -inf. Indices are block-local and below 2^31, so ~index >= 2^31
 * and every real key is non-zero: key 0 is the "empty slot" sentinel.
 *
 * Usable from C (host) and CUDA (host and device) alike.
 */
#ifndef MIEB_KERNELS_TOPK_KEY_H
#define MIEB_KERNELS_TOPK_KEY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define MIEB_HD __host__ __device__ __forceinline__
#else
#define MIEB_HD inline
#endif

/** Largest block-local index a key can hold (indices are 0 .. this). */
#define MIEB_TOPK_MAX_INDEX INT32_MAX

static MIEB_HD uint32_t mieb_topk_float_bits(float s)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(s);
#else
    uint32_t b;
    memcpy(&b, &s, sizeof b);
    return b;
#endif
}

static MIEB_HD float mieb_topk_bits_float(uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(b);
#else
    float s;
    memcpy(&s, &b, sizeof s);
    return s;
#endif
}

/** Order-preserving map of a float onto uint32 (see above). */
static MIEB_HD uint32_t mieb_topk_ord(float s)
{
    if (s != s)
        return 0u;
    if (s == 0.0f)
        return 0x80000000u; /* -0 ties with +0 */
    uint32_t b = mieb_topk_float_bits(s);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

static MIEB_HD uint64_t mieb_topk_key(float score, uint32_t index)
{
    return ((uint64_t)mieb_topk_ord(score) << 32) | (uint64_t)(uint32_t)~index;
}

/**
 * The threshold key of a score floor: the keys of scores >= floor (any index, both zeros
 * for a zero floor) are above it, those of lower scores and of NaN at or below it. 0, no
 * bound, for a -inf or NaN floor, which drops nothing.
 */
static MIEB_HD uint64_t mieb_topk_floor_thr(float floor)
{
    if (!(floor > -INFINITY))
        return 0;
    /* one below the smallest key of score `floor`: that of the largest index */
    return (((uint64_t)mieb_topk_ord(floor) << 32) | (uint64_t)(uint32_t)~(uint32_t)MIEB_TOPK_MAX_INDEX) - 1u;
}

/** The score a key was made from (a NaN for NaN; +0 for either zero). */
static MIEB_HD float mieb_topk_key_score(uint64_t key)
{
    uint32_t o = (uint32_t)(key >> 32);
    return mieb_topk_bits_float((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
}

/** The block-local index a key was made from. */
static MIEB_HD int64_t mieb_topk_key_index(uint64_t key)
{
    return (int64_t)(uint32_t)~(uint32_t)key;
}

#endif
