/**
 * screen.c - the screened top-k: the kernel choice, the passes run over a block and the exact
 * rescoring of the survivors. The approximate scores come from screen_pass.c (bf16, with
 * screen_amx.c's kernel where the CPU has AMX) and screen_int8.c; the bounds and candidate
 * lists every pass fills are screen_lists.c's, below them all. The argument for exactness is
 * in screen.h.
 *
 * Per query, candidates arrive in increasing document order with their bounds [lb, ub].
 * tau is the larger of the query's floor (-inf without one) and the k-th largest lower
 * bound seen so far (-inf before k documents were seen): a document with ub < tau is out
 * of reach, because k documents already score at least tau, or because the caller needs
 * nothing below the floor. A list that reaches its cut point is cut: tau rises to the k-th
 * largest lb in it and the entries whose ub fell below tau leave. Documents refused earlier
 * had ub < the tau of their time, so they can never be among the k largest lower bounds
 * either: the final tau is the floor or exactly the k-th largest lower bound of the whole
 * range, and the survivors are the candidates. With a floor, the k-th largest lower bound
 * is taken over the listed documents only: it is still at most the k-th best score, so
 * every document of the best k that scores at or above the floor survives (screen.h).
 *
 * Their exact scores are computed document by document (each document row streams once;
 * the job's queries stay in cache), then each query's best k is selected from its
 * candidates in row order with the exact path's reservoir (same tie rule, same result).
 */
#include "screen.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../math/screen_int8_math.h"
#include "../canon/canon_dot.h"
#include "../canon/cpu_features.h"
#include "../core/radix_sort.h"
#include "../topk/topk_reservoir.h"
#include "screen_base.h"
#include "../core/env.h"

/* ---- availability ---- */

static enum screen_kernel g_chosen, g_forced;
static int g_by_name; /* MIEB_CPU_SCREEN named the kernel: it runs wherever a screen can */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_enabled = 1;
static int g_mix_floored = 1; /* MIEB_SCREEN_MIX=off: auto keeps one kernel (measurements) */

int mieb_screen_kernel_usable(enum screen_kernel kern)
{
    /* The bf16 kernels need AVX-512 with AVX512_BF16 for the bf16 copies and the bounds
       (cpu_features' amx_bf16 includes both); the int8 ones AVX2 or nothing. The
       candidates' exact scores take whichever canon_dot kernel runs, all with the same bits. */
    const struct mieb_cpu_features *f = mieb_cpu_features();
    if (kern == SCREEN_KERNEL_INT8_SCALAR)
        return 1;
    if (kern == SCREEN_KERNEL_INT8_AVX2)
        return mieb_screen_i8_avx2_built && f->avx2_fma;
    /* the VNNI and AMX-INT8 kernels quantise with the AVX2 code; those on ZMM and AMX offer
       with AVX-512 (screen_int8_offer512.c), the YMM one with AVX2 */
    if (kern == SCREEN_KERNEL_INT8_VNNI512)
        return mieb_screen_i8_vnni512_built && mieb_screen_i8_avx2_built && mieb_screen_i8_offer512_built &&
               f->avx512_vnni;
    if (kern == SCREEN_KERNEL_INT8_AVXVNNI)
        return mieb_screen_i8_avxvnni_built && mieb_screen_i8_avx2_built && f->avx_vnni;
    if (kern == SCREEN_KERNEL_INT8_AMX)
        return mieb_screen_i8_amx_built && mieb_screen_i8_avx2_built && mieb_screen_i8_offer512_built &&
               f->avx512 && f->amx_int8 && mieb_cpu_amx_enable();
    if (!mieb_screen_bf16_built || !f->avx512_bf16)
        return 0;
    if (kern == SCREEN_KERNEL_AVX512BF16)
        return 1;
    return kern == SCREEN_KERNEL_AMX && mieb_screen_amx_built && f->amx_bf16 && mieb_cpu_amx_enable();
}

static const struct {
    const char *name;
    enum screen_kernel kern;
} g_names[] = {{"amx", SCREEN_KERNEL_AMX},
               {"avx512bf16", SCREEN_KERNEL_AVX512BF16},
               {"int8", SCREEN_KERNEL_INT8_AVX2}, /* the best int8 kernel here, AMX's aside: below */
               {"int8-amx", SCREEN_KERNEL_INT8_AMX},
               {"int8-vnni512", SCREEN_KERNEL_INT8_VNNI512},
               {"int8-avxvnni", SCREEN_KERNEL_INT8_AVXVNNI},
               {"int8-avx2", SCREEN_KERNEL_INT8_AVX2},
               {"int8-scalar", SCREEN_KERNEL_INT8_SCALAR}};

/* The int8 kernels by rate of integer products (VPDPBUSD on ZMM: 4x VPMADDWD on YMM; on
   YMM: 2x), the portable one last. AMX-INT8 is not among them: a CPU with it has AMX-BF16,
   whose window is 5x narrower, and the bf16 AMX screen ran 1.4-2x faster than the int8 one
   on the same Xeon (docs/SCREEN_INT8.md, section 10). */
static enum screen_kernel best_int8(void)
{
    static const enum screen_kernel order[] = {SCREEN_KERNEL_INT8_VNNI512, SCREEN_KERNEL_INT8_AVXVNNI,
                                               SCREEN_KERNEL_INT8_AVX2};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (mieb_screen_kernel_usable(order[i]))
            return order[i];
    return SCREEN_KERNEL_NONE;
}

static void decide(void)
{
    const char *mix = mieb_env(MIEB_ENV_SCREEN_MIX);
    g_mix_floored = !(mix && !strcmp(mix, "off"));
    const char *e = mieb_env(MIEB_ENV_CPU_SCREEN);
    enum screen_kernel want = SCREEN_KERNEL_NONE; /* NONE here: the best usable one */
    if (e && *e && strcasecmp(e, "auto") != 0) {
        if (!strcasecmp(e, "off") || !strcmp(e, "0"))
            return; /* g_chosen stays NONE */
        for (size_t i = 0; i < sizeof g_names / sizeof g_names[0]; i++)
            if (!strcasecmp(e, g_names[i].name))
                want = g_names[i].kern;
        if (want == SCREEN_KERNEL_NONE)
            MIEB_LOGW("MIEB_CPU_SCREEN=%s is not auto, off, amx, avx512bf16, int8, int8-amx, int8-vnni512, "
                      "int8-avxvnni, int8-avx2 or int8-scalar; using auto", e);
    }
    /* int8 alone asks for the int8 screen: its best kernel here, the portable one at worst */
    if (want == SCREEN_KERNEL_INT8_AVX2 && !strcasecmp(e, "int8")) {
        want = best_int8();
        if (want == SCREEN_KERNEL_NONE)
            want = SCREEN_KERNEL_INT8_SCALAR;
    }
    if (want != SCREEN_KERNEL_NONE && !mieb_screen_kernel_usable(want)) {
        MIEB_LOGW("MIEB_CPU_SCREEN=%s: this CPU or build cannot run it; using auto", e);
        want = SCREEN_KERNEL_NONE;
    }
    g_by_name = want != SCREEN_KERNEL_NONE;
    /* AMX's tiles are about 8x VDPBF16PS's rate, whose window is 5x narrower than int8's;
       the portable int8 kernel is slower than the exact way's SIMD and is never chosen */
    if (want == SCREEN_KERNEL_NONE)
        want = mieb_screen_kernel_usable(SCREEN_KERNEL_AMX)          ? SCREEN_KERNEL_AMX
               : mieb_screen_kernel_usable(SCREEN_KERNEL_AVX512BF16) ? SCREEN_KERNEL_AVX512BF16
                                                                     : best_int8();
    g_chosen = want;
}

enum screen_kernel mieb_screen_kernel(void)
{
    pthread_once(&g_once, decide);
    enum screen_kernel f = __atomic_load_n(&g_forced, __ATOMIC_RELAXED);
    return f != SCREEN_KERNEL_NONE ? f : g_chosen;
}

int mieb_screen_force_kernel(enum screen_kernel kern)
{
    if (kern != SCREEN_KERNEL_NONE && !mieb_screen_kernel_usable(kern))
        return -1; /* it would die on an illegal instruction */
    __atomic_store_n(&g_forced, kern, __ATOMIC_RELAXED);
    return 0;
}

int mieb_screen_available(void)
{
    return mieb_screen_kernel() != SCREEN_KERNEL_NONE && __atomic_load_n(&g_enabled, __ATOMIC_RELAXED);
}

/* The kernel for a block whose queries all have floors (floored) or not. Under auto, a CPU
   with AVX512_BF16 and AVX512_VNNI but no AMX (AMD Zen 4 and later) screens floored blocks
   with VPDPBUSD: there the integer products cost half of VDPBF16PS's and the wider window
   matters less, since a floor admits few documents. */
static enum screen_kernel kernel_for(int floored)
{
    enum screen_kernel kern = mieb_screen_kernel();
    if (floored && !g_by_name && __atomic_load_n(&g_forced, __ATOMIC_RELAXED) == SCREEN_KERNEL_NONE &&
        kern == SCREEN_KERNEL_AVX512BF16 && g_mix_floored && mieb_screen_kernel_usable(SCREEN_KERNEL_INT8_VNNI512))
        return SCREEN_KERNEL_INT8_VNNI512;
    return kern;
}

static const char *name_of(enum screen_kernel kern)
{
    switch (kern) {
    case SCREEN_KERNEL_AMX:
        return "amx";
    case SCREEN_KERNEL_AVX512BF16:
        return "avx512bf16";
    case SCREEN_KERNEL_INT8_AVX2:
        return "int8-avx2";
    case SCREEN_KERNEL_INT8_VNNI512:
        return "int8-vnni512";
    case SCREEN_KERNEL_INT8_AVXVNNI:
        return "int8-avxvnni";
    case SCREEN_KERNEL_INT8_AMX:
        return "int8-amx";
    default:
        return "int8-scalar";
    }
}

const char *mieb_screen_kernel_name(void)
{
    return mieb_screen_available() ? name_of(mieb_screen_kernel()) : "off";
}

const char *mieb_screen_kernel_name_for(int floored)
{
    return mieb_screen_available() ? name_of(kernel_for(floored)) : "off";
}

int mieb_screen_all_floored(const float *floor, int64_t n)
{
    if (!floor)
        return 0;
    for (int64_t t = 0; t < n; t++)
        if (!isfinite(floor[t]))
            return 0;
    return 1;
}

int mieb_screen_pays(int64_t n_docs, int64_t k, int floored)
{
    if (!mieb_screen_available() || n_docs < MIEB_SCREEN_MIN_DOCS)
        return 0;
    enum screen_kernel kern = kernel_for(floored);
    /* an int8 kernel asked for by name runs where the AMX one would (benchmarks, tests) */
    int64_t per_k = kern == SCREEN_KERNEL_AMX          ? MIEB_SCREEN_MIN_DOCS_PER_K
                    : kern == SCREEN_KERNEL_AVX512BF16 ? MIEB_SCREEN_MIN_DOCS_PER_K_AVX512BF16
                    : g_by_name || __atomic_load_n(&g_forced, __ATOMIC_RELAXED) != SCREEN_KERNEL_NONE
                        ? MIEB_SCREEN_MIN_DOCS_PER_K
                    : floored ? MIEB_SCREEN_MIN_DOCS_PER_K_INT8_FLOORED
                              : MIEB_SCREEN_MIN_DOCS_PER_K_INT8;
    return n_docs >= k * per_k;
}

void mieb_screen_set_enabled(int on) { __atomic_store_n(&g_enabled, on ? 1 : 0, __ATOMIC_RELAXED); }

/* ---- per-thread scratch ---- */

/* Everything a job allocates lives here and is reused by the thread's next job: fresh
   multi-MiB buffers per call cost page faults (the kernel zeroes every page). */
struct mieb_screen_scratch {
    struct screen_buf *buf;
    struct screen_i8_buf *ibuf;
    struct screen_list *lists;
    int64_t lists_len;
    uint32_t *keys; /* selection scratch (screen_ctx.keys) */
    int64_t keys_cap;
    float *alpha, *beta, *tau;
    unsigned char *overflow;
    int64_t alpha_cap, beta_cap, tau_cap, overflow_cap;
    /* rescoring */
    int32_t *start, *fill; /* [n + 1] */
    int32_t *pair_q, *pair_dst;
    float *exact;
    float *tmp;
    int64_t *qoff;
    int64_t start_cap, fill_cap, pair_q_cap, pair_dst_cap, exact_cap, tmp_cap, qoff_cap;
    unsigned char *state; /* per candidate: out, wanted, scored */
    float *sel;           /* one query's exact scores, for its k-th largest */
    uint32_t *skeys;      /* and that selection's keys */
    int64_t state_cap, sel_cap, skeys_cap;
    float *res_s;    /* reservoir of one query: 2k */
    int64_t *res_i;
    int64_t res_cap;
};

void mieb_screen_scratch_free(struct mieb_screen_scratch *s)
{
    if (!s)
        return;
    mieb_screen_buf_free(s->buf);
    mieb_screen_i8_buf_free(s->ibuf);
    for (int64_t q = 0; q < s->lists_len; q++)
        free(s->lists[q].idx);
    free(s->keys);
    free(s->lists);
    free(s->alpha);
    free(s->beta);
    free(s->tau);
    free(s->overflow);
    free(s->start);
    free(s->fill);
    free(s->pair_q);
    free(s->pair_dst);
    free(s->exact);
    free(s->tmp);
    free(s->qoff);
    free(s->state);
    free(s->sel);
    free(s->skeys);
    free(s->res_s);
    free(s->res_i);
    free(s);
}

/* Grow *p to hold n elements of `size` bytes (contents kept); 0 when out of memory. */
static int grow(void **p, int64_t *cap, int64_t n, size_t size)
{
    if (*cap >= n)
        return 1;
    int64_t c = *cap ? *cap : 16;
    while (c < n)
        c *= 2;
    void *q = realloc(*p, size * (size_t)c);
    if (!q)
        return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* The per-query arrays for m_pad queries, lists for m (the lists start with cap0 entries each). */
static int reserve_queries(struct mieb_screen_scratch *sc, int64_t m, int64_t m_pad)
{
    if (!grow((void **)&sc->alpha, &sc->alpha_cap, m_pad, sizeof(float)) ||
        !grow((void **)&sc->beta, &sc->beta_cap, m_pad, sizeof(float)) ||
        !grow((void **)&sc->tau, &sc->tau_cap, m_pad, sizeof(float)) ||
        !grow((void **)&sc->overflow, &sc->overflow_cap, m_pad, 1))
        return 0;
    if (sc->lists_len < m) {
        struct screen_list *l = realloc(sc->lists, sizeof *l * (size_t)m);
        if (!l)
            return 0;
        memset(l + sc->lists_len, 0, sizeof *l * (size_t)(m - sc->lists_len));
        sc->lists = l;
        sc->lists_len = m;
    }
    return 1;
}

size_t mieb_screen_bytes_per_query(int64_t K, int64_t k)
{
    int64_t KP = (K + SCREEN_KSTEP - 1) / SCREEN_KSTEP * SCREEN_KSTEP;
    /* initial list, about as many rescoring pairs (12 bytes each), the bf16 query copy
       and the per-query scalars */
    return (size_t)(SCREEN_CAP0(k) + SCREEN_SLACK) * (SCREEN_ENTRY_BYTES + 12) + (size_t)KP * 2 + 64;
}

/* ---- the job ---- */

/* Exact scores of the candidates whose state is WANT, document by document (each document
   row streams once; the job's queries stay in cache); their state becomes DONE. */
enum { PAIR_OUT = 0, PAIR_WANT = 1, PAIR_DONE = 2 };
static void score_pairs(struct screen_ctx *cx, struct mieb_screen_scratch *sc, unsigned char *state)
{
    int64_t m = cx->m, n = cx->n, K = cx->K;
    int32_t *start = sc->start, *fill = sc->fill, *pair_q = sc->pair_q, *pair_dst = sc->pair_dst;
    const int64_t *qoff = sc->qoff;
    memset(start, 0, sizeof(int32_t) * (size_t)(n + 1));
    memset(fill, 0, sizeof(int32_t) * (size_t)(n + 1));
    /* counting sort of the wanted (query, document) pairs by document; queries stay ascending */
    for (int64_t q = 0; q < m; q++)
        for (int32_t t = 0; t < cx->lists[q].n; t++)
            start[cx->lists[q].idx[t] + 1] += state[qoff[q] + t] == PAIR_WANT;
    for (int64_t j = 0; j < n; j++)
        start[j + 1] += start[j];
    for (int64_t q = 0; q < m; q++)
        for (int32_t t = 0; t < cx->lists[q].n; t++) {
            if (state[qoff[q] + t] != PAIR_WANT)
                continue;
            int32_t j = cx->lists[q].idx[t];
            int32_t at = start[j] + fill[j]++;
            pair_q[at] = (int32_t)q;
            pair_dst[at] = (int32_t)(qoff[q] + t);
            state[qoff[q] + t] = PAIR_DONE;
        }
    for (int64_t j = 0; j < n; j++) {
        int32_t c = start[j + 1] - start[j];
        if (!c)
            continue;
        mieb_canon_dot_rows(cx->D + j * K, cx->Q, K, pair_q + start[j], c, K, sc->tmp);
        for (int32_t t = 0; t < c; t++)
            sc->exact[pair_dst[start[j] + t]] = sc->tmp[t];
    }
}

/* Query q's tau from exact scores: the entries with lb >= tau (at least k of them when tau is
   the k-th largest lb) are scored first; the k-th largest of their exact scores is at most
   the k-th best score (any k documents' k-th largest is) and at least tau, so it is a valid
   tau, and a tighter one: the window around tau becomes one-sided. Entries whose ub falls
   below it leave; the rest are wanted. Returns 0 when out of memory. */
static int exact_tau(struct screen_ctx *cx, struct mieb_screen_scratch *sc, int64_t q, unsigned char *state)
{
    const struct screen_list *l = &cx->lists[q];
    unsigned char *st = state + sc->qoff[q];
    float *ex = sc->exact + sc->qoff[q], tau = cx->tau[q];
    int32_t got = 0;
    for (int32_t t = 0; t < l->n; t++)
        got += st[t] == PAIR_DONE;
    if (got >= cx->k) {
        if (!grow((void **)&sc->skeys, &sc->skeys_cap, got, sizeof(uint32_t)) ||
            !grow((void **)&sc->sel, &sc->sel_cap, got, sizeof(float)))
            return 0;
        int32_t w = 0;
        for (int32_t t = 0; t < l->n; t++)
            if (st[t] == PAIR_DONE)
                sc->sel[w++] = ex[t];
        float t2 = mieb_screen_kth_lb(sc->sel, w, cx->k, cx->hist, sc->skeys);
        tau = t2 > tau ? t2 : tau;
    }
    cx->tau[q] = tau;
    for (int32_t t = 0; t < l->n; t++)
        st[t] = !(l->ub[t] >= tau) ? PAIR_OUT : st[t] == PAIR_DONE ? PAIR_DONE : PAIR_WANT;
    return 1;
}

/* Exact scores of the surviving candidates (screen.c's comment: tau from exact scores first,
   then the rest), then each query's best k. */
static mieb_status rescore(struct screen_ctx *cx, struct mieb_screen_scratch *sc, int64_t base, float *out_s,
                           int64_t *out_i, int64_t *out_n, struct mieb_screen_stats *stats)
{
    int64_t m = cx->m, n = cx->n, k = cx->k;
    int64_t P = 0;
    for (int64_t q = 0; q < m; q++)
        P += cx->lists[q].n;
    if (!grow((void **)&sc->start, &sc->start_cap, n + 1, sizeof(int32_t)) ||
        !grow((void **)&sc->fill, &sc->fill_cap, n + 1, sizeof(int32_t)) ||
        !grow((void **)&sc->tmp, &sc->tmp_cap, m + 1, sizeof(float)) ||
        !grow((void **)&sc->qoff, &sc->qoff_cap, m + 1, sizeof(int64_t)) ||
        !grow((void **)&sc->pair_q, &sc->pair_q_cap, P + 1, sizeof(int32_t)) ||
        !grow((void **)&sc->pair_dst, &sc->pair_dst_cap, P + 1, sizeof(int32_t)) ||
        !grow((void **)&sc->state, &sc->state_cap, P + 1, 1) ||
        !grow((void **)&sc->exact, &sc->exact_cap, P + 1, sizeof(float)))
        return mieb_fail(MIEB_ERR_OOM, "screened top-k: %lld candidate pairs", (long long)P);
    unsigned char *state = sc->state;
    float *exact = sc->exact;
    int64_t *qoff = sc->qoff;
    for (int64_t q = 0, off = 0; q < m; q++) {
        qoff[q] = off;
        for (int32_t t = 0; t < cx->lists[q].n; t++) /* first the entries that set tau */
            state[off + t] = cx->lists[q].lb[t] >= cx->tau[q] ? PAIR_WANT : PAIR_OUT;
        off += cx->lists[q].n;
    }
    score_pairs(cx, sc, state);
    for (int64_t q = 0; q < m; q++)
        if (!cx->overflow[q] && !exact_tau(cx, sc, q, state))
            return mieb_fail(MIEB_ERR_OOM, "screened top-k: selection of %lld", (long long)cx->lists[q].n);
    score_pairs(cx, sc, state);
    int64_t scored = 0;
    for (int64_t t = 0; t < P; t++)
        scored += state[t] == PAIR_DONE;
    /* each query's best k from its candidates, in row order, as the exact path selects */
    if (sc->res_cap < 2 * k) {
        free(sc->res_s);
        free(sc->res_i);
        sc->res_s = malloc(sizeof(float) * (size_t)(2 * k));
        sc->res_i = malloc(sizeof(int64_t) * (size_t)(2 * k));
        sc->res_cap = sc->res_s && sc->res_i ? 2 * k : 0;
        if (!sc->res_cap)
            return mieb_fail(MIEB_ERR_OOM, "screened top-k: reservoir of %lld", (long long)k);
    }
    for (int64_t q = 0; q < m; q++) {
        if (cx->overflow[q])
            continue;
        struct mieb_topk_res r;
        mieb_topk_res_init(&r, sc->res_s, sc->res_i, k);
        const struct screen_list *l = &cx->lists[q];
        for (int32_t t = 0; t < l->n; t++) /* scored and not out (ub >= the exact tau) */
            if (state[qoff[q] + t] == PAIR_DONE && l->ub[t] >= cx->tau[q])
                mieb_topk_res_push(&r, exact[qoff[q] + t], base + l->idx[t]);
        int64_t got = mieb_topk_res_finish(&r);
        memcpy(out_s + q * k, r.score, sizeof(float) * (size_t)got);
        memcpy(out_i + q * k, r.idx, sizeof(int64_t) * (size_t)got);
        out_n[q] = got;
    }
    if (stats)
        stats->candidates += scored;
    return MIEB_OK;
}

mieb_status mieb_screen_topk(struct mieb_screen_scratch **scp, const float *Q, int64_t m, const float *D,
                             int64_t n, int64_t K, int64_t k, int64_t base, const float *floor, size_t budget,
                             float *out_s,
                             int64_t *out_i, int64_t *out_n, int64_t *overflow, int64_t *n_overflow, int *aborted,
                             struct mieb_screen_stats *stats)
{
    *n_overflow = 0;
    *aborted = 0;
    if (m <= 0 || k <= 0)
        return MIEB_OK;
    if (n > INT32_MAX || m > INT32_MAX / 2 || K <= 0)
        return mieb_fail(MIEB_ERR_INTERNAL, "screened top-k: %lld x %lld x %lld is out of range", (long long)m,
                         (long long)n, (long long)K);
    if (!*scp && !(*scp = calloc(1, sizeof **scp)))
        return mieb_fail(MIEB_ERR_OOM, "screened top-k: scratch");
    struct mieb_screen_scratch *sc = *scp;
    struct screen_ctx cx = {0};
    mieb_status st = MIEB_OK;
    cx.m = m;
    cx.m_pad = (m + 31) / 32 * 32;
    cx.n = n;
    cx.K = K;
    cx.KP = (K + SCREEN_KSTEP - 1) / SCREEN_KSTEP * SCREEN_KSTEP;
    cx.k = k;
    cx.Q = Q;
    cx.D = D;
    cx.s_abs = (float)((double)(K + 64) * 0x1p-125 * SCREEN_MARGIN);
    cx.budget = budget;
    if (!reserve_queries(sc, m, cx.m_pad))
        return mieb_fail(MIEB_ERR_OOM, "screened top-k: state of %lld queries", (long long)m);
    cx.lists = sc->lists;
    cx.keys = sc->keys;
    cx.keys_cap = sc->keys_cap;
    cx.overflow = sc->overflow;
    cx.alpha = sc->alpha;
    cx.beta = sc->beta;
    cx.tau = sc->tau;
    memset(cx.overflow, 0, (size_t)m);
    for (int64_t q = 0; q < cx.m_pad; q++) {
        cx.alpha[q] = cx.beta[q] = 1.0f;
        /* padding queries admit nothing; a floor refuses what is below it (screen.h) */
        cx.tau[q] = q >= m ? INFINITY : floor && !isnan(floor[q]) ? floor[q] : -INFINITY;
    }
    int32_t cap0 = (int32_t)SCREEN_CAP0(k);
    for (int64_t q = 0; q < m; q++) {
        struct screen_list *l = &cx.lists[q];
        size_t bytes = SCREEN_ENTRY_BYTES * ((size_t)cap0 + SCREEN_SLACK);
        l->n = 0;
        l->cut_at = (int32_t)SCREEN_FIRST_CUT(k);
        if (l->cap != cap0) { /* a list grown by an earlier job starts small again */
            if (cx.used + bytes > cx.budget || !mieb_screen_list_resize(l, cap0)) {
                mieb_screen_overflow_query(&cx, q); /* no room: the exact path scores it */
                continue;
            }
        } else if (cx.used + bytes > cx.budget) {
            mieb_screen_overflow_query(&cx, q);
            continue;
        }
        cx.used += bytes;
    }
    enum screen_kernel kern = kernel_for(mieb_screen_all_floored(floor, m));
    if (stats)
        stats->kernel = name_of(kern);
    st = SCREEN_KERNEL_IS_INT8(kern) ? mieb_screen_i8_pass(&cx, kern, &sc->ibuf)
                                     : mieb_screen_pass(&cx, kern, &sc->buf);
    if (st != MIEB_OK)
        goto done;
    if (cx.aborted) {
        *aborted = 1;
        if (stats)
            stats->aborted++;
        goto done;
    }
    for (int64_t q = 0; q < m; q++)
        if (!cx.overflow[q] && !mieb_screen_tighten(&cx, q, 1))
            mieb_screen_overflow_query(&cx, q);
    st = rescore(&cx, sc, base, out_s, out_i, out_n, stats);
    for (int64_t q = 0; q < m && st == MIEB_OK; q++)
        if (cx.overflow[q])
            overflow[(*n_overflow)++] = q;
    if (stats) {
        stats->pairs += m * n;
        stats->overflowed += *n_overflow;
    }
done:
    sc->keys = cx.keys;
    sc->keys_cap = cx.keys_cap;
    return st;
}
