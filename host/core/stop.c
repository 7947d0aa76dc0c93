/* stop.c - signal handlers and the watchdog that ends a run stuck after SIGINT/SIGTERM (stop.h). */
#include "stop.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tmpfiles.h"

#define MAX_DIRS 4

static volatile sig_atomic_t *flag_of_run;
/* The same signal for the library's loops (mieb_stop_requested): a lock-free atomic, so the
   handler may store it and any thread may load it without a lock. */
static atomic_int stop_sig;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag must be lock-free to be set in a signal handler");
static sem_t wake; /* posted by the handler on each SIGINT/SIGTERM */
static struct {
    char path[PATH_MAX];
    int depth;
} dirs[MAX_DIRS];
static int n_dirs;

void mieb_stop_watch_tmp(const char *dir, int depth)
{
    if (n_dirs < MAX_DIRS && snprintf(dirs[n_dirs].path, sizeof dirs[n_dirs].path, "%s", dir) < PATH_MAX)
        dirs[n_dirs++].depth = depth;
}

int mieb_stop_requested(void) { return atomic_load_explicit(&stop_sig, memory_order_relaxed); }

void mieb_stop_request(int sig) { atomic_store_explicit(&stop_sig, sig, memory_order_relaxed); }

void mieb_stop_clear(void) { atomic_store_explicit(&stop_sig, 0, memory_order_relaxed); }

mieb_status mieb_stop_check(void)
{
    int sig = mieb_stop_requested();
    return sig ? mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted by signal %d", sig) : MIEB_OK;
}

static void on_signal(int sig)
{
    int e = errno;
    if (sig == SIGUSR1) {
        if (!*flag_of_run) { /* an interrupt already asked for more than a pre-emption */
            *flag_of_run = sig;
            atomic_store_explicit(&stop_sig, sig, memory_order_relaxed);
        }
    } else {
        *flag_of_run = sig;
        atomic_store_explicit(&stop_sig, sig, memory_order_relaxed);
        sem_post(&wake); /* async-signal-safe */
    }
    errno = e;
}

/* Wait on the semaphore until posted (true) or, with a deadline, until it passes (false). */
static bool wait_wake(const struct timespec *deadline)
{
    for (;;) {
        int r = deadline ? sem_timedwait(&wake, deadline) : sem_wait(&wake);
        if (r == 0)
            return true;
        if (errno != EINTR)
            return false;
    }
}

static void *watchdog(void *arg)
{
    (void)arg;
    struct timespec deadline;
    wait_wake(NULL); /* the first SIGINT/SIGTERM */
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += MIEB_STOP_GRACE_S;
    bool again = wait_wake(&deadline); /* a second signal, or the run still going */
    for (int i = 0; i < n_dirs; i++)
        mieb_remove_own_tmp(dirs[i].path, dirs[i].depth);
    static const char msg_again[] = "mieb-eval: interrupted again; stopping now, finished results are kept\n";
    static const char msg_late[] = "mieb-eval: still running 5 s after the interrupt (blocked in a read that does "
                                   "not return); stopping now, finished results are kept\n";
    ssize_t w = again ? write(2, msg_again, sizeof msg_again - 1) : write(2, msg_late, sizeof msg_late - 1);
    (void)w;
    _exit(MIEB_STOP_EXIT); /* the documented exception to "only main exits" (stop.h) */
}

mieb_status mieb_stop_install(volatile sig_atomic_t *flag)
{
    struct sigaction sa;
    sigset_t all, old;
    pthread_t t;
    flag_of_run = flag;
    sem_init(&wake, 0, 0);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a waiting system call returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    /* the watchdog takes no signal itself: they reach the threads doing the work */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int e = pthread_create(&t, NULL, watchdog, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0)
        return mieb_fail(MIEB_ERR_OOM, "cannot start the interrupt watchdog: %s", strerror(e));
    pthread_detach(t);
    return MIEB_OK;
}
