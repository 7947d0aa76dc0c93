/**
 * screen_amx.c - the screen's approximate scores on the AMX matrix unit (screen.h).
 *
 * Documents are the A operand (16 rows of 32 bf16 per tile, straight from a bf16 copy of
 * the rows), queries the B operand (the VNNI layout: pairs of consecutive bf16 of 16
 * queries per 64-byte row, packed once per job). Four accumulator tiles hold 32 documents
 * x 32 queries; per 32 elements of K the pass loads two tiles of each and issues four
 * TDPBF16PS. The loop order keeps one pair of query groups' tiles (2 x 24 KiB at K = 768)
 * in L1 while 256 bf16 document rows (384 KiB) sit in L2: about 1 TFLOP/s-equivalent per
 * core, against about 0.1 for fp32 FMA (bench/README.md).
 *
 * Each 32 x 32 block of approximate scores a then meets the bounds with AVX-512: for a
 * document row and 16 queries, e = alpha n_d + beta rn_d + s_abs, and the queries whose
 * a + e reaches their tau take the document as a candidate with [a - e, a + e].
 *
 * Compiled with AVX-512, AVX512_BF16, AMX-TILE and AMX-BF16 (CMakeLists.txt); only called
 * when mieb_screen_available() says the CPU and OS run them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "screen_internal.h"

/* gcc spells the AMX macros __AMX_TILE__ / __AMX_BF16__, clang __AMXTILE__ / __AMXBF16__ */
#if defined(__x86_64__) && (defined(__AMX_TILE__) || defined(__AMXTILE__)) && \
    (defined(__AMX_BF16__) || defined(__AMXBF16__)) && defined(__AVX512BF16__)
#define SCREEN_AMX_BUILT 1
#include <immintrin.h>

#define DBLK 256 /* document rows converted at a time (L2-resident as bf16) */

struct screen_amx_buf {
    uint16_t *qv;  /* [m_pad / 16][KP / 2][16][2] */
    size_t qv_cap;
    uint16_t *dbf; /* [DBLK][KP] */
    size_t dbf_cap;
    uint16_t *row; /* [KP] one query's bf16 row before it is interleaved */
    size_t row_cap;
    float *cb;     /* [32][32] accumulator tiles, 64-byte aligned */
    float nd[DBLK], rnd[DBLK];
};

void mieb_screen_amx_buf_free(struct screen_amx_buf *b)
{
    if (!b)
        return;
    free(b->qv);
    free(b->dbf);
    free(b->row);
    free(b->cb);
    free(b);
}

static int reserve(void **p, size_t *cap, size_t bytes)
{
    if (*cap >= bytes)
        return 1;
    free(*p);
    *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    *cap = *p ? bytes : 0;
    return *p != NULL;
}

/* palette 1: every tile 16 rows x 64 bytes */
struct tile_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

static __m512 bf16_to_f32(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

/* One row to bf16 (round to nearest even, subnormals to zero: what the tiles compute with),
   zero-padded to KP, with the fp32 sums of squares of the row and of its rounding error. */
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

/* Queries into the B layout; their norms into the bound coefficients. 0 if a norm is out of range. */
static int pack_queries(struct screen_ctx *cx, struct screen_amx_buf *b)
{
    int64_t KP = cx->KP, half = KP / 2;
    uint32_t *qv = (uint32_t *)b->qv;
    memset(b->qv, 0, (size_t)cx->m_pad * (size_t)KP * 2);
    for (int64_t q = 0; q < cx->m; q++) {
        float ss, rs, nrm, rnrm;
        row_to_bf16(cx->Q + q * cx->K, cx->K, KP, b->row, &ss, &rs);
        if (!mieb_screen_norms(ss, rs, cx->K, &nrm, &rnrm))
            return 0;
        mieb_screen_query_bound(cx, q, nrm, rnrm);
        const uint32_t *pairs = (const uint32_t *)b->row;
        uint32_t *dst = qv + (q / 16) * half * 16 + (q % 16);
        for (int64_t p = 0; p < half; p++)
            dst[p * 16] = pairs[p];
    }
    return 1;
}

/* Bounds of one 32 x 32 block: rows r0 .. r0 + rows of the document block, queries g*16 .. g*16 + 31. */
static void offer_block(struct screen_ctx *cx, const float *cb, int64_t g, int32_t doc0, const float *nd,
                        const float *rnd, int rows)
{
    __m512 al[2], be[2];
    for (int h = 0; h < 2; h++) {
        al[h] = _mm512_loadu_ps(cx->alpha + (g + h) * 16);
        be[h] = _mm512_loadu_ps(cx->beta + (g + h) * 16);
    }
    const __m512 sabs = _mm512_set1_ps(cx->s_abs);
    float lbt[16] __attribute__((aligned(64))), ubt[16] __attribute__((aligned(64)));
    for (int r = 0; r < rows; r++) {
        __m512 n = _mm512_set1_ps(nd[r]), rn = _mm512_set1_ps(rnd[r]);
        for (int h = 0; h < 2; h++) {
            __m512 a = _mm512_load_ps(cb + r * 32 + h * 16);
            __m512 e = _mm512_fmadd_ps(al[h], n, _mm512_fmadd_ps(be[h], rn, sabs));
            __m512 ub = _mm512_add_ps(a, e);
            __mmask16 take = _mm512_cmp_ps_mask(ub, _mm512_loadu_ps(cx->tau + (g + h) * 16), _CMP_GE_OQ);
            if (!take)
                continue;
            _mm512_store_ps(lbt, _mm512_sub_ps(a, e));
            _mm512_store_ps(ubt, ub);
            int64_t q0 = (g + h) * 16;
            while (take) {
                int bit = __builtin_ctz(take);
                take &= (__mmask16)(take - 1);
                /* an earlier append in this row may have cut the list and raised tau */
                if (ubt[bit] >= cx->tau[q0 + bit])
                    mieb_screen_append(cx, q0 + bit, doc0 + r, lbt[bit], ubt[bit]);
            }
        }
    }
}

mieb_status mieb_screen_amx_pass(struct screen_ctx *cx, struct screen_amx_buf **bufp)
{
    int64_t KP = cx->KP, K = cx->K;
    if (!*bufp && !(*bufp = calloc(1, sizeof **bufp)))
        return mieb_fail(MIEB_ERR_OOM, "screen: AMX buffers");
    struct screen_amx_buf *b = *bufp;
    if (!reserve((void **)&b->qv, &b->qv_cap, (size_t)cx->m_pad * (size_t)KP * 2) ||
        !reserve((void **)&b->dbf, &b->dbf_cap, (size_t)DBLK * (size_t)KP * 2) ||
        !reserve((void **)&b->row, &b->row_cap, (size_t)KP * 2) ||
        !(b->cb || (b->cb = aligned_alloc(64, sizeof(float) * 32 * 32))))
        return mieb_fail(MIEB_ERR_OOM, "screen: AMX buffers for %lld queries at dimension %lld", (long long)cx->m,
                         (long long)K);
    if (!pack_queries(cx, b)) {
        cx->aborted = 1;
        return MIEB_OK;
    }
    struct tile_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    _tile_loadconfig(&cfg);
    const uint16_t *qv = b->qv;
    int64_t groups = cx->m_pad / 16;
    for (int64_t s0 = 0; s0 < cx->n; s0 += DBLK) {
        int rows = cx->n - s0 < DBLK ? (int)(cx->n - s0) : DBLK;
        int rows32 = (rows + 31) / 32 * 32;
        for (int r = 0; r < rows; r++) {
            float ss, rs;
            row_to_bf16(cx->D + (s0 + r) * K, K, KP, b->dbf + (int64_t)r * KP, &ss, &rs);
            if (!mieb_screen_norms(ss, rs, K, &b->nd[r], &b->rnd[r])) {
                cx->aborted = 1;
                _tile_release();
                return MIEB_OK;
            }
        }
        if (rows32 > rows)
            memset(b->dbf + (int64_t)rows * KP, 0, (size_t)(rows32 - rows) * (size_t)KP * 2);
        for (int64_t g = 0; g < groups; g += 2) {
            const uint16_t *b0 = qv + g * 16 * KP, *b1 = qv + (g + 1) * 16 * KP;
            for (int r0 = 0; r0 < rows32; r0 += 32) {
                const uint16_t *a0 = b->dbf + (int64_t)r0 * KP, *a1 = a0 + 16 * KP;
                _tile_zero(0);
                _tile_zero(1);
                _tile_zero(2);
                _tile_zero(3);
                for (int64_t kc = 0; kc < KP; kc += SCREEN_KSTEP) {
                    _tile_loadd(4, a0 + kc, KP * 2);
                    _tile_loadd(5, a1 + kc, KP * 2);
                    _tile_loadd(6, b0 + kc * 16, 64);
                    _tile_loadd(7, b1 + kc * 16, 64);
                    _tile_dpbf16ps(0, 4, 6);
                    _tile_dpbf16ps(1, 4, 7);
                    _tile_dpbf16ps(2, 5, 6);
                    _tile_dpbf16ps(3, 5, 7);
                }
                _tile_stored(0, b->cb, 128);
                _tile_stored(1, b->cb + 16, 128);
                _tile_stored(2, b->cb + 16 * 32, 128);
                _tile_stored(3, b->cb + 16 * 32 + 16, 128);
                int live = rows - r0 < 32 ? rows - r0 : 32;
                offer_block(cx, b->cb, g, (int32_t)(s0 + r0), b->nd + r0, b->rnd + r0, live);
            }
        }
    }
    _tile_release();
    return MIEB_OK;
}

const int mieb_screen_amx_built = 1;

#else /* a compiler or target without AMX: the screen is never available */

const int mieb_screen_amx_built = 0;


struct screen_amx_buf {
    int unused;
};
void mieb_screen_amx_buf_free(struct screen_amx_buf *b) { free(b); }
mieb_status mieb_screen_amx_pass(struct screen_ctx *cx, struct screen_amx_buf **bufp)
{
    (void)cx;
    (void)bufp;
    return mieb_fail(MIEB_ERR_UNSUPPORTED, "screen: this build has no AMX kernel");
}
#endif
