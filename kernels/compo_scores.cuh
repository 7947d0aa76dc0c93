/**
 * compo_scores.cuh - launcher of the compositionality score kernels (kernels/compo_scores.cu).
 * CPU reference: mieb_cpu_compo_scores (host/cpu/cpu_pairwise.c); both are pair_math.h.
 */
#ifndef MIEB_KERNELS_COMPO_SCORES_CUH
#define MIEB_KERNELS_COMPO_SCORES_CUH

#include <stdint.h>

#include "kstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * On ks.stream (all device memory): img is [ns * ni, dim], txt [ns * nt, dim], both
 * sample-major fp32; norms is scratch for ns * (ni + nt) floats; scores receives
 * [ns, ni, nt]. img_dtype / txt_dtype are enum mieb_emb_dtype values (0 fp32, 1 fp16,
 * 2 bf16) that select torch's rounding; the product's dtype is the common one, else fp32.
 */
mieb_status mieb_cuda_compo_scores_launch(struct mieb_kstream ks, const float *img, int img_dtype,
                                          const float *txt, int txt_dtype, int64_t ns, int64_t ni, int64_t nt,
                                          int64_t dim, float *norms, float *scores);

#ifdef __cplusplus
}
#endif
#endif
