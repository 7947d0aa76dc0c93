/**
 * cmd_run.c - `mieb-eval run`: score tasks and write mteb results (FORMAT.md §4).
 *
 *   mieb-eval run (--task-data DIR --embeddings DIR | --export DIR) -t TASK [TASK ...] --output-folder DIR ...
 *
 * (its options: run_options.h). The run itself is the library's session (plan/run_session.h):
 * this command parses, opens the session, scores it with progress on this terminal, prints the
 * closing summary and turns the outcome into its exit status.
 *
 * A task whose inputs are invalid is reported on stderr (file, dataset, what is wrong),
 * nothing is written for it, the other tasks are still scored, and the exit status is
 * MIEB_EXIT_TASK_FAILED.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_registry.h"
#include "cli_start.h"
#include "commands.h"
#include "progress.h"
#include "run_options.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../core/mem_default.h"
#include "../core/stop.h"
#include "../plan/run_session.h"

/* The signal that asked us to stop (SIGINT/SIGTERM: interrupted; SIGUSR1: pre-empted), or 0,
   set by core/stop.c's handler. Checked between tasks and subsets here, between corpus
   blocks by the retrieval search (mieb_run_ctx.interrupted), and once per block of work by
   the library's long loops (core/stop.h's flag), so a stop comes within about a second and
   never leaves a half-written result; a read that does not return is ended by stop.c's
   watchdog. */
static volatile sig_atomic_t interrupted;

/* The run's closing summary: counts, each task's main score, each failure's first error, a hint
   to inspect when inputs are missing; with --log-format json one record. Then the manifest. */
static void closing_summary(const struct run_opts *o, struct mieb_run_session *s)
{
    static const char *const kind[] = {"scored", "skipped", "FAILED"};
    const struct mieb_outcomes *oc = &s->outcomes;
    int missing = 0;
    /* -q: nothing on success, only the failures otherwise; json logs: one record, text: a table */
    if ((!o->log.quiet || oc->counts[MIEB_OUTCOME_FAILED]) &&
        !mieb_cli_record("summary", "summary", mieb_run_session_summary(s))) {
        mieb_cli_say(MIEB_LOG_INFO, "mieb-eval: ", "summary: %d scored, %d skipped, %d failed; results in %s",
                     oc->counts[MIEB_OUTCOME_SCORED], oc->counts[MIEB_OUTCOME_SKIPPED],
                     oc->counts[MIEB_OUTCOME_FAILED], s->results_dir);
        for (int i = 0; i < oc->n; i++) {
            const struct mieb_outcome *e = &oc->v[i];
            char score[32] = "-";
            if (!isnan(e->main_score))
                snprintf(score, sizeof score, "%.4f", e->main_score);
            if (e->kind == MIEB_OUTCOME_FAILED || !o->log.quiet)
                mieb_cli_say(MIEB_LOG_INFO, "", "  %-44s %-8s %8s %8.1f s%s%s", e->task, kind[e->kind], score,
                             e->seconds, e->note ? "  " : "", e->note ? e->note : "");
        }
    }
    for (int i = 0; i < oc->n; i++)
        missing |= oc->v[i].missing_input;
    if (missing)
        mieb_cli_say(MIEB_LOG_INFO, "mieb-eval: ",
                     "hint: inputs are missing; `mieb-eval inspect --task-data %s --embeddings %s -t TASK` "
                     "lists what each task needs and what is there",
                     o->s.task_data, o->s.embeddings);
    char path[PATH_MAX + 128];
    if (mieb_run_session_finish(s, path, sizeof path) == MIEB_OK)
        MIEB_LOGD("run manifest: %s", path);
    else
        MIEB_LOGW("the run manifest was not written: %s", mieb_last_error());
}

/* --mem-limit unset: half of RAM, of the cgroup's limit or of Slurm's allocation (mem_default.h). */
static size_t default_mem_limit(void)
{
    char why[512];
    size_t v = mieb_mem_default_here(why, sizeof why);
    MIEB_LOGD("--mem-limit default: %s", why);
    return v;
}

/* A session that could not open, said as the program always said it: a bad task, benchmark,
   model or precision is a usage error (2); no GPU is 3, another bad device 2; the rest, an
   unreadable model_meta.json or results folder, 4. */
static int open_failed(const struct mieb_run_session *s, mieb_status st)
{
    bool usage = s->step == MIEB_RUN_AT_PRECISION ||
                 ((s->step == MIEB_RUN_AT_SELECT || s->step == MIEB_RUN_AT_MODEL) && st == MIEB_ERR_INVALID_ARG);
    mieb_cli_say(MIEB_LOG_ERROR, usage ? "mieb-eval run: " : "mieb-eval: error: ", "%s", mieb_last_error());
    if (s->step == MIEB_RUN_AT_DEVICE)
        return st == MIEB_ERR_NO_DEVICE ? MIEB_EXIT_NO_DEVICE : MIEB_EXIT_USAGE;
    return usage ? MIEB_EXIT_USAGE : MIEB_EXIT_FATAL;
}

/* The exit status of a run that scored what it could: a stop signal's, else 4 after a device
   failure, 1 after a task failure, 0. */
static int run_exit(int failed, int fatal)
{
    if (interrupted == SIGUSR1) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "pre-empted (SIGUSR1); finished results are kept, rerun the same command with "
                     "--overwrite-strategy only-missing to resume");
        return MIEB_EXIT_PREEMPTED;
    }
    if (interrupted) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "interrupted; finished results are kept, rerun with --overwrite-strategy only-missing to resume");
        return MIEB_EXIT_INTERRUPTED;
    }
    return fatal ? MIEB_EXIT_FATAL : failed ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_OK;
}

/* Score the open session with progress (the loop's hooks start it), then the closing summary
   and the manifest; the results folder on stdout. */
static int score_all(const struct run_opts *o, struct mieb_run_session *s)
{
    if (mieb_stop_install(&interrupted) != MIEB_OK) /* SIGUSR1: pre-emption notice (MIEB_EXIT_PREEMPTED) */
        MIEB_LOGW("%s; a run stuck after SIGINT/SIGTERM will not be ended", mieb_last_error());
    mieb_run_session_score(s); /* its outcome is s's counts and the stop flag */
    mieb_progress_stop();
    closing_summary(o, s);
    int rc = run_exit(s->failed, s->fatal);
    mieb_printf_esc("%s\n", s->results_dir);
    return rc;
}

int mieb_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    struct mieb_registry reg = {0};
    struct mieb_run_session s;
    int rc;

    if (!mieb_cli_start(&mieb_run_spec, mieb_run_parse(argc, argv, &o), &o.log, &rc))
        return rc;
    if (!o.s.mem_limit)
        o.s.mem_limit = default_mem_limit();
    if (!mieb_cli_registry("run", NULL, &o.log, &reg))
        return MIEB_EXIT_FATAL;
    /* the stop watchdog removes this run's temporaries; the loop reports on this terminal */
    struct mieb_run_process proc = {.argc = argc, .argv = argv, .watch_tmp = 1, .interrupted = &interrupted,
                                    .hooks = &mieb_cli_loop_hooks, .hooks_user = &o.progress};
    mieb_status st = mieb_run_session_open(&s, &o.s, &proc, &reg, NULL);
    rc = st == MIEB_OK ? score_all(&o, &s) : open_failed(&s, st);
    mieb_run_session_free(&s);
    mieb_registry_free(&reg);
    return rc;
}
