/* h5_append.c - growable 1-D datasets: create, append, read back (h5_append.h). */
#include "h5_append.h"

#include "h5_util.h"

static hid_t file_type(enum mieb_h5_elem t) { return t == MIEB_H5_F32 ? H5T_IEEE_F32LE : H5T_STD_I64LE; }
static hid_t mem_type(enum mieb_h5_elem t) { return t == MIEB_H5_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT64; }

mieb_status mieb_h5_growable_create(hid_t file, const char *fname, const char *name, enum mieb_h5_elem t, int64_t chunk,
                            hid_t *out)
{
    mieb_status st = MIEB_OK;
    hsize_t dims[1] = {0}, maxd[1] = {H5S_UNLIMITED}, ch[1] = {(hsize_t)chunk};
    mieb_h5_lock();
    hid_t sp = H5Screate_simple(1, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, ch);
    H5Pset_obj_track_times(dcpl, 0); /* no timestamps: same input, same bytes */
    hid_t d = H5Dcreate2(file, name, file_type(t), sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (d < 0)
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: cannot create /%s", fname, name);
    else
        *out = d;
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_growable_append(hid_t d, const char *fname, const char *name, enum mieb_h5_elem t, int64_t at, int64_t n,
                            const void *buf)
{
    if (n == 0)
        return MIEB_OK;
    mieb_status st = MIEB_OK;
    hsize_t size[1] = {(hsize_t)(at + n)}, off[1] = {(hsize_t)at}, cnt[1] = {(hsize_t)n};
    mieb_h5_lock();
    if (H5Dset_extent(d, size) < 0) {
        st = mieb_h5_fail(MIEB_ERR_IO, "%s: /%s: cannot grow to %lld entries", fname, name, (long long)(at + n));
    } else {
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, cnt, NULL);
        if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL) < 0 ||
            H5Dwrite(d, mem_type(t), ms, fs, H5P_DEFAULT, buf) < 0)
            st = mieb_h5_fail(MIEB_ERR_IO, "%s: /%s: write failed", fname, name);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_growable_read_all(hid_t d, const char *fname, const char *name, enum mieb_h5_elem t, void *dst)
{
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    if (H5Dread(d, mem_type(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, dst) < 0)
        st = mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: /%s: read failed", fname, name);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_growable_read_range(hid_t d, const char *fname, const char *name, enum mieb_h5_elem t, int64_t e0,
                                int64_t e1, void *dst)
{
    mieb_status st = MIEB_OK;
    hsize_t off[1] = {(hsize_t)e0}, cnt[1] = {(hsize_t)(e1 - e0)};
    mieb_h5_lock();
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, cnt, NULL);
    if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL) < 0 ||
        H5Dread(d, mem_type(t), ms, fs, H5P_DEFAULT, dst) < 0)
        st = mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: /%s: cannot read entries %lld..%lld", fname, name, (long long)e0,
                          (long long)e1);
    H5Sclose(ms);
    H5Sclose(fs);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_growable_close(hid_t d, const char *fname)
{
    if (d < 0)
        return MIEB_OK;
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    if (H5Dclose(d) < 0)
        st = mieb_h5_fail(MIEB_ERR_IO, "%s: closing failed", fname);
    mieb_h5_unlock();
    return st;
}

void mieb_h5_growable_discard(hid_t d)
{
    if (d < 0)
        return;
    mieb_h5_lock();
    H5Dclose(d);
    mieb_h5_unlock();
}

void mieb_h5_file_close(hid_t file)
{
    if (file < 0)
        return;
    mieb_h5_lock();
    H5Fclose(file);
    mieb_h5_unlock();
}
