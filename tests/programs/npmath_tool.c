/*
 * npmath_tool.c - drive host/emulation/npmath.c from tests/py/test_npmath.py.
 *
 * One request per stdin line: "<op> <n> <x_0> ... <x_n-1>" with every double given as
 * the 16 hex digits of its bits, so no decimal conversion can blur a last-bit difference.
 * ops: sum, mean, std, reduceat (one segment), trapezoid (the n values are y then x, n/2
 * each), argsort (prints the indices), round<D> (numpy's round of each value to D
 * decimals, one result line per value). Prints one line per request: the result's bits
 * (or the indices, space separated).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulation/npmath.h"

static void print_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    printf("%016" PRIx64 "\n", b);
}

int main(void)
{
    char op[16];
    long long n;
    while (scanf("%15s %lld", op, &n) == 2) {
        if (n < 0)
            return 2;
        double *a = malloc(sizeof(double) * (size_t)(n + 1));
        double *scratch = malloc(sizeof(double) * (size_t)(n + 1));
        int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n + 1));
        if (!a || !scratch || !idx)
            return 3;
        for (long long i = 0; i < n; i++) {
            uint64_t b;
            if (scanf("%" SCNx64, &b) != 1)
                return 2;
            memcpy(&a[i], &b, sizeof b);
        }
        if (strcmp(op, "sum") == 0) {
            print_bits(mieb_np_sum(a, n));
        } else if (strcmp(op, "mean") == 0) {
            print_bits(mieb_np_mean(a, n));
        } else if (strcmp(op, "std") == 0) {
            print_bits(mieb_np_std(a, n, scratch));
        } else if (strcmp(op, "reduceat") == 0) {
            print_bits(mieb_np_reduceat_segment(a, n));
        } else if (strcmp(op, "trapezoid") == 0) {
            print_bits(mieb_np_trapezoid(a, a + n / 2, n / 2, scratch));
        } else if (strcmp(op, "argsort") == 0) {
            if (mieb_np_argsort_stable(a, n, idx) != MIEB_OK)
                return 3;
            for (long long i = 0; i < n; i++)
                printf(i ? " %" PRId64 : "%" PRId64, idx[i]);
            printf("\n");
        } else if (strncmp(op, "round", 5) == 0) {
            int d = atoi(op + 5);
            for (long long i = 0; i < n; i++)
                print_bits(mieb_np_round(a[i], d));
        } else {
            fprintf(stderr, "npmath_tool: unknown op %s\n", op);
            return 2;
        }
        free(a);
        free(scratch);
        free(idx);
    }
    return 0;
}
