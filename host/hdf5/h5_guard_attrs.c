/*
 * h5_guard_attrs.c - string attributes read without letting libhdf5 1.10 follow their heap IDs.
 *
 * A variable-length string attribute's value is a heap ID (length, global heap collection
 * address, object index). H5Aread hands it to H5HG_read, which trusts it: an index past the
 * collection's object table dereferences garbage (segfault), a collection whose object walk
 * does not advance loops forever (found by fuzzing: tests/fuzz/regressions/, docs/BAD_INPUT.md).
 * So HDF5 never converts such an attribute: a soft conversion registered here from
 * variable-length strings to the opaque type "mieb-raw-vlen" copies the heap ID out as it
 * is stored, and h5_guard_heaps.c fetches the bytes from the collection itself, bounds-checked
 * (mieb_h5_vlen_string_at). mieb_h5_layout_of tells those raw readers where a file's bytes
 * are. The object headers themselves are checked by h5_guard_headers.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5_guard.h"

#define RAW_VLEN_TAG "mieb-raw-vlen"

static bool is_raw_vlen_type(hid_t t)
{
    if (H5Tget_class(t) != H5T_OPAQUE || H5Tget_size(t) != MIEB_H5_RAW_VLEN_SIZE)
        return false;
    char *tag = H5Tget_tag(t);
    bool ok = tag && strcmp(tag, RAW_VLEN_TAG) == 0;
    H5free_memory(tag);
    return ok;
}

/*
 * HDF5 calls this with the attribute's value in its disk form (heap IDs of
 * 4 + sizeof_addr + 4 bytes, one per element) and expects the memory form in place.
 * The memory form is the same bytes, each element zero-padded to MIEB_H5_RAW_VLEN_SIZE.
 */
static herr_t raw_vlen_conv(hid_t src, hid_t dst, H5T_cdata_t *cd, size_t n, size_t buf_stride, size_t bkg_stride,
                            void *buf, void *bkg, hid_t dxpl)
{
    (void)bkg_stride, (void)bkg, (void)dxpl;
    switch (cd->command) {
    case H5T_CONV_INIT:
        /* only variable-length strings into our own opaque type; any other pair is not ours */
        if (H5Tis_variable_str(src) <= 0 || !is_raw_vlen_type(dst) || H5Tget_size(src) > MIEB_H5_RAW_VLEN_SIZE)
            return -1;
        cd->need_bkg = H5T_BKG_NO;
        return 0;
    case H5T_CONV_FREE: return 0;
    case H5T_CONV_CONV: break;
    default: return -1;
    }
    size_t s = H5Tget_size(src), d = MIEB_H5_RAW_VLEN_SIZE;
    if (s == 0 || s > d)
        return -1;
    uint8_t *b = buf;
    if (buf_stride) { /* elements already sit buf_stride apart: pad each in place */
        for (size_t i = 0; i < n; i++)
            memset(b + i * buf_stride + s, 0, d - s);
        return 0;
    }
    for (size_t i = n; i-- > 0;) { /* packed: spread them out, last first */
        memmove(b + i * d, b + i * s, s);
        memset(b + i * d + s, 0, d - s);
    }
    return 0;
}

static hid_t raw_vlen_type = -1;

/* The raw reader's conversion, registered with HDF5 once, on the first string attribute read
   (under the HDF5 lock). On failure raw_vlen_type stays -1 and every such read fails cleanly. */
static mieb_status raw_vlen_register(void)
{
    hid_t vs = H5Tcopy(H5T_C_S1), op = H5Tcreate(H5T_OPAQUE, MIEB_H5_RAW_VLEN_SIZE);
    herr_t rc = vs >= 0 && op >= 0 ? H5Tset_size(vs, H5T_VARIABLE) : -1;
    if (rc >= 0)
        rc = H5Tset_tag(op, RAW_VLEN_TAG);
    if (rc >= 0)
        rc = H5Tregister(H5T_PERS_SOFT, RAW_VLEN_TAG, vs, op, raw_vlen_conv);
    if (vs >= 0)
        H5Tclose(vs);
    if (rc < 0) {
        if (op >= 0)
            H5Tclose(op);
        return mieb_fail(MIEB_ERR_HDF5, "cannot register the raw string attribute reader");
    }
    raw_vlen_type = op; /* kept for the life of the process */
    return MIEB_OK;
}

static pthread_once_t raw_vlen_once = PTHREAD_ONCE_INIT;
static void raw_vlen_register_once(void) { (void)raw_vlen_register(); }

mieb_status mieb_h5_attr_raw_vlen(hid_t attr, const char *fname, const char *objpath, const char *name,
                                  uint8_t out[MIEB_H5_RAW_VLEN_SIZE])
{
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    pthread_once(&raw_vlen_once, raw_vlen_register_once);
    if (raw_vlen_type < 0)
        st = mieb_fail(MIEB_ERR_INTERNAL, "raw string attribute reader not registered");
    else if (H5Aread(attr, raw_vlen_type, out) < 0)
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read attribute '%s'", fname, objpath, name);
    mieb_h5_unlock();
    return st;
}

/* ---- where the bytes of the file holding an object are ---- */

mieb_status mieb_h5_layout_of(hid_t obj, const char *fname, struct mieb_h5_layout *lay)
{
    size_t sa = 0, ss = 0;
    hsize_t ub = 0;
    struct stat sb;
    memset(lay, 0, sizeof *lay);
    mieb_h5_lock();
    unsigned intent = 0;
    hid_t file = H5Iget_file_id(obj);
    hid_t fcpl = file >= 0 ? H5Fget_create_plist(file) : -1;
    bool ok = fcpl >= 0 && H5Pget_sizes(fcpl, &sa, &ss) >= 0 && H5Pget_userblock(fcpl, &ub) >= 0 &&
              H5Fget_intent(file, &intent) >= 0;
    /* HDF5's own descriptor (borrowed): the file it opened, never the path again (h5_open.c) */
    mieb_status fst = ok ? mieb_h5_file_fd(file, &lay->fd) : MIEB_ERR_HDF5;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (file >= 0)
        H5Fclose(file); /* only drops the id H5Iget_file_id added */
    mieb_h5_unlock();
    if (!ok)
        return mieb_h5_fail(MIEB_ERR_HDF5, "%s: cannot query the file's layout", fname);
    if (fst != MIEB_OK) /* another file driver: a file this program made, not an input */
        return MIEB_ERR_UNSUPPORTED;
    if (intent & H5F_ACC_RDWR) /* a file we are writing: its metadata may not be on disk yet */
        return MIEB_ERR_UNSUPPORTED;
    if ((sa != 2 && sa != 4 && sa != 8) || (ss != 2 && ss != 4 && ss != 8))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s: %zu-byte addresses / %zu-byte lengths are not supported", fname,
                         sa, ss);
    if (fstat(lay->fd, &sb) != 0)
        return mieb_fail(MIEB_ERR_IO, "%s: %s", fname, strerror(errno));
    lay->sa = (int)sa, lay->ss = (int)ss;
    lay->base = (uint64_t)ub;
    lay->file_size = (int64_t)sb.st_size;
    return MIEB_OK;
}
