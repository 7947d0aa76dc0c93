/*
 * emb_shard_cache.c - the one shard file of a role that is open at a time (emb_internal.h):
 * acquired by index, reopened through the identity checked at role open, released, and the
 * dtype of its /embeddings read. Below every reader of the role's rows.
 */
#include "emb_internal.h"

#include <stdlib.h>
#include <string.h>

/* The dtype of /embeddings and the memory type that reads it without value conversion. */
mieb_status mieb_emb_detect_dtype(hid_t file, hid_t ds, const char *fname, enum mieb_emb_dtype *dt, hid_t *memtype)
{
    hid_t ft = H5Dget_type(ds);
    H5T_class_t c = H5Tget_class(ft);
    size_t sz = H5Tget_size(ft), spos, epos, esize, mpos, msize;
    char tn[32], *attr = NULL;
    mieb_status st = MIEB_OK;
    mieb_h5_type_name(ft, tn, sizeof tn);
    if (c == H5T_FLOAT && (sz == 4 || sz == 2)) {
        H5Tget_fields(ft, &spos, &epos, &esize, &mpos, &msize);
        size_t bias = H5Tget_ebias(ft);
        bool norm = H5Tget_norm(ft) == H5T_NORM_IMPLIED && H5Tget_offset(ft) == 0;
        if (sz == 4 && norm && spos == 31 && epos == 23 && esize == 8 && mpos == 0 && msize == 23 && bias == 127) {
            *dt = MIEB_EMB_F32;
            *memtype = H5Tcopy(H5T_NATIVE_FLOAT);
        } else if (sz == 2 && norm && spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 &&
                   bias == 15) {
            *dt = MIEB_EMB_F16; /* read the raw bits in native byte order; widened exactly in C */
            *memtype = H5Tcopy(ft);
            H5Tset_order(*memtype, H5Tget_order(H5T_NATIVE_UINT16));
        } else if (sz == 2 && norm && spos == 15 && epos == 7 && esize == 8 && mpos == 0 && msize == 7 &&
                   bias == 127) {
            *dt = MIEB_EMB_BF16; /* a genuine bfloat16 float type, should a writer produce one */
            *memtype = H5Tcopy(ft);
            H5Tset_order(*memtype, H5Tget_order(H5T_NATIVE_UINT16));
        } else {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /embeddings: %s with a non-IEEE layout is not supported", fname,
                           tn);
        }
    } else if (c == H5T_INTEGER && sz == 2) {
        /* bfloat16 bits stored as uint16, marked by dtype="bfloat16" on the dataset (or the root) */
        bool on_ds = false, on_file = false; /* a failed lookup is reported, not taken for "absent" */
        st = mieb_h5_attr_find(ds, "dtype", fname, "/embeddings", &on_ds);
        if (st == MIEB_OK && !on_ds)
            st = mieb_h5_attr_find(file, "dtype", fname, "/", &on_file);
        hid_t holder = on_ds ? ds : on_file ? file : -1;
        if (st == MIEB_OK && holder < 0) {
            st = mieb_fail(MIEB_ERR_BAD_DATA,
                           "%s: /embeddings has type %s but no attribute dtype=\"bfloat16\" to say it holds bfloat16",
                           fname, tn);
        } else if (st == MIEB_OK &&
                   (st = mieb_h5_attr_str(holder, "dtype", fname, holder == ds ? "/embeddings" : "/", &attr)) ==
                       MIEB_OK) {
            if (strcmp(attr, "bfloat16") != 0) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /embeddings has type %s with dtype=\"%s\"; expected \"bfloat16\"",
                               fname, tn, attr);
            } else {
                *dt = MIEB_EMB_BF16;
                /* same signedness as the file so HDF5 copies the bits instead of clamping them */
                *memtype = H5Tcopy(H5Tget_sign(ft) == H5T_SGN_NONE ? H5T_NATIVE_UINT16 : H5T_NATIVE_INT16);
            }
        }
    } else {
        st = mieb_fail(MIEB_ERR_BAD_DATA,
                       "%s: /embeddings has type %s; expected float32, float16, or uint16 with dtype=\"bfloat16\"",
                       fname, tn);
    }
    free(attr);
    H5Tclose(ft);
    return st;
}

void mieb_emb_shard_release(struct mieb_emb_role *r)
{
    if (r->cur_memtype >= 0)
        H5Tclose(r->cur_memtype);
    if (r->cur_dset >= 0)
        H5Dclose(r->cur_dset);
    if (r->cur_file >= 0)
        H5Fclose(r->cur_file);
    r->cur = -1;
    r->cur_file = r->cur_dset = r->cur_memtype = -1;
}

mieb_status mieb_emb_shard_acquire(struct mieb_emb_role *r, int si)
{
    struct emb_shard *s = &r->sh[si];
    enum mieb_emb_dtype dt;
    mieb_status st;
    if (r->cur == si)
        return MIEB_OK;
    mieb_emb_shard_release(r);
    MIEB_TRY(mieb_h5_reopen_ro(s->path, &s->ident, &r->cur_file)); /* checked once at role open */
    r->cur_dset = H5Dopen2(r->cur_file, "/embeddings", H5P_DEFAULT);
    if (r->cur_dset < 0) {
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: /embeddings: cannot open", s->path);
        mieb_emb_shard_release(r);
        return st;
    }
    /* Chunks cut by a block edge are read by two blocks: give the chunk cache room for two
     * chunks (HDF5's default 1 MiB would decompress them twice), capped at 32 MiB. */
    hid_t dcpl = H5Dget_create_plist(r->cur_dset);
    hsize_t cd[2];
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, cd) == 2) {
        size_t want = (size_t)cd[0] * (size_t)cd[1] * 4 * 2;
        if (want > ((size_t)1 << 20)) {
            hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
            H5Pset_chunk_cache(dapl, 521, want < ((size_t)32 << 20) ? want : ((size_t)32 << 20), 1.0);
            H5Dclose(r->cur_dset);
            r->cur_dset = H5Dopen2(r->cur_file, "/embeddings", dapl);
            H5Pclose(dapl);
        }
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (r->cur_dset < 0) {
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: /embeddings: cannot open", s->path);
        mieb_emb_shard_release(r);
        return st;
    }
    if ((st = mieb_emb_detect_dtype(r->cur_file, r->cur_dset, s->path, &dt, &r->cur_memtype)) != MIEB_OK) {
        mieb_emb_shard_release(r);
        return st;
    }
    r->cur = si;
    return MIEB_OK;
}
