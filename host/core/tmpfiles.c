/* tmpfiles.c - temporary-file names and stale-temporary clean-up (tmpfiles.h). */
#include "tmpfiles.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOST_MAX 64

/* gethostname() with every character outside [A-Za-z0-9_-] replaced by '_', so the name
 * parses back unambiguously (dots separate the fields). */
static void host_tag(char *out, size_t n)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0])
        strcpy(h, "localhost");
    size_t i = 0;
    for (; h[i] && i + 1 < n && i < HOST_MAX; i++) {
        char c = h[i];
        out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ? c : '_';
    }
    out[i] = '\0';
}

mieb_status mieb_tmp_path(const char *path, char *out, size_t n)
{
    char host[HOST_MAX + 1];
    host_tag(host, sizeof host);
    if (snprintf(out, n, "%s.tmp.%s.%ld", path, host, (long)getpid()) >= (int)n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "path too long: %s", path);
    return MIEB_OK;
}

/* pid of a temporary of this host ("<name>.tmp.<host>.<pid>"), or 0 when the name is not one. */
static long own_tmp_pid(const char *name, const char *host)
{
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp."))
        t = p; /* the last one: the path itself may contain ".tmp." */
    if (!t)
        return 0;
    t += 5;
    size_t hl = strlen(host);
    if (strncmp(t, host, hl) != 0 || t[hl] != '.')
        return 0;
    char *end = NULL;
    errno = 0;
    long pid = strtol(t + hl + 1, &end, 10);
    return (errno == 0 && end && *end == '\0' && end != t + hl + 1 && pid > 0) ? pid : 0;
}

int mieb_clean_stale_tmp(const char *dir, int depth)
{
    char host[HOST_MAX + 1];
    host_tag(host, sizeof host);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
            continue;
        struct stat sb;
        if (lstat(p, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            if (depth > 0)
                removed += mieb_clean_stale_tmp(p, depth - 1);
            continue;
        }
        long pid = S_ISREG(sb.st_mode) ? own_tmp_pid(e->d_name, host) : 0;
        if (pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive (or not ours to signal): maybe still writing */
        if (unlink(p) == 0) {
            MIEB_LOGI("removed %s, a temporary left by process %ld of this host, which is gone", p, pid);
            removed++;
        }
    }
    closedir(d);
    return removed;
}
