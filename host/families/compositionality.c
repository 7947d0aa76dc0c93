/**
 * compositionality.c - the Compositionality family driver (ARO x4, SugarCrepe, Winoground,
 * ImageCoDe): PROTOCOLS.md §6, mteb's AbsTaskImageTextPairClassification.
 *
 * Reads n_samples / n_images / n_texts from the task-data group, the roles `images`
 * [n_samples * n_images] and `texts` [n_samples * n_texts] (sample-major), and scores the
 * samples in blocks sized by --mem-limit: every row L2-normalised as F.normalize does in
 * the embeddings' dtype, S = img @ txt.T per sample, always cosine (mteb ignores the
 * model's similarity function here), then torch-argmax correctness and float32 means
 * (host/metrics/compositionality.c). Keys: image_acc, text_acc, accuracy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dispatch/dispatch.h"
#include "../emb/embeddings.h"
#include "../metrics/compositionality.h"
#include "family.h"
#include "per_sample.h"

/* Number of names in the registry's images_column_names / texts_column_names (0: not listed). */
static int64_t registry_columns(const struct mieb_task *task, const char *key)
{
    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(task->json, "columns");
    const cJSON *v = cols ? cJSON_GetObjectItemCaseSensitive(cols, key) : NULL;
    if (cJSON_IsString(v))
        return 1; /* a single column name: one item per sample */
    return cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
}

static mieb_status read_shape(const struct mieb_task *task, struct mieb_taskdata *td, const char *split,
                              const char *subset, int64_t shape[3])
{
    static const char *attr[3] = {"n_samples", "n_images", "n_texts"};
    static const char *col[3] = {NULL, "images_column_names", "texts_column_names"};
    const char *path = mieb_taskdata_path(td);
    for (int k = 0; k < 3; k++) {
        MIEB_TRY(mieb_taskdata_group_attr_i64(td, split, subset, attr[k], &shape[k]));
        if (shape[k] < 1 || shape[k] > ((int64_t)1 << 40))
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s: attribute %s = %lld (must be >= 1)", path, split, subset,
                             attr[k], (long long)shape[k]);
        int64_t want = col[k] ? registry_columns(task, col[k]) : 0;
        if (want && shape[k] != want)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s: attribute %s = %lld, but mteb's %s has %lld %s", path,
                             split, subset, attr[k], (long long)shape[k], task->name, (long long)want, col[k]);
    }
    return MIEB_OK;
}

static mieb_status open_role(const struct mieb_run_ctx *rc, const struct mieb_task *task, const char *split,
                             const char *subset, const char *role, int64_t want, struct mieb_emb_role **r)
{
    MIEB_TRY(mieb_emb_source_open(&rc->emb, task->name, split, subset, role, MIEB_EMB_EVERY_ROW, r));
    const struct mieb_emb_info *in = mieb_emb_role_info(*r);
    if (in->multivector)
        return mieb_fail(MIEB_ERR_BAD_DATA,
                         "%s: multi-vector embeddings (/offsets) cannot be scored: mteb's compositionality "
                         "evaluator takes one vector per image and per text",
                         mieb_emb_role_path(*r));
    if (in->n_items != want)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %lld rows, but the task data says n_samples x n_%s = %lld",
                         mieb_emb_role_path(*r), (long long)in->n_items, !strcmp(role, "images") ? "images" : "texts",
                         (long long)want);
    return MIEB_OK;
}

mieb_status mieb_compositionality_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                               struct mieb_taskdata *td, const char *split, const char *subset,
                                               cJSON *scores)
{
    struct mieb_emb_role *ri = NULL, *rt = NULL;
    struct mieb_compo_counts cnt = {0};
    float *img = NULL, *txt = NULL, *s = NULL;
    uint8_t *flags = NULL; /* --per-query: text_correct, image_correct of each sample */
    int64_t shape[3] = {0, 0, 0};
    mieb_status st = read_shape(task, td, split, subset, shape);
    const int64_t ns = shape[0], ni = shape[1], nt = shape[2];
    if (st == MIEB_OK)
        st = open_role(rc, task, split, subset, "images", ns * ni, &ri);
    if (st == MIEB_OK)
        st = open_role(rc, task, split, subset, "texts", ns * nt, &rt);
    if (st != MIEB_OK)
        goto done;
    const struct mieb_emb_info *ii = mieb_emb_role_info(ri), *ti = mieb_emb_role_info(rt);
    const int64_t dim = ii->dim;
    if (ti->dim != dim) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension %lld differs from %s: dimension %lld", mieb_emb_role_path(ri),
                       (long long)dim, mieb_emb_role_path(rt), (long long)ti->dim);
        goto done;
    }
    if (ii->dtype != ti->dtype)
        MIEB_LOGW("%s %s/%s: images and texts have different dtypes (torch's matmul would refuse them); "
                  "each is normalised in its own dtype and the scores are computed in fp32",
                  task->name, split, subset);

    /* samples per block: raw + normalised rows of both roles plus the score matrices */
    double per_sample = (double)(ni + nt) * (double)dim * 2.0 * sizeof(float) + (double)(ni * nt) * sizeof(float);
    int64_t block = (int64_t)((double)rc->mem_limit / (per_sample > 1 ? per_sample : 1));
    block = block < 1 ? 1 : block > ns ? ns : block;
    img = malloc(sizeof(float) * (size_t)(block * ni * dim + 1));
    txt = malloc(sizeof(float) * (size_t)(block * nt * dim + 1));
    s = malloc(sizeof(float) * (size_t)(block * ni * nt + 1));
    if (rc->per_query_dir)
        flags = malloc((size_t)ns * 2);
    if (!img || !txt || !s || (rc->per_query_dir && !flags)) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: blocks of %lld samples", task->name, (long long)block);
        goto done;
    }
    MIEB_LOGD("%s %s/%s: %lld samples of %lld image(s) x %lld text(s), dim %lld, blocks of %lld", task->name, split,
              subset, (long long)ns, (long long)ni, (long long)nt, (long long)dim, (long long)block);
    for (int64_t s0 = 0; s0 < ns && st == MIEB_OK; s0 += block) {
        int64_t nb = ns - s0 < block ? ns - s0 : block;
        double t0 = mieb_now();
        st = mieb_emb_role_read(ri, s0 * ni, nb * ni, img, NULL);
        if (st == MIEB_OK)
            st = mieb_emb_role_read(rt, s0 * nt, nb * nt, txt, NULL);
        double t1 = mieb_now();
        if (st == MIEB_OK)
            st = mieb_dispatch_compo_scores(rc->be, img, ii->dtype, txt, ti->dtype, nb, ni, nt, dim, s);
        double t2 = mieb_now();
        for (int64_t k = 0; st == MIEB_OK && k < nb; k++)
            mieb_per_sample_compo_add(&cnt, s + k * ni * nt, ni, nt, flags ? flags + 2 * (s0 + k) : NULL);
        if (rc->times) {
            rc->times->read_wait += t1 - t0;
            rc->times->similarity += t2 - t1;
            rc->times->metrics += mieb_now() - t2;
        }
    }
    if (st == MIEB_OK)
        st = mieb_compo_finish(&cnt, scores);
    if (st == MIEB_OK)
        st = mieb_per_sample_write_compo(rc, task->name, split, subset, flags, ns);
done:
    if (st != MIEB_OK && !strstr(mieb_last_error(), mieb_taskdata_path(td)))
        mieb_fail_context(st, "%s /%s/%s (%s)", task->name, split, subset, mieb_taskdata_path(td));
    free(img);
    free(txt);
    free(s);
    free(flags);
    mieb_emb_role_close(ri);
    mieb_emb_role_close(rt);
    return st;
}
