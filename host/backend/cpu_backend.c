/**
 * cpu_backend.c - the CPU implementation of the operations table (BLAS + threads).
 *
 * This is the reference every CUDA kernel is tested against. Similarity is one fp32
 * SGEMM per (query tile, doc tile), followed immediately by best-k selection on the
 * tile while it is still in cache, so the full score matrix is never materialised.
 * Work is split over our own threads (OpenBLAS runs single-threaded inside each), by
 * query tiles and, when there are fewer query tiles than threads, by doc ranges whose
 * partial top-k lists are merged afterwards.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "backend.h"
#include "cpu_kernels.h"
#include "cpu_pairwise.h"
#include "cpu_kmeans.h"
#include "topk_heap.h"
#include "topk_reservoir.h"

/* Tile shapes: the grid of backend.h (a 256 x 1250 fp32 score tile is 1.2 MiB, L2/L3
   resident); every cblas_sgemm call is one grid tile, so its shape never depends on how
   the caller or the thread split cut the work. */
#define CPU_TILE_Q MIEB_GRID_Q
#define CPU_TILE_D MIEB_GRID_D

/* Per-thread scratch kept across calls: a fresh multi-MiB malloc per block costs page
   faults (the kernel zeroes every page) that showed up at several percent of the time. */
struct cpu_scratch {
    float *tile;      /* [CPU_TILE_Q, CPU_TILE_D] */
    float *res_s;     /* [CPU_TILE_Q, 2k] */
    int64_t *res_i;
    size_t res_slots; /* capacity of res_s / res_i */
};

struct cpu_ctx {
    int n_threads;
    struct cpu_scratch scratch[64];
};

static mieb_status scratch_reserve(struct cpu_scratch *sc, int64_t k)
{
    size_t need = (size_t)CPU_TILE_Q * 2 * (size_t)k;
    if (!sc->tile && !(sc->tile = malloc(sizeof(float) * CPU_TILE_Q * CPU_TILE_D)))
        return mieb_fail(MIEB_ERR_OOM, "cpu backend: score tile");
    if (sc->res_slots < need) {
        free(sc->res_s);
        free(sc->res_i);
        sc->res_s = malloc(sizeof(float) * need);
        sc->res_i = malloc(sizeof(int64_t) * need);
        sc->res_slots = sc->res_s && sc->res_i ? need : 0;
        if (!sc->res_slots)
            return mieb_fail(MIEB_ERR_OOM, "cpu backend: top-k reservoirs (k = %lld)", (long long)k);
    }
    return MIEB_OK;
}

struct mieb_qset {
    struct mieb_vecs q; /* borrowed: caller keeps the data alive */
    enum mieb_sim sim;
};

static void cpu_free(struct mieb_backend *be)
{
    struct cpu_ctx *cx = be->ctx;
    for (int t = 0; t < 64; t++) {
        free(cx->scratch[t].tile);
        free(cx->scratch[t].res_s);
        free(cx->scratch[t].res_i);
    }
    free(be->ctx);
    free(be);
}

static mieb_status cpu_prepare_queries(struct mieb_backend *be, const struct mieb_vecs *q,
                                       enum mieb_sim sim, struct mieb_qset **out)
{
    struct mieb_qset *qs = calloc(1, sizeof *qs);
    if (!qs)
        return mieb_fail(MIEB_ERR_OOM, "cpu backend: query set");
    if ((sim == MIEB_SIM_MAXSIM) != (q->offsets != NULL)) {
        free(qs);
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cpu backend: MaxSim needs multi-vector queries and only MaxSim accepts them");
    }
    qs->q = *q;
    qs->sim = sim;
    *out = qs;
    return MIEB_OK;
}

static void cpu_release_queries(struct mieb_backend *be, struct mieb_qset *qs) { free(qs); }

/* One unit of work: queries [q0, q1) against docs [d0, d1), best k of each query into slot `part`. */
struct topk_job {
    const struct mieb_qset *qs;
    const struct mieb_vecs *docs;
    int64_t k, q0, q1, d0, d1;
    float *out_s;     /* [nq, k] for this part */
    int64_t *out_i;
    int64_t *out_n;   /* [nq] entries kept per query (this part) */
    struct cpu_scratch *sc; /* the running thread's scratch */
    mieb_status st;
};

static mieb_status run_topk_job(struct topk_job *j)
{
    const struct mieb_vecs *q = &j->qs->q, *d = j->docs;
    int64_t nq = j->q1 - j->q0, k = j->k;
    float *tile = NULL;
    struct mieb_topk_heap h;

    if (j->qs->sim == MIEB_SIM_MAXSIM) {
        /* Late interaction: one query at a time against the doc range. */
        for (int64_t qi = j->q0; qi < j->q1; qi++) {
            float *row = malloc(sizeof(float) * (size_t)(j->d1 - j->d0 > 0 ? j->d1 - j->d0 : 1));
            if (!row)
                return mieb_fail(MIEB_ERR_OOM, "cpu backend: maxsim row");
            /* one grid tile of documents per token GEMM, as for single vectors */
            for (int64_t dt = j->d0; dt < j->d1; dt += CPU_TILE_D) {
                int64_t de = j->d1 - dt < CPU_TILE_D ? j->d1 : dt + CPU_TILE_D;
                mieb_status st = mieb_cpu_maxsim_row(q, qi, d, dt, de, row + (dt - j->d0));
                if (st != MIEB_OK) {
                    free(row);
                    return st;
                }
            }
            mieb_topk_heap_init(&h, j->out_s + qi * k, j->out_i + qi * k, k);
            mieb_topk_heap_push_row(&h, row, j->d1 - j->d0, j->d0);
            j->out_n[qi] = h.n;
            mieb_topk_heap_drain_sorted(&h, h.score, h.idx);
            free(row);
        }
        return MIEB_OK;
    }

    /* each query row gets a reservoir of 2k slots (topk_reservoir.h) */
    mieb_status st = scratch_reserve(j->sc, k);
    if (st != MIEB_OK)
        return st;
    tile = j->sc->tile;
    float *res_s = j->sc->res_s;
    int64_t *res_i = j->sc->res_i;
    for (int64_t qt = j->q0; qt < j->q1; qt += CPU_TILE_Q) {
        int64_t tq = j->q1 - qt < CPU_TILE_Q ? j->q1 - qt : CPU_TILE_Q;
        struct mieb_topk_res res[CPU_TILE_Q];
        for (int64_t r = 0; r < tq; r++)
            mieb_topk_res_init(&res[r], res_s + (size_t)r * 2 * k, res_i + (size_t)r * 2 * k, k);
        for (int64_t dt = j->d0; dt < j->d1; dt += CPU_TILE_D) {
            int64_t td = j->d1 - dt < CPU_TILE_D ? j->d1 - dt : CPU_TILE_D;
            /* tile[tq, td] = Q[qt:qt+tq] . D[dt:dt+td]^T, row-major */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)tq, (int)td, (int)q->dim,
                        1.0f, q->data + qt * q->dim, (int)q->dim, d->data + dt * d->dim, (int)d->dim,
                        0.0f, tile, (int)td);
            for (int64_t r = 0; r < tq; r++)
                mieb_topk_res_push_row(&res[r], tile + r * td, td, dt);
        }
        for (int64_t r = 0; r < tq; r++) {
            int64_t n = mieb_topk_res_finish(&res[r]);
            memcpy(j->out_s + (qt + r) * k, res[r].score, sizeof(float) * (size_t)n);
            memcpy(j->out_i + (qt + r) * k, res[r].idx, sizeof(int64_t) * (size_t)n);
            j->out_n[qt + r] = n;
        }
    }
    (void)nq;
    return MIEB_OK;
}

static void *topk_thread(void *arg)
{
    struct topk_job *jobs = arg;
    /* jobs is a NULL-terminated run: process until q1 < 0 sentinel */
    for (; jobs->q1 >= 0; jobs++)
        jobs->st = run_topk_job(jobs);
    return NULL;
}

static mieb_status cpu_topk_block(struct mieb_backend *be, struct mieb_qset *qs,
                                  const struct mieb_vecs *docs, int64_t k,
                                  float *out_scores, int64_t *out_idx)
{
    struct cpu_ctx *cx = be->ctx;
    const struct mieb_vecs *q = &qs->q;
    int64_t nq = q->n, nd = docs->n;
    int nt = cx->n_threads;
    mieb_status st = MIEB_OK;

    if (q->dim != docs->dim)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cpu backend: query dim %lld != doc dim %lld",
                         (long long)q->dim, (long long)docs->dim);
    if (k <= 0 || nq == 0)
        return MIEB_OK;
    int64_t keep = k < nd ? k : nd;
    if (nd == 0)
        return MIEB_OK;

    /* Split docs into `parts` ranges when query tiles alone cannot feed every thread. */
    int64_t n_qtiles = (nq + CPU_TILE_Q - 1) / CPU_TILE_Q;
    int parts = 1;
    if (n_qtiles < nt) {
        parts = (int)(nt / n_qtiles);
        int64_t max_parts = (nd + CPU_TILE_D - 1) / CPU_TILE_D;
        if (parts > max_parts)
            parts = (int)max_parts;
        if (parts < 1)
            parts = 1;
    }
    float *ps = out_scores;
    int64_t *pi = out_idx;
    int64_t *pn = calloc((size_t)(nq * parts), sizeof(int64_t));
    if (parts > 1) {
        ps = malloc(sizeof(float) * (size_t)(nq * k * parts));
        pi = malloc(sizeof(int64_t) * (size_t)(nq * k * parts));
    }
    /* jobs: n_qtiles * parts, distributed round-robin over threads, each run ends with a sentinel */
    int64_t n_jobs = n_qtiles * parts;
    int nthreads = (int)(n_jobs < nt ? n_jobs : nt);
    struct topk_job *jobs = calloc((size_t)(n_jobs + nthreads), sizeof *jobs);
    if (!pn || !ps || !pi || !jobs) {
        st = mieb_fail(MIEB_ERR_OOM, "cpu backend: top-k work buffers");
        goto done;
    }
    {
        int64_t per_thread = (n_jobs + nthreads - 1) / nthreads, w = 0;
        pthread_t tids[64];
        struct topk_job *starts[64];
        int64_t jid = 0;
        for (int t = 0; t < nthreads; t++) {
            starts[t] = &jobs[w];
            for (int64_t c = 0; c < per_thread && jid < n_jobs; c++, jid++) {
                int64_t qt = jid / parts, p = jid % parts;
                /* whole grid tiles per part, so no sgemm call changes shape with the thread count */
                int64_t dchunk = ((nd + parts - 1) / parts + CPU_TILE_D - 1) / CPU_TILE_D * CPU_TILE_D;
                struct topk_job *jb = &jobs[w++];
                jb->qs = qs;
                jb->docs = docs;
                jb->k = k;
                jb->q0 = qt * CPU_TILE_Q;
                jb->q1 = jb->q0 + CPU_TILE_Q < nq ? jb->q0 + CPU_TILE_Q : nq;
                jb->d0 = p * dchunk < nd ? p * dchunk : nd;
                jb->d1 = (p + 1) * dchunk < nd ? (p + 1) * dchunk : nd;
                jb->out_s = ps + (int64_t)p * nq * k;
                jb->out_i = pi + (int64_t)p * nq * k;
                jb->out_n = pn + (int64_t)p * nq;
                jb->sc = &cx->scratch[t];
            }
            jobs[w++].q1 = -1; /* sentinel */
        }
        int started[64] = {0};
        for (int t = 1; t < nthreads; t++)
            started[t] = pthread_create(&tids[t], NULL, topk_thread, starts[t]) == 0;
        for (int t = 1; t < nthreads; t++)
            if (!started[t])
                topk_thread(starts[t]); /* no thread could be made: run that share inline */
        topk_thread(starts[0]);
        for (int t = 1; t < nthreads; t++)
            if (started[t])
                pthread_join(tids[t], NULL);
        for (int64_t x = 0; x < n_jobs + nthreads; x++)
            if (jobs[x].q1 >= 0 && jobs[x].st != MIEB_OK) {
                st = jobs[x].st;
                goto done;
            }
    }
    if (parts > 1) {
        /* Merge the parts' sorted lists per query; parts hold increasing index ranges. */
        float *ms = malloc(sizeof(float) * (size_t)k * 2);
        int64_t *mi = malloc(sizeof(int64_t) * (size_t)k * 2);
        if (!ms || !mi) {
            free(ms);
            free(mi);
            st = mieb_fail(MIEB_ERR_OOM, "cpu backend: merge buffers");
            goto done;
        }
        for (int64_t r = 0; r < nq; r++) {
            int64_t n = pn[r];
            memcpy(ms, ps + r * k, sizeof(float) * (size_t)n);
            memcpy(mi, pi + r * k, sizeof(int64_t) * (size_t)n);
            for (int p = 1; p < parts; p++) {
                int64_t nb = pn[(int64_t)p * nq + r];
                n = mieb_topk_merge(ms, mi, n, ps + (int64_t)p * nq * k + r * k,
                                    pi + (int64_t)p * nq * k + r * k, nb, k, ms + k, mi + k);
                memmove(ms, ms + k, sizeof(float) * (size_t)n);
                memmove(mi, mi + k, sizeof(int64_t) * (size_t)n);
            }
            memcpy(out_scores + r * k, ms, sizeof(float) * (size_t)n);
            memcpy(out_idx + r * k, mi, sizeof(int64_t) * (size_t)n);
        }
        free(ms);
        free(mi);
    }
    (void)keep;
done:
    if (parts > 1) {
        free(ps);
        free(pi);
    }
    free(pn);
    free(jobs);
    return st;
}

static mieb_status cpu_score_pairs(struct mieb_backend *be, struct mieb_qset *qs,
                                   const struct mieb_vecs *docs, int64_t n_pairs,
                                   const int64_t *qi, const int64_t *di, float *out)
{
    const struct mieb_vecs *q = &qs->q;
    for (int64_t p = 0; p < n_pairs; p++) {
        if (qi[p] < 0 || qi[p] >= q->n || di[p] < 0 || di[p] >= docs->n)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "cpu backend: pair %lld out of range", (long long)p);
        if (qs->sim == MIEB_SIM_MAXSIM) {
            MIEB_TRY(mieb_cpu_maxsim_row(q, qi[p], docs, di[p], di[p] + 1, &out[p]));
        } else {
            out[p] = mieb_cpu_dot(q->data + qi[p] * q->dim, docs->data + di[p] * docs->dim, q->dim);
        }
    }
    return MIEB_OK;
}

static int64_t cpu_max_block_rows(struct mieb_backend *be, struct mieb_qset *qs, int64_t dim, int64_t k)
{
    /* The CPU backend streams tiles; its own scratch is fixed (threads x 2 MiB tile). */
    (void)qs;
    (void)dim;
    (void)k;
    return INT64_MAX;
}

static mieb_status cpu_sts_pairs(struct mieb_backend *be, const float *a, const float *b, int64_t n, int64_t dim,
                                 bool sklearn_f64, enum mieb_sim model_sim, const struct mieb_sts_pair_out *out)
{
    (void)be;
    return mieb_cpu_sts_pairs(a, b, n, dim, sklearn_f64, model_sim, out);
}

static mieb_status cpu_compo_scores(struct mieb_backend *be, const float *img, enum mieb_emb_dtype img_dtype,
                                    const float *txt, enum mieb_emb_dtype txt_dtype, int64_t n_samples, int64_t n_img,
                                    int64_t n_txt, int64_t dim, float *scores)
{
    (void)be;
    return mieb_cpu_compo_scores(img, img_dtype, txt, txt_dtype, n_samples, n_img, n_txt, dim, scores);
}

static const struct mieb_backend_i cpu_iface = {
    /* .name            = */ "cpu",
    /* .free            = */ cpu_free,
    /* .prepare_queries = */ cpu_prepare_queries,
    /* .release_queries = */ cpu_release_queries,
    /* .topk_block      = */ cpu_topk_block,
    /* .score_pairs     = */ cpu_score_pairs,
    /* .max_block_rows  = */ cpu_max_block_rows,
    /* .kmeans_assign   = */ mieb_cpu_kmeans_assign,
    /* .sts_pairs       = */ cpu_sts_pairs,
    /* .compo_scores    = */ cpu_compo_scores,
    /* the probe's threaded fit (logreg_lbfgs.c) is the reference: no batch evaluator */
    /* .lr_open         = */ NULL,
    /* .lr_eval         = */ NULL,
    /* .lr_close        = */ NULL,
    /* .lr_predict      = */ NULL,
};

mieb_status mieb_backend_cpu_init(const struct mieb_backend_opts *opts, struct mieb_backend **out)
{
    struct mieb_backend *be = calloc(1, sizeof *be);
    struct cpu_ctx *cx = calloc(1, sizeof *cx);
    if (!be || !cx) {
        free(be);
        free(cx);
        return mieb_fail(MIEB_ERR_OOM, "cpu backend");
    }
    be->iface = cpu_iface;
    be->ctx = cx;
    if (opts)
        be->opts = *opts;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cx->n_threads = be->opts.n_threads > 0 ? be->opts.n_threads : (int)(ncpu > 0 ? ncpu : 1);
    if (cx->n_threads > 64)
        cx->n_threads = 64;
    /* Our threads split the work; BLAS must not spawn its own on top. */
    openblas_set_num_threads(1);
    *out = be;
    return MIEB_OK;
}
