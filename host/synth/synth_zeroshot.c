/*
 * synth_zeroshot.c - synthetic ZeroShotClassification data (see synth_clf.h): one
 * `candidate_labels` row per class (the registry's n_classes, at most 1000), and `eval`
 * images that sit near their class's row (twice the row plus noise), a few far from any
 * row (noise only) and a few exact multiples of their row (exact cosine ties between
 * images); eval_labels is the class row of each image.
 */
#include <stdlib.h>
#include <string.h>

#include "synth_clf.h"

/* mteb's softmax(100*cosine) branch: modalities exactly ["image","text"] (zeroshot.c) */
static bool softmax_branch(const struct mieb_task *t)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(t->json, "modalities");
    const char *a = cJSON_GetStringValue(cJSON_GetArrayItem(m, 0)), *b = cJSON_GetStringValue(cJSON_GetArrayItem(m, 1));
    return cJSON_GetArraySize(m) == 2 && a && b && !strcmp(a, "image") && !strcmp(b, "text");
}

static mieb_status write_split(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file, const char *split,
                               const char *subset, int64_t k, int64_t n)
{
    struct mieb_synth_opts so = *o;
    if (so.sim == MIEB_SYNTH_MAXSIM && softmax_branch(t)) /* that branch is cosine on single vectors */
        so.sim = MIEB_SYNTH_COSINE;
    struct mieb_rng rng;
    mieb_rng_seed_for(&rng, o->seed, t->name, split, subset, "zeroshot");
    int dim = o->dim;
    int32_t *txt = malloc((size_t)k * (size_t)dim * sizeof *txt), *img = malloc((size_t)n * (size_t)dim * sizeof *img);
    int64_t *lab = malloc((size_t)n * sizeof *lab);
    hid_t grp = -1;
    mieb_status st = (txt && img && lab) ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "synth %s: out of memory", t->name);
    if (st != MIEB_OK)
        goto done;
    for (int64_t i = 0; i < k * dim; i++)
        txt[i] = mieb_rng_noise(&rng, 256);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i < k ? i : (int64_t)mieb_rng_below(&rng, (uint64_t)k);
        lab[i] = c;
        uint64_t kind = mieb_rng_below(&rng, 20);
        for (int d = 0; d < dim; d++) {
            int32_t base = txt[c * dim + d];
            if (kind == 0) /* far from every class: pure noise */
                img[i * dim + d] = mieb_rng_noise(&rng, 256);
            else if (kind == 1) /* an exact multiple of the class row: cosine ties */
                img[i * dim + d] = 2 * base;
            else
                img[i * dim + d] = 2 * base + mieb_rng_noise(&rng, 320);
        }
    }
    char gp[1024];
    snprintf(gp, sizeof gp, "/%s/%s", split, subset);
    st = mieb_h5w_group(file, gp, &grp);
    if (st == MIEB_OK)
        st = mieb_h5w_i64(grp, "eval_labels", lab, 1, &n);
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&so, t, split, subset, "eval", img, n);
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&so, t, split, subset, "candidate_labels", txt, k);
done:
    mieb_h5w_group_close(grp);
    free(txt), free(img), free(lab);
    return st;
}

struct zs_args {
    int64_t k;     /* classes */
    double n_test; /* the registry's test size */
};

static mieb_status zs_group(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file, const char *split,
                            const char *subset, void *arg, int64_t *n_out)
{
    const struct zs_args *a = arg;
    *n_out = mieb_synth_count(a->n_test, o->scale, t->n_splits * t->n_subsets, 2 * a->k);
    return write_split(o, t, file, split, subset, a->k, *n_out);
}

mieb_status mieb_synth_zeroshot(const struct mieb_synth_opts *o, const struct mieb_task *t)
{
    const cJSON *jc = cJSON_GetObjectItemCaseSensitive(t->json, "n_classes");
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(t->json, "n_test");
    int64_t k = cJSON_IsNumber(jc) ? (int64_t)jc->valuedouble : 10;
    if (k < 2)
        k = 2;
    if (k > 1000)
        k = 1000;
    struct zs_args a = {k, cJSON_IsNumber(jn) ? jn->valuedouble : 1000};
    MIEB_TRY(mieb_synth_groups(o, t, zs_group, &a, NULL));
    MIEB_LOGI("synth: %s: %lld classes", t->name, (long long)k);
    return MIEB_OK;
}
