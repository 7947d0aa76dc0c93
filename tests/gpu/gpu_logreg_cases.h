/** gpu_logreg_cases.h - the CUDA backend's logistic-regression slots against the CPU reference (gpu_logreg_cases.c). */
#ifndef MIEB_GPU_LOGREG_CASES_H
#define MIEB_GPU_LOGREG_CASES_H

#include "backend/backend.h"

/**
 * lr_eval against the CPU data term, lr_predict against mieb_logreg_predict, whole fits
 * (mieb_logreg_fit_backend) against mieb_logreg_fit, misuse and memory limits; every case
 * reports through gt_result.
 */
void test_logreg_ops(struct mieb_backend *gpu);

#endif
