/*
 * cluster_tool.c - drive the ImageClustering pieces from tests/py/test_clustering*.py.
 *   cluster_tool metrics           stdin: n, n true labels, n predicted labels ->
 *                                  v_measure nmi ari cluster_accuracy (%.17g each)
 *   cluster_tool assign R C        stdin: r c, then r*c matrix entries -> optimum
 *   cluster_tool kmeans FILE N D K minibatch|full
 *                                  FILE: raw float32 [N, D] -> "steps S" line, then N labels
 *   cluster_tool rng SEED          prints randint(0,1000,5), 3 random_sample (%.17g),
 *                                  permutation(10), randint(0, 2**40, 2) of RandomState(SEED)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "backend/backend.h"
#include "metrics/clustering_metrics.h"
#include "emulation/kmeans.h"
#include "emulation/np_randomstate.h"
#include "emulation/sk_threads.h"

static int do_metrics(void)
{
    long long n;
    if (scanf("%lld", &n) != 1 || n < 0)
        return 2;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)(n + 1)), *b = malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (long long i = 0; i < n; i++)
        if (scanf("%" SCNd64, &a[i]) != 1)
            return 2;
    for (long long i = 0; i < n; i++)
        if (scanf("%" SCNd64, &b[i]) != 1)
            return 2;
    struct mieb_cluster_scores s;
    if (mieb_cluster_scores(a, b, n, &s) != MIEB_OK) {
        fprintf(stderr, "%s\n", mieb_last_error());
        return 1;
    }
    printf("%.17g %.17g %.17g %.17g\n", s.v_measure, s.nmi, s.ari, s.cluster_accuracy);
    free(a), free(b);
    return 0;
}

static int do_assign(void)
{
    long long r, c;
    if (scanf("%lld %lld", &r, &c) != 2)
        return 2;
    int64_t *m = malloc(sizeof(int64_t) * (size_t)(r * c + 1)), best = 0;
    for (long long i = 0; i < r * c; i++)
        if (scanf("%" SCNd64, &m[i]) != 1)
            return 2;
    if (mieb_max_assignment(m, r, c, &best) != MIEB_OK)
        return 1;
    printf("%" PRId64 "\n", best);
    free(m);
    return 0;
}

static int do_kmeans(char **argv)
{
    int64_t n = atoll(argv[3]), d = atoll(argv[4]), k = atoll(argv[5]);
    float *x = malloc(sizeof(float) * (size_t)(n * d));
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)n);
    FILE *f = fopen(argv[2], "rb");
    if (!f || fread(x, sizeof(float), (size_t)(n * d), f) != (size_t)(n * d))
        return 2;
    fclose(f);
    struct mieb_backend *be = NULL; /* NULL: the CPU reference of kmeans_assign */
    struct mieb_kmeans_opts o = mieb_kmeans_mteb_opts(k);
    struct mieb_kmeans_info info = {0};
    mieb_status st = !strcmp(argv[6], "full") ? mieb_kmeans_full(be, x, n, d, &o, lab, &info)
                                             : mieb_kmeans_minibatch(be, x, n, d, &o, lab, &info);
    if (st != MIEB_OK) {
        fprintf(stderr, "%s\n", mieb_last_error());
        return 1;
    }
    printf("steps %" PRId64 "\n", info.n_steps);
    for (int64_t i = 0; i < n; i++)
        printf("%d\n", lab[i]);
    free(x), free(lab);
    return 0;
}

static int do_rng(char **argv)
{
    struct mieb_rs rs;
    mieb_rs_seed(&rs, (uint32_t)strtoul(argv[2], NULL, 10));
    int64_t v[10];
    mieb_rs_randint(&rs, 1000, 5, v);
    for (int i = 0; i < 5; i++)
        printf("%" PRId64 " ", v[i]);
    printf("\n");
    for (int i = 0; i < 3; i++)
        printf("%.17g ", mieb_rs_random_sample(&rs));
    printf("\n");
    mieb_rs_permutation(&rs, 10, v);
    for (int i = 0; i < 10; i++)
        printf("%" PRId64 " ", v[i]);
    printf("\n");
    mieb_rs_randint(&rs, (int64_t)1 << 40, 2, v);
    printf("%" PRId64 " %" PRId64 "\n", v[0], v[1]);
    return 0;
}

/* inertia FILE N D K THREADS: FILE holds X [N, D], centres [K, D] (fp32), labels [N] (int32) */
static int do_inertia(char **argv)
{
    int64_t n = atoll(argv[3]), d = atoll(argv[4]), k = atoll(argv[5]);
    int threads = atoi(argv[6]);
    float *x = malloc(sizeof(float) * (size_t)(n * d)), *c = malloc(sizeof(float) * (size_t)(k * d));
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)n);
    FILE *f = fopen(argv[2], "rb");
    if (!x || !c || !lab || !f || fread(x, sizeof(float), (size_t)(n * d), f) != (size_t)(n * d) ||
        fread(c, sizeof(float), (size_t)(k * d), f) != (size_t)(k * d) ||
        fread(lab, sizeof(int32_t), (size_t)n, f) != (size_t)n)
        return 2;
    fclose(f);
    printf("%a\n", (double)mieb_kmeans_batch_inertia(x, n, d, c, lab, threads));
    free(x), free(c), free(lab);
    return 0;
}

int main(int argc, char **argv)
{
    /* as mieb-eval's CPU backend and sklearn's fit do (kmeans.h): a multi-threaded sgemm
       gives other last bits than a single-threaded one */
    openblas_set_num_threads(1);
    if (argc >= 2 && !strcmp(argv[1], "metrics"))
        return do_metrics();
    if (argc >= 2 && !strcmp(argv[1], "assign"))
        return do_assign();
    if (argc >= 7 && !strcmp(argv[1], "kmeans"))
        return do_kmeans(argv);
    if (argc >= 3 && !strcmp(argv[1], "rng"))
        return do_rng(argv);
    if (argc >= 7 && !strcmp(argv[1], "inertia"))
        return do_inertia(argv);
    if (argc >= 2 && !strcmp(argv[1], "sk-threads")) {
        printf("%d\n", mieb_sk_openmp_threads());
        return 0;
    }
    fprintf(stderr, "usage: cluster_tool metrics|assign|kmeans FILE N D K MODE|rng SEED|inertia FILE N D K THREADS|sk-threads\n");
    return 2;
}
