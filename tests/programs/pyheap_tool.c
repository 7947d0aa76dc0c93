/*
 * pyheap_tool.c - drives the mteb heap emulation (host/families/mteb_heap.c) for the
 * Python test that compares it with heapq. Input on stdin: "LIMIT N" then N lines
 * "score id"; output: the heap array, one "score id" per line. With --sorted the array is
 * first put in the order of Python's sorted(key=score, reverse=True) (mieb_py_sort_score_desc,
 * what skip_first_result does to it). With --prefix the offers go first through
 * mieb_pyheap_offer_sorted_prefix (as a chunk's list does), the rest one by one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "families/mteb_heap.h"

int main(int argc, char **argv)
{
    int sorted = argc > 1 && strcmp(argv[1], "--sorted") == 0;
    int prefix = argc > 1 && strcmp(argv[1], "--prefix") == 0;
    long limit, n;
    if (scanf("%ld %ld", &limit, &n) != 2 || n < 0 || limit < 0)
        return 2;
    char **ids = calloc((size_t)n + 1, sizeof *ids);
    float *sc = malloc(sizeof(float) * ((size_t)n + 1)), *hs = malloc(sizeof(float) * ((size_t)limit + 1));
    int64_t *hd = malloc(sizeof(int64_t) * ((size_t)limit + 1));
    struct mieb_pyheap h;
    mieb_pyheap_init(&h, hs, hd, limit, (const char *const *)ids);
    int64_t *rows = malloc(sizeof(int64_t) * ((size_t)n + 1));
    for (long i = 0; i < n; i++) {
        char buf[256];
        if (scanf("%f %255s", &sc[i], buf) != 2)
            return 2;
        ids[i] = strdup(buf);
        rows[i] = i;
    }
    int64_t first = prefix ? mieb_pyheap_offer_sorted_prefix(&h, limit, sc, rows, n) : 0;
    if (prefix)
        fprintf(stderr, "prefix took %lld\n", (long long)first);
    for (long i = first; i < n; i++)
        mieb_pyheap_offer(&h, limit, sc[i], i);
    free(rows);
    if (sorted) {
        uint64_t *scratch = malloc(sizeof(uint64_t) * 4 * ((size_t)h.n + 1));
        if (!scratch)
            return 2;
        mieb_py_sort_score_desc(h.score, h.doc, h.n, scratch);
        free(scratch);
    }
    for (int64_t j = 0; j < h.n; j++)
        printf("%.9g %s\n", h.score[j], ids[h.doc[j]]);
    for (long i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    free(sc);
    free(hs);
    free(hd);
    return 0;
}
