/**
 * cpu_logreg.h - the CPU backend's lr_predict (backend.h) and the row kernels it shares with
 * the per-experiment predict (host/emulation/logreg_lbfgs.c, mieb_logreg_predict), so that
 * both give the same bits: numpy's products (one single-threaded OpenBLAS call each, as
 * sklearn's decision_function makes them) and logreg_math.h's decision and argmax rule.
 */
#ifndef MIEB_CPU_LOGREG_H
#define MIEB_CPU_LOGREG_H

#include <stdint.h>

#include "../backend/backend.h"

/**
 * Rows per sgemm of a multiclass predict (a multiple of host/emulation's row alignment, 96;
 * 6 MB of scores at K = 1000). Every block starts at a multiple of it, whatever the thread
 * count, so each sgemm call has the same shape and operands as a one-thread predict's.
 */
#define MIEB_CPU_LR_PRED_ROWS 1536

/**
 * Classes of rows X [rows, D] (rows <= MIEB_CPU_LR_PRED_ROWS) under a multiclass model
 * coef [KK, D], intercept [KK] (KK > 1): scores = X @ coef^T (one sgemm) into scratch
 * [rows, KK], then out[i] = the first maximum of the decision values (logreg_math.h).
 */
void mieb_cpu_lr_predict_block(const float *coef, const float *intercept, int64_t KK, int64_t D, const float *X,
                               int64_t rows, float *scratch, int64_t *out);

/**
 * Classes of rows X [n, D] under a binary model (one weight vector coef [D]): the decisions
 * X @ coef (one sgemv over all n rows, as numpy's matmul with a vector) into scratch [n],
 * then out[i] = 1 iff decision + intercept > 0.
 */
void mieb_cpu_lr_predict_binary(const float *coef, float intercept, const float *X, int64_t n, int64_t D,
                                float *scratch, int64_t *out);

/**
 * lr_predict (backend.h) on up to n_threads threads (0: the CPUs this process may use); the
 * result does not depend on n_threads and equals mieb_logreg_predict's for each model.
 * MIEB_ERR_INVALID_ARG on a bad shape, MIEB_ERR_OOM when the scores' scratch cannot be had.
 */
mieb_status mieb_cpu_lr_predict(const float *coef, const float *intercept, int64_t n_problems, int64_t KK, int64_t D,
                                const float *X, int64_t n, int n_threads, int64_t *out);

#endif
