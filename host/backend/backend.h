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
 * wrappers in backend.c then report MIEB_ERR_UNSUPPORTED. Whether an operation runs on the
 * chosen backend or on the CPU is decided in one place, host/dispatch/ (the backend's
 * supports() answer first, then a run that finds its memory budget too small).
 *
 * This header is the interface only: the CPU backend (host/cpu/) and the CUDA backend
 * (cuda/) implement it, and neither uses the other.
 */
#ifndef MIEB_BACKEND_H
#define MIEB_BACKEND_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/dtype.h" /* enum mieb_emb_dtype (compo_scores) */
#include "../core/status.h"
#include "../core/similarity.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/** Outputs of the sts_pairs operation: n values each, as the Python floats mteb correlates. */
struct mieb_sts_pair_out {
    double *cosine, *manhattan, *euclidean, *model;
};

/*
 * The tile grid: how callers and backends cut query sets and corpus blocks.
 *
 * A BLAS GEMM's last bits depend on the shape of the call (OpenBLAS picks kernels and
 * blockings by M and N: a 511 x 2500 call and the first 511 rows of a 512 x 2500 call
 * differ in about 1% of their elements), so a score computed by one must always come from
 * the same call shape at the same position. Callers start every query set at a multiple
 * of MIEB_GRID_Q of the role's item list and every corpus block at a multiple of
 * MIEB_GRID_D (which divides mteb's 50,000-document chunk), and a backend whose GEMM is
 * shape-dependent tiles along them (as the CUDA backend's plan does).
 * The CPU backend no longer needs it: its scores are canon_dot.h's fixed-order sums, a
 * function of the two vectors alone, so they are bit-identical whatever --mem-limit,
 * --threads, corpus parts or screen were used.
 */
#define MIEB_GRID_Q 256
#define MIEB_GRID_D 1250

/**
 * The operations supports() is asked about: those a backend may hand back to the CPU, and
 * the logistic-regression batch (lr_open, lr_eval, lr_close together), which a caller runs
 * only where the backend has it (host/dispatch/dispatch.h mieb_dispatch_lr_batch_available).
 */
enum mieb_op {
    MIEB_OP_KMEANS_ASSIGN = 0,
    MIEB_OP_STS_PAIRS = 1,
    MIEB_OP_COMPO_SCORES = 2,
    MIEB_OP_LR_BATCH = 3,
    MIEB_OP_LR_PREDICT = 4,
};

/** One call of an operation, as supports() sees it: the operation and its sizes. */
struct mieb_op_desc {
    enum mieb_op op;
    int64_t n;   /**< rows (kmeans_assign, lr_predict, rows per problem of lr_batch), pairs (sts_pairs)
                      or samples (compo_scores) */
    int64_t k;   /**< clusters (kmeans_assign); images per sample (compo_scores); classes K (lr_batch);
                      columns KK of each model (lr_predict) */
    int64_t m;   /**< texts per sample (compo_scores); problems or models (lr_batch, lr_predict) */
    int64_t dim;
};

struct mieb_backend;
/** What a backend's describe tells: one named property (see describe below). */
typedef void (*mieb_describe_fn)(void *user, const char *key, const char *value);
struct mieb_qset; /**< queries resident in a backend (opaque, backend-owned) */
struct mieb_lr_set; /**< logistic-regression problems resident in a backend (opaque, backend-owned) */

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

    /**
     * Visual STS (PROTOCOLS.md §7): for n pairs (rows a[i], b[i] of two [n, dim] float32
     * matrices) the four similarities mteb correlates, in mteb's arithmetic (pair_math.h):
     * sklearn's in float64 when sklearn_f64 else float32, torch's for the model similarity
     * (MIEB_SIM_COSINE or MIEB_SIM_DOT). Equal, bit for bit, to the CPU reference.
     * May be NULL (CPU fallback).
     */
    mieb_status (*sts_pairs)(struct mieb_backend *be, const float *a, const float *b, int64_t n, int64_t dim,
                             bool sklearn_f64, enum mieb_sim model_sim, const struct mieb_sts_pair_out *out);

    /**
     * Compositionality (PROTOCOLS.md §6): per-sample [n_img, n_txt] score matrices of
     * torch-normalised rows, img [n_samples * n_img, dim] and txt [n_samples * n_txt, dim]
     * sample-major, scores [n_samples, n_img, n_txt]; the dtypes select torch's rounding
     * (cpu_pairwise.h). Equal, bit for bit, to the CPU reference. May be NULL (CPU fallback).
     */
    mieb_status (*compo_scores)(struct mieb_backend *be, const float *img, enum mieb_emb_dtype img_dtype,
                                const float *txt, enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img,
                                int64_t n_txt, int64_t dim, float *scores);

    /*
     * Linear probe (PROTOCOLS.md §2): the data term of sklearn's loss_gradient for a batch
     * of logistic-regression problems that share n rows, D features and K classes, so that
     * many few-shot experiments are evaluated in one round (host/emulation/logreg_batch.h).
     * KK = K, or 1 when K == 2 (half-binomial loss with one weight vector, as sklearn).
     * The CPU backend leaves lr_open, lr_eval and lr_close NULL: the per-experiment fit
     * (host/emulation/logreg_lbfgs.c) is the reference and reproduces sklearn bit for bit; a
     * backend that has them is equal to it within float32 rounding (tests/gpu/). lr_predict
     * is an operation the CPU backend has too (the one dispatch falls back to).
     */

    /**
     * Make problems resident: X [n_problems, n, D] row-major float32 (problem p's rows at
     * X + p*n*D), y [n_problems, n] class indices in [0, K). Both are copied. MIEB_ERR_OOM
     * when they do not fit the backend's budget (the caller retries with fewer problems).
     */
    mieb_status (*lr_open)(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems, int64_t n,
                           int64_t D, int64_t K, struct mieb_lr_set **out);
    /**
     * For each a < n_active, problem which[a] at the float32 weights wt + a*(D+1)*KK
     * ([D+1, KK] row-major: scipy's layout, intercept in the last row):
     *   raw = X @ wt[0:D] + wt[D]                      (logits [n, KK])
     *   lossv + a*n   [n]:          per-sample loss    (logreg_math.h)
     *   gp = grad_pointwise / n     [n, KK]            (logreg_math.h)
     *   grad + a*(D+1)*KK [D+1, KK] = [X, 1]^T @ gp    (no L2 term: the caller adds it)
     */
    mieb_status (*lr_eval)(struct mieb_backend *be, struct mieb_lr_set *s, int64_t n_active, const int64_t *which,
                           const float *wt, float *lossv, float *grad);
    void (*lr_close)(struct mieb_backend *be, struct mieb_lr_set *s);
    /**
     * Predictions of n_problems fitted models on the same rows X [n, D]: coef
     * [n_problems, KK, D], intercept [n_problems, KK]; out[p*n + i] = for KK > 1 the first
     * maximum over k of X[i] . coef[p][k] + intercept[p][k] (a NaN counts as the maximum,
     * as np.argmax), for KK == 1 (binary) 1 when the decision is > 0, else 0 (logreg_math.h's
     * rule). The CPU backend's gives mieb_logreg_predict's bits (host/cpu/cpu_logreg.h); runs
     * through mieb_dispatch_lr_predict (host/dispatch/dispatch.h).
     */
    mieb_status (*lr_predict)(struct mieb_backend *be, const float *coef, const float *intercept, int64_t n_problems,
                              int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out);

    /**
     * topk_block for queries that need only their documents scoring at least floor[q]
     * (-inf or NaN: every document; floor NULL: -inf for all): out_n[q] gets the number of
     * leading entries of topk_block's list for q that are not below floor[q]
     * (mieb_topk_floor_head), and they are the first out_n[q] entries of out_scores/out_idx
     * + q*k, bit for bit as topk_block writes them. A search
     * whose running top-k already holds k scores passes its k-th so that the backend may skip
     * what cannot enter. May be NULL: mieb_backend_topk_block_floor then runs topk_block and
     * counts.
     */
    mieb_status (*topk_block_floor)(struct mieb_backend *be, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                    int64_t k, const float *floor, float *out_scores, int64_t *out_idx,
                                    int64_t *out_n);

    /**
     * Whether this backend runs op at these sizes: MIEB_OK, or a status with a message
     * saying why not (MIEB_ERR_TOO_LARGE: over what the backend can index or hold; the
     * dispatcher then runs the CPU backend, or for MIEB_OP_LR_BATCH the caller its
     * per-problem fit). Checked before the call; a budget that only
     * the run itself finds too small still returns MIEB_ERR_TOO_LARGE from the operation.
     * May be NULL: every operation whose slot is set is supported at every size.
     */
    mieb_status (*supports)(struct mieb_backend *be, const struct mieb_op_desc *op);

    /**
     * Name the kernels and arithmetic this backend runs, one put(user, key, value) each (the
     * run manifest records them: plan/manifest.h). May be NULL: nothing to say.
     */
    void (*describe)(struct mieb_backend *be, mieb_describe_fn put, void *user);
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

/* Backends are created by mieb_backend_init (host/dispatch/dispatch.h). */
void mieb_backend_free(struct mieb_backend *be);

/**
 * supports() through the table: MIEB_ERR_UNSUPPORTED (with a message) when the operation's
 * slot is NULL, else the backend's answer (MIEB_OK when it has no supports slot).
 */
mieb_status mieb_backend_supports(struct mieb_backend *be, const struct mieb_op_desc *op);

/* Checked wrappers: MIEB_ERR_UNSUPPORTED when the slot is NULL. */
mieb_status mieb_backend_prepare_queries(struct mieb_backend *be, const struct mieb_vecs *q,
                                         enum mieb_sim sim, struct mieb_qset **out);
void mieb_backend_release_queries(struct mieb_backend *be, struct mieb_qset *qs);
mieb_status mieb_backend_topk_block(struct mieb_backend *be, struct mieb_qset *qs,
                                    const struct mieb_vecs *docs, int64_t k,
                                    float *out_scores, int64_t *out_idx);
/**
 * How many leading entries of a list sorted best first are not below floor: the whole list
 * (n) when floor is -inf or NaN, since then nothing may be dropped.
 */
static inline int64_t mieb_topk_floor_head(const float *s, int64_t n, float floor)
{
    if (!(floor > -INFINITY))
        return n;
    int64_t h = 0;
    while (h < n && !(s[h] < floor))
        h++;
    return h;
}

/** topk_block_floor through the table (n_queries: the query set's size); topk_block and a count where the slot is NULL. */
mieb_status mieb_backend_topk_block_floor(struct mieb_backend *be, struct mieb_qset *qs, int64_t n_queries,
                                          const struct mieb_vecs *docs, int64_t k, const float *floor,
                                          float *out_scores, int64_t *out_idx, int64_t *out_n);
mieb_status mieb_backend_score_pairs(struct mieb_backend *be, struct mieb_qset *qs,
                                     const struct mieb_vecs *docs, int64_t n_pairs,
                                     const int64_t *qi, const int64_t *di, float *out);
int64_t mieb_backend_max_block_rows(struct mieb_backend *be, struct mieb_qset *qs, int64_t dim, int64_t k);
/*
 * kmeans_assign, sts_pairs, compo_scores and lr_predict have no wrapper here: they run
 * through host/dispatch/dispatch.h, which runs the CPU backend where the chosen one cannot.
 */

/*
 * The batch's slots through the table; MIEB_ERR_UNSUPPORTED when the backend lacks any of
 * lr_open, lr_eval, lr_close (supports(MIEB_OP_LR_BATCH) says so before).
 */
mieb_status mieb_backend_lr_open(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems,
                                 int64_t n, int64_t D, int64_t K, struct mieb_lr_set **out);
mieb_status mieb_backend_lr_eval(struct mieb_backend *be, struct mieb_lr_set *s, int64_t n_active,
                                 const int64_t *which, const float *wt, float *lossv, float *grad);
void mieb_backend_lr_close(struct mieb_backend *be, struct mieb_lr_set *s);

#ifdef __cplusplus
}
#endif
#endif
