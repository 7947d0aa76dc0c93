/**
 * per_query.h - `run --per-query DIR` output of the classification-like families:
 * DIR/<task>/<split>/<subset>/predictions.tsv, one line per evaluated sample
 * ("index \t label \t <what>", a header first), written atomically. Retrieval writes its
 * own TREC files (retrieval.c).
 */
#ifndef MIEB_FAMILIES_PER_QUERY_H
#define MIEB_FAMILIES_PER_QUERY_H

#include <stdint.h>

#include "family.h"

/** No-op (MIEB_OK) when rc->per_query_dir is NULL. `what` names the third column ("prediction", "cluster"). */
mieb_status mieb_per_query_write_predictions(const struct mieb_run_ctx *rc, const char *task, const char *split,
                                      const char *subset, const char *what, const int64_t *labels,
                                      const int64_t *pred, int64_t n);

#endif
