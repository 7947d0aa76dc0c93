/**
 * kmeans.h - the clustering step of mteb's ImageClustering evaluator (PROTOCOLS.md §4,
 * §13): scikit-learn 1.9's MiniBatchKMeans(n_clusters=k, batch_size=500, n_init="auto",
 * random_state=42) re-implemented draw for draw (default), or a full-batch Lloyd k-means
 * chosen explicitly (--kmeans full), which is faster on a GPU but not mteb's algorithm.
 */
#ifndef MIEB_EMULATION_KMEANS_H
#define MIEB_EMULATION_KMEANS_H

#include <stdint.h>

#include "../backend/backend.h"

enum mieb_kmeans_mode {
    MIEB_KMEANS_MINIBATCH = 0, /* sklearn MiniBatchKMeans as mteb configures it (default) */
    MIEB_KMEANS_FULL = 1,      /* full-batch Lloyd from the same k-means++ seeds */
};

struct mieb_kmeans_opts {
    int64_t k;
    int64_t batch_size;        /* 500 (mteb's clustering_batch_size) */
    uint32_t seed;             /* 42 (mteb's evaluator seed) */
    int max_iter;              /* 100 (sklearn default) */
    int max_no_improvement;    /* 10 */
    double reassignment_ratio; /* 0.01 */
    /* The OpenMP threads sklearn's per-batch inertia is a reduction over (sk_threads.h;
       mteb_opts: this machine's). Static blocks of the batch, each summed in order, the
       partials then added in thread order: what OpenMP does with two (a + b is b + a);
       with three or more OpenMP's combine order is not fixed, nor is sklearn's result. */
    int sk_threads;
};

/** mteb's settings for k clusters. */
struct mieb_kmeans_opts mieb_kmeans_mteb_opts(int64_t k);

/** sklearn's _inertia_dense (unit weights) of bs rows xb against centres c by labels lab,
    as `threads` OpenMP threads compute it (opts.sk_threads above). */
float mieb_kmeans_batch_inertia(const float *xb, int64_t bs, int64_t dim, const float *c, const int32_t *lab,
                                int threads);

struct mieb_kmeans_info {
    int64_t n_steps; /* minibatch steps (or Lloyd iterations) run */
};

/**
 * Cluster x [n, dim] (fp32, row-major) into opts->k clusters; labels[n] receives the final
 * full assignment (sklearn's labels_). Needs n >= k >= 1. sklearn's bits need OpenBLAS on
 * one thread, as sklearn's fit limits it (the CPU backend's init sets that; a caller
 * without a backend must: openblas_set_num_threads(1)).
 */
mieb_status mieb_kmeans_minibatch(struct mieb_backend *be, const float *x, int64_t n, int64_t dim,
                                  const struct mieb_kmeans_opts *opts, int32_t *labels,
                                  struct mieb_kmeans_info *info);
mieb_status mieb_kmeans_full(struct mieb_backend *be, const float *x, int64_t n, int64_t dim,
                             const struct mieb_kmeans_opts *opts, int32_t *labels, struct mieb_kmeans_info *info);

/**
 * sklearn's _kmeans_plusplus on the rows xs [ns, dim] with unit weights, drawing from rs
 * (one random_sample for the first centre, then 2+int(ln k) uniforms per centre).
 * centers [k, dim] receives the chosen rows. Used by both modes.
 */
struct mieb_rs;
mieb_status mieb_kmeans_plusplus(const float *xs, int64_t ns, int64_t dim, int64_t k, struct mieb_rs *rs,
                                 float *centers);

#endif
