/** gpu_pairwise_cases.h - CUDA sts_pairs / compo_scores against the CPU backend (gpu_pairwise_cases.c). */
#ifndef MIEB_GPU_PAIRWISE_CASES_H
#define MIEB_GPU_PAIRWISE_CASES_H

#include "backend/backend.h"

/** Every case reports through gt_result; the values must be equal bit for bit. */
void test_pairwise_ops(struct mieb_backend *gpu, struct mieb_backend *cpu);

#endif
