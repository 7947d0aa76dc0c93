/* set_aside.c - broken files renamed out of the way, never deleted (set_aside.h). */
#define _GNU_SOURCE
#include "set_aside.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* rename without replacing: renameat2(RENAME_NOREPLACE) where the file system has it, else
   a check first (two processes never set aside the same file: each owns its task's files) */
static int rename_noreplace(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
#endif
    struct stat sb;
    if (lstat(to, &sb) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

mieb_status mieb_set_aside(const char *path, char *aside, size_t n)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    for (int k = 1; k < 1000; k++) {
        int len = k == 1 ? snprintf(aside, n, "%s.bad-%s", path, stamp)
                         : snprintf(aside, n, "%s.bad-%s-%d", path, stamp, k);
        if (len < 0 || (size_t)len >= n)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long to set the file aside", path);
        if (rename_noreplace(path, aside) == 0)
            return MIEB_OK;
        if (errno != EEXIST)
            return mieb_fail(MIEB_ERR_IO, "cannot set %s aside as %s: %s", path, aside, strerror(errno));
    }
    return mieb_fail(MIEB_ERR_IO, "cannot set %s aside: every name %s.bad-%s-N is taken", path, path, stamp);
}
