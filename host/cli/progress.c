/* progress.c - the run's log sink (text / json) and its progress reporting: see progress.h. */
#include "progress.h"

#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../core/env.h"
#include "../core/escape.h"

static const char *const level_names[] = {"debug", "info", "warning", "error"};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    enum mieb_log_format fmt;
    enum mieb_log_level min_level;
    char task[256], split[128], subset[128];
    /* progress */
    int active, tty, line_shown, stop, thread_running;
    pthread_t thread;
    double interval, t_start, last_plain;
    int n_tasks, tasks_done, cur_index;
    long total_units, units_done, task_units_done;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .min_level = MIEB_LOG_INFO};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Names shown on the progress line and in json logs come from the registry and task data:
   stored escaped (core/escape.h). */
static void set_str(char *dst, size_t n, const char *src)
{
    mieb_escape(dst, n, src ? src : "", (size_t)-1, MIEB_ESC_DISPLAY);
}

/* "2025-06-01T12:34:56.789Z" */
static void iso_time(char *buf, size_t n)
{
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + k, n - k, ".%03dZ", (int)(tv.tv_usec / 1000));
}

/* One JSON log line; `extra` (may be NULL) is moved into the object under `extra_key`. Lock held. */
static void emit_json_as(enum mieb_log_level lvl, const char *msg, cJSON *extra, const char *extra_key)
{
    char ts[64];
    iso_time(ts, sizeof ts);
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        cJSON_Delete(extra);
        return;
    }
    cJSON_AddStringToObject(o, "time", ts);
    cJSON_AddStringToObject(o, "level", level_names[lvl]);
    cJSON_AddStringToObject(o, "msg", msg);
    if (S.task[0])
        cJSON_AddStringToObject(o, "task", S.task);
    if (S.split[0])
        cJSON_AddStringToObject(o, "split", S.split);
    if (S.subset[0])
        cJSON_AddStringToObject(o, "subset", S.subset);
    if (extra)
        cJSON_AddItemToObject(o, extra_key, extra);
    char *s = cJSON_PrintUnformatted(o);
    if (s) {
        fputs(s, stderr);
        fputc('\n', stderr);
        free(s);
    }
    cJSON_Delete(o);
}

static void emit_json(enum mieb_log_level lvl, const char *msg, cJSON *extra)
{
    emit_json_as(lvl, msg, extra, "progress");
}

int mieb_cli_record(const char *msg, const char *key, cJSON *obj)
{
    pthread_mutex_lock(&S.mu);
    int json = S.fmt == MIEB_LOGFMT_JSON;
    if (json)
        emit_json_as(MIEB_LOG_INFO, msg, obj, key);
    else
        cJSON_Delete(obj);
    fflush(stderr);
    pthread_mutex_unlock(&S.mu);
    return json;
}

static void fmt_secs(char *buf, size_t n, double s)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, n, "?");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    else
        snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

/* The progress text (without prefix). Lock held. */
static void progress_text(char *buf, size_t n, double *rate_out, double *eta_out)
{
    double el = mono() - S.t_start;
    double rate = el > 0 ? (double)S.units_done / el : 0.0;
    double eta = S.units_done > 0 && rate > 0 ? (double)(S.total_units - S.units_done) / rate : NAN;
    char e1[32], e2[32];
    fmt_secs(e1, sizeof e1, el);
    fmt_secs(e2, sizeof e2, eta);
    int k = snprintf(buf, n, "%d/%d tasks, %ld/%ld subsets", S.tasks_done, S.n_tasks, S.units_done, S.total_units);
    if (k > 0 && (size_t)k < n && S.task[0])
        k += snprintf(buf + k, n - (size_t)k, " | %s%s%s%s%s", S.task, S.split[0] ? " " : "", S.split,
                      S.subset[0] ? "/" : "", S.subset);
    if (k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " | %.2f subsets/s | elapsed %s | ETA %s", rate, e1, e2);
    if (rate_out)
        *rate_out = rate;
    if (eta_out)
        *eta_out = eta;
}

static int term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
        return ws.ws_col;
    return 100;
}

/* Redraw the live line. Lock held. */
static void draw_line(void)
{
    char buf[1024];
    progress_text(buf, sizeof buf, NULL, NULL);
    int w = term_width() - 1;
    if ((int)strlen(buf) > w && w > 0)
        buf[w] = '\0';
    fprintf(stderr, "\r\033[K%s", buf);
    fflush(stderr);
    S.line_shown = 1;
}

static void clear_line(void)
{
    if (S.line_shown) {
        fputs("\r\033[K", stderr);
        S.line_shown = 0;
    }
}

/* One plain progress line (text or json). Lock held. */
static void plain_line(const char *event)
{
    char buf[1024];
    double rate, eta;
    progress_text(buf, sizeof buf, &rate, &eta);
    if (S.fmt == MIEB_LOGFMT_JSON) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "tasks_done", S.tasks_done);
        cJSON_AddNumberToObject(p, "tasks_total", S.n_tasks);
        cJSON_AddNumberToObject(p, "subsets_done", (double)S.units_done);
        cJSON_AddNumberToObject(p, "subsets_total", (double)S.total_units);
        cJSON_AddNumberToObject(p, "elapsed_s", mono() - S.t_start);
        cJSON_AddNumberToObject(p, "rate", rate);
        if (isfinite(eta))
            cJSON_AddNumberToObject(p, "eta_s", eta);
        else
            cJSON_AddNullToObject(p, "eta_s");
        char msg[1200];
        snprintf(msg, sizeof msg, "progress%s%s: %s", event ? " " : "", event ? event : "", buf);
        emit_json(MIEB_LOG_INFO, msg, p);
    } else {
        fprintf(stderr, "mieb-eval: progress%s%s: %s\n", event ? " " : "", event ? event : "", buf);
    }
    fflush(stderr);
    S.last_plain = mono();
}

static void sink(enum mieb_log_level lvl, const char *msg, void *user)
{
    (void)user;
    pthread_mutex_lock(&S.mu);
    if (S.tty)
        clear_line();
    if (S.fmt == MIEB_LOGFMT_JSON)
        emit_json(lvl, msg, NULL);
    else
        fprintf(stderr, "mieb-eval: %s: %s\n", level_names[lvl], msg);
    if (S.active && S.tty)
        draw_line();
    fflush(stderr);
    pthread_mutex_unlock(&S.mu);
}

void mieb_cli_say(enum mieb_log_level lvl, const char *text_prefix, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    mieb_vsnprintf_esc(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&S.mu);
    if (S.tty)
        clear_line();
    if (S.fmt == MIEB_LOGFMT_JSON)
        emit_json(lvl, msg, NULL);
    else
        fprintf(stderr, "%s%s\n", text_prefix ? text_prefix : "", msg);
    if (S.active && S.tty)
        draw_line();
    fflush(stderr);
    pthread_mutex_unlock(&S.mu);
}

void mieb_cli_log_init(enum mieb_log_format fmt, enum mieb_log_level min_level)
{
    pthread_mutex_lock(&S.mu);
    S.fmt = fmt;
    S.min_level = min_level;
    pthread_mutex_unlock(&S.mu);
    mieb_log_set(sink, NULL, min_level);
}

/* The task/split/subset the json log lines carry (NULL: unknown / not applicable). */
static void mieb_cli_log_context(const char *task, const char *split, const char *subset)
{
    pthread_mutex_lock(&S.mu);
    set_str(S.task, sizeof S.task, task);
    set_str(S.split, sizeof S.split, split);
    set_str(S.subset, sizeof S.subset, subset);
    pthread_mutex_unlock(&S.mu);
}

static void *ticker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&S.mu);
    while (!S.stop) {
        double tick = S.tty ? 0.5 : S.interval;
        if (!S.tty && S.last_plain + S.interval - mono() < tick)
            tick = S.last_plain + S.interval - mono();
        if (tick < 0.05)
            tick = 0.05;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + tick;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&S.cv, &S.mu, &ts);
        if (S.stop)
            break;
        if (S.tty)
            draw_line();
        else if (mono() - S.last_plain >= S.interval)
            plain_line(NULL);
    }
    pthread_mutex_unlock(&S.mu);
    return NULL;
}

void mieb_progress_start(enum mieb_progress_mode mode, int n_tasks, long total_units, double interval)
{
    int tty;
    if (mode == MIEB_PROGRESS_OFF)
        return;
    if (mode == MIEB_PROGRESS_AUTO) {
        if (S.min_level > MIEB_LOG_INFO)
            return; /* -q: warnings and errors only */
        /* a terminal gets the live line; json logs are for collectors: plain (json) lines */
        tty = isatty(STDERR_FILENO) && S.fmt == MIEB_LOGFMT_TEXT;
    } else {
        tty = mode == MIEB_PROGRESS_TTY;
    }
    const char *env = mieb_env(MIEB_ENV_PROGRESS_INTERVAL);
    if (env && atof(env) > 0)
        interval = atof(env);
    if (interval <= 0)
        interval = 5.0;
    pthread_mutex_lock(&S.mu);
    S.active = 1;
    S.tty = tty;
    S.stop = 0;
    S.interval = interval;
    S.t_start = S.last_plain = mono();
    S.n_tasks = n_tasks;
    S.total_units = total_units;
    S.tasks_done = 0;
    S.units_done = 0;
    S.task_units_done = 0;
    pthread_mutex_unlock(&S.mu);
    if (pthread_create(&S.thread, NULL, ticker, NULL) == 0)
        S.thread_running = 1;
}

/* A task begins (index from 0). */
static void mieb_progress_task_begin(void *user, int index, const char *task)
{
    (void)user;
    pthread_mutex_lock(&S.mu);
    S.cur_index = index;
    S.task_units_done = 0;
    set_str(S.task, sizeof S.task, task);
    S.split[0] = S.subset[0] = '\0';
    if (S.active && S.tty)
        draw_line();
    pthread_mutex_unlock(&S.mu);
}

/* A (split, subset) of the current task begins. */
static void mieb_progress_subset(void *user, const char *split, const char *subset)
{
    (void)user;
    pthread_mutex_lock(&S.mu);
    set_str(S.split, sizeof S.split, split);
    set_str(S.subset, sizeof S.subset, subset);
    if (S.active && S.tty)
        draw_line();
    pthread_mutex_unlock(&S.mu);
}

/* A unit of work is done. */
static void mieb_progress_unit_done(void *user)
{
    (void)user;
    pthread_mutex_lock(&S.mu);
    S.units_done++;
    S.task_units_done++;
    if (S.active && S.tty)
        draw_line();
    pthread_mutex_unlock(&S.mu);
}

/* The current task ended (ok, failed or skipped); `units` is its unit count (done ones are not double counted). */
static void mieb_progress_task_end(void *user, const char *task, const char *outcome, long units)
{
    (void)user;
    pthread_mutex_lock(&S.mu);
    S.tasks_done++;
    if (outcome && !strcmp(outcome, "skipped")) /* no work done: not part of the rate */
        S.total_units -= units - S.task_units_done;
    else if (units > S.task_units_done)
        S.units_done += units - S.task_units_done;
    S.task_units_done = 0;
    S.split[0] = S.subset[0] = '\0';
    if (S.active) {
        if (S.tty) {
            draw_line();
        } else {
            char ev[512];
            mieb_snprintf_esc(ev, sizeof ev, "(%s %s)", task ? task : "", outcome ? outcome : "done");
            plain_line(ev);
        }
    }
    S.task[0] = '\0';
    pthread_mutex_unlock(&S.mu);
}

void mieb_progress_stop(void)
{
    pthread_mutex_lock(&S.mu);
    S.stop = 1;
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
    if (S.thread_running) {
        pthread_join(S.thread, NULL);
        S.thread_running = 0;
    }
    pthread_mutex_lock(&S.mu);
    if (S.tty)
        clear_line();
    S.active = 0;
    S.tty = 0;
    S.task[0] = S.split[0] = S.subset[0] = '\0';
    fflush(stderr);
    pthread_mutex_unlock(&S.mu);
}

/* The scoring and merge loops' side on this terminal (plan/run_loop.h). */
/* run: the progress begins, in the mode the hooks' user points at (NULL: none). */
static void progress_begin(void *mode, int n_tasks, long units)
{
    if (mode)
        mieb_progress_start(*(const enum mieb_progress_mode *)mode, n_tasks, units, 0.0);
}

static void say_task_failed(void *user, const char *task, const char *verb, mieb_status st)
{
    (void)user;
    mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "task %s not %s (%s): %s", task, verb, mieb_status_str(st),
                 mieb_last_error());
}

static void task_context(void *user, const char *task)
{
    (void)user;
    mieb_cli_log_context(task, NULL, NULL);
}

const struct mieb_loop_hooks mieb_cli_loop_hooks = {
    .run_begin = progress_begin,
    .task_begin = mieb_progress_task_begin,
    .subset_begin = mieb_progress_subset,
    .unit_done = mieb_progress_unit_done,
    .task_end = mieb_progress_task_end,
    .task_failed = say_task_failed,
    .task_context = task_context,
};
