/**
 * np_pcg64.h - numpy's np.random.default_rng(seed): SeedSequence(seed) feeding PCG64
 * (XSL-RR 128/64), and the Generator draws mteb's VOC2007 sampling consumes
 * (PROTOCOLS.md §3, §9.2). Bit-for-bit with numpy 2.x:
 *   - SeedSequence: the entropy words of a non-negative int seed (32-bit little-endian words,
 *     [0] for 0), pool of 4 uint32, hashmix/mix, generate_state(4, uint64);
 *   - PCG64: pcg64_set_seed(state = s0:s1, inc = s2:s3), next64 = step then XSL-RR output,
 *     next32 buffered (low half of a fresh next64 first, the high half on the next call);
 *   - random_interval(max): masked rejection on next32 (max <= 2^32-1) or next64;
 *   - Generator.shuffle(list): for i = n-1 .. 1, j = random_interval(i), swap x[i], x[j];
 *   - Generator.random(): (next64 >> 11) * 2^-53.
 * The generator is a plain value: copy it to snapshot its state. Not thread-safe per object.
 */
#ifndef MIEB_EMULATION_NP_PCG64_H
#define MIEB_EMULATION_NP_PCG64_H

#include <stdint.h>

/** PCG64 bit generator state (numpy's pcg64_state). */
struct mieb_pcg64 {
    unsigned __int128 state; /* LCG state */
    unsigned __int128 inc;   /* odd increment */
    int has_uint32;          /* next32 has a buffered high half */
    uint32_t uinteger;       /* the buffered high half */
};

/**
 * SeedSequence(seed).generate_state(n_words, uint32) for a non-negative int seed with no
 * spawn key (pool size 4). out receives n_words words; n_words >= 0.
 */
void mieb_seedseq_generate_u32(uint64_t seed, uint32_t *out, int n_words);

/** np.random.default_rng(seed) for a non-negative int seed: a fresh PCG64 with no buffered word. */
void mieb_pcg64_seed(struct mieb_pcg64 *g, uint64_t seed);

/** PCG64.random_raw(): one 64-bit output (does not touch the 32-bit buffer, as in numpy). */
uint64_t mieb_pcg64_next64(struct mieb_pcg64 *g);

/** numpy's next_uint32 for PCG64: buffered halves of next64, low half first. */
uint32_t mieb_pcg64_next32(struct mieb_pcg64 *g);

/** numpy's random_interval(max): uniform in [0, max] by masked rejection; 0 for max 0. */
uint64_t mieb_pcg64_interval(struct mieb_pcg64 *g, uint64_t max);

/** Generator.shuffle(x) of a Python list (or 1-D array) of n items, in place. n >= 0. */
void mieb_pcg64_shuffle_i64(struct mieb_pcg64 *g, int64_t *x, int64_t n);

/** Generator.random(): a double in [0, 1) from the top 53 bits of next64. */
double mieb_pcg64_random(struct mieb_pcg64 *g);

#endif
