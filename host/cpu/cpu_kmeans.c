/*
 * cpu_kmeans.c - CPU reference of kmeans_assign and the fp32 helpers that reproduce
 * numpy / scikit-learn summation orders (see cpu_kmeans.h). The GEMM goes through the
 * same BLAS routine (sgemm, alpha -2, beta 1 onto the norms, 256-row chunks) that
 * scikit-learn's Cython calls, so distances round the same way wherever the BLAS kernel
 * accumulates the same way.
 */
#include "cpu_kmeans.h"

#include <stdbool.h>
#include <stdlib.h>

#include <cblas.h>

#include "../core/parallel.h"
#include "../core/stop.h"

#define SK_CHUNK 256 /* sklearn.cluster._k_means_common.CHUNK_SIZE */

void mieb_np_row_sqnorms_f32(const float *x, int64_t n, int64_t dim, float *out)
{
    /* numpy's sum_of_products_contig_contig_outstride0_two with npyv f32x4 (no FMA in the
     * x86-64-v2 baseline): acc = a0*b0 + (a1*b1 + (a2*b2 + (a3*b3 + acc))) per 16 floats,
     * a zero-padded tail per 4 floats, then (l0+l1)+(l2+l3). Checked against np.einsum. */
    for (int64_t i = 0; i < n; i++) {
        const float *r = x + i * dim;
        volatile float acc[4] = {0, 0, 0, 0}; /* volatile: no contraction or reassociation */
        int64_t j = 0;
        for (; dim - j >= 16; j += 16)
            for (int l = 0; l < 4; l++) {
                float t = acc[l];
                for (int u = 3; u >= 0; u--) {
                    volatile float p = r[j + 4 * u + l] * r[j + 4 * u + l];
                    t = p + t;
                }
                acc[l] = t;
            }
        for (; j < dim; j += 4)
            for (int l = 0; l < 4; l++) {
                float v = j + l < dim ? r[j + l] : 0.0f;
                volatile float p = v * v;
                acc[l] = acc[l] + p;
            }
        volatile float h0 = acc[0] + acc[1], h1 = acc[2] + acc[3];
        out[i] = 0.0f + (h0 + h1);
    }
}

float mieb_sk_sqdist_f32(const float *a, const float *b, int64_t dim)
{
    float result = 0.0f;
    int64_t nb = dim / 4, rem = dim % 4;
    for (int64_t q = 0; q < nb; q++, a += 4, b += 4) {
        volatile float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2], d3 = a[3] - b[3];
        volatile float p0 = d0 * d0, p1 = d1 * d1, p2 = d2 * d2, p3 = d3 * d3;
        volatile float s = p0 + p1;
        s = s + p2;
        s = s + p3;
        result = result + s;
    }
    for (int64_t i = 0; i < rem; i++) {
        volatile float d = a[i] - b[i];
        volatile float p = d * d;
        result = result + p;
    }
    return result;
}

/* Rows [s0, s1) (s0 a multiple of SK_CHUNK) chunk by chunk into labels; d: SK_CHUNK x k.
   False when a stop signal ended it early (checked once per chunk, core/stop.h). */
static bool assign_chunks(const float *x, int64_t s0, int64_t s1, const float *c, const float *c_sqnorm, int64_t k,
                          int64_t dim, int32_t *labels, float *d)
{
    for (int64_t s = s0; s < s1; s += SK_CHUNK) {
        int64_t m = s1 - s < SK_CHUNK ? s1 - s : SK_CHUNK;
        if (mieb_stop_requested())
            return false;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++)
                d[i * k + j] = c_sqnorm[j];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)k, (int)dim, -2.0f, x + s * dim,
                    (int)dim, c, (int)dim, 1.0f, d, (int)k);
        for (int64_t i = 0; i < m; i++) {
            const float *row = d + i * k;
            float best = row[0];
            int32_t lab = 0;
            for (int64_t j = 1; j < k; j++)
                if (row[j] < best)
                    best = row[j], lab = (int32_t)j;
            labels[s + i] = lab;
        }
    }
    return true;
}

struct assign_job {
    const float *x, *c, *c_sqnorm;
    int64_t n, k, dim, n_chunks;
    int32_t *labels;
    int oom[64], stopped[64];
};

/* Part t takes a contiguous run of whole chunks: each chunk is one single-threaded sgemm of
   the shape sklearn's OpenMP threads each make, so the bits do not depend on the split. */
static void assign_part(void *arg, int t, int nt)
{
    struct assign_job *j = arg;
    int64_t lo, hi;
    mieb_par_range(j->n_chunks, t, nt, &lo, &hi);
    if (lo >= hi)
        return;
    float *d = malloc((size_t)SK_CHUNK * (size_t)j->k * sizeof *d);
    if (!d) {
        j->oom[t] = 1;
        return;
    }
    int64_t s1 = hi * SK_CHUNK < j->n ? hi * SK_CHUNK : j->n;
    j->stopped[t] = !assign_chunks(j->x, lo * SK_CHUNK, s1, j->c, j->c_sqnorm, j->k, j->dim, j->labels, d);
    free(d);
}

mieb_status mieb_cpu_kmeans_assign(struct mieb_backend *be, const float *x, int64_t n, const float *c,
                                   const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels)
{
    if (n < 0 || k <= 0 || dim <= 0 || k > INT32_MAX || dim > INT32_MAX)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "kmeans_assign: bad shape n=%lld k=%lld dim=%lld",
                         (long long)n, (long long)k, (long long)dim);
    struct assign_job j = {.x = x, .c = c, .c_sqnorm = c_sqnorm, .n = n, .k = k, .dim = dim,
                           .n_chunks = (n + SK_CHUNK - 1) / SK_CHUNK, .labels = labels};
    int nt = be && be->opts.n_threads > 0 ? be->opts.n_threads : mieb_par_cpus();
    if (nt > 64)
        nt = 64;
    if (nt > j.n_chunks)
        nt = j.n_chunks > 0 ? (int)j.n_chunks : 1;
    mieb_par_run(nt, assign_part, &j);
    for (int t = 0; t < nt; t++)
        if (j.oom[t])
            return mieb_fail(MIEB_ERR_OOM, "kmeans_assign: out of memory for a %d x %lld distance chunk", SK_CHUNK,
                             (long long)k);
    for (int t = 0; t < nt; t++)
        if (j.stopped[t])
            return mieb_stop_check();
    return MIEB_OK;
}
