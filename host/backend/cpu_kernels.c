/* cpu_kernels.c - CPU building blocks (torch-style normalisation, MaxSim rows). */
#include "cpu_kernels.h"

#include <math.h>
#include <stdlib.h>

#include "canon_dot.h"

void mieb_cpu_l2_normalize_rows(float *x, int64_t n, int64_t dim)
{
    for (int64_t r = 0; r < n; r++) {
        float *v = x + r * dim;
        /* Accumulate in double: closest to torch's vectorised fp32 reduction on average. */
        double ss = 0.0;
        for (int64_t i = 0; i < dim; i++)
            ss += (double)v[i] * v[i];
        float nrm = sqrtf((float)ss);
        if (nrm < 1e-12f)
            nrm = 1e-12f;
        for (int64_t i = 0; i < dim; i++)
            v[i] = v[i] / nrm;
    }
}

mieb_status mieb_cpu_maxsim_row(const struct mieb_vecs *q, int64_t qi, const struct mieb_vecs *d,
                                int64_t d0, int64_t d1, float *out)
{
    int64_t t0 = q->offsets[qi], t1 = q->offsets[qi + 1], nt = t1 - t0;
    int64_t r0 = d->offsets[d0], r1 = d->offsets[d1], nr = r1 - r0;
    int64_t dim = q->dim;
    if (nt <= 0 || nr <= 0) {
        for (int64_t j = d0; j < d1; j++)
            out[j - d0] = 0.0f;
        return MIEB_OK;
    }
    float *s = malloc(sizeof(float) * (size_t)(nt * nr));
    if (!s)
        return mieb_fail(MIEB_ERR_OOM, "maxsim: %lld x %lld token scores", (long long)nt, (long long)nr);
    /* s[t, u] = <q_t, d_u> for every query token and every doc token of the range */
    mieb_canon_gemm(q->data + t0 * dim, dim, nt, d->data + r0 * dim, dim, nr, dim, s, nr);
    for (int64_t j = d0; j < d1; j++) {
        int64_t u0 = d->offsets[j] - r0, u1 = d->offsets[j + 1] - r0;
        float total = 0.0f;
        if (u1 > u0) {
            for (int64_t t = 0; t < nt; t++) {
                const float *row = s + t * nr;
                float m = row[u0];
                for (int64_t u = u0 + 1; u < u1; u++)
                    if (row[u] > m)
                        m = row[u];
                total += m;
            }
        }
        out[j - d0] = total;
    }
    free(s);
    return MIEB_OK;
}
