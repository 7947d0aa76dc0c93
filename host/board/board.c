/* board.c - the leaderboard of result folders (see board.h). */
#include "board.h"

#include <stdlib.h>

#include "../analysis/lb_view.h"
#include "../config/benchmarks.h"
#include "../plan/manifest.h"
#include "../report/report_data.h"

/* The models of the folders, then those of the published folder (with at least one own model). */
static mieb_status read_models(struct mieb_board *b, const struct mieb_registry *reg, const char *const *dirs,
                               int n_dirs)
{
    MIEB_TRY(mieb_results_scan(dirs, n_dirs, &b->models, &b->n_models, &b->n_bad));
    b->n_own = b->n_models;
    if (b->published && b->n_own)
        MIEB_TRY(mieb_published_append(b->published, reg, &b->models, &b->n_models, &b->n_bad));
    return MIEB_OK;
}

mieb_status mieb_board_open(struct mieb_board *b, const struct mieb_registry *reg, const struct mieb_board_opts *o,
                            const char *const *dirs, int n_dirs)
{
    *b = (struct mieb_board){.published = o->published};
    if (o->benchmark && !(b->bench = mieb_registry_benchmark(reg, o->benchmark))) {
        b->unknown_benchmark = 1;
        return MIEB_ERR_INVALID_ARG; /* the registry named the benchmark in the last error */
    }
    MIEB_TRY(read_models(b, reg, dirs, n_dirs));
    MIEB_TRY(mieb_lb_pick_tasks(reg, b->bench, b->models, b->n_models, &b->tasks, &b->n_tasks));
    MIEB_TRY(mieb_leaderboard_compute(b->tasks, b->n_tasks, b->models, b->n_models, &b->full));
    if (b->published) {
        mieb_lb_mark_published(&b->full, b->n_own);
        MIEB_TRY(mieb_placement_compute(&b->full, &b->place, &b->n_place));
    }
    MIEB_TRY(mieb_lb_view(&b->full, b->published ? o->top : -1, &b->lb));
    if (o->with_docs && b->n_models)
        MIEB_TRY(mieb_report_data_docs_load(&b->lb, &b->docs, &b->n_bad));
    if (!b->n_models)
        return mieb_fail(MIEB_ERR_NOT_FOUND, "no result files found under the folders given");
    return mieb_manifest_produced_by_rows(&b->lb, &b->produced);
}

void mieb_board_free(struct mieb_board *b)
{
    mieb_manifest_produced_by_free(b->produced, b->lb.n_models);
    if (b->docs)
        mieb_report_data_docs_free(b->docs, b->lb.n_models * b->n_tasks);
    mieb_placement_free(b->place, b->n_place);
    mieb_lb_view_free(&b->lb);
    mieb_leaderboard_free(&b->full);
    free(b->tasks);
    mieb_model_results_free(b->models, b->n_models);
    *b = (struct mieb_board){0};
}
