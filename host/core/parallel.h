/**
 * parallel.h - fork-join over our own threads, for work split into nt parts that need no
 * coordination (query ranges, row blocks). Part t always does the same work whichever
 * thread runs it, so results do not depend on whether threads could be started.
 * mieb_par_queue hands out whole work items instead (experiments of a family), each to the
 * first part free to take it.
 */
#ifndef MIEB_CORE_PARALLEL_H
#define MIEB_CORE_PARALLEL_H

#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most parts mieb_par_run splits work into; a larger nt is cut to it. */
#define MIEB_PAR_MAX_PARTS 256

/**
 * Run fn(arg, t, nt) for t = 0..nt-1, t = 0 on the calling thread, the others on new
 * threads; a part whose thread cannot start runs on the caller, so the result is the same.
 */
void mieb_par_run(int nt, void (*fn)(void *arg, int t, int nt), void *arg);

/** [*lo, *hi): part t of nt of the range [0, n), in contiguous, nearly equal pieces. */
void mieb_par_range(int64_t n, int t, int nt, int64_t *lo, int64_t *hi);

/**
 * Run item(arg, i) for every i = 0..n-1 on nt parts of mieb_par_run: each part takes the
 * lowest item not yet taken until none is left, then calls done(arg) (when done is not NULL:
 * a caller that shares threads among running items hands the finished part's share on) and
 * returns. Every item runs, whatever the others return; item i's result depends on i only,
 * not on the part that ran it. Returns MIEB_OK, or the status of the lowest-numbered item
 * that failed with its message (the first 511 bytes), or MIEB_ERR_OOM when the n results
 * cannot be held.
 */
mieb_status mieb_par_queue(int nt, int64_t n, mieb_status (*item)(void *arg, int64_t i), void (*done)(void *arg),
                           void *arg);

/** The number of CPUs this process may run on (its affinity mask; else the online CPUs; at
    least 1): what --threads 0 means. */
int mieb_par_cpus(void);

#ifdef __cplusplus
}
#endif
#endif
