/**
 * placement.h - where the caller's own models stand among published ones (summary --published).
 *
 * The leaderboard (leaderboard.h) is computed over the own models and the published ones
 * together, as mteb's aggregation of one folder holding both would compute it; rows whose
 * model came from the published folder are marked `published`. For each own row:
 *
 * - Mean(TaskType) (the benchmark's ordering): rank = 1 + the rows with a higher mean, of the
 *   N rows that have a mean. A model without a complete benchmark has no mean: it is listed
 *   but not ranked, as on mteb's leaderboard.
 * - Borda: the leaderboard's Rank(Borda) (rank "min" of the points), of the rows that have one.
 * - Each task type: as Mean(TaskType), on the type's mean.
 * - Neighbours, on each of these: the published row nearest above (the lowest value at or above
 *   the own value: a tie is a neighbour above at +0) and nearest below, ties between
 *   published rows going to the earlier one in leaderboard order.
 * - The tasks without a complete score: each empties Mean(TaskType), Mean(Task) and its type's
 *   mean (skipna=False), while Borda counts the tasks that are there.
 */
#ifndef MIEB_ANALYSIS_PLACEMENT_H
#define MIEB_ANALYSIS_PLACEMENT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../core/status.h"
#include "../results/results_reader.h"
#include "leaderboard.h"

/** The orderings besides the task types' (0 .. n_types - 1). */
enum { MIEB_PLACE_MEAN = -1, MIEB_PLACE_BORDA = -2 };

/** The value a row is ordered on (k: an ordering above or a type index); NaN when missing. */
double mieb_place_value(const struct mieb_lb_row *row, int k);

/** A rank on one ordering; rank 0 when the own value is missing; -1 for no neighbour. */
struct mieb_place {
    int rank, n_ranked;
    int above, below; /* row indices of the nearest published rows */
};

struct mieb_placement {
    int row;                     /* the own row */
    struct mieb_place overall;   /* on Mean(TaskType) */
    struct mieb_place borda;     /* on the Borda points */
    struct mieb_place *type;     /* [n_types] on each type's mean */
    int n_missing;               /* tasks without a complete score */
};

/**
 * Scan the published folder for the registry's tasks and append its models to *models (owned,
 * as mieb_results_scan gives them): the own models stay first. *n_bad adds the files that
 * could not be read.
 */
mieb_status mieb_published_append(const char *dir, const struct mieb_registry *reg, struct mieb_model_results **models,
                                  int *n_models, int *n_bad);

/** Mark rows [n_own, n_models) published. */
void mieb_lb_mark_published(struct mieb_leaderboard *lb, int n_own);

/** One placement per own row (rows not marked published), in row order; *n_out of them. */
mieb_status mieb_placement_compute(const struct mieb_leaderboard *lb, struct mieb_placement **out, int *n_out);
void mieb_placement_free(struct mieb_placement *p, int n);

/** The placement lines printed after the summary table, to out. */
void mieb_placement_print(FILE *out, const struct mieb_leaderboard *lb, const struct mieb_placement *p, int n);

/** The placements as JSON: one object per own model (names, ranks, neighbours, missing tasks). */
cJSON *mieb_placement_json(const struct mieb_leaderboard *lb, const struct mieb_placement *p, int n);

#endif
