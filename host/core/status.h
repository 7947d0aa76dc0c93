/**
 * status.h - status codes, the thread-local last-error record and logging.
 *
 * Library code never exits: every fallible function returns a mieb_status and, on
 * failure, leaves a human-readable detail in the thread-local last-error record
 * (what failed, which file and dataset). Only main() maps a status to an exit code.
 * New codes are appended, never renumbered.
 */
#ifndef MIEB_CORE_STATUS_H
#define MIEB_CORE_STATUS_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mieb_status {
    MIEB_OK = 0,
    MIEB_ERR_INVALID_ARG = 1, /**< caller passed something impossible (a bug or bad flag) */
    MIEB_ERR_OOM = 2,         /**< an allocator failed */
    MIEB_ERR_TOO_LARGE = 3,   /**< request exceeds the configured budget (--mem-limit) */
    MIEB_ERR_IO = 4,          /**< file system error (open, read, write, rename) */
    MIEB_ERR_HDF5 = 5,        /**< HDF5 library error on an otherwise plausible file */
    MIEB_ERR_BAD_DATA = 6,    /**< input violates the data contract (FORMAT.md) */
    MIEB_ERR_CONFIG = 7,      /**< registry / model_meta / JSON configuration problem */
    MIEB_ERR_CUDA = 8,        /**< CUDA runtime error; the CUDA backend is unusable after it */
    MIEB_ERR_CUBLAS = 9,      /**< cuBLAS error */
    MIEB_ERR_UNSUPPORTED = 10,/**< operation not available in this build or backend */
    MIEB_ERR_NO_DEVICE = 11,  /**< --device cuda asked for, no usable GPU */
    MIEB_ERR_INTERRUPTED = 12,/**< a signal asked us to stop */
    MIEB_ERR_NOT_FOUND = 13,  /**< a required input file or dataset is missing */
    MIEB_ERR_INTERNAL = 14,   /**< an invariant was broken: a bug in mieb-eval */
};
typedef enum mieb_status mieb_status;

/** Short constant name of a status ("bad data", "out of memory", ...). */
const char *mieb_status_str(mieb_status st);

/**
 * Record the detail of a failure in this thread's last-error record and return st,
 * so that `return mieb_fail(MIEB_ERR_IO, "cannot open %s: %s", path, strerror(errno));`
 * reads naturally. The message replaces any earlier one. Every %s argument is escaped
 * (escape.h: a path, an id or a name from a file can never act on the terminal the message
 * reaches); the same holds for mieb_fail_context and mieb_log.
 */
mieb_status mieb_fail(mieb_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Prepend context to the current last-error message ("<context>: <old message>"), for
 * callers that know the file or dataset the callee did not. Returns st unchanged.
 */
mieb_status mieb_fail_context(mieb_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** This thread's last error message ("" if none). Valid until the next mieb_fail. */
const char *mieb_last_error(void);
void mieb_clear_error(void);

/* ---- logging: everything goes through one settable sink (stderr by default) ---- */
enum mieb_log_level { MIEB_LOG_DEBUG = 0, MIEB_LOG_INFO = 1, MIEB_LOG_WARN = 2, MIEB_LOG_ERROR = 3 };
typedef void (*mieb_log_fn)(enum mieb_log_level lvl, const char *msg, void *user);
void mieb_log_set(mieb_log_fn fn, void *user, enum mieb_log_level min_level);
void mieb_log(enum mieb_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define MIEB_LOGD(...) mieb_log(MIEB_LOG_DEBUG, __VA_ARGS__)
#define MIEB_LOGI(...) mieb_log(MIEB_LOG_INFO, __VA_ARGS__)
#define MIEB_LOGW(...) mieb_log(MIEB_LOG_WARN, __VA_ARGS__)
#define MIEB_LOGE(...) mieb_log(MIEB_LOG_ERROR, __VA_ARGS__)

/** Propagate a non-OK status: `MIEB_TRY(read_x(...));` */
#define MIEB_TRY(expr)                     \
    do {                                   \
        mieb_status mieb_try_st_ = (expr); \
        if (mieb_try_st_ != MIEB_OK)       \
            return mieb_try_st_;           \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
