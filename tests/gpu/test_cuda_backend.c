/**
 * test_cuda_backend.c - every CUDA backend operation against the CPU backend (the
 * reference) on the same seeded inputs.
 *
 *   test_cuda_backend [--seed N] [--verbose]
 *
 * Top-k for k = 1, 10, 1000, 1001 and k >= the block size, on exact-arithmetic inputs
 * with many ties and on random unit vectors: identical to the CPU, scores and ids, because
 * fp32 scores are computed in the CPU's fixed order (kernels/canon_gemm.cu); with cuBLAS'
 * order (MIEB_CUDA_GEMM=cublas) random inputs may differ within tolerance and only among
 * near-ties; the same under a small memory limit that forces query groups and many corpus
 * tiles; MaxSim; score_pairs;
 * OOM recovery (an impossible allocation, then allocations that fail until the tiles are
 * small enough); budget errors; TF32 and BF16 smoke tests; kmeans_assign labels (exact
 * inputs with ties: identical; random inputs: different only at near-ties; k = 1, k = n,
 * chunked, OOM recovery, over-budget CPU fallback, fp32 under --precision tf32). The linear
 * probe's logistic-regression slots: gpu_logreg_cases.c. The int8 screen of topk_block
 * (MIEB_CUDA_SCREEN): gpu_screen_cases.c.
 * Exit status: 0 all passed, 1 a test failed, 77 no usable GPU (skipped).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "cpu/cpu_kmeans.h"
#include "cuda_ctx.h"
#include "gpu_logreg_cases.h"
#include "gpu_pairwise_cases.h"
#include "gpu_screen_cases.h"
#include "gpu_test_util.h"

#define EXIT_SKIP 77

static struct mieb_backend *cpu_be;
static enum mieb_log_level log_level = MIEB_LOG_INFO;
static const struct gt_tol TOL_EXACT = {1, 0, 0, 0};
static const struct gt_tol TOL_FP32 = {0, 2e-5, 1e-4, 5e-5};

/* topk_block_floor on both backends, floors taken from the CPU list `cs` (at some rank, -inf,
   NaN, above the best): the same count and the same head, bit for bit. */
static int floor_case(struct mieb_backend *gpu, const char *name, struct mieb_qset *qg, struct mieb_qset *qc,
                      int64_t nq, const struct mieb_vecs *d, int64_t k, const float *cs)
{
    int64_t keep = k < d->n ? k : d->n;
    size_t n = (size_t)(nq * k);
    float *fl = malloc(sizeof(float) * (size_t)nq + 1), *gs = malloc(sizeof(float) * n + 1),
          *cs2 = malloc(sizeof(float) * n + 1);
    int64_t *gi = malloc(sizeof(int64_t) * n + 1), *ci = malloc(sizeof(int64_t) * n + 1);
    int64_t *gn = malloc(sizeof(int64_t) * (size_t)nq + 1), *cn = malloc(sizeof(int64_t) * (size_t)nq + 1);
    int ok = fl && gs && cs2 && gi && ci && gn && cn && keep > 0;
    for (int64_t r = 0; ok && r < nq; r++)
        fl[r] = r % 6 == 0   ? -INFINITY
                : r % 6 == 1 ? cs[r * k] + 1.0f
                : r % 6 == 2 ? NAN
                             : cs[r * k + gt_rand() % (uint32_t)keep];
    ok = ok && mieb_backend_topk_block_floor(gpu, qg, nq, d, k, fl, gs, gi, gn) == MIEB_OK &&
         mieb_backend_topk_block_floor(cpu_be, qc, nq, d, k, fl, cs2, ci, cn) == MIEB_OK;
    for (int64_t r = 0; ok && r < nq; r++)
        if (gn[r] != cn[r] || memcmp(gs + r * k, cs2 + r * k, sizeof(float) * (size_t)cn[r]) ||
            memcmp(gi + r * k, ci + r * k, sizeof(int64_t) * (size_t)cn[r])) {
            fprintf(stderr, "  %s: floor %a, query %lld: cuda keeps %lld, cpu %lld, or their heads differ\n", name,
                    fl[r], (long long)r, (long long)gn[r], (long long)cn[r]);
            ok = 0;
        }
    free(fl);
    free(gs);
    free(cs2);
    free(gi);
    free(ci);
    free(gn);
    free(cn);
    return ok;
}

/* Run top-k on both backends and compare; `expect` is the status the CUDA call must give. */
static int topk_case(struct mieb_backend *gpu, const char *name, const struct mieb_vecs *q, const struct mieb_vecs *d,
                     enum mieb_sim sim, int64_t k, const struct gt_tol *tol, mieb_status expect)
{
    struct mieb_qset *qg = NULL, *qc = NULL;
    size_t n = (size_t)(q->n * k);
    float *gs = malloc(sizeof(float) * n + 1), *cs = malloc(sizeof(float) * n + 1);
    int64_t *gi = malloc(sizeof(int64_t) * n + 1), *ci = malloc(sizeof(int64_t) * n + 1);
    int ok = gs && cs && gi && ci;
    mieb_status st = MIEB_OK;
    if (ok) {
        st = mieb_backend_prepare_queries(gpu, q, sim, &qg);
        if (st == MIEB_OK)
            st = mieb_backend_topk_block(gpu, qg, d, k, gs, gi);
        if (st != expect) {
            fprintf(stderr, "  %s: cuda gave '%s' (%s), expected '%s'\n", name, mieb_status_str(st),
                    mieb_last_error(), mieb_status_str(expect));
            ok = 0;
        }
    }
    if (ok && st == MIEB_OK) {
        ok = mieb_backend_prepare_queries(cpu_be, q, sim, &qc) == MIEB_OK &&
             mieb_backend_topk_block(cpu_be, qc, d, k, cs, ci) == MIEB_OK;
        if (!ok)
            fprintf(stderr, "  %s: cpu reference failed: %s\n", name, mieb_last_error());
        else
            ok = gt_compare_topk(name, q, d, sim, k, cs, ci, gs, gi, tol);
    }
    if (ok && st == MIEB_OK && tol->exact)
        ok = floor_case(gpu, name, qg, qc, q->n, d, k, cs);
    mieb_backend_release_queries(gpu, qg);
    mieb_backend_release_queries(cpu_be, qc);
    free(gs);
    free(cs);
    free(gi);
    free(ci);
    return ok;
}

static int pairs_case(struct mieb_backend *gpu, const char *name, const struct mieb_vecs *q,
                      const struct mieb_vecs *d, enum mieb_sim sim, int64_t n_pairs, const struct gt_tol *tol)
{
    struct mieb_qset *qg = NULL, *qc = NULL;
    int64_t *qi = malloc(sizeof(int64_t) * (size_t)n_pairs), *di = malloc(sizeof(int64_t) * (size_t)n_pairs);
    float *gs = malloc(sizeof(float) * (size_t)n_pairs), *cs = malloc(sizeof(float) * (size_t)n_pairs);
    int ok = qi && di && gs && cs;
    for (int64_t p = 0; ok && p < n_pairs; p++) {
        qi[p] = gt_rand() % (uint32_t)q->n;
        di[p] = gt_rand() % (uint32_t)d->n;
    }
    if (ok && (mieb_backend_prepare_queries(gpu, q, sim, &qg) != MIEB_OK ||
               mieb_backend_score_pairs(gpu, qg, d, n_pairs, qi, di, gs) != MIEB_OK)) {
        fprintf(stderr, "  %s: cuda failed: %s\n", name, mieb_last_error());
        ok = 0;
    }
    if (ok && (mieb_backend_prepare_queries(cpu_be, q, sim, &qc) != MIEB_OK ||
               mieb_backend_score_pairs(cpu_be, qc, d, n_pairs, qi, di, cs) != MIEB_OK)) {
        fprintf(stderr, "  %s: cpu reference failed: %s\n", name, mieb_last_error());
        ok = 0;
    }
    if (ok)
        ok = gt_compare_scores(name, cs, gs, n_pairs, tol);
    mieb_backend_release_queries(gpu, qg);
    mieb_backend_release_queries(cpu_be, qc);
    free(qi);
    free(di);
    free(gs);
    free(cs);
    return ok;
}

/* ---- the tests ---- */

static void test_topk_exact(struct mieb_backend *gpu)
{
    struct gt_set q, d;
    const int64_t ks[] = {1, 10, 1000, 1001, 4999, 5000, 6000};
    int ok = gt_set_make(&q, 64, 48, 0, 0, 0) && gt_set_make(&d, 5000, 48, 0, 0, 0);
    for (size_t i = 0; ok && i < sizeof ks / sizeof ks[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "topk dot exact k=%lld", (long long)ks[i]);
        gt_result(name, topk_case(gpu, name, &q.v, &d.v, MIEB_SIM_DOT, ks[i], &TOL_EXACT, MIEB_OK));
    }
    if (!ok)
        gt_result("topk dot exact (inputs)", 0);
    gt_set_free(&q);
    gt_set_free(&d);
}

/* An fp32 backend whose scores come from cuBLAS in its own order (the benchmarks' peer). */
static struct mieb_backend *cublas_fp32_backend(size_t mem_limit)
{
    setenv("MIEB_CUDA_GEMM", "cublas", 1);
    struct mieb_backend *be = gt_cuda_new(mem_limit, MIEB_PREC_FP32);
    unsetenv("MIEB_CUDA_GEMM");
    return be;
}

/* Random unit vectors: the default (fixed-order) backend must equal the CPU exactly; `label`
   names the backend in the case names. */
static void test_topk_random(struct mieb_backend *gpu, const char *label, const struct gt_tol *tol)
{
    struct gt_set q = {0}, d = {0};
    const int64_t ks[] = {1, 10, 1000, 1001};
    int ok = gpu && gt_set_make(&q, 100, 128, 1, 0, 0) && gt_set_make(&d, 30000, 128, 1, 0, 0);
    for (size_t i = 0; ok && i < sizeof ks / sizeof ks[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "topk cosine random%s k=%lld", label, (long long)ks[i]);
        gt_result(name, topk_case(gpu, name, &q.v, &d.v, MIEB_SIM_COSINE, ks[i], tol, MIEB_OK));
    }
    if (!ok)
        gt_result("topk cosine random (inputs)", 0);
    gt_set_free(&q);
    gt_set_free(&d);
}

/* A 6 MiB budget: query groups, many corpus tiles and query chunks, still exact. */
static void test_topk_tiled(void)
{
    struct mieb_backend *small = gt_cuda_new((size_t)6 << 20, MIEB_PREC_FP32);
    struct gt_set q = {0}, d = {0}, mq = {0}, md = {0}, rq = {0}, rd = {0};
    int ok = small && gt_set_make(&q, 300, 64, 0, 0, 0) && gt_set_make(&d, 20000, 64, 0, 0, 0) &&
             gt_set_make(&mq, 40, 64, 0, 0, 9) && gt_set_make(&md, 3000, 64, 0, 1, 40) &&
             gt_set_make(&rq, 300, 96, 1, 0, 0) && gt_set_make(&rd, 20000, 96, 1, 0, 0);
    if (ok) {
        /* random scores under other tiles: still the CPU's bits, so the same ranking */
        gt_result("topk cosine random tiled 6MiB k=1001",
                  topk_case(small, "topk cosine random tiled 6MiB k=1001", &rq.v, &rd.v, MIEB_SIM_COSINE, 1001,
                            &TOL_EXACT, MIEB_OK));
        gt_result("topk tiled 6MiB k=1001", topk_case(small, "topk tiled 6MiB k=1001", &q.v, &d.v, MIEB_SIM_DOT,
                                                      1001, &TOL_EXACT, MIEB_OK));
        gt_result("topk tiled 6MiB k=7", topk_case(small, "topk tiled 6MiB k=7", &q.v, &d.v, MIEB_SIM_DOT, 7,
                                                   &TOL_EXACT, MIEB_OK));
        gt_result("maxsim tiled 6MiB k=1001", topk_case(small, "maxsim tiled 6MiB k=1001", &mq.v, &md.v,
                                                        MIEB_SIM_MAXSIM, 1001, &TOL_EXACT, MIEB_OK));
        gt_result("pairs tiled 6MiB", pairs_case(small, "pairs tiled 6MiB", &q.v, &d.v, MIEB_SIM_DOT, 50000,
                                                 &TOL_EXACT));
        gt_result("pairs maxsim tiled 6MiB", pairs_case(small, "pairs maxsim tiled 6MiB", &mq.v, &md.v,
                                                        MIEB_SIM_MAXSIM, 20000, &TOL_EXACT));
    } else {
        gt_result("tiled tests (setup)", 0);
    }
    gt_set_free(&q);
    gt_set_free(&d);
    gt_set_free(&mq);
    gt_set_free(&md);
    gt_set_free(&rq);
    gt_set_free(&rd);
    mieb_backend_free(small);
}

static void test_maxsim(struct mieb_backend *gpu)
{
    struct gt_set q, d, rq, rd;
    const int64_t ks[] = {1, 10, 100, 1001};
    /* exact: items of 0..9 query tokens and 0..30 doc tokens (empty items included) */
    int ok = gt_set_make(&q, 30, 16, 0, 0, 9) && gt_set_make(&d, 600, 16, 0, 0, 30) &&
             gt_set_make(&rq, 20, 64, 1, 3, 32) && gt_set_make(&rd, 2000, 64, 1, 5, 40);
    for (size_t i = 0; ok && i < sizeof ks / sizeof ks[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "maxsim exact k=%lld", (long long)ks[i]);
        gt_result(name, topk_case(gpu, name, &q.v, &d.v, MIEB_SIM_MAXSIM, ks[i], &TOL_EXACT, MIEB_OK));
    }
    if (ok) {
        /* token products in the CPU's order, maxima added in token order: the CPU's bits */
        gt_result("maxsim random k=100",
                  topk_case(gpu, "maxsim random k=100", &rq.v, &rd.v, MIEB_SIM_MAXSIM, 100, &TOL_EXACT, MIEB_OK));
        gt_result("pairs maxsim exact", pairs_case(gpu, "pairs maxsim exact", &q.v, &d.v, MIEB_SIM_MAXSIM, 5000,
                                                   &TOL_EXACT));
        gt_result("pairs maxsim random",
                  pairs_case(gpu, "pairs maxsim random", &rq.v, &rd.v, MIEB_SIM_MAXSIM, 5000, &TOL_EXACT));
        struct mieb_backend *cb = cublas_fp32_backend(0);
        struct gt_tol tol = {0, 2e-4, 1e-4, 5e-4}; /* sums of up to 32 maxima */
        gt_result("maxsim random (cublas) k=100",
                  cb && topk_case(cb, "maxsim random (cublas) k=100", &rq.v, &rd.v, MIEB_SIM_MAXSIM, 100, &tol,
                                  MIEB_OK));
        mieb_backend_free(cb);
    } else {
        gt_result("maxsim (inputs)", 0);
    }
    gt_set_free(&q);
    gt_set_free(&d);
    gt_set_free(&rq);
    gt_set_free(&rd);
}

static void test_pairs(struct mieb_backend *gpu)
{
    struct gt_set q, d, rq, rd;
    int ok = gt_set_make(&q, 50, 96, 0, 0, 0) && gt_set_make(&d, 3000, 96, 0, 0, 0) &&
             gt_set_make(&rq, 50, 256, 1, 0, 0) && gt_set_make(&rd, 3000, 256, 1, 0, 0);
    if (ok) {
        gt_result("pairs dot exact", pairs_case(gpu, "pairs dot exact", &q.v, &d.v, MIEB_SIM_DOT, 20000, &TOL_EXACT));
        gt_result("pairs cosine random",
                  pairs_case(gpu, "pairs cosine random", &rq.v, &rd.v, MIEB_SIM_COSINE, 20000, &TOL_EXACT));
    } else {
        gt_result("pairs (inputs)", 0);
    }
    gt_set_free(&q);
    gt_set_free(&d);
    gt_set_free(&rq);
    gt_set_free(&rd);
}

static int retry_warnings;
static void count_retries(enum mieb_log_level lvl, const char *msg, void *user)
{
    (void)user;
    if (lvl == MIEB_LOG_WARN && strstr(msg, "retrying"))
        retry_warnings++;
    fprintf(stderr, "  [log] %s\n", msg);
}

static void test_oom(struct mieb_backend *gpu)
{
    struct mieb_cuda_ctx *ctx = gpu->ctx;
    struct gt_set q, d;
    int ok = gt_set_make(&q, 2000, 64, 0, 0, 0) && gt_set_make(&d, 20000, 64, 0, 0, 0);
    if (!ok) {
        gt_result("oom (inputs)", 0);
        return;
    }
    /* 1. an impossible request fails cleanly, and the next normal one works */
    mieb_status st = mieb_cuda_pool_reserve(ctx, &ctx->scratch, (size_t)1 << 50, "an impossible 1 PiB test");
    printf("  impossible allocation: %s (%s)\n", mieb_status_str(st), mieb_last_error());
    gt_result("oom: 1 PiB request gives MIEB_ERR_OOM", st == MIEB_ERR_OOM);
    gt_result("oom: normal request afterwards",
              topk_case(gpu, "after the 1 PiB request", &q.v, &d.v, MIEB_SIM_DOT, 10, &TOL_EXACT, MIEB_OK));

    /* 2. allocations above 16 MiB fail as on a full device: recovered by smaller tiles
     * (a fresh backend, so no pool from an earlier test is already big enough) */
    struct mieb_backend *fresh = gt_cuda_new(0, MIEB_PREC_FP32);
    struct gt_set sq;
    if (!fresh || !gt_set_make(&sq, 4, 64, 0, 0, 0)) {
        gt_result("oom (setup)", 0);
        mieb_backend_free(fresh);
        gt_set_free(&q);
        gt_set_free(&d);
        return;
    }
    mieb_log_set(count_retries, NULL, MIEB_LOG_WARN);
    ((struct mieb_cuda_ctx *)fresh->ctx)->fail_alloc_above = (size_t)16 << 20;
    ok = topk_case(fresh, "oom recovery k=1001", &q.v, &d.v, MIEB_SIM_DOT, 1001, &TOL_EXACT, MIEB_OK);
    gt_result("oom: recovered by tiling smaller", ok && retry_warnings > 0);
    mieb_backend_free(fresh);

    /* 3. when even the smallest tiles cannot be had: MIEB_ERR_OOM, and the backend works
     * again once memory is back (the 1 KiB queries still fit under the 64 KiB cap) */
    fresh = gt_cuda_new(0, MIEB_PREC_FP32);
    if (fresh) {
        ((struct mieb_cuda_ctx *)fresh->ctx)->fail_alloc_above = (size_t)64 << 10;
        gt_result("oom: nothing fits gives MIEB_ERR_OOM",
                  topk_case(fresh, "oom all", &sq.v, &d.v, MIEB_SIM_DOT, 1001, &TOL_EXACT, MIEB_ERR_OOM));
        ((struct mieb_cuda_ctx *)fresh->ctx)->fail_alloc_above = 0;
        gt_result("oom: usable again",
                  topk_case(fresh, "after oom", &sq.v, &d.v, MIEB_SIM_DOT, 1001, &TOL_EXACT, MIEB_OK));
    } else {
        gt_result("oom (setup 2)", 0);
    }
    mieb_log_set(NULL, NULL, log_level);
    mieb_backend_free(fresh);

    /* 4. a budget too small for the smallest tiles is MIEB_ERR_TOO_LARGE, not OOM */
    struct mieb_backend *tiny = gt_cuda_new((size_t)256 << 10, MIEB_PREC_FP32);
    struct gt_set big;
    if (tiny && gt_set_make(&big, 2000, 64, 0, 0, 0)) {
        gt_result("budget: top-1001 in 256 KiB is MIEB_ERR_TOO_LARGE",
                  topk_case(tiny, "tiny budget", &sq.v, &d.v, MIEB_SIM_DOT, 1001, &TOL_EXACT, MIEB_ERR_TOO_LARGE));
        struct mieb_qset *qs = NULL;
        st = mieb_backend_prepare_queries(tiny, &big.v, MIEB_SIM_DOT, &qs);
        gt_result("budget: 500 KiB of queries in 256 KiB is MIEB_ERR_TOO_LARGE", st == MIEB_ERR_TOO_LARGE);
        mieb_backend_release_queries(tiny, qs);
        gt_result("budget: top-1 in 256 KiB works",
                  topk_case(tiny, "tiny budget k=1", &sq.v, &d.v, MIEB_SIM_DOT, 1, &TOL_EXACT, MIEB_OK));
        gt_set_free(&big);
    } else {
        gt_result("budget (setup)", 0);
    }
    mieb_backend_free(tiny);
    gt_set_free(&sq);
    gt_set_free(&q);
    gt_set_free(&d);
}

/* ---- kmeans_assign ---- */

/* Squared distance in double: the truth that decides whether a label difference is a near-tie. */
static double km_truth(const float *x, const float *c, int64_t dim)
{
    double t = 0.0;
    for (int64_t f = 0; f < dim; f++)
        t += ((double)x[f] - c[f]) * ((double)x[f] - c[f]);
    return t;
}

/* CUDA labels vs the CPU reference's. tie_tol < 0: identical; else a differing label must
 * be no farther than tie_tol (+ relative) from the CPU's in true distance. */
static int km_case(struct mieb_backend *gpu, const char *name, const float *x, int64_t n, const float *c,
                   const float *csq, int64_t k, int64_t dim, double tie_tol)
{
    int32_t *gl = malloc(sizeof(int32_t) * (size_t)n + 1), *cl = malloc(sizeof(int32_t) * (size_t)n + 1);
    int ok = gl && cl, diff = 0, bad = 0;
    if (ok && mieb_dispatch_kmeans_assign(gpu, x, n, c, csq, k, dim, gl) != MIEB_OK) {
        fprintf(stderr, "  %s: cuda failed: %s\n", name, mieb_last_error());
        ok = 0;
    }
    if (ok && mieb_cpu_kmeans_assign(cpu_be, x, n, c, csq, k, dim, cl) != MIEB_OK) {
        fprintf(stderr, "  %s: cpu reference failed: %s\n", name, mieb_last_error());
        ok = 0;
    }
    for (int64_t i = 0; ok && i < n; i++) {
        if (gl[i] == cl[i])
            continue;
        diff++;
        double dg = gl[i] >= 0 && gl[i] < k ? km_truth(x + i * dim, c + (int64_t)gl[i] * dim, dim) : 1e300;
        double dc = km_truth(x + i * dim, c + (int64_t)cl[i] * dim, dim);
        if (tie_tol < 0 || dg - dc > tie_tol * (1.0 + dc)) {
            if (bad++ < 5)
                fprintf(stderr, "  %s: row %lld: cuda %d (d %.9g) cpu %d (d %.9g)\n", name, (long long)i, gl[i],
                        dg, cl[i], dc);
        }
    }
    if (ok && diff)
        printf("  %s: %d of %lld labels differ, %d beyond the near-tie tolerance (seed %llu)\n", name, diff,
               (long long)n, bad, (unsigned long long)gt_seed_value());
    free(gl);
    free(cl);
    return ok && bad == 0;
}

/* Centres: rows of x (exact inputs give exact distances), the second half repeating the
 * first (exact ties that only the index breaks); norms in numpy's order, as callers give. */
static void km_centres(const float *x, int64_t n, int64_t k, int64_t dim, float *c, float *csq)
{
    for (int64_t j = 0; j < k; j++) {
        int64_t src = j >= (k + 1) / 2 ? (k - 1 - j) : (int64_t)(gt_rand() % (uint32_t)n);
        memcpy(c + j * dim, j >= (k + 1) / 2 ? c + src * dim : x + src * dim, sizeof(float) * (size_t)dim);
    }
    mieb_np_row_sqnorms_f32(c, k, dim, csq);
}

/* One kmeans_assign case on fresh inputs: kind 0 exact, 1 unit rows; k == n uses c = x. */
static void km_run_case(struct mieb_backend *gpu, const char *name, int kind, int64_t n, int64_t k, int64_t dim)
{
    float *x = malloc(sizeof(float) * (size_t)(n * dim)), *c = malloc(sizeof(float) * (size_t)(k * dim));
    float *csq = malloc(sizeof(float) * (size_t)k);
    int ok = x && c && csq;
    if (ok) {
        if (kind == 0)
            gt_fill_exact(x, n * dim);
        else
            gt_fill_unit_rows(x, n, dim);
        for (int64_t i = 7; i < n; i += 50) /* duplicate rows */
            memcpy(x + i * dim, x + (i - 7) * dim, sizeof(float) * (size_t)dim);
        if (k == n) {
            memcpy(c, x, sizeof(float) * (size_t)(n * dim));
            mieb_np_row_sqnorms_f32(c, k, dim, csq);
        } else if (kind == 0) {
            km_centres(x, n, k, dim, c, csq);
        } else {
            gt_fill_unit_rows(c, k, dim);
            mieb_np_row_sqnorms_f32(c, k, dim, csq);
        }
        ok = km_case(gpu, name, x, n, c, csq, k, dim, kind == 0 ? -1.0 : 1e-4);
        if (ok && kind == 0 && k > 4) { /* NaN norms: at j = 3 never chosen, at j = 0 label 0 */
            csq[3] = NAN;
            ok = km_case(gpu, "  (NaN norm at j=3)", x, n, c, csq, k, dim, -1.0);
            csq[0] = NAN;
            ok = ok && km_case(gpu, "  (NaN norm at j=0)", x, n, c, csq, k, dim, -1.0);
        }
    }
    gt_result(name, ok);
    free(x);
    free(c);
    free(csq);
}

static void test_kmeans(struct mieb_backend *gpu)
{
    km_run_case(gpu, "kmeans exact ties k=40", 0, 3000, 40, 48);
    km_run_case(gpu, "kmeans exact dim 4 k=30", 0, 5000, 30, 4);
    km_run_case(gpu, "kmeans exact k=1", 0, 1000, 1, 32);
    km_run_case(gpu, "kmeans exact k=n", 0, 2000, 2000, 16);
    km_run_case(gpu, "kmeans random k=64", 1, 4000, 64, 128);
    km_run_case(gpu, "kmeans random k=n", 1, 1500, 1500, 64);

    /* 1 MiB budget: many chunks; 64 KiB: over budget, the CPU takes over */
    struct mieb_backend *small = gt_cuda_new((size_t)1 << 20, MIEB_PREC_FP32);
    struct mieb_backend *tiny = gt_cuda_new((size_t)64 << 10, MIEB_PREC_FP32);
    if (small && tiny) {
        km_run_case(small, "kmeans chunked 1MiB", 0, 20000, 40, 64);
        km_run_case(tiny, "kmeans over budget: CPU fallback", 0, 20000, 40, 64);
    } else {
        gt_result("kmeans budgets (setup)", 0);
    }
    mieb_backend_free(small);
    mieb_backend_free(tiny);

    /* allocations above 1 MiB fail: recovered by smaller chunks */
    struct mieb_backend *fresh = gt_cuda_new(0, MIEB_PREC_FP32);
    if (fresh) {
        retry_warnings = 0;
        mieb_log_set(count_retries, NULL, MIEB_LOG_WARN);
        ((struct mieb_cuda_ctx *)fresh->ctx)->fail_alloc_above = (size_t)1 << 20;
        km_run_case(fresh, "kmeans oom recovery", 0, 20000, 40, 64);
        gt_result("kmeans oom: retried with smaller chunks", retry_warnings > 0);
        mieb_log_set(NULL, NULL, log_level);
    } else {
        gt_result("kmeans oom (setup)", 0);
    }
    mieb_backend_free(fresh);

    /* one buffer refilled between calls (MiniBatchKMeans): no stale device copy; n = 0;
     * bad shapes; --precision tf32 still assigns in fp32 (same labels as the fp32 backend) */
    struct mieb_backend *tf32 = gt_cuda_new(0, MIEB_PREC_TF32);
    const int64_t n = 2048, k = 50, dim = 96;
    float *x = malloc(sizeof(float) * n * dim), *c = malloc(sizeof(float) * k * dim), csq[50];
    int32_t *l1 = malloc(sizeof(int32_t) * n), *l2 = malloc(sizeof(int32_t) * n);
    int ok = tf32 && x && c && l1 && l2;
    if (ok) {
        gt_fill_unit_rows(x, n, dim);
        gt_fill_unit_rows(c, k, dim);
        mieb_np_row_sqnorms_f32(c, k, dim, csq);
        ok = km_case(gpu, "kmeans refill (1)", x, n, c, csq, k, dim, 1e-4);
        gt_fill_unit_rows(x, n, dim);
        ok = ok && km_case(gpu, "kmeans refill (2)", x, n, c, csq, k, dim, 1e-4);
        gt_result("kmeans: a refilled buffer is uploaded again", ok);
        ok = mieb_dispatch_kmeans_assign(gpu, x, n, c, csq, k, dim, l1) == MIEB_OK &&
             mieb_dispatch_kmeans_assign(tf32, x, n, c, csq, k, dim, l2) == MIEB_OK &&
             !memcmp(l1, l2, sizeof(int32_t) * n);
        gt_result("kmeans: fp32 labels under --precision tf32", ok);
        ok = mieb_dispatch_kmeans_assign(gpu, x, 0, c, csq, k, dim, l1) == MIEB_OK &&
             mieb_dispatch_kmeans_assign(gpu, x, n, c, csq, 0, dim, l1) == MIEB_ERR_INVALID_ARG &&
             mieb_dispatch_kmeans_assign(gpu, x, n, c, csq, k, 0, l1) == MIEB_ERR_INVALID_ARG &&
             mieb_dispatch_kmeans_assign(gpu, x, -1, c, csq, k, dim, l1) == MIEB_ERR_INVALID_ARG;
        gt_result("kmeans: n=0 is a no-op, bad shapes give MIEB_ERR_INVALID_ARG", ok);
    } else {
        gt_result("kmeans misc (setup)", 0);
    }
    mieb_backend_free(tf32);
    free(x);
    free(c);
    free(l1);
    free(l2);
}

static void test_misuse(struct mieb_backend *gpu)
{
    struct gt_set q, d, m;
    struct mieb_qset *qs = NULL;
    float s[4];
    int64_t i[4];
    if (!gt_set_make(&q, 4, 32, 0, 0, 0) || !gt_set_make(&d, 10, 16, 0, 0, 0) || !gt_set_make(&m, 4, 32, 0, 1, 3)) {
        gt_result("misuse (inputs)", 0);
        return;
    }
    int ok = mieb_backend_prepare_queries(gpu, &q.v, MIEB_SIM_DOT, &qs) == MIEB_OK;
    ok = ok && mieb_backend_topk_block(gpu, qs, &d.v, 1, s, i) == MIEB_ERR_INVALID_ARG; /* dim 32 vs 16 */
    mieb_backend_release_queries(gpu, qs);
    qs = NULL;
    ok = ok && mieb_backend_prepare_queries(gpu, &m.v, MIEB_SIM_DOT, &qs) == MIEB_ERR_INVALID_ARG;
    ok = ok && mieb_backend_prepare_queries(gpu, &q.v, MIEB_SIM_MAXSIM, &qs) == MIEB_ERR_INVALID_ARG;
    gt_result("misuse: bad inputs give MIEB_ERR_INVALID_ARG", ok);
    int64_t rows = mieb_backend_max_block_rows(gpu, NULL, 512, 1001);
    printf("  max_block_rows(dim 512, k 1001) = %lld\n", (long long)rows);
    gt_result("max_block_rows is positive", rows >= 1);
    gt_set_free(&q);
    gt_set_free(&d);
    gt_set_free(&m);
}

static void test_reduced_precision(enum mieb_precision prec, const char *name)
{
    struct mieb_backend *be = gt_cuda_new(0, prec);
    struct gt_set q, d;
    if (!be || !gt_set_make(&q, 50, 256, 1, 0, 0) || !gt_set_make(&d, 10000, 256, 1, 0, 0)) {
        gt_result(name, 0);
        mieb_backend_free(be);
        return;
    }
    /* tensor-core inputs: scores only roughly equal; ids may swap among close scores */
    struct gt_tol tol = {0, prec == MIEB_PREC_BF16 ? 2e-2 : 3e-3, 0, prec == MIEB_PREC_BF16 ? 4e-2 : 6e-3};
    gt_result(name, topk_case(be, name, &q.v, &d.v, MIEB_SIM_COSINE, 10, &tol, MIEB_OK));
    gt_set_free(&q);
    gt_set_free(&d);
    mieb_backend_free(be);
}

int main(int argc, char **argv)
{
    uint64_t seed = 20240611;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--seed") && a + 1 < argc)
            seed = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "--verbose"))
            log_level = MIEB_LOG_DEBUG; /* the CUDA backend logs each call's tile plan */
    }
    mieb_log_set(NULL, NULL, log_level);
    gt_seed(seed);
    printf("test_cuda_backend: seed %llu\n", (unsigned long long)seed);

    struct mieb_backend *gpu = gt_cuda_new(0, MIEB_PREC_FP32);
    if (!gpu) {
        printf("SKIPPED: no usable CUDA device (%s)\n", mieb_last_error());
        return EXIT_SKIP;
    }
    if (mieb_backend_cpu_init(NULL, &cpu_be) != MIEB_OK) {
        fprintf(stderr, "cpu backend: %s\n", mieb_last_error());
        mieb_backend_free(gpu);
        return 1;
    }
    test_topk_exact(gpu);
    test_topk_random(gpu, "", &TOL_EXACT);
    struct mieb_backend *cb = cublas_fp32_backend(0);
    test_topk_random(cb, " (cublas)", &TOL_FP32);
    mieb_backend_free(cb);
    test_topk_tiled();
    test_maxsim(gpu);
    test_pairs(gpu);
    test_oom(gpu);
    test_misuse(gpu);
    test_kmeans(gpu);
    test_pairwise_ops(gpu, cpu_be);
    test_logreg_ops(gpu);
    test_screen_ops(cpu_be);
    test_reduced_precision(MIEB_PREC_TF32, "topk tf32 smoke k=10");
    test_reduced_precision(MIEB_PREC_BF16, "topk bf16 smoke k=10");
    mieb_backend_free(gpu);
    mieb_backend_free(cpu_be);
    printf("test_cuda_backend: seed %llu\n", (unsigned long long)seed);
    return gt_summary();
}
