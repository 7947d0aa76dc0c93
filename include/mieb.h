/**
 * mieb.h - the public C API of mieb-eval: the engine behind the `mieb-eval` program, for
 * programs and bindings (the Python package `mieb_eval` calls it through ctypes).
 *
 * Everything here runs the same code as `mieb-eval run`: the same search, heap emulation,
 * metric reductions and result files, on the CPU or a GPU. The library holds no Python.
 *
 * Conventions:
 *  - Every fallible call returns a status (enum mieb_api_status, 0 = success). On failure
 *    mieb_error_message() gives the reason (which input, which array or file, what is wrong)
 *    in the calling thread, until that thread's next call.
 *  - Arrays are C-contiguous, row-major, owned by the caller and only read; they must stay
 *    alive and unchanged for the duration of the call.
 *  - An engine is used by one thread at a time. mieb_engine_stop may be called from any
 *    thread (a signal handler included): the running call returns MIEB_API_INTERRUPTED within
 *    about a second, having written nothing half done. The engine's loops look at one flag of
 *    the process, so a stop reaches every call running in the process.
 *  - Strings are UTF-8. Memory the library returns (mieb_score_task's JSON, mieb_run's folder
 *    and summary) is released with mieb_free.
 */
#ifndef MIEB_H
#define MIEB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MIEB_API_VERSION 2

/** Statuses: the same numbers as the engine's internal codes (docs/BAD_INPUT.md). */
enum mieb_api_status {
    MIEB_API_OK = 0,
    MIEB_API_INVALID_ARG = 1, /* an impossible argument: a shape, a dtype, a top_k */
    MIEB_API_OOM = 2,
    MIEB_API_TOO_LARGE = 3,   /* more than the engine's memory limit allows */
    MIEB_API_IO = 4,
    MIEB_API_HDF5 = 5,
    MIEB_API_BAD_DATA = 6,    /* the data breaks the contract (NaN / Inf rows, task data) */
    MIEB_API_CONFIG = 7,      /* registry or model_meta.json */
    MIEB_API_CUDA = 8,
    MIEB_API_CUBLAS = 9,
    MIEB_API_UNSUPPORTED = 10,
    MIEB_API_NO_DEVICE = 11,  /* device "cuda" asked for, no usable GPU */
    MIEB_API_INTERRUPTED = 12,/* mieb_engine_stop, or a signal */
    MIEB_API_NOT_FOUND = 13,  /* an input file, task or role is missing */
    MIEB_API_INTERNAL = 14,
};

/** Element types of an array (FORMAT.md §2): float16 and bfloat16 are passed as their uint16 bits. */
enum mieb_api_dtype { MIEB_DTYPE_FLOAT32 = 0, MIEB_DTYPE_FLOAT16 = 1, MIEB_DTYPE_BFLOAT16 = 2 };

/** The model's similarity (mteb's similarity_fn_name). */
enum mieb_api_similarity { MIEB_SIMILARITY_COSINE = 0, MIEB_SIMILARITY_DOT = 1 };

/** The order of a query's results in mieb_search's output. */
enum mieb_api_order {
    /* best first: score descending, equal scores by corpus id descending (byte order), which is
       how mteb's evaluation (pytrec_eval) and sorted(results, reverse=True) rank them */
    MIEB_ORDER_RANK = 0,
    /* the array of mteb's heapq heap, the order of the result dict mteb builds: pushing the
       entries in this order into an empty heap rebuilds that exact heap */
    MIEB_ORDER_HEAP = 1,
};

struct mieb_array {
    const void *data;
    int32_t dtype;        /* enum mieb_api_dtype */
    int64_t rows, dim;
};

typedef struct mieb_engine mieb_engine;

/** "0.1.0": the library's version (one number for the program, the library and the wheel). */
const char *mieb_version(void);
/** Short name of a status ("bad data", "interrupted", ...). */
const char *mieb_status_name(int status);
/** Why this thread's last failed call failed ("" after a success). */
const char *mieb_error_message(void);
/** Release memory the library returned. */
void mieb_free(void *p);

/** Log levels of mieb_set_logger's callback. */
enum mieb_api_log_level { MIEB_LOG_LEVEL_DEBUG = 0, MIEB_LOG_LEVEL_INFO = 1, MIEB_LOG_LEVEL_WARN = 2, MIEB_LOG_LEVEL_ERROR = 3 };
typedef void (*mieb_log_callback)(int level, const char *message, void *user);
/** Where the engine's log lines go (default: stderr, warnings and above): fn(level, message,
    user) for each line at min_level or above, from whichever thread logs it; NULL: stderr again. */
void mieb_set_logger(mieb_log_callback fn, void *user, int min_level);

/**
 * An engine: a device and its limits.
 *  device: "auto" (CUDA where this build has it and a GPU answers, else the CPU), "cpu",
 *          "cuda" or "cuda:N" (MIEB_API_NO_DEVICE when there is none); NULL means "auto".
 *  threads: CPU threads (0: every core the process may use).
 *  mem_limit: bytes for embeddings and per-query state (0: half of RAM, of the cgroup's limit
 *          or of Slurm's allocation, as `run --mem-limit`).
 *  registry: the task registry (tasks.json; NULL: the one installed beside the library).
 */
int mieb_engine_new(const char *device, int threads, int64_t mem_limit, const char *registry, mieb_engine **out);
void mieb_engine_free(mieb_engine *e);
/** "cpu" or "cuda": the backend the engine runs on. */
const char *mieb_engine_device(const mieb_engine *e);
/**
 * Progress of the engine's calls: fn(done, total, user) from the thread doing the work, after
 * each block of it. mieb_search counts query-document pairs searched (total = queries x corpus
 * rows), mieb_score_task the task's (split, subset) pairs scored. NULL: none.
 */
typedef void (*mieb_progress_callback)(int64_t done, int64_t total, void *user);
void mieb_engine_set_progress(mieb_engine *e, mieb_progress_callback fn, void *user);

/** Ask the engine's running call to stop (any thread, async-signal-safe). A stop asked when no
    call runs stops the next one at its start; each call clears the request when it returns. */
void mieb_engine_stop(mieb_engine *e);
/** Withdraw a stop request that no call has taken yet (one asked just after a call returned). */
void mieb_engine_stop_clear(mieb_engine *e);

/**
 * mteb's retrieval search on arrays: for each query, the top_k corpus rows as mteb's
 * SearchEncoderWrapper finds them (PROTOCOLS.md §8.2: chunks of 50,000 documents, torch.topk
 * of top_k + 1 per chunk, heapq of top_k by (score, corpus id)), or, with candidates, the
 * reranking of each query's candidate list (§8.3).
 *  corpus_ids: [corpus rows] ids, whose byte order breaks ties as mteb's tuples do (NULL: the
 *          decimal row numbers "0", "1", ...).
 *  cand_indptr, cand_doc: NULL for full-corpus search; else query q's candidates are the
 *          corpus rows cand_doc[cand_indptr[q] .. cand_indptr[q+1]).
 *  scores, indices: [queries.rows, top_k]; query q's first counts[q] entries are its results
 *          (corpus rows), the rest are -inf and -1.
 */
struct mieb_search_request {
    struct mieb_array queries, corpus;
    const char *const *corpus_ids;
    int32_t similarity;   /* enum mieb_api_similarity */
    int64_t top_k;
    const int64_t *cand_indptr, *cand_doc;
    int32_t order;        /* enum mieb_api_order */
};
int mieb_search(mieb_engine *e, const struct mieb_search_request *rq, float *scores, int64_t *indices,
                int64_t *counts);

/** One role's embeddings for mieb_score_task: the role of (split, subset) as FORMAT.md names it. */
struct mieb_role_array {
    const char *split, *subset, *role;
    struct mieb_array emb;
    const int64_t *offsets; /* [items+1] rows of each item (multi-vector roles), or NULL */
    const int64_t *row_index; /* [items] the split row of each item: only for the few-shot train
                                 role, which may hold some rows of its split; NULL: rows 0, 1, ...
                                 Every other role gives every row of its split, in split order. */
};

/**
 * Score one task from its task data and in-memory embeddings, as `mieb-eval run -t TASK` would
 * from files, and write its result file <results_dir>/<task>.json (atomically).
 *  task_data: the folder holding <task>.h5 (FORMAT.md §1).
 *  roles: every role the task's family reads, for each split and subset scored.
 *  similarity: the model's (enum mieb_api_similarity).
 *  *json_out: the result file's text (release with mieb_free).
 */
int mieb_score_task(mieb_engine *e, const char *task, const char *task_data, const struct mieb_role_array *roles,
                    int n_roles, int32_t similarity, const char *results_dir, char **json_out);

/**
 * A run's options: an object the library owns, filled one option at a time, so that a newer
 * library serves a caller written for an older one (an option it does not set keeps its
 * default) and a caller learns of an option this library lacks from the status, not a crash.
 * The names and values are `mieb-eval run`'s long options without the dashes (docs/CLI.md),
 * each value a string as on its command line:
 *   task-data, embeddings, output-folder   folders (all three required)
 *   tasks, benchmark, task-types, eval-splits, languages
 *                                          lists: each call adds one word (at least one task,
 *                                          benchmark or task type)
 *   shard-index, num-shards                --shard-index I --num-shards K
 *   model, model-revision                  model_meta.json must name them
 *   similarity                             cosine, dot or MaxSim (default: model_meta.json's)
 *   overwrite-strategy                     only-missing (default: a stopped run resumes), always, never
 *   precision                              fp32 (default), tf32, bf16 (CUDA only)
 *   per-query                              a folder for per-query files
 *   kmeans                                 minibatch (default) or full
 *   probe-device                           auto (default) or cpu
 *   corpus-parts, corpus-part, partials-dir  this process's part of every retrieval corpus
 * A bad name or value returns MIEB_API_INVALID_ARG naming it; the options that go together
 * are checked by mieb_run. Release with mieb_run_request_free.
 */
typedef struct mieb_run_request mieb_run_request;
int mieb_run_request_new(mieb_run_request **out);
int mieb_run_request_set(mieb_run_request *rq, const char *option, const char *value);
void mieb_run_request_free(mieb_run_request *rq);

/**
 * `mieb-eval run` over folders, as the program runs it (the same library session): the tasks
 * selected as run selects them, each scored from the task data (FORMAT.md §1) and the model's
 * embeddings folder (its model_meta.json and roles), its result file written atomically into
 * <output-folder>/results/<org>__<model>/<revision>/ (model_meta.json copied there), and the
 * run manifest beside them (.mieb-eval/). A task whose inputs are bad or missing is reported
 * in the summary and the others are still scored. On the engine's device, limits and
 * registry; a precision other than fp32 opens the engine's device anew in that precision.
 * Returns MIEB_API_OK when every selected task was scored, skipped or failed on its own inputs;
 * then *results_dir is the results folder and *summary_json the run's closing summary (run
 * --log-format json's summary record: counts, and per task its outcome, main score, seconds
 * and first error), both released with mieb_free. A stop returns MIEB_API_INTERRUPTED with
 * the finished tasks' results kept (call again to resume); a device failure returns its status.
 */
int mieb_run(mieb_engine *e, const mieb_run_request *rq, char **results_dir, char **summary_json);

/**
 * `mieb-eval summary` over result folders, as the program computes it: every model revision
 * found, its Mean(TaskType), Mean(Task), per-type means and Borda rank over the benchmark's
 * tasks (as mteb's leaderboard), in leaderboard order.
 *  folders: n_folders result folders (an output folder holding results/, a results/ folder,
 *          a model folder or a revision folder).
 *  benchmark: its task list ("MIEB(lite)", ...); NULL: every registry task found.
 *  published: a folder of published results (a clone of mteb's results repository): the
 *          models of the folders are ranked among them, and the JSON's "placement" says where
 *          each stands (NULL: none). Nothing is downloaded.
 *  csv_path, json_path: also write the table as CSV or JSON there, atomically (NULL: not).
 *  *table_text: the table the program prints; *summary_json: the document of its --json;
 *          both released with mieb_free.
 *  *n_unreadable: result files that could not be read (each logged; the program's exit
 *          status 1); the others are summarised.
 * MIEB_API_NOT_FOUND: a folder is missing or holds no result file; MIEB_API_INVALID_ARG: an
 * unknown benchmark.
 */
int mieb_summary(mieb_engine *e, const char *const *folders, int n_folders, const char *benchmark,
                 const char *published, const char *csv_path, const char *json_path, char **table_text,
                 char **summary_json, int *n_unreadable);

/**
 * `mieb-eval report` over result folders: one self-contained HTML page (the summary's numbers,
 * charts per task type, deltas against a baseline, recall@k curves, times) written atomically
 * to html_path. baseline: a model's name or name@revision (NULL: the first model found under
 * folders[0]); with published, the page shows the own models among the `top` best published
 * ones (top < 0: all of them); the other arguments and statuses are mieb_summary's.
 */
int mieb_report(mieb_engine *e, const char *const *folders, int n_folders, const char *benchmark,
                const char *baseline, const char *published, int top, const char *html_path, int *n_unreadable);

#ifdef __cplusplus
}
#endif

#endif
