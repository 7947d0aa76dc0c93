/*
 * lbfgs.c - scipy's L-BFGS-B for an unbounded problem, in reverse communication (lbfgs.h).
 * The control flow is the loop sklearn's fits went through when this was one function
 * (iteration -> direction -> line search -> memory update); each place where that loop
 * evaluated the objective is now a return to the caller, resumed by mieb_lbfgs_tell.
 */
#include "lbfgs.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#define MAXLS 50

enum { PH_INIT = 0, PH_SEARCH = 1, PH_DONE = 2 };

/* d += a * v elementwise, one rounding per product and per sum (d - a*v as d + (-a)*v is
 * the same number). Not BLAS daxpy: its kernels may fuse the two into an FMA. */
static void axpy(double *restrict d, double a, const double *restrict v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] += a * v[i];
}

/*
 * scipy's L-BFGS-B takes its inner products from BLAS ddot, as this does. Besides, a plain
 * loop is one chain of dependent adds (each waits for the last: ~1 ms per product at the
 * ImageNet probe's 769,000 parameters, 20 products per iteration), which BLAS splits over
 * vector lanes and accumulators.
 */
static double dot(const double *a, const double *b, int64_t n)
{
    return cblas_ddot((int)n, a, 1, b, 1);
}

/* ---- MINPACK-2 dcsrch / dcstep (Moré–Thuente), as scipy's L-BFGS-B calls them ---- */
enum { DCS_FG = 0, DCS_CONV = 1, DCS_WARN = 2, DCS_ERROR = 3 };

static void dcstep(double *stx, double *fx, double *dx, double *sty, double *fy, double *dy, double *stp,
                   double fp, double dp, int *brackt, double stpmin, double stpmax)
{
    double sgnd = dp * (*dx / fabs(*dx)), stpf, stpc, stpq, theta, s, gamma, p, q, r;
    if (fp > *fx) {
        theta = 3.0 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        s = fmax(fmax(fabs(theta), fabs(*dx)), fabs(dp));
        gamma = s * sqrt((theta / s) * (theta / s) - (*dx / s) * (dp / s));
        if (*stp < *stx)
            gamma = -gamma;
        p = (gamma - *dx) + theta;
        q = ((gamma - *dx) + gamma) + dp;
        r = p / q;
        stpc = *stx + r * (*stp - *stx);
        stpq = *stx + ((*dx / ((*fx - fp) / (*stp - *stx) + *dx)) / 2.0) * (*stp - *stx);
        stpf = fabs(stpc - *stx) < fabs(stpq - *stx) ? stpc : stpc + (stpq - stpc) / 2.0;
        *brackt = 1;
    } else if (sgnd < 0.0) {
        theta = 3.0 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        s = fmax(fmax(fabs(theta), fabs(*dx)), fabs(dp));
        gamma = s * sqrt((theta / s) * (theta / s) - (*dx / s) * (dp / s));
        if (*stp > *stx)
            gamma = -gamma;
        p = (gamma - dp) + theta;
        q = ((gamma - dp) + gamma) + *dx;
        r = p / q;
        stpc = *stp + r * (*stx - *stp);
        stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        stpf = fabs(stpc - *stp) > fabs(stpq - *stp) ? stpc : stpq;
        *brackt = 1;
    } else if (fabs(dp) < fabs(*dx)) {
        theta = 3.0 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        s = fmax(fmax(fabs(theta), fabs(*dx)), fabs(dp));
        gamma = s * sqrt(fmax(0.0, (theta / s) * (theta / s) - (*dx / s) * (dp / s)));
        if (*stp > *stx)
            gamma = -gamma;
        p = (gamma - dp) + theta;
        q = (gamma + (*dx - dp)) + gamma;
        r = p / q;
        if (r < 0.0 && gamma != 0.0)
            stpc = *stp + r * (*stx - *stp);
        else if (*stp > *stx)
            stpc = stpmax;
        else
            stpc = stpmin;
        stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        if (*brackt) {
            stpf = fabs(stpc - *stp) < fabs(stpq - *stp) ? stpc : stpq;
            if (*stp > *stx)
                stpf = fmin(*stp + 0.66 * (*sty - *stp), stpf);
            else
                stpf = fmax(*stp + 0.66 * (*sty - *stp), stpf);
        } else {
            stpf = fabs(stpc - *stp) > fabs(stpq - *stp) ? stpc : stpq;
            stpf = fmin(stpmax, stpf);
            stpf = fmax(stpmin, stpf);
        }
    } else {
        if (*brackt) {
            theta = 3.0 * (fp - *fy) / (*sty - *stp) + *dy + dp;
            s = fmax(fmax(fabs(theta), fabs(*dy)), fabs(dp));
            gamma = s * sqrt((theta / s) * (theta / s) - (*dy / s) * (dp / s));
            if (*stp > *sty)
                gamma = -gamma;
            p = (gamma - dp) + theta;
            q = ((gamma - dp) + gamma) + *dy;
            r = p / q;
            stpc = *stp + r * (*sty - *stp);
            stpf = stpc;
        } else if (*stp > *stx) {
            stpf = stpmax;
        } else {
            stpf = stpmin;
        }
    }
    if (fp > *fx) {
        *sty = *stp, *fy = fp, *dy = dp;
    } else {
        if (sgnd < 0.0)
            *sty = *stx, *fy = *fx, *dy = *dx;
        *stx = *stp, *fx = fp, *dx = dp;
    }
    *stp = stpf;
}

static int dcsrch_start(struct mieb_dcsrch *s, double f, double g, double *stp, double ftol, double gtol, double xtol,
                        double stpmin, double stpmax)
{
    if (*stp < stpmin || *stp > stpmax || g >= 0.0)
        return DCS_ERROR;
    *s = (struct mieb_dcsrch){0};
    s->ftol = ftol, s->gtol = gtol, s->xtol = xtol, s->stpmin = stpmin, s->stpmax = stpmax;
    s->brackt = 0, s->stage = 1, s->finit = f, s->ginit = g, s->gtest = ftol * g;
    s->width = stpmax - stpmin, s->width1 = s->width / 0.5;
    s->stx = 0.0, s->fx = f, s->gx = g, s->sty = 0.0, s->fy = f, s->gy = g;
    s->stmin = 0.0, s->stmax = *stp + 4.0 * *stp;
    return DCS_FG;
}

/* One dcsrch call with f, g at the current stp: returns DCS_FG (evaluate at the new *stp),
 * DCS_CONV or DCS_WARN (step accepted, as lnsrlb accepts warnings). */
static int dcsrch_step(struct mieb_dcsrch *s, double f, double g, double *stp)
{
    double ftest = s->finit + *stp * s->gtest;
    int task = DCS_FG;
    if (s->stage == 1 && f <= ftest && g >= 0.0)
        s->stage = 2;
    if (s->brackt && (*stp <= s->stmin || *stp >= s->stmax))
        task = DCS_WARN;
    if (s->brackt && s->stmax - s->stmin <= s->xtol * s->stmax)
        task = DCS_WARN;
    if (*stp == s->stpmax && f <= ftest && g <= s->gtest)
        task = DCS_WARN;
    if (*stp == s->stpmin && (f > ftest || g >= s->gtest))
        task = DCS_WARN;
    if (f <= ftest && fabs(g) <= s->gtol * (-s->ginit))
        task = DCS_CONV;
    if (task != DCS_FG)
        return task;
    if (s->stage == 1 && f <= s->fx && f > ftest) {
        double fm = f - *stp * s->gtest, fxm = s->fx - s->stx * s->gtest, fym = s->fy - s->sty * s->gtest;
        double gm = g - s->gtest, gxm = s->gx - s->gtest, gym = s->gy - s->gtest;
        dcstep(&s->stx, &fxm, &gxm, &s->sty, &fym, &gym, stp, fm, gm, &s->brackt, s->stmin, s->stmax);
        s->fx = fxm + s->stx * s->gtest, s->fy = fym + s->sty * s->gtest;
        s->gx = gxm + s->gtest, s->gy = gym + s->gtest;
    } else {
        dcstep(&s->stx, &s->fx, &s->gx, &s->sty, &s->fy, &s->gy, stp, f, g, &s->brackt, s->stmin, s->stmax);
    }
    if (s->brackt) {
        if (fabs(s->sty - s->stx) >= 0.66 * s->width1)
            *stp = s->stx + 0.5 * (s->sty - s->stx);
        s->width1 = s->width;
        s->width = fabs(s->sty - s->stx);
        s->stmin = fmin(s->stx, s->sty);
        s->stmax = fmax(s->stx, s->sty);
    } else {
        s->stmin = *stp + 1.1 * (*stp - s->stx);
        s->stmax = *stp + 4.0 * (*stp - s->stx);
    }
    *stp = fmax(*stp, s->stpmin);
    *stp = fmin(*stp, s->stpmax);
    if ((s->brackt && (*stp <= s->stmin || *stp >= s->stmax)) || (s->brackt && s->stmax - s->stmin <= s->xtol * s->stmax))
        *stp = s->stx;
    return DCS_FG;
}

mieb_status mieb_lbfgs_init(struct mieb_lbfgs *s, int64_t P, int max_iter)
{
    memset(s, 0, sizeof *s);
    s->mem = calloc((size_t)P * (5 + 2 * MIEB_LBFGS_M), sizeof(double));
    if (!s->mem)
        return mieb_fail(MIEB_ERR_OOM, "L-BFGS: out of memory for %lld parameters x %d vectors", (long long)P,
                         5 + 2 * MIEB_LBFGS_M);
    s->P = P, s->max_iter = max_iter, s->theta = 1.0, s->phase = PH_INIT;
    s->x = s->mem, s->g = s->x + P, s->d = s->g + P, s->x0 = s->d + P, s->g0 = s->x0 + P;
    s->S = s->g0 + P, s->Y = s->S + MIEB_LBFGS_M * P;
    return MIEB_OK;
}

void mieb_lbfgs_free(struct mieb_lbfgs *s)
{
    free(s->mem);
    s->mem = s->x = s->g = s->d = s->x0 = s->g0 = s->S = s->Y = NULL;
}

static bool finish(struct mieb_lbfgs *s)
{
    s->phase = PH_DONE;
    s->done = true;
    return false;
}

/* A failed line search: back to the start point; retry along -g unless already there. */
static bool search_failed(struct mieb_lbfgs *s)
{
    int64_t P = s->P;
    memcpy(s->x, s->x0, (size_t)P * sizeof *s->x);
    memcpy(s->g, s->g0, (size_t)P * sizeof *s->g);
    s->f = s->fold;
    if (s->col == 0)
        return false;
    s->col = 0, s->head = 0, s->theta = 1.0;
    return true;
}

/* Start iterations until one asks for an evaluation (true) or the run ends (false). */
static bool begin_iteration(struct mieb_lbfgs *s)
{
    int64_t P = s->P;
    double *x = s->x, *g = s->g, *d = s->d;
    for (;;) {
        if (s->converged || s->n_iter >= s->max_iter)
            return finish(s);
        /* direction: -H g by the two-loop recursion over the stored pairs, H0 = I / theta
         * (scalars and rows in locals: d is not known to the compiler not to alias the
         * state, which would keep it from vectorising the updates) */
        for (int64_t i = 0; i < P; i++)
            d[i] = -g[i];
        for (int c = s->col - 1; c >= 0; c--) {
            int k = (s->head + c) % MIEB_LBFGS_M;
            const double a = s->rho[k] * dot(s->S + k * P, d, P);
            s->alpha[k] = a;
            axpy(d, -a, s->Y + k * P, P);
        }
        if (s->col > 0) {
            const double theta = s->theta;
            for (int64_t i = 0; i < P; i++)
                d[i] /= theta;
        }
        for (int c = 0; c < s->col; c++) {
            int k = (s->head + c) % MIEB_LBFGS_M;
            double b = s->rho[k] * dot(s->Y + k * P, d, P);
            axpy(d, s->alpha[k] - b, s->S + k * P, P);
        }
        /* line search (scipy lnsrlb + dcsrch) */
        double dnorm = sqrt(dot(d, d, P)), stpmx = 1e10;
        s->stp = s->n_iter == 0 ? fmin(1.0 / dnorm, stpmx) : 1.0;
        s->fold = s->f;
        s->gd = s->gdold = dot(g, d, P);
        memcpy(s->x0, x, (size_t)P * sizeof *x);
        memcpy(s->g0, g, (size_t)P * sizeof *g);
        if (s->gd < 0.0 && dcsrch_start(&s->ls, s->fold, s->gd, &s->stp, 1e-3, 0.9, 0.1, 0.0, stpmx) == DCS_FG) {
            s->nls = 0;
            for (int64_t i = 0; i < P; i++)
                x[i] = s->stp * d[i] + s->x0[i];
            s->phase = PH_SEARCH;
            return true;
        }
        if (!search_failed(s))
            return finish(s);
    }
}

/* The line search accepted s->stp: count the iteration, test convergence, update memory. */
static bool accept_step(struct mieb_lbfgs *s)
{
    const double pgtol = 1e-4, epsmch = DBL_EPSILON, factr = 64.0;
    int64_t P = s->P;
    s->n_iter++;
    double gmax = 0.0;
    for (int64_t i = 0; i < P; i++)
        gmax = fmax(gmax, fabs(s->g[i]));
    if (s->n_iter >= s->max_iter)
        return finish(s);
    if (gmax <= pgtol || s->fold - s->f <= factr * epsmch * fmax(fmax(fabs(s->fold), fabs(s->f)), 1.0)) {
        s->converged = 1;
        return finish(s);
    }
    /* memory update (skipped when s.y is not safely positive, as L-BFGS-B does) */
    double dr = (s->gd - s->gdold) * s->stp, ddum = -s->gdold * s->stp;
    if (dr > epsmch * ddum) {
        int slot = s->col < MIEB_LBFGS_M ? (s->head + s->col) % MIEB_LBFGS_M : s->head;
        if (s->col < MIEB_LBFGS_M)
            s->col++;
        else
            s->head = (s->head + 1) % MIEB_LBFGS_M;
        double rr = 0.0;
        for (int64_t i = 0; i < P; i++) {
            s->S[slot * P + i] = s->stp * s->d[i];
            s->Y[slot * P + i] = s->g[i] - s->g0[i];
            rr += s->Y[slot * P + i] * s->Y[slot * P + i];
        }
        s->rho[slot] = 1.0 / dr;
        s->theta = rr / dr;
    }
    return begin_iteration(s);
}

bool mieb_lbfgs_tell(struct mieb_lbfgs *s, double f)
{
    const double pgtol = 1e-4;
    int64_t P = s->P;
    switch (s->phase) {
    case PH_INIT: {
        s->f = f;
        double gmax = 0.0;
        for (int64_t i = 0; i < P; i++)
            gmax = fmax(gmax, fabs(s->g[i]));
        if (gmax <= pgtol)
            s->converged = 1;
        return begin_iteration(s);
    }
    case PH_SEARCH: {
        s->f = f;
        s->gd = dot(s->g, s->d, P);
        int task = dcsrch_step(&s->ls, f, s->gd, &s->stp);
        if (task != DCS_FG)
            return accept_step(s); /* converged or warning: lnsrlb accepts both */
        if (++s->nls >= MAXLS) {
            if (!search_failed(s))
                return finish(s);
            return begin_iteration(s);
        }
        for (int64_t i = 0; i < P; i++)
            s->x[i] = s->stp * s->d[i] + s->x0[i];
        return true;
    }
    default:
        return false;
    }
}
