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

mieb_status mieb_read_file(const char *path, size_t max_bytes, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat sb;
    *out = NULL;
    if (!f)
        return mieb_fail(errno == ENOENT ? MIEB_ERR_NOT_FOUND : MIEB_ERR_IO, "%s: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return mieb_fail(MIEB_ERR_IO, "%s: not a regular file", path);
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
