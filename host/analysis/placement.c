/* placement.c - the own models' ranks and nearest published neighbours (see placement.h). */
#include "placement.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A published file is read when its task is one of the registry's (mteb's results repository
   holds every MTEB task: the text ones are most of its files). */
static bool registry_task(void *reg, const char *task) { return mieb_registry_find(reg, task) != NULL; }

mieb_status mieb_published_append(const char *dir, const struct mieb_registry *reg, struct mieb_model_results **models,
                                  int *n_models, int *n_bad)
{
    struct mieb_model_results *pub = NULL;
    int n_pub = 0, bad = 0;
    MIEB_TRY(mieb_results_scan_only(&dir, 1, registry_task, (void *)reg, &pub, &n_pub, &bad));
    *n_bad += bad;
    struct mieb_model_results *all = realloc(*models, sizeof *all * ((size_t)*n_models + (size_t)n_pub + 1));
    if (!all) {
        mieb_model_results_free(pub, n_pub);
        return mieb_fail(MIEB_ERR_OOM, "published results");
    }
    /* the entries move (their strings and task lists go with them); pub's array alone is freed */
    memcpy(all + *n_models, pub, sizeof *pub * (size_t)n_pub);
    free(pub);
    *models = all;
    *n_models += n_pub;
    return MIEB_OK;
}

void mieb_lb_mark_published(struct mieb_leaderboard *lb, int n_own)
{
    for (int i = n_own; i < lb->n_models; i++)
        lb->rows[i].published = true;
}

/* A row without a Borda rank has no points to be ordered on. */
double mieb_place_value(const struct mieb_lb_row *row, int k)
{
    if (k == MIEB_PLACE_MEAN)
        return row->mean_task_type;
    if (k == MIEB_PLACE_BORDA)
        return row->borda_rank ? row->borda_points : NAN;
    return row->type_mean[k];
}

/* Position of row i in leaderboard order (the tie-break among equal published neighbours). */
static int position(const struct mieb_leaderboard *lb, int i) { return lb->rows[i].rank; }

static struct mieb_place place(const struct mieb_leaderboard *lb, int r, int k)
{
    struct mieb_place p = {0, 0, -1, -1};
    double v = mieb_place_value(&lb->rows[r], k);
    for (int j = 0; j < lb->n_models; j++)
        p.n_ranked += !isnan(mieb_place_value(&lb->rows[j], k));
    if (isnan(v))
        return p;
    p.rank = 1;
    for (int j = 0; j < lb->n_models; j++) {
        double w = mieb_place_value(&lb->rows[j], k);
        if (isnan(w))
            continue;
        p.rank += w > v;
        if (!lb->rows[j].published)
            continue;
        if (w >= v) {
            double a = p.above >= 0 ? mieb_place_value(&lb->rows[p.above], k) : INFINITY;
            if (w < a || (w == a && position(lb, j) < position(lb, p.above)))
                p.above = j;
        } else {
            double b = p.below >= 0 ? mieb_place_value(&lb->rows[p.below], k) : -INFINITY;
            if (w > b || (w == b && position(lb, j) < position(lb, p.below)))
                p.below = j;
        }
    }
    if (k == MIEB_PLACE_BORDA)
        p.rank = lb->rows[r].borda_rank; /* the leaderboard's own rank (method "min" of the points) */
    return p;
}

void mieb_placement_free(struct mieb_placement *p, int n)
{
    for (int i = 0; p && i < n; i++)
        free(p[i].type);
    free(p);
}

mieb_status mieb_placement_compute(const struct mieb_leaderboard *lb, struct mieb_placement **out, int *n_out)
{
    *out = calloc((size_t)lb->n_models + 1, sizeof **out);
    *n_out = 0;
    if (!*out)
        return mieb_fail(MIEB_ERR_OOM, "placement");
    for (int r = 0; r < lb->n_models; r++) {
        if (lb->rows[r].published)
            continue;
        struct mieb_placement *p = &(*out)[(*n_out)++];
        p->row = r;
        p->overall = place(lb, r, MIEB_PLACE_MEAN);
        p->borda = place(lb, r, MIEB_PLACE_BORDA);
        p->n_missing = lb->n_tasks - lb->rows[r].n_complete;
        p->type = calloc((size_t)lb->n_types + 1, sizeof *p->type);
        if (!p->type) {
            mieb_placement_free(*out, *n_out);
            *out = NULL;
            return mieb_fail(MIEB_ERR_OOM, "placement");
        }
        for (int k = 0; k < lb->n_types; k++)
            p->type[k] = place(lb, r, k);
    }
    return MIEB_OK;
}
