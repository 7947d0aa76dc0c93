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

/* Sort best first: keys (~order(score) << 32) | index, ascending, with the score's bits as
   the value (so -0 stays -0; it ties with +0 as mieb_topk_better says). Returns 0, sorting
   nothing, when an entry has a NaN score or an index outside [0, 2^32): the heap sort then
   keeps its behaviour there. */
static int radix_best_first(float *score, int64_t *idx, int64_t n)
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
    mieb_radix_sort_u64(keys, vals, keys + n, vals + n, n, 0, 8);
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
