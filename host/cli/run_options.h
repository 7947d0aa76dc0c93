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
#include "../plan/run_session.h"

#define MAX_TASKS MIEB_PLAN_MAX_TASKS
#define MAX_BENCHMARKS 16

/* The session's options (plan/run_session.h) and what only the command line has: the lists'
   storage, logging, progress, --export, and which options were given. */
struct run_opts {
    struct mieb_run_options s;        /* every run option; s.select's lists point at the arrays below */
    const char *tasks[MAX_TASKS];
    const char *benchmarks[MAX_BENCHMARKS];
    const char *task_types[32];       /* --task-types T ... */
    const char *eval_splits[16];      /* --eval-splits S ... */
    const char *languages[32];        /* -l/--languages L ... */
    struct mieb_cli_log log;          /* -v, -q, --log-format */
    enum mieb_progress_mode progress; /* --progress */
    const char *export_dir;           /* --export DIR: DIR/task-data and DIR/embeddings */
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
