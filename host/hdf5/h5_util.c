/* h5_util.c - HDF5 lock, error capture, lookups, attributes and size sanity checks (opening: h5_open.c). */
#include "h5_util.h"

#include "h5_guard.h"
#include "h5_dset_values.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool h5_stack_nonempty(void) { return H5Eget_num(H5E_DEFAULT) > 0; }

mieb_status mieb_h5_lookup(hid_t loc, const char *path, const char *fname, bool *found)
{
    char buf[1024];
    mieb_status st = MIEB_OK;
    size_t len = strlen(path);
    *found = false;
    if (len >= sizeof buf)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: %s: path too long", fname, path);
    memcpy(buf, path, len + 1);
    mieb_h5_lock();
    /* One link at a time: H5Lexists fails (not false) when an intermediate group is
       missing, and each object's header is checked before HDF5 goes through it. */
    bool ok = true;
    for (size_t i = 1; i <= len && ok && st == MIEB_OK; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        htri_t l = H5Lexists(loc, buf, H5P_DEFAULT);
        if (l == 0 && h5_stack_nonempty())
            l = -1; /* "no" because a read failed: not an answer */
        if (l < 0)
            st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot look up the link", fname, buf);
        ok = l > 0;
        if (ok && st == MIEB_OK)
            st = mieb_h5_check_object(loc, buf, fname);
        if (ok && st == MIEB_OK) {
            htri_t o = H5Oexists_by_name(loc, buf, H5P_DEFAULT);
            if (o == 0 && h5_stack_nonempty())
                o = -1;
            if (o < 0)
                st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot look up the object", fname, buf);
            ok = o > 0;
        }
        buf[i] = c;
    }
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    *found = st == MIEB_OK && ok;
    return st;
}

bool mieb_h5_exists(hid_t loc, const char *path)
{
    bool found;
    /* In doubt (a corrupt header on the way, an I/O error, out of memory): "yes", so that the
       caller goes on to read it with a reader that reports the real fault, instead of
       silently taking an optional dataset (candidates, /offsets, ...) for absent. */
    return mieb_h5_lookup(loc, path, "", &found) != MIEB_OK || found;
}

bool mieb_h5_is_dataset(hid_t loc, const char *path)
{
    bool found, ok = false;
    if (mieb_h5_lookup(loc, path, "", &found) != MIEB_OK)
        return true; /* in doubt: let the reader report it (mieb_h5_exists) */
    if (!found)
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

mieb_status mieb_h5_attr_find(hid_t obj, const char *name, const char *fname, const char *objpath, bool *found)
{
    *found = false;
    MIEB_TRY(mieb_h5_check_attr_msgs(obj, fname, objpath)); /* before HDF5 decodes any attribute */
    mieb_h5_lock();
    htri_t r = H5Aexists(obj, name);
    if (r == 0 && h5_stack_nonempty())
        r = -1; /* "no" because a read failed: not an answer */
    mieb_h5_unlock();
    if (r < 0)
        return mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot look up attribute '%s'", fname, objpath, name);
    *found = r > 0;
    return MIEB_OK;
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
    bool found;
    MIEB_TRY(mieb_h5_attr_find(obj, name, fname, objpath, &found));
    if (!found)
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
        /* never H5Aread into a C string: HDF5 1.10 would follow a corrupt heap ID (h5_guard_attrs.c) */
        uint8_t hid[MIEB_H5_RAW_VLEN_SIZE];
        char what[300];
        snprintf(what, sizeof what, "%s attribute '%s'", objpath, name);
        if ((st = mieb_h5_attr_raw_vlen(a, fname, objpath, name, hid)) == MIEB_OK)
            st = mieb_h5_vlen_string_at(a, hid, fname, what, out);
        if (st == MIEB_ERR_UNSUPPORTED) { /* a file we are writing ourselves: HDF5 reads it */
            char *s = NULL;
            H5Tset_size(mt, H5T_VARIABLE);
            if (H5Aread(a, mt, &s) < 0) {
                st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read attribute '%s'", fname, objpath, name);
                goto done;
            }
            *out = strdup(s ? s : "");
            H5free_memory(s);
            st = MIEB_OK;
        }
        if (st != MIEB_OK)
            goto done;
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

/* An integer attribute read in its own width and sign, then checked: HDF5's conversion to
   int64 would clamp a uint64 above INT64_MAX without a word. */
static mieb_status attr_read_i64(hid_t a, hid_t ft, const char *name, const char *fname, const char *objpath,
                                 int64_t *out)
{
    hid_t nt = H5Tget_native_type(ft, H5T_DIR_ASCEND);
    size_t sz = nt >= 0 ? H5Tget_size(nt) : 0;
    bool sgn = nt >= 0 && H5Tget_sign(nt) != H5T_SGN_NONE;
    unsigned char buf[16];
    uint64_t raw = 0;
    mieb_status st = MIEB_OK;
    if (sz == 0 || sz > 8) {
        st = mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: attribute '%s' is an integer wider than 64 bits", fname,
                          objpath, name);
    } else if (H5Aread(a, nt, buf) < 0) {
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read attribute '%s'", fname, objpath, name);
    } else if (!mieb_h5_int_to_i64(buf, sz, sgn, out, &raw)) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: attribute '%s' = %llu does not fit int64", fname, objpath, name,
                       (unsigned long long)raw);
    }
    if (nt >= 0)
        H5Tclose(nt);
    return st;
}

/* A numeric attribute as double: NaN or Inf (a bound, a weight) would reach a score unseen. */
static mieb_status attr_read_f64(hid_t a, const char *name, const char *fname, const char *objpath, double *out)
{
    double v;
    if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0)
        return mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read attribute '%s'", fname, objpath, name);
    if (!isfinite(v))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: attribute '%s' = %s is not a finite number", fname, objpath,
                         name, isnan(v) ? "NaN" : v > 0 ? "Inf" : "-Inf");
    *out = v;
    return MIEB_OK;
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
    st = i_out ? attr_read_i64(a, ft, name, fname, objpath, i_out) : attr_read_f64(a, name, fname, objpath, d_out);
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
    hsize_t dims[H5S_MAX_RANK], maxd[H5S_MAX_RANK], cdims[H5S_MAX_RANK];
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    hid_t sp = H5Dget_space(dset), ty = H5Dget_type(dset), dcpl = H5Dget_create_plist(dset);
    int rank = sp >= 0 ? H5Sget_simple_extent_dims(sp, dims, maxd) : -1;
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
    if ((st = mieb_h5_check_filters(dcpl, fname, dpath)) != MIEB_OK)
        goto done;
    uint64_t fsz = file_size > 0 ? (uint64_t)file_size : 0, limit = fsz;
    switch (H5Pget_layout(dcpl)) {
    case H5D_COMPACT:
        if ((st = mieb_h5_check_compact(dset, ty, rank, dims, fname, dpath)) != MIEB_OK)
            goto done;
        limit = 65536;
        break;
    case H5D_CONTIGUOUS: break;
    case H5D_CHUNKED:
        if (H5Pget_chunk(dcpl, rank, cdims) != rank) {
            st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read the chunk shape", fname, dpath);
            goto done;
        }
        for (int i = 0; i < rank; i++)
            if (__builtin_mul_overflow(cbytes, (uint64_t)cdims[i], &cbytes))
                cbytes = UINT64_MAX;
        if ((st = mieb_h5_check_chunk_dims(rank, cdims, maxd, fname, dpath)) != MIEB_OK)
            goto done;
        if (cbytes > (uint64_t)MIEB_H5_MAX_CHUNK_BYTES) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: chunks of %llu bytes are too large (limit %lld)", fname,
                           dpath, (unsigned long long)cbytes, MIEB_H5_MAX_CHUNK_BYTES);
            goto done;
        }
        if (H5Pget_nfilters(dcpl) > 0)
            limit = fsz * MIEB_H5_MAX_RATIO + cbytes;
        else if ((st = mieb_h5_check_chunks(dset, fname, dpath, rank, dims, cdims, ty, fsz)) != MIEB_OK)
            goto done;
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
    else
        st = mieb_h5_check_written(dset, dcpl, fname, dpath, rank, dims);
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
    bool found;
    MIEB_TRY(mieb_h5_lookup(file, dpath, fname, &found)); /* checks each header on the way */
    if (!found)
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
