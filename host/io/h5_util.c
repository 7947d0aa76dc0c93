/* h5_util.c - HDF5 lock, error capture, opening, attributes and size sanity checks. */
#include "h5_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t h5_mutex;

static void h5_init_once(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    /* Recursive: public readers lock, then call helpers that lock again. */
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&h5_mutex, &a);
    pthread_mutexattr_destroy(&a);
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* we report errors ourselves */
}

void mieb_h5_init(void) { pthread_once(&h5_once, h5_init_once); }

void mieb_h5_lock(void)
{
    mieb_h5_init();
    pthread_mutex_lock(&h5_mutex);
}

void mieb_h5_unlock(void) { pthread_mutex_unlock(&h5_mutex); }

struct walk_ctx {
    char *buf;
    size_t n;
};

static herr_t walk_cb(unsigned n, const H5E_error2_t *err, void *data)
{
    struct walk_ctx *w = data;
    if (n == 0 && err && err->desc) /* walking upward: entry 0 is the innermost error */
        snprintf(w->buf, w->n, "%s", err->desc);
    return 0;
}

void mieb_h5_last_error(char *buf, size_t n)
{
    struct walk_ctx w = {buf, n};
    if (!n)
        return;
    buf[0] = '\0';
    mieb_h5_lock();
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, &w);
    mieb_h5_unlock();
}

mieb_status mieb_h5_fail(mieb_status st, const char *fmt, ...)
{
    char msg[1536], h5[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mieb_h5_last_error(h5, sizeof h5);
    mieb_h5_lock();
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    if (h5[0])
        return mieb_fail(st, "%s (HDF5: %s)", msg, h5);
    return mieb_fail(st, "%s", msg);
}

static mieb_status open_ro(const char *path, hid_t *out, int64_t *file_size, bool check_heaps)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return mieb_fail(MIEB_ERR_NOT_FOUND, "%s: no such file", path);
        return mieb_fail(MIEB_ERR_IO, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(sb.st_mode))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: not a regular file", path);
    if (access(path, R_OK) != 0)
        return mieb_fail(MIEB_ERR_IO, "%s: %s", path, strerror(errno));
    if (check_heaps)
        MIEB_TRY(mieb_h5_check_global_heaps(path, (int64_t)sb.st_size));

    mieb_h5_lock();
    mieb_status st = MIEB_OK;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* Strong close: closing the file also closes anything an error path left open. */
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 10, 7)
    H5Pset_file_locking(fapl, 0, 1); /* read-only access needs no lock (NFS, read-only media) */
#endif
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f < 0) {
        st = mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: cannot open as HDF5 (not an HDF5 file, truncated or corrupt)",
                          path);
    } else {
        *out = f;
        if (file_size)
            *file_size = (int64_t)sb.st_size;
    }
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_open_ro(const char *path, hid_t *out, int64_t *file_size)
{
    return open_ro(path, out, file_size, true);
}

mieb_status mieb_h5_reopen_ro(const char *path, hid_t *out) { return open_ro(path, out, NULL, false); }

bool mieb_h5_exists(hid_t loc, const char *path)
{
    char buf[1024];
    bool ok = true;
    size_t len = strlen(path);
    if (len >= sizeof buf)
        return false;
    memcpy(buf, path, len + 1);
    mieb_h5_lock();
    /* H5Lexists fails (not false) when an intermediate group is missing: check each prefix. */
    for (size_t i = 1; i <= len && ok; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            ok = H5Lexists(loc, buf, H5P_DEFAULT) > 0;
            if (ok && c == '/')
                ok = H5Oexists_by_name(loc, buf, H5P_DEFAULT) > 0;
            buf[i] = c;
        }
    }
    if (ok)
        ok = H5Oexists_by_name(loc, path, H5P_DEFAULT) > 0;
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    return ok;
}

bool mieb_h5_is_dataset(hid_t loc, const char *path)
{
    bool ok = false;
    if (!mieb_h5_exists(loc, path))
        return false;
    mieb_h5_lock();
    hid_t o = H5Oopen(loc, path, H5P_DEFAULT);
    if (o >= 0) {
        ok = H5Iget_type(o) == H5I_DATASET;
        H5Oclose(o);
    }
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    return ok;
}

bool mieb_h5_attr_exists(hid_t obj, const char *name)
{
    mieb_h5_lock();
    bool ok = H5Aexists(obj, name) > 0;
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    return ok;
}

void mieb_h5_type_name(hid_t type, char *buf, size_t n)
{
    mieb_h5_lock();
    H5T_class_t c = H5Tget_class(type);
    size_t sz = H5Tget_size(type);
    switch (c) {
    case H5T_INTEGER:
        snprintf(buf, n, "%sint%zu", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", sz * 8);
        break;
    case H5T_FLOAT: snprintf(buf, n, "float%zu", sz * 8); break;
    case H5T_STRING: snprintf(buf, n, "string"); break;
    case H5T_COMPOUND: snprintf(buf, n, "compound"); break;
    case H5T_ENUM: snprintf(buf, n, "enum"); break;
    case H5T_VLEN: snprintf(buf, n, "vlen"); break;
    case H5T_ARRAY: snprintf(buf, n, "array"); break;
    case H5T_OPAQUE: snprintf(buf, n, "opaque"); break;
    case H5T_REFERENCE: snprintf(buf, n, "reference"); break;
    case H5T_BITFIELD: snprintf(buf, n, "bitfield"); break;
    default: snprintf(buf, n, "unknown type"); break;
    }
    mieb_h5_unlock();
}

/* Open attribute `name` and check it holds exactly one element. */
static mieb_status attr_open1(hid_t obj, const char *name, const char *fname, const char *objpath, hid_t *attr)
{
    if (!mieb_h5_attr_exists(obj, name))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: missing attribute '%s'", fname, objpath, name);
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0)
        return mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot open attribute '%s'", fname, objpath, name);
    hid_t sp = H5Aget_space(a);
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sp >= 0)
        H5Sclose(sp);
    if (np != 1) {
        H5Aclose(a);
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: attribute '%s' must be a single value, has %lld", fname,
                         objpath, name, (long long)np);
    }
    *attr = a;
    return MIEB_OK;
}

mieb_status mieb_h5_attr_str(hid_t obj, const char *name, const char *fname, const char *objpath, char **out)
{
    hid_t a = -1, ft = -1, mt = -1;
    mieb_status st;
    char tn[32];
    mieb_h5_lock();
    if ((st = attr_open1(obj, name, fname, objpath, &a)) != MIEB_OK)
        goto done;
    ft = H5Aget_type(a);
    if (H5Tget_class(ft) != H5T_STRING) {
        mieb_h5_type_name(ft, tn, sizeof tn);
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: attribute '%s' has type %s, expected a string", fname, objpath,
                       name, tn);
        goto done;
    }
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_cset(mt, H5Tget_cset(ft));
    if (H5Tis_variable_str(ft) > 0) {
        char *s = NULL;
        H5Tset_size(mt, H5T_VARIABLE);
        if (H5Aread(a, mt, &s) < 0) {
            st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read attribute '%s'", fname, objpath, name);
            goto done;
        }
        *out = strdup(s ? s : "");
        H5free_memory(s);
    } else {
        size_t sz = H5Tget_size(ft);
        char *s = calloc(sz + 1, 1);
        if (!s) {
            st = mieb_fail(MIEB_ERR_OOM, "%s: attribute '%s': out of memory", fname, name);
            goto done;
        }
        H5Tset_size(mt, sz);
        H5Tset_strpad(mt, H5Tget_strpad(ft));
        if (H5Aread(a, mt, s) < 0) {
            free(s);
            st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read attribute '%s'", fname, objpath, name);
            goto done;
        }
        if (H5Tget_strpad(ft) == H5T_STR_SPACEPAD)
            for (size_t i = sz; i > 0 && s[i - 1] == ' '; i--)
                s[i - 1] = '\0';
        *out = s;
    }
    if (!*out) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: attribute '%s': out of memory", fname, name);
    } else if (!mieb_utf8_valid(*out, strlen(*out))) {
        /* it would end up in messages and result files; refuse it rather than echo bad bytes */
        free(*out);
        *out = NULL;
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: attribute '%s' is not valid UTF-8", fname, objpath, name);
    }
done:
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    mieb_h5_unlock();
    return st;
}

/* Shared by the numeric attribute readers: allow_float selects float64 vs integer-only. */
static mieb_status attr_num(hid_t obj, const char *name, const char *fname, const char *objpath, bool allow_float,
                            int64_t *i_out, double *d_out)
{
    hid_t a = -1, ft = -1;
    mieb_status st;
    char tn[32];
    mieb_h5_lock();
    if ((st = attr_open1(obj, name, fname, objpath, &a)) != MIEB_OK)
        goto done;
    ft = H5Aget_type(a);
    H5T_class_t c = H5Tget_class(ft);
    if (c != H5T_INTEGER && !(allow_float && c == H5T_FLOAT)) {
        mieb_h5_type_name(ft, tn, sizeof tn);
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: attribute '%s' has type %s, expected %s", fname, objpath, name,
                       tn, allow_float ? "a number" : "an integer");
        goto done;
    }
    herr_t rc = i_out ? H5Aread(a, H5T_NATIVE_INT64, i_out) : H5Aread(a, H5T_NATIVE_DOUBLE, d_out);
    if (rc < 0)
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read attribute '%s'", fname, objpath, name);
done:
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_attr_i64(hid_t obj, const char *name, const char *fname, const char *objpath, int64_t *out)
{
    return attr_num(obj, name, fname, objpath, false, out, NULL);
}

mieb_status mieb_h5_attr_f64(hid_t obj, const char *name, const char *fname, const char *objpath, double *out)
{
    return attr_num(obj, name, fname, objpath, true, NULL, out);
}

#define MIEB_H5_MAX_CHUNK_BYTES (512LL << 20)
#define MIEB_H5_MAX_RATIO 1100LL /* deflate cannot compress better than about 1032:1 */

mieb_status mieb_h5_check_plausible(hid_t dset, const char *fname, const char *dpath, int64_t file_size)
{
    hsize_t dims[H5S_MAX_RANK], cdims[H5S_MAX_RANK];
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    hid_t sp = H5Dget_space(dset), ty = H5Dget_type(dset), dcpl = H5Dget_create_plist(dset);
    int rank = sp >= 0 ? H5Sget_simple_extent_dims(sp, dims, NULL) : -1;
    size_t esz = ty >= 0 ? H5Tget_size(ty) : 0;
    if (rank < 0 || esz == 0 || dcpl < 0) {
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read the dataset's shape/type", fname, dpath);
        goto done;
    }
    uint64_t bytes = esz, cbytes = esz;
    for (int i = 0; i < rank; i++) {
        if (dims[i] > (hsize_t)INT64_MAX || __builtin_mul_overflow(bytes, (uint64_t)dims[i], &bytes) ||
            bytes > (uint64_t)INT64_MAX) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: declared size overflows (dimension %d is %llu)", fname,
                           dpath, i, (unsigned long long)dims[i]);
            goto done;
        }
    }
    if (H5Pget_external_count(dcpl) > 0) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: external storage is not supported", fname, dpath);
        goto done;
    }
    uint64_t fsz = file_size > 0 ? (uint64_t)file_size : 0, limit = fsz;
    switch (H5Pget_layout(dcpl)) {
    case H5D_COMPACT: limit = 65536; break;
    case H5D_CONTIGUOUS: break;
    case H5D_CHUNKED:
        if (H5Pget_chunk(dcpl, rank, cdims) != rank) {
            st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read the chunk shape", fname, dpath);
            goto done;
        }
        for (int i = 0; i < rank; i++)
            if (__builtin_mul_overflow(cbytes, (uint64_t)cdims[i], &cbytes))
                cbytes = UINT64_MAX;
        if (cbytes > (uint64_t)MIEB_H5_MAX_CHUNK_BYTES) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: chunks of %llu bytes are too large (limit %lld)", fname,
                           dpath, (unsigned long long)cbytes, MIEB_H5_MAX_CHUNK_BYTES);
            goto done;
        }
        if (H5Pget_nfilters(dcpl) > 0)
            limit = fsz * MIEB_H5_MAX_RATIO + cbytes;
        break;
    default:
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: unsupported storage layout (virtual dataset?)", fname, dpath);
        goto done;
    }
    if (bytes > limit)
        st = mieb_fail(MIEB_ERR_BAD_DATA,
                       "%s: %s: declared size (%llu bytes) cannot be held by this file (%lld bytes on disk); "
                       "corrupt or truncated",
                       fname, dpath, (unsigned long long)bytes, (long long)file_size);
done:
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_dset_open(hid_t file, const char *fname, const char *dpath, int min_rank, int max_rank,
                              int64_t file_size, hid_t *dset, int *rank, int64_t dims[2])
{
    hsize_t d[H5S_MAX_RANK];
    mieb_status st = MIEB_OK;
    if (!mieb_h5_exists(file, dpath))
        return mieb_fail(MIEB_ERR_NOT_FOUND, "%s: %s: dataset is missing", fname, dpath);
    mieb_h5_lock();
    hid_t ds = H5Dopen2(file, dpath, H5P_DEFAULT);
    if (ds < 0) {
        st = mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: cannot open as a dataset", fname, dpath);
        goto done;
    }
    hid_t sp = H5Dget_space(ds);
    int r = sp >= 0 && H5Sget_simple_extent_type(sp) == H5S_SIMPLE ? H5Sget_simple_extent_dims(sp, d, NULL) : 0;
    if (sp >= 0)
        H5Sclose(sp);
    if (r < min_rank || r > max_rank) {
        if (min_rank == max_rank)
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: has %d dimensions, expected %d", fname, dpath, r, min_rank);
        else
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: has %d dimensions, expected %d to %d", fname, dpath, r,
                           min_rank, max_rank);
        goto done;
    }
    if ((st = mieb_h5_check_plausible(ds, fname, dpath, file_size)) != MIEB_OK)
        goto done;
    if (rank)
        *rank = r;
    if (dims) {
        dims[0] = r > 0 ? (int64_t)d[0] : 1;
        dims[1] = r > 1 ? (int64_t)d[1] : 1;
    }
    *dset = ds;
    ds = -1;
done:
    if (ds >= 0)
        H5Dclose(ds);
    mieb_h5_unlock();
    return st;
}
