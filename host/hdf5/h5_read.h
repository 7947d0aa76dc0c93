/**
 * h5_read.h - whole datasets read into memory (h5_read.c): integers, reals and strings, each
 * value checked (no clamping, no NaN, valid UTF-8) and every failure naming the file and the
 * dataset.
 */
#ifndef MIEB_HDF5_H5_READ_H
#define MIEB_HDF5_H5_READ_H

#include "h5_base.h"

/**
 * Read a whole 1-D or 2-D integer dataset (any integer type up to 64 bits) as int64; a value
 * that does not fit (uint64 above INT64_MAX) is refused with its position, never clamped.
 * dims[1] is 1 for a 1-D dataset. *out is malloc'd (at least one element, so never NULL).
 */
mieb_status mieb_h5_read_i64(hid_t file, const char *fname, const char *dpath, int min_rank, int max_rank,
                             int64_t file_size, int64_t **out, int64_t dims[2]);

/** Read a whole 1-D numeric dataset (integer or float) as float64; NaN or Inf is refused with its position. */
mieb_status mieb_h5_read_f64(hid_t file, const char *fname, const char *dpath, int64_t file_size, double **out,
                             int64_t *n);

/**
 * Read a 1-D string dataset (variable-length or fixed-length, UTF-8 or ASCII). Every
 * string must be valid UTF-8. Result: one malloc'd block, an array of n pointers
 * followed by the NUL-terminated bytes, so free(*out) releases everything.
 */
mieb_status mieb_h5_read_strings(hid_t file, const char *fname, const char *dpath, int64_t file_size, char ***out,
                                 int64_t *n);

#endif
