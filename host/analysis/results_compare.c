/* results_compare.c - key-by-key comparison of two TaskResult files (results_compare.h). */
#include "results_compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileutil.h"
#include "../core/pyfloat.h"
#include "../json/json_py.h"

#define RESULT_FILE_MAX ((size_t)256 << 20)

/*
 * The per-family tolerances: the one place they are set (docs/PARITY.md "Checking parity"
 * restates them). Retrieval, zero-shot, compositionality and STS are reproduced operation by
 * operation, so they must agree after mteb's own 6-decimal rounding. The linear probe
 * (and VOC2007's kNN) and MiniBatchKMeans clustering are reproduced too and agree exactly in
 * every test, but they iterate (L-BFGS, k-means) over floating-point sums whose order BLAS
 * chooses, so one flipped prediction or assignment is possible on other data: 1e-4 allows
 * one flip in 10,000 rows.
 */
static const struct {
    enum mieb_family fam;
    const char *label;
    struct mieb_tolerance tol;
} FAMILY_TOL[] = {
    {MIEB_FAMILY_RETRIEVAL, "retrieval", {true, 0.0}},
    {MIEB_FAMILY_ZEROSHOT, "zero-shot", {true, 0.0}},
    {MIEB_FAMILY_COMPOSITIONALITY, "compositionality", {true, 0.0}},
    {MIEB_FAMILY_STS, "sts", {true, 0.0}},
    {MIEB_FAMILY_CLASSIFICATION, "probe", {false, 1e-4}},
    {MIEB_FAMILY_CLUSTERING, "clustering", {false, 1e-4}},
    {MIEB_FAMILY_UNKNOWN, "unknown", {true, 0.0}},
};

#define N_FAMILY_TOL (sizeof FAMILY_TOL / sizeof FAMILY_TOL[0])

struct mieb_tolerance mieb_family_tolerance(enum mieb_family fam)
{
    for (size_t i = 0; i < N_FAMILY_TOL; i++)
        if (FAMILY_TOL[i].fam == fam)
            return FAMILY_TOL[i].tol;
    return (struct mieb_tolerance){true, 0.0};
}

const char *mieb_family_label(enum mieb_family fam)
{
    for (size_t i = 0; i < N_FAMILY_TOL; i++)
        if (FAMILY_TOL[i].fam == fam)
            return FAMILY_TOL[i].label;
    return "unknown";
}

enum mieb_family mieb_family_from_label(const char *label)
{
    for (size_t i = 0; i < N_FAMILY_TOL; i++)
        if (!strcmp(FAMILY_TOL[i].label, label))
            return FAMILY_TOL[i].fam;
    return MIEB_FAMILY_UNKNOWN;
}

enum mieb_family mieb_family_from_result(const cJSON *result)
{
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(result, "scores");
    const cJSON *split = scores ? scores->child : NULL;
    const cJSON *entry = cJSON_IsArray(split) ? cJSON_GetArrayItem(split, 0) : NULL;
    if (!cJSON_IsObject(entry))
        return MIEB_FAMILY_UNKNOWN;
    static const struct { const char *key; enum mieb_family fam; } probes[] = {
        {"ndcg_at_10", MIEB_FAMILY_RETRIEVAL},     {"cosine_spearman", MIEB_FAMILY_STS},
        {"image_acc", MIEB_FAMILY_COMPOSITIONALITY}, {"cluster_accuracy", MIEB_FAMILY_CLUSTERING},
        {"scores_per_experiment", MIEB_FAMILY_CLASSIFICATION}, {"accuracy", MIEB_FAMILY_ZEROSHOT},
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        if (cJSON_GetObjectItemCaseSensitive(entry, probes[i].key))
            return probes[i].fam;
    return MIEB_FAMILY_UNKNOWN;
}

mieb_status mieb_read_py_json_file(const char *path, cJSON **out)
{
    char *text = NULL, *strict = NULL;
    size_t len = 0, slen = 0;
    *out = NULL;
    MIEB_TRY(mieb_read_file(path, RESULT_FILE_MAX, &text, &len));
    mieb_status st = mieb_json_py_to_strict(text, len, &strict, &slen);
    free(text);
    if (st != MIEB_OK)
        return mieb_fail_context(st, "%s", path);
    *out = cJSON_ParseWithLength(strict, slen);
    free(strict);
    if (!*out)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: not valid JSON", path);
    return MIEB_OK;
}

/* ---- the comparison walk ---- */

struct walk {
    struct mieb_tolerance tol;
    struct mieb_cmp_result *r;
    int cap;
    mieb_status st;
};

/* Keys of a score entry that are not scores. */
static bool ignored_key(const char *k)
{
    return !strcmp(k, "mteb_version") || !strcmp(k, "evaluation_time");
}

/* A leaf value as short text for the report. */
static char *value_text(const cJSON *v)
{
    char buf[64];
    if (!v)
        return strdup("(missing)");
    if (cJSON_IsNull(v))
        return strdup("NaN/null");
    if (cJSON_IsNumber(v)) {
        mieb_py_repr(v->valuedouble, buf, sizeof buf);
        return strdup(buf);
    }
    if (cJSON_IsString(v)) {
        snprintf(buf, sizeof buf, "\"%.56s\"", v->valuestring);
        return strdup(buf);
    }
    if (cJSON_IsBool(v))
        return strdup(cJSON_IsTrue(v) ? "true" : "false");
    if (cJSON_IsArray(v)) {
        snprintf(buf, sizeof buf, "[list of %d]", cJSON_GetArraySize(v));
        return strdup(buf);
    }
    return strdup("{object}");
}

static void add_diff(struct walk *w, const char *key, const cJSON *a, const cJSON *b, double diff)
{
    struct mieb_cmp_result *r = w->r;
    if (w->st != MIEB_OK)
        return;
    if (r->n_diffs == w->cap) {
        int nc = w->cap ? 2 * w->cap : 16;
        void *p = realloc(r->diffs, (size_t)nc * sizeof *r->diffs);
        if (!p) {
            w->st = mieb_fail(MIEB_ERR_OOM, "parity: differences");
            return;
        }
        r->diffs = p;
        w->cap = nc;
    }
    struct mieb_cmp_diff *d = &r->diffs[r->n_diffs];
    d->key = strdup(key);
    d->ref = value_text(a);
    d->cand = value_text(b);
    d->diff = diff;
    if (!d->key || !d->ref || !d->cand) {
        free(d->key), free(d->ref), free(d->cand);
        w->st = mieb_fail(MIEB_ERR_OOM, "parity: differences");
        return;
    }
    r->n_diffs++;
}

static bool numbers_agree(struct mieb_tolerance tol, double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    if (tol.exact)
        return mieb_py_round(a, 6) == mieb_py_round(b, 6);
    return fabs(a - b) <= tol.abs_tol;
}

static void walk_value(struct walk *w, const char *key, const cJSON *a, const cJSON *b);

/* path = "<key>/<name>", cut at the buffer's end (keys are short; a cut one still names the place). */
static void key_path(char *path, size_t n, const char *key, const char *name)
{
    if (snprintf(path, n, "%s/%s", key, name) >= (int)n)
        path[n - 1] = '\0';
}

static void walk_object(struct walk *w, const char *key, const cJSON *a, const cJSON *b, bool top)
{
    char path[1024];
    const cJSON *it;
    /* every key of a, then the keys only b has */
    cJSON_ArrayForEach(it, a)
    {
        if (top && ignored_key(it->string))
            continue;
        key_path(path, sizeof path, key, it->string);
        walk_value(w, path, it, cJSON_GetObjectItemCaseSensitive(b, it->string));
    }
    cJSON_ArrayForEach(it, b)
    {
        if ((top && ignored_key(it->string)) || cJSON_GetObjectItemCaseSensitive(a, it->string))
            continue;
        key_path(path, sizeof path, key, it->string);
        walk_value(w, path, NULL, it);
    }
}

static void walk_value(struct walk *w, const char *key, const cJSON *a, const cJSON *b)
{
    char path[1024];
    if (w->st != MIEB_OK)
        return;
    if (!a || !b) {
        add_diff(w, key, a, b, NAN);
        return;
    }
    bool an = cJSON_IsNumber(a) || cJSON_IsNull(a), bn = cJSON_IsNumber(b) || cJSON_IsNull(b);
    if (an && bn) {
        double x = cJSON_IsNull(a) ? NAN : a->valuedouble, y = cJSON_IsNull(b) ? NAN : b->valuedouble;
        w->r->n_compared++;
        if (!isnan(x) && !isnan(y)) {
            double d = (isinf(x) || isinf(y)) ? (x == y ? 0.0 : INFINITY) : fabs(x - y);
            if (d > w->r->max_diff || (!w->r->max_key && d >= w->r->max_diff)) {
                w->r->max_diff = d;
                free(w->r->max_key);
                w->r->max_key = strdup(key);
            }
        }
        if (!numbers_agree(w->tol, x, y))
            add_diff(w, key, a, b, (isnan(x) || isnan(y)) ? NAN : fabs(x - y));
        return;
    }
    if (cJSON_IsArray(a) && cJSON_IsArray(b)) {
        int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
        for (int i = 0; i < (na > nb ? na : nb); i++) {
            if (snprintf(path, sizeof path, "%s[%d]", key, i) >= (int)sizeof path)
                path[sizeof path - 1] = '\0';
            walk_value(w, path, i < na ? cJSON_GetArrayItem(a, i) : NULL, i < nb ? cJSON_GetArrayItem(b, i) : NULL);
        }
        return;
    }
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        walk_object(w, key, a, b, false);
        return;
    }
    w->r->n_compared++;
    bool same = (cJSON_IsString(a) && cJSON_IsString(b) && !strcmp(a->valuestring, b->valuestring)) ||
                (cJSON_IsBool(a) && cJSON_IsBool(b) && cJSON_IsTrue(a) == cJSON_IsTrue(b));
    if (!same)
        add_diff(w, key, a, b, NAN);
}

/* The entry of a split's list with this hf_subset (NULL if none). */
static const cJSON *entry_for(const cJSON *list, const char *subset)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "hf_subset");
        if (cJSON_IsString(s) && !strcmp(s->valuestring, subset))
            return e;
    }
    return NULL;
}

static const char *subset_of(const cJSON *e)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "hf_subset");
    return cJSON_IsString(s) ? s->valuestring : "(no hf_subset)";
}

static void walk_split(struct walk *w, const char *split, const cJSON *a, const cJSON *b)
{
    char path[1024];
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        const char *sub = subset_of(e);
        key_path(path, sizeof path, split, sub);
        const cJSON *o = b ? entry_for(b, sub) : NULL;
        if (!o)
            add_diff(w, path, e, NULL, NAN);
        else
            walk_object(w, path, e, o, true);
    }
    cJSON_ArrayForEach(e, b)
    {
        const char *sub = subset_of(e);
        if (a && entry_for(a, sub))
            continue;
        key_path(path, sizeof path, split, sub);
        add_diff(w, path, NULL, e, NAN);
    }
}

mieb_status mieb_results_compare(const cJSON *ref, const cJSON *cand, struct mieb_tolerance tol,
                                 struct mieb_cmp_result *out)
{
    memset(out, 0, sizeof *out);
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(ref, "scores");
    const cJSON *sb = cJSON_GetObjectItemCaseSensitive(cand, "scores");
    if (!cJSON_IsObject(sa) || !cJSON_IsObject(sb))
        return mieb_fail(MIEB_ERR_BAD_DATA, "no \"scores\" object in the %s result",
                         cJSON_IsObject(sa) ? "candidate" : "reference");
    struct walk w = {tol, out, 0, MIEB_OK};
    const cJSON *it;
    cJSON_ArrayForEach(it, sa)
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(sb, it->string);
        if (!o)
            add_diff(&w, it->string, it, NULL, NAN);
        else
            walk_split(&w, it->string, it, o);
    }
    cJSON_ArrayForEach(it, sb)
    {
        if (!cJSON_GetObjectItemCaseSensitive(sa, it->string))
            add_diff(&w, it->string, NULL, it, NAN);
    }
    if (w.st != MIEB_OK)
        mieb_cmp_result_free(out);
    return w.st;
}

void mieb_cmp_result_free(struct mieb_cmp_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_diffs; i++) {
        free(r->diffs[i].key);
        free(r->diffs[i].ref);
        free(r->diffs[i].cand);
    }
    free(r->diffs);
    free(r->max_key);
    memset(r, 0, sizeof *r);
}
