/* np_randomstate.c - numpy legacy RandomState (MT19937) draws; see np_randomstate.h. */
#include "np_randomstate.h"

void mieb_rs_seed(struct mieb_rs *rs, uint32_t seed)
{
    rs->mt[0] = seed;
    for (int i = 1; i < 624; i++)
        rs->mt[i] = 1812433253u * (rs->mt[i - 1] ^ (rs->mt[i - 1] >> 30)) + (uint32_t)i;
    rs->pos = 624;
}

static void twist(struct mieb_rs *rs)
{
    uint32_t *mt = rs->mt;
    for (int i = 0; i < 624; i++) {
        uint32_t y = (mt[i] & 0x80000000u) | (mt[(i + 1) % 624] & 0x7fffffffu);
        mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    rs->pos = 0;
}

/* One tempered 32-bit output. */
static uint32_t mieb_rs_next_u32(struct mieb_rs *rs)
{
    if (rs->pos >= 624)
        twist(rs);
    uint32_t y = rs->mt[rs->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double mieb_rs_random_sample(struct mieb_rs *rs)
{
    int32_t a = (int32_t)(mieb_rs_next_u32(rs) >> 5), b = (int32_t)(mieb_rs_next_u32(rs) >> 6);
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

uint64_t mieb_rs_interval(struct mieb_rs *rs, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    uint64_t v;
    if (max <= 0xffffffffu) {
        while ((v = (mieb_rs_next_u32(rs) & mask)) > max)
            ;
    } else {
        /* numpy builds 64-bit draws as (hi << 32) | lo from two 32-bit outputs */
        do {
            uint64_t hi = mieb_rs_next_u32(rs), lo = mieb_rs_next_u32(rs);
            v = ((hi << 32) | lo) & mask;
        } while (v > max);
    }
    return v;
}

void mieb_rs_randint(struct mieb_rs *rs, int64_t high, int64_t n, int64_t *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = (int64_t)mieb_rs_interval(rs, (uint64_t)(high - 1));
}

void mieb_rs_permutation(struct mieb_rs *rs, int64_t n, int64_t *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = i;
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = (int64_t)mieb_rs_interval(rs, (uint64_t)i);
        int64_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

/* searchsorted(a, v, side) on an ascending double array (side_right != 0: 'right'). */
static int64_t mieb_searchsorted(const double *a, int64_t m, double v, int side_right)
{
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (side_right ? a[mid] <= v : a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void mieb_rs_choice_cdf(struct mieb_rs *rs, const double *cdf, int64_t m, int64_t n, int64_t *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = mieb_searchsorted(cdf, m, mieb_rs_random_sample(rs), 1);
}
