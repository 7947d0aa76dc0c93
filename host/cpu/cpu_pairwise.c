/*
 * cpu_pairwise.c - Visual STS per-pair scores and Compositionality per-sample matrices on
 * the CPU: loops over pairs and samples around pair_math.h, whose arithmetic the CUDA
 * kernels share (see cpu_pairwise.h for what is exact and what is within an ulp).
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off") /* numpy rounds every product and every sum */
#endif

#include "cpu_pairwise.h"

#include <stdlib.h>

#include "../math/pair_math.h"

mieb_status mieb_cpu_sts_pairs(const float *a, const float *b, int64_t n, int64_t dim, bool sklearn_f64,
                               enum mieb_sim model_sim, const struct mieb_sts_pair_out *out)
{
    if (model_sim != MIEB_SIM_COSINE && model_sim != MIEB_SIM_DOT)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "STS pair scores: similarity %s is not supported", mieb_sim_name(model_sim));
    for (int64_t i = 0; i < n; i++) {
        const float *x = a + i * dim, *y = b + i * dim;
        struct mieb_pm_sts r = sklearn_f64 ? mieb_pm_sts_sklearn_f64(x, y, dim) : mieb_pm_sts_sklearn_f32(x, y, dim);
        out->cosine[i] = r.cosine;
        out->manhattan[i] = r.manhattan;
        out->euclidean[i] = r.euclidean;
        out->model[i] = mieb_pm_torch_pair_sim(x, y, dim, model_sim == MIEB_SIM_COSINE);
    }
    return MIEB_OK;
}

mieb_status mieb_cpu_compo_scores(const float *img, enum mieb_emb_dtype img_dtype, const float *txt,
                                  enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img, int64_t n_txt,
                                  int64_t dim, float *scores)
{
    int64_t ni = n_samples * n_img, nt = n_samples * n_txt;
    /* the product's dtype: the common one (mixed dtypes, which torch refuses, score in fp32) */
    int sdt = img_dtype == txt_dtype ? (int)img_dtype : (int)MIEB_EMB_F32;
    float *nrm = malloc(sizeof(float) * (size_t)(ni + nt + 1));
    if (!nrm)
        return mieb_fail(MIEB_ERR_OOM, "compositionality: norms of %lld rows", (long long)(ni + nt));
    float *nimg = nrm, *ntxt = nrm + ni;
    for (int64_t r = 0; r < ni; r++)
        nimg[r] = mieb_pm_torch_norm(img + r * dim, dim, (int)img_dtype);
    for (int64_t r = 0; r < nt; r++)
        ntxt[r] = mieb_pm_torch_norm(txt + r * dim, dim, (int)txt_dtype);
    for (int64_t s = 0; s < n_samples; s++)
        for (int64_t i = 0; i < n_img; i++) {
            int64_t u = s * n_img + i;
            for (int64_t j = 0; j < n_txt; j++) {
                int64_t v = s * n_txt + j;
                scores[u * n_txt + j] = mieb_pm_compo_score(img + u * dim, nimg[u], (int)img_dtype, txt + v * dim,
                                                            ntxt[v], (int)txt_dtype, dim, sdt);
            }
        }
    free(nrm);
    return MIEB_OK;
}
