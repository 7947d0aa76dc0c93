/* topk_reservoir.c - threshold + reservoir + quickselect best-k selection; see the header. */
#include "topk_reservoir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topk_heap.h"

void mieb_topk_res_init(struct mieb_topk_res *r, float *score, int64_t *idx, int64_t k)
{
    r->score = score;
    r->idx = idx;
    r->n = 0;
    r->k = k;
    r->thr = -INFINITY;
    r->cut = 0;
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
        float ps = r->score[hi];
        int64_t pi = r->idx[hi], store = lo;
        for (int64_t j = lo; j < hi; j++)
            if (mieb_topk_better(r->score[j], r->idx[j], ps, pi))
                swap_at(r, j, store++);
        swap_at(r, store, hi);
        /* [lo, store) beat the pivot, store is the pivot, (store, hi] lose to it */
        if (store == k || store == k - 1)
            return;
        if (store < k)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

/* Cut the reservoir back to its best k; the k-th best score becomes the threshold. */
static void cut(struct mieb_topk_res *r)
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
}

void mieb_topk_res_push_row(struct mieb_topk_res *r, const float *s, int64_t n, int64_t base)
{
    int64_t cap = 2 * r->k;
    if (r->k <= 0)
        return;
    for (int64_t j = 0; j < n; j++) {
        if (r->cut && !(s[j] > r->thr))
            continue;
        r->score[r->n] = s[j];
        r->idx[r->n++] = base + j;
        if (r->n == cap)
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

/* One entry of the radix sort: key = (~order(score) << 32) | index, the score as given. */
struct rkey {
    uint64_t key;
    float s;
};

/* Order-preserving key of a score; -0 and +0 share one (they tie, as mieb_topk_better says). */
static inline uint32_t score_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (u == 0x80000000u)
        u = 0;
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/* Sort best first by an LSD radix sort on 8-bit digits of the keys (passes whose digit is the
   same for every entry are skipped). Returns 0, sorting nothing, when an entry has a NaN
   score or an index outside [0, 2^32): the heap sort then keeps its behaviour there. */
static int radix_best_first(float *score, int64_t *idx, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        if (isnan(score[j]) || idx[j] < 0 || idx[j] > (int64_t)UINT32_MAX)
            return 0;
    struct rkey *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)n);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    for (int64_t j = 0; j < n; j++) {
        /* ascending keys = descending scores, then ascending indices */
        a[j].key = ((uint64_t)~score_key(score[j]) << 32) | (uint64_t)idx[j];
        a[j].s = score[j];
    }
    for (int d = 0; d < 8; d++) {
        int64_t count[256] = {0};
        for (int64_t j = 0; j < n; j++)
            count[(a[j].key >> (8 * d)) & 255]++;
        if (count[(a[0].key >> (8 * d)) & 255] == n)
            continue; /* every entry has this digit */
        int64_t pos = 0;
        for (int v = 0; v < 256; v++) {
            int64_t c = count[v];
            count[v] = pos;
            pos += c;
        }
        for (int64_t j = 0; j < n; j++)
            b[count[(a[j].key >> (8 * d)) & 255]++] = a[j];
        struct rkey *t = a;
        a = b;
        b = t;
    }
    for (int64_t j = 0; j < n; j++) {
        score[j] = a[j].s;
        idx[j] = (int64_t)(a[j].key & 0xFFFFFFFFu);
    }
    free(a);
    free(b);
    return 1;
}

int64_t mieb_topk_res_finish(struct mieb_topk_res *r)
{
    if (r->n > r->k)
        cut(r);
    int64_t n = r->n;
    if (n > 0 && !radix_best_first(r->score, r->idx, n)) {
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
    return n;
}
