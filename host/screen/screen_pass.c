/**
 * screen_pass.c - the screen's approximate scores (screen.h): bf16 copies of the rows,
 * 32 x 32 blocks of approximate scores from one of two kernels, and the bounds that turn
 * each block into candidates.
 *
 * Queries are packed once per job as bf16 rows; documents, 256 at a time, in the VNNI
 * layout (pairs of consecutive bf16 of 16 documents per 64-byte row), which is the B
 * operand of AMX's TDPBF16PS and, row by row, the vector operand of AVX512_BF16's
 * VDPBF16PS. A block of 32 queries x 32 documents then comes from
 *  - the AMX matrix unit (screen_amx.c): four accumulator tiles, about 1 TFLOP/s-equivalent
 *    per core, where the CPU has AMX-BF16 (Intel Sapphire Rapids and later); or
 *  - VDPBF16PS (this file): each instruction adds 16 pairs of bf16 products into 16 fp32
 *    lanes, twice the fp32 FMA rate, where the CPU has AVX512_BF16 but no AMX (AMD Zen 4
 *    and later, Intel Cooper Lake). A query's bf16 pair is broadcast against one VNNI row of
 *    16 documents; 8 queries x 32 documents are 16 accumulators.
 * Both add exact products of the same bf16 values in fp32, in some order, flushing
 * subnormal results: the bound of screen.h (g and s_abs) covers any such order, so the
 * candidates may differ between the kernels but the result cannot.
 *
 * Each block of approximate scores a then meets the bounds with AVX-512: for a query and
 * 16 documents, e = alpha n_d + beta rn_d + s_abs, and the documents whose a + e reaches
 * the query's tau join its list with [a - e, a + e], compressed in registers, one store per field.
 *
 * Compiled with AVX-512 and AVX512_BF16 (CMakeLists.txt); only called when
 * mieb_screen_available() says the CPU and OS run it.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/stop.h"
#include "screen_base.h"

#if defined(__x86_64__) && defined(__AVX512BF16__)
#include <immintrin.h>

#define DBLK 256 /* document rows converted at a time (L2-resident as bf16) */

struct screen_buf {
    uint16_t *qa;  /* [m_pad][KP] the queries' bf16 rows */
    size_t qa_cap;
    uint16_t *dv;  /* [DBLK / 16][KP / 2][16][2] the documents in the VNNI layout */
    size_t dv_cap;
    uint16_t *dtmp; /* [16][KP] 16 documents' bf16 rows before they are transposed */
    size_t dtmp_cap;
    float *cb;     /* [32][32] a block of approximate scores, 64-byte aligned */
    float nd[DBLK], rnd[DBLK];
};

void mieb_screen_buf_free(struct screen_buf *b)
{
    if (!b)
        return;
    free(b->qa);
    free(b->dv);
    free(b->dtmp);
    free(b->cb);
    free(b);
}

static __m512 bf16_to_f32(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

/* One row to bf16 (round to nearest even, subnormals to zero: what both kernels compute
   with), zero-padded to KP, with the fp32 sums of squares of the row and of its rounding error. */
static void row_to_bf16(const float *x, int64_t K, int64_t KP, uint16_t *out, float *ss, float *rs)
{
    __m512 s = _mm512_setzero_ps(), r = _mm512_setzero_ps();
    for (int64_t k = 0; k < KP; k += 32) {
        int64_t left = K - k;
        __mmask16 m0 = left >= 16 ? 0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1u) : 0;
        __mmask16 m1 = left >= 32 ? 0xFFFF : left > 16 ? (__mmask16)((1u << (left - 16)) - 1u) : 0;
        __m512 a = _mm512_maskz_loadu_ps(m0, x + k), b = _mm512_maskz_loadu_ps(m1, x + k + 16);
        __m512i v = (__m512i)_mm512_cvtne2ps_pbh(b, a); /* words 0-15 from a, 16-31 from b */
        _mm512_storeu_si512(out + k, v);
        __m512 ea = _mm512_sub_ps(a, bf16_to_f32(_mm512_castsi512_si256(v)));
        __m512 eb = _mm512_sub_ps(b, bf16_to_f32(_mm512_extracti64x4_epi64(v, 1)));
        s = _mm512_fmadd_ps(a, a, _mm512_fmadd_ps(b, b, s));
        r = _mm512_fmadd_ps(ea, ea, _mm512_fmadd_ps(eb, eb, r));
    }
    *ss = _mm512_reduce_add_ps(s);
    *rs = _mm512_reduce_add_ps(r);
}

/* Queries into bf16 rows (padding rows zero); their norms into the bound coefficients.
   0 if a norm is out of range. */
static int pack_queries(struct screen_ctx *cx, struct screen_buf *b)
{
    int64_t KP = cx->KP;
    for (int64_t q = 0; q < cx->m; q++) {
        float ss, rs, nrm, rnrm;
        row_to_bf16(cx->Q + q * cx->K, cx->K, KP, b->qa + q * KP, &ss, &rs);
        if (!mieb_screen_norms(ss, rs, cx->K, &nrm, &rnrm))
            return 0;
        mieb_screen_query_bound(cx, q, nrm, rnrm);
    }
    memset(b->qa + cx->m * KP, 0, (size_t)(cx->m_pad - cx->m) * (size_t)KP * 2);
    return 1;
}

/* The 16 x 16 matrix of 32-bit words r[0..16) (row i = r[i]) in place of its transpose. */
static void transpose16(__m512i r[16])
{
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) { /* t[2m], t[2m+1]: rows 2m, 2m+1 interleaved by word */
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { /* r[4n + c], 128-bit lane L: column 4L + c of rows 4n .. 4n + 3 */
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int c = 0; c < 4; c++) { /* column 4L + c: lane L of r[c], r[4 + c], r[8 + c], r[12 + c] */
        __m512i v0 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x44), v1 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xEE);
        __m512i v2 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x44);
        __m512i v3 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xEE);
        t[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
        t[4 + c] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
        t[8 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
        t[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
    }
    for (int i = 0; i < 16; i++)
        r[i] = t[i];
}

/* Documents s0 .. s0 + rows into the VNNI layout (rows32: rows rounded up to 32, the extra
   ones zero), with their norm bounds. 0 if a norm is out of range. */
static int pack_docs(struct screen_ctx *cx, struct screen_buf *b, int64_t s0, int rows, int rows32)
{
    int64_t K = cx->K, KP = cx->KP;
    for (int g = 0; g < rows32 / 16; g++) {
        for (int r = 0; r < 16; r++) {
            int d = g * 16 + r;
            uint16_t *row = b->dtmp + (int64_t)r * KP;
            if (d >= rows) {
                memset(row, 0, (size_t)KP * 2);
                b->nd[d] = b->rnd[d] = 0.0f;
                continue;
            }
            float ss, rs;
            row_to_bf16(cx->D + (s0 + d) * K, K, KP, row, &ss, &rs);
            if (!mieb_screen_norms(ss, rs, K, &b->nd[d], &b->rnd[d]))
                return 0;
        }
        /* word p of document r (bf16 pair p) -> row p, column r of the group's VNNI layout */
        uint32_t *dst = (uint32_t *)(b->dv + (int64_t)g * 16 * KP);
        for (int64_t p0 = 0; p0 < KP / 2; p0 += 16) {
            __m512i v[16];
            for (int r = 0; r < 16; r++)
                v[r] = _mm512_loadu_si512(b->dtmp + (int64_t)r * KP + 2 * p0);
            transpose16(v);
            for (int p = 0; p < 16; p++)
                _mm512_storeu_si512(dst + (p0 + p) * 16, v[p]);
        }
    }
    return 1;
}

/* Bounds of one 32 x 32 block: queries g*16 .. g*16 + 31, documents doc0 .. doc0 + 31 of
   which `live` are real (nd, rnd: theirs). */
static void offer_block(struct screen_ctx *cx, const float *cb, int64_t g, int32_t doc0, const float *nd,
                        const float *rnd, int live)
{
    const __m512 sabs = _mm512_set1_ps(cx->s_abs);
    const __m512 n0 = _mm512_loadu_ps(nd), n1 = _mm512_loadu_ps(nd + 16);
    const __m512 rn0 = _mm512_loadu_ps(rnd), rn1 = _mm512_loadu_ps(rnd + 16);
    const __m512i id0 = _mm512_add_epi32(_mm512_set1_epi32(doc0),
                                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    const __m512i id1 = _mm512_add_epi32(id0, _mm512_set1_epi32(16));
    const __mmask16 live0 = live >= 16 ? 0xFFFF : (__mmask16)((1u << live) - 1u);
    const __mmask16 live1 = live >= 32 ? 0xFFFF : live > 16 ? (__mmask16)((1u << (live - 16)) - 1u) : 0;
    int64_t q_end = cx->m - g * 16 < 32 ? cx->m - g * 16 : 32;
    for (int64_t i = 0; i < q_end; i++) {
        int64_t q = g * 16 + i;
        __m512 al = _mm512_set1_ps(cx->alpha[q]), be = _mm512_set1_ps(cx->beta[q]);
        for (int h = 0; h < 2; h++) {
            __m512 a = _mm512_load_ps(cb + i * 32 + h * 16);
            __m512 e = _mm512_fmadd_ps(al, h ? n1 : n0, _mm512_fmadd_ps(be, h ? rn1 : rn0, sabs));
            __m512 ub = _mm512_add_ps(a, e);
            /* tau is read again for the second half: an append may have cut the list */
            __mmask16 take =
                _mm512_mask_cmp_ps_mask(h ? live1 : live0, ub, _mm512_set1_ps(cx->tau[q]), _CMP_GE_OQ);
            if (!take)
                continue;
            struct screen_list *l = &cx->lists[q];
            /* compress in registers, then store all 16 lanes: the lanes past the takers land
               in the list's slack (n < cut_at <= cap here). A compress straight to memory is
               microcoded on AMD Zen 4 (uops.info). */
            int32_t n = l->n;
            assert(n < l->cut_at && l->cut_at <= l->cap); /* the 16 lanes fit the slack */
            _mm512_storeu_si512(l->idx + n, _mm512_maskz_compress_epi32(take, h ? id1 : id0));
            _mm512_storeu_ps(l->lb + n, _mm512_maskz_compress_ps(take, _mm512_sub_ps(a, e)));
            _mm512_storeu_ps(l->ub + n, _mm512_maskz_compress_ps(take, ub));
            l->n = n + __builtin_popcount(take);
            if (l->n >= l->cut_at)
                mieb_screen_cut(cx, q);
        }
    }
}

/* 8 queries (bf16 rows a + i KP) x 32 documents (VNNI groups b0, b1) into cb's rows
   (stride 32 floats). Each VNNI row of a group is one vector of 16 documents' pair p; the
   query's pair p is broadcast against it. */
static void dp_rows8(const uint16_t *a, int64_t KP, const uint16_t *b0, const uint16_t *b1, float *cb)
{
    __m512 c0[8], c1[8];
    for (int i = 0; i < 8; i++)
        c0[i] = c1[i] = _mm512_setzero_ps();
    for (int64_t p = 0; p < KP / 2; p++) {
        __m512bh d0 = (__m512bh)_mm512_load_si512(b0 + 32 * p), d1 = (__m512bh)_mm512_load_si512(b1 + 32 * p);
        for (int i = 0; i < 8; i++) {
            int32_t w;
            memcpy(&w, a + i * KP + 2 * p, sizeof w);
            __m512bh qv = (__m512bh)_mm512_set1_epi32(w);
            c0[i] = _mm512_dpbf16_ps(c0[i], d0, qv);
            c1[i] = _mm512_dpbf16_ps(c1[i], d1, qv);
        }
    }
    for (int i = 0; i < 8; i++) {
        _mm512_store_ps(cb + i * 32, c0[i]);
        _mm512_store_ps(cb + i * 32 + 16, c1[i]);
    }
}

/* The block of 32 queries (a0: 16 rows, a1: the next 16) x 32 documents with VDPBF16PS. */
static void dp_block(const uint16_t *a0, const uint16_t *a1, const uint16_t *b0, const uint16_t *b1, int64_t KP,
                     float *cb)
{
    dp_rows8(a0, KP, b0, b1, cb);
    dp_rows8(a0 + 8 * KP, KP, b0, b1, cb + 8 * 32);
    dp_rows8(a1, KP, b0, b1, cb + 16 * 32);
    dp_rows8(a1 + 8 * KP, KP, b0, b1, cb + 24 * 32);
}

mieb_status mieb_screen_pass(struct screen_ctx *cx, enum screen_kernel kern, struct screen_buf **bufp)
{
    int64_t KP = cx->KP, K = cx->K;
    if (kern != SCREEN_KERNEL_AVX512BF16 && !(kern == SCREEN_KERNEL_AMX && mieb_screen_amx_built))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "screen: kernel %d is not in this build", (int)kern);
    if (!*bufp && !(*bufp = calloc(1, sizeof **bufp)))
        return mieb_fail(MIEB_ERR_OOM, "screen: buffers");
    struct screen_buf *b = *bufp;
    if (!screen_reserve((void **)&b->qa, &b->qa_cap, (size_t)cx->m_pad * (size_t)KP * 2) ||
        !screen_reserve((void **)&b->dv, &b->dv_cap, (size_t)DBLK * (size_t)KP * 2) ||
        !screen_reserve((void **)&b->dtmp, &b->dtmp_cap, (size_t)16 * (size_t)KP * 2) ||
        !(b->cb || (b->cb = aligned_alloc(64, sizeof(float) * 32 * 32))))
        return mieb_fail(MIEB_ERR_OOM, "screen: buffers for %lld queries at dimension %lld", (long long)cx->m,
                         (long long)K);
    if (!pack_queries(cx, b)) {
        cx->aborted = 1;
        return MIEB_OK;
    }
    void (*block)(const uint16_t *, const uint16_t *, const uint16_t *, const uint16_t *, int64_t, float *) =
        kern == SCREEN_KERNEL_AMX ? mieb_screen_amx_block : dp_block;
    if (kern == SCREEN_KERNEL_AMX)
        mieb_screen_amx_begin();
    int64_t groups = cx->m_pad / 16;
    mieb_status st = MIEB_OK;
    for (int64_t s0 = 0; s0 < cx->n && !cx->aborted; s0 += DBLK) {
        int rows = cx->n - s0 < DBLK ? (int)(cx->n - s0) : DBLK;
        int rows32 = (rows + 31) / 32 * 32;
        if ((st = mieb_stop_check()) != MIEB_OK) /* a stop signal: once per block of documents (core/stop.h) */
            break;
        if (!pack_docs(cx, b, s0, rows, rows32)) {
            cx->aborted = 1;
            break;
        }
        for (int64_t g = 0; g < groups; g += 2) {
            const uint16_t *a0 = b->qa + g * 16 * KP, *a1 = a0 + 16 * KP;
            for (int r0 = 0; r0 < rows32; r0 += 32) {
                const uint16_t *b0 = b->dv + (int64_t)r0 * KP, *b1 = b0 + 16 * KP;
                block(a0, a1, b0, b1, KP, b->cb);
                int live = rows - r0 < 32 ? rows - r0 : 32;
                offer_block(cx, b->cb, g, (int32_t)(s0 + r0), b->nd + r0, b->rnd + r0, live);
            }
        }
    }
    if (kern == SCREEN_KERNEL_AMX)
        mieb_screen_amx_end();
    return st;
}

const int mieb_screen_bf16_built = 1;

#else /* a compiler or target without AVX512_BF16: the screen is never available */

const int mieb_screen_bf16_built = 0;

struct screen_buf {
    int unused;
};
void mieb_screen_buf_free(struct screen_buf *b) { free(b); }
mieb_status mieb_screen_pass(struct screen_ctx *cx, enum screen_kernel kern, struct screen_buf **bufp)
{
    (void)cx;
    (void)kern;
    (void)bufp;
    return mieb_fail(MIEB_ERR_UNSUPPORTED, "screen: this build has no AVX512_BF16 kernels");
}
#endif
