/**
 * family.h - what every task-family driver receives: where the inputs are, the backend,
 * the model's similarity and the memory budget. A driver scores one (split, subset) of
 * a task and appends its metric keys, in mteb's order, to a JSON object.
 */
#ifndef MIEB_FAMILIES_FAMILY_H
#define MIEB_FAMILIES_FAMILY_H

#include <signal.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../backend/backend.h"
#include "../config/registry.h"
#include "../emb/emb_memory.h"
#include "../io/task_data.h"

/** Seconds spent per stage, accumulated by the drivers (reported in evaluation_phases). */
struct mieb_stage_times {
    double read_wait;   /* waiting for the embedding reader (time not hidden behind compute) */
    double similarity;  /* backend similarity + per-block top-k */
    double merge;       /* chunk merge and mteb heap emulation */
    double metrics;     /* metric reduction */
};

struct mieb_run_ctx {
    struct mieb_emb_source emb; /* <embeddings> (--embeddings), and arrays of the public API */
    struct mieb_backend *be;
    enum mieb_sim sim;          /* from model_meta.json, or --similarity */
    size_t mem_limit;           /* bytes for embeddings and per-query state */
    struct mieb_stage_times *times; /* may be NULL */
    int kmeans_full;            /* ImageClustering: 1 = full-batch Lloyd (--kmeans full), 0 = mteb's MiniBatchKMeans */
    int probe_cpu;              /* ImageClassification: 1 = fit on the CPU even when the backend runs batches */
    int n_threads;              /* CPU threads a driver may use (--threads); 0 = all cores */
    const char *per_query_dir;  /* --per-query DIR: per-query files (retrieval: TREC run + measures), or NULL */
    const volatile sig_atomic_t *interrupted; /* nonzero once a signal asked to stop (may be NULL): long loops
                                                 return MIEB_ERR_INTERRUPTED at their next block boundary */
    /* Told after each corpus block of a full-corpus search: the tile's queries and the corpus
       items searched of items_total (the public API's progress); NULL: nobody asks. */
    void (*on_search_block)(void *user, int64_t tile_queries, int64_t items_done, int64_t items_total);
    void *on_search_block_user;
};

/** Monotonic clock in seconds, for stage timing. */
double mieb_now(void);

/**
 * A family driver: score one (split, subset) of `task` and append its metric keys, in
 * mteb's order, to `scores` (main_score, hf_subset, languages, mteb_version are added by
 * the caller). On failure nothing is written for the task; the last-error message must
 * name the file and dataset at fault.
 */
typedef mieb_status (*mieb_family_score_fn)(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                            struct mieb_taskdata *td, const char *split, const char *subset,
                                            cJSON *scores);

/** Retrieval family (Any2Any*, DocumentUnderstanding, VisionCentricQA): PROTOCOLS.md §8. */
mieb_status mieb_retrieval_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                        struct mieb_taskdata *td, const char *split, const char *subset,
                                        cJSON *scores);

/** ImageClustering (PROTOCOLS.md §4): MiniBatchKMeans on `eval`, scored against `eval_labels`. */
mieb_status mieb_clustering_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                         struct mieb_taskdata *td, const char *split, const char *subset,
                                         cJSON *scores);

/** Compositionality (ARO x4, SugarCrepe, Winoground, ImageCoDe): PROTOCOLS.md §6 (compositionality.c). */
mieb_status mieb_compositionality_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                               struct mieb_taskdata *td, const char *split, const char *subset,
                                               cJSON *scores);

/** Visual STS, both families (VisualSTS(eng), VisualSTS(multi)): PROTOCOLS.md §7 (sts.c). */
mieb_status mieb_sts_score_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                  struct mieb_taskdata *td, const char *split, const char *subset, cJSON *scores);

/*
 * Aggregate tasks (mteb's AbsTaskAggregate: VisualSTS17Eng, VisualSTS17Multilingual,
 * VisualSTS-b-Eng, VisualSTS-b-Multilingual), sts_aggregate.c. They have no task data of
 * their own: their value comes from their sub-task's subsets (PROTOCOLS.md §7, §12.12).
 */
/** The sub-task an aggregate is computed from, or NULL when `name` is not an aggregate task. */
const char *mieb_aggregate_subtask(const char *name);

/**
 * Score an aggregate: score the sub-task's subsets the aggregate keeps (its registry
 * hf_subsets) for each of the aggregate's splits, reading <task_data_dir>/<SubTask>.h5 and
 * the sub-task's embeddings, and build mteb's scores tree {split: [{cosine_spearman,
 * main_score, hf_subset: "default", languages, mteb_version}]} into *out (caller deletes).
 */
mieb_status mieb_aggregate_score(const struct mieb_run_ctx *rc, const struct mieb_registry *reg,
                                 const struct mieb_task *agg, const char *task_data_dir, cJSON **out);

/** mteb writes an aggregate's scores as numpy.float64 values: numpy's round (families.c round-fn form). */
double mieb_aggregate_round(const char *key, double x, int ndigits);

/** dataset_revision of an aggregate's result (AggregateTaskMetadata's placeholder dataset). */
#define MIEB_AGGREGATE_REVISION "1"

/** The driver for a family, or NULL when this build cannot score it yet (families.c). */
mieb_family_score_fn mieb_family_driver(enum mieb_family family);

/**
 * How mteb's TaskResult.to_disk rounds this family's values: Python's round() dispatches
 * on the value's type (numpy.float64 rounds like numpy, a Python float like Python), and
 * which keys hold numpy values is a property of each family's mteb code. NULL: all Python floats.
 */
double (*mieb_family_round_fn(enum mieb_family family))(const char *key, double x, int ndigits);

#endif
