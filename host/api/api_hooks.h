/* api_hooks.h - the run loop's hooks (plan/run_loop.h) for the public API's calls: the library
   says nothing on the terminal; its caller hears of progress through the engine's callback. */
#ifndef MIEB_API_HOOKS_H
#define MIEB_API_HOOKS_H

#include "../plan/run_loop.h"
#include "api_engine.h"

/** One call's progress: the hooks' user. */
struct mieb_api_call {
    mieb_engine *e;
    long done, total; /* units (mieb_task_units) */
};

/** A call of e that has done nothing yet. */
struct mieb_api_call mieb_api_call(mieb_engine *e);

/** The hooks, with a struct mieb_api_call as their user: the loop's work ahead sets its total,
    and each unit done goes to e's progress callback as (done, total). */
extern const struct mieb_loop_hooks mieb_api_loop_hooks;

#endif
