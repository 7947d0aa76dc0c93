/*
 * fault_inject.c - LD_PRELOAD interposer that makes the C library fail on demand, for
 * tests/py/test_faults.py: allocation failures, short reads and read errors on chosen
 * files, a full disk on chosen files. Built as libmieb_fault.so (tests/CMakeLists.txt),
 * never in sanitizer builds (ASan must come first in the library list and owns malloc).
 *
 * Counting starts when main() starts (everything before is the loader's and the libraries'
 * constructors). Environment, all optional:
 *   MIEB_FAULT_ALLOC=N[+]    the Nth malloc/calloc/realloc/aligned allocation returns NULL
 *                            (ENOMEM); with '+' every one from the Nth on (memory stays full)
 *   MIEB_FAULT_PATH=S        files whose path contains S are "watched" (open/openat/rename; a
 *                            descriptor opened as /proc/self/fd/N is watched when N is)
 *   MIEB_FAULT_READ=N:M[+]   the Nth read/pread on a watched file fails in mode M:
 *                            eio (-1, EIO) or short (returns at most half, at least 1 byte,
 *                            which a correct reader must retry) or block (the call never
 *                            returns, signals or not: a hung network file system);
 *                            '+': that call and all later
 *   MIEB_FAULT_BLOCKED=F     with :block, create the file F when the read starts blocking
 *   MIEB_FAULT_READ_RATE=B   every read/pread on a watched file takes n / B seconds (a slow
 *                            disk or network file system, B bytes per second); the wait is
 *                            not cut short by signals, as a disk read is not
 *   MIEB_FAULT_SLOW_MARK=F   with MIEB_FAULT_READ_RATE, create the file F when a read of at
 *                            least 1 MiB starts (a block of embeddings, not HDF5's metadata)
 *   MIEB_FAULT_WRITE=N[+]    the Nth write-side call on a watched file (write, pwrite, fsync,
 *                            fdatasync, rename) fails with ENOSPC; a write first writes half of
 *                            its bytes, as a disk that fills up mid-write does; '+': all later
 *   MIEB_FAULT_SWAP=N[:copy] just before the Nth read-only open of a watched path (open, openat;
 *                            counted over all watched paths), a FIFO is renamed over that path (a
 *                            file swapped between a program's check of it and its open); with
 *                            :copy, a copy of the file instead (same bytes, another file)
 *   MIEB_FAULT_TRACE=1       print a stack trace on stderr where each fault is injected (debugging)
 *   MIEB_FAULT_REPORT=F      at exit, write "allocs=A reads=R writes=W opens=O injected=I site=S"
 *                            to F (opens: read-only opens of watched paths)
 *                            (calls counted since main, faults injected, and the library whose
 *                            code asked for the first failed allocation: the first stack frame
 *                            outside libc and this interposer, e.g. mieb-eval, libhdf5_serial.so.103)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define MAX_FD 65536

static atomic_int armed; /* set when main() starts */
static atomic_long n_alloc, n_read, n_write, n_open, n_injected;
static long alloc_at = -1, read_at = -1, write_at = -1, swap_at = -1;
static bool swap_copy;
static bool alloc_persist, read_persist, write_persist, read_short, read_block;
static const char *watch;
static atomic_bool watched[MAX_FD];
static char site[128] = "-";
static bool trace;
static double read_rate; /* bytes per second of a watched file's reads; 0: at full speed */

/* "N", "N+", "N:mode", "N:mode+" */
static long parse_spec(const char *s, bool *persist, const char **mode)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    long n = strtol(s, &end, 10);
    if (mode)
        *mode = (end && *end == ':') ? end + 1 : "";
    *persist = strchr(s, '+') != NULL;
    return n > 0 ? n : -1;
}

__attribute__((constructor)) static void fault_init(void)
{
    const char *mode = "";
    alloc_at = parse_spec(getenv("MIEB_FAULT_ALLOC"), &alloc_persist, NULL);
    read_at = parse_spec(getenv("MIEB_FAULT_READ"), &read_persist, &mode);
    read_short = strncmp(mode, "short", 5) == 0;
    read_block = strncmp(mode, "block", 5) == 0;
    write_at = parse_spec(getenv("MIEB_FAULT_WRITE"), &write_persist, NULL);
    bool swap_persist;
    const char *swap_mode = "";
    swap_at = parse_spec(getenv("MIEB_FAULT_SWAP"), &swap_persist, &swap_mode);
    swap_copy = strncmp(swap_mode, "copy", 4) == 0;
    trace = getenv("MIEB_FAULT_TRACE") != NULL;
    const char *rate = getenv("MIEB_FAULT_READ_RATE");
    read_rate = rate ? strtod(rate, NULL) : 0.0;
    watch = getenv("MIEB_FAULT_PATH");
    if (watch && !*watch)
        watch = NULL;
    void *prime[2];
    backtrace(prime, 2); /* loads libgcc_s now, not inside a failing allocation */
}

static void write_report(void);

/* Name the library that asked for the first failed allocation (reported at once: a crash
   inside that library would skip the report at exit). */
static void note_site(void)
{
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&once))
        return;
    void *fr[24];
    int n = backtrace(fr, 24);
    Dl_info self, libc, info;
    dladdr((void *)note_site, &self);
    dladdr((void *)strstr, &libc);
    for (int i = 1; i < n; i++) {
        if (!dladdr(fr[i], &info) || !info.dli_fname || info.dli_fbase == self.dli_fbase ||
            info.dli_fbase == libc.dli_fbase)
            continue;
        const char *b = strrchr(info.dli_fname, '/');
        snprintf(site, sizeof site, "%s", b ? b + 1 : info.dli_fname);
        break;
    }
    write_report();
}

/* Does call number n (1-based) of a counter armed at `at` fail? 0: no, 1: the Nth, 2: a later one. */
static int hit(long n, long at, bool persist)
{
    if (at < 0 || !(n == at || (persist && n > at)))
        return 0;
    atomic_fetch_add(&n_injected, 1);
    if (trace) {
        void *fr[32];
        backtrace_symbols_fd(fr, backtrace(fr, 32), 2);
    }
    return n == at ? 1 : 2;
}

static bool alloc_fails(void)
{
    if (!atomic_load_explicit(&armed, memory_order_relaxed))
        return false;
    long n = atomic_fetch_add(&n_alloc, 1) + 1;
    if (!hit(n, alloc_at, alloc_persist))
        return false;
    note_site();
    errno = ENOMEM;
    return true;
}

void *malloc(size_t n) { return alloc_fails() ? NULL : __libc_malloc(n); }
void *calloc(size_t a, size_t b) { return alloc_fails() ? NULL : __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { return alloc_fails() ? NULL : __libc_realloc(p, n); }
void *memalign(size_t al, size_t n) { return alloc_fails() ? NULL : __libc_memalign(al, n); }
void *aligned_alloc(size_t al, size_t n) { return alloc_fails() ? NULL : __libc_memalign(al, n); }
int posix_memalign(void **out, size_t al, size_t n)
{
    if (alloc_fails())
        return ENOMEM;
    void *p = __libc_memalign(al, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

/* ---- main() marks the start ---- */

typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;
static int wrapped_main(int argc, char **argv, char **envp)
{
    atomic_store(&armed, 1);
    return real_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
    int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
        (int (*)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *))dlsym(
            RTLD_NEXT, "__libc_start_main");
    real_main = main;
    return real(wrapped_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- files ---- */

#define REAL(ret, name, ...)                                                  \
    static ret (*real_##name)(__VA_ARGS__);                                   \
    if (!real_##name)                                                         \
        real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

static bool path_watched(const char *path) { return watch && path && strstr(path, watch); }

/* Is fd (open, or about to be) watched? An open of "/proc/self/fd/N" reopens N's file: watched as N is. */
static bool reopens_watched(const char *path)
{
    static const char proc[] = "/proc/self/fd/";
    if (!path || strncmp(path, proc, sizeof proc - 1) != 0)
        return false;
    char *end = NULL;
    long n = strtol(path + sizeof proc - 1, &end, 10);
    return end && *end == '\0' && n >= 0 && n < MAX_FD && atomic_load(&watched[n]);
}

static int track(int fd, const char *path)
{
    if (fd >= 0 && fd < MAX_FD)
        atomic_store(&watched[fd], path_watched(path) || reopens_watched(path));
    return fd;
}

static bool fd_watched(int fd)
{
    return fd >= 0 && fd < MAX_FD && atomic_load_explicit(&watched[fd], memory_order_relaxed) &&
           atomic_load_explicit(&armed, memory_order_relaxed);
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* Copy the file at path (relative to dir) to tmp: raw system calls, nothing here is counted. */
static bool copy_file(int dir, const char *path, const char *tmp)
{
    int in = (int)syscall(SYS_openat, dir, path, O_RDONLY | O_CLOEXEC);
    int out = (int)syscall(SYS_openat, dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    bool ok = in >= 0 && out >= 0;
    char buf[65536];
    for (long n; ok && (n = syscall(SYS_read, in, buf, sizeof buf)) != 0;)
        ok = n > 0 && syscall(SYS_write, out, buf, (size_t)n) == n;
    if (in >= 0)
        syscall(SYS_close, in);
    if (out >= 0)
        syscall(SYS_close, out);
    return ok;
}

/* Before a read-only open of a watched path: count it, and on the chosen one rename a fresh FIFO
   (or a copy of the file) over the path, relative to dir as the open resolves it. Raw system
   calls: the interposed rename would count as a write. */
static void before_open(int dir, const char *path, int flags)
{
    if ((flags & O_ACCMODE) != O_RDONLY || !path_watched(path) || !atomic_load_explicit(&armed, memory_order_relaxed))
        return;
    long k = atomic_fetch_add(&n_open, 1) + 1;
    if (!hit(k, swap_at, false))
        return;
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.fault-swap", path) >= (int)sizeof tmp ||
        !(swap_copy ? copy_file(dir, path, tmp) : syscall(SYS_mknodat, dir, tmp, S_IFIFO | 0644, 0) == 0) ||
        syscall(SYS_renameat, dir, tmp, dir, path) != 0)
        fprintf(stderr, "fault_inject: cannot put a %s in place of %s\n", swap_copy ? "copy" : "FIFO", path);
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    before_open(AT_FDCWD, path, flags);
    REAL(int, open, const char *, int, ...);
    return track(real_open(path, flags, m), path);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    before_open(AT_FDCWD, path, flags);
    REAL(int, open64, const char *, int, ...);
    return track(real_open64(path, flags, m), path);
}

int openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    before_open(dir, path, flags);
    REAL(int, openat, int, const char *, int, ...);
    return track(real_openat(dir, path, flags, m), path);
}

int openat64(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    before_open(dir, path, flags);
    REAL(int, openat64, int, const char *, int, ...);
    return track(real_openat64(dir, path, flags, m), path);
}

int close(int fd)
{
    REAL(int, close, int);
    if (fd >= 0 && fd < MAX_FD)
        atomic_store(&watched[fd], false);
    return real_close(fd);
}

/* Create the file named by the environment variable `var`, if set (async-signal-safe calls). */
static void mark(const char *var)
{
    const char *f = getenv(var);
    if (f && *f) {
        int fd = (int)syscall(SYS_openat, AT_FDCWD, f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0)
            syscall(SYS_close, fd);
    }
}

/* A read that never returns: signal handlers run (pause returns) and it waits again. */
static void block_forever(void)
{
    mark("MIEB_FAULT_BLOCKED");
    for (;;)
        pause();
}

/* A read of n bytes from a slow device: n / read_rate seconds, resumed after a signal. */
static void slow_read(size_t n)
{
    if (n >= ((size_t)1 << 20))
        mark("MIEB_FAULT_SLOW_MARK");
    double s = (double)n / read_rate;
    struct timespec left = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

/* A read on a watched file: -1 (EIO), a short count, a read that blocks, or a plain read. */
static bool read_fault(int fd, size_t *n)
{
    if (!fd_watched(fd))
        return false;
    if (read_rate > 0) {
        int e = errno;
        slow_read(*n);
        errno = e;
    }
    long k = atomic_fetch_add(&n_read, 1) + 1;
    if (read_short && *n < 2)
        return false; /* nothing shorter to return */
    if (!hit(k, read_at, read_persist))
        return false;
    if (read_short) {
        *n /= 2;
        return false; /* do the read, of fewer bytes */
    }
    if (read_block)
        block_forever();
    errno = EIO;
    return true;
}

ssize_t read(int fd, void *buf, size_t n)
{
    REAL(ssize_t, read, int, void *, size_t);
    if (read_fault(fd, &n))
        return -1;
    return real_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pread, int, void *, size_t, off_t);
    if (read_fault(fd, &n))
        return -1;
    return real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pread64, int, void *, size_t, off_t);
    if (read_fault(fd, &n))
        return -1;
    return real_pread64(fd, buf, n, off);
}

/* A write-side call on a watched file: 0 ok, 1 the first failing call, 2 a later one. */
static int write_fault(bool watched_call)
{
    if (!watched_call || !atomic_load_explicit(&armed, memory_order_relaxed))
        return 0;
    long k = atomic_fetch_add(&n_write, 1) + 1;
    return hit(k, write_at, write_persist);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(ssize_t, write, int, const void *, size_t);
    int f = write_fault(fd_watched(fd));
    if (f == 1 && n > 1) /* the disk fills up mid-write: part of it lands, the rest is refused */
        return real_write(fd, buf, n / 2);
    if (f) {
        errno = ENOSPC;
        return -1;
    }
    return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
    if (write_fault(fd_watched(fd))) {
        errno = ENOSPC;
        return -1;
    }
    return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
    if (write_fault(fd_watched(fd))) {
        errno = ENOSPC;
        return -1;
    }
    return real_pwrite64(fd, buf, n, off);
}

int fsync(int fd)
{
    REAL(int, fsync, int);
    if (write_fault(fd_watched(fd))) {
        errno = ENOSPC;
        return -1;
    }
    return real_fsync(fd);
}

int fdatasync(int fd)
{
    REAL(int, fdatasync, int);
    if (write_fault(fd_watched(fd))) {
        errno = ENOSPC;
        return -1;
    }
    return real_fdatasync(fd);
}

int rename(const char *from, const char *to)
{
    REAL(int, rename, const char *, const char *);
    if (write_fault(path_watched(from) || path_watched(to))) {
        errno = ENOSPC;
        return -1;
    }
    return real_rename(from, to);
}

/* ---- report ---- */

static void write_report(void)
{
    const char *f = getenv("MIEB_FAULT_REPORT");
    if (!f || !*f)
        return;
    char buf[400];
    int n = snprintf(buf, sizeof buf, "allocs=%ld reads=%ld writes=%ld opens=%ld injected=%ld site=%s\n",
                     atomic_load(&n_alloc), atomic_load(&n_read), atomic_load(&n_write), atomic_load(&n_open),
                     atomic_load(&n_injected), site);
    /* raw system calls: nothing here may allocate or be counted */
    int fd = (int)syscall(SYS_openat, AT_FDCWD, f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (syscall(SYS_write, fd, buf, (size_t)n) < 0)
            n = 0;
        syscall(SYS_close, fd);
    }
}

__attribute__((destructor)) static void fault_report(void) { write_report(); }
