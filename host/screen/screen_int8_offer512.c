/**
 * screen_int8_offer512.c - the int8 screen's offer with AVX-512: a block's integer scores
 * turned into intervals and candidates, 16 documents per instruction.
 *
 * Per query and group of 16 documents: a = I * (sq * sd), e = fma(alpha, nd, fma(beta, rnd,
 * s_abs)), ub = a + e, lb = a - e (screen_int8_math.h's mieb_screen_i8_interval, lane by lane, so the
 * intervals are the same bits as the portable and AVX2 offers'), and the documents whose ub
 * reaches the query's tau join its list with three compressed 16-lane stores, as the bf16
 * pass's offer does (screen_pass.c).
 *
 * Why: on AMD Zen 4 the VNNI kernel computes a 12 x 16 block's integers in about the time
 * the AVX2 offer took to turn them into candidates one taker at a time (perf, 2,000 x
 * 100,000 x 512: the offer and its appends were 20 % of the run, the integer products 18 %).
 *
 * Lists: the same entries as the AVX2 offer's wherever no cut happens inside a group (tau is
 * read once per group of 16 here, once per 8 there, once per document in the portable
 * offer). An entry taken against a tau that a cut has since raised has a valid interval and
 * is dropped by the next cut or the rescoring's tau: the result cannot change.
 *
 * Compiled with AVX-512 F/DQ/BW/VL (CMakeLists.txt); only called when cpu_features reports
 * AVX-512, which every CPU with AVX512_VNNI or AMX-INT8 has.
 */
#include <assert.h>

#include "screen_base.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

const int mieb_screen_i8_offer512_built = 1;

void mieb_screen_i8_offer_avx512(struct screen_ctx *cx, const struct screen_i8_offer *o)
{
    _Static_assert(SCREEN_I8_ND == 16, "one ZMM register per group of documents");
    const __mmask16 live = o->live >= 16 ? 0xFFFF : (__mmask16)((1u << o->live) - 1u);
    const __m512 sd = _mm512_maskz_loadu_ps(live, o->sd), nd = _mm512_maskz_loadu_ps(live, o->nd);
    const __m512 rnd = _mm512_maskz_loadu_ps(live, o->rnd), sabs = _mm512_set1_ps(cx->s_abs);
    const __m512i ids = _mm512_add_epi32(_mm512_set1_epi32(o->doc0),
                                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    for (int i = 0; i < o->nq; i++) {
        int64_t q = o->q0 + i;
        __m512 I = _mm512_cvtepi32_ps(_mm512_load_si512((const void *)(o->dots + i * SCREEN_I8_ND)));
        __m512 a = _mm512_mul_ps(I, _mm512_mul_ps(_mm512_set1_ps(o->sq[q]), sd));
        __m512 e = _mm512_fmadd_ps(_mm512_set1_ps(cx->alpha[q]), nd,
                                   _mm512_fmadd_ps(_mm512_set1_ps(cx->beta[q]), rnd, sabs));
        __m512 ub = _mm512_add_ps(a, e);
        __mmask16 take = _mm512_mask_cmp_ps_mask(live, ub, _mm512_set1_ps(cx->tau[q]), _CMP_GE_OQ);
        if (!take)
            continue;
        struct screen_list *l = &cx->lists[q];
        /* compress in registers and store all 16 lanes: those past the takers land in the
           list's slack (n < cut_at <= cap before every offer). A compress straight to memory
           is microcoded on AMD Zen 4. */
        int32_t n = l->n;
        assert(n < l->cut_at && l->cut_at <= l->cap);
        _mm512_storeu_si512(l->idx + n, _mm512_maskz_compress_epi32(take, ids));
        _mm512_storeu_ps(l->lb + n, _mm512_maskz_compress_ps(take, _mm512_sub_ps(a, e)));
        _mm512_storeu_ps(l->ub + n, _mm512_maskz_compress_ps(take, ub));
        l->n = n + __builtin_popcount(take);
        if (l->n >= l->cut_at)
            mieb_screen_cut(cx, q);
    }
}

#else /* not x86-64 with AVX-512: never chosen */

const int mieb_screen_i8_offer512_built = 0;

void mieb_screen_i8_offer_avx512(struct screen_ctx *cx, const struct screen_i8_offer *o)
{
    mieb_screen_i8_offer_scalar(cx, o);
}
#endif
