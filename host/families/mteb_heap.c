/* mteb_heap.c - CPython heapq, operation for operation, on (score, id) tuples. */
#include "mteb_heap.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/radix_sort.h"

void mieb_pyheap_init(struct mieb_pyheap *h, float *score, int64_t *doc, int64_t cap, const char *const *ids)
{
    h->score = score;
    h->doc = doc;
    h->n = 0;
    h->cap = cap;
    h->ids = ids;
}

/* Python: (sa, ida) < (sb, idb) for tuples (float, str). */
static inline int tuple_lt(const struct mieb_pyheap *h, float sa, int64_t da, float sb, int64_t db)
{
    if (sa != sb)
        return sa < sb;
    return strcmp(h->ids[da], h->ids[db]) < 0;
}

/* CPython _heapq siftdown: move the item at pos up towards startpos while it is smaller than its parent. */
static void siftdown(struct mieb_pyheap *h, int64_t startpos, int64_t pos)
{
    float s = h->score[pos];
    int64_t d = h->doc[pos];
    while (pos > startpos) {
        int64_t parent = (pos - 1) >> 1;
        if (!tuple_lt(h, s, d, h->score[parent], h->doc[parent]))
            break;
        h->score[pos] = h->score[parent];
        h->doc[pos] = h->doc[parent];
        pos = parent;
    }
    h->score[pos] = s;
    h->doc[pos] = d;
}

/* CPython _heapq siftup: bubble the smaller child up to a leaf, then siftdown the item there. */
static void siftup(struct mieb_pyheap *h, int64_t pos)
{
    int64_t endpos = h->n, startpos = pos, limit = endpos >> 1;
    float s = h->score[pos];
    int64_t d = h->doc[pos];
    while (pos < limit) {
        int64_t child = 2 * pos + 1;
        /* the right child is chosen unless left < right (ties go right, as in CPython) */
        if (child + 1 < endpos &&
            !tuple_lt(h, h->score[child], h->doc[child], h->score[child + 1], h->doc[child + 1]))
            child++;
        h->score[pos] = h->score[child];
        h->doc[pos] = h->doc[child];
        pos = child;
    }
    h->score[pos] = s;
    h->doc[pos] = d;
    siftdown(h, startpos, pos);
}

void mieb_pyheap_push(struct mieb_pyheap *h, float s, int64_t doc)
{
    h->score[h->n] = s;
    h->doc[h->n] = doc;
    h->n++;
    siftdown(h, 0, h->n - 1);
}

/* heappushpop; 1 when the item entered the heap */
static int pushpop_changed(struct mieb_pyheap *h, float s, int64_t doc)
{
    /* heappushpop returns the item unchanged unless heap[0] < item */
    if (h->n == 0 || !tuple_lt(h, h->score[0], h->doc[0], s, doc))
        return 0;
    h->score[0] = s;
    h->doc[0] = doc;
    siftup(h, 0);
    return 1;
}

int mieb_pyheap_offer(struct mieb_pyheap *h, int64_t limit, float s, int64_t doc)
{
    if (h->n < limit) {
        mieb_pyheap_push(h, s, doc);
        return 1;
    }
    return pushpop_changed(h, s, doc);
}

/* Where the entries of a strictly decreasing run of m pushes onto an empty heap end up:
   g_perm[m * (m - 1) / 2 + pos] = the push that holds array position pos, for every
   m <= MIEB_PYHEAP_PERM_N (1 MB). Every comparison of such a run goes the same way, so the
   pushes' moves alone build each table from the one before, once per process. */
#define MIEB_PYHEAP_PERM_N 1000
static int16_t *g_perm;
static pthread_once_t g_perm_once = PTHREAD_ONCE_INIT;

static void perm_init(void)
{
    size_t total = (size_t)MIEB_PYHEAP_PERM_N * (MIEB_PYHEAP_PERM_N + 1) / 2;
    int16_t *p = malloc(sizeof(int16_t) * total), cur[MIEB_PYHEAP_PERM_N];
    if (!p)
        return; /* the caller falls back to the pushes */
    for (int i = 0; i < MIEB_PYHEAP_PERM_N; i++) {
        int pos = i;
        while (pos > 0) { /* siftdown of an entry smaller than every other: up to the root */
            int parent = (pos - 1) >> 1;
            cur[pos] = cur[parent];
            pos = parent;
        }
        cur[0] = (int16_t)i;
        memcpy(p + (size_t)(i + 1) * i / 2, cur, sizeof(int16_t) * (size_t)(i + 1));
    }
    g_perm = p;
}

int64_t mieb_pyheap_offer_sorted_prefix(struct mieb_pyheap *h, int64_t limit, const float *s, const int64_t *d,
                                        int64_t n)
{
    int64_t cap = limit < n ? limit : n;
    if (cap > h->cap)
        cap = h->cap;
    if (cap > MIEB_PYHEAP_PERM_N)
        cap = MIEB_PYHEAP_PERM_N;
    if (h->n != 0 || cap < 2)
        return 0;
    /* the run: x[m] < x[m-1] as Python compares the tuples (false with a NaN: the run ends) */
    int64_t m = 1;
    while (m < cap && tuple_lt(h, s[m], d[m], s[m - 1], d[m - 1]))
        m++;
    if (m < 2)
        return 0;
    pthread_once(&g_perm_once, perm_init);
    if (!g_perm)
        return 0;
    const int16_t *t = g_perm + (size_t)m * (size_t)(m - 1) / 2;
    for (int64_t pos = 0; pos < m; pos++) {
        h->score[pos] = s[t[pos]];
        h->doc[pos] = d[t[pos]];
    }
    h->n = m;
    return m;
}

/* The stable insertion sort: the rule where a NaN makes `<` no order at all. */
static void insertion_sort_desc(float *s, int64_t *d, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        float ks = s[i];
        int64_t kd = d[i], j = i - 1;
        while (j >= 0 && s[j] < ks) {
            s[j + 1] = s[j];
            d[j + 1] = d[j];
            j--;
        }
        s[j + 1] = ks;
        d[j + 1] = kd;
    }
}

void mieb_py_sort_score_desc(float *s, int64_t *d, int64_t n, uint64_t *scratch)
{
    if (n < 2)
        return;
    for (int64_t i = 0; i < n; i++)
        if (isnan(s[i])) {
            insertion_sort_desc(s, d, n);
            return;
        }
    uint64_t *keys = scratch, *tmp = scratch + n, *old_d = scratch + 2 * n;
    float *old_s = (float *)(scratch + 3 * n);
    for (int64_t i = 0; i < n; i++) {
        /* the array position breaks ties: what stability means here */
        keys[i] = mieb_best_first_key(s[i], (uint32_t)i);
        old_d[i] = (uint64_t)d[i];
        old_s[i] = s[i];
    }
    mieb_radix_sort_u64(keys, NULL, tmp, NULL, n, 0, 8);
    for (int64_t i = 0; i < n; i++) {
        uint32_t from = (uint32_t)keys[i];
        s[i] = old_s[from];
        d[i] = (int64_t)old_d[from];
    }
}
