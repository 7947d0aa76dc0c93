/**
 * logreg_lbfgs.h - sklearn 1.9's LogisticRegression(max_iter=100) (lbfgs, L2, C=1,
 * fit_intercept) on float32 data, as mteb's linear probe fits it (PROTOCOLS.md §2.1, §13).
 *
 * Objective: mean half-multinomial (or half-binomial for 2 classes, one weight vector)
 * log-loss + 1/(2*C*n) * ||W||^2, intercepts unpenalised, from w = 0. The optimiser mirrors
 * scipy's L-BFGS-B for an unbounded problem: m = 10 pairs, first step length 1/||g||,
 * Moré–Thuente line search (dcsrch: ftol 1e-3, gtol 0.9, xtol 0.1, maxls 50), restart on a
 * failed search, stop at pgtol 1e-4 on the inf-norm of g, at (f_old - f) <= 64*eps*max(|f_old|,|f|,1)
 * (factr = ftol/eps with sklearn's ftol = 64*eps) or after max_iter iterations.
 * Precision as sklearn >= 1.9 with float32 X: scipy iterates x in float64, but the loss
 * sees float32(x) (ScalarFunction keeps x0's float32 dtype), logits / per-sample losses /
 * gradients are float32 (sklearn's Cython loss uses double exp/log inside), and the
 * returned coefficients are float32(x).
 * Products: numpy's own, one BLAS call each (X @ W.T, grad_pointwise.T @ X, np.dot(w, w);
 * sgemv where numpy multiplies by a vector), made by single-threaded OpenBLAS (these
 * functions set openblas_set_num_threads(1), process-wide, as the CPU backend does), so the
 * float32 bits equal numpy's with one BLAS thread. More threads split the rows of each
 * product into blocks that keep every element's bits (logreg_loss.h): the result does not
 * depend on the thread count.
 */
#ifndef MIEB_EMULATION_LOGREG_LBFGS_H
#define MIEB_EMULATION_LOGREG_LBFGS_H

#include <stdatomic.h>
#include <stdint.h>

#include "../core/status.h"

struct mieb_logreg {
    int64_t n_classes;  /* K >= 2 */
    int64_t dim;        /* D */
    float *coef;        /* [K, D] (K = 1 row when binary) */
    float *intercept;   /* [K] (1 when binary) */
    int n_iter;         /* L-BFGS-B iterations done */
    int converged;      /* 1: stopped by pgtol / ftol, 0: max_iter or abnormal */
};

/**
 * Threads for one fit or predict: n_threads / *share (at least 1), re-read at every loss
 * evaluation, so that the fits still running take over the threads of finished ones.
 * share NULL: all n_threads. A NULL mieb_logreg_par means one thread.
 */
struct mieb_logreg_par {
    int n_threads;
    const atomic_int *share; /* optional: how many fits share n_threads now (owner: the caller) */
};

/**
 * Fit on X [n, D] row-major float32 with class indices y[i] in [0, K) (the position of the
 * label in the sorted class list, as sklearn's LabelEncoder). K >= 2. out's arrays are
 * malloc'd (free with mieb_logreg_free). Fails only on allocation.
 */
mieb_status mieb_logreg_fit(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                            struct mieb_logreg *out);

/** mieb_logreg_fit on par's threads (NULL: one); same result for any thread count. */
mieb_status mieb_logreg_fit_par(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                                const struct mieb_logreg_par *par, struct mieb_logreg *out);

/**
 * predict X [n, D]: out[i] = class index argmax(X W^T + b) (first maximum, NaN counts as the
 * maximum, as np.argmax); binary: 1 iff decision > 0. Scores are made in blocks of rows
 * (a few MB of scratch per thread). Fails only on allocation (MIEB_ERR_OOM).
 */
mieb_status mieb_logreg_predict(const struct mieb_logreg *m, const float *X, int64_t n, int64_t *out);

/** mieb_logreg_predict on par's threads (NULL: one); same result for any thread count. */
mieb_status mieb_logreg_predict_par(const struct mieb_logreg *m, const float *X, int64_t n,
                                    const struct mieb_logreg_par *par, int64_t *out);

void mieb_logreg_free(struct mieb_logreg *m);

struct mieb_lbfgs;
/**
 * Copy a finished L-BFGS state's solution (scipy's layout) into out->coef [KK, D] and
 * out->intercept [KK] (allocated by the caller), with n_iter and converged.
 */
void mieb_logreg_store(const struct mieb_lbfgs *s, int64_t K, int64_t D, struct mieb_logreg *out);

#endif
