/* mem_default.c - the default memory budget from RAM, cgroups and Slurm (mem_default.h). */
#include "mem_default.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNLIMITED ((uint64_t)1 << 62) /* v1 writes "no limit" as about 2^63 */

struct best {
    uint64_t bytes; /* 0: nothing found yet */
    char src[320];
};

static void offer(struct best *b, uint64_t bytes, const char *fmt, const char *arg)
{
    if (!bytes || bytes >= UNLIMITED || (b->bytes && bytes >= b->bytes))
        return;
    b->bytes = bytes;
    snprintf(b->src, sizeof b->src, fmt, arg);
}

/* The first token of a small file: a number (1), "max" (0, no limit), else -1. */
static int read_limit(const char *path, uint64_t *out)
{
    char buf[64];
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!strncmp(buf, "max", 3))
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || end == buf || (*end && *end != '\n'))
        return -1;
    *out = v;
    return 1;
}

/* The smallest limit in `file` of the cgroup `cg` (a path such as /a/b) and its ancestors. */
static void walk_cgroup(struct best *b, const char *base, const char *cg, const char *file, const char *what)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s", cg);
    for (;;) {
        size_t n = strlen(dir);
        while (n && dir[n - 1] == '/')
            dir[--n] = '\0';
        uint64_t v;
        if (snprintf(path, sizeof path, "%s%s/%s", base, dir, file) < (int)sizeof path &&
            read_limit(path, &v) == 1) {
            char fmt[96];
            snprintf(fmt, sizeof fmt, "%s (%%s)", what);
            offer(b, v, fmt, path);
        }
        if (!n)
            break;
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
}

static int has_memory(const char *controllers, size_t len)
{
    const char *p = controllers, *end = controllers + len;
    while (p < end) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        size_t l = (size_t)((c ? c : end) - p);
        if (l == 6 && !strncmp(p, "memory", 6))
            return 1;
        p = c ? c + 1 : end;
    }
    return 0;
}

static void from_cgroups(struct best *b, const char *root)
{
    char path[PATH_MAX], line[PATH_MAX + 128], base[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        const char *cg = c2 + 1;
        if (c1 == line + 1 && line[0] == '0' && c2 == c1 + 1) { /* v2: 0::/path */
            snprintf(base, sizeof base, "%s/sys/fs/cgroup", root);
            walk_cgroup(b, base, cg, "memory.max", "cgroup v2 memory.max");
        } else if (has_memory(c1 + 1, (size_t)(c2 - c1 - 1))) { /* v1: N:a,memory,b:/path */
            snprintf(base, sizeof base, "%s/sys/fs/cgroup/memory", root);
            walk_cgroup(b, base, cg, "memory.limit_in_bytes", "cgroup v1 memory.limit_in_bytes");
        }
    }
    fclose(f);
}

/* A positive whole number from the environment, else 0. */
static uint64_t env_u64(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    /* Slurm may write a unit after the number (SLURM_MEM_PER_NODE=16000M) */
    if (*end && strcmp(end, "M") && strcmp(end, "m"))
        return 0;
    return v;
}

static void from_slurm(struct best *b)
{
    const uint64_t mb = (uint64_t)1 << 20;
    uint64_t node = env_u64("SLURM_MEM_PER_NODE"), cpu = env_u64("SLURM_MEM_PER_CPU");
    if (node && node < UNLIMITED / mb)
        offer(b, node * mb, "Slurm's SLURM_MEM_PER_NODE%s", "");
    if (cpu && cpu < UNLIMITED / mb) {
        const char *by = "SLURM_CPUS_ON_NODE";
        uint64_t n = env_u64(by);
        if (!n)
            n = env_u64(by = "SLURM_CPUS_PER_TASK");
        if (!n) {
            n = 1;
            by = "1 CPU";
        }
        if (n < UNLIMITED / (cpu * mb))
            offer(b, cpu * mb * n, "Slurm's SLURM_MEM_PER_CPU x %s", by);
    }
}

size_t mieb_mem_default(const char *root, size_t phys_bytes, char *why, size_t why_len)
{
    struct best b = {0};
    if (!root)
        root = "";
    offer(&b, phys_bytes, "physical RAM%s", "");
    from_cgroups(&b, root);
    from_slurm(&b);
    size_t out;
    if (!b.bytes) {
        out = (size_t)4 << 30;
        if (why && why_len)
            snprintf(why, why_len, "4 GiB (no memory size found)");
        return out;
    }
    uint64_t half = b.bytes / 2;
    out = half > SIZE_MAX ? SIZE_MAX : (size_t)half;
    if (why && why_len)
        snprintf(why, why_len, "%.2f GiB, half of the %.2f GiB of %s", (double)out / (1 << 30),
                 (double)b.bytes / (1 << 30), b.src);
    return out;
}

size_t mieb_mem_default_here(char *why, size_t why_len)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return mieb_mem_default(NULL, pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0, why, why_len);
}
