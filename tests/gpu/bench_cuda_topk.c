/**
 * bench_cuda_topk.c - GPU throughput of the retrieval search: top-k over a streamed
 * corpus, reported as queries x docs x dim per second (and the GEMM-equivalent TFLOP/s).
 *
 *   bench_cuda_topk [--queries 10000] [--docs 1000000] [--dim 512] [--k 1000]
 *                   [--block N] [--cpu-docs N] [--cublas-docs N] [--int8-docs N]
 *                   [--precision fp32|tf32|bf16]
 *
 * One corpus block of unit vectors is generated once and scored repeatedly until --docs
 * documents have been searched, as the driver streams blocks (block size defaults to the
 * backend's max_block_rows, at most 200,000). The time covers what topk_block does:
 * staging, uploads, GEMMs, selection, the final sort and the download. With --cpu-docs N
 * the CPU backend scores N documents too, for a speed-up figure. With --cublas-docs N (fp32)
 * a second CUDA backend scores N documents with cuBLAS' SGEMM (MIEB_CUDA_GEMM=cublas) in
 * place of the fixed-order kernel (kernels/canon_gemm.cu), for what the CPU's bits cost.
 * The main GPU figure is the exact way (MIEB_CUDA_SCREEN=off); with --int8-docs N (fp32) a
 * backend with the int8 screen on every block (MIEB_CUDA_SCREEN=int8, docs/SCREEN_INT8.md)
 * scores N documents, for its speed-up, and its last block's lists must equal the exact
 * way's byte for byte (every block holds the same rows; compared when N is whole blocks).
 * Exit status: 0 ran, 1 failed, 77 no usable GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "gpu_test_util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Search `total` docs in blocks of d->n; returns seconds, or a negative value on error. */
static double search(struct mieb_backend *be, const struct mieb_vecs *q, const struct mieb_vecs *d, int64_t total,
                     int64_t k, float *s, int64_t *i)
{
    struct mieb_qset *qs = NULL;
    if (mieb_backend_prepare_queries(be, q, MIEB_SIM_COSINE, &qs) != MIEB_OK)
        return -1.0;
    int64_t kb = k < d->n ? k : d->n;
    double t0 = now_s();
    for (int64_t done = 0; done < total; done += d->n) {
        struct mieb_vecs blk = *d;
        if (total - done < blk.n)
            blk.n = blk.rows = total - done;
        if (mieb_backend_topk_block(be, qs, &blk, kb, s, i) != MIEB_OK) {
            mieb_backend_release_queries(be, qs);
            return -1.0;
        }
    }
    double t = now_s() - t0;
    mieb_backend_release_queries(be, qs);
    return t;
}

int main(int argc, char **argv)
{
    int64_t nq = 10000, nd = 1000000, dim = 512, k = 1000, block = 0, cpu_docs = 0, cublas_docs = 0, int8_docs = 0;
    enum mieb_precision prec = MIEB_PREC_FP32;
    for (int a = 1; a + 1 < argc; a += 2) {
        long long v = strtoll(argv[a + 1], NULL, 10);
        if (!strcmp(argv[a], "--queries"))
            nq = v;
        else if (!strcmp(argv[a], "--docs"))
            nd = v;
        else if (!strcmp(argv[a], "--dim"))
            dim = v;
        else if (!strcmp(argv[a], "--k"))
            k = v;
        else if (!strcmp(argv[a], "--block"))
            block = v;
        else if (!strcmp(argv[a], "--cpu-docs"))
            cpu_docs = v;
        else if (!strcmp(argv[a], "--cublas-docs"))
            cublas_docs = v;
        else if (!strcmp(argv[a], "--int8-docs"))
            int8_docs = v;
        else if (!strcmp(argv[a], "--precision"))
            prec = !strcmp(argv[a + 1], "tf32") ? MIEB_PREC_TF32 : !strcmp(argv[a + 1], "bf16") ? MIEB_PREC_BF16
                                                                                               : MIEB_PREC_FP32;
        else {
            fprintf(stderr, "bench_cuda_topk: unknown option %s\n", argv[a]);
            return 1;
        }
    }
    if (nq < 1 || nd < 1 || dim < 1 || k < 1) {
        fprintf(stderr, "bench_cuda_topk: sizes must be positive\n");
        return 1;
    }

    struct mieb_backend_opts o = {0};
    struct mieb_backend *gpu = NULL;
    o.precision = prec;
    setenv("MIEB_CUDA_SCREEN", "off", 1); /* the exact way; the screen has its own run below */
    mieb_status gst = mieb_backend_cuda_init(&o, &gpu);
    unsetenv("MIEB_CUDA_SCREEN");
    if (gst != MIEB_OK) {
        printf("SKIPPED: no usable CUDA device (%s)\n", mieb_last_error());
        return 77;
    }
    if (block <= 0) {
        block = mieb_backend_max_block_rows(gpu, NULL, dim, k);
        if (block > 200000)
            block = 200000;
    }
    if (block > nd)
        block = nd;

    gt_seed(7);
    struct gt_set q, d;
    float *s = malloc(sizeof(float) * (size_t)(nq * k));
    int64_t *i = malloc(sizeof(int64_t) * (size_t)(nq * k));
    if (!s || !i || !gt_set_make(&q, nq, dim, 1, 0, 0) || !gt_set_make(&d, block, dim, 1, 0, 0)) {
        fprintf(stderr, "bench_cuda_topk: out of host memory\n");
        return 1;
    }
    printf("bench_cuda_topk: %lld queries x %lld docs x dim %lld, top-%lld, blocks of %lld, %s\n", (long long)nq,
           (long long)nd, (long long)dim, (long long)k, (long long)block,
           prec == MIEB_PREC_TF32 ? "tf32" : prec == MIEB_PREC_BF16 ? "bf16" : "fp32");

    /* warm-up: CUDA context, cuBLAS heuristics, pool growth */
    if (search(gpu, &q.v, &d.v, block, k, s, i) < 0) {
        fprintf(stderr, "bench_cuda_topk: %s\n", mieb_last_error());
        return 1;
    }
    double t = search(gpu, &q.v, &d.v, nd, k, s, i);
    if (t < 0) {
        fprintf(stderr, "bench_cuda_topk: %s\n", mieb_last_error());
        return 1;
    }
    /* the exact way's lists, for the int8 screen's to equal (every block is the same rows) */
    float *s0 = int8_docs > 0 ? malloc(sizeof(float) * (size_t)(nq * k)) : NULL;
    int64_t *i0 = int8_docs > 0 ? malloc(sizeof(int64_t) * (size_t)(nq * k)) : NULL;
    if (s0 && i0) {
        memcpy(s0, s, sizeof(float) * (size_t)(nq * k));
        memcpy(i0, i, sizeof(int64_t) * (size_t)(nq * k));
    }
    double qdd = (double)nq * (double)nd * (double)dim;
    printf("GPU: %.3f s, %.3g docs/s, %.3g queries*docs*dim/s (%.1f TFLOP/s GEMM-equivalent)\n", t,
           (double)nd / t, qdd / t, 2.0 * qdd / t / 1e12);

    if (cpu_docs > 0) {
        struct mieb_backend *cpu = NULL;
        if (mieb_backend_cpu_init(NULL, &cpu) == MIEB_OK) {
            int64_t n = cpu_docs < block ? cpu_docs : block;
            double tc = search(cpu, &q.v, &d.v, n, k, s, i);
            if (tc > 0) {
                double qc = (double)nq * (double)n * (double)dim;
                printf("CPU: %.3f s for %lld docs, %.3g queries*docs*dim/s; GPU speed-up x%.1f\n", tc, (long long)n,
                       qc / tc, (qdd / t) / (qc / tc));
            }
            mieb_backend_free(cpu);
        }
    }
    double cublas_ratio = 0.0; /* cuBLAS' rate / the fixed order's, same run */
    if (cublas_docs > 0 && prec == MIEB_PREC_FP32) {
        struct mieb_backend *cb = NULL;
        setenv("MIEB_CUDA_GEMM", "cublas", 1);
        mieb_status st = mieb_backend_cuda_init(&o, &cb);
        unsetenv("MIEB_CUDA_GEMM");
        double tb = st == MIEB_OK && search(cb, &q.v, &d.v, block, k, s, i) >= 0
                        ? search(cb, &q.v, &d.v, cublas_docs, k, s, i) : -1.0;
        if (tb > 0) {
            double qb = (double)nq * (double)cublas_docs * (double)dim;
            cublas_ratio = (qb / tb) / (qdd / t);
            printf("GPU, cuBLAS SGEMM order: %.3f s for %lld docs, %.3g queries*docs*dim/s; cuBLAS / fixed order "
                   "x%.2f\n", tb, (long long)cublas_docs, qb / tb, cublas_ratio);
        } else {
            fprintf(stderr, "bench_cuda_topk: the cuBLAS run failed: %s\n", mieb_last_error());
        }
        mieb_backend_free(cb);
    }
    double int8_ratio = 0.0; /* the int8 screen's rate / the exact way's, same run */
    int int8_same = -1;      /* its last block's lists equal the exact way's (1), differ (0), not compared (-1) */
    if (int8_docs > 0 && prec == MIEB_PREC_FP32) {
        struct mieb_backend *ib = NULL;
        float *s2 = malloc(sizeof(float) * (size_t)(nq * k));
        int64_t *i2 = malloc(sizeof(int64_t) * (size_t)(nq * k));
        setenv("MIEB_CUDA_SCREEN", "int8", 1);
        mieb_status st = s2 && i2 && s0 && i0 ? mieb_backend_cuda_init(&o, &ib) : MIEB_ERR_OOM;
        unsetenv("MIEB_CUDA_SCREEN");
        double ti = st == MIEB_OK && search(ib, &q.v, &d.v, block, k, s2, i2) >= 0
                        ? search(ib, &q.v, &d.v, int8_docs, k, s2, i2) : -1.0;
        if (ti > 0) {
            double qi = (double)nq * (double)int8_docs * (double)dim;
            int8_ratio = (qi / ti) / (qdd / t);
            if (int8_docs % block == 0) { /* its last block whole, as the exact way's */
                int8_same = !memcmp(s0, s2, sizeof(float) * (size_t)(nq * k)) &&
                            !memcmp(i0, i2, sizeof(int64_t) * (size_t)(nq * k));
            }
            printf("GPU, int8 screen: %.3f s for %lld docs, %.3g queries*docs*dim/s; int8 screen / exact x%.2f%s\n",
                   ti, (long long)int8_docs, qi / ti, int8_ratio,
                   int8_same == 1 ? ", lists identical" : int8_same == 0 ? ", LISTS DIFFER" : "");
        } else {
            fprintf(stderr, "bench_cuda_topk: the int8 screen run failed: %s\n", mieb_last_error());
        }
        mieb_backend_free(ib);
        free(s2);
        free(i2);
    }
    printf("RESULT gpu_qdd_per_s=%.4g docs_per_s=%.4g seconds=%.3f cublas_over_fixed=%.3f int8_over_exact=%.3f "
           "int8_identical=%d\n", qdd / t, (double)nd / t, t, cublas_ratio, int8_ratio, int8_same);
    if (int8_same == 0) {
        fprintf(stderr, "bench_cuda_topk: the int8 screen's lists differ from the exact way's\n");
        return 1;
    }
    gt_set_free(&q);
    gt_set_free(&d);
    free(s);
    free(i);
    free(s0);
    free(i0);
    mieb_backend_free(gpu);
    return 0;
}
