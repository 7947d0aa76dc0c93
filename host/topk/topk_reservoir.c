/* topk_reservoir.c - threshold + reservoir + quickselect best-k selection; see the header. */
#include "topk_reservoir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/radix_sort.h"
#include "topk_heap.h"

void mieb_topk_res_init(struct mieb_topk_res *r, float *score, int64_t *idx, int64_t k)
{
    r->score = score;
    r->idx = idx;
    r->n = 0;
    r->k = k;
    r->thr = -INFINITY;
    r->cut = 0;
    r->in_order = 1;
}

void mieb_topk_res_init_floor(struct mieb_topk_res *r, float *score, int64_t *idx, int64_t k, float floor)
{
    mieb_topk_res_init(r, score, idx, k);
    if (floor > -INFINITY) { /* admit s > the float below the floor: s >= floor */
        r->thr = nextafterf(floor, -INFINITY);
        r->cut = 1;
    }
}

static inline void swap_at(struct mieb_topk_res *r, int64_t a, int64_t b)
{
    float s = r->score[a];
    int64_t i = r->idx[a];
    r->score[a] = r->score[b];
    r->idx[a] = r->idx[b];
    r->score[b] = s;
    r->idx[b] = i;
}

/* Move the pivot at hi to its place in [lo, hi] and return that place: the entries before
   it rank before it. Branch-free Lomuto: every entry is exchanged with the first one not yet
   known to beat the pivot, and the boundary advances by the comparison's outcome. The
   comparisons of a partition are coin flips, so a branch on them would be mispredicted half
   the time. Without NaN scores the kept set does not depend on the order inside either side:
   the (score, index) pairs are distinct and totally ordered. */
static int64_t partition_at_hi(struct mieb_topk_res *r, int64_t lo, int64_t hi)
{
    float *sc = r->score;
    int64_t *ix = r->idx;
    float ps = sc[hi];
    int64_t pi = ix[hi], store = lo;
    for (int64_t j = lo; j < hi; j++) {
        float s = sc[j];
        int64_t i = ix[j];
        int64_t b = (int64_t)(s > ps) | ((int64_t)(s == ps) & (int64_t)(i < pi)); /* mieb_topk_better */
        sc[j] = sc[store];
        ix[j] = ix[store];
        sc[store] = s;
        ix[store] = i;
        store += b;
    }
    swap_at(r, store, hi);
    return store;
}

/* Rearrange [lo, hi] so that the first (k - lo) best entries are in [lo, k) (k inside the range). */
static void select_best(struct mieb_topk_res *r, int64_t lo, int64_t hi, int64_t k)
{
    while (hi > lo) {
        /* median of three as pivot, moved to hi */
        int64_t mid = lo + (hi - lo) / 2;
        if (mieb_topk_better(r->score[mid], r->idx[mid], r->score[lo], r->idx[lo]))
            swap_at(r, mid, lo);
        if (mieb_topk_better(r->score[hi], r->idx[hi], r->score[lo], r->idx[lo]))
            swap_at(r, hi, lo);
        if (mieb_topk_better(r->score[mid], r->idx[mid], r->score[hi], r->idx[hi]))
            swap_at(r, mid, hi);
        int64_t store = partition_at_hi(r, lo, hi);
        /* [lo, store) beat the pivot, store is the pivot, (store, hi] lose to it */
        if (store == k || store == k - 1)
            return;
        if (store < k)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

/* Cut the reservoir back to its best k exactly; the k-th best score becomes the threshold. */
static void exact_cut(struct mieb_topk_res *r)
{
    select_best(r, 0, r->n - 1, r->k);
    r->n = r->k;
    float t = r->score[0];
    for (int64_t j = 1; j < r->k; j++)
        if (r->score[j] < t)
            t = r->score[j];
    /* Later candidates have larger indices, so one equal to the worst kept score loses. */
    r->thr = t;
    r->cut = 1;
    r->in_order = 0;
}

/*
 * A cut only has to keep the best k and raise the threshold; keeping a few more than k is
 * as good, and the exact k-th is needed only at the end. So a full reservoir keeps the
 * entries scoring above a score v that at least k of them beat, and v becomes the
 * threshold: an entry or later candidate scoring v or less has k entries above it, so it
 * is not among the best k, ties whatever their indices. v is taken from a sorted sample
 * of the scores at even strides (independent of the order they came in): the candidates
 * CUT_CANDS sample ranks apart, from the one expected to leave k + k/16 above it, are
 * counted in one pass, and the lowest count at or above k wins. One counting and one
 * compacting pass, both without data-dependent branches, where the exact cut partitions
 * the reservoir about three times over. Returns 0, changing nothing, when no candidate
 * leaves k (an unlucky sample, heavy ties) or when one is NaN; the exact cut then runs.
 */
#define CUT_SAMPLE 31
#define CUT_CANDS 4
#define CUT_STEP 2
#define CUT_FROM 256

static int sampled_cut(struct mieb_topk_res *r)
{
    int64_t n = r->n, k = r->k;
    float smp[CUT_SAMPLE];
    if (n < CUT_FROM) /* a small reservoir is cut exactly for less than the sample costs */
        return 0;
    for (int j = 0; j < CUT_SAMPLE; j++) {
        float v = r->score[(2 * (int64_t)j + 1) * n / (2 * CUT_SAMPLE)];
        int t = j;
        if (isnan(v))
            return 0;
        for (; t > 0 && v > smp[t - 1]; t--)
            smp[t] = smp[t - 1];
        smp[t] = v;
    }
    if (smp[0] == smp[CUT_SAMPLE - 1])
        return 0; /* one score throughout the sample: most likely the whole reservoir */
    /* about (t + 1/2) n / CUT_SAMPLE entries score above smp[t] */
    int64_t t0 = ((k + k / 16) * CUT_SAMPLE + n - 1) / n;
    float cand[CUT_CANDS];
    int64_t cnt[CUT_CANDS] = {0};
    for (int c = 0; c < CUT_CANDS; c++) {
        int64_t t = t0 + (int64_t)c * CUT_STEP;
        cand[c] = smp[t < CUT_SAMPLE ? t : CUT_SAMPLE - 1];
    }
    const float *sc = r->score;
    for (int64_t j = 0; j < n; j++)
        for (int c = 0; c < CUT_CANDS; c++)
            cnt[c] += sc[j] > cand[c];
    int best = -1;
    for (int c = 0; c < CUT_CANDS; c++)
        if (cnt[c] >= k && cnt[c] < n && (best < 0 || cnt[c] < cnt[best]))
            best = c;
    if (best < 0)
        return 0;
    float v = cand[best];
    float *rs = r->score; /* a stable compaction: the offer order stays */
    int64_t *ri = r->idx, m = 0;
    for (int64_t j = 0; j < n; j++) {
        float s = rs[j];
        int64_t i = ri[j];
        rs[m] = s;
        ri[m] = i;
        m += (int64_t)(s > v);
    }
    r->n = m;
    r->thr = v;
    r->cut = 1;
    return 1;
}

static void cut(struct mieb_topk_res *r)
{
    if (!sampled_cut(r))
        exact_cut(r);
}

/* Offer s[0..len) (indices base + j) to the slots from m on, branch-free: every score is
   written to the next free slot and the count advances by the comparison. Returns the new
   count; the caller guarantees len free slots. */
static inline int64_t admit_run(float *rs, int64_t *ri, int64_t m, const float *s, int64_t len, int64_t base,
                                float thr)
{
    for (int64_t t = 0; t < len; t++) {
        float v = s[t];
        rs[m] = v;
        ri[m] = base + t;
        m += (int64_t)(v > thr);
    }
    return m;
}

void mieb_topk_res_push_row(struct mieb_topk_res *r, const float *s, int64_t n, int64_t base)
{
    int64_t cap = 2 * r->k, j = 0;
    if (r->k <= 0)
        return;
    /* Before the first cut every score is admitted (NaN and -inf included). */
    if (!r->cut) {
        int64_t take = cap - r->n < n ? cap - r->n : n;
        memcpy(r->score + r->n, s, sizeof(float) * (size_t)take);
        for (int64_t t = 0; t < take; t++)
            r->idx[r->n + t] = base + t;
        r->n += take;
        j = take;
        if (r->n == cap)
            cut(r);
    }
    /* Then s > thr, through admit_run (about half of the scores pass early on, a coin flip
       for a branch). Blocks of 16 with no score above thr are skipped after one test, which
       is how most of a long row goes once the threshold has risen. A stretch of free-slot
       length cannot overflow the reservoir, so the cut is checked once per stretch. */
    while (j < n) {
        int64_t end = j + (cap - r->n) < n ? j + (cap - r->n) : n, m = r->n;
        float thr = r->thr;
        for (; j + 16 <= end; j += 16) {
            int any = 0;
            for (int t = 0; t < 16; t++)
                any |= s[j + t] > thr;
            if (any)
                m = admit_run(r->score, r->idx, m, s + j, 16, base + j, thr);
        }
        m = admit_run(r->score, r->idx, m, s + j, end - j, base + j, thr);
        j = end;
        r->n = m;
        if (m == cap)
            cut(r);
    }
}

void mieb_topk_res_push(struct mieb_topk_res *r, float s, int64_t i)
{
    if (r->k <= 0 || (r->cut && !(s > r->thr)))
        return;
    r->score[r->n] = s;
    r->idx[r->n++] = i;
    if (r->n == 2 * r->k)
        cut(r);
}

/* Sort best first: keys (~order(score) << 32) | index, ascending, with the score's bits as
   the value (so -0 stays -0; it ties with +0 as mieb_topk_better says). in_order: the
   entries are in increasing index order already, so a stable sort on the score bytes alone
   keeps ties by index. Returns 0, sorting nothing, when an entry has a NaN score or an
   index outside [0, 2^32): the heap sort then keeps its behaviour there. */
static int radix_best_first(float *score, int64_t *idx, int64_t n, int in_order)
{
    for (int64_t j = 0; j < n; j++)
        if (isnan(score[j]) || idx[j] < 0 || idx[j] > (int64_t)UINT32_MAX)
            return 0;
    uint64_t *keys = malloc(sizeof *keys * (size_t)(2 * n));
    uint32_t *vals = malloc(sizeof *vals * (size_t)(2 * n));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return 0;
    }
    for (int64_t j = 0; j < n; j++) {
        keys[j] = mieb_best_first_key(score[j], (uint32_t)idx[j]);
        memcpy(&vals[j], &score[j], sizeof vals[j]);
    }
    mieb_radix_sort_u64(keys, vals, keys + n, vals + n, n, in_order ? 4 : 0, 8);
    for (int64_t j = 0; j < n; j++) {
        memcpy(&score[j], &vals[j], sizeof score[j]);
        idx[j] = (int64_t)(keys[j] & 0xFFFFFFFFu);
    }
    free(keys);
    free(vals);
    return 1;
}

int64_t mieb_topk_res_finish(struct mieb_topk_res *r)
{
    /* Sorting all of a reservoir that holds more than k is cheaper than selecting its
       best k first (about 3 partition passes); the best k are then its first k. */
    int64_t n = r->n;
    if (n > 0 && radix_best_first(r->score, r->idx, n, r->in_order)) {
        n = n < r->k ? n : r->k;
    } else if (n > 0) {
        if (n > r->k)
            exact_cut(r);
        n = r->n;
        /* sort the survivors best first (heap sort through the shared heap code) */
        struct mieb_topk_heap h;
        mieb_topk_heap_init(&h, r->score, r->idx, n);
        h.n = 0;
        for (int64_t j = 0; j < n; j++) {
            /* rebuild as a heap in place: push entries one by one (storage is the same array) */
            float sc = r->score[j];
            int64_t ix = r->idx[j];
            mieb_topk_heap_push(&h, sc, ix);
        }
        mieb_topk_heap_drain_sorted(&h, r->score, r->idx);
    }
    r->n = 0;
    r->cut = 0;
    r->thr = -INFINITY;
    r->in_order = 1;
    return n;
}
