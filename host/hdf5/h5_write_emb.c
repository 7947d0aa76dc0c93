/* h5_write_emb.c - write embedding role files (FORMAT.md §2): encodings, chunking, shards. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_util.h"
#include "../core/fileutil.h"
#include "h5_write.h"
#include "../core/half.h"

/* numpy float16 exactly as h5py declares it: IEEE F32LE narrowed to 1+5+10 bits, bias 15. */
static hid_t half_type(void)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    return t;
}

/* Write a [rows, dim] float32 array as /embeddings-like dataset `name`, encoded per opts. */
static mieb_status mieb_h5w_embeddings(hid_t loc, const char *name, const float *data, int64_t rows, int64_t dim,
                                const struct mieb_h5w_emb_opts *o)
{
    size_t n = (size_t)rows * (size_t)dim;
    uint16_t *enc = NULL;
    mieb_status st = MIEB_OK;
    if (o->dtype != MIEB_EMB_F32) {
        enc = malloc((n ? n : 1) * sizeof *enc);
        if (!enc)
            return mieb_fail(MIEB_ERR_OOM, "%s: out of memory encoding %zu values", name, n);
        for (size_t i = 0; i < n; i++)
            enc[i] = o->dtype == MIEB_EMB_F16 ? mieb_float_to_half(data[i]) : mieb_float_to_bf16(data[i]);
    }
    mieb_h5_lock();
    hid_t ft, mt;
    if (o->dtype == MIEB_EMB_F32) {
        ft = H5Tcopy(H5T_IEEE_F32LE), mt = H5Tcopy(H5T_NATIVE_FLOAT);
    } else if (o->dtype == MIEB_EMB_F16) {
        ft = half_type(), mt = half_type(); /* raw bits in, raw bits out (little-endian host) */
        H5Tset_order(mt, H5Tget_order(H5T_NATIVE_UINT16));
    } else {
        ft = H5Tcopy(H5T_STD_U16LE), mt = H5Tcopy(H5T_NATIVE_UINT16);
    }
    hsize_t d[2] = {(hsize_t)rows, (hsize_t)dim};
    hid_t sp = H5Screate_simple(2, d, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0); /* no timestamps: same input, same bytes */
    if (o->chunk_rows > 0) {
        hsize_t c[2] = {(hsize_t)(o->chunk_rows < rows ? o->chunk_rows : rows), (hsize_t)dim};
        if (c[0] == 0)
            c[0] = 1;
        H5Pset_chunk(dcpl, 2, c);
        if (o->shuffle)
            H5Pset_shuffle(dcpl);
        if (o->deflate > 0)
            H5Pset_deflate(dcpl, (unsigned)o->deflate);
    }
    hid_t ds = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds < 0 || (n && H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, enc ? (const void *)enc : data) < 0))
        st = mieb_h5_fail(MIEB_ERR_HDF5, "cannot write dataset '%s'", name);
    if (st == MIEB_OK && o->dtype == MIEB_EMB_BF16)
        st = mieb_h5w_attr_str(ds, "dtype", "bfloat16");
    if (ds >= 0)
        H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Tclose(mt);
    mieb_h5_unlock();
    free(enc);
    return st;
}

/* Remove <role>.h5 and <role>-*-of-*.h5 left by an earlier run. */
static mieb_status remove_old(const char *dir, const char *role)
{
    char p[4400];
    size_t rl = strlen(role);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        size_t l = strlen(nm);
        bool single = l == rl + 3 && !strncmp(nm, role, rl) && !strcmp(nm + rl, ".h5");
        bool shard = l > rl + 1 && !strncmp(nm, role, rl) && nm[rl] == '-' && strstr(nm + rl, "-of-") &&
                     l > 3 && !strcmp(nm + l - 3, ".h5");
        if ((single || shard) && snprintf(p, sizeof p, "%s/%s", dir, nm) < (int)sizeof p && unlink(p) != 0) {
            closedir(d);
            return mieb_fail(MIEB_ERR_IO, "cannot remove old role file %s", p);
        }
    }
    if (d)
        closedir(d);
    return MIEB_OK;
}

/* Write items [i0, i1) of the role into one file (single or shard k of m). */
static mieb_status write_one(const struct mieb_emb_role_spec *sp, const char *path, bool sharded, const float *data,
                             int64_t i0, int64_t i1, int64_t dim, const int64_t *offsets, const int64_t *row_index)
{
    struct mieb_h5w_file f;
    int64_t n = i1 - i0, r0 = offsets ? offsets[i0] : i0, r1 = offsets ? offsets[i1] : i1;
    int64_t *loc = NULL;
    MIEB_TRY(mieb_h5w_create(path, &f));
    mieb_status st = MIEB_OK;
#define W(expr)                                \
    do {                                       \
        if (st == MIEB_OK && (st = (expr)) != MIEB_OK) \
            mieb_fail_context(st, "%s", path); \
    } while (0)
    W(mieb_h5w_attr_str(f.id, "format", "mieb-emb"));
    W(mieb_h5w_attr_i64(f.id, "format_version", 1));
    W(mieb_h5w_attr_str(f.id, "task_name", sp->task));
    W(mieb_h5w_attr_str(f.id, "split", sp->split));
    W(mieb_h5w_attr_str(f.id, "hf_subset", sp->subset));
    W(mieb_h5w_attr_str(f.id, "role", sp->role));
    W(mieb_h5w_attr_i64(f.id, "dim", dim));
    if (sharded) {
        W(mieb_h5w_attr_i64(f.id, "row_start", i0));
        W(mieb_h5w_attr_i64(f.id, "n_rows", n));
    }
    W(mieb_h5w_embeddings(f.id, "embeddings", data + (size_t)r0 * (size_t)dim, r1 - r0, dim, &sp->opts));
    if (offsets && st == MIEB_OK) {
        int64_t no = n + 1;
        if (!(loc = malloc((size_t)no * sizeof *loc)))
            st = mieb_fail(MIEB_ERR_OOM, "%s: out of memory", path);
        for (int64_t i = 0; st == MIEB_OK && i <= n; i++)
            loc[i] = offsets[i0 + i] - r0; /* every file's offsets start at 0 */
        W(mieb_h5w_i64(f.id, "offsets", loc, 1, &no));
    }
    if (row_index)
        W(mieb_h5w_i64(f.id, "row_index", row_index + i0, 1, &n));
#undef W
    free(loc);
    if (st != MIEB_OK) {
        mieb_h5w_abort(&f);
        return st;
    }
    return mieb_h5w_commit(&f);
}

mieb_status mieb_emb_write_role(const struct mieb_emb_role_spec *sp, const float *data, int64_t n_items,
                                int64_t dim, const int64_t *offsets, const int64_t *row_index)
{
    char dir[4096], path[4400];
    if (snprintf(dir, sizeof dir, "%s/%s/%s/%s", sp->emb_dir, sp->task, sp->split, sp->subset) >= (int)sizeof dir)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long", sp->emb_dir);
    MIEB_TRY(mieb_mkdirs(dir));
    MIEB_TRY(remove_old(dir, sp->role));
    int64_t k = sp->n_shards < 1 ? 1 : sp->n_shards;
    if (k > n_items)
        k = n_items > 0 ? n_items : 1;
    if (sp->n_shards <= 1) {
        snprintf(path, sizeof path, "%s/%s.h5", dir, sp->role);
        return write_one(sp, path, false, data, 0, n_items, dim, offsets, row_index);
    }
    for (int64_t s = 0; s < k; s++) {
        /* balanced split: shard s holds items [s*n/k, (s+1)*n/k) */
        int64_t i0 = s * n_items / k, i1 = (s + 1) * n_items / k;
        snprintf(path, sizeof path, "%s/%s-%05lld-of-%05lld.h5", dir, sp->role, (long long)s, (long long)k);
        MIEB_TRY(write_one(sp, path, true, data, i0, i1, dim, offsets, row_index));
    }
    return MIEB_OK;
}
