/*
 * multilabel.c - the multilabel ImageClassification family (VOC2007) as the installed
 * mteb 2.26.24 scores it (PROTOCOLS.md §3, §9.2, §12 item 1, §13):
 *
 * Classifier: AbsTaskMultilabelClassification reads `evaluator_model`, which VOC2007 does not
 * override (its `evaluator = MultiOutputClassifier(LogisticRegression())` is never read), so
 * KNeighborsClassifier(n_neighbors=5) is what runs (multilabel_knn.h).
 * Inputs (FORMAT.md §1): /<split>/<subset>/ train_labels_indptr [n_train+1] +
 * train_labels_flat, eval_labels_indptr [n_eval+1] + eval_labels_flat, optional train_idx;
 * roles `train` (all rows, or some rows with /row_index) and `eval` (every eval row).
 * Sampling (_undersample_data_indices): the task's np_rng = default_rng(42), created once
 * and never re-seeded; for each experiment idxs = arange(n_train) is shuffled and a row is
 * taken when any of its labels has been taken fewer than samples_per_label times. The
 * runner evaluates the task's (split, subset) pairs in registry order on one task object,
 * so the draws of a pair follow those of the pairs before it: we replay those shuffles.
 * Targets: MultiLabelBinarizer fitted on the eval label lists (sorted ids); train labels not
 * among them are dropped. The whole eval split is scored (VOC2007's max_eval_samples is None).
 * Output: scores_per_experiment [{accuracy, lrap, f1, hamming}], then np.mean of each key.
 */
#include "multilabel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/parallel.h"
#include "../emb/embeddings.h"
#include "../metrics/multilabel_knn.h"
#include "../emulation/np_pcg64.h"
#include "../emulation/npmath.h"
#include "per_sample.h"
#include "../core/qsort_cmp.h"

#define ML_SEED 42
#define ML_K 5 /* KNeighborsClassifier(n_neighbors=5) */

struct csr { int64_t n, nnz, *ptr, *lab; };

static void csr_free(struct csr *c) { free(c->ptr), free(c->lab); }

/* <prefix>_labels_indptr + <prefix>_labels_flat, checked as FORMAT.md §1 requires. */
static mieb_status read_csr(struct mieb_taskdata *td, const char *split, const char *subset, const char *prefix,
                            struct csr *out)
{
    char pn[64], fn[64];
    snprintf(pn, sizeof pn, "%s_labels_indptr", prefix);
    snprintf(fn, sizeof fn, "%s_labels_flat", prefix);
    const char *path = mieb_taskdata_path(td);
    int64_t np1 = 0;
    MIEB_TRY(mieb_taskdata_read_i64(td, split, subset, pn, &out->ptr, &np1, NULL));
    MIEB_TRY(mieb_taskdata_read_i64(td, split, subset, fn, &out->lab, &out->nnz, NULL));
    out->n = np1 - 1;
    if (np1 < 2)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/%s has %lld entries: it needs n_rows + 1 >= 2", path, split,
                         subset, pn, (long long)np1);
    if (out->ptr[0] != 0)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/%s[0] = %lld, must be 0", path, split, subset, pn,
                         (long long)out->ptr[0]);
    for (int64_t i = 0; i < out->n; i++)
        if (out->ptr[i + 1] < out->ptr[i])
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/%s decreases at row %lld (%lld -> %lld)", path, split,
                             subset, pn, (long long)i, (long long)out->ptr[i], (long long)out->ptr[i + 1]);
    if (out->ptr[out->n] != out->nnz)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/%s ends at %lld but %s has %lld labels", path, split, subset,
                         pn, (long long)out->ptr[out->n], fn, (long long)out->nnz);
    return MIEB_OK;
}

/* Sorted distinct values of a[0..n) into *out (malloc'd), count in *k. */
static mieb_status unique_sorted(const int64_t *a, int64_t n, int64_t **out, int64_t *k)
{
    int64_t *u = malloc((size_t)(n > 0 ? n : 1) * sizeof *u), m = 0;
    if (!u)
        return mieb_fail(MIEB_ERR_OOM, "label ids");
    memcpy(u, a, (size_t)n * sizeof *u);
    qsort(u, (size_t)n, sizeof *u, mieb_cmp_i64);
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || u[m - 1] != u[i])
            u[m++] = u[i];
    *out = u;
    *k = m;
    return MIEB_OK;
}

static int64_t find(const int64_t *u, int64_t k, int64_t v)
{
    const int64_t *p = bsearch(&v, u, (size_t)k, sizeof *u, mieb_cmp_i64);
    return p ? p - u : -1;
}

/* n_exp draws of _undersample_data_indices from g: sel [n_exp * n] (row e at e * n), len [n_exp]. */
static mieb_status draw(const struct csr *y, int64_t spl, int64_t n_exp, struct mieb_pcg64 *g, int64_t *sel,
                        int64_t *len)
{
    int64_t *ids = NULL, k = 0, *dense = malloc((size_t)(y->nnz > 0 ? y->nnz : 1) * sizeof *dense);
    int64_t *counter = NULL, *idxs = malloc((size_t)y->n * sizeof *idxs);
    mieb_status st = dense && idxs ? unique_sorted(y->lab, y->nnz, &ids, &k) : mieb_fail(MIEB_ERR_OOM, "draw");
    if (st == MIEB_OK && !(counter = malloc((size_t)(k > 0 ? k : 1) * sizeof *counter)))
        st = mieb_fail(MIEB_ERR_OOM, "label counter");
    if (st != MIEB_OK)
        goto done;
    for (int64_t i = 0; i < y->nnz; i++)
        dense[i] = find(ids, k, y->lab[i]);
    for (int64_t e = 0; e < n_exp; e++) {
        for (int64_t i = 0; i < y->n; i++)
            idxs[i] = i; /* a fresh list(np.arange(n)) each experiment */
        mieb_pcg64_shuffle_i64(g, idxs, y->n);
        memset(counter, 0, (size_t)(k > 0 ? k : 1) * sizeof *counter);
        int64_t m = 0;
        for (int64_t t = 0; t < y->n; t++) {
            int64_t r = idxs[t], take = 0;
            for (int64_t p = y->ptr[r]; p < y->ptr[r + 1] && !take; p++)
                take = counter[dense[p]] < spl;
            if (!take)
                continue;
            sel[e * y->n + m++] = r;
            for (int64_t p = y->ptr[r]; p < y->ptr[r + 1]; p++)
                counter[dense[p]]++; /* a label listed twice counts twice, as in mteb */
        }
        len[e] = m;
    }
done:
    free(ids), free(dense), free(counter), free(idxs);
    return st;
}

/* np_rng as it stands when this (split, subset) is evaluated: the pairs before it drew first. */
static mieb_status rng_at_pair(const struct mieb_task *task, struct mieb_taskdata *td, const char *split,
                               const char *subset, int64_t n_exp, struct mieb_pcg64 *g)
{
    mieb_pcg64_seed(g, ML_SEED);
    for (int s = 0; s < task->n_splits; s++)
        for (int h = 0; h < task->n_subsets; h++) {
            if (!strcmp(task->splits[s], split) && !strcmp(task->subsets[h], subset))
                return MIEB_OK;
            int64_t *ptr = NULL, np1 = 0;
            MIEB_TRY(mieb_taskdata_read_i64(td, task->splits[s], task->subsets[h], "train_labels_indptr", &ptr, &np1, NULL));
            free(ptr);
            int64_t n = np1 > 0 ? np1 - 1 : 0, *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
            if (!x)
                return mieb_fail(MIEB_ERR_OOM, "rng replay");
            for (int64_t e = 0; e < n_exp; e++) {
                for (int64_t i = 0; i < n; i++)
                    x[i] = i;
                mieb_pcg64_shuffle_i64(g, x, n);
            }
            free(x);
        }
    return MIEB_OK;
}

/* train_idx, when present, must repeat the draw row by row (padded with -1). */
static mieb_status check_train_idx(struct mieb_taskdata *td, const char *split, const char *subset, const int64_t *sel,
                                   const int64_t *len, int64_t n_exp, int64_t stride)
{
    if (!mieb_taskdata_has_dataset(td, split, subset, "train_idx"))
        return MIEB_OK;
    int64_t *ti = NULL, rows = 0, cols = 0, maxl = 0;
    MIEB_TRY(mieb_taskdata_read_i64(td, split, subset, "train_idx", &ti, &rows, &cols));
    mieb_status st = MIEB_OK;
    for (int64_t e = 0; e < n_exp; e++)
        maxl = len[e] > maxl ? len[e] : maxl;
    if (rows != n_exp || cols < maxl)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/train_idx is %lld x %lld, but the task draws %lld experiments of up to %lld rows",
                       mieb_taskdata_path(td), split, subset, (long long)rows, (long long)cols, (long long)n_exp, (long long)maxl);
    for (int64_t e = 0; st == MIEB_OK && e < n_exp; e++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t want = c < len[e] ? sel[e * stride + c] : -1, got = ti[e * cols + c];
            if (got != want) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/train_idx[%lld][%lld] = %lld, but mteb's draw (default_rng(42) "
                               "shuffles, per-label undersampling) gives %lld there", mieb_taskdata_path(td), split, subset,
                               (long long)e, (long long)c, (long long)got, (long long)want);
                break;
            }
        }
    free(ti);
    return st;
}

struct ml_job {
    const float *train;     /* [n_items of the train role, D] */
    const int64_t *pos;     /* pos[train row] = its row in `train`, -1 when absent */
    const uint8_t *ytrain;  /* [n_train, L] the binarized train labels */
    const float *eval;      /* [n_eval, D] */
    const double *evn;      /* [n_eval] squared norms */
    const uint8_t *yeval;   /* [n_eval, L] */
    int64_t n_eval, D, L, stride;
    const int64_t *sel, *len;
    struct mieb_multilabel_scores *out;
    uint8_t *preds;         /* [n_exp, n_eval, L] the 0/1 predictions for --per-query, or NULL */
};

/* One experiment (an item of mieb_par_queue): fit rows sel_e in selection order, 5 neighbours
   of every eval row, vote, score. */
static mieb_status run_one(void *arg, int64_t e)
{
    const struct ml_job *j = arg;
    const int64_t *sel = j->sel + e * j->stride, m = j->len[e], D = j->D, L = j->L;
    float *X = malloc((size_t)(m > 0 ? m : 1) * (size_t)D * sizeof *X);
    double *yn = malloc((size_t)(m > 0 ? m : 1) * sizeof *yn);
    uint8_t *Y = malloc((size_t)(m > 0 ? m : 1) * (size_t)L), *pred = malloc((size_t)j->n_eval * (size_t)L);
    int64_t *idx = malloc((size_t)j->n_eval * ML_K * sizeof *idx);
    mieb_status st = X && yn && Y && pred && idx ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "experiment %lld buffers", (long long)e);
    if (st == MIEB_OK && m < ML_K)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "experiment %lld draws %lld train rows: KNeighborsClassifier(n_neighbors=%d) "
                       "needs at least %d (sklearn raises 'Expected n_neighbors <= n_samples_fit')", (long long)e,
                       (long long)m, ML_K, ML_K);
    if (st == MIEB_OK) {
        for (int64_t i = 0; i < m; i++) {
            memcpy(X + i * D, j->train + j->pos[sel[i]] * D, (size_t)D * sizeof *X);
            memcpy(Y + i * L, j->ytrain + sel[i] * L, (size_t)L);
        }
        mieb_knn_sqnorms(X, m, D, yn);
        /* algorithm="auto": KDTree when D <= 15 and n_neighbors < n_fit // 2, else brute force */
        int kd = D <= 15 && ML_K < m / 2;
        st = mieb_knn_argkmin(j->eval, j->evn, j->n_eval, X, yn, m, D, ML_K, kd, idx);
    }
    if (st == MIEB_OK) {
        mieb_knn_vote(Y, L, idx, j->n_eval, ML_K, pred);
        if (j->preds)
            memcpy(j->preds + e * j->n_eval * L, pred, (size_t)j->n_eval * (size_t)L);
        st = mieb_multilabel_metrics(j->yeval, pred, j->n_eval, L, &j->out[e]);
    }
    free(X), free(yn), free(Y), free(pred), free(idx);
    return st;
}

/* 0/1 rows [n, L] of a CSR label list against the sorted class ids (unknown ids dropped). */
static mieb_status binarize(const struct csr *y, const int64_t *classes, int64_t L, uint8_t **out)
{
    uint8_t *b = calloc((size_t)y->n * (size_t)L, 1);
    if (!b)
        return mieb_fail(MIEB_ERR_OOM, "label matrix %lld x %lld", (long long)y->n, (long long)L);
    for (int64_t i = 0; i < y->n; i++)
        for (int64_t p = y->ptr[i]; p < y->ptr[i + 1]; p++) {
            int64_t c = find(classes, L, y->lab[p]);
            if (c >= 0)
                b[i * L + c] = 1;
        }
    *out = b;
    return MIEB_OK;
}

/* Every value of rows [n, D] finite, as sklearn's validate_data demands. */
static mieb_status check_finite(const float *x, int64_t n, int64_t D, const struct mieb_emb_role *r)
{
    for (int64_t i = 0; i < n * D; i++)
        if (!isfinite(x[i]))
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /embeddings item %lld holds a NaN or infinity (sklearn's "
                             "KNeighborsClassifier rejects it)", mieb_emb_role_path(r), (long long)(i / D));
    return MIEB_OK;
}

/* *pos[r]: the item of the train role holding train row r, or -1 (with a /row_index, a subset of
   the rows; without, row r is item r). A /row_index entry out of range or repeated is bad data. */
static mieb_status row_map(struct mieb_emb_role *tr, const int64_t *rowidx, int64_t n_items, int64_t n_rows,
                           int64_t **pos)
{
    int64_t *p = malloc((size_t)n_rows * sizeof *p);
    if (!(*pos = p))
        return mieb_fail(MIEB_ERR_OOM, "train row map");
    for (int64_t r = 0; r < n_rows; r++)
        p[r] = rowidx ? -1 : r;
    for (int64_t i = 0; rowidx && i < n_items; i++) {
        if (rowidx[i] < 0 || rowidx[i] >= n_rows || p[rowidx[i]] >= 0)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /row_index[%lld] = %lld is %s", mieb_emb_role_path(tr),
                             (long long)i, (long long)rowidx[i],
                             rowidx[i] < 0 || rowidx[i] >= n_rows ? "not a row of the train split" : "repeated");
        p[rowidx[i]] = i;
    }
    return MIEB_OK;
}

/* Every train row an experiment draws is in the train role (its /row_index) and finite. */
static mieb_status check_drawn(const float *train, const int64_t *pos, const int64_t *sel, const int64_t *len,
                               int64_t n_exp, int64_t stride, int64_t D, struct mieb_emb_role *tr)
{
    for (int64_t e = 0; e < n_exp; e++)
        for (int64_t i = 0; i < len[e]; i++) {
            int64_t r = sel[e * stride + i];
            if (pos[r] < 0)
                return mieb_fail(MIEB_ERR_BAD_DATA, "%s: train row %lld is drawn by experiment %lld but not in /row_index",
                                 mieb_emb_role_path(tr), (long long)r, (long long)e);
            MIEB_TRY(check_finite(train + pos[r] * D, 1, D, tr));
        }
    return MIEB_OK;
}

/* scores_per_experiment (Python floats), then np.mean over the experiments of each key */
static mieb_status write_scores(const struct mieb_multilabel_scores *per, int64_t n_exp, cJSON *scores)
{
    mieb_status st = MIEB_OK;
    cJSON *list = cJSON_AddArrayToObject(scores, "scores_per_experiment");
    double *v = malloc((size_t)n_exp * sizeof *v);
    if (!list || !v) {
        free(v);
        return mieb_fail(MIEB_ERR_OOM, "multilabel scores JSON");
    }
    for (int64_t e = 0; e < n_exp && st == MIEB_OK; e++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(list, o))
            st = mieb_fail(MIEB_ERR_OOM, "multilabel scores JSON");
        for (int k = 0; k < 4 && st == MIEB_OK; k++)
            if (!cJSON_AddNumberToObject(o, mieb_multilabel_keys[k], mieb_multilabel_scores_value(&per[e], k)))
                st = mieb_fail(MIEB_ERR_OOM, "multilabel scores JSON");
    }
    for (int k = 0; k < 4 && st == MIEB_OK; k++) {
        for (int64_t e = 0; e < n_exp; e++)
            v[e] = mieb_multilabel_scores_value(&per[e], k);
        if (!cJSON_AddNumberToObject(scores, mieb_multilabel_keys[k], mieb_np_mean(v, n_exp)))
            st = mieb_fail(MIEB_ERR_OOM, "multilabel scores JSON");
    }
    free(v);
    return st;
}

mieb_status mieb_multilabel_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                         struct mieb_taskdata *td, const char *split, const char *subset,
                                         cJSON *scores)
{
    struct csr ytr = {0}, yev = {0};
    struct mieb_emb_role *tr = NULL, *er = NULL;
    int64_t *sel = NULL, *len = NULL, *classes = NULL, *rowidx = NULL, *pos = NULL, L = 0;
    float *train = NULL, *eval = NULL;
    double *evn = NULL;
    uint8_t *ytrain = NULL, *yeval = NULL, *preds = NULL;
    struct mieb_multilabel_scores *per = NULL;
    int64_t spl = mieb_task_param_int(task, "samples_per_label", 8), n_exp = mieb_task_param_int(task, "n_experiments", 5);
    const char *path = mieb_taskdata_path(td);
    struct mieb_pcg64 g;
    mieb_status st = MIEB_OK;

    if (spl < 1 || n_exp < 1)
        st = mieb_fail(MIEB_ERR_CONFIG, "task %s: samples_per_label %lld and n_experiments %lld must be >= 1",
                       task->name, (long long)spl, (long long)n_exp);
    if (st == MIEB_OK)
        st = read_csr(td, split, subset, "train", &ytr);
    if (st == MIEB_OK)
        st = read_csr(td, split, subset, "eval", &yev);
    if (st == MIEB_OK)
        st = unique_sorted(yev.lab, yev.nnz, &classes, &L);
    if (st == MIEB_OK && L < 2)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/eval_labels_flat holds %lld distinct label id(s): mteb's "
                       "multilabel scoring needs at least 2 label columns", path, split, subset, (long long)L);
    if (st == MIEB_OK && (!(sel = malloc((size_t)n_exp * (size_t)ytr.n * sizeof *sel)) || !(len = malloc((size_t)n_exp * sizeof *len))))
        st = mieb_fail(MIEB_ERR_OOM, "draws");
    if (st == MIEB_OK)
        st = rng_at_pair(task, td, split, subset, n_exp, &g);
    if (st == MIEB_OK)
        st = draw(&ytr, spl, n_exp, &g, sel, len);
    if (st == MIEB_OK)
        st = check_train_idx(td, split, subset, sel, len, n_exp, ytr.n);
    if (st == MIEB_OK)
        st = mieb_emb_source_open(&rc->emb, task->name, split, subset, "train", MIEB_EMB_SOME_ROWS, &tr);
    if (st == MIEB_OK)
        st = mieb_emb_source_open(&rc->emb, task->name, split, subset, "eval", MIEB_EMB_EVERY_ROW, &er);
    if (st != MIEB_OK)
        goto done;
    const struct mieb_emb_info *ti = mieb_emb_role_info(tr), *ei = mieb_emb_role_info(er);
    int64_t D = ei->dim;
    if (ti->multivector || ei->multivector)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: the kNN classifier needs single-vector embeddings (/offsets present)",
                       mieb_emb_role_path(ti->multivector ? tr : er));
    else if (ei->n_items != yev.n)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld eval embeddings but %s /%s/%s/eval_labels_indptr has %lld rows",
                       mieb_emb_role_path(er), (long long)ei->n_items, path, split, subset, (long long)yev.n);
    else if (ti->dim != D)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension %lld differs from %s: dimension %lld", mieb_emb_role_path(tr),
                       (long long)ti->dim, mieb_emb_role_path(er), (long long)D);
    if (st == MIEB_OK)
        st = mieb_emb_role_row_index(tr, &rowidx);
    if (st == MIEB_OK && !rowidx && ti->n_items != ytr.n)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld train embeddings but %s /%s/%s/train_labels_indptr has %lld rows (and no /row_index)",
                       mieb_emb_role_path(tr), (long long)ti->n_items, path, split, subset, (long long)ytr.n);
    if (st == MIEB_OK)
        st = row_map(tr, rowidx, ti->n_items, ytr.n, &pos);
    if (st != MIEB_OK)
        goto done;
    double t0 = mieb_now();
    train = malloc((size_t)(ti->n_items > 0 ? ti->n_items : 1) * (size_t)D * sizeof *train);
    eval = malloc((size_t)yev.n * (size_t)D * sizeof *eval);
    evn = malloc((size_t)yev.n * sizeof *evn);
    if (!train || !eval || !evn) {
        st = mieb_fail(MIEB_ERR_OOM, "%lld + %lld embeddings of dimension %lld", (long long)ti->n_items, (long long)yev.n, (long long)D);
        goto done;
    }
    if ((ti->n_items > 0 && (st = mieb_emb_role_read(tr, 0, ti->n_items, train, NULL)) != MIEB_OK) ||
        (st = mieb_emb_role_read(er, 0, yev.n, eval, NULL)) != MIEB_OK)
        goto done;
    if (rc->times)
        rc->times->read_wait += mieb_now() - t0;
    if ((st = check_drawn(train, pos, sel, len, n_exp, ytr.n, D, tr)) != MIEB_OK ||
        (st = check_finite(eval, yev.n, D, er)) != MIEB_OK || (st = binarize(&ytr, classes, L, &ytrain)) != MIEB_OK ||
        (st = binarize(&yev, classes, L, &yeval)) != MIEB_OK)
        goto done;
    mieb_knn_sqnorms(eval, yev.n, D, evn);
    per = calloc((size_t)n_exp, sizeof *per);
    if (rc->per_query_dir)
        preds = malloc((size_t)n_exp * (size_t)yev.n * (size_t)L);
    if (!per || (rc->per_query_dir && !preds)) {
        st = mieb_fail(MIEB_ERR_OOM, "experiment results");
        goto done;
    }
    struct ml_job job = {.train = train, .pos = pos, .ytrain = ytrain, .eval = eval, .evn = evn, .yeval = yeval,
                         .n_eval = yev.n, .D = D, .L = L, .stride = ytr.n, .sel = sel, .len = len, .out = per,
                         .preds = preds};
    t0 = mieb_now();
    MIEB_LOGD("%s /%s/%s: %lld experiments of k-nearest neighbours for %lld rows, dimension %lld", task->name, split,
              subset, (long long)n_exp, (long long)yev.n, (long long)D);
    st = mieb_par_queue(n_exp < 16 ? (int)n_exp : 16, n_exp, run_one, NULL, &job);
    if (rc->times)
        rc->times->similarity += mieb_now() - t0;
    if (st == MIEB_ERR_BAD_DATA) /* the draw comes from this file's train labels */
        mieb_fail_context(st, "%s: /%s/%s/train_labels_indptr", path, split, subset);
    if (st == MIEB_OK)
        st = mieb_per_sample_write_multilabel(rc, task->name, split, subset, classes, L, yeval, preds, yev.n, n_exp);
    if (st != MIEB_OK)
        goto done;
    st = write_scores(per, n_exp, scores);
done:
    if (tr)
        mieb_emb_role_close(tr);
    if (er)
        mieb_emb_role_close(er);
    csr_free(&ytr), csr_free(&yev);
    free(sel), free(len), free(classes), free(rowidx), free(pos), free(train), free(eval), free(evn);
    free(ytrain), free(yeval), free(per), free(preds);
    if (st != MIEB_OK)
        mieb_fail_context(st, "%s /%s/%s", task->name, split, subset);
    return st;
}
