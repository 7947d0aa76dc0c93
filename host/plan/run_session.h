/**
 * run_session.h - one run of `mieb-eval run` as the library does it: the task list selected,
 * the model checked, the backend opened, the results folder made (model_meta.json copied
 * there), every task scored with resume, the closing summary and the run manifest.
 *
 * The program (cli/cmd_run.c) and the public API (api/api_run.c) are its two clients, as curl's
 * tool is a client of libcurl: each fills a struct mieb_run_options, opens a session, scores
 * and finishes it, and keeps only what is its own (the program: the command line, its
 * messages, signals and exit statuses; the API: its options object, callbacks and statuses).
 * A run option is one field here, read where the session uses it, plus one row in each
 * client's table of names (cli/run_options.c's, api/api_run_options.c's).
 *
 *     struct mieb_run_session s;
 *     st = mieb_run_session_open(&s, &opts, &proc, &reg, NULL);   // NULL: open opts.device
 *     if (st == MIEB_OK) st = mieb_run_session_score(&s);
 *     ... mieb_run_session_summary(&s) ... mieb_run_session_finish(&s, path, n);
 *     mieb_run_session_free(&s);                                   // always, after open
 */
#ifndef MIEB_PLAN_RUN_SESSION_H
#define MIEB_PLAN_RUN_SESSION_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../backend/backend.h"
#include "../config/model_meta.h"
#include "../config/registry.h"
#include "manifest.h"
#include "run_loop.h"
#include "run_outcome.h"
#include "task_select.h"

/** Every option of a run; strings and lists are borrowed for the session's life. */
struct mieb_run_options {
    const char *task_data, *embeddings, *output_folder;
    struct mieb_task_select select;     /* -t, -b, --task-types, --eval-splits, -l, the shard; its
                                           purpose and task_data are set by the session */
    const char *model, *model_revision; /* when set, model_meta.json must name them */
    const char *similarity;             /* NULL: model_meta.json's; else cosine, dot or MaxSim */
    const char *device;                 /* auto, cpu, cuda, cuda:N (NULL: auto) */
    size_t mem_limit;                   /* bytes (0: mieb_mem_default_here) */
    int threads;                        /* CPU threads (0: all the process may use) */
    const char *precision;              /* fp32 (NULL), tf32 or bf16: the latter on CUDA only */
    const char *overwrite;              /* always, never, only-missing; NULL: only-missing, not given */
    const char *per_query_dir;          /* --per-query DIR, or NULL */
    int kmeans_full, probe_cpu;         /* --kmeans full, --probe-device cpu */
    long corpus_parts, corpus_part;     /* --corpus-parts K --corpus-part I (K 0: whole corpora) */
    const char *partials_dir;           /* --partials-dir DIR, with corpus parts */
    bool shard_index_set, corpus_part_set; /* 0 is an index: whether one was given */
};

/**
 * The options that go together or exclude each other: MIEB_OK, or MIEB_ERR_INVALID_ARG with
 * what is wrong in the last error, in the program's option names (--shard-index, ...).
 */
mieb_status mieb_run_options_check(const struct mieb_run_options *o);

/** What the client's process brings to the run. */
struct mieb_run_process {
    int argc;
    char **argv;                        /* the command line the manifest records */
    int watch_tmp;                      /* a program: its stop watchdog removes this run's temporaries */
    volatile sig_atomic_t *interrupted; /* the stop flag (must be set) */
    const struct mieb_loop_hooks *hooks;
    void *hooks_user;
};

/** Where opening a session stopped (a client words its message and status by it). */
enum mieb_run_step {
    MIEB_RUN_AT_SELECT = 0, /* the task list: INVALID_ARG is a bad task, benchmark or type */
    MIEB_RUN_AT_MODEL,      /* model_meta.json: INVALID_ARG is another model, or a bad similarity */
    MIEB_RUN_AT_DEVICE,     /* the backend: NO_DEVICE, or a bad device */
    MIEB_RUN_AT_PRECISION,  /* a precision the backend does not compute in */
    MIEB_RUN_AT_OUTPUT,     /* the results folder and its model_meta.json */
    MIEB_RUN_OPEN,          /* open */
};

struct mieb_run_session {
    const struct mieb_run_options *o;
    const struct mieb_run_process *p;
    const struct mieb_registry *reg;
    struct mieb_task_list *todo;
    struct mieb_model_meta meta;  /* the parsed fields (its text is freed once copied) */
    struct mieb_backend *be;
    int own_be;                   /* opened by the session, freed with it */
    enum mieb_run_step step;
    char results_dir[PATH_MAX];   /* <output>/results/<org>__<model>/<revision> */
    struct mieb_manifest man;
    struct mieb_outcomes outcomes;
    int failed, fatal;            /* failed tasks; a failure left the device unusable */
};

/**
 * Open a run: select the tasks from reg (only read: --eval-splits and --languages keep their
 * splits and subsets in views of its tasks, task_select.h), read and check model_meta.json,
 * open the backend (be, borrowed, where it computes in o's precision; else o->device with o's
 * limits and precision), make the results folder with model_meta.json in it. On failure s->step says where, and the last error why.
 * o, p and reg must outlive the session; mieb_run_session_free must follow either way.
 */
mieb_status mieb_run_session_open(struct mieb_run_session *s, const struct mieb_run_options *o,
                                  const struct mieb_run_process *p, const struct mieb_registry *reg,
                                  struct mieb_backend *be);

/**
 * Score the task list (plan/run_loop.h) and record the manifest's start. MIEB_OK when every task
 * was scored, skipped or failed on its own inputs (s->failed counts those); MIEB_ERR_INTERRUPTED
 * after a stop, the finished results kept; the device's status when it failed (s->fatal).
 */
mieb_status mieb_run_session_score(struct mieb_run_session *s);

/** The closing summary as one JSON object (run_outcome.h; the caller frees it). */
cJSON *mieb_run_session_summary(const struct mieb_run_session *s);

/** Write the run manifest, with the closing summary, under the results folder (path: where). */
mieb_status mieb_run_session_finish(struct mieb_run_session *s, char *path, size_t path_n);

void mieb_run_session_free(struct mieb_run_session *s);

#endif
