/*
 * cpu_pairwise.c - Visual STS per-pair scores and Compositionality per-sample matrices in
 * mteb's arithmetic (numpy/sklearn float32 or float64, torch fp32/fp16/bf16); see
 * cpu_pairwise.h for what is exact and what is within an ulp.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off") /* numpy rounds every product and every sum */
#endif

#include "cpu_pairwise.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../io/half.h"

/* ---- numpy building blocks ---- */

/*
 * numpy 2.x einsum_sumprod.c.src, @name@_sum_of_products_contig_contig_outstride0_two with
 * the x86-64 baseline (SSE, no FMA): L lanes (4 float, 2 double); 4L elements per step as
 * acc = a0*b0 + (a1*b1 + (a2*b2 + (a3*b3 + acc))) lane-wise, each product and sum
 * rounded; the tail in zero-padded steps of L; then the horizontal sum, which for SSE3 is
 * (l0 + l1) + (l2 + l3) for floats and l0 + l1 for doubles; finally added onto the
 * output's initial 0.
 */
float mieb_np_einsum_dot_f32(const float *a, const float *b, int64_t n)
{
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int64_t i = 0;
    for (; n - i >= 16; i += 16)
        for (int l = 0; l < 4; l++) {
            float x = acc[l];
            for (int blk = 3; blk >= 0; blk--) {
                float p = a[i + 4 * blk + l] * b[i + 4 * blk + l];
                x = p + x;
            }
            acc[l] = x;
        }
    for (; i < n; i += 4)
        for (int l = 0; l < 4; l++) {
            float p = i + l < n ? a[i + l] * b[i + l] : 0.0f;
            acc[l] = p + acc[l];
        }
    float h01 = acc[0] + acc[1], h23 = acc[2] + acc[3];
    float s = h01 + h23;
    return 0.0f + s;
}

double mieb_np_einsum_dot_f64(const double *a, const double *b, int64_t n)
{
    double acc[2] = {0.0, 0.0};
    int64_t i = 0;
    for (; n - i >= 8; i += 8)
        for (int l = 0; l < 2; l++) {
            double x = acc[l];
            for (int blk = 3; blk >= 0; blk--) {
                double p = a[i + 2 * blk + l] * b[i + 2 * blk + l];
                x = p + x;
            }
            acc[l] = x;
        }
    for (; i < n; i += 2)
        for (int l = 0; l < 2; l++) {
            double p = i + l < n ? a[i + l] * b[i + l] : 0.0;
            acc[l] = p + acc[l];
        }
    double s = acc[0] + acc[1];
    return 0.0 + s;
}

/* numpy's pairwise summation (loops_utils.h.src), accumulating in the element type. */
#define NP_PAIRWISE(NAME, T)                                                               \
    static T NAME(const T *a, int64_t n)                                                   \
    {                                                                                      \
        if (n < 8) {                                                                       \
            T res = -(T)0.0;                                                               \
            for (int64_t i = 0; i < n; i++)                                                \
                res += a[i];                                                               \
            return res;                                                                    \
        }                                                                                  \
        if (n <= 128) {                                                                    \
            T r[8];                                                                        \
            int64_t i;                                                                     \
            for (int j = 0; j < 8; j++)                                                    \
                r[j] = a[j];                                                               \
            for (i = 8; i < n - (n % 8); i += 8)                                           \
                for (int j = 0; j < 8; j++)                                                \
                    r[j] += a[i + j];                                                      \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));     \
            for (; i < n; i++)                                                             \
                res += a[i];                                                               \
            return res;                                                                    \
        }                                                                                  \
        int64_t n2 = n / 2;                                                                \
        n2 -= n2 % 8;                                                                      \
        return NAME(a, n2) + NAME(a + n2, n - n2);                                         \
    }
NP_PAIRWISE(pairwise_f32, float)
NP_PAIRWISE(pairwise_f64, double)

float mieb_np_sum_f32(const float *a, int64_t n)
{
    float acc = 0.0f;
    if (n > 0)
        acc += pairwise_f32(a, n);
    return acc;
}

static double np_sum_f64(const double *a, int64_t n)
{
    double acc = 0.0;
    if (n > 0)
        acc += pairwise_f64(a, n);
    return acc;
}

float mieb_round_f16(float x) { return mieb_half_to_float(mieb_float_to_half(x)); }
float mieb_round_bf16(float x) { return mieb_bf16_to_float(mieb_float_to_bf16(x)); }

/* ---- Visual STS ---- */

/* Scratch rows for one pair: normalised copies and the difference, in either precision. */
struct sts_scratch {
    float *fa, *fb, *fd;
    double *da, *db, *dd;
};

/* sklearn.preprocessing.normalize(row): norm = sqrt(einsum(x, x)); norm < 10*eps -> 1; x / norm */
static void sk_normalize_f32(const float *x, float *out, int64_t dim)
{
    float nrm = sqrtf(mieb_np_einsum_dot_f32(x, x, dim));
    if (nrm < 10.0f * FLT_EPSILON)
        nrm = 1.0f;
    for (int64_t k = 0; k < dim; k++)
        out[k] = x[k] / nrm;
}

static void sk_normalize_f64(const double *x, double *out, int64_t dim)
{
    double nrm = sqrt(mieb_np_einsum_dot_f64(x, x, dim));
    if (nrm < 10.0 * DBL_EPSILON)
        nrm = 1.0;
    for (int64_t k = 0; k < dim; k++)
        out[k] = x[k] / nrm;
}

/* torch: F.normalize (fp32) of a and b, then (a * b).sum(-1) -- or the plain dot. */
static double torch_pair_sim(const float *a, const float *b, int64_t dim, enum mieb_sim sim)
{
    float na = 1.0f, nb = 1.0f;
    if (sim == MIEB_SIM_COSINE) {
        double sa = 0.0, sb = 0.0;
        for (int64_t k = 0; k < dim; k++) {
            sa += (double)a[k] * a[k];
            sb += (double)b[k] * b[k];
        }
        na = sqrtf((float)sa);
        nb = sqrtf((float)sb);
        na = na < 1e-12f ? 1e-12f : na;
        nb = nb < 1e-12f ? 1e-12f : nb;
    }
    double s = 0.0;
    for (int64_t k = 0; k < dim; k++) {
        float x = a[k], y = b[k];
        if (sim == MIEB_SIM_COSINE) {
            x = x / na;
            y = y / nb;
        }
        float p = x * y; /* torch multiplies elementwise in fp32, then reduces */
        s += p;
    }
    return (double)(float)s;
}

static void sts_pair_f32(const float *a, const float *b, int64_t dim, struct sts_scratch *w, double *cos,
                         double *man, double *euc)
{
    sk_normalize_f32(a, w->fa, dim);
    sk_normalize_f32(b, w->fb, dim);
    for (int64_t k = 0; k < dim; k++)
        w->fd[k] = w->fa[k] - w->fb[k];
    float half_sq = 0.5f * mieb_np_einsum_dot_f32(w->fd, w->fd, dim);
    *cos = (double)(1.0f - half_sq);
    for (int64_t k = 0; k < dim; k++)
        w->fd[k] = a[k] - b[k];
    *euc = -(double)sqrtf(mieb_np_einsum_dot_f32(w->fd, w->fd, dim));
    for (int64_t k = 0; k < dim; k++)
        w->fd[k] = fabsf(w->fd[k]);
    *man = -(double)mieb_np_sum_f32(w->fd, dim);
}

static void sts_pair_f64(const float *a, const float *b, int64_t dim, struct sts_scratch *w, double *cos,
                         double *man, double *euc)
{
    /* dd holds the float64 copies of a and b (numpy's upcast, exact) */
    for (int64_t k = 0; k < dim; k++) {
        w->dd[k] = a[k];
        w->dd[dim + k] = b[k];
    }
    sk_normalize_f64(w->dd, w->da, dim);
    sk_normalize_f64(w->dd + dim, w->db, dim);
    for (int64_t k = 0; k < dim; k++)
        w->da[k] = w->da[k] - w->db[k];
    double half_sq = 0.5 * mieb_np_einsum_dot_f64(w->da, w->da, dim);
    *cos = 1.0 - half_sq;
    for (int64_t k = 0; k < dim; k++)
        w->da[k] = w->dd[k] - w->dd[dim + k];
    *euc = -sqrt(mieb_np_einsum_dot_f64(w->da, w->da, dim));
    for (int64_t k = 0; k < dim; k++)
        w->da[k] = fabs(w->da[k]);
    *man = -np_sum_f64(w->da, dim);
}

mieb_status mieb_cpu_sts_pairs(const float *a, const float *b, int64_t n, int64_t dim, bool sklearn_f64,
                               enum mieb_sim model_sim, const struct mieb_sts_pair_out *out)
{
    if (model_sim != MIEB_SIM_COSINE && model_sim != MIEB_SIM_DOT)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "STS pair scores: similarity %s is not supported", mieb_sim_name(model_sim));
    size_t d = (size_t)(dim > 0 ? dim : 1);
    struct sts_scratch w = {0};
    w.fa = malloc(3 * d * sizeof(float));
    w.da = malloc(4 * d * sizeof(double));
    if (!w.fa || !w.da) {
        free(w.fa);
        free(w.da);
        return mieb_fail(MIEB_ERR_OOM, "STS pair scores: dimension %lld", (long long)dim);
    }
    w.fb = w.fa + d, w.fd = w.fb + d;
    w.db = w.da + d, w.dd = w.db + d; /* dd holds 2*dim */
    for (int64_t i = 0; i < n; i++) {
        const float *x = a + i * dim, *y = b + i * dim;
        if (sklearn_f64)
            sts_pair_f64(x, y, dim, &w, &out->cosine[i], &out->manhattan[i], &out->euclidean[i]);
        else
            sts_pair_f32(x, y, dim, &w, &out->cosine[i], &out->manhattan[i], &out->euclidean[i]);
        out->model[i] = torch_pair_sim(x, y, dim, model_sim);
    }
    free(w.fa);
    free(w.da);
    return MIEB_OK;
}

/* ---- Compositionality ---- */

static float round_to(enum mieb_emb_dtype dt, float x)
{
    return dt == MIEB_EMB_F16 ? mieb_round_f16(x) : dt == MIEB_EMB_BF16 ? mieb_round_bf16(x) : x;
}

/*
 * F.normalize(x, dim=-1) in dtype dt: norm rounded to dt, clamp_min(eps) with eps = 1e-12
 * converted to dt (0 in float16), then x / norm computed in fp32 and rounded to dt.
 */
static void torch_normalize_rows(const float *x, float *out, int64_t rows, int64_t dim, enum mieb_emb_dtype dt)
{
    const float eps = round_to(dt, 1e-12f);
    for (int64_t r = 0; r < rows; r++) {
        const float *v = x + r * dim;
        float *o = out + r * dim;
        double ss = 0.0;
        for (int64_t k = 0; k < dim; k++)
            ss += (double)v[k] * v[k];
        float nrm = round_to(dt, sqrtf((float)ss));
        if (nrm < eps)
            nrm = eps;
        for (int64_t k = 0; k < dim; k++)
            o[k] = round_to(dt, v[k] / nrm);
    }
}

mieb_status mieb_cpu_compo_scores(const float *img, enum mieb_emb_dtype img_dtype, const float *txt,
                                  enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img, int64_t n_txt,
                                  int64_t dim, float *scores)
{
    int64_t ni = n_samples * n_img, nt = n_samples * n_txt;
    /* the product's dtype: the common one (mixed dtypes, which torch refuses, score in fp32) */
    enum mieb_emb_dtype sdt = img_dtype == txt_dtype ? img_dtype : MIEB_EMB_F32;
    float *buf = malloc(sizeof(float) * (size_t)((ni + nt) * dim + 1));
    if (!buf)
        return mieb_fail(MIEB_ERR_OOM, "compositionality: %lld x %lld normalised rows", (long long)(ni + nt),
                         (long long)dim);
    float *nimg = buf, *ntxt = buf + ni * dim;
    torch_normalize_rows(img, nimg, ni, dim, img_dtype);
    torch_normalize_rows(txt, ntxt, nt, dim, txt_dtype);
    for (int64_t s = 0; s < n_samples; s++)
        for (int64_t i = 0; i < n_img; i++) {
            const float *u = nimg + (s * n_img + i) * dim;
            for (int64_t j = 0; j < n_txt; j++) {
                const float *v = ntxt + (s * n_txt + j) * dim;
                double acc = 0.0;
                for (int64_t k = 0; k < dim; k++)
                    acc += (double)u[k] * v[k];
                scores[(s * n_img + i) * n_txt + j] = round_to(sdt, (float)acc);
            }
        }
    free(buf);
    return MIEB_OK;
}
