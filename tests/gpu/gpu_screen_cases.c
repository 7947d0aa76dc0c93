/**
 * gpu_screen_cases.c - the int8 screen of topk_block (cuda/cuda_screen.c,
 * docs/SCREEN_INT8.md) against the CPU backend and the exact CUDA path: the same scores and
 * ids, byte for byte, with and without floors, for cosine and dot. The cases are the ones
 * where a screen could go wrong: random rows, near-ties planted at the k-th score (copies
 * and one-ulp variants of a row), quantisation residuals aligned with the documents (the
 * bound reached: a bound 1 % too tight loses the best document here), a vector with one
 * huge component, zero vectors, denormals, K not a multiple of 4 or 16, rows beyond the
 * bound's range (handed to the exact way) and a candidate list too small for the near-ties
 * (the fallback budget: the group goes the exact way). Each case also checks that the screen
 * ran and, where it must, that it scored only part of the pairs or handed the group back.
 * The lists alone do not see a bound that is too tight but still wide enough for random rows
 * (without its beta R_d term every list case passes on the mock runtime), so the kernels'
 * inputs and outputs are also compared with the host's bit for bit: each row's quantisation
 * (int8 row, scale, N, R, H), each pair's interval, and a query set's scales and bound
 * coefficients as topk_block builds them (K = 8 and integer rows among them).
 */
#include "gpu_screen_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/math/screen_int8_math.h"
#include "cuda_ops.h"
#include "cuda_ctx.h"
#include "gpu_test_util.h"
#include "screen_int8.cuh"

struct screen_be {
    struct mieb_backend *scr, *exact, *cpu;
};

/* What a case expects of the screen: 1 it screened and scored at most `share` of the pairs,
   2 it handed every group to the exact way. */
struct expect {
    int mode;
    double share;
};

static struct mieb_cuda_ctx *ctx_of(struct mieb_backend *be) { return be->ctx; }

/* topk_block (and, from the CPU's list, topk_block_floor) on the three backends. */
static int run3(const struct screen_be *b, const char *name, const struct mieb_vecs *q, const struct mieb_vecs *d,
                enum mieb_sim sim, int64_t k, float *s[3], int64_t *ix[3], int64_t *cnt[3], float *fl)
{
    struct mieb_backend *be[3] = {b->scr, b->exact, b->cpu};
    struct mieb_qset *qs[3] = {0};
    int ok = 1;
    for (int i = 0; ok && i < 3; i++)
        ok = mieb_backend_prepare_queries(be[i], q, sim, &qs[i]) == MIEB_OK &&
             mieb_backend_topk_block(be[i], qs[i], d, k, s[i], ix[i]) == MIEB_OK;
    int64_t keep = k < d->n ? k : d->n;
    for (int64_t r = 0; ok && r < q->n; r++) /* floors: none, above the best, NaN, at a rank (ties included) */
        fl[r] = r % 4 == 0 ? -INFINITY
                : r % 4 == 1 ? s[2][r * k] + 1.0f
                : r % 4 == 2 ? NAN
                             : s[2][r * k + gt_rand() % (uint32_t)keep];
    float *fs = malloc(sizeof(float) * (size_t)(q->n * k) + 1);
    int64_t *fi = malloc(sizeof(int64_t) * (size_t)(q->n * k) + 1);
    ok = ok && fs && fi;
    for (int i = 0; ok && i < 3; i += 2) { /* the screened and the CPU */
        ok = mieb_backend_topk_block_floor(be[i], qs[i], q->n, d, k, fl, fs, fi, cnt[i]) == MIEB_OK;
        for (int64_t r = 0; ok && r < q->n; r++) { /* the head is what a floor promises; keep it */
            memcpy(s[i] + q->n * k + r * k, fs + r * k, sizeof(float) * (size_t)cnt[i][r]);
            memcpy(ix[i] + q->n * k + r * k, fi + r * k, sizeof(int64_t) * (size_t)cnt[i][r]);
        }
    }
    if (!ok)
        fprintf(stderr, "  %s: a backend failed: %s\n", name, mieb_last_error());
    free(fs);
    free(fi);
    for (int i = 0; i < 3; i++)
        mieb_backend_release_queries(be[i], qs[i]);
    return ok;
}

/* One case: the screened lists byte-identical to the CPU's and the exact CUDA path's. */
static int screen_case(const struct screen_be *b, const char *name, const struct mieb_vecs *q,
                       const struct mieb_vecs *d, enum mieb_sim sim, int64_t k, struct expect want)
{
    size_t n = (size_t)(2 * q->n * k) + 1;
    float *s[3];
    int64_t *ix[3], *cnt[3];
    float *fl = malloc(sizeof(float) * (size_t)q->n + 1);
    int ok = fl != NULL;
    for (int i = 0; i < 3; i++) {
        s[i] = calloc(n, sizeof(float));
        ix[i] = calloc(n, sizeof(int64_t));
        cnt[i] = calloc((size_t)q->n + 1, sizeof(int64_t));
        ok = ok && s[i] && ix[i] && cnt[i];
    }
    struct mieb_cuda_ctx *c = ctx_of(b->scr);
    const int64_t blocks0 = c->screen_stats.blocks, groups0 = c->screen_stats.groups;
    const int64_t fb0 = c->screen_stats.fallbacks, pairs0 = c->screen_stats.pairs, scored0 = c->screen_stats.scored;
    ok = ok && run3(b, name, q, d, sim, k, s, ix, cnt, fl);
    int64_t keep = k < d->n ? k : d->n, bad = 0;
    for (int64_t r = 0; ok && r < q->n; r++) {
        size_t at = (size_t)(r * k), fat = (size_t)(q->n * k) + at;
        int same = !memcmp(s[0] + at, s[2] + at, sizeof(float) * (size_t)keep) &&
                   !memcmp(ix[0] + at, ix[2] + at, sizeof(int64_t) * (size_t)keep) && cnt[0][r] == cnt[2][r] &&
                   !memcmp(s[0] + fat, s[2] + fat, sizeof(float) * (size_t)cnt[2][r]) &&
                   !memcmp(ix[0] + fat, ix[2] + fat, sizeof(int64_t) * (size_t)cnt[2][r]);
        if (!same && bad++ < 3)
            fprintf(stderr, "  %s: query %lld: screened (%a, %lld) cpu (%a, %lld) at rank 0; floor %a kept %lld/%lld\n",
                    name, (long long)r, s[0][at], (long long)ix[0][at], s[2][at], (long long)ix[2][at], fl[r],
                    (long long)cnt[0][r], (long long)cnt[2][r]);
    }
    /* the whole output, padding included, against the exact CUDA path */
    if (ok && (memcmp(s[0], s[1], sizeof(float) * (size_t)(q->n * k)) ||
               memcmp(ix[0], ix[1], sizeof(int64_t) * (size_t)(q->n * k)))) {
        fprintf(stderr, "  %s: the screened output differs from the exact CUDA path's\n", name);
        bad++;
    }
    int64_t blocks = c->screen_stats.blocks - blocks0, groups = c->screen_stats.groups - groups0;
    int64_t fb = c->screen_stats.fallbacks - fb0, pairs = c->screen_stats.pairs - pairs0;
    double share = pairs ? (double)(c->screen_stats.scored - scored0) / (double)pairs : 1.0;
    int ran = blocks == 2 && groups >= 2 &&
              (want.mode == 2 ? fb == groups : fb == 0 && share <= want.share);
    if (ok && !ran)
        fprintf(stderr, "  %s: the screen did not run as expected: %lld blocks, %lld groups, %lld handed back, "
                        "%.1f%% scored\n", name, (long long)blocks, (long long)groups, (long long)fb, 100.0 * share);
    if (ok)
        printf("  %s: %.1f%% of pairs scored exactly, %lld of %lld groups handed back\n", name, 100.0 * share,
               (long long)fb, (long long)groups);
    for (int i = 0; i < 3; i++) {
        free(s[i]);
        free(ix[i]);
        free(cnt[i]);
    }
    free(fl);
    return ok && bad == 0 && ran;
}

/* ---- inputs ---- */

struct rows {
    struct mieb_vecs v;
    float *x;
};

static int rows_new(struct rows *r, int64_t n, int64_t dim)
{
    r->x = calloc((size_t)(n * dim) + 1, sizeof(float));
    r->v = (struct mieb_vecs){r->x, NULL, n, n, dim};
    return r->x != NULL;
}

static float urand(void) { return (float)((int)(gt_rand() % 2000001) - 1000000) / 1000000.0f; }

/* Random rows; unit rows for cosine (the backends take rows as the driver gives them). */
static void fill_random(struct rows *r, int unit)
{
    if (unit) {
        gt_fill_unit_rows(r->x, r->v.n, r->v.dim);
        return;
    }
    for (int64_t i = 0; i < r->v.n * r->v.dim; i++)
        r->x[i] = urand() * (float)(1 << (gt_rand() % 6));
}

/* Near-ties at the k-th score: documents are copies of a few base rows, some with one element
   one ulp away, so that many documents tie with or sit an ulp from the k-th best. */
static void fill_ties(struct rows *q, struct rows *d)
{
    int64_t K = d->v.dim;
    gt_fill_unit_rows(d->x, 16, K);
    for (int64_t j = 16; j < d->v.n; j++) {
        memcpy(d->x + j * K, d->x + (j % 16) * K, sizeof(float) * (size_t)K);
        if (gt_rand() % 3 == 0) {
            float *e = d->x + j * K + gt_rand() % (uint32_t)K;
            *e = nextafterf(*e, gt_rand() % 2 ? 2.0f : -2.0f);
        }
    }
    for (int64_t i = 0; i < q->v.n; i++) /* queries near the base rows */
        for (int64_t t = 0; t < K; t++)
            q->x[i * K + t] = d->x[(i % 16) * K + t] + 0.01f * urand();
}

/*
 * Residuals aligned with the documents (docs/SCREEN_INT8.md, 3). Query i is 1 at element i
 * (i < 16) and 0.49 s t_j at the elements j >= 16 (t = +-1, s = 1/127 its scale), so those
 * quantise to 0 and its residual is 0.49 s t. The 16 documents A = (0, t) are exact in int8:
 * approximate score 0, exact score f_A = 0.49 s (K - 16), which the bound's R_x N_y term
 * covers almost exactly. Documents C = (c at element i, -t) score c - f_A exactly and about c
 * approximately; with c on the int8 grid just below 2 f_A they rank below every A, but a
 * bound about 1 % too tight puts a C's lower bound above the A's upper bounds and takes the
 * A out of the best k. The other documents are small random rows.
 */
static float aligned_sign(int64_t t) { return (t * 7) % 3 == 0 ? -1.0f : 1.0f; }

static void fill_aligned(struct rows *q, struct rows *d)
{
    const int64_t K = q->v.dim, nd = d->v.n;
    const float s = 1.0f / 127.0f;
    for (int64_t j = 0; j < nd * K; j++)
        d->x[j] = 0.01f * urand();
    double fa = 0.0;
    for (int64_t t = 16; t < K; t++)
        fa += (double)fabsf(0.49f * s * aligned_sign(t));
    for (int64_t i = 0; i < q->v.n; i++) {
        float *x = q->x + i * K, *a = d->x + ((i * 97) % nd) * K;
        memset(x, 0, sizeof(float) * (size_t)K);
        memset(a, 0, sizeof(float) * 16);
        x[i % 16] = 1.0f;
        for (int64_t t = 16; t < K; t++) {
            x[t] = 0.49f * s * aligned_sign(t);
            a[t] = aligned_sign(t);
        }
        for (int c = 0; c < 20; c++) { /* c = m / 127 for the 20 grid points below 2 f_A */
            float *y = d->x + ((i * 97 + (c + 1) * 13) % nd) * K;
            memset(y, 0, sizeof(float) * 16);
            y[i % 16] = (float)(floor(2.0 * fa * 127.0 - 1e-6) - c) / 127.0f;
            for (int64_t t = 16; t < K; t++)
                y[t] = -aligned_sign(t);
        }
    }
}

/* Special rows [first, last): one huge component, zero rows, denormal rows, rows mixing both. */
static void fill_special(struct rows *r, int64_t first, int64_t last)
{
    int64_t K = r->v.dim;
    for (int64_t i = first; i < last; i++) {
        float *x = r->x + i * K;
        switch (i % 5) {
        case 0: /* one huge component: the others quantise to 0 */
            x[gt_rand() % (uint32_t)K] = 3.0e4f;
            break;
        case 1:
            memset(x, 0, sizeof(float) * (size_t)K);
            break;
        case 2: /* all denormal: a subnormal scale */
            for (int64_t t = 0; t < K; t++)
                x[t] = urand() * 1e-39f;
            break;
        case 3: /* denormal elements among normal ones */
            for (int64_t t = 0; t < K; t += 2)
                x[t] = urand() * 1e-41f;
            break;
        default:
            break;
        }
    }
}

/* ---- the cases ---- */

static void case_random(const struct screen_be *b)
{
    static const int64_t dims[] = {1, 7, 17, 37, 100, 130};
    static const int64_t ks[] = {1, 10, 100};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        struct rows q, d;
        int64_t K = dims[di];
        int ok = rows_new(&q, 40, K) && rows_new(&d, 3000, K);
        for (int cos = 0; ok && cos < 2; cos++) {
            fill_random(&q, cos);
            fill_random(&d, cos);
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                char name[96];
                snprintf(name, sizeof name, "int8 screen %s random K=%lld k=%lld", cos ? "cosine" : "dot",
                         (long long)K, (long long)ks[ki]);
                /* unit rows of K = 1 are +-1: half the documents tie at the best score, more than
                   the list holds, so the groups go the exact way (the fallback budget) */
                struct expect want = {K == 1 && cos ? 2 : 1, K >= 17 ? 0.5 : 1.0};
                gt_result(name, screen_case(b, name, &q.v, &d.v, cos ? MIEB_SIM_COSINE : MIEB_SIM_DOT, ks[ki], want));
            }
        }
        if (!ok)
            gt_result("int8 screen random (inputs)", 0);
        free(q.x);
        free(d.x);
    }
}

static void case_ties(const struct screen_be *b)
{
    struct rows q, d;
    if (!rows_new(&q, 24, 64) || !rows_new(&d, 4000, 64)) {
        gt_result("int8 screen near-ties (inputs)", 0);
        return;
    }
    fill_ties(&q, &d);
    static const int64_t ks[] = {1, 20, 249, 250, 251};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) { /* 250 copies of each base row */
        char name[80];
        snprintf(name, sizeof name, "int8 screen near-ties at the k-th k=%lld", (long long)ks[ki]);
        gt_result(name, screen_case(b, name, &q.v, &d.v, MIEB_SIM_COSINE, ks[ki], (struct expect){1, 0.6}));
    }
    free(q.x);
    free(d.x);
}

static void case_aligned(const struct screen_be *b)
{
    struct rows q, d;
    if (!rows_new(&q, 16, 140) || !rows_new(&d, 5000, 140)) {
        gt_result("int8 screen aligned residuals (inputs)", 0);
        return;
    }
    fill_aligned(&q, &d);
    static const int64_t ks[] = {1, 2, 16, 17, 20}; /* k = 20: tau is the last C's lower bound */
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        char name[80];
        snprintf(name, sizeof name, "int8 screen aligned residuals k=%lld", (long long)ks[ki]);
        gt_result(name, screen_case(b, name, &q.v, &d.v, MIEB_SIM_DOT, ks[ki], (struct expect){1, 0.2}));
    }
    free(q.x);
    free(d.x);
}

static void case_special(const struct screen_be *b)
{
    struct rows q, d;
    if (!rows_new(&q, 30, 33) || !rows_new(&d, 3000, 33)) {
        gt_result("int8 screen special rows (inputs)", 0);
        return;
    }
    fill_random(&q, 0);
    fill_random(&d, 0);
    fill_special(&q, 10, 14); /* a query whose every pair is a candidate is an eighth of the list */
    fill_special(&d, 0, d.v.n);
    gt_result("int8 screen huge component, zeros, denormals k=10",
              screen_case(b, "int8 screen huge component, zeros, denormals k=10", &q.v, &d.v, MIEB_SIM_DOT, 10,
                          (struct expect){1, 0.6}));
    /* a document beyond 2^60: the bound does not cover it, every group goes the exact way */
    d.x[1234 * 33 + 5] = 3e18f;
    gt_result("int8 screen a row beyond 2^60 k=10",
              screen_case(b, "int8 screen a row beyond 2^60 k=10", &q.v, &d.v, MIEB_SIM_DOT, 10,
                          (struct expect){2, 1.0}));
    free(q.x);
    free(d.x);
}

/* The fallback budget: a list of 64 pairs cannot hold 24 queries' near-ties. */
static void case_budget(const struct screen_be *b)
{
    struct rows q, d;
    if (!rows_new(&q, 24, 64) || !rows_new(&d, 4000, 64)) {
        gt_result("int8 screen fallback budget (inputs)", 0);
        return;
    }
    fill_ties(&q, &d);
    ctx_of(b->scr)->screen_pair_cap = 64;
    gt_result("int8 screen fallback budget k=20",
              screen_case(b, "int8 screen fallback budget k=20", &q.v, &d.v, MIEB_SIM_COSINE, 20,
                          (struct expect){2, 1.0}));
    ctx_of(b->scr)->screen_pair_cap = 0;
    free(q.x);
    free(d.x);
}

static struct mieb_backend *backend_with(const char *screen, size_t mem_limit)
{
    setenv("MIEB_CUDA_SCREEN", screen, 1);
    struct mieb_backend *be = gt_cuda_new(mem_limit, MIEB_PREC_FP32);
    unsetenv("MIEB_CUDA_SCREEN");
    return be;
}

/* A 6 MiB budget: many corpus tiles (tau carried from tile to tile), query chunks and groups. */
static void case_tiled(const struct screen_be *b)
{
    struct screen_be small = {backend_with("int8", (size_t)6 << 20), b->exact, b->cpu};
    struct rows q, d;
    int ok = small.scr && rows_new(&q, 300, 96) && rows_new(&d, 20000, 96);
    if (ok) {
        fill_random(&q, 1);
        fill_random(&d, 1);
        gt_result("int8 screen tiled 6MiB k=10", screen_case(&small, "int8 screen tiled 6MiB k=10", &q.v, &d.v,
                                                             MIEB_SIM_COSINE, 10, (struct expect){1, 0.3}));
        gt_result("int8 screen tiled 6MiB k=100", screen_case(&small, "int8 screen tiled 6MiB k=100", &q.v, &d.v,
                                                              MIEB_SIM_COSINE, 100, (struct expect){1, 0.3}));
        free(q.x);
        free(d.x);
    } else {
        gt_result("int8 screen tiled 6MiB (setup)", 0);
    }
    mieb_backend_free(small.scr);
}

/* Under auto a block far larger than k takes the screen, a small one does not. */
static void case_auto(const struct screen_be *b)
{
    struct mieb_backend *au = backend_with("auto", 0);
    struct rows q, d;
    int ok = au && rows_new(&q, 20, 64) && rows_new(&d, 3000, 64);
    float *s = malloc(sizeof(float) * 20 * 200);
    int64_t *ix = malloc(sizeof(int64_t) * 20 * 200);
    struct mieb_qset *qs = NULL;
    ok = ok && s && ix;
    if (ok) {
        fill_random(&q, 1);
        fill_random(&d, 1);
        ok = mieb_backend_prepare_queries(au, &q.v, MIEB_SIM_COSINE, &qs) == MIEB_OK &&
             mieb_backend_topk_block(au, qs, &d.v, 10, s, ix) == MIEB_OK; /* 300 documents per k */
        int64_t after_big = ctx_of(au)->screen_stats.blocks;
        ok = ok && mieb_backend_topk_block(au, qs, &d.v, 200, s, ix) == MIEB_OK; /* 15 per k */
        ok = ok && after_big == 1 && ctx_of(au)->screen_stats.blocks == 1;
        mieb_backend_release_queries(au, qs);
        free(q.x);
        free(d.x);
    }
    gt_result("int8 screen auto: a block of 300 documents per k screened, of 15 not", ok);
    free(s);
    free(ix);
    mieb_backend_free(au);
    (void)b;
}

/* Copies on the context's stream, waited for (the mock runtime has only the stream-ordered calls). */
static int copy_sync(struct mieb_cuda_ctx *c, void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    return cudaMemcpyAsync(dst, src, n, kind, c->stream) == cudaSuccess &&
           cudaStreamSynchronize(c->stream) == cudaSuccess;
}

/* Rows of one kind: 0 random reals, 1 integers in [-64, 64] (the end-to-end search-floor
   test's documents), 2 two integers then zeros (its queries). */
static void fill_rows(float *x, int64_t n, int64_t K, int kind)
{
    for (int64_t i = 0; i < n * K; i++) {
        const int64_t k = i % K;
        if (kind == 0)
            x[i] = ((float)(gt_rand() % 20001) - 10000.0f) / 4096.0f;
        else if (kind == 1 || k < 2)
            x[i] = (float)((int)(gt_rand() % 129) - 64);
        else
            x[i] = 0.0f;
    }
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The quantisation kernel on the device against mieb_screen_i8_quantise_row on the host, row by
   row and bit for bit: the int8 row, its scale and the three norm bounds. The list tests
   only see a bound too tight where it changes a list; this sees it in every row. */
static int quantise_vs_host(struct mieb_cuda_ctx *c, int64_t n, int64_t K, int kind)
{
    const int64_t KP = (K + 15) / 16 * 16;
    float *x = malloc(sizeof(float) * (size_t)(n * K)), *h = malloc(sizeof(float) * (size_t)(4 * n));
    int8_t *q8 = malloc((size_t)(n * KP)), *row = malloc((size_t)KP);
    void *dev = NULL;
    const size_t xb = sizeof(float) * (size_t)(n * K), fb = sizeof(float) * (size_t)n;
    int ok = x && h && q8 && row && cudaMalloc(&dev, xb + 4 * fb + (size_t)(n * KP) + 64) == cudaSuccess;
    if (ok) {
        fill_rows(x, n, K, kind);
        float *dx = dev, *ds = (float *)((char *)dev + xb), *dn = ds + n, *dr = dn + n, *dh = dr + n;
        int8_t *dq = (int8_t *)(dh + n);
        struct mieb_screen_i8_counts *dc = (struct mieb_screen_i8_counts *)(((uintptr_t)(dq + n * KP) + 31) & ~(uintptr_t)31);
        ok = copy_sync(c, dx, x, xb, cudaMemcpyHostToDevice) &&
             cudaMemsetAsync(dc, 0, sizeof *dc, c->stream) == cudaSuccess &&
             mieb_cuda_screen_i8_quantise(mieb_cuda_ks(c), dx, n, K, KP, dq, ds, dn, dr, dh, dc) == MIEB_OK &&
             cudaStreamSynchronize(c->stream) == cudaSuccess &&
             copy_sync(c, h, ds, 4 * fb, cudaMemcpyDeviceToHost) &&
             copy_sync(c, q8, dq, (size_t)(n * KP), cudaMemcpyDeviceToHost);
        int64_t bad = 0;
        for (int64_t r = 0; ok && r < n; r++) {
            float sv = 0, nv = 0, rv = 0, hv = 0;
            mieb_screen_i8_quantise_row(x + r * K, K, KP, row, NULL, &sv, &nv, &rv, &hv);
            int diff = !same_bits(sv, h[r]) || !same_bits(nv, h[n + r]) || !same_bits(rv, h[2 * n + r]) ||
                       !same_bits(hv, h[3 * n + r]) || memcmp(row, q8 + r * KP, (size_t)KP) != 0;
            if (diff && bad++ < 3)
                fprintf(stderr, "  quantise K %lld kind %d row %lld: s %a/%a N %a/%a R %a/%a H %a/%a (host/device)\n",
                        (long long)K, kind, (long long)r, sv, h[r], nv, h[n + r], rv, h[2 * n + r], hv, h[3 * n + r]);
        }
        ok = ok && bad == 0;
    }
    if (dev)
        cudaFree(dev);
    free(x), free(h), free(q8), free(row);
    return ok;
}

/* The bound kernel against mieb_screen_i8_interval on the host, bit for bit, on the coefficients
   and norm bounds the screen really uses (queries and documents quantised on the host). */
static int bound_vs_host(struct mieb_cuda_ctx *c, int64_t nq, int64_t nd, int64_t K, int kind)
{
    const int64_t KP = (K + 15) / 16 * 16, ld = (nd + 3) / 4 * 4;
    float *q = malloc(sizeof(float) * (size_t)(nq * K)), *d = malloc(sizeof(float) * (size_t)(nd * K));
    float *par = malloc(sizeof(float) * (size_t)(3 * nq + 3 * nd)), *ub = malloc(sizeof(float) * (size_t)(2 * nq * ld));
    int32_t *I = malloc(sizeof(int32_t) * (size_t)(nq * ld));
    int8_t *row = malloc((size_t)KP);
    void *dev = NULL;
    const size_t pb = sizeof(float) * (size_t)(3 * nq + 3 * nd), tb = sizeof(float) * (size_t)(nq * ld);
    int ok = q && d && par && ub && I && row && cudaMalloc(&dev, pb + 2 * tb) == cudaSuccess;
    if (ok) {
        fill_rows(q, nq, K, kind == 1 ? 2 : 0);
        fill_rows(d, nd, K, kind);
        float *sq = par, *al = sq + nq, *be = al + nq, *sd = be + nq, *dn = sd + nd, *dr = dn + nd;
        for (int64_t r = 0; r < nq; r++) {
            float nv = 0, rv = 0, hv = 0;
            mieb_screen_i8_quantise_row(q + r * K, K, KP, row, NULL, &sq[r], &nv, &rv, &hv);
            mieb_screen_i8_query_coefs(K, nv, rv, hv, 1.0f, 0, &al[r], &be[r]);
        }
        for (int64_t j = 0; j < nd; j++) {
            float hv = 0;
            mieb_screen_i8_quantise_row(d + j * K, K, KP, row, NULL, &sd[j], &dn[j], &dr[j], &hv);
        }
        for (int64_t i = 0; i < nq * ld; i++)
            I[i] = (int32_t)(gt_rand() % 400001) - 200000;
        float *dp = dev, *dS = (float *)((char *)dev + pb), *dL = (float *)((char *)dS + tb);
        const float s_abs = mieb_screen_i8_s_abs(K, 0);
        ok = copy_sync(c, dp, par, pb, cudaMemcpyHostToDevice) &&
             copy_sync(c, dS, I, tb, cudaMemcpyHostToDevice) &&
             mieb_cuda_screen_i8_bound(mieb_cuda_ks(c), dS, dL, ld, nq, nd, dp, dp + nq, dp + 2 * nq, dp + 3 * nq,
                                 dp + 3 * nq + nd, dp + 3 * nq + 2 * nd, s_abs) == MIEB_OK &&
             cudaStreamSynchronize(c->stream) == cudaSuccess &&
             copy_sync(c, ub, dS, 2 * tb, cudaMemcpyDeviceToHost); /* S, then lb */
        int64_t bad = 0;
        for (int64_t r = 0; ok && r < nq; r++)
            for (int64_t j = 0; j < nd; j++) {
                float l, u;
                mieb_screen_i8_interval(I[r * ld + j], sq[r], sd[j], al[r], be[r], dn[j], dr[j], s_abs, &l, &u);
                if ((!same_bits(u, ub[r * ld + j]) || !same_bits(l, ub[nq * ld + r * ld + j])) && bad++ < 3)
                    fprintf(stderr, "  bound K %lld (%lld, %lld): [%a, %a] host, [%a, %a] device\n", (long long)K,
                            (long long)r, (long long)j, l, u, ub[nq * ld + r * ld + j], ub[r * ld + j]);
            }
        ok = ok && bad == 0;
    }
    if (dev)
        cudaFree(dev);
    free(q), free(d), free(par), free(ub), free(I), free(row);
    return ok;
}

/* The queries' int8 copy as topk_block builds it (quantised on the device, coefficients
   folded on the host and sent back): each query's scale and both coefficients, bit for bit
   against the host's own computation. */
static int query_set_vs_host(struct mieb_backend *scr, int64_t n, int64_t K, int kind)
{
    struct mieb_cuda_ctx *c = ctx_of(scr);
    const int64_t KP = (K + 15) / 16 * 16;
    float *x = malloc(sizeof(float) * (size_t)(n * K)), *h = malloc(sizeof(float) * (size_t)(3 * n));
    int8_t *row = malloc((size_t)KP);
    struct mieb_qset *qs = NULL;
    int ok = x && h && row;
    if (ok) {
        fill_rows(x, n, K, kind);
        struct mieb_vecs v = {x, NULL, n, n, K};
        ok = mieb_backend_prepare_queries(scr, &v, MIEB_SIM_DOT, &qs) == MIEB_OK &&
             mieb_cuda_screen_queries(c, qs) == MIEB_OK && qs->i8_state == 1 &&
             copy_sync(c, h, qs->d_sq, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost) &&
             copy_sync(c, h + n, qs->d_alpha, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost) &&
             copy_sync(c, h + 2 * n, qs->d_beta, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost);
        int64_t bad = 0;
        for (int64_t r = 0; ok && r < n; r++) {
            float sv = 0, nv = 0, rv = 0, hv = 0, a, b;
            mieb_screen_i8_quantise_row(x + r * K, K, KP, row, NULL, &sv, &nv, &rv, &hv);
            mieb_screen_i8_query_coefs(K, nv, rv, hv, 1.0f, 0, &a, &b);
            if ((!same_bits(sv, h[r]) || !same_bits(a, h[n + r]) || !same_bits(b, h[2 * n + r])) && bad++ < 3)
                fprintf(stderr, "  query K %lld row %lld: s %a/%a alpha %a/%a beta %a/%a (host/device)\n",
                        (long long)K, (long long)r, sv, h[r], a, h[n + r], b, h[2 * n + r]);
        }
        ok = ok && bad == 0;
    }
    if (qs)
        mieb_backend_release_queries(scr, qs);
    free(x), free(h), free(row);
    return ok;
}

/* Every kernel input of the bound, on the device, equal to the host's: the search-floor
   test's shape (K = 8, integer rows) among them. */
static void case_kernels(const struct screen_be *b)
{
    static const int64_t Ks[] = {1, 7, 8, 16, 17, 100, 512};
    struct mieb_cuda_ctx *c = ctx_of(b->scr);
    for (size_t i = 0; i < sizeof Ks / sizeof Ks[0]; i++) {
        const int64_t K = Ks[i];
        char name[160];
        for (int kind = 0; kind < 3; kind++) {
            snprintf(name, sizeof name, "int8 screen quantise on the device = host, K=%lld rows kind %d", (long long)K,
                     kind);
            gt_result(name, quantise_vs_host(c, 1000, K, kind));
        }
        snprintf(name, sizeof name, "int8 screen bound on the device = host, K=%lld", (long long)K);
        gt_result(name, bound_vs_host(c, 4, 3001, K, 0) && bound_vs_host(c, 4, 3001, K, 1));
        snprintf(name, sizeof name, "int8 screen query set (scale, alpha, beta) on the device = host, K=%lld",
                 (long long)K);
        gt_result(name, query_set_vs_host(b->scr, 37, K, 0) && query_set_vs_host(b->scr, 4, K, 2));
    }
}

void test_screen_ops(struct mieb_backend *cpu)
{
    struct screen_be b = {backend_with("int8", 0), backend_with("off", 0), cpu};
    if (!b.scr || !b.exact || ctx_of(b.scr)->screen != 2 || ctx_of(b.exact)->screen != 0) {
        gt_result("int8 screen backends (MIEB_CUDA_SCREEN=int8 and off)", 0);
    } else {
        case_random(&b);
        case_ties(&b);
        case_aligned(&b);
        case_special(&b);
        case_budget(&b);
        case_tiled(&b);
        case_auto(&b);
        case_kernels(&b);
    }
    /* unset, empty or unknown: off (the screen is for measuring until its H200 failure is
       found, cuda_ctx.c); auto and int8 when asked; never where the scores are not the
       fixed order's bits */
    static const struct { const char *env; enum mieb_precision prec; int want; } dflt_cases[] = {
        {NULL, MIEB_PREC_FP32, 0}, {"", MIEB_PREC_FP32, 0}, {"bogus", MIEB_PREC_FP32, 0}, {"0", MIEB_PREC_FP32, 0},
        {"auto", MIEB_PREC_FP32, 1}, {"int8", MIEB_PREC_FP32, 2}, {"int8", MIEB_PREC_TF32, 0},
    };
    int dflt_ok = 1;
    for (size_t i = 0; i < sizeof dflt_cases / sizeof dflt_cases[0]; i++) {
        if (dflt_cases[i].env)
            setenv("MIEB_CUDA_SCREEN", dflt_cases[i].env, 1);
        else
            unsetenv("MIEB_CUDA_SCREEN");
        struct mieb_backend *be = gt_cuda_new(0, dflt_cases[i].prec);
        dflt_ok = dflt_ok && be && ctx_of(be)->screen == dflt_cases[i].want;
        mieb_backend_free(be);
    }
    unsetenv("MIEB_CUDA_SCREEN");
    gt_result("int8 screen off by default (unset, empty, unknown), auto and int8 when asked, never unless fp32", dflt_ok);
    mieb_backend_free(b.scr);
    mieb_backend_free(b.exact);
}
