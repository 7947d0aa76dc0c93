/* status.c - status strings, thread-local last error, and the log sink. */
#include "status.h"

#include "escape.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[2048];

const char *mieb_status_str(mieb_status st)
{
    switch (st) {
    case MIEB_OK: return "ok";
    case MIEB_ERR_INVALID_ARG: return "invalid argument";
    case MIEB_ERR_OOM: return "out of memory";
    case MIEB_ERR_TOO_LARGE: return "exceeds the memory limit";
    case MIEB_ERR_IO: return "i/o error";
    case MIEB_ERR_HDF5: return "hdf5 error";
    case MIEB_ERR_BAD_DATA: return "bad data";
    case MIEB_ERR_CONFIG: return "configuration error";
    case MIEB_ERR_CUDA: return "cuda error";
    case MIEB_ERR_CUBLAS: return "cublas error";
    case MIEB_ERR_UNSUPPORTED: return "unsupported";
    case MIEB_ERR_NO_DEVICE: return "no usable device";
    case MIEB_ERR_INTERRUPTED: return "interrupted";
    case MIEB_ERR_NOT_FOUND: return "not found";
    case MIEB_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

mieb_status mieb_fail(mieb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mieb_vsnprintf_esc(last_error, sizeof last_error, fmt, ap); /* outside strings escaped (escape.h) */
    va_end(ap);
    /* terse OOM messages ("registry") still have to say what happened */
    size_t n = strlen(last_error);
    if (st == MIEB_ERR_OOM && !strstr(last_error, "out of memory") && n + 16 < sizeof last_error)
        memcpy(last_error + n, ": out of memory", 16);
    return st;
}

mieb_status mieb_fail_context(mieb_status st, const char *fmt, ...)
{
    char prefix[1024], old[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    mieb_vsnprintf_esc(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_error, sizeof old);
    /* "<prefix>: <old>", cut to fit: the start of a message names the file, keep it */
    size_t n = strlen(prefix);
    if (n >= sizeof last_error)
        n = sizeof last_error - 1;
    memcpy(last_error, prefix, n);
    if (old[0] && n + 2 < sizeof last_error) {
        last_error[n++] = ':';
        last_error[n++] = ' ';
        size_t m = strlen(old);
        if (m > sizeof last_error - 1 - n)
            m = sizeof last_error - 1 - n;
        memcpy(last_error + n, old, m);
        n += m;
    }
    last_error[n] = '\0';
    return st;
}

const char *mieb_last_error(void) { return last_error; }
void mieb_clear_error(void) { last_error[0] = '\0'; }

static void default_sink(enum mieb_log_level lvl, const char *msg, void *user)
{
    static const char *names[] = {"debug", "info", "warning", "error"};
    (void)user;
    fprintf(stderr, "mieb-eval: %s: %s\n", names[lvl], msg);
}

static mieb_log_fn log_fn = default_sink;
static void *log_user;
static enum mieb_log_level log_min = MIEB_LOG_INFO;

void mieb_log_set(mieb_log_fn fn, void *user, enum mieb_log_level min_level)
{
    log_fn = fn ? fn : default_sink;
    log_user = user;
    log_min = min_level;
}

void mieb_log(enum mieb_log_level lvl, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    if (lvl < log_min)
        return;
    va_start(ap, fmt);
    mieb_vsnprintf_esc(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_fn(lvl, buf, log_user);
}
