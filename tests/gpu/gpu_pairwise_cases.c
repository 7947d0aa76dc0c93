/**
 * gpu_pairwise_cases.c - the Visual STS and compositionality operations of the CUDA backend
 * against the CPU backend on the same inputs: every value equal bit for bit (both run
 * math/pair_math.h), for float32 and float64 sklearn paths, cosine and dot models,
 * float16 / bfloat16 / mixed dtypes, dimensions around numpy's blocking boundaries,
 * zero rows, chunked runs under small budgets, the CPU fallback over budget and
 * recovery from failed device allocations.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_ctx.h"
#include "gpu_pairwise_cases.h"
#include "gpu_test_util.h"
#include "core/half.h"

/* Values on a coarse grid (many exact ties), some rows all zero, rounded to the dtype. */
static void fill(float *x, int64_t rows, int64_t dim, int dtype)
{
    for (int64_t r = 0; r < rows; r++) {
        int zero = gt_rand() % 11 == 0;
        for (int64_t k = 0; k < dim; k++) {
            float v = zero ? 0.0f : (float)((int)(gt_rand() % 17) - 8) / 8.0f + (float)(gt_rand() % 1000) * 1e-4f;
            if (dtype == MIEB_EMB_F16)
                v = mieb_half_to_float(mieb_float_to_half(v));
            else if (dtype == MIEB_EMB_BF16)
                v = mieb_bf16_to_float(mieb_float_to_bf16(v));
            x[r * dim + k] = v;
        }
    }
}

static int sts_case(struct mieb_backend *gpu, struct mieb_backend *cpu, const char *name, int64_t n, int64_t dim,
                    bool f64, enum mieb_sim sim)
{
    size_t nv = (size_t)(n * dim) + 1, no = (size_t)n + 1;
    float *a = malloc(sizeof(float) * nv), *b = malloc(sizeof(float) * nv);
    double *g = calloc(4 * no, sizeof(double)), *c = calloc(4 * no, sizeof(double));
    int ok = a && b && g && c;
    if (ok) {
        fill(a, n, dim, f64 ? MIEB_EMB_F16 : MIEB_EMB_F32);
        fill(b, n, dim, f64 ? MIEB_EMB_F16 : MIEB_EMB_F32);
        if (n > 1)
            memcpy(b, a, sizeof(float) * (size_t)dim); /* identical pair: cosine 1, distances 0 */
        struct mieb_sts_pair_out og = {g, g + no, g + 2 * no, g + 3 * no}, oc = {c, c + no, c + 2 * no, c + 3 * no};
        mieb_status sg = mieb_dispatch_sts_pairs(gpu, a, b, n, dim, f64, sim, &og);
        mieb_status sc = mieb_dispatch_sts_pairs(cpu, a, b, n, dim, f64, sim, &oc);
        if (sg != MIEB_OK || sc != MIEB_OK) {
            fprintf(stderr, "  %s: cuda '%s', cpu '%s': %s\n", name, mieb_status_str(sg), mieb_status_str(sc),
                    mieb_last_error());
            ok = 0;
        } else if (memcmp(g, c, sizeof(double) * 4 * no)) {
            for (size_t i = 0; i < 4 * no; i++)
                if (memcmp(&g[i], &c[i], sizeof(double))) {
                    fprintf(stderr, "  %s: value %zu of column %zu: cuda %.17g, cpu %.17g\n", name, i % no, i / no,
                            g[i], c[i]);
                    break;
                }
            ok = 0;
        }
    }
    free(a);
    free(b);
    free(g);
    free(c);
    return ok;
}

/* Equal bits, or both NaN. A zero row's cosine is 0/0 = NaN on both devices, but IEEE 754
   leaves the sign of an invalid operation's NaN to the hardware: x86 gives the negative
   default NaN, NVIDIA GPUs the positive canonical one. No result reads it (every comparison
   with a NaN is false, and results files write NaN without a sign). */
static int same_score(float a, float b) { return !memcmp(&a, &b, sizeof a) || (isnan(a) && isnan(b)); }

static int compo_case(struct mieb_backend *gpu, struct mieb_backend *cpu, const char *name, int64_t ns, int64_t ni,
                      int64_t nt, int64_t dim, int dti, int dtt)
{
    float *img = malloc(sizeof(float) * (size_t)(ns * ni * dim + 1));
    float *txt = malloc(sizeof(float) * (size_t)(ns * nt * dim + 1));
    size_t nc = (size_t)(ns * ni * nt) + 1;
    float *g = calloc(nc, sizeof(float)), *c = calloc(nc, sizeof(float));
    int ok = img && txt && g && c;
    if (ok) {
        fill(img, ns * ni, dim, dti);
        fill(txt, ns * nt, dim, dtt);
        mieb_status sg = mieb_dispatch_compo_scores(gpu, img, dti, txt, dtt, ns, ni, nt, dim, g);
        mieb_status sc = mieb_dispatch_compo_scores(cpu, img, dti, txt, dtt, ns, ni, nt, dim, c);
        if (sg != MIEB_OK || sc != MIEB_OK) {
            fprintf(stderr, "  %s: cuda '%s', cpu '%s': %s\n", name, mieb_status_str(sg), mieb_status_str(sc),
                    mieb_last_error());
            ok = 0;
        } else {
            for (size_t i = 0; i < nc; i++)
                if (!same_score(g[i], c[i])) {
                    fprintf(stderr, "  %s: score %zu: cuda %.9g, cpu %.9g\n", name, i, g[i], c[i]);
                    ok = 0;
                    break;
                }
        }
    }
    free(img);
    free(txt);
    free(g);
    free(c);
    return ok;
}

void test_pairwise_ops(struct mieb_backend *gpu, struct mieb_backend *cpu)
{
    /* dims around the einsum blocks (4 / 16 floats, 2 / 8 doubles) and the pairwise-sum
       leaves (8, 128), plus embedding sizes; n = 0 and 1 are the degenerate shapes */
    static const int64_t dims[] = {1, 3, 8, 15, 16, 17, 127, 128, 129, 257, 512, 768, 1000, 4096};
    char name[128];
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (int f64 = 0; f64 <= 1; f64++)
            for (int sim = 0; sim <= 1; sim++) {
                enum mieb_sim s = sim ? MIEB_SIM_DOT : MIEB_SIM_COSINE;
                int64_t n = dims[d] >= 1000 ? 40 : 300;
                snprintf(name, sizeof name, "sts_pairs dim %lld %s %s", (long long)dims[d], f64 ? "f64" : "f32",
                         mieb_sim_name(s));
                gt_result(name, sts_case(gpu, cpu, name, n, dims[d], f64, s));
            }
    gt_result("sts_pairs n=0", sts_case(gpu, cpu, "sts n=0", 0, 64, false, MIEB_SIM_COSINE));
    gt_result("sts_pairs n=1", sts_case(gpu, cpu, "sts n=1", 1, 64, true, MIEB_SIM_DOT));
    struct mieb_sts_pair_out none = {0};
    gt_result("sts_pairs MaxSim refused",
              mieb_dispatch_sts_pairs(gpu, NULL, NULL, 1, 4, false, MIEB_SIM_MAXSIM, &none) == MIEB_ERR_UNSUPPORTED);

    /* Winoground (2x2), ARO (1x2), SugarCrepe (1x2), ImageCoDe (10x1), others */
    static const int64_t shapes[][3] = {{200, 2, 2}, {300, 1, 2}, {60, 10, 1}, {50, 1, 5}, {1, 1, 1}};
    static const int dts[][2] = {{MIEB_EMB_F32, MIEB_EMB_F32}, {MIEB_EMB_F16, MIEB_EMB_F16},
                                 {MIEB_EMB_BF16, MIEB_EMB_BF16}, {MIEB_EMB_F16, MIEB_EMB_F32}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
            for (int64_t dim = 7; dim <= 1031; dim += 512) {
                snprintf(name, sizeof name, "compo %lldx%lldx%lld dim %lld dtypes %d/%d", (long long)shapes[sh][0],
                         (long long)shapes[sh][1], (long long)shapes[sh][2], (long long)dim, dts[t][0], dts[t][1]);
                gt_result(name, compo_case(gpu, cpu, name, shapes[sh][0], shapes[sh][1], shapes[sh][2], dim,
                                           dts[t][0], dts[t][1]));
            }
    gt_result("compo n=0", compo_case(gpu, cpu, "compo n=0", 0, 2, 2, 16, 0, 0));

    /* 256 KiB: many chunks; 4 KiB: not one pair fits, the CPU computes them;
       allocations above 64 KiB fail: recovered with smaller chunks */
    struct mieb_backend *small = gt_cuda_new((size_t)256 << 10, MIEB_PREC_FP32);
    struct mieb_backend *tiny = gt_cuda_new((size_t)4 << 10, MIEB_PREC_FP32);
    struct mieb_backend *flaky = gt_cuda_new(0, MIEB_PREC_FP32);
    if (small && tiny && flaky) {
        ((struct mieb_cuda_ctx *)flaky->ctx)->fail_alloc_above = (size_t)64 << 10;
        gt_result("sts_pairs chunked 256KiB", sts_case(small, cpu, "sts chunked", 2000, 768, false, MIEB_SIM_COSINE));
        gt_result("compo chunked 256KiB", compo_case(small, cpu, "compo chunked", 400, 2, 2, 768, 0, 0));
        gt_result("sts_pairs over budget: CPU", sts_case(tiny, cpu, "sts cpu", 50, 768, true, MIEB_SIM_COSINE));
        gt_result("compo over budget: CPU", compo_case(tiny, cpu, "compo cpu", 50, 10, 1, 768, 1, 1));
        gt_result("sts_pairs oom recovery", sts_case(flaky, cpu, "sts oom", 2000, 512, false, MIEB_SIM_DOT));
        gt_result("compo oom recovery", compo_case(flaky, cpu, "compo oom", 500, 2, 2, 512, 2, 2));
    } else {
        gt_result("pairwise budgets (setup)", 0);
    }
    mieb_backend_free(small);
    mieb_backend_free(tiny);
    mieb_backend_free(flaky);
}
