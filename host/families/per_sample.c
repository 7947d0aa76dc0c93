/* per_sample.c - per-sample files of `run --per-query` (see per_sample.h for the columns). */
#include "per_sample.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileutil.h"
#include "../core/pyfloat.h"
#include "../json/json_py.h"
#include "../metrics/multilabel_knn.h"
#include "../emulation/npmath.h"

/* DIR/<task>/<split>/<subset>/<name> <- b (atomically); frees b. */
static mieb_status commit(const struct mieb_run_ctx *rc, const char *task, const char *split, const char *subset,
                          const char *name, struct mieb_buf *b, mieb_status st)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    if (st == MIEB_OK &&
        snprintf(dir, sizeof dir, "%s/%s/%s/%s", rc->per_query_dir, task, split, subset) >= (int)sizeof dir)
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "--per-query: path too long");
    if (st == MIEB_OK)
        st = mieb_mkdirs(dir);
    if (st == MIEB_OK) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        st = mieb_write_file_atomic(path, b->data ? b->data : "", b->len);
    }
    mieb_buf_free(b);
    return st;
}

static mieb_status put(struct mieb_buf *b, const char *s) { return mieb_buf_append(b, s, strlen(s)); }

static mieb_status put_i64(struct mieb_buf *b, const char *sep, int64_t v)
{
    char t[48];
    int k = snprintf(t, sizeof t, "%s%lld", sep, (long long)v);
    return mieb_buf_append(b, t, (size_t)k);
}

static mieb_status put_f64(struct mieb_buf *b, const char *sep, double v)
{
    char t[40];
    MIEB_TRY(put(b, sep));
    mieb_py_repr(v, t, sizeof t);
    return put(b, t);
}

mieb_status mieb_per_sample_write_probe(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                const char *subset, const int64_t *labels, const int64_t *preds, int64_t n,
                                int64_t n_exp)
{
    if (!rc->per_query_dir)
        return MIEB_OK;
    struct mieb_buf b = {0};
    mieb_status st = put(&b, "index\tlabel");
    for (int64_t e = 0; e < n_exp && st == MIEB_OK; e++)
        st = put_i64(&b, "\tprediction_", e);
    if (st == MIEB_OK)
        st = put(&b, "\n");
    for (int64_t i = 0; i < n && st == MIEB_OK; i++) {
        st = put_i64(&b, "", i);
        if (st == MIEB_OK)
            st = put_i64(&b, "\t", labels[i]);
        for (int64_t e = 0; e < n_exp && st == MIEB_OK; e++)
            st = put_i64(&b, "\t", preds[e * n + i]);
        if (st == MIEB_OK)
            st = put(&b, "\n");
    }
    return commit(rc, task, split, subset, "predictions.tsv", &b, st);
}

/* Sorted label ids of a 0/1 row, joined by ','. */
static mieb_status put_set(struct mieb_buf *b, const uint8_t *row, const int64_t *classes, int64_t L)
{
    int first = 1;
    MIEB_TRY(put(b, "\t"));
    for (int64_t c = 0; c < L; c++)
        if (row[c]) {
            MIEB_TRY(put_i64(b, first ? "" : ",", classes[c]));
            first = 0;
        }
    return MIEB_OK;
}

mieb_status mieb_per_sample_write_multilabel(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                     const char *subset, const int64_t *classes, int64_t L, const uint8_t *ytrue,
                                     const uint8_t *preds, int64_t n, int64_t n_exp)
{
    if (!rc->per_query_dir)
        return MIEB_OK;
    struct mieb_buf b = {0};
    double *scratch = malloc((size_t)(L > 0 ? L : 1) * sizeof *scratch);
    mieb_status st = scratch ? put(&b, "index\tlabels") : mieb_fail(MIEB_ERR_OOM, "--per-query: lrap scratch");
    for (int64_t e = 0; e < n_exp && st == MIEB_OK; e++) {
        st = put_i64(&b, "\tprediction_", e);
        if (st == MIEB_OK)
            st = put_i64(&b, "\taccuracy_", e);
        if (st == MIEB_OK)
            st = put_i64(&b, "\tlrap_", e);
        if (st == MIEB_OK)
            st = put_i64(&b, "\thamming_", e);
    }
    if (st == MIEB_OK)
        st = put(&b, "\n");
    for (int64_t i = 0; i < n && st == MIEB_OK; i++) {
        st = put_i64(&b, "", i);
        if (st == MIEB_OK)
            st = put_set(&b, ytrue + i * L, classes, L);
        for (int64_t e = 0; e < n_exp && st == MIEB_OK; e++) {
            const uint8_t *p = preds + (e * n + i) * L;
            double acc, lrap, ham;
            mieb_multilabel_row_scores(ytrue + i * L, p, L, scratch, &acc, &lrap, &ham);
            st = put_set(&b, p, classes, L);
            if (st == MIEB_OK)
                st = put_f64(&b, "\t", acc);
            if (st == MIEB_OK)
                st = put_f64(&b, "\t", lrap);
            if (st == MIEB_OK)
                st = put_f64(&b, "\t", ham);
        }
        if (st == MIEB_OK)
            st = put(&b, "\n");
    }
    free(scratch);
    return commit(rc, task, split, subset, "predictions.tsv", &b, st);
}

void mieb_per_sample_compo_add(struct mieb_compo_counts *c, const float *s, int64_t n_img, int64_t n_txt, uint8_t *flags)
{
    struct mieb_compo_counts one = {0};
    mieb_compo_add_sample(&one, s, n_img, n_txt); /* the metric's own judgement, counted once */
    c->n += one.n;
    c->text_ok += one.text_ok;
    c->image_ok += one.image_ok;
    c->all_ok += one.all_ok;
    if (flags) {
        flags[0] = (uint8_t)one.text_ok;
        flags[1] = (uint8_t)one.image_ok;
    }
}

mieb_status mieb_per_sample_write_compo(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                const char *subset, const uint8_t *flags, int64_t n)
{
    if (!rc->per_query_dir)
        return MIEB_OK;
    struct mieb_buf b = {0};
    mieb_status st = put(&b, "index\ttext_correct\timage_correct\tcorrect\n");
    for (int64_t i = 0; i < n && st == MIEB_OK; i++) {
        char t[96];
        int k = snprintf(t, sizeof t, "%lld\t%d\t%d\t%d\n", (long long)i, flags[2 * i], flags[2 * i + 1],
                         flags[2 * i] && flags[2 * i + 1]);
        st = mieb_buf_append(&b, t, (size_t)k);
    }
    return commit(rc, task, split, subset, "predictions.tsv", &b, st);
}

mieb_status mieb_per_sample_write_sts(const struct mieb_run_ctx *rc, const char *task, const char *split,
                              const char *subset, const double *gold, const double *model, const double *cosine,
                              const double *manhattan, const double *euclidean, int64_t n)
{
    if (!rc->per_query_dir)
        return MIEB_OK;
    struct mieb_buf b = {0};
    mieb_status st = put(&b, "index\tgold\tsimilarity\tcosine\tmanhattan\teuclidean\n");
    for (int64_t i = 0; i < n && st == MIEB_OK; i++) {
        st = put_i64(&b, "", i);
        if (st == MIEB_OK)
            st = put_f64(&b, "\t", gold[i]);
        if (st == MIEB_OK)
            st = put_f64(&b, "\t", model[i]);
        if (st == MIEB_OK)
            st = put_f64(&b, "\t", cosine[i]);
        if (st == MIEB_OK)
            st = put_f64(&b, "\t", manhattan[i]);
        if (st == MIEB_OK)
            st = put_f64(&b, "\t", euclidean[i]);
        if (st == MIEB_OK)
            st = put(&b, "\n");
    }
    return commit(rc, task, split, subset, "predictions.tsv", &b, st);
}

mieb_status mieb_per_sample_write_aggregate(const struct mieb_run_ctx *rc, const char *aggregate, const char *split,
                                    const char *subtask, const char *const *subsets, int n_subsets)
{
    if (!rc->per_query_dir)
        return MIEB_OK;
    struct mieb_buf b = {0};
    mieb_status st = put(&b, "task\tsplit\tsubset\n");
    for (int h = 0; h < n_subsets && st == MIEB_OK; h++) {
        st = put(&b, subtask);
        if (st == MIEB_OK)
            st = put(&b, "\t");
        if (st == MIEB_OK)
            st = put(&b, split);
        if (st == MIEB_OK)
            st = put(&b, "\t");
        if (st == MIEB_OK)
            st = put(&b, subsets[h]);
        if (st == MIEB_OK)
            st = put(&b, "\n");
    }
    return commit(rc, aggregate, split, "default", "aggregate.tsv", &b, st);
}
