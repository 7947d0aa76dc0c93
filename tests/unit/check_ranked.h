/* check_ranked.h - the unit tests' reference ranking: (score, index) pairs sorted by the
   backend tie rule (score descending, then index ascending), the full sort every top-k is
   checked against. */
#ifndef MIEB_TEST_CHECK_RANKED_H
#define MIEB_TEST_CHECK_RANKED_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pair {
    float s;
    int64_t i;
};

static inline int check_cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->s != y->s)
        return x->s > y->s ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/** Sort n pairs best first (no NaN scores). */
static inline void check_rank_pairs(struct pair *p, int64_t n) { qsort(p, (size_t)n, sizeof *p, check_cmp_pair); }

/** The first rank < keep where a top-k list (scores s, indices i) differs from the sorted
    reference, scores compared bit for bit; -1 when the lists agree. */
static inline int64_t check_ranked_mismatch(const struct pair *ref, int64_t keep, const float *s, const int64_t *i)
{
    for (int64_t j = 0; j < keep; j++)
        if (memcmp(&ref[j].s, &s[j], sizeof(float)) != 0 || ref[j].i != i[j])
            return j;
    return -1;
}
#endif
