/**
 * registry.h - the task registry (configs/tasks.json): what each MIEB task is and how
 * mteb scores it (type, splits, subsets and their languages, main score, revision,
 * per-task parameters such as skip_first_result).
 */
#ifndef MIEB_CONFIG_REGISTRY_H
#define MIEB_CONFIG_REGISTRY_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "../core/status.h"

enum mieb_family {
    MIEB_FAMILY_UNKNOWN = 0,
    MIEB_FAMILY_RETRIEVAL,      /* Any2AnyRetrieval, Any2AnyMultilingualRetrieval, DocumentUnderstanding, VisionCentricQA */
    MIEB_FAMILY_CLASSIFICATION, /* ImageClassification (linear probe; VOC2007 multilabel) */
    MIEB_FAMILY_ZEROSHOT,       /* ZeroShotClassification */
    MIEB_FAMILY_CLUSTERING,     /* ImageClustering */
    MIEB_FAMILY_COMPOSITIONALITY,
    MIEB_FAMILY_STS,            /* VisualSTS(eng), VisualSTS(multi) */
};

struct mieb_task {
    const char *name;
    const char *type;           /* mteb metadata.type, e.g. "Any2AnyRetrieval" */
    enum mieb_family family;
    const char *main_score;
    const char *revision;       /* dataset revision (hf_revision) */
    int n_splits;
    const char **splits;        /* eval_splits */
    int n_subsets;
    const char **subsets;       /* hf_subsets */
    const cJSON *eval_langs;    /* list (all subsets) or object subset -> list */
    const cJSON *params;        /* task parameters object (may be NULL) */
    const cJSON *json;          /* the whole entry */
};

struct mieb_registry {
    cJSON *root;
    int n_tasks;
    struct mieb_task *tasks;
};

/** Load a registry file (configs/tasks.json format). */
mieb_status mieb_registry_load(const char *path, struct mieb_registry *out);
/** Load the default registry: $MIEB_REGISTRY, else <exe dir>/../configs/tasks.json, else the source tree's. */
mieb_status mieb_registry_load_default(struct mieb_registry *out);
void mieb_registry_free(struct mieb_registry *r);
const struct mieb_task *mieb_registry_find(const struct mieb_registry *r, const char *name);

/** Boolean task parameter (false when absent). */
bool mieb_task_param_bool(const struct mieb_task *t, const char *key);
/**
 * The languages mteb writes for a subset: the subset's list when eval_langs is an object,
 * else the whole list. Returns a new cJSON array (caller deletes).
 */
cJSON *mieb_task_languages(const struct mieb_task *t, const char *subset);

#endif
