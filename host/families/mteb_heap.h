/**
 * mteb_heap.h - an exact emulation of the Python heapq min-heap mteb keeps per query.
 *
 * mteb's search pushes (score, corpus_id) tuples with heapq.heappush while the heap has
 * fewer than top_k entries and heapq.heappushpop afterwards; the results dict is then
 * built in heap-array order. That order decides which of several tied top documents
 * skip_first_result drops, and the summation order of nAUC's np.std, so it is
 * reproduced here operation for operation (CPython's _heapq siftdown/siftup), with
 * Python's tuple order: score first, then the id string (code point order == UTF-8
 * byte order, i.e. strcmp).
 */
#ifndef MIEB_FAMILIES_MTEB_HEAP_H
#define MIEB_FAMILIES_MTEB_HEAP_H

#include <stdint.h>

struct mieb_pyheap {
    float *score;             /* [cap] */
    int64_t *doc;             /* [cap] corpus row */
    int64_t n, cap;
    const char *const *ids;   /* corpus ids, indexed by row (borrowed) */
};

void mieb_pyheap_init(struct mieb_pyheap *h, float *score, int64_t *doc, int64_t cap, const char *const *ids);
/** heapq.heappush (the caller guarantees n < cap). */
void mieb_pyheap_push(struct mieb_pyheap *h, float s, int64_t doc);
/** mteb's loop body: heappush while n < limit, else heappushpop (push, then pop the smallest,
    which may be the new item itself). Returns 1 when the heap
    changed (the item entered it), 0 when the item was handed straight back. */
int mieb_pyheap_offer(struct mieb_pyheap *h, int64_t limit, float s, int64_t doc);

/**
 * mieb_pyheap_offer for the start of s/d[0 .. n), a chunk's list best first, while that is
 * quick: on an empty heap, the longest run of entries (up to limit and 1,000) that strictly
 * decrease in tuple order. Each of those pushes would carry its entry from the end of the
 * array to the root, so the array after them is a fixed permutation of the run, applied
 * here without comparisons. Returns the run's length (each entry accepted), or 0 (nothing
 * done); the caller offers the entries after it one by one.
 */
int64_t mieb_pyheap_offer_sorted_prefix(struct mieb_pyheap *h, int64_t limit, const float *s, const int64_t *d,
                                        int64_t n);

/**
 * Python's sorted(items, key=score, reverse=True) on parallel arrays, in place: scores
 * descending, equal scores (-0 == +0) in their array order, since Python's sort is stable.
 * skip_first_result runs it on each heap array. scratch: 4 * n entries. Without NaN it is
 * a radix sort (a heap array of 1,000 is nearly ascending, the worst case of the insertion
 * sort it replaced: 0.25 M moves a query); with a NaN, whose comparisons are all false,
 * the insertion sort's result is kept.
 */
void mieb_py_sort_score_desc(float *s, int64_t *d, int64_t n, uint64_t *scratch);

#endif
