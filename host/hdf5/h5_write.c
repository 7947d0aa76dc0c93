/* h5_write.c - atomic HDF5 file creation, groups, attributes and plain datasets (h5py-compatible types). */
#include "h5_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fileutil.h"
#include "../core/tmpfiles.h"
#include "h5_util.h"

mieb_status mieb_h5w_create(const char *path, struct mieb_h5w_file *out)
{
    memset(out, 0, sizeof *out);
    out->id = -1;
    size_t len = strlen(path) + 100; /* ".tmp.<host (<= 64)>.<pid>" */
    out->path = strdup(path);
    out->tmp = malloc(len);
    if (!out->path || !out->tmp) {
        mieb_h5w_abort(out);
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory", path);
    }
    mieb_status tst = mieb_tmp_path(path, out->tmp, len);
    if (tst != MIEB_OK) {
        free(out->tmp);
        out->tmp = NULL; /* nothing was created: nothing to unlink */
        mieb_h5w_abort(out);
        return tst;
    }
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char dir[4096];
        size_t dl = (size_t)(slash - path);
        if (dl >= sizeof dir) {
            mieb_h5w_abort(out);
            return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long", path);
        }
        memcpy(dir, path, dl);
        dir[dl] = '\0';
        mieb_status st = mieb_mkdirs(dir);
        if (st != MIEB_OK) {
            mieb_h5w_abort(out);
            return st;
        }
    }
    mieb_h5_lock();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 10, 7)
    H5Pset_file_locking(fapl, 0, 1);
#endif
    out->id = H5Fcreate(out->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    mieb_status st = MIEB_OK;
    if (out->id < 0)
        st = mieb_h5_fail(MIEB_ERR_IO, "%s: cannot create", out->tmp);
    mieb_h5_unlock();
    if (st != MIEB_OK)
        mieb_h5w_abort(out);
    return st;
}

static mieb_status commit(struct mieb_h5w_file *f, bool sync)
{
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    herr_t rc = H5Fclose(f->id);
    f->id = -1;
    if (rc < 0)
        st = mieb_h5_fail(MIEB_ERR_IO, "%s: closing failed", f->tmp);
    mieb_h5_unlock();
    if (st == MIEB_OK && sync) {
        int fd = open(f->tmp, O_RDONLY);
        if (fd < 0 || fsync(fd) != 0)
            st = mieb_fail(MIEB_ERR_IO, "%s: fsync failed: %s", f->tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    if (st == MIEB_OK && rename(f->tmp, f->path) != 0)
        st = mieb_fail(MIEB_ERR_IO, "cannot rename %s to %s: %s", f->tmp, f->path, strerror(errno));
    if (st != MIEB_OK) {
        mieb_h5w_abort(f);
        return st;
    }
    free(f->path);
    free(f->tmp);
    memset(f, 0, sizeof *f);
    f->id = -1;
    return MIEB_OK;
}

mieb_status mieb_h5w_commit(struct mieb_h5w_file *f) { return commit(f, false); }
mieb_status mieb_h5w_commit_synced(struct mieb_h5w_file *f) { return commit(f, true); }

void mieb_h5w_abort(struct mieb_h5w_file *f)
{
    if (f->id > 0) {
        mieb_h5_lock();
        H5Fclose(f->id);
        H5Eclear2(H5E_DEFAULT);
        mieb_h5_unlock();
    }
    if (f->tmp)
        unlink(f->tmp);
    free(f->path);
    free(f->tmp);
    memset(f, 0, sizeof *f);
    f->id = -1;
}

mieb_status mieb_h5w_group(hid_t file, const char *path, hid_t *out)
{
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    hid_t g;
    if (mieb_h5_exists(file, path)) {
        g = H5Gopen2(file, path, H5P_DEFAULT);
    } else {
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), gcpl = H5Pcreate(H5P_GROUP_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        H5Pset_obj_track_times(gcpl, 0); /* no timestamps: same input, same bytes */
        g = H5Gcreate2(file, path, lcpl, gcpl, H5P_DEFAULT);
        H5Pclose(gcpl);
        H5Pclose(lcpl);
    }
    if (g < 0)
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: cannot create group", path);
    else
        *out = g;
    mieb_h5_unlock();
    return st;
}

void mieb_h5w_group_close(hid_t group)
{
    if (group < 0)
        return;
    mieb_h5_lock();
    H5Gclose(group);
    mieb_h5_unlock();
}

/* The variable-length UTF-8 string type h5py uses for str attributes and string_dtype(). */
static hid_t vlen_utf8(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* Write one scalar attribute of file type ft from memory type mt (replacing an old one). */
static mieb_status attr_write(hid_t obj, const char *name, hid_t ft, hid_t mt, const void *val)
{
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, mt, val) < 0)
        st = mieb_h5_fail(MIEB_ERR_HDF5, "cannot write attribute '%s'", name);
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5w_attr_str(hid_t obj, const char *name, const char *value)
{
    mieb_h5_lock();
    hid_t t = vlen_utf8();
    mieb_status st = attr_write(obj, name, t, t, &value);
    H5Tclose(t);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5w_attr_i64(hid_t obj, const char *name, int64_t value)
{
    return attr_write(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

mieb_status mieb_h5w_attr_f64(hid_t obj, const char *name, double value)
{
    return attr_write(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

/* Write a whole contiguous dataset of the given rank and types. */
static mieb_status dset_write(hid_t loc, const char *name, hid_t ft, hid_t mt, int rank, const int64_t *dims,
                              const void *data)
{
    hsize_t d[2] = {(hsize_t)dims[0], rank > 1 ? (hsize_t)dims[1] : 1};
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    hid_t sp = H5Screate_simple(rank, d, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0); /* no timestamps: same input, same bytes */
    hid_t ds = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    if (ds < 0 || (d[0] * d[1] > 0 && H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
        st = mieb_h5_fail(MIEB_ERR_HDF5, "cannot write dataset '%s'", name);
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(sp);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5w_strings(hid_t loc, const char *name, const char *const *s, int64_t n)
{
    mieb_h5_lock();
    hid_t t = vlen_utf8();
    mieb_status st = dset_write(loc, name, t, t, 1, &n, s);
    H5Tclose(t);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5w_i64(hid_t loc, const char *name, const int64_t *v, int rank, const int64_t *dims)
{
    return dset_write(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, rank, dims, v);
}

mieb_status mieb_h5w_i32(hid_t loc, const char *name, const int32_t *v, int64_t n)
{
    return dset_write(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &n, v);
}

mieb_status mieb_h5w_f64(hid_t loc, const char *name, const double *v, int64_t n)
{
    return dset_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, v);
}
