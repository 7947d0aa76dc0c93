/* api_hooks.c - the run loop's hooks for the public API's calls (api_hooks.h). */
#include "api_hooks.h"

/* the engine and units of the running call, per calling thread (the hooks take no argument) */
static _Thread_local struct {
    mieb_engine *e;
    long done, total;
} unit_progress;
/* the status the task failed with (the loop keeps only its message), per calling thread */
static _Thread_local mieb_status task_status;

static void no_begin(int i, const char *t) { (void)i, (void)t; }
static void no_subset(const char *sp, const char *su) { (void)sp, (void)su; }
static void unit_done(void)
{
    unit_progress.done++;
    if (unit_progress.e && unit_progress.e->progress)
        unit_progress.e->progress(unit_progress.done, unit_progress.total, unit_progress.e->progress_user);
}
static void no_end(const char *t, const char *o, long u) { (void)t, (void)o, (void)u; }
static void keep_status(const char *t, const char *v, mieb_status st) { (void)t, (void)v, task_status = st; }
static void no_context(const char *t) { (void)t; }
static const struct mieb_loop_hooks quiet = {no_begin, no_subset, unit_done, no_end, keep_status, no_context};

const struct mieb_loop_hooks *mieb_api_loop_hooks(mieb_engine *e, long total)
{
    unit_progress.e = e;
    unit_progress.done = 0;
    unit_progress.total = total;
    task_status = MIEB_OK;
    return &quiet;
}

mieb_status mieb_api_failed_status(void) { return task_status; }
