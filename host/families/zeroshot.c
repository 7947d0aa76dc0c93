/*
 * zeroshot.c - the ZeroShotClassification family (PROTOCOLS.md §5, §12 item 5).
 *
 * Inputs: roles `eval` (one row per image) and `candidate_labels` (one row per class
 * prompt); task data `eval_labels` (index into the candidate rows). mteb scores with
 *   - modalities == ["image","text"]: softmax(100 * (x/|x|) @ (t/|t|)^T) over the classes,
 *     fp32, no eps in the norm (similarity_functions.similarity);
 *   - anything else: the model's own similarity (cosine with eps 1e-12, dot or MaxSim),
 * then predictions = torch argmax (first maximum; NaN counts as the maximum, as torch does),
 * and the sklearn metrics; ap / ap_weighted on the continuous class-1 column when the eval
 * labels hold exactly two distinct values, else None (JSON null).
 *
 * The image x candidate score matrix comes from the backend's topk_block with k = all
 * candidates (a GEMM / MaxSim plus a full sort), scattered back into class order, so the
 * CUDA backend computes it on the GPU and MaxSim models work without a new operation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"

#include "../cpu/cpu_kernels.h"
#include "../emb/embeddings.h"
#include "../metrics/classification_metrics.h"
#include "clf_common.h"
#include "per_query.h"

/* Read a whole role as fp32 (with offsets for multi-vector roles). */
static mieb_status read_role(struct mieb_emb_role *r, float **data, int64_t **offsets, struct mieb_vecs *v)
{
    const struct mieb_emb_info *in = mieb_emb_role_info(r);
    int64_t rows = in->n_items;
    if (in->multivector)
        MIEB_TRY(mieb_emb_role_rows_of(r, 0, in->n_items, &rows));
    *data = malloc((size_t)(rows > 0 ? rows : 1) * (size_t)in->dim * sizeof **data);
    *offsets = in->multivector ? malloc((size_t)(in->n_items + 1) * sizeof **offsets) : NULL;
    if (!*data || (in->multivector && !*offsets))
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory for %lld x %lld embeddings", mieb_emb_role_path(r),
                         (long long)rows, (long long)in->dim);
    MIEB_TRY(mieb_emb_role_read(r, 0, in->n_items, *data, *offsets));
    *v = (struct mieb_vecs){*data, *offsets, in->n_items, rows, in->dim};
    return MIEB_OK;
}

/* Rows whose L2 norm is 0: x/|x| is NaN there in mteb's softmax branch (no eps). */
static void mark_zero_rows(const float *x, int64_t n, int64_t dim, unsigned char *zero)
{
    for (int64_t i = 0; i < n; i++) {
        float s = 0.0f;
        for (int64_t d = 0; d < dim; d++)
            s += x[i * dim + d] * x[i * dim + d];
        zero[i] = s == 0.0f;
    }
}

/* Full score matrix S [n_img, n_cls] through the backend (k = n_cls top-k, scattered back). */
static mieb_status score_matrix(struct mieb_backend *be, const struct mieb_vecs *img, const struct mieb_vecs *cls,
                                enum mieb_sim sim, float *S)
{
    int64_t k = cls->n;
    int64_t block = 4096;
    float *ts = malloc((size_t)block * (size_t)k * sizeof *ts);
    int64_t *ti = malloc((size_t)block * (size_t)k * sizeof *ti);
    mieb_status st = (ts && ti) ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "zero-shot score buffers");
    /* images in blocks of queries: each block is a query set against all candidates */
    for (int64_t a = 0; st == MIEB_OK && a < img->n; a += block) {
        int64_t b = a + block < img->n ? a + block : img->n;
        struct mieb_vecs sub = *img;
        if (img->offsets) {
            sub.data = img->data + img->offsets[a] * img->dim;
            int64_t *off = malloc((size_t)(b - a + 1) * sizeof *off);
            if (!off) {
                st = mieb_fail(MIEB_ERR_OOM, "zero-shot offsets");
                break;
            }
            for (int64_t i = a; i <= b; i++)
                off[i - a] = img->offsets[i] - img->offsets[a];
            sub.offsets = off;
            sub.rows = off[b - a];
        } else {
            sub.data = img->data + a * img->dim;
            sub.rows = b - a;
        }
        sub.n = b - a;
        struct mieb_qset *bq = NULL;
        st = mieb_backend_prepare_queries(be, &sub, sim, &bq);
        if (st == MIEB_OK)
            st = mieb_backend_topk_block(be, bq, cls, k, ts, ti);
        if (bq)
            mieb_backend_release_queries(be, bq);
        if (img->offsets)
            free((void *)sub.offsets);
        for (int64_t i = 0; st == MIEB_OK && i < b - a; i++)
            for (int64_t j = 0; j < k; j++)
                S[(a + i) * k + ti[i * k + j]] = ts[i * k + j];
    }
    free(ts);
    free(ti);
    return st;
}

/* torch's softmax over the last dim in fp32: exp(x - max), sum, multiply by 1/sum. */
static void softmax_rows(float *S, int64_t n, int64_t k)
{
    for (int64_t i = 0; i < n; i++) {
        float *r = S + i * k, mx = r[0], sum = 0.0f;
        for (int64_t j = 0; j < k; j++) {
            r[j] *= 100.0f;
            if (r[j] > mx || j == 0)
                mx = r[j];
        }
        for (int64_t j = 0; j < k; j++) {
            r[j] = expf(r[j] - mx);
            sum += r[j];
        }
        float inv = 1.0f / sum;
        for (int64_t j = 0; j < k; j++)
            r[j] *= inv;
    }
}

/* The eval and candidate_labels roles agree with each other, with the labels and with the
   similarity: MIEB_OK, or MIEB_ERR_BAD_DATA naming the file at fault. */
static mieb_status check_inputs(struct mieb_emb_role *ir, struct mieb_emb_role *cr, struct mieb_taskdata *td,
                                const char *split, const char *subset, const int64_t *labels, int64_t n_lab,
                                enum mieb_sim sim, bool softmax)
{
    const struct mieb_emb_info *ii = mieb_emb_role_info(ir), *ci = mieb_emb_role_info(cr);
    int64_t n = ii->n_items, k = ci->n_items;
    if (n != n_lab)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld eval embeddings but %s /%s/%s/eval_labels has %lld labels",
                         mieb_emb_role_path(ir), (long long)n, mieb_taskdata_path(td), split, subset, (long long)n_lab);
    if (n == 0 || k == 0)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: no %s rows to score", mieb_emb_role_path(n == 0 ? ir : cr),
                         n == 0 ? "eval" : "candidate_labels");
    if (ii->dim != ci->dim)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension %lld differs from %s: dimension %lld",
                         mieb_emb_role_path(ir), (long long)ii->dim, mieb_emb_role_path(cr), (long long)ci->dim);
    bool want_multi = sim == MIEB_SIM_MAXSIM;
    if (ii->multivector != want_multi || ci->multivector != want_multi)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s scoring needs %s embeddings (/offsets %s)",
                         mieb_emb_role_path(ii->multivector != want_multi ? ir : cr),
                         softmax ? "softmax(100*cosine)" : mieb_sim_name(sim),
                         want_multi ? "multi-vector" : "single-vector", want_multi ? "required" : "not allowed");
    /* eval_labels index the candidate rows; sklearn would accept others, but then no
     * prediction could ever match, which means the data is wrong */
    for (int64_t i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= k)
            return mieb_fail(MIEB_ERR_BAD_DATA,
                             "%s: /%s/%s/eval_labels[%lld] = %lld is not a row of the %lld candidate labels",
                             mieb_taskdata_path(td), split, subset, (long long)i, (long long)labels[i], (long long)k);
    return MIEB_OK;
}

mieb_status mieb_zeroshot_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                       struct mieb_taskdata *td, const char *split, const char *subset,
                                       cJSON *scores)
{
    struct mieb_emb_role *ir = NULL, *cr = NULL;
    float *idata = NULL, *cdata = NULL, *S = NULL;
    int64_t *ioff = NULL, *coff = NULL, *labels = NULL, *pred = NULL, n_lab = 0;
    double *pos = NULL;
    unsigned char *izero = NULL, *czero = NULL;
    struct mieb_vecs iv, cv;
    mieb_status st;

    /* mteb's branch: softmax of 100*cosine only for modalities exactly ["image","text"] */
    const cJSON *mods = cJSON_GetObjectItemCaseSensitive(task->json, "modalities");
    bool softmax = cJSON_GetArraySize(mods) == 2 &&
                   !strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(mods, 0)) ?: "", "image") &&
                   !strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(mods, 1)) ?: "", "text");
    enum mieb_sim sim = softmax ? MIEB_SIM_COSINE : rc->sim;

    st = mieb_taskdata_read_i64(td, split, subset, "eval_labels", &labels, &n_lab, NULL);
    if (st == MIEB_OK)
        st = mieb_emb_source_open(&rc->emb, task->name, split, subset, "eval", MIEB_EMB_EVERY_ROW, &ir);
    if (st == MIEB_OK)
        st = mieb_emb_source_open(&rc->emb, task->name, split, subset, "candidate_labels", MIEB_EMB_EVERY_ROW,
                                &cr);
    if (st != MIEB_OK)
        goto done;
    const struct mieb_emb_info *ii = mieb_emb_role_info(ir), *ci = mieb_emb_role_info(cr);
    int64_t n = ii->n_items, k = ci->n_items;
    st = check_inputs(ir, cr, td, split, subset, labels, n_lab, sim, softmax);
    if (st != MIEB_OK)
        goto done;
    st = read_role(ir, &idata, &ioff, &iv);
    if (st == MIEB_OK)
        st = read_role(cr, &cdata, &coff, &cv);
    if (st != MIEB_OK)
        goto done;
    S = malloc((size_t)n * (size_t)k * sizeof *S);
    pred = malloc((size_t)n * sizeof *pred);
    pos = malloc((size_t)n * sizeof *pos);
    izero = calloc((size_t)n, 1);
    czero = calloc((size_t)k, 1);
    if (!S || !pred || !pos || !izero || !czero) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: zero-shot score matrix %lld x %lld", task->name, (long long)n, (long long)k);
        goto done;
    }
    if (sim == MIEB_SIM_COSINE) {
        mark_zero_rows(idata, n, iv.dim, izero);
        mark_zero_rows(cdata, k, cv.dim, czero);
        mieb_cpu_l2_normalize_rows(idata, iv.rows, iv.dim);
        mieb_cpu_l2_normalize_rows(cdata, cv.rows, cv.dim);
    }
    double t0 = mieb_now();
    st = score_matrix(rc->be, &iv, &cv, sim, S);
    if (st != MIEB_OK)
        goto done;
    if (softmax) {
        /* a zero vector divided by its zero norm is NaN in torch: its row / column is NaN */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++)
                if (izero[i] || czero[j])
                    S[i * k + j] = NAN;
        softmax_rows(S, n, k);
    }
    if (rc->times)
        rc->times->similarity += mieb_now() - t0;
    t0 = mieb_now();
    for (int64_t i = 0; i < n; i++)
        pred[i] = mieb_clf_argmax_f32(S + i * k, k);
    struct mieb_clf_scores sc;
    st = mieb_clf_label_metrics(labels, pred, n, &sc);
    if (st == MIEB_OK)
        st = mieb_per_query_write_predictions(rc, task->name, split, subset, "prediction", labels, pred, n);
    int64_t nu = 0;
    if (st == MIEB_OK)
        st = mieb_clf_n_unique(labels, n, &nu);
    if (st == MIEB_OK && nu == 2) {
        if (k < 2) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: two classes in eval_labels but one candidate label",
                           mieb_emb_role_path(cr));
            goto done;
        }
        for (int64_t i = 0; i < n; i++)
            pos[i] = S[i * k + 1];
        st = mieb_clf_binary_ap(labels, pos, n, &sc.ap);
        sc.ap_weighted = sc.ap;
        sc.has_ap = true;
        if (st != MIEB_OK)
            mieb_fail_context(st, "%s /%s/%s", mieb_taskdata_path(td), split, subset);
    }
    if (st == MIEB_OK)
        st = mieb_clf_scores_to_json(&sc, scores);
    if (rc->times)
        rc->times->metrics += mieb_now() - t0;
done:
    if (ir)
        mieb_emb_role_close(ir);
    if (cr)
        mieb_emb_role_close(cr);
    free(idata), free(cdata), free(ioff), free(coff), free(labels), free(pred), free(pos), free(S);
    free(izero), free(czero);
    if (st != MIEB_OK)
        mieb_fail_context(st, "%s /%s/%s", task->name, split, subset);
    return st;
}
