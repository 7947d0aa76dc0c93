/* api_engine.h - the public API's engine (include/mieb.h), shared by its calls: the backend,
   the limits, the registry, and the stop flag a call's loops look at. */
#ifndef MIEB_API_ENGINE_H
#define MIEB_API_ENGINE_H

#include <signal.h>
#include <stddef.h>

#include "../../include/mieb.h"
#include "../backend/backend.h"
#include "../config/registry.h"
#include "../families/family.h"

struct mieb_engine {
    struct mieb_backend *be;
    int n_threads;
    size_t mem_limit;
    struct mieb_registry reg; /* loaded once; every call only reads it */
    char device[64];     /* as given to mieb_engine_new: a run in another precision opens its own */
    mieb_progress_callback progress;
    void *progress_user;
    volatile sig_atomic_t interrupted; /* set by mieb_engine_stop; cleared when a call returns */
};

/** What every call does first: clear the last error; a stop already asked stops it here
    (MIEB_ERR_INTERRUPTED). */
mieb_status mieb_api_call_begin(mieb_engine *e);
/** What every call does last: clear the stop request it may have taken, and return st. */
mieb_status mieb_api_call_end(mieb_engine *e, mieb_status st);
/** The run context of a call over the engine, with the arrays of src and the model's similarity. */
struct mieb_run_ctx mieb_api_run_ctx(mieb_engine *e, const struct mieb_emb_source *src, enum mieb_sim sim);
/** The public similarity as the engine's, or MIEB_ERR_INVALID_ARG naming it. */
mieb_status mieb_api_similarity(int32_t similarity, enum mieb_sim *out);
/** The public array as a memory role of (task, split, subset, role). */
struct mieb_emb_memory mieb_api_memory_role(const struct mieb_array *a, const int64_t *offsets,
                                            const int64_t *row_index, const char *task, const char *split,
                                            const char *subset, const char *role);

#endif
