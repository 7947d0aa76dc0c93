/**
 * screen_int8_avx2.c - the int8 screen's kernel with AVX2 (screen_int8.c has the pass and
 * the portable kernel that defines the same integers and the same lists).
 *
 * Dots: 6 queries x 16 documents in 12 accumulators of 8 int32 lanes. Per pair p of K, two
 * loads bring pair p of the 16 documents (the layout of screen_base.h), each query's
 * pair is broadcast (32 bits), and VPMADDWD multiplies the int16 pairs and adds each pair's
 * two products into an int32 lane: exact (|pair| <= 2 * 127^2), as is every VPADDD after it
 * (|sum| <= K * 127^2 < 2^31). 24 multiply-adds of 16 products per 8 loads.
 *
 * Offer: per query and 8 documents, the approximate score, its half-width and the
 * comparison with tau in registers, with the portable offer's operations in its order
 * (so the lists are the same bits); the rare takers are appended one by one.
 *
 * Compiled with -mavx2 -mfma (CMakeLists.txt); only called when cpu_features says so.
 */
#include <math.h>
#include <string.h>

#include "../math/screen_int8_math.h"
#include "screen_base.h"

#if defined(__x86_64__)
#include <immintrin.h>

const int mieb_screen_i8_avx2_built = 1;

/* Lanes [k, k + 8) of a row, zeros past K. */
static inline __m256 load8(const float *x, int64_t k, int64_t K)
{
    if (k + 8 <= K)
        return _mm256_loadu_ps(x + k);
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_maskload_ps(x + k, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(K - k)), lane));
}

/* The 8 lanes' fixed tree: (l + 4), (l + 2), (l + 1), as the portable version adds them. */
static inline float tree8(__m256 v)
{
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

/* The portable quantiser's operations on 8 elements at a time (screen_int8.c): the same
   integers and the same sums, so the same bounds. */
int mieb_screen_i8_quantise_avx2(const float *x, int64_t K, int64_t KP, int16_t *out, float *s_out, float *nrm,
                                 float *rnrm, float *hnrm)
{
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 mxv = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; k += 8) /* max(a, mx): a NaN leaves mx, as the portable loop does */
        mxv = _mm256_max_ps(_mm256_and_ps(load8(x, k, K), absm), mxv);
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mxv), _mm256_extractf128_ps(mxv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    float mx = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    float s = mx / 127.0f;
    if (!(s > 0.0f) || !isfinite(s))
        s = 0.0f;
    const __m256 sv = _mm256_set1_ps(s), lim = _mm256_set1_ps(127.0f), nlim = _mm256_set1_ps(-127.0f);
    __m256 sacc = _mm256_setzero_ps(), racc = _mm256_setzero_ps();
    __m256i qacc = _mm256_setzero_si256(); /* per lane <= 16129 K / 8 < 2^31 */
    for (int64_t k = 0; k < KP; k += 8) {
        __m256 xv = load8(x, k, K), qv = _mm256_setzero_ps();
        if (s > 0.0f) {
            qv = _mm256_round_ps(_mm256_div_ps(xv, sv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            qv = _mm256_max_ps(_mm256_min_ps(qv, lim), nlim);
        }
        __m256 r = _mm256_fnmadd_ps(sv, qv, xv);
        sacc = _mm256_fmadd_ps(xv, xv, sacc);
        racc = _mm256_fmadd_ps(r, r, racc);
        __m256i qi = _mm256_cvtps_epi32(qv);
        qacc = _mm256_add_epi32(qacc, _mm256_mullo_epi32(qi, qi));
        __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(qi), _mm256_extracti128_si256(qi, 1));
        if (k + 8 <= KP)
            _mm_storeu_si128((__m128i *)(out + k), q16);
        else /* KP is a multiple of 4: the last 4 */
            _mm_storel_epi64((__m128i *)(out + k), q16);
    }
    int32_t ql[8];
    _mm256_storeu_si256((__m256i *)ql, qacc);
    int64_t qq = 0;
    for (int l = 0; l < 8; l++)
        qq += ql[l];
    *s_out = s;
    return mieb_screen_i8_row_bounds(s, tree8(sacc), tree8(racc), qq, K, nrm, rnrm, hnrm);
}

/* The quad layout's packing of one document (screen_int8_quads.c's portable version gives the
   same bytes): 32 integers at a time narrowed to bytes (they lie in [-127, 127], so the
   saturating pack is exact), + 128 as a flip of the top bit where the kernel reads them
   unsigned, and each quad stored to its row of the group (64 bytes apart). On Zen 4 the
   portable byte loop cost a third of the VNNI kernel's time. */
void mieb_screen_i8_quad_pack_doc_avx2(const int16_t *q16, int64_t KP, int64_t KQ, int doc_u8, int col, uint8_t *group)
{
    const uint8_t off = doc_u8 ? 128 : 0;
    const __m256i flip = _mm256_set1_epi8((char)off);
    uint8_t *dst = group + 4 * col;
    int64_t k = 0;
    if (q16)
        for (; k + 32 <= KP; k += 32) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(q16 + k));
            __m256i b = _mm256_loadu_si256((const __m256i *)(q16 + k + 16));
            __m256i v = _mm256_xor_si256(_mm256_permute4x64_epi64(_mm256_packs_epi16(a, b), 0xD8), flip);
            uint32_t w[8];
            _mm256_storeu_si256((__m256i *)w, v);
            for (int i = 0; i < 8; i++)
                memcpy(dst + (k / 4 + i) * (4 * SCREEN_I8_ND), &w[i], sizeof w[i]);
        }
    for (; k < KQ; k++) {
        int v = q16 && k < KP ? q16[k] : 0;
        dst[(k / 4) * (4 * SCREEN_I8_ND) + (k % 4)] = (uint8_t)((uint8_t)v + off);
    }
}

/* Query i's pair p, broadcast to 8 lanes (32 bits: the two int16 of the pair). */
static inline __m256i pair_of(const int16_t *row, int64_t p)
{
    int32_t w;
    memcpy(&w, row + 2 * p, sizeof w);
    return _mm256_set1_epi32(w);
}

#define I8_STEP(i)                                                                                             \
    do {                                                                                                       \
        __m256i qv = pair_of(qa + (i) * KP, p);                                                                \
        a##i##0 = _mm256_add_epi32(a##i##0, _mm256_madd_epi16(d0, qv));                                        \
        a##i##1 = _mm256_add_epi32(a##i##1, _mm256_madd_epi16(d1, qv));                                        \
    } while (0)
#define I8_STORE(i)                                                                                            \
    do {                                                                                                       \
        _mm256_store_si256((__m256i *)(out + (i) * SCREEN_I8_ND), a##i##0);                                    \
        _mm256_store_si256((__m256i *)(out + (i) * SCREEN_I8_ND + 8), a##i##1);                                \
    } while (0)

/* The 12 accumulators are named, not an array: gcc keeps an array of them in memory. */
void mieb_screen_i8_dots_avx2(const int16_t *qa, int64_t KP, const int16_t *dv, int32_t *out)
{
    _Static_assert(SCREEN_I8_MQ == 6 && SCREEN_I8_ND == 16, "the kernel's tile is 6 x 16");
    __m256i z = _mm256_setzero_si256();
    __m256i a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z, a40 = z, a41 = z, a50 = z,
            a51 = z;
    for (int64_t p = 0; p < KP / 2; p++) {
        __m256i d0 = _mm256_load_si256((const __m256i *)(dv + p * 32));
        __m256i d1 = _mm256_load_si256((const __m256i *)(dv + p * 32 + 16));
        I8_STEP(0);
        I8_STEP(1);
        I8_STEP(2);
        I8_STEP(3);
        I8_STEP(4);
        I8_STEP(5);
    }
    I8_STORE(0);
    I8_STORE(1);
    I8_STORE(2);
    I8_STORE(3);
    I8_STORE(4);
    I8_STORE(5);
}

void mieb_screen_i8_offer_avx2(struct screen_ctx *cx, const struct screen_i8_offer *o)
{
    const __m256 sabs = _mm256_set1_ps(cx->s_abs);
    for (int i = 0; i < o->nq; i++) {
        int64_t q = o->q0 + i;
        __m256 al = _mm256_set1_ps(cx->alpha[q]), be = _mm256_set1_ps(cx->beta[q]), sq = _mm256_set1_ps(o->sq[q]);
        for (int h = 0; h < SCREEN_I8_ND && h < o->live; h += 8) {
            __m256 sd = _mm256_loadu_ps(o->sd + h), nd = _mm256_loadu_ps(o->nd + h);
            __m256 rnd = _mm256_loadu_ps(o->rnd + h);
            __m256 I = _mm256_cvtepi32_ps(_mm256_load_si256((const __m256i *)(o->dots + i * SCREEN_I8_ND + h)));
            __m256 a = _mm256_mul_ps(I, _mm256_mul_ps(sq, sd));
            __m256 e = _mm256_fmadd_ps(al, nd, _mm256_fmadd_ps(be, rnd, sabs));
            __m256 ub = _mm256_add_ps(a, e);
            /* tau is read again per half: an append may have cut the list */
            unsigned take =
                (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(ub, _mm256_set1_ps(cx->tau[q]), _CMP_GE_OQ));
            int left = o->live - h;
            if (left < 8)
                take &= (1u << left) - 1u;
            if (!take)
                continue;
            float av[8], ev[8], uv[8];
            _mm256_storeu_ps(av, a);
            _mm256_storeu_ps(ev, e);
            _mm256_storeu_ps(uv, ub);
            while (take) {
                int j = __builtin_ctz(take);
                take &= take - 1;
                mieb_screen_append(cx, q, o->doc0 + h + j, av[j] - ev[j], uv[j]);
            }
        }
    }
}

#else /* not x86-64: the portable kernel only */

const int mieb_screen_i8_avx2_built = 0;

void mieb_screen_i8_dots_avx2(const int16_t *qa, int64_t KP, const int16_t *dv, int32_t *out)
{
    mieb_screen_i8_dots_scalar(qa, KP, dv, out);
}
void mieb_screen_i8_offer_avx2(struct screen_ctx *cx, const struct screen_i8_offer *o)
{
    mieb_screen_i8_offer_scalar(cx, o);
}
void mieb_screen_i8_quad_pack_doc_avx2(const int16_t *q16, int64_t KP, int64_t KQ, int doc_u8, int col, uint8_t *group)
{
    mieb_screen_i8_quad_pack_doc(q16, KP, KQ, doc_u8, col, group);
}
#endif
