/*
 * logreg_lbfgs.c - multinomial / binomial logistic regression fitted like sklearn 1.9's
 * lbfgs solver on float32 data (see logreg_lbfgs.h): the loss-gradient in sklearn's
 * float32 arithmetic and an unbounded L-BFGS-B with scipy's Moré–Thuente line search.
 * The quasi-Newton direction is the two-loop recursion, which for an unbounded problem
 * equals L-BFGS-B's Cauchy point + subspace minimisation step up to rounding.
 */
#include "logreg_lbfgs.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include <cblas.h>

#include "logreg_loss.h"

#define LBFGS_M 10
#define MAXLS 50

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* ---- MINPACK-2 dcsrch / dcstep (Moré–Thuente), as scipy's L-BFGS-B calls them ---- */
enum { DCS_FG = 0, DCS_CONV = 1, DCS_WARN = 2, DCS_ERROR = 3 };
struct dcsrch {
    int brackt, stage;
    double ginit, gtest, gx, gy, finit, fx, fy, stx, sty, stmin, stmax, width, width1;
    double ftol, gtol, xtol, stpmin, stpmax;
};

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

static int dcsrch_start(struct dcsrch *s, double f, double g, double *stp, double ftol, double gtol, double xtol,
                        double stpmin, double stpmax)
{
    if (*stp < stpmin || *stp > stpmax || g >= 0.0)
        return DCS_ERROR;
    *s = (struct dcsrch){0};
    s->ftol = ftol, s->gtol = gtol, s->xtol = xtol, s->stpmin = stpmin, s->stpmax = stpmax;
    s->brackt = 0, s->stage = 1, s->finit = f, s->ginit = g, s->gtest = ftol * g;
    s->width = stpmax - stpmin, s->width1 = s->width / 0.5;
    s->stx = 0.0, s->fx = f, s->gx = g, s->sty = 0.0, s->fy = f, s->gy = g;
    s->stmin = 0.0, s->stmax = *stp + 4.0 * *stp;
    return DCS_FG;
}

/* One dcsrch call with f, g at the current stp: returns DCS_FG (evaluate at the new *stp),
 * DCS_CONV or DCS_WARN (step accepted, as lnsrlb accepts warnings). */
static int dcsrch_step(struct dcsrch *s, double f, double g, double *stp)
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

/* Threads for the next loss evaluation: the caller's share of par's threads, at least 1. */
static int par_threads(const struct mieb_logreg_par *par)
{
    if (!par || par->n_threads <= 1)
        return 1;
    int share = par->share ? atomic_load(par->share) : 1;
    int nt = par->n_threads / (share > 1 ? share : 1);
    return nt > 1 ? nt : 1;
}

mieb_status mieb_logreg_fit(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                            struct mieb_logreg *out)
{
    return mieb_logreg_fit_par(X, y, n, D, K, max_iter, NULL, out);
}

mieb_status mieb_logreg_fit_par(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                                const struct mieb_logreg_par *par, struct mieb_logreg *out)
{
    memset(out, 0, sizeof *out);
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1); /* our threads split the products; see logreg_lbfgs.h */
    struct mieb_logreg_loss p;
    MIEB_TRY(mieb_logreg_loss_init(&p, X, y, n, D, K));
    int64_t KK = p.KK, P = KK * (D + 1);
    double *mem = calloc((size_t)P * (7 + 2 * LBFGS_M), sizeof(double));
    out->coef = malloc((size_t)(KK * D) * sizeof(float));
    out->intercept = malloc((size_t)KK * sizeof(float));
    if (!mem || !out->coef || !out->intercept) {
        free(mem);
        mieb_logreg_loss_free(&p);
        mieb_logreg_free(out);
        return mieb_fail(MIEB_ERR_OOM, "logistic regression: out of memory for %lld x %lld parameters",
                         (long long)KK, (long long)(D + 1));
    }
    double *x = mem, *g = x + P, *d = g + P, *x0 = d + P, *g0 = x0 + P, *q = g0 + P, *S = q + 2 * P,
           *Y = S + LBFGS_M * P;
    double rho[LBFGS_M], alpha[LBFGS_M];
    int col = 0, head = 0, iter = 0, converged = 0;
    double f = mieb_logreg_loss_grad(&p, x, g, par_threads(par)), theta = 1.0;
    const double pgtol = 1e-4, epsmch = DBL_EPSILON, factr = 64.0;
    double gmax = 0.0;
    for (int64_t i = 0; i < P; i++)
        gmax = fmax(gmax, fabs(g[i]));
    if (gmax <= pgtol)
        converged = 1;
    while (!converged && iter < max_iter) {
        /* direction: -H g by the two-loop recursion over the stored pairs, H0 = I / theta */
        for (int64_t i = 0; i < P; i++)
            d[i] = -g[i];
        for (int c = col - 1; c >= 0; c--) {
            int s = (head + c) % LBFGS_M;
            alpha[s] = rho[s] * dot(S + s * P, d, P);
            for (int64_t i = 0; i < P; i++)
                d[i] -= alpha[s] * Y[s * P + i];
        }
        if (col > 0)
            for (int64_t i = 0; i < P; i++)
                d[i] /= theta;
        for (int c = 0; c < col; c++) {
            int s = (head + c) % LBFGS_M;
            double b = rho[s] * dot(Y + s * P, d, P);
            for (int64_t i = 0; i < P; i++)
                d[i] += (alpha[s] - b) * S[s * P + i];
        }
        /* line search (scipy lnsrlb + dcsrch) */
        double dnorm = sqrt(dot(d, d, P)), stpmx = 1e10;
        double stp = iter == 0 ? fmin(1.0 / dnorm, stpmx) : 1.0;
        double fold = f, gd = dot(g, d, P), gdold = gd;
        memcpy(x0, x, (size_t)P * sizeof *x);
        memcpy(g0, g, (size_t)P * sizeof *g);
        int ok = gd < 0.0, nls = 0;
        struct dcsrch st;
        int task = ok ? dcsrch_start(&st, fold, gd, &stp, 1e-3, 0.9, 0.1, 0.0, stpmx) : -1;
        while (ok) {
            for (int64_t i = 0; i < P; i++)
                x[i] = stp * d[i] + x0[i];
            f = mieb_logreg_loss_grad(&p, x, g, par_threads(par));
            gd = dot(g, d, P);
            task = dcsrch_step(&st, f, gd, &stp);
            if (task != DCS_FG)
                break;
            if (++nls >= MAXLS) {
                ok = 0;
                break;
            }
        }
        if (!ok || task == DCS_ERROR) {
            /* failed search: restore, drop the memory and retry along -g (abnormal if already) */
            memcpy(x, x0, (size_t)P * sizeof *x);
            memcpy(g, g0, (size_t)P * sizeof *g);
            f = fold;
            if (col == 0)
                break;
            col = 0, head = 0, theta = 1.0;
            continue;
        }
        iter++;
        gmax = 0.0;
        for (int64_t i = 0; i < P; i++)
            gmax = fmax(gmax, fabs(g[i]));
        if (iter >= max_iter)
            break;
        if (gmax <= pgtol || fold - f <= factr * epsmch * fmax(fmax(fabs(fold), fabs(f)), 1.0)) {
            converged = 1;
            break;
        }
        /* memory update (skipped when s.y is not safely positive, as L-BFGS-B does) */
        double dr = (gd - gdold) * stp, ddum = -gdold * stp;
        if (dr <= epsmch * ddum)
            continue;
        int slot = col < LBFGS_M ? (head + col) % LBFGS_M : head;
        if (col < LBFGS_M)
            col++;
        else
            head = (head + 1) % LBFGS_M;
        double rr = 0.0;
        for (int64_t i = 0; i < P; i++) {
            S[slot * P + i] = stp * d[i];
            Y[slot * P + i] = g[i] - g0[i];
            rr += Y[slot * P + i] * Y[slot * P + i];
        }
        rho[slot] = 1.0 / dr;
        theta = rr / dr;
    }
    for (int64_t k = 0; k < KK; k++) {
        for (int64_t j = 0; j < D; j++)
            out->coef[k * D + j] = (float)(p.binary ? x[j] : x[j * KK + k]);
        out->intercept[k] = (float)(p.binary ? x[D] : x[D * KK + k]);
    }
    out->n_classes = K, out->dim = D, out->n_iter = iter, out->converged = converged;
    mieb_logreg_loss_free(&p);
    free(mem);
    return MIEB_OK;
}

/* Rows per sgemm in predict: a multiple of MIEB_LOGREG_ROW_ALIGN (6 MB of scores at K = 1000). */
#define PRED_ROWS 1536

struct pred_arg {
    const struct mieb_logreg *m;
    const float *X;
    int64_t n;
    float *scratch; /* [nt][PRED_ROWS * K] */
    int64_t *out;
};

/* Row block of predict: scores = X @ coef.T + intercept (numpy's sgemm), first maximum. */
static void pred_fn(void *arg, int t, int nt)
{
    struct pred_arg *a = arg;
    int64_t lo, hi, K = a->m->n_classes, D = a->m->dim;
    float *s = a->scratch + (int64_t)t * PRED_ROWS * K;
    mieb_logreg_part(a->n, t, nt, &lo, &hi);
    for (int64_t r0 = lo; r0 < hi; r0 += PRED_ROWS) {
        int64_t rows = hi - r0 < PRED_ROWS ? hi - r0 : PRED_ROWS;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)K, (int)D, 1.0f, a->X + r0 * D, (int)D,
                    a->m->coef, (int)D, 0.0f, s, (int)K);
        for (int64_t i = 0; i < rows; i++) {
            const float *v = s + i * K;
            int64_t best = 0;
            float bv = v[0] + a->m->intercept[0];
            for (int64_t k = 1; k < K; k++) {
                float x = v[k] + a->m->intercept[k];
                if (x > bv || (isnan(x) && !isnan(bv)))
                    bv = x, best = k;
            }
            a->out[r0 + i] = best;
        }
    }
}

mieb_status mieb_logreg_predict(const struct mieb_logreg *m, const float *X, int64_t n, int64_t *out)
{
    return mieb_logreg_predict_par(m, X, n, NULL, out);
}

mieb_status mieb_logreg_predict_par(const struct mieb_logreg *m, const float *X, int64_t n,
                                    const struct mieb_logreg_par *par, int64_t *out)
{
    int64_t K = m->n_classes, D = m->dim;
    if (n <= 0)
        return MIEB_OK;
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1);
    if (K == 2) {
        /* decision = X @ coef.T + intercept, coef one row: numpy's matmul makes it an sgemv */
        float *s = malloc((size_t)n * sizeof *s);
        if (!s)
            return mieb_fail(MIEB_ERR_OOM, "logistic regression predict: %lld scores", (long long)n);
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)D, 1.0f, X, (int)D, m->coef, 1, 0.0f, s, 1);
        for (int64_t i = 0; i < n; i++)
            out[i] = s[i] + m->intercept[0] > 0.0f;
        free(s);
        return MIEB_OK;
    }
    int nt = mieb_logreg_threads_for(n, D, K, par_threads(par));
    float *scratch = malloc((size_t)nt * PRED_ROWS * (size_t)K * sizeof *scratch);
    if (!scratch)
        return mieb_fail(MIEB_ERR_OOM, "logistic regression predict: %d x %d x %lld scores", nt, PRED_ROWS,
                         (long long)K);
    struct pred_arg a = {m, X, n, scratch, out};
    mieb_logreg_par_run(nt, pred_fn, &a);
    free(scratch);
    return MIEB_OK;
}

void mieb_logreg_free(struct mieb_logreg *m)
{
    free(m->coef);
    free(m->intercept);
    m->coef = m->intercept = NULL;
}
