/**
 * family.h - what every task-family driver receives: where the inputs are, the backend,
 * the model's similarity and the memory budget. A driver scores one (split, subset) of
 * a task and appends its metric keys, in mteb's order, to a JSON object.
 */
#ifndef MIEB_FAMILIES_FAMILY_H
#define MIEB_FAMILIES_FAMILY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../backend/backend.h"
#include "../config/registry.h"
#include "../io/task_data.h"

struct mieb_run_ctx {
    const char *emb_dir;        /* <embeddings> */
    struct mieb_backend *be;
    enum mieb_sim sim;          /* from model_meta.json, or --similarity */
    size_t mem_limit;           /* bytes for embeddings and per-query state */
};

/** Retrieval family (Any2Any*, DocumentUnderstanding, VisionCentricQA): PROTOCOLS.md §8. */
mieb_status mieb_retrieval_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                        struct mieb_taskdata *td, const char *split, const char *subset,
                                        cJSON *scores);

#endif
