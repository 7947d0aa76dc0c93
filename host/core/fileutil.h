/**
 * fileutil.h - small file-system helpers: bounded whole-file reads, recursive mkdir,
 * and atomic writes (temporary file in the same directory, fsync, rename), so a reader
 * never sees half a file and an interrupted run leaves either the old file or none.
 */
#ifndef MIEB_CORE_FILEUTIL_H
#define MIEB_CORE_FILEUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/**
 * Open path read-only, refusing anything that is not a regular file (a FIFO, a device, a
 * directory: a read could wait forever) before and after opening it, without blocking;
 * symbolic links to regular files are followed. *fd is the open descriptor (blocking).
 */
mieb_status mieb_open_regular(const char *path, int *fd);
/** Read a whole regular file (mieb_open_regular; refusing files over max_bytes); *out is
    NUL-terminated and malloc'd. */
mieb_status mieb_read_file(const char *path, size_t max_bytes, char **out, size_t *len);
/** mkdir -p. */
mieb_status mieb_mkdirs(const char *path);
/** Write data to path atomically: <path>.tmp.<host>.<pid> (tmpfiles.h), fsync, rename over path. */
mieb_status mieb_write_file_atomic(const char *path, const void *data, size_t len);
bool mieb_file_exists(const char *path);
bool mieb_dir_exists(const char *path);
/** Join a/b into buf (n bytes); fails with MIEB_ERR_INVALID_ARG when it does not fit. */
mieb_status mieb_path_join(char *buf, size_t n, const char *a, const char *b);

#endif
