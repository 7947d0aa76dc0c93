/* suggest.c - the closest registry name to a mistyped one (see suggest.h). */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME 128 /* longer names are not typos worth a suggestion */

/* Optimal string alignment distance between a and b, case-insensitive (for tests). */
static int mieb_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > MAX_NAME || m > MAX_NAME)
        return (int)(n > m ? n : m);
    static int d[MAX_NAME + 1][MAX_NAME + 1]; /* not reentrant: called from the command line only */
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *mieb_suggest(const char *name, const char *const *candidates, int n)
{
    const char *best = NULL;
    int best_d = 1 << 30;
    size_t len = strlen(name);
    for (int i = 0; i < n; i++) {
        if (!candidates[i])
            continue;
        size_t cl = strlen(candidates[i]), longer = cl > len ? cl : len;
        int limit = (int)(longer / 3) > 2 ? (int)(longer / 3) : 2;
        int d = mieb_edit_distance(name, candidates[i]);
        if (d <= limit && d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}

/* The closest task name of the registry (mieb_suggest), or NULL. */
static const char *mieb_suggest_task(const struct mieb_registry *r, const char *name)
{
    const char **names = malloc(((size_t)r->n_tasks + 1) * sizeof *names);
    if (!names)
        return NULL;
    for (int i = 0; i < r->n_tasks; i++)
        names[i] = r->tasks[i].name;
    const char *s = mieb_suggest(name, names, r->n_tasks);
    free(names);
    return s;
}

const char *mieb_suggest_benchmark(const struct mieb_registry *r, const char *name)
{
    const char **names = malloc(((size_t)r->n_benchmarks * 2 + 1) * sizeof *names);
    if (!names)
        return NULL;
    for (int i = 0; i < r->n_benchmarks; i++) {
        names[2 * i] = r->benchmarks[i].name;
        names[2 * i + 1] = r->benchmarks[i].key;
    }
    const char *s = mieb_suggest(name, names, 2 * r->n_benchmarks);
    for (int i = 0; s && i < r->n_benchmarks; i++)
        if (s == r->benchmarks[i].key)
            s = r->benchmarks[i].name;
    free(names);
    return s;
}

void mieb_unknown_task_msg(const struct mieb_registry *r, const char *name, char *buf, size_t n)
{
    const char *close = mieb_suggest_task(r, name);
    if (close)
        snprintf(buf, n, "unknown task '%s' (not in the task registry; did you mean '%s'?)", name, close);
    else
        snprintf(buf, n, "unknown task '%s' (not in the task registry)", name);
}
