/**
 * multilabel.h - the multilabel ImageClassification driver (VOC2007), called by the
 * linear-probe driver (probe.c) for groups that hold CSR label lists.
 */
#ifndef MIEB_FAMILIES_MULTILABEL_H
#define MIEB_FAMILIES_MULTILABEL_H

#include <cjson/cJSON.h>

#include "family.h"

/**
 * Score one (split, subset) of a multilabel task as mteb 2.26.24's
 * AbsTaskMultilabelClassification does (PROTOCOLS.md §3 with §13; multilabel.c):
 * n_experiments draws from the task's default_rng(42), continued across the task's
 * earlier (split, subset) pairs; KNeighborsClassifier(5) per draw; accuracy, lrap, f1,
 * hamming per experiment and their np.mean. Appends scores_per_experiment and the four
 * means to `scores`. Errors name the task-data or embeddings file and dataset at fault.
 */
mieb_status mieb_multilabel_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                         struct mieb_taskdata *td, const char *split, const char *subset,
                                         cJSON *scores);

#endif
