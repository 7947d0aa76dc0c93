/**
 * h5_util.h - small HDF5 helpers shared by the readers (task_data.c, the emb_*.c files): opening
 * a file once and reopening it, looking up objects and attributes, opening a dataset with its
 * plausibility checks. They take the HDF5 lock themselves (h5_base.h says why).
 *
 * Every function returning mieb_status leaves *out untouched (or NULL) on failure.
 */
#ifndef MIEB_HDF5_H5_UTIL_H
#define MIEB_HDF5_H5_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "../core/status.h"
#include "h5_base.h"



/** Which file a checked input was: a reopen must find the same one, unchanged. */
struct mieb_h5_ident {
    uint64_t dev, ino;
    int64_t size, mtime_ns;
};

/**
 * Open an existing HDF5 file read-only. Missing file: MIEB_ERR_NOT_FOUND; not a regular file
 * (a FIFO, a directory: refused without blocking): MIEB_ERR_IO; not HDF5, truncated or otherwise
 * unopenable: MIEB_ERR_BAD_DATA. *file_size gets the byte size on disk (used to refuse
 * impossible declared sizes); it may be NULL, and so may ident (which file it was, for
 * mieb_h5_reopen_ro).
 *
 * The path is opened once (h5_open.c): the guards read that descriptor and HDF5 opens it
 * through /proc/self/fd, so a file renamed over the path meanwhile is never read.
 */
mieb_status mieb_h5_open_ro(const char *path, hid_t *out, int64_t *file_size);
mieb_status mieb_h5_open_ro_ident(const char *path, hid_t *out, int64_t *file_size, struct mieb_h5_ident *ident);
/**
 * mieb_h5_open_ro without the guards, for a file already opened and checked once: the path
 * must still name that file (ident, unchanged), else MIEB_ERR_BAD_DATA naming the path.
 */
mieb_status mieb_h5_reopen_ro(const char *path, const struct mieb_h5_ident *ident, hid_t *out);

/**
 * Does the object at path exist? Every link on the way is looked up in turn, and each
 * object's header is checked (mieb_h5_check_object) before HDF5 goes through it.
 * Failure: a refused header (MIEB_ERR_BAD_DATA), I/O error, out of memory.
 */
mieb_status mieb_h5_lookup(hid_t loc, const char *path, const char *fname, bool *found);
/** mieb_h5_lookup as a bool that answers true when in doubt (the read then reports why). */
bool mieb_h5_exists(hid_t loc, const char *path);
/** Is path an existing dataset? */
bool mieb_h5_is_dataset(hid_t loc, const char *path);

/* ---- attributes; fname/objpath only name the location in messages ---- */
/** Does obj have attribute name? Checks obj's attribute messages first (h5_guard_headers.c). */
mieb_status mieb_h5_attr_find(hid_t obj, const char *name, const char *fname, const char *objpath, bool *found);
/** Scalar (or 1-element) string attribute, variable or fixed length. *out is malloc'd. */
mieb_status mieb_h5_attr_str(hid_t obj, const char *name, const char *fname, const char *objpath, char **out);
/** Scalar (or 1-element) integer attribute of any integer type up to 64 bits; a value outside int64 is refused. */
mieb_status mieb_h5_attr_i64(hid_t obj, const char *name, const char *fname, const char *objpath, int64_t *out);
/** Scalar (or 1-element) integer or float attribute, as double; NaN or Inf is refused. */
mieb_status mieb_h5_attr_f64(hid_t obj, const char *name, const char *fname, const char *objpath, double *out);

/** Short type name for messages: "int32", "uint16", "float64", "float16", "string", "compound" ... */
void mieb_h5_type_name(hid_t type, char *buf, size_t n);

/**
 * Open dataset dpath (absolute) and return its rank and dims. Missing: MIEB_ERR_NOT_FOUND.
 * The rank must be in [min_rank, max_rank] and the declared size must be plausible for
 * a file of file_size bytes (mieb_h5_check_plausible), else MIEB_ERR_BAD_DATA.
 */
mieb_status mieb_h5_dset_open(hid_t file, const char *fname, const char *dpath, int min_rank, int max_rank,
                              int64_t file_size, hid_t *dset, int *rank, int64_t dims[2]);

/**
 * Refuse declared sizes the file cannot hold before anything is allocated: raw bytes
 * beyond the file size (unfiltered storage), beyond 1100x the file size (deflate's best
 * ratio is about 1032:1), chunks above 512 MiB, external or virtual storage. Then refuse
 * what HDF5 would read without an error but not from the file: filters it cannot decode
 * (mieb_h5_check_filters) and storage never written (mieb_h5_check_written).
 */
mieb_status mieb_h5_check_plausible(hid_t dset, const char *fname, const char *dpath, int64_t file_size);





#endif
