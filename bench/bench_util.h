/* bench_util.h - what the host-library benchmarks (canon_rate, sort_rate, heap_rate,
   topk_rate) share: a monotonic clock and a seeded uniform generator for their inputs. */
#ifndef MIEB_BENCH_UTIL_H
#define MIEB_BENCH_UTIL_H
#include <stdint.h>
#include <time.h>

/** Seconds on the monotonic clock. */
static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/** A uniform double in [0, 1) from xorshift64* state *s (any nonzero seed). */
static inline double bench_uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-53;
}
#endif
