/*
 * synth_compositionality.c - synthetic Compositionality data (PROTOCOLS.md §6): ARO x4,
 * SugarCrepe, Winoground, ImageCoDe.
 *
 * Per split and subset: n_samples samples of n_images images and n_texts texts (the
 * registry's column counts: 1x5, 1x2, 2x2, 10x1), written as the group attributes
 * n_samples / n_images / n_texts and the sample-major roles `images` and `texts`.
 * Planted structure: item k of a sample (image k, text k) is a shared random concept plus
 * small noise, so the correct pairing usually wins; ~30% of samples are "hard" (text 0 or
 * image 0 drawn near another concept, so the model gets them wrong); ~6% (and sample 1
 * always) have an exact duplicate (text 1 = text 0, or image 1 = image 0), so cosine scores tie exactly and the
 * first-maximum argmax rule decides, as it does in mteb. Embeddings are always one vector
 * per item (mteb's evaluator cannot take multi-vector embeddings here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static int64_t columns(const struct mieb_task *t, const char *key, int64_t dflt)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(t->json, "columns");
    const cJSON *v = c ? cJSON_GetObjectItemCaseSensitive(c, key) : NULL;
    if (cJSON_IsString(v))
        return 1;
    return cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 ? cJSON_GetArraySize(v) : dflt;
}

static void near(struct mieb_rng *rng, const int32_t *centre, int32_t *out, int dim, int32_t amp)
{
    for (int c = 0; c < dim; c++)
        out[c] = centre[c] + mieb_rng_noise(rng, amp);
}

static mieb_status gen_group(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file,
                             const char *split, const char *subset, void *arg, int64_t *n_out)
{
    (void)arg;
    const int dim = o->dim;
    const int64_t ni = columns(t, "images_column_names", 1), nt = columns(t, "texts_column_names", 2);
    const int64_t kmax = ni > nt ? ni : nt;
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(t->json, "n_test");
    const int64_t ns = mieb_synth_count(cJSON_IsNumber(jn) ? jn->valuedouble : 400, o->scale,
                                        t->n_splits * t->n_subsets, 8);
    struct mieb_rng rng;
    mieb_rng_seed_for(&rng, o->seed, t->name, split, subset, "compositionality");
    int32_t *img = malloc(sizeof(int32_t) * (size_t)(ns * ni * dim));
    int32_t *txt = malloc(sizeof(int32_t) * (size_t)(ns * nt * dim));
    int32_t *cen = malloc(sizeof(int32_t) * (size_t)((kmax + 1) * dim));
    mieb_status st = MIEB_OK;
    if (!img || !txt || !cen) {
        st = mieb_fail(MIEB_ERR_OOM, "synth %s: out of memory for %lld samples", t->name, (long long)ns);
        goto done;
    }
    for (int64_t s = 0; s < ns; s++) {
        int32_t *si = img + s * ni * dim, *st_ = txt + s * nt * dim;
        for (int64_t k = 0; k <= kmax; k++) /* concept k; the last one is a distractor */
            for (int c = 0; c < dim; c++)
                cen[k * dim + c] = (int32_t)mieb_rng_below(&rng, 1025) - 512;
        for (int64_t i = 0; i < ni; i++)
            near(&rng, cen + i * dim, si + i * dim, dim, 64);
        for (int64_t j = 0; j < nt; j++)
            near(&rng, cen + j * dim, st_ + j * dim, dim, 64);
        uint64_t u = mieb_rng_below(&rng, 100);
        if (s == 1)
            u = 30; /* at least one exact tie in every group */
        if (u < 15) /* hard: text 0 drifts to another concept */
            near(&rng, cen + (nt > 1 ? 1 : kmax) * dim, st_, dim, 96);
        else if (u < 30) /* hard: image 0 drifts */
            near(&rng, cen + (ni > 1 ? 1 : kmax) * dim, si, dim, 96);
        else if (u < 33 && nt > 1) /* exact tie between texts 0 and 1 */
            memcpy(st_ + dim, st_, sizeof(int32_t) * (size_t)dim);
        else if (u < 36 && ni > 1) /* exact tie between images 0 and 1 */
            memcpy(si + dim, si, sizeof(int32_t) * (size_t)dim);
        else if (u < 36 && nt > 1) /* single-image tasks: the same tie on the text side */
            memcpy(st_ + dim, st_, sizeof(int32_t) * (size_t)dim);
    }
    {
        char gp[1024];
        hid_t grp;
        if (snprintf(gp, sizeof gp, "/%s/%s", split, subset) >= (int)sizeof gp) {
            st = mieb_fail(MIEB_ERR_INVALID_ARG, "synth %s: group name too long", t->name);
            goto done;
        }
        st = mieb_h5w_group(file, gp, &grp);
        if (st != MIEB_OK)
            goto done;
        st = mieb_h5w_attr_i64(grp, "n_samples", ns);
        if (st == MIEB_OK)
            st = mieb_h5w_attr_i64(grp, "n_images", ni);
        if (st == MIEB_OK)
            st = mieb_h5w_attr_i64(grp, "n_texts", nt);
        mieb_h5w_group_close(grp);
    }
    struct mieb_synth_opts one = *o;
    one.sim = MIEB_SYNTH_COSINE; /* one vector per item, whatever the model's similarity */
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&one, t, split, subset, "images", img, ns * ni);
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&one, t, split, subset, "texts", txt, ns * nt);
    *n_out = ns;
done:
    free(img);
    free(txt);
    free(cen);
    return st;
}

mieb_status mieb_synth_compositionality(const struct mieb_synth_opts *o, const struct mieb_task *t)
{
    int64_t total = 0;
    MIEB_TRY(mieb_synth_groups(o, t, gen_group, NULL, &total));
    MIEB_LOGI("synth: %s: %lld samples of %lld image(s) x %lld text(s)", t->name, (long long)total,
              (long long)columns(t, "images_column_names", 1), (long long)columns(t, "texts_column_names", 2));
    return MIEB_OK;
}
