/* fileutil.c - bounded reads, mkdir -p and atomic writes. */
#include "fileutil.h"
#include "tmpfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a path that is not a regular file is, for messages. */
static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

mieb_status mieb_open_regular(const char *path, int *fd_out)
{
    struct stat sb;
    *fd_out = -1;
    /* refused before open() too: opening a device can act on it */
    if (stat(path, &sb) != 0)
        return mieb_fail(errno == ENOENT || errno == ENOTDIR ? MIEB_ERR_NOT_FOUND : MIEB_ERR_IO, "%s: %s", path,
                         strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return mieb_fail(MIEB_ERR_IO, "%s: is %s, not a regular file; refused (reading it could block forever)",
                         path, kind_of(sb.st_mode));
    /* O_NONBLOCK: a FIFO swapped in after the stat opens at once instead of waiting for a
       writer, and is refused by the fstat below; a symlink to a regular file is fine */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mieb_fail(errno == ENOENT ? MIEB_ERR_NOT_FOUND : MIEB_ERR_IO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return mieb_fail(MIEB_ERR_IO, "%s: is %s, not a regular file; refused (reading it could block forever)",
                         path, kind_of(sb.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *fd_out = fd;
    return MIEB_OK;
}

mieb_status mieb_read_file(const char *path, size_t max_bytes, char **out, size_t *len)
{
    struct stat sb;
    int fd;
    *out = NULL;
    MIEB_TRY(mieb_open_regular(path, &fd));
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return e == ENOMEM ? mieb_fail(MIEB_ERR_OOM, "%s: out of memory opening it", path)
                           : mieb_fail(MIEB_ERR_IO, "%s: %s", path, strerror(e));
    }
    if (fstat(fileno(f), &sb) != 0) {
        fclose(f);
        return mieb_fail(MIEB_ERR_IO, "%s: %s", path, strerror(errno));
    }
    if ((size_t)sb.st_size > max_bytes) {
        fclose(f);
        return mieb_fail(MIEB_ERR_TOO_LARGE, "%s: %lld bytes is more than the %zu allowed", path,
                         (long long)sb.st_size, max_bytes);
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    if (!buf) {
        fclose(f);
        return mieb_fail(MIEB_ERR_OOM, "%s: reading %lld bytes", path, (long long)sb.st_size);
    }
    size_t got = fread(buf, 1, (size_t)sb.st_size, f);
    int err = ferror(f);
    fclose(f);
    if (err || got != (size_t)sb.st_size) {
        free(buf);
        return mieb_fail(MIEB_ERR_IO, "%s: short read", path);
    }
    buf[got] = '\0';
    *out = buf;
    if (len)
        *len = got;
    return MIEB_OK;
}

mieb_status mieb_mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "bad directory path '%s'", path);
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return mieb_fail(MIEB_ERR_IO, "mkdir %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return mieb_fail(MIEB_ERR_IO, "mkdir %s: %s", tmp, strerror(errno));
    if (!mieb_dir_exists(tmp))
        return mieb_fail(MIEB_ERR_IO, "%s exists and is not a directory", tmp);
    return MIEB_OK;
}

mieb_status mieb_write_file_atomic(const char *path, const void *data, size_t len)
{
    char tmp[PATH_MAX];
    MIEB_TRY(mieb_tmp_path(path, tmp, sizeof tmp));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return mieb_fail(MIEB_ERR_IO, "%s: %s", tmp, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return mieb_fail(MIEB_ERR_IO, "writing %s: %s", tmp, strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return mieb_fail(MIEB_ERR_IO, "writing %s: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return mieb_fail(MIEB_ERR_IO, "rename %s -> %s: %s", tmp, path, strerror(e));
    }
    return MIEB_OK;
}

bool mieb_file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool mieb_dir_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

mieb_status mieb_path_join(char *buf, size_t n, const char *a, const char *b)
{
    int w = snprintf(buf, n, "%s/%s", a, b);
    if (w < 0 || (size_t)w >= n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "path too long: %s/%s", a, b);
    return MIEB_OK;
}
