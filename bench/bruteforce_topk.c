/*
 * bruteforce_topk.c - exact top-k by dot product, the plain way, as an independent check of
 * `mieb-eval run --corpus-parts` + `merge` on a corpus larger than memory (bench/run_10m.sh).
 *
 * Reads <emb>/<task>/<split>/<subset>/queries.h5 whole and the corpus role (corpus.h5 or its
 * shards, each placed by its row_start attribute) in blocks with the HDF5 C API (none of
 * mieb-eval's code), scores every (query, document) pair with a simple loop, and keeps per
 * query the top k by score descending, ties by row descending (trec_eval's ranking of ids
 * "d%08d": docno descending). Prints "query_row<TAB>rank<TAB>corpus_row<TAB>score" lines.
 *
 *   bruteforce_topk EMB_DIR TASK SPLIT SUBSET K > ref.tsv
 *
 * Build: cmake --build build --target bruteforce_topk   (binary: build/bench/bruteforce_topk)
 * The dot loop is vectorised with an OpenMP simd reduction: it sums in another order than a
 * BLAS, which is exact only for inputs like gen_big_retrieval.py's (multiples of 1/4).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#define BLOCK 8192

struct hit { float s; int64_t row; };

static void die(const char *what, const char *path)
{
    fprintf(stderr, "bruteforce_topk: %s: %s\n", path, what);
    exit(1);
}

/* Read rows [r0, r0+n) of /embeddings (float32 [rows, dim]) of an open file. */
static void read_rows(hid_t f, const char *path, int64_t r0, int64_t n, int64_t dim, float *dst)
{
    hid_t d = H5Dopen2(f, "/embeddings", H5P_DEFAULT);
    if (d < 0)
        die("no /embeddings", path);
    hid_t fs = H5Dget_space(d);
    hsize_t off[2] = {(hsize_t)r0, 0}, cnt[2] = {(hsize_t)n, (hsize_t)dim};
    hid_t ms = H5Screate_simple(2, cnt, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL);
    if (H5Dread(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, dst) < 0)
        die("read failed", path);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

static int64_t dims_of(hid_t f, int64_t *dim)
{
    hid_t d = H5Dopen2(f, "/embeddings", H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    hsize_t dd[2] = {0, 0};
    H5Sget_simple_extent_dims(s, dd, NULL);
    H5Sclose(s);
    H5Dclose(d);
    *dim = (int64_t)dd[1];
    return (int64_t)dd[0];
}

static int64_t attr_i64(hid_t f, const char *name)
{
    int64_t v = 0;
    if (!H5Aexists(f, name))
        return 0;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a);
    return v;
}

/* a before b in the ranking: score descending, then row descending */
static int better(float sa, int64_t ra, float sb, int64_t rb)
{
    return sa > sb || (sa == sb && ra > rb);
}

/* Insert into a sorted list of at most k hits. */
static void offer(struct hit *top, int *n, int k, float s, int64_t row)
{
    if (*n == k && !better(s, row, top[k - 1].s, top[k - 1].row))
        return;
    int i = *n < k ? (*n)++ : k - 1;
    while (i > 0 && better(s, row, top[i - 1].s, top[i - 1].row)) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = (struct hit){s, row};
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: bruteforce_topk EMB_DIR TASK SPLIT SUBSET K\n");
        return 2;
    }
    int k = atoi(argv[5]);
    char dir[4096], path[8192];
    snprintf(dir, sizeof dir, "%s/%s/%s/%s", argv[1], argv[2], argv[3], argv[4]);

    snprintf(path, sizeof path, "%s/queries.h5", dir);
    hid_t qf = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (qf < 0)
        die("cannot open", path);
    int64_t dim = 0, nq = dims_of(qf, &dim);
    float *q = malloc(sizeof(float) * (size_t)(nq * dim));
    read_rows(qf, path, 0, nq, dim, q);
    H5Fclose(qf);

    /* corpus.h5, or corpus-NNNNN-of-MMMMM.h5 shards */
    char *names[100000];
    int n_files = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && n_files < 100000)
        if (!strncmp(e->d_name, "corpus", 6) && strstr(e->d_name, ".h5") &&
            !strcmp(e->d_name + strlen(e->d_name) - 3, ".h5"))
            names[n_files++] = strdup(e->d_name);
    if (d)
        closedir(d);
    if (!n_files)
        die("no corpus files", dir);
    qsort(names, (size_t)n_files, sizeof *names, cmp_name);

    struct hit *top = malloc(sizeof *top * (size_t)(nq * k));
    int *ntop = calloc((size_t)nq, sizeof *ntop);
    float *blk = malloc(sizeof(float) * (size_t)(BLOCK * dim));
    int64_t total = 0;
    for (int fi = 0; fi < n_files; fi++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[fi]);
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0)
            die("cannot open", path);
        int64_t cdim = 0, rows = dims_of(f, &cdim), row_start = attr_i64(f, "row_start");
        if (cdim != dim)
            die("dimension differs from the queries", path);
        for (int64_t r0 = 0; r0 < rows; r0 += BLOCK) {
            int64_t n = rows - r0 < BLOCK ? rows - r0 : BLOCK;
            read_rows(f, path, r0, n, dim, blk);
#pragma omp parallel for schedule(static)
            for (int64_t qi = 0; qi < nq; qi++) {
                const float *qv = q + qi * dim;
                for (int64_t j = 0; j < n; j++) {
                    const float *dv = blk + j * dim;
                    float s = 0.0f;
#pragma omp simd reduction(+ : s)
                    for (int64_t c = 0; c < dim; c++)
                        s += qv[c] * dv[c];
                    offer(top + qi * k, &ntop[qi], k, s, row_start + r0 + j);
                }
            }
        }
        total += rows;
        H5Fclose(f);
        fprintf(stderr, "bruteforce_topk: %s done (%lld rows)\n", names[fi], (long long)total);
    }
    for (int64_t qi = 0; qi < nq; qi++)
        for (int r = 0; r < ntop[qi]; r++)
            printf("%lld\t%d\t%lld\t%.9g\n", (long long)qi, r + 1, (long long)top[qi * k + r].row,
                   (double)top[qi * k + r].s);
    return 0;
}
