/* api_engine.c - the engine of the public API (include/mieb.h): device, limits, registry,
   errors and stopping. */
#define _GNU_SOURCE 1 /* dladdr */
#include "api_engine.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/mem_default.h"
#include "../core/stop.h"
#include "../dispatch/dispatch.h"

/* The public statuses are the engine's codes, number for number. */
_Static_assert(MIEB_API_INTERNAL == (int)MIEB_ERR_INTERNAL && MIEB_API_NOT_FOUND == (int)MIEB_ERR_NOT_FOUND &&
                   MIEB_API_INTERRUPTED == (int)MIEB_ERR_INTERRUPTED && MIEB_API_BAD_DATA == (int)MIEB_ERR_BAD_DATA,
               "include/mieb.h's statuses must equal core/status.h's");
_Static_assert(MIEB_DTYPE_FLOAT16 == (int)MIEB_EMB_F16 && MIEB_DTYPE_BFLOAT16 == (int)MIEB_EMB_BF16,
               "include/mieb.h's dtypes must equal core/dtype.h's");

const char *mieb_version(void) { return MIEB_VERSION; }
const char *mieb_status_name(int status) { return mieb_status_str((mieb_status)status); }
const char *mieb_error_message(void) { return mieb_last_error(); }
void mieb_free(void *p) { free(p); }

_Static_assert(MIEB_LOG_LEVEL_WARN == (int)MIEB_LOG_WARN, "include/mieb.h's log levels must equal core/status.h's");

static mieb_log_callback api_log_fn;

static void to_callback(enum mieb_log_level lvl, const char *msg, void *user) { api_log_fn((int)lvl, msg, user); }

void mieb_set_logger(mieb_log_callback fn, void *user, int min_level)
{
    api_log_fn = fn;
    mieb_log_set(fn ? to_callback : NULL, user, (enum mieb_log_level)min_level);
}

/* The registry installed beside this library: <prefix>/lib/libmieb.so finds
   <prefix>/share/mieb-eval/tasks.json (the wheel's and `cmake --install`'s layout), a build
   tree's library the source tree's configs/. */
static mieb_status load_registry(const char *path, struct mieb_registry *reg)
{
    if (path && *path)
        return mieb_registry_load(path, reg);
    Dl_info info;
    char dir[PATH_MAX], cand[PATH_MAX + 64];
    if (dladdr((void *)mieb_version, &info) && info.dli_fname &&
        snprintf(dir, sizeof dir, "%s", info.dli_fname) < (int)sizeof dir) {
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            snprintf(cand, sizeof cand, "%s/../share/mieb-eval/tasks.json", dir);
            if (access(cand, R_OK) == 0)
                return mieb_registry_load(cand, reg);
        }
    }
    return mieb_registry_load_default(reg);
}

int mieb_engine_new(const char *device, int threads, int64_t mem_limit, const char *registry, mieb_engine **out)
{
    mieb_clear_error();
    *out = NULL;
    if (threads < 0 || mem_limit < 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "threads (%d) and mem_limit (%lld) must not be negative", threads,
                         (long long)mem_limit);
    mieb_engine *e = calloc(1, sizeof *e);
    if (!e)
        return mieb_fail(MIEB_ERR_OOM, "engine");
    e->n_threads = threads;
    snprintf(e->device, sizeof e->device, "%s", device && *device ? device : "auto");
    e->mem_limit = mem_limit ? (size_t)mem_limit : mieb_mem_default_here(NULL, 0);
    struct mieb_backend_opts bo = {.mem_limit = e->mem_limit, .n_threads = threads, .precision = MIEB_PREC_FP32};
    mieb_status st = load_registry(registry, &e->reg);
    if (st == MIEB_OK)
        st = mieb_backend_init(device && *device ? device : "auto", &bo, &e->be);
    if (st != MIEB_OK) {
        mieb_engine_free(e);
        return st;
    }
    *out = e;
    return MIEB_OK;
}

void mieb_engine_free(mieb_engine *e)
{
    if (!e)
        return;
    mieb_backend_free(e->be);
    mieb_registry_free(&e->reg);
    free(e);
}

void mieb_engine_set_progress(mieb_engine *e, mieb_progress_callback fn, void *user)
{
    e->progress = fn;
    e->progress_user = user;
}

const char *mieb_engine_device(const mieb_engine *e) { return e && e->be ? e->be->iface.name : ""; }

void mieb_engine_stop(mieb_engine *e)
{
    if (e)
        e->interrupted = SIGINT;
    mieb_stop_request(SIGINT);
}

void mieb_engine_stop_clear(mieb_engine *e)
{
    if (e)
        e->interrupted = 0;
    mieb_stop_clear();
}

mieb_status mieb_api_call_begin(mieb_engine *e)
{
    mieb_clear_error();
    return mieb_stop_check();
}

mieb_status mieb_api_call_end(mieb_engine *e, mieb_status st)
{
    mieb_engine_stop_clear(e);
    return st;
}

struct mieb_run_ctx mieb_api_run_ctx(mieb_engine *e, const struct mieb_emb_source *src, enum mieb_sim sim)
{
    return (struct mieb_run_ctx){.emb = *src, .be = e->be, .sim = sim, .mem_limit = e->mem_limit,
                                 .n_threads = e->n_threads, .interrupted = &e->interrupted};
}

mieb_status mieb_api_similarity(int32_t similarity, enum mieb_sim *out)
{
    switch (similarity) {
    case MIEB_SIMILARITY_COSINE: *out = MIEB_SIM_COSINE; return MIEB_OK;
    case MIEB_SIMILARITY_DOT: *out = MIEB_SIM_DOT; return MIEB_OK;
    }
    return mieb_fail(MIEB_ERR_INVALID_ARG, "similarity %d is not cosine (0) or dot (1)", (int)similarity);
}

struct mieb_emb_memory mieb_api_memory_role(const struct mieb_array *a, const int64_t *offsets,
                                            const int64_t *row_index, const char *task, const char *split,
                                            const char *subset, const char *role)
{
    /* the dtype and shape are checked where the role is opened (emb/emb_memory.c), as a file's are */
    return (struct mieb_emb_memory){.task = task, .split = split, .subset = subset, .role = role, .data = a->data,
                                    .dtype = (enum mieb_emb_dtype)a->dtype, .n_items = a->rows, .dim = a->dim,
                                    .offsets = offsets, .row_index = row_index};
}
