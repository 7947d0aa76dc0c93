/**
 * gpu_screen_cases.h - the CUDA int8 screen's cases of test_cuda_backend (gpu_screen_cases.c).
 */
#ifndef MIEB_TESTS_GPU_SCREEN_CASES_H
#define MIEB_TESTS_GPU_SCREEN_CASES_H

#include "backend/backend.h"

/** Every int8 screen case against `cpu` (results through gt_result). */
void test_screen_ops(struct mieb_backend *cpu);

#endif
