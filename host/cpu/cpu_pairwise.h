/**
 * cpu_pairwise.h - the per-pair (Visual STS) and per-sample (Compositionality) similarity
 * computations, in the arithmetic mteb's code performs them (CPU reference; a GPU
 * implementation must give the same values).
 *
 * Visual STS (PROTOCOLS.md §7, mteb AnySTSEvaluator): for each pair (a, b)
 *   cosine    = 1 - sklearn.paired_cosine_distances  = 1 - 0.5 * ||a/|a| - b/|b| ||^2
 *   manhattan = -sklearn.paired_manhattan_distances  = -sum |a - b|
 *   euclidean = -sklearn.paired_euclidean_distances  = -sqrt(sum (a - b)^2)
 *   model     = model.similarity_pairwise(a, b)        (torch, fp32: cosine or dot)
 * sklearn works in float32 when both inputs are float32 and in float64 otherwise (fp16 or
 * bf16 embeddings); its row norms are np.einsum("ij,ij->i"), whose inner loop
 * (numpy 2.x, x86-64 baseline SSE: 4 float / 2 double lanes, blocks of 4 vectors, separate
 * multiply and add) is reproduced exactly, as are np.sum's pairwise summation and
 * sklearn's zero-norm rule (norm < 10 * eps -> 1). The torch values (model similarity)
 * use fp32 vectors normalised like torch.nn.functional.normalize, products rounded to
 * fp32 and summed in double then rounded: within an ulp or two of torch's own reduction.
 *
 * Compositionality (PROTOCOLS.md §6 and §13, mteb ImageTextPairClassificationEvaluator):
 * each image and text row is L2-normalised with F.normalize in the embeddings' own dtype,
 * then S = img @ txt.T per sample. For float32 embeddings: fp32 normalisation, dot
 * products accumulated in double and rounded to fp32 (torch's sgemm order is not
 * reproducible; exact inputs give exact, equal scores). For float16 / bfloat16 embeddings
 * (torch does not upcast here): the norm, each normalised value and each score are rounded
 * to that dtype as torch rounds them (F.normalize's eps 1e-12 underflows to 0 in float16),
 * with fp32-or-better accumulation in between.
 *
 * The arithmetic itself is in pair_math.h, shared with the CUDA kernels.
 */
#ifndef MIEB_CPU_PAIRWISE_H
#define MIEB_CPU_PAIRWISE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/dtype.h"
#include "../core/status.h"
#include "../backend/backend.h"

/**
 * Score n pairs: rows a[i] and b[i] of two [n, dim] float32 matrices (the values the
 * embedding files hold, widened exactly). sklearn_f64: run sklearn's part in float64
 * (true unless both files are float32). model_sim: MIEB_SIM_COSINE or MIEB_SIM_DOT
 * (MaxSim is refused by the caller). Fails only on allocation.
 */
mieb_status mieb_cpu_sts_pairs(const float *a, const float *b, int64_t n, int64_t dim, bool sklearn_f64,
                               enum mieb_sim model_sim, const struct mieb_sts_pair_out *out);

/**
 * Per-sample score matrices: img is [n_samples * n_img, dim], txt [n_samples * n_txt, dim],
 * sample-major; scores receives [n_samples, n_img, n_txt] (row i of a sample = image i).
 * img_dtype / txt_dtype: the embeddings' stored dtypes (they select the rounding described
 * above; when they differ, which torch's matmul refuses, the scores are fp32). The inputs
 * are not modified. Fails only on allocation.
 */
mieb_status mieb_cpu_compo_scores(const float *img, enum mieb_emb_dtype img_dtype, const float *txt,
                                  enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img, int64_t n_txt,
                                  int64_t dim, float *scores);

#endif
