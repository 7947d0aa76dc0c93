/**
 * compo_scores.cu - compositionality per-sample score matrices: one thread per row computes
 * F.normalize's divisor, then one thread per (sample, image, text) cell the score, both
 * with pair_math.h, which the CPU backend runs too, so the scores are the same bits.
 */
#include "../host/math/pair_math.h"
#include "compo_scores.cuh"
#include "cuda_check.h"

#define COMPO_THREADS 128

/* rows [0, n_a) of a with dtype dt_a, then rows [0, n_b) of b with dtype dt_b */
static __global__ void __launch_bounds__(COMPO_THREADS)
    compo_norms_kernel(const float *__restrict__ a, int64_t n_a, int dt_a, const float *__restrict__ b, int64_t n_b,
                       int dt_b, int64_t dim, float *__restrict__ norms)
{
    const int64_t r = (int64_t)blockIdx.x * COMPO_THREADS + threadIdx.x;
    if (r < n_a)
        norms[r] = mieb_pm_torch_norm(a + r * dim, dim, dt_a);
    else if (r < n_a + n_b)
        norms[r] = mieb_pm_torch_norm(b + (r - n_a) * dim, dim, dt_b);
}

static __global__ void __launch_bounds__(COMPO_THREADS)
    compo_cells_kernel(const float *__restrict__ img, int dt_i, const float *__restrict__ txt, int dt_t, int64_t ns,
                       int64_t ni, int64_t nt, int64_t dim, const float *__restrict__ norms, int sdt,
                       float *__restrict__ scores)
{
    const int64_t c = (int64_t)blockIdx.x * COMPO_THREADS + threadIdx.x;
    if (c >= ns * ni * nt)
        return;
    const int64_t s = c / (ni * nt), i = (c / nt) % ni, j = c % nt;
    const int64_t u = s * ni + i, v = s * nt + j;
    const float *nimg = norms, *ntxt = norms + ns * ni;
    scores[c] = mieb_pm_compo_score(img + u * dim, nimg[u], dt_i, txt + v * dim, ntxt[v], dt_t, dim, sdt);
}

extern "C" mieb_status mieb_cuda_compo_scores_launch(struct mieb_kstream ks, const float *img, int img_dtype,
                                                     const float *txt, int txt_dtype, int64_t ns, int64_t ni,
                                                     int64_t nt, int64_t dim, float *norms, float *scores)
{
    MIEB_CUDA_REQUIRE(ns >= 0 && ni >= 0 && nt >= 0 && dim >= 0);
    const int64_t rows = ns * (ni + nt), cells = ns * ni * nt;
    if (cells == 0)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(img && txt && norms && scores);
    const int sdt = img_dtype == txt_dtype ? img_dtype : 0;
    int64_t b_rows = (rows + COMPO_THREADS - 1) / COMPO_THREADS, b_cells = (cells + COMPO_THREADS - 1) / COMPO_THREADS;
    MIEB_CUDA_REQUIRE(b_rows <= 0x7fffffff && b_cells <= 0x7fffffff);
    compo_norms_kernel<<<(unsigned int)b_rows, COMPO_THREADS, 0, ks.stream>>>(img, ns * ni, img_dtype, txt, ns * nt,
                                                                               txt_dtype, dim, norms);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    compo_cells_kernel<<<(unsigned int)b_cells, COMPO_THREADS, 0, ks.stream>>>(img, img_dtype, txt, txt_dtype, ns, ni,
                                                                                nt, dim, norms, sdt, scores);
    MIEB_CUDA_CHECK_LAUNCH(ks);
    return MIEB_OK;
}
