/*
 * h5_open.c - opening input HDF5 files read-only, so that what was checked is what is read.
 *
 * The path is opened once, without blocking, and refused unless the descriptor is a regular
 * file (mieb_open_regular: a FIFO renamed over the path cannot make a run wait for a writer).
 * The guards then read that descriptor, and HDF5 opens "/proc/self/fd/N": the kernel resolves
 * that name to the very file the descriptor holds, whatever the path names by then. HDF5 keeps
 * its own descriptor of it (the sec2 driver's), checked to be the same file; ours is closed
 * once H5Fopen returns. The guards that run later read HDF5's descriptor (mieb_h5_file_fd),
 * never the path or the name again.
 *
 * Without /proc (not mounted), the open is refused with a message saying so: opening the path
 * a second time would bring back the race this file exists to close.
 */
#include "h5_util.h"

#include "../core/fileutil.h"
#include "h5_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef MIEB_H5_PROBE_IN_OPEN
/* Measuring builds only (CMakeLists.txt, docs/BAD_INPUT.md): the forked probe of
   tests/programs/h5_probe.c, linked in by that build, runs in every open after the guard. */
mieb_status mieb_h5_probe_in_open(const char *path);
#endif

static void ident_of(const struct stat *sb, struct mieb_h5_ident *id)
{
    id->dev = (uint64_t)sb->st_dev;
    id->ino = (uint64_t)sb->st_ino;
    id->size = (int64_t)sb->st_size;
    id->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* H5Fopen of the file open as fd (*sb: its fstat), by the name /proc/self/fd/<fd>. */
static mieb_status h5_open_fd(int fd, const struct stat *sb, const char *path, hid_t *out)
{
    char name[40];
    struct stat ps;
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    if (stat(name, &ps) != 0)
        return mieb_fail(MIEB_ERR_IO, "%s: cannot open it for HDF5 through %s (is /proc mounted?): %s", path, name,
                         strerror(errno));
    if (!same_file(&ps, sb))
        return mieb_fail(MIEB_ERR_IO, "%s: cannot open it for HDF5 through %s: that names another file (is /proc "
                         "the proc file system?)", path, name);
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_sec2(fapl); /* mieb_h5_file_fd reads its descriptor */
    /* Strong close: closing the file also closes anything an error path left open. */
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 10, 7)
    H5Pset_file_locking(fapl, 0, 1); /* read-only access needs no lock (NFS, read-only media) */
#endif
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    if (f < 0) /* before H5Pclose, which clears the error stack */
        st = mieb_h5_failed_on_io()
                 ? mieb_h5_fail(MIEB_ERR_IO, "%s: cannot open as HDF5", path) /* the cause follows */
                 : mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: cannot open as HDF5 (not an HDF5 file, truncated or corrupt)",
                                path);
    H5Pclose(fapl);
    int hfd;
    struct stat hs;
    if (f >= 0 && (mieb_h5_file_fd(f, &hfd) != MIEB_OK || fstat(hfd, &hs) != 0 || !same_file(&hs, sb))) {
        H5Fclose(f);
        f = -1;
        st = mieb_fail(MIEB_ERR_IO, "%s: HDF5 did not open the file that was checked (through %s)", path, name);
    }
    if (f >= 0)
        *out = f;
    mieb_h5_unlock();
    return st;
}

/* Open path once; with want, it must still be that file; with guards, check it before HDF5 parses it. */
static mieb_status open_ro(const char *path, const struct mieb_h5_ident *want, bool guards, hid_t *out,
                           int64_t *file_size, struct mieb_h5_ident *ident)
{
    struct stat sb;
    struct mieb_h5_ident id;
    int fd;
    MIEB_TRY(mieb_open_regular(path, &fd));
    mieb_status st = MIEB_OK;
    if (fstat(fd, &sb) != 0)
        st = mieb_fail(MIEB_ERR_IO, "%s: %s", path, strerror(errno));
    if (st == MIEB_OK)
        ident_of(&sb, &id);
    if (st == MIEB_OK && want && memcmp(&id, want, sizeof id) != 0)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: the file was replaced or changed since it was checked; refused", path);
    if (st == MIEB_OK && guards)
        st = mieb_h5_check_global_heaps(fd, path, (int64_t)sb.st_size);
    if (st == MIEB_OK && guards)
        st = mieb_h5_check_root_header(fd, path, (int64_t)sb.st_size);
#ifdef MIEB_H5_PROBE_IN_OPEN
    char name[40];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd); /* the forked probe inherits fd */
    if (st == MIEB_OK && guards)
        st = mieb_h5_probe_in_open(name);
#endif
    if (st == MIEB_OK)
        st = h5_open_fd(fd, &sb, path, out);
    close(fd);
    if (st == MIEB_OK && file_size)
        *file_size = (int64_t)sb.st_size;
    if (st == MIEB_OK && ident)
        *ident = id;
    return st;
}

mieb_status mieb_h5_open_ro(const char *path, hid_t *out, int64_t *file_size)
{
    return open_ro(path, NULL, true, out, file_size, NULL);
}

mieb_status mieb_h5_open_ro_ident(const char *path, hid_t *out, int64_t *file_size, struct mieb_h5_ident *ident)
{
    return open_ro(path, NULL, true, out, file_size, ident);
}

mieb_status mieb_h5_reopen_ro(const char *path, const struct mieb_h5_ident *ident, hid_t *out)
{
    return open_ro(path, ident, false, out, NULL, NULL);
}
