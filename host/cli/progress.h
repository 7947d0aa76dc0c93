/**
 * progress.h - what `mieb-eval run` tells the operator while it works (stderr only;
 * stdout is machine output).
 *
 * Log lines: every mieb_log() call goes through the sink installed by mieb_cli_log_init,
 * as text ("mieb-eval: info: ...") or, with --log-format json, as one JSON object per line
 * {"time", "level", "msg", and "task"/"split"/"subset" where known} for log collectors.
 *
 * Progress: tasks done/total, the current task and subset, rate and ETA. On a terminal
 * one line redrawn in place (log lines are printed above it); elsewhere (batch logs) one
 * plain line every few seconds and at each task end. A background thread redraws it, so a
 * long subset still shows signs of life. All output shares one lock.
 */
#ifndef MIEB_CLI_PROGRESS_H
#define MIEB_CLI_PROGRESS_H

#include <cjson/cJSON.h>

#include "../core/status.h"
#include "../plan/run_loop.h"

enum mieb_log_format { MIEB_LOGFMT_TEXT = 0, MIEB_LOGFMT_JSON = 1 };

/** --progress: auto (tty line on a terminal, plain lines otherwise), tty, plain, off. */
enum mieb_progress_mode { MIEB_PROGRESS_AUTO = 0, MIEB_PROGRESS_TTY, MIEB_PROGRESS_PLAIN, MIEB_PROGRESS_OFF };

/** Install the run's log sink (text or json) on stderr, showing levels >= min_level. */
void mieb_cli_log_init(enum mieb_log_format fmt, enum mieb_log_level min_level);

/**
 * A message the command itself prints (errors, the final notice) whatever the log level:
 * text mode writes "<text_prefix><message>" exactly (e.g. "mieb-eval run: "), json mode a
 * JSON log line of level lvl. Keeps the live progress line intact.
 */
void mieb_cli_say(enum mieb_log_level lvl, const char *text_prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * With --log-format json: one log line {"time", "level": "info", "msg": msg, key: obj} (obj is
 * moved in) and 1; with text logs obj is freed, nothing is printed, and 0 (the caller prints
 * its own text).
 */
int mieb_cli_record(const char *msg, const char *key, cJSON *obj);

/**
 * Start progress reporting over n_tasks tasks holding total_units units of work (a unit is
 * one (split, subset) of a task). `interval` is the seconds between plain lines (<= 0: 5 s;
 * the environment variable MIEB_PROGRESS_INTERVAL overrides it). Mode OFF, or AUTO with
 * the log level above info, reports nothing.
 */
void mieb_progress_start(enum mieb_progress_mode mode, int n_tasks, long total_units, double interval);
/** Stop the thread, erase the live line and restore plain logging. Idempotent. */
void mieb_progress_stop(void);

/** The loops of run and merge report here: this progress, the failures said, the task of the log
    lines. Their user: a const enum mieb_progress_mode * (run's --progress; NULL: no progress). */
extern const struct mieb_loop_hooks mieb_cli_loop_hooks;

#endif
