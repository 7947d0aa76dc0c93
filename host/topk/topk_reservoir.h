/**
 * topk_reservoir.h - best-k selection for long score rows: a reservoir of 2k slots that
 * admits candidates above a threshold and, when full, is cut back to a little more than
 * its best k (the entries above a sampled score that k of them beat) or, when the sample
 * misses, to exactly k with a quickselect; either raises the threshold. The end sorts
 * what is left and keeps the first k. Amortised O(1) per candidate, where a heap pays
 * O(log k) for every early replacement. Same tie rule and results as
 * mieb_topk_heap (score descending, then index ascending); candidates must be offered in
 * increasing index order.
 */
#ifndef MIEB_TOPK_TOPK_RESERVOIR_H
#define MIEB_TOPK_TOPK_RESERVOIR_H

#include <stdint.h>

struct mieb_topk_res {
    float *score;   /* [2k] */
    int64_t *idx;   /* [2k] */
    int64_t n, k;
    float thr;      /* admit s > thr once cut at least once */
    int cut;        /* a cut happened: thr is valid */
    int in_order;   /* the entries are in the order they were offered (no exact cut yet) */
};

/** storage must hold 2*k entries. */
void mieb_topk_res_init(struct mieb_topk_res *r, float *score, int64_t *idx, int64_t k);
/**
 * The same for a caller that needs only the candidates scoring at least `floor`
 * (topk_block_floor): those below it are refused from the start. -inf or NaN: no floor.
 */
void mieb_topk_res_init_floor(struct mieb_topk_res *r, float *score, int64_t *idx, int64_t k, float floor);
/** Offer scores s[0..n) with indices base+j (increasing across calls). */
void mieb_topk_res_push_row(struct mieb_topk_res *r, const float *s, int64_t n, int64_t base);
/** Offer one score with index i (larger than every index offered before). */
void mieb_topk_res_push(struct mieb_topk_res *r, float s, int64_t i);
/** Keep the best min(k, n) entries, sorted best first, at the start of the storage; returns the count. */
int64_t mieb_topk_res_finish(struct mieb_topk_res *r);

#endif
