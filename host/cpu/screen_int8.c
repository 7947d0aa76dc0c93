/**
 * screen_int8.c - the int8 screen's pass (screen.h): int8 copies of the rows, their exact
 * integer dot products from a kernel (portable C here, AVX2 in screen_int8_avx2.c), and
 * the bounds that turn each block of them into candidates. The candidate lists, their cuts
 * and the exact rescoring are screen.c's, shared with the bf16 kernels.
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

#include "../backend/screen_i8_math.h"
#include "screen_internal.h"

#define DBLK 256                        /* documents quantised at a time (L2-resident as int16) */

float mieb_screen_i8_test_bound_scale = 1.0f;
int mieb_screen_i8_test_drop_rounding = 0;

struct screen_i8_buf {
    int16_t *qa;   /* [m6][KP]: the queries' integer rows, m6 = m rounded up to SCREEN_I8_MQ */
    size_t qa_cap;
    float *sq;     /* [m] query scales */
    size_t sq_cap;
    int16_t *dv;   /* [DBLK / 16][KP / 2][16][2]: the documents' integer rows */
    size_t dv_cap;
    int16_t *drow; /* [KP] one document row before it is interleaved */
    size_t drow_cap;
    int32_t *dots; /* [SCREEN_I8_MQ][SCREEN_I8_ND] */
    float sd[DBLK], nd[DBLK], rnd[DBLK];
};

void mieb_screen_i8_buf_free(struct screen_i8_buf *b)
{
    if (!b)
        return;
    free(b->qa);
    free(b->sq);
    free(b->dv);
    free(b->drow);
    free(b->dots);
    free(b);
}

/* ---- quantisation ---- */

/* The arithmetic is backend/screen_i8_math.h's, which the CUDA kernels share (the same
   integers, scales, norm bounds and intervals on both). */
int mieb_screen_i8_row_bounds(float s, float ss, float rs, int64_t qq, int64_t K, float *nrm, float *rnrm,
                              float *hnrm)
{
    return mieb_si8_row_bounds(s, ss, rs, qq, K, nrm, rnrm, hnrm);
}

int mieb_screen_i8_quantise(const float *x, int64_t K, int64_t KP, int16_t *out, float *s_out, float *nrm,
                            float *rnrm, float *hnrm)
{
    return mieb_si8_quantise_row(x, K, KP, NULL, out, s_out, nrm, rnrm, hnrm);
}

/* alpha and beta of the file comment for query q (its norm bounds N, R, H). */
static void query_bound(struct screen_ctx *cx, int64_t q, float nrm, float rnrm, float hnrm)
{
    mieb_si8_query_coefs(cx->K, nrm, rnrm, hnrm, mieb_screen_i8_test_bound_scale, mieb_screen_i8_test_drop_rounding,
                         &cx->alpha[q], &cx->beta[q]);
}

static int pack_queries(struct screen_ctx *cx, struct screen_i8_buf *b, int64_t m6, screen_i8_quantise_fn quantise)
{
    for (int64_t q = 0; q < cx->m; q++) {
        float nrm, rnrm, hnrm;
        if (!quantise(cx->Q + q * cx->K, cx->K, cx->KP, b->qa + q * cx->KP, &b->sq[q], &nrm, &rnrm, &hnrm))
            return 0;
        query_bound(cx, q, nrm, rnrm, hnrm);
    }
    memset(b->qa + cx->m * cx->KP, 0, sizeof(int16_t) * (size_t)((m6 - cx->m) * cx->KP));
    return 1;
}

/* Documents s0 .. s0 + rows into groups of 16 in the pair-interleaved layout (rows past the
   real ones zero). 0 if a norm is out of range. */
static int pack_docs(struct screen_ctx *cx, struct screen_i8_buf *b, int64_t s0, int rows, int rows16,
                     screen_i8_quantise_fn quantise)
{
    int64_t K = cx->K, KP = cx->KP;
    for (int d = 0; d < rows16; d++) {
        int g = d / SCREEN_I8_ND, c = d % SCREEN_I8_ND;
        int16_t *dst = b->dv + (int64_t)g * SCREEN_I8_ND * KP + 2 * c;
        if (d >= rows) {
            b->sd[d] = b->nd[d] = b->rnd[d] = 0.0f;
            for (int64_t p = 0; p < KP / 2; p++)
                dst[p * 2 * SCREEN_I8_ND] = dst[p * 2 * SCREEN_I8_ND + 1] = 0;
            continue;
        }
        float h;
        if (!quantise(cx->D + (s0 + d) * K, K, KP, b->drow, &b->sd[d], &b->nd[d], &b->rnd[d], &h))
            return 0;
        for (int64_t p = 0; p < KP / 2; p++) {
            dst[p * 2 * SCREEN_I8_ND] = b->drow[2 * p];
            dst[p * 2 * SCREEN_I8_ND + 1] = b->drow[2 * p + 1];
        }
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

void mieb_screen_append(struct screen_ctx *cx, int64_t q, int32_t idx, float lb, float ub)
{
    struct screen_list *l = &cx->lists[q];
    l->idx[l->n] = idx;
    l->lb[l->n] = lb;
    l->ub[l->n] = ub;
    if (++l->n >= l->cut_at)
        mieb_screen_cut(cx, q);
}

/* The same float operations as the AVX2 offer, lane by lane: the same lists. */
void mieb_screen_i8_offer_scalar(struct screen_ctx *cx, const struct screen_i8_offer *o)
{
    for (int i = 0; i < o->nq; i++) {
        int64_t q = o->q0 + i;
        float al = cx->alpha[q], be = cx->beta[q], sq = o->sq[q];
        for (int j = 0; j < o->live; j++) {
            float lb, ub;
            mieb_si8_interval(o->dots[i * SCREEN_I8_ND + j], sq, o->sd[j], al, be, o->nd[j], o->rnd[j], cx->s_abs,
                              &lb, &ub);
            if (ub >= cx->tau[q])
                mieb_screen_append(cx, q, o->doc0 + j, lb, ub);
        }
    }
}

/* ---- the pass ---- */

static mieb_status reserve_all(struct screen_ctx *cx, struct screen_i8_buf *b, int64_t m6)
{
    int64_t KP = cx->KP;
    if (!screen_reserve((void **)&b->qa, &b->qa_cap, sizeof(int16_t) * (size_t)(m6 * KP)) ||
        !screen_reserve((void **)&b->sq, &b->sq_cap, sizeof(float) * (size_t)cx->m) ||
        !screen_reserve((void **)&b->dv, &b->dv_cap, sizeof(int16_t) * (size_t)(DBLK * KP)) ||
        !screen_reserve((void **)&b->drow, &b->drow_cap, sizeof(int16_t) * (size_t)KP) ||
        !(b->dots || (b->dots = aligned_alloc(64, sizeof(int32_t) * SCREEN_I8_MQ * SCREEN_I8_ND))))
        return mieb_fail(MIEB_ERR_OOM, "int8 screen: buffers for %lld queries at dimension %lld", (long long)cx->m,
                         (long long)cx->K);
    return MIEB_OK;
}

mieb_status mieb_screen_i8_pass(struct screen_ctx *cx, enum screen_kernel kern, struct screen_i8_buf **bufp)
{
    int use_avx2 = kern == SCREEN_KERNEL_INT8_AVX2 && mieb_screen_i8_avx2_built;
    if (!SCREEN_KERNEL_IS_INT8(kern) || (kern == SCREEN_KERNEL_INT8_AVX2 && !use_avx2))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "int8 screen: kernel %d is not in this build", (int)kern);
    if (cx->K > SCREEN_I8_MAX_K) { /* its integers could pass 2^31: the exact way takes it */
        cx->aborted = 1;
        return MIEB_OK;
    }
    cx->KP = (cx->K + SCREEN_I8_KSTEP - 1) / SCREEN_I8_KSTEP * SCREEN_I8_KSTEP;
    cx->s_abs = mieb_si8_s_abs(cx->K, mieb_screen_i8_test_drop_rounding);
    if (!*bufp && !(*bufp = calloc(1, sizeof **bufp)))
        return mieb_fail(MIEB_ERR_OOM, "int8 screen: buffers");
    struct screen_i8_buf *b = *bufp;
    int64_t m6 = (cx->m + SCREEN_I8_MQ - 1) / SCREEN_I8_MQ * SCREEN_I8_MQ, KP = cx->KP;
    mieb_status st = reserve_all(cx, b, m6);
    if (st != MIEB_OK)
        return st;
    screen_i8_quantise_fn quantise = use_avx2 ? mieb_screen_i8_quantise_avx2 : mieb_screen_i8_quantise;
    if (!pack_queries(cx, b, m6, quantise)) {
        cx->aborted = 1;
        return MIEB_OK;
    }
    screen_i8_dots_fn dots = use_avx2 ? mieb_screen_i8_dots_avx2 : mieb_screen_i8_dots_scalar;
    screen_i8_offer_fn offer = use_avx2 ? mieb_screen_i8_offer_avx2 : mieb_screen_i8_offer_scalar;
    for (int64_t s0 = 0; s0 < cx->n; s0 += DBLK) {
        int rows = cx->n - s0 < DBLK ? (int)(cx->n - s0) : DBLK;
        int rows16 = (rows + SCREEN_I8_ND - 1) / SCREEN_I8_ND * SCREEN_I8_ND;
        if (!pack_docs(cx, b, s0, rows, rows16, quantise)) {
            cx->aborted = 1;
            return MIEB_OK;
        }
        /* a group of queries stays in L1 while the block's documents stream from L2 */
        for (int64_t q0 = 0; q0 < cx->m; q0 += SCREEN_I8_MQ) {
            struct screen_i8_offer o = {b->dots, q0, (int)(cx->m - q0 < SCREEN_I8_MQ ? cx->m - q0 : SCREEN_I8_MQ),
                                        0, 0, b->sq, NULL, NULL, NULL};
            for (int r0 = 0; r0 < rows16; r0 += SCREEN_I8_ND) {
                dots(b->qa + q0 * KP, KP, b->dv + (int64_t)r0 * KP, b->dots);
                o.doc0 = (int32_t)(s0 + r0);
                o.live = rows - r0 < SCREEN_I8_ND ? rows - r0 : SCREEN_I8_ND;
                o.sd = b->sd + r0;
                o.nd = b->nd + r0;
                o.rnd = b->rnd + r0;
                offer(cx, &o);
            }
        }
    }
    return MIEB_OK;
}
