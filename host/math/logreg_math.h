/**
 * logreg_math.h - the per-sample arithmetic of sklearn 1.9's logistic-regression loss
 * (its Cython half-multinomial and half-binomial losses on float32 data: double exp and log
 * inside, float32 in and out), as inline functions shared by the CPU loss
 * (host/emulation/logreg_loss.c) and the CUDA kernel (kernels/logreg_pointwise.cu).
 *
 * Multinomial, one sample with logits r[0..K) and class y (sklearn's
 * sum_exp_minus_max, then loss_gradient):
 *   mx  = max_k r[k]                       (float32 values, compared in order)
 *   e_k = float32(exp(double(r[k]) - mx))  mieb_lr_exp_shifted
 *   se  = sum_k e_k in double              (the CPU sums in k order; the GPU in a tree)
 *   loss = float32(log(float32(se)) + float32(mx)) - r[y]            mieb_lr_row_loss
 *   gp_k = (e_k / float32(se) - [k == y]) / n                         mieb_lr_grad_elem
 * Binomial (one weight vector): mieb_lr_binomial_point, sklearn's four ranges of raw.
 * Predictions (sklearn's predict, np.argmax of decision_function): the decision value of
 * class k is float32(s_k + intercept_k), s = X @ coef^T from the GEMM (mieb_lr_decision);
 * multiclass takes the first maximum, a NaN counting as the maximum (mieb_lr_argmax_takes);
 * binary (one weight vector) is class 1 iff the decision is > 0 (mieb_lr_binary_class).
 * The CPU backend (host/cpu/cpu_logreg.c, which the per-experiment predict uses too) and the
 * CUDA kernel (kernels/logreg_argmax.cu) apply these.
 *
 * Every operation is rounded on its own (core/host_device.h), so host and device agree wherever
 * their inputs agree: only the GEMMs (cuBLAS' summation order) and the order of the sum
 * over classes make the CUDA probe differ from the CPU reference.
 */
#ifndef MIEB_MATH_LOGREG_MATH_H
#define MIEB_MATH_LOGREG_MATH_H

#include <math.h>
#include <stdint.h>

#include "../core/host_device.h"

MIEB_HOSTDEV static inline float mieb_lr_exp_shifted(float r, double mx)
{
    return (float)exp(MIEB_DSUB((double)r, mx));
}

/** Per-sample loss from the double sum of the shifted exps, the maximum and the true logit. */
MIEB_HOSTDEV static inline float mieb_lr_row_loss(double se, double mx, float r_y)
{
    float sum_exps = (float)se, max_value = (float)mx;
    float l = (float)MIEB_DADD(log((double)sum_exps), (double)max_value);
    return MIEB_FSUB(l, r_y);
}

/** grad_pointwise / n of one class: e_k / sum_exps minus the one-hot, over n (float32). */
MIEB_HOSTDEV static inline float mieb_lr_grad_elem(float e, float sum_exps, int is_y, float fn)
{
    return MIEB_FDIV(MIEB_FSUB(MIEB_FDIV(e, sum_exps), (float)is_y), fn);
}

/**
 * Half-binomial loss and gradient of one sample with label yt (0 or 1) at raw (sklearn's
 * Cython, double inside): *loss = the loss, returns the gradient (not yet over n).
 */
MIEB_HOSTDEV static inline float mieb_lr_binomial_point(double yt, float raw, float *loss)
{
    double rp = (double)raw, lo, gr;
    if (rp <= -37) {
        gr = exp(rp);
        lo = MIEB_DSUB(gr, MIEB_DMUL(yt, rp));
        gr = MIEB_DSUB(gr, yt);
    } else if (rp <= -2) {
        gr = exp(rp);
        lo = MIEB_DSUB(log1p(gr), MIEB_DMUL(yt, rp));
        gr = MIEB_DDIV(MIEB_DSUB(MIEB_DMUL(MIEB_DSUB(1.0, yt), gr), yt), MIEB_DADD(1.0, gr));
    } else if (rp <= 18) {
        gr = exp(-rp);
        lo = MIEB_DADD(log1p(gr), MIEB_DMUL(MIEB_DSUB(1.0, yt), rp));
        gr = MIEB_DDIV(MIEB_DSUB(MIEB_DSUB(1.0, yt), MIEB_DMUL(yt, gr)), MIEB_DADD(1.0, gr));
    } else {
        gr = exp(-rp);
        lo = MIEB_DADD(gr, MIEB_DMUL(MIEB_DSUB(1.0, yt), rp));
        gr = MIEB_DDIV(MIEB_DSUB(MIEB_DSUB(1.0, yt), MIEB_DMUL(yt, gr)), MIEB_DADD(1.0, gr));
    }
    *loss = (float)lo;
    return (float)gr;
}

/** The decision value of one class: the GEMM's product plus the intercept, in float32. */
MIEB_HOSTDEV static inline float mieb_lr_decision(float s, float intercept)
{
    return MIEB_FADD(s, intercept);
}

/**
 * Whether the decision value v of a later class replaces the best one so far, bv, in a scan
 * over the classes in increasing order (np.argmax: the first maximum; the first NaN wins
 * over every number). v != v tests NaN without device math (the emulator).
 */
MIEB_HOSTDEV static inline int mieb_lr_argmax_takes(float v, float bv)
{
    return v > bv || (v != v && bv == bv);
}

/**
 * The class of one row from its KK GEMM products v and the intercepts: the scan above over
 * the decision values (the host's predict, CPU backend and mock; the kernel splits the same
 * scan over a warp's lanes).
 */
static inline int64_t mieb_lr_row_class(const float *v, const float *intercept, int64_t KK)
{
    int64_t best = 0;
    float bv = mieb_lr_decision(v[0], intercept[0]);
    for (int64_t k = 1; k < KK; k++) {
        float x = mieb_lr_decision(v[k], intercept[k]);
        if (mieb_lr_argmax_takes(x, bv))
            bv = x, best = k;
    }
    return best;
}

/** Binary class from the decision value: 1 iff > 0 (NaN and -0 give 0). */
MIEB_HOSTDEV static inline int mieb_lr_binary_class(float decision)
{
    return decision > 0.0f;
}

#endif
