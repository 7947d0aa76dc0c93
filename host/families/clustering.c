/*
 * clustering.c - the ImageClustering driver (PROTOCOLS.md §4): reads `eval_labels` and the
 * `eval` embeddings, clusters them with k = number of distinct labels (mteb's
 * MiniBatchKMeans, or full-batch Lloyd with --kmeans full) and writes mteb's keys in
 * _compute_metrics order: v_measure, nmi, ari, cluster_accuracy (all Python floats).
 */
#include <stdlib.h>

#include "../emb/embeddings.h"
#include "../metrics/clustering_metrics.h"
#include "../emulation/kmeans.h"
#include "family.h"
#include "per_query.h"

mieb_status mieb_clustering_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                         struct mieb_taskdata *td, const char *split, const char *subset,
                                         cJSON *scores)
{
    int64_t *labels = NULL, *pred = NULL, n = 0, k = 0;
    int32_t *lab32 = NULL;
    float *x = NULL;
    struct mieb_emb_role *role = NULL;
    const char *tpath = mieb_taskdata_path(td);
    /* the reader checks that eval_labels is 1-D int64 and names the file on failure */
    mieb_status st = mieb_taskdata_read_i64(td, split, subset, "eval_labels", &labels, &n, NULL);
    if (st != MIEB_OK)
        goto out;
    if ((st = mieb_emb_source_open(&rc->emb, task->name, split, subset, "eval", MIEB_EMB_EVERY_ROW, &role)) !=
        MIEB_OK)
        goto out;
    const struct mieb_emb_info *info = mieb_emb_role_info(role);
    if (info->multivector) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /offsets present: ImageClustering needs one vector per image (task %s)",
                       mieb_emb_role_path(role), task->name);
        goto out;
    }
    if (info->n_items != n) {
        st = mieb_fail(MIEB_ERR_BAD_DATA,
                       "%s: /embeddings has %lld rows but %s /%s/%s/eval_labels has %lld labels (task %s)",
                       mieb_emb_role_path(role), (long long)info->n_items, tpath, split, subset, (long long)n,
                       task->name);
        goto out;
    }
    if ((st = mieb_count_distinct(labels, n, &k)) != MIEB_OK)
        goto out;
    if (n == 0 || k < 1) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s/%s/eval_labels is empty (task %s)", tpath, split, subset,
                       task->name);
        goto out;
    }
    x = malloc((size_t)n * (size_t)info->dim * sizeof *x);
    lab32 = malloc((size_t)n * sizeof *lab32);
    pred = malloc((size_t)n * sizeof *pred);
    if (!x || !lab32 || !pred) {
        st = mieb_fail(MIEB_ERR_OOM, "task %s: out of memory for %lld x %lld embeddings", task->name, (long long)n,
                       (long long)info->dim);
        goto out;
    }
    double t0 = mieb_now();
    if ((st = mieb_emb_role_read(role, 0, n, x, NULL)) != MIEB_OK)
        goto out;
    if (rc->times)
        rc->times->read_wait += mieb_now() - t0;
    t0 = mieb_now();
    struct mieb_kmeans_opts ko = mieb_kmeans_mteb_opts(k);
    struct mieb_kmeans_info ki = {0};
    MIEB_LOGD("%s /%s/%s: %s k-means of %lld x %lld into %lld clusters", task->name, split, subset,
              rc->kmeans_full ? "full-batch" : "mini-batch", (long long)n, (long long)info->dim, (long long)k);
    st = rc->kmeans_full ? mieb_kmeans_full(rc->be, x, n, info->dim, &ko, lab32, &ki)
                         : mieb_kmeans_minibatch(rc->be, x, n, info->dim, &ko, lab32, &ki);
    if (st != MIEB_OK) {
        mieb_fail_context(st, "task %s, %s (%s/%s)", task->name, mieb_emb_role_path(role), split, subset);
        goto out;
    }
    if (rc->times)
        rc->times->similarity += mieb_now() - t0;
    t0 = mieb_now();
    for (int64_t i = 0; i < n; i++)
        pred[i] = lab32[i];
    struct mieb_cluster_scores cs;
    if ((st = mieb_cluster_scores(labels, pred, n, &cs)) != MIEB_OK)
        goto out;
    if ((st = mieb_per_query_write_predictions(rc, task->name, split, subset, "cluster", labels, pred, n)) != MIEB_OK)
        goto out;
    cJSON_AddNumberToObject(scores, "v_measure", cs.v_measure);
    cJSON_AddNumberToObject(scores, "nmi", cs.nmi);
    cJSON_AddNumberToObject(scores, "ari", cs.ari);
    cJSON_AddNumberToObject(scores, "cluster_accuracy", cs.cluster_accuracy);
    if (rc->kmeans_full)
        cJSON_AddStringToObject(scores, "kmeans_mode", "full");
    if (rc->times)
        rc->times->metrics += mieb_now() - t0;
out:
    mieb_emb_role_close(role);
    free(labels), free(pred), free(lab32), free(x);
    return st;
}
