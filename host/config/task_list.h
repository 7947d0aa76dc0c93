/**
 * task_list.h - the task list of the registry (configs/tasks.json): what each MIEB task is
 * and how mteb scores it (type, splits, subsets and their languages, main score, revision,
 * per-task parameters such as skip_first_result), and the registry's types. The bottom of
 * host/config: the benchmarks, the suggestions and the registry's loading build on it.
 */
#ifndef MIEB_CONFIG_TASK_LIST_H
#define MIEB_CONFIG_TASK_LIST_H

#include <stdbool.h>
#include <stdint.h>

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
    /* mteb AbsTaskAggregate (from benchmarks.json "aggregate_tasks"): no task-data file of
     * its own, results hold the subset "default"; aggregate_of names the task it averages. */
    bool is_aggregate;
    const char *aggregate_of;   /* NULL unless is_aggregate */
};

/** A benchmark of configs/benchmarks.json: its task list in mteb's order. */
struct mieb_benchmark {
    const char *name;           /* "MIEB(lite)" */
    const char *key;            /* "lite" (the short key of tasks.json "benchmarks") */
    int n_tasks;
    const struct mieb_task **tasks; /* borrowed from the registry, mteb's order */
};

struct mieb_registry {
    cJSON *root;
    int n_tasks;
    struct mieb_task *tasks;
    cJSON *bench_root;          /* benchmarks.json, or NULL when absent */
    int n_benchmarks;
    struct mieb_benchmark *benchmarks;
    char *bench_path;           /* the benchmarks.json read (malloc'd), or NULL */
};

/**
 * Read the task list of a registry file into out (zeroed first): every task's name, splits
 * and subsets checked to name one path component each. No benchmarks (registry.h loads those).
 */
mieb_status mieb_task_list_load(const char *path, struct mieb_registry *out);
/** Free what mieb_task_list_load allocated (the benchmarks are freed by registry.h's free). */
void mieb_task_list_free(struct mieb_registry *r);
const struct mieb_task *mieb_registry_find(const struct mieb_registry *r, const char *name);

/** Boolean task parameter (false when absent). */
bool mieb_task_param_bool(const struct mieb_task *t, const char *key);

/** Integer task parameter (a JSON number, truncated), or dflt when absent or not a number. */
int64_t mieb_task_param_int(const struct mieb_task *t, const char *key, int64_t dflt);
/**
 * The languages mteb writes for a subset: the subset's list when eval_langs is an object,
 * else the whole list. Returns a new cJSON array (caller deletes).
 */
cJSON *mieb_task_languages(const struct mieb_task *t, const char *subset);

#endif
