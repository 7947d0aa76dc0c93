/**
 * screen_int8_avxvnni.c - the int8 screen's kernel with AVX-VNNI, VPDPBUSD on YMM
 * registers without AVX-512 (Intel Alder Lake and later client CPUs, AMD Zen 5).
 *
 * 6 queries x 16 documents in 12 YMM accumulators, as the AVX2 kernel's tile
 * (screen_int8_avx2.c), on the quad layout: per quad p of K, two loads bring quad p of the
 * 16 documents (bytes + 128), each query's quad is broadcast, and VPDPBUSD adds four byte
 * products per lane: 12 instructions of 32 products where AVX2 needs 24 of 16. The
 * correction of the unsigned operand is screen_int8_vnni512.c's (screen_base.h).
 *
 * Compiled with -mavx2 -mavxvnni (CMakeLists.txt), only called when cpu_features reports
 * AVX-VNNI; MIEB_SCREEN_I8_EMULATE compiles it against models of the instructions (tests).
 */
#include <stdint.h>
#include <string.h>

#include "screen_base.h"

#if defined(MIEB_SCREEN_I8_EMULATE)
#include MIEB_SCREEN_I8_EMULATE
#define I8_KERNEL(name) name##_emu
#define I8_AVXVNNI_HERE 1
#elif defined(__x86_64__) && defined(__AVXVNNI__)
#include <immintrin.h>
#define I8_KERNEL(name) name
#define I8_AVXVNNI_HERE 1
const int mieb_screen_i8_avxvnni_built = 1;
#endif

#if defined(I8_AVXVNNI_HERE)

/* Query i's quad p, broadcast to 8 lanes. */
static inline __m256i quad_of(const int8_t *row, int64_t p)
{
    int32_t w;
    memcpy(&w, row + 4 * p, sizeof w);
    return _mm256_set1_epi32(w);
}

#define AV_STEP(i)                                                                                             \
    do {                                                                                                       \
        __m256i qv = quad_of(qa + (i) * KQ, p);                                                                \
        a##i##0 = _mm256_dpbusd_avx_epi32(a##i##0, d0, qv);                                                    \
        a##i##1 = _mm256_dpbusd_avx_epi32(a##i##1, d1, qv);                                                    \
    } while (0)
#define AV_STORE(i)                                                                                            \
    do {                                                                                                       \
        __m256i c = _mm256_set1_epi32((int32_t)(128u * (uint32_t)qsum[i]));                                    \
        _mm256_storeu_si256((__m256i *)(out + (i) * SCREEN_I8_ND), _mm256_sub_epi32(a##i##0, c));              \
        _mm256_storeu_si256((__m256i *)(out + (i) * SCREEN_I8_ND + 8), _mm256_sub_epi32(a##i##1, c));          \
    } while (0)

void I8_KERNEL(mieb_screen_i8_dots_avxvnni)(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                            int32_t *out)
{
    _Static_assert(SCREEN_I8_AVXVNNI_MQ == 6 && SCREEN_I8_ND == 16, "the kernel's tile is 6 x 16");
    __m256i z = _mm256_setzero_si256();
    __m256i a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z, a40 = z, a41 = z, a50 = z,
            a51 = z;
    for (int64_t p = 0; p < KQ / 4; p++) {
        __m256i d0 = _mm256_load_si256((const __m256i *)(dv + p * 64));
        __m256i d1 = _mm256_load_si256((const __m256i *)(dv + p * 64 + 32));
        AV_STEP(0);
        AV_STEP(1);
        AV_STEP(2);
        AV_STEP(3);
        AV_STEP(4);
        AV_STEP(5);
    }
    AV_STORE(0);
    AV_STORE(1);
    AV_STORE(2);
    AV_STORE(3);
    AV_STORE(4);
    AV_STORE(5);
}

#else /* a compiler or target without AVX-VNNI: the kernel is never chosen */

const int mieb_screen_i8_avxvnni_built = 0;

void mieb_screen_i8_dots_avxvnni(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum, int32_t *out)
{
    mieb_screen_i8_quad_dots_scalar(qa, KQ, dv, qsum, out, SCREEN_I8_AVXVNNI_MQ, 1, 1);
}
#endif
