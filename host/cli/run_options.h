/**
 * run_options.h - the command line of `mieb-eval run` (run_options.c): its options, their
 * table (the --help and docs/CLI.md), and the checks of what goes together.
 */
#ifndef MIEB_CLI_RUN_OPTIONS_H
#define MIEB_CLI_RUN_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli_options.h"
#include "progress.h"
#include "../plan/task_select.h"

#define MAX_TASKS MIEB_PLAN_MAX_TASKS
#define MAX_BENCHMARKS 16

struct run_opts {
    const char *task_data, *emb, *out, *device, *sim_override, *overwrite, *precision;
    const char *tasks[MAX_TASKS];
    int n_tasks;
    const char *benchmarks[MAX_BENCHMARKS];
    int n_benchmarks;
    size_t mem_limit;
    int threads;
    struct mieb_cli_log log;          /* -v, -q, --log-format */
    enum mieb_progress_mode progress; /* --progress */
    const char *per_query;           /* --per-query DIR */
    int kmeans_full; /* --kmeans full */
    int probe_cpu;   /* --probe-device cpu */
    long shard_index, num_shards; /* --shard-index I --num-shards K; num_shards 0: not sharded */
    bool shard_index_set;
    long corpus_parts, corpus_part; /* --corpus-parts K --corpus-part I; corpus_parts 0: off */
    bool corpus_part_set;
    const char *partials_dir;       /* --partials-dir DIR */
    const char *task_types[32];     /* --task-types T ...: keep only tasks of these mteb types */
    int n_task_types;
    const char *eval_splits[16];    /* --eval-splits S ...: score only these splits */
    int n_eval_splits;
    const char *languages[32];      /* -l/--languages L ...: score only the subsets in these languages */
    int n_languages;
    bool overwrite_given;           /* --overwrite-strategy was given (the summary says when the default skipped) */
    const char *model, *model_revision; /* -m/--model, --model-revision: must match model_meta.json */
    const char *export_dir;             /* --export DIR: DIR/task-data and DIR/embeddings */
    char export_paths[2][PATH_MAX];
};

/** run's options and help. */
extern const struct mieb_cli_spec mieb_run_spec;

/**
 * The command line into o: GO with every value checked and the options that go together
 * given together (--export resolved into --task-data and --embeddings), HELP, or BAD/BAD_SAID
 * after the message; -v with -q is refused by mieb_cli_start.
 */
enum mieb_cli_parsed mieb_run_parse(int argc, char **argv, struct run_opts *o);

#endif
