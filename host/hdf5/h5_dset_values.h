/**
 * h5_dset_values.h - checks of a dataset HDF5 has opened, before its data is read
 * (h5_dset_values.c): filters this HDF5 can decode, storage actually written, and integers
 * read without clamping. Called with the HDF5 lock held.
 */
#ifndef MIEB_HDF5_H5_DSET_VALUES_H
#define MIEB_HDF5_H5_DSET_VALUES_H

#include "h5_base.h"

/**
 * Refuse a dataset whose filters this HDF5 cannot decode, naming the filter (HDF5 itself
 * says only that its plugin directory is missing). Called by mieb_h5_check_plausible, with
 * the HDF5 lock held (as is mieb_h5_check_written).
 */
mieb_status mieb_h5_check_filters(hid_t dcpl, const char *fname, const char *dpath);

/**
 * Refuse a dataset with storage never written, which HDF5 reads back as the fill value:
 * created without data (unallocated), or chunked with chunks missing (an exporter killed
 * mid-write). Names the first run of missing rows. One pass over the chunk index, once per
 * dataset at open (mieb_h5_check_plausible).
 */
mieb_status mieb_h5_check_written(hid_t dset, hid_t dcpl, const char *fname, const char *dpath, int rank,
                                  const hsize_t *dims);

/**
 * One integer of `size` bytes (1, 2, 4, 8; native byte order) as int64. False when it does
 * not fit (an unsigned value above INT64_MAX) or size is not one of those; *raw gets its bits
 * zero-extended, for the message. HDF5's own conversion would clamp it without a word.
 */
bool mieb_h5_int_to_i64(const void *src, size_t size, bool is_signed, int64_t *out, uint64_t *raw);

#endif
