/* api_run.c - mieb_run (include/mieb.h): a run session (plan/run_session.h) on the engine's
   backend and registry, without the program's terminal output, signal handlers or watchdog,
   which belong to a program; progress goes to the engine's callback. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../plan/run_session.h"
#include "api_engine.h"
#include "api_hooks.h"
#include "api_run_request.h"

static mieb_status run(mieb_engine *e, const struct mieb_run_request *rq, char **results_dir, char **summary)
{
    if (!rq)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_run needs a request (mieb_run_request_new)");
    struct mieb_run_options o = rq->o;
    char *argv[] = {"mieb_run (C API)"};
    struct mieb_api_call call = mieb_api_call(e);
    struct mieb_run_process proc = {.argc = 1, .argv = argv, .interrupted = &e->interrupted,
                                    .hooks = &mieb_api_loop_hooks, .hooks_user = &call};
    /* a precision the engine's backend was not opened in: the session opens this device anew */
    o.device = e->device;
    o.mem_limit = e->mem_limit;
    o.threads = e->n_threads;
    struct mieb_run_session s;
    mieb_status st = mieb_run_session_open(&s, &o, &proc, &e->reg, e->be);
    if (st == MIEB_OK)
        st = mieb_run_session_score(&s);
    if (s.step == MIEB_RUN_OPEN) {
        cJSON *sum = mieb_run_session_summary(&s);
        *summary = sum ? cJSON_PrintUnformatted(sum) : NULL;
        cJSON_Delete(sum);
        char path[PATH_MAX + 128];
        if (mieb_run_session_finish(&s, path, sizeof path) != MIEB_OK)
            MIEB_LOGW("the run manifest was not written: %s", mieb_last_error());
        if (st == MIEB_OK && !*summary)
            st = mieb_fail(MIEB_ERR_OOM, "the run's summary");
        if (st == MIEB_OK && !(*results_dir = strdup(s.results_dir)))
            st = mieb_fail(MIEB_ERR_OOM, "the results folder's name");
    }
    mieb_run_session_free(&s);
    if (st != MIEB_OK) {
        free(*summary);
        *summary = NULL;
    }
    return st;
}

int mieb_run(mieb_engine *e, const mieb_run_request *rq, char **results_dir, char **summary_json)
{
    *results_dir = *summary_json = NULL;
    mieb_status st = mieb_api_call_begin(e);
    if (st == MIEB_OK)
        st = run(e, rq, results_dir, summary_json);
    return mieb_api_call_end(e, st);
}
