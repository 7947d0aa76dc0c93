/*
 * pcg64_tool.c - test driver for host/emulation/np_pcg64.c: prints draws of
 * np.random.default_rng(seed) for tests/py/test_np_pcg64.py to compare with numpy.
 *
 * usage: pcg64_tool SEED OP [OP ...], each OP applied in order to one generator:
 *   state N        SeedSequence(SEED).generate_state(N, uint32), one word a line
 *   raw K          K values of random_raw() (next64)
 *   u32 K          K values of next_uint32 (the buffered halves)
 *   interval M K   K values of random_interval(M)
 *   shuffle N      shuffle list(range(N)), print it on one line
 *   random K       K doubles of Generator.random(), as %.17g
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/emulation/np_pcg64.h"

static int parse_u64(const char *s, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (!s[0] || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t seed, a = 0, b = 0;
    if (argc < 2 || parse_u64(argv[1], &seed)) {
        fprintf(stderr, "usage: pcg64_tool SEED OP [ARGS] ...\n");
        return 2;
    }
    struct mieb_pcg64 g;
    mieb_pcg64_seed(&g, seed);
    for (int i = 2; i < argc; i++) {
        const char *op = argv[i];
        int two = !strcmp(op, "interval");
        if (i + 1 + two >= argc || parse_u64(argv[i + 1], &a) || (two && parse_u64(argv[i + 2], &b))) {
            fprintf(stderr, "pcg64_tool: bad arguments for %s\n", op);
            return 2;
        }
        i += 1 + two;
        if (!strcmp(op, "state")) {
            uint32_t *w = malloc((a ? a : 1) * sizeof *w);
            if (!w)
                return 1;
            mieb_seedseq_generate_u32(seed, w, (int)a);
            for (uint64_t k = 0; k < a; k++)
                printf("%" PRIu32 "\n", w[k]);
            free(w);
        } else if (!strcmp(op, "raw")) {
            for (uint64_t k = 0; k < a; k++)
                printf("%" PRIu64 "\n", mieb_pcg64_next64(&g));
        } else if (!strcmp(op, "u32")) {
            for (uint64_t k = 0; k < a; k++)
                printf("%" PRIu32 "\n", mieb_pcg64_next32(&g));
        } else if (!strcmp(op, "interval")) {
            for (uint64_t k = 0; k < b; k++)
                printf("%" PRIu64 "\n", mieb_pcg64_interval(&g, a));
        } else if (!strcmp(op, "shuffle")) {
            int64_t *x = malloc((a ? a : 1) * sizeof *x);
            if (!x)
                return 1;
            for (uint64_t k = 0; k < a; k++)
                x[k] = (int64_t)k;
            mieb_pcg64_shuffle_i64(&g, x, (int64_t)a);
            for (uint64_t k = 0; k < a; k++)
                printf(k ? " %" PRId64 : "%" PRId64, x[k]);
            printf("\n");
            free(x);
        } else if (!strcmp(op, "random")) {
            for (uint64_t k = 0; k < a; k++)
                printf("%.17g\n", mieb_pcg64_random(&g));
        } else {
            fprintf(stderr, "pcg64_tool: unknown op %s\n", op);
            return 2;
        }
    }
    return 0;
}
