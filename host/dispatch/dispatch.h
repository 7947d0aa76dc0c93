/**
 * dispatch.h - the one place that picks the device and decides when the CPU takes over.
 *
 * mieb_backend_init turns --device into a backend (auto: CUDA when usable, else the CPU).
 * The operations a backend may hand back (backend.h enum mieb_op) run through the
 * mieb_dispatch_* functions below: the chosen backend when its supports() says yes and its
 * run fits its memory budget, else the CPU backend (host/cpu/), which gives the same
 * values; a backend without the slot gets the CPU quietly, one that is over its budget
 * with a warning naming why. Neither backend falls back on its own.
 * The logistic-regression batch is not one of them: the CPU has no batch, and its
 * replacement is another algorithm (the per-problem fit), which the caller runs where
 * mieb_dispatch_lr_batch_available says no.
 */
#ifndef MIEB_DISPATCH_H
#define MIEB_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "../backend/backend.h"

/**
 * Create a backend from a --device string: "cpu", "cuda", "cuda:N" or "auto".
 * "auto" tries CUDA and falls back to CPU with a warning; "cuda" without a usable GPU
 * (or in a build without CUDA) fails with MIEB_ERR_NO_DEVICE.
 */
mieb_status mieb_backend_init(const char *device, const struct mieb_backend_opts *opts,
                              struct mieb_backend **out);

/** kmeans_assign (backend.h) on be (NULL: the CPU), else on the CPU backend. */
mieb_status mieb_dispatch_kmeans_assign(struct mieb_backend *be, const float *x, int64_t n, const float *c,
                                        const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels);
/** sts_pairs (backend.h) on be (NULL: the CPU), else on the CPU backend. */
mieb_status mieb_dispatch_sts_pairs(struct mieb_backend *be, const float *a, const float *b, int64_t n, int64_t dim,
                                    bool sklearn_f64, enum mieb_sim model_sim, const struct mieb_sts_pair_out *out);
/** compo_scores (backend.h) on be (NULL: the CPU), else on the CPU backend. */
mieb_status mieb_dispatch_compo_scores(struct mieb_backend *be, const float *img, enum mieb_emb_dtype img_dtype,
                                       const float *txt, enum mieb_emb_dtype txt_dtype, int64_t n_samples,
                                       int64_t n_img, int64_t n_txt, int64_t dim, float *scores);

/** lr_predict (backend.h) on be (NULL: the CPU), else on the CPU backend (host/cpu/cpu_logreg.h). */
mieb_status mieb_dispatch_lr_predict(struct mieb_backend *be, const float *coef, const float *intercept,
                                     int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n,
                                     int64_t *out);

/**
 * Whether be (NULL: the CPU) runs logistic-regression batches (lr_open, lr_eval, lr_close)
 * of n_problems problems of n rows, D features and K classes: its supports(MIEB_OP_LR_BATCH)
 * answer. false quietly for a backend without the slots (the CPU), with a warning naming why
 * for one over what it can index or hold.
 */
bool mieb_dispatch_lr_batch_available(struct mieb_backend *be, int64_t n_problems, int64_t n, int64_t D, int64_t K);

/**
 * What a run on be computes with: put(user, "cpu", key, value) for the CPU's kernels, which
 * run the host's share (and every operation the CPU takes over) on any backend, then
 * put(user, be's name, key, value) for be's own describe slot when be is not the CPU.
 */
typedef void (*mieb_dispatch_describe_fn)(void *user, const char *backend, const char *key, const char *value);
void mieb_dispatch_describe(struct mieb_backend *be, mieb_dispatch_describe_fn put, void *user);

#endif
