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
#include <string.h>

#include <cblas.h>

#define LBFGS_M 10
#define MAXLS 50

/* numpy's pairwise summation (8-way unrolled blocks of 128) in float32, as np.sum(float32). */
static float np_sum_f32(const float *a, int64_t n)
{
    if (n < 8) {
        float s = -0.0f;
        for (int64_t i = 0; i < n; i++)
            s += a[i];
        return s;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        int64_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + j];
        float s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            s += a[i];
        return s;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return np_sum_f32(a, n2) + np_sum_f32(a + n2, n - n2);
}

struct problem {
    const float *X;
    const int64_t *y;
    int64_t n, D, K, P; /* P = number of parameters */
    int binary;
    float *wf, *raw, *lossv, *gW; /* scratch: float32 weights [K,D+1], logits [n,K], losses [n], grad [K,D] */
    double l2;                    /* 1 / (C * n) */
};

/* sklearn's LinearModelLoss.loss_gradient at float32(w). w/g use scipy's layout: the
 * (K, D+1) matrix ravelled in Fortran order (w[j*K + k]); binary: [D weights, intercept]. */
static double loss_grad(struct problem *p, const double *w, double *g)
{
    int64_t n = p->n, D = p->D, K = p->binary ? 1 : p->K;
    float *W = p->wf; /* row-major [K, D+1] */
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j <= D; j++)
            W[k * (D + 1) + j] = (float)(p->binary ? w[j] : w[j * K + k]);
    /* raw = X @ W[:, :D]^T + b, float32 */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)K, (int)D, 1.0f, p->X, (int)D, W, (int)(D + 1),
                0.0f, p->raw, (int)K);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < K; k++)
            p->raw[i * K + k] += W[k * (D + 1) + D];
    /* per-sample loss and gradient (overwrites raw with the pointwise gradient) */
    for (int64_t i = 0; i < n; i++) {
        float *r = p->raw + i * K;
        if (p->binary) {
            double yt = (double)p->y[i], rp = (double)r[0], lo, gr;
            if (rp <= -37) {
                gr = exp(rp);
                lo = gr - yt * rp;
                gr -= yt;
            } else if (rp <= -2) {
                gr = exp(rp);
                lo = log1p(gr) - yt * rp;
                gr = ((1 - yt) * gr - yt) / (1 + gr);
            } else if (rp <= 18) {
                gr = exp(-rp);
                lo = log1p(gr) + (1 - yt) * rp;
                gr = ((1 - yt) - yt * gr) / (1 + gr);
            } else {
                gr = exp(-rp);
                lo = gr + (1 - yt) * rp;
                gr = ((1 - yt) - yt * gr) / (1 + gr);
            }
            p->lossv[i] = (float)lo;
            r[0] = (float)gr;
            continue;
        }
        double mx = r[0], se = 0.0;
        for (int64_t k = 1; k < K; k++)
            if (mx < r[k])
                mx = r[k];
        for (int64_t k = 0; k < K; k++) {
            float e = (float)exp((double)r[k] - mx);
            se += e;
            p->gW[k] = e; /* temporary per-sample buffer (gW is larger than K) */
        }
        float sum_exps = (float)se, max_value = (float)mx;
        float lo = (float)(log((double)sum_exps) + (double)max_value);
        int64_t yi = p->y[i];
        lo -= r[yi];
        p->lossv[i] = lo;
        for (int64_t k = 0; k < K; k++) {
            float q = p->gW[k] / sum_exps;
            r[k] = q - (float)(yi == k);
        }
    }
    float lsum = np_sum_f32(p->lossv, n) / (float)n;
    double loss = (double)lsum;
    /* l2 penalty: float(0.5 * l2 * (w . w)) with the dot in float32 */
    double nn = 0.0;
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < D; j++)
            nn += (double)W[k * (D + 1) + j] * W[k * (D + 1) + j];
    float norm2 = (float)nn;
    loss += (double)((float)(0.5 * p->l2) * norm2);
    /* grad_pointwise /= n; grad = gp^T @ X + l2 * W; intercept = column sums of gp */
    float fn = (float)n, fl2 = (float)p->l2;
    for (int64_t i = 0; i < n * K; i++)
        p->raw[i] /= fn;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)D, (int)n, 1.0f, p->raw, (int)K, p->X, (int)D,
                0.0f, p->gW, (int)D);
    for (int64_t k = 0; k < K; k++) {
        for (int64_t j = 0; j < D; j++) {
            float gv = p->gW[k * D + j] + fl2 * W[k * (D + 1) + j];
            if (p->binary)
                g[j] = gv;
            else
                g[j * K + k] = gv;
        }
    }
    if (p->binary) {
        g[D] = np_sum_f32(p->raw, n);
    } else {
        for (int64_t k = 0; k < K; k++) {
            float s = 0.0f; /* np.sum(axis=0) over a C-contiguous [n, K]: row after row */
            for (int64_t i = 0; i < n; i++)
                s += p->raw[i * K + k];
            g[D * K + k] = s;
        }
    }
    return loss;
}

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

mieb_status mieb_logreg_fit(const float *X, const int64_t *y, int64_t n, int64_t D, int64_t K, int max_iter,
                            struct mieb_logreg *out)
{
    memset(out, 0, sizeof *out);
    struct problem p = {X, y, n, D, K, 0, K == 2, NULL, NULL, NULL, NULL, 1.0 / (double)n};
    int64_t KK = p.binary ? 1 : K;
    p.P = KK * (D + 1);
    int64_t P = p.P;
    p.wf = malloc((size_t)P * sizeof(float));
    p.raw = malloc((size_t)(n * KK) * sizeof(float));
    p.lossv = malloc((size_t)n * sizeof(float));
    p.gW = malloc((size_t)(KK * D + K + 1) * sizeof(float));
    double *mem = calloc((size_t)P * (7 + 2 * LBFGS_M), sizeof(double));
    out->coef = malloc((size_t)(KK * D) * sizeof(float));
    out->intercept = malloc((size_t)KK * sizeof(float));
    if (!p.wf || !p.raw || !p.lossv || !p.gW || !mem || !out->coef || !out->intercept) {
        free(p.wf), free(p.raw), free(p.lossv), free(p.gW), free(mem);
        mieb_logreg_free(out);
        return mieb_fail(MIEB_ERR_OOM, "logistic regression: out of memory for %lld x %lld parameters",
                         (long long)KK, (long long)(D + 1));
    }
    double *x = mem, *g = x + P, *d = g + P, *x0 = d + P, *g0 = x0 + P, *q = g0 + P, *S = q + 2 * P,
           *Y = S + LBFGS_M * P;
    double rho[LBFGS_M], alpha[LBFGS_M];
    int col = 0, head = 0, iter = 0, converged = 0;
    double f = loss_grad(&p, x, g), theta = 1.0;
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
            f = loss_grad(&p, x, g);
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
    free(p.wf), free(p.raw), free(p.lossv), free(p.gW), free(mem);
    return MIEB_OK;
}

void mieb_logreg_predict(const struct mieb_logreg *m, const float *X, int64_t n, int64_t *out)
{
    int64_t K = m->n_classes == 2 ? 1 : m->n_classes, D = m->dim;
    for (int64_t i = 0; i < n; i++) {
        int64_t best = 0;
        float bv = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            float v = cblas_sdot((int)D, X + i * D, 1, m->coef + k * D, 1) + m->intercept[k];
            if (k == 0 || v > bv || (isnan(v) && !isnan(bv)))
                bv = v, best = k;
        }
        out[i] = K == 1 ? (bv > 0.0f) : best;
    }
}

void mieb_logreg_free(struct mieb_logreg *m)
{
    free(m->coef);
    free(m->intercept);
    m->coef = m->intercept = NULL;
}
