/**
 * pair_math.h - the arithmetic of one Visual STS pair and one compositionality score, as
 * inline functions shared by the CPU backend (cpu_pairwise.c) and the CUDA kernels
 * (kernels/sts_pairs.cu, kernels/compo_scores.cu), so both give the same bits.
 *
 * What is reproduced and why is described in cpu_pairwise.h. Everything here works on
 * the raw rows and recomputes derived values (normalised elements, differences) where it
 * needs them instead of storing them: a kernel thread then needs no scratch memory, and
 * a recomputed element has the same bits as a stored one because each step is rounded
 * on its own (core/host_device.h).
 */
#ifndef MIEB_MATH_PAIR_MATH_H
#define MIEB_MATH_PAIR_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "../core/host_device.h"
#include "../core/half.h"

/* Which row-pair element a reduction sees (k-th element of x and y, row norms nx, ny). */
enum mieb_pm_elem {
    MIEB_PM_X = 0,     /* x[k] */
    MIEB_PM_NDIFF = 1, /* x[k] / nx - y[k] / ny   (sklearn's normalised rows, then their difference) */
    MIEB_PM_DIFF = 2,  /* x[k] - y[k] */
    MIEB_PM_ADIFF = 3, /* |x[k] - y[k]| */
};

MIEB_HOSTDEV static inline float mieb_pm_elem_f32(const float *x, const float *y, float nx, float ny, int mode, int64_t k)
{
    switch (mode) {
    case MIEB_PM_X:
        return x[k];
    case MIEB_PM_NDIFF:
        return MIEB_FSUB(MIEB_FDIV(x[k], nx), MIEB_FDIV(y[k], ny));
    case MIEB_PM_DIFF:
        return MIEB_FSUB(x[k], y[k]);
    default:
        return fabsf(MIEB_FSUB(x[k], y[k]));
    }
}

/* float64 elements of float32 rows (numpy's exact upcast) */
MIEB_HOSTDEV static inline double mieb_pm_elem_f64(const float *x, const float *y, double nx, double ny, int mode, int64_t k)
{
    switch (mode) {
    case MIEB_PM_X:
        return (double)x[k];
    case MIEB_PM_NDIFF:
        return MIEB_DSUB(MIEB_DDIV((double)x[k], nx), MIEB_DDIV((double)y[k], ny));
    case MIEB_PM_DIFF:
        return MIEB_DSUB((double)x[k], (double)y[k]);
    default:
        return fabs(MIEB_DSUB((double)x[k], (double)y[k]));
    }
}

/*
 * np.einsum("ij,ij->i", e, e) for one row e (numpy 2.x einsum_sumprod.c.src, x86-64
 * baseline SSE, no FMA): L lanes (4 float, 2 double); 4L elements per step as
 * acc = p0 + (p1 + (p2 + (p3 + acc))) lane-wise with p_blk = e[i+L*blk+l]^2; the tail in
 * zero-padded steps of L; then the SSE3 horizontal sum ((l0 + l1) + (l2 + l3) for floats,
 * l0 + l1 for doubles), added onto the output's initial 0.
 */
MIEB_HOSTDEV static inline float mieb_pm_einsum_sq_f32(const float *x, const float *y, float nx, float ny, int mode,
                                                  int64_t n)
{
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int64_t i = 0;
    for (; n - i >= 16; i += 16)
        for (int l = 0; l < 4; l++) {
            float s = acc[l];
            for (int blk = 3; blk >= 0; blk--) {
                float e = mieb_pm_elem_f32(x, y, nx, ny, mode, i + 4 * blk + l);
                s = MIEB_FADD(MIEB_FMUL(e, e), s);
            }
            acc[l] = s;
        }
    for (; i < n; i += 4)
        for (int l = 0; l < 4; l++) {
            float e = i + l < n ? mieb_pm_elem_f32(x, y, nx, ny, mode, i + l) : 0.0f;
            acc[l] = MIEB_FADD(MIEB_FMUL(e, e), acc[l]);
        }
    float s = MIEB_FADD(MIEB_FADD(acc[0], acc[1]), MIEB_FADD(acc[2], acc[3]));
    return MIEB_FADD(0.0f, s);
}

MIEB_HOSTDEV static inline double mieb_pm_einsum_sq_f64(const float *x, const float *y, double nx, double ny, int mode,
                                                   int64_t n)
{
    double acc[2] = {0.0, 0.0};
    int64_t i = 0;
    for (; n - i >= 8; i += 8)
        for (int l = 0; l < 2; l++) {
            double s = acc[l];
            for (int blk = 3; blk >= 0; blk--) {
                double e = mieb_pm_elem_f64(x, y, nx, ny, mode, i + 2 * blk + l);
                s = MIEB_DADD(MIEB_DMUL(e, e), s);
            }
            acc[l] = s;
        }
    for (; i < n; i += 2)
        for (int l = 0; l < 2; l++) {
            double e = i + l < n ? mieb_pm_elem_f64(x, y, nx, ny, mode, i + l) : 0.0;
            acc[l] = MIEB_DADD(MIEB_DMUL(e, e), acc[l]);
        }
    return MIEB_DADD(0.0, MIEB_DADD(acc[0], acc[1]));
}

/*
 * numpy's pairwise summation (loops_utils.h.src) of elements [o, o + n) of |x - y|, in the
 * element type: below 8 a plain loop from -0.0, up to 128 eight accumulators, above that
 * the halves (the first rounded down to a multiple of 8) summed recursively. Written with
 * an explicit stack so that kernels need no recursion: the tree is walked left to right
 * and each finished subtree's sum is added to its left sibling's, as the recursion does.
 */
#define MIEB_PM_PAIRWISE(NAME, T, ELEM, ADD)                                                           \
    MIEB_HOSTDEV static inline T NAME##_leaf(const float *x, const float *y, int64_t o, int64_t n)          \
    {                                                                                                  \
        if (n < 8) {                                                                                   \
            T res = -(T)0.0;                                                                           \
            for (int64_t i = 0; i < n; i++)                                                            \
                res = ADD(res, ELEM(o + i));                                                           \
            return res;                                                                                \
        }                                                                                              \
        T r[8];                                                                                        \
        int64_t i;                                                                                     \
        for (int j = 0; j < 8; j++)                                                                    \
            r[j] = ELEM(o + j);                                                                        \
        for (i = 8; i < n - (n % 8); i += 8)                                                           \
            for (int j = 0; j < 8; j++)                                                                \
                r[j] = ADD(r[j], ELEM(o + i + j));                                                     \
        T res = ADD(ADD(ADD(r[0], r[1]), ADD(r[2], r[3])), ADD(ADD(r[4], r[5]), ADD(r[6], r[7])));     \
        for (; i < n; i++)                                                                             \
            res = ADD(res, ELEM(o + i));                                                               \
        return res;                                                                                    \
    }                                                                                                  \
    MIEB_HOSTDEV static inline T NAME(const float *x, const float *y, int64_t n)                            \
    {                                                                                                  \
        /* frames: a node [o, o+len) whose left child is done has its sum in `left` */                \
        struct {                                                                                       \
            int64_t o, len;                                                                            \
            T left;                                                                                    \
            int state; /* 0: left child pending, 1: right child pending */                             \
        } st[64];                                                                                      \
        int top = 0;                                                                                   \
        int64_t o = 0, len = n;                                                                        \
        T val;                                                                                         \
        for (;;) {                                                                                     \
            if (len <= 128) {                                                                          \
                val = NAME##_leaf(x, y, o, len);                                                       \
            } else {                                                                                   \
                int64_t n2 = len / 2;                                                                  \
                n2 -= n2 % 8;                                                                          \
                st[top].o = o, st[top].len = len, st[top].state = 0;                                   \
                top++;                                                                                 \
                len = n2;                                                                              \
                continue;                                                                              \
            }                                                                                          \
            /* val is a finished subtree: combine upwards */                                           \
            for (;;) {                                                                                 \
                if (top == 0)                                                                          \
                    return val;                                                                        \
                int f = top - 1;                                                                       \
                int64_t n2 = st[f].len / 2;                                                            \
                n2 -= n2 % 8;                                                                          \
                if (st[f].state == 0) {                                                                \
                    st[f].left = val, st[f].state = 1;                                                 \
                    o = st[f].o + n2, len = st[f].len - n2;                                            \
                    break;                                                                             \
                }                                                                                      \
                val = ADD(st[f].left, val);                                                            \
                top--;                                                                                 \
            }                                                                                          \
        }                                                                                              \
    }

#define MIEB_PM_ADIFF_F32(k) fabsf(MIEB_FSUB(x[k], y[k]))
#define MIEB_PM_ADIFF_F64(k) fabs(MIEB_DSUB((double)x[k], (double)y[k]))
#define MIEB_PM_FADD2(a, b) MIEB_FADD(a, b)
#define MIEB_PM_DADD2(a, b) MIEB_DADD(a, b)
MIEB_PM_PAIRWISE(mieb_pm_absdiff_pairwise_f32, float, MIEB_PM_ADIFF_F32, MIEB_PM_FADD2)
MIEB_PM_PAIRWISE(mieb_pm_absdiff_pairwise_f64, double, MIEB_PM_ADIFF_F64, MIEB_PM_DADD2)

/* np.sum(|x - y|): 0 + the pairwise sum (an empty row sums to 0) */
MIEB_HOSTDEV static inline float mieb_pm_sum_absdiff_f32(const float *x, const float *y, int64_t n)
{
    float acc = 0.0f;
    if (n > 0)
        acc = MIEB_FADD(acc, mieb_pm_absdiff_pairwise_f32(x, y, n));
    return acc;
}

MIEB_HOSTDEV static inline double mieb_pm_sum_absdiff_f64(const float *x, const float *y, int64_t n)
{
    double acc = 0.0;
    if (n > 0)
        acc = MIEB_DADD(acc, mieb_pm_absdiff_pairwise_f64(x, y, n));
    return acc;
}

/** The three sklearn values of one STS pair: cosine, -manhattan, -euclidean. */
struct mieb_pm_sts {
    double cosine, manhattan, euclidean;
};

/*
 * sklearn.paired_*_distances in float32 (both inputs float32): normalize's norm is
 * sqrt(einsum(x, x)), a norm below 10 * eps counts as 1; cosine = 1 - 0.5 * |xn - yn|^2.
 */
MIEB_HOSTDEV static inline struct mieb_pm_sts mieb_pm_sts_sklearn_f32(const float *x, const float *y, int64_t dim)
{
    struct mieb_pm_sts r;
    float nx = MIEB_FSQRT(mieb_pm_einsum_sq_f32(x, y, 1.0f, 1.0f, MIEB_PM_X, dim));
    float ny = MIEB_FSQRT(mieb_pm_einsum_sq_f32(y, x, 1.0f, 1.0f, MIEB_PM_X, dim));
    nx = nx < 10.0f * FLT_EPSILON ? 1.0f : nx;
    ny = ny < 10.0f * FLT_EPSILON ? 1.0f : ny;
    float half_sq = MIEB_FMUL(0.5f, mieb_pm_einsum_sq_f32(x, y, nx, ny, MIEB_PM_NDIFF, dim));
    r.cosine = (double)MIEB_FSUB(1.0f, half_sq);
    r.euclidean = -(double)MIEB_FSQRT(mieb_pm_einsum_sq_f32(x, y, 1.0f, 1.0f, MIEB_PM_DIFF, dim));
    r.manhattan = -(double)mieb_pm_sum_absdiff_f32(x, y, dim);
    return r;
}

/* The same in float64 (sklearn's choice when either input is not float32). */
MIEB_HOSTDEV static inline struct mieb_pm_sts mieb_pm_sts_sklearn_f64(const float *x, const float *y, int64_t dim)
{
    struct mieb_pm_sts r;
    double nx = MIEB_DSQRT(mieb_pm_einsum_sq_f64(x, y, 1.0, 1.0, MIEB_PM_X, dim));
    double ny = MIEB_DSQRT(mieb_pm_einsum_sq_f64(y, x, 1.0, 1.0, MIEB_PM_X, dim));
    nx = nx < 10.0 * DBL_EPSILON ? 1.0 : nx;
    ny = ny < 10.0 * DBL_EPSILON ? 1.0 : ny;
    double half_sq = MIEB_DMUL(0.5, mieb_pm_einsum_sq_f64(x, y, nx, ny, MIEB_PM_NDIFF, dim));
    r.cosine = MIEB_DSUB(1.0, half_sq);
    r.euclidean = -MIEB_DSQRT(mieb_pm_einsum_sq_f64(x, y, 1.0, 1.0, MIEB_PM_DIFF, dim));
    r.manhattan = -mieb_pm_sum_absdiff_f64(x, y, dim);
    return r;
}

/*
 * torch's model.similarity_pairwise in fp32: F.normalize (cosine; norm clamped at 1e-12)
 * or the raw rows (dot), elementwise fp32 products, summed in double and rounded to fp32.
 * cosine != 0 selects normalisation.
 */
MIEB_HOSTDEV static inline double mieb_pm_torch_pair_sim(const float *a, const float *b, int64_t dim, int cosine)
{
    float na = 1.0f, nb = 1.0f;
    if (cosine) {
        double sa = 0.0, sb = 0.0;
        for (int64_t k = 0; k < dim; k++) {
            sa = MIEB_DADD(sa, MIEB_DMUL((double)a[k], (double)a[k]));
            sb = MIEB_DADD(sb, MIEB_DMUL((double)b[k], (double)b[k]));
        }
        na = MIEB_FSQRT((float)sa);
        nb = MIEB_FSQRT((float)sb);
        na = na < 1e-12f ? 1e-12f : na;
        nb = nb < 1e-12f ? 1e-12f : nb;
    }
    double s = 0.0;
    for (int64_t k = 0; k < dim; k++) {
        float x = a[k], y = b[k];
        if (cosine) {
            x = MIEB_FDIV(x, na);
            y = MIEB_FDIV(y, nb);
        }
        s = MIEB_DADD(s, (double)MIEB_FMUL(x, y));
    }
    return (double)(float)s;
}

/* ---- compositionality ---- */

/* dtype codes of core/dtype.h (enum mieb_emb_dtype): 0 float32, 1 float16, 2 bfloat16 */
MIEB_HOSTDEV static inline float mieb_pm_round_to(int dtype, float x)
{
    return dtype == 1 ? mieb_half_to_float(mieb_float_to_half(x))
                      : dtype == 2 ? mieb_bf16_to_float(mieb_float_to_bf16(x)) : x;
}

/* F.normalize's divisor in dtype dt: the norm rounded to dt, clamped at 1e-12 rounded to dt */
MIEB_HOSTDEV static inline float mieb_pm_torch_norm(const float *v, int64_t dim, int dtype)
{
    double ss = 0.0;
    for (int64_t k = 0; k < dim; k++)
        ss = MIEB_DADD(ss, MIEB_DMUL((double)v[k], (double)v[k]));
    float nrm = mieb_pm_round_to(dtype, MIEB_FSQRT((float)ss));
    float eps = mieb_pm_round_to(dtype, 1e-12f);
    return nrm < eps ? eps : nrm;
}

/*
 * One score of a sample's image x text matrix: both rows normalised in their own dtype
 * (x / norm in fp32, rounded to the dtype), the dot product accumulated in double,
 * rounded to fp32 and then to the product's dtype sdt.
 */
MIEB_HOSTDEV static inline float mieb_pm_compo_score(const float *u, float nu, int dtu, const float *v, float nv, int dtv,
                                                int64_t dim, int sdt)
{
    double acc = 0.0;
    for (int64_t k = 0; k < dim; k++) {
        float x = mieb_pm_round_to(dtu, MIEB_FDIV(u[k], nu));
        float y = mieb_pm_round_to(dtv, MIEB_FDIV(v[k], nv));
        acc = MIEB_DADD(acc, MIEB_DMUL((double)x, (double)y));
    }
    return mieb_pm_round_to(sdt, (float)acc);
}

#endif
