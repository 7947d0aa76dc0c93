/* check_ranked.h - the unit tests' reference ranking: (score, index) pairs sorted by the
   backend tie rule (score descending, then index ascending), the full sort every top-k is
   checked against. */
#ifndef MIEB_TEST_CHECK_RANKED_H
#define MIEB_TEST_CHECK_RANKED_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

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

/** Rank ref[0..n) and hold the first keep entries of a top-k list (s, i) to it: on a
    difference, one CHECK failure naming `what`, the rank and both entries. 1 when they agree. */
static inline int check_ranked_row(struct pair *ref, int64_t n, int64_t keep, const float *s, const int64_t *i,
                                   const char *what)
{
    check_rank_pairs(ref, n);
    int64_t j = check_ranked_mismatch(ref, keep, s, i);
    CHECK_MSG(j < 0, "%s: rank %lld: got (%g, %lld), want (%g, %lld)", what, (long long)j, j < 0 ? 0.0 : s[j],
              (long long)(j < 0 ? 0 : i[j]), j < 0 ? 0.0 : ref[j].s, (long long)(j < 0 ? 0 : ref[j].i));
    return j < 0;
}
#endif
