/**
 * test_kernels_emu.cpp - runs the real kernel bodies of kernels/ .cu files on the CPU thread
 * emulator (cuda_emu.h) and compares them with plain scalar references.
 *
 * This is how the kernels' logic (radix selection, tie rule, warp-synchronous code,
 * segment bounds) is checked on machines without a GPU; tests/gpu/test_cuda_backend.c
 * checks the real thing on a GPU. Built and run by tests/gpu/emu/run_emu.sh, which
 * strips each kernel file's launcher (the part nvcc alone can compile) first.
 * Exit status 0 when every comparison matched.
 */
#include "cuda_emu.h"

#include <algorithm>
#include <csignal>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "canon_gemm_kernel.inc"
#include "kmeans_argmin_kernel.inc"
#include "maxsim_kernel.inc"
#include "pair_dot_kernel.inc"
#include "pair_maxsim_kernel.inc"
#include "topk_kernel.inc"
#include "sts_pairs_kernel.inc"
#include "compo_scores_kernel.inc"
#include "logreg_argmax_kernel.inc"
#include "logreg_pointwise_kernel.inc"
#include "screen_int8_kernel.inc"

static int failures, checks;

#define EXPECT(cond, ...)                                                \
    do {                                                                 \
        checks++;                                                        \
        if (!(cond)) {                                                   \
            if (failures++ < 20) {                                       \
                fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                            \
                fputc('\n', stderr);                                     \
            }                                                            \
        }                                                                \
    } while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* host/canon/canon_dot.h's definition, written out from its comment: 16 fma chains over
 * k = l, l + 16, ... (elements past K are zeros, in the last step only), then the tree. */
static float ref_canon_dot(const float *a, const float *b, int64_t K)
{
    float acc[16] = {0};
    for (int64_t c = 0; c < K; c += 16)
        for (int l = 0; l < 16; l++)
            acc[l] = std::fma(c + l < K ? a[c + l] : 0.0f, c + l < K ? b[c + l] : 0.0f, acc[l]);
    float s8[8], s4[4], s2[2];
    for (int l = 0; l < 8; l++)
        s8[l] = acc[l] + acc[l + 8];
    for (int l = 0; l < 4; l++)
        s4[l] = s8[l] + s8[l + 4];
    for (int l = 0; l < 2; l++)
        s2[l] = s4[l] + s4[l + 2];
    return s2[0] + s2[1];
}

static bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/* Random floats of mixed signs and magnitudes (sums whose order shows in the last bits);
 * kind 1 adds products that underflow to -0 (the sign of a zero score must follow the
 * definition too), kind 2 is all zeros, kind 3 all -1e-30 (with B all 1e-30: every product,
 * lane and score is -0, which one fma(0, 0, acc) past K would turn into +0). */
static float rnd_value(int kind)
{
    if (kind == 2)
        return 0.0f;
    if (kind == 3)
        return -1e-30f;
    if (kind == 1 && rnd() % 4 == 0)
        return (rnd() & 1 ? 1e-30f : -1e-30f);
    return (float)((int)(rnd() % 2000001) - 1000000) / 1000000.0f * (float)(1 << (rnd() % 5));
}

/* canon_gemm_kernel against the definition, bit for bit, over m x n x K with rows padded
 * (lda, ldb > K) and C's leading dimension wider than n. */
static void check_canon_gemm(int64_t m, int64_t n, int64_t K, int kind)
{
    const int64_t lda = K + 3, ldb = K + 5, ldc = n + 2;
    std::vector<float> A((size_t)(m * lda + 1)), B((size_t)(n * ldb + 1)), C((size_t)(m * ldc + 1), 7.0f);
    for (auto &x : A)
        x = rnd_value(kind);
    for (auto &x : B)
        x = kind == 3 || (kind == 1 && rnd() % 4 == 0) ? 1e-30f : rnd_value(kind);
    emu_launch({(unsigned)((n + CG_BN - 1) / CG_BN), (unsigned)((m + CG_BM - 1) / CG_BM), 1}, CG_THREADS,
               [&] { canon_gemm_kernel(m, n, K, A.data(), lda, B.data(), ldb, C.data(), ldc); });
    int64_t bad = 0, untouched = 0, naive_differs = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            const float want = ref_canon_dot(&A[(size_t)(i * lda)], &B[(size_t)(j * ldb)], K);
            float naive = 0.0f; /* a plain left-to-right sum: shows the inputs do tell orders apart */
            for (int64_t k = 0; k < K; k++)
                naive = std::fma(A[(size_t)(i * lda + k)], B[(size_t)(j * ldb + k)], naive);
            naive_differs += !same_bits(naive, want);
            if (!same_bits(C[(size_t)(i * ldc + j)], want) && bad++ < 3)
                fprintf(stderr, "  canon_gemm %lldx%lldx%lld: C[%lld][%lld] = %a, definition %a\n", (long long)m,
                        (long long)n, (long long)K, (long long)i, (long long)j, C[(size_t)(i * ldc + j)], want);
        }
        for (int64_t j = n; j < ldc; j++)
            untouched += C[(size_t)(i * ldc + j)] != 7.0f;
    }
    EXPECT(bad == 0, "canon_gemm %lldx%lldx%lld kind %d: %lld of %lld scores differ from the definition",
           (long long)m, (long long)n, (long long)K, kind, (long long)bad, (long long)(m * n));
    EXPECT(untouched == 0, "canon_gemm: %lld cells past n written", (long long)untouched);
    printf("canon gemm %lldx%lldx%lld (kind %d): %s (a sequential sum differs in %lld of %lld)\n", (long long)m,
           (long long)n, (long long)K, kind, bad || untouched ? "MISMATCH" : "bit-identical", (long long)naive_differs,
           (long long)(m * n));
}

/* The top-k of one call, as cuda_topk_block.c drives the kernel: tiles of `tile`
 * columns, chunks of `chunk` rows, ping-pong state, then a per-row descending sort. */
static std::vector<uint64_t> emu_topk(const std::vector<float> &S, int nq, int n, int ke, int tile, int chunk,
                                      const std::vector<float> *floor = nullptr)
{
    std::vector<uint64_t> st[2] = {std::vector<uint64_t>((size_t)nq * ke, 0), std::vector<uint64_t>((size_t)nq * ke, 0)};
    std::vector<uint64_t> thr(nq, 0);
    if (floor) /* as cuda_topk_block.c starts topk_block_floor */
        for (int q = 0; q < nq; q++)
            thr[q] = mieb_topk_floor_thr((*floor)[q]);
    int cur = 0;
    for (int i0 = 0; i0 < n; i0 += tile) {
        int nc = std::min(tile, n - i0);
        for (int q0 = 0; q0 < nq; q0 += chunk) {
            int nr = std::min(chunk, nq - q0);
            std::vector<float> scores((size_t)nr * nc);
            for (int r = 0; r < nr; r++)
                for (int j = 0; j < nc; j++)
                    scores[(size_t)r * nc + j] = S[(size_t)(q0 + r) * n + i0 + j];
            const uint64_t *in = st[cur].data() + (size_t)q0 * ke;
            uint64_t *out = st[1 - cur].data() + (size_t)q0 * ke;
            uint64_t *th = thr.data() + q0;
            emu_launch({(unsigned)nr, 1, 1}, TOPK_THREADS, [&] {
                topk_update_kernel(scores.data(), nc, nc, (uint32_t)i0, in, out, th, ke);
            });
        }
        cur = 1 - cur;
    }
    for (int q = 0; q < nq; q++)
        std::sort(st[cur].begin() + (size_t)q * ke, st[cur].begin() + (size_t)(q + 1) * ke, std::greater<uint64_t>());
    return st[cur];
}

/* Scalar reference with the backend's tie rule: score descending, index ascending. */
static std::vector<std::pair<float, int64_t>> ref_topk(const float *row, int n, int ke)
{
    std::vector<std::pair<float, int64_t>> v;
    for (int j = 0; j < n; j++)
        v.push_back({row[j], j});
    std::stable_sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    v.resize(ke);
    return v;
}

static void check_topk(const char *name, int kind, int nq, int n, int ke, int tile, int chunk)
{
    std::vector<float> S((size_t)nq * n);
    for (auto &s : S) {
        if (kind == 0) /* heavy ties: multiples of 1/4 in [-1, 1], both zeros */
            s = (rnd() % 9) * 0.25f - 1.0f;
        else if (kind == 1)
            s = (float)((int)(rnd() % 2000001) - 1000000) / 1048576.0f;
        else /* all equal: the index alone decides */
            s = 0.5f;
        if (kind == 0 && s == 0.0f && (rnd() & 1))
            s = -0.0f;
    }
    auto got = emu_topk(S, nq, n, ke, tile, chunk);
    int bad = 0;
    for (int q = 0; q < nq; q++) {
        auto ref = ref_topk(&S[(size_t)q * n], n, ke);
        for (int j = 0; j < ke; j++) {
            uint64_t key = got[(size_t)q * ke + j];
            float gs = key ? mieb_topk_key_score(key) : NAN;
            int64_t gi = key ? mieb_topk_key_index(key) : -1;
            if (gs != ref[j].first || gi != ref[j].second) {
                if (bad++ < 3)
                    fprintf(stderr, "  %s q%d rank %d: got (%g, %lld) want (%g, %lld)\n", name, q, j, gs,
                            (long long)gi, ref[j].first, (long long)ref[j].second);
            }
        }
    }
    EXPECT(bad == 0, "%s: %d mismatches (nq %d n %d ke %d tile %d chunk %d)", name, bad, nq, n, ke, tile, chunk);
    printf("topk %-28s nq %2d n %5d ke %5d tile %5d: %s\n", name, nq, n, ke, tile, bad ? "MISMATCH" : "ok");
}

/* topk_block_floor's kernel side: each row's threshold starts at its floor's key. Floors
 * per row: none (-inf, NaN), the score at a random rank (ties with it included), and
 * above every score (nothing kept). The kept keys must be exactly the reference list's
 * entries not below the floor, the other slots empty. */
static void check_topk_floor(const char *name, int kind, int nq, int n, int ke, int tile, int chunk)
{
    std::vector<float> S((size_t)nq * n), fl(nq);
    for (auto &s : S)
        s = kind == 0 ? (rnd() % 9) * 0.25f - 1.0f : (float)((int)(rnd() % 2000001) - 1000000) / 1048576.0f;
    for (int q = 0; q < nq; q++) {
        auto all = ref_topk(&S[(size_t)q * n], n, n);
        switch (q % 5) {
        case 0: fl[q] = -INFINITY; break;
        case 1: fl[q] = NAN; break;
        case 2: fl[q] = all[rnd() % (unsigned)n].first; break;          /* anywhere, often past ke */
        case 3: fl[q] = all[rnd() % (unsigned)std::min(n, ke)].first; break; /* inside the top ke */
        default: fl[q] = all[0].first + 1.0f; break;
        }
    }
    auto got = emu_topk(S, nq, n, ke, tile, chunk, &fl);
    int bad = 0;
    for (int q = 0; q < nq; q++) {
        auto ref = ref_topk(&S[(size_t)q * n], n, ke);
        int head = 0;
        while (head < ke && (!(fl[q] > -INFINITY) || !(ref[head].first < fl[q])))
            head++;
        for (int j = 0; j < ke; j++) {
            uint64_t key = got[(size_t)q * ke + j];
            bool ok = j < head ? key && mieb_topk_key_score(key) == ref[j].first && mieb_topk_key_index(key) == ref[j].second
                               : key == 0;
            if (!ok && bad++ < 3)
                fprintf(stderr, "  %s q%d (floor %g, head %d) rank %d: got key %llx\n", name, q, fl[q], head, j,
                        (unsigned long long)key);
        }
    }
    EXPECT(bad == 0, "%s: %d mismatches (nq %d n %d ke %d tile %d)", name, bad, nq, n, ke, tile);
    printf("topk floor %-22s nq %2d n %5d ke %5d tile %5d: %s\n", name, nq, n, ke, tile, bad ? "MISMATCH" : "ok");
}

/* A tile with no key above the threshold leaves the threshold (and the kept set) as it was:
 * reset to 0, the next tile would take the uncompacted path over all its columns. */
static void check_topk_threshold_kept()
{
    const int ke = 5, nc = 100;
    std::vector<float> a(nc), b(nc, -1.0f);
    for (int j = 0; j < nc; j++)
        a[j] = (float)(rnd() % 1000) / 1000.0f;
    std::vector<uint64_t> s0(ke, 0), s1(ke, 0), s2(ke, 0);
    uint64_t th = 0;
    emu_launch({1, 1, 1}, TOPK_THREADS, [&] { topk_update_kernel(a.data(), nc, nc, 0, s0.data(), s1.data(), &th, ke); });
    const uint64_t th1 = th;
    emu_launch({1, 1, 1}, TOPK_THREADS, [&] { topk_update_kernel(b.data(), nc, nc, nc, s1.data(), s2.data(), &th, ke); });
    std::sort(s1.begin(), s1.end());
    std::sort(s2.begin(), s2.end());
    EXPECT(th1 != 0 && th == th1 && s1 == s2, "threshold after a tile without candidates: %llx, was %llx",
           (unsigned long long)th, (unsigned long long)th1);
    printf("topk threshold kept over a tile without candidates: %s\n", th1 != 0 && th == th1 && s1 == s2 ? "ok" : "MISMATCH");
}

static void check_maxsim()
{
    /* 3 query items (2, 0, 5 tokens) x 4 doc items (3, 1, 0, 6 tokens) */
    const int64_t q_off[] = {7, 9, 9, 14}; /* absolute rows: the chunk starts at row 7 */
    const int64_t d_off[] = {0, 3, 4, 4, 10};
    const int nq = 3, nd = 4, tq = 7, td = 10, ld = 12;
    std::vector<float> tok((size_t)tq * ld);
    for (auto &x : tok)
        x = (float)((int)(rnd() % 2001) - 1000) / 64.0f;
    std::vector<float> out((size_t)nq * nd, -1.0f);
    emu_launch({(unsigned)nd, (unsigned)nq, 1}, MAXSIM_WARPS * 32,
               [&] { maxsim_kernel(tok.data(), ld, q_off, 7, d_off, out.data(), nd); });
    int bad = 0;
    for (int i = 0; i < nq; i++)
        for (int j = 0; j < nd; j++) {
            float total = 0.0f; /* mieb_cpu_maxsim_row's order */
            if (d_off[j + 1] > d_off[j])
                for (int64_t t = q_off[i] - 7; t < q_off[i + 1] - 7; t++) {
                    float m = tok[(size_t)t * ld + d_off[j]];
                    for (int64_t u = d_off[j] + 1; u < d_off[j + 1]; u++)
                        m = tok[(size_t)t * ld + u] > m ? tok[(size_t)t * ld + u] : m;
                    total += m;
                }
            bad += out[(size_t)i * nd + j] != total;
        }
    (void)td;
    EXPECT(bad == 0, "maxsim: %d of %d item scores differ", bad, nq * nd);
    printf("maxsim reduction: %s\n", bad ? "MISMATCH" : "ok");
}

static void check_pairs()
{
    const int dim = 37, nqr = 6, ndr = 9, np = 21; /* 21 pairs: the last block's second half-warps idle */
    std::vector<float> q((size_t)nqr * dim), d((size_t)ndr * dim);
    for (auto &x : q)
        x = rnd_value(0);
    for (auto &x : d)
        x = rnd_value(0);
    std::vector<int64_t> qi(np), di(np);
    for (int p = 0; p < np; p++) {
        qi[p] = rnd() % 3; /* items for MaxSim (offsets below), rows for dot */
        di[p] = rnd() % 4;
    }
    std::vector<float> out(np, -7.0f);
    emu_launch({(unsigned)((np + PAIR_DOT_PER_BLOCK - 1) / PAIR_DOT_PER_BLOCK), 1, 1}, PAIR_DOT_WARPS * 32,
               [&] { pair_dot_kernel(q.data(), d.data(), dim, qi.data(), di.data(), np, out.data()); });
    int bad = 0;
    for (int p = 0; p < np; p++)
        bad += !same_bits(out[p], ref_canon_dot(&q[(size_t)qi[p] * dim], &d[(size_t)di[p] * dim], dim));
    EXPECT(bad == 0, "pair_dot: %d of %d pairs differ", bad, np);
    printf("pair dot: %s\n", bad ? "MISMATCH" : "ok");

    const int64_t q_off[] = {0, 2, 2, 6}; /* item 1 has no tokens */
    const int64_t d_off[] = {0, 3, 3, 8, 9}; /* item 1 has no tokens */
    emu_launch({(unsigned)np, 1, 1}, PAIR_MAXSIM_THREADS, [&] {
        pair_maxsim_kernel(q.data(), q_off, d.data(), d_off, dim, qi.data(), di.data(), out.data());
    });
    bad = 0;
    for (int p = 0; p < np; p++) {
        float total = 0.0f;
        if (d_off[di[p] + 1] > d_off[di[p]])
            for (int64_t t = q_off[qi[p]]; t < q_off[qi[p] + 1]; t++) {
                float m = -INFINITY;
                for (int64_t u = d_off[di[p]]; u < d_off[di[p] + 1]; u++) {
                    float s = ref_canon_dot(&q[(size_t)t * dim], &d[(size_t)u * dim], dim);
                    m = s > m ? s : m;
                }
                total += m;
            }
        bad += !same_bits(out[p], total);
    }
    EXPECT(bad == 0, "pair_maxsim: %d of %d pairs differ", bad, np);
    printf("pair maxsim: %s\n", bad ? "MISMATCH" : "ok");
}

/* The CPU reference's scan (mieb_cpu_kmeans_assign): strictly smaller replaces, from j = 0. */
static int32_t ref_argmin(const float *srow, const float *csq, int k)
{
    float best = csq[0] + srow[0];
    int32_t lab = 0;
    for (int j = 1; j < k; j++) {
        float d = csq[j] + srow[j];
        if (d < best)
            best = d, lab = j;
    }
    return lab;
}

/* kind 0: quarter steps in [-2, 2] (exact sums, many ties, both zeros); 1: random;
 * 2: all equal; 3: ties plus NaN and infinities (NaN at column 0 in some rows). */
static void check_kmeans_argmin(const char *name, int kind, int n, int k, int ld)
{
    std::vector<float> s((size_t)n * ld, -1e30f), csq(k); /* padding: wins if read */
    for (int j = 0; j < k; j++)
        csq[j] = kind == 1 ? (float)(rnd() % 1000) / 7.0f : kind == 2 ? 1.0f : (float)(rnd() % 5) * 0.5f;
    for (int r = 0; r < n; r++)
        for (int j = 0; j < k; j++) {
            float v = kind == 1 ? (float)((int)(rnd() % 2000001) - 1000000) / 3000.0f
                      : kind == 2 ? -1.0f
                                  : (float)((int)(rnd() % 17) - 8) * 0.25f;
            if (kind == 0 && v == 0.0f && (rnd() & 1))
                v = -0.0f;
            if (kind == 3) {
                uint32_t u = rnd() % 16;
                v = u == 0 ? NAN : u == 1 ? INFINITY : u == 2 ? -INFINITY : v;
                if (j == 0 && r % 4 == 1)
                    v = NAN;
            }
            s[(size_t)r * ld + j] = v;
        }
    if (kind == 3 && n > 2 && k > 1) /* a row of only NaN, and one of only +inf */
        for (int j = 0; j < k; j++)
            s[(size_t)0 * ld + j] = NAN, s[(size_t)2 * ld + j] = INFINITY;
    std::vector<int32_t> got(n, -7);
    const int rows_per_block = KM_WARPS;
    emu_launch({(unsigned)((n + rows_per_block - 1) / rows_per_block), 1, 1}, KM_WARPS * 32,
               [&] { kmeans_argmin_kernel(s.data(), ld, csq.data(), n, k, got.data()); });
    int bad = 0;
    for (int r = 0; r < n; r++) {
        int32_t want = ref_argmin(&s[(size_t)r * ld], csq.data(), k);
        if (got[r] != want && bad++ < 3)
            fprintf(stderr, "  kmeans argmin %s row %d: got %d want %d\n", name, r, got[r], want);
    }
    EXPECT(bad == 0, "kmeans argmin %s: %d of %d rows differ (k %d)", name, bad, n, k);
    printf("kmeans argmin %-24s n %3d k %5d: %s\n", name, n, k, bad ? "MISMATCH" : "ok");
}

static void on_alarm(int) 
{
    static const char msg[] = "emulated kernels: timed out (a warp intrinsic in divergent code deadlocks here)\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(2);
}

/* STS and compositionality: the kernels' threads against the same pair_math.h body run in
 * a plain loop (the body itself is checked against numpy/sklearn by tests/py/test_sts.py
 * and test_compositionality.py): this checks the indexing, bounds and launch shapes. */
static void check_sts_pairs(int64_t n, int64_t dim, int f64, int cosine)
{
    std::vector<float> a((size_t)(n * dim) + 1), b((size_t)(n * dim) + 1);
    for (auto &v : a)
        v = (float)((int)(rnd() % 9) - 4) / 4.0f;
    for (auto &v : b)
        v = (float)((int)(rnd() % 9) - 4) / 4.0f;
    std::vector<double> g(4 * (size_t)n + 4, -7.0);
    double *cos = g.data(), *man = cos + n + 1, *euc = man + n + 1, *model = euc + n + 1;
    unsigned blocks = (unsigned)((n + STS_THREADS - 1) / STS_THREADS);
    emu_launch({blocks, 1, 1}, STS_THREADS, [&] {
        sts_pairs_kernel(a.data(), b.data(), n, dim, f64, cosine, cos, man, euc, model);
    });
    int bad = 0;
    for (int64_t p = 0; p < n; p++) {
        const float *x = a.data() + p * dim, *y = b.data() + p * dim;
        mieb_pm_sts r = f64 ? mieb_pm_sts_sklearn_f64(x, y, dim) : mieb_pm_sts_sklearn_f32(x, y, dim);
        double m = mieb_pm_torch_pair_sim(x, y, dim, cosine);
        bad += !(cos[p] == r.cosine && man[p] == r.manhattan && euc[p] == r.euclidean && model[p] == m);
    }
    /* the sentinel after the last pair of each column stays untouched */
    bad += cos[n] != -7.0 || man[n] != -7.0 || euc[n] != -7.0 || model[n] != -7.0;
    EXPECT(bad == 0, "sts_pairs n=%lld dim=%lld f64=%d cosine=%d: %d mismatches", (long long)n, (long long)dim, f64,
           cosine, bad);
}

static void check_compo(int64_t ns, int64_t ni, int64_t nt, int64_t dim, int dti, int dtt)
{
    std::vector<float> img((size_t)(ns * ni * dim) + 1), txt((size_t)(ns * nt * dim) + 1);
    for (auto &v : img)
        v = mieb_pm_round_to(dti, (float)((int)(rnd() % 21) - 10) / 7.0f);
    for (auto &v : txt)
        v = mieb_pm_round_to(dtt, (float)((int)(rnd() % 21) - 10) / 7.0f);
    std::vector<float> norms((size_t)(ns * (ni + nt))), scores((size_t)(ns * ni * nt) + 1, -7.0f);
    int64_t rows = ns * (ni + nt), cells = ns * ni * nt;
    int sdt = dti == dtt ? dti : 0;
    emu_launch({(unsigned)((rows + COMPO_THREADS - 1) / COMPO_THREADS), 1, 1}, COMPO_THREADS, [&] {
        compo_norms_kernel(img.data(), ns * ni, dti, txt.data(), ns * nt, dtt, dim, norms.data());
    });
    emu_launch({(unsigned)((cells + COMPO_THREADS - 1) / COMPO_THREADS), 1, 1}, COMPO_THREADS, [&] {
        compo_cells_kernel(img.data(), dti, txt.data(), dtt, ns, ni, nt, dim, norms.data(), sdt, scores.data());
    });
    int bad = 0;
    for (int64_t s = 0; s < ns; s++)
        for (int64_t i = 0; i < ni; i++)
            for (int64_t j = 0; j < nt; j++) {
                const float *u = img.data() + (s * ni + i) * dim, *v = txt.data() + (s * nt + j) * dim;
                float want = mieb_pm_compo_score(u, mieb_pm_torch_norm(u, dim, dti), dti, v,
                                                 mieb_pm_torch_norm(v, dim, dtt), dtt, dim, sdt);
                bad += scores[(size_t)((s * ni + i) * nt + j)] != want;
            }
    bad += scores[(size_t)cells] != -7.0f;
    EXPECT(bad == 0, "compo %lldx%lldx%lld dim=%lld dtypes %d/%d: %d mismatches", (long long)ns, (long long)ni,
           (long long)nt, (long long)dim, dti, dtt, bad);
}

/* ---- logistic regression (kernels/logreg_pointwise.cu, logreg_argmax.cu) ---- */

/* The CPU reference's multiclass row (host/emulation/logreg_loss.c rows_fn, sklearn's Cython
 * half-multinomial) written out with plain operators, except that the double sum of the
 * exps is taken in the kernel's order: per thread t < G over k = t, t + G, ..., a butterfly
 * in each warp of 32, the warps in order. Summing in a different order than the CPU is the
 * one difference the kernel is allowed (it changes se in the last bits); replaying that
 * order makes every output comparable bit for bit, so a slip in the indexing, the max or
 * the one-hot shows up as a mismatch instead of hiding inside a tolerance. *se_seq gets
 * the CPU's own k-order sum, to check that the tree order stays a rounding away from it. */
static void ref_softmax_row(const float *r, int K, int y, float fn, int G, float *grad, float *loss, double *se_tree,
                            double *se_seq)
{
    double mx = r[0];
    for (int k = 1; k < K; k++)
        if (mx < r[k])
            mx = r[k];
    std::vector<float> e(K);
    for (int k = 0; k < K; k++)
        e[k] = (float)exp((double)r[k] - mx);
    double seq = 0.0;
    for (int k = 0; k < K; k++)
        seq += e[k];
    std::vector<double> part(G, 0.0);
    for (int t = 0; t < G; t++)
        for (int k = t; k < K; k += G)
            part[t] += e[k];
    double se = 0.0;
    for (int w = 0; w < G / 32; w++) {
        double v[32];
        for (int l = 0; l < 32; l++)
            v[l] = part[w * 32 + l];
        for (int m = 16; m >= 1; m >>= 1) {
            double nv[32];
            for (int l = 0; l < 32; l++)
                nv[l] = v[l] + v[l ^ m];
            std::memcpy(v, nv, sizeof v);
        }
        se = w == 0 ? v[0] : se + v[0];
    }
    float sum_exps = (float)se, max_value = (float)mx;
    if (y >= 0 && y < K) {
        float l = (float)(log((double)sum_exps) + (double)max_value);
        *loss = l - r[y];
    } else {
        *loss = NAN; /* the kernel's answer to a class out of range */
    }
    for (int k = 0; k < K; k++) {
        float q = e[k] / sum_exps;
        grad[k] = (q - (float)(y == k)) / fn;
    }
    *se_tree = se;
    *se_seq = seq;
}

/* The CPU reference's binomial point (logreg_loss.c binomial_point), then / fn. */
static float ref_binomial(double yt, float r, float fn, float *loss)
{
    double rp = (double)r, lo, gr;
    if (rp <= -37) {
        gr = exp(rp);
        lo = gr - yt * rp;
        gr -= yt;
    } else if (rp <= -2) {
        gr = exp(rp);
        lo = log1p(gr) - yt * rp;
        gr = ((1 - yt) * gr - yt) / (1 + gr);
    } else if (rp <= 18) {
        gr = exp(-rp);
        lo = log1p(gr) + (1 - yt) * rp;
        gr = ((1 - yt) - yt * gr) / (1 + gr);
    } else {
        gr = exp(-rp);
        lo = gr + (1 - yt) * rp;
        gr = ((1 - yt) - yt * gr) / (1 + gr);
    }
    *loss = (float)lo;
    return (float)gr / fn;
}

/* equal bits, or both NaN (a NaN's payload is not part of the contract) */
static bool same_float(float a, float b)
{
    return (a != a && b != b) || std::memcmp(&a, &b, sizeof a) == 0;
}

static float rnd_uniform(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() % 1000001) / 1000000.0f; }

/* One logit by row kind: 0 random, 1 quarter steps with both zeros (ties), 2 all equal,
 * 3 large magnitudes (exps that underflow), 4 NaN / +-inf sprinkled in. */
static float logit_of(int kind, int r, int k)
{
    switch (kind) {
    case 0: return rnd_uniform(-8.0f, 8.0f);
    case 1: {
        float v = (float)((int)(rnd() % 17) - 8) * 0.25f;
        return v == 0.0f && (rnd() & 1) ? -0.0f : v;
    }
    case 2: return 0.75f;
    case 3: return rnd_uniform(-300.0f, 300.0f);
    default: {
        uint32_t u = rnd() % 12;
        if (k == 0 && r % 3 == 0)
            return NAN; /* NaN at k = 0: the maximum itself is NaN */
        return u == 0 ? NAN : u == 1 ? INFINITY : u == 2 ? -INFINITY : rnd_uniform(-5.0f, 5.0f);
    }
    }
}

/* grid 0: as the launcher sizes it; otherwise that many blocks (rows grid-strided) */
static void check_softmax(int K, int n, unsigned grid)
{
    const int ld = K + 3, G = lrp_group_size(K);
    const float pad = 12345.0f, fn = (float)n;
    std::vector<float> raw((size_t)n * ld, pad), lossv(n + 1, -7.0f);
    std::vector<int32_t> y(n);
    for (int r = 0; r < n; r++) {
        int kind = r % 5;
        for (int k = 0; k < K; k++)
            raw[(size_t)r * ld + k] = logit_of(kind, r, k);
        if (r == n - 1 && kind != 4) /* a row of -inf only: mx = -inf, every exp NaN */
            for (int k = 0; k < K; k++)
                raw[(size_t)r * ld + k] = -INFINITY;
        y[r] = (int32_t)(rnd() % (uint32_t)K);
    }
    y[1 % n] = K; /* out of range: loss NaN, no one-hot */
    if (n > 7)
        y[7] = -1;
    std::vector<float> in = raw;
    unsigned blocks = grid ? grid : lrp_blocks(n, LRP_THREADS / G);
    emu_launch({blocks, 1, 1}, LRP_THREADS, [&] {
        logreg_softmax_kernel(raw.data(), ld, y.data(), n, K, G, fn, lossv.data());
    });
    int bad = 0, seq_diff = 0;
    double worst = 0.0;
    std::vector<float> want(K);
    for (int r = 0; r < n; r++) {
        float wl;
        double se, seq;
        ref_softmax_row(&in[(size_t)r * ld], K, y[r], fn, G, want.data(), &wl, &se, &seq);
        if (std::isfinite(seq) && seq > 0) {
            double rel = std::fabs(se - seq) / seq;
            worst = std::max(worst, rel);
            seq_diff += se != seq;
        }
        int row_bad = !same_float(lossv[r], wl);
        for (int k = 0; k < K; k++)
            row_bad += !same_float(raw[(size_t)r * ld + k], want[k]);
        for (int k = K; k < ld; k++)
            row_bad += raw[(size_t)r * ld + k] != pad;
        if (row_bad && bad++ < 3)
            fprintf(stderr, "  softmax K %d row %d (kind %d, y %d): loss %.9g want %.9g, %d values differ\n", K, r,
                    r % 5, y[r], lossv[r], wl, row_bad);
    }
    bad += lossv[n] != -7.0f;
    EXPECT(bad == 0, "logreg softmax K %d n %d grid %u: %d rows differ", K, n, blocks, bad);
    /* the tree order may only round differently: a few ulps of K terms */
    EXPECT(worst <= 1e-15 * K, "logreg softmax K %d: tree sum off the k-order sum by %.3g", K, worst);
    printf("logreg softmax K %4d G %3d n %3d grid %3u: %s (se in k order differs in %d rows, rel %.2g)\n", K, G, n,
           blocks, bad ? "MISMATCH" : "ok", seq_diff, worst);
}

static void check_binomial(int n, unsigned grid)
{
    static const float edges[] = {-100.0f, -37.5f, -37.0f, -36.99f, -20.0f, -2.5f, -2.0f, -1.99f, -0.5f, -0.0f,
                                  0.0f,    0.5f,   17.9f,  18.0f,   18.01f, 30.0f, 100.0f, NAN,   INFINITY, -INFINITY};
    const int ne = (int)(sizeof edges / sizeof edges[0]), ld = 2;
    const float fn = (float)n;
    std::vector<float> raw((size_t)n * ld), lossv(n + 1, -7.0f);
    std::vector<int32_t> y(n);
    for (int i = 0; i < n; i++) {
        raw[(size_t)i * ld] = i < 2 * ne ? edges[i % ne] : rnd_uniform(-50.0f, 50.0f);
        raw[(size_t)i * ld + 1] = 12345.0f; /* the stride's gap: untouched */
        y[i] = i < 2 * ne ? i / ne : (int32_t)(rnd() & 1); /* every edge with y = 0 and y = 1 */
    }
    std::vector<float> in = raw;
    unsigned blocks = grid ? grid : lrp_blocks(n, LRP_THREADS);
    emu_launch({blocks, 1, 1}, LRP_THREADS,
               [&] { logreg_binomial_kernel(raw.data(), ld, y.data(), n, fn, lossv.data()); });
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float wl, wg = ref_binomial((double)y[i], in[(size_t)i * ld], fn, &wl);
        bool ok = same_float(raw[(size_t)i * ld], wg) && same_float(lossv[i], wl) && raw[(size_t)i * ld + 1] == 12345.0f;
        if (!ok && bad++ < 3)
            fprintf(stderr, "  binomial row %d raw %g y %d: grad %.9g want %.9g, loss %.9g want %.9g\n", i,
                    in[(size_t)i * ld], y[i], raw[(size_t)i * ld], wg, lossv[i], wl);
    }
    bad += lossv[n] != -7.0f;
    EXPECT(bad == 0, "logreg binomial n %d grid %u: %d rows differ", n, blocks, bad);
    printf("logreg binomial n %4d grid %3u: %s\n", n, blocks, bad ? "MISMATCH" : "ok");
}

/* The CPU reference's predict scan (host/cpu/cpu_logreg.c), written out: a larger value, or
 * the first NaN, replaces. */
static int64_t ref_argmax(const float *s, const float *b, int K)
{
    int64_t best = 0;
    float bv = s[0] + b[0];
    for (int k = 1; k < K; k++) {
        float x = s[k] + b[k];
        if (x > bv || (std::isnan(x) && !std::isnan(bv)))
            bv = x, best = k;
    }
    return best;
}

/* kind 0 random, 1 quarter steps (exact sums, ties, both zeros), 2 all equal, 3 NaN / inf */
static void check_argmax(const char *name, int kind, int K, int n, unsigned grid)
{
    const int ld = K + 1;
    std::vector<float> s((size_t)n * ld, NAN), b(K); /* NaN padding: it would win if read */
    for (int k = 0; k < K; k++)
        b[k] = kind == 0 ? rnd_uniform(-1.0f, 1.0f) : kind == 2 ? 0.5f : (float)((int)(rnd() % 5) - 2) * 0.25f;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < K; k++) {
            float v = kind == 0 ? rnd_uniform(-4.0f, 4.0f) : kind == 2 ? -0.25f : (float)((int)(rnd() % 9) - 4) * 0.25f;
            if (kind == 1 && v == 0.0f && (rnd() & 1))
                v = -0.0f;
            if (kind == 3) {
                uint32_t u = rnd() % 10;
                v = u == 0 ? NAN : u == 1 ? INFINITY : u == 2 ? -INFINITY : v;
                if (k == 0 && r % 4 == 1)
                    v = NAN;
            }
            s[(size_t)r * ld + k] = v;
        }
    if (kind == 3 && n > 3) /* rows of only NaN, only +inf, only -inf */
        for (int k = 0; k < K; k++)
            s[(size_t)0 * ld + k] = NAN, s[(size_t)2 * ld + k] = INFINITY, s[(size_t)3 * ld + k] = -INFINITY;
    std::vector<int64_t> got(n + 1, -7);
    unsigned blocks = grid ? grid : lra_blocks(n, LRA_WARPS);
    emu_launch({blocks, 1, 1}, LRA_WARPS * 32,
               [&] { logreg_argmax_kernel(s.data(), ld, b.data(), n, K, got.data()); });
    int bad = 0;
    for (int r = 0; r < n; r++) {
        int64_t want = ref_argmax(&s[(size_t)r * ld], b.data(), K);
        if (got[r] != want && bad++ < 3)
            fprintf(stderr, "  logreg argmax %s row %d: got %lld want %lld\n", name, r, (long long)got[r],
                    (long long)want);
    }
    bad += got[n] != -7;
    EXPECT(bad == 0, "logreg argmax %s: %d of %d rows differ (K %d)", name, bad, n, K);
    printf("logreg argmax %-22s K %4d n %3d grid %3u: %s\n", name, K, n, blocks, bad ? "MISMATCH" : "ok");
}

/* Binary decisions: v = s + b > 0, with v = +0, -0, tiny, NaN and infinities. */
static void check_binary_decision(int n, unsigned grid)
{
    static const float pairs[][2] = {{0.5f, -0.5f}, {-0.0f, -0.0f}, {0.0f, 0.0f},  {-0.0f, 0.0f},
                                     {1e-30f, 0.0f}, {-1e-30f, 0.0f}, {1e-45f, -0.0f}, {NAN, 1.0f},
                                     {INFINITY, -1.0f}, {-INFINITY, 1.0f}, {0.25f, -0.125f}, {-0.25f, 0.125f}};
    const int np = (int)(sizeof pairs / sizeof pairs[0]), ld = 3;
    std::vector<float> s((size_t)n * ld, NAN);
    std::vector<int64_t> got(n + 1, -7);
    /* one intercept per launch: the fixed pairs run as launches of their own */
    int bad = 0;
    for (int p = 0; p < np; p++) {
        float b = pairs[p][1];
        for (int i = 0; i < n; i++)
            s[(size_t)i * ld] = i % 2 ? pairs[p][0] : rnd_uniform(-1.0f, 1.0f);
        unsigned blocks = grid ? grid : lra_blocks(n, LRA_THREADS);
        std::fill(got.begin(), got.end(), -7);
        emu_launch({blocks, 1, 1}, LRA_THREADS, [&] { logreg_binary_kernel(s.data(), ld, &b, n, got.data()); });
        for (int i = 0; i < n; i++) {
            int64_t want = s[(size_t)i * ld] + b > 0.0f;
            if (got[i] != want && bad++ < 3)
                fprintf(stderr, "  logreg binary s %g b %g: got %lld want %lld\n", s[(size_t)i * ld], b,
                        (long long)got[i], (long long)want);
        }
        bad += got[n] != -7;
    }
    EXPECT(bad == 0, "logreg binary decisions n %d: %d differ", n, bad);
    printf("logreg binary decisions n %d grid %u: %s\n", n, grid, bad ? "MISMATCH" : "ok");
}

static void check_logreg()
{
    static const int Ks[] = {2, 3, 31, 32, 33, 64, 65, 128, 129, 256, 257, 1000};
    for (int K : Ks)
        check_softmax(K, 23, 0);
    check_softmax(3, 40, 2);    /* 8 rows per block, 2 blocks: grid-strided */
    check_softmax(1000, 9, 4);  /* one row per block, 4 blocks */
    check_softmax(100, 1, 0);
    check_binomial(700, 0);
    check_binomial(600, 1);     /* one block of 256 threads strides over the rows */
    static const int Ka[] = {2, 3, 31, 32, 33, 100, 1000};
    for (int K : Ka) {
        check_argmax("random", 0, K, 37, 0);
        check_argmax("ties", 1, K, 37, 0);
        check_argmax("all equal", 2, K, 19, 0);
        check_argmax("nan and inf", 3, K, 37, 0);
    }
    check_argmax("ties, grid-strided", 1, 33, 50, 2);
    check_binary_decision(300, 0);
    check_binary_decision(600, 1);
}

#include "check_screen_int8.h"

int main()
{
    signal(SIGALRM, on_alarm);
    alarm(600);
    /* compact path (few candidates per tile after the first), several tiles and chunks */
    check_topk("ties, k=1", 0, 5, 3000, 1, 700, 2);
    check_topk("ties, k=10", 0, 5, 3000, 10, 700, 3);
    check_topk("ties, k=1000", 0, 3, 3000, 1000, 700, 3);
    check_topk("ties, k=1001", 0, 3, 3000, 1001, 700, 2);
    check_topk("ties, k=n", 0, 2, 3000, 3000, 700, 2);
    check_topk("random, k=1001, small tiles", 1, 3, 3000, 1001, 64, 3);
    check_topk("random, k=10", 1, 4, 5000, 10, 1200, 4);
    /* non-compact path: more candidates in one tile than shared memory holds */
    check_topk("ties, one big tile", 0, 2, 5000, 1001, 5000, 2);
    check_topk("random, one big tile", 1, 2, 5000, 7, 5000, 2);
    check_topk("random, one big tile, k=n", 1, 2, 5000, 5000, 5000, 2);
    /* every score equal: only the index decides */
    check_topk("all equal, k=1001", 2, 2, 4000, 1001, 900, 2);
    check_topk("all equal, k=1", 2, 2, 4000, 1, 4000, 2);
    /* floors (topk_block_floor): compact and uncompacted first tiles, k = 1, 10, 1001, n */
    check_topk_floor("ties, k=1001", 0, 10, 3000, 1001, 700, 3);
    check_topk_floor("ties, k=1", 0, 10, 3000, 1, 700, 4);
    check_topk_floor("random, k=10", 1, 10, 5000, 10, 1200, 5);
    check_topk_floor("random, k=1001, big tile", 1, 10, 5000, 1001, 5000, 3);
    check_topk_floor("ties, k=n", 0, 5, 2000, 2000, 600, 5);
    check_topk_threshold_kept();
    check_canon_gemm(1, 1, 1, 0);
    check_canon_gemm(1, 1, 0, 0);   /* K = 0: +0 everywhere */
    check_canon_gemm(33, 65, 17, 0); /* partial tiles; K one past a step */
    check_canon_gemm(32, 32, 64, 0); /* whole tiles, one whole chunk */
    check_canon_gemm(45, 37, 200, 0); /* several chunks, a partial step in the last */
    check_canon_gemm(20, 40, 20, 1); /* -0 lanes: the steps past K must not run */
    check_canon_gemm(9, 70, 48, 2);  /* all zeros */
    check_canon_gemm(5, 6, 32, 3);   /* -0 scores: K a whole number of steps, short of a chunk */
    check_maxsim();
    check_pairs();
    check_kmeans_argmin("ties, k=1", 0, 13, 1, 3);
    check_kmeans_argmin("ties, k=5", 0, 37, 5, 5);
    check_kmeans_argmin("ties, k=33", 0, 21, 33, 40);
    check_kmeans_argmin("ties, k=n", 0, 70, 70, 70);
    check_kmeans_argmin("random, k=100", 1, 19, 100, 100);
    check_kmeans_argmin("random, k=1000", 1, 9, 1000, 1003);
    check_kmeans_argmin("all equal, k=77", 2, 10, 77, 77);
    check_kmeans_argmin("nan and inf, k=40", 3, 24, 40, 40);
    check_sts_pairs(1, 5, 0, 1);
    check_sts_pairs(300, 33, 0, 1);
    check_sts_pairs(257, 300, 1, 0);
    check_compo(70, 2, 2, 19, 0, 0);
    check_compo(40, 1, 2, 9, 1, 1);
    check_compo(13, 10, 1, 8, 2, 0);
    check_logreg();
    check_screen_i8();
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
