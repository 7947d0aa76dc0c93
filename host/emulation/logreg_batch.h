/**
 * logreg_batch.h - many logistic-regression fits in lockstep: the linear probe's few-shot
 * experiments (and their predictions) evaluated as one batch per round, so that a backend
 * with the batch slots (the CUDA backend: GEMMs over cuBLAS and one pointwise kernel per
 * experiment, one host round trip per round) does the heavy work for all of them at once.
 *
 * Each problem runs the same optimiser as mieb_logreg_fit (host/emulation/lbfgs.h, scipy's
 * L-BFGS-B for an unbounded problem, sklearn's tolerances) on the host; only the data term
 * of the loss and gradient comes from the evaluator. An evaluator that computes that term
 * as the CPU reference does (mieb_logreg_loss_data) gives mieb_logreg_fit's bits exactly
 * (tests/programs/logreg_tool --batch); a GPU evaluator differs by float32 rounding only
 * (tests/gpu/).
 */
#ifndef MIEB_EMULATION_LOGREG_BATCH_H
#define MIEB_EMULATION_LOGREG_BATCH_H

#include <stdint.h>

#include "../backend/backend.h"
#include "../core/status.h"
#include "logreg_lbfgs.h"

/**
 * The data term for a round: for a < n_active, problem which[a] at float32 weights
 * wt + a*P (P = (D+1)*KK, scipy's [D+1, KK] layout): per-sample losses into lossv + a*n
 * and [X, 1]^T @ (grad_pointwise / n) into grad + a*P (the lr_eval contract, backend.h).
 */
struct mieb_lr_evaluator {
    void *ctx;
    mieb_status (*eval)(void *ctx, int64_t n_active, const int64_t *which, const float *wt, float *lossv,
                        float *grad);
};

/**
 * Fit n_problems problems that share n, D and K (>= 2), each from w = 0 with at most
 * max_iter iterations, the host work of a round spread over n_threads threads (0: 1).
 * out[p] as mieb_logreg_fit's (free each with mieb_logreg_free). On failure every out[p]
 * is freed and zeroed.
 */
mieb_status mieb_logreg_fit_batch(const struct mieb_lr_evaluator *ev, int64_t n_problems, int64_t n, int64_t D,
                                  int64_t K, int max_iter, int n_threads, struct mieb_logreg *out);

/**
 * mieb_logreg_fit_batch through a backend's batch slots (lr_open, lr_eval, lr_close):
 * X [n_problems, n, D], y [n_problems, n] in [0, K). Opens as many problems at a time as the
 * backend holds (halving the batch on MIEB_ERR_OOM) and at most max_batch (0: no limit),
 * which bounds the host memory of the optimisers (mieb_logreg_host_bytes each).
 * MIEB_ERR_UNSUPPORTED when the backend has no batch (mieb_dispatch_lr_batch_available says
 * so before), MIEB_ERR_OOM when not even one problem fits.
 */
mieb_status mieb_logreg_fit_backend(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems,
                                    int64_t n, int64_t D, int64_t K, int max_iter, int n_threads, int64_t max_batch,
                                    struct mieb_logreg *out);

/** Host bytes one problem of a batch holds while it is fitted (L-BFGS state and round buffers). */
size_t mieb_logreg_host_bytes(int64_t n, int64_t D, int64_t K);

/**
 * Predictions of n_problems models (same K and D) on the rows X [n, D] through
 * mieb_dispatch_lr_predict: out [n_problems, n] class indices, on the backend where it
 * can, else on the CPU backend, whose classes are mieb_logreg_predict's bits.
 */
mieb_status mieb_logreg_predict_backend(struct mieb_backend *be, const struct mieb_logreg *models,
                                        int64_t n_problems, const float *X, int64_t n, int64_t *out);

#endif
