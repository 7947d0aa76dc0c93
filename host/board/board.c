/* board.c - the leaderboard of result folders (see board.h). */
#include "board.h"

#include <stdlib.h>

#include "../config/benchmarks.h"
#include "../plan/manifest.h"
#include "../report/report_data.h"

mieb_status mieb_board_open(struct mieb_board *b, const struct mieb_registry *reg, const char *benchmark,
                            const char *const *dirs, int n_dirs, int with_docs)
{
    *b = (struct mieb_board){0};
    if (benchmark && !(b->bench = mieb_registry_benchmark(reg, benchmark))) {
        b->unknown_benchmark = 1;
        return MIEB_ERR_INVALID_ARG; /* the registry named the benchmark in the last error */
    }
    MIEB_TRY(mieb_results_scan(dirs, n_dirs, &b->models, &b->n_models, &b->n_bad));
    MIEB_TRY(mieb_lb_pick_tasks(reg, b->bench, b->models, b->n_models, &b->tasks, &b->n_tasks));
    MIEB_TRY(mieb_leaderboard_compute(b->tasks, b->n_tasks, b->models, b->n_models, &b->lb));
    if (with_docs && b->n_models)
        MIEB_TRY(mieb_report_data_docs_load(&b->lb, &b->docs, &b->n_bad));
    if (!b->n_models)
        return mieb_fail(MIEB_ERR_NOT_FOUND, "no result files found under the folders given");
    return mieb_manifest_produced_by_rows(&b->lb, &b->produced);
}

void mieb_board_free(struct mieb_board *b)
{
    mieb_manifest_produced_by_free(b->produced, b->lb.n_models);
    if (b->docs)
        mieb_report_data_docs_free(b->docs, b->n_models * b->n_tasks);
    mieb_leaderboard_free(&b->lb);
    free(b->tasks);
    mieb_model_results_free(b->models, b->n_models);
    *b = (struct mieb_board){0};
}
