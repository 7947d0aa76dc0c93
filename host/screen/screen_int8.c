/**
 * screen_int8.c - the int8 screen's pass (screen.h): int8 copies of the rows, their exact
 * integer dot products from a kernel, and the bounds that turn each block of them into
 * candidates. The candidate lists, their cuts and the exact rescoring are screen.c's,
 * shared with the bf16 kernels.
 *
 * The kernels (struct screen_i8_kernel): portable C here and AVX2's VPMADDWD
 * (screen_int8_avx2.c) on int16 pairs; AVX512_VNNI's and AVX-VNNI's VPDPBUSD
 * (screen_int8_vnni512.c, screen_int8_avxvnni.c) and AMX's TDPBSSD (screen_int8_amx.c) on
 * byte quads (screen_int8_quads.c). All give the same integers, so the same lists.
 *
 * Why int8: the bf16 kernels need AVX512_BF16 or AMX; every x86-64 CPU since 2013 has
 * AVX2, whose VPMADDWD multiplies 16 pairs of int16 into 8 int32 sums per instruction,
 * twice the fp32 FMA's products. The integers are exact (|sum| <= K 127^2 < 2^31), so the
 * approximate scores are the same on every machine, and the bound only has to cover the
 * quantisation and the final float arithmetic: docs/SCREEN_INT8.md derives it.
 *
 * Per (query x, document y) with scales s_x, s_y, integer rows q_x, q_y, I = <q_x, q_y>:
 *   a = fl(fl(I) * fl(s_x s_y)),   e = alpha_x n_y + beta_x rn_y + s_abs
 *   alpha_x = (R_x + g N_x + 8u H_x) M^2,   beta_x = H_x (1 + 8u) M^2
 * with N >= |x|, R >= |x - s q|, H >= |s q| (per row, upward), g = (K + 64) u bounding the
 * canonical sum's relative error, u = 2^-24, M = 1 + 2^-20 the margin for the bound's own
 * roundings, and s_abs = ((K + 64) 2^-125 + K 2^-134) M for every subnormal loss.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../math/screen_int8_math.h"
#include "../core/stop.h"
#include "screen_base.h"

#define DBLK 256                        /* documents quantised at a time (L2-resident as int16) */

float mieb_screen_i8_test_bound_scale = 1.0f;
int mieb_screen_i8_test_drop_rounding = 0;

struct screen_i8_buf {
    int16_t *qa;   /* pair layout: [mt][KP] the queries' integer rows, mt = m rounded up to the kernel's mq */
    size_t qa_cap;
    int8_t *qa8;   /* quad layout: [mt][KQ] the same integers as bytes */
    size_t qa8_cap;
    int32_t *qsum; /* quad layout: [mt] each query's sum of integers */
    size_t qsum_cap;
    float *sq;     /* [m] query scales */
    size_t sq_cap;
    void *dv;      /* [DBLK / 16] groups of 16 documents' integer rows, in the kernel's layout */
    size_t dv_cap;
    int16_t *drow; /* [KP] one row before it is interleaved */
    size_t drow_cap;
    int32_t *dots; /* [SCREEN_I8_NG_MAX][SCREEN_I8_MQ_MAX][SCREEN_I8_ND] */
    float sd[DBLK], nd[DBLK], rnd[DBLK];
};

void mieb_screen_i8_buf_free(struct screen_i8_buf *b)
{
    if (!b)
        return;
    free(b->qa);
    free(b->qa8);
    free(b->qsum);
    free(b->sq);
    free(b->dv);
    free(b->drow);
    free(b->dots);
    free(b);
}

/* ---- quantisation ---- */

int mieb_screen_i8_quantise(const float *x, int64_t K, int64_t KP, int16_t *out, float *s_out, float *nrm,
                            float *rnrm, float *hnrm)
{
    return mieb_screen_i8_quantise_row(x, K, KP, NULL, out, s_out, nrm, rnrm, hnrm);
}

/* alpha and beta of the file comment for query q (its norm bounds N, R, H). */
static void query_bound(struct screen_ctx *cx, int64_t q, float nrm, float rnrm, float hnrm)
{
    mieb_screen_i8_query_coefs(cx->K, nrm, rnrm, hnrm, mieb_screen_i8_test_bound_scale, mieb_screen_i8_test_drop_rounding,
                         &cx->alpha[q], &cx->beta[q]);
}

/* Every query quantised (its bound coefficients set) into the kernel's layout; rows m .. mt
   zero. 0 if a norm is out of range. */
static int pack_queries(struct screen_ctx *cx, struct screen_i8_buf *b, int64_t mt, int64_t KQ,
                        const struct screen_i8_kernel *kd)
{
    int64_t KP = cx->KP;
    for (int64_t q = 0; q < cx->m; q++) {
        float nrm, rnrm, hnrm;
        int16_t *row = kd->dots_q ? b->drow : b->qa + q * KP;
        if (!kd->quantise(cx->Q + q * cx->K, cx->K, KP, row, &b->sq[q], &nrm, &rnrm, &hnrm))
            return 0;
        query_bound(cx, q, nrm, rnrm, hnrm);
        if (kd->dots_q)
            mieb_screen_i8_quad_pack_query(row, KP, KQ, b->qa8 + q * KQ, &b->qsum[q]);
    }
    if (kd->dots_q) {
        memset(b->qa8 + cx->m * KQ, 0, (size_t)((mt - cx->m) * KQ));
        memset(b->qsum + cx->m, 0, sizeof(int32_t) * (size_t)(mt - cx->m));
    } else {
        memset(b->qa + cx->m * KP, 0, sizeof(int16_t) * (size_t)((mt - cx->m) * KP));
    }
    return 1;
}

/* Document d of the block (its integers in b->drow, or zeros when row is NULL) into group
   d / 16 of the pair-interleaved layout. */
static void put_doc_pairs(struct screen_i8_buf *b, int64_t KP, int d, const int16_t *row)
{
    int g = d / SCREEN_I8_ND, c = d % SCREEN_I8_ND;
    int16_t *dst = (int16_t *)b->dv + (int64_t)g * SCREEN_I8_ND * KP + 2 * c;
    for (int64_t p = 0; p < KP / 2; p++) {
        dst[p * 2 * SCREEN_I8_ND] = row ? row[2 * p] : 0;
        dst[p * 2 * SCREEN_I8_ND + 1] = row ? row[2 * p + 1] : 0;
    }
}

/* Documents s0 .. s0 + rows into groups of 16 in the kernel's layout (rows up to rows_t
   zero). 0 if a norm is out of range. */
static int pack_docs(struct screen_ctx *cx, struct screen_i8_buf *b, int64_t s0, int rows, int rows_t, int64_t KQ,
                     const struct screen_i8_kernel *kd)
{
    int64_t K = cx->K, KP = cx->KP;
    for (int d = 0; d < rows_t; d++) {
        const int16_t *row = NULL;
        float h;
        b->sd[d] = b->nd[d] = b->rnd[d] = 0.0f;
        if (d < rows) {
            if (!kd->quantise(cx->D + (s0 + d) * K, K, KP, b->drow, &b->sd[d], &b->nd[d], &b->rnd[d], &h))
                return 0;
            row = b->drow;
        }
        if (kd->dots_q)
            (kd->pack_doc ? kd->pack_doc : mieb_screen_i8_quad_pack_doc)(
                row, KP, KQ, kd->doc_u8, d % SCREEN_I8_ND,
                (uint8_t *)b->dv + (int64_t)(d / SCREEN_I8_ND) * SCREEN_I8_ND * KQ);
        else
            put_doc_pairs(b, KP, d, row);
    }
    return 1;
}

/* ---- the portable kernel ---- */

void mieb_screen_i8_dots_scalar(const int16_t *qa, int64_t KP, const int16_t *dv, int32_t *out)
{
    for (int i = 0; i < SCREEN_I8_MQ; i++)
        for (int j = 0; j < SCREEN_I8_ND; j++) {
            int32_t acc = 0;
            for (int64_t p = 0; p < KP / 2; p++) {
                const int16_t *d = dv + p * 2 * SCREEN_I8_ND + 2 * j;
                acc += (int32_t)qa[i * KP + 2 * p] * d[0] + (int32_t)qa[i * KP + 2 * p + 1] * d[1];
            }
            out[i * SCREEN_I8_ND + j] = acc;
        }
}

/* The same float operations as the AVX2 offer, lane by lane: the same lists. */
void mieb_screen_i8_offer_scalar(struct screen_ctx *cx, const struct screen_i8_offer *o)
{
    for (int i = 0; i < o->nq; i++) {
        int64_t q = o->q0 + i;
        float al = cx->alpha[q], be = cx->beta[q], sq = o->sq[q];
        for (int j = 0; j < o->live; j++) {
            float lb, ub;
            mieb_screen_i8_interval(o->dots[i * SCREEN_I8_ND + j], sq, o->sd[j], al, be, o->nd[j], o->rnd[j], cx->s_abs,
                              &lb, &ub);
            if (ub >= cx->tau[q])
                mieb_screen_append(cx, q, o->doc0 + j, lb, ub);
        }
    }
}

/* ---- the kernels ---- */

static const struct screen_i8_kernel k_scalar = {SCREEN_I8_MQ, 1, SCREEN_I8_KSTEP, 0,
                                                 mieb_screen_i8_dots_scalar, NULL, mieb_screen_i8_quantise,
                                                 mieb_screen_i8_offer_scalar, NULL, NULL, NULL};
/* The SIMD kernels quantise with AVX2, which every CPU with VNNI or AMX has; those of CPUs
   with AVX-512 (VNNI on ZMM, AMX-INT8) offer with it, the others with AVX2. */
static const struct screen_i8_kernel k_avx2 = {SCREEN_I8_MQ, 1, SCREEN_I8_KSTEP, 0,
                                               mieb_screen_i8_dots_avx2, NULL, mieb_screen_i8_quantise_avx2,
                                               mieb_screen_i8_offer_avx2, NULL, NULL, NULL};
static const struct screen_i8_kernel k_vnni512 = {SCREEN_I8_VNNI512_MQ, 1, SCREEN_I8_KSTEP, 1,
                                                  NULL, mieb_screen_i8_dots_vnni512, mieb_screen_i8_quantise_avx2,
                                                  mieb_screen_i8_offer_avx512, NULL, NULL,
                                                  mieb_screen_i8_quad_pack_doc_avx2};
static const struct screen_i8_kernel k_avxvnni = {SCREEN_I8_AVXVNNI_MQ, 1, SCREEN_I8_KSTEP, 1,
                                                  NULL, mieb_screen_i8_dots_avxvnni, mieb_screen_i8_quantise_avx2,
                                                  mieb_screen_i8_offer_avx2, NULL, NULL,
                                                  mieb_screen_i8_quad_pack_doc_avx2};
static const struct screen_i8_kernel k_amx = {SCREEN_I8_AMX_MQ, SCREEN_I8_AMX_NG, SCREEN_I8_AMX_KSTEP, 0,
                                              NULL, mieb_screen_i8_dots_amx, mieb_screen_i8_quantise_avx2,
                                              mieb_screen_i8_offer_avx512, mieb_screen_i8_amx_begin,
                                              mieb_screen_i8_amx_end, mieb_screen_i8_quad_pack_doc_avx2};

/* The kernel's description, or NULL when this build lacks it. */
static const struct screen_i8_kernel *kernel_of(enum screen_kernel kern)
{
    switch (kern) {
    case SCREEN_KERNEL_INT8_SCALAR:
        return &k_scalar;
    case SCREEN_KERNEL_INT8_AVX2:
        return mieb_screen_i8_avx2_built ? &k_avx2 : NULL;
    case SCREEN_KERNEL_INT8_VNNI512:
        return mieb_screen_i8_vnni512_built && mieb_screen_i8_offer512_built ? &k_vnni512 : NULL;
    case SCREEN_KERNEL_INT8_AVXVNNI:
        return mieb_screen_i8_avxvnni_built ? &k_avxvnni : NULL;
    case SCREEN_KERNEL_INT8_AMX:
        return mieb_screen_i8_amx_built && mieb_screen_i8_offer512_built ? &k_amx : NULL;
    default:
        return NULL;
    }
}

/* ---- the pass ---- */

static mieb_status reserve_all(struct screen_ctx *cx, struct screen_i8_buf *b, int64_t mt, int64_t KQ,
                               const struct screen_i8_kernel *kd)
{
    int64_t KP = cx->KP;
    size_t dv_bytes = kd->dots_q ? (size_t)(DBLK * KQ) : sizeof(int16_t) * (size_t)(DBLK * KP);
    int ok = screen_reserve((void **)&b->sq, &b->sq_cap, sizeof(float) * (size_t)cx->m) &&
             screen_reserve(&b->dv, &b->dv_cap, dv_bytes) &&
             screen_reserve((void **)&b->drow, &b->drow_cap, sizeof(int16_t) * (size_t)KP) &&
             (b->dots || (b->dots = aligned_alloc(64, sizeof(int32_t) * SCREEN_I8_NG_MAX * SCREEN_I8_MQ_MAX *
                                                          SCREEN_I8_ND)));
    if (ok && kd->dots_q)
        ok = screen_reserve((void **)&b->qa8, &b->qa8_cap, (size_t)(mt * KQ)) &&
             screen_reserve((void **)&b->qsum, &b->qsum_cap, sizeof(int32_t) * (size_t)mt);
    else if (ok)
        ok = screen_reserve((void **)&b->qa, &b->qa_cap, sizeof(int16_t) * (size_t)(mt * KP));
    if (!ok)
        return mieb_fail(MIEB_ERR_OOM, "int8 screen: buffers for %lld queries at dimension %lld", (long long)cx->m,
                         (long long)cx->K);
    return MIEB_OK;
}

/* One call of the kernel: queries q0 .. q0 + mq against documents r0 .. r0 + 16 ng of the
   block, then each group's integers offered as candidates. */
static void score_tile(struct screen_ctx *cx, struct screen_i8_buf *b, const struct screen_i8_kernel *kd,
                       int64_t KQ, int64_t q0, int64_t s0, int r0, int rows)
{
    if (kd->dots_q)
        kd->dots_q(b->qa8 + q0 * KQ, KQ, (const uint8_t *)b->dv + (int64_t)r0 * KQ, b->qsum + q0, b->dots);
    else
        kd->dots(b->qa + q0 * cx->KP, cx->KP, (const int16_t *)b->dv + (int64_t)r0 * cx->KP, b->dots);
    for (int g = 0; g < kd->ng; g++) {
        int first = r0 + g * SCREEN_I8_ND;
        if (first >= rows)
            break;
        struct screen_i8_offer o = {b->dots + (int64_t)g * kd->mq * SCREEN_I8_ND,
                                    q0,
                                    (int)(cx->m - q0 < kd->mq ? cx->m - q0 : kd->mq),
                                    (int32_t)(s0 + first),
                                    rows - first < SCREEN_I8_ND ? rows - first : SCREEN_I8_ND,
                                    b->sq,
                                    b->sd + first,
                                    b->nd + first,
                                    b->rnd + first};
        kd->offer(cx, &o);
    }
}

static mieb_status pass_blocks(struct screen_ctx *cx, const struct screen_i8_kernel *kd, struct screen_i8_buf *b)
{
    int64_t KQ = kd->dots_q ? (cx->K + kd->kstep - 1) / kd->kstep * kd->kstep : cx->KP;
    int64_t mt = (cx->m + kd->mq - 1) / kd->mq * kd->mq;
    mieb_status st = reserve_all(cx, b, mt, KQ, kd);
    if (st != MIEB_OK)
        return st;
    if (!pack_queries(cx, b, mt, KQ, kd)) {
        cx->aborted = 1;
        return MIEB_OK;
    }
    int tile = SCREEN_I8_ND * kd->ng;
    for (int64_t s0 = 0; s0 < cx->n; s0 += DBLK) {
        int rows = cx->n - s0 < DBLK ? (int)(cx->n - s0) : DBLK;
        int rows_t = (rows + tile - 1) / tile * tile;
        MIEB_TRY(mieb_stop_check()); /* a stop signal: once per block of documents (core/stop.h) */
        if (!pack_docs(cx, b, s0, rows, rows_t, KQ, kd)) {
            cx->aborted = 1;
            return MIEB_OK;
        }
        /* a group of queries stays in L1 while the block's documents stream from L2 */
        for (int64_t q0 = 0; q0 < cx->m; q0 += kd->mq)
            for (int r0 = 0; r0 < rows_t; r0 += tile)
                score_tile(cx, b, kd, KQ, q0, s0, r0, rows);
    }
    return MIEB_OK;
}

mieb_status mieb_screen_i8_pass_with(struct screen_ctx *cx, const struct screen_i8_kernel *kd,
                                     struct screen_i8_buf **bufp)
{
    if (cx->K > SCREEN_I8_MAX_K) { /* its integers could pass 2^31: the exact way takes it */
        cx->aborted = 1;
        return MIEB_OK;
    }
    cx->KP = (cx->K + SCREEN_I8_KSTEP - 1) / SCREEN_I8_KSTEP * SCREEN_I8_KSTEP;
    cx->s_abs = mieb_screen_i8_s_abs(cx->K, mieb_screen_i8_test_drop_rounding);
    if (!*bufp && !(*bufp = calloc(1, sizeof **bufp)))
        return mieb_fail(MIEB_ERR_OOM, "int8 screen: buffers");
    if (kd->begin)
        kd->begin();
    mieb_status st = pass_blocks(cx, kd, *bufp);
    if (kd->end)
        kd->end();
    return st;
}

mieb_status mieb_screen_i8_pass(struct screen_ctx *cx, enum screen_kernel kern, struct screen_i8_buf **bufp)
{
    const struct screen_i8_kernel *kd = kernel_of(kern);
    if (!kd)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "int8 screen: kernel %d is not in this build", (int)kern);
    return mieb_screen_i8_pass_with(cx, kd, bufp);
}
