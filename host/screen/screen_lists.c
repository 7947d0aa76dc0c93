/**
 * screen_lists.c - what every screen pass shares, below them and the kernel choice of
 * screen.c: the norms and bounds of a query, its candidate list (an entry appended, the list
 * cut at the k-th largest lower bound) and the int8 rows' bounds. The argument for exactness
 * is in screen.h; how tau moves is said atop screen.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../math/screen_int8_math.h"
#include "../core/radix_sort.h"
#include "screen_base.h"

/* ---- bounds ---- */


/* g of screen.h: twice the worst relative accumulation error of a K-term fp32 sum. */
static double accum_g(int64_t K) { return (double)(K + 64) * 2.0 * SCREEN_U32; }

int mieb_screen_norms(float ss, float rs, int64_t K, float *nrm, float *rnrm)
{
    /* ss, rs: fp32 sums of squares in some order; true <= ss (1 + g) + (subnormal
       losses, at most 2K 2^-149 <= 2^-100). sqrt and the products round to nearest: the
       final factor covers them, and the float conversion of the double rounds within it.
       The arithmetic is math/screen_int8_math.h's, shared with the int8 screen's kernels. */
    return mieb_screen_i8_norms(ss, rs, K, nrm, rnrm);
}

void mieb_screen_query_bound(struct screen_ctx *cx, int64_t q, float nrm, float rnrm)
{
    /* With N >= |q|, R >= |r_q|, Nt = N + R >= |q'| and, for a document, n >= |d|,
       rn >= |r_d| (so |d'| <= n + rn):
         bound <= R n + Nt rn + g (N n + Nt (n + rn)) + s_abs + 4u (1 + g) Nt (n + rn)
       where the last term covers rounding a +- e (|a| <= |q'| |d'| (1 + g) + s_abs):
         alpha = R + g (N + Nt) + 4u (1 + g) Nt,   beta = Nt (1 + g + 4u (1 + g)). */
    double g = accum_g(cx->K), N = nrm, R = rnrm, Nt = (N + R) * SCREEN_MARGIN;
    double alpha = (R + g * (N + Nt) + 4.0 * SCREEN_U32 * (1.0 + g) * Nt) * SCREEN_MARGIN * SCREEN_MARGIN;
    double beta = Nt * (1.0 + g + 4.0 * SCREEN_U32 * (1.0 + g)) * SCREEN_MARGIN * SCREEN_MARGIN;
    /* floors keep alpha * n finite and non-NaN for every finite n */
    cx->alpha[q] = (float)(alpha > 0x1p-100 ? alpha : 0x1p-100);
    cx->beta[q] = (float)(beta > 0x1p-100 ? beta : 0x1p-100);
}

/* ---- candidate lists ---- */

/* Bin keys [lo, hi] into at most 2048 equal ranges of width 2^sh: the shift. */
static int bin_shift(uint32_t lo, uint32_t hi)
{
    int sh = 0;
    while (((hi - lo) >> sh) >= 2048)
        sh++;
    return sh;
}

/* The bin holding the rank-th largest of a histogram; *rank becomes the rank inside it. */
static uint32_t top_bin(const uint32_t *hist, int64_t *rank)
{
    uint32_t bin = 2048;
    while (bin > 0) {
        bin--;
        if ((int64_t)hist[bin] >= *rank)
            break;
        *rank -= hist[bin];
    }
    return bin;
}

/* Level 1 of the selection: the range of the keys, a histogram of 2048 bins fitted to it
   (no data-dependent branch), the bin holding the k-th from the top. Returns its smallest
   key; *sh its width's shift, *rank the k-th's rank inside it. At least k entries have a
   key at or above the result, so it is itself a valid (if coarser) threshold. */
static uint32_t coarse_kth(const float *lb, int32_t n, int64_t k, uint32_t *hist, int *sh, int64_t *rank)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (int32_t t = 0; t < n; t++) {
        uint32_t key = mieb_float_key(lb[t]);
        lo = key < lo ? key : lo;
        hi = key > hi ? key : hi;
    }
    *rank = k;
    *sh = bin_shift(lo, hi);
    memset(hist, 0, sizeof(uint32_t) * 2048);
    for (int32_t t = 0; t < n; t++)
        hist[(mieb_float_key(lb[t]) - lo) >> *sh]++;
    return lo + (top_bin(hist, rank) << *sh);
}

/* The same on the keys of the level-1 bin, until a bin is one key wide: the exact k-th. */
float mieb_screen_kth_lb(const float *lb, int32_t n, int64_t k, uint32_t *hist, uint32_t *keys)
{
    int sh;
    int64_t rank;
    uint32_t base = coarse_kth(lb, n, k, hist, &sh, &rank);
    if (sh == 0)
        return mieb_key_float(base);
    int64_t m = 0;
    for (int32_t t = 0; t < n; t++) {
        uint32_t key = mieb_float_key(lb[t]);
        if (((key - base) >> sh) == 0 && key >= base)
            keys[m++] = key;
    }
    for (;;) {
        uint32_t lo = UINT32_MAX, hi = 0;
        for (int64_t t = 0; t < m; t++) {
            lo = keys[t] < lo ? keys[t] : lo;
            hi = keys[t] > hi ? keys[t] : hi;
        }
        sh = bin_shift(lo, hi);
        memset(hist, 0, sizeof(uint32_t) * 2048);
        for (int64_t t = 0; t < m; t++)
            hist[(keys[t] - lo) >> sh]++;
        base = lo + (top_bin(hist, &rank) << sh);
        if (sh == 0)
            return mieb_key_float(base);
        int64_t w = 0;
        for (int64_t t = 0; t < m; t++)
            if (((keys[t] - base) >> sh) == 0 && keys[t] >= base)
                keys[w++] = keys[t];
        m = w;
    }
}

int mieb_screen_list_resize(struct screen_list *l, int32_t cap)
{
    size_t slots = (size_t)cap + SCREEN_SLACK;
    int32_t *idx = malloc(SCREEN_ENTRY_BYTES * slots);
    if (!idx)
        return 0;
    float *lb = (float *)(idx + slots), *ub = lb + slots;
    if (l->n > 0) {
        memcpy(idx, l->idx, sizeof(int32_t) * (size_t)l->n);
        memcpy(lb, l->lb, sizeof(float) * (size_t)l->n);
        memcpy(ub, l->ub, sizeof(float) * (size_t)l->n);
    }
    free(l->idx);
    l->idx = idx;
    l->lb = lb;
    l->ub = ub;
    l->cap = cap;
    return 1;
}

void mieb_screen_overflow_query(struct screen_ctx *cx, int64_t q)
{
    struct screen_list *l = &cx->lists[q];
    cx->overflow[q] = 1;
    cx->tau[q] = INFINITY;
    l->n = 0;
}

int mieb_screen_tighten(struct screen_ctx *cx, int64_t q, int exact)
{
    struct screen_list *l = &cx->lists[q];
    if (l->n >= cx->k) {
        float t;
        if (exact) {
            if (cx->keys_cap < l->n) {
                int64_t want = (int64_t)l->cap + SCREEN_SLACK;
                uint32_t *k2 = realloc(cx->keys, sizeof(uint32_t) * (size_t)want);
                if (!k2)
                    return 0;
                cx->keys = k2;
                cx->keys_cap = want;
            }
            t = mieb_screen_kth_lb(l->lb, l->n, cx->k, cx->hist, cx->keys);
        } else {
            int sh;
            int64_t rank;
            t = mieb_key_float(coarse_kth(l->lb, l->n, cx->k, cx->hist, &sh, &rank));
        }
        if (t > cx->tau[q])
            cx->tau[q] = t;
    }
    float tau = cx->tau[q];
    int32_t w = 0;
    for (int32_t t = 0; t < l->n; t++) { /* branch-free: most entries leave */
        int keep = l->ub[t] >= tau;
        l->idx[w] = l->idx[t];
        l->lb[w] = l->lb[t];
        l->ub[w] = l->ub[t];
        w += keep;
    }
    l->n = w;
    return 1;
}

void mieb_screen_cut(struct screen_ctx *cx, int64_t q)
{
    struct screen_list *l = &cx->lists[q];
    /* the first cut's lower bounds span the whole score range: the coarse bin would be wide */
    if (!mieb_screen_tighten(cx, q, l->cut_at != l->cap)) {
        mieb_screen_overflow_query(cx, q);
        return;
    }
    l->cut_at = l->cap;
    if (l->n <= l->cap / 2)
        return;
    /* Most entries survive (a wide window: near-ties, duplicates): grow rather than cut
       again soon, while the budget lasts. */
    size_t grow = SCREEN_ENTRY_BYTES * (size_t)l->cap;
    if (l->cap > INT32_MAX / 4 || cx->used + grow > cx->budget || !mieb_screen_list_resize(l, 2 * l->cap)) {
        mieb_screen_overflow_query(cx, q);
        return;
    }
    cx->used += grow;
    l->cut_at = l->cap;
}

void mieb_screen_append(struct screen_ctx *cx, int64_t q, int32_t idx, float lb, float ub)
{
    struct screen_list *l = &cx->lists[q];
    l->idx[l->n] = idx;
    l->lb[l->n] = lb;
    l->ub[l->n] = ub;
    if (++l->n >= l->cut_at)
        mieb_screen_cut(cx, q);
}
