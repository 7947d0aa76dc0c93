/*
 * synth_classification.c - synthetic ImageClassification data (see synth_clf.h): labels over
 * the registry's n_classes (scaled, 2..n_classes), class centres with bell-shaped noise, in
 * one train and one eval role per (split, subset), so the linear probe has something to learn
 * and every path of its input contract (train_idx, multilabel CSR) is exercised.
 */
#include <stdlib.h>
#include <string.h>

#include "../emulation/fewshot_sample.h"
#include "synth_clf.h"

static int64_t json_num(const cJSON *obj, const char *key, int64_t dflt)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

/* Labels and vectors of n items: single label lab[i], or 1-3 labels in CSR (ml_ptr/ml_flat). */
static void gen_items(struct mieb_rng *rng, const int32_t *centre, int64_t k, int dim, int64_t n, bool multilabel,
                      int64_t *lab, int64_t *ml_ptr, int64_t *ml_flat, int32_t *vec)
{
    int64_t nf = 0;
    for (int64_t i = 0; i < n; i++) {
        /* class 0 is rare when k > 2 (a class smaller than samples_per_label); the first k
         * items cover every class */
        int64_t c = i < k ? i : k > 2 ? 1 + (int64_t)mieb_rng_below(rng, (uint64_t)(k - 1)) : (int64_t)mieb_rng_below(rng, 2);
        int64_t cs[3] = {c, -1, -1}, m = 1;
        int64_t extra = multilabel ? (int64_t)mieb_rng_below(rng, 3) : 0;
        for (int64_t a = 0; a < extra; a++) { /* distinct extra labels */
            int64_t x = (int64_t)mieb_rng_below(rng, (uint64_t)k);
            if (x != cs[0] && x != cs[1])
                cs[m++] = x;
        }
        for (int d = 0; d < dim; d++) {
            int32_t s = 0;
            for (int64_t a = 0; a < m; a++)
                s += centre[cs[a] * dim + d];
            vec[i * dim + d] = s + mieb_rng_noise(rng, 640); /* overlapping classes: not every probe is perfect */
        }
        if (multilabel) {
            ml_ptr[i] = nf;
            for (int64_t a = 0; a < m; a++)
                ml_flat[nf++] = cs[a] < 3 ? cs[a] : cs[a] + 1;
            ml_ptr[i + 1] = nf;
        } else {
            lab[i] = c < 3 ? c : c + 1; /* class id 3 is never used */
        }
    }
}

static mieb_status write_split(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file, const char *split,
                               const char *subset, int64_t k, int64_t n_train, int64_t n_eval, bool multilabel)
{
    struct mieb_synth_opts so = *o;
    if (so.sim == MIEB_SYNTH_MAXSIM) /* the probe is defined on one vector per image */
        so.sim = MIEB_SYNTH_COSINE;
    struct mieb_rng rng;
    mieb_rng_seed_for(&rng, o->seed, t->name, split, subset, "classification");
    int64_t n_all = n_train + n_eval;
    int32_t *centre = malloc((size_t)k * (size_t)o->dim * sizeof *centre);
    int32_t *vec = malloc((size_t)n_all * (size_t)o->dim * sizeof *vec);
    int64_t *lab = malloc((size_t)n_all * sizeof *lab), *ptr = malloc((size_t)(n_all + 2) * sizeof *ptr);
    int64_t *flat = malloc((size_t)n_all * 3 * sizeof *flat), *sel = NULL, L = 0;
    hid_t grp = -1;
    mieb_status st = (centre && vec && lab && ptr && flat) ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "synth %s: out of memory", t->name);
    if (st != MIEB_OK)
        goto done;
    for (int64_t i = 0; i < k * o->dim; i++)
        centre[i] = mieb_rng_noise(&rng, 256);
    gen_items(&rng, centre, k, o->dim, n_train, multilabel, lab, ptr, flat, vec);
    int64_t nf_train = multilabel ? ptr[n_train] : 0;
    char gp[1024];
    snprintf(gp, sizeof gp, "/%s/%s", split, subset);
    if ((st = mieb_h5w_group(file, gp, &grp)) != MIEB_OK)
        goto done;
    if (multilabel) {
        int64_t np1 = n_train + 1;
        st = mieb_h5w_i64(grp, "train_labels_indptr", ptr, 1, &np1);
        if (st == MIEB_OK)
            st = mieb_h5w_i64(grp, "train_labels_flat", flat, 1, &nf_train);
    } else {
        st = mieb_h5w_i64(grp, "train_labels", lab, 1, &n_train);
        /* train_idx for about half the tasks: the scorer must agree with it */
        if (st == MIEB_OK && mieb_rng_chance(&rng, 1, 2)) {
            st = mieb_fewshot_draw(lab, n_train, json_num(t->params, "samples_per_label", 8),
                                   json_num(t->params, "n_experiments", 10), &sel, &L);
            int64_t dims[2] = {json_num(t->params, "n_experiments", 10), L};
            if (st == MIEB_OK)
                st = mieb_h5w_i64(grp, "train_idx", sel, 2, dims);
        }
    }
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&so, t, split, subset, "train", vec, n_train);
    if (st != MIEB_OK)
        goto done;
    gen_items(&rng, centre, k, o->dim, n_eval, multilabel, lab, ptr, flat, vec);
    if (multilabel) {
        int64_t np1 = n_eval + 1, nf = ptr[n_eval];
        st = mieb_h5w_i64(grp, "eval_labels_indptr", ptr, 1, &np1);
        if (st == MIEB_OK)
            st = mieb_h5w_i64(grp, "eval_labels_flat", flat, 1, &nf);
    } else {
        st = mieb_h5w_i64(grp, "eval_labels", lab, 1, &n_eval);
    }
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&so, t, split, subset, "eval", vec, n_eval);
done:
    mieb_h5w_group_close(grp);
    free(centre), free(vec), free(lab), free(ptr), free(flat), free(sel);
    return st;
}

struct clf_args {
    int64_t k, spl;
    bool multilabel;
};

static mieb_status clf_group(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file, const char *split,
                             const char *subset, void *arg, int64_t *n_out)
{
    const struct clf_args *a = arg;
    int parts = t->n_splits * t->n_subsets;
    int64_t n_train = mieb_synth_count((double)json_num(t->json, "n_train", 1000), o->scale, parts, 2 * a->spl * a->k);
    int64_t n_eval = mieb_synth_count((double)json_num(t->json, "n_test", 1000), o->scale, parts, 4 * a->k);
    *n_out = n_eval;
    return write_split(o, t, file, split, subset, a->k, n_train, n_eval, a->multilabel);
}

mieb_status mieb_synth_classification(const struct mieb_synth_opts *o, const struct mieb_task *t)
{
    bool multilabel = !strcmp(t->name, "VOC2007"); /* MIEB's one multilabel task (PROTOCOLS.md §3) */
    int64_t kr = json_num(t->json, "n_classes", 10);
    int64_t k = mieb_synth_count((double)kr, o->scale * 10.0, 1, 5);
    if (k > kr)
        k = kr < 2 ? 2 : kr;
    struct clf_args a = {k, json_num(t->params, "samples_per_label", 8), multilabel};
    MIEB_TRY(mieb_synth_groups(o, t, clf_group, &a, NULL));
    MIEB_LOGI("synth: %s: %lld classes%s", t->name, (long long)k, multilabel ? " (multilabel)" : "");
    return MIEB_OK;
}
