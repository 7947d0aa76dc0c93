/**
 * stop.h - stopping a run on a signal: SIGINT or SIGTERM (interrupted, exit 130) and
 * SIGUSR1 (pre-empted, exit 75), with whole results only.
 *
 * The handler records the signal in the caller's flag, which the run checks between tasks
 * and subsets, and in a process-wide atomic flag that the library's long loops look at once
 * per block of work (mieb_stop_requested, mieb_stop_check: one relaxed load): embedding
 * reads go in bounded pieces with a check between them (emb/emb_rows.c, emb/emb_map.c), and the
 * similarity and top-k passes, k-means, the probes' solvers, the metric reductions over
 * queries and the per-query writers check per block. A loop that sees the flag returns
 * MIEB_ERR_INTERRUPTED (threads of a parallel.h split end their part early and the caller
 * returns it); nothing half done is written, a writer removes its temporary, and the run
 * exits within about a second of the signal, wherever it was. The handlers are installed
 * without SA_RESTART, so a system call that can wait (a read of a pipe or of a network
 * file system) returns EINTR instead of waiting on.
 *
 * The backstop: a thread can still be stuck where no flag is looked at, in a read that does
 * not return (a hung network file system). So after SIGINT or SIGTERM a watchdog thread
 * waits MIEB_STOP_GRACE_S seconds; if the process is still there then, or at once on a
 * second SIGINT or SIGTERM, it removes this process's temporaries from the folders
 * registered with mieb_stop_watch_tmp and ends the process with _exit(130). That is the one
 * place outside main() that ends the process, on purpose: nothing else can end a thread
 * blocked in the kernel. Results already renamed into place stay; a temporary created after
 * the sweep is removed by the next run (tmpfiles.h). SIGUSR1 keeps its meaning (Slurm's
 * notice before the time limit): stop at the next check, no watchdog.
 */
#ifndef MIEB_CORE_STOP_H
#define MIEB_CORE_STOP_H

#include <signal.h>

#include "status.h"

#define MIEB_STOP_GRACE_S 5
#define MIEB_STOP_EXIT 130

/** Folders (and their sub-folders down to depth) whose temporaries of this process the
    watchdog removes before it ends the process. Register them before installing. */
void mieb_stop_watch_tmp(const char *dir, int depth);

/** Install the handlers (they set *flag to the signal) and start the watchdog. A failure
    to start the watchdog is returned (the handlers are installed all the same). */
mieb_status mieb_stop_install(volatile sig_atomic_t *flag);

/** The signal that asked this process to stop (SIGINT, SIGTERM or SIGUSR1), or 0; always 0
    where mieb_stop_install was not called. One relaxed atomic load: look at it once per block
    of work, never per element. Any thread may call it. */
int mieb_stop_requested(void);

/** Ask the library's loops to stop as signal sig would (any thread, async-signal-safe): the
    public API's mieb_engine_stop, whose caller keeps its own signal handlers. */
void mieb_stop_request(int sig);
/** Forget a stop asked for before: a public API call begins with it. */
void mieb_stop_clear(void);

/** MIEB_ERR_INTERRUPTED ("interrupted by signal N") once a stop was asked, else MIEB_OK. */
mieb_status mieb_stop_check(void);

#endif
