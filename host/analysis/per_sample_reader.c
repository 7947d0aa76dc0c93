/* per_sample_reader.c - per-query / per-sample files back into bootstrap units (see the header). */
#include "per_sample_reader.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileutil.h"
#include "../emulation/npmath.h"
#include "../metrics/retrieval_metrics.h"

#define PSR_MAX_BYTES ((size_t)16 << 30)
#define PSR_MAX_COLS 4096

const char *mieb_psr_file_name(int is_retrieval) { return is_retrieval ? "per_query.tsv" : "predictions.tsv"; }

void mieb_psr_unit_free(struct mieb_psr_unit *u)
{
    if (!u)
        return;
    free(u->ids), free(u->gold), free(u->x), free(u->y), free(u->labels), free(u->clusters), free(u->text);
    memset(u, 0, sizeof *u);
}

struct mieb_bs_side mieb_psr_side(const struct mieb_psr_unit *u)
{
    return (struct mieb_bs_side){u->x, u->y, u->labels, u->clusters};
}

static bool parse_f64(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && errno != EINVAL;
}

static bool parse_i64(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    *v = x;
    return *s && !*end && !errno;
}

/* Split line at tabs in place into f[0..cap); the field count (cap + 1 when there are more). */
static int split(char *line, char **f, int cap)
{
    int k = 0;
    for (char *p = line;;) {
        if (k == cap)
            return cap + 1;
        f[k++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            return k;
        *t = '\0';
        p = t + 1;
    }
}

/* The next line of *p (NUL-terminated in place), or NULL at the end; a final empty line is none. */
static char *next_line(char **p)
{
    char *s = *p;
    if (!s || !*s)
        return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}

/* per_query.tsv measure of a retrieval main score, e.g. ndcg_at_10 -> ndcg_cut_10. */
static bool retrieval_measure(const char *main_score, char *out, size_t n)
{
    if (!strcmp(main_score, "accuracy")) /* mteb's retrieval accuracy is Recall@1 */
        return snprintf(out, n, "recall_1") < (int)n;
    for (int i = 0; i < MIEB_RET_NMEASURES; i++) {
        const char *name = mieb_ret_measures[i].mteb;
        size_t l = strlen(name);
        int64_t k;
        if (!strncmp(main_score, name, l) && !strncmp(main_score + l, "_at_", 4) &&
            parse_i64(main_score + l + 4, &k) && k > 0)
            return snprintf(out, n, "%s_%lld", mieb_ret_measures[i].trec, (long long)k) < (int)n;
    }
    return false;
}

static mieb_status alloc_unit(struct mieb_psr_unit *u, int64_t cap, bool gold, bool two, bool nmi)
{
    size_t c = (size_t)(cap > 0 ? cap : 1);
    u->ids = malloc(c * sizeof *u->ids);
    u->gold = gold ? malloc(c * sizeof *u->gold) : NULL;
    u->x = nmi ? NULL : malloc(c * sizeof *u->x);
    u->y = two ? malloc(c * sizeof *u->y) : NULL;
    u->labels = nmi ? malloc(c * sizeof *u->labels) : NULL;
    u->clusters = nmi ? malloc(c * sizeof *u->clusters) : NULL;
    if (!u->ids || (gold && !u->gold) || (!nmi && !u->x) || (two && !u->y) || (nmi && (!u->labels || !u->clusters)))
        return mieb_fail(MIEB_ERR_OOM, "per-sample data of %lld samples", (long long)cap);
    return MIEB_OK;
}

static mieb_status read_per_query(const char *path, const char *main_score, struct mieb_psr_unit *u)
{
    char measure[64];
    if (!retrieval_measure(main_score, measure, sizeof measure))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "main score %s has no per-query measure in per_query.tsv", main_score);
    int64_t lines = 0;
    for (const char *p = u->text; *p; p++)
        lines += *p == '\n';
    u->stat = MIEB_BS_MEAN;
    MIEB_TRY(alloc_unit(u, lines + 1, false, false, false));
    char *p = u->text, *line, *f[4];
    for (int64_t ln = 1; (line = next_line(&p)); ln++) {
        if (split(line, f, 3) != 3)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: line %lld: expected 'measure<TAB>qid<TAB>value'", path,
                             (long long)ln);
        if (strcmp(f[0], measure) || !strcmp(f[1], "all"))
            continue;
        if (!parse_f64(f[2], &u->x[u->n]))
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: line %lld: '%s' is not a number", path, (long long)ln, f[2]);
        u->ids[u->n++] = f[1];
    }
    if (u->n == 0)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: no per-query line of measure %s (main score %s)", path, measure,
                         main_score);
    return MIEB_OK;
}

/* The kinds of predictions.tsv, told by the header. */
enum kind { K_ZEROSHOT, K_CLUSTER, K_PROBE, K_MULTILABEL, K_COMPO, K_STS };

static bool hdr_is(char **h, int n, const char *const *want, int m)
{
    if (n != m)
        return false;
    for (int i = 0; i < m; i++)
        if (strcmp(h[i], want[i]))
            return false;
    return true;
}

/* prediction_0 .. (probe: stride 1) or prediction_e accuracy_e lrap_e hamming_e (multilabel: stride 4). */
static bool hdr_experiments(char **h, int n, int first, int stride)
{
    static const char *names[4] = {"prediction_", "accuracy_", "lrap_", "hamming_"};
    if (n <= first || (n - first) % stride)
        return false;
    for (int c = first; c < n; c++) {
        char want[64];
        snprintf(want, sizeof want, "%s%d", names[(c - first) % stride], (c - first) / stride);
        if (strcmp(h[c], want))
            return false;
    }
    return true;
}

/* Which column(s) of a predictions.tsv of this kind the main score ms needs (*col: the value
   column, or the first experiment column; left as it is where the kind has a fixed one) and the
   statistic u->stat recomputes it with; false when the file's columns cannot give it. */
static bool score_columns(enum kind kind, const char *ms, struct mieb_psr_unit *u, int *col)
{
    bool ok = false;
    switch (kind) {
    case K_ZEROSHOT:
    case K_PROBE:
        ok = !strcmp(ms, "accuracy");
        u->stat = MIEB_BS_MEAN;
        break;
    case K_CLUSTER:
        ok = !strcmp(ms, "nmi");
        u->stat = MIEB_BS_NMI;
        break;
    case K_COMPO:
        *col = !strcmp(ms, "text_acc") ? 1 : !strcmp(ms, "image_acc") ? 2 : !strcmp(ms, "accuracy") ? 3 : -1;
        ok = *col > 0;
        u->stat = MIEB_BS_MEAN;
        break;
    case K_MULTILABEL:
        *col = !strcmp(ms, "accuracy") ? 3 : !strcmp(ms, "lrap") ? 4 : !strcmp(ms, "hamming") ? 5 : -1;
        ok = *col > 0;
        u->stat = MIEB_BS_MEAN;
        break;
    case K_STS: {
        static const char *pre[] = {"", "cosine_", "manhattan_", "euclidean_"};
        for (int i = 3; i >= 0 && !ok; i--) { /* longest prefix first: "" matches every key */
            size_t l = strlen(pre[i]);
            if (strncmp(ms, pre[i], l))
                continue;
            if (!strcmp(ms + l, "spearman") || !strcmp(ms + l, "pearson")) {
                ok = true;
                *col = 2 + i;
                u->stat = !strcmp(ms + l, "spearman") ? MIEB_BS_SPEARMAN : MIEB_BS_PEARSON;
            }
        }
        break;
    }
    }
    return ok;
}

static mieb_status read_predictions(const char *path, const char *main_score, struct mieb_psr_unit *u)
{
    static const char *zs[] = {"index", "label", "prediction"}, *cl[] = {"index", "label", "cluster"},
                      *co[] = {"index", "text_correct", "image_correct", "correct"},
                      *sts[] = {"index", "gold", "similarity", "cosine", "manhattan", "euclidean"};
    char *p = u->text, *hl = next_line(&p);
    char **h = malloc((PSR_MAX_COLS + 1) * sizeof *h), **f = malloc((PSR_MAX_COLS + 1) * sizeof *f);
    mieb_status st = h && f ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "%s: header", path);
    int nh = 0;
    enum kind kind = K_ZEROSHOT;
    int col = -1; /* the value column (or first experiment column) */
    if (st == MIEB_OK && !hl)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: empty file (no header line)", path);
    if (st == MIEB_OK && (nh = split(hl, h, PSR_MAX_COLS)) > PSR_MAX_COLS)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: more than %d columns", path, PSR_MAX_COLS);
    if (st != MIEB_OK)
        goto done;
    if (hdr_is(h, nh, zs, 3))
        kind = K_ZEROSHOT;
    else if (hdr_is(h, nh, cl, 3))
        kind = K_CLUSTER;
    else if (hdr_is(h, nh, co, 4))
        kind = K_COMPO;
    else if (hdr_is(h, nh, sts, 6))
        kind = K_STS;
    else if (nh >= 3 && !strcmp(h[0], "index") && !strcmp(h[1], "label") && hdr_experiments(h, nh, 2, 1))
        kind = K_PROBE;
    else if (nh >= 6 && !strcmp(h[0], "index") && !strcmp(h[1], "labels") && hdr_experiments(h, nh, 2, 4))
        kind = K_MULTILABEL;
    else {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: header '%s%s%s ...' is not one that run --per-query writes", path,
                       h[0], nh > 1 ? "\t" : "", nh > 1 ? h[1] : "");
        goto done;
    }
    const char *ms = main_score;
    bool ok = score_columns(kind, ms, u, &col);
    if (!ok) {
        st = mieb_fail(MIEB_ERR_UNSUPPORTED, "main score %s cannot be recomputed from %s's columns", ms, path);
        goto done;
    }
    int64_t lines = 0;
    for (const char *q = p; *q; q++)
        lines += *q == '\n';
    if ((st = alloc_unit(u, lines + 1, true, kind == K_STS, kind == K_CLUSTER)) != MIEB_OK)
        goto done;
    int64_t n_exp = kind == K_PROBE ? nh - 2 : kind == K_MULTILABEL ? (nh - 2) / 4 : 0;
    double *ev = malloc((size_t)(n_exp > 0 ? n_exp : 1) * sizeof *ev);
    if (!ev) {
        st = mieb_fail(MIEB_ERR_OOM, "%s", path);
        goto done;
    }
    char *line;
    for (int64_t ln = 2; st == MIEB_OK && (line = next_line(&p)); ln++) {
        int64_t i = u->n, lab = 0, v = 0;
        if (split(line, f, PSR_MAX_COLS) != nh) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: line %lld: expected %d tab-separated fields", path, (long long)ln, nh);
            break;
        }
        u->ids[i] = f[0];
        u->gold[i] = kind == K_COMPO ? f[0] : f[1]; /* compositionality has no gold column */
        bool good = parse_i64(f[0], &v);
        switch (kind) {
        case K_ZEROSHOT:
            good = good && parse_i64(f[1], &lab) && parse_i64(f[2], &v);
            u->x[i] = lab == v;
            break;
        case K_CLUSTER:
            good = good && parse_i64(f[1], &u->labels[i]) && parse_i64(f[2], &u->clusters[i]);
            break;
        case K_PROBE:
            good = good && parse_i64(f[1], &lab);
            for (int64_t e = 0; e < n_exp && good; e++) {
                good = parse_i64(f[2 + e], &v);
                ev[e] = lab == v;
            }
            u->x[i] = mieb_np_mean(ev, n_exp); /* c_i / E exactly: the 0/1 sum is exact */
            break;
        case K_MULTILABEL:
            for (int64_t e = 0; e < n_exp && good; e++)
                good = parse_f64(f[col + 4 * e], &ev[e]);
            u->x[i] = mieb_np_mean(ev, n_exp);
            break;
        case K_COMPO:
            good = good && parse_f64(f[col], &u->x[i]);
            break;
        case K_STS:
            good = good && parse_f64(f[1], &u->x[i]) && parse_f64(f[col], &u->y[i]);
            break;
        }
        if (!good)
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: line %lld: a field is not a number", path, (long long)ln);
        u->n++;
    }
    free(ev);
    if (st == MIEB_OK && u->n == 0)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: no sample lines", path);
done:
    free(h), free(f);
    return st;
}

mieb_status mieb_psr_read(const char *path, int is_retrieval, const char *main_score, struct mieb_psr_unit *out)
{
    memset(out, 0, sizeof *out);
    size_t len = 0;
    mieb_status st = mieb_read_file(path, PSR_MAX_BYTES, &out->text, &len);
    if (st == MIEB_OK)
        st = is_retrieval ? read_per_query(path, main_score, out) : read_predictions(path, main_score, out);
    if (st != MIEB_OK)
        mieb_psr_unit_free(out);
    return st;
}

static const char *const *sort_ids;
static int cmp_by_id(const void *a, const void *b)
{
    return strcmp(sort_ids[*(const int64_t *)a], sort_ids[*(const int64_t *)b]);
}

mieb_status mieb_psr_pair(struct mieb_psr_unit *a, struct mieb_psr_unit *b, const char *path_a, const char *path_b)
{
    if (a->n != b->n || a->stat != b->stat)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s has %lld samples, %s has %lld: not the same task data", path_a,
                         (long long)a->n, path_b, (long long)b->n);
    if (a->gold) { /* predictions.tsv: line by line */
        for (int64_t i = 0; i < a->n; i++)
            if (strcmp(a->ids[i], b->ids[i]) || strcmp(a->gold[i], b->gold[i]))
                return mieb_fail(MIEB_ERR_BAD_DATA, "%s and %s differ at sample %lld (index %s / %s, gold %s / %s): "
                                 "not the same task data", path_a, path_b, (long long)i, a->ids[i], b->ids[i],
                                 a->gold[i], b->gold[i]);
        return MIEB_OK;
    }
    /* per_query.tsv: the same query ids, b put in a's order */
    int64_t n = a->n, *pa = malloc((size_t)n * sizeof *pa), *pb = malloc((size_t)n * sizeof *pb);
    double *x = malloc((size_t)n * sizeof *x);
    const char **ids = malloc((size_t)n * sizeof *ids);
    mieb_status st = pa && pb && x && ids ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "pairing %lld queries", (long long)n);
    if (st == MIEB_OK) {
        for (int64_t i = 0; i < n; i++)
            pa[i] = pb[i] = i;
        sort_ids = a->ids; /* single-threaded command code */
        qsort(pa, (size_t)n, sizeof *pa, cmp_by_id);
        sort_ids = b->ids;
        qsort(pb, (size_t)n, sizeof *pb, cmp_by_id);
        for (int64_t k = 0; k < n && st == MIEB_OK; k++) {
            if (strcmp(a->ids[pa[k]], b->ids[pb[k]]))
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s and %s hold different query ids (e.g. %s / %s)", path_a, path_b,
                               a->ids[pa[k]], b->ids[pb[k]]);
            else if (k > 0 && !strcmp(a->ids[pa[k]], a->ids[pa[k - 1]]))
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: query id %s appears twice", path_a, a->ids[pa[k]]);
            else {
                x[pa[k]] = b->x[pb[k]];
                ids[pa[k]] = b->ids[pb[k]];
            }
        }
    }
    if (st == MIEB_OK) {
        memcpy(b->x, x, (size_t)n * sizeof *x);
        memcpy(b->ids, ids, (size_t)n * sizeof *ids);
    }
    free(pa), free(pb), free(x), free(ids);
    return st;
}
