/*
 * probe.c - the single-label ImageClassification family: mteb 2.26's few-shot linear probe
 * (PROTOCOLS.md §2, §12 item 2-3, §13 on sklearn 1.9 float32).
 *
 * Inputs (FORMAT.md): task data /<split>/<subset>/ train_labels [n_train], eval_labels
 * [n_eval], optional train_idx [n_experiments, >= L] (padded with -1); roles `train` (every
 * row of the train split, or only some rows with /row_index) and `eval`.
 * Per experiment e (task params n_experiments, samples_per_label; STL10 keeps 10 and 8):
 *   rows sel_e from mteb's draw (fewshot_sample.h), which train_idx must repeat exactly;
 *   X = train rows sel_e in selection order, LogisticRegression(max_iter=100) (lbfgs,
 *   float32, logreg_lbfgs.h; classes_ = sorted labels of sel_e; one class is an error, as
 *   in sklearn), predictions on every eval row, then accuracy, f1/precision/recall (macro,
 *   weighted) and, when eval_labels has exactly two distinct values, ap = ap_weighted =
 *   average_precision_score(y_test, y_pred) on the hard predicted labels.
 * Output: scores_per_experiment (ap null when not binary), then float(np.mean) of every key
 * over the experiments (NaN when None in every experiment).
 * Threads (--threads, all cores by default): one worker per experiment, at most one per
 * thread; each fit and predict splits its products over its share of the threads, and a
 * worker that runs out of experiments hands its share to those still running (the
 * results do not depend on the thread count, logreg_lbfgs.h).
 * A backend that runs logistic-regression batches (the CUDA backend; dispatch.h
 * mieb_dispatch_lr_batch_available) fits the experiments in lockstep instead (run_batched,
 * logreg_batch.h): the same optimiser, with the loss-gradient products on the device, equal
 * to the CPU fit within float32 rounding (tests/gpu/); as many at a time as the device and
 * half of --mem-limit (the optimisers' host memory) hold; its predictions run through
 * mieb_dispatch_lr_predict. When the batch cannot run (memory, experiments with different
 * class counts) the CPU fits them one by one. --probe-device cpu: the CPU.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "family.h"

#include "../core/parallel.h"
#include "../dispatch/dispatch.h"
#include "../emb/embeddings.h"
#include "../metrics/classification_metrics.h"
#include "../emulation/fewshot_sample.h"
#include "../emulation/logreg_batch.h"
#include "../emulation/logreg_lbfgs.h"
#include "../emulation/npmath.h"
#include "clf_common.h"
#include "multilabel.h"
#include "per_sample.h"

struct probe_job {
    const float *train;    /* [n_have, D]: the train rows that were read */
    const int64_t *pos;    /* pos[train row] = row of `train`, or -1 */
    const int64_t *train_labels;
    const float *eval;     /* [n_eval, D] */
    const int64_t *eval_labels;
    int64_t n_eval, D, L, n_exp;
    const int64_t *sel;    /* [n_exp, L] */
    bool binary;           /* eval_labels has exactly two distinct values */
    struct mieb_clf_scores *scores; /* [n_exp] */
    int64_t *preds;        /* [n_exp, n_eval] predicted labels for --per-query, or NULL */
    int n_threads;         /* threads for all experiments together */
    atomic_int active;     /* workers still running an experiment: they share n_threads */
};

/* Experiment e's training set: X [L, D] the rows sel_e in selection order, y [L] their
 * class indices and *classes (malloc'd) the sorted labels, as sklearn's LabelEncoder. */
static mieb_status gather_experiment(const struct probe_job *j, int64_t e, float *X, int64_t *y, int64_t **classes,
                                     int64_t *K)
{
    const int64_t *sel = j->sel + e * j->L;
    int64_t L = j->L, D = j->D, *lab = malloc((size_t)L * sizeof *lab);
    *classes = NULL;
    if (!lab)
        return mieb_fail(MIEB_ERR_OOM, "experiment %lld: %lld labels", (long long)e, (long long)L);
    for (int64_t i = 0; i < L; i++) {
        memcpy(X + i * D, j->train + j->pos[sel[i]] * D, (size_t)D * sizeof *X);
        lab[i] = j->train_labels[sel[i]];
    }
    mieb_status st = mieb_fewshot_encode(lab, L, classes, K, y);
    free(lab);
    if (st == MIEB_OK && *K < 2)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "experiment %lld: the few-shot sample holds one class (%lld) only; sklearn's "
                       "LogisticRegression needs samples of at least 2 classes", (long long)e, (long long)(*classes)[0]);
    return st;
}

/* Metrics of experiment e from its predicted class indices (turned into labels in place). */
static mieb_status score_experiment(const struct probe_job *j, int64_t e, int64_t *pred, const int64_t *classes,
                                    struct mieb_clf_scores *out)
{
    for (int64_t i = 0; i < j->n_eval; i++)
        pred[i] = classes[pred[i]]; /* classes_[argmax] */
    if (j->preds)
        memcpy(j->preds + e * j->n_eval, pred, (size_t)j->n_eval * sizeof *pred);
    MIEB_TRY(mieb_clf_label_metrics(j->eval_labels, pred, j->n_eval, out));
    if (!j->binary)
        return MIEB_OK;
    /* average_precision_score(y_test, y_pred): the hard predicted labels are the scores */
    double *score = malloc((size_t)j->n_eval * sizeof *score);
    if (!score)
        return mieb_fail(MIEB_ERR_OOM, "experiment %lld: ap scores", (long long)e);
    for (int64_t i = 0; i < j->n_eval; i++)
        score[i] = (double)pred[i];
    mieb_status st = mieb_clf_binary_ap(j->eval_labels, score, j->n_eval, &out->ap);
    free(score);
    out->ap_weighted = out->ap;
    out->has_ap = true;
    return st;
}

/* One experiment on the CPU (an item of mieb_par_queue): fit on sel_e, predict the eval rows,
   score into scores[e]. */
static mieb_status run_experiment(void *arg, int64_t e)
{
    const struct probe_job *j = arg;
    struct mieb_clf_scores *out = &j->scores[e];
    int64_t L = j->L, D = j->D, K = 0, *y = malloc((size_t)L * sizeof *y), *classes = NULL;
    int64_t *pred = malloc((size_t)j->n_eval * sizeof *pred);
    float *X = malloc((size_t)L * (size_t)D * sizeof *X);
    struct mieb_logreg m = {0};
    mieb_status st = (y && pred && X) ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "experiment %lld: %lld x %lld training matrix", (long long)e, (long long)L, (long long)D);
    if (st == MIEB_OK)
        st = gather_experiment(j, e, X, y, &classes, &K);
    struct mieb_logreg_par par = {.n_threads = j->n_threads, .share = &j->active};
    if (st == MIEB_OK)
        st = mieb_logreg_fit_par(X, y, L, D, K, 100, &par, &m);
    if (st == MIEB_OK)
        st = mieb_logreg_predict_par(&m, j->eval, j->n_eval, &par, pred);
    if (st == MIEB_OK)
        st = score_experiment(j, e, pred, classes, out);
    mieb_logreg_free(&m);
    free(y), free(classes), free(pred), free(X);
    return st;
}

/*
 * Every experiment as one batch through the backend's batch slots (the CUDA backend):
 * the fits in lockstep (logreg_batch.h), then one predict for all. MIEB_ERR_UNSUPPORTED
 * when the experiments' class sets differ in size (the caller fits them on the CPU).
 */
static mieb_status run_batched(struct probe_job *j, struct mieb_backend *be, int n_threads, size_t mem_limit)
{
    int64_t E = j->n_exp, L = j->L, D = j->D, K0 = 0;
    float *X = malloc((size_t)(E * L) * (size_t)D * sizeof *X);
    int64_t *y = malloc((size_t)(E * L) * sizeof *y), *pred = malloc((size_t)(E * j->n_eval) * sizeof *pred);
    int64_t **classes = calloc((size_t)E, sizeof *classes);
    struct mieb_logreg *models = calloc((size_t)E, sizeof *models);
    bool fitted = false;
    mieb_status st = (X && y && pred && classes && models) ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "probe batch: %lld x %lld x %lld training rows", (long long)E, (long long)L, (long long)D);
    for (int64_t e = 0; st == MIEB_OK && e < E; e++) {
        int64_t K = 0;
        st = gather_experiment(j, e, X + e * L * D, y + e * L, &classes[e], &K);
        if (st == MIEB_OK && e == 0)
            K0 = K;
        if (st == MIEB_OK && K != K0)
            st = mieb_fail(MIEB_ERR_UNSUPPORTED, "probe batch: experiment %lld has %lld classes, experiment 0 %lld",
                           (long long)e, (long long)K, (long long)K0);
    }
    /* the optimisers' host memory (20 L-BFGS vectors of (D+1)K doubles each: 123 MB at the
     * ImageNet shape) within half of --mem-limit; the rest holds the embeddings */
    int64_t max_batch = 0;
    if (st == MIEB_OK && mem_limit > 0) {
        max_batch = (int64_t)(mem_limit / 2 / mieb_logreg_host_bytes(L, D, K0));
        max_batch = max_batch < 1 ? 1 : max_batch;
    }
    if (st == MIEB_OK)
        st = mieb_logreg_fit_backend(be, X, y, E, L, D, K0, 100, n_threads, max_batch, models);
    fitted = st == MIEB_OK;
    if (fitted) {
        int it_min = models[0].n_iter, it_max = models[0].n_iter;
        for (int64_t e = 1; e < E; e++)
            it_min = models[e].n_iter < it_min ? models[e].n_iter : it_min,
            it_max = models[e].n_iter > it_max ? models[e].n_iter : it_max;
        MIEB_LOGD("probe: %lld experiments of %lld x %lld (%lld classes) fitted in lockstep on the %s backend, "
                  "at most %lld at a time, %d-%d iterations", (long long)E, (long long)L, (long long)D, (long long)K0,
                  be->iface.name, (long long)(max_batch > 0 && max_batch < E ? max_batch : E), it_min, it_max);
    }
    if (st == MIEB_OK)
        st = mieb_logreg_predict_backend(be, models, E, j->eval, j->n_eval, pred);
    for (int64_t e = 0; st == MIEB_OK && e < E; e++)
        st = score_experiment(j, e, pred + e * j->n_eval, classes[e], &j->scores[e]);
    for (int64_t e = 0; e < E && classes; e++) {
        free(classes[e]);
        if (fitted)
            mieb_logreg_free(&models[e]);
    }
    free(X), free(y), free(pred), free(classes), free(models);
    return st;
}

/* Classes among the drawn rows: each experiment's class count at most, and its count when it
 * holds every drawn label (as mteb's draw of samples_per_label rows per label makes it). */
static mieb_status drawn_classes(const struct probe_job *j, int64_t *K)
{
    int64_t n = j->n_exp * j->L, *lab = malloc((size_t)n * sizeof *lab);
    if (!lab)
        return mieb_fail(MIEB_ERR_OOM, "probe: %lld drawn labels", (long long)n);
    for (int64_t i = 0; i < n; i++)
        lab[i] = j->train_labels[j->sel[i]];
    mieb_status st = mieb_clf_n_unique(lab, n, K);
    free(lab);
    return st;
}

/* A part of the queue that found no experiment left: the others take over its threads. */
static void part_done(void *arg)
{
    struct probe_job *j = arg;
    atomic_fetch_sub(&j->active, 1);
}

static mieb_status run_all(struct probe_job *j, int n_threads)
{
    int64_t nt = n_threads > 0 ? n_threads : mieb_par_cpus();
    j->n_threads = (int)nt;
    if (nt > j->n_exp)
        nt = j->n_exp;
    if (nt > MIEB_PAR_MAX_PARTS)
        nt = MIEB_PAR_MAX_PARTS;
    atomic_init(&j->active, (int)nt);
    return mieb_par_queue((int)nt, j->n_exp, run_experiment, part_done, j);
}

/*
 * The lockstep batch and the per-experiment fit are two algorithms, not a device and its
 * CPU fallback: run_all gives sklearn's bits, the batch equals them within float32 rounding.
 * So the family chooses, on dispatch's answer whether the backend runs batches at this shape
 * (the CPU backend has none: a CPU run is sklearn's bits), and takes the per-experiment fit
 * where the batch itself cannot run.
 */
static mieb_status fit_experiments(struct probe_job *j, const struct mieb_run_ctx *rc, const char *task,
                                   const char *split, const char *subset)
{
    int64_t K = 0;
    mieb_status st = MIEB_OK;
    bool batch = false;
    if (!rc->probe_cpu && (st = drawn_classes(j, &K)) == MIEB_OK)
        batch = mieb_dispatch_lr_batch_available(rc->be, j->n_exp, j->L, j->D, K);
    if (st != MIEB_OK || !batch) {
        if (st == MIEB_OK)
            MIEB_LOGD("%s /%s/%s: fitting %lld experiments of %lld x %lld on the CPU", task, split, subset,
                      (long long)j->n_exp, (long long)j->L, (long long)j->D);
        return st != MIEB_OK ? st : run_all(j, rc->n_threads);
    }
    st = run_batched(j, rc->be, rc->n_threads > 0 ? rc->n_threads : mieb_par_cpus(), rc->mem_limit);
    if (st == MIEB_ERR_UNSUPPORTED || st == MIEB_ERR_OOM || st == MIEB_ERR_TOO_LARGE) {
        MIEB_LOGW("%s /%s/%s: %s; fitting the probe on the CPU", task, split, subset, mieb_last_error());
        mieb_clear_error();
        st = run_all(j, rc->n_threads);
    }
    return st;
}

static int cmp_row(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Read the train rows that some experiment uses; pos[row] = their row in *out. */
static mieb_status read_train(struct mieb_emb_role *r, int64_t n_train, const int64_t *sel, int64_t n_sel,
                              float **out, int64_t **pos_out)
{
    const struct mieb_emb_info *in = mieb_emb_role_info(r);
    int64_t D = in->dim, *rowidx = NULL, *pos = malloc((size_t)n_train * sizeof *pos), *need = NULL, n_need = 0;
    float *buf = NULL, *span = NULL;
    mieb_status st = pos ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "train row map");
    if (st == MIEB_OK)
        st = mieb_emb_role_row_index(r, &rowidx);
    if (st != MIEB_OK)
        goto done;
    for (int64_t i = 0; i < n_train; i++)
        pos[i] = -1;
    if (!rowidx && in->n_items != n_train) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld train embeddings but train_labels has %lld rows (and no /row_index)",
                       mieb_emb_role_path(r), (long long)in->n_items, (long long)n_train);
        goto done;
    }
    /* file item of each needed train row */
    if (rowidx) {
        for (int64_t i = 0; i < in->n_items; i++) {
            if (rowidx[i] < 0 || rowidx[i] >= n_train || pos[rowidx[i]] >= 0) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /row_index[%lld] = %lld is %s", mieb_emb_role_path(r), (long long)i,
                               (long long)rowidx[i], rowidx[i] < 0 || rowidx[i] >= n_train ? "not a row of the train split" : "repeated");
                goto done;
            }
            pos[rowidx[i]] = i;
        }
    }
    unsigned char *used = calloc((size_t)n_train, 1);
    if (!used) {
        st = mieb_fail(MIEB_ERR_OOM, "train row flags");
        goto done;
    }
    for (int64_t i = 0; i < n_sel; i++)
        used[sel[i]] = 1;
    need = malloc((size_t)n_train * sizeof *need); /* file items to read, ascending */
    if (!need) {
        free(used);
        st = mieb_fail(MIEB_ERR_OOM, "train rows");
        goto done;
    }
    for (int64_t r0 = 0; r0 < n_train; r0++) {
        if (!used[r0])
            continue;
        if (rowidx && pos[r0] < 0) {
            free(used);
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: train row %lld is chosen by the few-shot draw but not in /row_index",
                           mieb_emb_role_path(r), (long long)r0);
            goto done;
        }
        need[n_need++] = rowidx ? pos[r0] : r0;
    }
    free(used);
    if (rowidx) { /* items of a subset file may be in any order */
        /* a shuffled /row_index of an ImageNet-sized draw (80,000 rows) would cost an
           insertion sort seconds */
        qsort(need, (size_t)n_need, sizeof *need, cmp_row);
    }
    buf = malloc((size_t)(n_need > 0 ? n_need : 1) * (size_t)D * sizeof *buf);
    if (!buf) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %lld x %lld train embeddings", mieb_emb_role_path(r), (long long)n_need, (long long)D);
        goto done;
    }
    /* runs of needed items, merging gaps of up to 64 rows into one read */
    const int64_t GAP = 64;
    span = malloc((size_t)(4096 + GAP) * (size_t)D * sizeof *span);
    if (!span) {
        st = mieb_fail(MIEB_ERR_OOM, "train read buffer");
        goto done;
    }
    for (int64_t a = 0; a < n_need;) {
        int64_t b = a + 1;
        while (b < n_need && need[b] - need[b - 1] <= GAP && need[b] - need[a] < 4096)
            b++;
        int64_t first = need[a], count = need[b - 1] - first + 1;
        if ((st = mieb_emb_role_read(r, first, count, span, NULL)) != MIEB_OK)
            goto done;
        for (int64_t i = a; i < b; i++)
            memcpy(buf + i * D, span + (need[i] - first) * D, (size_t)D * sizeof *buf);
        a = b;
    }
    /* pos[train row] = row of buf */
    int64_t *item_row = malloc((size_t)in->n_items * sizeof *item_row);
    if (!item_row) {
        st = mieb_fail(MIEB_ERR_OOM, "train item map");
        goto done;
    }
    for (int64_t i = 0; i < in->n_items; i++)
        item_row[i] = -1;
    for (int64_t i = 0; i < n_need; i++)
        item_row[need[i]] = i;
    for (int64_t r0 = 0; r0 < n_train; r0++) {
        int64_t item = rowidx ? pos[r0] : r0;
        pos[r0] = (item >= 0 && item < in->n_items) ? item_row[item] : -1;
    }
    free(item_row);
    *out = buf;
    *pos_out = pos;
    buf = NULL;
    pos = NULL;
done:
    free(rowidx), free(pos), free(need), free(buf), free(span);
    return st;
}

/* train_idx, when the task data has it, must be mteb's draw row by row (padded with -1). */
static mieb_status check_train_idx(struct mieb_taskdata *td, const char *split, const char *subset, const int64_t *sel,
                                   int64_t n_exp, int64_t L, int64_t spl)
{
    if (!mieb_taskdata_has_dataset(td, split, subset, "train_idx"))
        return MIEB_OK;
    int64_t *ti = NULL, rows = 0, cols = 0;
    MIEB_TRY(mieb_taskdata_read_i64(td, split, subset, "train_idx", &ti, &rows, &cols));
    mieb_status st = MIEB_OK;
    if (rows != n_exp || cols < L) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/train_idx is %lld x %lld, but the task runs %lld experiments of %lld rows",
                       mieb_taskdata_path(td), split, subset, (long long)rows, (long long)cols, (long long)n_exp, (long long)L);
        goto done;
    }
    for (int64_t e = 0; e < n_exp; e++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t want = c < L ? sel[e * L + c] : -1, got = ti[e * cols + c];
            if (got != want) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/train_idx[%lld][%lld] = %lld, but mteb's draw "
                               "(RandomState(42) shuffles, %lld per label) gives %lld there",
                               mieb_taskdata_path(td), split, subset, (long long)e, (long long)c, (long long)got,
                               (long long)spl, (long long)want);
                goto done;
            }
        }
done:
    free(ti);
    return st;
}

/* scores_per_experiment, then float(np.mean) of each key (NaN where every value is None) */
static mieb_status write_scores(const struct mieb_clf_scores *per, int64_t n_exp, cJSON *scores)
{
    mieb_status st = MIEB_OK;
    cJSON *list = cJSON_AddArrayToObject(scores, "scores_per_experiment");
    for (int64_t e = 0; st == MIEB_OK && e < n_exp; e++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !list || !cJSON_AddItemToArray(list, o)) {
            cJSON_Delete(o);
            return mieb_fail(MIEB_ERR_OOM, "probe scores JSON");
        }
        st = mieb_clf_scores_to_json(&per[e], o);
    }
    if (st != MIEB_OK)
        return st;
    double vals[9][64], *v = NULL;
    if (n_exp > 64 && !(v = malloc((size_t)n_exp * sizeof *v)))
        return mieb_fail(MIEB_ERR_OOM, "probe means");
    struct mieb_clf_scores avg = {.has_ap = true};
    double *avgp[9] = {&avg.accuracy, &avg.f1, &avg.f1_weighted, &avg.precision, &avg.precision_weighted,
                       &avg.recall, &avg.recall_weighted, &avg.ap, &avg.ap_weighted};
    for (int k = 0; k < 9; k++) {
        double *buf = v ? v : vals[k];
        int64_t m = 0;
        for (int64_t e = 0; e < n_exp; e++)
            if (k < 7 || per[e].has_ap)
                buf[m++] = mieb_clf_scores_value(&per[e], k);
        *avgp[k] = m ? mieb_np_mean(buf, m) : NAN;
    }
    free(v);
    return mieb_clf_scores_to_json(&avg, scores);
}

mieb_status mieb_probe_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                    struct mieb_taskdata *td, const char *split, const char *subset, cJSON *scores)
{
    struct mieb_emb_role *tr = NULL, *er = NULL;
    int64_t *train_labels = NULL, *eval_labels = NULL, *sel = NULL, *pos = NULL, n_train = 0, n_eval = 0, L = 0;
    float *train = NULL, *eval = NULL;
    struct mieb_clf_scores *per = NULL;
    int64_t *preds = NULL;
    int64_t spl = mieb_task_param_int(task, "samples_per_label", 8), n_exp = mieb_task_param_int(task, "n_experiments", 10);
    mieb_status st;

    if (mieb_taskdata_has_dataset(td, split, subset, "train_labels_indptr"))
        return mieb_multilabel_score_subset(rc, task, td, split, subset, scores); /* VOC2007: multilabel.c */
    if (spl < 1 || n_exp < 1) {
        st = mieb_fail(MIEB_ERR_CONFIG, "task %s: samples_per_label %lld and n_experiments %lld must be >= 1", task->name,
                       (long long)spl, (long long)n_exp);
        goto done;
    }
    st = mieb_taskdata_read_i64(td, split, subset, "train_labels", &train_labels, &n_train, NULL);
    if (st == MIEB_OK)
        st = mieb_taskdata_read_i64(td, split, subset, "eval_labels", &eval_labels, &n_eval, NULL);
    if (st == MIEB_OK && (n_train == 0 || n_eval == 0))
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/%s is empty", mieb_taskdata_path(td), split, subset,
                       n_train == 0 ? "train_labels" : "eval_labels");
    if (st == MIEB_OK)
        st = mieb_fewshot_draw(train_labels, n_train, spl, n_exp, &sel, &L);
    if (st == MIEB_OK)
        st = check_train_idx(td, split, subset, sel, n_exp, L, spl);
    if (st == MIEB_OK)
        st = mieb_emb_source_open(&rc->emb, task->name, split, subset, "train", MIEB_EMB_SOME_ROWS, &tr);
    if (st == MIEB_OK)
        st = mieb_emb_source_open(&rc->emb, task->name, split, subset, "eval", MIEB_EMB_EVERY_ROW, &er);
    if (st != MIEB_OK)
        goto done;
    const struct mieb_emb_info *ti = mieb_emb_role_info(tr), *ei = mieb_emb_role_info(er);
    if (ti->multivector || ei->multivector) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: the linear probe needs single-vector embeddings (/offsets present)",
                       mieb_emb_role_path(ti->multivector ? tr : er));
        goto done;
    }
    if (ei->n_items != n_eval) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld eval embeddings but %s /%s/%s/eval_labels has %lld labels",
                       mieb_emb_role_path(er), (long long)ei->n_items, mieb_taskdata_path(td), split, subset, (long long)n_eval);
        goto done;
    }
    if (ti->dim != ei->dim) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension %lld differs from %s: dimension %lld", mieb_emb_role_path(tr),
                       (long long)ti->dim, mieb_emb_role_path(er), (long long)ei->dim);
        goto done;
    }
    double t0 = mieb_now();
    if ((st = read_train(tr, n_train, sel, n_exp * L, &train, &pos)) != MIEB_OK)
        goto done;
    eval = malloc((size_t)n_eval * (size_t)ei->dim * sizeof *eval);
    if (!eval) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %lld x %lld eval embeddings", mieb_emb_role_path(er), (long long)n_eval, (long long)ei->dim);
        goto done;
    }
    if ((st = mieb_emb_role_read(er, 0, n_eval, eval, NULL)) != MIEB_OK)
        goto done;
    if (rc->times)
        rc->times->read_wait += mieb_now() - t0;
    int64_t nu = 0;
    if ((st = mieb_clf_n_unique(eval_labels, n_eval, &nu)) != MIEB_OK)
        goto done;
    per = calloc((size_t)n_exp, sizeof *per);
    if (rc->per_query_dir)
        preds = malloc((size_t)n_exp * (size_t)n_eval * sizeof *preds);
    if (!per || (rc->per_query_dir && !preds)) {
        st = mieb_fail(MIEB_ERR_OOM, "probe experiment results");
        goto done;
    }
    struct probe_job job = {.train = train, .pos = pos, .train_labels = train_labels, .eval = eval,
                            .eval_labels = eval_labels, .n_eval = n_eval, .D = ei->dim, .L = L, .n_exp = n_exp,
                            .sel = sel, .binary = nu == 2, .scores = per, .preds = preds};
    t0 = mieb_now();
    st = fit_experiments(&job, rc, task->name, split, subset);
    if (rc->times)
        rc->times->similarity += mieb_now() - t0;
    if (st == MIEB_ERR_BAD_DATA) /* the few-shot sample comes from the labels of this file */
        mieb_fail_context(st, "%s: /%s/%s/train_labels", mieb_taskdata_path(td), split, subset);
    if (st == MIEB_OK)
        st = mieb_per_sample_write_probe(rc, task->name, split, subset, eval_labels, preds, n_eval, n_exp);
    if (st != MIEB_OK)
        goto done;
    st = write_scores(per, n_exp, scores);
done:
    if (tr)
        mieb_emb_role_close(tr);
    if (er)
        mieb_emb_role_close(er);
    free(train_labels), free(eval_labels), free(sel), free(pos), free(train), free(eval), free(per);
    free(preds);
    if (st != MIEB_OK)
        mieb_fail_context(st, "%s /%s/%s", task->name, split, subset);
    return st;
}
