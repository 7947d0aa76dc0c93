/* api_hooks.h - the run loop's hooks (plan/run_loop.h) for the public API's calls: the library
   says nothing on the terminal; its caller hears of progress through the engine's callback. */
#ifndef MIEB_API_HOOKS_H
#define MIEB_API_HOOKS_H

#include "../plan/run_loop.h"
#include "api_engine.h"

/** The hooks of a call of e that scores `total` units (mieb_task_units summed): each unit done
    goes to e's progress callback as (done, total), and a failed task's status is kept for
    mieb_api_failed_status. The state is the calling thread's: one call per thread at a time. */
const struct mieb_loop_hooks *mieb_api_loop_hooks(mieb_engine *e, long total);
/** The status the last task that failed under those hooks, in this thread, failed with
    (MIEB_OK when none has since mieb_api_loop_hooks). */
mieb_status mieb_api_failed_status(void);

#endif
