/* check.h - a minimal assertion harness for the C unit tests (no dependency). */
#ifndef MIEB_TEST_CHECK_H
#define MIEB_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

static int check_failures, check_count;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)
#define CHECK_MSG(cond, ...)                                                \
    do {                                                                    \
        check_count++;                                                      \
        if (!(cond)) {                                                      \
            check_failures++;                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)
/* splitmix64: the tests' deterministic random numbers (each test keeps its own state). */
static inline unsigned long long check_rng_u64(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [0, 1) from the top 53 bits. */
static inline double check_rng_uniform(unsigned long long *state)
{
    return (double)(check_rng_u64(state) >> 11) / 9007199254740992.0;
}

/* Print the summary line and return the process status. */
static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}
#endif
