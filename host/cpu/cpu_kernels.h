/**
 * cpu_kernels.h - scalar CPU building blocks shared by the CPU backend and the drivers:
 * L2 row normalisation as torch does it, and MaxSim scores (token products in canon_dot's order).
 */
#ifndef MIEB_CPU_KERNELS_H
#define MIEB_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "../backend/backend.h"

/**
 * In place: x[i] /= max(||x[i]||_2, 1e-12) for each of n rows, in fp32, like
 * torch.nn.functional.normalize(p=2, dim=1).
 */
void mieb_cpu_l2_normalize_rows(float *x, int64_t n, int64_t dim);
/** The same rows of src normalized into dst (dst == src: in place; no other overlap). */
void mieb_cpu_l2_normalize_rows_to(float *dst, const float *src, int64_t n, int64_t dim);

/**
 * Scratch of mieb_cpu_maxsim_tile: the token scores of one product. Zero it before first
 * use; free s when done. Reused across calls (a fresh multi-MiB block per call costs page
 * faults).
 */
struct mieb_maxsim_scratch {
    float *s;
    size_t cap; /* floats */
};

/**
 * MaxSim of query items [q0, q1) against doc items [d0, d1): out[(i - q0) * ldo + (j - d0)] =
 * sum over the query's tokens t, in order, of max over the doc's tokens u of <q_t, d_u>
 * (ColBERT late interaction; float32 sum, each token product mieb_canon_dot's). An item with
 * no tokens scores 0 (empty sum) / contributes no maximum. Every score is a function of its
 * two items alone: how the queries and docs are grouped into products does not change a bit.
 */
mieb_status mieb_cpu_maxsim_tile(const struct mieb_vecs *q, int64_t q0, int64_t q1, const struct mieb_vecs *d,
                                 int64_t d0, int64_t d1, float *out, int64_t ldo, struct mieb_maxsim_scratch *ws);

#endif
