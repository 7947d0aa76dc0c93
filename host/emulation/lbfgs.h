/**
 * lbfgs.h - scipy's L-BFGS-B for an unbounded problem, as sklearn's lbfgs solver runs it,
 * in reverse communication: the optimiser never calls the objective, it asks for it.
 *
 *   mieb_lbfgs_init(&s, P, max_iter);            s.x = 0: evaluate there
 *   do { f = objective(s.x, s.g); }              write the gradient into s.g
 *   while (mieb_lbfgs_tell(&s, f));              true: evaluate at the new s.x
 *   solution in s.x, s.n_iter, s.converged
 *
 * That lets one loop drive a single fit (logreg_lbfgs.c) and many fits in lockstep whose
 * objectives are evaluated together as one batch (logreg_batch.c), with one copy of the
 * algorithm: m = 10 pairs, first step 1/||g||, Moré–Thuente line search (dcsrch: ftol 1e-3,
 * gtol 0.9, xtol 0.1, at most 50 evaluations), restart from -g on a failed search (stop if
 * it fails from -g), stop at pgtol 1e-4 on the inf-norm of g, at (f_old - f) <=
 * 64 eps max(|f_old|, |f|, 1) (sklearn's ftol = 64 eps), or after max_iter iterations.
 * The direction is the two-loop recursion, which for an unbounded problem equals
 * L-BFGS-B's Cauchy point + subspace minimisation step up to rounding.
 */
#ifndef MIEB_EMULATION_LBFGS_H
#define MIEB_EMULATION_LBFGS_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/status.h"

#define MIEB_LBFGS_M 10

/** MINPACK-2 dcsrch state (private to lbfgs.c). */
struct mieb_dcsrch {
    int brackt, stage;
    double ginit, gtest, gx, gy, finit, fx, fy, stx, sty, stmin, stmax, width, width1;
    double ftol, gtol, xtol, stpmin, stpmax;
};

struct mieb_lbfgs {
    /* public */
    double *x;     /* [P] where the next evaluation is wanted; the solution once done */
    double *g;     /* [P] the caller writes the gradient at x here before mieb_lbfgs_tell */
    int n_iter;    /* iterations done */
    int converged; /* 1: stopped by pgtol or the relative reduction test */
    bool done;
    /* private */
    int64_t P;
    int max_iter, phase, col, head, nls;
    double *mem, *d, *x0, *g0, *S, *Y;
    double rho[MIEB_LBFGS_M], alpha[MIEB_LBFGS_M];
    double f, fold, gd, gdold, stp, theta;
    struct mieb_dcsrch ls;
};

/** Allocate for P parameters and ask for the first evaluation at x = 0 (MIEB_ERR_OOM). */
mieb_status mieb_lbfgs_init(struct mieb_lbfgs *s, int64_t P, int max_iter);

/**
 * f is the objective at s->x and s->g its gradient: advance. Returns true when the
 * objective is wanted at the new s->x, false when the minimisation has ended.
 */
bool mieb_lbfgs_tell(struct mieb_lbfgs *s, double f);

/** Free the vectors; safe on a zeroed or freed state. */
void mieb_lbfgs_free(struct mieb_lbfgs *s);

#endif
