/**
 * logreg_loss.h - internal to logreg_lbfgs.c: sklearn 1.9's LinearModelLoss.loss_gradient
 * (half-multinomial, or half-binomial with one weight vector for 2 classes) on float32 X,
 * with its numpy products made as numpy makes them, and the row-block threading that the
 * fit and predict share.
 *
 * Bit-exactness of the BLAS calls (checked against numpy 2.4 + OpenBLAS, see
 * docs/DESIGN.md "Linear probe"): one single-threaded OpenBLAS call with numpy's operand
 * shapes gives numpy's float32 bits; splitting the output ROWS of a row-major sgemm into
 * blocks that start at multiples of MIEB_LOGREG_ROW_ALIGN keeps every element's bits
 * (observed: splits at multiples of 12 keep them, others and column splits do not; the
 * kernel's row tiles start at the start of each call). numpy's own multi-threaded sgemm splits differently and is itself not bit-equal to
 * its single-threaded result, so "exact" means "as sklearn with one BLAS thread".
 */
#ifndef MIEB_EMULATION_LOGREG_LOSS_H
#define MIEB_EMULATION_LOGREG_LOSS_H

#include <stdint.h>

#include "../core/parallel.h"
#include "../core/status.h"

/** Row blocks handed to threads start at multiples of this (a multiple of 8, 12, 16, 24, 32). */
#define MIEB_LOGREG_ROW_ALIGN 96

struct mieb_logreg_loss {
    const float *X;     /* [n, D] row-major, borrowed */
    const int64_t *y;   /* [n] class indices in [0, K), borrowed */
    int64_t n, D, K;    /* K classes */
    int64_t KK;         /* columns of the weight matrix: K, or 1 when binary */
    int binary;         /* K == 2: one weight vector, half-binomial loss */
    int x_finite;       /* every X value is finite (X @ 0 is then exactly 0) */
    /* scratch, owned: */
    float *wt;          /* [D+1, KK] float32(w) in scipy's layout: row j = feature j, intercept last */
    float *raw;         /* [n, KK] logits, then grad_pointwise / n */
    float *lossv;       /* [n] per-sample loss */
    float *gx;          /* [KK, D] grad_pointwise^T @ X */
    float *graw;        /* [D+1, KK] the data term of the gradient in scipy's layout (no L2 term) */
};

/** Borrow X and y, allocate the scratch (MIEB_ERR_OOM; nothing to free on failure). */
mieb_status mieb_logreg_loss_init(struct mieb_logreg_loss *p, const float *X, const int64_t *y, int64_t n, int64_t D,
                                  int64_t K);

/** Free the scratch; safe on a zeroed or already freed struct. */
void mieb_logreg_loss_free(struct mieb_logreg_loss *p);

/**
 * The data term at the float32 weights the caller put in p->wt ([D+1, KK], scipy's
 * layout): p->lossv [n] the per-sample losses, p->graw [D+1, KK] = [X, 1]^T @
 * (grad_pointwise / n), made with numpy's products (the lr_eval contract of backend.h).
 */
void mieb_logreg_loss_data(struct mieb_logreg_loss *p, int n_threads);

/**
 * loss and gradient from a data term: loss = float32(sum(lossv)) / n (numpy's pairwise
 * float32 sum) + float32(0.5 / n) * float32(wt[0:D*KK] . wt[0:D*KK]); g [P] (float64) =
 * graw + float32(1/n) * wt for the weights, graw for the intercepts (unpenalised).
 */
double mieb_logreg_loss_finish(const float *lossv, int64_t n, const float *wt, const float *graw, int64_t D,
                               int64_t KK, double *g);

/**
 * loss = mean per-sample loss + 1/(2Cn) ||W||^2 at float32(w), and its gradient g, both in
 * scipy's float64 vectors of P = KK*(D+1) values (multiclass: w[j*K + k], the (K, D+1)
 * matrix ravelled in Fortran order; binary: D weights then the intercept). Runs on up to
 * n_threads threads (row blocks, then class blocks); the result does not depend on it.
 */
double mieb_logreg_loss_grad(struct mieb_logreg_loss *p, const double *w, double *g, int n_threads);

/** Threads worth using for an [n, k] x [k, m] product (1 for small ones, at most n / ALIGN). */
int mieb_logreg_threads_for(int64_t n, int64_t k, int64_t m, int n_threads);

/** Rows [*lo, *hi) of part t of nt over n rows, block starts at multiples of MIEB_LOGREG_ROW_ALIGN. */
void mieb_logreg_part(int64_t n, int t, int nt, int64_t *lo, int64_t *hi);


#endif
