/* gpu_test_util.c - seeded inputs, comparisons and the summary for the GPU tests. */
#include "gpu_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545f4914f6cdd1dull, seed0;
static int n_pass, n_fail;

void gt_seed(uint64_t seed)
{
    seed0 = seed;
    rng = seed ? seed * 0x9e3779b97f4a7c15ull : 0x2545f4914f6cdd1dull;
}

uint64_t gt_seed_value(void) { return seed0; }

uint32_t gt_rand(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

void gt_fill_exact(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)((int)(gt_rand() % 9) - 4) * 0.25f;
}

void gt_fill_unit_rows(float *x, int64_t rows, int64_t dim)
{
    for (int64_t r = 0; r < rows; r++) {
        double ss = 0.0;
        for (int64_t i = 0; i < dim; i++) {
            /* sum of uniforms: roughly normal, enough spread for realistic near-ties */
            float v = (float)((int)(gt_rand() % 20001) - 10000 + (int)(gt_rand() % 20001) - 10000) / 20000.0f;
            x[r * dim + i] = v;
            ss += (double)v * v;
        }
        float nrm = (float)sqrt(ss > 0 ? ss : 1.0);
        for (int64_t i = 0; i < dim; i++)
            x[r * dim + i] /= nrm;
    }
}

int64_t gt_make_offsets(int64_t *offsets, int64_t n, int min_len, int max_len)
{
    offsets[0] = 0;
    for (int64_t i = 0; i < n; i++)
        offsets[i + 1] = offsets[i] + min_len + (int64_t)(gt_rand() % (uint32_t)(max_len - min_len + 1));
    return offsets[n];
}

int gt_set_make(struct gt_set *s, int64_t n, int64_t dim, int kind, int min_len, int max_len)
{
    memset(s, 0, sizeof *s);
    int64_t rows = n;
    if (max_len > 0) {
        s->offsets = malloc(sizeof(int64_t) * (size_t)(n + 1));
        if (!s->offsets)
            return 0;
        rows = gt_make_offsets(s->offsets, n, min_len, max_len);
    }
    s->data = malloc(sizeof(float) * (size_t)(rows * dim + 1));
    if (!s->data) {
        free(s->offsets);
        return 0;
    }
    if (kind == 0)
        gt_fill_exact(s->data, rows * dim);
    else
        gt_fill_unit_rows(s->data, rows, dim);
    s->v.data = s->data;
    s->v.offsets = s->offsets;
    s->v.n = n;
    s->v.rows = rows;
    s->v.dim = dim;
    return 1;
}

void gt_set_free(struct gt_set *s)
{
    free(s->data);
    free(s->offsets);
    memset(s, 0, sizeof *s);
}

static double dot_d(const float *a, const float *b, int64_t dim)
{
    double s = 0.0;
    for (int64_t i = 0; i < dim; i++)
        s += (double)a[i] * b[i];
    return s;
}

double gt_truth(const struct mieb_vecs *q, const struct mieb_vecs *d, enum mieb_sim sim, int64_t qi, int64_t di)
{
    int64_t dim = q->dim;
    if (sim != MIEB_SIM_MAXSIM)
        return dot_d(q->data + qi * dim, d->data + di * dim, dim);
    int64_t u0 = d->offsets[di], u1 = d->offsets[di + 1];
    double total = 0.0;
    if (u1 <= u0)
        return 0.0;
    for (int64_t t = q->offsets[qi]; t < q->offsets[qi + 1]; t++) {
        double m = -INFINITY;
        for (int64_t u = u0; u < u1; u++) {
            double s = dot_d(q->data + t * dim, d->data + u * dim, dim);
            m = s > m ? s : m;
        }
        total += m;
    }
    return total;
}

int gt_compare_topk(const char *name, const struct mieb_vecs *q, const struct mieb_vecs *d, enum mieb_sim sim,
                    int64_t k, const float *cpu_s, const int64_t *cpu_i, const float *gpu_s,
                    const int64_t *gpu_i, const struct gt_tol *tol)
{
    int64_t nd = d->n, n = k < nd ? k : nd, bad = 0, swaps = 0;
    double max_err = 0.0;
    unsigned char *seen = calloc((size_t)nd + 1, 1);
    if (!seen) {
        fprintf(stderr, "  %s: out of memory in the comparison\n", name);
        return 0;
    }
    for (int64_t r = 0; r < q->n; r++) {
        for (int64_t j = 0; j < n; j++) {
            float cs = cpu_s[r * k + j], gs = gpu_s[r * k + j];
            int64_t ci = cpu_i[r * k + j], gi = gpu_i[r * k + j];
            double err = fabs((double)gs - (double)cs);
            const char *why = NULL;
            if (err > max_err)
                max_err = err;
            if (gi < 0 || gi >= nd)
                why = "id out of range";
            else if (seen[gi])
                why = "duplicate id";
            else if (tol->exact) {
                if (gs != cs || gi != ci)
                    why = "not identical";
            } else {
                double limit = tol->atol + tol->rtol * fabs((double)cs);
                if (err > limit)
                    why = "score beyond tolerance";
                else if (fabs((double)gs - gt_truth(q, d, sim, r, gi)) > limit)
                    why = "score does not belong to its id";
                else if (gi != ci) {
                    swaps++;
                    if (fabs(gt_truth(q, d, sim, r, gi) - gt_truth(q, d, sim, r, ci)) > tol->tie_tol)
                        why = "ids differ beyond a near-tie";
                }
            }
            if (gi >= 0 && gi < nd)
                seen[gi] = 1;
            if (why && bad++ < 5)
                fprintf(stderr, "  %s: query %lld rank %lld: cuda (%.9g, %lld) cpu (%.9g, %lld): %s\n", name,
                        (long long)r, (long long)j, gs, (long long)gi, cs, (long long)ci, why);
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t gi = gpu_i[r * k + j];
            if (gi >= 0 && gi < nd)
                seen[gi] = 0;
        }
    }
    free(seen);
    printf("  %-34s %lld queries x %lld kept: max |err| %.3g, near-tie id swaps %lld, mismatches %lld (seed %llu)\n",
           name, (long long)q->n, (long long)n, max_err, (long long)swaps, (long long)bad,
           (unsigned long long)seed0);
    return bad == 0;
}

int gt_compare_scores(const char *name, const float *cpu, const float *gpu, int64_t n, const struct gt_tol *tol)
{
    int64_t bad = 0;
    double max_err = 0.0;
    for (int64_t p = 0; p < n; p++) {
        double err = fabs((double)gpu[p] - (double)cpu[p]);
        if (err > max_err)
            max_err = err;
        int ok = tol->exact ? gpu[p] == cpu[p] : err <= tol->atol + tol->rtol * fabs((double)cpu[p]);
        if (!ok && bad++ < 5)
            fprintf(stderr, "  %s: pair %lld: cuda %.9g cpu %.9g\n", name, (long long)p, gpu[p], cpu[p]);
    }
    printf("  %-34s %lld pairs: max |err| %.3g, mismatches %lld (seed %llu)\n", name, (long long)n, max_err,
           (long long)bad, (unsigned long long)seed0);
    return bad == 0;
}

void gt_result(const char *name, int ok)
{
    if (ok)
        n_pass++;
    else
        n_fail++;
    printf("%s %s\n", ok ? "PASS" : "FAIL", name);
    fflush(stdout);
}

int gt_summary(void)
{
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}

struct mieb_backend *gt_cuda_new(size_t mem_limit, enum mieb_precision prec)
{
    struct mieb_backend_opts o = {0};
    struct mieb_backend *be = NULL;
    o.mem_limit = mem_limit;
    o.precision = prec;
    if (mieb_backend_cuda_init(&o, &be) != MIEB_OK) {
        fprintf(stderr, "cuda backend: %s\n", mieb_last_error());
        return NULL;
    }
    return be;
}
