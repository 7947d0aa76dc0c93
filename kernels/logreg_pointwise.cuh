/**
 * logreg_pointwise.cuh - launcher of the logistic-regression pointwise kernel
 * (kernels/logreg_pointwise.cu): the per-sample loss and grad_pointwise / n of sklearn's
 * half-multinomial (KK > 1) or half-binomial (KK == 1) loss, in the arithmetic of
 * host/backend/logreg_math.h, which the CPU reference (host/emulation/logreg_loss.c) runs too.
 * Used by cuda/cuda_logreg.c between the two GEMMs of lr_eval (backend.h).
 */
#ifndef MIEB_KERNELS_LOGREG_POINTWISE_CUH
#define MIEB_KERNELS_LOGREG_POINTWISE_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream, for each row i < n (device memory):
 *   raw [n, ld] fp32, ld >= KK: the logits (intercept included) on entry, grad_pointwise / n
 *       on exit (KK > 1: (e_k / sum_exps - [k == y[i]]) / n; KK == 1: binomial gradient / n);
 *   y [n] int32 class indices (in [0, KK) for KK > 1, 0 or 1 for KK == 1);
 *   lossv [n] fp32: the per-sample loss.
 * fn is float32(n) of the problem (the divisor; passed so that a batch of problems can share
 * one launch later). MIEB_ERR_INTERNAL on a bad argument, MIEB_ERR_CUDA when the launch fails.
 */
mieb_status mieb_cuda_logreg_pointwise(struct mieb_kstream ks, float *raw, int64_t ld, const int32_t *y,
                                       int64_t n, int64_t KK, float fn, float *lossv);

#ifdef __cplusplus
}
#endif
#endif
