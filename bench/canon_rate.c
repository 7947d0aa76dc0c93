/**
 * canon_rate.c - the fixed-order dot product kernels (host/canon/canon_dot.h) against
 * OpenBLAS's SGEMM on the same data, in one run, as GFLOP/s and a ratio.
 *
 * The CPU backend replaced cblas_sgemm by mieb_canon_gemm so that a score no longer depends
 * on the call's shape or the machine; this shows what that costs. Shapes: the exact way's
 * tile (256 x 1250 x 768, backend.h's grid) and a larger product; modes: one thread, and two
 * threads each taking half the rows of A against the same B (how cpu_backend.c splits).
 * Every kernel set the CPU runs is measured (scalar only with --scalar: it is slow).
 * The kernels run interleaved, one run of each per round; each figure is the best of --reps
 * rounds (noise only slows a run down, and hits every kernel alike).
 *
 *   cmake --build build --target canon_rate && build/bench/canon_rate [--reps 7] [--scalar]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bench_util.h"
#include "canon/canon_dot.h"

struct job {
    int use_blas;
    const float *A, *B;
    float *C;
    int64_t m, n, K;
};

static void *work(void *arg)
{
    struct job *j = arg;
    if (j->use_blas)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)j->m, (int)j->n, (int)j->K, 1.0f, j->A, (int)j->K,
                    j->B, (int)j->K, 0.0f, j->C, (int)j->n);
    else
        mieb_canon_gemm(j->A, j->K, j->m, j->B, j->K, j->n, j->K, j->C, j->n);
    return NULL;
}

/* Best seconds of `reps` runs of C = A B^T, split over `threads` threads by rows of A. */
static double best_time(int use_blas, int threads, const float *A, const float *B, float *C, int64_t m, int64_t n,
                        int64_t K, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        struct job jobs[2];
        pthread_t tid;
        int64_t half = m / threads;
        for (int t = 0; t < threads; t++) {
            int64_t a = t * half, b = t == threads - 1 ? m : a + half;
            jobs[t] = (struct job){use_blas, A + a * K, B, C + a * n, b - a, n, K};
        }
        double t0 = bench_now();
        if (threads == 2)
            pthread_create(&tid, NULL, work, &jobs[1]);
        work(&jobs[0]);
        if (threads == 2)
            pthread_join(tid, NULL);
        double t = bench_now() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    int reps = 7, scalar = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--scalar"))
            scalar = 1;
        else {
            fprintf(stderr, "usage: canon_rate [--reps N] [--scalar]\n");
            return 2;
        }
    }
    static const int64_t shapes[][3] = {{256, 1250, 768}, {1024, 4096, 768}};
    openblas_set_num_threads(1);
    enum mieb_canon_isa best = mieb_canon_isa_supported();
    printf("# OpenBLAS %s (core %s), single-threaded per caller; canon kernels up to %s\n", openblas_get_config(),
           openblas_get_corename(), mieb_canon_isa_name(best));
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1], K = shapes[s][2];
        float *A = malloc(sizeof(float) * (size_t)(m * K)), *B = malloc(sizeof(float) * (size_t)(n * K));
        float *C = malloc(sizeof(float) * (size_t)(m * n));
        srand(1);
        for (int64_t i = 0; i < m * K; i++)
            A[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        for (int64_t i = 0; i < n * K; i++)
            B[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        double flop = 2.0 * (double)m * (double)n * (double)K;
        for (int threads = 1; threads <= 2; threads++) {
            /* interleaved: one run of each kernel per round, best of the rounds for each, so
               that the machine's slow moments (shared hosts) hit every kernel alike */
            double best_t[MIEB_CANON_AVX512 + 2];
            for (int x = 0; x < MIEB_CANON_AVX512 + 2; x++)
                best_t[x] = 1e30;
            int first = scalar ? MIEB_CANON_SCALAR : MIEB_CANON_AVX2;
            for (int r = 0; r < reps; r++) {
                double t = best_time(1, threads, A, B, C, m, n, K, 1);
                if (t < best_t[0])
                    best_t[0] = t;
                for (int isa = first; isa <= (int)best; isa++) {
                    if (isa == MIEB_CANON_SCALAR && r > 0)
                        continue; /* slow: once is enough */
                    mieb_canon_set_isa((enum mieb_canon_isa)isa);
                    t = best_time(0, threads, A, B, C, m, n, K, 1);
                    if (t < best_t[1 + isa])
                        best_t[1 + isa] = t;
                }
                mieb_canon_set_isa(best);
            }
            printf("RESULT shape=%lldx%lldx%lld threads=%d kernel=openblas gflops=%.1f ratio=1.00\n", (long long)m,
                   (long long)n, (long long)K, threads, flop / best_t[0] * 1e-9);
            for (int isa = first; isa <= (int)best; isa++)
                printf("RESULT shape=%lldx%lldx%lld threads=%d kernel=canon-%s gflops=%.1f ratio=%.2f\n",
                       (long long)m, (long long)n, (long long)K, threads, mieb_canon_isa_name((enum mieb_canon_isa)isa),
                       flop / best_t[1 + isa] * 1e-9, best_t[0] / best_t[1 + isa]);
        }
        free(A);
        free(B);
        free(C);
    }
    return 0;
}
