/**
 * screen_int8_math.h - the int8 screen's arithmetic (docs/SCREEN_INT8.md) as inline functions
 * shared by the CPU screen (host/screen/screen_int8.c, screen.c) and the CUDA kernels
 * (kernels/screen_int8.cu), so that both quantise a row to the same integers, with the same
 * scale and norm bounds, and turn an integer score into the same interval, bit for bit.
 *
 * Every operation is rounded on its own (core/host_device.h: the _rn intrinsics on the device, plain
 * operators in host files built with -ffp-contract=off), and fmaf is written where the
 * definition fuses. The derivation of each margin is docs/SCREEN_INT8.md's.
 */
#ifndef MIEB_MATH_SCREEN_INT8_MATH_H
#define MIEB_MATH_SCREEN_INT8_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/host_device.h"

#define MIEB_SCREEN_I8_U (1.0 / 16777216.0)             /* 2^-24, the unit roundoff of binary32 */
#define MIEB_SCREEN_I8_MARGIN (1.0 + 1.0 / 1048576.0)    /* 1 + 2^-20: the bound's own roundings */
#define MIEB_SCREEN_I8_NORM_LIMIT 1152921504606846976.0  /* 2^60: beyond it products may overflow */
/* The largest K whose integer dot products fit int32: K * 127^2 < 2^31. */
#define MIEB_SCREEN_I8_MAX_K 133000

/** Upper bounds N >= |x| and R >= |r| from fp32 sums of squares ss, rs of a K-element row
    (any order: g covers it; 2^-100 every subnormal loss); 0 when a norm may pass 2^60 (or
    is NaN). Shared with the bf16 screen (mieb_screen_norms). */
MIEB_HOSTDEV static inline int mieb_screen_i8_norms(float ss, float rs, int64_t K, float *nrm, float *rnrm)
{
    const double g = MIEB_DMUL(MIEB_DMUL((double)(K + 64), 2.0), MIEB_SCREEN_I8_U);
    const double g1 = MIEB_DADD(1.0, g);
    const double n = MIEB_DMUL(MIEB_DSQRT(MIEB_DADD(MIEB_DMUL((double)ss, g1), 0x1p-100)), MIEB_SCREEN_I8_MARGIN);
    const double r = MIEB_DMUL(MIEB_DSQRT(MIEB_DADD(MIEB_DMUL((double)rs, g1), 0x1p-100)), MIEB_SCREEN_I8_MARGIN);
    if (!(n <= MIEB_SCREEN_I8_NORM_LIMIT) || !(r <= MIEB_SCREEN_I8_NORM_LIMIT))
        return 0;
    *nrm = (float)MIEB_DMUL(n, MIEB_SCREEN_I8_MARGIN);
    *rnrm = (float)MIEB_DMUL(r, MIEB_SCREEN_I8_MARGIN);
    return 1;
}

/** N, R (mieb_screen_i8_norms) and H >= |s q| = s sqrt(qq) (qq exact; sqrt and products round once each). */
MIEB_HOSTDEV static inline int mieb_screen_i8_row_bounds(float s, float ss, float rs, int64_t qq, int64_t K, float *nrm,
                                                   float *rnrm, float *hnrm)
{
    if (!mieb_screen_i8_norms(ss, rs, K, nrm, rnrm))
        return 0;
    const double h = MIEB_DMUL(MIEB_DMUL((double)s, MIEB_DSQRT((double)qq)), MIEB_SCREEN_I8_MARGIN);
    *hnrm = (float)MIEB_DMUL(h, MIEB_SCREEN_I8_MARGIN);
    return 1;
}

/** The 8-lane sums' fixed tree: (l + 4), (l + 2), (l + 1). */
MIEB_HOSTDEV static inline float mieb_screen_i8_tree8(const float *acc)
{
    float s4[4], s2[2];
    for (int l = 0; l < 4; l++)
        s4[l] = MIEB_FADD(acc[l], acc[l + 4]);
    for (int l = 0; l < 2; l++)
        s2[l] = MIEB_FADD(s4[l], s4[l + 2]);
    return MIEB_FADD(s2[0], s2[1]);
}

/**
 * Quantise one row of K floats: s = max|x| / 127 (0 for a zero, NaN or infinite row), q_k =
 * rint(x_k / s) clamped to [-127, 127] (0 for NaN), into out8 or out16 (whichever is not
 * NULL; zeros from K to KP), with the norm bounds of mieb_screen_i8_row_bounds. The sums of
 * squares are taken in 8 lanes (element k in lane k mod 8, one fmaf each) added by
 * mieb_screen_i8_tree8. Returns 0 when a norm is beyond what the bound covers.
 */
MIEB_HOSTDEV static inline int mieb_screen_i8_quantise_row(const float *x, int64_t K, int64_t KP, int8_t *out8,
                                                     int16_t *out16, float *s_out, float *nrm, float *rnrm,
                                                     float *hnrm)
{
    float mx = 0.0f;
    for (int64_t k = 0; k < K; k++) {
        const float a = fabsf(x[k]);
        mx = a > mx ? a : mx;
    }
    /* a NaN or infinite row is refused by the norm check (its sum of squares) */
    float s = MIEB_FDIV(mx, 127.0f);
    if (!(s > 0.0f) || !isfinite(s))
        s = 0.0f;
    float sacc[8] = {0}, racc[8] = {0};
    int64_t qq = 0;
    for (int64_t k = 0; k < K; k++) {
        float q = 0.0f;
        if (s > 0.0f) { /* clamped: with a subnormal s, x / s may round past 127 */
            q = rintf(MIEB_FDIV(x[k], s));
            q = q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q;
            if (q != q)
                q = 0.0f;
        }
        /* x - s q in one rounding: relative error u at most, which the norms' margin covers */
        const float r = fmaf(-s, q, x[k]);
        if (out8)
            out8[k] = (int8_t)q;
        else
            out16[k] = (int16_t)q;
        qq += (int64_t)q * (int64_t)q;
        sacc[k % 8] = fmaf(x[k], x[k], sacc[k % 8]);
        racc[k % 8] = fmaf(r, r, racc[k % 8]);
    }
    for (int64_t k = K; k < KP; k++) {
        if (out8)
            out8[k] = 0;
        else
            out16[k] = 0;
    }
    *s_out = s;
    return mieb_screen_i8_row_bounds(s, mieb_screen_i8_tree8(sacc), mieb_screen_i8_tree8(racc), qq, K, nrm, rnrm, hnrm);
}

/**
 * A query's bound coefficients from its norm bounds N, R, H (docs/SCREEN_INT8.md, 6):
 *   alpha = (R + g N + 8u H) M^2,   beta = H (1 + 8u) M^2,   g = (K + 64) u,
 * each floored at 2^-100 (alpha n stays finite and non-NaN for every finite n). scale (1) and
 * drop_rounding (0) are the tests' mutations: a bound scaled down, or without g and 8u.
 */
MIEB_HOSTDEV static inline void mieb_screen_i8_query_coefs(int64_t K, float nrm, float rnrm, float hnrm, float scale,
                                                     int drop_rounding, float *alpha_out, float *beta_out)
{
    double u = MIEB_SCREEN_I8_U, g = MIEB_DMUL((double)(K + 64), MIEB_SCREEN_I8_U);
    if (drop_rounding)
        g = u = 0.0;
    const double N = nrm, R = rnrm, H = hnrm, M = MIEB_SCREEN_I8_MARGIN, u8 = MIEB_DMUL(8.0, u);
    const double alpha =
        MIEB_DMUL(MIEB_DMUL(MIEB_DMUL(MIEB_DADD(MIEB_DADD(R, MIEB_DMUL(g, N)), MIEB_DMUL(u8, H)), M), M), (double)scale);
    const double beta = MIEB_DMUL(MIEB_DMUL(MIEB_DMUL(MIEB_DMUL(H, MIEB_DADD(1.0, u8)), M), M), (double)scale);
    *alpha_out = (float)(alpha > 0x1p-100 ? alpha : 0x1p-100);
    *beta_out = (float)(beta > 0x1p-100 ? beta : 0x1p-100);
}

/** The absolute term s_abs = ((K + 64) 2^-125 + K 2^-134) M: every subnormal loss (0 under drop_rounding). */
MIEB_HOSTDEV static inline float mieb_screen_i8_s_abs(int64_t K, int drop_rounding)
{
    if (drop_rounding)
        return 0.0f;
    return (float)MIEB_DMUL(MIEB_DADD(MIEB_DMUL((double)(K + 64), 0x1p-125), MIEB_DMUL((double)K, 0x1p-134)),
                            MIEB_SCREEN_I8_MARGIN);
}

/**
 * The interval of the exact score of a query (scale sq, coefficients al, be) and a document
 * (scale sd, norm bounds nd, rnd) with integer score I:
 *   a = fl(fl(I) * fl(sq sd)),   e = fma(al, nd, fma(be, rnd, s_abs)),   [a - e, a + e].
 */
MIEB_HOSTDEV static inline void mieb_screen_i8_interval(int32_t I, float sq, float sd, float al, float be, float nd,
                                                  float rnd, float s_abs, float *lb, float *ub)
{
    const float a = MIEB_FMUL((float)I, MIEB_FMUL(sq, sd));
    const float e = fmaf(al, nd, fmaf(be, rnd, s_abs));
    *ub = MIEB_FADD(a, e);
    *lb = MIEB_FSUB(a, e);
}

#endif
