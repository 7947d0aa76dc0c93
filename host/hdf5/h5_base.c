/* h5_base.c - the bottom of the HDF5 files (host/hdf5, host/io): the library's one-time set-up, the
   process-wide lock, HDF5 failures turned into messages, HDF5's descriptor of an open file,
   and the UTF-8 check of strings read (see h5_base.h). */
#include "h5_base.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t h5_mutex;

/* External links are never followed, wherever HDF5 meets one: their class is replaced by
   one whose traversal fails, so no path can make HDF5 open another file (a FIFO there
   blocks the open). The link can still be listed and its target read, for messages. */
static hid_t elink_refuse(const char *name, hid_t cur_group, const void *val, size_t size, hid_t lapl, hid_t dxpl)
{
    (void)name, (void)cur_group, (void)val, (void)size, (void)lapl, (void)dxpl;
    return -1;
}

static ssize_t elink_query(const char *name, const void *val, size_t size, void *buf, size_t buf_size)
{
    (void)name;
    if (buf)
        memcpy(buf, val, size < buf_size ? size : buf_size);
    return (ssize_t)size;
}

static void refuse_external_links(void)
{
    static const H5L_class_t cls = {H5L_LINK_CLASS_T_VERS, H5L_TYPE_EXTERNAL, "external link (not followed)",
                                    NULL, NULL, NULL, elink_refuse, NULL, elink_query};
    (void)H5Lregister(&cls);
}

static void h5_init_once(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    /* Recursive: public readers lock, then call helpers that lock again. */
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&h5_mutex, &a);
    pthread_mutexattr_destroy(&a);
    /* No H5_term_library at exit: it tears down HDF5's global state with more allocations
       and crashes when memory is exhausted (found by tests/py/test_faults.py). Every file is
       closed explicitly (writers close, then rename), so there is nothing left to flush. */
    H5dont_atexit();
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* we report errors ourselves */
    refuse_external_links();
}

void mieb_h5_init(void) { pthread_once(&h5_once, h5_init_once); }

void mieb_h5_lock(void)
{
    /* Debian's libhdf5 is built thread-safe: error stacks and their printing are per
       thread, so each thread (the embedding streamer's too) silences its own once. */
    static _Thread_local bool quiet;
    mieb_h5_init();
    pthread_mutex_lock(&h5_mutex);
    if (!quiet) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        quiet = true;
    }
}

void mieb_h5_unlock(void) { pthread_mutex_unlock(&h5_mutex); }

struct walk_ctx {
    char *buf;
    size_t n;
    bool oom; /* some entry says an allocation failed */
    bool io;  /* some entry says a read or write of the file failed */
};

/* Copy HDF5's message src into buf (n bytes), "/proc/self/fd/N" written as "(this file)":
   inputs are opened by HDF5 through that name (h5_open.c), a name that means nothing to the
   user, and the message it ends up in already starts with the file's own path. */
static void scrub_fd_name(char *buf, size_t n, const char *src)
{
    static const char fdname[] = "/proc/self/fd/", repl[] = "(this file)";
    size_t o = 0;
    while (*src && o + 1 < n) {
        if (strncmp(src, fdname, sizeof fdname - 1) == 0 && src[sizeof fdname - 1] >= '0' &&
            src[sizeof fdname - 1] <= '9') {
            src += sizeof fdname - 1;
            while (*src >= '0' && *src <= '9')
                src++;
            for (const char *r = repl; *r && o + 1 < n; r++)
                buf[o++] = *r;
            continue;
        }
        buf[o++] = *src++;
    }
    buf[o] = '\0';
}

static herr_t walk_cb(unsigned n, const H5E_error2_t *err, void *data)
{
    struct walk_ctx *w = data;
    if (n == 0 && err && err->desc && w->n) { /* walking upward: entry 0 is the innermost error */
        scrub_fd_name(w->buf, w->n, err->desc);
        for (char *c = w->buf; *c; c++) /* one line per message (sec2 puts a ctime() date in it) */
            if (*c == '\n')
                *c = ' ';
    }
    if (err && err->maj_num == H5E_RESOURCE)
        w->oom = true;
    if (n == 0 && err && err->maj_num == H5E_IO) /* the root cause, not a wrapper (corrupt deflate data) */
        w->io = true;
    return 0;
}

/* Copy the innermost message of HDF5's current error stack into buf ("" when empty). */
static void mieb_h5_last_error(char *buf, size_t n)
{
    struct walk_ctx w = {buf, n, false, false};
    if (!n)
        return;
    buf[0] = '\0';
    mieb_h5_lock();
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, &w);
    mieb_h5_unlock();
}

/* What made the HDF5 call that just failed fail: out of memory (H5E_RESOURCE on its error
   stack), a failed read or write of the file (H5E_IO), or neither (the file's content). */
static struct walk_ctx h5_stack_cause(void)
{
    struct walk_ctx w = {NULL, 0, false, false};
    mieb_h5_lock();
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, &w);
    mieb_h5_unlock();
    return w;
}

/* HDF5 leaves errors on this thread's stack: a call that answered "no" may have failed. */

mieb_status mieb_h5_fail(mieb_status st, const char *fmt, ...)
{
    char msg[1536], h5[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mieb_h5_last_error(h5, sizeof h5);
    struct walk_ctx cause = h5_stack_cause();
    mieb_h5_lock();
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    /* not the file's content at fault: say so, whatever the caller guessed */
    if (cause.oom)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory inside HDF5 (HDF5: %s)", msg,
                         h5[0] ? h5 : "allocation failed");
    if (cause.io)
        st = MIEB_ERR_IO;
    if (h5[0])
        return mieb_fail(st, "%s (HDF5: %s)", msg, h5);
    return mieb_fail(st, "%s", msg);
}

bool mieb_h5_failed_on_io(void)
{
    struct walk_ctx cause = h5_stack_cause();
    return cause.io || cause.oom;
}


mieb_status mieb_h5_file_fd(hid_t file, int *fd)
{
    void *handle = NULL;
    mieb_status st = MIEB_ERR_UNSUPPORTED;
    mieb_h5_lock();
    hid_t fapl = H5Fget_access_plist(file);
    if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(file, fapl, &handle) >= 0 && handle) {
        *fd = *(const int *)handle;
        st = MIEB_OK;
    }
    if (fapl >= 0)
        H5Pclose(fapl);
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    return st;
}

bool mieb_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t n;
        unsigned cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            n = 1, cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2, cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3, cp = c & 0x07;
        } else {
            return false;
        }
        if (i + n >= len) /* continuation bytes run past the end */
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        /* reject overlong forms, UTF-16 surrogates and code points above U+10FFFF */
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n + 1;
    }
    return true;
}
