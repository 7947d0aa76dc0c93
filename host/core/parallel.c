/* parallel.c - the fork-join of parallel.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
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

/* An item's result, kept until every item has run: the message is the failing thread's. */
struct queue_result {
    mieb_status st;
    char err[512];
};

struct par_queue {
    mieb_status (*item)(void *, int64_t);
    void (*done)(void *);
    void *arg;
    int64_t n, next; /* next: the lowest item not yet taken */
    pthread_mutex_t lock;
    struct queue_result *res; /* [n] */
};

/* One part of mieb_par_run: items taken in turn until none is left. */
static void queue_part(void *a, int t, int nt)
{
    struct par_queue *q = a;
    (void)t, (void)nt;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        int64_t i = q->next++;
        pthread_mutex_unlock(&q->lock);
        if (i >= q->n) {
            if (q->done)
                q->done(q->arg);
            return;
        }
        if ((q->res[i].st = q->item(q->arg, i)) != MIEB_OK)
            snprintf(q->res[i].err, sizeof q->res[i].err, "%s", mieb_last_error());
    }
}

mieb_status mieb_par_queue(int nt, int64_t n, mieb_status (*item)(void *arg, int64_t i), void (*done)(void *arg),
                           void *arg)
{
    struct par_queue q = {.item = item, .done = done, .arg = arg, .n = n};
    q.res = calloc(n > 0 ? (size_t)n : 1, sizeof *q.res);
    if (!q.res)
        return mieb_fail(MIEB_ERR_OOM, "results of %lld work items", (long long)n);
    pthread_mutex_init(&q.lock, NULL);
    mieb_par_run(nt, queue_part, &q); /* a part whose thread cannot start finds nothing left to do */
    pthread_mutex_destroy(&q.lock);
    mieb_status st = MIEB_OK;
    for (int64_t i = 0; i < n && st == MIEB_OK; i++)
        if (q.res[i].st != MIEB_OK)
            st = mieb_fail(q.res[i].st, "%s", q.res[i].err);
    free(q.res);
    return st;
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
