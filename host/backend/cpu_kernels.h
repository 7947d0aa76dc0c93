/**
 * cpu_kernels.h - scalar CPU building blocks shared by the CPU backend and the drivers:
 * L2 row normalisation as torch does it, and MaxSim rows (token products in canon_dot's order).
 */
#ifndef MIEB_BACKEND_CPU_KERNELS_H
#define MIEB_BACKEND_CPU_KERNELS_H

#include <stdint.h>

#include "backend.h"

/**
 * In place: x[i] /= max(||x[i]||_2, 1e-12) for each of n rows, in fp32, like
 * torch.nn.functional.normalize(p=2, dim=1).
 */
void mieb_cpu_l2_normalize_rows(float *x, int64_t n, int64_t dim);

/**
 * MaxSim of query item qi against doc items [d0, d1): out[j - d0] =
 * sum over query tokens t of max over doc tokens u of <q_t, d_u> (ColBERT late interaction).
 * An item with no tokens scores 0 (empty sum) / contributes no maximum.
 */
mieb_status mieb_cpu_maxsim_row(const struct mieb_vecs *q, int64_t qi, const struct mieb_vecs *d,
                                int64_t d0, int64_t d1, float *out);

#endif
