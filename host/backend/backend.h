/**
 * backend.h - the operations table every compute backend implements.
 *
 * One table, two builds: the CPU backend (BLAS + threads, always built; the reference)
 * and the CUDA backend (cuBLAS + kernels, built when nvcc is found). Drivers in
 * host/families/ only talk to this table; they never include CUDA headers.
 *
 * Data passed in and out of the table lives in host memory. A backend may keep
 * device copies (prepare_queries uploads once; topk_block streams corpus blocks).
 *
 * Tie rule inside a backend: score descending, then block-local row index ascending.
 * (mteb's id-string tie rule is applied by the host merge in host/families/, which
 * sees the ids; backends never do.)
 *
 * Slots may be NULL when a backend does not implement an operation; the public
 * wrappers in backend.c then report MIEB_ERR_UNSUPPORTED and the driver falls back
 * to the CPU backend.
 */
#ifndef MIEB_BACKEND_H
#define MIEB_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Similarity between a query item and a corpus item. */
enum mieb_sim {
    MIEB_SIM_COSINE = 0, /**< dot of L2-normalised rows; callers pass rows already normalised */
    MIEB_SIM_DOT = 1,    /**< plain dot product */
    MIEB_SIM_MAXSIM = 2, /**< ColBERT late interaction: sum over query tokens of the max dot over doc tokens */
};

/** Arithmetic used for the similarity GEMM. fp32 is the default and the only exact mode. */
enum mieb_precision {
    MIEB_PREC_FP32 = 0,
    MIEB_PREC_TF32 = 1, /**< CUDA only; recorded in the result when used */
    MIEB_PREC_BF16 = 2, /**< CUDA only; recorded in the result when used */
};

/**
 * A set of items as fp32 vectors on the host, row-major [rows, dim].
 * Single-vector: offsets == NULL, rows == n.
 * Multi-vector:  item i is rows offsets[i] .. offsets[i+1]-1, offsets[0] == 0, offsets[n] == rows.
 */
struct mieb_vecs {
    const float *data;
    const int64_t *offsets;
    int64_t n;
    int64_t rows;
    int64_t dim;
};

struct mieb_backend;
struct mieb_qset; /**< queries resident in a backend (opaque, backend-owned) */

struct mieb_backend_i {
    const char *name;

    /** Release everything the backend owns. free(NULL) is never called. */
    void (*free)(struct mieb_backend *be);

    /**
     * Make a query set resident for repeated topk_block calls. The backend may copy the
     * data (CUDA uploads it) or keep the pointer (CPU): the caller keeps q->data alive
     * until release_queries.
     */
    mieb_status (*prepare_queries)(struct mieb_backend *be, const struct mieb_vecs *q,
                                   enum mieb_sim sim, struct mieb_qset **out);
    void (*release_queries)(struct mieb_backend *be, struct mieb_qset *qs);

    /**
     * Score every prepared query against every item of `docs` and keep for each query the
     * k best, ordered by score descending, then block-local index ascending.
     * out_scores and out_idx are [n_queries, k] row-major; for query i the first
     * min(k, docs->n) entries are valid (indices are rows of `docs`, 0-based).
     * Must give the same results as the CPU reference for fp32.
     */
    mieb_status (*topk_block)(struct mieb_backend *be, struct mieb_qset *qs,
                              const struct mieb_vecs *docs, int64_t k,
                              float *out_scores, int64_t *out_idx);

    /**
     * Score explicit (query, doc) pairs: out[p] = sim(query qi[p], docs item di[p]).
     * Used for candidate sets (mteb's top_ranked). May be NULL (CPU fallback).
     */
    mieb_status (*score_pairs)(struct mieb_backend *be, struct mieb_qset *qs,
                               const struct mieb_vecs *docs, int64_t n_pairs,
                               const int64_t *qi, const int64_t *di, float *out);

    /**
     * Largest number of corpus rows a single topk_block call should receive so that the
     * backend's working set stays within its memory budget, for the given query set,
     * dimension and k. The driver splits blocks accordingly.
     */
    int64_t (*max_block_rows)(struct mieb_backend *be, struct mieb_qset *qs, int64_t dim, int64_t k);

    /* Room for later families (linear probes, k-means, STS ...): append slots here. */

    /**
     * k-means assignment step (ImageClustering, PROTOCOLS.md §4), the fp32 arithmetic of
     * scikit-learn's lloyd_iter_chunked_dense: d[i,j] = c_sqnorm[j] - 2 <x_i, c_j> (one GEMM
     * with beta = 1 onto the norms), labels[i] = first j of the minimum. x is [n, dim],
     * c is [k, dim], c_sqnorm [k] is given by the caller (numpy's einsum order) so that
     * every backend sees the same norms. May be NULL (CPU fallback).
     */
    mieb_status (*kmeans_assign)(struct mieb_backend *be, const float *x, int64_t n, const float *c,
                                 const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels);
};

/** Options shared by all backends. */
struct mieb_backend_opts {
    size_t mem_limit;             /**< bytes this backend may use for scratch (0 = backend default) */
    int n_threads;                /**< CPU threads (0 = all cores) */
    enum mieb_precision precision;
    int device_index;             /**< CUDA device ordinal */
};

struct mieb_backend {
    struct mieb_backend_i iface;
    void *ctx;
    struct mieb_backend_opts opts;
};

/**
 * Create a backend from a --device string: "cpu", "cuda", "cuda:N" or "auto".
 * "auto" tries CUDA and falls back to CPU with a warning; "cuda" without a usable GPU
 * (or in a build without CUDA) fails with MIEB_ERR_NO_DEVICE.
 */
mieb_status mieb_backend_init(const char *device, const struct mieb_backend_opts *opts,
                              struct mieb_backend **out);
void mieb_backend_free(struct mieb_backend *be);

mieb_status mieb_backend_cpu_init(const struct mieb_backend_opts *opts, struct mieb_backend **out);
#ifdef MIEB_HAVE_CUDA
mieb_status mieb_backend_cuda_init(const struct mieb_backend_opts *opts, struct mieb_backend **out);
#endif

/* Checked wrappers: MIEB_ERR_UNSUPPORTED when the slot is NULL. */
mieb_status mieb_backend_prepare_queries(struct mieb_backend *be, const struct mieb_vecs *q,
                                         enum mieb_sim sim, struct mieb_qset **out);
void mieb_backend_release_queries(struct mieb_backend *be, struct mieb_qset *qs);
mieb_status mieb_backend_topk_block(struct mieb_backend *be, struct mieb_qset *qs,
                                    const struct mieb_vecs *docs, int64_t k,
                                    float *out_scores, int64_t *out_idx);
mieb_status mieb_backend_score_pairs(struct mieb_backend *be, struct mieb_qset *qs,
                                     const struct mieb_vecs *docs, int64_t n_pairs,
                                     const int64_t *qi, const int64_t *di, float *out);
int64_t mieb_backend_max_block_rows(struct mieb_backend *be, struct mieb_qset *qs, int64_t dim, int64_t k);
/** kmeans_assign through the table; falls back to the CPU reference when the slot is NULL. */
mieb_status mieb_backend_kmeans_assign(struct mieb_backend *be, const float *x, int64_t n, const float *c,
                                       const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels);

/** Parse "cosine" / "dot" / "MaxSim" (mteb's similarity_fn_name; NULL or "" means cosine). */
mieb_status mieb_sim_parse(const char *name, enum mieb_sim *out);
const char *mieb_sim_name(enum mieb_sim sim);

#ifdef __cplusplus
}
#endif
#endif
