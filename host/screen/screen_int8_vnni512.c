/**
 * screen_int8_vnni512.c - the int8 screen's kernel with AVX512_VNNI (screen_int8.c has the
 * pass; screen_int8_quads.c the layout and the portable kernel that defines its integers).
 *
 * 12 queries x 16 documents in 12 ZMM accumulators. Per quad p of K, one load brings quad p
 * of the 16 documents (bytes + 128, the unsigned operand) and each query's quad is broadcast
 * (32 bits, the signed operand, which EVEX can broadcast from memory). VPDPBUSD adds each
 * lane's four byte products to it: 64 products per instruction, four times VPMADDWD's 16 on
 * YMM. At the end each accumulator holds I + 128 qsum modulo 2^32 (the sums wrap, never
 * saturate), and subtracting 128 qsum gives I exactly (screen_base.h).
 *
 * Compiled with -mavx512f -mavx512bw -mavx512vnni (CMakeLists.txt); only called when
 * cpu_features reports AVX512_VNNI. MIEB_SCREEN_I8_EMULATE compiles the same code against
 * portable models of the instructions instead (tests/unit/i8_emu/, the test suite's only).
 */
#include <stdint.h>
#include <string.h>

#include "screen_base.h"

#if defined(MIEB_SCREEN_I8_EMULATE)
#include MIEB_SCREEN_I8_EMULATE
#define I8_KERNEL(name) name##_emu
#define I8_VNNI512_HERE 1
#elif defined(__x86_64__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#define I8_KERNEL(name) name
#define I8_VNNI512_HERE 1
const int mieb_screen_i8_vnni512_built = 1;
#endif

#if defined(I8_VNNI512_HERE)

/* Query i's quad p, broadcast to 16 lanes. */
static inline __m512i quad_of(const int8_t *row, int64_t p)
{
    int32_t w;
    memcpy(&w, row + 4 * p, sizeof w);
    return _mm512_set1_epi32(w);
}

#define V5_STEP(i) a##i = _mm512_dpbusd_epi32(a##i, d, quad_of(qa + (i) * KQ, p))
#define V5_STORE(i)                                                                                            \
    _mm512_storeu_si512((void *)(out + (i) * SCREEN_I8_ND),                                                    \
                        _mm512_sub_epi32(a##i, _mm512_set1_epi32((int32_t)(128u * (uint32_t)qsum[i]))))

/* The accumulators are named, not an array: gcc keeps an array of them in memory. */
void I8_KERNEL(mieb_screen_i8_dots_vnni512)(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                            int32_t *out)
{
    _Static_assert(SCREEN_I8_VNNI512_MQ == 12 && SCREEN_I8_ND == 16, "the kernel's tile is 12 x 16");
    __m512i z = _mm512_setzero_si512();
    __m512i a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z, a8 = z, a9 = z, a10 = z, a11 = z;
    for (int64_t p = 0; p < KQ / 4; p++) {
        __m512i d = _mm512_load_si512((const void *)(dv + p * 64));
        V5_STEP(0);
        V5_STEP(1);
        V5_STEP(2);
        V5_STEP(3);
        V5_STEP(4);
        V5_STEP(5);
        V5_STEP(6);
        V5_STEP(7);
        V5_STEP(8);
        V5_STEP(9);
        V5_STEP(10);
        V5_STEP(11);
    }
    V5_STORE(0);
    V5_STORE(1);
    V5_STORE(2);
    V5_STORE(3);
    V5_STORE(4);
    V5_STORE(5);
    V5_STORE(6);
    V5_STORE(7);
    V5_STORE(8);
    V5_STORE(9);
    V5_STORE(10);
    V5_STORE(11);
}

#else /* a compiler or target without AVX512_VNNI: the kernel is never chosen */

const int mieb_screen_i8_vnni512_built = 0;

void mieb_screen_i8_dots_vnni512(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum, int32_t *out)
{
    mieb_screen_i8_quad_dots_scalar(qa, KQ, dv, qsum, out, SCREEN_I8_VNNI512_MQ, 1, 1);
}
#endif
