/* h5_read.c - whole-dataset readers for the small arrays of task-data files (ints, floats, strings). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_read.h"

#include "h5_guard.h"
#include "h5_dset_values.h"
#include "h5_util.h"

/* The first of n uint64 values above INT64_MAX, refused with its position (ncols > 1: [row, col]). */
static mieb_status check_u64(const uint64_t *v, size_t n, int64_t ncols, const char *fname, const char *dpath)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] <= (uint64_t)INT64_MAX)
            continue;
        char pos[64];
        if (ncols > 1)
            snprintf(pos, sizeof pos, "[%zu, %zu]", i / (size_t)ncols, i % (size_t)ncols);
        else
            snprintf(pos, sizeof pos, "[%zu]", i);
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s%s = %llu does not fit int64", fname, dpath, pos,
                         (unsigned long long)v[i]);
    }
    return MIEB_OK;
}

/*
 * Read n integers into buf as int64. They are read in their own width and sign (HDF5 only
 * swaps bytes): HDF5's conversion to int64 would clamp a uint64 above INT64_MAX without a
 * word, merging distinct labels or ids. Narrower values are widened here, last first: value
 * i, at byte i*size, is read before int64 i (bytes 8i..8i+7) overwrites it.
 */
static mieb_status read_ints(hid_t ds, hid_t ft, const char *fname, const char *dpath, size_t n, int64_t ncols,
                             int64_t *buf)
{
    hid_t nt = H5Tget_native_type(ft, H5T_DIR_ASCEND);
    size_t sz = nt >= 0 ? H5Tget_size(nt) : 0;
    bool sgn = nt >= 0 && H5Tget_sign(nt) != H5T_SGN_NONE;
    mieb_status st = MIEB_OK;
    if (sz == 0 || sz > 8 || (sz & (sz - 1)))
        st = mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: integers wider than 64 bits are not supported", fname, dpath);
    else if (n && H5Dread(ds, nt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: read failed", fname, dpath);
    if (nt >= 0)
        H5Tclose(nt);
    if (st != MIEB_OK)
        return st;
    if (sz == 8)
        return sgn ? MIEB_OK : check_u64((const uint64_t *)(const void *)buf, n, ncols, fname, dpath);
    for (size_t i = n; i-- > 0;) {
        unsigned char v[8];
        uint64_t raw;
        memcpy(v, (const unsigned char *)buf + i * sz, sz);
        (void)mieb_h5_int_to_i64(v, sz, sgn, &buf[i], &raw); /* below 64 bits: always fits */
    }
    return MIEB_OK;
}

mieb_status mieb_h5_read_i64(hid_t file, const char *fname, const char *dpath, int min_rank, int max_rank,
                             int64_t file_size, int64_t **out, int64_t dims[2])
{
    hid_t ds = -1, ft = -1;
    int rank;
    int64_t d[2];
    char tn[32];
    mieb_status st;
    mieb_h5_lock();
    if ((st = mieb_h5_dset_open(file, fname, dpath, min_rank, max_rank, file_size, &ds, &rank, d)) != MIEB_OK)
        goto done;
    ft = H5Dget_type(ds);
    if (H5Tget_class(ft) != H5T_INTEGER) {
        mieb_h5_type_name(ft, tn, sizeof tn);
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: has type %s, expected an integer type", fname, dpath, tn);
        goto done;
    }
    size_t n = (size_t)d[0] * (size_t)d[1];
    int64_t *buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %s: cannot allocate %zu values", fname, dpath, n);
        goto done;
    }
    if ((st = read_ints(ds, ft, fname, dpath, n, d[1], buf)) != MIEB_OK) {
        free(buf);
        goto done;
    }
    *out = buf;
    dims[0] = d[0];
    dims[1] = d[1];
done:
    if (ft >= 0)
        H5Tclose(ft);
    if (ds >= 0)
        H5Dclose(ds);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_read_f64(hid_t file, const char *fname, const char *dpath, int64_t file_size, double **out,
                             int64_t *n_out)
{
    hid_t ds = -1, ft = -1;
    int64_t d[2];
    char tn[32];
    mieb_status st;
    mieb_h5_lock();
    if ((st = mieb_h5_dset_open(file, fname, dpath, 1, 1, file_size, &ds, NULL, d)) != MIEB_OK)
        goto done;
    ft = H5Dget_type(ds);
    H5T_class_t c = H5Tget_class(ft);
    if (c != H5T_INTEGER && c != H5T_FLOAT) {
        mieb_h5_type_name(ft, tn, sizeof tn);
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: has type %s, expected a numeric type", fname, dpath, tn);
        goto done;
    }
    size_t n = (size_t)d[0];
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %s: cannot allocate %zu values", fname, dpath, n);
        goto done;
    }
    if (n && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: read failed", fname, dpath);
        goto done;
    }
    /* a NaN or Inf (an STS gold score, a weight) gives a NaN or a plausible wrong score */
    for (size_t i = 0; i < n; i++)
        if (!isfinite(buf[i])) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s[%zu] = %s is not a finite number", fname, dpath, i,
                           isnan(buf[i]) ? "NaN" : buf[i] > 0 ? "Inf" : "-Inf");
            free(buf);
            goto done;
        }
    *out = buf;
    *n_out = (int64_t)n;
done:
    if (ft >= 0)
        H5Tclose(ft);
    if (ds >= 0)
        H5Dclose(ds);
    mieb_h5_unlock();
    return st;
}

/* A growing byte buffer plus the start offset of every string appended to it. */
struct str_acc {
    char *bytes;
    size_t len, cap;
    size_t *start; /* [n] */
};

static bool acc_push(struct str_acc *a, int64_t i, const char *s, size_t len)
{
    if (a->len + len + 1 > a->cap) {
        size_t cap = a->cap ? a->cap : 4096;
        while (cap < a->len + len + 1)
            cap *= 2;
        char *nb = realloc(a->bytes, cap);
        if (!nb)
            return false;
        a->bytes = nb, a->cap = cap;
    }
    a->start[i] = a->len;
    memcpy(a->bytes + a->len, s, len);
    a->bytes[a->len + len] = '\0';
    a->len += len + 1;
    return true;
}

/* Sink shared by both read paths: validate, then append. */
struct str_sink {
    struct str_acc *acc;
    const char *fname, *dpath;
};

static mieb_status push_string(void *user, int64_t i, const char *s, size_t len)
{
    struct str_sink *k = user;
    if (len && memchr(s, 0, len))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s[%lld] contains a NUL byte", k->fname, k->dpath, (long long)i);
    if (len && !mieb_utf8_valid(s, len))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s[%lld] is not valid UTF-8", k->fname, k->dpath, (long long)i);
    if (!acc_push(k->acc, i, len ? s : "", len))
        return mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory reading strings", k->fname, k->dpath);
    return MIEB_OK;
}

#define STR_BLOCK 65536 /* strings per H5Dread: bounds HDF5's temporary vlen allocations */

mieb_status mieb_h5_read_strings(hid_t file, const char *fname, const char *dpath, int64_t file_size, char ***out,
                                 int64_t *n_out)
{
    hid_t ds = -1, ft = -1, mt = -1, fsp = -1, msp = -1;
    int64_t d[2];
    char tn[32];
    void *blk = NULL;
    struct str_acc acc = {0};
    mieb_status st;
    mieb_h5_lock();
    if ((st = mieb_h5_dset_open(file, fname, dpath, 1, 1, file_size, &ds, NULL, d)) != MIEB_OK)
        goto done;
    ft = H5Dget_type(ds);
    if (H5Tget_class(ft) != H5T_STRING) {
        mieb_h5_type_name(ft, tn, sizeof tn);
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: has type %s, expected strings", fname, dpath, tn);
        goto done;
    }
    const int64_t n = d[0];
    const bool vlen = H5Tis_variable_str(ft) > 0;
    const size_t fsz = vlen ? 0 : H5Tget_size(ft);
    const H5T_str_t pad = H5Tget_strpad(ft);
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_cset(mt, H5Tget_cset(ft));
    if (vlen) {
        H5Tset_size(mt, H5T_VARIABLE);
    } else {
        H5Tset_size(mt, fsz);
        H5Tset_strpad(mt, pad);
    }
    acc.start = malloc((size_t)(n ? n : 1) * sizeof *acc.start);
    blk = calloc(STR_BLOCK, vlen ? sizeof(char *) : fsz);
    if (!acc.start || !blk) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %s: cannot allocate for %lld strings", fname, dpath, (long long)n);
        goto done;
    }
    struct str_sink sink = {&acc, fname, dpath};
    if (vlen) {
        st = mieb_h5_vlen_strings_raw(file, ds, fname, dpath, file_size, n, push_string, &sink);
        if (st != MIEB_ERR_UNSUPPORTED) {
            if (st != MIEB_OK)
                goto done;
            goto assemble;
        }
        st = MIEB_OK; /* a layout the raw reader leaves to HDF5 */
    }
    fsp = H5Dget_space(ds);
    for (int64_t b0 = 0; b0 < n; b0 += STR_BLOCK) {
        hsize_t off = (hsize_t)b0, cnt = (hsize_t)(n - b0 < STR_BLOCK ? n - b0 : STR_BLOCK);
        msp = H5Screate_simple(1, &cnt, NULL);
        H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &off, NULL, &cnt, NULL);
        if (H5Dread(ds, mt, msp, fsp, H5P_DEFAULT, blk) < 0) {
            st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: read of strings %lld..%lld failed", fname, dpath,
                              (long long)b0, (long long)(b0 + (int64_t)cnt));
            goto done;
        }
        for (hsize_t k = 0; k < cnt && st == MIEB_OK; k++) {
            const char *s;
            size_t len;
            if (vlen) {
                s = ((char **)blk)[k];
                len = s ? strlen(s) : 0;
            } else {
                s = (const char *)blk + k * fsz;
                len = strnlen(s, fsz);
                if (pad == H5T_STR_SPACEPAD)
                    while (len > 0 && s[len - 1] == ' ')
                        len--;
            }
            st = push_string(&sink, b0 + (int64_t)k, s, len);
        }
        if (vlen)
            H5Dvlen_reclaim(mt, msp, H5P_DEFAULT, blk);
        H5Sclose(msp);
        msp = -1;
        if (st != MIEB_OK)
            goto done;
    }
assemble:;
    /* One block: pointer array, then the bytes, so a single free() releases it all. */
    size_t ptr_bytes = (size_t)(n ? n : 1) * sizeof(char *);
    char **res = malloc(ptr_bytes + acc.len + 1);
    if (!res) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory reading strings", fname, dpath);
        goto done;
    }
    char *base = (char *)res + ptr_bytes;
    if (acc.len)
        memcpy(base, acc.bytes, acc.len);
    for (int64_t i = 0; i < n; i++)
        res[i] = base + acc.start[i];
    *out = res;
    *n_out = n;
done:
    if (msp >= 0)
        H5Sclose(msp);
    if (fsp >= 0)
        H5Sclose(fsp);
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    if (ds >= 0)
        H5Dclose(ds);
    mieb_h5_unlock();
    free(blk);
    free(acc.bytes);
    free(acc.start);
    return st;
}
