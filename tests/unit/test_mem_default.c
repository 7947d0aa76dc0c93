/*
 * test_mem_default.c - host/core/mem_default.h against fake cgroup trees and Slurm variables:
 * v2 memory.max of the process's cgroup and its ancestors ("max" is no limit), v1
 * memory.limit_in_bytes (its huge "no limit" value), hybrid trees, Slurm's per-node and
 * per-CPU memory, the smallest winning, then halved; `why` names the source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/mem_default.h"

#define GiB ((size_t)1 << 30)
#define MiB ((size_t)1 << 20)

static char root[256];

static void put(const char *rel, const char *text)
{
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

static void fresh(const char *name)
{
    char cmd[600];
    snprintf(root, sizeof root, "%s/%s", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        exit(2);
    mkdir(root, 0755);
    unsetenv("SLURM_MEM_PER_NODE");
    unsetenv("SLURM_MEM_PER_CPU");
    unsetenv("SLURM_CPUS_ON_NODE");
    unsetenv("SLURM_CPUS_PER_TASK");
}

static char why[512];
static size_t dflt(size_t phys) { return mieb_mem_default(root, phys, why, sizeof why); }

int main(void)
{
    char base[64];
    snprintf(base, sizeof base, "mieb-memdef-%d", (int)getpid());
    char name[128];

    /* nothing at all: physical RAM halved; no RAM known: 4 GiB */
    snprintf(name, sizeof name, "%s-none", base);
    fresh(name);
    CHECK(dflt(64 * GiB) == 32 * GiB);
    CHECK_MSG(strstr(why, "physical RAM") != NULL, "%s", why);
    CHECK(dflt(0) == 4 * GiB);

    /* v2: the process's own cgroup says max, its parent 8G: the parent wins */
    snprintf(name, sizeof name, "%s-v2", base);
    fresh(name);
    put("proc/self/cgroup", "0::/job.slice/step_0\n");
    put("sys/fs/cgroup/job.slice/step_0/memory.max", "max\n");
    put("sys/fs/cgroup/job.slice/memory.max", "8589934592\n");
    CHECK(dflt(64 * GiB) == 4 * GiB);
    CHECK_MSG(strstr(why, "cgroup v2 memory.max") && strstr(why, "job.slice/memory.max"), "%s", why);
    /* a tighter limit on the leaf */
    put("sys/fs/cgroup/job.slice/step_0/memory.max", "2147483648\n");
    CHECK(dflt(64 * GiB) == 1 * GiB);
    CHECK_MSG(strstr(why, "step_0/memory.max") != NULL, "%s", why);
    /* "max" everywhere: RAM */
    put("sys/fs/cgroup/job.slice/step_0/memory.max", "max\n");
    put("sys/fs/cgroup/job.slice/memory.max", "max\n");
    CHECK(dflt(64 * GiB) == 32 * GiB);
    CHECK_MSG(strstr(why, "physical RAM") != NULL, "%s", why);
    /* a limit above RAM changes nothing */
    put("sys/fs/cgroup/job.slice/memory.max", "137438953472\n");
    CHECK(dflt(64 * GiB) == 32 * GiB);
    /* a container: /proc/self/cgroup names the host's path, the namespace root is mounted */
    snprintf(name, sizeof name, "%s-v2ns", base);
    fresh(name);
    put("proc/self/cgroup", "0::/\n");
    put("sys/fs/cgroup/memory.max", "1073741824\n");
    CHECK(dflt(64 * GiB) == GiB / 2);
    /* garbage is ignored */
    put("sys/fs/cgroup/memory.max", "lots\n");
    CHECK(dflt(64 * GiB) == 32 * GiB);

    /* v1: the memory controller's line among others; "no limit" is about 2^63 */
    snprintf(name, sizeof name, "%s-v1", base);
    fresh(name);
    put("proc/self/cgroup", "12:cpu,cpuacct:/slurm/uid_1/job_7\n"
                            "11:hugetlb,memory:/slurm/uid_1/job_7\n"
                            "1:name=systemd:/user.slice\n");
    put("sys/fs/cgroup/memory/slurm/uid_1/job_7/memory.limit_in_bytes", "17179869184\n");
    put("sys/fs/cgroup/memory/slurm/memory.limit_in_bytes", "9223372036854771712\n");
    put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    put("sys/fs/cgroup/cpu,cpuacct/slurm/uid_1/job_7/memory.limit_in_bytes", "1024\n"); /* not memory's */
    CHECK(dflt(64 * GiB) == 8 * GiB);
    CHECK_MSG(strstr(why, "cgroup v1 memory.limit_in_bytes") && strstr(why, "job_7"), "%s", why);
    put("sys/fs/cgroup/memory/slurm/uid_1/job_7/memory.limit_in_bytes", "9223372036854771712\n");
    CHECK(dflt(64 * GiB) == 32 * GiB);

    /* hybrid: both hierarchies, the smaller wins */
    snprintf(name, sizeof name, "%s-hybrid", base);
    fresh(name);
    put("proc/self/cgroup", "5:memory:/a\n0::/b\n");
    put("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "6442450944\n");
    put("sys/fs/cgroup/b/memory.max", "4294967296\n");
    CHECK(dflt(64 * GiB) == 2 * GiB);
    CHECK_MSG(strstr(why, "v2") != NULL, "%s", why);

    /* Slurm: per node (MB), per CPU times CPUs on the node, else CPUs per task, else 1 */
    snprintf(name, sizeof name, "%s-slurm", base);
    fresh(name);
    setenv("SLURM_MEM_PER_NODE", "16000", 1);
    CHECK(dflt(512 * GiB) == 8000 * MiB);
    CHECK_MSG(strstr(why, "SLURM_MEM_PER_NODE") != NULL, "%s", why);
    unsetenv("SLURM_MEM_PER_NODE");
    setenv("SLURM_MEM_PER_CPU", "4000", 1);
    setenv("SLURM_CPUS_ON_NODE", "4", 1);
    setenv("SLURM_CPUS_PER_TASK", "2", 1);
    CHECK(dflt(512 * GiB) == 8000 * MiB);
    CHECK_MSG(strstr(why, "SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE") != NULL, "%s", why);
    unsetenv("SLURM_CPUS_ON_NODE");
    CHECK(dflt(512 * GiB) == 4000 * MiB);
    CHECK_MSG(strstr(why, "SLURM_CPUS_PER_TASK") != NULL, "%s", why);
    unsetenv("SLURM_CPUS_PER_TASK");
    CHECK(dflt(512 * GiB) == 2000 * MiB);
    /* --mem=0 (the whole node) is no limit; bad values are ignored */
    unsetenv("SLURM_MEM_PER_CPU");
    setenv("SLURM_MEM_PER_NODE", "0", 1);
    CHECK(dflt(64 * GiB) == 32 * GiB);
    setenv("SLURM_MEM_PER_NODE", "16G", 1);
    CHECK(dflt(64 * GiB) == 32 * GiB);
    setenv("SLURM_MEM_PER_NODE", "16000M", 1);
    CHECK(dflt(64 * GiB) == 8000 * MiB);
    /* Slurm and a cgroup together: the smaller */
    put("proc/self/cgroup", "0::/job\n");
    put("sys/fs/cgroup/job/memory.max", "4294967296\n");
    CHECK(dflt(64 * GiB) == 2 * GiB);
    CHECK_MSG(strstr(why, "cgroup v2") != NULL, "%s", why);
    setenv("SLURM_MEM_PER_NODE", "1000", 1);
    CHECK(dflt(64 * GiB) == 500 * MiB);
    CHECK_MSG(strstr(why, "SLURM_MEM_PER_NODE") != NULL, "%s", why);

    /* the real machine: whatever it is, at most half of RAM and never 0 */
    CHECK(mieb_mem_default(NULL, 64 * GiB, NULL, 0) <= 32 * GiB);
    CHECK(mieb_mem_default(NULL, 64 * GiB, NULL, 0) > 0);

    char cmd[700], *slash = strrchr(root, '/');
    *slash = '\0';
    snprintf(cmd, sizeof cmd, "rm -rf '%s/%s'-*", root, base);
    (void)!system(cmd);
    return check_done("test_mem_default");
}
