/*
 * h5_guard_storage.c - a dataset's storage checked when it is opened, where libhdf5 1.10 would
 * copy sizes from its shape out of a buffer of another size (found by fuzzing:
 * tests/fuzz/regressions/, docs/BAD_INPUT.md). Called from mieb_h5_check_plausible with the
 * HDF5 lock held; declared in h5_guard.h.
 */
#include "h5_guard.h"

/*
 * Bytes of one element of type ty of dset on disk (a heap ID for variable-length data:
 * 4 + sizeof_addr + 4); 0 when unknown.
 */
static uint64_t mieb_h5_disk_elem_size(hid_t dset, hid_t ty)
{
    if (H5Tget_class(ty) != H5T_VLEN && H5Tis_variable_str(ty) <= 0)
        return H5Tget_size(ty);
    size_t sa = 0, ss = 0;
    hid_t file = H5Iget_file_id(dset), fcpl = file >= 0 ? H5Fget_create_plist(file) : -1;
    if (fcpl < 0 || H5Pget_sizes(fcpl, &sa, &ss) < 0)
        sa = 0;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (file >= 0)
        H5Fclose(file); /* drops the id H5Iget_file_id added */
    return sa ? 8 + (uint64_t)sa : 0;
}

mieb_status mieb_h5_check_compact(hid_t dset, hid_t ty, int rank, const hsize_t *dims, const char *fname,
                                  const char *dpath)
{
    /* HDF5 1.10 copies the declared size out of the compact buffer without comparing the
       two (a NULL or short buffer: segfault or over-read, found by fuzzing); newer HDF5
       refuses such a file. Heap IDs of variable-length data are 4 + sizeof_addr + 4 bytes. */
    uint64_t disk_esz = mieb_h5_disk_elem_size(dset, ty), need = disk_esz;
    for (int i = 0; i < rank && need; i++)
        if (__builtin_mul_overflow(need, (uint64_t)dims[i], &need))
            need = UINT64_MAX;
    if (disk_esz == 0 || need != (uint64_t)H5Dget_storage_size(dset))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: compact storage holds %llu bytes, the shape needs %llu; corrupt",
                         fname, dpath, (unsigned long long)H5Dget_storage_size(dset), (unsigned long long)need);
    return MIEB_OK;
}

mieb_status mieb_h5_check_chunk_dims(int rank, const hsize_t *cdims, const hsize_t *maxd, const char *fname,
                                     const char *dpath)
{
    /* HDF5 never creates a chunk longer than a fixed dimension; 1.10 reads one past the
       decompressed data (found by fuzzing) */
    for (int i = 0; i < rank; i++)
        if (maxd[i] != H5S_UNLIMITED && cdims[i] > maxd[i])
            return mieb_fail(MIEB_ERR_BAD_DATA,
                             "%s: %s: chunk dimension %d (%llu) exceeds the dataset's (%llu); corrupt", fname, dpath,
                             i, (unsigned long long)cdims[i], (unsigned long long)maxd[i]);
    return MIEB_OK;
}

#define MAX_CHUNKS_CHECKED (1u << 20)

/*
 * HDF5 1.10 reads the size the chunk index records but copies a whole chunk out of it, so an
 * index entry smaller than a chunk is read past (found by fuzzing). Datasets of more than
 * MAX_CHUNKS_CHECKED chunks are not checked (documented).
 */
mieb_status mieb_h5_check_chunks(hid_t dset, const char *fname, const char *dpath, int rank, const hsize_t *dims,
                                 const hsize_t *cdims, hid_t ty, uint64_t fsz)
{
    uint64_t need = mieb_h5_disk_elem_size(dset, ty), grid[2] = {1, 1}, n = 1;
    if (rank < 1 || rank > 2 || need == 0)
        return MIEB_OK;
    for (int i = 0; i < rank; i++) {
        if (cdims[i] == 0)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: chunk dimension %d is 0", fname, dpath, i);
        grid[i] = dims[i] / cdims[i] + (dims[i] % cdims[i] != 0);
        if (__builtin_mul_overflow(n, grid[i], &n) || __builtin_mul_overflow(need, (uint64_t)cdims[i], &need))
            return MIEB_OK; /* absurd shapes are refused by the size checks */
    }
    if (n > MAX_CHUNKS_CHECKED)
        return MIEB_OK;
    for (uint64_t r = 0; r < grid[0]; r++)
        for (uint64_t c = 0; c < grid[1]; c++) {
            hsize_t off[2] = {r * cdims[0], rank > 1 ? c * cdims[1] : 0}, size = 0;
            haddr_t addr = HADDR_UNDEF;
            unsigned mask = 0;
            if (H5Dget_chunk_info_by_coord(dset, off, &mask, &addr, &size) < 0)
                return mieb_h5_fail(MIEB_ERR_BAD_DATA, "%s: %s: cannot read the chunk index (corrupt?)", fname,
                                    dpath);
            if (addr == HADDR_UNDEF)
                continue; /* never written: HDF5 gives the fill value */
            if (size != need || addr > fsz || size > fsz - addr)
                return mieb_fail(MIEB_ERR_BAD_DATA,
                                 "%s: %s: chunk at row %llu holds %llu bytes at %llu, a chunk is %llu bytes "
                                 "(file: %llu bytes); corrupt",
                                 fname, dpath, (unsigned long long)off[0], (unsigned long long)size,
                                 (unsigned long long)addr, (unsigned long long)need, (unsigned long long)fsz);
        }
    return MIEB_OK;
}
