/**
 * cpu_backend.c - the CPU implementation of the operations table (SIMD kernels + threads).
 *
 * This is the reference every CUDA kernel is tested against. Every score is the fixed-
 * order fp32 dot product of canon_dot.h, so it depends on its two vectors alone, never
 * on tiles, threads, --mem-limit or the machine. Two ways to the same best k:
 *  - exact: one canon_dot GEMM per (query tile, doc tile), followed immediately by best-k
 *    selection on the tile while it is still in cache (the score matrix is never whole);
 *  - screened (screen.h, where the CPU has AMX or AVX512_BF16, or int8 where it pays):
 *    approximate bf16 or int8 scores with rigorous
 *    bounds pick the few documents that can reach the best k, and only those get the
 *    exact score; the result is bit-identical to the exact way.
 * Work is split over our own threads by query tiles and, when there are fewer query tiles
 * than threads, by doc ranges whose partial top-k lists are merged afterwards.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "../core/parallel.h"
#include "../core/stop.h"
#include "../canon/canon_dot.h"
#include "../screen/screen.h"
#include "../topk/topk_heap.h"
#include "../topk/topk_reservoir.h"
#include "blas_tune.h"
#include "cpu_backend.h"
#include "cpu_kernels.h"
#include "cpu_pairwise.h"
#include "cpu_kmeans.h"
#include "cpu_logreg.h"

/* Tile shapes of the exact way: a 256 x 1250 fp32 score tile is 1.2 MiB, L2/L3 resident.
   (The grid of backend.h; with canon_dot the scores no longer depend on it.) */
#define CPU_TILE_Q MIEB_GRID_Q
#define CPU_TILE_D MIEB_GRID_D

/* Per-thread scratch kept across calls: a fresh multi-MiB malloc per block costs page
   faults (the kernel zeroes every page) that showed up at several percent of the time. */
struct cpu_scratch {
    float *tile;      /* [CPU_TILE_Q, CPU_TILE_D] */
    float *res_s;     /* [CPU_TILE_Q, 2k] */
    int64_t *res_i;
    size_t res_slots; /* capacity of res_s / res_i */
    struct mieb_screen_scratch *screen;
    struct mieb_maxsim_scratch maxsim; /* MaxSim token scores */
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
        free(cx->scratch[t].maxsim.s);
        mieb_screen_scratch_free(cx->scratch[t].screen);
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
    int screen;       /* take the screened way (screen.h) */
    size_t screen_budget;
    const float *floor; /* [nq] or NULL: what a query needs at least (topk_block_floor) */
    struct mieb_screen_stats stats;
    mieb_status st;
};

/* Scores of rows [r0, r0 + nr) of a job's m queries against docs [dt, dt + td) into
   tile[nr, td], row-major: how the exact way gets its tiles (tiles_topk). */
typedef mieb_status (*tile_scores_fn)(void *ctx, int64_t r0, int64_t nr, int64_t dt, int64_t td, float *tile);

/*
 * The exact way for m queries against docs [d0, d1): the tiles of their scores made by
 * `scores` (ctx its argument), each tile's rows offered to a reservoir per query at once.
 * Query r's best k go to out_s/out_i + r*k, its count to out_n[r]. floor (NULL: none) [m]:
 * query r's reservoir refuses scores below floor[r] from the start.
 */
static mieb_status tiles_topk(struct cpu_scratch *sc, tile_scores_fn scores, void *ctx, int64_t m, int64_t d0,
                              int64_t d1, int64_t k, const float *floor, float *out_s, int64_t *out_i,
                              int64_t *out_n)
{
    /* each query row gets a reservoir of 2k slots (topk_reservoir.h) */
    MIEB_TRY(scratch_reserve(sc, k));
    float *tile = sc->tile;
    for (int64_t qt = 0; qt < m; qt += CPU_TILE_Q) {
        int64_t tq = m - qt < CPU_TILE_Q ? m - qt : CPU_TILE_Q;
        struct mieb_topk_res res[CPU_TILE_Q];
        for (int64_t r = 0; r < tq; r++)
            mieb_topk_res_init_floor(&res[r], sc->res_s + (size_t)r * 2 * k, sc->res_i + (size_t)r * 2 * k, k,
                                     floor ? floor[qt + r] : -INFINITY);
        for (int64_t dt = d0; dt < d1; dt += CPU_TILE_D) {
            int64_t td = d1 - dt < CPU_TILE_D ? d1 - dt : CPU_TILE_D;
            MIEB_TRY(mieb_stop_check()); /* a stop signal: once per tile (core/stop.h) */
            MIEB_TRY(scores(ctx, qt, tq, dt, td, tile));
            for (int64_t r = 0; r < tq; r++)
                mieb_topk_res_push_row(&res[r], tile + r * td, td, dt);
        }
        for (int64_t r = 0; r < tq; r++) {
            int64_t n = mieb_topk_res_finish(&res[r]);
            memcpy(out_s + (qt + r) * k, res[r].score, sizeof(float) * (size_t)n);
            memcpy(out_i + (qt + r) * k, res[r].idx, sizeof(int64_t) * (size_t)n);
            out_n[qt + r] = n;
        }
    }
    return MIEB_OK;
}

struct dot_tiles {
    const float *Q, *D; /* Q: the job's query rows; D: the doc rows from the block's start */
    int64_t dim;
};

/* tile[nr, td] = Q[r0:r0+nr] . D[dt:dt+td]^T in canon_dot's order */
static mieb_status dot_tile(void *ctx, int64_t r0, int64_t nr, int64_t dt, int64_t td, float *tile)
{
    struct dot_tiles *c = ctx;
    mieb_canon_gemm(c->Q + r0 * c->dim, c->dim, nr, c->D + dt * c->dim, c->dim, td, c->dim, tile, td);
    return MIEB_OK;
}

/* The exact way for m contiguous query rows Q against docs [d0, d1) of D (rows of D are
   indexed from D's start). */
static mieb_status exact_topk(struct cpu_scratch *sc, const float *Q, int64_t m, const float *D, int64_t d0,
                              int64_t d1, int64_t dim, int64_t k, const float *floor, float *out_s, int64_t *out_i,
                              int64_t *out_n)
{
    struct dot_tiles c = {Q, D, dim};
    return tiles_topk(sc, dot_tile, &c, m, d0, d1, k, floor, out_s, out_i, out_n);
}

struct maxsim_tiles {
    const struct mieb_vecs *q, *d;
    int64_t q0; /* the job's first query item */
    struct mieb_maxsim_scratch *ws;
};

static mieb_status maxsim_tile(void *ctx, int64_t r0, int64_t nr, int64_t dt, int64_t td, float *tile)
{
    struct maxsim_tiles *c = ctx;
    return mieb_cpu_maxsim_tile(c->q, c->q0 + r0, c->q0 + r0 + nr, c->d, dt, dt + td, tile, td, c->ws);
}

/* The screened way; queries (or the whole job) it hands back take the exact way. */
static mieb_status run_screen_job(struct topk_job *j)
{
    const struct mieb_vecs *q = &j->qs->q, *d = j->docs;
    int64_t dim = q->dim, k = j->k, m = j->q1 - j->q0;
    float *os = j->out_s + j->q0 * k;
    int64_t *oi = j->out_i + j->q0 * k, *on = j->out_n + j->q0;
    int64_t *ovf = malloc(sizeof(int64_t) * (size_t)(m + 1)), n_ovf = 0;
    int aborted = 0;
    if (!ovf)
        return mieb_fail(MIEB_ERR_OOM, "cpu backend: screen overflow list");
    mieb_status st = mieb_screen_topk(&j->sc->screen, q->data + j->q0 * dim, m, d->data + j->d0 * dim,
                                      j->d1 - j->d0, dim, k, j->d0, j->floor ? j->floor + j->q0 : NULL,
                                      j->screen_budget, os, oi, on, ovf, &n_ovf, &aborted, &j->stats);
    if (st == MIEB_OK && aborted)
        st = exact_topk(j->sc, q->data + j->q0 * dim, m, d->data, j->d0, j->d1, dim, k,
                        j->floor ? j->floor + j->q0 : NULL, os, oi, on);
    else if (st == MIEB_OK && n_ovf > 0) {
        /* gather the handed-back queries, score them exactly, put their lists in place */
        float *g = malloc(sizeof(float) * (size_t)(n_ovf * dim));
        float *gs = malloc(sizeof(float) * (size_t)(n_ovf * k));
        int64_t *gi = malloc(sizeof(int64_t) * (size_t)(n_ovf * k)), *gn = malloc(sizeof(int64_t) * (size_t)n_ovf);
        float *gf = j->floor ? malloc(sizeof(float) * (size_t)n_ovf) : NULL;
        if (!g || !gs || !gi || !gn || (j->floor && !gf))
            st = mieb_fail(MIEB_ERR_OOM, "cpu backend: %lld queries for the exact way", (long long)n_ovf);
        for (int64_t x = 0; x < n_ovf && st == MIEB_OK; x++) {
            memcpy(g + x * dim, q->data + (j->q0 + ovf[x]) * dim, sizeof(float) * (size_t)dim);
            if (gf)
                gf[x] = j->floor[j->q0 + ovf[x]];
        }
        if (st == MIEB_OK)
            st = exact_topk(j->sc, g, n_ovf, d->data, j->d0, j->d1, dim, k, gf, gs, gi, gn);
        for (int64_t x = 0; x < n_ovf && st == MIEB_OK; x++) {
            memcpy(os + ovf[x] * k, gs + x * k, sizeof(float) * (size_t)gn[x]);
            memcpy(oi + ovf[x] * k, gi + x * k, sizeof(int64_t) * (size_t)gn[x]);
            on[ovf[x]] = gn[x];
        }
        free(g);
        free(gf);
        free(gs);
        free(gi);
        free(gn);
    }
    free(ovf);
    return st;
}

static mieb_status run_topk_job(struct topk_job *j)
{
    const struct mieb_vecs *q = &j->qs->q, *d = j->docs;
    int64_t k = j->k;
    if (j->screen)
        return run_screen_job(j);
    if (j->qs->sim == MIEB_SIM_MAXSIM) {
        /* Late interaction: the exact way with MaxSim tiles */
        struct maxsim_tiles c = {q, d, j->q0, &j->sc->maxsim};
        return tiles_topk(j->sc, maxsim_tile, &c, j->q1 - j->q0, j->d0, j->d1, k, j->floor ? j->floor + j->q0 : NULL,
                          j->out_s + j->q0 * k, j->out_i + j->q0 * k, j->out_n + j->q0);
    }
    return exact_topk(j->sc, q->data + j->q0 * q->dim, j->q1 - j->q0, d->data, j->d0, j->d1, q->dim, k,
                      j->floor ? j->floor + j->q0 : NULL, j->out_s + j->q0 * k, j->out_i + j->q0 * k,
                      j->out_n + j->q0);
}

/* A thread's share: a run of jobs ended by a q1 < 0 sentinel (mieb_par_run's part t). */
static void topk_share(void *arg, int t, int nt)
{
    (void)nt;
    struct topk_job *jobs = ((struct topk_job **)arg)[t];
    for (; jobs->q1 >= 0; jobs++)
        jobs->st = mieb_stop_requested() ? mieb_stop_check() : run_topk_job(jobs);
}

/* How one topk call is cut: query tiles of tile_q rows, the docs in `parts` ranges. */
struct topk_plan {
    int screen;
    int64_t tile_q;
    size_t screen_budget;
    int parts;
};

static struct topk_plan topk_plan(const struct mieb_backend *be, const struct mieb_qset *qs, int64_t nd, int64_t k,
                                  const float *floor, int nt)
{
    const struct mieb_vecs *q = &qs->q;
    int64_t nq = q->n;
    struct topk_plan pl = {.tile_q = CPU_TILE_Q, .parts = 1};
    /* The screened way (screen.h) where it pays: single vectors, a block far larger than
       k. Its query tiles are as large as its budget (an eighth of --mem-limit) allows, up
       to one per thread, since each tile converts the block to bf16 or int8 once. A block
       whose queries all have floors goes to the threads as one query tile over parts of
       the documents instead: the floors keep each part's candidates as few as the whole
       block's, and each document is read and converted once, not once per tile (5-6 %
       faster per floored block on Zen 4, docs/SCREEN_INT8.md section 10). Without floors each part would
       need its own k exact scores per query. */
    const int floored = mieb_screen_all_floored(floor, nq);
    if (qs->sim != MIEB_SIM_MAXSIM && mieb_screen_pays(nd, k, floored)) {
        size_t limit = be->opts.mem_limit ? be->opts.mem_limit : (size_t)4 << 30;
        size_t budget = limit / 8 / (size_t)nt;
        int64_t fit = (int64_t)(budget / mieb_screen_bytes_per_query(q->dim, k)) / 32 * 32;
        int64_t tiles = floored ? 1 : nt;
        int64_t want = ((nq + tiles - 1) / tiles + 31) / 32 * 32;
        if (want > 1024)
            want = 1024;
        pl.screen_budget = budget;
        if (fit >= 32) {
            pl.screen = 1;
            pl.tile_q = want < fit ? want : fit;
        }
    }
    /* MaxSim: a doc is hundreds of token products, so the docs of one tile are a lot of work;
       its queries go to the threads in equal shares instead (each share is still cut into
       products by token counts, mieb_cpu_maxsim_tile). */
    if (qs->sim == MIEB_SIM_MAXSIM && nq < (int64_t)nt * CPU_TILE_Q)
        pl.tile_q = (nq + nt - 1) / nt;
    /* Split docs into `parts` ranges when query tiles alone cannot feed every thread. */
    int64_t n_qtiles = (nq + pl.tile_q - 1) / pl.tile_q;
    if (n_qtiles < nt) {
        pl.parts = (int)(nt / n_qtiles);
        int64_t max_parts = (nd + CPU_TILE_D - 1) / CPU_TILE_D;
        if (pl.parts > max_parts)
            pl.parts = (int)max_parts;
        if (pl.parts < 1)
            pl.parts = 1;
    }
    return pl;
}

/* Where the jobs of one call write: per part, [nq, k] lists and [nq] counts. */
struct topk_out {
    float *ps;
    int64_t *pi, *pn;
    const float *floor;
};

/*
 * The n_jobs = query tiles x parts jobs, dealt in runs of equal length to nthreads threads
 * (each run ends with a sentinel, so jobs holds n_jobs + nthreads entries), run on
 * parallel.h's threads; the first failing job's status.
 */
static mieb_status topk_run_jobs(struct cpu_ctx *cx, struct mieb_qset *qs, const struct mieb_vecs *docs, int64_t k,
                                 const struct topk_plan *pl, const struct topk_out *o, struct topk_job *jobs,
                                 int64_t n_jobs, int nthreads)
{
    int64_t nq = qs->q.n, nd = docs->n, parts = pl->parts;
    int64_t per_thread = (n_jobs + nthreads - 1) / nthreads, w = 0, jid = 0;
    int64_t dchunk = ((nd + parts - 1) / parts + CPU_TILE_D - 1) / CPU_TILE_D * CPU_TILE_D;
    struct topk_job *starts[64];
    for (int t = 0; t < nthreads; t++) {
        starts[t] = &jobs[w];
        for (int64_t c = 0; c < per_thread && jid < n_jobs; c++, jid++) {
            int64_t qt = jid / parts, p = jid % parts;
            struct topk_job *jb = &jobs[w++];
            jb->qs = qs;
            jb->docs = docs;
            jb->k = k;
            jb->q0 = qt * pl->tile_q;
            jb->q1 = jb->q0 + pl->tile_q < nq ? jb->q0 + pl->tile_q : nq;
            jb->screen = pl->screen;
            jb->screen_budget = pl->screen_budget;
            jb->floor = o->floor;
            jb->d0 = p * dchunk < nd ? p * dchunk : nd;
            jb->d1 = (p + 1) * dchunk < nd ? (p + 1) * dchunk : nd;
            jb->out_s = o->ps + p * nq * k;
            jb->out_i = o->pi + p * nq * k;
            jb->out_n = o->pn + p * nq;
            jb->sc = &cx->scratch[t];
        }
        jobs[w++].q1 = -1; /* sentinel */
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mieb_par_run(nthreads, topk_share, starts);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct mieb_screen_stats sum = {0};
    for (int64_t x = 0; x < n_jobs + nthreads; x++) {
        if (jobs[x].q1 >= 0 && jobs[x].st != MIEB_OK)
            return jobs[x].st;
        sum.pairs += jobs[x].stats.pairs;
        sum.candidates += jobs[x].stats.candidates;
        sum.overflowed += jobs[x].stats.overflowed;
        sum.aborted += jobs[x].stats.aborted;
        if (jobs[x].q1 >= 0 && jobs[x].stats.kernel && !sum.kernel)
            sum.kernel = jobs[x].stats.kernel;
    }
    if (pl->screen)
        MIEB_LOGD("cpu top-k: %lld x %lld screened (%s) in %lld jobs: %.2f%% of pairs scored exactly, %lld "
                  "queries and %lld jobs handed to the exact way, %.3f s", (long long)nq, (long long)nd,
                  sum.kernel ? sum.kernel : mieb_screen_kernel_name(), (long long)n_jobs,
                  sum.pairs ? 100.0 * (double)sum.candidates / (double)sum.pairs : 0.0,
                  (long long)sum.overflowed, (long long)sum.aborted,
                  (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return MIEB_OK;
}

/* Merge the parts' sorted lists per query into out_s/out_i (parts hold increasing index
   ranges); o->pn[r] becomes query r's merged count. */
static mieb_status topk_merge_parts(const struct topk_out *o, int parts, int64_t nq, int64_t k, float *out_s,
                                    int64_t *out_i)
{
    float *ms = malloc(sizeof(float) * (size_t)k * 2);
    int64_t *mi = malloc(sizeof(int64_t) * (size_t)k * 2);
    if (!ms || !mi) {
        free(ms);
        free(mi);
        return mieb_fail(MIEB_ERR_OOM, "cpu backend: merge buffers");
    }
    for (int64_t r = 0; r < nq; r++) {
        int64_t n = o->pn[r];
        memcpy(ms, o->ps + r * k, sizeof(float) * (size_t)n);
        memcpy(mi, o->pi + r * k, sizeof(int64_t) * (size_t)n);
        for (int p = 1; p < parts; p++) {
            int64_t nb = o->pn[(int64_t)p * nq + r];
            n = mieb_topk_merge(ms, mi, n, o->ps + (int64_t)p * nq * k + r * k, o->pi + (int64_t)p * nq * k + r * k,
                                nb, k, ms + k, mi + k);
            memmove(ms, ms + k, sizeof(float) * (size_t)n);
            memmove(mi, mi + k, sizeof(int64_t) * (size_t)n);
        }
        memcpy(out_s + r * k, ms, sizeof(float) * (size_t)n);
        memcpy(out_i + r * k, mi, sizeof(int64_t) * (size_t)n);
        o->pn[r] = n;
    }
    free(ms);
    free(mi);
    return MIEB_OK;
}

/* topk_block and topk_block_floor (floor, out_n: NULL for topk_block). */
static mieb_status cpu_topk(struct mieb_backend *be, struct mieb_qset *qs, const struct mieb_vecs *docs, int64_t k,
                            const float *floor, float *out_scores, int64_t *out_idx, int64_t *out_n)
{
    struct cpu_ctx *cx = be->ctx;
    int64_t nq = qs->q.n, nd = docs->n;
    int nt = cx->n_threads;
    mieb_status st = MIEB_OK;

    if (qs->q.dim != docs->dim)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "cpu backend: query dim %lld != doc dim %lld",
                         (long long)qs->q.dim, (long long)docs->dim);
    if (out_n)
        memset(out_n, 0, sizeof(int64_t) * (size_t)nq);
    if (k <= 0 || nq == 0 || nd == 0)
        return MIEB_OK;

    struct topk_plan pl = topk_plan(be, qs, nd, k, floor, nt);
    int parts = pl.parts;
    struct topk_out o = {.ps = out_scores, .pi = out_idx, .floor = floor};
    o.pn = calloc((size_t)(nq * parts), sizeof(int64_t));
    if (parts > 1) {
        o.ps = malloc(sizeof(float) * (size_t)(nq * k * parts));
        o.pi = malloc(sizeof(int64_t) * (size_t)(nq * k * parts));
    }
    int64_t n_jobs = (nq + pl.tile_q - 1) / pl.tile_q * parts;
    int nthreads = (int)(n_jobs < nt ? n_jobs : nt);
    struct topk_job *jobs = calloc((size_t)(n_jobs + nthreads), sizeof *jobs);
    if (!o.pn || !o.ps || !o.pi || !jobs)
        st = mieb_fail(MIEB_ERR_OOM, "cpu backend: top-k work buffers");
    if (st == MIEB_OK)
        st = topk_run_jobs(cx, qs, docs, k, &pl, &o, jobs, n_jobs, nthreads);
    if (st == MIEB_OK && parts > 1)
        st = topk_merge_parts(&o, parts, nq, k, out_scores, out_idx);
    /* A screened list with a floor may go on below it (screen.h): keep the head at or above it. */
    for (int64_t r = 0; st == MIEB_OK && out_n && r < nq; r++)
        out_n[r] = mieb_topk_floor_head(out_scores + r * k, o.pn[r], floor ? floor[r] : -INFINITY);
    if (parts > 1) {
        free(o.ps);
        free(o.pi);
    }
    free(o.pn);
    free(jobs);
    return st;
}

static mieb_status cpu_topk_block(struct mieb_backend *be, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                  int64_t k, float *out_scores, int64_t *out_idx)
{
    return cpu_topk(be, qs, docs, k, NULL, out_scores, out_idx, NULL);
}

static mieb_status cpu_topk_block_floor(struct mieb_backend *be, struct mieb_qset *qs, const struct mieb_vecs *docs,
                                        int64_t k, const float *floor, float *out_scores, int64_t *out_idx,
                                        int64_t *out_n)
{
    return cpu_topk(be, qs, docs, k, floor, out_scores, out_idx, out_n);
}

static mieb_status cpu_score_pairs(struct mieb_backend *be, struct mieb_qset *qs,
                                   const struct mieb_vecs *docs, int64_t n_pairs,
                                   const int64_t *qi, const int64_t *di, float *out)
{
    const struct mieb_vecs *q = &qs->q;
    struct mieb_maxsim_scratch *ws = &((struct cpu_ctx *)be->ctx)->scratch[0].maxsim; /* the caller's: thread 0 of a search */
    for (int64_t p = 0; p < n_pairs; p++) {
        if (p % 4096 == 0) /* a stop signal: once per 4096 pairs (core/stop.h) */
            MIEB_TRY(mieb_stop_check());
        if (qi[p] < 0 || qi[p] >= q->n || di[p] < 0 || di[p] >= docs->n)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "cpu backend: pair %lld out of range", (long long)p);
        if (qs->sim == MIEB_SIM_MAXSIM) {
            MIEB_TRY(mieb_cpu_maxsim_tile(q, qi[p], qi[p] + 1, docs, di[p], di[p] + 1, &out[p], 1, ws));
        } else {
            out[p] = mieb_canon_dot(q->data + qi[p] * q->dim, docs->data + di[p] * docs->dim, q->dim);
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

static mieb_status cpu_lr_predict(struct mieb_backend *be, const float *coef, const float *intercept,
                                  int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out)
{
    const struct cpu_ctx *cx = be->ctx;
    return mieb_cpu_lr_predict(coef, intercept, n_problems, KK, D, X, n, cx->n_threads, out);
}

void mieb_cpu_describe(mieb_describe_fn put, void *user)
{
    put(user, "fixed_order_dot", mieb_canon_isa_name(mieb_canon_isa()));
    put(user, "screen", mieb_screen_kernel_name());
    put(user, "screen_floored", mieb_screen_kernel_name_for(1));
    put(user, "openblas_core", mieb_blas_corename());
}

static void cpu_describe(struct mieb_backend *be, mieb_describe_fn put, void *user)
{
    (void)be;
    mieb_cpu_describe(put, user);
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
    /* the probe's per-experiment fit (host/emulation/logreg_lbfgs.c) is the reference and
       gives sklearn's bits: no batch evaluator */
    /* .lr_open         = */ NULL,
    /* .lr_eval         = */ NULL,
    /* .lr_close        = */ NULL,
    /* .lr_predict      = */ cpu_lr_predict,
    /* .topk_block_floor = */ cpu_topk_block_floor,
    /* every operation it has, at every size */
    /* .supports         = */ NULL,
    /* .describe         = */ cpu_describe,
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
    cx->n_threads = be->opts.n_threads > 0 ? be->opts.n_threads : mieb_par_cpus();
    if (cx->n_threads > 64)
        cx->n_threads = 64;
    MIEB_LOGD("CPU backend: %d thread(s)%s", cx->n_threads,
              be->opts.n_threads > 0 ? "" : " (the CPUs this process may use)");
    /* Our threads split the work; BLAS must not spawn its own on top. */
    openblas_set_num_threads(1);
    *out = be;
    return MIEB_OK;
}
