/**
 * clf_common.h - pieces the zero-shot and linear-probe drivers share: torch's argmax rule
 * and the JSON form of mteb's classification metric dicts.
 */
#ifndef MIEB_FAMILIES_CLF_COMMON_H
#define MIEB_FAMILIES_CLF_COMMON_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "../metrics/classification_metrics.h"
#include "family.h"

/** ZeroShotClassification driver (zeroshot.c), PROTOCOLS.md §5. */
mieb_status mieb_zeroshot_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                       struct mieb_taskdata *td, const char *split, const char *subset,
                                       cJSON *scores);
/** ImageClassification linear-probe driver (probe.c), PROTOCOLS.md §2. */
mieb_status mieb_probe_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                    struct mieb_taskdata *td, const char *split, const char *subset,
                                    cJSON *scores);

/** torch.argmax of one row: the first maximum; a NaN counts as larger than any number
 *  (torch propagates NaN in max reductions), so the first NaN wins. k >= 1. */
int64_t mieb_clf_argmax_f32(const float *row, int64_t k);

/** Append mteb's nine keys (accuracy .. ap_weighted) of s to obj; ap is null unless s->has_ap. */
mieb_status mieb_clf_scores_to_json(const struct mieb_clf_scores *s, cJSON *obj);

#endif
