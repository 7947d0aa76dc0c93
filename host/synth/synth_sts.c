/*
 * synth_sts.c - synthetic Visual STS data (PROTOCOLS.md §7): every split and subset of
 * STS12-16VisualSTS, STS17MultilingualVisualSTS and STSBenchmarkMultilingualVisualSTS.
 * (The aggregate tasks have no data of their own; `mieb-eval synth` generates their
 * sub-task instead.)
 *
 * Per split and subset: gold scores on a grid of 26 values from min_score to max_score
 * (the registry's, 0 and 5 by default; exact gold ties are common), those two attributes, and the roles
 * sentence1 / sentence2 with planted correlation: sentence2 is sentence1 plus noise whose
 * amplitude falls as the gold score rises. ~3% of pairs have sentence2 == sentence1 (all
 * similarities tie at their maximum) and ~3% repeat an earlier pair exactly (ties in every
 * column), so the average-rank rule of Spearman matters. One vector per item always.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static double param(const struct mieb_task *t, const char *key, double dflt)
{
    const cJSON *v = t->params ? cJSON_GetObjectItemCaseSensitive(t->params, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static mieb_status gen_group(const struct mieb_synth_opts *o, const struct mieb_task *t, hid_t file,
                             const char *split, const char *subset, void *arg, int64_t *n_out)
{
    (void)arg;
    const int dim = o->dim;
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(t->json, "n_test");
    const int64_t n = mieb_synth_count(cJSON_IsNumber(jn) ? jn->valuedouble : 1000, o->scale,
                                       t->n_splits * t->n_subsets, 12);
    const double lo = param(t, "min_score", 0), hi = param(t, "max_score", 5);
    struct mieb_rng rng;
    mieb_rng_seed_for(&rng, o->seed, t->name, split, subset, "sts");
    int32_t *s1 = malloc(sizeof(int32_t) * (size_t)(n * dim)), *s2 = malloc(sizeof(int32_t) * (size_t)(n * dim));
    double *gold = malloc(sizeof(double) * (size_t)n);
    mieb_status st = MIEB_OK;
    if (!s1 || !s2 || !gold) {
        st = mieb_fail(MIEB_ERR_OOM, "synth %s: out of memory for %lld pairs", t->name, (long long)n);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t *a = s1 + i * dim, *b = s2 + i * dim;
        uint64_t u = mieb_rng_below(&rng, 100);
        if (i == 1 || i == 2) /* every group has both kinds of tie: pair 1 identical sides, pair 2 a repeat */
            u = i == 1 ? 4 : 0;
        if (i > 0 && u < 3) { /* an exact repeat of an earlier pair */
            int64_t j = (int64_t)mieb_rng_below(&rng, (uint64_t)i);
            memcpy(a, s1 + j * dim, sizeof(int32_t) * (size_t)dim);
            memcpy(b, s2 + j * dim, sizeof(int32_t) * (size_t)dim);
            gold[i] = gold[j];
            continue;
        }
        int64_t k = (int64_t)mieb_rng_below(&rng, 26);
        gold[i] = lo + (hi - lo) * ((double)k / 25.0);
        for (int c = 0; c < dim; c++)
            a[c] = (int32_t)mieb_rng_below(&rng, 1025) - 512;
        int32_t amp = (int32_t)(24 + (25 - k) * 14);
        for (int c = 0; c < dim; c++)
            b[c] = u < 6 ? a[c] : a[c] + mieb_rng_noise(&rng, amp);
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
        st = mieb_h5w_f64(grp, "gold", gold, n);
        if (st == MIEB_OK)
            st = mieb_h5w_attr_f64(grp, "min_score", lo);
        if (st == MIEB_OK)
            st = mieb_h5w_attr_f64(grp, "max_score", hi);
        mieb_h5w_group_close(grp);
    }
    struct mieb_synth_opts one = *o;
    one.sim = MIEB_SYNTH_COSINE; /* one vector per item, whatever the model's similarity */
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&one, t, split, subset, "sentence1", s1, n);
    if (st == MIEB_OK)
        st = mieb_synth_write_role(&one, t, split, subset, "sentence2", s2, n);
    *n_out = n;
done:
    free(s1);
    free(s2);
    free(gold);
    return st;
}

mieb_status mieb_synth_sts(const struct mieb_synth_opts *o, const struct mieb_task *t)
{
    int64_t total = 0;
    MIEB_TRY(mieb_synth_groups(o, t, gen_group, NULL, &total));
    MIEB_LOGI("synth: %s: %d split(s) x %d subset(s), %lld pairs", t->name, t->n_splits, t->n_subsets,
              (long long)total);
    return MIEB_OK;
}
