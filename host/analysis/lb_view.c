/* lb_view.c - own rows and the top published rows of a leaderboard (see lb_view.h). */
#include "lb_view.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

mieb_status mieb_lb_view(const struct mieb_leaderboard *full, int top, struct mieb_leaderboard *view)
{
    memset(view, 0, sizeof *view);
    bool *keep = calloc((size_t)full->n_models + 1, sizeof *keep);
    int *at = calloc((size_t)full->n_models + 1, sizeof *at); /* full row index -> view row index */
    if (!keep || !at) {
        free(keep);
        free(at);
        return mieb_fail(MIEB_ERR_OOM, "report view");
    }
    int n = 0, published = 0;
    for (int p = 0; p < full->n_models; p++) { /* the published rows first in leaderboard order */
        int i = full->order[p];
        keep[i] = !full->rows[i].published || top < 0 || published++ < top;
    }
    for (int i = 0; i < full->n_models; i++)
        n += keep[i];
    *view = *full;
    view->n_models = n;
    view->rows = calloc((size_t)n + 1, sizeof *view->rows);
    view->order = calloc((size_t)n + 1, sizeof *view->order);
    if (!view->rows || !view->order) {
        mieb_lb_view_free(view);
        free(keep);
        free(at);
        return mieb_fail(MIEB_ERR_OOM, "report view");
    }
    for (int i = 0, k = 0; i < full->n_models; i++)
        if (keep[i]) {
            at[i] = k;
            view->rows[k++] = full->rows[i];
        }
    for (int p = 0, q = 0; p < full->n_models; p++)
        if (keep[full->order[p]]) {
            view->order[q++] = at[full->order[p]];
        }
    free(keep);
    free(at);
    return MIEB_OK;
}

void mieb_lb_view_free(struct mieb_leaderboard *view)
{
    free(view->rows);
    free(view->order);
    memset(view, 0, sizeof *view);
}
