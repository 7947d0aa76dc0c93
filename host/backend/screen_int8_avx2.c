/**
 * screen_int8_avx2.c - the int8 screen's kernel with AVX2 (screen_int8.c has the pass and
 * the portable kernel that defines the same integers and the same lists).
 *
 * Dots: 6 queries x 16 documents in 12 accumulators of 8 int32 lanes. Per pair p of K, two
 * loads bring pair p of the 16 documents (the layout of screen_internal.h), each query's
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
#include <string.h>

#include "screen_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

const int mieb_screen_i8_avx2_built = 1;

void mieb_screen_i8_dots_avx2(const int16_t *qa, int64_t KP, const int16_t *dv, int32_t *out)
{
    __m256i c0[SCREEN_I8_MQ], c1[SCREEN_I8_MQ];
    for (int i = 0; i < SCREEN_I8_MQ; i++)
        c0[i] = c1[i] = _mm256_setzero_si256();
    int64_t half = KP / 2;
    for (int64_t p = 0; p < half; p++) {
        __m256i d0 = _mm256_load_si256((const __m256i *)(dv + p * 32));
        __m256i d1 = _mm256_load_si256((const __m256i *)(dv + p * 32 + 16));
        for (int i = 0; i < SCREEN_I8_MQ; i++) {
            int32_t w; /* query i's pair p, broadcast */
            memcpy(&w, qa + i * KP + 2 * p, sizeof w);
            __m256i qv = _mm256_set1_epi32(w);
            c0[i] = _mm256_add_epi32(c0[i], _mm256_madd_epi16(d0, qv));
            c1[i] = _mm256_add_epi32(c1[i], _mm256_madd_epi16(d1, qv));
        }
    }
    for (int i = 0; i < SCREEN_I8_MQ; i++) {
        _mm256_store_si256((__m256i *)(out + i * SCREEN_I8_ND), c0[i]);
        _mm256_store_si256((__m256i *)(out + i * SCREEN_I8_ND + 8), c1[i]);
    }
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
#endif
