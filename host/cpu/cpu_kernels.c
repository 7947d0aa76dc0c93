/* cpu_kernels.c - CPU building blocks (torch-style normalisation, MaxSim scores). */
#include "cpu_kernels.h"

#include <math.h>
#include <stdlib.h>

#include "../core/seq_max.h"
#include "../canon/canon_dot.h"

/* dst = src / max(sqrt(ss), 1e-12) in float32, ss the row's sum of squares in double. */
static void scale_row(float *dst, const float *src, double ss, int64_t dim)
{
    float nrm = sqrtf((float)ss);
    if (nrm < 1e-12f)
        nrm = 1e-12f;
    for (int64_t i = 0; i < dim; i++)
        dst[i] = src[i] / nrm;
}

void mieb_cpu_l2_normalize_rows_to(float *dst, const float *src, int64_t n, int64_t dim)
{
    /* The squares are added in double (closest to torch's vectorised fp32 reduction on
       average), in row order: that order is the definition, and the bits. Each row's sum is
       one chain of dependent adds, so four rows go together to keep the adders busy. */
    int64_t r = 0;
    for (; r + 4 <= n; r += 4) {
        const float *v0 = src + r * dim, *v1 = v0 + dim, *v2 = v1 + dim, *v3 = v2 + dim;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int64_t i = 0; i < dim; i++) {
            s0 += (double)v0[i] * v0[i];
            s1 += (double)v1[i] * v1[i];
            s2 += (double)v2[i] * v2[i];
            s3 += (double)v3[i] * v3[i];
        }
        scale_row(dst + r * dim, v0, s0, dim);
        scale_row(dst + (r + 1) * dim, v1, s1, dim);
        scale_row(dst + (r + 2) * dim, v2, s2, dim);
        scale_row(dst + (r + 3) * dim, v3, s3, dim);
    }
    for (; r < n; r++) {
        const float *v = src + r * dim;
        double ss = 0.0;
        for (int64_t i = 0; i < dim; i++)
            ss += (double)v[i] * v[i];
        scale_row(dst + r * dim, v, ss, dim);
    }
}

void mieb_cpu_l2_normalize_rows(float *x, int64_t n, int64_t dim) { mieb_cpu_l2_normalize_rows_to(x, x, n, dim); }

/*
 * Products are grouped by token counts, not item counts: one canon_gemm of every token of
 * a run of queries (at most MAXSIM_QTOK, unless one query alone has more) against every
 * token of a run of docs (at most MAXSIM_DTOK, likewise). canon_gemm packs B on each call,
 * so a product with a single query's ~20 tokens packed each doc token for 20 rows of work:
 * one query per product ran at a fifth of the kernel's rate (docs/DESIGN.md, MaxSim).
 * 192 x 2048 token scores are 1.5 MiB, and the packed queries (96 KiB at dim 128) stay in L2.
 */
#define MAXSIM_QTOK 192
#define MAXSIM_DTOK 2048

static mieb_status scratch_floats(struct mieb_maxsim_scratch *ws, size_t n)
{
    if (ws->cap >= n)
        return MIEB_OK;
    float *p = malloc(sizeof(float) * n);
    if (!p)
        return mieb_fail(MIEB_ERR_OOM, "maxsim: %zu token scores", n);
    free(ws->s);
    ws->s = p;
    ws->cap = n;
    return MIEB_OK;
}

mieb_status mieb_cpu_maxsim_tile(const struct mieb_vecs *q, int64_t q0, int64_t q1, const struct mieb_vecs *d,
                                 int64_t d0, int64_t d1, float *out, int64_t ldo, struct mieb_maxsim_scratch *ws)
{
    const int64_t dim = q->dim, *qo = q->offsets, *dof = d->offsets;
    for (int64_t a = q0; a < q1;) {
        int64_t b = a + 1; /* queries [a, b) in one product */
        while (b < q1 && qo[b + 1] - qo[a] <= MAXSIM_QTOK)
            b++;
        int64_t t0 = qo[a], nt = qo[b] - t0;
        for (int64_t c = d0; c < d1;) {
            int64_t e = c + 1; /* docs [c, e) */
            while (e < d1 && dof[e + 1] - dof[c] <= MAXSIM_DTOK)
                e++;
            int64_t u0 = dof[c], nu = dof[e] - u0;
            if (nt > 0 && nu > 0) {
                MIEB_TRY(scratch_floats(ws, (size_t)nt * (size_t)nu));
                /* s[t, u] = <q_t, d_u> for every query token and every doc token of the runs */
                mieb_canon_gemm(q->data + t0 * dim, dim, nt, d->data + u0 * dim, dim, nu, dim, ws->s, nu);
            }
            for (int64_t i = a; i < b; i++) {
                float *o = out + (i - q0) * ldo;
                for (int64_t j = c; j < e; j++) {
                    int64_t v0 = dof[j] - u0, v1 = dof[j + 1] - u0;
                    float total = 0.0f;
                    if (v1 > v0)
                        for (int64_t t = qo[i] - t0; t < qo[i + 1] - t0; t++)
                            total += mieb_seq_max(ws->s + t * nu + v0, v1 - v0);
                    o[j - d0] = total;
                }
            }
            c = e;
        }
        a = b;
    }
    return MIEB_OK;
}
