/**
 * np_randomstate.h - numpy's legacy np.random.RandomState(seed) (MT19937) draws that
 * scikit-learn's MiniBatchKMeans consumes: random_sample (53-bit doubles), randint
 * (masked rejection), choice with p (random_sample + searchsorted on the cdf) and
 * permutation (Fisher-Yates with masked rejection). Bit-for-bit with numpy 2.x.
 */
#ifndef MIEB_EMULATION_NP_RANDOMSTATE_H
#define MIEB_EMULATION_NP_RANDOMSTATE_H

#include <stdint.h>

struct mieb_rs {
    uint32_t mt[624];
    int pos;
};

/** np.random.RandomState(seed) for a 32-bit seed (init_genrand). */
void mieb_rs_seed(struct mieb_rs *rs, uint32_t seed);
/** random_sample(): (a>>5 * 2^26 + b>>6) / 2^53 from two 32-bit draws. */
double mieb_rs_random_sample(struct mieb_rs *rs);
/** Uniform integer in [0, max] by masked rejection (numpy's random_interval / legacy randint). */
uint64_t mieb_rs_interval(struct mieb_rs *rs, uint64_t max);
/** randint(0, high, size=n): out[i] in [0, high); high >= 1. */
void mieb_rs_randint(struct mieb_rs *rs, int64_t high, int64_t n, int64_t *out);
/** permutation(n): arange(n) shuffled in place as numpy's legacy shuffle does. */
void mieb_rs_permutation(struct mieb_rs *rs, int64_t n, int64_t *out);
/**
 * choice(len(cdf), size=n, p=..., replace=True) given numpy's normalised cdf
 * (p.cumsum() / cdf[-1], in double): out[i] = searchsorted(cdf, random_sample(), 'right').
 */
void mieb_rs_choice_cdf(struct mieb_rs *rs, const double *cdf, int64_t m, int64_t n, int64_t *out);

#endif
