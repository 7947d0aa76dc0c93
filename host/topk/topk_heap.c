/* topk_heap.c - bounded best-k selection (score desc, index asc); see topk_heap.h. */
#include "topk_heap.h"

#include <stdlib.h>

void mieb_topk_heap_init(struct mieb_topk_heap *h, float *score, int64_t *idx, int64_t cap)
{
    h->score = score;
    h->idx = idx;
    h->n = 0;
    h->cap = cap;
}

/* "worse" is the heap order: the root is the entry every other entry beats. */
static inline int worse(const struct mieb_topk_heap *h, int64_t a, int64_t b)
{
    return mieb_topk_better(h->score[b], h->idx[b], h->score[a], h->idx[a]);
}

static void sift_down(struct mieb_topk_heap *h, int64_t pos)
{
    float s = h->score[pos];
    int64_t id = h->idx[pos];
    for (;;) {
        int64_t c = 2 * pos + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && worse(h, c + 1, c))
            c++;
        /* stop when the moving entry is worse than (or equal to) the worst child */
        if (!mieb_topk_better(s, id, h->score[c], h->idx[c]))
            break;
        h->score[pos] = h->score[c];
        h->idx[pos] = h->idx[c];
        pos = c;
    }
    h->score[pos] = s;
    h->idx[pos] = id;
}

static void sift_up(struct mieb_topk_heap *h, int64_t pos)
{
    float s = h->score[pos];
    int64_t id = h->idx[pos];
    while (pos > 0) {
        int64_t p = (pos - 1) / 2;
        if (!mieb_topk_better(h->score[p], h->idx[p], s, id))
            break;
        h->score[pos] = h->score[p];
        h->idx[pos] = h->idx[p];
        pos = p;
    }
    h->score[pos] = s;
    h->idx[pos] = id;
}

void mieb_topk_heap_push(struct mieb_topk_heap *h, float s, int64_t i)
{
    if (h->cap <= 0)
        return;
    if (h->n < h->cap) {
        h->score[h->n] = s;
        h->idx[h->n] = i;
        sift_up(h, h->n++);
        return;
    }
    if (!mieb_topk_better(s, i, h->score[0], h->idx[0]))
        return;
    h->score[0] = s;
    h->idx[0] = i;
    sift_down(h, 0);
}

void mieb_topk_heap_push_row(struct mieb_topk_heap *h, const float *s, int64_t n, int64_t base)
{
    int64_t j = 0;
    if (h->cap <= 0)
        return;
    for (; j < n && h->n < h->cap; j++)
        mieb_topk_heap_push(h, s[j], base + j);
    /* Full: indices only grow, so an equal score never wins; one compare per candidate. */
    float thr = h->score[0];
    for (; j < n; j++) {
        if (s[j] > thr) {
            h->score[0] = s[j];
            h->idx[0] = base + j;
            sift_down(h, 0);
            thr = h->score[0];
        }
    }
}

void mieb_topk_heap_drain_sorted(struct mieb_topk_heap *h, float *out_score, int64_t *out_idx)
{
    /* In-place heap sort: repeatedly move the worst to the end. */
    int64_t n = h->n;
    while (h->n > 1) {
        int64_t last = h->n - 1;
        float s = h->score[0];
        int64_t id = h->idx[0];
        h->score[0] = h->score[last];
        h->idx[0] = h->idx[last];
        h->score[last] = s;
        h->idx[last] = id;
        h->n--;
        sift_down(h, 0);
    }
    h->n = 0;
    if (out_score != h->score)
        for (int64_t j = 0; j < n; j++)
            out_score[j] = h->score[j];
    if (out_idx != h->idx)
        for (int64_t j = 0; j < n; j++)
            out_idx[j] = h->idx[j];
}

int64_t mieb_topk_merge(const float *sa, const int64_t *ia, int64_t na,
                        const float *sb, const int64_t *ib, int64_t nb,
                        int64_t k, float *out_s, int64_t *out_i)
{
    int64_t a = 0, b = 0, o = 0;
    while (o < k && (a < na || b < nb)) {
        int take_a = b >= nb || (a < na && mieb_topk_better(sa[a], ia[a], sb[b], ib[b]));
        if (take_a) {
            out_s[o] = sa[a];
            out_i[o++] = ia[a++];
        } else {
            out_s[o] = sb[b];
            out_i[o++] = ib[b++];
        }
    }
    return o;
}
