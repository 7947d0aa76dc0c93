/*
 * test_screen.c - the screened top-k (host/screen/screen.h) gives exactly the unscreened
 * result, and its bounds hold.
 *
 * 1. Bounds: with no cut, every (query, document) pair is offered with [lb, ub]; each
 *    must contain the exact fixed-order score (canon_dot.h). Inputs include rows whose
 *    bf16 rounding errors all point the same way (the Cauchy-Schwarz term is then nearly
 *    reached), mixed magnitudes, tiny and zero rows, K not a multiple of 32. The largest
 *    |exact - approx| / bound is printed: below 1 always, and not far below it on the
 *    aligned-error rows, so the bound is tight where it must be.
 * 2. mieb_screen_topk against a full sort of the exact scores (score descending, index
 *    ascending) over shapes around every blocking edge, k from 1 to n, ties, duplicate
 *    documents, near-ties inside the window, budgets small enough to hand queries back to
 *    the exact path, and a norm beyond 2^60 (the whole job handed back).
 * 3. The CPU backend's topk_block with the screen on and off: identical bits, 1-3 threads,
 *    at k = 1001 (screened with AMX) and k = 200 (also with VDPBF16PS, which needs more
 *    documents per k to pay).
 * Parts 1 and 2 run for each kernel this machine can run (AMX, VDPBF16PS); where it runs
 * neither (no AVX512_BF16), they report that they were skipped.
 * The int8 kernels (portable C everywhere, AVX2 where the CPU has it) run part 2 and:
 * 1b. their bound (docs/SCREEN_INT8.md) on 2.4 million pairs of random and adversarial rows
 *    (aligned residuals, rows exact in int8, one huge component, one-ulp variants, denormals,
 *    zero rows, K = 1 .. 4096), printing the largest |exact - approx| / bound;
 *    a mutation check: the bound halved, or without its rounding terms, must be caught
 *    (MIEB_TEST_I8_MUTATE=half|noround runs every part with that bound: the run fails);
 *    the portable and AVX2 kernels' lists are the same bits; lists against the full sort for
 *    the int8 adversaries; part 3 with the int8 screen (and, under auto, a block whose
 *    queries all have floors, which Zen 4 class CPUs screen with int8-vnni512);
 *    the AVX2 quantiser against the portable one on half-integer adversaries, and the
 *    portable, AVX2 and AVX-512 offers on random blocks with tied taus: the same bits.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "canon/canon_dot.h"
#include "screen/screen.h"
#include "screen/screen_base.h"
#include "../../host/math/screen_int8_math.h"
#include "check.h"
#include "check_ranked.h"

static unsigned long long rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_u64(void) { return check_rng_u64(&rng); }
static double uni(void) { return check_rng_uniform(&rng); }
static double gauss(void) { return sqrt(-2.0 * log(uni() + 1e-300)) * cos(6.283185307179586 * uni()); }

enum kind {
    K_UNIT, K_ALIGNED, K_MIXED, K_TINY, K_TIES, K_NEAR, K_ZERO_SOME, K_SUB,
    /* the int8 screen's adversaries */
    K_I8_ALIGNED, /* quantisation residual parallel to the K_I8_SIGNS rows: Cauchy-Schwarz nearly reached */
    K_I8_SIGNS,   /* +-127/128 with a shared sign pattern: exact in int8 (residual 0), large scores */
    K_HUGE,       /* one component 1e4 times the rest: quantisation crushes them to 0 */
    K_ONEULP,     /* one row, each copy one element moved by one ulp: near-ties at every rank */
    K_DENORM,     /* subnormal elements: a subnormal scale */
    K_I8_EXACT,   /* 3 q 2^-9, q in 1..127 with a shared sign pattern: residual 0, the canonical sum rounds */
    K_NKINDS
};

/* The sign pattern K_I8_ALIGNED and K_I8_SIGNS share. */
static double shared_sign(int64_t i) { return (((uint64_t)i * 2654435761u) >> 7) & 1 ? -1.0 : 1.0; }

static void normalize(float *v, int64_t dim)
{
    double s = 0;
    for (int64_t i = 0; i < dim; i++)
        s += (double)v[i] * v[i];
    float n = (float)sqrt(s);
    if (n > 0)
        for (int64_t i = 0; i < dim; i++)
            v[i] /= n;
}

/* n rows of dim floats of the given kind (docs of K_NEAR / K_TIES share structure). */
static void fill(float *v, int64_t n, int64_t dim, enum kind kd)
{
    float *base = malloc(sizeof(float) * (size_t)dim);
    for (int64_t i = 0; i < dim; i++)
        base[i] = (float)gauss();
    normalize(base, dim);
    for (int64_t r = 0; r < n; r++) {
        float *x = v + r * dim;
        for (int64_t i = 0; i < dim; i++) {
            switch (kd) {
            case K_UNIT:
            case K_ZERO_SOME:
                x[i] = (float)gauss();
                break;
            case K_ALIGNED: /* +-(1 + 2^-8 - 2^-16): bf16 rounds every element down by ~2^-8 */
                x[i] = (float)((next_u64() & 1 ? 1.0 : -1.0) * (1.0 + 0x1p-8 - 0x1p-16));
                break;
            case K_MIXED:
                x[i] = (float)ldexp(gauss(), (int)(next_u64() % 21) - 10);
                break;
            case K_TINY:
                x[i] = (float)ldexp(gauss(), -60);
                break;
            case K_SUB: /* 2^-63 .. 2^-70: products below 2^-126, which the bf16 kernels flush */
                x[i] = (float)ldexp(gauss(), -63 - (int)(next_u64() % 8));
                break;
            case K_TIES: /* few distinct small-integer rows: many exact ties and duplicates */
                x[i] = (float)((int)((next_u64() >> 7) % 3) - 1);
                break;
            case K_NEAR: /* the base row plus 1e-4 noise: scores packed inside one window */
                x[i] = base[i] + (float)(1e-4 * gauss());
                break;
            case K_I8_ALIGNED: /* (m + 0.49) / 128, m in 1..125; element 0 is 127/128 (scale 2^-7) */
                x[i] = (float)(shared_sign(i) * (i == 0 ? 127.0 : (double)(1 + next_u64() % 125) + 0.49) / 128.0);
                break;
            case K_I8_SIGNS: /* a few signs flipped so that the documents differ */
                x[i] = (float)(shared_sign(i) * (next_u64() % 16 == 0 ? -1.0 : 1.0) * 127.0 / 128.0);
                break;
            case K_HUGE:
                x[i] = (float)(i == r % dim ? 1e4 * (1.0 + uni()) : gauss());
                break;
            case K_ONEULP:
                x[i] = base[i];
                break;
            case K_I8_EXACT: /* scale exactly 3 2^-9 (element 0: q = 127), so x = s q exactly */
                x[i] = (float)(shared_sign(i) * (next_u64() % 8 == 0 ? -1.0 : 1.0) *
                               (double)(i == 0 ? 127 : 1 + (int)(next_u64() % 127)) * 3.0 * 0x1p-9);
                break;
            case K_NKINDS:
                break;
            case K_DENORM: /* 2^-130 .. 2^-149 */
                x[i] = (float)ldexp(gauss(), -130 - (int)(next_u64() % 20));
                break;
            }
        }
        if (kd == K_ONEULP && next_u64() % 2) {
            int64_t at = (int64_t)(next_u64() % (uint64_t)dim);
            x[at] = nextafterf(x[at], next_u64() % 2 ? INFINITY : -INFINITY);
        }
        if (kd == K_TIES && r > 0 && next_u64() % 3 == 0)
            memcpy(x, v + (int64_t)(next_u64() % (uint64_t)r) * dim, sizeof(float) * (size_t)dim);
        if (kd == K_UNIT || kd == K_NEAR || kd == K_ZERO_SOME)
            normalize(x, dim);
        if (kd == K_ZERO_SOME && next_u64() % 5 == 0)
            memset(x, 0, sizeof(float) * (size_t)dim);
    }
    free(base);
}


/* ---- 1. the bounds ---- */

static double g_worst_ratio[K_NKINDS];
static int64_t g_pairs_checked;
static int g_quiet; /* the mutation checks expect violations */

static int bound_case(int64_t m, int64_t n, int64_t K, enum kind qk, enum kind dk)
{
    float *Q = malloc(sizeof(float) * (size_t)(m * K)), *D = malloc(sizeof(float) * (size_t)(n * K));
    float *ex = malloc(sizeof(float) * (size_t)(m * n));
    fill(Q, m, K, qk);
    fill(D, n, K, dk);
    mieb_canon_gemm(Q, K, m, D, K, n, K, ex, n);
    struct screen_ctx cx = {0};
    cx.m = m;
    cx.m_pad = (m + 31) / 32 * 32;
    cx.n = n;
    cx.K = K;
    cx.KP = (K + 31) / 32 * 32;
    cx.k = n + 1; /* more than n: no list is ever cut, every pair is offered */
    cx.Q = Q;
    cx.D = D;
    cx.s_abs = (float)((double)(K + 64) * 0x1p-125 * (1.0 + 0x1p-20));
    cx.budget = (size_t)1 << 40;
    cx.lists = calloc((size_t)m, sizeof *cx.lists);
    cx.overflow = calloc((size_t)m, 1);
    cx.alpha = malloc(sizeof(float) * (size_t)cx.m_pad);
    cx.beta = malloc(sizeof(float) * (size_t)cx.m_pad);
    cx.tau = malloc(sizeof(float) * (size_t)cx.m_pad);
    for (int64_t q = 0; q < cx.m_pad; q++) {
        cx.alpha[q] = cx.beta[q] = 1.0f;
        cx.tau[q] = q < m ? -INFINITY : INFINITY;
    }
    for (int64_t q = 0; q < m; q++) {
        cx.lists[q].cut_at = (int32_t)n + 1;
        CHECK(mieb_screen_list_resize(&cx.lists[q], (int32_t)n + 1));
    }
    struct screen_buf *buf = NULL;
    int bad = 0;
    struct screen_i8_buf *ibuf = NULL;
    enum screen_kernel kern = mieb_screen_kernel();
    CHECK((SCREEN_KERNEL_IS_INT8(kern) ? mieb_screen_i8_pass(&cx, kern, &ibuf)
                                       : mieb_screen_pass(&cx, kern, &buf)) == MIEB_OK);
    CHECK(!cx.aborted);
    g_pairs_checked += m * n;
    for (int64_t q = 0; q < m && !cx.aborted; q++) {
        const struct screen_list *l = &cx.lists[q];
        if (l->n != n) {
            bad++;
            continue;
        }
        for (int32_t t = 0; t < l->n; t++) {
            int32_t idx = l->idx[t];
            float lb = l->lb[t], ub = l->ub[t];
            float f = ex[q * n + idx];
            if (idx != t || !(lb <= f && f <= ub)) {
                if (bad++ < 3 && !g_quiet)
                    fprintf(stderr, "bound: kinds %d/%d K %lld q %lld d %d: exact %a not in [%a, %a]\n", qk, dk,
                            (long long)K, (long long)q, idx, f, lb, ub);
            }
            /* the ratio from the float interval means something only where it is wider than
                   the roundings of its ends (a few ulp); narrower ones are only checked above */
            double a = 0.5 * ((double)lb + ub), e = 0.5 * ((double)ub - lb);
            double ratio = e > 8.0 * (nextafterf(fabsf(ub), INFINITY) - fabsf(ub)) ? fabs((double)f - a) / e : 0;
            int slot = qk == K_I8_ALIGNED ? K_I8_ALIGNED : dk;
            if (ratio > g_worst_ratio[slot])
                g_worst_ratio[slot] = ratio;
        }
    }
    for (int64_t q = 0; q < m; q++)
        free(cx.lists[q].idx);
    free(cx.lists);
    free(cx.overflow);
    free(cx.alpha);
    free(cx.beta);
    free(cx.tau);
    mieb_screen_buf_free(buf);
    mieb_screen_i8_buf_free(ibuf);
    free(Q);
    free(D);
    free(ex);
    return bad;
}

static void check_bounds(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {5, 33, 17}, {16, 64, 32}, {33, 300, 100}, {40, 257, 768}};
    int bad = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int kd = K_UNIT; kd <= K_ZERO_SOME; kd++)
            bad += bound_case(shapes[s][0], shapes[s][1], shapes[s][2], (enum kind)kd, (enum kind)kd);
    bad += bound_case(20, 200, 768, K_ALIGNED, K_ALIGNED);
    bad += bound_case(20, 200, 1000, K_MIXED, K_TINY);
    bad += bound_case(20, 200, 768, K_SUB, K_SUB); /* products the kernels flush (the norms' 2^-50 floor covers them) */
    bad += bound_case(20, 200, 768, K_TINY, K_SUB);
    CHECK_MSG(bad == 0, "%d exact scores outside their bounds", bad);
    printf("largest |exact - approx| / bound: unit %.3f aligned %.3f mixed %.3f tiny %.3f ties %.3f near %.3f "
           "subnormal products %.3f\n",
           g_worst_ratio[K_UNIT], g_worst_ratio[K_ALIGNED], g_worst_ratio[K_MIXED], g_worst_ratio[K_TINY],
           g_worst_ratio[K_TIES], g_worst_ratio[K_NEAR], g_worst_ratio[K_SUB]);
    /* the aligned rows nearly reach the Cauchy-Schwarz term: the bound is not loose there */
    CHECK_MSG(g_worst_ratio[K_ALIGNED] > 0.5, "aligned errors reach only %.3f of the bound", g_worst_ratio[K_ALIGNED]);
}

/* ---- the k-th largest lower bound (the cut's selection) against a sort ---- */

static int cmp_desc_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

static void check_selection(void)
{
    static uint32_t hist[2048];
    int bad = 0;
    for (int rep = 0; rep < 400; rep++) {
        int32_t n = 1 + (int32_t)(next_u64() % (rep < 200 ? 40 : 5000));
        float *lbs = malloc(sizeof(float) * (size_t)n);
        float *v = malloc(sizeof(float) * (size_t)n);
        int style = rep % 4;
        for (int32_t t = 0; t < n; t++) {
            double x = gauss();
            if (style == 1) /* few distinct values: ties at the k-th */
                x = (double)((int)(next_u64() % 5) - 2);
            else if (style == 2) /* +-0, subnormals, huge */
                x = (next_u64() % 3 == 0) ? ((next_u64() & 1) ? -0.0 : 0.0) : ldexp(x, (int)(next_u64() % 300) - 150);
            else if (style == 3) /* values that differ only in their last bits */
                x = 1.0 + ldexp((double)(next_u64() % 8), -23);
            lbs[t] = v[t] = (float)x;
        }
        qsort(v, (size_t)n, sizeof(float), cmp_desc_float);
        int64_t ks[3] = {1, 1 + (int64_t)(next_u64() % (uint64_t)n), n};
        uint32_t *keys = malloc(sizeof(uint32_t) * (size_t)n);
        for (int j = 0; j < 3; j++) {
            float got = mieb_screen_kth_lb(lbs, n, ks[j], hist, keys);
            if (!(got == v[ks[j] - 1])) { /* -0 == +0: either is the k-th then */
                if (bad++ < 3)
                    fprintf(stderr, "selection n %d k %lld style %d: %a, want %a\n", n, (long long)ks[j], style,
                            got, v[ks[j] - 1]);
            }
        }
        free(keys);
        free(lbs);
        free(v);
    }
    CHECK_MSG(bad == 0, "%d k-th largest selections wrong", bad);
}

/* ---- 2. the screened top-k against a full sort ---- */

/* A query's floor for the floor cases: the exact score at a random rank of its sorted list
   (ties at the floor included), or -inf, or above every score. */
static float pick_floor(const struct pair *ref, int64_t n, int64_t k)
{
    switch (next_u64() % 5) {
    case 0:
        return -INFINITY;
    case 1:
        return ref[0].s + 1.0f;
    default: {
        int64_t lim = k < n ? k : n;
        return ref[(int64_t)(next_u64() % (uint64_t)lim)].s;
    }
    }
}

/* with_floor: each query gets pick_floor's floor; its list must then equal the full sort in
   every entry scoring at or above the floor (the rest may differ). */
static int topk_case_f(int64_t m, int64_t n, int64_t K, int64_t k, enum kind qk, enum kind dk, size_t budget,
                       int64_t want_overflow_min, int expect_abort, int with_floor)
{
    float *Q = malloc(sizeof(float) * (size_t)(m * K)), *D = malloc(sizeof(float) * (size_t)(n * K));
    float *ex = malloc(sizeof(float) * (size_t)(m * n));
    float *os = malloc(sizeof(float) * (size_t)(m * k));
    int64_t *oi = malloc(sizeof(int64_t) * (size_t)(m * k)), *on = calloc((size_t)m, sizeof(int64_t));
    int64_t *ovf = malloc(sizeof(int64_t) * (size_t)m), n_ovf = -1;
    struct pair *ref = malloc(sizeof(struct pair) * (size_t)n);
    fill(Q, m, K, qk);
    fill(D, n, K, dk);
    if (expect_abort)
        D[(n / 2) * K] = 3e19f; /* one norm beyond 2^60 */
    mieb_canon_gemm(Q, K, m, D, K, n, K, ex, n);
    float *floor = NULL;
    if (with_floor) {
        floor = malloc(sizeof(float) * (size_t)m);
        for (int64_t q = 0; q < m; q++) {
            for (int64_t j = 0; j < n; j++) {
                ref[j].s = ex[q * n + j];
                ref[j].i = j;
            }
            check_rank_pairs(ref, n);
            floor[q] = pick_floor(ref, n, k);
        }
    }
    struct mieb_screen_scratch *sc = NULL;
    struct mieb_screen_stats stats = {0};
    int aborted = -1, bad = 0;
    const int64_t base = 1000;
    CHECK(mieb_screen_topk(&sc, Q, m, D, n, K, k, base, floor, budget, os, oi, on, ovf, &n_ovf, &aborted, &stats) ==
          MIEB_OK);
    if (expect_abort) {
        CHECK_MSG(aborted == 1, "a norm of 3e19 was not handed back (aborted %d)", aborted);
        goto out;
    }
    CHECK(aborted == 0);
    CHECK_MSG(n_ovf >= want_overflow_min, "budget %zu: %lld queries handed back, expected at least %lld", budget,
              (long long)n_ovf, (long long)want_overflow_min);
    unsigned char *handed = calloc((size_t)m, 1);
    for (int64_t x = 0; x < n_ovf; x++)
        handed[ovf[x]] = 1;
    int64_t keep = k < n ? k : n;
    for (int64_t q = 0; q < m && bad < 3; q++) {
        if (handed[q])
            continue;
        for (int64_t j = 0; j < n; j++) {
            ref[j].s = ex[q * n + j];
            ref[j].i = j;
        }
        check_rank_pairs(ref, n);
        int64_t want = keep;
        if (floor) { /* the reference's head at or above the floor, and the list's */
            int64_t got = on[q];
            while (want > 0 && !(ref[want - 1].s >= floor[q]))
                want--;
            while (got > 0 && !(os[q * k + got - 1] >= floor[q]))
                got--;
            if (got != want) {
                fprintf(stderr, "screen floor %a m %lld n %lld k %lld: query %lld has %lld at or above it, want %lld\n",
                        floor[q], (long long)m, (long long)n, (long long)k, (long long)q, (long long)got,
                        (long long)want);
                bad++;
                continue;
            }
        } else if (on[q] != keep) {
            fprintf(stderr, "screen m %lld n %lld K %lld k %lld: query %lld kept %lld, want %lld\n", (long long)m,
                    (long long)n, (long long)K, (long long)k, (long long)q, (long long)on[q], (long long)keep);
            bad++;
            continue;
        }
        for (int64_t r = 0; r < want; r++)
            if (memcmp(&ref[r].s, &os[q * k + r], sizeof(float)) || ref[r].i + base != oi[q * k + r]) {
                fprintf(stderr,
                        "screen kinds %d/%d m %lld n %lld K %lld k %lld: query %lld rank %lld: (%a, %lld), want "
                        "(%a, %lld)\n",
                        qk, dk, (long long)m, (long long)n, (long long)K, (long long)k, (long long)q, (long long)r,
                        os[q * k + r], (long long)oi[q * k + r], ref[r].s, (long long)(ref[r].i + base));
                bad++;
                break;
            }
    }
    free(handed);
out:
    free(floor);
    mieb_screen_scratch_free(sc);
    free(Q);
    free(D);
    free(ex);
    free(os);
    free(oi);
    free(on);
    free(ovf);
    free(ref);
    return bad;
}

static int topk_case(int64_t m, int64_t n, int64_t K, int64_t k, enum kind qk, enum kind dk, size_t budget,
                     int64_t want_overflow_min, int expect_abort)
{
    return topk_case_f(m, n, K, k, qk, dk, budget, want_overflow_min, expect_abort, 0);
}

static void check_topk(void)
{
    const size_t big = (size_t)1 << 34;
    struct {
        int64_t m, n, K, k;
        enum kind qk, dk;
    } cases[] = {
        {1, 1, 1, 1, K_UNIT, K_UNIT},          {3, 40, 7, 5, K_UNIT, K_UNIT},
        {17, 300, 33, 1, K_UNIT, K_UNIT},      {31, 513, 64, 10, K_UNIT, K_UNIT},
        {33, 2100, 768, 100, K_UNIT, K_UNIT},  {64, 5000, 128, 1001, K_UNIT, K_UNIT},
        {8, 3000, 100, 2999, K_UNIT, K_UNIT},  {8, 3000, 100, 3000, K_UNIT, K_UNIT},
        {8, 700, 100, 1001, K_UNIT, K_UNIT},   {40, 4000, 48, 50, K_TIES, K_TIES},
        {40, 4000, 48, 1001, K_TIES, K_TIES},  {20, 3000, 256, 30, K_NEAR, K_NEAR},
        {20, 3000, 256, 30, K_UNIT, K_NEAR},   {25, 2500, 96, 40, K_MIXED, K_MIXED},
        {25, 2500, 96, 40, K_ZERO_SOME, K_ZERO_SOME}, {10, 2000, 768, 20, K_ALIGNED, K_ALIGNED},
        {10, 2000, 200, 20, K_TINY, K_TINY},    {10, 2000, 200, 20, K_SUB, K_SUB},
    };
    int bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        bad += topk_case(cases[c].m, cases[c].n, cases[c].K, cases[c].k, cases[c].qk, cases[c].dk, big, 0, 0);
    CHECK_MSG(bad == 0, "%d screened lists differ from the full sort", bad);
    bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        bad += topk_case_f(cases[c].m, cases[c].n, cases[c].K, cases[c].k, cases[c].qk, cases[c].dk, big, 0, 0, 1);
    CHECK_MSG(bad == 0, "%d screened lists with floors differ from the full sort above their floor", bad);
    /* a budget for the initial lists of only some queries: the rest are handed back */
    size_t per = SCREEN_ENTRY_BYTES * (size_t)(2 * 50 + 64);
    CHECK(topk_case(40, 3000, 64, 50, K_UNIT, K_UNIT, per * 10, 30, 0) == 0);
    /* near-ties in one window: lists must grow; a budget that stops the growth hands them back */
    CHECK(topk_case(12, 6000, 64, 20, K_NEAR, K_NEAR, per * 12 + per, 1, 0) == 0);
    CHECK(topk_case(12, 6000, 64, 20, K_NEAR, K_NEAR, big, 0, 0) == 0);
    CHECK(topk_case(12, 3000, 64, 20, K_UNIT, K_UNIT, big, 0, 1) == 0);
}

/* ---- 1b. the int8 bound (docs/SCREEN_INT8.md) on millions of pairs ---- */

static void check_bounds_int8(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {5, 33, 7}, {7, 50, 17}, {33, 300, 100}, {40, 257, 769}};
    static const enum kind kinds[] = {K_UNIT, K_MIXED, K_TINY, K_TIES, K_NEAR, K_ZERO_SOME,
                                      K_SUB, K_HUGE, K_ONEULP, K_DENORM};
    int bad = 0;
    g_pairs_checked = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t c = 0; c < sizeof kinds / sizeof kinds[0]; c++)
            bad += bound_case(shapes[s][0], shapes[s][1], shapes[s][2], kinds[c], kinds[c]);
    /* the bulk: random and adversarial rows, about 2.5 million pairs */
    for (size_t c = 0; c < sizeof kinds / sizeof kinds[0]; c++)
        bad += bound_case(48, 4000, c % 2 ? 96 : 33, kinds[c], kinds[c]);
    bad += bound_case(30, 4000, 512, K_UNIT, K_NEAR);
    bad += bound_case(30, 2000, 768, K_HUGE, K_UNIT);
    bad += bound_case(30, 2000, 768, K_I8_ALIGNED, K_I8_SIGNS); /* the Cauchy-Schwarz term nearly reached */
    bad += bound_case(8, 300, 4096, K_I8_EXACT, K_I8_EXACT);    /* residual 0: only the roundings remain */
    bad += bound_case(20, 300, 333, K_DENORM, K_UNIT);
    CHECK_MSG(bad == 0, "%d exact scores outside their int8 bounds", bad);
    double worst = 0;
    for (int kd = 0; kd < K_NKINDS; kd++)
        worst = g_worst_ratio[kd] > worst ? g_worst_ratio[kd] : worst;
    printf("int8 bound: %lld pairs, largest |exact - approx| / bound %.4f; per document kind: unit %.3f mixed %.3f "
           "tiny %.3f ties %.3f near %.3f zero %.3f subnormal products %.3f huge %.3f one-ulp %.3f denormal %.3f "
           "aligned residuals %.4f exact-int8 %.3f\n",
           (long long)g_pairs_checked, worst, g_worst_ratio[K_UNIT], g_worst_ratio[K_MIXED], g_worst_ratio[K_TINY],
           g_worst_ratio[K_TIES], g_worst_ratio[K_NEAR], g_worst_ratio[K_ZERO_SOME], g_worst_ratio[K_SUB],
           g_worst_ratio[K_HUGE], g_worst_ratio[K_ONEULP], g_worst_ratio[K_DENORM], g_worst_ratio[K_I8_ALIGNED],
           g_worst_ratio[K_I8_EXACT]);
    CHECK(g_pairs_checked >= 2000000);
    /* rows whose residual is parallel to the documents reach the Cauchy-Schwarz term: the
       bound is not loose where it matters */
    CHECK_MSG(g_worst_ratio[K_I8_ALIGNED] > 0.9, "aligned residuals reach only %.3f of the bound",
              g_worst_ratio[K_I8_ALIGNED]);
}

/* The mutation checks: a bound scaled by 0.5, or without its rounding terms, must be caught
   by the bound test above (the same cases), else that test proves nothing. */
static void check_int8_mutations(void)
{
    g_quiet = 1;
    mieb_screen_i8_test_bound_scale = 0.5f;
    int bad_half = bound_case(30, 2000, 768, K_I8_ALIGNED, K_I8_SIGNS);
    mieb_screen_i8_test_bound_scale = 1.0f;
    mieb_screen_i8_test_drop_rounding = 1;
    int bad_round = bound_case(8, 300, 4096, K_I8_EXACT, K_I8_EXACT);
    mieb_screen_i8_test_drop_rounding = 0;
    g_quiet = 0;
    memset(g_worst_ratio, 0, sizeof g_worst_ratio); /* the mutants' ratios are not the bound's */
    printf("int8 mutations: bound x 0.5 -> %d pairs outside, rounding terms dropped -> %d pairs outside\n", bad_half,
           bad_round);
    CHECK_MSG(bad_half > 0, "a bound halved went unnoticed");
    CHECK_MSG(bad_round > 0, "a bound without its rounding terms went unnoticed");
}

/* The portable and AVX2 kernels: the same integers, hence the same candidate lists, bit for bit. */
static void check_int8_kernels_agree(void)
{
    if (!mieb_screen_kernel_usable(SCREEN_KERNEL_INT8_AVX2)) {
        printf("test_screen: int8-avx2 cannot run here: kernel agreement skipped\n");
        return;
    }
    int64_t m = 13, n = 700, K = 77;
    float *Q = malloc(sizeof(float) * (size_t)(m * K)), *D = malloc(sizeof(float) * (size_t)(n * K));
    fill(Q, m, K, K_MIXED);
    fill(D, n, K, K_MIXED);
    struct screen_list *got[2];
    for (int v = 0; v < 2; v++) {
        struct screen_ctx cx = {0};
        cx.m = m;
        cx.m_pad = 32;
        cx.n = n;
        cx.K = K;
        cx.k = n + 1;
        cx.Q = Q;
        cx.D = D;
        cx.budget = (size_t)1 << 40;
        cx.lists = got[v] = calloc((size_t)m, sizeof *cx.lists);
        cx.overflow = calloc((size_t)m, 1);
        float al[32], be[32], tau[32];
        cx.alpha = al;
        cx.beta = be;
        cx.tau = tau;
        for (int q = 0; q < 32; q++)
            tau[q] = q < m ? -INFINITY : INFINITY;
        for (int64_t q = 0; q < m; q++) {
            cx.lists[q].cut_at = (int32_t)n + 1;
            CHECK(mieb_screen_list_resize(&cx.lists[q], (int32_t)n + 1));
        }
        struct screen_i8_buf *ib = NULL;
        CHECK(mieb_screen_i8_pass(&cx, v ? SCREEN_KERNEL_INT8_AVX2 : SCREEN_KERNEL_INT8_SCALAR, &ib) == MIEB_OK);
        mieb_screen_i8_buf_free(ib);
        free(cx.overflow);
    }
    int diff = 0;
    for (int64_t q = 0; q < m; q++) {
        diff += got[0][q].n != got[1][q].n || memcmp(got[0][q].idx, got[1][q].idx, 4 * (size_t)n) ||
                memcmp(got[0][q].lb, got[1][q].lb, 4 * (size_t)n) || memcmp(got[0][q].ub, got[1][q].ub, 4 * (size_t)n);
        free(got[0][q].idx);
        free(got[1][q].idx);
    }
    CHECK_MSG(diff == 0, "%d queries' int8 lists differ between the portable and the AVX2 kernel", diff);
    free(got[0]);
    free(got[1]);
    free(Q);
    free(D);
}

/* The AVX2 quantiser against the portable one (the definition the GPU runs too): the same
   integers, scale and norm bounds, bit for bit, on rows with elements at and within a few
   ulps of the half-integers of x / s (where a rounding that is not x / s's, or not to
   nearest even, shows), random rows, exact multiples of s, scales near and below the
   smallest normal float, subnormal elements and K not a multiple of 8. */
static void check_int8_quantisers_agree(void)
{
    if (!mieb_screen_kernel_usable(SCREEN_KERNEL_INT8_AVX2)) {
        printf("test_screen: int8-avx2 cannot run here: quantiser agreement skipped\n");
        return;
    }
    static const int64_t Ks[] = {1, 3, 7, 8, 9, 16, 33, 100, 512, 768, 769};
    static const float mxs[] = {100.0f, 1.0f, 3.7e-3f, 1e30f, 64.0f, 127.0f, 0x1p-120f, 0x1p-127f, 0x1p-140f};
    int bad = 0, rows = 0;
    int64_t near_half = 0;
    for (int t = 0; t < 3000; t++) {
        int64_t K = Ks[next_u64() % (sizeof Ks / sizeof Ks[0])], KP = (K + 3) / 4 * 4;
        float mx = t % 3 == 0 ? (float)(uni() * 1000.0) + 1e-3f : mxs[next_u64() % (sizeof mxs / sizeof mxs[0])];
        float sc = mx / 127.0f, *x = malloc(sizeof(float) * (size_t)K);
        int16_t *o0 = malloc(sizeof(int16_t) * (size_t)KP), *o1 = malloc(sizeof(int16_t) * (size_t)KP);
        int kind = (int)(next_u64() % 3);
        for (int64_t k = 0; k < K; k++) {
            float v;
            if (kind == 0) {
                v = (float)((2.0 * uni() - 1.0) * mx);
            } else {
                double tgt = (double)((int)(next_u64() % 253) - 126) + (kind == 1 ? 0.5 : 0.0);
                v = (float)(tgt * (double)sc);
                for (int j = (int)(next_u64() % 9) - 4; j != 0; j += j > 0 ? -1 : 1)
                    v = nextafterf(v, j > 0 ? INFINITY : -INFINITY);
            }
            if (fabsf(v) > mx)
                v = copysignf(mx, v);
            double z = (double)v / (double)sc, fr = z - floor(z);
            near_half += sc > 0.0f && fabs(fr - 0.5) <= 1e-6 * fabs(z);
            x[k] = v;
        }
        x[next_u64() % (uint64_t)K] = next_u64() & 1 ? mx : -mx; /* the row's largest magnitude */
        float s0 = 0, n0 = 0, r0 = 0, h0 = 0, s1 = 0, n1 = 0, r1 = 0, h1 = 0;
        int ok0 = mieb_screen_i8_quantise(x, K, KP, o0, &s0, &n0, &r0, &h0);
        int ok1 = mieb_screen_i8_quantise_avx2(x, K, KP, o1, &s1, &n1, &r1, &h1);
        bad += ok0 != ok1 || memcmp(o0, o1, sizeof(int16_t) * (size_t)KP) ||
               (ok0 && (memcmp(&s0, &s1, 4) || memcmp(&n0, &n1, 4) || memcmp(&r0, &r1, 4) || memcmp(&h0, &h1, 4)));
        rows++;
        free(x);
        free(o0);
        free(o1);
    }
    printf("int8 quantisers: %d rows, %lld elements within 1e-6 of a half-integer of x / s, %d differ\n", rows,
           (long long)near_half, bad);
    CHECK_MSG(bad == 0, "%d rows quantise differently with AVX2", bad);
    CHECK(near_half > 1000);
}

/* The three int8 offers (portable, AVX2, AVX-512) on the same blocks of integer scores: the
   same lists, bit for bit, when no cut falls inside a block. The taus are the intervals'
   own upper bounds (ties: ub == tau must be taken), bounds just above and below them, -inf
   and +inf; blocks with fewer live documents and queries than a full tile; integers up to
   the int32 range, zero scales and zero norms. */
static void check_int8_offers_agree(void)
{
    static const struct {
        screen_i8_offer_fn fn;
        int usable;
        const char *name;
    } offers[] = {{mieb_screen_i8_offer_scalar, 1, "portable"},
                  {mieb_screen_i8_offer_avx2, SCREEN_KERNEL_INT8_AVX2, "avx2"},
                  {mieb_screen_i8_offer_avx512, SCREEN_KERNEL_INT8_VNNI512, "avx512"}};
    enum { NQ = 12, TRIALS = 4000 };
    int n_off = 0, idx[3];
    for (int v = 0; v < 3; v++)
        if (offers[v].usable == 1 || mieb_screen_kernel_usable((enum screen_kernel)offers[v].usable))
            idx[n_off++] = v;
        else
            printf("test_screen: int8 offer %s cannot run here: skipped\n", offers[v].name);
    int32_t dots[NQ * SCREEN_I8_ND] __attribute__((aligned(64)));
    float sq[NQ], sd[SCREEN_I8_ND], nd[SCREEN_I8_ND], rnd[SCREEN_I8_ND], al[32], be[32], tau[3][32];
    struct screen_list lists[3][NQ];
    memset(lists, 0, sizeof lists);
    for (int v = 0; v < 3; v++)
        for (int q = 0; q < NQ; q++)
            CHECK(mieb_screen_list_resize(&lists[v][q], SCREEN_I8_ND * 2));
    int differ = 0, ties = 0, taken = 0;
    for (int t = 0; t < TRIALS; t++) {
        int nq = 1 + (int)(next_u64() % NQ), live = 1 + (int)(next_u64() % SCREEN_I8_ND);
        float sabs = (next_u64() % 4 == 0) ? 0.0f : ldexpf(1.0f + (float)uni(), -100);
        for (int i = 0; i < NQ * SCREEN_I8_ND; i++) {
            int r = (int)(next_u64() % 8);
            dots[i] = r == 0   ? 0
                      : r == 1 ? (next_u64() % 2 ? INT32_MAX : -INT32_MAX)
                               : (int32_t)((int64_t)(next_u64() % 4000001) - 2000000);
        }
        for (int j = 0; j < SCREEN_I8_ND; j++) {
            sd[j] = next_u64() % 10 == 0 ? 0.0f : ldexpf((float)uni(), -7);
            nd[j] = next_u64() % 10 == 0 ? 0.0f : (float)uni();
            rnd[j] = nd[j] * ldexpf((float)uni(), -8);
        }
        for (int i = 0; i < nq; i++) {
            sq[i] = next_u64() % 10 == 0 ? 0.0f : ldexpf((float)uni(), -7);
            al[i] = ldexpf((float)uni(), -8);
            be[i] = (float)uni();
            int r = (int)(next_u64() % 6), j = (int)(next_u64() % (unsigned)live);
            float lb, ub;
            mieb_screen_i8_interval(dots[i * SCREEN_I8_ND + j], sq[i], sd[j], al[i], be[i], nd[j], rnd[j], sabs, &lb, &ub);
            float tv = r == 0 ? -INFINITY : r == 1 ? INFINITY : r == 2 ? nextafterf(ub, INFINITY)
                     : r == 3 ? nextafterf(ub, -INFINITY) : ub;
            ties += r >= 4;
            for (int v = 0; v < 3; v++)
                tau[v][i] = tv;
        }
        for (int w = 0; w < n_off; w++) {
            int v = idx[w];
            struct screen_ctx cx = {0};
            cx.m = nq;
            cx.alpha = al;
            cx.beta = be;
            cx.tau = tau[v];
            cx.s_abs = sabs;
            cx.lists = lists[v];
            for (int q = 0; q < nq; q++) {
                lists[v][q].n = 0;
                lists[v][q].cut_at = SCREEN_I8_ND + 1; /* never reached: no cut */
            }
            struct screen_i8_offer o = {dots, 0, nq, 1000 * t, live, sq, sd, nd, rnd};
            offers[v].fn(&cx, &o);
        }
        for (int q = 0; q < nq; q++) {
            const struct screen_list *a = &lists[idx[0]][q];
            taken += a->n;
            for (int w = 1; w < n_off; w++) {
                const struct screen_list *b = &lists[idx[w]][q];
                differ += a->n != b->n || memcmp(a->idx, b->idx, 4 * (size_t)a->n) ||
                          memcmp(a->lb, b->lb, 4 * (size_t)a->n) || memcmp(a->ub, b->ub, 4 * (size_t)a->n);
            }
        }
    }
    printf("int8 offers: %d kernels, %d blocks, %d entries taken, %d taus equal to an upper bound\n", n_off, TRIALS,
           taken, ties);
    CHECK_MSG(differ == 0, "%d query blocks' int8 lists differ between the offers", differ);
    CHECK(ties > 0 && taken > 0);
    for (int v = 0; v < 3; v++)
        for (int q = 0; q < NQ; q++)
            free(lists[v][q].idx);
}

/* Part 2's lists for the int8 screen's adversaries: near-ties at the k-th score (duplicates,
   one-ulp differences), one huge component, zero and subnormal rows, K not a multiple of the
   vector width, k larger than the block. */
static void check_topk_int8(void)
{
    const size_t big = (size_t)1 << 34;
    struct {
        int64_t m, n, K, k;
        enum kind qk, dk;
    } cases[] = {
        {9, 3000, 1, 10, K_UNIT, K_UNIT},        {9, 3000, 7, 50, K_UNIT, K_UNIT},
        {13, 3001, 17, 100, K_UNIT, K_UNIT},    {7, 2500, 769, 30, K_UNIT, K_UNIT},
        {20, 3000, 64, 40, K_UNIT, K_ONEULP},   {20, 3000, 64, 40, K_ONEULP, K_ONEULP},
        {20, 3000, 96, 20, K_HUGE, K_HUGE},     {20, 3000, 96, 20, K_UNIT, K_HUGE},
        {20, 3000, 96, 20, K_DENORM, K_DENORM}, {20, 3000, 96, 20, K_ZERO_SOME, K_ZERO_SOME},
        {12, 2000, 256, 25, K_I8_ALIGNED, K_I8_SIGNS}, {6, 500, 33, 1001, K_UNIT, K_UNIT},
    };
    int bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bad += topk_case(cases[c].m, cases[c].n, cases[c].K, cases[c].k, cases[c].qk, cases[c].dk, big, 0, 0);
        bad += topk_case_f(cases[c].m, cases[c].n, cases[c].K, cases[c].k, cases[c].qk, cases[c].dk, big, 0, 0, 1);
    }
    /* one-ulp near-ties under a budget too small for them: handed back, still exact */
    size_t per = SCREEN_ENTRY_BYTES * (size_t)(2 * 20 + 64);
    bad += topk_case(12, 6000, 64, 20, K_ONEULP, K_ONEULP, per * 12 + per, 1, 0);
    CHECK_MSG(bad == 0, "%d int8-screened lists differ from the full sort", bad);
}

/* ---- 3. through the backend: screen on == screen off ---- */

static void check_backend_k(int64_t k)
{
    int64_t nq = 70, nd = 9000, dim = 200;
    float *q = malloc(sizeof(float) * (size_t)(nq * dim)), *d = malloc(sizeof(float) * (size_t)(nd * dim));
    fill(q, nq, dim, K_UNIT);
    fill(d, nd, dim, K_UNIT);
    memcpy(d + 5 * dim, d + 4000 * dim, sizeof(float) * (size_t)dim); /* a duplicate document */
    struct mieb_vecs qv = {q, NULL, nq, nq, dim}, dv = {d, NULL, nd, nd, dim};
    float *s_on = malloc(sizeof(float) * (size_t)(nq * k)), *s_off = malloc(sizeof(float) * (size_t)(nq * k));
    int64_t *i_on = malloc(sizeof(int64_t) * (size_t)(nq * k)), *i_off = malloc(sizeof(int64_t) * (size_t)(nq * k));
    for (int threads = 1; threads <= 3; threads++) {
        for (int on = 0; on <= 1; on++) {
            struct mieb_backend *be = NULL;
            struct mieb_backend_opts opts = {.n_threads = threads, .mem_limit = (size_t)1 << 30};
            struct mieb_qset *qs = NULL;
            mieb_screen_set_enabled(on);
            CHECK(mieb_backend_cpu_init(&opts, &be) == MIEB_OK);
            CHECK(mieb_backend_prepare_queries(be, &qv, MIEB_SIM_COSINE, &qs) == MIEB_OK);
            CHECK(mieb_backend_topk_block(be, qs, &dv, k, on ? s_on : s_off, on ? i_on : i_off) == MIEB_OK);
            mieb_backend_release_queries(be, qs);
            mieb_backend_free(be);
        }
        CHECK_MSG(!memcmp(s_on, s_off, sizeof(float) * (size_t)(nq * k)) &&
                      !memcmp(i_on, i_off, sizeof(int64_t) * (size_t)(nq * k)),
                  "k %lld, threads %d: screened topk_block differs from the exact one", (long long)k, threads);
    }
    /* topk_block_floor: the head at or above each floor equals topk_block's (s_off, i_off
       from the exact way above), screened or not; floors at some rank, -inf, above all; then
       every query floored (auto may then take another kernel: mieb_screen_kernel_name_for) */
    float *fl = malloc(sizeof(float) * (size_t)nq);
    int64_t *n_fl = malloc(sizeof(int64_t) * (size_t)nq), *want = malloc(sizeof(int64_t) * (size_t)nq);
    for (int all = 0; all <= 1; all++) {
        for (int64_t r = 0; r < nq; r++)
            fl[r] = r % 7 == 0 ? (all ? s_off[r * k + k - 1] : -INFINITY)
                    : r % 7 == 1 ? s_off[r * k] + 1.0f : s_off[r * k + (int64_t)(next_u64() % (uint64_t)k)];
        for (int64_t r = 0; r < nq; r++) { /* the exact list's entries at or above the floor */
            want[r] = 0;
            while (want[r] < k && s_off[r * k + want[r]] >= fl[r])
                want[r]++;
        }
        if (all)
            printf("test_screen: k %lld, every query floored: screened by %s (pays: %d)\n", (long long)k,
                   mieb_screen_kernel_name_for(1), mieb_screen_pays(nd, k, 1));
        for (int on = 0; on <= 1; on++) {
            struct mieb_backend *be = NULL;
            struct mieb_backend_opts opts = {.n_threads = 2, .mem_limit = (size_t)1 << 30};
            struct mieb_qset *qs = NULL;
            mieb_screen_set_enabled(on);
            CHECK(mieb_backend_cpu_init(&opts, &be) == MIEB_OK);
            CHECK(mieb_backend_prepare_queries(be, &qv, MIEB_SIM_COSINE, &qs) == MIEB_OK);
            CHECK(mieb_backend_topk_block_floor(be, qs, nq, &dv, k, fl, s_on, i_on, n_fl) == MIEB_OK);
            int bad = 0;
            for (int64_t r = 0; r < nq; r++)
                bad += n_fl[r] != want[r] || memcmp(s_on + r * k, s_off + r * k, sizeof(float) * (size_t)want[r]) ||
                       memcmp(i_on + r * k, i_off + r * k, sizeof(int64_t) * (size_t)want[r]);
            CHECK_MSG(bad == 0, "screen %d, all floored %d: %d floored lists differ from topk_block's head", on, all,
                      bad);
            mieb_backend_release_queries(be, qs);
            mieb_backend_free(be);
        }
    }
    free(fl);
    free(n_fl);
    free(want);
    mieb_screen_set_enabled(1);
    free(q);
    free(d);
    free(s_on);
    free(s_off);
    free(i_on);
    free(i_off);
}

int main(void)
{
    static const struct {
        enum screen_kernel kern;
        const char *name;
    } kernels[] = {{SCREEN_KERNEL_AMX, "amx"},
                   {SCREEN_KERNEL_AVX512BF16, "avx512bf16"},
                   {SCREEN_KERNEL_INT8_SCALAR, "int8-scalar"},
                   {SCREEN_KERNEL_INT8_AVX2, "int8-avx2"},
                   {SCREEN_KERNEL_INT8_AVXVNNI, "int8-avxvnni"},
                   {SCREEN_KERNEL_INT8_VNNI512, "int8-vnni512"},
                   {SCREEN_KERNEL_INT8_AMX, "int8-amx"}};
    /* MIEB_TEST_I8_MUTATE=half|noround runs every test below with that too-tight bound:
       the run must fail (docs/SCREEN_INT8.md, the mutation test) */
    const char *mut = getenv("MIEB_TEST_I8_MUTATE");
    int ran = 0;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        if (!mieb_screen_kernel_usable(kernels[i].kern)) {
            printf("test_screen: kernel %s cannot run here: skipped\n", kernels[i].name);
            continue;
        }
        CHECK(mieb_screen_force_kernel(kernels[i].kern) == 0);
        memset(g_worst_ratio, 0, sizeof g_worst_ratio);
        printf("test_screen: kernel %s\n", kernels[i].name);
        if (SCREEN_KERNEL_IS_INT8(kernels[i].kern)) {
            if (!mut)
                check_int8_mutations();
            mieb_screen_i8_test_bound_scale = mut && !strcmp(mut, "half") ? 0.5f : 1.0f;
            mieb_screen_i8_test_drop_rounding = mut && !strcmp(mut, "noround");
            check_bounds_int8();
            check_topk_int8();
        } else {
            check_bounds();
        }
        check_topk();
        if (SCREEN_KERNEL_IS_INT8(kernels[i].kern)) /* screen on == off through the backend */
            check_backend_k(200);
        ran += !SCREEN_KERNEL_IS_INT8(kernels[i].kern);
    }
    check_int8_kernels_agree();
    check_int8_offers_agree();
    check_int8_quantisers_agree();
    mieb_screen_force_kernel(SCREEN_KERNEL_NONE);
    if (!ran)
        printf("test_screen: no AVX512_BF16 here: the bf16 screen never runs, its bounds and lists were not tested\n");
    check_selection();
    check_backend_k(1001);
    check_backend_k(200);
    return check_done("test_screen");
}
