/**
 * half.h - exact conversions between float32 and the two 16-bit float encodings of
 * FORMAT.md §2: IEEE 754 binary16 (numpy float16) and bfloat16 (the top half of a float32).
 *
 * Done with integer bit manipulation only, so results are identical on every machine and
 * compiler (no dependence on F16C, FMA contraction or the FPU rounding mode).
 * Widening (16 -> 32) is exact, including subnormals, infinities and NaN payloads.
 * Narrowing (32 -> 16) rounds to nearest, ties to even, as numpy's astype does.
 */
#ifndef MIEB_CORE_HALF_H
#define MIEB_CORE_HALF_H

#include <stdint.h>
#include <string.h>

#include "host_device.h" /* MIEB_HOSTDEV: the CUDA kernels round to float16/bfloat16 with these too */

MIEB_HOSTDEV static inline float mieb_bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

MIEB_HOSTDEV static inline uint32_t mieb_float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/** binary16 -> float32, exact. */
MIEB_HOSTDEV static inline float mieb_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign; /* +-0 */
        } else {
            /* subnormal: man * 2^-24; shift until the implicit bit (0x400) appears */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13); /* inf, or NaN with its payload */
    } else {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    }
    return mieb_bits_to_float(bits);
}

/** float32 -> binary16, round to nearest even; overflow gives +-inf, NaN stays NaN. */
MIEB_HOSTDEV static inline uint16_t mieb_float_to_half(float f)
{
    uint32_t x = mieb_float_to_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) /* inf / NaN (keep NaN quiet and non-zero) */
        return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) : 0x7c00u));
    if (a >= 0x477ff000u) /* >= 65520 rounds to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) { /* below 2^-14: subnormal half or zero */
        uint32_t e = a >> 23;
        if (e < 102)
            return sign; /* < 2^-25 rounds to zero */
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t h = (a >> 13) - (112u << 10), rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* may carry into the exponent, which is the right result */
    return (uint16_t)(sign | h);
}

/** bfloat16 -> float32, exact. */
MIEB_HOSTDEV static inline float mieb_bf16_to_float(uint16_t b) { return mieb_bits_to_float((uint32_t)b << 16); }

/** float32 -> bfloat16, round to nearest even; NaN stays NaN. */
MIEB_HOSTDEV static inline uint16_t mieb_float_to_bf16(float f)
{
    uint32_t x = mieb_float_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#endif
