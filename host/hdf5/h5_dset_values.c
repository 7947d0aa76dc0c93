/*
 * h5_dset_values.c - checks made once per dataset when it is opened (mieb_h5_check_plausible),
 * so that no value a reader returns is one HDF5 made up: storage never written (read back as
 * the fill value, 0), filters this HDF5 cannot decode, and integers that do not fit int64.
 * Every HDF5 call is made under mieb_h5_lock (h5_util.h). Not part of the guard
 * (host/hdf5/h5_guard.h): HDF5 handles these files without a fault, through its own API, and
 * these checks keep the values it would make up out of the scores.
 */
#include <stdio.h>
#include <string.h>

#include "h5_dset_values.h"

/* Filters h5py and hdf5plugin write, named in messages when the file stores no name. */
static const char *known_filter(H5Z_filter_t id)
{
    switch (id) {
    case 307: return "bzip2";
    case 32000: return "lzf";
    case 32001: return "blosc";
    case 32004: return "lz4";
    case 32008: return "bitshuffle";
    case 32013: return "zfp";
    case 32015: return "zstd";
    case 32017: return "sz";
    case 32026: return "blosc2";
    default: return "unknown";
    }
}

static herr_t oom_cb(unsigned n, const H5E_error2_t *err, void *oom)
{
    (void)n;
    if (err && err->maj_num == H5E_RESOURCE)
        *(bool *)oom = true;
    return 0;
}

mieb_status mieb_h5_check_filters(hid_t dcpl, const char *fname, const char *dpath)
{
    int nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cfg = 0, cd[16];
        size_t ncd = 16;
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &cfg);
        if (id < 0)
            return mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: cannot read filter %d of the dataset", fname, dpath, i);
        /* An unregistered filter makes HDF5 search its plugin directory, and on reading
           it reports only that the directory is missing: decide here, and say which filter. */
        htri_t avail = H5Zfilter_avail(id);
        unsigned info = 0;
        bool decodes = avail > 0 && H5Zget_filter_info(id, &info) >= 0 && (info & H5Z_FILTER_CONFIG_DECODE_ENABLED);
        bool oom = false;
        if (!decodes)
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, oom_cb, &oom);
        if (oom) /* the search failed, not the filter: say so */
            return mieb_h5_fail(MIEB_ERR_OOM, "%s: %s: looking up filter %d", fname, dpath, (int)id);
        H5Eclear2(H5E_DEFAULT); /* the plugin search's "can't open directory" says nothing useful */
        if (!decodes)
            return mieb_fail(MIEB_ERR_BAD_DATA,
                             "%s: dataset %s uses compression filter %d (%s), which this HDF5 cannot decode: rewrite "
                             "it with gzip or no compression",
                             fname, dpath, (int)id, name[0] ? name : known_filter(id));
    }
    return MIEB_OK;
}

/* Is the chunk at row chunk r, column chunk c stored? */
static mieb_status chunk_stored(hid_t dset, int rank, const hsize_t *cdims, uint64_t r, uint64_t c,
                                const char *fname, const char *dpath, bool *stored)
{
    hsize_t off[2] = {r * cdims[0], rank > 1 ? c * cdims[1] : 0}, size = 0;
    haddr_t addr = HADDR_UNDEF;
    unsigned mask = 0;
    if (H5Dget_chunk_info_by_coord(dset, off, &mask, &addr, &size) < 0)
        return mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: cannot read the chunk index (corrupt?)", fname, dpath);
    *stored = addr != HADDR_UNDEF;
    return MIEB_OK;
}

/* The first run of missing chunks, named by its rows (and columns when chunks split them). */
static mieb_status report_missing(hid_t dset, int rank, const hsize_t *dims, const hsize_t *cdims,
                                  const uint64_t grid[2], uint64_t n_missing, uint64_t n_chunks, const char *fname,
                                  const char *dpath)
{
    bool stored = true;
    uint64_t r = 0, c = 0;
    for (r = 0; r < grid[0] && stored; r++)
        for (c = 0; c < grid[1] && stored; c++)
            MIEB_TRY(chunk_stored(dset, rank, cdims, r, c, fname, dpath, &stored));
    if (stored) /* the index holds chunks outside the dataset instead */
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: the chunk index holds %llu chunks, the dataset has %llu; corrupt",
                         fname, dpath, (unsigned long long)(n_chunks - n_missing), (unsigned long long)n_chunks);
    r--, c--; /* the loops stepped past the missing chunk */
    uint64_t r_end = r + 1;
    for (bool more = true; r_end < grid[0] && more; r_end += more) {
        MIEB_TRY(chunk_stored(dset, rank, cdims, r_end, c, fname, dpath, &stored));
        more = !stored;
    }
    uint64_t row0 = r * cdims[0], row1 = r_end * cdims[0] < dims[0] ? r_end * cdims[0] : dims[0];
    char cols[96] = "";
    if (grid[1] > 1) {
        uint64_t c0 = c * cdims[1], c1 = (c + 1) * cdims[1] < dims[1] ? (c + 1) * cdims[1] : dims[1];
        snprintf(cols, sizeof cols, " (columns %llu..%llu)", (unsigned long long)c0, (unsigned long long)(c1 - 1));
    }
    return mieb_fail(MIEB_ERR_BAD_DATA,
                     "%s: %s: rows %llu..%llu%s were never written (%llu of its %llu chunks are missing, an exporter "
                     "stopped mid-write?); HDF5 would read them as zeros",
                     fname, dpath, (unsigned long long)row0, (unsigned long long)(row1 - 1), cols,
                     (unsigned long long)n_missing, (unsigned long long)n_chunks);
}

mieb_status mieb_h5_check_written(hid_t dset, hid_t dcpl, const char *fname, const char *dpath, int rank,
                                  const hsize_t *dims)
{
    uint64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i]; /* the caller has refused shapes whose byte size overflows */
    if (n == 0)
        return MIEB_OK;
    if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
        H5D_space_status_t ss;
        if (H5Dget_space_status(dset, &ss) < 0)
            return mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: cannot read the dataset's storage status", fname, dpath);
        if (ss != H5D_SPACE_STATUS_NOT_ALLOCATED)
            return MIEB_OK; /* compact and allocated contiguous storage hold every value */
        return mieb_fail(MIEB_ERR_BAD_DATA,
                         "%s: %s: rows 0..%llu were never written (the dataset was created without data); HDF5 would "
                         "read them as zeros",
                         fname, dpath, rank > 0 ? (unsigned long long)(dims[0] - 1) : 0ULL);
    }
    if (rank < 1 || rank > 2)
        return MIEB_OK; /* the readers take 1-D and 2-D datasets only */
    hsize_t cdims[2];
    uint64_t grid[2] = {1, 1}, n_chunks = 1;
    if (H5Pget_chunk(dcpl, rank, cdims) != rank || cdims[0] == 0 || (rank > 1 && cdims[1] == 0))
        return mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: cannot read the chunk shape", fname, dpath);
    for (int i = 0; i < rank; i++) {
        grid[i] = dims[i] / cdims[i] + (dims[i] % cdims[i] != 0);
        n_chunks *= grid[i]; /* <= the element count */
    }
    /* One pass over the chunk index counts the stored chunks; only a shortfall is located. */
    hsize_t stored = 0;
    hid_t sp = H5Dget_space(dset); /* HDF5 1.10 takes no H5S_ALL here */
    herr_t rc = sp >= 0 ? H5Dget_num_chunks(dset, sp, &stored) : -1;
    mieb_status st = rc < 0 /* the reason first: H5Sclose clears the error stack */
                         ? mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: cannot read the chunk index (corrupt?)", fname, dpath)
                         : MIEB_OK;
    if (sp >= 0)
        H5Sclose(sp);
    if (st != MIEB_OK)
        return st;
    if (stored >= n_chunks)
        return MIEB_OK;
    return report_missing(dset, rank, dims, cdims, grid, n_chunks - stored, n_chunks, fname, dpath);
}

bool mieb_h5_int_to_i64(const void *src, size_t size, bool is_signed, int64_t *out, uint64_t *raw)
{
    uint64_t u = 0;
    int64_t s = 0;
    switch (size) {
    case 1: { uint8_t v; memcpy(&v, src, 1); u = v; s = (int8_t)v; break; }
    case 2: { uint16_t v; memcpy(&v, src, 2); u = v; s = (int16_t)v; break; }
    case 4: { uint32_t v; memcpy(&v, src, 4); u = v; s = (int32_t)v; break; }
    case 8: { uint64_t v; memcpy(&v, src, 8); u = v; s = (int64_t)v; break; }
    default: return false;
    }
    *raw = u;
    if (!is_signed && u > (uint64_t)INT64_MAX)
        return false;
    *out = is_signed ? s : (int64_t)u;
    return true;
}
