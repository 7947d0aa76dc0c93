/**
 * logreg_argmax.cuh - launcher of the logistic-regression predict kernel
 * (kernels/logreg_argmax.cu): the class of each row from its decision scores, by the rule
 * of the CPU reference mieb_logreg_predict (host/emulation/logreg_lbfgs.c).
 */
#ifndef MIEB_KERNELS_LOGREG_ARGMAX_CUH
#define MIEB_KERNELS_LOGREG_ARGMAX_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream, for each row i < n (device memory), with v_k = s[i, k] + intercept[k]
 * (one fp32 add):
 *   KK > 1:  out[i] = the first k of the maximum of v, scanning k = 0, 1, ... and replacing
 *            the best when v_k > best or (v_k is NaN and best is not), i.e. the first NaN if
 *            there is one (np.argmax), else the first maximum;
 *   KK == 1: out[i] = v_0 > 0 (binary decision).
 *   s [n, ld] fp32 with ld >= KK, intercept [KK] fp32, out [n] int64.
 * MIEB_ERR_INTERNAL on a bad argument, MIEB_ERR_CUDA when the launch fails.
 */
mieb_status mieb_cuda_logreg_argmax(struct mieb_kstream ks, const float *s, int64_t ld, const float *intercept,
                                    int64_t n, int64_t KK, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
