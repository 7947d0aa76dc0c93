/* parallel.c - the fork-join of parallel.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

struct par_call {
    void (*fn)(void *, int, int);
    void *arg;
    int t, nt;
};

static void *par_entry(void *a)
{
    struct par_call *c = a;
    c->fn(c->arg, c->t, c->nt);
    return NULL;
}

void mieb_par_run(int nt, void (*fn)(void *arg, int t, int nt), void *arg)
{
    enum { MAXT = MIEB_PAR_MAX_PARTS };
    if (nt > MAXT)
        nt = MAXT;
    if (nt <= 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_t th[MAXT];
    struct par_call calls[MAXT];
    int started[MAXT];
    for (int t = 1; t < nt; t++) {
        calls[t] = (struct par_call){fn, arg, t, nt};
        started[t] = pthread_create(&th[t], NULL, par_entry, &calls[t]) == 0;
    }
    fn(arg, 0, nt);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            fn(arg, t, nt); /* no thread: the same part, here */
    }
}

void mieb_par_range(int64_t n, int t, int nt, int64_t *lo, int64_t *hi)
{
    int64_t per = nt > 0 ? (n + nt - 1) / nt : n;
    *lo = (int64_t)t * per < n ? (int64_t)t * per : n;
    *hi = *lo + per < n ? *lo + per : n;
}

int mieb_par_cpus(void)
{
    /* The CPUs this process may run on: a Slurm step, taskset or docker --cpuset-cpus
       allots a few cores of a large node, where the online count would oversubscribe them.
       (A mask of more than CPU_SETSIZE CPUs fails with EINVAL: the online count then.) */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
