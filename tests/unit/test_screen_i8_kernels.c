/*
 * test_screen_i8_kernels.c - the int8 screen's VNNI and AMX-INT8 kernels give the same
 * integers, and so the same candidate lists, as the portable kernel, on any CPU.
 *
 * Most machines lack some of these units (AVX512_VNNI: AMD Zen 4 and later, Intel Ice Lake
 * and later servers; AVX-VNNI: Intel Alder Lake and later, AMD Zen 5; AMX-INT8: Intel
 * Sapphire Rapids and later), so each kernel's own source is also compiled against models of
 * its instructions (i8_emu/: SIMDe's portable intrinsics, and a model of the AMX tiles from
 * Intel's pseudocode) and run here. Where the CPU has the unit, the real kernel runs too.
 *
 * 1. Integers: each kernel (model and, where it can run, native) against a plain int64 dot
 *    product of the int16 rows, on random integers in [-127, 127], on +-127 everywhere, on
 *    zero rows, at K = 1, 3, 4, 5, 63, 64, 65, 127, 768, 769, 4096, and at K = 133,000
 *    (SCREEN_I8_MAX_K's neighbourhood) with every integer 127: I reaches 2,145,157,000 and
 *    VPDPBUSD's unsigned operand takes its sums past 2^31, so the correction's wrap-around
 *    is exercised. The portable quad kernel is checked the same way.
 * 2. Lists: the int8 pass with each kernel (mieb_screen_i8_pass_with) against the pass with
 *    the portable pair kernel, every (query, document) offered (tau = -inf), on Gaussian rows,
 *    duplicates, zero rows, a huge component and K not a multiple of 4, 64; query and
 *    document counts not multiples of the kernels' tiles. lb, ub and indices bit for bit.
 * 3. The checks can fail: a kernel one integer off, and the VNNI kernel fed documents without
 *    their +128, must each change the lists.
 * 4. The AVX2 packing of documents into the quad layout gives the portable packing's bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "screen/screen.h"
#include "screen/screen_base.h"

/* The kernels compiled against the models (i8_emu/i8_emu.h). */
void mieb_screen_i8_dots_vnni512_emu(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                     int32_t *out);
void mieb_screen_i8_dots_avxvnni_emu(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                     int32_t *out);
void mieb_screen_i8_dots_amx_emu(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                 int32_t *out);
void mieb_screen_i8_amx_begin_emu(void);
void mieb_screen_i8_amx_end_emu(void);

static unsigned long long rng = 0x9E3779B97F4A7C15ull;

/* The portable quad kernel at each tile shape, as a kernel function. */
static void quad_12_u8(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qs, int32_t *out)
{
    mieb_screen_i8_quad_dots_scalar(qa, KQ, dv, qs, out, 12, 1, 1);
}
static void quad_6_u8(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qs, int32_t *out)
{
    mieb_screen_i8_quad_dots_scalar(qa, KQ, dv, qs, out, 6, 1, 1);
}
static void quad_32x2_s8(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qs, int32_t *out)
{
    mieb_screen_i8_quad_dots_scalar(qa, KQ, dv, qs, out, 32, 2, 0);
}

struct kernel_case {
    const char *name;
    enum screen_kernel native; /* the real kernel's id (run where usable), or NONE */
    struct screen_i8_kernel kd; /* the model's (or the portable quad kernel's) description; packing: portable */
};

static struct kernel_case g_cases[] = {
    {"vnni512 model", SCREEN_KERNEL_INT8_VNNI512,
     {SCREEN_I8_VNNI512_MQ, 1, SCREEN_I8_KSTEP, 1, NULL, mieb_screen_i8_dots_vnni512_emu, mieb_screen_i8_quantise,
      mieb_screen_i8_offer_scalar, NULL, NULL, NULL}},
    {"avxvnni model", SCREEN_KERNEL_INT8_AVXVNNI,
     {SCREEN_I8_AVXVNNI_MQ, 1, SCREEN_I8_KSTEP, 1, NULL, mieb_screen_i8_dots_avxvnni_emu, mieb_screen_i8_quantise,
      mieb_screen_i8_offer_scalar, NULL, NULL, NULL}},
    {"amx-int8 model", SCREEN_KERNEL_INT8_AMX,
     {SCREEN_I8_AMX_MQ, SCREEN_I8_AMX_NG, SCREEN_I8_AMX_KSTEP, 0, NULL, mieb_screen_i8_dots_amx_emu,
      mieb_screen_i8_quantise, mieb_screen_i8_offer_scalar, mieb_screen_i8_amx_begin_emu,
      mieb_screen_i8_amx_end_emu, NULL}},
    {"portable quads 12 x 16, u8", SCREEN_KERNEL_NONE,
     {12, 1, SCREEN_I8_KSTEP, 1, NULL, quad_12_u8, mieb_screen_i8_quantise, mieb_screen_i8_offer_scalar, NULL, NULL, NULL}},
    {"portable quads 6 x 16, u8", SCREEN_KERNEL_NONE,
     {6, 1, SCREEN_I8_KSTEP, 1, NULL, quad_6_u8, mieb_screen_i8_quantise, mieb_screen_i8_offer_scalar, NULL, NULL, NULL}},
    {"portable quads 32 x 32, s8", SCREEN_KERNEL_NONE,
     {32, 2, 64, 0, NULL, quad_32x2_s8, mieb_screen_i8_quantise, mieb_screen_i8_offer_scalar, NULL, NULL, NULL}},
};
#define N_CASES (int)(sizeof g_cases / sizeof g_cases[0])

/* ---- 1. integers ---- */

enum pattern { P_RANDOM, P_EXTREME, P_ZERO_SOME, P_ALL_MAX, P_OPPOSED_MAX };

static int16_t value(enum pattern p, int row, int is_query)
{
    switch (p) {
    case P_RANDOM:
        return (int16_t)((int)(check_rng_u64(&rng) % 255) - 127);
    case P_EXTREME:
        return check_rng_u64(&rng) & 1 ? 127 : -127;
    case P_ZERO_SOME: /* every third row zero, the others random */
        return row % 3 == 1 ? 0 : (int16_t)((int)(check_rng_u64(&rng) % 255) - 127);
    case P_ALL_MAX:
        return 127;
    default: /* queries -127, documents 127: I = -127^2 K */
        return is_query ? -127 : 127;
    }
}

/* One call of a kernel (the model kd, or the native one) on mq x 16 ng rows of pattern p
   at dimension K, against int64 dot products of the int16 rows. Returns the mismatches. */
static int dots_case(const struct screen_i8_kernel *kd, screen_i8q_dots_fn fn, int64_t K, enum pattern p)
{
    int mq = kd->mq, nd = SCREEN_I8_ND * kd->ng;
    int64_t KP = (K + 3) / 4 * 4, KQ = (K + kd->kstep - 1) / kd->kstep * kd->kstep;
    int16_t *q16 = calloc((size_t)(mq * KP), sizeof *q16), *d16 = calloc((size_t)(nd * KP), sizeof *d16);
    int8_t *qa = aligned_alloc(64, (size_t)((mq * KQ + 63) / 64 * 64));
    uint8_t *dv = aligned_alloc(64, (size_t)((nd * KQ + 63) / 64 * 64));
    int32_t *qsum = calloc((size_t)mq, sizeof *qsum), *out = aligned_alloc(64, sizeof(int32_t) * 64 * 32);
    for (int i = 0; i < mq; i++)
        for (int64_t k = 0; k < K; k++)
            q16[i * KP + k] = value(p, i, 1);
    for (int j = 0; j < nd; j++)
        for (int64_t k = 0; k < K; k++)
            d16[j * KP + k] = value(p, j, 0);
    for (int i = 0; i < mq; i++)
        mieb_screen_i8_quad_pack_query(q16 + i * KP, KP, KQ, qa + i * KQ, &qsum[i]);
    for (int j = 0; j < nd; j++)
        mieb_screen_i8_quad_pack_doc(d16 + j * KP, KP, KQ, kd->doc_u8, j % SCREEN_I8_ND,
                                 dv + (int64_t)(j / SCREEN_I8_ND) * SCREEN_I8_ND * KQ);
    if (kd->begin)
        kd->begin();
    fn(qa, KQ, dv, qsum, out);
    if (kd->end)
        kd->end();
    int bad = 0;
    for (int g = 0; g < kd->ng; g++)
        for (int i = 0; i < mq; i++)
            for (int j = 0; j < SCREEN_I8_ND; j++) {
                int64_t want = 0;
                for (int64_t k = 0; k < K; k++)
                    want += (int64_t)q16[i * KP + k] * d16[(g * SCREEN_I8_ND + j) * KP + k];
                bad += out[(g * mq + i) * SCREEN_I8_ND + j] != want;
            }
    free(q16);
    free(d16);
    free(qa);
    free(dv);
    free(qsum);
    free(out);
    return bad;
}

static void check_integers(void)
{
    static const int64_t Ks[] = {1, 3, 4, 5, 63, 64, 65, 127, 768, 769, 4096};
    for (int c = 0; c < N_CASES; c++) {
        struct kernel_case *kc = &g_cases[c];
        int native = kc->native != SCREEN_KERNEL_NONE && mieb_screen_kernel_usable(kc->native);
        int bad = 0, calls = 0;
        for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
            for (int p = P_RANDOM; p <= P_OPPOSED_MAX; p++) {
                bad += dots_case(&kc->kd, kc->kd.dots_q, Ks[ki], (enum pattern)p);
                calls++;
            }
        /* the largest K the screen takes, every integer at 127: the sums wrap (VPDPBUSD's reach 4.3e9) */
        bad += dots_case(&kc->kd, kc->kd.dots_q, SCREEN_I8_MAX_K, P_ALL_MAX);
        bad += dots_case(&kc->kd, kc->kd.dots_q, SCREEN_I8_MAX_K, P_OPPOSED_MAX);
        calls += 2;
        CHECK_MSG(bad == 0, "%s: %d integers differ from the int64 dot products", kc->name, bad);
        printf("integers: %s, %d calls: %s\n", kc->name, calls, bad ? "DIFFER" : "exact");
        if (native) {
            enum screen_kernel nk = kc->native;
            struct screen_i8_kernel nkd = kc->kd;
            nkd.dots_q = nk == SCREEN_KERNEL_INT8_VNNI512   ? mieb_screen_i8_dots_vnni512
                         : nk == SCREEN_KERNEL_INT8_AVXVNNI ? mieb_screen_i8_dots_avxvnni
                                                            : mieb_screen_i8_dots_amx;
            nkd.begin = nk == SCREEN_KERNEL_INT8_AMX ? mieb_screen_i8_amx_begin : NULL;
            nkd.end = nk == SCREEN_KERNEL_INT8_AMX ? mieb_screen_i8_amx_end : NULL;
            int nbad = 0;
            for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
                for (int p = P_RANDOM; p <= P_OPPOSED_MAX; p++)
                    nbad += dots_case(&nkd, nkd.dots_q, Ks[ki], (enum pattern)p);
            nbad += dots_case(&nkd, nkd.dots_q, SCREEN_I8_MAX_K, P_ALL_MAX);
            CHECK_MSG(nbad == 0, "%s (native): %d integers differ", kc->name, nbad);
            printf("integers: %s on this CPU's unit: %s\n", kc->name, nbad ? "DIFFER" : "exact");
        } else if (kc->native != SCREEN_KERNEL_NONE) {
            printf("integers: %s: this CPU lacks the unit, the model alone ran\n", kc->name);
        }
    }
}

/* ---- 2. lists ---- */

static double gauss(void)
{
    return sqrt(-2.0 * log(check_rng_uniform(&rng) + 1e-300)) * cos(6.283185307179586 * check_rng_uniform(&rng));
}

/* Rows: Gaussian, with every 7th a copy of an earlier one, every 11th zero, every 13th one
   huge component (the rest quantise to zero). */
static void fill_rows(float *x, int64_t n, int64_t K)
{
    for (int64_t r = 0; r < n; r++) {
        float *row = x + r * K;
        if (r % 7 == 6) {
            memcpy(row, x + (r / 2) * K, sizeof(float) * (size_t)K);
            continue;
        }
        for (int64_t k = 0; k < K; k++)
            row[k] = r % 11 == 10 ? 0.0f : (float)gauss();
        if (r % 13 == 12)
            row[r % K] = 1e6f;
    }
}

struct lists {
    struct screen_list *l;
    int64_t m;
};

/* Every pair offered (tau = -inf, no cut) by the pass with kernel kd, or (kd NULL) with
   the build's kernel kern. */
static struct lists run_pass(const float *Q, int64_t m, const float *D, int64_t n, int64_t K,
                             const struct screen_i8_kernel *kd, enum screen_kernel kern)
{
    struct screen_ctx cx = {0};
    cx.m = m;
    cx.m_pad = m;
    cx.n = n;
    cx.K = K;
    cx.k = n + 1;
    cx.Q = Q;
    cx.D = D;
    cx.budget = (size_t)1 << 40;
    cx.lists = calloc((size_t)m, sizeof *cx.lists);
    cx.overflow = calloc((size_t)m, 1);
    cx.alpha = calloc((size_t)m, sizeof(float));
    cx.beta = calloc((size_t)m, sizeof(float));
    cx.tau = calloc((size_t)m, sizeof(float));
    for (int64_t q = 0; q < m; q++) {
        cx.tau[q] = -INFINITY;
        cx.lists[q].cut_at = (int32_t)n + 1;
        CHECK(mieb_screen_list_resize(&cx.lists[q], (int32_t)n + 1));
    }
    struct screen_i8_buf *ib = NULL;
    CHECK((kd ? mieb_screen_i8_pass_with(&cx, kd, &ib) : mieb_screen_i8_pass(&cx, kern, &ib)) == MIEB_OK);
    CHECK(!cx.aborted);
    mieb_screen_i8_buf_free(ib);
    free(cx.overflow);
    free(cx.alpha);
    free(cx.beta);
    free(cx.tau);
    return (struct lists){cx.lists, m};
}

static int lists_differ(struct lists a, struct lists b, int64_t n)
{
    int diff = 0;
    for (int64_t q = 0; q < a.m; q++)
        diff += a.l[q].n != b.l[q].n || a.l[q].n != n ||
                memcmp(a.l[q].idx, b.l[q].idx, 4 * (size_t)a.l[q].n) ||
                memcmp(a.l[q].lb, b.l[q].lb, 4 * (size_t)a.l[q].n) ||
                memcmp(a.l[q].ub, b.l[q].ub, 4 * (size_t)a.l[q].n);
    return diff;
}

static void free_lists(struct lists a)
{
    for (int64_t q = 0; q < a.m; q++)
        free(a.l[q].idx);
    free(a.l);
}

static const struct {
    int64_t m, n, K;
} g_shapes[] = {{1, 1, 1}, {13, 700, 77}, {7, 300, 5}, {33, 64, 64}, {40, 531, 769}, {12, 17, 130}, {70, 260, 512}};

/* One shape: each kernel's lists against the portable pair kernel's. */
static void check_lists_shape(int64_t m, int64_t n, int64_t K)
{
    float *Q = malloc(sizeof(float) * (size_t)(m * K)), *D = malloc(sizeof(float) * (size_t)(n * K));
    fill_rows(Q, m, K);
    fill_rows(D, n, K);
    struct lists ref = run_pass(Q, m, D, n, K, NULL, SCREEN_KERNEL_INT8_SCALAR);
    for (int c = 0; c < N_CASES; c++) {
        struct lists got = run_pass(Q, m, D, n, K, &g_cases[c].kd, SCREEN_KERNEL_NONE);
        int d = lists_differ(ref, got, n);
        CHECK_MSG(d == 0, "%s: %d of %lld queries' lists differ (m %lld, n %lld, K %lld)", g_cases[c].name, d,
                  (long long)m, (long long)m, (long long)n, (long long)K);
        free_lists(got);
        enum screen_kernel nk = g_cases[c].native;
        if (nk != SCREEN_KERNEL_NONE && mieb_screen_kernel_usable(nk)) { /* the real kernel, the real pass */
            struct lists nat = run_pass(Q, m, D, n, K, NULL, nk);
            d = lists_differ(ref, nat, n);
            CHECK_MSG(d == 0, "%s (native): %d queries' lists differ (K %lld)", g_cases[c].name, d, (long long)K);
            free_lists(nat);
        }
    }
    free_lists(ref);
    free(Q);
    free(D);
}

static void check_lists(void)
{
    for (size_t s = 0; s < sizeof g_shapes / sizeof g_shapes[0]; s++)
        check_lists_shape(g_shapes[s].m, g_shapes[s].n, g_shapes[s].K);
    printf("lists: %d kernels x %d shapes against the portable pair kernel\n", N_CASES,
           (int)(sizeof g_shapes / sizeof g_shapes[0]));
}

/* ---- 3. the checks can fail ---- */

static void vnni512_one_off(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qs, int32_t *out)
{
    mieb_screen_i8_dots_vnni512_emu(qa, KQ, dv, qs, out);
    out[5 * SCREEN_I8_ND + 3] += 1;
}

static void check_mutants(void)
{
    int64_t m = 13, n = 100, K = 77;
    float *Q = malloc(sizeof(float) * (size_t)(m * K)), *D = malloc(sizeof(float) * (size_t)(n * K));
    fill_rows(Q, m, K);
    fill_rows(D, n, K);
    struct lists ref = run_pass(Q, m, D, n, K, NULL, SCREEN_KERNEL_INT8_SCALAR);
    struct screen_i8_kernel one_off = g_cases[0].kd, no_offset = g_cases[0].kd;
    one_off.dots_q = vnni512_one_off;
    no_offset.doc_u8 = 0; /* documents packed signed, read as unsigned */
    struct lists a = run_pass(Q, m, D, n, K, &one_off, SCREEN_KERNEL_NONE),
                 b = run_pass(Q, m, D, n, K, &no_offset, SCREEN_KERNEL_NONE);
    int da = lists_differ(ref, a, n), db = lists_differ(ref, b, n);
    printf("mutants: one integer off -> %d lists differ; documents without +128 -> %d\n", da, db);
    CHECK_MSG(da > 0, "a kernel one integer off went unnoticed");
    CHECK_MSG(db > 0, "documents without their +128 went unnoticed");
    free_lists(ref);
    free_lists(a);
    free_lists(b);
    free(Q);
    free(D);
}

/* 4. The AVX2 document packing against the portable one: the whole group, bit for bit (bytes
   of other columns left as they were), for random integers and +-127, K padded to 4 and to
   64, every column, signed and unsigned (+ 128) layouts, and the zero rows of a short group. */
static void check_pack_doc(void)
{
    if (!mieb_screen_kernel_usable(SCREEN_KERNEL_INT8_AVX2)) {
        printf("test_screen_i8_kernels: no AVX2 here: the AVX2 packing was not tested\n");
        return;
    }
    static const int64_t Ks[] = {1, 3, 4, 5, 31, 32, 33, 63, 64, 65, 127, 768, 769, 4096};
    int bad = 0, cases = 0;
    for (size_t c = 0; c < sizeof Ks / sizeof Ks[0]; c++)
        for (int kstep = 4; kstep <= 64; kstep += 60) {
            int64_t K = Ks[c], KP = (K + 3) / 4 * 4, KQ = (K + kstep - 1) / kstep * kstep;
            int16_t *row = malloc(sizeof(int16_t) * (size_t)KP);
            uint8_t *g0 = malloc((size_t)(SCREEN_I8_ND * KQ)), *g1 = malloc((size_t)(SCREEN_I8_ND * KQ));
            for (int trial = 0; trial < 2 * SCREEN_I8_ND; trial++) {
                int col = trial % SCREEN_I8_ND, doc_u8 = (trial / SCREEN_I8_ND) & 1, none = trial % 7 == 3;
                for (int64_t k = 0; k < KP; k++)
                    row[k] = k >= K ? 0 : trial % 5 == 0 ? (k & 1 ? 127 : -127) : (int16_t)((int)(check_rng_u64(&rng) % 255) - 127);
                for (int64_t x = 0; x < SCREEN_I8_ND * KQ; x++)
                    g0[x] = g1[x] = (uint8_t)check_rng_u64(&rng);
                mieb_screen_i8_quad_pack_doc(none ? NULL : row, KP, KQ, doc_u8, col, g0);
                mieb_screen_i8_quad_pack_doc_avx2(none ? NULL : row, KP, KQ, doc_u8, col, g1);
                bad += memcmp(g0, g1, (size_t)(SCREEN_I8_ND * KQ)) != 0;
                cases++;
            }
            free(row);
            free(g0);
            free(g1);
        }
    printf("document packing: %d cases, %d differ from the portable packing\n", cases, bad);
    CHECK_MSG(bad == 0, "%d AVX2 packings differ from the portable one", bad);
}

int main(void)
{
    check_pack_doc();
    check_integers();
    check_lists();
    check_mutants();
    return check_done("test_screen_i8_kernels");
}
