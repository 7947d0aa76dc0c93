/*
 * np_pcg64.c - numpy's SeedSequence and PCG64 bit generator, and the Generator draws that
 * mteb's multilabel sampling uses (np_pcg64.h). Constants and the order of operations are
 * numpy's (numpy/random/bit_generator.pyx, src/pcg64/pcg64.h, src/distributions).
 */
#include "np_pcg64.h"

#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_MULT_L 0xca01f9ddu
#define SS_MIX_MULT_R 0x4973f715u
#define SS_XSHIFT 16
#define SS_POOL 4

static uint32_t hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= SS_MULT_A;
    value *= *hash_const;
    value ^= value >> SS_XSHIFT;
    return value;
}

static uint32_t mix(uint32_t x, uint32_t y)
{
    uint32_t r = SS_MIX_MULT_L * x - SS_MIX_MULT_R * y;
    r ^= r >> SS_XSHIFT;
    return r;
}

void mieb_seedseq_generate_u32(uint64_t seed, uint32_t *out, int n_words)
{
    /* _coerce_to_uint32_array(int): 32-bit words, least significant first ([0] for 0) */
    uint32_t entropy[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    int n_ent = (seed >> 32) ? 2 : 1;
    uint32_t pool[SS_POOL], hc = SS_INIT_A;
    for (int i = 0; i < SS_POOL; i++)
        pool[i] = hashmix(i < n_ent ? entropy[i] : 0u, &hc);
    for (int s = 0; s < SS_POOL; s++)
        for (int d = 0; d < SS_POOL; d++)
            if (s != d)
                pool[d] = mix(pool[d], hashmix(pool[s], &hc));
    /* entropy beyond the pool size: none for a seed below 2^128 */
    uint32_t hb = SS_INIT_B;
    for (int i = 0; i < n_words; i++) {
        uint32_t w = pool[i % SS_POOL];
        w ^= hb;
        hb *= SS_MULT_B;
        w *= hb;
        w ^= w >> SS_XSHIFT;
        out[i] = w;
    }
}

/* PCG_DEFAULT_MULTIPLIER_128 */
#define PCG_MULT ((((unsigned __int128)0x2360ED051FC65DA4ull) << 64) | 0x4385DF649FCCF645ull)

static void step(struct mieb_pcg64 *g)
{
    g->state = g->state * PCG_MULT + g->inc;
}

void mieb_pcg64_seed(struct mieb_pcg64 *g, uint64_t seed)
{
    uint32_t w[8];
    mieb_seedseq_generate_u32(seed, w, 8);
    uint64_t s[4]; /* generate_state(4, uint64): little-endian pairs of words */
    for (int i = 0; i < 4; i++)
        s[i] = (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
    unsigned __int128 initstate = ((unsigned __int128)s[0] << 64) | s[1];
    unsigned __int128 initseq = ((unsigned __int128)s[2] << 64) | s[3];
    /* pcg_setseq_128_srandom_r */
    g->state = 0;
    g->inc = (initseq << 1) | 1u;
    step(g);
    g->state += initstate;
    step(g);
    g->has_uint32 = 0;
    g->uinteger = 0;
}

uint64_t mieb_pcg64_next64(struct mieb_pcg64 *g)
{
    step(g);
    /* XSL-RR: rotate (hi ^ lo) right by the top 6 bits of the state */
    uint64_t hi = (uint64_t)(g->state >> 64), lo = (uint64_t)g->state;
    unsigned rot = (unsigned)(hi >> 58);
    uint64_t v = hi ^ lo;
    return (v >> rot) | (v << ((64u - rot) & 63u));
}

uint32_t mieb_pcg64_next32(struct mieb_pcg64 *g)
{
    if (g->has_uint32) {
        g->has_uint32 = 0;
        return g->uinteger;
    }
    uint64_t next = mieb_pcg64_next64(g);
    g->has_uint32 = 1;
    g->uinteger = (uint32_t)(next >> 32);
    return (uint32_t)(next & 0xffffffffu);
}

uint64_t mieb_pcg64_interval(struct mieb_pcg64 *g, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max, v;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    if (max <= 0xffffffffull) {
        while ((v = (mieb_pcg64_next32(g) & mask)) > max)
            ;
    } else {
        while ((v = (mieb_pcg64_next64(g) & mask)) > max)
            ;
    }
    return v;
}

void mieb_pcg64_shuffle_i64(struct mieb_pcg64 *g, int64_t *x, int64_t n)
{
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = (int64_t)mieb_pcg64_interval(g, (uint64_t)i);
        int64_t t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}

double mieb_pcg64_random(struct mieb_pcg64 *g)
{
    return (double)(mieb_pcg64_next64(g) >> 11) * (1.0 / 9007199254740992.0);
}
