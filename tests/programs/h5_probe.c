/*
 * h5_probe.c - libhdf5 opens and walks a file in a forked child under a time and a memory
 * limit; the file is trusted only when the child ends cleanly.
 *
 * The alternative to parsing HDF5's on-disk structures ourselves (h5_guard_headers.c,
 * h5_guard_attrs.c, h5_guard_heaps.c): whatever libhdf5 1.10 trips on while decoding the file
 * (dense attribute storage and shared messages included) happens in the child, which dies
 * (a crash), runs out of time (a loop) or out of address space (an allocation sized by a
 * corrupt header). What it cannot see: a read or write past a buffer that does not crash.
 * Release builds have no ASan, so such a file passes the probe and the parent then makes
 * the same out-of-bounds access: of the 21 fuzz inputs on which libhdf5 reads out of bounds
 * or loops, the probe caught 6, the in-process guard all 21, so the readers use the guard and
 * this probe only measures, outside the program (h5_probe.h; host/hdf5/h5_guard.h;
 * docs/BAD_INPUT.md gives the figures).
 *
 * fork() in a process with threads: the child may only use what no other thread held at
 * the fork. The parent forks holding the HDF5 lock (no other thread is inside HDF5), and
 * the child calls HDF5 directly, never mieb_h5_lock (a recursive mutex records its
 * owner's kernel thread id, which the child does not have), and ends with _exit.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "h5_probe.h"
#include "hdf5/h5_util.h"

enum { PROBE_OK = 0, PROBE_H5_ERROR = 10, PROBE_NO_MEMORY = 11 };

#define BLOCK_BYTES (16u << 20) /* data read in blocks of about this size */

struct probe_walk {
    bool read_data;
    bool h5_error; /* some HDF5 call failed: the parent's readers will say why */
    bool oom;
};

static herr_t resource_cb(unsigned n, const H5E_error2_t *err, void *oom)
{
    (void)n;
    if (err && err->maj_num == H5E_RESOURCE)
        *(bool *)oom = true;
    return 0;
}

static void note_error(struct probe_walk *w)
{
    w->h5_error = true;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, resource_cb, &w->oom);
    H5Eclear2(H5E_DEFAULT);
}

/* Read n elements of file type ft from obj into memory and free them again (vlen data too). */
static void read_values(struct probe_walk *w, hid_t obj, bool is_attr, hid_t ft, hid_t mspace, hid_t fspace,
                        uint64_t n)
{
    hid_t mt = H5Tget_native_type(ft, H5T_DIR_ASCEND);
    if (mt < 0) { /* no native form (a string, opaque): read as stored */
        H5Eclear2(H5E_DEFAULT);
        mt = H5Tcopy(ft);
    }
    size_t esz = mt >= 0 ? H5Tget_size(mt) : 0;
    void *buf = esz && n <= SIZE_MAX / esz ? calloc(n ? n : 1, esz) : NULL;
    herr_t rc = -1;
    if (buf)
        rc = is_attr ? H5Aread(obj, mt, buf) : H5Dread(obj, mt, mspace, fspace, H5P_DEFAULT, buf);
    if (!buf && esz)
        w->oom = true;
    if (rc < 0)
        note_error(w);
    else if (H5Tdetect_class(mt, H5T_VLEN) > 0 || H5Tis_variable_str(mt) > 0) {
        hid_t sp = mspace != H5S_ALL ? mspace : is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
        (void)H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
        if (sp != mspace)
            H5Sclose(sp);
    }
    free(buf);
    if (mt >= 0)
        H5Tclose(mt);
}

static herr_t walk_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    (void)info;
    struct probe_walk *w = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (np < 0 || t < 0)
        note_error(w);
    else
        read_values(w, a, true, t, H5S_ALL, H5S_ALL, (uint64_t)np);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return 0; /* on to the next one: a later attribute may be the one that crashes */
}

/* Every element of a dataset, in blocks of whole rows (its first dimension). */
static void walk_data(struct probe_walk *w, hid_t d)
{
    hid_t t = H5Dget_type(d), fs = H5Dget_space(d);
    hsize_t dims[H5S_MAX_RANK];
    int rank = fs >= 0 ? H5Sget_simple_extent_dims(fs, dims, NULL) : -1;
    size_t esz = t >= 0 ? H5Tget_size(t) : 0;
    if (rank < 0 || esz == 0) {
        note_error(w);
    } else if (rank == 0) {
        read_values(w, d, false, t, H5S_ALL, H5S_ALL, 1);
    } else {
        uint64_t row = esz, rows;
        for (int i = 1; i < rank; i++)
            row = dims[i] && row > UINT64_MAX / dims[i] ? UINT64_MAX : row * dims[i];
        rows = row == 0 ? (dims[0] ? dims[0] : 1) : row >= BLOCK_BYTES ? 1 : BLOCK_BYTES / row;
        for (hsize_t r = 0; r < dims[0] && !w->oom; r += rows) {
            hsize_t start[H5S_MAX_RANK] = {r}, count[H5S_MAX_RANK];
            memcpy(count, dims, sizeof count);
            count[0] = dims[0] - r < rows ? dims[0] - r : rows;
            hid_t ms = H5Screate_simple(rank, count, NULL);
            uint64_t n = count[0];
            for (int i = 1; i < rank; i++)
                n = dims[i] && n > UINT64_MAX / dims[i] ? UINT64_MAX : n * dims[i];
            if (ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0) {
                note_error(w);
            } else {
                read_values(w, d, false, t, ms, fs, n);
            }
            if (ms >= 0)
                H5Sclose(ms);
            if (w->h5_error)
                break;
        }
    }
    if (fs >= 0)
        H5Sclose(fs);
    if (t >= 0)
        H5Tclose(t);
}

#if H5_VERSION_GE(1, 12, 0)
static herr_t visit(hid_t root, const char *name, const H5O_info2_t *info, void *op)
#else
static herr_t visit(hid_t root, const char *name, const H5O_info_t *info, void *op)
#endif
{
    struct probe_walk *w = op;
    hid_t o = H5Oopen(root, name, H5P_DEFAULT);
    if (o < 0) {
        note_error(w);
        return 0;
    }
    if (H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, walk_attr, w) < 0)
        note_error(w);
    if (info->type == H5O_TYPE_DATASET) {
        hid_t dcpl = H5Dget_create_plist(o);
        if (dcpl < 0 || H5Pget_layout(dcpl) < 0 || H5Pget_nfilters(dcpl) < 0)
            note_error(w);
        if (dcpl >= 0)
            H5Pclose(dcpl);
        if (w->read_data)
            walk_data(w, o);
    }
    H5Oclose(o);
    return w->oom ? 1 : 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define PROBE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PROBE_ASAN 1
#endif
#endif

#ifndef PROBE_ASAN
/* Address space now, from /proc/self/statm (pages), so the limit is on what the walk adds. */
static uint64_t address_space_now(void)
{
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}
#endif

/* The walk itself: PROBE_OK, PROBE_H5_ERROR or PROBE_NO_MEMORY. */
static int walk_file(const char *path, bool read_data)
{
    struct probe_walk w = {read_data, false, false};
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 10, 7)
    H5Pset_file_locking(fapl, 0, 1);
#endif
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (f < 0) {
        note_error(&w);
    } else {
#if H5_VERSION_GE(1, 12, 0)
        herr_t rc = H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit, &w, H5O_INFO_BASIC);
#else
        herr_t rc = H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit, &w, H5O_INFO_BASIC);
#endif
        if (rc < 0)
            note_error(&w);
        H5Fclose(f);
    }
    H5Pclose(fapl);
    return w.oom ? PROBE_NO_MEMORY : w.h5_error ? PROBE_H5_ERROR : PROBE_OK;
}

static _Noreturn void child(const char *path, const struct mieb_h5_probe_opts *o)
{
    struct rlimit cpu = {o->timeout_s, o->timeout_s + 1};
    signal(SIGALRM, SIG_DFL);
    signal(SIGXCPU, SIG_DFL);
    setrlimit(RLIMIT_CPU, &cpu);
    alarm(o->timeout_s * 2); /* wall clock: a read that never returns */
#ifndef PROBE_ASAN /* ASan reserves terabytes of shadow address space: no RLIMIT_AS under it */
    if (o->mem_bytes) {
        uint64_t now = address_space_now();
        struct rlimit as = {now + o->mem_bytes, now + o->mem_bytes};
        setrlimit(RLIMIT_AS, &as);
    }
#endif
    _exit(walk_file(path, o->read_data));
}

mieb_status mieb_h5_probe_file(const char *path, const struct mieb_h5_probe_opts *o, enum mieb_h5_probe_verdict *v)
{
    int status = 0;
    *v = MIEB_H5_PROBE_CLEAN;
    fflush(NULL); /* nothing buffered is written twice */
    mieb_h5_lock(); /* no other thread is inside HDF5 while the child is made */
    pid_t pid = fork();
    if (pid == 0)
        child(path, o);
    mieb_h5_unlock();
    if (pid < 0)
        return mieb_fail(MIEB_ERR_IO, "%s: cannot start the HDF5 probe: %s", path, strerror(errno));
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return mieb_fail(MIEB_ERR_IO, "%s: waiting for the HDF5 probe: %s", path, strerror(errno));
    if (WIFEXITED(status) && (WEXITSTATUS(status) == PROBE_OK || WEXITSTATUS(status) == PROBE_H5_ERROR)) {
        *v = WEXITSTATUS(status) == PROBE_OK ? MIEB_H5_PROBE_CLEAN : MIEB_H5_PROBE_H5_ERROR;
        return MIEB_OK; /* an HDF5 error is reported by the reader that meets it */
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == PROBE_NO_MEMORY) {
        *v = MIEB_H5_PROBE_MEMORY;
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: libhdf5 needs more than %llu MiB to read this file; corrupt?", path,
                         (unsigned long long)(o->mem_bytes >> 20));
    }
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGALRM || WTERMSIG(status) == SIGXCPU)) {
        *v = MIEB_H5_PROBE_TIMEOUT;
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: libhdf5 did not finish reading this file in %u s (a loop in a "
                         "corrupt structure?)", path, o->timeout_s);
    }
    *v = MIEB_H5_PROBE_CRASH;
    if (WIFSIGNALED(status))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: libhdf5 crashed reading this file (%s); corrupt", path,
                         strsignal(WTERMSIG(status)));
    return mieb_fail(MIEB_ERR_BAD_DATA, "%s: libhdf5 failed reading this file (exit status %d); corrupt", path,
                     WEXITSTATUS(status));
}

enum mieb_h5_probe_verdict mieb_h5_probe_walk_here(const char *path, bool read_data)
{
    mieb_h5_lock();
    int r = walk_file(path, read_data);
    mieb_h5_unlock();
    return r == PROBE_OK ? MIEB_H5_PROBE_CLEAN : r == PROBE_H5_ERROR ? MIEB_H5_PROBE_H5_ERROR : MIEB_H5_PROBE_MEMORY;
}

#ifdef MIEB_H5_PROBE_IN_OPEN /* 1: the metadata, 2: the data too (CMakeLists.txt) */
mieb_status mieb_h5_probe_in_open(const char *path)
{
    struct mieb_h5_probe_opts po = {10, 1ull << 30, MIEB_H5_PROBE_IN_OPEN == 2};
    enum mieb_h5_probe_verdict pv;
    return mieb_h5_probe_file(path, &po, &pv);
}
#endif
