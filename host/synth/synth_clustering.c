/*
 * synth_clustering.c - synthetic ImageClustering data: eval_labels over the registry's
 * n_classes (scaled, at least 2) and planted clusters: each class has a random integer
 * centre and its images are the centre plus bell-shaped noise. A few images are exact
 * duplicates of an earlier one (k-means must cope with coincident points) and one class
 * id is skipped, so label values are not 0..k-1.
 */
#include <stdlib.h>

#include "synth.h"

struct clu_args {
    int64_t k;     /* classes */
    double n_test; /* the registry's test size */
};

static mieb_status clu_group(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file, const char *split,
                             const char *subset, void *arg, int64_t *n_out)
{
    const struct clu_args *a = arg;
    int64_t k = a->k, n = mieb_synth_count(a->n_test, o->scale, t->n_splits * t->n_subsets, 4 * k);
    struct mieb_rng rng;
    mieb_rng_seed_for(&rng, o->seed, t->name, split, subset, "clustering");
    int32_t *centre = malloc((size_t)k * (size_t)o->dim * sizeof *centre);
    int32_t *vec = malloc((size_t)n * (size_t)o->dim * sizeof *vec);
    int64_t *lab = malloc((size_t)n * sizeof *lab);
    if (!centre || !vec || !lab) {
        free(centre), free(vec), free(lab);
        return mieb_fail(MIEB_ERR_OOM, "synth %s: out of memory", t->name);
    }
    for (int64_t i = 0; i < k * o->dim; i++)
        centre[i] = mieb_rng_noise(&rng, 256);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i < k ? i : (int64_t)mieb_rng_below(&rng, (uint64_t)k); /* every class present */
        lab[i] = c < 3 ? c : c + 1; /* class id 3 is never used */
        if (i > k && mieb_rng_chance(&rng, 1, 50)) { /* an exact duplicate of an earlier image */
            int64_t j = (int64_t)mieb_rng_below(&rng, (uint64_t)i);
            lab[i] = lab[j];
            for (int d = 0; d < o->dim; d++)
                vec[i * o->dim + d] = vec[j * o->dim + d];
            continue;
        }
        for (int d = 0; d < o->dim; d++)
            vec[i * o->dim + d] = centre[c * o->dim + d] + mieb_rng_noise(&rng, 224);
    }
    char gp[1024];
    hid_t grp;
    snprintf(gp, sizeof gp, "/%s/%s", split, subset);
    mieb_status st = mieb_h5w_group(file, gp, &grp);
    if (st == MIEB_OK) {
        st = mieb_h5w_i64(grp, "eval_labels", lab, 1, &n);
        mieb_h5w_group_close(grp);
    }
    if (st == MIEB_OK)
        st = mieb_synth_write_role(o, t, split, subset, "eval", vec, n);
    free(centre), free(vec), free(lab);
    *n_out = n;
    return st;
}

mieb_status mieb_synth_clustering(const struct mieb_synth_opts *o, const struct mieb_task *t)
{
    const cJSON *jc = cJSON_GetObjectItemCaseSensitive(t->json, "n_classes");
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(t->json, "n_test");
    int64_t k = mieb_synth_count(cJSON_IsNumber(jc) ? jc->valuedouble : 10, o->scale * 10.0, 1, 5);
    if (cJSON_IsNumber(jc) && k > (int64_t)jc->valuedouble)
        k = (int64_t)jc->valuedouble;
    struct clu_args a = {k, cJSON_IsNumber(jn) ? jn->valuedouble : 1000};
    MIEB_TRY(mieb_synth_groups(o, t, clu_group, &a, NULL));
    MIEB_LOGI("synth: %s: %lld classes", t->name, (long long)k);
    return MIEB_OK;
}
