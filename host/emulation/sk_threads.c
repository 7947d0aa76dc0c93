/* sk_threads.c - scikit-learn's OpenMP thread count on this machine (sk_threads.h). */
#define _GNU_SOURCE
#include "sk_threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/parallel.h"

/* OMP_NUM_THREADS = "4" or "4,2" (nested levels): the first one; 0 when unset or not a count */
static int omp_env_threads(void)
{
    const char *e = getenv("OMP_NUM_THREADS");
    if (!e || !*e)
        return 0;
    char *end;
    long v = strtol(e, &end, 10);
    if (v <= 0 || (*end != '\0' && *end != ','))
        return 0;
    return v > 4096 ? 4096 : (int)v;
}

/* cgroup v2 "cpu.max": "<quota> <period>" or "max <period>"; 0 when there is no quota */
static int cgroup_quota_cpus(void)
{
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (!f)
        return 0;
    char q[32] = {0};
    long period = 0;
    int got = fscanf(f, "%31s %ld", q, &period);
    fclose(f);
    if (got != 2 || !strcmp(q, "max") || period <= 0)
        return 0;
    long quota = strtol(q, NULL, 10);
    if (quota <= 0)
        return 0;
    return (int)((quota + period - 1) / period);
}

/* distinct (package, core) pairs of the online CPUs; 0 when sysfs does not say */
static int physical_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (n <= 0 || n > 65536)
        return 0;
    long *key = malloc(sizeof *key * (size_t)n);
    if (!key)
        return 0;
    int m = 0;
    for (long c = 0; c < n; c++) {
        char path[128];
        long pkg = -1, core = -1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/physical_package_id", c);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%ld", &pkg) != 1)
                pkg = -1;
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/core_id", c);
        f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%ld", &core) != 1)
                core = -1;
            fclose(f);
        }
        if (pkg < 0 || core < 0)
            continue; /* offline or absent */
        long k = pkg * 1048576 + core;
        int seen = 0;
        for (int i = 0; i < m && !seen; i++)
            seen = key[i] == k;
        if (!seen)
            key[m++] = k;
    }
    free(key);
    return m;
}

int mieb_sk_openmp_threads(void)
{
    int t = omp_env_threads();
    if (t > 0)
        return t;
    t = mieb_par_cpus();
    int q = cgroup_quota_cpus(), p = physical_cores();
    if (q > 0 && q < t)
        t = q;
    if (p > 0 && p < t)
        t = p;
    return t > 0 ? t : 1;
}
