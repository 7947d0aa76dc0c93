/* tmpfiles.c - temporary-file names and stale-temporary clean-up (tmpfiles.h). */
#include "tmpfiles.h"

#include <dirent.h>
#include <stdbool.h>
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

/* Is the file a temporary to remove: this host's, of this process (own) or of a process
   that is gone (not own)? */
static bool removable(const char *name, const char *host, bool own)
{
    long pid = own_tmp_pid(name, host);
    if (pid <= 0)
        return false;
    if (own)
        return pid == (long)getpid();
    if (pid == (long)getpid())
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH; /* alive (or not ours to signal): maybe still writing */
}

static int sweep(const char *dir, int depth, const char *host, bool own)
{
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
                removed += sweep(p, depth - 1, host, own);
            continue;
        }
        if (!S_ISREG(sb.st_mode) || !removable(e->d_name, host, own) || unlink(p) != 0)
            continue;
        if (!own) /* the watchdog logs nothing: a stuck thread may hold the log's lock */
            MIEB_LOGI("removed %s, a temporary left by process %ld of this host, which is gone", p,
                      own_tmp_pid(e->d_name, host));
        removed++;
    }
    closedir(d);
    return removed;
}

int mieb_clean_stale_tmp(const char *dir, int depth)
{
    char host[HOST_MAX + 1];
    host_tag(host, sizeof host);
    return sweep(dir, depth, host, false);
}

int mieb_remove_own_tmp(const char *dir, int depth)
{
    char host[HOST_MAX + 1];
    host_tag(host, sizeof host);
    return sweep(dir, depth, host, true);
}
