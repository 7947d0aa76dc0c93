/* api_hooks.c - the run loop's hooks for the public API's calls (api_hooks.h). */
#include "api_hooks.h"

struct mieb_api_call mieb_api_call(mieb_engine *e) { return (struct mieb_api_call){.e = e}; }

static void begin(void *user, int n_tasks, long units)
{
    struct mieb_api_call *c = user;
    (void)n_tasks;
    c->done = 0;
    c->total = units;
}
static void no_task(void *u, int i, const char *t) { (void)u, (void)i, (void)t; }
static void no_subset(void *u, const char *sp, const char *su) { (void)u, (void)sp, (void)su; }
static void unit_done(void *user)
{
    struct mieb_api_call *c = user;
    c->done++;
    if (c->e->progress)
        c->e->progress(c->done, c->total, c->e->progress_user);
}
static void no_end(void *u, const char *t, const char *o, long n) { (void)u, (void)t, (void)o, (void)n; }
/* a failure is the outcome's (its status and message): the caller reads it there */
static void no_failure(void *u, const char *t, const char *v, mieb_status st) { (void)u, (void)t, (void)v, (void)st; }
static void no_context(void *u, const char *t) { (void)u, (void)t; }

const struct mieb_loop_hooks mieb_api_loop_hooks = {begin, no_task, no_subset, unit_done, no_end, no_failure, no_context};
