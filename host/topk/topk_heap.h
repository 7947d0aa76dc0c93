/**
 * topk_heap.h - bounded selection of the k best (score, index) pairs with the backend
 * tie rule: score descending, then index ascending.
 *
 * The heap keeps the current worst entry at the root, so once it is full a candidate
 * is admitted only if it is strictly better than the root. Candidates fed in increasing
 * index order therefore need a single float compare each (ties never displace).
 * This is the scalar CPU reference for the CUDA top-k kernel.
 */
#ifndef MIEB_TOPK_TOPK_HEAP_H
#define MIEB_TOPK_TOPK_HEAP_H

#include <stdint.h>

struct mieb_topk_heap {
    float *score;   /* [cap] */
    int64_t *idx;   /* [cap] */
    int64_t n, cap;
};

/** True when (sa, ia) ranks before (sb, ib): higher score, or equal score and lower index. */
static inline int mieb_topk_better(float sa, int64_t ia, float sb, int64_t ib)
{
    return sa > sb || (sa == sb && ia < ib);
}

/** Use caller-provided storage of cap entries (no allocation). */
void mieb_topk_heap_init(struct mieb_topk_heap *h, float *score, int64_t *idx, int64_t cap);
/** Offer one candidate. */
void mieb_topk_heap_push(struct mieb_topk_heap *h, float s, int64_t i);
/** Offer a row of scores whose indices are base + j, j = 0 .. n-1 (the hot path). */
void mieb_topk_heap_push_row(struct mieb_topk_heap *h, const float *s, int64_t n, int64_t base);
/**
 * Sort the kept entries best first into out_score/out_idx (h->n entries) and leave
 * the heap empty. out arrays may alias the heap storage.
 */
void mieb_topk_heap_drain_sorted(struct mieb_topk_heap *h, float *out_score, int64_t *out_idx);

/**
 * Merge two lists already sorted best first into the best k (k <= na + nb allowed smaller).
 * Returns the number written.
 */
int64_t mieb_topk_merge(const float *sa, const int64_t *ia, int64_t na,
                        const float *sb, const int64_t *ib, int64_t nb,
                        int64_t k, float *out_s, int64_t *out_i);

#endif
