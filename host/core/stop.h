/**
 * stop.h - stopping a run on a signal: SIGINT or SIGTERM (interrupted, exit 130) and
 * SIGUSR1 (pre-empted, exit 75), with whole results only.
 *
 * The handler records the signal in the caller's flag, which the run checks between tasks,
 * subsets and corpus blocks; it stops there and writes nothing half done. The handlers are
 * installed without SA_RESTART, so a system call that can wait (a read of a pipe or of a
 * network file system) returns EINTR instead of waiting on. A thread can still be stuck
 * where no flag is looked at: in a read that does not return, inside HDF5, in a long
 * computation. So after SIGINT or SIGTERM a watchdog thread waits MIEB_STOP_GRACE_S
 * seconds; if the process is still there then, or at once on a second SIGINT or SIGTERM,
 * it removes this process's temporaries from the folders registered with
 * mieb_stop_watch_tmp and ends the process with _exit(130). That is the one place outside
 * main() that ends the process, on purpose: nothing else can end a thread blocked in the
 * kernel. Results already renamed into place stay; a temporary created after the sweep is
 * removed by the next run (tmpfiles.h). SIGUSR1 keeps its meaning (Slurm's notice before
 * the time limit): stop at the next boundary, no watchdog.
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

#endif
