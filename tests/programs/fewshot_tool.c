/*
 * fewshot_tool.c - test driver for host/emulation/fewshot_sample.c.
 *   fewshot_tool perm N          : prints RandomState(42).shuffle(list(range(N))), one per line
 *   fewshot_tool draw SPL N_EXP  : stdin "n label_0 ... label_{n-1}"; prints "L", then
 *                                  N_EXP lines of L selected train rows (selection order)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "emulation/fewshot_sample.h"

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "perm")) {
        long long n = strtoll(argv[2], NULL, 10);
        int64_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
        if (!p)
            return 2;
        mieb_fewshot_shuffle_perm(42, n, p);
        for (long long i = 0; i < n; i++)
            printf("%lld\n", (long long)p[i]);
        free(p);
        return 0;
    }
    if (argc != 4 || strcmp(argv[1], "draw"))
        return 2;
    long long spl = strtoll(argv[2], NULL, 10), ne = strtoll(argv[3], NULL, 10), n = 0;
    if (scanf("%lld", &n) != 1 || n < 0)
        return 2;
    int64_t *lab = malloc((size_t)(n > 0 ? n : 1) * sizeof *lab), *sel = NULL, L = 0;
    for (long long i = 0; i < n; i++) {
        long long v;
        if (scanf("%lld", &v) != 1)
            return 2;
        lab[i] = v;
    }
    if (mieb_fewshot_draw(lab, n, spl, ne, &sel, &L) != MIEB_OK) {
        fprintf(stderr, "%s\n", mieb_last_error());
        return 1;
    }
    printf("%lld\n", (long long)L);
    for (long long e = 0; e < ne; e++) {
        for (int64_t i = 0; i < L; i++)
            printf(i ? " %lld" : "%lld", (long long)sel[e * L + i]);
        printf("\n");
    }
    free(lab), free(sel);
    return 0;
}
