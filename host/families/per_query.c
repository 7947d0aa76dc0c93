/* per_query.c - predictions.tsv for --per-query (see per_query.h). */
#include "per_query.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/fileutil.h"

mieb_status mieb_per_query_write_predictions(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                      const char *subset, const char *what, const int64_t *labels,
                                      const int64_t *pred, int64_t n)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    if (!rc->per_query_dir)
        return MIEB_OK;
    if (snprintf(dir, sizeof dir, "%s/%s/%s/%s", rc->per_query_dir, task, split, subset) >= (int)sizeof dir)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--per-query: path too long");
    MIEB_TRY(mieb_mkdirs(dir));
    snprintf(path, sizeof path, "%s/predictions.tsv", dir);
    size_t cap = 64 + (size_t)n * 64, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return mieb_fail(MIEB_ERR_OOM, "--per-query: %lld predictions", (long long)n);
    len += (size_t)snprintf(buf, cap, "index\tlabel\t%s\n", what);
    for (int64_t i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%lld\t%lld\t%lld\n", (long long)i, (long long)labels[i],
                                (long long)pred[i]);
    mieb_status st = mieb_write_file_atomic(path, buf, len);
    free(buf);
    return st;
}
